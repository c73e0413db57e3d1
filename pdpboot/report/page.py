"""The report page: one self-contained HTML file (styles, script and images inline; no network).

:func:`report_html` assembles it from results (figures drawn by :mod:`pdpboot.report.figures`), the
run's ``summary.md`` when there is one (its tables are the numbers a paper cites), extra images
(figures the report does not draw itself) and provenance (versions, seeds, settings, command).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import xarray as xr

from .. import __version__
from . import figures, markdown
from .figures import Block, Names, band_text, bands_of
from .origin import describe_origin, run_config, run_identity
from .svg import esc, fmt

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
    """The report as one HTML document (a string).

    Parameters
    ----------
    results : DataTree or sequence of DataTree
        pdpboot results (PD, ALE; with or without bands), e.g. a run's ``results.nc`` and ``ale.nc``.
    summary : str, optional
        A run's ``summary.md``: its tables and notes become the report's text.  Without it, a table of
        each curve's range and band width, the notes the result records and its provenance.
    images : sequence of Image
        Figures embedded as they are (PNG/SVG; others are listed), after the report's own figures.
    title : str, optional
        Default: the target's name.
    command : str, optional
        The command that made the results (shown under Provenance).
    names : Names, optional
        Display names, labels and units; default: those the first result records.
    sources : sequence of str, optional
        Where each result came from (its file name), named in the page when the results are of
        separate runs or calls (:func:`pdpboot.report.origin.run_identity` differs): then every figure,
        table and provenance entry says which run or call it shows, under a warning at the top.

    Returns
    -------
    str
        A complete HTML document that loads nothing from the network.
    """
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
    sections = markdown.sections(summary) if summary else []
    parts = [f"<h1>{esc(title)}</h1>",
             f'<p class="lead">Made by pdpboot {esc(__version__)} on '
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. One self-contained file: it "
             "loads nothing from the network, so it opens the same from a disk, a shared folder or an e-mail.</p>",
             *_head(made, sections, n_origins=len(origins), added=bool(added))]
    toc = [("figures", "Figures"), *[(f"s{k}", t) for k, (t, _) in enumerate(sections) if t]]
    if not summary:
        toc += [("numbers", "Numbers"), ("notes", "What was done to the data")]
    toc += [("data", "The numbers as a table"), ("provenance", "Provenance")]
    parts.append('<nav class="toc">' + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in toc) + "</nav>")
    parts += _figure_section(made, images)
    for k, (t, body) in enumerate(sections):
        if t:
            parts.append(f'<section id="s{k}"><h2>{markdown.to_html(t).removeprefix("<p>").removesuffix("</p>")}'
                         f"</h2>{markdown.to_html(body, heading_offset=1)}</section>")
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
        parts = [markdown.to_html("\n".join(line for line in head[0].splitlines() if not line.startswith("# ")))]
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
    """Markdown-escaped text (``workflow.text.md``) back to plain text."""
    import html
    import re

    return html.unescape(re.sub(r"\\(.)", r"\1", text))


__all__ = ["Image", "folder_images", "report_html", "write_report"]
