"""Baseline: the corrected t-interval for the learner-PD of Molnar et al. (2023).

Our reading of Molnar, Freiesleben, König, Herbinger, Reisinger, Casalicchio, Wright & Bischl,
"Relating the partial dependence plot and permutation feature importance to the data generating
process" (xAI 2023, CCIS 1901), section on the learner-PD:

1. Refit the learner ``K`` times (``K = 15`` in their simulations), each time on a random
   subsample of ``n1`` of the ``n`` rows drawn without replacement; the other ``n2 = n - n1``
   rows are held out.
2. Estimate each refit's PD on the grid by Monte Carlo integration over its held-out rows.
3. The learner-PD estimate is the mean of the ``K`` curves; its variance is the sample variance
   ``S^2`` of the ``K`` curves times the Nadeau & Bengio (2003) correction
   ``(1/K + n2/n1)``, which accounts for the overlap of the training sets (the naive ``S^2/K``
   is far too small).
4. Pointwise interval: mean -/+ ``t_{K-1, 1-alpha/2} * sqrt((1/K + n2/n1) S^2)``.

Choices we could not find fixed in the paper's text: the training fraction ``n1 / n`` (the studies
run several, an even split among them) and the PD method (brute force with
:func:`pdpboot.partial_dependence` on the fixed grid).  For a classifier the PD is that of the
probability of the last class.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from sklearn.base import clone

import pdpboot
from pdpboot import Grid

from .learners import reseed


def corrected_t_interval(
    estimator, X: np.ndarray, y: np.ndarray, features: list[int], grids: list[np.ndarray], *,
    n_refits: int = 15, train_fraction: float = 0.7, confidence_level: float = 0.95,
    rng: np.random.SeedSequence | int | None = None,
) -> dict[str, np.ndarray]:
    """Molnar et al.'s corrected t-interval for the learner-PD of each feature.

    Parameters
    ----------
    estimator : unfitted regressor
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
    features : list of int
        Column positions.
    grids : list of ndarray
        One grid per feature, all of the same length G.
    n_refits : int
        K.
    train_fraction : float
        n1 / n.
    confidence_level : float
    rng : seed
        Subsamples and the refits' ``random_state`` flow from it.

    Returns
    -------
    dict
        ``estimate``, ``lower``, ``upper``, ``se``: arrays of shape (n_features, G); the ``se`` is
        the corrected standard error ``sqrt((1/K + n2/n1) S^2)``.
    """
    n = X.shape[0]
    n1 = int(round(train_fraction * n))
    n2 = n - n1
    gen = np.random.default_rng(rng)
    curves = np.empty((n_refits, len(features), len(grids[0])))
    custom = {f: g for f, g in zip(features, grids)}
    for k in range(n_refits):
        order = gen.permutation(n)
        train, test = order[:n1], order[n1:]
        model = reseed(clone(estimator), gen).fit(X[train], y[train])
        result = pdpboot.partial_dependence(model, X[test], features, grid=Grid(custom_values=custom))
        for j, f in enumerate(features):
            # Last output: the regressor's target, or the positive class of a binary classifier.
            curves[k, j] = pdpboot.get_node(result, f"x{f}").ds["pd"].values[-1]
    mean = curves.mean(axis=0)
    variance = curves.var(axis=0, ddof=1) * (1.0 / n_refits + n2 / n1)
    se = np.sqrt(variance)
    t = stats.t.ppf(0.5 + confidence_level / 2, df=n_refits - 1)
    return {"estimate": mean, "lower": mean - t * se, "upper": mean + t * se, "se": se}
