"""One fitted model -> PD/ICE arrays per feature set -> labelled xarray nodes.

Shared by :func:`partial_dependence` (one fit) and the bootstrap loop.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from ._validate import check_choice, check_table, is_fitted, resolve_features
from ._version import __version__
from .engine import METHODS, compute_pd
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.response import output_labels, resolve_response_method
from .grid import FeatureGrid, make_grids
from .schema import node_name

KINDS = ("average", "individual", "both")


@dataclass
class PDSpec:
    """Everything about a PD computation that is fixed before any model is fitted."""

    X: pd.DataFrame | np.ndarray
    names: list[str]
    feature_sets: list[tuple[int, ...]]
    grids: dict[int, FeatureGrid]
    method: str = "auto"
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    settings: dict = field(default_factory=dict)

    def grid_values(self, feature_set: tuple[int, ...]) -> list[np.ndarray]:
        return [self.grids[p].values for p in feature_set]

    def dims(self, feature_set: tuple[int, ...]) -> tuple[str, ...]:
        return tuple(self.names[p] for p in feature_set)

    def rows(self, positions: np.ndarray):
        if isinstance(self.X, pd.DataFrame):
            return self.X.iloc[positions]
        return self.X[positions]

    def row_labels(self, positions: np.ndarray) -> np.ndarray:
        if isinstance(self.X, pd.DataFrame):
            return np.asarray(self.X.index[positions])
        return np.asarray(positions)


def make_spec(
    X,
    features,
    *,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
) -> PDSpec:
    """Validate the table and features and fix the grids on the full data."""
    X, names = check_table(X)
    feature_sets = resolve_features(features, names)
    check_choice(method, "method", METHODS)
    if not (isinstance(memory_limit, (int, np.integer)) and memory_limit > 0):
        raise ValueError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}.")
    grids = make_grids(
        X, names, [p for fs in feature_sets for p in fs], grid_resolution=grid_resolution,
        percentiles=percentiles, custom_values=custom_values, categorical_features=categorical_features,
    )
    settings = {
        "features": [[names[p] for p in fs] for fs in feature_sets],
        "grid_resolution": int(grid_resolution),
        "percentiles": [float(p) for p in percentiles],
        "custom_values": sorted(str(k) for k in (custom_values or {})),
        "categorical_features": [g.name for g in grids.values() if g.categorical],
        "method": method,
        "memory_limit": int(memory_limit),
    }
    return PDSpec(X, names, feature_sets, grids, method, int(memory_limit), settings)


def _align_outputs(arr: np.ndarray | None, own: list, wanted: list, axis: int, fill: float):
    """Put a model's output columns in the order of the full-data model's outputs."""
    if arr is None or own == wanted:
        return arr
    shape = list(arr.shape)
    shape[axis] = len(wanted)
    out = np.full(shape, fill)
    index = {label: k for k, label in enumerate(own)}
    for k, label in enumerate(wanted):
        if label in index:
            np.moveaxis(out, axis, 0)[k] = np.moveaxis(arr, axis, 0)[index[label]]
    return out


def evaluate_model(
    fitted,
    spec: PDSpec,
    *,
    response_method: str,
    outputs: list,
    background: np.ndarray,
    weights: np.ndarray | None = None,
    ice_rows: np.ndarray | None = None,
) -> dict[str, dict[str, tuple[tuple[str, ...], np.ndarray]]]:
    """PD (and ICE) of one fitted model for every feature set of ``spec``.

    Parameters
    ----------
    background : ndarray of int
        Row positions the PD is averaged over (with ``weights``).
    ice_rows : ndarray of int, optional
        Row positions whose ICE curves are returned.
    outputs : list
        Output labels of the full-data model; a model that saw fewer classes
        is aligned to them (probability 0 for an unseen class, NaN scores).

    Returns
    -------
    dict
        Node name -> variable name -> (dims, array): ``pd`` with dims
        (``output``, *features) and, with ``ice_rows``, ``ice`` with dims
        (``instance``, ``output``, *features).
    """
    own = output_labels(fitted, response_method, outputs if response_method == "predict" else None, len(outputs))
    fill = 0.0 if response_method == "predict_proba" else np.nan
    same_rows = ice_rows is not None and weights is None and np.array_equal(ice_rows, background)
    X_bg = spec.rows(background)
    X_ice = None if ice_rows is None or same_rows else spec.rows(ice_rows)
    out = {}
    for fs in spec.feature_sets:
        common = dict(response_method=response_method, method=spec.method,
                      memory_limit=spec.memory_limit, n_outputs=len(own))
        avg, ice = compute_pd(fitted, X_bg, fs, spec.grid_values(fs), weights=weights,
                              individual=same_rows, **common)
        if X_ice is not None:
            _, ice = compute_pd(fitted, X_ice, fs, spec.grid_values(fs), average=False,
                                individual=True, **common)
        dims = spec.dims(fs)
        variables = {"pd": (("output", *dims), _align_outputs(avg, own, outputs, 0, fill))}
        if ice is not None:
            variables["ice"] = (("instance", "output", *dims), _align_outputs(ice, own, outputs, 1, fill))
        out[node_name(dims)] = variables
    return out


def _coords(spec: PDSpec, fs: tuple[int, ...], outputs: list, ice_rows) -> dict:
    coords = {spec.names[p]: spec.grids[p].values for p in fs}
    coords["output"] = np.asarray(outputs)
    if ice_rows is not None:
        coords["instance"] = spec.row_labels(ice_rows)
    return coords


def build_tree(
    spec: PDSpec,
    per_node: dict[str, dict[str, tuple[tuple[str, ...], np.ndarray]]],
    *,
    outputs: list,
    ice_rows: np.ndarray | None,
    root_attrs: dict,
    extra_coords: Mapping | None = None,
) -> xr.DataTree:
    """Assemble per-node variables into a result DataTree following the schema."""
    children = {}
    for fs in spec.feature_sets:
        dims = spec.dims(fs)
        name = node_name(dims)
        coords = _coords(spec, fs, outputs, ice_rows)
        coords.update(extra_coords or {})
        ds = xr.Dataset(
            {var: xr.Variable(vdims, arr) for var, (vdims, arr) in per_node[name].items()},
            coords={k: v for k, v in coords.items() if any(k in vd for vd, _ in per_node[name].values())},
        )
        ds.attrs = {
            "features": list(dims),
            "categorical": [int(spec.grids[p].categorical) for p in fs],
            "deciles": [float(d) for p in fs for d in spec.grids[p].deciles],
        }
        children[name] = xr.DataTree(ds)
    tree = xr.DataTree(children=children)
    tree.attrs = root_attrs
    return tree


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def provenance(estimator, settings: dict, **extra) -> dict:
    """Root attrs recording who made a result, when, from what and how."""
    params = {k: _jsonable(v) for k, v in estimator.get_params(deep=False).items()}
    attrs = {
        "creation_library": "pdpboot",
        "creation_library_version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "estimator": repr(estimator),
        "estimator_params": json.dumps(params, sort_keys=True),
        "settings": json.dumps({k: _jsonable(v) for k, v in settings.items()}, sort_keys=True),
    }
    attrs.update(extra)
    return attrs


def _task(response_method: str) -> str:
    return "regression" if response_method == "predict" else "classification"


def partial_dependence(
    estimator,
    X,
    features,
    *,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
    response_method: str = "auto",
    kind: str = "average",
    sample_weight=None,
    max_ice_instances: int | None = None,
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    target_names=None,
    rng=None,
) -> xr.DataTree:
    """Partial dependence (and ICE) of a fitted estimator, without resampling.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Background data: the PD averages the model over these rows.
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    grid_resolution, percentiles, custom_values, categorical_features
        Grid settings, as in :func:`sklearn.inspection.partial_dependence`.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
    kind : {"average", "individual", "both"}
        ``individual``/``both`` also store ICE curves (``pd`` is always stored).
    sample_weight : array of shape (n_rows,), optional
        Weights of the average (ICE curves are unweighted).
    max_ice_instances : int, optional
        Keep ICE for a random subset of this many rows (drawn with ``rng``).
    method : {"auto", "brute", "tree"}
    memory_limit : int
        Bytes allowed for one stacked prediction block (brute engine).
    target_names : list of str, optional
        Names of the regression targets (``output`` coordinate).

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, *features) and, for
        ICE kinds, ``ice`` (``instance``, ``output``, *features).
    """
    if not is_fitted(estimator):
        raise ValueError(
            f"{type(estimator).__name__} is not fitted; fit it first, or use "
            "pdpboot.bootstrap_partial_dependence, which fits clones itself."
        )
    check_choice(kind, "kind", KINDS)
    spec = make_spec(X, features, grid_resolution=grid_resolution, percentiles=percentiles,
                     custom_values=custom_values, categorical_features=categorical_features,
                     method=method, memory_limit=memory_limit)
    n_rows = spec.X.shape[0]
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=float)
        if weights.shape != (n_rows,):
            raise ValueError(f"sample_weight must have one entry per row of X ({n_rows}), got {weights.shape}.")
    resolved = resolve_response_method(estimator, response_method)
    n_targets = 1
    if resolved == "predict":
        n_targets = np.asarray(estimator.predict(spec.rows(np.arange(1)))).reshape(1, -1).shape[1]
    outputs = output_labels(estimator, resolved, target_names, n_targets)
    generator = np.random.default_rng(rng)
    ice_rows = None
    if kind != "average":
        ice_rows = np.arange(n_rows)
        if max_ice_instances is not None and max_ice_instances < n_rows:
            ice_rows = np.sort(generator.choice(n_rows, size=int(max_ice_instances), replace=False))
    per_node = evaluate_model(estimator, spec, response_method=resolved, outputs=outputs,
                              background=np.arange(n_rows), weights=weights, ice_rows=ice_rows)
    settings = dict(spec.settings, response_method=response_method, kind=kind,
                    max_ice_instances=max_ice_instances, sample_weight=sample_weight is not None)
    attrs = provenance(estimator, settings, task=_task(resolved), response=resolved,
                       target_name=str(outputs[0]) if resolved == "predict" else "class",
                       n_resamples=0, n_failed_resamples=0,
                       rng_entropy=str(generator.bit_generator.seed_seq.entropy))
    return build_tree(spec, per_node, outputs=outputs, ice_rows=ice_rows, root_attrs=attrs)
