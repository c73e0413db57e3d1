"""Study design (fixed before any result): false splits and power of regional PD's split rules.

Focal feature ``x1``; features U(-1, 1), four columns ``x1..x4`` unless said; noise N(0, 0.3^2).

Null designs (no interaction of ``x1`` with any other feature):

``additive``
    ``y = x1 + sin(2 x2) + x3 + eps``.
``correlated``
    The same, with ``x1, x2, x3`` Gaussian copula-correlated (rho = 0.7), mapped to U(-1, 1).
``classifier``
    ``P(y = 1) = expit(2 x1 + 2 x2 - x3)``: a classifier's predicted probabilities (additive on the logit
    scale, so the probability PD of ``x1`` is not additive: a split here is "real" on the probability scale
    and the naive rule is reported for it only; the refit test is for regressors).

Alternatives (a real split):

``numeric_split``
    ``y = x1 * 1[x3 > 0] + x2 + eps`` (the true splitting feature ``x3`` at 0).
``categorical_split``
    ``x3`` a level in {a, b, c} (equal shares), ``y = x1 * 1[x3 == "b"] + x2 + eps``; for the refit test
    (numeric columns only) ``x3`` is passed as its level code 0, 1, 2.

Learner: gradient boosting (scikit-learn, 50 trees, depth 3), n = 300 rows, grid of 10 points,
``min_size = max(20, 10 % of rows)``, depth 1.

Rules compared per data set:

``naive``
    a split when the best first split removes >= 5 % of the ICE heterogeneity (effector's default).
``test``
    :func:`pdpboot.regional_split_test` with B = 19 null refits at alpha = 0.05 (a split only when the
    heterogeneity the first split removes exceeds that of all 19 null refits).

Reported: the rate of a split (false-split rate on null designs, power on alternatives) with its Monte Carlo
SE ``sqrt(p (1 - p) / R)``, the share of data sets whose chosen feature is the true one (alternatives).
Quick run: R = 20 data sets per design (partial; the issue's target is R >= 200).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

NOISE = 0.3
N_ROWS = 300
DESIGNS = ("additive", "correlated", "classifier", "numeric_split", "categorical_split")
NULL_DESIGNS = ("additive", "correlated", "classifier")
TRUE_FEATURE = {"numeric_split": "x3", "categorical_split": "x3"}


def make_design(name: str, n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """Table ``x1..x4`` and target of design ``name`` (see the module docstring)."""
    if name == "correlated":
        cov = np.full((3, 3), 0.7) + 0.3 * np.eye(3)
        z = rng.multivariate_normal(np.zeros(3), cov, size=n)
        U = np.column_stack([2 * norm.cdf(z) - 1, rng.uniform(-1, 1, n)])
    else:
        U = rng.uniform(-1, 1, (n, 4))
    X = pd.DataFrame(U, columns=["x1", "x2", "x3", "x4"])
    eps = NOISE * rng.normal(size=n)
    if name in ("additive", "correlated"):
        return X, (X.x1 + np.sin(2 * X.x2) + X.x3).to_numpy() + eps
    if name == "classifier":
        return X, (rng.uniform(size=n) < expit(2 * X.x1 + 2 * X.x2 - X.x3)).astype(int)
    if name == "numeric_split":
        return X, (X.x1 * (X.x3 > 0) + X.x2).to_numpy() + eps
    if name == "categorical_split":
        codes = rng.integers(0, 3, n)
        X["x3"] = np.array(["a", "b", "c"], dtype=object)[codes]
        return X, (X.x1 * (codes == 1) + X.x2).to_numpy() + eps
    raise ValueError(f"unknown design {name!r}; one of {DESIGNS}.")
