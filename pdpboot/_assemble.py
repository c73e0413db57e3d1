"""Per-node arrays -> a labelled result DataTree (the xarray side of the schema), and the one band writer."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from ._evaluate import NodeArrays
from ._plan import PDSpec
from .header import ResultHeader
from .schema import CI_BOUNDS, node_name

#: variable attr recording the range of values a statistic can take, ``[lower, upper]`` (NaN: unbounded);
#: it overrides the header's ``supports`` entry, and band variables record the range they were clipped into
SUPPORT = "support"


def support_attrs(bounds: tuple[float | None, float | None] | None) -> dict:
    """The variable attrs recording ``bounds`` (none for an unbounded statistic)."""
    if bounds is None or bounds == (None, None):
        return {}
    return {SUPPORT: [np.nan if b is None else float(b) for b in bounds]}


def read_support(attrs: Mapping) -> tuple[float | None, float | None]:
    """The ``(lower, upper)`` bounds recorded by :func:`support_attrs` (``(None, None)``: unbounded)."""
    if SUPPORT not in attrs:
        return (None, None)
    lo, hi = (float(b) for b in np.asarray(attrs[SUPPORT], dtype=float))
    return (None if np.isnan(lo) else lo, None if np.isnan(hi) else hi)


def build_tree(
    spec: PDSpec,
    per_node: NodeArrays,
    *,
    outputs: list,
    ice_rows: np.ndarray | None,
    header: ResultHeader,
    node_attrs: Mapping[str, dict] | None = None,
    extra_coords: Mapping | None = None,
) -> xr.DataTree:
    """Assemble per-node variables into a result DataTree following the schema (``node_attrs``: per node)."""
    children = {}
    for fs in spec.feature_sets:
        dims = spec.dims(fs)
        name = node_name(dims)
        coords = {spec.names[p]: spec.grids[p].values for p in fs}
        coords["output"] = np.asarray(outputs)
        if ice_rows is not None:
            coords["instance"] = spec.row_labels(ice_rows)
        coords.update(extra_coords or {})
        variables = {var: xr.Variable(vdims, arr) for var, (vdims, arr) in per_node[name].items()}
        ds = xr.Dataset(variables, coords={k: v for k, v in coords.items()
                                           if any(k in vd for vd, _ in per_node[name].values())})
        ds.attrs = {
            "features": list(dims),
            "categorical": [int(spec.grids[p].categorical) for p in fs],
            "deciles": [float(d) for p in fs for d in spec.grids[p].deciles],
            **(node_attrs or {}).get(name, {}),
        }
        children[name] = xr.DataTree(ds)
    tree = xr.DataTree(children=children)
    tree.attrs = header.to_attrs()
    return tree


def band_variables(name: str, estimate: xr.DataArray, lower, upper, *, se=None, bias=None,
                   attrs: Mapping, pointwise: tuple | None = None) -> dict[str, xr.DataArray]:
    """The band variables of statistic ``name``: ``name_band`` (``ci_bound`` first), ``_se``, ``_bias``.

    The one place a band becomes variables, for :func:`pdpboot.confidence_bands` and every
    uncertainty method.  ``lower``, ``upper``, ``se`` and ``bias`` are arrays shaped like
    ``estimate``; ``pointwise`` (lower, upper) adds ``name_band_pointwise`` (for a simultaneous band).
    """

    def like(arr) -> xr.DataArray:
        return xr.DataArray(np.asarray(arr).reshape(estimate.shape), dims=estimate.dims, coords=estimate.coords)

    def band(lo, hi, simultaneous: bool) -> xr.DataArray:
        out = xr.concat([like(lo), like(hi)], dim=xr.Variable("ci_bound", CI_BOUNDS))
        out = out.transpose("ci_bound", *estimate.dims).assign_coords(ci_bound=CI_BOUNDS)
        out.attrs = dict(attrs, simultaneous=int(simultaneous))
        return out

    simultaneous = bool(attrs.get("simultaneous", 0))
    out = {f"{name}_band": band(lower, upper, simultaneous)}
    if se is not None:
        out[f"{name}_se"] = like(se)
    if bias is not None:
        out[f"{name}_bias"] = like(bias)
    if pointwise is not None:
        out[f"{name}_band_pointwise"] = band(*pointwise, False)
    return out
