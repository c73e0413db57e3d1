"""NumPy layer: bootstrap confidence intervals and bands from stored resamples (never refits).

Every function takes the estimate ``est`` and the resamples ``res`` (resample axis ``axis``);
NaN resamples (failed refits) are ignored point by point.  Pointwise methods: ``percentile``,
``basic``, ``normal``, ``bc`` and ``bca`` (Efron 1987; acceleration from the
jackknife-after-bootstrap, Efron 1992).  Simultaneous bands: ``sup-t``
(:func:`sup_t_critical_value`) and the calibrated percentile band (:func:`calibrated_level`).
Every quantile is the order statistic of rank ``(B + 1) q`` (:func:`quantile`; Davison &
Hinkley 1997, Sec. 5.2); the sup-t critical value takes that rank rounded up.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri

from .resample import AbsentRows

__all__ = ["POINTWISE_METHODS", "SIMULTANEOUS_METHODS", "band_arrays", "bias_correction", "calibrated_level",
           "clip_to_support", "envelope_level", "inside_share", "jackknife_acceleration",
           "jackknife_after_bootstrap_acceleration", "min_simultaneous_resamples", "pointwise_interval", "quantile",
           "standard_error", "sup_t_critical_value"]

#: mask entries unpacked at a time by :func:`jackknife_after_bootstrap_acceleration` (one byte each)
_MASK_BLOCK = 2**21
POINTWISE_METHODS = ("percentile", "basic", "normal", "bc", "bca")
SIMULTANEOUS_METHODS = ("sup-t", "calibrated")


def _first(res, axis: int) -> np.ndarray:
    return np.moveaxis(np.asarray(res, dtype=float), axis, 0)


def standard_error(res, *, axis: int = 0) -> np.ndarray:
    """Bootstrap standard error: the SD (ddof=1) of the resamples, NaN resamples ignored.

    Examples
    --------
    >>> standard_error([[1.0], [3.0]])
    array([1.41421356])
    """
    res = _first(res, axis)
    n = np.sum(~np.isnan(res), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(res, axis=0)
        ss = np.nansum((res - mean) ** 2, axis=0)
        return np.sqrt(np.where(n > 1, ss / np.maximum(n - 1, 1), np.nan))


def quantile(res, q, *, axis: int = 0) -> np.ndarray:
    """Quantiles ``q`` of the resamples (axis ``axis``) at rank ``(B + 1) q``, NaN resamples ignored.

    The order statistic of rank ``h = (B + 1) q`` (Hyndman & Fan 1996, type 6), interpolated
    linearly between neighbours; below rank 1 or above rank ``B``, the extreme resample.  Returns
    ``res.shape`` without ``axis``, NaN where no resample is valid.

    Examples
    --------
    >>> quantile([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]], [0.5, 0.1])
    array([2.5, 1. ])
    """
    res = _first(res, axis)
    return _quantile_sorted(np.sort(res, axis=0), np.sum(~np.isnan(res), axis=0), q)


def _quantile_sorted(srt: np.ndarray, n: np.ndarray, q) -> np.ndarray:
    """:func:`quantile` of resamples already sorted along axis 0 (NaN last, ``n`` valid per point)."""
    q = np.broadcast_to(np.asarray(q, dtype=float), srt.shape[1:])
    top = np.maximum(n - 1, 0)
    h = np.clip((n + 1) * q - 1.0, 0.0, top)  # 0-based rank, clamped to the extreme resamples
    lo = np.minimum(np.floor(h).astype(int), top)
    hi = np.minimum(lo + 1, top)
    s_lo = np.take_along_axis(srt, lo[None], axis=0)[0]
    s_hi = np.take_along_axis(srt, hi[None], axis=0)[0]
    frac = h - lo
    diff = s_hi - s_lo
    with np.errstate(invalid="ignore"):
        out = np.where(frac >= 0.5, s_hi - diff * (1 - frac), s_lo + diff * frac)  # NumPy's lerp
    out = np.where(frac == 0, s_lo, out)  # exact order statistics (also at infinite values)
    return np.where(n > 0, out, np.nan)


def bias_correction(est, res, *, axis: int = 0) -> np.ndarray:
    """The BCa bias correction ``z0 = Phi^-1(share of resamples below est, ties half)``.

    The share is clipped to ``[1/(2B), 1 - 1/(2B)]``; returns the shape of ``est``.

    >>> float(bias_correction(0.0, [-1.0, 1.0])[()])
    0.0
    """
    res = _first(res, axis)
    est = np.asarray(est, dtype=float)
    valid = ~np.isnan(res)
    n = np.maximum(valid.sum(axis=0), 1)
    share = ((res < est) & valid).sum(axis=0) + 0.5 * ((res == est) & valid).sum(axis=0)
    share = np.clip(share / n, 0.5 / n, 1 - 0.5 / n)
    return ndtri(share)


def min_simultaneous_resamples(confidence_level: float) -> int:
    """Fewest valid resamples a simultaneous band at ``confidence_level`` needs.

    >>> min_simultaneous_resamples(0.95)
    20
    """
    return int(np.ceil(1 / (1 - confidence_level)))


def jackknife_acceleration(jackknife_values, *, axis: int = 0) -> np.ndarray:
    """BCa acceleration ``sum(d**3) / (6 * sum(d**2)**1.5)`` from jackknife values (Efron 1987).

    >>> float(jackknife_acceleration([1.0, 2.0, 3.0])[()])
    0.0
    """
    values = _first(jackknife_values, axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        d = np.nanmean(values, axis=0) - values
    num = np.nansum(d**3, axis=0)
    den = 6.0 * np.nansum(d**2, axis=0) ** 1.5
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def jackknife_after_bootstrap_acceleration(res, absent: AbsentRows, *, axis: int = 0) -> np.ndarray:
    """BCa acceleration without refits, from jackknife-after-bootstrap values (Efron 1992).

    ``theta_(i)`` is the mean of the resamples (axis ``axis``) that did not draw row ``i`` (``absent``);
    returns ``res.shape`` without ``axis``.

    Examples
    --------
    >>> from pdpboot.engine.resample import AbsentRows
    >>> counts = np.array([[2, 0, 1], [0, 1, 2], [1, 2, 0], [1, 1, 1]])
    >>> absent = AbsentRows(np.packbits(counts == 0, axis=1), 3)
    >>> round(float(jackknife_after_bootstrap_acceleration([1.0, 2.0, 3.0, 2.0], absent)[()]), 6)
    0.0
    """
    res = _first(res, axis)
    if absent.bits.shape[0] != res.shape[0]:
        raise ValueError(f"absent rows are given for {absent.bits.shape[0]} resamples, not {res.shape[0]}.")
    flat = res.reshape(res.shape[0], -1)
    valid = ~np.isnan(flat)
    values, weights = np.where(valid, flat, 0.0), valid.astype(float)
    theta = np.empty((absent.n_rows, flat.shape[1]))
    for start, block in absent.blocks(max(1, _MASK_BLOCK // (8 * res.shape[0]))):
        out = block.astype(float).T  # (rows, B)
        total, n_out = out @ values, out @ weights
        with np.errstate(invalid="ignore", divide="ignore"):
            theta[start:start + len(out)] = np.where(n_out > 0, total / n_out, np.nan)
    return jackknife_acceleration(theta, axis=0).reshape(res.shape[1:])


def _bca_probabilities(z0, a, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    probs = []
    for z in (ndtri(alpha / 2), ndtri(1 - alpha / 2)):
        num = z0 + z
        probs.append(ndtr(z0 + num / (1 - a * num)))
    return probs[0], probs[1]


def pointwise_interval(
    est, res, *, level: float, method: str = "percentile", axis: int = 0, acceleration=None
) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise bootstrap interval ``(lower, upper)`` of ``method`` at every point of ``est``.

    ``res`` holds the resamples along ``axis``; ``bca`` needs the ``acceleration`` (shape of ``est``).

    Examples
    --------
    >>> [round(float(v), 9) for v in pointwise_interval(50.0, np.arange(1.0, 100.0), level=0.9)]
    [5.0, 95.0]
    """
    if method not in POINTWISE_METHODS:
        raise ValueError(f"method={method!r} is not one of {list(POINTWISE_METHODS)}.")
    res = _first(res, axis)
    est = np.asarray(est, dtype=float)
    alpha = 1.0 - level
    if method == "normal":
        z = ndtri(1 - alpha / 2)
        se = standard_error(res)
        with np.errstate(invalid="ignore"):  # level 1 (z = inf) and se = 0: a zero-width band
            half = np.where(se > 0, z * se, np.where(np.isnan(se), np.nan, 0.0))
        return est - half, est + half
    if method in ("percentile", "basic"):
        lo, hi = quantile(res, alpha / 2), quantile(res, 1 - alpha / 2)
        return (2 * est - hi, 2 * est - lo) if method == "basic" else (lo, hi)
    if method == "bca" and acceleration is None:
        raise ValueError("method='bca' needs the acceleration (see jackknife_after_bootstrap_acceleration).")
    a = 0.0 if method == "bc" else np.asarray(acceleration, dtype=float)
    if alpha <= 0:  # level 1 (a calibrated level at its ceiling): the envelope
        return quantile(res, 0.0), quantile(res, 1.0)
    p_lo, p_hi = _bca_probabilities(bias_correction(est, res), a, alpha)
    return quantile(res, p_lo), quantile(res, p_hi)


def inside_share(res, lower, upper, *, axis: int = 0, curve_axes: Sequence[int] = (-1,)) -> np.ndarray:
    """Share of complete resample curves inside ``[lower, upper]`` everywhere, per batch element.

    ``curve_axes`` are the axes of ``lower`` spanning one curve; resample curves with a NaN are left out.
    """
    res = _first(res, axis)
    ndim = res.ndim - 1
    curve = tuple(1 + (c % ndim) for c in curve_axes)
    valid = ~np.isnan(res).any(axis=curve)
    inside = ((res >= lower) & (res <= upper)).all(axis=curve)
    return np.sum(inside & valid, axis=0) / np.maximum(valid.sum(axis=0), 1)


def _expand(values: np.ndarray, ndim: int, curve_axes) -> np.ndarray:
    """Put back the curve axes (as length 1) of a per-batch array."""
    for c in sorted(c % ndim for c in curve_axes):
        values = np.expand_dims(values, c)
    return values


def calibrated_level(
    est, res, *, level: float, axis: int = 0, curve_axes: Sequence[int] = (-1,), tol: float = 1e-10
) -> np.ndarray:
    """Smallest level ``>= level`` whose percentile band contains a share ``level`` of the resample curves.

    Returns one level per batch element (``est``'s shape without ``curve_axes``); ``1.0`` is the
    min-max envelope of the resamples.
    """
    res = _first(res, axis)
    ndim = res.ndim - 1
    batch_shape = np.delete(np.array(res.shape[1:]), [c % ndim for c in curve_axes])
    low = np.full(tuple(batch_shape), float(level))
    high = np.ones_like(low)

    srt = np.sort(res, axis=0)
    n_valid = np.sum(~np.isnan(res), axis=0)

    def share(lev):
        p = _expand(lev, ndim, curve_axes)
        lower = _quantile_sorted(srt, n_valid, (1 - p) / 2)
        upper = _quantile_sorted(srt, n_valid, (1 + p) / 2)
        return inside_share(res, lower, upper, curve_axes=curve_axes)

    done = share(low) >= level
    high = np.where(done, low, high)
    for _ in range(60):
        if np.all(high - low <= tol):
            break
        mid = (low + high) / 2
        ok = share(mid) >= level
        high = np.where(ok, mid, high)
        low = np.where(ok, low, mid)
    return high


def envelope_level(n_resamples: int) -> float:
    """The largest level whose percentile band leaves a resample outside each bound: ``1 - 2 / (B + 1)``.

    >>> envelope_level(99)
    0.98
    """
    return 1.0 - 2.0 / max(n_resamples + 1, 2)


def _resamples_suggested(est, res, level: float, level_star: np.ndarray, n_valid: int, beyond: int = 10) -> int:
    """Resamples that would put ``beyond`` resamples outside each bound of a calibrated band."""
    crit = sup_t_critical_value(est, res, level=level)
    target = np.where(level_star > envelope_level(n_valid), 2 * ndtr(crit) - 1, level_star)
    return int(np.ceil(2 * beyond / max(1 - float(np.max(target)), 1e-6)))


def sup_t_critical_value(
    est, res, *, level: float, axis: int = 0, curve_axes: Sequence[int] = (-1,)
) -> np.ndarray:
    """Critical value ``c`` of the sup-t band ``est -/+ c * se``, one per batch element.

    :func:`maxima_critical_value` of the resamples' ``max_g |res_b(g) - est(g)| / se(g)`` over the
    ``curve_axes`` of ``est`` (Davison & Hinkley 1997, Sec. 2.4); points with ``se = 0`` are left out
    of the maximum.

    Examples
    --------
    >>> res = np.arange(1.0, 101.0)[:, None, None] * np.array([[[1.0, -1.0]]])
    >>> float(sup_t_critical_value(np.zeros((1, 2)), res, level=0.95)[0] * standard_error(res)[0, 0])
    96.0
    """
    res = _first(res, axis)
    ndim = res.ndim - 1
    se = standard_error(res)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(res - est) / se
    t = np.where(se > 0, t, 0.0)
    return maxima_critical_value(np.max(t, axis=tuple(1 + (c % ndim) for c in curve_axes)), level=level)


def maxima_critical_value(t_max, *, level: float) -> np.ndarray:
    """The sup-t rule: the order statistic of rank ``ceil((B + 1) level)`` of ``B`` curve maxima (axis 0).

    Maxima that are NaN are ignored; never below the pointwise ``z_{(1 + level) / 2}``; NaN where no
    maximum is valid.

    Examples
    --------
    >>> float(maxima_critical_value(np.arange(1.0, 101.0), level=0.95))
    96.0
    """
    t_max = np.asarray(t_max, dtype=float)
    n_valid = np.sum(~np.isnan(t_max), axis=0)
    k = np.minimum(np.ceil(level * (n_valid + 1) - 1e-9).astype(int), n_valid)
    srt = np.sort(t_max, axis=0)  # NaN last
    crit = np.take_along_axis(srt, np.maximum(k - 1, 0)[None], axis=0)[0]
    crit = np.where(n_valid > 0, crit, np.nan)
    return np.maximum(crit, ndtri(0.5 + level / 2))


def clip_to_support(lower, upper, support: tuple[float | None, float | None]) -> tuple[np.ndarray, np.ndarray]:
    """Clip both bounds of a band into the support of a bounded statistic.

    Examples
    --------
    >>> [float(v) for v in clip_to_support(-0.2, 0.5, (0.0, None))]
    [0.0, 0.5]
    """
    low, high = support
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if low is not None:
        lower, upper = np.maximum(lower, low), np.maximum(upper, low)
    if high is not None:
        lower, upper = np.minimum(lower, high), np.minimum(upper, high)
    return lower, upper


def band_arrays(
    est,
    res,
    *,
    level: float,
    method: str,
    simultaneous: bool,
    simultaneous_method: str = "sup-t",
    absent: AbsentRows | None = None,
    support: tuple[float | None, float | None] = (None, None),
    keep_pointwise: bool = False,
):
    """Band, standard error and bias of ``est`` (n_outputs, n_points) from ``res`` (n_resamples, ...).

    Parameters
    ----------
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Pointwise method (``bca`` needs ``absent``, the rows each resample did not draw).
    simultaneous : bool
        Cover each output's whole curve at once.
    simultaneous_method : {"sup-t", "calibrated"}
        ``sup-t``: ``est -/+ c * se``, widened to contain ``method``'s pointwise band;
        ``calibrated``: ``method``'s pointwise band at the calibrated level.
    support : (float or None, float or None)
        Bounds of the statistic; the band is clipped into them.
    keep_pointwise : bool
        With ``simultaneous``, also return the pointwise band as ``info["pointwise"]``.

    Returns
    -------
    lower, upper, se, bias : ndarrays of shape (n_outputs, n_points)
        ``bias`` is the mean of the resamples minus the estimate.
    info : dict
        ``critical_value`` (sup-t) or ``calibrated_level`` (per output, with
        ``resamples_suggested`` at the envelope), and ``acceleration_max`` for bca.

    Examples
    --------
    >>> est = np.zeros((1, 3)); res = np.random.default_rng(0).normal(size=(200, 1, 3))
    >>> lower, upper, se, bias, info = band_arrays(est, res, level=0.9, method="normal", simultaneous=True)
    >>> bool(np.all(lower < upper)), sorted(info)
    (True, ['critical_value'])
    """
    est = np.asarray(est, dtype=float)
    res = np.asarray(res, dtype=float)
    se = standard_error(res)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bias = np.nanmean(res, axis=0) - est
    info: dict = {}
    acceleration = None
    if method == "bca":
        if absent is None:
            raise ValueError("method='bca' needs the rows each resample did not draw (absent=) for its acceleration.")
        acceleration = jackknife_after_bootstrap_acceleration(res, absent)
        info["acceleration_max"] = float(np.nanmax(np.abs(acceleration))) if acceleration.size else 0.0
    if simultaneous_method not in SIMULTANEOUS_METHODS:
        raise ValueError(f"simultaneous_method={simultaneous_method!r} is not one of {list(SIMULTANEOUS_METHODS)}.")
    pointwise = None  # method's pointwise band at level, computed once
    if not simultaneous or keep_pointwise or (simultaneous_method == "sup-t" and method != "normal"):
        pointwise = pointwise_interval(est, res, level=level, method=method, acceleration=acceleration)
    if not simultaneous:
        lower, upper = pointwise
    elif simultaneous_method == "sup-t":
        crit = sup_t_critical_value(est, res, level=level)
        info["critical_value"] = [float(c) for c in crit]
        lower, upper = est - crit[:, None] * se, est + crit[:, None] * se
        if method != "normal":  # also contain the method's own pointwise band (normal's: crit >= z)
            lower, upper = np.fmin(lower, pointwise[0]), np.fmax(upper, pointwise[1])
    else:
        level_star = calibrated_level(est, res, level=level)
        info["calibrated_level"] = [float(v) for v in level_star]
        n_valid = int(np.sum(~np.isnan(res).any(axis=2).all(axis=1)))
        if np.max(level_star) > envelope_level(n_valid):
            info["resamples_suggested"] = _resamples_suggested(est, res, level, level_star, n_valid)
        lower = np.empty_like(est)
        upper = np.empty_like(est)
        for o, lev in enumerate(level_star):
            acc = None if acceleration is None else acceleration[o]
            lower[o], upper[o] = pointwise_interval(est[o], res[:, o], level=float(lev), method=method,
                                                    acceleration=acc)
    lower, upper = clip_to_support(lower, upper, support)
    if simultaneous and keep_pointwise:
        info["pointwise"] = clip_to_support(*pointwise, support)
    return lower, upper, se, bias, info
