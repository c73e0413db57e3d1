"""PDPbox-style target plots: :func:`plot_target` (the PD with its band, the observed outcome and the
rows per grid bin)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..heterogeneity import binned_outcome
from ._data import BandChoice, is_categorical, lookup, select_output
from ._style import check_style, element_kw, legend_entries, merge_kw, pyplot
from .curves import plot_pd

__all__ = ["plot_target"]


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

    PDPbox's target plot, with uncertainty: the upper panel draws the PD and its band and the mean
    of ``y`` per grid bin (a class share, for a classifier); the lower panel the rows per bin.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with a 1-D node of ``feature`` (bands added by
        :func:`pdpboot.confidence_bands` are drawn).
    X : pandas.DataFrame
        The rows to bin (usually the ones the result was computed on).
    y : array-like of shape (n_rows,)
        The observed outcome: numbers, or class labels of a classifier.
    feature : str
        The feature.
    output : label, optional
        The class or target drawn, as in :func:`plot_pd`.
    ax : pair of matplotlib.axes.Axes, optional
        The upper (PD, observed) and lower (counts) Axes; default: a new figure.
    band : bool or {"auto", "pointwise", "simultaneous"}, default "auto"
        As in :func:`plot_pd`.
    scale : {"auto", "linear", "quantile"}, default "auto"
        As in :func:`plot_pd` (both panels share the x-axis).
    legend : bool, default True
        Legend above the upper panel.
    style : dict, optional
        Matplotlib keywords for ``"observed"`` (``ax.plot`` of the observed means), ``"counts"``
        (``ax.bar``) and, as in :func:`plot_pd`, ``"line"``, ``"band"``, ``"simultaneous"``, ``"rug"``,
        ``"legend"``.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (2,)
        The upper Axes (x = the feature's grid, y = the response) and the lower one (y = rows per bin).

    See Also
    --------
    pdpboot.binned_outcome : The table drawn here (bins, counts, observed means).
    plot_pd : The upper panel alone.

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
    kw = merge_kw({"color": "0.1", "marker": "D", "markersize": 3.5, "markerfacecolor": "white",
                   "linestyle": "none" if categorical else ":", "linewidth": 0.9, "zorder": 3.8},
                  element_kw(style, "observed"))  # black and white: apart from the band's blue and vermillion
    top.plot(x, rows["observed"].to_numpy(dtype=float), label=f"{what} per {'level' if categorical else 'bin'}", **kw)
    counts = rows["count"].to_numpy(dtype=float)
    bar = merge_kw({"color": "0.6", "edgecolor": "white", "linewidth": 0.5}, element_kw(style, "counts"))
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
        top.legend(handles, labels, **merge_kw({"fontsize": "small", "loc": "lower center",
                                                "bbox_to_anchor": (0.5, 1.0), "ncols": 1 if narrow else 2,
                                                "frameon": False, "borderaxespad": 0.2},
                                               element_kw(style, "legend")))
    return np.array([top, bottom], dtype=object)
