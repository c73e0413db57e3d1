"""Coverage caveats: the warnings a user meets when a band is known to under-cover.

Each warning says what under-covers and what to use instead; the measurements are on the
validation page of the documentation.  Silence them with
``warnings.filterwarnings("ignore", category=pdpboot.CoverageWarning)``.
Standard library only, so every layer may warn.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

__all__ = ["CURVES", "CoverageWarning", "UNDER_COVERING_METHODS", "auto_scheme_reason",
           "boosting_classifier_message", "boosting_classifier_under_covers",
           "interval_method_message", "no_band_message", "warn_boosting_classifier", "warn_interval_method"]

VALIDATION = "See the validation page of the documentation."


class CoverageWarning(UserWarning):
    """A band whose coverage was measured below its nominal level for this setting."""


#: The effects (curves and surfaces) the caveats on interval methods apply to.
CURVES = ("pd", "ale")
#: Pointwise band methods that under-cover PD and ALE curves.
UNDER_COVERING_METHODS = ("basic", "bca")
#: ``learner_family`` root attr (:func:`pdpboot.header.learner_family`) of the learners the boosting caveat is about.
BOOSTING = "gradient boosting"


def auto_scheme_reason(probabilities: bool, output: str = "predictions", fraction: float = 0.632) -> str:
    """The sentence a result records on why ``resampling="auto"`` chose its scheme and band scale.

    >>> auto_scheme_reason(False, "a regressor's predictions")
    "resampling='auto' chose the bootstrap because the PD averages a regressor's predictions."
    """
    if probabilities:
        return (f"resampling='auto' chose {fraction:g} subsampling with bands formed on the logit scale because "
                f"the PD averages {output}.")
    return f"resampling='auto' chose the bootstrap because the PD averages {output}."


def interval_method_message(method: str) -> str:
    """The warning of a pointwise ``method`` that under-covers curves."""
    return (f"method={method!r} bands under-cover PD and ALE curves; use method='percentile' (the default) for "
            f"curves. {VALIDATION}")


def boosting_classifier_message(resampling: str | None) -> str:
    """The warning of simultaneous bands of a boosting classifier's PD resampled by ``resampling``."""
    return (f"Simultaneous bands of a gradient-boosting classifier's PD under-cover with resampling={resampling!r}; "
            f"use resampling='auto' (the 0.632 subsample with logit-scale bands). {VALIDATION}")


def boosting_classifier_under_covers(attrs: Mapping, band_scale: str | None) -> bool:
    """Whether simultaneous bands of the result with root ``attrs``, formed on ``band_scale``, under-cover.

    True for a gradient-boosting classifier (root attr ``learner_family``) unless the bands come from the
    0.632 subsample on the logit scale (the default ``resampling="auto"``); results without the attr: False.

    >>> attrs = {"learner_family": "gradient boosting", "task": "classification", "resampling": "bootstrap"}
    >>> boosting_classifier_under_covers(attrs, "identity")
    True
    >>> boosting_classifier_under_covers(dict(attrs, resampling="subsample"), "logit")
    False
    """
    return (attrs.get("learner_family") == BOOSTING and attrs.get("task") == "classification"
            and not (attrs.get("resampling") == "subsample" and band_scale == "logit"))


def warn_interval_method(method: str, *, stacklevel: int = 3) -> None:
    """Warn that ``method`` (``basic`` or ``bca``) under-covers PD/ALE curves; no-op otherwise."""
    if method in UNDER_COVERING_METHODS:
        warnings.warn(interval_method_message(method), CoverageWarning, stacklevel=stacklevel)


def warn_boosting_classifier(resampling: str | None = "bootstrap", *, stacklevel: int = 3) -> None:
    """Warn that simultaneous bands of a boosting classifier's PD under-cover with ``resampling``."""
    warnings.warn(boosting_classifier_message(resampling), CoverageWarning, stacklevel=stacklevel)


def no_band_message(feature: str, where: str, n_flagged: int, n_grid: int, reasons: list[str]) -> str:
    """The warning of a debiased PD without a band at ``n_flagged`` of its ``n_grid`` grid values (``where``).

    >>> no_band_message("x1", "2.1 to 3.0", 5, 20, ["few rows"])[:50]
    "No band for the data's PD of 'x1' at 2.1 to 3.0 (5"
    """
    return (f"No band for the data's PD of {feature!r} at {where} ({n_flagged}/{n_grid} grid values): "
            f"{'; '.join(reasons)}. The learner's PD band or ALE describe the model there.")
