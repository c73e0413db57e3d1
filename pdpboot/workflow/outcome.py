"""What a run computes (:class:`Outcome`), shared by the refit bootstrap and the forest-IJ path."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd
import xarray as xr


@dataclass
class Outcome:
    """Everything a run computes."""

    result: xr.DataTree | None  # PD with bands and heterogeneity (and H) statistics (None: --effect ale)
    estimator: object  # unfitted
    fitted: object  # fitted on the training rows (the estimate's model)
    metrics: list  # (name, value, description)
    predictions: pd.DataFrame | None
    X_train: pd.DataFrame
    y_train: pd.Series
    notes: list[str]
    seconds: dict[str, float]
    ale: xr.DataTree | None = None  # ALE with bands (--effect ale or both), saved as ale.nc
    ale_pairs: list = dataclasses.field(default_factory=list)  # pairs that have a 2-D ALE node
