"""Confidence bands from stored resamples (never refits).

For every variable ``s`` of a result node that has a companion
``s_resamples``, :func:`confidence_bands` adds ``s_band`` (``ci_bound``, ...),
the bootstrap standard error ``s_se`` and the bias estimate ``s_bias`` (mean
of the resamples minus the estimate).  1-D nodes also get the centred PD
``pd_centered`` (PD minus its value at the first grid point, as centred ICE)
with its own ``pd_centered_band``/``_se``/``_bias``: the uncertainty of a change
from the first grid value, which is smaller than that of the level.

Pointwise methods (at each grid point, level 1 - alpha):

- ``percentile``: the alpha/2 and 1 - alpha/2 quantiles of the resamples;
- ``basic``: ``2 * estimate - `` those quantiles (reflected);
- ``normal``: ``estimate -/+ z_{1-alpha/2} * se``.

Simultaneous bands cover the whole curve or surface (per output) at once:

- ``normal``: the sup-t band ``estimate -/+ c * se`` where ``c`` is the
  ``level`` quantile of ``max_g |resample_b(g) - estimate(g)| / se(g)`` over
  resamples (never below the pointwise ``z``);
- ``percentile``/``basic``: the pointwise band at the calibrated level
  ``level* >= level``: the smallest level at which a share ``level`` of the
  resample curves lies entirely inside the pointwise percentile band.
Both contain the pointwise band of the same method by construction.

With ``resampling="subsample"`` (m of n rows without replacement), the
deviations of the resamples from the estimate are rescaled by
``sqrt(m / (n - m))`` before any band is formed, so that their spread
estimates the sampling spread of the full-data estimate.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy.special import ndtri

from .schema import CI_BOUNDS, feature_nodes

BAND_METHODS = ("percentile", "basic", "normal")
_SUFFIX = "_resamples"


def _quantiles(res: np.ndarray, probs) -> np.ndarray:
    return np.nanquantile(res, probs, axis=0)


def _pointwise(est, res, level, method, se):
    alpha = 1 - level
    if method == "normal":
        z = ndtri(1 - alpha / 2)
        return est - z * se, est + z * se
    lo, hi = _quantiles(res, [alpha / 2, 1 - alpha / 2])
    if method == "basic":
        return 2 * est - hi, 2 * est - lo
    return lo, hi


def _inside_share(res, lo, hi) -> float:
    """Share of complete resample curves lying inside [lo, hi] everywhere (per output: min)."""
    valid = ~np.isnan(res).any(axis=(1, 2))
    inside = ((res >= lo) & (res <= hi)).all(axis=2)[valid]  # (B_valid, O)
    return float(inside.mean(axis=0).min())


def band_arrays(est: np.ndarray, res: np.ndarray, *, level: float, method: str, simultaneous: bool):
    """Bands on flattened arrays (NumPy layer).

    Parameters
    ----------
    est : ndarray of shape (n_outputs, n_points)
    res : ndarray of shape (n_resamples, n_outputs, n_points)
        NaN rows (failed resamples) are ignored.

    Returns
    -------
    lower, upper, se, bias : ndarrays of shape (n_outputs, n_points)
    info : dict
        ``critical_value`` (normal, simultaneous) or ``calibrated_level``.
    """
    se = np.nanstd(res, axis=0, ddof=1)
    bias = np.nanmean(res, axis=0) - est
    lower, upper = _pointwise(est, res, level, method, se)
    info = {}
    if not simultaneous:
        return lower, upper, se, bias, info
    if method == "normal":
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(res - est) / se
        t = np.where(se > 0, t, 0.0)  # points without spread have a zero-width band and no say in c
        t_max = np.max(t, axis=2)  # (B, O)
        crit = np.maximum(np.nanquantile(t_max, level, axis=0), ndtri(0.5 + level / 2))  # (O,)
        info["critical_value"] = [float(c) for c in crit]
        return est - crit[:, None] * se, est + crit[:, None] * se, se, bias, info
    low, high = level, 1.0
    if _inside_share(res, *_pointwise(est, res, low, "percentile", se)) < level:
        for _ in range(40):
            mid = (low + high) / 2
            if _inside_share(res, *_pointwise(est, res, mid, "percentile", se)) >= level:
                high = mid
            else:
                low = mid
        level_star = high
    else:
        level_star = level
    info["calibrated_level"] = float(level_star)
    lower, upper = _pointwise(est, res, level_star, method, se)
    return lower, upper, se, bias, info


def _deviation_scale(attrs) -> float:
    if attrs.get("resampling") != "subsample":
        return 1.0
    n, m = int(attrs["n_rows"]), int(attrs["subsample_size"])
    return float(np.sqrt(m / (n - m)))


def _band_variable(est: xr.DataArray, res: xr.DataArray, *, level, method, simultaneous, scale):
    """Compute s_band, s_se, s_bias (and the pointwise band) for one variable."""
    res = res.transpose("resample", *est.dims)
    has_output = "output" in est.dims
    est_t = est if has_output else est.expand_dims("output")
    res_t = res if has_output else res.expand_dims("output", axis=1)
    other = [d for d in est_t.dims if d != "output"]
    est_t = est_t.transpose("output", *other)
    res_t = res_t.transpose("resample", "output", *other)
    shape = est_t.shape
    e = est_t.values.reshape(shape[0], -1)
    r = res_t.values.reshape(res_t.shape[0], shape[0], -1)
    r = e + (r - e) * scale
    lower, upper, se, bias, info = band_arrays(e, r, level=level, method=method, simultaneous=simultaneous)

    def wrap(arr):
        da = xr.DataArray(arr.reshape(shape), dims=est_t.dims, coords=est_t.coords)
        return da.transpose(*est.dims) if has_output else da.squeeze("output", drop=True)

    band = xr.concat([wrap(lower), wrap(upper)], dim=xr.Variable("ci_bound", CI_BOUNDS))
    band = band.transpose("ci_bound", *est.dims)
    out = {"band": band, "se": wrap(se), "bias": wrap(bias)}
    if simultaneous:
        p_lo, p_hi, *_ = band_arrays(e, r, level=level, method=method, simultaneous=False)
        out["band_pointwise"] = xr.concat(
            [wrap(p_lo), wrap(p_hi)], dim=xr.Variable("ci_bound", CI_BOUNDS)
        ).transpose("ci_bound", *est.dims)
    return out, info


def confidence_bands(
    result: xr.DataTree,
    *,
    confidence_level: float = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
) -> xr.DataTree:
    """Add confidence bands to every statistic that has resamples.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`pdpboot.bootstrap_partial_dependence`.
    confidence_level : float
        In (0, 1).
    method : {"percentile", "basic", "normal"}
    simultaneous : bool
        Bands covering each whole curve/surface at once (see module notes);
        the pointwise band is then kept as ``s_band_pointwise``.

    Returns
    -------
    xarray.DataTree
        A copy of ``result`` whose nodes also hold, for each ``s`` with
        ``s_resamples``: ``s_band`` (``ci_bound``, *dims of s), ``s_se`` and
        ``s_bias`` (dims of s).  ``s_band.attrs`` records ``method``,
        ``confidence_level``, ``simultaneous`` (0/1), ``n_resamples`` (used)
        and ``critical_value`` or ``calibrated_level``.
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError("confidence_bands takes the DataTree returned by bootstrap_partial_dependence.")
    if not (isinstance(confidence_level, (float, int)) and 0 < confidence_level < 1):
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}.")
    if method not in BAND_METHODS:
        raise ValueError(f"method={method!r} is not one of {list(BAND_METHODS)}.")
    nodes = feature_nodes(result)
    if not any(v.endswith(_SUFFIX) for n in nodes for v in n.ds.data_vars):
        raise ValueError("This result has no resamples (no *_resamples variables); run "
                         "pdpboot.bootstrap_partial_dependence first.")
    scale = _deviation_scale(result.attrs)
    out = result.copy()
    for node in nodes:
        ds = node.to_dataset()
        for res_name in [v for v in ds.data_vars if v.endswith(_SUFFIX)]:
            name = res_name[: -len(_SUFFIX)]
            if name not in ds or name == "ice":
                continue
            res = ds[res_name]
            n_valid = int((~res.isnull().any([d for d in res.dims if d != "resample"])).sum())
            if n_valid < 2:
                raise ValueError(f"Only {n_valid} valid resample(s) for {name!r}; bands need at least 2.")
            if simultaneous and n_valid < int(np.ceil(1 / (1 - confidence_level))):
                raise ValueError(
                    f"A {confidence_level:.0%} simultaneous band needs at least "
                    f"{int(np.ceil(1 / (1 - confidence_level)))} resamples; this result has {n_valid}. "
                    "Raise n_resamples or lower confidence_level."
                )
            targets = [(name, ds[name], res)]
            if name == "pd" and len(node.attrs["features"]) == 1:
                # the centred PD (anchored at the first grid value) has its own, narrower band
                first = {node.attrs["features"][0]: 0}
                targets.append(("pd_centered", ds[name] - ds[name].isel(first), res - res.isel(first)))
            for target, est, target_res in targets:
                parts, info = _band_variable(est, target_res, level=confidence_level, method=method,
                                             simultaneous=simultaneous, scale=scale)
                attrs = {"method": method, "confidence_level": float(confidence_level),
                         "simultaneous": int(simultaneous), "n_resamples": n_valid, **info}
                if target != name:
                    ds[target] = est
                for suffix, da in parts.items():
                    is_band = "band" in suffix
                    da.attrs = dict(attrs, simultaneous=int(simultaneous and suffix == "band")) if is_band else {}
                    ds[f"{target}_{suffix}"] = da
        out[node.name].dataset = ds
    return out
