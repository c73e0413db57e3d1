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
    CURVE_KINDS,
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
    legend: bool = True,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot a 1-D partial dependence curve with its bootstrap band and optional ICE curves.

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A pdpboot result, one of its feature nodes, or a node's Dataset, with
        ``pd`` (``output``, feature) and, if present, ``pd_band`` and
        ``pd_band_pointwise`` (``ci_bound``, ``output``, feature) and ``ice``.
    feature : str
        The feature name.
    variable : str, default "pd"
        The effect drawn: ``"pd"``, or any ``<name>`` with its ``<name>_band``
        (e.g. ``"ale"``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    band : bool or {"auto", "pointwise", "simultaneous"}, default "auto"
        "auto" draws every band present, True the same but requires one,
        "pointwise" / "simultaneous" only that band, False none.
    ice : bool or int, default False
        Draw the stored ICE curves: True for all, an int for a random subset
        of that size (the same subset on every call).
    centered : bool, default False
        Anchor ICE curves and the PD at the first grid value; the bands drawn
        are those of the change from there (``pd_centered_band``).
    rug : bool or array-like, default True
        Ticks at the deciles of the feature (True), at given values, or none.
    output : label, optional
        The output (class or target) to plot; default: the only output, or the
        positive class of a binary classifier.
    legend : bool, default True
        Add a legend (above the axes when ICE curves are drawn).
    scale : {"auto", "linear", "quantile"}, default "auto"
        The x-axis of a numeric feature: "quantile" spaces it by the data's
        deciles; "auto" does so for a strongly skewed feature
        (:func:`pdpboot.plotting.is_skewed`).
    style : dict, optional
        Matplotlib keywords per element, merged over the defaults: ``"line"``
        (the estimate), ``"band"``, ``"simultaneous"``, ``"ice"`` (a
        ``LineCollection``), ``"rug"`` and ``"legend"``; ``False`` leaves an
        element out.  ``{"line": {"kind": "bars"}}`` draws a categorical
        feature's estimate as bars (default ``"points"``),
        ``{"simultaneous": {"kind": "fill"}}`` the simultaneous band as a
        shaded region (default ``"lines"``: dashed bounds).

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

    style = check_style(style, CURVE_ELEMENTS, "plot_pd", CURVE_KINDS)
    if not element_on(style, "rug", True):
        rug = False
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
    kw = merge_kw({"colors": ICE_COLOR, "linewidths": 0.5, "alpha": 0.3, "zorder": 1.5}, ice_kw)
    what = "centred ICE" if centered else "ICE"
    kw.setdefault("label", f"{what} ({len(curves)} curves)")
    ax.add_collection(LineCollection(segments, **kw))
    ax.autoscale_view()
