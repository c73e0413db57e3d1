"""1-D curves: :func:`plot_pd` (PD with bands and ICE curves)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ._data import (
    BandChoice,
    array_of,
    as_names,
    curve_bands,
    deciles,
    is_categorical,
    lookup,
    response_label,
    select_output,
)
from ._scale import resolve_scale
from ._style import (
    CURVE_ELEMENTS,
    ICE_COLOR,
    QUANTILE_NOTE,
    check_style,
    draw_curve,
    draw_legend,
    element_kw,
    element_on,
    finish_x_axis,
    merge_kw,
    new_ax,
    tick_positions,
)

__all__ = ["plot_pd"]


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
    categorical_kind: Literal["points", "bars"] = "points",
    simultaneous_style: Literal["fill", "lines"] = "lines",
    legend: bool = True,
    rng: int | np.random.Generator | None = 0,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot a 1-D partial dependence curve with its bootstrap band and optional ICE curves.

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A pdpboot result (the node is looked up with :func:`pdpboot.schema.get_node`), one of its
        feature nodes, or a node's Dataset.  Uses ``pd`` (``output``, feature), ``pd_band``
        (``ci_bound``, ``output``, feature) and ``pd_band_pointwise`` if present (with
        ``centered=True``: ``pd_centered`` and its ``pd_centered_band``/``_band_pointwise``),
        ``ice`` (``instance``, ``output``, feature) if ICE is requested, and node attrs ``deciles``.
    feature : str
        The feature name.
    variable : str, default "pd"
        The effect drawn: ``"pd"``, or any ``<name>`` with its ``<name>_band`` (e.g. ``"ale"`` of an
        ALE result, drawn the same way; ``centered=True`` then uses ``<name>_centered`` if stored).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    band : bool or {"auto", "pointwise", "simultaneous"}, default "auto"
        "auto" draws every band present (pointwise darker, simultaneous lighter) and none if the
        result has no band; True does the same but raises if there is none; "pointwise" /
        "simultaneous" draw (and require) only that band; False draws none.
    ice : bool or int, default False
        Draw ICE curves: True for all kept instances, an int for a random subset of that size.
    centered : bool, default False
        Anchor ICE curves and the PD at the first grid value (like scikit-learn's
        ``centered=True``).  The PD drawn is ``pd_centered`` (PD minus its value at the first grid
        value) with its own bands ``pd_centered_band`` (and ``pd_centered_band_pointwise``), as
        stored on 1-D nodes by :func:`pdpboot.confidence_bands`: they show the uncertainty of the
        *change* from the first grid value (zero width there).  Only if the node has no
        ``pd_centered`` (e.g. a hand-built Dataset) are ``pd`` and its bands shifted by the PD at
        the first grid value instead; that band shows the uncertainty of the uncentred level,
        drawn relative to its start.
    rug : bool or array-like, default True
        True: ticks at the deciles of the feature's data (node attrs ``deciles``); an array: ticks
        at these data values; False: none.  Ignored for categorical features.
    output : label, optional
        The output (class or target) to plot.  Default: the only output, or the positive (last)
        class of a binary classifier; required otherwise.
    categorical_kind : {"points", "bars"}, default "points"
        How a categorical feature's levels are drawn (with intervals as vertical lines).
    simultaneous_style : {"fill", "lines"}, default "lines"
        The simultaneous band as dashed vermillion bounds (distinct from the shaded pointwise band)
        or as a light vermillion region.  Category levels always get intervals with caps, drawn
        above the ICE curves: pointwise solid, simultaneous dashed vermillion with wider caps.
    legend : bool, default True
        Add a legend saying what the line, band(s) and ICE curves are: inside the axes, or in two
        columns above them when ICE curves are drawn (``style={"legend": {"loc": ...}}`` overrides).
    rng : int, numpy.random.Generator or None, default 0
        Seed for picking the ICE subset (fixed by default so figures are reproducible).
    scale : {"auto", "linear", "quantile"}, default "auto"
        The x-axis of a numeric feature: "quantile" spaces it by the data's deciles (equal distances =
        equal shares of the rows; ticks at the deciles' values, labelled in the feature's units);
        "auto" does so for a strongly skewed feature (see :func:`pdpboot.plotting.is_skewed`: 5
        consecutive deciles within a tenth of the grid's range, e.g. rainfall with most days at 0),
        whose curve a linear axis would squeeze against one end; the x label then says
        "(quantile-spaced axis)".
    style : dict, optional
        Matplotlib keywords per drawn element, merged over the defaults: ``"line"`` (the estimate:
        ``ax.plot``, or ``ax.bar``), ``"band"`` and ``"simultaneous"`` (``ax.fill_between``, or
        ``ax.vlines`` for categorical features), ``"ice"`` (a ``LineCollection``; pass
        ``{"ice": {"rasterized": True}}`` to keep PDF/SVG files small with thousands of curves),
        ``"rug"`` (``ax.vlines``) and ``"legend"``.  ``False`` leaves an element out (e.g.
        ``{"rug": False}``).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on: x = the feature's grid (category levels as tick labels), y = the
        response (e.g. "Predicted Price", "P(class = 1)").

    See Also
    --------
    plot_pd_panels : Every feature of a result in a grid of panels.
    plot_heterogeneity : How much the ICE curves spread, with a band.
    pdpboot.confidence_bands : Adds the bands drawn here (``simultaneous=True`` for both kinds).

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
    if categorical_kind not in ("points", "bars"):
        raise ValueError(f"categorical_kind must be 'points' or 'bars'; got {categorical_kind!r}.")
    if simultaneous_style not in ("fill", "lines"):
        raise ValueError(f"simultaneous_style must be 'fill' or 'lines'; got {simultaneous_style!r}.")
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

    style = check_style(style, CURVE_ELEMENTS, "plot_pd")
    if not element_on(style, "rug", True):
        rug = False
    ax = new_ax(ax)
    if ice not in (False, None):  # 0 counts as False
        _draw_ice(ax, ds, name, x, ice, centered=centered, rng=rng, ice_kw=element_kw(style, "ice"))
    effect = "PD" if variable == "pd" else variable.upper()
    est_label = f"centred {effect} estimate" if centered else f"{effect} estimate"
    draw_curve(ax, x, est, bands, categorical=categorical, est_label=est_label,
                categorical_kind=categorical_kind, simultaneous_style=simultaneous_style,
                line_kw=element_kw(style, "line"), band_kw=element_kw(style, "band"),
                simultaneous_kw=element_kw(style, "simultaneous"))
    if "overlap" in ds.data_vars and var == "pd":  # the debiased estimator withholds bands where overlap is thin
        flagged = array_of(ds["overlap"], [name], "overlap") == 0
        if flagged.any():
            ax.plot(np.asarray(x)[flagged], est[flagged], "x", color="tab:red", ms=6, zorder=4,
                    label="thin overlap: no band")
    quantile = resolve_scale(scale, deciles(attrs, 0), grid, categorical) == "quantile"
    finish_x_axis(ax, grid, categorical, attrs, rug, element_kw(style, "rug"), quantile=quantile)
    response = response_label(attrs, label, n_outputs)
    ax.set_xlabel(f"{name} {QUANTILE_NOTE}" if quantile else name)
    if variable != "pd":
        response = f"{effect} of {response[0].lower()}{response[1:]}"
    ax.set_ylabel(f"{response} (centred)" if centered else response)
    draw_legend(ax, legend and element_on(style, "legend", True), element_kw(style, "legend"), first=est_label,
                above=ice not in (False, None))
    return ax


def _draw_ice(ax, ds: xr.Dataset, name: str, x: np.ndarray, ice: bool | int, *, centered: bool, rng,
              ice_kw: Mapping | None) -> None:
    from matplotlib.collections import LineCollection

    if "ice" not in ds.data_vars:
        raise ValueError(
            f"The node of {name!r} has no 'ice' variable; draw ICE curves of the fitted model now with "
            f"pdpboot.plot_ice(model, X, {name!r}, result=result), or run the bootstrap with "
            "statistics={'ice': <number of instances>} to keep them, or pass ice=False."
        )
    curves = array_of(ds["ice"], ["instance", name], "ice")
    n = curves.shape[0]
    if ice is not True:
        if isinstance(ice, bool) or not isinstance(ice, (int, np.integer)) or ice < 1:
            raise ValueError(f"ice must be False, True or a positive number of curves; got {ice!r}.")
        if ice < n:
            keep = np.sort(np.random.default_rng(rng).choice(n, size=int(ice), replace=False))
            curves = curves[keep]
    if centered:
        curves = curves - curves[:, :1]
    segments = np.stack([np.broadcast_to(x, curves.shape), curves], axis=-1)
    kw = merge_kw({"colors": ICE_COLOR, "linewidths": 0.5, "alpha": 0.3, "zorder": 1.5}, ice_kw)
    what = "centred ICE" if centered else "ICE"
    kw.setdefault("label", f"{what} ({len(curves)} curves)")
    ax.add_collection(LineCollection(segments, **kw))
    ax.autoscale_view()
