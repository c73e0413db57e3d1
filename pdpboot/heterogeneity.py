"""ICE heterogeneity statistics with bootstrap uncertainty (xarray layer).

A PD curve is an average and can hide opposite effects in subgroups.  :func:`ice_heterogeneity`
reports how far the ICE curves spread around it: ``ice_sd``, ``cice_sd`` (centred ICE),
``dice_sd`` (derivative ICE, 0 for a model additive in the feature) and the scalar
``heterogeneity_index`` (definitions in :mod:`pdpboot.engine.ice_stats`), each with the PD's bands.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import xarray as xr

from .bands import confidence_bands
from .engine import ice_stats
from .schema import feature_nodes, get_node

__all__ = ["centered_ice", "derivative_ice", "ice_heterogeneity", "statistics_from_ice"]

STATISTICS = ("ice_sd", "cice_sd", "dice_sd", "heterogeneity_index")
SOURCES = ("auto", "loop", "ice")


def centered_ice(ice: xr.DataArray, dim: Hashable) -> xr.DataArray:
    """Centred ICE curves (c-ICE), anchored at the first value of the grid ``dim``.

    Parameters
    ----------
    ice : xarray.DataArray
        ICE curves, e.g. a node's ``ice`` (``instance``, ``output``, feature).
    dim : str
        The feature (grid) dim.

    Returns
    -------
    xarray.DataArray
        Same dims and coords as ``ice``; 0 at the first grid value.

    Examples
    --------
    >>> import xarray as xr
    >>> ice = xr.DataArray([[1.0, 2.0, 4.0]], dims=("instance", "x"), coords={"x": [0.0, 1.0, 2.0]})
    >>> centered_ice(ice, "x").values.tolist()
    [[0.0, 1.0, 3.0]]
    """
    _check_dims(ice, [dim])
    return ice - ice.isel({dim: 0})


def derivative_ice(ice: xr.DataArray, dim: Hashable, *, categorical: bool = False) -> xr.DataArray:
    """Derivative ICE curves (d-ICE) on the feature's own grid.

    Parameters
    ----------
    ice : xarray.DataArray
        ICE curves with the grid dim ``dim``.
    dim : str
        The feature (grid) dim; its coordinate is the grid.
    categorical : bool
        Whether the grid holds category levels: steps between consecutive levels instead.

    Returns
    -------
    xarray.DataArray
        Same dims and coords as ``ice``.

    Examples
    --------
    >>> import xarray as xr
    >>> ice = xr.DataArray([[0.0, 1.0, 4.0]], dims=("instance", "x"), coords={"x": [0.0, 1.0, 2.0]})
    >>> derivative_ice(ice, "x").values.tolist()
    [[1.0, 2.0, 3.0]]
    """
    _check_dims(ice, [dim])
    grid = ice[dim].values
    out = xr.apply_ufunc(
        ice_stats.derivative_ice, ice, input_core_dims=[[dim]], output_core_dims=[[dim]],
        kwargs={"grid": grid, "grid_axis": -1, "categorical": categorical},
    )
    return out.transpose(*ice.dims)


def _check_dims(da: xr.DataArray, dims) -> None:
    missing = [d for d in dims if d not in da.dims]
    if missing:
        raise ValueError(f"The array has no dim(s) {missing}; its dims are {list(da.dims)}.")


def statistics_from_ice(ice: xr.DataArray, dim: Hashable, *, categorical: bool = False) -> xr.Dataset:
    """Heterogeneity statistics of stored ICE curves (unweighted over ``instance``).

    Parameters
    ----------
    ice : xarray.DataArray
        Dims ``instance``, the feature ``dim`` and any others (kept).
    dim : str
        The feature (grid) dim.
    categorical : bool
        Whether the grid holds category levels.

    Returns
    -------
    xarray.Dataset
        ``ice_sd``, ``cice_sd``, ``dice_sd`` (other dims, ``dim``) and ``heterogeneity_index``
        (other dims).

    Examples
    --------
    >>> import xarray as xr
    >>> ice = xr.DataArray([[0.0, 1.0], [0.0, 3.0]], dims=("instance", "x"), coords={"x": [0.0, 1.0]})
    >>> statistics_from_ice(ice, "x")["dice_sd"].values.tolist()
    [1.0, 1.0]
    """
    _check_dims(ice, ["instance", dim])
    grid = ice[dim].values

    def compute(arr):
        stats = ice_stats.ice_statistics(arr, grid, categorical=categorical, instance_axis=-2, grid_axis=-1)
        return tuple(stats[name] for name in STATISTICS)

    core = [dim], [dim], [dim], []
    results = xr.apply_ufunc(compute, ice, input_core_dims=[["instance", dim]], output_core_dims=list(core))
    others = [d for d in ice.dims if d not in ("instance", dim)]
    data = {}
    for name, da, core_dims in zip(STATISTICS, results, core, strict=True):
        data[name] = da.transpose(*others, *core_dims)
    return xr.Dataset(data)


def _node_statistics(node: xr.DataTree, source: str) -> tuple[xr.Dataset, str]:
    ds = node.to_dataset()
    feature = node.attrs["features"][0]
    has_loop = all(name in ds for name in STATISTICS)
    has_ice = "ice" in ds
    if source == "auto":
        source = "loop" if has_loop else "ice" if has_ice else "none"
    if source == "none" or (source == "loop" and not has_loop) or (source == "ice" and not has_ice):
        wanted = {"loop": "no heterogeneity statistics", "ice": "no ICE curves ('ice')"}.get(
            source, "neither heterogeneity statistics nor ICE curves ('ice')")
        raise ValueError(
            f"Node {node.name!r} holds {wanted}. Run bootstrap_partial_dependence(..., "
            "statistics='heterogeneity') (statistics over all background rows) or keep ICE curves with "
            "statistics='ice' / statistics={'ice': n} (or partial_dependence(..., kind='both'))."
        )
    if source == "loop":
        names = [n for s in STATISTICS for n in (s, f"{s}_resamples") if n in ds]
        return ds[names], source
    categorical = bool(node.attrs.get("categorical", [0])[0])
    out = statistics_from_ice(ds["ice"], feature, categorical=categorical)
    if "ice_resamples" in ds:
        resampled = statistics_from_ice(ds["ice_resamples"], feature, categorical=categorical)
        out = out.merge(resampled.rename({n: f"{n}_resamples" for n in STATISTICS}))
    return out, source


def ice_heterogeneity(
    result: xr.DataTree,
    features: Sequence[Hashable] | Hashable | None = None,
    *,
    source: str = "auto",
    confidence_level: float | None = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
) -> xr.DataTree:
    """ICE heterogeneity statistics of the 1-D features of a result, with confidence bands.

    Parameters
    ----------
    result : xarray.DataTree
        Output of :func:`pdpboot.bootstrap_partial_dependence` with ``statistics="heterogeneity"``
        or ``"ice"``, or of :func:`pdpboot.partial_dependence` with ``kind="individual"``/``"both"``.
    features : str or list of str, optional
        1-D features to report (default: every 1-D node).
    source : {"auto", "loop", "ice"}
        ``loop``: the statistics computed in the resample loop over all background rows, weighted
        by their multiplicities; ``ice``: recomputed from the stored ICE curves (unweighted);
        ``auto``: ``loop`` when present, else ``ice``.
    confidence_level : float or None
        Level of the bands added when resamples exist; None for none.
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Band method (:func:`pdpboot.confidence_bands`); bounds are clipped at 0.
    simultaneous : bool
        Simultaneous bands over each whole curve.

    Returns
    -------
    xarray.DataTree
        One child per 1-D feature (the result's node names and attrs, plus ``source``) with
        ``ice_sd``, ``cice_sd``, ``dice_sd`` (``output``, feature) and ``heterogeneity_index``
        (``output``); with resamples also ``<stat>_resamples`` and their ``_band``, ``_se`` and
        ``_bias``.  Root attrs are the result's.

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0] + X[:, 1]
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=20,
    ...                                            grid=pdpboot.Grid(4), statistics="heterogeneity", rng=0)
    >>> sorted(v for v in ice_heterogeneity(res)["x0"].ds.data_vars if v.endswith("_band"))
    ['cice_sd_band', 'dice_sd_band', 'heterogeneity_index_band', 'ice_sd_band']
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"result must be a pdpboot result (xarray.DataTree), got {type(result).__name__}.")
    if source not in SOURCES:
        raise ValueError(f"source={source!r} is not one of {list(SOURCES)}.")
    if features is None:
        nodes = [n for n in feature_nodes(result) if len(n.attrs["features"]) == 1]
        if not nodes:
            raise ValueError("The result has no 1-D feature node; ICE heterogeneity is defined per feature.")
    else:
        wanted = [features] if isinstance(features, str) or not isinstance(features, Sequence) else features
        nodes = []
        for feature in wanted:
            if not isinstance(feature, str) and isinstance(feature, Sequence):
                raise ValueError(
                    f"ICE heterogeneity is defined for single features, got the pair {feature!r}."
                )
            nodes.append(get_node(result, feature))
    children = {}
    for node in nodes:
        ds, used = _node_statistics(node, source)
        ds.attrs = dict(node.attrs, source=used)
        children[node.name] = xr.DataTree(ds)
    tree = xr.DataTree(children=children)
    tree.attrs = dict(result.attrs)
    has_resamples = any(v.endswith("_resamples") for child in children.values() for v in child.ds.data_vars)
    if confidence_level is not None and has_resamples:
        tree = confidence_bands(tree, confidence_level=confidence_level, method=method,
                                simultaneous=simultaneous)
    return tree

