"""Confidence bands from stored resamples (never refits); the formulas are in :mod:`pdpboot.engine.intervals`."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from ._validate import check_probability
from .caveats import CURVES, boosting_classifier_under_covers, warn_boosting_classifier, warn_interval_method
from .engine.intervals import (
    POINTWISE_METHODS,
    SIMULTANEOUS_METHODS,
    band_arrays,
    envelope_level,
    min_simultaneous_resamples,
)
from .engine.resample import AbsentRows
from .header import ResultHeader
from .io import band_variables, read_support, support_attrs
from .options import BAND_SCALES
from .schema import ABSENT, feature_nodes

__all__ = ["BAND_METHODS", "SCALES", "band_arrays", "confidence_bands"]

BAND_METHODS = POINTWISE_METHODS
#: ``scale=`` of :func:`confidence_bands`: ``auto`` reads the result's ``band_scale`` root attr.
SCALES = ("auto", *BAND_SCALES)
_SUFFIX = "_resamples"
#: Probabilities are clipped to [_EPS, 1 - _EPS] before the logit.
_EPS = 1e-6


def _deviation_scale(header: ResultHeader) -> float:
    if header.extra.get("resampling") != "subsample":
        return 1.0
    n, m = header.n_rows, int(header.extra["subsample_size"])
    return float(np.sqrt(m / (n - m)))


def _support(name: str, est: xr.DataArray, header: ResultHeader) -> tuple[float | None, float | None]:
    """The range of statistic ``name``: its own ``support`` attr, else the header's entry."""
    own = read_support(est.attrs)
    return own if own != (None, None) else header.support(name)


def _centred_support(support: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """Bounds of a difference of two values of a statistic bounded by ``support``."""
    lo, hi = support
    if lo is None or hi is None:
        return (None, None)
    return (lo - hi, hi - lo)


def _band_scale(scale: str, header: ResultHeader) -> str:
    """The scale the PD's bands are formed on: ``scale``, or for ``"auto"`` the result's ``band_scale``."""
    if scale not in SCALES:
        raise ValueError(f"scale={scale!r} is not one of {list(SCALES)}.")
    probabilities = header.response == "predict_proba"
    if scale == "auto":
        return "logit" if probabilities and header.extra.get("band_scale") == "logit" else "identity"
    if scale == "logit" and not probabilities:
        raise ValueError("scale='logit' needs a probability PD (a classifier with response_method='predict_proba'); "
                         f"this result has {header.response or None!r}. Use scale='identity'.")
    return scale


def _to_logit(p: np.ndarray) -> np.ndarray:
    return logit(np.clip(p, _EPS, 1 - _EPS))


def _from_logit(z: np.ndarray) -> np.ndarray:
    """The logistic function, a bound at or beyond the clip mapped to exactly 0 or 1."""
    low, high = logit(_EPS) + 1e-9, logit(1 - _EPS) - 1e-9  # the clip, give or take the bands' round-off
    return np.where(z <= low, 0.0, np.where(z >= high, 1.0, expit(z)))


def _band_variable(name: str, est: xr.DataArray, res: xr.DataArray, *, scale: float, support,
                   link: str = "identity", **options):
    """``name_band``, ``_se``, ``_bias`` (and ``_band_pointwise``) of one statistic; with ``link="logit"`` the
    band is formed on the logit scale and mapped back (SE and bias stay on the statistic's scale)."""
    has_output = "output" in est.dims
    e_da = est if has_output else est.expand_dims("output")
    r_da = res if has_output else res.expand_dims("output")
    grid = [d for d in e_da.dims if d != "output"]
    e_da = e_da.transpose("output", *grid)
    e = e_da.values.reshape(e_da.sizes["output"], -1)
    raw = r_da.transpose("resample", "output", *grid).values.reshape(res.sizes["resample"], *e.shape)
    r = e + (raw - e) * scale
    lower, upper, se, bias, info = band_arrays(e, r, support=support, keep_pointwise=True, **options)
    if link == "logit":
        le = _to_logit(e)
        lower, upper, _, _, info = band_arrays(le, le + (_to_logit(raw) - le) * scale, support=(None, None),
                                               keep_pointwise=True, **options)
        lower, upper = _from_logit(lower), _from_logit(upper)
        if "pointwise" in info:
            info["pointwise"] = tuple(_from_logit(b) for b in info["pointwise"])
    pointwise = info.pop("pointwise", None)  # the simultaneous band's pointwise companion, from the same call
    parts = band_variables(name, e_da, lower, upper, se=se, bias=bias, attrs={}, pointwise=pointwise)
    for key, da in parts.items():
        da = da if has_output else da.squeeze("output", drop=True)
        parts[key] = da.transpose(*(("ci_bound",) if "ci_bound" in da.dims else ()), *est.dims)
    return parts, info


def _absent(result: xr.DataTree, node_ds: xr.Dataset, method: str, header: ResultHeader) -> AbsentRows | None:
    if method not in ("bc", "bca"):
        return None
    if header.extra.get("resampling") == "subsample":
        raise ValueError(f"method={method!r} needs resamples drawn with replacement; this result used "
                         "resampling='subsample'. Use method='percentile', 'basic' or 'normal'.")
    if method == "bc":
        return None
    for ds in (node_ds, result.ds):
        if ABSENT in ds:
            return AbsentRows(ds[ABSENT].transpose("resample", ...).values, int(ds[ABSENT].attrs["n_rows"]))
    raise ValueError(
        f"method='bca' needs the rows each resample did not draw ({ABSENT!r}) for its "
        "jackknife-after-bootstrap acceleration, and this result has none. Use "
        "method='bc' (bias-corrected percentile, no acceleration) or a result that stores them."
    )


def _check_options(confidence_level, method, simultaneous_method):
    check_probability(confidence_level, "confidence_level")  # NumPy floats too
    if method not in BAND_METHODS:
        raise ValueError(f"method={method!r} is not one of {list(BAND_METHODS)}.")
    if simultaneous_method not in ("auto", *SIMULTANEOUS_METHODS):
        raise ValueError(f"simultaneous_method={simultaneous_method!r} is not one of "
                         f"{['auto', *SIMULTANEOUS_METHODS]}.")
    return "sup-t" if simultaneous_method == "auto" else simultaneous_method


def _warn_ceiling(name: str, info: dict, n_valid: int, level: float) -> None:
    if "resamples_suggested" not in info:
        return
    top = max(info["calibrated_level"])
    warnings.warn(
        f"The calibrated level of the {level:.0%} simultaneous band of {name!r} is {top:.4f}, above "
        f"{envelope_level(n_valid):.4f} that {n_valid} resamples resolve: the band is their envelope and covers less "
        f"than it claims; use about {info['resamples_suggested']} resamples or simultaneous_method='sup-t'.",
        UserWarning, stacklevel=3)


def confidence_bands(
    result: xr.DataTree,
    *,
    confidence_level: float = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
    simultaneous_method: str = "auto",
    scale: str = "auto",
) -> xr.DataTree:
    """Add confidence bands to every statistic that has resamples.

    Parameters
    ----------
    result : xarray.DataTree
        A result with ``*_resamples`` variables.
    confidence_level : float
        In (0, 1).
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Pointwise method (``bca`` needs ``resample_absent``; ``basic`` and ``bca`` under-cover
        curves and warn; see the validation page of the documentation).
    simultaneous : bool
        Bands covering each whole curve or surface at once, per output (the pointwise one kept as
        ``s_band_pointwise``).
    simultaneous_method : {"auto", "sup-t", "calibrated"}
        ``sup-t`` (``auto``): ``estimate -/+ c * se`` widened to contain the pointwise band;
        ``calibrated``: the pointwise band at a calibrated level.
    scale : {"auto", "identity", "logit"}
        Scale the bands of ``pd`` are formed on (``auto``: the root attr ``band_scale``).

    Returns
    -------
    xarray.DataTree
        A copy of ``result`` whose nodes also hold, for each ``s``: ``s_band`` (``ci_bound``,
        ``*dims`` of s), ``s_se`` and ``s_bias``; 1-D nodes also the centred PD ``pd_centered``
        and its band.

    Warns
    -----
    pdpboot.CoverageWarning
        ``basic`` or ``bca`` bands of curves; simultaneous bands of a gradient-boosting classifier.

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0] + X[:, 1]
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=20,
    ...                                            grid=pdpboot.Grid(4), rng=0)
    >>> pdpboot.confidence_bands(res)["x0"].ds["pd_band"].dims
    ('ci_bound', 'output', 'x0')
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError("confidence_bands takes the DataTree returned by bootstrap_partial_dependence.")
    sim_method = _check_options(confidence_level, method, simultaneous_method)
    nodes = feature_nodes(result)
    if not any(v.endswith(_SUFFIX) for n in nodes for v in n.ds.data_vars):
        raise ValueError("This result has no resamples (no *_resamples variables); run "
                         "pdpboot.bootstrap_partial_dependence first.")
    header = ResultHeader.from_attrs(result.attrs)
    link = _band_scale(scale, header)
    scale = _deviation_scale(header)
    out = result.copy()
    for node in nodes:
        ds = node.to_dataset()
        absent = _absent(result, ds, method, header)
        for res_name in [v for v in ds.data_vars if v.endswith(_SUFFIX)]:
            name = res_name[: -len(_SUFFIX)]
            if name not in ds or name == "ice":
                continue
            res = ds[res_name]
            n_valid = int((~res.isnull().any([d for d in res.dims if d != "resample"])).sum())
            if n_valid < 2:
                raise ValueError(f"Only {n_valid} valid resample(s) for {name!r}; bands need at least 2.")
            if simultaneous and n_valid < min_simultaneous_resamples(confidence_level):
                raise ValueError(
                    f"A {confidence_level:.0%} simultaneous band needs at least "
                    f"{min_simultaneous_resamples(confidence_level)} resamples; this result has {n_valid}. "
                    "Raise n_resamples or lower confidence_level."
                )
            support = _support(name, ds[name], header)
            targets = [(name, ds[name], res, support)]
            if name == "pd" and len(node.attrs["features"]) == 1:
                # the centred PD (anchored at the first grid value) has its own, narrower band
                first = {node.attrs["features"][0]: 0}
                targets.append(("pd_centered", ds[name] - ds[name].isel(first), res - res.isel(first),
                                _centred_support(support)))
            for target, est, target_res, bounds in targets:
                on_logit = link == "logit" and target == "pd"
                parts, info = _band_variable(
                    target, est, target_res, scale=scale, support=bounds, link="logit" if on_logit else "identity",
                    level=confidence_level, method=method, simultaneous=simultaneous,
                    simultaneous_method=sim_method, absent=absent)
                if simultaneous:
                    _warn_ceiling(f"{node.name}/{target}", info, n_valid, confidence_level)
                attrs = {"method": method, "confidence_level": float(confidence_level),
                         "simultaneous": int(simultaneous), "n_resamples": n_valid, **info,
                         **({"simultaneous_method": sim_method} if simultaneous else {}),
                         **({"scale": "logit"} if on_logit else support_attrs(bounds))}
                if target != name:
                    ds[target] = est
                for key, da in parts.items():
                    if key.endswith(("_band", "_band_pointwise")):
                        da.attrs = dict(attrs, simultaneous=int(simultaneous and key.endswith("_band")))
                    ds[key] = da
        out[node.name].dataset = ds
    if {v[: -len(_SUFFIX)] for n in nodes for v in n.ds.data_vars if v.endswith(_SUFFIX)} & set(CURVES):
        warn_interval_method(method)
        if simultaneous and boosting_classifier_under_covers(result.attrs, link):
            warn_boosting_classifier(result.attrs.get("resampling"))
    return out
