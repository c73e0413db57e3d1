"""The schema of pdpboot results, and helpers to navigate it.

A result is an :class:`xarray.DataTree` with one child node per feature set, named by
:func:`node_name` (``"x0"``, ``"x0__x1"``); node attrs ``features`` (the names) and
``categorical`` (0/1 flags).  Dims: one per feature, named after it, whose coordinate is the grid;
``resample``; ``instance`` (rows whose ICE curves are kept); ``output`` (class labels or target
names); ``ci_bound`` (``["lower", "upper"]``).  Every statistic ``s`` (``pd``, ``ale``, ``ice``,
``h2``, ...) comes as ``s`` and ``s_resamples`` (``resample`` first); :func:`pdpboot.confidence_bands`
adds ``s_band``, ``s_se`` and ``s_bias``.  Root attrs are written and read by
:class:`pdpboot.header.ResultHeader` (provenance, ``response``, ``task``, ``n_rows``, ``effect``,
``uncertainty``, ``target``, ``supports``, ``learner_family``) plus the resampling's own
(``resampling``, ``subsample_size``, ``n_failed_resamples``, ``engine``, ...).  A bootstrap
result's root holds :data:`ABSENT` (``resample``, ``packed_row``; attr ``n_rows``): row ``b`` is
``numpy.packbits`` of the mask of rows resample ``b`` did not draw, for BCa bands.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the schema's names are used by the NumPy layer, which never imports xarray
    import xarray as xr

__all__ = ["ABSENT", "CI_BOUNDS", "DERIVED_SUFFIXES", "GRID_EFFECTS", "RESERVED_DIMS", "RESERVED_NAMES", "STATISTICS",
           "check_feature_dims", "feature_deciles", "feature_nodes", "get_node", "is_categorical", "node_name"]

#: root variable of the rows each resample did not draw, one bit per row (BCa's acceleration)
ABSENT = "resample_absent"
RESERVED_DIMS = ("resample", "instance", "output", "ci_bound")
CI_BOUNDS = ["lower", "upper"]
STATISTICS = (
    "pd", "pd_centered", "ale", "ice", "ice_sd", "cice_sd", "dice_sd", "heterogeneity_index",
    "h2_overall", "h2", "h_unnormalized", "pd_variance_interaction",
)
DERIVED_SUFFIXES = ("", "_resamples", "_band", "_band_pointwise", "_se", "_bias")
#: effects evaluated on the grid: their variables (and ``_resamples``, ``_band``, ...) have one dim per feature
GRID_EFFECTS = ("pd", "ale", "ice")
#: Names a feature may not have: they are dims or variables of a result node.
RESERVED_NAMES = frozenset(RESERVED_DIMS) | {s + suffix for s in STATISTICS for suffix in DERIVED_SUFFIXES}


_RUN = re.compile(r"_{2,}")


def _escape(name: str, *, in_pair: bool) -> str:
    """Percent-escape one feature name for use in a node name (see :func:`node_name`)."""
    if name == "":
        return "%"
    if name in (".", ".."):
        return "%2E" * len(name)
    out = name.replace("%", "%25").replace("/", "%2F")
    out = _RUN.sub(lambda m: "%5F" * len(m.group()), out)
    if in_pair:
        if out.startswith("_"):
            out = "%5F" + out[1:]
        if out.endswith("_"):
            out = out[:-1] + "%5F"
    return out


def node_name(features: Sequence[Hashable]) -> str:
    """Name of the DataTree node holding a feature set.

    Distinct feature sets always get distinct names: ``%``, ``/``, runs of ``_`` and (in pairs) a
    leading or trailing ``_`` are percent-escaped; ordinary names are unchanged.

    Parameters
    ----------
    features : sequence of str
        One or two feature names.

    Returns
    -------
    str
        The escaped name, or the two escaped names joined by ``"__"``.

    Examples
    --------
    >>> node_name(["temp"]), node_name(["temp", "hum"])
    ('temp', 'temp__hum')
    >>> node_name(["a__b"]), node_name(["a", "b"])
    ('a%5F%5Fb', 'a__b')
    """
    names = [str(f) for f in features]
    if len(names) == 1:
        return _escape(names[0], in_pair=False)
    return "__".join(_escape(n, in_pair=True) for n in names)


def feature_nodes(result: xr.DataTree) -> list[xr.DataTree]:
    """All child nodes of a result that hold a feature set, in insertion order.

    Raises ``ValueError`` for a node whose feature dimension was renamed (:func:`check_feature_dims`).
    """
    nodes = [child for child in result.children.values() if "features" in child.attrs]
    for node in nodes:
        check_feature_dims(node)
    return nodes


def check_feature_dims(node: xr.DataTree) -> None:
    """Refuse a node whose feature dims were renamed, or whose numeric grid is out of order."""
    features = [str(f) for f in node.attrs["features"]]
    ds = node.to_dataset(inherit=False)
    # only the effects on the grid (pd, ale, ice, their resamples and bands) keep the feature dims; derived
    # tables (level contrasts, H², indices) may reduce or relabel them
    on_grid = [v for name, v in ds.data_vars.items() if str(name).split("_")[0] in GRID_EFFECTS]
    dims = list(dict.fromkeys(str(d) for v in on_grid for d in v.dims))
    missing = [f for f in features if dims and f not in dims]
    foreign = [d for d in dims if d not in features and d not in RESERVED_DIMS]
    if missing and foreign:
        raise ValueError(
            f"node {node.name!r} records the features {features} but has no dimension {missing[0]!r} (its "
            f"dimensions: {dims}): a result's feature dimensions keep the feature names; rename "
            f"{foreign[0]!r} back to {missing[0]!r} (e.g. ds.rename({{{foreign[0]!r}: {missing[0]!r}}})).")
    flags = list(node.attrs.get("categorical", [])) or [0] * len(features)
    for name, flag in zip(features, flags):
        coord = ds.coords.get(name) if name in dims else None
        if flag or coord is None or coord.dtype.kind not in "iufMm":
            continue
        values = coord.values
        values = values[values == values] if coord.dtype.kind == "f" else values  # NaN (last) aside
        if values.size > 1 and not (values[1:] > values[:-1]).all():
            raise ValueError(
                f"node {node.name!r}: the numeric grid of {name!r} is not in increasing order (pdpboot writes "
                f"it sorted; centring at the first grid value, derivatives and bands read it in order); sort it "
                f"back (e.g. ds.sortby({name!r})).")


def is_categorical(node: xr.Dataset | xr.DataTree, attrs: Mapping, feature: str, position: int) -> bool:
    """Whether feature ``position`` of a node (or its Dataset) holds levels: its flag in ``attrs["categorical"]``,
    or a non-numeric grid."""
    flags = np.atleast_1d(np.asarray(attrs.get("categorical", [])))
    return bool(position < len(flags) and flags[position]) or not np.issubdtype(node[feature].dtype, np.number)


def feature_deciles(attrs: Mapping, position: int) -> np.ndarray:
    """The finite data deciles of feature ``position`` recorded in a node's ``attrs["deciles"]`` (9 per feature)."""
    values = attrs.get("deciles")
    if values is None:
        return np.empty(0)
    chunk = np.asarray(values, dtype=float).ravel()[9 * position: 9 * (position + 1)]
    return chunk[np.isfinite(chunk)]


def get_node(result: xr.DataTree, features: Hashable | Sequence[Hashable]) -> xr.DataTree:
    """Find the node of a feature or feature pair.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result.
    features : str or tuple of str
        A feature name, or a pair ``(a, b)``.

    Returns
    -------
    xarray.DataTree
        The child node whose ``attrs["features"]`` equals ``features``.
    """
    wanted = [features] if isinstance(features, str) or not isinstance(features, Sequence) else list(features)
    wanted = [str(f) for f in wanted]
    for node in feature_nodes(result):
        if [str(f) for f in node.attrs["features"]] == wanted:
            return node
    available = [tuple(n.attrs["features"]) for n in feature_nodes(result)]
    raise KeyError(
        f"No node for features {tuple(wanted)!r} in this result; available feature sets: {available}."
    )
