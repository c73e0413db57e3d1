"""Grids of panels: :func:`plot_pd_panels` (1-D curves and 2-D surfaces of one result)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..schema import feature_nodes
from ._data import BandChoice, as_names, lookup, response_label, select_output
from ._style import contour_levels, legend_entries, pyplot
from .curves import plot_pd
from .surfaces import plot_pd_contour

__all__ = ["plot_pd_panels"]


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

    Like scikit-learn's ``PartialDependenceDisplay``, with bootstrap bands.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result.
    features : list of str or (str, str), optional
        Feature names and pairs to draw, in order; default: every node of the result.
    variable : str, default "pd"
        The effect drawn in every panel (``"pd"``, or ``"ale"`` for an ALE result), with its
        ``<variable>_band``.
    n_cols : int, default 3
        Panels per row.
    ax : matplotlib.axes.Axes or array-like of Axes, optional
        One Axes (split into the grid) or at least as many Axes as panels; default: a new figure.
    band, ice, centered, output : see :func:`plot_pd`
        Passed to every 1-D panel (``band`` and ``output`` also to the 2-D panels).
    share : bool, default True
        Give all 1-D panels the same y-limits (labelled once per row) and all
        2-D estimate panels the same colour levels, with one colour bar.
    legend : bool, default True
        One legend for the 1-D panels: above the grid on a new figure, else in the first panel.
    panel_kw : dict, optional
        ``"curve"``: keyword arguments of every :func:`plot_pd` (e.g.
        ``{"rug": False, "style": {"line": {"color": "k"}}}``); ``"surface"``:
        of every :func:`plot_pd_contour`; ``"size"``: (width, height) of one
        panel in inches for a new figure, default (2.6, 2.2).

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : numpy.ndarray of matplotlib.axes.Axes, shape (n_rows, n_cols)
        Row-major panels; unused trailing ones are hidden.

    See Also
    --------
    plot_pd : One 1-D curve with its band(s) and ICE curves.
    plot_pd_contour : One 2-D surface, its band bounds or its band width.
    pdpboot.confidence_bands : Adds the bands drawn here.

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
    surface_kw = dict(surface_style.get("surface") or {})
    if share and "levels" not in surface_kw:
        pairs = [s for s in sets if len(s) == 2]
        what = contour_plot_kw.get("what", "estimate")
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
        effect = "PD" if variable == "pd" else variable.upper()
        handles, labels = legend_entries(flat[one_d[0]], f"centred {effect} estimate" if centered
                                          else f"{effect} estimate")
        if ax is None and handles:
            fig.legend(handles, labels, loc="outside upper center", ncols=min(len(handles), 4),
                       fontsize="small", frameon=False)
        elif handles:
            flat[one_d[0]].legend(handles, labels, fontsize="small", framealpha=0.85)
    if share and len(one_d) > 1:
        lows, highs = zip(*(flat[i].get_ylim() for i in one_d), strict=True)
        for i in one_d:
            flat[i].set_ylim(min(lows), max(highs))
            left = i % n_cols > 0 and (i - 1) in one_d
            if left:
                flat[i].set_ylabel("")
                flat[i].tick_params(labelleft=False)
    return fig, axes


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
