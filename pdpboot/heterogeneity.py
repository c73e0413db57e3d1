"""ICE heterogeneity statistics with bootstrap uncertainty (xarray layer).

A PD curve is an average and can hide opposite effects in subgroups.  For each
1-D feature, :func:`ice_heterogeneity` reports how far the individual (ICE)
curves spread around it, as functions of the grid value, and one scalar
summary; every statistic gets the same confidence bands as the PD.

Statistics (definitions in :mod:`pdpboot.engine.ice_stats`):

``ice_sd`` (``output``, feature)
    SD of the ICE curves across instances (weighted by the background row
    multiplicities when computed in the resample loop).
``cice_sd`` (``output``, feature)
    SD of centred ICE curves (anchored at the first grid value, as
    scikit-learn's ``centered=True``): the spread of the *changes* from
    the first grid value, blind to level differences between rows.
``dice_sd`` (``output``, feature)
    SD of derivative ICE curves (finite differences on the feature's own
    grid: central differences inside, one-sided at the ends; for a
    categorical feature the step from the previous level, 0 at the first
    level).  Identically 0 when the model is additive in the feature
    (Goldstein et al. 2015); its size is the spread of local slopes.
``heterogeneity_index`` (``output``)
    Mean over the grid of the mean squared distance between the mean-centred
    ICE curves and the mean-centred PD (squared response units; 0 iff all
    ICE curves are parallel on the grid).

Two sources, chosen per node by ``source``:

``"loop"``
    The statistics computed inside the resample loop by
    ``bootstrap_partial_dependence(..., statistics="heterogeneity")`` over *all*
    background rows of every model (the resample's own rows with their
    multiplicities by default) - only the statistics were kept.
``"ice"``
    Recomputed from the stored ICE curves (``ice`` and ``ice_resamples``,
    from ``statistics="ice"``/``statistics={"ice": n}`` or ``partial_dependence(kind="both")``), i.e.
    over the fixed ICE instances, unweighted.  With ``Resampling(background="original")``
    and ``statistics="ice"`` the instances are the background rows and both sources
    agree exactly.
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

    See Also
    --------
    pdpboot.engine.ice_stats.centered_ice : the NumPy version.
    derivative_ice : derivative ICE curves.

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
        Whether the grid holds category levels: steps between consecutive
        levels (0 at the first level) instead of derivatives.

    Returns
    -------
    xarray.DataArray
        Same dims and coords as ``ice`` (see
        :func:`pdpboot.engine.ice_stats.derivative_ice` for the rule).

    See Also
    --------
    pdpboot.engine.ice_stats.derivative_ice : the NumPy function it wraps.
    centered_ice : centred ICE curves.

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
        Dims ``instance``, the feature ``dim`` and any others (``output``,
        ``resample``), which are kept.
    dim : str
        The feature (grid) dim.
    categorical : bool
        Whether the grid holds category levels.

    Returns
    -------
    xarray.Dataset
        ``ice_sd``, ``cice_sd``, ``dice_sd`` (other dims, ``dim``) and
        ``heterogeneity_index`` (other dims).

    See Also
    --------
    pdpboot.engine.ice_stats.ice_statistics : the NumPy function it wraps.
    ice_heterogeneity : the statistics of a result, with bands.

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
        Output of :func:`pdpboot.bootstrap_partial_dependence` (with
        ``statistics=["heterogeneity"]`` and/or ``"ice"``) or of
        :func:`pdpboot.partial_dependence` with ``kind="individual"``/``"both"``.
    features : str or list of str, optional
        1-D features to report (default: every 1-D node).
    source : {"auto", "loop", "ice"}
        Where the statistics come from (see the module notes): ``loop`` - the
        statistics computed in the resample loop over all background rows;
        ``ice`` - recomputed from stored ICE curves; ``auto`` - ``loop`` when
        present, else ``ice``.
    confidence_level : float or None
        Level of the bands added by :func:`pdpboot.confidence_bands` when
        resamples exist; None for none.
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Band method (:func:`pdpboot.confidence_bands`).  Every statistic here is
        >= 0, so band bounds are clipped at 0.  The default, ``percentile``, is
        kept from a coverage study (``experiments/bounded_statistics.py``: Goldstein
        et al.'s DGP, well-specified OLS, n = 300, B = 200, R = 150 data sets,
        population d-ICE SD of ``x2`` = 5): 95 % intervals of the grid-mean
        ``dice_sd`` covered the learner's expected value in 0.933 (MC SE 0.020)
        with ``percentile``, 0.940 ``basic``, 0.947 ``normal``, ``bc`` and
        ``bca`` - no method is distinguishable at this Monte Carlo precision,
        and ``percentile`` is the one that did not fail for H2
        (:func:`pdpboot.h_statistic`).
    simultaneous : bool
        Simultaneous bands over each whole curve.

    Returns
    -------
    xarray.DataTree
        One child per 1-D feature (same node names and attrs as ``result``,
        plus ``attrs["source"]``) with ``ice_sd``, ``cice_sd``, ``dice_sd``
        (``output``, feature) and ``heterogeneity_index`` (``output``); with
        resamples also ``<stat>_resamples`` (``resample`` first) and, unless
        ``confidence_level`` is None, ``<stat>_band`` (``ci_bound``, ...),
        ``<stat>_se`` and ``<stat>_bias``.  Root attrs are the result's.
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

