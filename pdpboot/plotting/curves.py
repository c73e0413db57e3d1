"""1-D curves: :func:`plot_pd` (PD, bands, ICE), :func:`plot_ice` (a fitted model's ICE), :func:`plot_target`,
:func:`plot_regional_pd` (one PD per region)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..bootstrap import partial_dependence
from ..grid import Grid
from ..heterogeneity import binned_outcome
from ..schema import get_node, is_categorical, node_name
from ._common import (
    CURVE_KINDS,
    OKABE_ITO,
    BandChoice,
    array_of,
    as_names,
    check_style,
    curve_bands,
    draw_curve,
    draw_legend,
    element_kw,
    element_on,
    finish_x_axis,
    legend_entries,
    lookup,
    new_ax,
    pyplot,
    response_label,
    select_output,
    tick_positions,
)

__all__ = ["plot_ice", "plot_pd", "plot_target"]


def plot_pd(
    result: Any,
    feature: Hashable,
    *,
    variable: str = "pd",
    ax: Any = None,
    band: BandChoice = "auto",
    ice: bool | int = False,
    centered: bool = False,
    rug: bool | Sequence[float] = True,
    output: Hashable | None = None,
    legend: bool = True,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot a 1-D partial dependence curve with its bootstrap band and optional ICE curves.

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A pdpboot result, one of its feature nodes, or a node's Dataset.
    feature : str
        The feature name.
    variable : str, default "pd"
        The effect drawn: ``"pd"``, or any ``<name>`` with its ``<name>_band`` (e.g. ``"ale"``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    band : bool or {"auto", "pointwise", "simultaneous"}, default "auto"
        "auto" draws every band present, True the same but requires one, "pointwise" /
        "simultaneous" only that band, False none.
    ice : bool or int, default False
        Draw the stored ICE curves: True for all, an int for a fixed random subset of that size.
    centered : bool, default False
        Anchor ICE curves and the PD at the first grid value, with the bands of the change from there.
    rug : bool or array-like, default True
        Ticks at the deciles of the feature (True), at given values, or none.
    output : label, optional
        The output (class or target) to plot; default: the only output, or the positive class of a
        binary classifier.
    legend : bool, default True
        Add a legend (above the axes when ICE curves are drawn).
    scale : {"auto", "linear", "quantile"}, default "auto"
        "quantile" spaces a numeric x-axis by the data's deciles; "auto" does so for a strongly
        skewed feature (:func:`pdpboot.plotting.is_skewed`).
    style : dict, optional
        Matplotlib keywords per element, merged over the defaults: ``"line"``, ``"band"``,
        ``"simultaneous"``, ``"ice"``, ``"rug"``, ``"legend"``; ``False`` leaves an element out.
        ``{"line": {"kind": "bars"}}`` draws a categorical estimate as bars (default ``"points"``),
        ``{"simultaneous": {"kind": "fill"}}`` the simultaneous band shaded (default ``"lines"``).

    Returns
    -------
    matplotlib.axes.Axes
        x = the feature's grid (category levels as tick labels), y = the response.

    See Also
    --------
    plot_pd_panels, plot_heterogeneity, pdpboot.confidence_bands

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
    >>> ax = pdpboot.plot_pd(pdpboot.confidence_bands(res), "a", ice=True)
    >>> ax.get_xlabel()
    'a'
    """
    ds, attrs, _ = lookup(result, feature)
    names = as_names(attrs["features"])
    if len(names) != 1:
        raise ValueError(f"plot_pd draws 1-D nodes; {tuple(names)} is a pair - use plot_pd_contour.")
    name = names[0]
    if not isinstance(variable, str) or variable not in ds.data_vars:
        raise ValueError(f"The node of {name!r} has no {variable!r} variable; is it a pdpboot result? "
                         f"Variables: {sorted(map(str, ds.data_vars))[:12]}.")
    ds, label, n_outputs = select_output(ds, attrs, output)
    categorical = is_categorical(ds, attrs, name, 0)
    grid = ds[name].values
    x = tick_positions(grid, categorical)
    var = f"{variable}_centered" if centered and f"{variable}_centered" in ds.data_vars else variable
    est = array_of(ds[var], [name], var)
    bands = curve_bands(ds, attrs, var, band, name)
    if centered and var == variable:  # no stored centred curve: shift the level and its band
        shift = float(est[0])
        est = est - shift
        bands = [((lower - shift, upper - shift), sim, lab) for (lower, upper), sim, lab in bands]

    style = check_style(style, ("line", "band", "simultaneous", "ice", "rug", "legend"), "plot_pd", CURVE_KINDS)
    ax = new_ax(ax)
    if ice not in (False, None):  # 0 counts as False
        _draw_ice(ax, ds, name, x, ice, centered=centered, ice_kw=element_kw(style, "ice"))
    effect = "PD" if variable == "pd" else variable.upper()
    est_label = f"centred {effect} estimate" if centered else f"{effect} estimate"
    draw_curve(ax, x, est, bands, categorical=categorical, est_label=est_label, style=style)
    if "overlap" in ds.data_vars and var == "pd":  # the debiased estimator withholds bands where overlap is thin
        flagged = array_of(ds["overlap"], [name], "overlap") == 0
        if flagged.any():
            ax.plot(np.asarray(x)[flagged], est[flagged], "x", color="tab:red", ms=6, zorder=4,
                    label="thin overlap: no band")
    finish_x_axis(ax, grid, categorical, attrs, rug, style, scale, name)
    response = response_label(attrs, label, n_outputs)
    if variable != "pd":
        response = f"{effect} of {response[0].lower()}{response[1:]}"
    ax.set_ylabel(f"{response} (centred)" if centered else response)
    draw_legend(ax, legend and element_on(style, "legend", True), element_kw(style, "legend"), first=est_label,
                above=ice not in (False, None))
    return ax


def _draw_ice(ax, ds: xr.Dataset, name: str, x: np.ndarray, ice: bool | int, *, centered: bool,
              ice_kw: Mapping | None) -> None:
    from matplotlib.collections import LineCollection

    if "ice" not in ds.data_vars:
        raise ValueError(
            f"The node of {name!r} has no 'ice' variable; draw them with pdpboot.plot_ice(model, X, {name!r}, "
            "result=result), or run the bootstrap with statistics={'ice': n}."
        )
    curves = array_of(ds["ice"], ["instance", name], "ice")
    n = curves.shape[0]
    if ice is not True:
        if isinstance(ice, bool) or not isinstance(ice, (int, np.integer)) or ice < 1:
            raise ValueError(f"ice must be False, True or a positive number of curves; got {ice!r}.")
        if ice < n:
            keep = np.sort(np.random.default_rng(0).choice(n, size=int(ice), replace=False))
            curves = curves[keep]
    if centered:
        curves = curves - curves[:, :1]
    segments = np.stack([np.broadcast_to(x, curves.shape), curves], axis=-1)
    kw = {"colors": "0.45", "linewidths": 0.5, "alpha": 0.3, "zorder": 1.5, **ice_kw}
    what = "centred ICE" if centered else "ICE"
    kw.setdefault("label", f"{what} ({len(curves)} curves)")
    ax.add_collection(LineCollection(segments, **kw))
    ax.autoscale_view()


def plot_ice(
    estimator: Any,
    X: Any,
    feature: Hashable,
    *,
    result: xr.DataTree | None = None,
    ice: int | bool = 50,
    centered: bool = False,
    band: BandChoice = "auto",
    output: Hashable | None = None,
    response_method: str = "auto",
    ax: Any = None,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot ICE curves of a fitted model (and its PD), computed now: no result with stored ICE needed.

    Without ``result`` on a 50-point grid between the 5th and 95th percentile; with ``result`` (a
    bootstrap of the same model on the same data) on its grid, under its PD estimate and band.

    Parameters
    ----------
    estimator : fitted estimator
        The model (usually the one fitted on all of ``X``).
    X : DataFrame or array of shape (n_rows, n_columns)
        The rows whose ICE curves are drawn.
    feature : str or int
        The feature.
    result : xarray.DataTree, optional
        A pdpboot result holding ``feature``: its grid, PD estimate and bands are used.
    ice : int or True, default 50
        How many rows get a curve (a fixed random subset), or True for every row.
    centered, band, output, ax, scale, style
        As in :func:`plot_pd` (no band without ``result``).
    response_method : {"auto", "predict_proba", "decision_function", "predict"}, default "auto"
        What is averaged, as in :func:`pdpboot.partial_dependence`.

    Returns
    -------
    matplotlib.axes.Axes
        Grey ICE curves under the PD (and its band).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> model = LinearRegression().fit(X, X["a"] + rng.normal(size=60))
    >>> ax = pdpboot.plot_ice(model, X, "a", ice=20)
    >>> len(ax.collections[0].get_segments())
    20
    """
    if isinstance(ice, bool) and not ice:
        raise ValueError("plot_ice draws ICE curves: ice must be True or a positive number of rows; got False.")
    if not isinstance(ice, bool) and (not isinstance(ice, (int, np.integer)) or ice < 1):
        raise ValueError(f"ice must be True or a positive number of rows; got {ice!r}.")
    settings: dict = {}
    node = None
    if result is not None:
        node = get_node(result, feature)
        name = str(node.attrs["features"][0])
        categorical = is_categorical(node, node.attrs, name, 0)
        settings = {"grid": Grid(custom_values={name: node[name].values},
                                 categorical_features=[name] if categorical else None)}
        if result.attrs.get("task") != "classification":  # a regressor's outputs are named after the target
            settings["target_names"] = [str(v) for v in node["output"].values.tolist()]
    one = partial_dependence(estimator, X, [feature], kind="both", max_ice_instances=None if ice is True else int(ice),
                             response_method=response_method, rng=0, **settings)
    computed = next(iter(one.children.values()))
    if node is None:
        drawn = computed
    else:  # the result's estimate and bands, with the ICE curves of the model on its grid
        ds = node.to_dataset()
        if "ice" in ds:
            ds = ds.drop_vars([v for v in ds.data_vars if "instance" in ds[v].dims]).drop_dims("instance")
        ice_da = computed["ice"]
        if list(ice_da["output"].values) != list(ds["output"].values):
            raise ValueError(f"The model's outputs {list(ice_da['output'].values)} differ from the result's "
                             f"{list(ds['output'].values)}; pass the model the result was made with.")
        ds["ice"] = ice_da.variable if ice_da.dims == ("instance", "output", str(ds.attrs["features"][0])) \
            else ice_da.transpose("instance", "output", ...).variable
        ds = ds.assign_coords(instance=ice_da["instance"].values)
        drawn = xr.DataTree(ds, name=node.name)
        drawn.attrs = {**result.attrs, **node.attrs}
    return plot_pd(drawn, feature if node is None else str(node.attrs["features"][0]), ax=ax,
                   band=band if node is not None else False, ice=True, centered=centered, output=output,
                   scale=scale, style=style)


def plot_target(
    result: xr.DataTree,
    X: Any,
    y: Any,
    feature: Hashable,
    *,
    output: Hashable | None = None,
    ax: Sequence[Any] | None = None,
    band: BandChoice = "auto",
    scale: Literal["auto", "linear", "quantile"] = "auto",
    legend: bool = True,
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot the PD with its band beside the actual outcome and the number of rows per grid bin.

    PDPbox's target plot, with uncertainty: the upper panel draws the PD, its band and the mean of
    ``y`` per grid bin (a class share, for a classifier); the lower panel the rows per bin.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with a 1-D node of ``feature``.
    X : pandas.DataFrame
        The rows to bin (usually the ones the result was computed on).
    y : array-like of shape (n_rows,)
        The observed outcome: numbers, or class labels of a classifier.
    feature : str
        The feature.
    ax : pair of matplotlib.axes.Axes, optional
        The upper (PD, observed) and lower (counts) Axes; default: a new figure.
    output, band, scale, legend
        As in :func:`plot_pd` (both panels share the x-axis; the legend goes above).
    style : dict, optional
        Matplotlib keywords for ``"observed"`` (``ax.plot``), ``"counts"`` (``ax.bar``) and, as in
        :func:`plot_pd`, ``"line"``, ``"band"``, ``"simultaneous"``, ``"rug"``, ``"legend"``.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (2,)
        The upper and the lower Axes.

    See Also
    --------
    pdpboot.binned_outcome : The table drawn here.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> y = X["a"] + rng.normal(size=60)
    >>> res = pdpboot.confidence_bands(pdpboot.bootstrap_partial_dependence(
    ...     LinearRegression(), X, y, ["a"], n_resamples=5, grid=pdpboot.Grid(6), rng=0,
    ...     execution=pdpboot.Execution(progress=False)))
    >>> top, bottom = pdpboot.plot_target(res, X, y, "a")
    >>> bottom.get_ylabel()
    'rows'
    """
    style = check_style(style, ("observed", "counts", "line", "band", "simultaneous", "rug", "legend"),
                        "plot_target")
    table = binned_outcome(result, X, y, feature)
    ds, attrs, _ = lookup(result, feature)
    name = str(attrs["features"][0])
    _, label, _ = select_output(ds, attrs, output)
    rows = table[table["output"] == label]
    categorical = is_categorical(ds, attrs, name, 0)
    if ax is None:
        fig, axes = pyplot().subplots(2, 1, sharex=True, figsize=(6.0, 4.6), layout="constrained",
                                      gridspec_kw={"height_ratios": [3, 1]})
    else:
        axes = np.asarray(ax, dtype=object).ravel()
        if axes.size != 2:
            raise ValueError(f"ax must be two Axes (PD above, counts below); got {axes.size}.")
    top, bottom = axes
    if not top.get_shared_x_axes().joined(top, bottom):
        bottom.sharex(top)  # one x-axis (and scale) for both panels
    curve_style = {k: v for k, v in style.items() if k not in ("observed", "counts")}
    plot_pd(result, feature, ax=top, band=band, output=output, legend=False, scale=scale, style=curve_style)
    x = np.arange(len(rows), dtype=float) if categorical else rows["value"].to_numpy(dtype=float)
    classification = str(top.get_ylabel()).startswith("P(class")
    what = f"observed share of class {label}" if classification else "observed mean outcome"
    kw = element_kw(style, "observed", {  # black and white: apart from the band's blue and vermillion
        "color": "0.1", "marker": "D", "markersize": 3.5, "markerfacecolor": "white",
        "linestyle": "none" if categorical else ":", "linewidth": 0.9, "zorder": 3.8})
    top.plot(x, rows["observed"].to_numpy(dtype=float), label=f"{what} per {'level' if categorical else 'bin'}", **kw)
    counts = rows["count"].to_numpy(dtype=float)
    bar = element_kw(style, "counts", {"color": "0.6", "edgecolor": "white", "linewidth": 0.5})
    if categorical:
        bottom.bar(x, counts, width=0.6, **bar)
    else:
        # bars over each bin within the grid's range (the open outer bins, which also hold the rows beyond
        # the grid, end at the first and last grid value, so the panel spans the PD's range)
        low = np.clip(rows["low"].to_numpy(dtype=float), x[0], x[-1])
        high = np.clip(rows["high"].to_numpy(dtype=float), x[0], x[-1])
        if len(x) == 1:
            low, high = x - 0.5, x + 0.5
        bottom.bar(low, counts, width=high - low, align="edge", **bar)
    bottom.set_ylabel("rows")
    bottom.set_xlabel(top.get_xlabel())
    top.set_xlabel("")
    top.tick_params(labelbottom=False)
    if legend:
        effect = "PD estimate" if "PD estimate" in top.get_legend_handles_labels()[1] else None
        handles, labels = legend_entries(top, effect)
        narrow = top.figure.get_figwidth() < 4.5  # one column on a single-column paper figure
        top.legend(handles, labels, **element_kw(style, "legend", {"fontsize": "small", "loc": "lower center",
                                                "bbox_to_anchor": (0.5, 1.0), "ncols": 1 if narrow else 2,
                                                "frameon": False, "borderaxespad": 0.2}))
    return np.array([top, bottom], dtype=object)


_COLOURS = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky_blue", "black")]


def plot_regional_pd(result: xr.DataTree, feature: str | None = None, *, ax: Any = None,
                     output: Hashable | None = None, centred: bool = False, legend: bool = True):
    """The PD of each region of a :func:`pdpboot.regional_partial_dependence` result with its band (after
    :func:`pdpboot.confidence_bands`); the legend gives each region's definition and share of rows, the
    title how often the refits chose the first split's feature.

    Parameters
    ----------
    result : xarray.DataTree
    feature : str, optional
        The node to draw (default: the first).
    ax : matplotlib Axes, optional
    output : optional
        The output to draw (default: the last, e.g. the positive class).
    centred : bool
        Draw ``pd_centered`` (each curve minus its value at the first grid point, as the regions' ICE
        heterogeneity sees them) instead of ``pd``.
    legend : bool

    Returns
    -------
    matplotlib.axes.Axes
    """
    nodes = [n for n in result.children.values() if n.attrs.get("effect") == "regional_pd"]
    if not nodes:
        raise ValueError("plot_regional_pd needs a result of pdpboot.regional_partial_dependence.")
    node = nodes[0] if feature is None else result[node_name([feature])]
    ds, name = node.to_dataset(), node.attrs["features"][0]
    ds = ds.sel(output=ds["output"].values[-1] if output is None else output)
    ax = new_ax(ax)
    x, var = ds[name].values, "pd_centered" if centred else "pd"
    if var not in ds:
        raise ValueError("centred=True draws pd_centered: add it with pdpboot.confidence_bands(result).")
    for r, region in enumerate(ds["region"].values):
        colour = _COLOURS[r % len(_COLOURS)]
        label = f"{region} ({float(ds['region_share'][r]):.0%} of rows)"
        ax.plot(x, ds[var].isel(region=r).values, color=colour, label=label, lw=1.8)
        if f"{var}_band" in ds:
            band = ds[f"{var}_band"].isel(region=r)
            ax.fill_between(x, band.sel(ci_bound="lower").values, band.sel(ci_bound="upper").values,
                            color=colour, alpha=0.25, lw=0)
    first = int(ds["split_feature"].values[0])
    if first >= 0:
        chosen = ds["split_frequency"].isel(split=0)
        top = str(chosen["candidate"].values[int(np.argmax(chosen.values))])
        ax.set_title(f"first split: {top} in {float(chosen.max()):.0%} of {ds.sizes['resample']} refits", fontsize=9)
    kind = "simultaneous" if f"{var}_band" in ds and ds[f"{var}_band"].attrs.get("simultaneous") else "pointwise"
    ax.set_xlabel(name)
    ax.set_ylabel(f"regional {'centred ' if centred else ''}PD{f' ({kind} band)' if f'{var}_band' in ds else ''}")
    if legend:
        ax.legend(fontsize=7, frameon=False)
    return ax
