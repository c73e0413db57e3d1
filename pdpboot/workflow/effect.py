"""What the workflow needs from one effect (PD, ALE, ...): an :class:`EffectReport`, registered once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .options import RunConfig
from .problem import Problem


@dataclass(frozen=True)
class FitContext:
    """The fitted model of a run and everything an effect's computation reads."""

    config: RunConfig
    problem: Problem
    estimator: object  # unfitted: cloned for every refit
    fitted: object  # fitted on the training rows: the estimate's model
    X_train: pd.DataFrame
    y_train: pd.Series
    say: Callable[[str], None]
    log: Callable[[str], None]
    progress: Callable[[str], None] | None = None  # where the lines on the refits go
    checkpoint: Path | None = None  # folder of the refits' checkpoints, one per effect
    seconds: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what an effect's computation adds to the run's notes

    @property
    def response_method(self) -> str:
        """Class probabilities for classification, predictions for regression."""
        return "predict_proba" if self.problem.task == "classification" else "predict"

    def categorical_in(self, sets: list) -> list[str] | None:
        """The categorical (and point-grid) features among ``sets``: the ``categorical_features`` argument."""
        used = used_features(sets)
        return [c for c in [*self.problem.categorical, *self.problem.points] if c in used] or None

    def training_levels(self, custom: Mapping, sets: list) -> dict | None:
        """Custom level grids of the features in ``sets``, without levels only test rows have (the model
        never saw them)."""
        used = used_features(sets)
        out = {}
        for name, levels in custom.items():
            if name in used:
                seen = set(self.X_train[name].dropna().tolist())
                out[name] = np.asarray(levels)[[v in seen for v in np.asarray(levels).tolist()]]
        return out or None


def used_features(sets: list) -> set[str]:
    """Every feature named in a list of features and pairs."""
    return {f for fs in sets for f in (fs if isinstance(fs, tuple) else (fs,))}


def pairs_of(tree: xr.DataTree) -> list[tuple[str, str]]:
    """The 2-D nodes of a result, as pairs of feature names."""
    return [tuple(node.attrs["features"]) for node in tree.children.values() if len(node.attrs["features"]) == 2]


@dataclass
class Outcome:
    """Everything a run computes: ``results`` by effect name in the order computed, ``failures`` by effect
    name with the one-line reason (the other effects' results are kept)."""

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


@dataclass
class SummaryContext:
    """What an effect's summary section reads (built once per ``summary.md``)."""

    problem: Problem
    config: RunConfig
    outcome: Outcome
    strategy: object  # pdpboot.workflow.strategy.Strategy
    scale: float  # the response's scale: smaller values are round-off (pdpboot.workflow.options.num)
    outputs: list  # outputs that get their own table
    cells: object  # pdpboot.workflow.report.IntervalCells: prints and flags intervals

    def response(self, output) -> str:
        """What a PD value of ``output`` is: a class probability or the predicted target."""
        from .options import md

        dgp = getattr(self.strategy, "target", "learner") == "dgp"  # a band about the data's PD, not the model's
        if self.problem.task == "classification":
            return f"P(class = {md(output)}){' in the data' if dgp else ''}"
        return f"the data's {md(self.problem.y.name)}" if dgp else f"predicted {md(self.problem.y.name)}"


@dataclass(frozen=True)
class EffectReport:
    """One effect as the workflow computes and reports it (registered in :mod:`~pdpboot.workflow.strategy`)."""

    name: str  # the --effect choice and the key of Outcome.results
    label: str  # "PD", "ALE"
    file: str  # results.nc, ale.nc
    variable: str  # pd, ale: with <variable>_band and _se
    describe: str  # the summary's line on the file
    feature_sets: Callable[[Problem], tuple[list, list[str]]]
    compute: Mapping[str, Callable[[FitContext, list, dict], xr.DataTree]]
    summary: Callable
    plots: Callable
    sheet_prefixes: tuple[str, str]  # workbook sheet prefixes of 1-D and 2-D nodes
    sheet_variables: tuple[str, ...]  # written per grid value, each with its band and SE
    grid: str = "a {n}-point grid"  # in progress lines, n = --grid-resolution
    tidy: Callable[[xr.DataTree, Problem], xr.DataTree] | None = None  # post-processing of the banded tree
    table_sheets: tuple[str, ...] = ()
    tables: Callable[[xr.DataTree, Problem, RunConfig | None], list] | None = None


__all__ = ["EffectReport", "FitContext", "Outcome", "SummaryContext", "pairs_of", "used_features"]
