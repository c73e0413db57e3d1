"""Arguments validated into plans before any fit: :func:`make_spec` (table, feature sets, grids), the
:class:`Effect` protocol, :func:`make_plan` (a frozen :class:`BootstrapPlan`) and :func:`resolve_scheme`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline

from ._validate import (
    check_missing_supported,
    check_rng,
    check_sample_weight,
    check_table,
    check_target,
    is_fitted,
    resolve_features,
)
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.resample import Scheme, UnfittedCopies, rows_of
from .engine.response import resolve_response_method
from .grid import PD_RESOLUTION, FeatureGrid, Grid, check_grid, check_grid_size, make_grids
from .options import Execution, Resampling, SchemeChoice


@dataclass(frozen=True)
class PDSpec:
    """The table, feature sets and grids of a PD computation (fixed on the full data)."""

    X: pd.DataFrame | np.ndarray
    names: list[str]
    feature_sets: list[tuple[int, ...]]
    grids: dict[int, FeatureGrid]
    method: str = "auto"
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    settings: dict = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    def grid_values(self, feature_set: tuple[int, ...]) -> list[np.ndarray]:
        return [self.grids[p].values for p in feature_set]

    def dims(self, feature_set: tuple[int, ...]) -> tuple[str, ...]:
        return tuple(self.names[p] for p in feature_set)

    def rows(self, positions: np.ndarray):
        return rows_of(self.X, positions)

    def row_labels(self, positions: np.ndarray) -> np.ndarray:
        if isinstance(self.X, pd.DataFrame):
            return np.asarray(self.X.index[positions])
        return np.asarray(positions)


def make_spec(
    X,
    features,
    grid: Grid | None = None,
    *,
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> PDSpec:
    """The table and features validated and the grids fixed on the full data."""
    grid = check_grid(grid, PD_RESOLUTION)
    X, names = check_table(X)
    feature_sets = resolve_features(features, names)
    grids = make_grids(
        X, names, [p for fs in feature_sets for p in fs], grid_resolution=grid.resolution,
        percentiles=grid.percentiles, custom_values=grid.custom_values, categorical_features=grid.categorical_features,
    )
    check_grid_size(grids, feature_sets, memory_limit)
    settings = {
        "features": [[names[p] for p in fs] for fs in feature_sets],
        "grid_resolution": grid.resolution,
        "percentiles": list(grid.percentiles),
        "custom_values": sorted(str(k) for k in (grid.custom_values or {})),
        "categorical_features": [g.name for g in grids.values() if g.categorical],
        "method": method,
        "memory_limit": int(memory_limit),
    }
    return PDSpec(X, names, feature_sets, grids, method, int(memory_limit), settings)


def names_of_target(y) -> list[str]:
    """The target name(s) of ``y``: a DataFrame's columns, a Series' name, ``"y"``, or ``"y0"``, ``"y1"``, ...

    >>> names_of_target(np.zeros((4, 3)))
    ['y0', 'y1', 'y2']
    """
    if hasattr(y, "columns"):
        return list(y.columns)
    if np.ndim(y) == 2 and np.shape(y)[1] > 1:
        return [f"y{k}" for k in range(np.shape(y)[1])]
    return [str(getattr(y, "name", None) or "y")]


def fit_kwargs(estimator, fit_params: dict, sample_weight: np.ndarray | None, rows: np.ndarray | None,
               n_rows: int) -> dict:
    """The keywords of one ``fit`` on ``rows`` (None: all): per-row arrays sliced, sample weights to a
    Pipeline's final step."""
    def take(value):
        if rows is None or isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            return value
        return rows_of(value, rows) if len(value) == n_rows else value

    kwargs = {key: take(value) for key, value in fit_params.items()}
    if sample_weight is not None:
        key = f"{estimator.steps[-1][0]}__sample_weight" if isinstance(estimator, Pipeline) else "sample_weight"
        kwargs[key] = take(sample_weight)
    return kwargs


class Effect(Protocol):
    """What a run computes from every fitted model (PD/ICE, ALE, H, ...); the loop never looks inside it."""

    #: effect name recorded in the header (``"pd"``, ``"ale"``, ...)
    name: str
    spec: PDSpec

    def fixed_rows(self, background: np.ndarray, seeds) -> dict:
        """Its own fixed rows among ``background`` (e.g. ICE instances), drawn with ``seeds``; handed back,
        unread, in ``Evaluation.fixed``."""

    def evaluate(self, fitted, evaluation) -> dict:
        """Node name -> variable -> (dims, array) of one fitted model (see ``pdpboot._evaluate.Evaluation``)."""

    @property
    def settings(self) -> dict:
        """JSON-able settings of the effect (provenance and checkpoint fingerprint)."""

    def supports(self, response_method: str) -> dict[str, tuple[float | None, float | None]]:
        """Variable name -> (lower, upper) bound of the values it can take (for clipping bands)."""

    def node_attrs(self) -> dict[str, dict]:
        """Node name -> extra node attrs (e.g. ALE's bin counts)."""


@dataclass(frozen=True)
class BootstrapPlan:
    """Every resolved choice of a resampling run, validated before any fit (see :func:`make_plan`)."""

    estimator: Any  # unfitted
    effect: Effect
    y: Any
    resampling: Resampling
    execution: Execution
    scheme: Scheme  # bound to the data: draws the jobs
    response_method: str
    sample_weight: np.ndarray | None
    rng: Any  # validated seed argument (see check_rng)
    #: how the scheme was chosen (``resampling="auto"`` resolved) and the scale of the PD's bands
    choice: SchemeChoice | None = None

    @cached_property
    def copies(self) -> UnfittedCopies:
        """Fresh copies of ``estimator``, one per refit."""
        return UnfittedCopies(self.estimator)

    @property
    def fit_params(self) -> dict:
        return self.resampling.fit_params

    @property
    def spec(self) -> PDSpec:
        return self.effect.spec

    @property
    def n_resamples(self) -> int:
        return self.resampling.n_resamples

    @property
    def settings(self) -> dict:
        """JSON-able call settings (provenance and checkpoint fingerprint)."""
        return dict(
            self.spec.settings, **self.effect.settings, **self.resampling.settings,
            response_method=self.response_method, sample_weight=self.sample_weight is not None,
            fit_params=sorted(self.fit_params),
        )


def make_plan(estimator, y, effect: Effect, *, resampling: Resampling, execution: Execution,
              response_method: str = "auto", sample_weight=None, rng=None, scheme: Scheme | None = None
              ) -> BootstrapPlan:
    """A resampling run of ``effect`` validated before any fit; ``scheme`` replaces the one ``resampling``
    names (e.g. null replicates)."""
    if is_fitted(estimator):
        raise ValueError(
            f"{type(estimator).__name__} is already fitted, but resampling fits clones itself; "
            "pass the unfitted estimator (e.g. sklearn.base.clone(estimator)). "
            "For the PD of a fitted model without resampling use pdpboot.partial_dependence."
        )
    rng = check_rng(rng)
    spec = effect.spec
    y = check_target(y, spec.n_rows, estimator)
    choice = None
    if scheme is None:
        resampling, choice = resolve_scheme(resampling, estimator, response_method)
        scheme = resampling.scheme_for(spec.n_rows, y, classifier=is_classifier(estimator))
    elif response_method != "auto":
        resolve_response_method(estimator, response_method)  # fail before any fit
    check_missing_supported(estimator, spec.X, spec.names, spec.grids)
    return BootstrapPlan(
        estimator=estimator, effect=effect, y=y, resampling=resampling, execution=execution, scheme=scheme,
        response_method=response_method, sample_weight=check_sample_weight(sample_weight, spec.n_rows),
        rng=rng, choice=choice,
    )


def resolve_scheme(resampling: Resampling, estimator, response_method: str) -> tuple[Resampling, SchemeChoice]:
    """The one ``"auto"`` resolver: :meth:`pdpboot.Resampling.resolve` from the response method (refused
    if the estimator lacks it), before any fit."""
    resolved = resolve_response_method(estimator, response_method)  # fail before any fit
    if resolved == "predict_proba":
        output = "a classifier's predicted probabilities"
    elif resolved == "decision_function":
        output = "a classifier's decision function"
    else:
        output = "a regressor's predictions"
    return resampling.resolve(probabilities=resolved == "predict_proba", output=output)
