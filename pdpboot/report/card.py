"""A result in a notebook: a compact card per node (features, method, B, level, the estimate with its
band as a small inline SVG, warnings), and the ``.pdpboot`` accessor of every DataTree.

The result stays a plain :class:`xarray.DataTree` (its own repr is xarray's, which shows the data
structure); the card is what ``display(res)`` or ``res.pdpboot`` show.  Nothing in xarray is
replaced: the accessor is xarray's registered extension point, under the package's own name.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from . import svg
from .figures import Names, band_text, bands_of, caveats, main_variable, outputs_of
from .svg import esc, fmt

MAX_OUTPUTS = 4  # sparklines per node; more outputs are counted
MAX_CELLS = 8  # a 2-D surface's thumbnail: at most 8 x 8 cells
_TD = 'style="padding:2px 8px;text-align:left;vertical-align:middle;border-bottom:1px solid rgba(127,127,127,.25)"'


def _thumbnail(z: np.ndarray, width: int = 64, height: int = 34) -> str:
    """A surface as at most 8 x 8 coloured cells (every k-th grid value)."""
    rows = np.unique(np.linspace(0, z.shape[0] - 1, min(MAX_CELLS, z.shape[0])).round().astype(int))
    cols = np.unique(np.linspace(0, z.shape[1] - 1, min(MAX_CELLS, z.shape[1])).round().astype(int))
    small = z[np.ix_(rows, cols)]
    finite = small[np.isfinite(small)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    fills = svg.colors(small, lo, hi, "viridis")
    w, h = width / len(rows), height / len(cols)
    cells = "".join(f'<rect x="{i * w:.1f}" y="{height - (j + 1) * h:.1f}" width="{w + .2:.1f}" height="{h + .2:.1f}" '
                    f'fill="{fills[i, j]}"/>' for i in range(len(rows)) for j in range(len(cols)))
    return (f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'xmlns="http://www.w3.org/2000/svg">{cells}</svg>')


def _node_warnings(ds: xr.Dataset, var: str, band: xr.DataArray | None) -> list[str]:
    out = []
    est = ds[var]
    if bool(est.isnull().any()):
        out.append(f"{int(est.isnull().sum())} missing estimates")
    if band is not None:
        lower, upper = band.sel(ci_bound="lower"), band.sel(ci_bound="upper")
        outside = int(((est < lower) | (est > upper)).sum())
        if outside:
            out.append(f"estimate outside its band at {outside} grid values (refits are biased there)")
    return out


def card_html(result: xr.DataTree, *, names: Names | None = None) -> str:
    """The card of ``result`` as an HTML fragment (inline styles and SVG; no script)."""
    var = main_variable(result)
    names = names or Names.from_attrs(result.attrs)
    outputs = outputs_of(result)
    shown = outputs[:MAX_OUTPUTS]
    first = next(iter(result.children.values())).to_dataset()
    bands = bands_of(first, var)
    head, warnings = _card_head(result, var, bands, first)
    rows = [_card_row(node, var, shown, len(outputs), names) for node in result.children.values()]
    more = f" (showing {', '.join(map(str, shown))} of {len(outputs)} outputs)" if len(outputs) > len(shown) else ""
    header = "".join(f'<th {_TD}>{h}</th>' for h in ("feature(s)", "grid", f"{esc(var.upper())} and band" + more,
                                                     "estimate range" + ("; mean band width" if bands else ""),
                                                     "warnings"))
    warn = "".join(f'<div style="color:#b35900">⚠ {esc(w)}</div>' for w in warnings)
    level = next(iter(bands.values())).attrs.get("confidence_level") if bands else None
    level_text = f"{float(level):.0%} " if level is not None else ""
    return ('<div class="pdpboot-card" style="font-family:system-ui,sans-serif;font-size:13px;line-height:1.4;'
            'border:1px solid rgba(127,127,127,.35);border-radius:6px;padding:8px 10px;max-width:880px">'
            f'<div style="margin-bottom:4px">{" · ".join(head)}</div>{warn}'
            f'<table style="border-collapse:collapse"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}'
            '</tbody></table><div style="opacity:.7;margin-top:4px">Line: estimate; shaded: '
            f"{level_text}band. Tidy table: <code>res.pdpboot.to_dataframe()</code>; every figure with hover: "
            "<code>res.pdpboot.report('report.html')</code>; the data structure: xarray's own view of "
            "<code>res</code>.</div></div>")


def _card_head(result: xr.DataTree, var: str, bands: dict, first: xr.Dataset) -> tuple[list[str], list[str]]:
    """The card's first line (method, band, target, task, rows) and its warnings."""
    attrs: Mapping = result.attrs
    b = attrs.get("n_resamples")
    uncertainty = str(attrs.get("uncertainty") or "none")
    method = {"bootstrap": f"refit bootstrap, B = {int(b)}" if b else "refit bootstrap",
              "none": "one fit (no band)"}.get(uncertainty, uncertainty)
    head = [f"<b>pdpboot result</b> · {esc(var.upper())}", esc(method)]
    if bands:
        head.append("; ".join(esc(band_text(bd, attrs, simultaneous=sim).split(", B =")[0])
                              for sim, bd in sorted(bands.items())))
    head.append("target: the data's PD" if attrs.get("target") == "dgp" else "target: the learner's PD")
    task = attrs.get("task")
    if task:
        head.append(esc(f"{task} of {attrs.get('target_name')}" if attrs.get("target_name") else task))
    if attrs.get("n_rows") is not None:
        head.append(f"{int(attrs['n_rows'])} rows")
    failed = int(attrs.get("n_failed_resamples", 0) or 0)
    warnings = [f"{failed} resamples failed and were dropped"] if failed else []
    warnings += [short for short, _ in caveats(result, var)]
    if not bands and f"{var}_resamples" in first:
        warnings.append("resampled but no band yet: res = pdpboot.confidence_bands(res)")
    return head, warnings


def _card_row(node: xr.DataTree, var: str, shown: list, n_outputs: int, names: Names) -> str:
    """One node's row: its features, grid size, a sparkline (or thumbnail) per output, ranges, warnings."""
    ds = node.to_dataset()
    features = [str(f) for f in node.attrs["features"]]
    nb = bands_of(ds, var)
    band = nb.get(False, nb.get(True))
    pictures, ranges = [], []
    for output in shown:
        est = np.asarray(ds.sel(output=output)[var].transpose(*features).values, dtype=float)
        if len(features) == 1:
            flags = np.atleast_1d(node.attrs.get("categorical", [0]))
            categorical = bool(flags[0]) or not np.issubdtype(ds[features[0]].dtype, np.number)
            bounds = None
            if band is not None:
                bd = band.sel(output=output).transpose("ci_bound", *features)
                bounds = (bd.sel(ci_bound="lower").values, bd.sel(ci_bound="upper").values)
            pictures.append(svg.sparkline(ds[features[0]].values, est, bounds, categorical=categorical))
        else:
            pictures.append(_thumbnail(est))
        text = f"{fmt(np.nanmin(est))} to {fmt(np.nanmax(est))}"
        if band is not None:
            bd = band.sel(output=output)
            text += f"; band width {fmt(float((bd.sel(ci_bound='upper') - bd.sel(ci_bound='lower')).mean()))}"
        ranges.append((f"{esc(output)}: " if n_outputs > 1 else "") + text)
    grid = " × ".join(str(ds.sizes[f]) for f in features)
    notes = _node_warnings(ds, var, band)
    return (f"<tr><td {_TD}><b>{esc(' × '.join(names(f) for f in features))}</b></td>"
            f"<td {_TD}>{grid}</td><td {_TD}>{''.join(pictures)}</td><td {_TD}>{'<br>'.join(ranges)}</td>"
            f"<td {_TD}>{esc('; '.join(notes)) if notes else ''}</td></tr>")


class ResultCard:
    """What a notebook shows for a pdpboot result: see :func:`display`."""

    def __init__(self, result: xr.DataTree):
        main_variable(result)  # refuses a tree that is not a pdpboot result, with the reason
        self.result = result

    def _repr_html_(self) -> str:
        return card_html(self.result)

    def __repr__(self) -> str:
        var = main_variable(self.result)
        nodes = ", ".join(" × ".join(map(str, n.attrs["features"])) for n in self.result.children.values())
        return f"<pdpboot result: {var.upper()} of {nodes}>"


def display(result: xr.DataTree) -> ResultCard:
    """A notebook card of a pdpboot result: one row per feature or pair with its estimate and band drawn small.

    Parameters
    ----------
    result : xarray.DataTree
        A result of :func:`pdpboot.bootstrap_partial_dependence` (or any pdpboot effect), possibly
        loaded with :func:`pdpboot.load`.

    Returns
    -------
    ResultCard
        Shown as the card in Jupyter (``_repr_html_``); its ``result`` is the unchanged DataTree.
        ``res.pdpboot`` shows the same card.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from pdpboot.report import display
    >>> from sklearn.linear_model import LinearRegression
    >>> X = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) % 3})
    >>> res = pdpboot.partial_dependence(LinearRegression().fit(X, X.a), X, ["a", ("a", "b")], grid=pdpboot.Grid(5))
    >>> display(res)
    <pdpboot result: PD of a, a × b>
    >>> "<svg" in display(res)._repr_html_()
    True
    """
    return ResultCard(result)


@xr.register_datatree_accessor("pdpboot")
class PdpbootAccessor:
    """``res.pdpboot``: the card (its notebook display), the tidy table and the HTML report of a result."""

    def __init__(self, tree: xr.DataTree):
        self._tree = tree

    def _repr_html_(self) -> str:
        return card_html(self._tree)

    def __repr__(self) -> str:
        return repr(ResultCard(self._tree))

    def card(self) -> ResultCard:
        """The card (as :func:`display`)."""
        return ResultCard(self._tree)

    def to_dataframe(self, **kwargs):
        """The long tidy table of :func:`pdpboot.tidy` (keywords passed on)."""
        from .. import tidy

        return tidy(self._tree, **kwargs)

    def report(self, path="report.html", **kwargs):
        """Write the self-contained HTML report (:func:`pdpboot.report.write_report`); returns its path."""
        from .page import write_report

        return write_report(self._tree, path, **kwargs)


__all__ = ["PdpbootAccessor", "ResultCard", "card_html", "display"]
