"""The report page: one self-contained HTML file (styles, script and images inline; no network)."""

from __future__ import annotations

import base64
import datetime
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import xarray as xr

from .. import __version__
from . import figures
from .figures import (
    Block,
    Names,
    band_text,
    bands_of,
    caveats,
    describe_origin,
    esc,
    fmt,
    main_variable,
    outputs_of,
    run_config,
    run_identity,
)

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


@dataclass(frozen=True)
class Image:
    """A figure file the report embeds as it is (``path`` read when the page is built)."""

    name: str  # shown under it, e.g. "plots/overview.png"
    what: str
    path: Path


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _json(value, default=None):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return default
    return default if value is None else value


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


# ----------------------------------------------------------------------------- pieces


def _glance(result: xr.DataTree, var: str) -> list[tuple[str, str]]:
    """Short facts of a result: model, uncertainty, band, target."""
    attrs = result.attrs
    node = next(iter(result.children.values())).to_dataset()
    facts = []
    if attrs.get("estimator"):
        facts.append(("Model", str(attrs["estimator"]).split("(")[0]))
    uncertainty = attrs.get("uncertainty", "none")
    b = attrs.get("n_resamples")
    if uncertainty == "bootstrap" and b:
        facts.append(("Uncertainty", f"refit bootstrap, B = {int(b)} ({attrs.get('resampling', 'bootstrap')})"))
    elif uncertainty and uncertainty != "none":
        facts.append(("Uncertainty", str(uncertainty)))
    else:
        facts.append(("Uncertainty", "none (one fit)"))
    bands = bands_of(node, var)
    if bands:
        facts.append(("Bands", "; ".join(band_text(band, attrs, simultaneous=sim)
                                         for sim, band in sorted(bands.items()))))
    facts.append(("Target of inference", "the data's PD (dgp)" if attrs.get("target") == "dgp" else
                  "the learner's PD (this model refitted on samples like the data)"))
    return facts


def _warnings(result: xr.DataTree) -> list[str]:
    attrs = result.attrs
    out = []
    failed = int(attrs.get("n_failed_resamples", 0) or 0)
    if failed:
        out.append(f"{failed} of {int(attrs.get('n_resamples', 0)) + failed} resamples failed and were dropped "
                   f"(reasons in the result's attrs 'failed_resamples').")
    missing = int(attrs.get("n_missing_class_resamples", 0) or 0)
    if missing:
        out.append(f"{missing} resamples lacked a class (its probability is 0 in those refits).")
    return out


def _summary_table(result: xr.DataTree, var: str, names: Names, outputs: list) -> str:
    """Without ``summary.md``: per feature set and output, the estimate's range and the band's width."""
    label = var.upper()
    rows = []
    for node in result.children.values():
        ds = node.to_dataset()
        feats = " × ".join(names(f) for f in node.attrs["features"])
        bands = bands_of(ds, var)
        band = bands.get(False, bands.get(True))
        for output in outputs:
            est = ds[var].sel(output=output)
            cells = [esc(feats)] + ([esc(output)] if len(outputs) > 1 else [])
            cells += [fmt(float(est.min())), fmt(float(est.max())), fmt(float(est.max() - est.min()))]
            if band is not None:
                bd = band.sel(output=output)
                width = bd.sel(ci_bound="upper") - bd.sel(ci_bound="lower")
                cells += [fmt(float(width.mean())), fmt(float(width.max()))]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    first = next(iter(result.children.values())).to_dataset()
    banded = bool(bands_of(first, var))
    head = ["feature(s)"] + (["output"] if len(outputs) > 1 else []) + [f"{label} min", f"{label} max", "range"]
    head += ["mean band width", "largest band width"] if banded else []
    return ('<div class="scroll"><table><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
            + "<p>Every curve's estimates and intervals at each grid value: <em>Numbers</em> under its figure. "
              "Statistics with intervals (ranges, contrasts, H²): <code>pdpboot.h_statistic</code>, "
              "<code>pdpboot.ice_heterogeneity</code>, or a command-line run's summary.</p>")


def _provenance(result: xr.DataTree, command: str | None) -> str:
    attrs = {k: _plain(v) for k, v in result.attrs.items()}
    config = run_config(attrs)
    rows = [("created with", f"{attrs.get('creation_library', 'pdpboot')} {attrs.get('creation_library_version', '')}"),
            ("created", attrs.get("created")), ("estimator", attrs.get("estimator")),
            ("response", attrs.get("response")), ("effect", attrs.get("effect")),
            ("uncertainty", attrs.get("uncertainty")), ("target", attrs.get("target")),
            ("resampling", attrs.get("resampling")), ("band scale", attrs.get("band_scale")),
            ("why this resampling", attrs.get("resampling_reason")), ("n_resamples", attrs.get("n_resamples")),
            ("background", attrs.get("background")), ("rows", attrs.get("n_rows")),
            ("seed (rng entropy)", attrs.get("rng_entropy")), ("engine", attrs.get("engine"))]
    if config:
        rows += [("--random-state", config.get("random_state")), ("data", config.get("data")),
                 ("data sha256", config.get("data_sha256"))]
        rows += [(f"version {k}", v) for k, v in (config.get("versions") or {}).items()]
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows if v not in (None, ""))
    out = f'<div class="scroll"><table class="prov">{body}</table></div>'
    if command:
        out += f"<h3>Command</h3><pre>{esc(command)}</pre>"
    for key, title in (("settings", "Call settings"), ("estimator_params", "Estimator parameters")):
        value = _json(attrs.get(key))
        if value is not None:
            out += (f"<details><summary>{title}</summary><pre>{esc(json.dumps(value, indent=1, sort_keys=True))}"
                    "</pre></details>")
    return out


def _image(image: Image) -> str:
    mime = _MIME.get(image.path.suffix.lower())
    if mime is None:
        return (f'<div class="fig wide"><h3>{esc(image.name)}</h3><p class="caption">{esc(image.what)} '
                f'({image.path.suffix[1:].upper()}: not embedded; open it from the run folder).</p></div>')
    data = base64.b64encode(image.path.read_bytes()).decode("ascii")
    return (f'<div class="fig wide"><h3>{esc(image.what)}</h3><img class="figure" alt="{esc(image.what)}" '
            f'src="data:{mime};base64,{data}"><p class="caption">{esc(image.name)} of the run folder.</p></div>')


# ----------------------------------------------------------------------------- the page


def _source(sources: Sequence[str] | None, k: int) -> str:
    return repr(str(sources[k])) if sources is not None and k < len(sources) else f"result {k + 1}"


def report_html(results: Sequence[xr.DataTree] | xr.DataTree, *, summary: str | None = None,
                images: Sequence[Image] = (), title: str | None = None, command: str | None = None,
                names: Names | None = None, sources: Sequence[str] | None = None) -> str:
    """The report as one HTML document (a string)."""
    results = [results] if isinstance(results, xr.DataTree) else list(results)
    if not results:
        raise ValueError("No results to report: pass at least one pdpboot result.")
    names = names or Names.from_attrs(results[0].attrs)
    title = title or f"pdpboot report: {results[0].attrs.get('target_name') or 'pdpboot results'}"
    origins = list(dict.fromkeys(run_identity(r.attrs) for r in results))
    made, added = [], []  # (label, variable, blocks, outputs, result); results given bands here
    for k, result in enumerate(results):
        result, banded = _with_bands(result)
        if banded:
            added.append(k)
        var, blocks, outputs = figures.blocks(result, names=names, uid=f"r{k}")
        label = var.upper()
        if len(origins) > 1:  # results of separate runs or calls: every label says which one
            label += f" of {_source(sources, k)}: {describe_origin(result.attrs)}"
        made.append((label, var, blocks, outputs, result))
    parsed = sections(summary) if summary else []
    parts = [f"<h1>{esc(title)}</h1>",
             f'<p class="lead">Made by pdpboot {esc(__version__)} on '
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. One self-contained file: it "
             "loads nothing from the network, so it opens the same from a disk, a shared folder or an e-mail.</p>",
             *_head(made, parsed, n_origins=len(origins), added=bool(added))]
    toc = [("figures", "Figures"), *[(f"s{k}", t) for k, (t, _) in enumerate(parsed) if t]]
    if not summary:
        toc += [("numbers", "Numbers"), ("notes", "What was done to the data")]
    toc += [("data", "The numbers as a table"), ("provenance", "Provenance")]
    parts.append('<nav class="toc">' + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in toc) + "</nav>")
    parts += _figure_section(made, images)
    for k, (t, body) in enumerate(parsed):
        if t:
            parts.append(f'<section id="s{k}"><h2>{to_html(t).removeprefix("<p>").removesuffix("</p>")}'
                         f"</h2>{to_html(body, heading_offset=1)}</section>")
    if not summary:
        parts += _numbers_sections(made, names)
    parts.append(_downloads(made))
    provenance = _provenance(results[0], command) if len(origins) == 1 else "".join(
        f"<h3>{esc(label)}</h3>" + _provenance(result, command if k == 0 else None)
        for k, (label, *_, result) in enumerate(made))
    parts.append('<section id="provenance"><h2>Provenance</h2>' + provenance + "</section>")
    parts.append('<footer>Figures: inline SVG drawn by pdpboot (no plotting library in the page); hover or tap a '
                 "curve or cell for its numbers; the feature picker shows one feature or pair.</footer>")
    body = "\n".join(parts)
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{esc(title)}</title><style>{_asset('report.css')}</style></head>"
            f'<body><main>{body}</main><div id="tip" hidden></div><script>{_asset("report.js")}</script>'
            "</body></html>\n")


def _head(made: list, sections: list, *, n_origins: int, added: bool) -> list[str]:
    """The summary's header table (else a glance at the first result), then warnings and caveats."""
    head = [body for t, body in sections if not t]
    if head:  # the summary's own header table (data, task, model, bootstrap, bands, seed)
        parts = [to_html("\n".join(line for line in head[0].splitlines() if not line.startswith("# ")))]
    else:
        facts = [f for _, var, _, _, result in made[:1] for f in _glance(result, var)]
        parts = ['<div class="glance">' + "".join(f"<div><b>{esc(k)}</b>{esc(v)}</div>" for k, v in facts)
                 + "</div>"]
    warns = [w for *_, result in made for w in _warnings(result)]
    if n_origins > 1:
        warns.insert(0, f"These {len(made)} results come from {n_origins} separate runs or calls, not from one "
                        "computation: each figure, table and provenance entry below names the one it shows.")
    if added:
        warns.append("The result held resampled curves but no bands: the bands shown were computed for this report "
                     "with pdpboot.confidence_bands' defaults (95% percentile, pointwise).")
    parts += [f'<p class="warn">{esc(w)}</p>' for w in warns]
    notes = {short: full for _, var, _, _, result in made for short, full in figures.caveats(result, var)}
    return parts + [f'<details class="warn"><summary>{esc(short)}</summary><p>{esc(full)}</p></details>'
                    for short, full in notes.items()]


def _figure_section(made: list, images: Sequence[Image]) -> list[str]:
    """The figures with the feature (and output) pickers, then the extra images."""
    keys = {}
    for _, _, blocks, _, _ in made:
        for block in blocks:
            keys.setdefault(block.key, block.title)
    options = '<option value="">All features and pairs</option>' + "".join(
        f'<option value="{esc(k)}">{esc(t)}</option>' for k, t in keys.items())
    controls = f'<label>Feature <select id="feature">{options}</select></label>'
    outputs = made[0][3]
    if len(outputs) > 1:
        controls += ('<label>Output <select id="output">' + "".join(
            f'<option value="{esc(o)}">{esc(o)}</option>' for o in outputs) + "</select></label>")
    parts = [f'<section id="figures"><h2>Figures</h2><div class="controls">{controls}</div>']
    for label, _, blocks, _, _ in made:
        if len(made) > 1:
            parts.append(f"<h3>{esc(label)}</h3>")
        parts.append('<div class="figs">' + "".join(_block(b) for b in blocks) + "</div>")
    if images:
        parts.append('<h3>More figures of the run</h3><div class="figs">' + "".join(_image(i) for i in images)
                     + "</div>")
    return [*parts, "</section>"]


def _numbers_sections(made: list, names: Names) -> list[str]:
    """Without a summary: each curve's range and band width, and the notes the results record."""
    parts = ['<section id="numbers"><h2>Numbers</h2>']
    for label, var, _, outs, result in made:
        if len(made) > 1:
            parts.append(f"<h3>{esc(label)}</h3>")
        parts.append(_summary_table(result, var, names, outs))
    parts.append("</section>")
    notes = [n for *_, result in made for n in (_json(result.attrs.get("cli_notes"), []) or [])]
    parts.append('<section id="notes"><h2>What was done to the data</h2>' + (
        "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>" if notes else
        "<p>Nothing recorded: these results were made in Python from the table as given (the call's settings "
        "are under Provenance).</p>") + "</section>")
    return parts


def _downloads(made) -> str:
    """Each result's effect as a CSV inside the page (pdpboot.tidy's table: one row per grid value and output)."""
    from .. import tidy

    links = []
    for label, var, _, _, result in made:
        frame = tidy(result, effects=[var])
        data = base64.b64encode(frame.to_csv(index=False, float_format="%.6g").encode("utf-8")).decode("ascii")
        links.append(f'<li><a download="pdpboot_{esc(var)}.csv" href="data:text/csv;base64,{data}">'
                     f"{esc(label)}: every estimate with its interval (CSV, {len(frame)} rows)</a></li>")
    return ('<section id="data"><h2>The numbers as a table</h2><p>Saved from inside this page (no network): one row '
            "per feature, grid value and output, with <code>estimate</code>, <code>lower</code>, <code>upper</code>, "
            "<code>se</code> and the band's <code>method</code>, as <code>pdpboot.tidy</code> gives them.</p><ul>"
            + "".join(links) + "</ul></section>")


def _with_bands(result: xr.DataTree) -> tuple[xr.DataTree, bool]:
    """A bootstrap result without bands gets the default bands (a reader wants the uncertainty)."""
    var = figures.main_variable(result)
    if any(f"{var}_resamples" in n.ds and not bands_of(n.ds, var) for n in result.children.values()):
        from .. import confidence_bands

        return confidence_bands(result), True
    return result, False


def _block(block: Block) -> str:
    wide = " wide" if "surface" in block.html[:400] or 'class="pair"' in block.html else ""
    return (f'<div class="fig{wide}" data-key="{esc(block.key)}" data-charts="{block.n_charts}">'
            f"<h3>{esc(block.title)}</h3>{block.html}</div>")


def write_report(results: Sequence[xr.DataTree] | xr.DataTree, path, *, summary: str | None = None,
                 images: Sequence[Image] = (), title: str | None = None, command: str | None = None,
                 names: Names | None = None, sources: Sequence[str] | None = None) -> Path:
    """Write :func:`report_html` of ``results`` to ``path`` (UTF-8); returns the path.  Keywords as there."""
    path = Path(path)
    text = report_html(results, summary=summary, images=images, title=title, command=command, names=names,
                       sources=sources)
    path.write_text(text, encoding="utf-8")
    return path


def folder_images(folder: Path, variables: Sequence[str], summary: str | None) -> list[Image]:
    """The run folder's plots the report does not draw itself (overviews, H², ...), with the summary's
    description of each."""
    plots = Path(folder) / "plots"
    if not plots.is_dir():
        return []
    described: Mapping[str, str] = {}
    if summary:
        import re

        described = {m.group(1): m.group(2) for m in re.finditer(r"^- `(plots/[^`]+)`: (.*)$", summary, re.M)}
    drawn = tuple(p for v in variables for p in (f"{v}_", f"{v}2_"))
    out = []
    for path in sorted(plots.iterdir()):
        if path.is_file() and not path.name.startswith(drawn):
            name = f"plots/{path.name}"
            out.append(Image(name=name, what=_unmd(described.get(name, path.stem)), path=path))
    out.sort(key=lambda i: (not Path(i.name).stem.startswith("overview"), i.name))
    return out


def _unmd(text: str) -> str:
    """Markdown-escaped text (``workflow.options.md``) back to plain text."""
    import html
    import re

    return html.unescape(re.sub(r"\\(.)", r"\1", text))


_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")


def _inline(text: str) -> str:
    """Inline Markdown of one line as HTML (everything else escaped)."""
    out, i = [], 0
    # protect escapes and code spans first
    pieces: list[tuple[str, str]] = []  # (kind, text)
    buf = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and not text[i + 1].isalnum():
            buf.append(("lit", text[i + 1]))
            i += 2
        elif ch == "`":
            end = text.find("`", i + 1)
            if end == -1:
                buf.append(("lit", ch))
                i += 1
            else:
                buf.append(("code", text[i + 1: end]))
                i = end + 1
        elif ch == "&" and _ENTITY.match(text, i):
            m = _ENTITY.match(text, i)
            buf.append(("lit", html.unescape(m.group(0))))
            i = m.end()
        else:
            buf.append(("md", ch))
            i += 1
    # merge runs of the same kind
    for kind, chars in buf:
        if pieces and pieces[-1][0] == kind and kind != "code":
            pieces[-1] = (kind, pieces[-1][1] + chars)
        else:
            pieces.append((kind, chars))
    for kind, chars in pieces:
        if kind == "code":
            out.append(f"<code>{html.escape(html.unescape(chars)).replace('*', '&#42;')}</code>")
        elif kind == "lit":  # an escaped "*" must not start emphasis below
            out.append(html.escape(chars).replace("*", "&#42;"))
        else:
            s = html.escape(chars)
            s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
            s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", s)
            out.append(s)
    html_text = "".join(out)
    # emphasis that spans escaped or code pieces
    return re.sub(r"(?<![\w*])\*(?!\s)([^*<>]+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", html_text)


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row (``\\|`` stays inside a cell)."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*", line))


def to_html(markdown: str, *, heading_offset: int = 0) -> str:
    """HTML of ``markdown`` (the subset ``summary.md`` uses); headings shifted down by ``heading_offset``."""
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", line)
        if heading:
            level = min(len(heading.group(1)) + heading_offset, 6)
            out.append(f"<h{level}>{_inline(heading.group(2).strip())}</h{level}>")
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            head = _cells(line)
            i += 2
            body = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            thead = "" if not any(head) else "<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + \
                "</tr></thead>"
            rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body)
            out.append(f'<div class="scroll"><table>{thead}<tbody>{rows}</tbody></table></div>')
            continue
        if re.match(r"\s*[-*]\s+", line):
            items = []
            while i < len(lines) and re.match(r"\s*[-*]\s+", lines[i]):
                items.append(re.sub(r"^\s*[-*]\s+", "", lines[i]))
                i += 1
            out.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
            continue
        para = []
        while i < len(lines) and lines[i].strip() and not re.match(r"(#{1,6})\s|\s*[-*]\s+|\s*\|", lines[i]):
            para.append(lines[i].strip())
            i += 1
        if not para:  # a lone table-looking line without a rule
            para.append(lines[i].strip())
            i += 1
        out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def sections(markdown: str) -> list[tuple[str, str]]:
    """``markdown`` cut at its ``## `` headings: (title, body) pairs; the text before the first has title ""."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in markdown.splitlines():
        m = re.match(r"##\s+(.*)", line)
        if m:
            out.append((m.group(1).strip(), []))
        else:
            out[-1][1].append(line)
    return [(title, "\n".join(body)) for title, body in out if title or any(s.strip() for s in body)]


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
    fills = figures.colors(small, lo, hi, "viridis")
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
            pictures.append(figures.sparkline(ds[features[0]].values, est, bounds, categorical=categorical))
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

        return write_report(self._tree, path, **kwargs)


__all__ = ["Image", "PdpbootAccessor", "ResultCard", "card_html", "display", "folder_images", "report_html", "sections",
           "to_html", "write_report"]
