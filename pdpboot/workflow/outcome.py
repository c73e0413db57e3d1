"""What a run computes (:class:`Outcome`): the fitted model, its test metrics, and one result per effect."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import xarray as xr


@dataclass
class Outcome:
    """Everything a run computes.

    ``results`` maps each finished effect's name (``pd``, ``ale``: the registered
    :class:`~pdpboot.workflow.effect.EffectReport` names) to its DataTree, in the order computed;
    ``failures`` maps an effect that failed to the one-line reason (the other effects' results are kept).
    """

    estimator: object  # unfitted (the user's own model as given, for --model-file)
    fitted: object  # fitted on the training rows (the estimate's model)
    metrics: list  # (name, value, description)
    predictions: pd.DataFrame | None
    X_train: pd.DataFrame
    y_train: pd.Series
    notes: list[str]
    seconds: dict[str, float]
    strategy: str = "bootstrap"  # --uncertainty
    results: dict[str, xr.DataTree] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def result(self) -> xr.DataTree | None:
        """The PD result (``results.nc``), or None."""
        return self.results.get("pd")

    @property
    def ale(self) -> xr.DataTree | None:
        """The ALE result (``ale.nc``), or None."""
        return self.results.get("ale")
