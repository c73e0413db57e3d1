"""Plots of derived statistics: ICE heterogeneity over a grid and Friedman's H² per feature (pair)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from ..schema import feature_nodes, is_categorical
from ._common import (
    CURVE_KINDS,
    OKABE_ITO,
    BandChoice,
    array_of,
    as_names,
    band_bounds,
    check_style,
    curve_bands,
    draw_curve,
    draw_legend,
    element_kw,
    element_on,
    fewer_ticks,
    find_bands,
    finish_x_axis,
    lookup,
    new_ax,
    response_label,
    select_output,
    tick_positions,
)

__all__ = ["plot_h_statistic", "plot_heterogeneity", "plot_importance"]

_STAT_LABELS = {
    "ice_sd": "SD of ICE curves",
    "cice_sd": "SD of centred ICE curves",
    "dice_sd": "SD of derivative ICE curves",
    "h2": "H² (pairwise interaction)",
    "h2_overall": "H² (overall interaction)",
    "h_unnormalized": "H (unnormalised, response units)",
    "heterogeneity_index": "Heterogeneity index",
}


def plot_heterogeneity(
    result: Any,
    feature: Hashable,
    *,
    stat: str = "ice_sd",
    ax: Any = None,
    band: BandChoice = "auto",
    output: Hashable | None = None,
    rug: bool | Sequence[float] = True,
    legend: bool = True,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot an ICE heterogeneity statistic over a feature's grid, with its bootstrap band.

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A result with heterogeneity statistics (:func:`pdpboot.ice_heterogeneity`), one of its
        nodes, or a node's Dataset.
    feature : str
        The feature name.
    stat : str, default "ice_sd"
        "ice_sd", "cice_sd" (centred), "dice_sd" (derivative), or any variable over the grid.
    ax, band, output, rug, legend, scale
        As in :func:`pdpboot.plotting.plot_pd`.
    style : dict, optional
        As in :func:`pdpboot.plotting.plot_pd`: ``"line"``, ``"band"``, ``"simultaneous"`` (default
        kind ``"fill"``), ``"rug"``, ``"legend"``.

    Returns
    -------
    matplotlib.axes.Axes
        x = the feature's grid, y = the statistic.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> y = X["a"] * X["b"] + rng.normal(size=60)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=5,
    ...                                            grid=pdpboot.Grid(5), statistics={"ice": 10}, rng=0)
    >>> het = pdpboot.ice_heterogeneity(res)
    >>> ax = pdpboot.plot_heterogeneity(het, "a", stat="ice_sd")
    >>> ax.get_xlabel()
    'a'
    """
    ds, attrs, _ = lookup(result, feature)
    names = as_names(attrs["features"])
    if len(names) != 1:
        raise ValueError(f"plot_heterogeneity draws 1-D nodes; got the pair {tuple(names)}.")
    name = names[0]
    if stat not in ds.data_vars:
        have = sorted(str(v) for v in ds.data_vars if not str(v).endswith(("_resamples", "_se", "_bias")))
        raise ValueError(
            f"The node of {name!r} has no {stat!r} variable (it has {have}); compute it with "
            "pdpboot.ice_heterogeneity(result) first."
        )
    ds, label, n_outputs = select_output(ds, attrs, output)
    stat_dims = list(ds[stat].dims)
    if len(stat_dims) != 1:
        raise ValueError(f"{stat!r} must have one grid dimension besides 'output'; has {stat_dims}.")
    dim = str(stat_dims[0])
    categorical = is_categorical(ds, attrs, name, 0) if dim == name else False
    grid = ds[dim].values
    x = tick_positions(grid, categorical)
    est = array_of(ds[stat], [dim], stat)
    bands = curve_bands(ds, attrs, stat, band, dim)
    style = check_style(style, ("line", "band", "simultaneous", "rug", "legend"), "plot_heterogeneity",
                        {"simultaneous": CURVE_KINDS["simultaneous"]})
    ax = new_ax(ax)
    draw_curve(ax, x, est, bands, categorical=categorical, est_label="estimate", style=style,
               simultaneous_kind="fill")
    finish_x_axis(ax, grid, categorical, attrs, rug, style, scale if dim == name else "linear", name)
    what = ds[stat].attrs.get("long_name") or _STAT_LABELS.get(stat, stat)
    ax.set_ylabel(f"{what}\n({response_label(attrs, label, n_outputs)})")
    draw_legend(ax, legend and element_on(style, "legend", True), element_kw(style, "legend"), first="estimate")
    return ax


def plot_h_statistic(
    result: xr.DataTree,
    *,
    stat: str = "h2",
    ax: Any = None,
    band: BandChoice = "auto",
    output: Hashable | None = None,
    sort: bool = True,
    legend: bool = True,
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Bar chart of Friedman's H² per feature pair (or overall, per feature) with bootstrap intervals.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`pdpboot.h_statistic`: every node holding ``stat`` gets one bar.
    stat : str, default "h2"
        "h2" (pair nodes), "h2_overall" (1-D nodes), or another scalar statistic of the nodes.
    ax, band, output, legend : see :func:`pdpboot.plotting.plot_pd`
    sort : bool, default True
        Largest value at the top; otherwise the result's node order from the top.
    style : dict, optional
        Matplotlib keywords of ``"bar"`` (``ax.barh``), ``"interval"`` (``ax.hlines``) and
        ``"legend"``; ``False`` leaves the intervals or the legend out.

    Returns
    -------
    matplotlib.axes.Axes
        One horizontal bar per node, labelled "a × b" (pairs) or the feature.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> y = X["a"] * X["b"] + rng.normal(size=60)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b", ("a", "b")],
    ...                                            n_resamples=5, grid=pdpboot.Grid(5),
    ...                                            statistics={"interactions": 30}, rng=0)
    >>> ax = pdpboot.plot_h_statistic(pdpboot.h_statistic(res), stat="h2")
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a × b']
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError("plot_h_statistic needs a pdpboot result (an xarray.DataTree).")
    nodes = [node for node in feature_nodes(result) if stat in node.dataset.data_vars]
    if not nodes:
        raise ValueError(f"No node of this result has a {stat!r} variable; run pdpboot.h_statistic(result) first.")
    names, est, lows, highs, band_label, label, n_outputs = [], [], [], [], None, None, 1
    for node in nodes:
        ds = node.to_dataset()
        attrs = {**result.attrs, **node.attrs}
        ds, label, n_outputs = select_output(ds, attrs, output)
        names.append(" × ".join(as_names(node.attrs["features"])))
        est.append(float(array_of(ds[stat], [], stat)))
        found = find_bands(ds, attrs, stat, band, noun="interval")
        lo, hi = band_bounds(found[0][0], []) if found else (np.nan, np.nan)
        lows.append(float(lo))
        highs.append(float(hi))
        band_label = found[0][2] if found else band_label
    est_a, lo_a, hi_a = np.array(est), np.array(lows), np.array(highs)
    order = np.argsort(-est_a, kind="stable") if sort else np.arange(len(est_a))
    style = check_style(style, ("bar", "interval", "legend"), "plot_h_statistic")
    what = _STAT_LABELS.get(stat, stat)
    if n_outputs > 1:
        what += f"\n{response_label(result.attrs, label, n_outputs)}"
    return _bars(ax, style, est_a[order], lo_a[order], hi_a[order], [names[i] for i in order], band_label, what,
                 legend)


def plot_importance(
    table: pd.DataFrame,
    *,
    output: Hashable | None = None,
    ax: Any = None,
    sort: bool = True,
    legend: bool = True,
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Bar chart of PD-based feature importance (Greenwell et al. 2018) with bootstrap intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`pdpboot.pd_importance`'s table of a result.
    output : label, optional
        The output drawn; default: the only one, the positive (last) class of a binary classifier,
        else the first.
    ax, sort, legend, style
        As in :func:`plot_h_statistic`.

    Returns
    -------
    matplotlib.axes.Axes
        One horizontal bar per feature, x = the importance in the response's units.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    >>> y = 2 * X["a"] + 0.1 * X["b"] + rng.normal(size=80)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=20,
    ...                                            grid=pdpboot.Grid(10), rng=0,
    ...                                            execution=pdpboot.Execution(progress=False))
    >>> ax = pdpboot.plot_importance(pdpboot.pd_importance(res))
    >>> [t.get_text() for t in ax.get_yticklabels()]  # from the top
    ['a', 'b']
    """
    need = {"feature", "output", "importance", "lower", "upper", "measure", "confidence_level", "method"}
    if not isinstance(table, pd.DataFrame) or not need <= set(table.columns):
        raise TypeError("plot_importance draws the table of pdpboot.pd_importance(result); pass that table.")
    outputs = list(dict.fromkeys(table["output"]))
    if output is None:
        output = outputs[-1] if len(outputs) == 2 else outputs[0]
    rows = table[table["output"] == output]
    if rows.empty:
        raise ValueError(f"output={output!r} is not one of the table's outputs {outputs}.")
    if sort:
        rows = rows.sort_values("importance", ascending=False, kind="stable")
    style = check_style(style, ("bar", "interval", "legend"), "plot_importance")
    lower, upper = rows["lower"].to_numpy(float), rows["upper"].to_numpy(float)
    label = None
    if np.isfinite(lower).any() and element_on(style, "interval", True):
        label = f"{100 * float(rows['confidence_level'].iloc[0]):g} % {rows['method'].dropna().iloc[0]} interval"
    names = [f"{f} (levels)" if m == "range/4" else str(f) for f, m in zip(rows["feature"], rows["measure"])]
    return _bars(ax, style, rows["importance"], lower, upper, names, label,
                 "PD-based importance\n(SD of the PD curve; range / 4 for levels)"
                 + (f"\noutput: {output}" if len(outputs) > 1 else ""), legend)


def _bars(ax, style: Mapping, est, lower: np.ndarray, upper: np.ndarray, names: list, band_label: str | None,
          xlabel: str, legend: bool):
    """Horizontal bars from the top with their intervals, for :func:`plot_h_statistic` and :func:`plot_importance`."""
    y = np.arange(len(names))[::-1]
    ax = new_ax(ax)
    ax.barh(y, est, label="estimate", **element_kw(style, "bar", {"color": OKABE_ITO["sky_blue"], "height": 0.6,
                                                                  "zorder": 2}))
    if np.isfinite(lower).any() and element_on(style, "interval", True):
        ax.hlines(y, lower, upper, label=band_label, **element_kw(style, "interval", {"colors": "k", "linewidths": 1.2,
                                                                                      "zorder": 3}))
    ax.set_yticks(y, names)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlim(left=0)
    fewer_ticks(ax, "x")
    ax.set_xlabel(xlabel)
    draw_legend(ax, legend and element_on(style, "legend", True), element_kw(style, "legend"), first="estimate",
                above=True)
    return ax
