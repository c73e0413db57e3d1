"""Charts as inline SVG text: a curve with its bands (and ICE lines), points with interval bars,
a heat map with its colour bar, and a sparkline.  NumPy in, strings out.

Every chart has a fixed ``viewBox``, a transparent ``rect.hit`` over its plot area that the report's
script listens to, and ``data-px`` / ``data-edges`` pixel positions of the grid values or cells.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence

import numpy as np

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
    """A 1-D effect: the estimate, its band and optional ICE lines.

    Parameters
    ----------
    x : array
        Grid values (numbers; or levels when ``categorical``).
    estimate : array
        The estimate at each grid value.
    band : (lower, upper), optional
        Drawn shaded (numeric) or as interval bars (levels).
    outer : (lower, upper), optional
        A second, wider band (simultaneous): dashed lines (numeric) or caps (levels).
    ice : 2-D array (curves x grid), optional
        ICE curves, drawn thin and grey under everything else.
    rug : array, optional
        Data deciles, drawn as ticks along the bottom of numeric axes.
    uid : str
        Unique in the page (names the clip path).
    """
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


__all__ = ["Frame", "colors", "curve", "esc", "fmt", "heatmap", "nice_ticks", "sparkline"]
