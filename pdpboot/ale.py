"""Accumulated local effects (ALE; Apley & Zhu 2020) of one fitted model and with bootstrap bands
(variables ``ale``, ``ale_resamples``; the estimator is in :mod:`pdpboot.engine.ale`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ._evaluate import Evaluation, NodeArrays, align_outputs, evaluate_fit, model_outputs
from ._plan import PDSpec, make_plan
from ._validate import (
    check_enough_rows,
    check_fitted_columns,
    check_table,
    is_fitted,
    resolve_features,
)
from .bootstrap import one_fit_tree, run_bootstrap
from .engine.ale import ale_arrays, order_levels, quantile_edges
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.inputs import is_categorical_column
from .engine.response import response_function
from .grid import ALE_RESOLUTION, FeatureGrid, Grid, check_grid, check_grid_size, column, column_position, make_grids
from .options import Execution, Resampling, resolve_run_options
from .schema import node_name

_ALE_VARIABLES = ("ale", "ale_resamples", "ale_band", "ale_band_pointwise", "ale_se", "ale_bias")
_MAX_DISCRETE_OTHER = 10  # an integer column with at most this many values counts as discrete when ordering levels


def _engine_kinds(kinds: dict, feature_set: tuple[int, ...]) -> list[str]:
    if len(feature_set) == 2:
        return ["numeric", "numeric"]  # an ordinal feature in a pair: its levels are the bin edges
    return ["numeric" if kinds[feature_set[0]] == "numeric" else "levels"]


def _discrete_columns(X, names, categorical_positions) -> list[bool]:
    return [bool(j in categorical_positions or is_categorical_column(col := column(X, j))
                 or (col.dtype.kind in "iu" and col.nunique() <= _MAX_DISCRETE_OTHER)) for j in range(len(names))]


def _custom(custom_values: Mapping | None, names: list[str]) -> dict[int, np.ndarray]:
    return {column_position(key, names, "custom_values", "has the key"):
            np.asarray(list(values), dtype=object if any(isinstance(v, str) for v in values) else None)
            for key, values in (custom_values or {}).items()}


def _ale_grid(X, names, p: int, flags, custom: dict, categorical: set, resolution: int, cache: dict):
    """Feature ``p``'s ALE grid values and kind (``cache``: the discrete columns, found once)."""
    col = column(X, p)
    if p in categorical:
        present = set(col.dropna().tolist())
        if p in custom:
            levels = custom[p]
            unknown = [v for v in levels if v not in present]
            if unknown or len(set(levels.tolist())) != len(levels) or len(levels) != len(present):
                raise ValueError(
                    f"custom_values[{names[p]!r}] must list every observed level of this categorical "
                    f"feature once, in the wanted order; observed levels: {sorted(present, key=str)}."
                )
            kind = "ordinal"
        elif isinstance(col.dtype, pd.CategoricalDtype) and col.dtype.ordered:
            levels, kind = np.asarray(flags[p].values), "ordinal"
        else:
            if "discrete" not in cache:
                cache["discrete"] = _discrete_columns(X, names, categorical)
            levels = order_levels(X, p, flags[p].values, discrete=cache["discrete"])
            kind = "categorical"
        values = np.asarray(levels)
    else:
        numeric = col.to_numpy(dtype=float, na_value=np.nan)
        uniques = np.unique(numeric[~np.isnan(numeric)])
        if p in custom:
            values = np.asarray(custom[p], dtype=float)
            if values.ndim != 1 or values.size < 2 or np.any(np.diff(values) <= 0):
                raise ValueError(f"custom_values[{names[p]!r}] must be strictly increasing ALE bin edges "
                                 "(at least two).")
            kind = "numeric"
        elif uniques.size <= resolution + 1:  # numeric as in PD, never equally spaced levels
            values, kind = (uniques.astype(col.dtype) if col.dtype.kind in "iu" else uniques), "numeric"
        else:
            values, kind = quantile_edges(numeric, resolution), "numeric"
    return values, kind


def make_ale_spec(X, features, grid: Grid | None = None, *, memory_limit: int = DEFAULT_MEMORY_LIMIT
                  ) -> tuple[PDSpec, dict]:
    """The validated table and features with every feature's ALE grid fixed on the full data, and each
    column's kind (``"numeric"``: quantile bin edges, ``"ordinal"`` or ``"categorical"``: ordered levels)."""
    grid = check_grid(grid, ALE_RESOLUTION)
    if grid.percentiles != Grid().percentiles:
        raise ValueError("ALE bins span the data: Grid(percentiles=...) does not apply; leave it at its default.")
    grid_resolution, custom_values = grid.resolution, grid.custom_values
    X, names = check_table(X)
    feature_sets = resolve_features(features, names)
    positions = list(dict.fromkeys(p for fs in feature_sets for p in fs))
    for p in positions:
        if names[p] in _ALE_VARIABLES:
            raise ValueError(f"Feature name {names[p]!r} is reserved by the ALE result schema; rename the column.")
    # categorical flags, deciles and observed levels (the two-point numeric grid is not used)
    flags = make_grids(X, names, positions, grid_resolution=2, percentiles=(0.0, 1.0),
                       categorical_features=grid.categorical_features)
    custom = _custom(custom_values, names)
    categorical = {p for p in positions if flags[p].categorical}
    grids, kinds, cache = {}, {}, {}
    for p in positions:
        values, kind = _ale_grid(X, names, p, flags, custom, categorical, grid_resolution, cache)
        grids[p] = FeatureGrid(names[p], p, values, kind != "numeric", flags[p].deciles)
        kinds[p] = kind
    for fs in feature_sets:
        if len(fs) == 2 and any(kinds[p] == "categorical" for p in fs):
            bad = [names[p] for p in fs if kinds[p] == "categorical"]
            raise ValueError(f"2-D ALE needs numeric or ordered features; {bad} is unordered categorical. "
                             "Request it as a 1-D feature, or give its level order in custom_values.")
    check_grid_size(grids, feature_sets, memory_limit)
    settings = {
        "features": [[names[p] for p in fs] for fs in feature_sets],
        "effect": "ale",
        "grid_resolution": grid_resolution,
        "custom_values": sorted(str(k) for k in (custom_values or {})),
        "categorical_features": [names[p] for p in positions if kinds[p] != "numeric"],
        "ale_kinds": json.dumps({names[p]: kinds[p] for p in positions}),
        "memory_limit": int(memory_limit),
    }
    return PDSpec(X, names, feature_sets, grids, "brute", int(memory_limit), settings), kinds


def _ranked_levels(X, fs: tuple[int, ...], grids: list, kinds: dict, predict):
    """A pair's ordinal text levels as their ranks (the bin edges a 2-D ALE needs), and a response that
    turns ranks back into the levels before the model sees them."""
    ranked = [k for k, p in enumerate(fs) if len(fs) == 2 and kinds[p] == "ordinal"
              and np.asarray(grids[k]).dtype.kind not in "biuf"]
    if not ranked:
        return X, predict, grids
    frame = isinstance(X, pd.DataFrame)
    X = X.copy()
    grids, levels = list(grids), {}
    for k in ranked:
        j = fs[k]
        column = X.iloc[:, j] if frame else pd.Series(X[:, j])
        levels[j] = (np.asarray(list(grids[k]), dtype=object), column.dtype)
        codes = pd.Index(list(grids[k])).get_indexer(column.tolist()).astype(float)
        codes[codes < 0] = np.nan  # a missing value is in no bin
        if frame:
            X.isetitem(j, codes)
        else:
            X[:, j] = codes
        grids[k] = np.arange(len(levels[j][0]), dtype=float)

    def respond(design):
        design = design.copy()
        for j, (names, dtype) in levels.items():
            ranks = np.asarray(design.iloc[:, j] if frame else design[:, j], dtype=float).astype(int)
            values = pd.Series(names[ranks]).astype(dtype) if frame else names[ranks]
            if frame:
                design.isetitem(j, values.to_numpy() if not isinstance(dtype, pd.api.extensions.ExtensionDtype)
                                else values.array)
            else:
                design[:, j] = values
        return predict(design)

    return X, respond, grids


@dataclass(frozen=True)
class ALEEffect:
    """ALE on the grids of :func:`make_ale_spec` (``kinds``: column position -> kind), and with ``with_pd``
    the PD on the same grid, from the same fitted model and rows."""

    spec: PDSpec
    kinds: dict
    with_pd: bool = False
    name: str = "ale"

    def fixed_rows(self, background: np.ndarray, seeds) -> dict:
        return {}

    def evaluate(self, fitted, evaluation: Evaluation) -> NodeArrays:
        spec, response, outputs = self.spec, evaluation.response_method, evaluation.outputs
        own = model_outputs(fitted, response, outputs)
        fill = 0.0 if response == "predict_proba" else np.nan
        predict = response_function(fitted, response)
        X_bg = spec.rows(evaluation.background)
        out = {}
        for fs in spec.feature_sets:
            rows, respond, grids = _ranked_levels(X_bg, fs, spec.grid_values(fs), self.kinds, predict)
            arr = ale_arrays(respond, rows, fs, grids, kinds=_engine_kinds(self.kinds, fs),
                             weights=evaluation.weights, memory_limit=spec.memory_limit, n_outputs=len(own))
            dims = spec.dims(fs)
            out[node_name(dims)] = {"ale": (("output", *dims), align_outputs(arr, own, outputs, 0, fill))}
        if self.with_pd:
            for node, variables in evaluate_fit(fitted, self.spec, evaluation).items():
                out[node] = {**variables, **out[node]}
        return out

    @property
    def settings(self) -> dict:
        return {"ice": False, "heterogeneity": False, "interactions": 0, "with_pd": self.with_pd}

    def supports(self, response_method: str) -> dict[str, tuple[float | None, float | None]]:
        return {"pd": (0.0, 1.0)} if self.with_pd and response_method == "predict_proba" else {}

    def node_attrs(self) -> dict[str, dict]:
        """``effect``, ``ale_kind`` and (1-D nodes) ``bin_counts``: full-data rows per bin or level."""
        spec = self.spec
        out = {}
        for fs in spec.feature_sets:
            attrs = {"effect": "ale", "ale_kind": [self.kinds[p] for p in fs]}
            if len(fs) == 1:
                p = fs[0]
                grid = spec.grids[p].values
                col = column(spec.X, p)
                if self.kinds[p] == "numeric":
                    x = pd.to_numeric(pd.Series(np.asarray(col)), errors="coerce").to_numpy(dtype=float)
                    ok = (x >= grid[0]) & (x <= grid[-1])
                    pos = np.clip(np.searchsorted(np.asarray(grid, float), x[ok], "left") - 1, 0, None)
                    counts = np.bincount(pos, minlength=max(grid.size - 1, 0))
                else:
                    codes = pd.Index(list(grid)).get_indexer(pd.Series(np.asarray(col)).tolist())
                    counts = np.bincount(codes[codes >= 0], minlength=grid.size)
                attrs["bin_counts"] = [int(c) for c in counts]
            out[node_name(spec.dims(fs))] = attrs
        return out


def accumulated_local_effects(
    estimator,
    X,
    features,
    *,
    grid: Grid | None = None,
    response_method: str = "auto",
    sample_weight=None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    target_names=None,
) -> xr.DataTree:
    """Accumulated local effects of a fitted estimator, without resampling.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        The data the local effects are averaged over (and the bins fixed on).
    features : list
        Column names or indices; a tuple of two numeric features gives the second-order ALE.
    grid : Grid, optional
        The bins: ``resolution`` quantile bins K of a numeric feature (default 20; each distinct
        value an edge with at most K + 1 of them); ``custom_values``: bin edges or level order.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
    sample_weight : array of shape (n_rows,), optional
        Row weights of every local average and of the centring.
    memory_limit : int
        Bytes allowed for one stacked prediction block.
    target_names : list of str, optional
        Names of the regression targets (``output`` coordinate).

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``ale`` (``output``, ``*features``); a
        feature's coordinate holds its bin edges (numeric) or ordered levels.

    See Also
    --------
    bootstrap_ale : the same with bootstrap resamples, for confidence bands.
    pdpboot.partial_dependence : partial dependence, which extrapolates under correlation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot import Grid
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> model = LinearRegression().fit(X, 3 * X[:, 0] + X[:, 1])
    >>> res = accumulated_local_effects(model, X, ["x0"], grid=Grid(5))
    >>> ale = res["x0"]["ale"].sel(output="y")
    >>> bool(np.allclose(np.diff(ale), 3 * np.diff(ale["x0"])))
    True
    """
    if not is_fitted(estimator):
        raise ValueError(f"{type(estimator).__name__} is not fitted; fit it first, or use pdpboot.bootstrap_ale, "
                         "which fits clones itself.")
    check_fitted_columns(estimator, X)
    memory_limit = Execution(memory_limit=memory_limit).memory_limit  # validated where a run's is
    spec, kinds = make_ale_spec(X, features, grid, memory_limit=memory_limit)
    settings = dict(response_method=response_method, sample_weight=sample_weight is not None)
    return one_fit_tree(estimator, ALEEffect(spec, kinds), settings, response_method=response_method,
                        sample_weight=sample_weight, target_names=target_names)


def bootstrap_ale(
    estimator,
    X,
    y,
    features,
    *,
    n_resamples: int = 200,
    resampling: str | Resampling = "auto",
    with_pd: bool = False,
    grid: Grid | None = None,
    response_method: str = "auto",
    sample_weight=None,
    rng=None,
    execution: Execution | None = None,
) -> xr.DataTree:
    """Refit an estimator on resamples and compute ALE on the full data's bins, over each resample's rows.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,) or (n_rows, n_targets)
    features : list
        Column names or indices; a pair of numeric features gives a 2-D surface.
    n_resamples, resampling, sample_weight, rng, execution
        As in :func:`pdpboot.bootstrap_partial_dependence` (ALE is brute force: ``method`` "auto" or "brute").
    with_pd : bool
        Also the PD on the same grid from the same refits and rows (``pd``, ``pd_resamples``).
    grid, response_method
        As in :func:`accumulated_local_effects`.

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``ale`` (``output``, ``*features``) and
        ``ale_resamples`` (``resample``, ``output``, ``*features``).

    See Also
    --------
    accumulated_local_effects : ALE of one fitted model.
    pdpboot.confidence_bands : pointwise and simultaneous bands from the resamples.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> y = X[:, 0] + np.random.default_rng(1).normal(size=100)
    >>> res = bootstrap_ale(LinearRegression(), X, y, ["x0"], n_resamples=20, grid=pdpboot.Grid(5), rng=0)
    >>> bands = pdpboot.confidence_bands(res)
    >>> dict(bands["x0"]["ale_band"].sizes)
    {'ci_bound': 2, 'output': 1, 'x0': 6}
    """
    if is_fitted(estimator):
        raise ValueError(f"{type(estimator).__name__} is already fitted, but bootstrap_ale fits clones itself; "
                         "pass the unfitted estimator (e.g. sklearn.base.clone(estimator)). For one fitted model "
                         "use pdpboot.accumulated_local_effects.")
    resampling, execution = resolve_run_options(resampling, execution, n_resamples=n_resamples)
    if execution.method == "tree":
        raise ValueError("ALE is computed by brute force; Execution(method='tree') does not apply (use 'auto').")
    check_enough_rows(X)
    spec, kinds = make_ale_spec(X, features, grid, memory_limit=execution.memory_limit)
    plan = make_plan(estimator, y, ALEEffect(spec, kinds, bool(with_pd)), resampling=resampling,
                     execution=execution, response_method=response_method, sample_weight=sample_weight, rng=rng)
    return run_bootstrap(plan, stacklevel=4)
