"""Debiased (cross-fitted, doubly robust) estimation of the data's partial dependence: the NumPy layer.

Notes
-----
Target: ``theta(a) = E_C[mu(a, X_C)]``, ``mu(x) = E[Y | X = x]``, the PD of the data-generating process (Kennedy,
Ma, McHugh & Small 2017).  Numeric ``x_s`` (:func:`debiased_curve`): with ``mu_hat`` and the density ratio
``w(a, c) = p(a) p(c) / p(a, c)`` cross-fitted, the pseudo-outcome of row ``i`` is ::

    xi_i = w_hat_i (Y_i - mu_hat_{-k(i)}(X_i)) + m_hat(A_i),   m_hat(t) = (1/n) sum_j mu_hat_{-k(j)}(t, C_j)

and ``theta_hat(a) = sum_i l_i(a) xi_i``, ``l`` the robust-bias-corrected local-linear smoother (Calonico,
Cattaneo & Farrell 2018; :func:`rbc_weights`).  Influence function:
``phi_j(a) = sum_i l_i(a) [mu_hat(A_i, C_j) - m_hat(A_i)] + n l_j(a) r_j(a)``, ``r_j`` the local quadratic
residual (HC3); ``se(a)^2 = sum_j phi_j(a)^2 / n^2``; the whole-curve band applies the sup-t rule to Gaussian
multipliers of ``phi``.  Categorical ``x_s``
(:func:`aipw_levels`): the AIPW mean per level with the cross-fitted propensity.

The density ratio is a real-versus-permuted classification on normal scores (:func:`fit_density_ratio`).  The
bands need overlap (:func:`overlap`) and the product of the learner's and the ratio model's errors to be
``o(1 / sqrt(n h))``; they fail under weak overlap.  See the validation page of the documentation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import ndtri

from .intervals import maxima_critical_value

#: Fan & Gijbels' rule-of-thumb constant, [R(K) / mu_2(K)^2]^(1/5) with the Epanechnikov R(K) = 3/5, mu_2(K) = 1/5.
ROT_CONSTANT = (0.6 / 0.2**2) ** 0.2
#: Fewest rows with positive kernel weight in the window of any grid point (local quadratic pilot).
MIN_WINDOW = 30
#: Fewest distinct values of the feature in the window of any grid point (the local quadratic needs 3).
MIN_DISTINCT = 4
#: Floor of ``1 - leverage`` in the HC3 residuals of the influence function.
MIN_ONE_MINUS_LEVERAGE = 0.1
#: Largest density-ratio or inverse-propensity weight kept (larger ones are clipped to it).
MAX_WEIGHT = 100.0
#: Points of the fine grid on which the learner's PD is evaluated and interpolated to the observed values.
N_FINE = 64
#: Most other columns whose pairwise products enter the ratio bases.
MAX_PAIRS = 20
#: Knots of the restricted cubic splines on the normal-score scale: normal quantiles at 5, 27.5, 50, 72.5, 95 %.
SPLINE_KNOTS = (-1.6449, -0.5978, 0.0, 0.5978, 1.6449)


def epanechnikov(u: np.ndarray) -> np.ndarray:
    """``0.75 (1 - u^2)`` on ``|u| <= 1``, else 0."""
    return np.where(np.abs(u) <= 1, 0.75 * (1 - u**2), 0.0)


def local_polynomial_weights(a: np.ndarray, grid: np.ndarray, h: float, degree: int) -> np.ndarray:
    """Equivalent-kernel weights (degree + 1, G, n) of a local polynomial fit at each grid point.

    ``W[k, g] @ y`` is the coefficient of ``(t - grid[g])^k`` (Epanechnikov kernel, bandwidth ``h``).
    """
    d = a[None, :] - grid[:, None]                     # (G, n)
    k = epanechnikov(d / h) / h
    powers = np.stack([d**j for j in range(degree + 1)], axis=1)   # (G, p+1, n)
    gram = np.einsum("gin,gn,gjn->gij", powers, k, powers)           # (G, p+1, p+1)
    rhs = powers * k[:, None, :]                                      # (G, p+1, n)
    coef = np.linalg.solve(gram, rhs)                                 # (G, p+1, n)
    return np.moveaxis(coef, 1, 0)


def rbc_weights(a: np.ndarray, grid: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Robust-bias-corrected local-linear smoother weights (G, n) and the local quadratic pilot's (3, G, n)."""
    ll = local_polynomial_weights(a, grid, h, 1)[0]
    pilot = local_polynomial_weights(a, grid, h, 2)
    c = (ll * (a[None, :] - grid[:, None]) ** 2).sum(axis=1)
    return ll - c[:, None] * pilot[2], pilot


def minimum_bandwidth(a: np.ndarray, grid: np.ndarray, *, min_window: int = MIN_WINDOW,
                      min_distinct: int = MIN_DISTINCT) -> float:
    """Smallest bandwidth putting ``min_window`` rows and ``min_distinct`` distinct values of ``a`` in every window."""
    dist = np.abs(a[None, :] - grid[:, None])
    m = min(min_window, a.size)
    rows = np.sort(dist, axis=1)[:, m - 1]
    values = np.unique(a)
    k = min(min_distinct, values.size)
    distinct = np.sort(np.abs(values[None, :] - grid[:, None]), axis=1)[:, k - 1]
    return float(np.max(np.maximum(rows, distinct))) * 1.0001


def rule_of_thumb_bandwidth(a: np.ndarray, r: np.ndarray, grid: np.ndarray) -> tuple[float, dict]:
    """Fan & Gijbels' rule-of-thumb bandwidth of the local-linear regression of ``r`` on ``a``.

    Curvature and noise from a global quartic fit; kept between :func:`minimum_bandwidth` and half the range.
    Returns ``h`` and ``{"h_rot", "h_min", "h_max"}`` (``h_rot`` before the limits).
    """
    n = a.size
    lo, hi = float(a.min()), float(a.max())
    span = hi - lo
    s = (a - lo) / span
    design = np.vander(s, 5, increasing=True)
    coef, *_ = np.linalg.lstsq(design, r, rcond=None)
    resid = r - design @ coef
    sigma2 = float(resid @ resid) / max(n - 5, 1)
    second = (2 * coef[2] + 6 * coef[3] * s + 12 * coef[4] * s**2) / span**2
    curvature = float(np.mean(second**2))
    flat = curvature <= 1e-12 * max(sigma2, float(np.mean(r**2)), 1e-300)
    h_rot = np.inf if flat or sigma2 == 0 else ROT_CONSTANT * (sigma2 * span / (n * curvature)) ** 0.2
    h_min = minimum_bandwidth(a, grid)
    h_max = max(span / 2, h_min)
    h = float(np.clip(h_rot, h_min, h_max))
    return h, {"h_rot": float(h_rot), "h_min": h_min, "h_max": float(h_max)}


def fine_grid(a: np.ndarray, grid: np.ndarray, n_fine: int = N_FINE) -> np.ndarray:
    """The grid together with ``n_fine`` equally spaced points over the range of ``a`` (sorted, unique)."""
    return np.unique(np.concatenate([np.asarray(grid, dtype=float), np.linspace(a.min(), a.max(), n_fine)]))


def interpolation_matrix(a: np.ndarray, fine: np.ndarray) -> np.ndarray:
    """``P`` of shape (n, M) with ``P @ f(fine)`` the linear interpolation of ``f`` at ``a`` (clamped at the ends)."""
    a = np.clip(a, fine[0], fine[-1])
    right = np.clip(np.searchsorted(fine, a, side="right"), 1, fine.size - 1)
    left = right - 1
    t = (a - fine[left]) / (fine[right] - fine[left])
    P = np.zeros((a.size, fine.size))
    rows = np.arange(a.size)
    P[rows, left] = 1 - t
    P[rows, right] += t
    return P


def debiased_curve(ice: np.ndarray, fine: np.ndarray, rho: np.ndarray, a: np.ndarray, grid: np.ndarray, *,
                   bandwidth: float | None = None) -> dict:
    """Debiased PD of one numeric feature on ``grid``, with its influence function.

    Parameters
    ----------
    ice : ndarray of shape (n, O, M)
        Cross-fitted ICE on ``fine`` (:func:`fine_grid`), which holds every grid point.
    fine : ndarray of shape (M,)
    rho : ndarray of shape (n, O)
        Weighted held-out residuals ``w_hat_j (Y_j - mu_hat_{-k(j)}(X_j))``.
    a : ndarray of shape (n,)
    grid : ndarray of shape (G,)
    bandwidth : float, optional
        Default :func:`rule_of_thumb_bandwidth` per output.

    Returns
    -------
    dict
        ``estimate``, ``plugin``, ``se`` (O, G); ``influence`` (n, O, G); ``bandwidth``, ``h_rot`` (O,).
    """
    n, n_out, _ = ice.shape
    a = np.asarray(a, dtype=float)
    grid = np.asarray(grid, dtype=float)
    at_grid = np.searchsorted(fine, grid)
    if not np.allclose(fine[at_grid], grid):
        raise ValueError("The fine grid must hold every grid point.")
    P = interpolation_matrix(a, fine)
    m_fine = ice.mean(axis=0)                                          # (O, M)
    plugin = m_fine[:, at_grid]
    estimate = np.empty((n_out, grid.size))
    influence = np.empty((n, n_out, grid.size))
    hs, rots = np.empty(n_out), np.empty(n_out)
    d = a[None, :] - grid[:, None]                                     # (G, n)
    for o in range(n_out):
        xi = rho[:, o] + P @ m_fine[o]                                 # the pseudo-outcome
        if bandwidth is None:
            h, info = rule_of_thumb_bandwidth(a, xi, grid)
            rots[o] = info["h_rot"]
        else:
            h, rots[o] = float(bandwidth), np.nan
            h_min = minimum_bandwidth(a, grid, min_window=1, min_distinct=3)
            if h < h_min:
                raise ValueError(f"bandwidth={h:.4g} leaves fewer than 3 distinct values of the feature in the "
                                 f"window of some grid point; use at least {h_min:.4g} (or bandwidth=None).")
        weights, pilot = rbc_weights(a, grid, h)
        beta = pilot @ xi                                              # (3, G)
        fitted = beta[0][:, None] + beta[1][:, None] * d + beta[2][:, None] * d**2
        resid = xi[None, :] - fitted                                   # (G, n)
        lev = pilot[0] + pilot[1] * d + pilot[2] * d**2                # leverage in the local quadratic fit: HC3
        resid = resid / np.maximum(1 - lev, MIN_ONE_MINUS_LEVERAGE)
        local = (n * weights * resid).T                                # (n, G)
        spread = weights @ P                                           # (G, M): the smoother on the fine grid
        estimate[o] = weights @ xi
        influence[:, o, :] = (ice[:, o, :] - m_fine[o][None, :]) @ spread.T + local
        hs[o] = h
    se = np.sqrt((influence**2).sum(axis=0)) / n
    return {"estimate": estimate, "plugin": plugin, "influence": influence, "se": se, "bandwidth": hs,
            "h_rot": rots}


def aipw_levels(ice: np.ndarray, residual: np.ndarray, codes: np.ndarray, inverse_propensity: np.ndarray) -> dict:
    """AIPW mean of every level, with its influence function.

    ``ice`` (n, O, L): cross-fitted ``mu_hat(level, C_j)``; ``residual`` (n, O): held-out ``Y_j - mu_hat(X_j)``;
    ``codes`` (n,): each row's level (-1: off the grid); ``inverse_propensity`` (n,): ``1 / pi_hat(A_j | C_j)``.
    Returns ``estimate``, ``plugin``, ``se`` (O, L), ``influence`` (n, O, L) and ``kernel`` (L, n), the level
    indicators.
    """
    n, _, n_levels = ice.shape
    indicator = (codes[:, None] == np.arange(n_levels)[None, :]).astype(float)       # (n, L)
    terms = ice + (indicator * inverse_propensity[:, None])[:, None, :] * residual[:, :, None]
    estimate = terms.mean(axis=0)
    influence = terms - estimate[None]
    se = np.sqrt((influence**2).sum(axis=0)) / n
    return {"estimate": estimate, "plugin": ice.mean(axis=0), "influence": influence, "se": se,
            "kernel": indicator.T}


def effective_sample_size(kernel: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(sum_i K_i w_i)^2 / sum_i (K_i w_i)^2`` along the last axis (0 where no row has weight)."""
    kw = kernel * weights
    num = kw.sum(axis=-1) ** 2
    den = (kw**2).sum(axis=-1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def diagnostic_bandwidth(a: np.ndarray, h: float) -> float:
    """Window of the overlap diagnostics: ``min(h, 2.34 sd(a) n^(-1/5))`` (Silverman's rule, Epanechnikov)."""
    return float(min(h, 2.34 * a.std() * a.size ** -0.2))


def overlap(kernel: np.ndarray, weights: np.ndarray, *, min_effective_size: float,
            mass_range: tuple[float, float],
            second_moment: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Effective sample size, local weight mass and overlap flag of every grid point.

    ``kernel`` (..., n): each grid point's window; ``weights`` (n,): unnormalised density ratios (or
    ``p(a) / pi(a | c)``); with ``second_moment`` (G,), ``E[w^2 | A = a]``, the ESS is the smaller of the weights'
    and :func:`model_effective_size`.  The mass ``sum_i K_i w_i / sum_i K_i`` is 1 in the population under
    overlap; ``ok``: ESS at least ``min_effective_size`` and mass within ``mass_range``.
    """
    ess = effective_sample_size(kernel, weights)
    if second_moment is not None:
        ess = np.minimum(ess, model_effective_size(kernel, second_moment))
    total = kernel.sum(axis=-1)
    mass = np.divide((kernel * weights).sum(axis=-1), total, out=np.zeros_like(total), where=total > 0)
    ok = (ess >= min_effective_size) & (mass >= mass_range[0]) & (mass <= mass_range[1])
    return ess, mass, ok


def small_sample_factor(ess: np.ndarray, level: float) -> np.ndarray:
    """``t_{ESS - 1}`` quantile over the normal one at ``level`` (>= 1; 1 where the ESS is large or undefined)."""
    from scipy.stats import t as student

    df = np.maximum(np.asarray(ess, dtype=float) - 1, 1.0)
    q = 0.5 + level / 2
    return np.where(np.isfinite(df), student.ppf(q, df) / ndtri(q), 1.0)


def supt_critical_value(influence: np.ndarray, se: np.ndarray, level: float, *, n_multipliers: int = 2000,
                        rng=None, mask: np.ndarray | None = None) -> np.ndarray:
    """Sup-t critical value per output (O,) from a Gaussian multiplier bootstrap of the influence function.

    ``influence`` (n, O, G), ``se`` (O, G); the rule of :func:`pdpboot.engine.intervals.maxima_critical_value`
    over the grid points in ``mask`` with ``se > 0``, the normal quantile where none is.
    """
    n, n_out, _ = influence.shape
    live = se > 0 if mask is None else (mask & (se > 0))
    gen = np.random.default_rng(rng)
    crit = np.full(n_out, float(ndtri(0.5 + level / 2)))
    centred = influence - influence.mean(axis=0, keepdims=True)
    draws = gen.standard_normal((n_multipliers, n))
    for o in range(n_out):
        if not live[o].any():
            continue
        z = draws @ centred[:, o, live[o]] / (n * se[o, live[o]])
        crit[o] = float(maxima_critical_value(np.abs(z).max(axis=1), level=level))
    return crit


def normal_scores(values: np.ndarray, at: np.ndarray | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Normal scores ``Phi^{-1}(F_n(v))`` of a column (mid-ranks), and of points ``at`` (interpolated, clamped).

    The density ratio is invariant to monotone maps; a Gaussian copula's log ratio is quadratic on this scale.
    """
    v = np.asarray(values, dtype=float)
    n = v.size
    levels, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
    cdf = (np.cumsum(counts) - 0.5 * counts) / n        # mid-rank ECDF of each distinct value (ties averaged)
    scores = ndtri(cdf)[inverse]
    if at is None:
        return scores
    return scores, ndtri(np.interp(np.asarray(at, dtype=float), levels, cdf))


def ratio_design(a: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Polynomial basis of the log density ratio: ``a, a^2, a^3``; per ``c_j``: ``c_j, c_j^2, a c_j, a^2 c_j, a c_j^2``.

    Plus the products ``c_j c_k`` when C has at most :data:`MAX_PAIRS` columns (exact for a Gaussian copula).
    """
    C = np.asarray(C, dtype=float).reshape(a.size, -1)
    cols = [a, a**2, a**3]
    for j in range(C.shape[1]):
        c = C[:, j]
        cols += [c, c**2, a * c, a**2 * c, a * c**2]
    if C.shape[1] <= MAX_PAIRS:
        for j in range(C.shape[1]):
            for k in range(j + 1, C.shape[1]):
                cols.append(C[:, j] * C[:, k])
    return np.column_stack(cols)


def restricted_cubic_spline(t: np.ndarray, knots=SPLINE_KNOTS) -> np.ndarray:
    """Restricted cubic spline basis (n, k - 1): ``t`` and ``k - 2`` cubic columns, linear beyond the outer knots.

    Harrell (2015, sec. 2.4.5).
    """
    t = np.asarray(t, dtype=float)
    kn = np.asarray(knots, dtype=float)
    k = kn.size
    cube = lambda u: np.maximum(u, 0.0) ** 3  # noqa: E731
    scale = (kn[-1] - kn[0]) ** 2
    cols = [t]
    for j in range(k - 2):
        cols.append((cube(t - kn[j]) - cube(t - kn[-2]) * (kn[-1] - kn[j]) / (kn[-1] - kn[-2])
                     + cube(t - kn[-1]) * (kn[-2] - kn[j]) / (kn[-1] - kn[-2])) / scale)
    return np.column_stack(cols)


def spline_ratio_design(a: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Varying-coefficient basis of the log density ratio (inputs on the normal-score scale).

    :func:`ratio_design` and, with ``N`` the cubic columns of :func:`restricted_cubic_spline`: ``N(a)`` and,
    per ``c_j``, ``N(c_j)``, ``N(a) c_j``, ``N(a) c_j^2``, ``a N(c_j)`` (a conditional mean and log-variance
    smooth in ``a``).
    """
    C = np.asarray(C, dtype=float).reshape(np.size(a), -1)
    sa = restricted_cubic_spline(a)[:, 1:]
    cols = [ratio_design(a, C), sa]
    for j in range(C.shape[1]):
        c = C[:, j]
        sc = restricted_cubic_spline(c)[:, 1:]
        cols += [sc, sa * c[:, None], sa * (c**2)[:, None], a[:, None] * sc]
    return np.hstack(cols)


def spline_columns(p: int) -> int:
    """Columns of :func:`spline_ratio_design` for ``p`` other columns: ``6 + 17 p`` plus ``p (p - 1) / 2`` pairs."""
    return 6 + 17 * p + (p * (p - 1) // 2 if p <= MAX_PAIRS else 0)


def _log_loss(p1: np.ndarray, labels: np.ndarray) -> float:
    p1 = np.clip(p1, 1e-12, 1 - 1e-12)
    return float(-np.mean(np.where(labels == 1, np.log(p1), np.log1p(-p1))))


def fit_density_ratio(fit_classifier: Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]],
                      a_train: np.ndarray, C_train: np.ndarray, a_eval: np.ndarray, C_eval: np.ndarray, *,
                      design: Callable[[np.ndarray, np.ndarray], np.ndarray] = ratio_design,
                      n_permutations: int = 2, max_weight: float = MAX_WEIGHT, rng=None,
                      a_grid: np.ndarray | None = None, score_rng=None) -> dict:
    """Density ratio ``w = p(a) p(c) / p(a, c)`` on held-out rows by real-versus-permuted classification.

    ``fit_classifier(features, labels) -> predict_p1`` is fitted on ``design(a, C)`` of the training rows
    (label 1) and ``n_permutations`` copies with ``a`` permuted by ``rng`` (label 0).

    Returns
    -------
    dict
        ``weights`` (clipped at ``max_weight``, unnormalised), ``n_clipped``, ``holdout_loss`` (the same
        classification's log loss on the held-out rows, permuted by ``score_rng``, default ``rng``) and, with
        ``a_grid``, ``counterfactual`` (n_eval, G), the unclipped ``w(a_g, C_j)``.
    """
    gen = np.random.default_rng(rng)
    n = len(a_train)
    perm_a = np.concatenate([gen.permutation(a_train) for _ in range(n_permutations)])
    perm_C = np.tile(np.asarray(C_train).reshape(n, -1), (n_permutations, 1))
    features = np.vstack([design(a_train, C_train), design(perm_a, perm_C)])
    labels = np.concatenate([np.ones(n, dtype=int), np.zeros(n * n_permutations, dtype=int)])
    predict = fit_classifier(features, labels)
    n_eval = len(a_eval)
    C_eval = np.asarray(C_eval).reshape(n_eval, -1)
    p1 = np.clip(predict(design(a_eval, C_eval)), 1e-12, 1 - 1e-12)
    w = (1 - p1) / p1 / n_permutations
    score_gen = gen if score_rng is None else np.random.default_rng(score_rng)
    held_perm = np.concatenate([score_gen.permutation(a_eval) for _ in range(n_permutations)])
    p0 = predict(design(held_perm, np.tile(C_eval, (n_permutations, 1))))
    held_labels = np.concatenate([np.ones(n_eval, dtype=int), np.zeros(n_eval * n_permutations, dtype=int)])
    out = {"weights": np.minimum(w, max_weight), "n_clipped": int((w > max_weight).sum()),
           "holdout_loss": _log_loss(np.concatenate([p1, p0]), held_labels)}
    if a_grid is not None:
        grid = np.asarray(a_grid, dtype=float)
        stacked = design(np.repeat(grid, n_eval, axis=0), np.tile(C_eval, (len(grid), 1)))
        p = np.clip(predict(stacked), 1e-12, 1 - 1e-12).reshape(len(grid), n_eval).T   # one call: (n_eval, G)
        out["counterfactual"] = (1 - p) / p / n_permutations
    return out


def model_effective_size(kernel: np.ndarray, second_moment: np.ndarray) -> np.ndarray:
    """Effective sample size of a grid point's window from the weight model: ``n_K / E[w^2 | A = a]``.

    ``n_K = (sum_i K_i)^2 / sum_i K_i^2``; unlike :func:`effective_sample_size` it sees the ``x_C`` that almost
    never occur near ``a``.  ``kernel`` (..., G, n), ``second_moment`` (G,); returns (..., G).
    """
    total = kernel.sum(axis=-1)
    squares = (kernel**2).sum(axis=-1)
    rows = np.divide(total**2, squares, out=np.zeros_like(total), where=squares > 0)
    return rows / np.maximum(second_moment, 1.0)


def inverse_propensity(proba: np.ndarray, codes: np.ndarray, *, max_weight: float = MAX_WEIGHT) -> tuple[np.ndarray,
                                                                                                     int]:
    """``1 / pi_hat(A_j | C_j)`` of each row's level, clipped at ``max_weight``, and the number clipped.

    ``proba`` (n, L), the cross-fitted propensities; ``codes`` (n,), the level index (-1: weight 0).
    """
    own = np.where(codes >= 0, proba[np.arange(codes.size), np.maximum(codes, 0)], 1.0)
    inv = np.where(codes >= 0, 1.0 / np.maximum(own, 1e-12), 0.0)
    n_clipped = int((inv > max_weight).sum())
    return np.minimum(inv, max_weight), n_clipped
