"""A result's nodes as report figures: one block per feature or pair, one panel per output."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ..caveats import (
    UNDER_COVERING_METHODS,
    boosting_classifier_message,
    boosting_classifier_under_covers,
    interval_method_message,
)
from ..schema import feature_deciles, is_categorical

MAX_ICE = 100  # ICE lines drawn per panel


@dataclass(frozen=True)
class Names:
    """How features and the response are shown: display names, ``--labels`` and ``--units``."""

    display: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_attrs(cls, attrs: Mapping) -> Names:
        """The names a command-line run recorded in its result (``cli_display_names``, ``cli_config``)."""
        display = _json(attrs.get("cli_display_names"), {})
        config = run_config(attrs)
        return cls(display=display, labels=config.get("labels") or {}, units=config.get("units") or {})

    def __call__(self, name) -> str:
        original = self.display.get(str(name), str(name))
        shown = self.labels.get(original, original)
        unit = self.units.get(original)
        return f"{shown} ({unit})" if unit else str(shown)


def _json(value, default):
    if value is None:
        return default
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return default
    return value


def main_variable(result: xr.DataTree) -> str:
    """The effect a result is about (``pd``, ``ale``): the header's ``effect``, else the first present."""
    effect = result.attrs.get("effect")
    nodes = [n.ds for n in result.children.values()]
    if effect and all(effect in ds for ds in nodes):
        return str(effect)
    for name in ("pd", "ale"):
        if nodes and all(name in ds for ds in nodes):
            return name
    raise ValueError("This is not a pdpboot result: its nodes hold no 'pd' or 'ale' variable. Pass a result of "
                     "pdpboot.bootstrap_partial_dependence, bootstrap_ale, partial_dependence or pdpboot.load.")


def response_label(attrs: Mapping, output, n_outputs: int, names: Names) -> str:
    """What the effect's value is: a class probability, a decision function or the predicted target."""
    response = attrs.get("response")
    if response == "decision_function":
        text = f"Decision function (class = {output})"
    elif response == "predict_proba" or attrs.get("task") == "classification":
        text = f"P(class = {output})"
    else:
        target = attrs.get("target_name")
        target = target if isinstance(target, str) and target and n_outputs == 1 else str(output)
        text = f"Predicted {names(target)}"
    if attrs.get("target") == "dgp":
        text = text.removeprefix("Predicted ") + " (the data's PD)"
    return text


def bands_of(ds: xr.Dataset, var: str) -> dict[bool, xr.DataArray]:
    """The bands of ``var`` by kind: ``{False: pointwise, True: simultaneous}`` (either may be missing)."""
    found: dict[bool, xr.DataArray] = {}
    for name in (f"{var}_band", f"{var}_band_pointwise", f"{var}_band_simultaneous"):
        if name in ds.data_vars:
            da = ds[name]
            found.setdefault(bool(da.attrs.get("simultaneous", name.endswith("_simultaneous"))), da)
    return found


def band_text(band: xr.DataArray, attrs: Mapping, *, simultaneous: bool, short: bool = False) -> str:
    """E.g. "95% percentile band (pointwise), B = 50"; ``short``: "95% pointwise band" (the hover's label)."""
    level = band.attrs.get("confidence_level")
    text = f"{float(level):.0%} " if level is not None else ""
    if short:
        return f"{text}{'simultaneous' if simultaneous else 'pointwise'} band"
    text += f"{band.attrs.get('method', '')} band ({'simultaneous' if simultaneous else 'pointwise'})".lstrip()
    if band.attrs.get("scale") == "logit":
        text += " formed on the logit scale"
    b = band.attrs.get("n_resamples", attrs.get("n_resamples"))
    if b is not None and int(b) > 0:
        text += f", B = {int(b)}"
    return text


def caveats(result: xr.DataTree, var: str) -> list[tuple[str, str]]:
    """Coverage caveats of a result's bands (``pdpboot.caveats``): (one line, the full warning)."""
    attrs = result.attrs
    found = [b for n in result.children.values() for b in bands_of(n.ds, var).items()]
    out = []
    for method in sorted({str(band.attrs.get("method")) for _, band in found} & set(UNDER_COVERING_METHODS)):
        out.append((f"{method} bands under-cover PD curves; the percentile default does not.",
                    interval_method_message(method)))
    logit = any(band.attrs.get("scale") == "logit" for _, band in found)
    if any(sim for sim, _ in found) and boosting_classifier_under_covers(attrs, "logit" if logit else "identity"):
        out.append(("Simultaneous bands of a gradient-boosting classifier's probability PD under-cover.",
                    boosting_classifier_message(attrs.get("resampling"))))
    return out


def _bounds(band: xr.DataArray, dims: list[str]) -> tuple[np.ndarray, np.ndarray]:
    band = band.transpose("ci_bound", *dims)
    return (np.asarray(band.sel(ci_bound="lower").values, dtype=float),
            np.asarray(band.sel(ci_bound="upper").values, dtype=float))


def _labels(values) -> list[str]:
    return [fmt(v) if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) else str(v)
            for v in np.asarray(values).tolist()]


def outputs_of(result: xr.DataTree) -> list:
    """Outputs in the order a reader wants them: a binary classifier's positive class first."""
    node = next(iter(result.children.values()))
    labels = node.ds["output"].values.tolist()
    classification = result.attrs.get("task") == "classification" or result.attrs.get("response") in (
        "predict_proba", "decision_function")
    if classification and len(labels) == 2:
        return [labels[1], labels[0]]
    return labels


@dataclass
class Block:
    """One feature's (or pair's) figure: every output's panel, a caption and the numbers."""

    key: str  # the picker's value (the node name)
    title: str
    html: str
    n_charts: int


def _panel(chart: str, hover: dict, output, shown: bool) -> str:
    return (f'<div class="panel" data-output="{esc(output)}"{"" if shown else " hidden"} '
            f'data-hover="{esc(json.dumps(hover, separators=(",", ":")))}">{chart}</div>')


def curve_block(node: xr.DataTree, attrs: Mapping, var: str, outputs: list, names: Names, uid: str,
                label: str) -> Block:
    """A 1-D node: per output, the estimate with its bands (and ICE curves for PD)."""
    feature = str(node.attrs["features"][0])
    ds = node.to_dataset()
    categorical = is_categorical(ds, node.attrs, feature, 0)
    bands = bands_of(ds, var)
    x = ds[feature].values
    panels, rows = [], []
    for k, output in enumerate(outputs):
        one = ds.sel(output=output)
        est = np.asarray(one[var].transpose(feature).values, dtype=float)
        band = _bounds(bands[False].sel(output=output), [feature]) if False in bands else None
        outer = _bounds(bands[True].sel(output=output), [feature]) if True in bands else None
        ice = None
        if var == "pd" and "ice" in one:
            ice = np.asarray(one["ice"].transpose("instance", feature).values, dtype=float)[:MAX_ICE]
        ylabel = response_label(attrs, output, len(outputs), names)
        chart = curve(x, est, band=band, outer=outer, ice=ice, categorical=categorical,
                          rug=None if categorical else feature_deciles(node.attrs, 0), xlabel=names(feature),
                          ylabel=ylabel, label=f"{label} of {names(feature)}: {ylabel}", uid=f"{uid}-{k}")
        hover = {"kind": "curve", "xname": names(feature), "what": f"{label} estimate", "x": _labels(x),
                 "est": [fmt(v) for v in est]}
        if band is not None:
            hover.update(band=band_text(bands[False], attrs, simultaneous=False, short=True),
                         lo=[fmt(v) for v in band[0]], hi=[fmt(v) for v in band[1]])
        if ice is not None and len(ice):
            hover.update(nice=len(ice), ice=[f"{fmt(a)} to {fmt(b)}" for a, b in zip(np.nanmin(ice, axis=0),
                                                                                    np.nanmax(ice, axis=0))])
        if outer is not None:
            hover.update(outer=band_text(bands[True], attrs, simultaneous=True, short=True),
                         olo=[fmt(v) for v in outer[0]], ohi=[fmt(v) for v in outer[1]])
        panels.append(_panel(chart, hover, output, k == 0))
        rows.append((output, est, band, outer))
    caption = _caption(label, names(feature), bands, attrs, ice="ice" in ds and var == "pd",
                       n_ice=min(ds.sizes.get("instance", 0), MAX_ICE), rug=not categorical)
    table = _numbers_table(names(feature), _labels(x), rows, bands, attrs, outputs)
    body = (f'<div class="panels">{"".join(panels)}</div><p class="caption">{caption}</p>{table}')
    return Block(key=str(node.name), title=names(feature), html=body, n_charts=len(outputs))


def _caption(label, feature, bands, attrs, *, ice: bool, n_ice: int, rug: bool) -> str:
    parts = [f"{esc(label)} estimate of {esc(feature)} (line)"]
    if False in bands:
        parts.append(f"{esc(band_text(bands[False], attrs, simultaneous=False))} (shaded or bars)")
    if True in bands:
        parts.append(f"{esc(band_text(bands[True], attrs, simultaneous=True))} (dashed)")
    if ice:
        parts.append(f"{n_ice} ICE curves (grey)")
    if rug:
        parts.append("ticks at the bottom: deciles of the data")
    if not bands:
        parts.append("no band (one fit)")
    return "; ".join(parts) + ". Hover for the numbers."


def _numbers_table(feature, x, rows, bands, attrs, outputs) -> str:
    """The curve's numbers (what a paper cites), folded under the figure."""
    head = ["<th>" + esc(feature) + "</th>"]
    for output, _, band, outer in rows:
        suffix = f" ({esc(output)})" if len(outputs) > 1 else ""
        head.append(f"<th>estimate{suffix}</th>")
        if band is not None:
            head.append(f"<th>pointwise{suffix}</th>")
        if outer is not None:
            head.append(f"<th>simultaneous{suffix}</th>")
    body = []
    for i, value in enumerate(x):
        cells = [f"<td>{esc(value)}</td>"]
        for _, est, band, outer in rows:
            cells.append(f"<td>{fmt(est[i])}</td>")
            for pair in (band, outer):
                if pair is not None:
                    cells.append(f"<td>[{fmt(pair[0][i])}, {fmt(pair[1][i])}]</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    level = next(iter(bands.values())).attrs.get("confidence_level") if bands else None
    what = "estimates" + (f" with {float(level):.0%} intervals" if level is not None else "")
    return (f'<details class="numbers"><summary>Numbers ({what})</summary><div class="scroll"><table>'
            f'<thead><tr>{"".join(head)}</tr></thead><tbody>{"".join(body)}</tbody></table></div></details>')


def surface_block(node: xr.DataTree, attrs: Mapping, var: str, outputs: list, names: Names, uid: str,
                  label: str) -> Block:
    """A 2-D node: per output, the surface and (with a band) the band's width, side by side."""
    a, b = (str(f) for f in node.attrs["features"])
    ds = node.to_dataset()
    cats = (is_categorical(ds, node.attrs, a, 0), is_categorical(ds, node.attrs, b, 1))
    bands = bands_of(ds, var)
    band = bands.get(False, bands.get(True))
    xa, xb = ds[a].values, ds[b].values
    panels = []
    n_charts = 0
    for k, output in enumerate(outputs):
        one = ds.sel(output=output)
        est = np.asarray(one[var].transpose(a, b).values, dtype=float)
        zlabel = response_label(attrs, output, len(outputs), names)
        charts = [heatmap(xa, xb, est, cmap="viridis", xcat=cats[0], ycat=cats[1], xlabel=names(a),
                              ylabel=names(b), zlabel=zlabel, label=f"{label} surface of {names(a)} and {names(b)}")]
        hover = {"kind": "surface", "xname": names(a), "yname": names(b), "what": f"{label} estimate",
                 "x": _labels(xa), "y": _labels(xb), "est": [[fmt(v) for v in row] for row in est]}
        if band is not None:
            lo, hi = _bounds(band.sel(output=output), [a, b])
            simultaneous = band is bands.get(True) and False not in bands
            charts.append(heatmap(xa, xb, hi - lo, cmap="magma_r", xcat=cats[0], ycat=cats[1], xlabel=names(a),
                                      ylabel=names(b), zlabel="width of the band",
                                      label=f"width of the band of {names(a)} and {names(b)}"))
            hover.update(band=band_text(band, attrs, simultaneous=simultaneous, short=True),
                         lo=[[fmt(v) for v in row] for row in lo], hi=[[fmt(v) for v in row] for row in hi],
                         width=[[fmt(v) for v in row] for row in hi - lo])
        titles = [f"{label} estimate", "width of the band"]
        inner = "".join(f'<div class="sub"><div class="subtitle">{t}</div>{c}</div>' for t, c in zip(titles, charts))
        panels.append(_panel(f'<div class="pair">{inner}</div>', hover, output, k == 0))
        n_charts += len(charts)
    caption = (f"{esc(label)} surface of {esc(names(a))} and {esc(names(b))}"
               + (f", and the width of its {esc(band_text(band, attrs, simultaneous=band is bands.get(True)))} "
                  "(darker = less certain)" if band is not None else "; no band (one fit)")
               + ". Hover a cell for its numbers.")
    body = f'<div class="panels">{"".join(panels)}</div><p class="caption">{caption}</p>'
    return Block(key=str(node.name), title=f"{names(a)} × {names(b)}", html=body, n_charts=n_charts)


def blocks(result: xr.DataTree, *, names: Names | None = None, uid: str = "r0", outputs: list | None = None
           ) -> tuple[str, list[Block], list]:
    """Every node of ``result`` as a :class:`Block` (1-D first, in node order); returns (variable, blocks,
    outputs)."""
    var = main_variable(result)
    names = names or Names.from_attrs(result.attrs)
    outputs = outputs or outputs_of(result)
    label = var.upper()
    out = []
    nodes = list(result.children.values())
    for k, node in enumerate(sorted(nodes, key=lambda n: len(n.attrs["features"]))):
        make = curve_block if len(node.attrs["features"]) == 1 else surface_block
        out.append(make(node, result.attrs, var, outputs, names, f"{uid}-{k}", label))
    return var, out, outputs


WIDTH, HEIGHT = 400, 270
#: plot-area margins: left, right, top, bottom (viewBox units)
MARGIN = (58, 12, 10, 44)
BLUE, BAND, SIM, ICE = "#0072B2", "#9ecae1", "#D55E00", "#8c8c8c"


def fmt(value) -> str:
    """A number with 4 significant digits ("–" for NaN), as the summary prints them."""
    value = float(value)
    if not math.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def esc(text) -> str:
    """Data as inert HTML/SVG text."""
    return html.escape(str(text), quote=True)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi] (1, 2, 2.5 or 5 times a power of ten apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    k = 0
    while first + k * step <= hi + 1e-9 * step:
        ticks.append(round(first + k * step, 12))
        k += 1
    return ticks


def _tick_text(value: float) -> str:
    return f"{value:.6g}"


def _padded(lo: float, hi: float) -> tuple[float, float]:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0, 1.0
    if hi <= lo:
        pad = abs(lo) * 0.05 or 0.5
        return lo - pad, hi + pad
    pad = 0.04 * (hi - lo)
    return lo - pad, hi + pad


class Frame:
    """Data -> viewBox coordinates of one plot area."""

    def __init__(self, xlim: tuple[float, float], ylim: tuple[float, float], width: int = WIDTH,
                 height: int = HEIGHT, margin: tuple[int, int, int, int] = MARGIN):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = margin[0], width - margin[1], margin[2], height - margin[3]
        self.xlim, self.ylim = xlim, ylim

    def x(self, v):
        lo, hi = self.xlim
        return self.left + (np.asarray(v, dtype=float) - lo) / (hi - lo) * (self.right - self.left)

    def y(self, v):
        lo, hi = self.ylim
        return self.bottom - (np.asarray(v, dtype=float) - lo) / (hi - lo) * (self.bottom - self.top)


def _points(xs, ys) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y))


def _open(frame: Frame, label: str, kind: str) -> str:
    return (f'<svg class="chart {kind}" viewBox="0 0 {frame.width} {frame.height}" role="img" '
            f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg">')


def _axes(frame: Frame, xticks: Sequence[tuple[float, str]], yticks: Sequence[tuple[float, str]],
          xlabel: str, ylabel: str, *, ygrid: bool = True) -> list[str]:
    """Frame, ticks, tick labels and axis labels."""
    out = [f'<rect class="frame" x="{frame.left}" y="{frame.top}" width="{frame.right - frame.left}" '
           f'height="{frame.bottom - frame.top}"/>']
    for pos, text in xticks:
        out.append(f'<line class="tick" x1="{pos:.1f}" x2="{pos:.1f}" y1="{frame.bottom}" y2="{frame.bottom + 4}"/>'
                   f'<text class="tl" x="{pos:.1f}" y="{frame.bottom + 16}" text-anchor="middle">{esc(text)}</text>')
    for pos, text in yticks:
        if ygrid:
            out.append(f'<line class="grid" x1="{frame.left}" x2="{frame.right}" y1="{pos:.1f}" y2="{pos:.1f}"/>')
        out.append(f'<line class="tick" x1="{frame.left - 4}" x2="{frame.left}" y1="{pos:.1f}" y2="{pos:.1f}"/>'
                   f'<text class="tl" x="{frame.left - 7}" y="{pos + 4:.1f}" text-anchor="end">{esc(text)}</text>')
    mid_y = (frame.top + frame.bottom) / 2
    out.append(f'<text class="al" x="{(frame.left + frame.right) / 2:.1f}" y="{frame.height - 6}" '
               f'text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text class="al" transform="translate(14 {mid_y:.1f}) rotate(-90)" '
               f'text-anchor="middle">{esc(ylabel)}</text>')
    return out


def _shorten(text: str, limit: int = 9) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def curve(x, estimate, *, band=None, outer=None, ice=None, categorical: bool = False, rug=None,
          xlabel: str = "", ylabel: str = "", label: str = "", uid: str = "0") -> str:
    """A 1-D effect: the estimate, its band and optional ICE lines."""
    est = np.asarray(estimate, dtype=float)
    stacks = [est] + [np.asarray(b, dtype=float) for pair in (band, outer) if pair is not None for b in pair]
    if ice is not None and len(ice):
        stacks.append(np.asarray(ice, dtype=float).ravel())
    values = np.concatenate([s.ravel() for s in stacks])
    values = values[np.isfinite(values)]
    ylim = _padded(float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    n = len(est)
    if categorical:
        xlim = (-0.6, n - 0.4)
        xs = np.arange(n, dtype=float)
    else:
        xs = np.asarray(x, dtype=float)
        xlim = _padded(float(np.nanmin(xs)), float(np.nanmax(xs))) if n else (0.0, 1.0)
    frame = Frame(xlim, ylim)
    px = frame.x(xs)
    if categorical:
        step = max(1, math.ceil(n / 8))
        xticks = [(px[i], _shorten(x[i])) for i in range(0, n, step)]
    else:
        xticks = [(float(frame.x(t)), _tick_text(t)) for t in nice_ticks(*xlim)]
    yticks = [(float(frame.y(t)), _tick_text(t)) for t in nice_ticks(*ylim)]
    out = [_open(frame, label, "curve"), *_axes(frame, xticks, yticks, xlabel, ylabel)]
    out.append(f'<clipPath id="clip-{uid}"><rect x="{frame.left}" y="{frame.top}" width="{frame.right - frame.left}" '
               f'height="{frame.bottom - frame.top}"/></clipPath><g clip-path="url(#clip-{uid})">')
    if ice is not None and len(ice):
        ice = np.asarray(ice, dtype=float)
        pys = frame.y(ice)
        path = "".join("M" + " L".join(f"{a:.1f} {b:.1f}" for a, b in zip(px, row) if math.isfinite(b))
                       for row in pys)
        out.append(f'<path class="ice" d="{path}"/>')
    out += _band_marks(frame, px, band, outer, categorical)
    py = frame.y(est)
    if categorical:
        out += [f'<circle class="pt" cx="{a:.1f}" cy="{b:.1f}" r="3.5"/>' for a, b in zip(px, py) if math.isfinite(b)]
    out.append(f'<polyline class="est{" cat" if categorical else ""}" points="{_points(px, py)}"/>')
    out.append("</g>")
    if rug is not None and not categorical:
        rx = frame.x(np.asarray(rug, dtype=float))
        rx = rx[(rx >= frame.left) & (rx <= frame.right)]
        if rx.size:
            out.append('<path class="rug" d="' + "".join(f"M{a:.1f} {frame.bottom}v-7" for a in rx) + '"/>')
    out.append(f'<line class="guide" x1="0" x2="0" y1="{frame.top}" y2="{frame.bottom}" visibility="hidden"/>'
               '<circle class="mark" cx="0" cy="0" r="4.5" visibility="hidden"/>')
    heights = [round(float(p), 1) if math.isfinite(p) else None for p in py]
    out.append(f'<rect class="hit" x="{frame.left}" y="{frame.top}" width="{frame.right - frame.left}" '
               f'height="{frame.bottom - frame.top}" data-px="{esc(json.dumps([round(float(p), 1) for p in px]))}" '
               f'data-py="{esc(json.dumps(heights))}"/>')
    out.append("</svg>")
    return "".join(out)


def _band_marks(frame: Frame, px: np.ndarray, band, outer, categorical: bool) -> list[str]:
    """The band shaded (interval bars for levels), the outer band dashed (caps for levels)."""
    out = []
    for pair, outer_band in ((band, False), (outer, True)):
        if pair is None:
            continue
        lo, hi = (frame.y(b) for b in pair)
        if not categorical:
            out += ([f'<polyline class="sim" points="{_points(px, side)}"/>' for side in (lo, hi)] if outer_band else
                    [f'<polygon class="band" points="{_points(np.r_[px, px[::-1]], np.r_[hi, lo[::-1]])}"/>'])
            continue
        mark = ('<path class="sim" d="M{a7:.1f} {b:.1f}h14M{a7:.1f} {c:.1f}h14"/>' if outer_band else
                '<line class="bar" x1="{a:.1f}" x2="{a:.1f}" y1="{b:.1f}" y2="{c:.1f}"/>')
        out += [mark.format(a=a, a7=a - 7, b=b, c=c) for a, b, c in zip(px, lo, hi)
                if math.isfinite(b) and math.isfinite(c)]
    return out


def _edges(positions: np.ndarray) -> np.ndarray:
    """Cell edges around sorted positions: midpoints, with half a step beyond each end."""
    p = np.asarray(positions, dtype=float)
    if p.size == 1:
        return np.array([p[0] - 0.5, p[0] + 0.5])
    mid = (p[1:] + p[:-1]) / 2
    return np.r_[p[0] - (mid[0] - p[0]), mid, p[-1] + (p[-1] - mid[-1])]


def colors(values: np.ndarray, vmin: float, vmax: float, cmap: str) -> np.ndarray:
    """Hex colours of ``values`` on a matplotlib colour map (NaN: light grey)."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    scale = colormaps[cmap]
    span = (vmax - vmin) or 1.0
    flat = np.asarray(values, dtype=float).ravel()
    out = np.array(["#dddddd" if not math.isfinite(v) else to_hex(scale((v - vmin) / span)) for v in flat])
    return out.reshape(np.shape(values))


def heatmap(x, y, z, *, cmap: str, xcat: bool = False, ycat: bool = False, xlabel: str = "", ylabel: str = "",
            zlabel: str = "", label: str = "") -> str:
    """A surface ``z`` (len(x) x len(y)) as coloured cells, with a colour bar labelled ``zlabel``."""
    z = np.asarray(z, dtype=float)
    xpos = np.arange(len(x), dtype=float) if xcat else np.asarray(x, dtype=float)
    ypos = np.arange(len(y), dtype=float) if ycat else np.asarray(y, dtype=float)
    xe, ye = _edges(xpos), _edges(ypos)
    frame = Frame((xe[0], xe[-1]), (ye[0], ye[-1]), margin=(58, 84, 10, 44))
    pxe, pye = frame.x(xe), frame.y(ye)
    finite = z[np.isfinite(z)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    fills = colors(z, vmin, vmax, cmap)

    def ticks(cat, labels, pos, scale):
        if cat:
            step = max(1, math.ceil(len(labels) / 8))
            return [(float(scale(pos[i])), _shorten(labels[i])) for i in range(0, len(labels), step)]
        lo, hi = pos[0], pos[-1]
        return [(float(scale(t)), _tick_text(t)) for t in nice_ticks(lo, hi)]

    out = [_open(frame, label, "surface"),
           *_axes(frame, ticks(xcat, list(x), xpos, frame.x), ticks(ycat, list(y), ypos, frame.y), xlabel, ylabel,
                  ygrid=False)]
    cells = []
    for i in range(len(xpos)):
        x0, w = pxe[i], pxe[i + 1] - pxe[i]
        for j in range(len(ypos)):
            y0, h = pye[j + 1], pye[j] - pye[j + 1]
            cells.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w + 0.3:.1f}" height="{h + 0.3:.1f}" '
                         f'fill="{fills[i, j]}"/>')
    out.append('<g class="cells">' + "".join(cells) + "</g>")
    # colour bar
    bx, bw = frame.right + 14, 12
    steps = 32
    bar = []
    for k in range(steps):
        v = vmin + (vmax - vmin) * (k + 0.5) / steps
        top = frame.bottom - (k + 1) * (frame.bottom - frame.top) / steps
        bar.append(f'<rect x="{bx}" y="{top:.1f}" width="{bw}" height="{(frame.bottom - frame.top) / steps + 0.4:.1f}" '
                   f'fill="{colors(np.array([v]), vmin, vmax, cmap)[0]}"/>')
    out.append('<g class="cbar">' + "".join(bar) + "</g>")
    span = (vmax - vmin) or 1.0
    for t in nice_ticks(vmin, vmax, 6):
        ty = frame.bottom - (t - vmin) / span * (frame.bottom - frame.top)
        out.append(f'<text class="tl" x="{bx + bw + 3}" y="{ty + 4:.1f}">{esc(_tick_text(t))}</text>')
    out.append(f'<text class="al" transform="translate({frame.width - 4} {(frame.top + frame.bottom) / 2:.1f}) '
               f'rotate(-90)" text-anchor="middle">{esc(zlabel)}</text>')
    out.append('<rect class="cell-mark" x="0" y="0" width="0" height="0" visibility="hidden"/>')
    edges = {"x": [round(float(v), 1) for v in pxe], "y": [round(float(v), 1) for v in pye]}
    out.append(f'<rect class="hit" x="{frame.left}" y="{frame.top}" width="{frame.right - frame.left}" '
               f'height="{frame.bottom - frame.top}" data-edges="{esc(json.dumps(edges))}"/>')
    out.append("</svg>")
    return "".join(out)


def sparkline(x, estimate, band=None, *, categorical: bool = False, width: int = 132, height: int = 34) -> str:
    """A small chart of an estimate and its band (the notebook card): no axes, no text."""
    est = np.asarray(estimate, dtype=float)
    values = np.concatenate([est, *(np.asarray(b, dtype=float) for b in (band or ()))])
    values = values[np.isfinite(values)]
    ylim = _padded(float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    xs = np.arange(len(est), dtype=float) if categorical else np.asarray(x, dtype=float)
    xlim = (-0.5, len(est) - 0.5) if categorical else _padded(float(xs.min()), float(xs.max()))
    frame = Frame(xlim, ylim, width, height, (2, 2, 2, 2))
    px, py = frame.x(xs), frame.y(est)
    out = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'xmlns="http://www.w3.org/2000/svg">']
    if band is not None:
        lo, hi = (frame.y(b) for b in band)
        if categorical:
            out += [f'<line x1="{a:.1f}" x2="{a:.1f}" y1="{b:.1f}" y2="{c:.1f}" stroke="{BAND}" stroke-width="3"/>'
                    for a, b, c in zip(px, lo, hi) if math.isfinite(b) and math.isfinite(c)]
        else:
            out.append(f'<polygon points="{_points(np.r_[px, px[::-1]], np.r_[hi, lo[::-1]])}" fill="{BAND}"/>')
    if categorical:
        out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="2" fill="{BLUE}"/>' for a, b in zip(px, py) if math.isfinite(b)]
    else:
        out.append(f'<polyline points="{_points(px, py)}" fill="none" stroke="{BLUE}" stroke-width="1.5"/>')
    out.append("</svg>")
    return "".join(out)


__all__ = ["describe_origin", "run_config", "run_identity"]


def run_config(attrs: Mapping) -> dict:
    """The configuration a ``pdpboot run`` recorded in a result's root attrs (``cli_config``), parsed once.

    ``{}`` for a result made in Python (no ``cli_config``); a recorded text that is not JSON comes back
    as ``{"unparsed": text}`` (still one run's, still told apart from another run's).  The one reader
    of ``cli_config`` behind :func:`run_identity` and :func:`describe_origin`.

    >>> run_config({"cli_config": '{"data": "a.csv"}'})
    {'data': 'a.csv'}
    >>> run_config({"created": "t"}), run_config({"cli_config": "{oops"})
    ({}, {'unparsed': '{oops'})
    """
    config = attrs.get("cli_config")
    if not isinstance(config, str) or not config:
        return {}
    try:
        parsed = json.loads(config)
    except json.JSONDecodeError:
        return {"unparsed": config}
    return parsed if isinstance(parsed, dict) else {"unparsed": config}


def run_identity(attrs: Mapping) -> str:
    """What the result files of one computation share, from a result's root attrs.

    A ``pdpboot run`` writes its configuration (``cli_config``: options, the data's SHA-256, the
    creation time) into every file it writes, so its ``results.nc`` and ``ale.nc`` share it and no other
    run's files do.  A result made in Python is one call: its creation time, estimator, seed and rows.

    >>> run_identity({"cli_config": '{"created": "t"}'}) == run_identity({"cli_config": '{"created": "t"}'})
    True
    >>> run_identity({"created": "t1", "estimator": "m"}) == run_identity({"created": "t2", "estimator": "m"})
    False
    """
    config = run_config(attrs)
    if config:
        return "run " + json.dumps(config, sort_keys=True)
    return "call " + json.dumps([str(attrs.get(k, "")) for k in ("created", "estimator", "rng_entropy", "n_rows")])


def describe_origin(attrs: Mapping) -> str:
    """Which run or call made a result, in a few words (creation time, data file or model).

    >>> describe_origin({"cli_config": '{"created": "2026-01-01T00:00:00", "data": "a.csv"}'})
    "pdpboot run of 'a.csv' created 2026-01-01T00:00:00"
    >>> describe_origin({"created": "2026-01-02", "estimator": "Ridge(alpha=2)"})
    'Python call created 2026-01-02 (Ridge)'
    """
    config = run_config(attrs)
    if config:
        return f"pdpboot run of {config.get('data')!r} created {config.get('created', attrs.get('created'))}"
    model = str(attrs.get("estimator", "")).split("(")[0] or "unknown model"
    return f"Python call created {attrs.get('created', 'at an unrecorded time')} ({model})"


__all__ = ["Block", "Frame", "Names", "band_text", "bands_of", "blocks", "caveats", "colors", "curve", "esc", "fmt",
           "heatmap", "main_variable", "nice_ticks", "outputs_of", "response_label", "sparkline"]
