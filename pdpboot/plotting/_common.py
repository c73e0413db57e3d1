"""What every plot shares: reading a result (node, output, labels, bands), quantile-spaced axes for
skewed features, the palette, :func:`paper_style`, ``style=`` and the drawing helpers.

matplotlib is imported inside the functions, so importing this module does not import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ..schema import feature_deciles, get_node

BandChoice = bool | Literal["auto", "pointwise", "simultaneous"]
#: The Okabe-Ito colour-blind-safe palette.
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "sky_blue": "#56B4E9", "green": "#009E73",
             "yellow": "#F0E442", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000"}
#: Appended to the label of a quantile-spaced axis.
QUANTILE_NOTE = "(quantile-spaced axis)"
#: The ``"kind"`` entries a curve's elements take (the first is the default).
CURVE_KINDS = {"line": ("points", "bars"), "simultaneous": ("lines", "fill")}
MAX_LABEL = 18  # characters of a category label shown on an axis before it is abbreviated
MIN_LABEL_POINTS = 5.0  # smallest font a crowded category axis shrinks its labels to before the figure grows
LABEL_PAD = 2.0  # pixels kept free around every contour label

# ----------------------------------------------------------------------------- reading a result


def as_names(features: Any) -> list[str]:
    if isinstance(features, np.ndarray):
        features = features.tolist()
    if isinstance(features, str) or not isinstance(features, Sequence):
        return [str(features)]
    return [str(f) for f in features]


def lookup(result: Any, features: Any) -> tuple[xr.Dataset, dict, xr.DataTree | None]:
    """The node dataset of ``features``, its attrs merged over the root's, and the root (or None)."""
    wanted = as_names(features)
    if isinstance(result, xr.DataTree):
        if "features" in result.attrs:
            have = as_names(result.attrs["features"])
            if have != wanted:
                raise ValueError(
                    f"This node holds features {tuple(have)}, not {tuple(wanted)}; pass the whole result "
                    "tree to look the node up, or the node of the features you want."
                )
            node = result
        else:
            node = get_node(result, wanted if len(wanted) > 1 else wanted[0])
        root = node.root
        attrs = {**root.attrs, **node.attrs} if root is not node else dict(node.attrs)
        return node.to_dataset(), attrs, (root if root is not node else None)
    if isinstance(result, xr.Dataset):
        attrs = dict(result.attrs)
        if "features" in attrs and as_names(attrs["features"]) != wanted:
            raise ValueError(f"This Dataset holds features {tuple(as_names(attrs['features']))}, not {tuple(wanted)}.")
        missing = [f for f in wanted if f not in result.dims]
        if missing:
            raise ValueError(f"The Dataset has no dimension for feature(s) {missing}; dims: {list(result.dims)}.")
        attrs["features"] = wanted
        return result, attrs, None
    raise TypeError(f"result must be a pdpboot result (xarray.DataTree), one of its nodes, or a node's Dataset; "
                    f"got {type(result).__name__}.")


def select_output(ds: xr.Dataset, attrs: Mapping, output: Hashable | None) -> tuple[xr.Dataset, Any, int]:
    """Drop the ``output`` dim by selecting one label; returns (dataset, label, number of outputs)."""
    if "output" not in ds.dims:
        return ds, None, 1
    labels = ds["output"].values.tolist()
    if output is None:
        classification = (attrs.get("task") == "classification"
                          or attrs.get("response") in ("predict_proba", "decision_function"))
        if len(labels) == 1:
            index = 0
        elif len(labels) == 2 and classification:
            index = 1  # the positive class of a binary classifier
        else:
            raise ValueError(f"This result has {len(labels)} outputs {labels}; choose one to plot with output=<label>.")
    else:
        matches = [i for i, lab in enumerate(labels) if lab == output]
        matches = matches or [i for i, lab in enumerate(labels) if str(lab) == str(output)]
        if not matches:
            raise ValueError(f"output={output!r} is not one of this result's outputs {labels}.")
        index = matches[0]
    return ds.isel(output=index), labels[index], len(labels)


def response_label(attrs: Mapping, label: Any, n_outputs: int) -> str:
    """The y-axis label of a PD: what is averaged, and whose PD it is (``target = "dgp"``: the data's).

    >>> response_label({"target_name": "Price"}, "Price", 1)
    'Predicted Price'
    >>> response_label({"target_name": "Price", "target": "dgp"}, "Price", 1)
    "Price (the data's PD)"
    """
    response, target = attrs.get("response"), attrs.get("target_name")
    if response == "decision_function":
        text = f"Decision function (class = {label})" if label is not None else "Decision function"
    elif response == "predict_proba" or (response is None and attrs.get("task") == "classification"):
        text = f"P(class = {label})"
    elif isinstance(target, str) and target and n_outputs == 1:
        text = f"Predicted {target}"
    elif isinstance(label, str) and label:
        text = f"Predicted {label}"
    else:
        text = "Partial dependence"
    return f"{text.removeprefix('Predicted ')} (the data's PD)" if attrs.get("target") == "dgp" else text


def array_of(da: xr.DataArray, dims: Sequence[str], what: str) -> np.ndarray:
    extra = set(da.dims) - set(dims)
    if extra:
        raise ValueError(f"{what} has unexpected dimensions {sorted(map(str, extra))} besides {list(dims)}.")
    return np.asarray(da.transpose(*dims).values, dtype=float)


def band_bounds(band: xr.DataArray, dims: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    band = band.transpose("ci_bound", *dims)
    return (np.asarray(band.sel(ci_bound="lower").values, dtype=float),
            np.asarray(band.sel(ci_bound="upper").values, dtype=float))


def _band_label(band: xr.DataArray, attrs: Mapping, n_resamples: int | None, *, simultaneous: bool,
                short: bool, noun: str) -> str:
    level = band.attrs.get("confidence_level")
    prefix = f"{100 * float(level):g} % " if level is not None else ""
    method = "simultaneous" if simultaneous else (band.attrs.get("method") or "pointwise")
    text = f"{prefix}{method} {noun}"
    if not short and band.attrs.get("scale") == "logit":  # a probability PD's band formed on the logit scale
        text += " (logit scale)"
    b = band.attrs.get("n_resamples", attrs.get("n_resamples", n_resamples))
    if not short and b is not None and int(b) > 0:  # B = 0: a one-fit band (forest IJ, debiased)
        text += f", B = {int(b)}"
    return text


def find_bands(ds: xr.Dataset, attrs: Mapping, var: str, band: BandChoice,
               noun: str = "band") -> list[tuple[xr.DataArray, bool, str]]:
    """Bands of ``var`` to draw: list of (band, is_simultaneous, legend label), pointwise first."""
    if band is False or band is None:
        return []
    if band not in (True, "auto", "pointwise", "simultaneous"):
        raise ValueError(f"band must be True, False, 'auto', 'pointwise' or 'simultaneous'; got {band!r}.")
    found: dict[bool, xr.DataArray] = {}
    for name in (f"{var}_band", f"{var}_band_pointwise", f"{var}_band_simultaneous"):
        if name in ds.data_vars:
            found.setdefault(bool(ds[name].attrs.get("simultaneous", name.endswith("_simultaneous"))), ds[name])
    if band in ("pointwise", "simultaneous"):
        found.pop(band == "pointwise", None)
    if not found:
        if band == "auto":
            return []
        hint = f"run pdpboot.confidence_bands(result{', simultaneous=True' if band == 'simultaneous' else ''}) first"
        kind = "" if band is True else f"{band} "
        raise ValueError(f"No {kind}band for {var!r} in this result ({var!r}_band missing); {hint}, "
                         "or pass band=False.")
    n_res = ds.sizes.get("resample")
    return [(found[sim], sim, _band_label(found[sim], attrs, n_res, simultaneous=sim, short=sim and len(found) == 2,
                                          noun=noun)) for sim in (False, True) if sim in found]


def curve_bands(ds: xr.Dataset, attrs: Mapping, var: str, band: BandChoice, dim: str) -> list:
    """Bands of the curve ``var`` over ``dim`` as a list of ((lower, upper), is_simultaneous, label)."""
    return [(band_bounds(b, [dim]), sim, lab) for b, sim, lab in find_bands(ds, attrs, var, band)]


# ----------------------------------------------------------------------------- quantile-spaced axes


def skewed(deciles: np.ndarray, low: float, high: float) -> bool:
    """Whether 5 consecutive deciles of a feature (40 % of its rows) lie within a tenth of [low, high]."""
    d = np.sort(np.asarray(deciles, dtype=float))
    d = d[np.isfinite(d)]
    if len(d) < 9 or not np.isfinite(high - low) or high <= low:
        return False
    return bool(np.min(d[4:] - d[:-4]) < 0.1 * (high - low))


def is_skewed(values: Sequence[float], percentiles: tuple[float, float] = (0.05, 0.95)) -> bool:
    """Whether a numeric feature is strongly skewed, so its plots use a quantile-spaced axis.

    The rule: 5 consecutive deciles of the data (40 % of its rows) lie within a tenth of the range a
    PD grid spans.

    Parameters
    ----------
    values : array-like of float
        The feature's data (missing values ignored).
    percentiles : (float, float), default (0.05, 0.95)
        The range of the grid, as in :func:`pdpboot.bootstrap_partial_dependence`.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> rain = np.r_[np.zeros(60), np.linspace(0.1, 18, 40)]
    >>> is_skewed(rain), is_skewed(np.linspace(0, 1, 100))
    (True, False)
    """
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    if x.size < 10:
        return False
    low, high = np.quantile(x, percentiles)
    return skewed(np.quantile(x, np.arange(1, 10) / 10), float(low), float(high))


def quantile_knots(deciles: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, positions) of the axis map over [low, high], positions from 0 to 1.

    Position = 3/4 of the data's quantile (decile k at k/10; the grid's ends at 0.05 / 0.95 when
    beyond the outer deciles) + 1/4 of the linear position, so the map strictly increases.  Deciles
    sharing one value take the top of their run at the low end, the bottom at the high end, their
    mean inside: a pile of rows is a point, not an empty stretch of axis.
    """
    d = np.sort(np.asarray(deciles, dtype=float))
    inside = (d >= low) & (d <= high)
    values = np.array([low, *d[inside], high])
    quantiles = np.array([0.05 if low < d[0] else 0.1, *(np.arange(1, 10) / 10)[inside],
                          0.95 if high > d[-1] else 0.9])
    uniq = np.unique(values)
    if len(uniq) < 2:
        return np.array([low, low + 1.0]), np.array([0.0, 1.0])
    q = []
    for u in uniq:
        run = quantiles[values == u]
        q.append(run.max() if u == low else run.min() if u == high else run.mean())
    q = np.maximum.accumulate(np.array(q))
    q = (q - q[0]) / (q[-1] - q[0]) if q[-1] > q[0] else np.zeros_like(q)
    return uniq, 0.75 * q + 0.25 * (uniq - low) / (high - low)


def _piecewise(x, xs: np.ndarray, ys: np.ndarray):
    """Piecewise-linear through (xs, ys), extended linearly past both ends (invertible if ys increase)."""
    x = np.asarray(x, dtype=float)
    out = np.interp(x, xs, ys)
    left, right = (ys[1] - ys[0]) / (xs[1] - xs[0]), (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    out = np.where(x < xs[0], ys[0] + (x - xs[0]) * left, out)
    return np.where(x > xs[-1], ys[-1] + (x - xs[-1]) * right, out)


def use_quantile_axis(ax, axis: str, deciles: np.ndarray, low: float, high: float) -> None:
    """Space ``axis`` of ``ax`` by the data's deciles (:func:`quantile_knots`), ticks at their values."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    xs, ps = quantile_knots(deciles, low, high)
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    setter("function", functions=(lambda v: _piecewise(v, xs, ps), lambda p: _piecewise(p, ps, xs)))
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks, last = [], -np.inf
    for x, p in zip(xs, ps):  # at most about 8 ticks: a knot at least 0.12 of the axis from the last
        if p - last >= 0.12 or x == xs[-1] and p - last >= 0.06:
            ticks.append(x)
            last = p
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    target.set_minor_locator(NullLocator())


def resolve_scale(scale: str, deciles: np.ndarray, grid: np.ndarray, categorical: bool) -> str:
    """"linear" or "quantile": ``scale`` checked, "auto" decided by :func:`skewed` on the grid's range."""
    if scale not in ("auto", "linear", "quantile"):
        raise ValueError(f"scale must be one of ('auto', 'linear', 'quantile'); got {scale!r}.")
    if categorical or scale == "linear" or len(grid) < 2:
        return "linear"
    if scale == "quantile":
        if len(deciles) < 9:
            raise ValueError("scale='quantile' needs the feature's deciles (node attrs 'deciles'); "
                             "use scale='linear'.")
        return "quantile"
    return "quantile" if skewed(deciles, float(np.min(grid)), float(np.max(grid))) else "linear"


def is_quantile_axis(ax, axis: str = "x") -> bool:
    return (ax.get_xscale() if axis == "x" else ax.get_yscale()) == "function"


# ----------------------------------------------------------------------------- style=


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
    rc = {"font.size": font_size, "axes.labelsize": font_size, "axes.titlesize": font_size,
          "xtick.labelsize": small, "ytick.labelsize": small, "legend.fontsize": small,
          "legend.title_fontsize": small, "axes.linewidth": 0.6, "xtick.major.width": 0.6,
          "ytick.major.width": 0.6, "xtick.major.size": 2.5, "ytick.major.size": 2.5, "lines.linewidth": 1.2,
          "figure.figsize": (3.3, 2.5), "figure.dpi": 150, "savefig.dpi": 300, "pdf.fonttype": 42,
          "ps.fonttype": 42, "svg.fonttype": "none"}
    with mpl.rc_context(rc):
        yield


def check_style(style, elements: Sequence[str], where: str, kinds: Mapping[str, Sequence[str]] | None = None) -> dict:
    """``style`` as a dict: element -> dict of matplotlib keywords (``kinds``: allowed ``"kind"`` entries),
    or False (leave it out) / True / None."""
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


def element_kw(style: Mapping, element: str, defaults: Mapping | None = None) -> dict:
    """``defaults`` updated with the matplotlib keywords given for one element (its ``"kind"`` left out)."""
    value = style.get(element)
    return {**(defaults or {}), **({k: v for k, v in value.items() if k != "kind"} if isinstance(value, Mapping)
                                   else {})}


def element_kind(style: Mapping, element: str, default: str) -> str:
    value = style.get(element)
    return value.get("kind", default) if isinstance(value, Mapping) else default


def element_on(style: Mapping, element: str, default: bool = True) -> bool:
    """Whether an element is drawn: False leaves it out, True or a dict draws it, None keeps ``default``."""
    value = style.get(element)
    return default if value is None else value is not False


# ----------------------------------------------------------------------------- drawing helpers


def pyplot():
    import matplotlib.pyplot as plt

    return plt


def new_ax(ax):
    return ax if ax is not None else pyplot().subplots(layout="constrained")[1]


def stroke(linewidth: float = 1.6):
    """A white outline, to keep text and ticks readable on dark and light fills."""
    from matplotlib import patheffects

    return patheffects.withStroke(linewidth=linewidth, foreground="white")


def tick_positions(grid: np.ndarray, categorical: bool) -> np.ndarray:
    """Plot coordinates of a grid: 0, 1, ... for category levels, else the grid values."""
    return np.arange(len(grid), dtype=float) if categorical else np.asarray(grid, dtype=float)


def draw_rug(ax, values: np.ndarray, axis: str, rug_kw: Mapping) -> None:
    if values.size == 0:
        return
    kw = {"colors": "k", "linewidths": 0.8, "zorder": 3.5, **rug_kw}
    if axis == "x":  # ticks 0.04 of the axes long
        ax.vlines(values, 0, 0.04, transform=ax.get_xaxis_transform(), **kw)
    else:
        ax.hlines(values, 0, 0.04, transform=ax.get_yaxis_transform(), **kw)


def fewer_ticks(ax, axis: str, nbins: int = 5) -> None:
    """At most ``nbins`` intervals on a numeric axis of the default locator (narrow paper panels)."""
    from matplotlib.ticker import MaxNLocator

    locator = (ax.xaxis if axis == "x" else ax.yaxis).get_major_locator()
    if type(locator).__name__ == "AutoLocator" or type(locator) is MaxNLocator:
        ax.locator_params(axis=axis, nbins=nbins)


def set_levels_axis(ax, axis: str, levels: Sequence) -> None:
    positions, labels = np.arange(len(levels)), [str(v) for v in levels]
    if axis == "y":
        ax.set_yticks(positions, labels)
        ax.set_ylim(-0.5, len(levels) - 0.5)
        return
    ax.set_xticks(positions, labels)
    ax.set_xlim(-0.5, len(levels) - 0.5)
    if max((len(s) for s in labels), default=0) * len(labels) > 40:
        ax.tick_params(axis="x", labelrotation=35)
        for text in ax.get_xticklabels():
            text.set_horizontalalignment("right")


def legend_entries(ax, first: str | None = None) -> tuple[list, list]:
    handles, labels = ax.get_legend_handles_labels()
    if first in labels:  # the estimate first, then bands and ICE in drawing order
        i = labels.index(first)
        handles.insert(0, handles.pop(i))
        labels.insert(0, labels.pop(i))
    return handles, labels


def draw_legend(ax, legend: bool, legend_kw: Mapping, first: str | None = None, above: bool = False) -> None:
    """Legend inside the axes ("best" place), or in two columns above them (``above``)."""
    handles, labels = legend_entries(ax, first) if legend else ([], [])
    if not handles:
        return
    if above and "loc" not in legend_kw:
        defaults = {"fontsize": "small", "loc": "lower center", "bbox_to_anchor": (0.5, 1.0), "ncols": 2,
                    "borderaxespad": 0.2, "frameon": False}
    else:
        defaults = {"fontsize": "small", "loc": "best", "framealpha": 0.85}
    ax.legend(handles, labels, **{**defaults, **legend_kw})


def finish_x_axis(ax, grid: np.ndarray, categorical: bool, attrs: Mapping, rug, style: Mapping, scale: str,
                  name: str) -> None:
    """Category levels as x tick labels, or fewer numeric ticks (or a quantile-spaced axis) and the rug; the label."""
    quantile = scale != "linear" and resolve_scale(scale, feature_deciles(attrs, 0), grid, categorical) == "quantile"
    ax.set_xlabel(f"{name} {QUANTILE_NOTE}" if quantile else name)
    if categorical:
        set_levels_axis(ax, "x", grid)
        return
    if quantile:
        use_quantile_axis(ax, "x", feature_deciles(attrs, 0), float(np.min(grid)), float(np.max(grid)))
    else:
        fewer_ticks(ax, "x")
    if rug is not False and rug is not None and element_on(style, "rug"):
        draw_rug(ax, feature_deciles(attrs, 0) if rug is True else np.asarray(rug, dtype=float).ravel(), "x",
                 element_kw(style, "rug"))


def draw_curve(ax, x: np.ndarray, est: np.ndarray, bands: list, *, categorical: bool, est_label: str,
               style: Mapping, simultaneous_kind: str = "lines") -> None:
    """Estimate as a line (numeric) or points/bars (categorical), bands as shaded regions/intervals."""
    bars = categorical and element_kind(style, "line", "points") == "bars"
    fill = element_kind(style, "simultaneous", simultaneous_kind) != "lines"
    color = element_kw(style, "line", {"color": OKABE_ITO["blue"]})["color"]
    sim_color = OKABE_ITO["vermillion"]
    for (lo, hi), sim, label in bands:
        element = "simultaneous" if sim else "band"
        if categorical:  # intervals with caps, above ICE curves; simultaneous: thinner, dashed, orange
            kw = element_kw(style, element, {"colors": sim_color, "linewidths": 1.0, "linestyles": "--", "zorder": 3.4}
                            if sim else {"colors": "k" if bars else color, "linewidths": 1.8, "zorder": 3.5})
            ax.vlines(x, lo, hi, label=label, **kw)
            cap = 0.22 if sim else 0.14
            cap_kw = {k: v for k, v in kw.items() if k not in ("linestyles", "label")}
            ax.hlines(np.concatenate([lo, hi]), np.concatenate([x, x]) - cap, np.concatenate([x, x]) + cap, **cap_kw)
        elif sim and not fill:
            kw = element_kw(style, element, {"color": sim_color, "linestyle": "--", "linewidth": 1.1, "zorder": 2.2})
            ax.plot(x, lo, label=label, **kw)
            ax.plot(x, hi, **{**kw, "label": "_nolegend_"})
        else:
            ax.fill_between(x, lo, hi, label=label, **element_kw(
                style, element, {"color": sim_color, "alpha": 0.15, "linewidth": 0, "zorder": 1.9} if sim
                else {"color": color, "alpha": 0.35, "linewidth": 0, "zorder": 2.0}))
    if bars:
        ax.bar(x, est, label=est_label, **element_kw(style, "line", {"color": OKABE_ITO["sky_blue"], "width": 0.6,
                                                                     "zorder": 2.0}))
    elif categorical:
        ax.plot(x, est, label=est_label, **element_kw(style, "line", {
            "color": color, "marker": "o", "linestyle": "none", "markersize": 5.5, "markeredgecolor": "white",
            "markeredgewidth": 0.8, "zorder": 3.6}))
    else:
        ax.plot(x, est, label=est_label, **element_kw(style, "line", {"color": color, "linewidth": 2.0, "zorder": 3.0}))


def contour_levels(zmin: float, zmax: float, levels: int) -> np.ndarray:
    from matplotlib.ticker import MaxNLocator

    if not np.isfinite(zmin) or not np.isfinite(zmax):
        raise ValueError("The surface has no finite values to draw.")
    if zmin == zmax:
        pad = abs(zmin) * 0.01 or 0.5
        return np.array([zmin - pad, zmax + pad])
    return MaxNLocator(levels + 1).tick_values(zmin, zmax)


# ----------------------------------------------------------------------------- readable tick and contour labels


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


def _crowded(fig, ax, axis: str = "x", gap: float = 4.0) -> bool:
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return labels_overlap([t.get_window_extent(renderer) for t in shown_labels(ax, axis)], axis, gap)


def _abbreviated(names: list[str]) -> list[str]:
    return [n if len(n) <= MAX_LABEL else n[: MAX_LABEL - 1] + "…" for n in names]


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

    fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in fig.axes:
        if ax.get_visible() and is_quantile_axis(ax, "y"):
            thin_fixed_ticks(fig, ax, "y")
        if not ax.get_visible() or not ax.xaxis.get_visible():
            continue
        categorical = isinstance(ax.xaxis.get_major_locator(), FixedLocator)
        if not shown_labels(ax) or not _crowded(fig, ax):
            continue
        if is_quantile_axis(ax, "x"):  # the data's decile values: keep a spaced-out subset
            thin_fixed_ticks(fig, ax, "x")
        elif not categorical:
            for nbins in (4, 3, 2, 1):
                ax.xaxis.set_major_locator(MaxNLocator(nbins=nbins))
                if not _crowded(fig, ax):
                    break
        else:
            locs = ax.get_xticks()
            ax.set_xticks(locs, _abbreviated([t.get_text() for t in ax.get_xticklabels()]))
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


def _spacing(ax, locs, axis: str) -> float:
    """Smallest distance in pixels between the ticks ``locs`` of ``axis``."""
    i = 0 if axis == "x" else 1
    points = np.zeros((len(locs), 2))
    points[:, i] = locs
    positions = np.sort(ax.transData.transform(points)[:, i])
    return float(np.min(np.diff(positions))) if len(positions) > 1 else np.inf


def _largest(fig, ax, axis: str) -> float:
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return max((getattr(t.get_window_extent(renderer), "width" if axis == "x" else "height")
                for t in shown_labels(ax, axis)), default=0.0)


def _fit_rotated_labels(fig, ax, locs) -> None:
    """Every level keeps its label: rotated 40 degrees, then 90, then a smaller font, then a wider figure.

    Labels at 40 degrees clear each other when neighbouring ticks are a line height apart across the
    text (spacing * sin(40) >= 1.15 * font height); vertical labels when their boxes are 4 pixels apart.
    """
    texts = ax.get_xticklabels()
    if not texts or len(locs) < 2:
        return
    size = texts[0].get_fontsize()
    if _spacing(ax, locs, "x") * np.sin(np.radians(40)) >= 1.15 * size * fig.dpi / 72:
        return
    ax.tick_params(axis="x", labelrotation=90)
    for text in ax.get_xticklabels():  # the label's end at its tick, the text below the axes
        text.set_horizontalalignment("right")
        text.set_verticalalignment("center")
    width = _largest(fig, ax, "x")
    if _spacing(ax, locs, "x") >= width + 4:
        return
    ax.tick_params(axis="x", labelsize=max(MIN_LABEL_POINTS, size * (_spacing(ax, locs, "x") - 4) / max(width, 1e-9)))
    for _ in range(3):  # still too many levels for the width: widen the figure (never drop a label)
        width = _largest(fig, ax, "x")
        if _spacing(ax, locs, "x") >= width + 4:
            return
        fig.set_figwidth(fig.get_figwidth() * (width + 4) / max(_spacing(ax, locs, "x"), 1e-9) * 1.05)


def _fit_level_labels_y(fig, ax) -> None:
    """Every level of a category y axis keeps its label: abbreviated, then a smaller font, then a taller figure."""
    fig.draw_without_rendering()
    if not shown_labels(ax, "y") or not _crowded(fig, ax, "y", gap=1.0):
        return
    locs = ax.get_yticks()
    ax.set_yticks(locs, _abbreviated([t.get_text() for t in ax.get_yticklabels()]))
    if not _crowded(fig, ax, "y", gap=1.0) or len(locs) < 2:
        return
    height = _largest(fig, ax, "y")
    size = ax.get_yticklabels()[0].get_fontsize()
    ax.tick_params(axis="y", labelsize=max(MIN_LABEL_POINTS, size * (_spacing(ax, locs, "y") - 1) / max(height, 1e-9)))
    for _ in range(3):  # still too many levels for the height: a taller figure (never drop a label)
        if not _crowded(fig, ax, "y", gap=1.0):
            return
        height = _largest(fig, ax, "y")
        fig.set_figheight(fig.get_figheight() * (height + 1) / max(_spacing(ax, locs, "y"), 1e-9) * 1.05)


def _kept_labels(ax, texts, renderer, boxes: list) -> list[bool]:
    """For each label: whether it lies inside ``ax`` and clear of ``boxes`` (kept ones are added to them)."""
    frame = ax.get_window_extent(renderer)
    keep = []
    for text in texts:
        box = text.get_window_extent(renderer).expanded(1.0, 1.0).padded(LABEL_PAD)
        inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
        keep.append(inside and not any(box.overlaps(other) for other in boxes))
        if keep[-1]:
            boxes.append(box)
    return keep


def label_contours(ax, lines, levels, kw: Mapping) -> list:
    """Label contour lines where the labels neither overlap each other nor leave the axes.

    The candidates of ``clabel`` are drawn without breaking the lines (after the layout is done),
    measured and kept greedily; the kept positions are then labelled for good (``manual=``), with a
    white outline.
    """
    fig = ax.figure
    kw = dict(kw)
    inline = kw.pop("inline", True)
    kw.pop("manual", None)
    probe = ax.clabel(lines, levels, inline=False, **kw)
    if not probe:
        return []
    fig.draw_without_rendering()  # the final layout (constrained layout, colour bar) before measuring
    keep = _kept_labels(ax, probe, fig.canvas.get_renderer(), [])
    kept = [text.get_position() for text, k in zip(probe, keep) if k]
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
        boxes: list = []
        for artist in ax.get_children():
            if isinstance(artist, ContourSet):
                texts = [t for t in artist.labelTexts if t.get_visible()]
                for text, keep in zip(texts, _kept_labels(ax, texts, renderer, boxes)):
                    text.set_visible(keep)
