"""Palette, :func:`paper_style` and the small drawing helpers every plot shares.

matplotlib is imported inside the functions, so importing this module does not import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

#: The Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "black": "#000000",
}
_MAIN = OKABE_ITO["blue"]
_ICE_COLOR = "0.45"
_RUG_LEN = 0.04  # rug tick length, in axes fraction


@contextlib.contextmanager
def paper_style(font_size: float = 8.0) -> Iterator[None]:
    """Context manager with matplotlib settings for single-column (3.3 in) paper figures.

    Smaller fonts, thinner spines, TrueType fonts embedded in PDF/PS output and 300 dpi raster
    output.  Use it around both drawing and saving::

        with pdpboot.plotting.paper_style():
            fig, ax = plt.subplots(figsize=(3.3, 2.4), layout="constrained")
            plot_pd(res, "temp", ax=ax)
            fig.savefig("temp.pdf")

    Parameters
    ----------
    font_size : float, default 8
        Base font size in points (tick and legend labels are one point smaller).

    Yields
    ------
    None

    See Also
    --------
    plot_pd_panels : Panel grids sized for a figure of several panels.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> with paper_style(font_size=7):
    ...     fig, ax = plt.subplots()
    >>> fig.get_size_inches().tolist()
    [3.3, 2.5]
    >>> plt.close(fig)
    """
    import matplotlib as mpl

    small = font_size - 1
    rc = {
        "font.size": font_size,
        "axes.labelsize": font_size,
        "axes.titlesize": font_size,
        "xtick.labelsize": small,
        "ytick.labelsize": small,
        "legend.fontsize": small,
        "legend.title_fontsize": small,
        "axes.linewidth": 0.6,
        "xtick.major.width": 0.6,
        "ytick.major.width": 0.6,
        "xtick.major.size": 2.5,
        "ytick.major.size": 2.5,
        "lines.linewidth": 1.2,
        "figure.figsize": (3.3, 2.5),
        "figure.dpi": 150,
        "savefig.dpi": 300,
        "pdf.fonttype": 42,
        "ps.fonttype": 42,
        "svg.fonttype": "none",
    }
    with mpl.rc_context(rc):
        yield


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def _new_ax(ax):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(layout="constrained")
    return ax


def _merge(defaults: Mapping, user: Mapping | None) -> dict:
    out = dict(defaults)
    if user:
        out.update(user)
    return out


def _stroke(linewidth: float = 1.6):
    """A white outline, to keep text and ticks readable on dark and light fills."""
    from matplotlib import patheffects

    return patheffects.withStroke(linewidth=linewidth, foreground="white")


def _positions(grid: np.ndarray, categorical: bool) -> np.ndarray:
    """Plot coordinates of a grid: 0, 1, ... for category levels, else the grid values."""
    return np.arange(len(grid), dtype=float) if categorical else np.asarray(grid, dtype=float)


def _draw_rug(ax, values: np.ndarray, axis: str, rug_kw: Mapping | None) -> None:
    if values.size == 0:
        return
    kw = _merge({"colors": "k", "linewidths": 0.8, "zorder": 3.5}, rug_kw)
    if axis == "x":
        ax.vlines(values, 0, _RUG_LEN, transform=ax.get_xaxis_transform(), **kw)
    else:
        ax.hlines(values, 0, _RUG_LEN, transform=ax.get_yaxis_transform(), **kw)


def _fewer_ticks(ax, axis: str, nbins: int = 5) -> None:
    """At most ``nbins`` intervals on a numeric axis of the default locator (narrow paper panels)."""
    from matplotlib.ticker import MaxNLocator

    locator = (ax.xaxis if axis == "x" else ax.yaxis).get_major_locator()
    if type(locator).__name__ == "AutoLocator" or type(locator) is MaxNLocator:
        ax.locator_params(axis=axis, nbins=nbins)


def _set_levels_axis(ax, axis: str, levels: Sequence) -> None:
    positions = np.arange(len(levels))
    labels = [str(v) for v in levels]
    if axis == "x":
        ax.set_xticks(positions, labels)
        ax.set_xlim(-0.5, len(levels) - 0.5)
        if max((len(s) for s in labels), default=0) * len(labels) > 40:
            ax.tick_params(axis="x", labelrotation=35)
            for text in ax.get_xticklabels():
                text.set_horizontalalignment("right")
    else:
        ax.set_yticks(positions, labels)
        ax.set_ylim(-0.5, len(levels) - 0.5)


def _legend_entries(ax, first: str | None = None) -> tuple[list, list]:
    handles, labels = ax.get_legend_handles_labels()
    if first in labels:  # the estimate first, then bands and ICE in drawing order
        i = labels.index(first)
        handles.insert(0, handles.pop(i))
        labels.insert(0, labels.pop(i))
    return handles, labels


def _draw_legend(ax, legend: bool, legend_kw: Mapping | None, first: str | None = None,
                 above: bool = False) -> None:
    """Legend inside the axes ("best" place), or in two columns above them (``above``)."""
    if not legend:
        return
    handles, labels = _legend_entries(ax, first)
    if not handles:
        return
    if above and not (legend_kw and "loc" in legend_kw):
        defaults = {"fontsize": "small", "loc": "lower center", "bbox_to_anchor": (0.5, 1.0), "ncols": 2,
                    "borderaxespad": 0.2, "frameon": False}
    else:
        defaults = {"fontsize": "small", "loc": "best", "framealpha": 0.85}
    ax.legend(handles, labels, **_merge(defaults, legend_kw))


MAX_LABEL = 18  # characters of a category label shown on an axis before it is abbreviated


def _overlap(boxes) -> bool:
    """Whether any two consecutive label boxes (in axis order) overlap or come closer than 4 pixels."""
    spans = sorted((b.x0, b.x1) for b in boxes if b.width > 0)
    return any(a1 + 4 > b0 for (_, a1), (b0, _) in zip(spans, spans[1:]))


def _shown_labels(ax) -> list:
    """The x tick labels actually drawn: visible, non-empty, at a tick inside the view limits."""
    low, high = sorted(ax.get_xlim())
    span = (high - low) * 1e-9
    return [t for t, loc in zip(ax.get_xticklabels(), ax.get_xticks())
            if t.get_visible() and t.get_text() and low - span <= loc <= high + span]


def tidy_ticks(fig) -> None:
    """Make every x tick label of ``fig`` readable, by its measured extent on the canvas.

    Numeric axes get fewer ticks until their labels no longer collide; category axes get long
    labels abbreviated (with "…"), then rotated, then only every k-th level labelled.  Call it
    last, right before saving (it draws the figure once to measure).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    See Also
    --------
    plot_pd_panels : Calls it on the figures it makes.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 1.5))
    >>> _ = ax.plot([10000, 90000], [0, 1])
    >>> tidy_ticks(fig)
    >>> plt.close(fig)
    """
    from matplotlib.ticker import FixedLocator, MaxNLocator

    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes:
        if not ax.get_visible() or not ax.xaxis.get_visible():
            continue
        categorical = isinstance(ax.xaxis.get_major_locator(), FixedLocator)
        labels = _shown_labels(ax)
        if not labels or not _overlap([t.get_window_extent(renderer) for t in labels]):
            continue
        if not categorical:
            for nbins in (4, 3, 2, 1):
                ax.xaxis.set_major_locator(MaxNLocator(nbins=nbins))
                fig.draw_without_rendering()
                shown = _shown_labels(ax)
                if not _overlap([t.get_window_extent(renderer) for t in shown]):
                    break
            continue
        locs = ax.get_xticks()
        names = [t.get_text() for t in ax.get_xticklabels()]
        names = [n if len(n) <= MAX_LABEL else n[: MAX_LABEL - 1] + "…" for n in names]
        ax.set_xticks(locs, names)
        ax.tick_params(axis="x", labelrotation=40)
        for text in ax.get_xticklabels():
            text.set_horizontalalignment("right")
            text.set_rotation_mode("anchor")
        # rotated labels clear each other when the ticks are a line height apart across the text:
        # spacing * sin(40 degrees) >= font height (in pixels), so label every step-th level
        positions = ax.transData.transform(np.column_stack([locs, np.zeros(len(locs))]))[:, 0]
        spacing = float(np.min(np.diff(np.sort(positions)))) if len(positions) > 1 else np.inf
        height = ax.get_xticklabels()[0].get_fontsize() * fig.dpi / 72 if names else 0.0
        step = max(1, int(np.ceil(1.15 * height / max(spacing * np.sin(np.radians(40)), 1e-9))))
        if step > 1:
            ax.set_xticks(locs, [n if k % step == 0 else "" for k, n in enumerate(names)])
            for text in ax.get_xticklabels():
                text.set_horizontalalignment("right")
                text.set_rotation_mode("anchor")
