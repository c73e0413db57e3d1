"""Bands of a probability PD formed on the logit scale and mapped back (issue 27).

A classifier's probability PD lives in (0, 1) and its resamples are skewed near the ends; on the
logit scale they are closer to symmetric and their spread closer to constant along the grid, which
is what the sup-t band assumes.  :func:`probability_bands` forms the bands of ``pd`` there and maps
their bounds back with the logistic function (a monotone map: pointwise percentile bounds are the
same as on the probability scale up to the subsample rescaling; the simultaneous band changes).

Measured (``experiments/classifier_se.py``; HistGradientBoostingClassifier, 60 rounds, n = 400,
B = 50, 95 % bands, coverage of the learner's expected PD; numbers in :data:`MEASURED`): with
``resampling="subsample"`` (0.632 n rows, deviations rescaled) on the audit-like DGP it covered
0.974 pointwise and 0.971 whole curve (R = 120), the bootstrap on the probability scale 0.942 and
0.825; the logit scale alone (bootstrap resamples) 0.942 and 0.942.  At B = 100
(``experiments/classifier_default.py``, four DGPs x boosting, forest and logistic-regression
classifiers, R = 21-201 per cell; table in ``experiments/summaries/classifier_se/default_B100.txt``)
it covered 0.94-0.98 pointwise and 0.91-1.00 whole curve in every cell; the weakest was a rare
outcome (base rate about 0.15) with the boosting classifier: 0.962 (MC SE 0.004) pointwise and
0.912 (0.017) whole curve (R = 120; the misses had the truth above the band at the lowest
probabilities), where the bootstrap covered 0.908 and 0.613 (R = 120).  Logistic regression's pointwise
coverage, 0.92-0.93 with NumPy's interpolated quantile, is 0.94-0.96 with the package's (B + 1) q
rule (the quantile, not the scheme, was the shortfall).  It stays opt-in for now, and the
boosting-classifier :class:`pdpboot.CoverageWarning` stays.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from .bands import confidence_bands
from .caveats import CoverageWarning, is_boosting_classifier, warn_boosting_classifier, warn_interval_method
from .schema import feature_nodes

__all__ = ["MEASURED", "probability_bands"]

#: experiments/classifier_se.py (filled from experiments/summaries/classifier_se/summary.txt).
MEASURED = {
    # (resampling, scale): (pointwise, MC SE, whole curve, MC SE); audit-like DGP, R = 120 data sets, B = 50
    # (the package's (B + 1) q quantile rule; experiments/summaries/classifier_se/summary.txt)
    ("bootstrap", "probability"): (0.942, 0.005, 0.825, 0.025),
    ("bootstrap", "logit"): (0.942, 0.005, 0.942, 0.016),
    ("subsample", "probability"): (0.971, 0.004, 0.921, 0.019),
    ("subsample", "logit"): (0.974, 0.004, 0.971, 0.012),
}

_EPS = 1e-6


def probability_bands(
    result: xr.DataTree,
    *,
    confidence_level: float = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
    simultaneous_method: str = "auto",
) -> xr.DataTree:
    """:func:`pdpboot.confidence_bands` for a probability PD, with the PD's bands formed on the logit scale.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`pdpboot.bootstrap_partial_dependence` for a classifier with
        ``response_method="predict_proba"`` (the default for classifiers).
    confidence_level, method, simultaneous, simultaneous_method
        As in :func:`pdpboot.confidence_bands`.

    Returns
    -------
    xarray.DataTree
        :func:`pdpboot.confidence_bands` output in which ``pd_band`` (and ``pd_band_pointwise``
        with ``simultaneous``) of every node were formed from ``logit(pd)`` and
        ``logit(pd_resamples)`` (clipped to ``[1e-6, 1 - 1e-6]``) and mapped back with the
        logistic function; ``pd_band.attrs["scale"] = "logit"``.  ``pd_se``, ``pd_bias``, the
        centred PD and every other statistic keep their probability-scale values.

    Raises
    ------
    ValueError
        When the result is not a probability PD.

    Warns
    -----
    pdpboot.CoverageWarning
        Simultaneous bands of a gradient-boosting classifier (see :mod:`pdpboot.logit_scale`
        for what was measured).

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.random.default_rng(0).normal(size=(80, 2)); y = (X[:, 0] > 0).astype(int)
    >>> res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=20,
    ...                                            grid_resolution=4, resampling="subsample", rng=0)
    >>> pdpboot.probability_bands(res)["x0"].ds["pd_band"].attrs["scale"]
    'logit'
    """
    if result.attrs.get("response") != "predict_proba":
        raise ValueError("probability_bands needs a probability PD (a classifier with "
                         f"response_method='predict_proba'); this result has {result.attrs.get('response')!r}.")
    options = {"confidence_level": confidence_level, "method": method, "simultaneous": simultaneous,
               "simultaneous_method": simultaneous_method}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # said once below, not once per scale
        out = confidence_bands(result, **options)
        on_logit = result.copy()
        # unbounded: no clipping into [0, 1] (neither the root's "supports" nor a variable's "support")
        on_logit.attrs = {k: v for k, v in dict(result.attrs, response="logit").items() if k != "supports"}
        for node in feature_nodes(result):
            ds = node.to_dataset()
            if "pd_resamples" not in ds:
                continue
            on_logit[node.name].dataset = xr.Dataset(
                {k: (ds[k].dims, logit(np.clip(ds[k].values, _EPS, 1 - _EPS))) for k in ("pd", "pd_resamples")},
                coords={c: ds.coords[c] for c in ds.coords}, attrs=ds.attrs)
        banded = confidence_bands(on_logit, **options)
    for node in feature_nodes(result):
        if "pd_resamples" not in node.ds:
            continue
        ds = out[node.name].to_dataset()
        logit_ds = banded[node.name].to_dataset()
        for name in ("pd_band", "pd_band_pointwise"):
            if name in logit_ds:
                band = expit(logit_ds[name])
                band.attrs = dict(logit_ds[name].attrs, scale="logit")
                ds[name] = band
        out[node.name].dataset = ds
    warn_interval_method(method)
    if simultaneous and is_boosting_classifier(result.attrs.get("estimator", "")):
        warn_boosting_classifier(result.attrs.get("resampling"))
    return out
