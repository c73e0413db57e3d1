"""Per-node arrays -> a labelled result DataTree with provenance (the xarray side of the schema)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping

import numpy as np
import xarray as xr

from ._evaluate import NodeArrays
from ._plan import PDSpec
from ._version import __version__
from .schema import node_name


def jsonable(value):
    """``value`` if JSON can store it, else its ``repr``."""
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def task_name(response_method: str) -> str:
    """``"regression"`` for ``predict``, ``"classification"`` otherwise."""
    return "regression" if response_method == "predict" else "classification"


def provenance(estimator, settings: dict, **extra) -> dict:
    """Root attrs recording who made a result, when, from what and how."""
    params = {k: jsonable(v) for k, v in estimator.get_params(deep=False).items()}
    attrs = {
        "creation_library": "pdpboot",
        "creation_library_version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "estimator": repr(estimator),
        "estimator_params": json.dumps(params, sort_keys=True),
        "settings": json.dumps({k: jsonable(v) for k, v in settings.items()}, sort_keys=True),
    }
    attrs.update(extra)
    return attrs


def stack_resamples(estimate: NodeArrays, resamples: list[NodeArrays]) -> NodeArrays:
    """Per node: each variable ``s`` of the estimate plus ``s_resamples`` (resample first)."""
    merged = {}
    for name, variables in estimate.items():
        merged[name] = dict(variables)
        for var, (dims, _) in variables.items():
            stacked = np.stack([r[name][var][1] for r in resamples])
            merged[name][f"{var}_resamples"] = (("resample", *dims), stacked)
    return merged


def build_tree(
    spec: PDSpec,
    per_node: NodeArrays,
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
        coords = {spec.names[p]: spec.grids[p].values for p in fs}
        coords["output"] = np.asarray(outputs)
        if ice_rows is not None:
            coords["instance"] = spec.row_labels(ice_rows)
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
