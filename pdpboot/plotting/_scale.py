"""Quantile-spaced axes for strongly skewed numeric features: positions follow the data's deciles
(equal distances = equal shares of the rows), labelled with the data's own values."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: A feature is skewed when 5 consecutive deciles (40 % of its rows) lie within this share of the drawn range.
SKEW_SHARE = 0.1
SCALES = ("auto", "linear", "quantile")


def skewed(deciles: np.ndarray, low: float, high: float) -> bool:
    """Whether 5 consecutive deciles of a feature lie within :data:`SKEW_SHARE` of the range [low, high]."""
    d = np.sort(np.asarray(deciles, dtype=float))
    d = d[np.isfinite(d)]
    if len(d) < 9 or not np.isfinite(high - low) or high <= low:
        return False
    return bool(np.min(d[4:] - d[:-4]) < SKEW_SHARE * (high - low))


def is_skewed(values: Sequence[float], percentiles: tuple[float, float] = (0.05, 0.95)) -> bool:
    """Whether a numeric feature is strongly skewed, so its plots use a quantile-spaced axis.

    The rule: 5 consecutive deciles of the data (40 % of its rows) lie within a tenth of the range a
    PD grid spans.  Normal, uniform and exponential features are not skewed; a log-normal with
    sigma 1.5 or a feature with half its rows at one value is.

    Parameters
    ----------
    values : array-like of float
        The feature's data (missing values ignored).
    percentiles : (float, float), default (0.05, 0.95)
        The range of the grid, as in :func:`pdpboot.bootstrap_partial_dependence`.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> rain = np.r_[np.zeros(60), np.linspace(0.1, 18, 40)]
    >>> is_skewed(rain), is_skewed(np.linspace(0, 1, 100))
    (True, False)
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    if x.size < 10:
        return False
    low, high = np.quantile(x, percentiles)
    return skewed(np.quantile(x, np.arange(1, 10) / 10), float(low), float(high))


#: Share of a quantile-spaced axis laid out linearly: the sparse tail keeps some room, and the map
#: stays strictly increasing where many rows share one value.
LINEAR_SHARE = 0.25


def quantile_knots(deciles: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, positions) of the axis map over [low, high], positions from 0 to 1.

    Position = 3/4 of the data's quantile (decile k at k/10; the grid's ends at 0.05 / 0.95 when
    beyond the outer deciles) + 1/4 of the linear position.  Deciles sharing one value (rows piled on
    it) take the top of their run at the low end of the axis, the bottom at the high end, their mean
    inside: the pile is a point, not an empty stretch of axis.
    """
    d = np.sort(np.asarray(deciles, dtype=float))
    inside = (d >= low) & (d <= high)
    values = np.array([low, *d[inside], high])
    quantiles = np.array([0.05 if low < d[0] else 0.1, *(np.arange(1, 10) / 10)[inside],
                          0.95 if high > d[-1] else 0.9])
    uniq = np.unique(values)
    if len(uniq) < 2:
        return np.array([low, low + 1.0]), np.array([0.0, 1.0])
    q = []
    for u in uniq:
        run = quantiles[values == u]
        q.append(run.max() if u == low else run.min() if u == high else run.mean())
    q = np.maximum.accumulate(np.array(q))
    q = (q - q[0]) / (q[-1] - q[0]) if q[-1] > q[0] else np.zeros_like(q)
    linear = (uniq - low) / (high - low)
    return uniq, (1 - LINEAR_SHARE) * q + LINEAR_SHARE * linear


def _piecewise(x, xs: np.ndarray, ys: np.ndarray):
    """Piecewise-linear through (xs, ys), extended linearly past both ends (invertible if ys increase)."""
    x = np.asarray(x, dtype=float)
    out = np.interp(x, xs, ys)
    left = (ys[1] - ys[0]) / (xs[1] - xs[0])
    right = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    out = np.where(x < xs[0], ys[0] + (x - xs[0]) * left, out)
    return np.where(x > xs[-1], ys[-1] + (x - xs[-1]) * right, out)


def use_quantile_axis(ax, axis: str, deciles: np.ndarray, low: float, high: float) -> None:
    """Space ``axis`` of ``ax`` by the data's deciles (:func:`quantile_knots`), ticks at their values."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    xs, ps = quantile_knots(deciles, low, high)
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    setter("function", functions=(lambda v: _piecewise(v, xs, ps), lambda p: _piecewise(p, ps, xs)))
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks, last = [], -np.inf
    for x, p in zip(xs, ps):  # at most about 8 ticks: a knot at least 0.12 of the axis from the last
        if p - last >= 0.12 or x == xs[-1] and p - last >= 0.06:
            ticks.append(x)
            last = p
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    target.set_minor_locator(NullLocator())


def resolve_scale(scale: str, deciles: np.ndarray, grid: np.ndarray, categorical: bool) -> str:
    """"linear" or "quantile": ``scale`` checked, "auto" decided by :func:`skewed` on the grid's range."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}.")
    if categorical or scale == "linear" or len(grid) < 2:
        return "linear"
    low, high = float(np.min(grid)), float(np.max(grid))
    if scale == "quantile":
        if len(deciles) < 9:
            raise ValueError("scale='quantile' needs the feature's deciles (node attrs 'deciles'); "
                             "use scale='linear'.")
        return "quantile"
    return "quantile" if skewed(deciles, low, high) else "linear"


def is_quantile_axis(ax, axis: str = "x") -> bool:
    """Whether an axis was drawn quantile-spaced by this module."""
    return (ax.get_xscale() if axis == "x" else ax.get_yscale()) == "function"
