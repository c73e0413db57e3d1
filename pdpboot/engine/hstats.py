"""NumPy layer: Friedman-Popescu H statistics and the PD-variance interaction index.

Estimator (Friedman & Popescu 2008, eqs. 44 and 45).  Let ``x^(1..m)`` be the
evaluation rows (a random subsample of at most ``n_max`` background rows) with
normalised weights ``w`` (bootstrap multiplicities).  The same rows serve as
the background of every partial dependence, so for a feature set ``S``::

    M_S[i, l]      = f(x_S^(l), x_-S^(i))          (model at row i with S taken from row l)
    PD_S(l)        = sum_i w_i M_S[i, l]           (PD of S at the observed point x_S^(l))
    PD_-j(i)       = sum_l w_l M_j[i, l]           (PD of all features but j at x_-j^(i))
    F(i)           = M_S[i, i] = f(x^(i))

Every function is then centred: its weighted mean over the rows is
subtracted.  With centred functions::

    H2_jk = sum_l w_l (PD_jk(l) - PD_j(l) - PD_k(l))**2 / sum_l w_l PD_jk(l)**2     (eq. 44)
    H2_j  = sum_i w_i (F(i) - PD_j(i) - PD_-j(i))**2 / sum_i w_i F(i)**2            (eq. 45)

``h_unnormalized`` is ``sqrt(sum_l w_l (PD_jk - PD_j - PD_k)**2)``, on the response
scale.  A zero denominator gives 0.  One matrix ``M_S`` costs ``m**2`` predictions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .brute import DEFAULT_MEMORY_LIMIT, brute_partial_dependence
from .ice_stats import pd_flatness
from .inputs import column, normalised_weights, row_weights

_TINY = 1e-12


def subsample_rows(
    n_rows: int, n_max: int, rng: np.random.Generator, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted positions of at most ``n_max`` of ``n_rows`` rows (uniform, without replacement) and their weights."""
    if not (isinstance(n_max, (int, np.integer)) and not isinstance(n_max, bool) and n_max >= 2):
        raise ValueError(f"n_max must be an integer >= 2, got {n_max!r}.")
    w = row_weights(weights, n_rows, what="background row")
    if n_rows <= n_max:
        positions = np.arange(n_rows)
    else:
        positions = np.sort(rng.choice(n_rows, size=int(n_max), replace=False))
    return positions, w[positions]


def point_matrix(
    predict: Callable[[object], np.ndarray],
    X,
    feature_idx: Sequence[int],
    *,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
) -> np.ndarray:
    """(n_rows, n_outputs, n_rows) model values ``M[i, :, l] = f(x_S^(l), x_-S^(i))``, ``S = feature_idx``."""
    columns = [column(X, p) for p in feature_idx]
    _, ice = brute_partial_dependence(
        predict, X, list(feature_idx), columns, average=False, individual=True, points=True,
        memory_limit=memory_limit, n_outputs=n_outputs,
    )
    return ice


def _centre(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Centre (n_outputs, m) values by their weighted mean over rows."""
    return values - (values @ w)[:, None]


def _ratio(numerator: np.ndarray, denominator: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is negligible."""
    negligible = denominator <= (_TINY * (1.0 + scale)) ** 2
    return np.where(negligible, 0.0, numerator / np.where(negligible, 1.0, denominator))


def _check_matrix(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    if m.ndim != 3 or m.shape[0] != m.shape[2]:
        raise ValueError(f"A point matrix must have shape (m, n_outputs, m), got {m.shape}.")
    return m


def pd_at_points(m_s: np.ndarray, weights=None) -> np.ndarray:
    """(n_outputs, m) centred PD of the feature set S at the observed points, from its point matrix."""
    m_s = _check_matrix(m_s)
    w = normalised_weights(weights, m_s.shape[0])
    return _centre(np.einsum("i,iol->ol", w, m_s), w)


def h2_pairwise(
    m_jk: np.ndarray, m_j: np.ndarray, m_k: np.ndarray, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Friedman-Popescu pairwise ``(h2, h_unnormalized)`` (eq. 44), each (n_outputs,), from three point matrices."""
    w = normalised_weights(weights, _check_matrix(m_jk).shape[0])
    pd_jk, pd_j, pd_k = (pd_at_points(m, weights) for m in (m_jk, m_j, m_k))
    numerator = ((pd_jk - pd_j - pd_k) ** 2) @ w
    denominator = (pd_jk**2) @ w
    scale = np.abs(np.asarray(m_jk)).max(axis=(0, 2))
    return _ratio(numerator, denominator, scale), np.sqrt(numerator)


def h2_overall(m_j: np.ndarray, weights=None) -> np.ndarray:
    """(n_outputs,) Friedman-Popescu overall H2 of feature j (eq. 45) from its point matrix."""
    m_j = _check_matrix(m_j)
    w = normalised_weights(weights, m_j.shape[0])
    f_all = _centre(np.diagonal(m_j, axis1=0, axis2=2), w)
    pd_j = _centre(np.einsum("i,iol->ol", w, m_j), w)
    pd_not_j = _centre(np.einsum("l,iol->oi", w, m_j), w)
    numerator = ((f_all - pd_j - pd_not_j) ** 2) @ w
    denominator = (f_all**2) @ w
    return _ratio(numerator, denominator, np.abs(m_j).max(axis=(0, 2)))


def interaction_statistics(
    predict: Callable[[object], np.ndarray],
    X,
    *,
    singles: Sequence[int] = (),
    pairs: Sequence[tuple[int, int]] = (),
    weights=None,
    n_max: int = 500,
    rng: np.random.Generator | None = None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
) -> dict[tuple[int, ...], dict[str, np.ndarray]]:
    """H statistics of one fitted model on (a subsample of) its background rows.

    Parameters
    ----------
    predict : callable
        ``predict(X_block) -> ndarray (rows, n_outputs)``.
    singles, pairs : sequence of int, sequence of (int, int)
        Column positions of the overall and pairwise statistics wanted.
    n_max : int
        At most this many rows (drawn with ``rng``) are used.

    Returns
    -------
    dict
        ``(j,)`` -> ``{"h2_overall": (n_outputs,)}`` and ``(j, k)`` ->
        ``{"h2": (n_outputs,), "h_unnormalized": (n_outputs,)}``.
    """
    n_rows = X.shape[0]
    if n_rows > n_max and rng is None:
        raise ValueError("rng is required to draw the H-statistic subsample when X has more than n_max rows.")
    positions, w = subsample_rows(n_rows, n_max, rng, weights)
    rows = X.iloc[positions] if isinstance(X, pd.DataFrame) else np.asarray(X)[positions]
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def matrix(feature_set: tuple[int, ...]) -> np.ndarray:
        if feature_set not in cache:
            cache[feature_set] = point_matrix(predict, rows, feature_set, memory_limit=memory_limit,
                                              n_outputs=n_outputs)
        return cache[feature_set]

    out: dict[tuple[int, ...], dict[str, np.ndarray]] = {}
    for j in singles:
        out[(int(j),)] = {"h2_overall": h2_overall(matrix((int(j),)), w)}
    for j, k in pairs:
        h2, h_unnorm = h2_pairwise(matrix((int(j), int(k))), matrix((int(j),)), matrix((int(k),)), w)
        out[(int(j), int(k))] = {"h2": h2, "h_unnormalized": h_unnorm}
    return out


def interaction_part(
    predict: Callable[[object], np.ndarray], X, pair: tuple[int, int], *, weights=None, background=None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> np.ndarray:
    """(n_rows,) centred interaction part ``PD_jk - PD_j - PD_k`` of a model at every row of X.

    ``pair`` holds the column positions of j and k; ``weights`` weight the PD averages and the
    centring; ``background`` (row positions, default all) are the rows the PDs average over.
    """
    n = X.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    bg = np.arange(n) if background is None else background
    rows = X.iloc[bg] if isinstance(X, pd.DataFrame) else np.asarray(X)[bg]
    columns = {p: column(X, p) for p in pair}
    parts = []
    for feature_set in ((tuple(pair)), (pair[0],), (pair[1],)):
        avg, _ = brute_partial_dependence(predict, rows, list(feature_set), [columns[p] for p in feature_set],
                                          points=True, weights=w[bg], memory_limit=memory_limit)
        values = avg[0]
        parts.append(values - np.sum(w * values) / w.sum())
    return parts[0] - parts[1] - parts[2]


def pd_variance_interaction(surface, *, categorical: tuple[bool, bool] = (False, False)) -> np.ndarray:
    """PD-variance interaction index of Greenwell et al. (2018) of PD surfaces (..., n_grid_1, n_grid_2).

    The SD over the second feature's grid of the first feature's importance in ``PD(., b)`` (its SD,
    or range / 4 if ``categorical``), and vice versa, averaged; 0 for an additive surface.
    """
    surface = np.asarray(surface, dtype=float)
    if surface.ndim < 2:
        raise ValueError(f"surface needs two grid axes, got shape {surface.shape}.")
    directions = []
    # importance along one grid axis leaves the other grid axis last; spread over it
    for imp_axis, cat in ((-2, categorical[0]), (-1, categorical[1])):
        # a categorical axis: range / 4 even of a one-level grid (NaN stays NaN)
        importance = np.ptp(surface, axis=imp_axis) / 4.0 if cat else pd_flatness(surface, categorical=False,
                                                                                  axis=imp_axis)
        directions.append(pd_flatness(importance, categorical=False))
    return (directions[0] + directions[1]) / 2.0


GP_MAX_ROWS = 1000  #: most rows :func:`gaussian_process_fit` fits on


def gaussian_process_fit(X, y, rng: np.random.Generator, *, max_rows: int = GP_MAX_ROWS):
    """A smooth reference fit of ``y`` on ``X``: Gaussian-process regression, hyperparameters by marginal likelihood.

    Kernel ``C * RBF(one length scale per standardised column) + White``, fitted on at most
    ``max_rows`` rows drawn with ``rng``.  Returns ``predict(X_block) -> (rows, 1)`` and the noise SD
    the White kernel estimated (units of ``y``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(80, 2)); y = np.sin(2 * X[:, 0]) + rng.normal(scale=0.2, size=80)
    >>> predict, noise_sd = gaussian_process_fit(X, y, rng)
    >>> predict(X).shape, bool(0.1 < noise_sd < 0.3)
    ((80, 1), True)
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    Z = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    rows = np.arange(Z.shape[0]) if Z.shape[0] <= max_rows else np.sort(rng.choice(Z.shape[0], max_rows, replace=False))
    centre, spread = Z[rows].mean(axis=0), Z[rows].std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(Z.shape[1]), (1e-2, 1e3))
              + WhiteKernel(0.1, (1e-6, 1e1)))
    gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=0)
    with warnings.catch_warnings():  # a length scale at its bound (an irrelevant feature) is fine here
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit((Z[rows] - centre) / spread, y[rows])
    noise_sd = float(np.sqrt(gp.kernel_.k2.noise_level) * np.std(y[rows]))

    def predict(block):
        return gp.predict((np.asarray(block, dtype=float) - centre) / spread)[:, None]

    return predict, noise_sd
