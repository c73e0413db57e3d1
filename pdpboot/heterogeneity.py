"""What a 1-D node's PD averages over: ICE heterogeneity statistics with bands (definitions in
:mod:`pdpboot.engine.ice_stats`) and the observed outcome per grid bin (:func:`binned_outcome`)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from .bands import confidence_bands
from .engine import ice_stats
from .schema import feature_nodes, get_node, is_categorical

__all__ = ["BINNED_COLUMNS", "bin_edges", "binned_outcome", "centered_ice", "derivative_ice", "ice_heterogeneity",
           "statistics_from_ice"]

STATISTICS = ("ice_sd", "cice_sd", "dice_sd", "heterogeneity_index")
SOURCES = ("auto", "loop", "ice")


def centered_ice(ice: xr.DataArray, dim: Hashable) -> xr.DataArray:
    """Centred ICE curves (c-ICE) of ``ice``: 0 at the first value of the grid dim ``dim``.

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
    """Derivative ICE curves (d-ICE) of ``ice`` on the grid dim ``dim`` (``categorical``: steps between levels).

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
    """``ice_sd``, ``cice_sd``, ``dice_sd`` and ``heterogeneity_index`` of ICE curves (unweighted over
    ``instance``; ``dim``: the grid dim, ``categorical``: whether it holds levels).

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
    return xr.Dataset({name: da.transpose(*others, *core_dims)
                       for name, da, core_dims in zip(STATISTICS, results, core, strict=True)})


def _node_statistics(node: xr.DataTree, source: str) -> tuple[xr.Dataset, str]:
    ds = node.to_dataset()
    feature = node.attrs["features"][0]
    has_loop = all(name in ds for name in STATISTICS)
    has_ice = "ice" in ds
    if source == "auto":
        source = "loop" if has_loop else "ice" if has_ice else "none"
    if node.attrs.get("effect", "pd") != "pd" and not (has_loop or has_ice):
        raise ValueError(f"Node {node.name!r} holds the {str(node.attrs['effect']).upper()} effect, not partial "
                         "dependence; ICE heterogeneity needs bootstrap_partial_dependence(..., "
                         "statistics='heterogeneity').")
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
    categorical = is_categorical(ds, node.attrs, feature, 0)
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
        A result with ``statistics="heterogeneity"`` or ICE curves.
    features : str or list of str, optional
        1-D features to report (default: every 1-D node).
    source : {"auto", "loop", "ice"}
        ``loop``: the statistics of the run (all background rows, weighted); ``ice``: recomputed
        from the stored ICE curves (unweighted); ``auto``: ``loop`` when present.
    confidence_level : float or None
        Level of the bands added when resamples exist; None for none.
    method, simultaneous
        As in :func:`pdpboot.confidence_bands`.

    Returns
    -------
    xarray.DataTree
        One child per 1-D feature with ``ice_sd``, ``cice_sd``, ``dice_sd`` (``output``, feature)
        and ``heterogeneity_index`` (``output``), with their resamples and bands.

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
            raise ValueError("The result has only feature pairs; ICE heterogeneity is defined per feature: compute "
                             "it with single features too (e.g. features=['a', 'b'] beside the pair ('a', 'b')).")
    else:
        wanted = [features] if isinstance(features, str) or not isinstance(features, Sequence) else features
        nodes = []
        for feature in wanted:
            if not isinstance(feature, str) and isinstance(feature, Sequence):
                raise ValueError(f"ICE heterogeneity is defined for single features, got the pair {feature!r}.")
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


#: Columns of :func:`binned_outcome`'s table, in order.
BINNED_COLUMNS = ("value", "low", "high", "count", "output", "observed")


def bin_edges(grid: np.ndarray) -> np.ndarray:
    """Edges of the bins around numeric grid values: midpoints between neighbours, open outer ends.

    >>> bin_edges(np.array([0.0, 1.0, 3.0])).tolist()
    [-inf, 0.5, 2.0, inf]
    """
    grid = np.asarray(grid, dtype=float)
    return np.concatenate([[-np.inf], (grid[1:] + grid[:-1]) / 2, [np.inf]])


def binned_outcome(result: xr.DataTree, X, y, feature: Hashable) -> pd.DataFrame:
    """Rows and mean outcome per grid bin of ``feature`` (PDPbox's "target plot"), beside a result's PD.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with a 1-D node of ``feature``.
    X : pandas.DataFrame
        The data; ``X[feature]`` is binned.
    y : array-like of shape (n_rows,)
        The outcome: numbers (regression) or class labels (classification).
    feature : str

    Returns
    -------
    pandas.DataFrame
        One row per grid value and output, columns :data:`BINNED_COLUMNS`: ``value``, ``low``/``high``
        (midpoints between numeric grid values; NaN for levels), ``count``, ``output``, ``observed``
        (the bin's mean of ``y``, or share of that class).

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = pd.DataFrame({"a": np.arange(10.0)})
    >>> y = 2 * X["a"]
    >>> res = pdpboot.partial_dependence(LinearRegression().fit(X, y), X, ["a"],
    ...                                  grid=pdpboot.Grid(custom_values={"a": [0.0, 5.0, 9.0]}))
    >>> binned_outcome(res, X, y, "a")[["value", "count", "observed"]].to_numpy().tolist()
    [[0.0, 3.0, 2.0], [5.0, 4.0, 9.0], [9.0, 3.0, 16.0]]
    """
    node = get_node(result, feature)
    names = [str(f) for f in node.attrs["features"]]
    if len(names) != 1:
        raise ValueError(f"binned_outcome needs a 1-D node; {tuple(names)} is a pair.")
    name = names[0]
    if not isinstance(X, pd.DataFrame) or name not in X.columns:
        raise ValueError(f"X must be a DataFrame with the column {name!r} (the rows the result was computed on).")
    column = X[name]
    y = pd.Series(np.asarray(y), index=column.index)
    if len(y) != len(column):
        raise ValueError(f"y has {len(y)} values but X has {len(column)} rows.")
    missing = int(pd.isna(y).sum())
    if missing:  # they would count as rows of no class / NaN means (class shares biased towards 0)
        raise ValueError(f"y has {missing} missing value(s): each bin's observed outcome needs every row's outcome; "
                         "pass the rows that have one (keep = y.notna(); X[keep], y[keep]).")
    grid = node[name].values
    categorical = is_categorical(node, node.attrs, name, 0)
    if categorical:
        as_text = {str(v): i for i, v in enumerate(grid.tolist())}
        which = column.map(lambda v: as_text.get(str(v), -1) if pd.notna(v) else -1).to_numpy()
        low = high = np.full(len(grid), np.nan)
    else:
        edges = bin_edges(grid)
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        which = np.where(np.isnan(values), -1, np.searchsorted(edges, values, side="right") - 1)
        low, high = edges[:-1], edges[1:]
    counts = np.bincount(which[which >= 0], minlength=len(grid))
    outputs = node["output"].values.tolist()
    root = node.root.attrs
    classification = root.get("task") == "classification" or root.get("response") in ("predict_proba",
                                                                                       "decision_function")
    rows = []
    for output in outputs:
        if classification:
            hits = (y.astype(str) == str(output)).to_numpy(dtype=float)
        else:
            hits = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float)
            if np.isnan(hits).any():
                bad = y[np.isnan(hits)].iloc[0]
                raise ValueError(f"y holds values that are not numbers (e.g. {bad!r}) but the result is a "
                                 "regression's; pass the numeric outcome the model was fitted on.")
        sums = np.bincount(which[which >= 0], weights=hits[which >= 0], minlength=len(grid))
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        for i, value in enumerate(grid.tolist()):
            rows.append({"value": value, "low": float(low[i]), "high": float(high[i]), "count": int(counts[i]),
                         "output": output, "observed": float(observed[i])})
    return pd.DataFrame(rows, columns=list(BINNED_COLUMNS))
