"""A result's nodes as report figures: one block per feature or pair, one panel per output.

Draws the estimate, its bands (pointwise shaded, simultaneous dashed), ICE curves and the data's
deciles with :mod:`pdpboot.report.svg`, with what the hover shows as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from ..caveats import (
    UNDER_COVERING_METHODS,
    boosting_classifier_message,
    boosting_classifier_under_covers,
    interval_method_message,
)
from . import svg
from .origin import run_config
from .svg import esc, fmt

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


def _categorical(node: xr.DataTree, ds: xr.Dataset, position: int, feature: str) -> bool:
    flags = np.atleast_1d(node.attrs.get("categorical", []))
    if position < len(flags) and bool(flags[position]):
        return True
    return not np.issubdtype(ds[feature].dtype, np.number)


def _deciles(attrs: Mapping, position: int) -> np.ndarray:
    values = attrs.get("deciles")
    if values is None:
        return np.empty(0)
    chunk = np.asarray(values, dtype=float).ravel()[9 * position: 9 * (position + 1)]
    return chunk[np.isfinite(chunk)]


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
    categorical = _categorical(node, ds, 0, feature)
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
        chart = svg.curve(x, est, band=band, outer=outer, ice=ice, categorical=categorical,
                          rug=None if categorical else _deciles(node.attrs, 0), xlabel=names(feature),
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
    cats = (_categorical(node, ds, 0, a), _categorical(node, ds, 1, b))
    bands = bands_of(ds, var)
    band = bands.get(False, bands.get(True))
    xa, xb = ds[a].values, ds[b].values
    panels = []
    n_charts = 0
    for k, output in enumerate(outputs):
        one = ds.sel(output=output)
        est = np.asarray(one[var].transpose(a, b).values, dtype=float)
        zlabel = response_label(attrs, output, len(outputs), names)
        charts = [svg.heatmap(xa, xb, est, cmap="viridis", xcat=cats[0], ycat=cats[1], xlabel=names(a),
                              ylabel=names(b), zlabel=zlabel, label=f"{label} surface of {names(a)} and {names(b)}")]
        hover = {"kind": "surface", "xname": names(a), "yname": names(b), "what": f"{label} estimate",
                 "x": _labels(xa), "y": _labels(xb), "est": [[fmt(v) for v in row] for row in est]}
        if band is not None:
            lo, hi = _bounds(band.sel(output=output), [a, b])
            simultaneous = band is bands.get(True) and False not in bands
            charts.append(svg.heatmap(xa, xb, hi - lo, cmap="magma_r", xcat=cats[0], ycat=cats[1], xlabel=names(a),
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


__all__ = ["Block", "Names", "band_text", "bands_of", "blocks", "caveats", "main_variable", "outputs_of",
           "response_label"]
