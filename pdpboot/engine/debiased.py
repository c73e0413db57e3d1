"""Debiased (cross-fitted, doubly robust) estimation of the data's partial dependence: the NumPy layer.

Target: ``theta(a) = E_C[mu(a, X_C)]`` with ``mu(x) = E[Y | X = x]`` -- the partial dependence
of the data-generating process (DGP), not of a fitted learner.  Under no unmeasured confounding it
is also the average dose-response of ``x_s`` (Kennedy, Ma, McHugh & Small 2017).

Numeric ``x_s`` (:func:`debiased_curve`)
    With cross-fitted nuisances -- the learner ``mu_hat`` and the density ratio
    ``w(a, c) = p(a) p(c) / p(a, c)``, each fitted on the other folds and evaluated on a row's own
    fold -- the doubly robust pseudo-outcome of row ``i`` is (Kennedy, Ma, McHugh & Small 2017)::

        xi_i     = w_hat_i (Y_i - mu_hat_{-k(i)}(X_i)) + m_hat(A_i),
        m_hat(t) = (1/n) sum_j mu_hat_{-k(j)}(t, C_j)          (the cross-fitted plug-in PD),

    and ``theta_hat(a) = sum_i l_i(a) xi_i`` with the weights ``l_i(a)`` of a robust-bias-corrected
    local-linear smoother (below).  ``m_hat`` is computed on a fine grid (the package grid plus
    ``N_FINE`` equally spaced points over the range of ``A``) and interpolated linearly to the
    ``A_i``.  ``E[xi | A = t] = theta(t)`` up to the product of the nuisance errors
    ``(w_hat - w)(mu_hat - mu)`` (double robustness), so the smoother's bias is the smoothing bias
    of ``theta`` itself, removed to first order by the bias correction, and the learner's own error
    cancels at every scale -- also when its PD is rough (tree ensembles).

Smoother (Calonico, Cattaneo & Farrell 2018; Takatsu & Westling 2022)
    Local linear fit with the Epanechnikov kernel and bandwidth ``h``, minus its estimated leading
    bias ``c(a) beta_2(a)`` where ``c(a) = sum_i l^LL_i(a) (A_i - a)^2`` is the exact (finite-sample,
    boundary-aware) bias constant and ``beta_2(a)`` the quadratic coefficient of a local quadratic
    fit with pilot bandwidth ``b = h`` (``rho = h / b = 1``).  The corrected estimator is again a
    linear smoother ``l^BC = l^LL - c beta_2-weights`` (exact for quadratics), and its variance is
    computed from these same weights (the *robust* variance, not that of the uncorrected fit).
    ``h``: the rule-of-thumb MSE bandwidth of Fan & Gijbels (1996, sec. 4.2) for the local-linear
    regression of ``xi`` on ``A`` (global quartic pilot for the curvature and the residual variance),
    kept between the distance that puts ``MIN_WINDOW`` rows in the window of every grid point and
    half the range of ``A``.  With robust bias correction, an MSE-optimal bandwidth gives valid
    intervals without ad-hoc undersmoothing.

Influence function and bands
    ``phi_j(a) = sum_i l_i(a) [mu_hat(A_i, C_j) - m_hat(A_i)] + n l_j(a) [xi_j - xi_fit_j(a)]``:
    the first term is the sampling variation of the average over the rows inside the pseudo-outcome
    (smoothed ICE deviations), the second that of the local regression (``xi_fit_j(a)`` the local
    quadratic fit at ``a``, evaluated at ``A_j``; the residual divided by ``1 - leverage`` of row ``j``
    in that fit, HC3, so that the few rows near the grid's ends, which the pilot fit follows
    closely, do not shrink the variance).
    ``se(a)^2 = sum_j phi_j(a)^2 / n^2``.  Whole-curve (sup-t) band: the ``level`` quantile of
    ``max_a |sum_j g_j phi_j(a)| / (n se(a))`` over Gaussian multipliers ``g_j`` (over the grid
    points with overlap), by the package's sup-t rule (:func:`pdpboot.engine.intervals.maxima_critical_value`).

Density ratio (:func:`fit_density_ratio`)
    Real-versus-permuted classification, cross-fitted like the learner, with its held-out log loss.
    Inputs on the normal-score scale (:func:`normal_scores`; the ratio is invariant to monotone maps of
    ``x_s`` and of ``x_C``).  Basis: the varying-coefficient restricted cubic splines of
    :func:`spline_ratio_design` -- any smooth conditional mean and variance of each other column given
    the feature -- or, with fewer than 10 training rows per one of its :func:`spline_columns` columns, the
    polynomial basis of :func:`ratio_design` (exact for a Gaussian copula); see the validation page of the
    documentation.

Categorical ``x_s`` (:func:`aipw_levels`)
    The discrete AIPW mean per level, no smoothing:
    ``theta_hat(a) = (1/n) sum_j [mu_hat(a, C_j) + 1{A_j = a} (Y_j - mu_hat(X_j)) / pi_hat(a | C_j)]``
    with the cross-fitted generalised propensity ``pi_hat``; influence ``phi_j(a)`` = the summand
    minus ``theta_hat(a)``.

Overlap
    Effective sample size at grid point ``a``: the smaller of the sample ESS
    ``(sum_i K_i w_i)^2 / sum_i (K_i w_i)^2`` (kernel weights ``K_i = K((A_i - a)/h)``, or
    ``1{A_i = a}`` for a level, times the density ratio / inverse propensity ``w_i``) and the
    model-based ESS ``n_K / E[w^2 | A = a]`` (:func:`model_effective_size`), where
    ``E[w^2 | A = a] = E_C[w(a, C)]`` is the fitted ratio evaluated at ``a`` for every row's ``C``
    (the rows that would be needed, not only those drawn: under weak overlap the weights are
    heavy-tailed and the sample ESS looks adequate in most data sets while the estimate rests on a
    few rows; with Gaussian features and ``R^2(x_s | x_C) >= 1/2`` the weights have no second moment
    at all).  Also the local weight mass ``sum_i K_i w_i / sum_i K_i``, whose population value is 1
    under overlap (:func:`overlap`).  Grid points with a small ESS or a mass outside a range around 1
    are flagged; the public layer gives them no band, and widens the others' by the Student-t
    quantile with ``ESS - 1`` degrees of freedom (:func:`small_sample_factor`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import ndtri

from .intervals import maxima_critical_value

#: Epanechnikov kernel constants: R(K) = int K^2 = 3/5, mu_2(K) = int u^2 K = 1/5.
_EPA_R, _EPA_MU2 = 0.6, 0.2
#: Fan & Gijbels rule-of-thumb constant for local-linear regression, [R(K) / mu_2(K)^2]^(1/5).
ROT_CONSTANT = (_EPA_R / _EPA_MU2**2) ** 0.2
#: Fewest rows with positive kernel weight in the window of any grid point (local quadratic pilot).
MIN_WINDOW = 30
#: Floor of ``1 - leverage`` in the HC3 residuals of the influence function.
MIN_ONE_MINUS_LEVERAGE = 0.1
#: Largest density-ratio or inverse-propensity weight kept (larger ones are clipped to it).
MAX_WEIGHT = 100.0


def epanechnikov(u: np.ndarray) -> np.ndarray:
    """``0.75 (1 - u^2)`` on ``|u| <= 1``, else 0."""
    return np.where(np.abs(u) <= 1, 0.75 * (1 - u**2), 0.0)


def local_polynomial_weights(a: np.ndarray, grid: np.ndarray, h: float, degree: int) -> np.ndarray:
    """Equivalent-kernel weights of a local polynomial fit at each grid point.

    Parameters
    ----------
    a : ndarray of shape (n,)
        Regressor values.
    grid : ndarray of shape (G,)
        Evaluation points.
    h : float
        Bandwidth of the Epanechnikov kernel.
    degree : int
        Polynomial degree p.

    Returns
    -------
    ndarray of shape (p + 1, G, n)
        ``W[k, g]`` applied to responses gives the coefficient of ``(t - grid[g])^k`` of the
        weighted least-squares fit at ``grid[g]`` (``W[0]`` the fitted value).
    """
    d = a[None, :] - grid[:, None]                     # (G, n)
    k = epanechnikov(d / h) / h
    powers = np.stack([d**j for j in range(degree + 1)], axis=1)   # (G, p+1, n)
    gram = np.einsum("gin,gn,gjn->gij", powers, k, powers)           # (G, p+1, p+1)
    rhs = powers * k[:, None, :]                                      # (G, p+1, n)
    coef = np.linalg.solve(gram, rhs)                                 # (G, p+1, n)
    return np.moveaxis(coef, 1, 0)


def rbc_weights(a: np.ndarray, grid: np.ndarray, h: float, b: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Robust-bias-corrected local-linear smoother weights (Calonico, Cattaneo & Farrell 2018).

    Returns
    -------
    weights : ndarray of shape (G, n)
        ``l^LL(h) - c * q2(b)``, with ``c[g] = sum_i l^LL_i (a_i - grid[g])^2`` the exact bias
        constant of the local-linear fit and ``q2`` the weights giving the quadratic coefficient of a
        local quadratic fit with bandwidth ``b`` (default ``h``).
    pilot : ndarray of shape (3, G, n)
        The local quadratic weights with bandwidth ``b`` (for residuals).
    """
    b = h if b is None else b
    ll = local_polynomial_weights(a, grid, h, 1)[0]
    pilot = local_polynomial_weights(a, grid, b, 2)
    c = (ll * (a[None, :] - grid[:, None]) ** 2).sum(axis=1)
    return ll - c[:, None] * pilot[2], pilot


#: Fewest distinct values of the feature in the window of any grid point (the local quadratic needs 3).
MIN_DISTINCT = 4


def minimum_bandwidth(a: np.ndarray, grid: np.ndarray, *, min_window: int = MIN_WINDOW,
                      min_distinct: int = MIN_DISTINCT) -> float:
    """Smallest bandwidth that puts ``min_window`` rows and ``min_distinct`` distinct values of ``a`` strictly
    inside the Epanechnikov window of every grid point (a feature with few values, like an hour of the day,
    otherwise leaves the local fits singular)."""
    dist = np.abs(a[None, :] - grid[:, None])
    m = min(min_window, a.size)
    rows = np.sort(dist, axis=1)[:, m - 1]
    values = np.unique(a)
    k = min(min_distinct, values.size)
    distinct = np.sort(np.abs(values[None, :] - grid[:, None]), axis=1)[:, k - 1]
    return float(np.max(np.maximum(rows, distinct))) * 1.0001


def rule_of_thumb_bandwidth(a: np.ndarray, r: np.ndarray, grid: np.ndarray, *,
                            min_window: int = MIN_WINDOW) -> tuple[float, dict]:
    """Fan & Gijbels rule-of-thumb bandwidth for the local-linear regression of ``r`` on ``a``.

    ``h = C_K [sigma^2 |range(a)| / (n mean_i m''(a_i)^2)]^(1/5)`` with ``C_K`` the Epanechnikov
    constant, ``m''`` and ``sigma^2`` from a global quartic least-squares fit (on ``a`` scaled to
    [0, 1] for conditioning), then kept in ``[h_min, range(a) / 2]`` where ``h_min`` puts at least
    ``min_window`` rows and :data:`MIN_DISTINCT` distinct values in the window of every grid point
    (:func:`minimum_bandwidth`).

    Returns
    -------
    h : float
    info : dict
        ``h_rot`` (before the limits), ``h_min``, ``h_max``.
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
    h_min = minimum_bandwidth(a, grid, min_window=min_window)
    h_max = max(span / 2, h_min)
    h = float(np.clip(h_rot, h_min, h_max))
    return h, {"h_rot": float(h_rot), "h_min": h_min, "h_max": float(h_max)}


#: Points of the fine grid on which the learner's PD is evaluated and interpolated to the observed values.
N_FINE = 64


def fine_grid(a: np.ndarray, grid: np.ndarray, n_fine: int = N_FINE) -> np.ndarray:
    """The package grid together with ``n_fine`` equally spaced points over the range of ``a`` (sorted, unique)."""
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
                   bandwidth: float | None = None, min_window: int = MIN_WINDOW) -> dict:
    """Debiased PD of one numeric feature on a grid, with its influence function.

    Parameters
    ----------
    ice : ndarray of shape (n, O, M)
        Cross-fitted ICE on the fine grid: ``mu_hat_{-k(j)}(fine[m], C_j)``.
    fine : ndarray of shape (M,)
        Sorted fine grid holding every point of ``grid`` (:func:`fine_grid`).
    rho : ndarray of shape (n, O)
        Weighted held-out residuals ``w_hat_j (Y_j - mu_hat_{-k(j)}(X_j))``.
    a : ndarray of shape (n,)
        The feature's observed values.
    grid : ndarray of shape (G,)
    bandwidth : float, optional
        Fixed bandwidth (all outputs); default: :func:`rule_of_thumb_bandwidth` per output.
    min_window : int
        See :func:`rule_of_thumb_bandwidth`.

    Returns
    -------
    dict
        ``estimate`` (O, G); ``plugin`` (O, G), the cross-fitted plug-in PD; ``influence`` (n, O, G)
        with ``estimate - theta ~ mean_j influence_j``; ``se`` (O, G); ``bandwidth`` (O,);
        ``h_rot`` (O,).
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
            h, info = rule_of_thumb_bandwidth(a, xi, grid, min_window=min_window)
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
    """Discrete AIPW mean of every level of a categorical feature.

    Parameters
    ----------
    ice : ndarray of shape (n, O, L)
        Cross-fitted ``mu_hat(level, C_j)``.
    residual : ndarray of shape (n, O)
        ``Y_j - mu_hat(X_j)`` (held out).
    codes : ndarray of shape (n,)
        Level index 0..L-1 of each row's observed value (-1: a level not on the grid).
    inverse_propensity : ndarray of shape (n,)
        ``1 / pi_hat(A_j | C_j)`` for the observed level (clipped by the caller).

    Returns
    -------
    dict
        ``estimate``, ``plugin``, ``se`` (O, L); ``influence`` (n, O, L); ``kernel`` (L, n), the
        level indicators.
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
    """Window of the overlap diagnostics: ``min(h, 2.34 sd(a) n^(-1/5))`` (Silverman's rule, Epanechnikov).

    The smoother's ``h`` can be as wide as half the range when the residual regression is flat
    (a well-specified learner); overlap must still be judged locally.
    """
    return float(min(h, 2.34 * a.std() * a.size ** -0.2))


def overlap(kernel: np.ndarray, weights: np.ndarray, *, min_effective_size: float,
            mass_range: tuple[float, float],
            second_moment: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Effective sample sizes, local weight masses and the overlap flag of every grid point.

    Parameters
    ----------
    kernel : ndarray of shape (..., n)
        Window of each grid point (kernel weights, or level indicators).
    weights : ndarray of shape (n,)
        Unnormalised density ratios ``p(a) p(c) / p(a, c)``, or ``p(a) / pi(a | c)`` for levels.
    min_effective_size : float
    mass_range : (float, float)
    second_moment : ndarray of shape (G,), optional
        Model-based ``E[w^2 | A = a]`` per grid point; then the ESS is the smaller of the sample ESS
        and :func:`model_effective_size`.

    Returns
    -------
    ess : ndarray
        :func:`effective_sample_size` of kernel times weights (or the model-based one, if smaller).
    mass : ndarray
        ``sum_i K_i w_i / sum_i K_i``.  Its population value is ``E[w | A = a] = 1`` whenever
        ``p(a, c) > 0`` wherever ``p(a) p(c) > 0``; it falls below 1 where the rows with ``A`` near
        ``a`` cannot represent the whole distribution of ``X_C`` (overlap fails: some ``x_C`` never
        occur with ``x_s`` near ``a``), and the weights of the rows that are there cannot make up for it.
    ok : bool ndarray
        ``ess >= min_effective_size`` and ``mass`` within ``mass_range``.
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
    """Sup-t critical value per output from a Gaussian multiplier bootstrap of the influence functions.

    Parameters
    ----------
    influence : ndarray of shape (n, O, G)
    se : ndarray of shape (O, G)
    level : float
    n_multipliers : int
    rng : seed for the multipliers
    mask : bool ndarray of shape (O, G), optional
        Grid points that enter the supremum (default: all with se > 0).

    Returns
    -------
    ndarray of shape (O,)
        The sup-t rule's order statistic (:func:`pdpboot.engine.intervals.maxima_critical_value`) of
        ``max_g |sum_j g_j phi_j(g)| / (n se(g))``; the pointwise normal quantile where no point is live.
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
    """Normal scores ``Phi^{-1}(F_n(v))`` of a column (mid-ranks, ties averaged), and of other points ``at``.

    The density ratio ``w(a, c) = p(c) / p(c | a)`` is invariant to monotone maps of ``a`` and of the
    columns of ``c``, so it may be modelled on any such scale.  On the normal-score scale the
    log ratio of a Gaussian copula -- any monotone transform of correlated Gaussians, e.g. a
    log-normal or otherwise skewed ``x_s`` -- is exactly quadratic, which :func:`ratio_design`
    holds.

    Parameters
    ----------
    values : ndarray of shape (n,)
    at : ndarray of shape (G,), optional
        Further points: their score interpolates the mid-rank ECDF linearly between the observed
        values (clamped to the observed range).

    Returns
    -------
    scores : ndarray of shape (n,)
    scores_at : ndarray of shape (G,)
        Only with ``at``.
    """
    v = np.asarray(values, dtype=float)
    n = v.size
    levels, inverse, counts = np.unique(v, return_inverse=True, return_counts=True)
    cdf = (np.cumsum(counts) - 0.5 * counts) / n        # mid-rank ECDF of each distinct value (ties averaged)
    scores = ndtri(cdf)[inverse]
    if at is None:
        return scores
    return scores, ndtri(np.interp(np.asarray(at, dtype=float), levels, cdf))


def ratio_design(a: np.ndarray, C: np.ndarray, *, max_pairs: int = 20) -> np.ndarray:
    """Basis of the log density ratio ``log p(a, c) / (p(a) p(c))`` for a logistic classifier.

    Columns: ``a, a^2, a^3`` and, per column ``c_j`` of C, ``c_j, c_j^2, a c_j, a^2 c_j, a c_j^2``,
    plus the pairwise products ``c_j c_k`` when C has at most ``max_pairs`` columns (the Gaussian
    log ratio is quadratic in ``(a, c)``, so this basis holds it exactly).  Inputs should be
    standardised (or normal scores).
    """
    C = np.asarray(C, dtype=float).reshape(a.size, -1)
    cols = [a, a**2, a**3]
    for j in range(C.shape[1]):
        c = C[:, j]
        cols += [c, c**2, a * c, a**2 * c, a * c**2]
    if C.shape[1] <= max_pairs:
        for j in range(C.shape[1]):
            for k in range(j + 1, C.shape[1]):
                cols.append(C[:, j] * C[:, k])
    return np.column_stack(cols)


#: Knots of the restricted cubic spline basis of :func:`spline_ratio_design`, on the normal-score scale: the
#: standard normal quantiles at 5, 27.5, 50, 72.5 and 95 % (Harrell's placement for five knots).
SPLINE_KNOTS = (-1.6449, -0.5978, 0.0, 0.5978, 1.6449)


def restricted_cubic_spline(t: np.ndarray, knots=SPLINE_KNOTS) -> np.ndarray:
    """Restricted (natural) cubic spline basis: ``t`` and ``k - 2`` cubic columns, linear beyond the outer knots.

    Column j (j = 1..k-2): ``[(t - t_j)_+^3 - (t - t_{k-1})_+^3 (t_k - t_j) / (t_k - t_{k-1})
    + (t - t_k)_+^3 (t_{k-1} - t_j) / (t_k - t_{k-1})] / (t_k - t_1)^2`` (Harrell 2015, sec. 2.4.5).

    Returns
    -------
    ndarray of shape (n, k - 1)
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


def spline_ratio_design(a: np.ndarray, C: np.ndarray, *, max_pairs: int = 20) -> np.ndarray:
    """Varying-coefficient basis of the log density ratio for a logistic classifier (inputs on the normal-score scale).

    The polynomial basis of :func:`ratio_design` (so a Gaussian copula stays exact) and, with ``N`` the
    non-linear columns of the restricted cubic spline basis (:func:`restricted_cubic_spline`): ``N(a)``
    and, per column ``c_j`` of C, ``N(c_j)``, ``N(a) c_j``, ``N(a) c_j^2`` and ``a N(c_j)``.  The log ratio
    ``log p(c | a) - log p(c)`` of any ``c`` whose conditional law given ``a`` is Gaussian with a mean and a
    log-variance smooth in ``a`` (any shape, not only linear in the score) lies in this span up to the
    splines' error, and so does that of any ``a`` Gaussian given ``c``.
    """
    C = np.asarray(C, dtype=float).reshape(np.size(a), -1)
    sa = restricted_cubic_spline(a)[:, 1:]
    cols = [ratio_design(a, C, max_pairs=max_pairs), sa]
    for j in range(C.shape[1]):
        c = C[:, j]
        sc = restricted_cubic_spline(c)[:, 1:]
        cols += [sc, sa * c[:, None], sa * (c**2)[:, None], a[:, None] * sc]
    return np.hstack(cols)


def spline_columns(p: int, *, max_pairs: int = 20) -> int:
    """Columns of :func:`spline_ratio_design` for ``p`` other columns: ``6 + 17 p`` plus ``p (p - 1) / 2`` pairs."""
    return 6 + 17 * p + (p * (p - 1) // 2 if p <= max_pairs else 0)


def _log_loss(p1: np.ndarray, labels: np.ndarray) -> float:
    p1 = np.clip(p1, 1e-12, 1 - 1e-12)
    return float(-np.mean(np.where(labels == 1, np.log(p1), np.log1p(-p1))))


def fit_density_ratio(fit_classifier: Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]],
                      a_train: np.ndarray, C_train: np.ndarray, a_eval: np.ndarray, C_eval: np.ndarray, *,
                      design: Callable[[np.ndarray, np.ndarray], np.ndarray] = ratio_design,
                      n_permutations: int = 2, max_weight: float = MAX_WEIGHT, rng=None,
                      a_grid: np.ndarray | None = None, score_rng=None) -> dict:
    """Density ratio ``w = p(a) p(c) / p(a, c)`` on held-out rows by real-versus-permuted classification.

    The training rows (label 1) are stacked with ``n_permutations`` copies in which ``a`` is
    permuted (label 0, draws from ``p(a) p(c)``); a probabilistic classifier of the label on
    ``design(a, c)`` gives ``P(1 | a, c) = p1``, and ``w = (1 - p1) / p1 * n_real / n_permuted``.
    Weights are clipped to ``[0, max_weight]`` (not normalised: the caller normalises them for the
    estimate, and their local means are the overlap diagnostic of :func:`overlap`).  The same
    classification on the held-out rows (real against ``n_permutations`` permutations of their own
    ``a``) gives the held-out log loss: the log loss of this classification is a proper scoring rule for
    the ratio (its expectation is minimised by the true ``p1``), so among ratio models the smaller
    held-out loss is the better ratio.

    Parameters
    ----------
    fit_classifier : callable
        ``fit_classifier(features, labels) -> predict_p1``.
    a_train, C_train, a_eval, C_eval : ndarray
        The feature and the other columns (on the scale ``design`` expects).
    design : callable
        ``design(a, C) -> features`` (:func:`ratio_design`, :func:`spline_ratio_design`).
    n_permutations : int
    max_weight : float
    rng : seed for the permutations.
    a_grid : ndarray of shape (G,), optional
        Grid values at which the ratio is also evaluated for every held-out row's ``C``.
    score_rng : seed, optional
        Seed of the held-out rows' permutations (default: continue ``rng``); pass the same one to compare
        ratio models on the same held-out classification.

    Returns
    -------
    dict
        ``weights`` (n_eval,), clipped, unnormalised; ``n_clipped``, the held-out rows whose weight was
        clipped; ``holdout_loss``, the held-out log loss; with ``a_grid`` also ``counterfactual`` (n_eval, G),
        the unclipped ratio ``w(a_g, C_j)``, whose mean over the rows estimates ``E[w^2 | A = a_g]``
        (:func:`model_effective_size`).
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
    """Effective sample size of a grid point's window from the weight model, not from the rows that happen to be there.

    ``n_K / E[w^2 | A = a]`` with ``n_K = (sum_i K_i)^2 / sum_i K_i^2`` the rows in the window and
    ``E[w^2 | A = a]`` the variance inflation of the weights at ``a``.  For the density ratio
    ``w = p(a) p(c) / p(a, c)``, ``E[w^2 | A = a] = E_C[w(a, C)]`` (the ratio evaluated at ``a`` for
    every row's ``C``); for a level, ``w = p(a) / pi(a | c)`` and ``E[w^2 | A = a] = p(a) E_C[1 / pi(a | C)]``.
    Unlike the ESS of the observed weights (:func:`effective_sample_size`), which only sees the rows
    near ``a`` that were drawn, this sees the ``x_C`` that (almost) never occur with ``a``: where the
    weights are heavy-tailed (weak overlap) the sample ESS looks fine in most data sets while the
    estimate is driven by a few rare rows, and the normal approximation fails.

    Parameters
    ----------
    kernel : ndarray of shape (..., G, n)
    second_moment : ndarray of shape (G,)

    Returns
    -------
    ndarray of shape (..., G)
    """
    total = kernel.sum(axis=-1)
    squares = (kernel**2).sum(axis=-1)
    rows = np.divide(total**2, squares, out=np.zeros_like(total), where=squares > 0)
    return rows / np.maximum(second_moment, 1.0)


def inverse_propensity(proba: np.ndarray, codes: np.ndarray, *, max_weight: float = MAX_WEIGHT) -> tuple[np.ndarray,
                                                                                                     int]:
    """``1 / pi_hat(A_j | C_j)`` for the observed level of each row, clipped at ``max_weight``.

    Parameters
    ----------
    proba : ndarray of shape (n, L)
        Cross-fitted ``pi_hat(level | C_j)``.
    codes : ndarray of shape (n,)
        Observed level index (-1: off the grid, weight 0).

    Returns
    -------
    weights : ndarray of shape (n,)
    n_clipped : int
    """
    own = np.where(codes >= 0, proba[np.arange(codes.size), np.maximum(codes, 0)], 1.0)
    inv = np.where(codes >= 0, 1.0 / np.maximum(own, 1e-12), 0.0)
    n_clipped = int((inv > max_weight).sum())
    return np.minimum(inv, max_weight), n_clipped
