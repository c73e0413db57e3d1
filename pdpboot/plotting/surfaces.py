"""2-D surfaces: :func:`plot_pd_contour` (contours or heatmaps, band width, hatching) and :func:`plot_pd_panels`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..schema import feature_deciles, feature_nodes, get_node, is_categorical
from ._common import (
    QUANTILE_NOTE,
    BandChoice,
    array_of,
    as_names,
    band_bounds,
    check_style,
    contour_levels,
    draw_rug,
    element_kw,
    element_on,
    fewer_ticks,
    find_bands,
    label_contours,
    legend_entries,
    lookup,
    new_ax,
    pyplot,
    resolve_scale,
    response_label,
    select_output,
    set_levels_axis,
    stroke,
    tick_positions,
    use_quantile_axis,
)
from .curves import plot_pd

__all__ = ["plot_pd_contour", "plot_pd_panels"]


def plot_pd_contour(
    result: Any,
    pair: Sequence[Hashable],
    *,
    variable: str = "pd",
    ax: Any = None,
    what: Literal["estimate", "width", "lower", "upper"] = "estimate",
    band: Literal["auto", "pointwise", "simultaneous"] = "auto",
    output: Hashable | None = None,
    mark: Literal["hatch", "mask"] | None = None,
    reference: Literal["additive", "zero"] = "additive",
    rug: bool = True,
    scale: Literal["auto", "linear", "quantile"] = "auto",
    style: Mapping[str, Mapping | bool] | None = None,
):
    """Plot a 2-D partial dependence surface, its band bounds or its band width.

    Numeric pairs as filled contours with labelled contour lines; pairs with a categorical feature
    as heatmaps (categorical x categorical cells annotated with values).

    Parameters
    ----------
    result : xarray.DataTree or xarray.Dataset
        A pdpboot result, the pair's node, or its Dataset.
    pair : (str, str)
        The two feature names; the first goes on the x-axis.
    variable : str, default "pd"
        The effect drawn, with its ``<variable>_band``: ``"pd"``, or ``"ale"`` (a second-order ALE
        surface, on a diverging colour map).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made if omitted.
    what : {"estimate", "width", "lower", "upper"}, default "estimate"
        The surface, the width of its band, or a bound.
    band : {"auto", "pointwise", "simultaneous"}, default "auto"
        Which band ``what`` and ``mark`` use; "auto" takes ``pd_band``.
    output : label, optional
        As in :func:`plot_pd`.
    mark : {"hatch", "mask"}, optional
        Hatch (or leave blank) the cells whose band contains the ``reference``.
    reference : {"additive", "zero"}, default "additive"
        "additive": the no-interaction surface from the 1-D PDs (or the surface's margins), matched
        to the surface's mean; "zero": 0.
    rug : bool, default True
        Decile ticks of numeric features on both axes.
    scale : {"auto", "linear", "quantile"}, default "auto"
        As in :func:`plot_pd`, for each numeric axis.
    style : dict, optional
        Matplotlib keywords per element, merged over the defaults: ``"surface"`` (``contourf`` or
        ``pcolormesh``; ``levels``: a number, default 8, or the levels; ``cmap``), ``"lines"``,
        ``"labels"`` (contour or cell labels; True forces them on), ``"colorbar"``, ``"hatch"`` and
        ``"rug"``; ``False`` leaves an element out.

    Returns
    -------
    matplotlib.axes.Axes
        x = ``pair[0]``'s grid, y = ``pair[1]``'s grid, colour = ``what``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> y = X["a"] * X["b"] + rng.normal(size=60)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [("a", "b")], n_resamples=5,
    ...                                            grid=pdpboot.Grid(5), rng=0)
    >>> ax = pdpboot.plot_pd_contour(pdpboot.confidence_bands(res), ("a", "b"), what="width")
    >>> ax.get_ylabel()
    'b'
    """
    names = as_names(pair)
    _check_contour_options(names, what, mark, reference)
    ds, attrs, root = lookup(result, names)
    if variable not in ds.data_vars:
        raise ValueError(f"The node of {tuple(names)} has no {variable!r} variable; is it a pdpboot result? "
                         f"Variables: {sorted(map(str, ds.data_vars))[:12]}.")
    ds, label, n_outputs = select_output(ds, attrs, output)
    surface = array_of(ds[variable], names, variable)
    style = check_style(style, ("surface", "lines", "labels", "colorbar", "hatch", "rug"), "plot_pd_contour")
    surface_kw = element_kw(style, "surface")
    levels = surface_kw.pop("levels", 8)
    cmap = surface_kw.pop("cmap", None)
    band_label = ""
    values = {"estimate": surface}
    if what != "estimate" or mark is not None:
        lower, upper, band_label = _chosen_band(ds, attrs, variable, names, band)
        values.update(width=upper - lower, lower=lower, upper=upper)
    z = values[what]
    ale = variable == "ale" or attrs.get("effect") == "ale"
    cbar_label = _colorbar_label(response_label(attrs, label, n_outputs), variable, ale, band_label, what)
    flagged = None
    if mark is not None:
        ref = (_additive_reference(ds, root, names, label, attrs, surface, variable) if reference == "additive"
               else np.zeros_like(surface))
        flagged = (lower <= ref) & (ref <= upper)

    cat = [is_categorical(ds, attrs, n, i) for i, n in enumerate(names)]
    grids = [ds[n].values for n in names]
    quantile = [resolve_scale(scale, feature_deciles(attrs, i), g, c) == "quantile"
                for i, (g, c) in enumerate(zip(grids, cat, strict=True))]
    labels_value = style.get("labels")
    labels_on = labels_value if isinstance(labels_value, bool) else None
    axes_pos = [tick_positions(g, c) for g, c in zip(grids, cat, strict=True)]
    diverging = ale and what != "width"  # a zero-mean surface: a diverging map with white at 0
    level_values = _level_values(levels, z, diverging)
    cmap = cmap or ("magma_r" if what == "width" else "RdBu_r" if diverging else "viridis")

    ax = new_ax(ax)
    zz = z.T  # rows = y = names[1]
    show = np.ma.masked_array(zz, mask=flagged.T) if (mark == "mask" and flagged is not None) else zz
    mappable, lines = _draw_surface(ax, axes_pos, show, level_values, cmap, cat, labels_on, style, surface_kw,
                                    discrete=not isinstance(levels, (int, np.integer)))
    if flagged is not None:
        what_ref = "additive surface" if reference == "additive" else "0"
        _draw_flags(ax, axes_pos, flagged.T, cat, mark, f"band contains {what_ref}", element_kw(style, "hatch"))
    _surface_axes(ax, names, grids, cat, quantile, attrs, rug and element_on(style, "rug", True), style)
    if element_on(style, "colorbar", True):
        cbar = ax.figure.colorbar(mappable, ax=ax, **element_kw(style, "colorbar", {"label": cbar_label}))
        cbar.ax.tick_params(labelsize="small")
    if lines is not None and (what != "width" if labels_on is None else labels_on) and len(lines.levels):
        label_contours(ax, lines, lines.levels[::2],
                       element_kw(style, "labels", {"fontsize": "x-small", "fmt": "{:.3g}".format}))
    return ax


def _check_contour_options(names: list, what: str, mark: str | None, reference: str) -> None:
    """The argument checks of :func:`plot_pd_contour` that need no data."""
    if len(names) != 2:
        raise ValueError(f"plot_pd_contour needs a pair of features; got {tuple(names)} - use plot_pd.")
    if what not in ("estimate", "width", "lower", "upper"):
        raise ValueError(f"what must be 'estimate', 'width', 'lower' or 'upper'; got {what!r}.")
    if mark not in (None, "hatch", "mask"):
        raise ValueError(f"mark must be None, 'hatch' or 'mask'; got {mark!r}.")
    if reference not in ("additive", "zero"):
        raise ValueError(f"reference must be 'additive' or 'zero'; got {reference!r}.")


def _chosen_band(ds: xr.Dataset, attrs: Mapping, variable: str, names: list,
                 band: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The lower and upper bounds (rows = names[0]) and the label of the band ``band`` picks."""
    if band not in ("auto", "pointwise", "simultaneous"):
        raise ValueError(f"band must be 'auto', 'pointwise' or 'simultaneous'; got {band!r}.")
    bands = find_bands(ds, attrs, variable, True if band == "auto" else band)
    stored = [b for b in bands if b[0].name == f"{variable}_band"]  # "auto": the band as stored
    band_da, _, band_label = stored[0] if (band == "auto" and stored) else bands[0]
    lower, upper = band_bounds(band_da, names)
    return lower, upper, band_label


def _colorbar_label(response: str, variable: str, ale: bool, band_label: str, what: str) -> str:
    """The colour bar's label: the response, or the band's width or bound of it."""
    short_band = band_label.split(",")[0]
    of_response = f"{response[0].lower()}{response[1:]}"
    if ale:  # the second-order ALE: the pure interaction of the pair, centred at 0
        response = f"ALE (pure interaction)\nof {of_response}"
        of_response = f"2-D ALE of {of_response}"
    elif variable != "pd":
        response = of_response = f"{variable.upper()} of {of_response}"
    else:
        of_response = response
    return {"estimate": response, "width": f"Width of {short_band}\n({of_response})",
            "lower": f"Lower bound, {short_band}\n({of_response})",
            "upper": f"Upper bound, {short_band}\n({of_response})"}[what]


def _level_values(levels: Any, z: np.ndarray, diverging: bool) -> np.ndarray:
    """Colour levels: ``levels`` nice steps over z's range (symmetric about 0 if diverging), or as given."""
    if not isinstance(levels, (int, np.integer)):
        return np.asarray(levels, dtype=float)
    if diverging:
        top = float(np.nanmax(np.abs(z)))
        return contour_levels(-top, top, int(levels)) if top > 0 else np.array([-0.5, 0.5])
    return contour_levels(float(np.nanmin(z)), float(np.nanmax(z)), int(levels))


def _draw_surface(ax, pos, show, level_values, cmap, cat, labels_on, style, surface_kw, discrete):
    """A heatmap if a feature is categorical, else filled contours and contour lines; (mappable, lines)."""
    if any(cat):
        return _draw_heatmap(ax, pos, show, level_values, cmap, cat, labels_on, style, surface_kw, discrete), None
    kw = {"levels": level_values, "cmap": cmap, "extend": "neither", **surface_kw}
    mappable = ax.contourf(pos[0], pos[1], show, **kw)
    line_kw = element_kw(style, "lines", {"levels": mappable.levels, "colors": "k", "linewidths": 0.5,
                                          "alpha": 0.6})
    lines = ax.contour(pos[0], pos[1], show, **line_kw) if element_on(style, "lines", True) else None
    return mappable, lines


def _surface_axes(ax, names, grids, cat, quantile, attrs, rug: bool, style) -> None:
    """Ticks (levels, quantile or linear), rugs and labels of both axes of a surface."""
    for i, c in enumerate(cat):
        if c:
            set_levels_axis(ax, "xy"[i], grids[i])
            continue
        if quantile[i]:
            use_quantile_axis(ax, "xy"[i], feature_deciles(attrs, i), float(np.min(grids[i])), float(np.max(grids[i])))
        else:
            fewer_ticks(ax, "xy"[i], nbins=4)
        if rug:
            draw_rug(ax, feature_deciles(attrs, i), "xy"[i], element_kw(style, "rug", {"path_effects": [stroke(2.2)]}))
    ax.set_xlabel(f"{names[0]} {QUANTILE_NOTE}" if quantile[0] else names[0])
    ax.set_ylabel(f"{names[1]} {QUANTILE_NOTE}" if quantile[1] else names[1])


def _additive_reference(ds: xr.Dataset, root: xr.DataTree | None, names: list[str], label: Any,
                        attrs: Mapping, surface: np.ndarray, variable: str = "pd") -> np.ndarray:
    """PD_a(x_a) + PD_b(x_b) - c on the surface's grid (rows = names[0]), from 1-D nodes if present.

    c makes the additive surface's grid mean equal the 2-D surface's grid mean; without 1-D nodes
    the margins are the surface's own row/column means (its best additive approximation).
    """
    margins = []
    if root is not None:
        for name in names:
            try:
                node = get_node(root, name)
            except KeyError:
                break
            one = node.to_dataset()
            if variable not in one.data_vars or not np.array_equal(one[name].values, ds[name].values):
                break
            one, _, _ = select_output(one, attrs, label) if "output" in one.dims else (one, None, 1)
            margins.append(array_of(one[variable], [name], variable))
    if len(margins) != 2:
        margins = [surface.mean(axis=1), surface.mean(axis=0)]
    additive = margins[0][:, None] + margins[1][None, :]
    return additive - additive.mean() + surface.mean()


def _edges(values: np.ndarray) -> np.ndarray:
    if len(values) == 1:
        return np.array([values[0] - 0.5, values[0] + 0.5])
    mid = (values[1:] + values[:-1]) / 2
    return np.concatenate([[2 * values[0] - mid[0]], mid, [2 * values[-1] - mid[-1]]])


def _cell_edges(pos, cat) -> list[np.ndarray]:
    """Heatmap cell edges per axis: unit cells around level positions, midpoints between numbers."""
    return [np.arange(len(p) + 1) - 0.5 if c else _edges(p) for p, c in zip(pos, cat)]


def _draw_heatmap(ax, pos, z, level_values, cmap, cat, annotate, style, surface_kw, discrete):
    x_edges, y_edges = _cell_edges(pos, cat)
    if discrete:  # the same colour steps as filled contours drawn with these levels
        from matplotlib import colormaps
        from matplotlib.colors import BoundaryNorm

        colormap = colormaps[cmap] if isinstance(cmap, str) else cmap
        scale = {"norm": BoundaryNorm(level_values, ncolors=colormap.N)}
    else:
        scale = {"vmin": level_values[0], "vmax": level_values[-1]}
    kw = {"cmap": cmap, "shading": "flat", **scale, **surface_kw}
    mesh = ax.pcolormesh(x_edges, y_edges, z, **kw)
    n_cells = z.shape[0] * z.shape[1]
    if annotate is None:
        annotate = all(cat) and n_cells <= 49
    if annotate:
        norm, colormap = mesh.norm, mesh.get_cmap()
        for (j, i), value in np.ndenumerate(np.ma.filled(z, np.nan)):
            if not np.isfinite(value):
                continue
            r, g, b, _ = colormap(norm(value))
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            ax.text(pos[0][i], pos[1][j], f"{value:.3g}", **element_kw(
                style, "labels", {"ha": "center", "va": "center", "fontsize": "x-small",
                                  "color": "white" if dark else "black"}))
    return mesh


def _draw_flags(ax, pos, flagged, cat, mark: str, label: str, hatch_kw: Mapping | None) -> None:
    from matplotlib.patches import Patch, Rectangle

    if mark == "hatch":
        kw = {"hatch": "//", "edgecolor": "white", "linewidth": 0, "hatch_linewidth": 0.6, **hatch_kw}
        hatch_lw = kw.pop("hatch_linewidth")
        if any(cat):  # a heatmap: hatch exactly its cells
            x_edges, y_edges = _cell_edges(pos, cat)
            for j, i in zip(*np.nonzero(flagged), strict=True):
                patch = Rectangle((x_edges[i], y_edges[j]), x_edges[i + 1] - x_edges[i], y_edges[j + 1] - y_edges[j],
                                  facecolor="none", **kw)
                _set_hatch_linewidth(patch, hatch_lw)
                ax.add_patch(patch)
        else:
            hatched = ax.contourf(pos[0], pos[1], flagged.astype(float), levels=[0.5, 1.5], colors="none",
                                  hatches=[kw["hatch"]])
            hatched.set_edgecolor(kw["edgecolor"])  # the hatch colour follows the edge colour
            hatched.set_linewidth(0)
            _set_hatch_linewidth(hatched, hatch_lw)
        handle = Patch(facecolor="0.35", hatch=kw["hatch"], edgecolor=kw["edgecolor"], label=label)
    else:
        handle = Patch(facecolor="white", edgecolor="0.5", linewidth=0.6, label=f"blank: {label}")
    ax.legend(handles=[handle], fontsize="x-small", loc="lower left", bbox_to_anchor=(0.0, 1.01),
              borderaxespad=0.0, frameon=False)


def _set_hatch_linewidth(artist, linewidth: float) -> None:
    if hasattr(artist, "set_hatch_linewidth"):  # matplotlib >= 3.10; older versions use the rcParam
        artist.set_hatch_linewidth(linewidth)


def plot_pd_panels(
    result: xr.DataTree,
    features: Sequence[Hashable | Sequence[Hashable]] | None = None,
    *,
    variable: str = "pd",
    n_cols: int = 3,
    ax: Any = None,
    band: BandChoice = "auto",
    ice: bool | int = False,
    centered: bool = False,
    output: Hashable | None = None,
    share: bool = True,
    legend: bool = True,
    panel_kw: Mapping[str, Any] | None = None,
):
    """Plot a grid of panels: 1-D PD curves with bands and 2-D PD contours.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result.
    features : list of str or (str, str), optional
        Feature names and pairs to draw, in order; default: every node of the result.
    variable : str, default "pd"
        The effect drawn in every panel, with its ``<variable>_band``.
    n_cols : int, default 3
        Panels per row.
    ax : matplotlib.axes.Axes or array-like of Axes, optional
        One Axes (split into the grid) or at least as many Axes as panels; default: a new figure.
    band, ice, centered, output : see :func:`plot_pd`
        Passed to every 1-D panel (``band`` and ``output`` also to the 2-D panels).
    share : bool, default True
        The same y-limits for all 1-D panels (labelled once per row) and the same colour levels
        for all 2-D estimate panels, with one colour bar.
    legend : bool, default True
        One legend for the 1-D panels: above the grid on a new figure, else in the first panel.
    panel_kw : dict, optional
        ``"curve"``: keywords of every :func:`plot_pd`; ``"surface"``: of every
        :func:`plot_pd_contour`; ``"size"``: (width, height) of a panel in inches, default (2.6, 2.2).

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : numpy.ndarray of matplotlib.axes.Axes, shape (n_rows, n_cols)
        Row-major panels; unused trailing ones are hidden.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> import pdpboot
    >>> from pdpboot.plotting import plot_pd_panels
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    >>> y = X["a"] - 2 * X["b"] + rng.normal(size=60)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=5,
    ...                                            grid=pdpboot.Grid(5), rng=0)
    >>> fig, axes = plot_pd_panels(pdpboot.confidence_bands(res))
    >>> axes.shape
    (1, 2)
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError("plot_pd_panels needs a whole pdpboot result (an xarray.DataTree).")
    if not isinstance(n_cols, (int, np.integer)) or n_cols < 1:
        raise ValueError(f"n_cols must be a positive integer; got {n_cols!r}.")
    if features is None:
        sets = [as_names(node.attrs["features"]) for node in feature_nodes(result)]
    else:
        sets = [as_names(f) for f in features]
    if not sets:
        raise ValueError("The result has no feature nodes to plot.")
    n = len(sets)
    n_cols = min(int(n_cols), n)
    n_rows = -(-n // n_cols)
    panel_kw = dict(panel_kw or {})
    unknown = sorted(set(map(str, panel_kw)) - {"curve", "surface", "size"})
    if unknown:
        raise ValueError(f"plot_pd_panels: panel_kw has no key(s) {unknown}; use 'curve' (for plot_pd), "
                         "'surface' (for plot_pd_contour) or 'size'.")
    fig, axes = _grid_axes(ax, n_rows, n_cols, n, panel_kw.get("size", (2.6, 2.2)))
    pd_kw = dict(panel_kw.get("curve") or {})
    contour_plot_kw = dict(panel_kw.get("surface") or {})
    surface_style = dict(contour_plot_kw.pop("style", None) or {})
    shared_bar = _share_surface_levels(result, sets, surface_style, contour_plot_kw.get("what", "estimate"),
                                       variable, output, share)
    flat = axes.ravel()
    one_d, two_d = [], []
    for i, s in enumerate(sets):
        if len(s) == 1:
            plot_pd(result, s[0], variable=variable, ax=flat[i], band=band, ice=ice, centered=centered,
                    output=output, legend=False, **pd_kw)
            one_d.append(i)
        elif len(s) == 2:
            plot_pd_contour(result, tuple(s), variable=variable, ax=flat[i],
                            band="auto" if band in (True, False) else band,
                            output=output, style=surface_style or None, **contour_plot_kw)
            two_d.append(i)
        else:
            raise ValueError(f"Can only plot 1-D and 2-D feature sets; got {tuple(s)}.")
    for extra in flat[n:]:
        extra.set_visible(False)
    if shared_bar and two_d:
        mappable = next(c for c in flat[two_d[0]].collections if hasattr(c, "get_cmap"))
        ds, attrs, _ = lookup(result, sets[two_d[0]])
        _, label, n_outputs = select_output(ds, attrs, output)
        fig.colorbar(mappable, ax=[flat[i] for i in two_d], label=response_label(attrs, label, n_outputs))
    if legend and one_d:
        _panels_legend(fig, flat[one_d[0]], variable, centered, on_figure=ax is None)
    if share and len(one_d) > 1:
        _share_curve_ylims(flat, one_d, n_cols)
    return fig, axes


def _share_surface_levels(result: xr.DataTree, sets: list, surface_style: dict, what: str, variable: str,
                          output: Hashable | None, share: bool) -> bool:
    """Set one set of colour levels for 2-D estimate panels in ``surface_style`` (in place) if ``share``.

    Returns whether the panels get one shared colour bar (then their own colour bars are turned off).
    """
    surface_kw = dict(surface_style.get("surface") or {})
    if share and "levels" not in surface_kw:
        pairs = [s for s in sets if len(s) == 2]
        if len(pairs) > 1 and what == "estimate":
            ranges = []
            for s in pairs:
                ds, attrs, _ = lookup(result, s)
                ds, _, _ = select_output(ds, attrs, output)
                ranges.append((float(ds[variable].min()), float(ds[variable].max())))
            lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
            surface_kw["levels"] = contour_levels(lo, hi, 8)
            surface_style["surface"] = surface_kw
    shared_bar = "levels" in surface_kw and "colorbar" not in surface_style
    if shared_bar:
        surface_style["colorbar"] = False
    return shared_bar


def _panels_legend(fig, first_ax, variable: str, centered: bool, on_figure: bool) -> None:
    """One legend for the 1-D panels, from the first: above the grid on a new figure, else in that panel."""
    effect = "PD" if variable == "pd" else variable.upper()
    handles, labels = legend_entries(first_ax, f"centred {effect} estimate" if centered else f"{effect} estimate")
    if on_figure and handles:
        fig.legend(handles, labels, loc="outside upper center", ncols=min(len(handles), 4),
                   fontsize="small", frameon=False)
    elif handles:
        first_ax.legend(handles, labels, fontsize="small", framealpha=0.85)


def _share_curve_ylims(flat, one_d: list[int], n_cols: int) -> None:
    """The same y-limits for the 1-D panels; y labels and tick labels only left of a row's run of them."""
    lows, highs = zip(*(flat[i].get_ylim() for i in one_d), strict=True)
    for i in one_d:
        flat[i].set_ylim(min(lows), max(highs))
        left = i % n_cols > 0 and (i - 1) in one_d
        if left:
            flat[i].set_ylabel("")
            flat[i].tick_params(labelleft=False)


def _grid_axes(ax, n_rows: int, n_cols: int, n: int, panel_size):
    plt = pyplot()
    if ax is None:
        fig, axes = plt.subplots(n_rows, n_cols, figsize=(panel_size[0] * n_cols, panel_size[1] * n_rows),
                                 layout="constrained", squeeze=False)
        return fig, axes
    if hasattr(ax, "get_subplotspec") and not isinstance(ax, np.ndarray):
        fig = ax.figure
        spec = ax.get_subplotspec().subgridspec(n_rows, n_cols)
        ax.remove()
        axes = np.empty((n_rows, n_cols), dtype=object)
        for r in range(n_rows):
            for c in range(n_cols):
                axes[r, c] = fig.add_subplot(spec[r, c])
        return fig, axes
    given = np.asarray(ax, dtype=object)
    if given.size < n:
        raise ValueError(f"ax has {given.size} Axes but {n} panels are needed.")
    axes = given.reshape(1, -1) if given.ndim == 1 else given.reshape(given.shape[0], -1)
    return axes.ravel()[0].figure, axes
