"""Palette, :func:`paper_style` and the drawing helpers every plot shares (curves, bands, rugs, axes, legends).

matplotlib is imported inside the functions, so importing this module does not import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from ._data import deciles
from ._scale import is_quantile_axis, use_quantile_axis

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
MAIN_COLOR = OKABE_ITO["blue"]
#: Elements of a 1-D curve plot that ``style=`` takes keywords for.
CURVE_ELEMENTS = ("line", "band", "simultaneous", "ice", "rug", "legend")
#: The ``"kind"`` entries a curve's elements take (the first is the default): how a categorical
#: feature's estimate and how the simultaneous band are drawn.
CURVE_KINDS = {"line": ("points", "bars"), "simultaneous": ("lines", "fill")}
#: Elements of a 2-D surface plot that ``style=`` takes keywords for.
SURFACE_ELEMENTS = ("surface", "lines", "labels", "colorbar", "hatch", "rug")
#: Appended to the label of a quantile-spaced axis.
QUANTILE_NOTE = "(quantile-spaced axis)"
ICE_COLOR = "0.45"
_RUG_LEN = 0.04  # rug tick length, in axes fraction


@contextlib.contextmanager
def paper_style(font_size: float = 8.0) -> Iterator[None]:
    """Context manager with matplotlib settings for single-column (3.3 in) paper figures.

    Smaller fonts, thinner spines, embedded TrueType fonts and 300 dpi raster output; use it around
    both drawing and saving.  ``font_size`` is the base size in points.

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


def pyplot():
    import matplotlib.pyplot as plt

    return plt


def new_ax(ax):
    if ax is not None:
        return ax
    _, ax = pyplot().subplots(layout="constrained")
    return ax


def merge_kw(defaults: Mapping, user: Mapping | None) -> dict:
    out = dict(defaults)
    if user:
        out.update(user)
    return out


def stroke(linewidth: float = 1.6):
    """A white outline, to keep text and ticks readable on dark and light fills."""
    from matplotlib import patheffects

    return patheffects.withStroke(linewidth=linewidth, foreground="white")


def tick_positions(grid: np.ndarray, categorical: bool) -> np.ndarray:
    """Plot coordinates of a grid: 0, 1, ... for category levels, else the grid values."""
    return np.arange(len(grid), dtype=float) if categorical else np.asarray(grid, dtype=float)


def draw_rug(ax, values: np.ndarray, axis: str, rug_kw: Mapping | None) -> None:
    if values.size == 0:
        return
    kw = merge_kw({"colors": "k", "linewidths": 0.8, "zorder": 3.5}, rug_kw)
    if axis == "x":
        ax.vlines(values, 0, _RUG_LEN, transform=ax.get_xaxis_transform(), **kw)
    else:
        ax.hlines(values, 0, _RUG_LEN, transform=ax.get_yaxis_transform(), **kw)


def fewer_ticks(ax, axis: str, nbins: int = 5) -> None:
    """At most ``nbins`` intervals on a numeric axis of the default locator (narrow paper panels)."""
    from matplotlib.ticker import MaxNLocator

    locator = (ax.xaxis if axis == "x" else ax.yaxis).get_major_locator()
    if type(locator).__name__ == "AutoLocator" or type(locator) is MaxNLocator:
        ax.locator_params(axis=axis, nbins=nbins)


def set_levels_axis(ax, axis: str, levels: Sequence) -> None:
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


def legend_entries(ax, first: str | None = None) -> tuple[list, list]:
    handles, labels = ax.get_legend_handles_labels()
    if first in labels:  # the estimate first, then bands and ICE in drawing order
        i = labels.index(first)
        handles.insert(0, handles.pop(i))
        labels.insert(0, labels.pop(i))
    return handles, labels


def draw_legend(ax, legend: bool, legend_kw: Mapping | None, first: str | None = None,
                 above: bool = False) -> None:
    """Legend inside the axes ("best" place), or in two columns above them (``above``)."""
    if not legend:
        return
    handles, labels = legend_entries(ax, first)
    if not handles:
        return
    if above and not (legend_kw and "loc" in legend_kw):
        defaults = {"fontsize": "small", "loc": "lower center", "bbox_to_anchor": (0.5, 1.0), "ncols": 2,
                    "borderaxespad": 0.2, "frameon": False}
    else:
        defaults = {"fontsize": "small", "loc": "best", "framealpha": 0.85}
    ax.legend(handles, labels, **merge_kw(defaults, legend_kw))


MAX_LABEL = 18  # characters of a category label shown on an axis before it is abbreviated


def labels_overlap(boxes, axis: str = "x", gap: float = 4.0) -> bool:
    """Whether any two consecutive label boxes (in ``axis`` order) overlap or come closer than ``gap`` pixels."""
    spans = sorted(((b.x0, b.x1) if axis == "x" else (b.y0, b.y1)) for b in boxes
                   if (b.width if axis == "x" else b.height) > 0)
    return any(a1 + gap > b0 for (_, a1), (b0, _) in zip(spans, spans[1:]))


def shown_labels(ax, axis: str = "x") -> list:
    """The tick labels of ``axis`` actually drawn: visible, non-empty, at a tick inside the view limits."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    span = (high - low) * 1e-9
    labels, ticks = ((ax.get_xticklabels(), ax.get_xticks()) if axis == "x"
                     else (ax.get_yticklabels(), ax.get_yticks()))
    return [t for t, loc in zip(labels, ticks) if t.get_visible() and t.get_text() and low - span <= loc <= high + span]


def tidy_ticks(fig) -> None:
    """Make every x tick label of ``fig`` readable, by its measured extent on the canvas.

    Numeric axes get fewer ticks until their labels no longer collide; category labels are
    abbreviated, rotated, made smaller, and the figure widened, so every level keeps its label;
    colliding contour labels are hidden.  Call it last, right before saving.

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
        if ax.get_visible() and is_quantile_axis(ax, "y"):
            thin_fixed_ticks(fig, ax, "y")
        if not ax.get_visible() or not ax.xaxis.get_visible():
            continue
        categorical = isinstance(ax.xaxis.get_major_locator(), FixedLocator)
        labels = shown_labels(ax)
        if not labels or not labels_overlap([t.get_window_extent(renderer) for t in labels]):
            continue
        if is_quantile_axis(ax, "x"):  # the data's decile values: keep a spaced-out subset
            thin_fixed_ticks(fig, ax, "x")
            continue
        if not categorical:
            for nbins in (4, 3, 2, 1):
                ax.xaxis.set_major_locator(MaxNLocator(nbins=nbins))
                fig.draw_without_rendering()
                shown = shown_labels(ax)
                if not labels_overlap([t.get_window_extent(renderer) for t in shown]):
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
        _fit_rotated_labels(fig, ax, locs)
    for ax in fig.axes:
        if (ax.get_visible() and ax.yaxis.get_visible() and ax.get_label() != "<colorbar>"
                and isinstance(ax.yaxis.get_major_locator(), FixedLocator)):
            _fit_level_labels_y(fig, ax)
    hide_overlapping_labels(fig)


def thin_fixed_ticks(fig, ax, axis: str) -> None:
    """Drop fixed ticks (greedily, in axis order, keeping the first) until their labels are 4 px apart."""
    from matplotlib.ticker import FixedLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    locs = np.sort(np.asarray(target.get_major_locator().locs, dtype=float))
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    labels = {float(loc): t for t, loc in zip(target.get_ticklabels(), target.get_ticklocs())}
    kept, last = [], None
    for loc in locs:
        text = labels.get(float(loc))
        if text is None:
            continue
        box = text.get_window_extent(renderer)
        span = (box.x0, box.x1) if axis == "x" else (box.y0, box.y1)
        if last is None or span[0] > last + 4:
            kept.append(loc)
            last = span[1]
    target.set_major_locator(FixedLocator(kept))


#: Smallest font (points) a crowded category axis shrinks its labels to before the figure widens.
MIN_LABEL_POINTS = 5.0


def _fit_rotated_labels(fig, ax, locs) -> None:
    """Every level keeps its label: rotated 40 degrees, then 90, then a smaller font, then a wider figure.

    Labels at 40 degrees clear each other when neighbouring ticks are a line height apart across the
    text (spacing * sin(40) >= 1.15 * font height, in pixels); vertical labels when the measured label
    boxes are 4 pixels apart (:func:`labels_overlap`).
    """
    renderer = fig.canvas.get_renderer()

    def spacing() -> float:
        positions = ax.transData.transform(np.column_stack([locs, np.zeros(len(locs))]))[:, 0]
        return float(np.min(np.diff(np.sort(positions)))) if len(positions) > 1 else np.inf

    def widest() -> float:
        fig.draw_without_rendering()
        return max((t.get_window_extent(renderer).width for t in shown_labels(ax)), default=0.0)

    texts = ax.get_xticklabels()
    if not texts or len(locs) < 2:
        return
    size = texts[0].get_fontsize()
    if spacing() * np.sin(np.radians(40)) >= 1.15 * size * fig.dpi / 72:
        return
    ax.tick_params(axis="x", labelrotation=90)
    for text in ax.get_xticklabels():  # the label's end at its tick, the text below the axes
        text.set_horizontalalignment("right")
        text.set_verticalalignment("center")
    width = widest()
    if spacing() >= width + 4:
        return
    size = max(MIN_LABEL_POINTS, size * (spacing() - 4) / max(width, 1e-9))
    ax.tick_params(axis="x", labelsize=size)
    for _ in range(3):  # still too many levels for the width: widen the figure (never drop a label)
        width = widest()
        if spacing() >= width + 4:
            return
        fig.set_figwidth(fig.get_figwidth() * (width + 4) / max(spacing(), 1e-9) * 1.05)


def _fit_level_labels_y(fig, ax) -> None:
    """Every level of a category y axis keeps its label: abbreviated, then a smaller font, then a taller figure."""
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()

    def crowded() -> bool:
        fig.draw_without_rendering()
        return labels_overlap([t.get_window_extent(renderer) for t in shown_labels(ax, "y")], "y", gap=1.0)

    if not shown_labels(ax, "y") or not crowded():
        return
    locs = ax.get_yticks()
    names = [t.get_text() for t in ax.get_yticklabels()]
    ax.set_yticks(locs, [n if len(n) <= MAX_LABEL else n[: MAX_LABEL - 1] + "…" for n in names])
    if not crowded() or len(locs) < 2:
        return
    positions = ax.transData.transform(np.column_stack([np.zeros(len(locs)), locs]))[:, 1]
    spacing = float(np.min(np.diff(np.sort(positions))))
    height = max(t.get_window_extent(renderer).height for t in shown_labels(ax, "y"))
    size = ax.get_yticklabels()[0].get_fontsize()
    ax.tick_params(axis="y", labelsize=max(MIN_LABEL_POINTS, size * (spacing - 1) / max(height, 1e-9)))
    for _ in range(3):  # still too many levels for the height: a taller figure (never drop a label)
        if not crowded():
            return
        positions = ax.transData.transform(np.column_stack([np.zeros(len(locs)), locs]))[:, 1]
        spacing = float(np.min(np.diff(np.sort(positions))))
        height = max(t.get_window_extent(renderer).height for t in shown_labels(ax, "y"))
        fig.set_figheight(fig.get_figheight() * (height + 1) / max(spacing, 1e-9) * 1.05)


def finish_x_axis(ax, grid: np.ndarray, categorical: bool, attrs: Mapping, rug, rug_kw: Mapping | None,
                  quantile: bool = False) -> None:
    """Category levels as x tick labels, or fewer numeric ticks (or a quantile-spaced axis) and the rug."""
    if categorical:
        set_levels_axis(ax, "x", grid)
        return
    if quantile:
        use_quantile_axis(ax, "x", deciles(attrs, 0), float(np.min(grid)), float(np.max(grid)))
    else:
        fewer_ticks(ax, "x")
    if rug is not False and rug is not None:
        values = deciles(attrs, 0) if rug is True else np.asarray(rug, dtype=float).ravel()
        draw_rug(ax, values, "x", rug_kw)


def draw_curve(ax, x: np.ndarray, est: np.ndarray, bands: list, *, categorical: bool, est_label: str,
               style: Mapping, simultaneous_kind: str = "lines") -> None:
    """Estimate as a line (numeric) or points/bars (categorical), bands as shaded regions/intervals."""
    line_kw, band_kw, simultaneous_kw = (element_kw(style, e) for e in ("line", "band", "simultaneous"))
    bars = categorical and element_kind(style, "line", "points") == "bars"
    simultaneous_style = element_kind(style, "simultaneous", simultaneous_kind)
    color = merge_kw({"color": MAIN_COLOR}, line_kw)["color"]
    for (lo, hi), sim, label in bands:
        if categorical:  # intervals with caps, above ICE curves; simultaneous: thinner, dashed, orange
            sim_color = OKABE_ITO["vermillion"]
            defaults = ({"colors": sim_color, "linewidths": 1.0, "linestyles": "--", "zorder": 3.4} if sim
                        else {"colors": "k" if bars else color, "linewidths": 1.8, "zorder": 3.5})
            kw = merge_kw(defaults, simultaneous_kw if sim else band_kw)
            ax.vlines(x, lo, hi, label=label, **kw)
            cap = 0.22 if sim else 0.14
            cap_kw = {k: v for k, v in kw.items() if k not in ("linestyles", "label")}
            ax.hlines(np.concatenate([lo, hi]), np.concatenate([x, x]) - cap, np.concatenate([x, x]) + cap,
                      **cap_kw)
        elif sim and simultaneous_style == "lines":
            kw = merge_kw({"color": OKABE_ITO["vermillion"], "linestyle": "--", "linewidth": 1.1, "zorder": 2.2},
                        simultaneous_kw)
            ax.plot(x, lo, label=label, **kw)
            ax.plot(x, hi, **{**kw, "label": "_nolegend_"})
        else:
            defaults = ({"color": OKABE_ITO["vermillion"], "alpha": 0.15, "linewidth": 0, "zorder": 1.9} if sim
                        else {"color": color, "alpha": 0.35, "linewidth": 0, "zorder": 2.0})
            ax.fill_between(x, lo, hi, label=label, **merge_kw(defaults, simultaneous_kw if sim else band_kw))
    if bars:
        kw = merge_kw({"color": OKABE_ITO["sky_blue"], "width": 0.6, "zorder": 2.0}, line_kw)
        ax.bar(x, est, label=est_label, **kw)
    elif categorical:
        kw = merge_kw({"color": color, "marker": "o", "linestyle": "none", "markersize": 5.5,
                     "markeredgecolor": "white", "markeredgewidth": 0.8, "zorder": 3.6}, line_kw)
        ax.plot(x, est, label=est_label, **kw)
    else:
        kw = merge_kw({"color": color, "linewidth": 2.0, "zorder": 3.0}, line_kw)
        ax.plot(x, est, label=est_label, **kw)


def contour_levels(zmin: float, zmax: float, levels: int) -> np.ndarray:
    from matplotlib.ticker import MaxNLocator

    if not np.isfinite(zmin) or not np.isfinite(zmax):
        raise ValueError("The surface has no finite values to draw.")
    if zmin == zmax:
        pad = abs(zmin) * 0.01 or 0.5
        return np.array([zmin - pad, zmax + pad])
    return MaxNLocator(levels + 1).tick_values(zmin, zmax)


# ----------------------------------------------------------------------------- style=


def check_style(style, elements: Sequence[str], where: str, kinds: Mapping[str, Sequence[str]] | None = None) -> dict:
    """``style`` as a dict: element -> dict of matplotlib keywords, or False (leave it out) / True / None.

    ``kinds`` names the elements whose dict may hold a ``"kind"`` entry, and its allowed values.
    """
    if style is None:
        return {}
    if not isinstance(style, Mapping):
        raise TypeError(f"{where}: style must be a dict of element -> dict of matplotlib keywords "
                        f"(elements: {', '.join(elements)}); got {type(style).__name__}.")
    unknown = [str(k) for k in style if k not in elements]
    if unknown:
        raise ValueError(f"{where}: style has no element(s) {unknown}; its elements are {', '.join(elements)}.")
    kinds = kinds or {}
    for key, value in style.items():
        if not (value is None or isinstance(value, (bool, Mapping))):
            raise TypeError(f"{where}: style[{key!r}] must be a dict of matplotlib keywords, True or False; "
                            f"got {type(value).__name__}.")
        if isinstance(value, Mapping) and "kind" in value and value["kind"] not in kinds.get(key, ()):
            allowed = f"one of {list(kinds[key])}" if key in kinds else "not allowed"
            raise ValueError(f"{where}: style[{key!r}]['kind'] is {allowed}; got {value['kind']!r}.")
    return dict(style)


def element_kw(style: Mapping, element: str) -> Mapping | None:
    """The matplotlib keywords given for one element (None when it has none; its ``"kind"`` left out)."""
    value = style.get(element)
    if not isinstance(value, Mapping):
        return None
    return {k: v for k, v in value.items() if k != "kind"}


def element_kind(style: Mapping, element: str, default: str) -> str:
    """How an element is drawn: its ``"kind"`` entry, else ``default``."""
    value = style.get(element)
    return value.get("kind", default) if isinstance(value, Mapping) else default


def element_on(style: Mapping, element: str, default: bool) -> bool:
    """Whether an element is drawn: False leaves it out, True or a dict draws it, None keeps ``default``."""
    value = style.get(element)
    return default if value is None else value is not False


# ----------------------------------------------------------------------------- contour labels that never overlap

LABEL_PAD = 2.0  # pixels kept free around every contour label


def _label_box(text, renderer):
    box = text.get_window_extent(renderer)
    return box.expanded(1.0, 1.0).padded(LABEL_PAD)


def label_contours(ax, lines, levels, kw: Mapping) -> list:
    """Label contour lines where the labels neither overlap each other nor leave the axes.

    matplotlib's ``clabel`` puts one label on every piece of every line, so lines crowded into a
    strip get labels piled on each other.  The candidates are first drawn without breaking the
    lines (after the figure's layout is done), measured, and kept greedily - the first of two
    colliding labels stays, a label reaching out of the axes goes; the kept positions are then
    labelled for good (``manual=``, lines broken under the labels), with a white outline.
    """
    fig = ax.figure
    kw = dict(kw)
    inline = kw.pop("inline", True)
    kw.pop("manual", None)
    probe = ax.clabel(lines, levels, inline=False, **kw)
    if not probe:
        return []
    fig.draw_without_rendering()  # the final layout (constrained layout, colour bar) before measuring
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    kept, boxes = [], []
    for text in probe:
        box = _label_box(text, renderer)
        inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1)
        if inside and not any(box.overlaps(other) for other in boxes):
            boxes.append(box)
            kept.append(text.get_position())
    while lines.labelTexts:
        lines.pop_label()
    if not kept:
        return []
    texts = ax.clabel(lines, levels, inline=inline, manual=kept, **kw)
    for text in texts:  # readable on dark and light fills
        text.set_path_effects([stroke()])
    return texts


def hide_overlapping_labels(fig) -> None:
    """Hide contour labels of ``fig`` that overlap an earlier one or leave their axes (after a layout change)."""
    from matplotlib.contour import ContourSet

    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        boxes = []
        for artist in ax.get_children():
            if not isinstance(artist, ContourSet):
                continue
            for text in artist.labelTexts:
                if not text.get_visible():
                    continue
                box = _label_box(text, renderer)
                inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
                if not inside or any(box.overlaps(other) for other in boxes):
                    text.set_visible(False)
                else:
                    boxes.append(box)
