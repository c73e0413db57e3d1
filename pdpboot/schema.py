"""The written schema of pdpboot results, and small helpers to navigate it.

A result is an :class:`xarray.DataTree` with one child node per requested
feature set.

Node
    Named by :func:`node_name`: a feature's name, or a pair's names joined by
    ``"__"``, with the few characters that would make names ambiguous or
    unusable as DataTree paths percent-escaped (``%`` -> ``%25``, ``/`` ->
    ``%2F``, runs of two or more ``_`` -> ``%5F`` each, and, in pairs, a
    leading/trailing ``_``; ``.`` and ``..`` -> ``%2E``; an empty name is
    ``%``).  Ordinary names are unchanged (``"x0"``, ``"x0__x1"``), and
    distinct feature sets always get distinct node names.  The features
    themselves are in ``attrs["features"]`` (the list of the node's feature
    names, 1 or 2); look nodes up with :func:`get_node`.
    ``attrs["categorical"]`` is a list of 0/1 flags (one per feature).

Dims
    One per feature, **named after the feature**, whose coordinate is the grid
    (numbers, or category levels for categorical features); ``resample``
    (0..B-1); ``instance`` (the rows whose ICE curves are kept; coordinate =
    original row label); ``output`` (class labels for classifiers - all classes,
    binary included - or target names for regressors); ``ci_bound`` =
    ``["lower", "upper"]``.

Variables
    ``pd`` (``output``, *features): estimate from the fit on the full data.
    ``pd_resamples`` (``resample``, ``output``, *features): one curve/surface
    per resample.  ``ice`` (``instance``, ``output``, *features), optional, and
    ``ice_resamples`` (``resample``, ``instance``, ``output``, *features) when
    the bootstrap keeps ICE curves of fixed instances.
    :func:`pdpboot.confidence_bands` adds ``pd_band`` (``ci_bound``,
    ``output``, *features), ``pd_se`` and ``pd_bias`` (``output``, *features).
    Any statistic ``s`` follows the same pattern: ``s``, ``s_resamples``,
    ``s_band``.  ALE results (:func:`pdpboot.bootstrap_ale`) hold ``ale`` /
    ``ale_resamples`` on the bin edges (numeric) or levels (categorical), with
    node attrs ``effect`` (``"ale"``), ``ale_kind`` and ``bin_counts`` (rows per
    bin, or per level).

Root attrs
    Every root attr the package itself reads back (plots, bands, CLI, io):

    ``creation_library``, ``creation_library_version``, ``created`` (ISO time)
        Who made the result and when (``load`` refuses files without them).
    ``estimator``, ``estimator_params`` (JSON), ``settings`` (JSON of all call settings), ``rng_entropy``
        Provenance.
    ``task`` (``regression``/``classification``), ``response`` (``predict``,
    ``predict_proba`` or ``decision_function``), ``target_name``
        What was averaged (axis labels, CLI summary).
    ``n_rows``
        Rows of the data the estimate was fitted on.
    ``effect`` (``pd``/``ale``), ``uncertainty`` (``none``, ``bootstrap``, ``infinitesimal-jackknife``, ...),
    ``target`` (``learner``: the PD of the learner fitted to data of this size; ``dgp``: the PD of the
    data-generating process)
        What the result holds and which PD its uncertainty is about.
    ``supports``
        JSON: statistic -> ``[lower, upper]`` (``null``: no bound) for every bounded statistic the
        effect can produce; :func:`pdpboot.confidence_bands` clips bands into it.
    All of them are written and read by :class:`pdpboot.header.ResultHeader`.
    ``n_resamples``, ``resampling``, ``background``, ``subsample_size``
        How the resamples were drawn; ``subsample_size`` (rows per resample)
        rescales subsample deviations in :func:`pdpboot.confidence_bands`.
    ``n_failed_resamples``, ``failed_resamples`` (JSON list of
    ``{"resample", "error"}``), ``n_missing_class_resamples``
        Resamples that failed (NaN in every ``*_resamples``); the last counts
        resamples whose rows hold no row of some class (their refit gives it probability 0; a
        decision-function refit that missed a class failed).
    ``engine``
        Which engine computed the feature sets of the (full-data) fit and why, e.g. ``tree: exact,
        checked against the model's predictions`` or ``brute: tree engine failed its self-check: ...``.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the schema's names are used by the NumPy layer, which never imports xarray
    import xarray as xr

__all__ = ["CI_BOUNDS", "DERIVED_SUFFIXES", "GRID_EFFECTS", "RESERVED_DIMS", "RESERVED_NAMES", "STATISTICS",
           "check_feature_dims", "feature_nodes", "get_node", "node_name"]

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

    The mapping is injective: two different feature sets (any strings,
    including empty ones, ones holding ``"__"``, ``"/"``, ``"%"`` or control
    characters) never share a node name.  A 1-D name never holds ``"__"``; a
    pair's name holds it exactly once, between the two escaped names.

    Parameters
    ----------
    features : sequence of str
        One or two feature names.

    Returns
    -------
    str
        The escaped name of a single feature, or the two escaped names joined
        by ``"__"``.  Ordinary names are unchanged.

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
    """Refuse a node whose recorded features (``attrs["features"]``) are not its dimensions while it has
    dimensions that are neither features nor reserved: a feature dimension renamed after the fact (every
    statistic would look up the recorded name and fail deep in xarray, or take the wrong axis).

    Nodes of statistics that reduced the feature dimensions away (H², heterogeneity indices) pass.
    """
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
