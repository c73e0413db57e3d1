"""Compute time and code version of every study: the paper's provenance table and its totals.

Each study's archive manifest (``experiments/archive/<study>/MANIFEST.json``, written by ``--archive``)
records the compute time of the run it holds (``timing``) and, since issue 31, the commit of the code that
archived it (``code``; ``timing.code`` is the commit when the computation finished). Archives made before
then name their commit in ``experiments/archive/PROVENANCE.json`` (read from the repository's history:
the commit that added the archive), which also carries notes on runs that mix code versions. A study
whose time was never recorded is listed as "not recorded", never guessed.

Writes ``tables/compute.tex`` (one row per study: the paper's tables and figures it feeds, minutes,
worker processes, load average, commit, note) and ``generated/compute.tex``::

    \\ComputeMinutesRecorded   minutes summed over the studies that recorded a time
    \\ComputeHoursRecorded     the same in hours
    \\ComputeStudiesRecorded   how many studies recorded one
    \\ComputeStudies           how many studies there are
    \\ComputeStudiesMissing    the studies without a recorded time (comma-separated), or "none"
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from . import OUTPUTS, STUDIES
from . import _common as C

#: Commit and notes of archives made before manifests recorded their code version (issue 31, point 2).
PROVENANCE = C.ARCHIVE / "PROVENANCE.json"
_SOURCES = Path(__file__).resolve().parents[1] / "paper"
_FLOAT = re.compile(r"\\begin\{(figure|table)\*?\}(.*?)\\end\{\1\*?\}", re.S)
_TARGET = re.compile(r"\\(?:includegraphics(?:\[[^\]]*\])?|input)\{((?:figures|tables)/[^}]+)\}")
_LABEL = re.compile(r"\\label\{([^}]+)\}")


def float_labels(sources: Path = _SOURCES) -> dict[str, tuple[str, str]]:
    """Generated figure/table file (``tables/coverage``) -> (kind, ``\\label``) of the float that shows it."""
    out: dict[str, tuple[str, str]] = {}
    for path in [sources / "main.tex", *sorted((sources / "sections").glob("*.tex"))]:
        if not path.is_file():
            continue
        tex = re.sub(r"(?<!\\)%.*", "", path.read_text())
        for kind, body in _FLOAT.findall(tex):
            label = _LABEL.search(body)
            for target in _TARGET.findall(body):
                if label:
                    out[re.sub(r"\.(tex|pdf)$", "", target)] = (kind, label.group(1))
    return out


def _feeds(study: str, labels: dict[str, tuple[str, str]]) -> str:
    refs = [labels[t] for t in OUTPUTS.get(study, ()) if t in labels]
    tabs = [r"\ref{" + lab + "}" for kind, lab in refs if kind == "table"]
    figs = [r"\ref{" + lab + "}" for kind, lab in refs if kind == "figure"]
    parts = ([("Tab." if len(tabs) == 1 else "Tabs.") + "~" + ", ".join(tabs)] if tabs else []) + \
            ([("Fig." if len(figs) == 1 else "Figs.") + "~" + ", ".join(figs)] if figs else [])
    return "; ".join(parts) if parts else "text"


def records(results_dir: Path, timings: dict, provenance: dict | None = None) -> list[dict]:
    """One record per study: minutes (NaN if not recorded), n_jobs, load, code commit, note."""
    if provenance is None:
        provenance = json.loads(PROVENANCE.read_text()) if PROVENANCE.is_file() else {}
    rows = []
    for study in STUDIES:
        manifest_path = Path(results_dir) / study / "MANIFEST.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        timing = timings.get(study) or manifest.get("timing") or {}
        known = provenance.get(study, {})
        code = timing.get("code") or manifest.get("code") or known.get("code", "unknown")
        rows.append({"study": study, "minutes": timing.get("wall_seconds", math.nan) / 60,
                     "n_jobs": timing.get("n_jobs"), "load": timing.get("load_average_1min", math.nan),
                     "code": code, "note": known.get("note", "")})
    return rows


def _escape(text: str) -> str:
    return text.replace("_", r"\_").replace("%", r"\%").replace("#", r"\#")


def _code(text: str) -> str:
    return r"\code{" + _escape(text) + "}"


def table(rows: list[dict], labels: dict[str, tuple[str, str]]) -> str:
    """The LaTeX ``tabular`` of :func:`records` (``tables/compute.tex``)."""
    lines = [r"\begin{tabular}{@{}llrrrlp{5.2cm}@{}}", r"\toprule",
             r"Study & Shown in & Minutes & Jobs & Load & Code & Note \\", r"\midrule"]
    for row in rows:
        minutes = "not recorded" if math.isnan(row["minutes"]) else C.fmt(row["minutes"], 0)
        load = "" if math.isnan(row["load"]) else C.fmt(row["load"], 0)
        lines.append(" & ".join([
            _code(row["study"]), _feeds(row["study"], labels), minutes,
            "" if row["n_jobs"] is None else str(row["n_jobs"]), load, _code(row["code"]),
            r"\scriptsize " + _escape(row["note"]) if row["note"] else ""]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def macros(rows: list[dict]) -> dict[str, str]:
    """Totals quoted in the text (see the module docstring)."""
    timed = [r for r in rows if not math.isnan(r["minutes"])]
    minutes = sum(r["minutes"] for r in timed)
    missing = [r["study"].replace("_", r"\_") for r in rows if math.isnan(r["minutes"])]
    return {"ComputeMinutesRecorded": C.fmt(minutes, 0) if timed else "--",
            "ComputeHoursRecorded": C.fmt(minutes / 60, 1) if timed else "--",
            "ComputeStudiesRecorded": str(len(timed)), "ComputeStudies": str(len(rows)),
            "ComputeStudiesMissing": ", ".join(missing) if missing else "none"}


def render(ctx: C.Context, timings: dict) -> None:
    """Write ``tables/compute.tex`` and ``generated/compute.tex`` for the studies of ``ctx.results_dir``."""
    rows = records(Path(ctx.results_dir), timings)
    C.write_table(ctx.out("tables", "compute.tex"), table(rows, float_labels()))
    C.write_macros(ctx.out("generated", "compute.tex"), macros(rows),
                   "Compute time and code version of every study (experiments/provenance.py).")
