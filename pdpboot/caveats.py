"""Measured coverage caveats: the warnings a user meets when a method is known to under-cover.

Each caveat quotes its study (``experiments/``) with the numbers measured there, so the message,
the docstrings and the paper say the same thing.  The warnings are :class:`CoverageWarning`
(a :class:`UserWarning`): Python's default filter shows each once per calling line; silence them
with ``warnings.filterwarnings("ignore", category=pdpboot.CoverageWarning)``.

This module is at the bottom of the house (standard library only), so every layer may warn.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["AUTO_PROBABILITY_NOTE", "BASIC_BCA_NOTE", "BOOSTING_CLASSIFIER_NOTE", "CURVES", "CoverageWarning",
           "SUBSAMPLE_NOTE", "UNDER_COVERING_METHODS", "auto_scheme_reason",
           "boosting_classifier_under_covers", "is_boosting_classifier", "warn_boosting_classifier",
           "warn_interval_method"]


class CoverageWarning(UserWarning):
    """A band whose coverage was measured below its nominal level for this setting."""


#: The effects (curves and surfaces) the caveats on interval methods were measured on.
CURVES = ("pd", "ale")
#: Pointwise band methods that under-covered PD/ALE curves with every learner tested (issue 27).
UNDER_COVERING_METHODS = ("basic", "bca")

BASIC_BCA_NOTE = (
    "basic and bca bands under-covered PD curves with every learner tested: 95 % bands covered "
    "0.83-0.90 (boosting, spline regression), 0.78-0.85 (boosting classifier), 0.82-0.88 at n = 25 "
    "(independent audit, R = 60-150 data sets, B = 100). The resamples' mean sits on the far side of the "
    "estimate from the truth (the offset of the refits' mean from the estimate is negatively correlated "
    "with the estimate's error: median correlation -0.31 spline, -0.34 boosting, -0.60 boosting "
    "classifier), so the bias 'correction' moves the band away from the truth. The percentile default "
    "covered 0.92-0.94 in the same study."
)

BOOSTING_CLASSIFIER_NOTE = (
    "Simultaneous bands of a gradient-boosting classifier's probability PD under-cover: the refit "
    "bootstrap's SE is 0.80-0.89 of the true sampling SD at every grid point (HistGradientBoosting"
    "Classifier, 60 rounds, n = 400: independent audit R = 80, B = 100, sup-t whole curve 0.787 (MC SE "
    "0.046) and 0.875 (0.037) for two features; the paper's boosting classifier 0.62). On a rare outcome (base "
    "rate about 0.15; experiments/classifier_default.py, R = 120, B = 100) its SE was 0.82 of the true SD and "
    "its sup-t band covered the whole curve in 0.613 (MC SE 0.030) of the data sets (pointwise 0.908 (0.006)). "
)
#: What experiments/classifier_se.py (B = 50) and experiments/classifier_default.py (B = 100) measured for the 0.632
#: subsample with logit-scale bands (summaries: experiments/summaries/classifier_se/).
SUBSAMPLE_NOTE = (
    "on an audit-like DGP (experiments/classifier_se.py: HistGradientBoostingClassifier, 60 rounds, n = 400, "
    "R = 120 data sets, B = 50) its SE was 0.92 of the true SD (bootstrap 0.88) and its 95 % bands formed on the "
    "logit scale covered 0.974 (MC SE 0.004) pointwise and 0.971 (0.012) whole curve "
    "(bootstrap 0.942 and 0.825). At B = 100 (experiments/classifier_default.py; four DGPs x boosting, forest "
    "and logistic-regression classifiers) it covered 0.94-0.98 pointwise and 0.91-0.99 whole curve in every "
    "cell; the lowest whole-curve coverage was on a rare outcome (base rate about 0.15) with the boosting "
    "classifier: 0.962 (0.004) pointwise and 0.912 (0.017) whole curve (R = 120; the misses had the truth "
    "above the band at the lowest probabilities, where the estimate is right-skewed), short of the issue's "
    "0.93 by about 1 MC SE, so read whole-curve bands near probability 0 as possibly a little narrower than "
    "stated. It is the default for a classifier's probabilities (resampling='auto')."
)
#: Why ``resampling="auto"`` chose the 0.632 subsample with logit-scale bands (one sentence; numbers from
#: experiments/summaries/classifier_se/default_B100.txt).
AUTO_PROBABILITY_NOTE = (
    "in experiments/classifier_default.py (n = 400, B = 100, four DGPs x boosting, forest and "
    "logistic-regression classifiers, R = 60-201 data sets per cell) it covered 0.940-0.976 pointwise and "
    "0.912-0.985 whole curve in every cell, where the plain bootstrap covered a boosting classifier's PD on a rare "
    "outcome in 0.908 (MC SE 0.006) pointwise and 0.613 (0.030) whole curve, and it changed logistic "
    "regression's coverage by at most 0.01 pointwise"
)


def auto_scheme_reason(probabilities: bool, output: str = "predictions", fraction: float = 0.632) -> str:
    """The one sentence a result records on why ``resampling="auto"`` chose its scheme and band scale.

    >>> auto_scheme_reason(False, "a regressor's predictions")[:60]
    "resampling='auto' chose the bootstrap for a regressor's pred"
    """
    if probabilities:
        return (f"resampling='auto' chose {fraction:g} subsampling (rows drawn without replacement, deviations "
                f"rescaled by sqrt(m / (n - m))) with the PD's bands formed on the logit scale and mapped back, "
                f"because the PD averages {output}: {AUTO_PROBABILITY_NOTE}.")
    return (f"resampling='auto' chose the bootstrap for {output} (not probabilities), the scheme the package's "
            "regression and decision-function studies validated; the 0.632 subsample with logit-scale bands is "
            "only for a classifier's predicted probabilities.")


_BOOSTING_CLASSIFIER = re.compile(r"\b(HistGradientBoosting|GradientBoosting|XGB|LGBM|CatBoost)Classifier\b")


def is_boosting_classifier(estimator_repr: str) -> bool:
    """Whether an estimator's ``repr`` (a result's ``attrs["estimator"]``) names a gradient-boosting classifier."""
    return bool(_BOOSTING_CLASSIFIER.search(str(estimator_repr)))


def warn_interval_method(method: str, *, stacklevel: int = 3) -> None:
    """Warn that ``method`` (``basic`` or ``bca``) under-covers PD/ALE curves; no-op otherwise."""
    if method in UNDER_COVERING_METHODS:
        warnings.warn(f"method={method!r}: {BASIC_BCA_NOTE} Use method='percentile' (the default) for "
                      "curves.", CoverageWarning, stacklevel=stacklevel)


def boosting_classifier_under_covers(estimator_repr: str, resampling: str | None, band_scale: str | None) -> bool:
    """Whether a band of this boosting classifier's probability PD was measured to under-cover.

    Every scheme studied under-covered the whole curve of a boosting classifier's PD (the bootstrap
    0.613, the 0.632 subsample alone 0.767, the bootstrap on the logit scale 0.858 on a rare outcome;
    experiments/summaries/classifier_se/default_B100.txt) except the 0.632 subsample with the bands
    formed on the logit scale (0.912-0.985), the default ``resampling="auto"`` chooses.

    >>> boosting_classifier_under_covers("HistGradientBoostingClassifier()", "bootstrap", "identity")
    True
    >>> boosting_classifier_under_covers("HistGradientBoostingClassifier()", "subsample", "logit")
    False
    """
    return is_boosting_classifier(estimator_repr) and not (resampling == "subsample" and band_scale == "logit")


def warn_boosting_classifier(resampling: str | None = "bootstrap", *, stacklevel: int = 3) -> None:
    """Warn that simultaneous bands of a boosting classifier's PD under-cover (measured numbers), and point to
    the default that does not (``resampling="auto"``: the 0.632 subsample with logit-scale bands)."""
    warnings.warn(f"{BOOSTING_CLASSIFIER_NOTE}(This result used resampling={resampling!r}.) The default "
                  "resampling='auto' (the 0.632 subsample with the bands formed on the logit scale) did better: "
                  f"{SUBSAMPLE_NOTE}", CoverageWarning, stacklevel=stacklevel)
