"""Confidence bands from stored resamples (never refits).

For every variable ``s`` of a result node that has a companion
``s_resamples``, :func:`confidence_bands` adds ``s_band`` (``ci_bound``, ...),
the bootstrap standard error ``s_se`` and the bias estimate ``s_bias`` (mean
of the resamples minus the estimate).  1-D nodes also get the centred PD
``pd_centered`` (PD minus its value at the first grid point, as centred ICE)
with its own ``pd_centered_band``/``_se``/``_bias``: the uncertainty of a change
from the first grid value, which is smaller than that of the level.

Pointwise methods (at each grid point, level 1 - alpha; formulas in
:mod:`pdpboot.engine.intervals`):

- ``percentile``: the alpha/2 and 1 - alpha/2 quantiles of the resamples, each
  the order statistic of rank ``(B + 1) q`` (interpolated between neighbours;
  :func:`pdpboot.engine.intervals.quantile`; the sup-t critical value below
  takes the same rank rounded up);
- ``basic``: ``2 * estimate - `` those quantiles (reflected);
- ``normal``: ``estimate -/+ z_{1-alpha/2} * se``;
- ``bc``: bias-corrected percentile (Efron 1987, acceleration 0);
- ``bca``: bias-corrected and accelerated (Efron 1987), acceleration from the
  jackknife-after-bootstrap (needs ``resample_counts``, no refit).

Bounds of a bounded statistic are clipped into its range, which the statistic
itself records (variable attr ``support`` = ``[lower, upper]``, NaN for no
bound, written by the effect that made it: H statistics, ICE spreads,
heterogeneity index, PD-variance index and ranges are >= 0, a probability PD
lies in [0, 1], its centred version in [-1, 1]).

Simultaneous bands cover the whole curve or surface (per output) at once:

- ``sup-t`` (default, see :func:`confidence_bands` for the study behind the
  choice): ``estimate -/+ c * se`` where ``c`` is the order statistic of rank
  ``ceil((B + 1) level)`` of the ``B`` resample values of
  ``max_g |resample_b(g) - estimate(g)| / se(g)`` (Davison & Hinkley 1997,
  Sec. 2.4; never below the pointwise ``z``), widened where the method's
  pointwise band sticks out;
- ``calibrated``: the method's pointwise band at the calibrated level
  ``level* >= level``: the smallest level at which a share ``level`` of the
  resample curves lies entirely inside the pointwise percentile band, per
  output.  With few resamples ``level*`` exceeds what B resolves and the band
  becomes the resamples' envelope: a warning says so.
Both contain the pointwise band of the same method by construction.

With ``resampling="subsample"`` (m of n rows without replacement), the
deviations of the resamples from the estimate are rescaled by
``sqrt(m / (n - m))`` before any band is formed, so that their spread
estimates the sampling spread of the full-data estimate.

Scale (``scale=``): a classifier's probability PD lies in (0, 1) and its
resamples are skewed near the ends; on the logit scale they are closer to
symmetric and their spread closer to constant along the grid, which the sup-t
band assumes.  With ``scale="logit"`` (the default ``"auto"`` does so when the
result's root attr ``band_scale`` is ``"logit"``, which
``resampling="auto"`` writes for a classifier's probabilities) the bands of
``pd`` are formed from ``logit(pd)`` and ``logit(pd_resamples)`` (clipped to
``[1e-6, 1 - 1e-6]``; the subsample rescaling applied there) and mapped back
with the logistic function (a bound at or beyond the clip maps to 0 or 1);
``pd_se``, ``pd_bias``, the centred PD and every other statistic stay on the
probability scale.

A band need not contain its estimate.  The percentile band keeps the offset of the
resamples' mean from the estimate (``pd_bias``; for the subsample rescaled with the
spread), and where that offset is large the pointwise band lies wholly on one side
of the estimate (seen on statsmodels' ``modechoice`` data with a forest classifier).
The offset carries information: for the flexible classifiers studied it is
negatively correlated with the estimate's own error (median correlation -0.56 to
-0.66 over the cells of ``experiments/classifier_default.py``, B = 100), so a band
centred on the estimate instead covered less (rare outcome, boosting classifier,
R = 120: whole curve 0.858 (MC SE 0.022) against 0.912 (0.017); every flexible
cell lost 0.04-0.09; table ``experiments/summaries/classifier_se/auto_centring.txt``).
In those studies the default band excluded the estimate at 0-1.4 % of grid points.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from ._assemble import band_variables, read_support, support_attrs
from ._validate import check_probability
from .caveats import CURVES, boosting_classifier_under_covers, warn_boosting_classifier, warn_interval_method
from .engine.intervals import (
    POINTWISE_METHODS,
    SIMULTANEOUS_METHODS,
    band_arrays,
    envelope_level,
    min_simultaneous_resamples,
)
from .header import ResultHeader
from .options import BAND_SCALES
from .schema import feature_nodes

__all__ = ["BAND_METHODS", "SCALES", "band_arrays", "confidence_bands"]

BAND_METHODS = POINTWISE_METHODS
#: ``scale=`` of :func:`confidence_bands`: ``auto`` reads the result's ``band_scale`` root attr.
SCALES = ("auto", *BAND_SCALES)
COUNTS = "resample_counts"
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
    """The logistic function, with a bound at or beyond the clip mapped to exactly 0 or 1 (a PD every fit puts
    at 0 keeps the band [0, 0], which contains it)."""
    low, high = logit(_EPS) + 1e-9, logit(1 - _EPS) - 1e-9  # the clip, give or take the bands' round-off
    return np.where(z <= low, 0.0, np.where(z >= high, 1.0, expit(z)))


def _band_variable(name: str, est: xr.DataArray, res: xr.DataArray, *, scale: float, support,
                   link: str = "identity", **options):
    """``name_band``, ``_se``, ``_bias`` (and ``_band_pointwise``) of one statistic, via the NumPy layer.

    ``band_arrays`` takes (output, point) and (resample, output, point): the statistic's grid dims
    are flattened into one point axis (a statistic without ``output`` gets one of length 1).  With
    ``link="logit"`` the bands are formed on the logit scale (unbounded there) and mapped back; the SE and
    the bias stay on the statistic's own scale.
    """
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


def _counts(result: xr.DataTree, node_ds: xr.Dataset, method: str, header: ResultHeader) -> np.ndarray | None:
    if method not in ("bc", "bca"):
        return None
    if header.extra.get("resampling") == "subsample":
        raise ValueError(f"method={method!r} needs resamples drawn with replacement; this result used "
                         "resampling='subsample'. Use method='percentile', 'basic' or 'normal'.")
    if method == "bc":
        return None
    for ds in (node_ds, result.ds):
        if COUNTS in ds:
            return ds[COUNTS].transpose("resample", ...).values
    raise ValueError(
        f"method='bca' needs the resample row counts ({COUNTS!r}: resample x row, how often each row was "
        "drawn) for its jackknife-after-bootstrap acceleration, and this result has none. Use "
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
        f"The calibrated level of the simultaneous {level:.0%} band of {name!r} is {top:.4f}, above "
        f"{envelope_level(n_valid):.4f}, the highest level {n_valid} resamples resolve: the band is (nearly) the "
        f"min-max envelope of the resamples and covers less than it claims. About "
        f"{info['resamples_suggested']} resamples would put 10 beyond each bound; or use "
        "simultaneous_method='sup-t'.",
        UserWarning, stacklevel=3,
    )


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
        Output of :func:`pdpboot.bootstrap_partial_dependence` (or of
        :func:`pdpboot.h_statistic` / :func:`pdpboot.ice_heterogeneity`).
    confidence_level : float
        In (0, 1).
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Pointwise method (see the module notes).  ``bca`` (Efron 1987) takes its
        acceleration from the jackknife-after-bootstrap (Efron 1992): the
        jackknife value of row ``i`` is the mean of the resamples that did not
        draw row ``i``, so it needs the resample row counts ``resample_counts``
        (``resample``, ``row``) stored in the result, and no refit.
        **``basic`` and ``bca`` under-cover PD and ALE curves** with every
        learner tested, and draw a :class:`pdpboot.CoverageWarning`: in an
        independent audit (R = 60-150 data sets, B = 100) their 95 % bands
        covered 0.83-0.90 (boosting, spline regression), 0.78-0.85 (boosting
        classifier) and 0.82-0.88 at n = 25, against 0.92-0.94 for
        ``percentile``.  The offset of the resamples' mean from the estimate
        is negatively correlated with the estimate's error (median correlation
        -0.31 spline, -0.34 boosting, -0.60 boosting classifier), so their
        bias "correction" moves the band away from the truth.  ``percentile``
        (the default) is the method with a study behind it; ``bc``/``bca``
        remain the right choice for the bounded summary statistics whose
        study chose them (``experiments/bounded_statistics.py``).
        **Small B:** every quantile of the resamples is the order statistic
        of rank ``(B + 1) q`` (Davison & Hinkley 1997, Sec. 5.2; interpolated
        between neighbours when that is not an integer, the extreme resample
        beyond them).  NumPy's default quantile (rank ``(B - 1) q + 1``) sits
        about one rank inside it at each end, so that even an exact bootstrap
        distribution covers only 0.931 with a 95 % band at B = 100, against
        0.950 with this rule (``experiments/pointwise_diagnosis.py``, 40000
        sets).  For a logistic regression's probability PD (bootstrap SE 1.02
        of the true SD, n = 400, ``experiments/classifier_default.py``, R =
        201 data sets, B = 100) the percentile band covered 0.946 (MC SE
        0.008) with this rule and 0.921 (0.010) with NumPy's; ``normal``
        0.937 (0.009); the estimate -/+ 1.96 true SDs 0.941 (0.009).
    simultaneous : bool
        Bands covering each whole curve/surface at once, per output (see module
        notes); the pointwise band is then kept as ``s_band_pointwise``.
    simultaneous_method : {"auto", "sup-t", "calibrated"}
        ``sup-t``: ``estimate -/+ c * se`` (widened where ``method``'s
        pointwise band sticks out); ``calibrated``: ``method``'s pointwise band
        at the calibrated level of the percentile band.  ``auto`` is ``sup-t``:
        in a coverage study (``experiments/simultaneous_bands.py``: regression, smooth
        spline learner, n = 300, 15-point grid, R = 1000 data sets) the 95 %
        sup-t band covered the learner's expected PD curve as a whole in
        0.935 (MC SE 0.008) of the data sets at B = 100 and 0.937 (0.008) at
        B = 200 (with NumPy's interpolated 95 % quantile of the maxima instead
        of their order statistic k = ceil(0.95 (B + 1)), the package's rule:
        0.922 and 0.932), the
        calibrated percentile band in only 0.796 (0.013) and
        0.878 (0.010): on a smooth curve its calibrated level always reached
        1.0 (the min-max envelope of the resamples), because it is calibrated
        on the resamples themselves and needs quantiles more extreme than B
        resamples resolve; sup-t only needs the 95 % quantile of a maximum.
    scale : {"auto", "identity", "logit"}
        The scale the bands of ``pd`` are formed on (see the module notes).
        ``auto`` (default): the result's root attr ``band_scale`` (``"logit"``
        for a classifier's probability PD with ``resampling="auto"``, the
        package's default; ``"identity"`` otherwise and for results without
        it).  ``logit``: a probability PD's bands formed on the logit scale and
        mapped back, whatever the resampling (an error for other outputs);
        ``identity``: on the scale of the PD itself.  Other statistics are
        always banded on their own scale.

    Returns
    -------
    xarray.DataTree
        A copy of ``result`` whose nodes also hold, for each ``s`` with
        ``s_resamples``: ``s_band`` (``ci_bound``, *dims of s), ``s_se`` and
        ``s_bias`` (dims of s).  ``s_band.attrs`` records ``method``,
        ``confidence_level``, ``simultaneous`` (0/1), ``simultaneous_method``,
        ``n_resamples`` (used) and ``critical_value`` or ``calibrated_level``
        (one per output), ``acceleration_max`` for BCa, and ``support`` when the
        bounds were clipped into the range of a bounded statistic (the range the
        statistic's own ``support`` attr records).  Bands of ``pd`` formed on
        the logit scale have ``scale = "logit"`` in their attrs.

    Warns
    -----
    pdpboot.CoverageWarning
        ``method="basic"`` or ``"bca"`` on PD/ALE curves (measured to
        under-cover, see ``method``); ``simultaneous=True`` for a
        gradient-boosting classifier's PD resampled otherwise than by the
        default (``resampling="auto"``: the 0.632 subsample with logit-scale
        bands): its bootstrap SE was measured at 0.80-0.89 of the true sampling
        SD (sup-t whole-curve coverage 0.79-0.88 in an audit at n = 400, R =
        80, B = 100; 0.62 in the paper's own study; 0.613 on a rare outcome,
        ``experiments/classifier_default.py``).
    UserWarning
        A calibrated simultaneous band whose level exceeds what the number of
        resamples resolves (the band is then the resamples' envelope); the
        suggested number of resamples is also kept as ``resamples_suggested``.

    See Also
    --------
    pdpboot.engine.intervals : the NumPy functions behind every method.
    pdpboot.h_statistic, pdpboot.ice_heterogeneity : statistics with bands.
    pdpboot.probability_bands : ``confidence_bands(scale="logit")`` for a probability PD.

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0] + X[:, 1]
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=20,
    ...                                            grid_resolution=4, rng=0)
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
        counts = _counts(result, ds, method, header)
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
                    simultaneous_method=sim_method, counts=counts)
                if simultaneous:
                    _warn_ceiling(f"{node.name}/{target}", info, n_valid, confidence_level)
                attrs = {"method": method, "confidence_level": float(confidence_level),
                         "simultaneous": int(simultaneous), "n_resamples": n_valid, **info}
                if simultaneous:
                    attrs["simultaneous_method"] = sim_method
                attrs.update({"scale": "logit"} if on_logit else support_attrs(bounds))
                if target != name:
                    ds[target] = est
                for key, da in parts.items():
                    if key.endswith(("_band", "_band_pointwise")):
                        da.attrs = dict(attrs, simultaneous=int(simultaneous and key.endswith("_band")))
                    ds[key] = da
        out[node.name].dataset = ds
    if {v[: -len(_SUFFIX)] for n in nodes for v in n.ds.data_vars if v.endswith(_SUFFIX)} & set(CURVES):
        warn_interval_method(method)  # basic, bca: measured to under-cover curves (issue 27)
        if simultaneous and boosting_classifier_under_covers(
                result.attrs.get("estimator", ""), result.attrs.get("resampling"), link):
            warn_boosting_classifier(result.attrs.get("resampling"))
    return out
