"""``probability_bands``: a thin alias of ``confidence_bands(scale="logit")`` (issue 27).

The logit-scale construction lives in :mod:`pdpboot.bands` (one path, one set of numbers): a
classifier's probability PD's bands formed on the logit scale and mapped back.  With the default
``resampling="auto"`` a classifier's probability PD is resampled by the 0.632 subsample and
:func:`pdpboot.confidence_bands` already forms its bands on the logit scale (the result's root attr
``band_scale``); this alias forces the logit scale on any probability PD (e.g. one resampled with
``resampling="bootstrap"``).

Measured (``experiments/classifier_se.py``; HistGradientBoostingClassifier, 60 rounds, n = 400,
B = 50, 95 % bands, coverage of the learner's expected PD; numbers in :data:`MEASURED`): with
``resampling="subsample"`` (0.632 n rows, deviations rescaled) on the audit-like DGP it covered
0.974 pointwise and 0.971 whole curve (R = 120), the bootstrap on the probability scale 0.942 and
0.825; the logit scale alone (bootstrap resamples) 0.942 and 0.942.  At B = 100
(``experiments/classifier_default.py``, four DGPs x boosting, forest and logistic-regression
classifiers, R = 60-201 per cell; table in ``experiments/summaries/classifier_se/default_B100.txt``)
the 0.632 subsample with logit-scale bands covered 0.940-0.976 pointwise and 0.912-0.985 whole curve
in every cell; the weakest was a rare outcome (base rate about 0.15) with the boosting classifier:
0.962 (MC SE 0.004) pointwise and 0.912 (0.017) whole curve (R = 120), where the bootstrap covered
0.908 and 0.613 (R = 120) and the bootstrap on the logit scale 0.908 and 0.858.
"""

from __future__ import annotations

import xarray as xr

from .bands import confidence_bands

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


def probability_bands(
    result: xr.DataTree,
    *,
    confidence_level: float = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
    simultaneous_method: str = "auto",
) -> xr.DataTree:
    """``pdpboot.confidence_bands(result, ..., scale="logit")``: a probability PD's bands on the logit scale.

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
        Simultaneous bands of a gradient-boosting classifier resampled otherwise than by the 0.632
        subsample (see :mod:`pdpboot.logit_scale` for what was measured).

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
    return confidence_bands(result, confidence_level=confidence_level, method=method, simultaneous=simultaneous,
                            simultaneous_method=simultaneous_method, scale="logit")
