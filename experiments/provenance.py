"""Compute time and code version of every study: the paper's provenance table and its totals.

Each study's archive manifest (``experiments/archive/<study>/MANIFEST.json``, written by ``--archive``)
records the compute time of the run it holds (``timing``) and, since issue 31, the commit of the code that
archived it (``code``; ``timing.code`` is the commit when the computation finished). Archives made before
then name their commit in ``experiments/archive/PROVENANCE.json`` (read from the repository's history:
the commit that added the archive), which also carries notes on runs that mix code versions.

A study whose time was never recorded shows the CPU minutes that :mod:`.time_estimate` measured for its
archive (``experiments/archive/TIME_ESTIMATES.json``), marked as an estimate ("$\\approx$ 12 (est.)" and a
note under the table); an estimate whose archive fingerprint no longer matches the archive is stale and
ignored, and a study with neither is "not recorded".  Nothing is measured here.

Writes ``tables/compute.tex`` (one row per study: the paper's tables and figures it feeds, minutes,
worker processes, load average, commit, note; then the recorded, estimated and total minutes) and
``generated/compute.tex``::

    \\ComputeMinutesRecorded   minutes summed over the studies that recorded a time (wall clock)
    \\ComputeHoursRecorded     the same in hours
    \\ComputeStudiesRecorded   how many studies recorded one
    \\ComputeMinutesEstimated  CPU minutes summed over the estimated studies
    \\ComputeHoursEstimated    the same in hours
    \\ComputeStudiesEstimated  how many studies are estimated
    \\ComputeStudiesEstimatedList  which (comma-separated), or "none"
    \\ComputeMinutesTotal      recorded plus estimated minutes (the table's last row)
    \\ComputeHoursTotal        the same in hours
    \\ComputeStudies           how many studies there are
    \\ComputeStudiesMissing    the studies with neither a recorded time nor an estimate, or "none"
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
#: CPU-time estimates of the studies whose archive records no time (written by ``experiments/time_estimate.py``).
ESTIMATES = C.ARCHIVE / "TIME_ESTIMATES.json"
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


def _fingerprint(folder: Path) -> str | None:
    """Fingerprint of an archive folder (as :func:`experiments.time_estimate.fingerprint`), None without one."""
    import hashlib

    path = folder / "MANIFEST.json"
    if not path.is_file():
        return None
    files = json.loads(path.read_text()).get("files", {})
    text = json.dumps({k: v["sha256"] for k, v in sorted(files.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def records(results_dir: Path, timings: dict, provenance: dict | None = None,
            estimates: dict | None = None) -> list[dict]:
    """One record per study: minutes (NaN if neither recorded nor estimated), n_jobs, load, code, note.

    ``estimated`` is True when the minutes are the CPU-time estimate of ``estimates`` (default: the committed
    ``TIME_ESTIMATES.json``) because the archive records no time; an estimate of another archive (its
    ``archive_fingerprint`` differs from the folder's) is not used.
    """
    if provenance is None:
        provenance = json.loads(PROVENANCE.read_text()) if PROVENANCE.is_file() else {}
    if estimates is None:
        estimates = json.loads(ESTIMATES.read_text()) if ESTIMATES.is_file() else {}
    rows = []
    for study in STUDIES:
        folder = Path(results_dir) / study
        manifest_path = folder / "MANIFEST.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        timing = timings.get(study) or manifest.get("timing") or {}
        known = provenance.get(study, {})
        code = timing.get("code") or manifest.get("code") or known.get("code", "unknown")
        row = {"study": study, "minutes": timing.get("wall_seconds", math.nan) / 60, "estimated": False,
               "n_jobs": timing.get("n_jobs"), "load": timing.get("load_average_1min", math.nan),
               "code": code, "note": known.get("note", "")}
        estimate = estimates.get(study)
        if math.isnan(row["minutes"]) and estimate and estimate.get("archive_fingerprint") == _fingerprint(folder):
            row.update(minutes=float(estimate["cpu_minutes"]), estimated=True)
        rows.append(row)
    return rows


def _escape(text: str) -> str:
    return text.replace("_", r"\_").replace("%", r"\%").replace("#", r"\#")


def _note(text: str) -> str:
    """A note for the table: escaped, with the method names spelled as in every other table (``sup-$t$``)."""
    from .learners import METHOD_LABELS

    return _escape(text).replace("sup-t", METHOD_LABELS["sup-t"])


def _code(text: str) -> str:
    return r"\code{" + _escape(text) + "}"


#: How the estimates were made (the note under the table).
ESTIMATE_NOTE = (r"$\approx$ (est.): the archive records no time; CPU minutes of one process estimated by "
                 r"re-running the first 1--3 repetitions of every cell with the study's own code and settings "
                 r"(\code{time.process\_time}) times the archive's repetitions, or summed from the CPU time the "
                 r"archive records per repetition (forest\_ij, debiased), rounded up; "
                 r"\code{experiments/time\_estimate.py}, "
                 r"\code{experiments/archive/TIME\_ESTIMATES.json}. Recorded times are wall-clock minutes.")


def _minutes_cell(row: dict) -> str:
    if math.isnan(row["minutes"]):
        return "not recorded"
    if row.get("estimated", False):
        return r"$\approx$ " + C.fmt(_shown(row["minutes"], estimated=True), 0) + " (est.)"
    return C.fmt(row["minutes"], 0)


def _shown(minutes: float, estimated: bool = False) -> float:
    """The minutes as the table prints them: whole minutes, as :func:`experiments._common.fmt` rounds a
    recorded time, and rounded up for an estimate (a study of a few CPU seconds shows 1, not 0)."""
    return float(math.ceil(minutes)) if estimated else float(f"{minutes:.0f}")


def totals(rows: list[dict]) -> dict[str, float]:
    """Minutes recorded, estimated and their sum, as sums of the whole minutes the rows print (so the table's
    column adds up to its totals); rows neither recorded nor estimated count in neither."""
    recorded = sum(_shown(r["minutes"]) for r in rows if not r.get("estimated", False) and not math.isnan(r["minutes"]))
    estimated = sum(_shown(r["minutes"], estimated=True) for r in rows if r.get("estimated", False))
    return {"recorded": recorded, "estimated": estimated, "total": recorded + estimated}


def table(rows: list[dict], labels: dict[str, tuple[str, str]]) -> str:
    """The LaTeX ``tabular`` of :func:`records` (``tables/compute.tex``), with the recorded, estimated and total
    minutes as its last rows and, when a row is estimated, the note saying how."""
    lines = [r"\begin{tabular}{@{}llrrrlp{5.2cm}@{}}", r"\toprule",
             r"Study & Shown in & Minutes & Jobs & Load & Code & Note \\", r"\midrule"]
    for row in rows:
        load = "" if math.isnan(row["load"]) else C.fmt(row["load"], 0)
        lines.append(" & ".join([
            _code(row["study"]), _feeds(row["study"], labels), _minutes_cell(row),
            "" if row["n_jobs"] is None else str(row["n_jobs"]), load, _code(row["code"]),
            r"\scriptsize " + _note(row["note"]) if row["note"] else ""]) + r" \\")
    total = totals(rows)
    n_recorded = sum(not r.get("estimated", False) and not math.isnan(r["minutes"]) for r in rows)
    n_estimated = sum(bool(r.get("estimated", False)) for r in rows)
    studies = (lambda k: f"{k} stud{'y' if k == 1 else 'ies'}")  # noqa: E731
    lines += [r"\midrule", rf"Recorded & {studies(n_recorded)} & {C.fmt(total['recorded'], 0)} & & & & \\"]
    if n_estimated:
        lines += [rf"Estimated & {studies(n_estimated)} & $\approx$ {C.fmt(total['estimated'], 0)} (est.) & & & & \\",
                  rf"Total & {studies(n_recorded + n_estimated)} & $\approx$ {C.fmt(total['total'], 0)} & & & & \\"]
    else:
        lines.append(rf"Total & {studies(n_recorded)} & {C.fmt(total['total'], 0)} & & & & \\")
    lines.append(r"\bottomrule")
    if n_estimated:
        lines.append(r"\multicolumn{7}{@{}p{\linewidth}@{}}{\scriptsize " + ESTIMATE_NOTE + "}")
    lines += [r"\end{tabular}", ""]
    return "\n".join(lines)


def macros(rows: list[dict]) -> dict[str, str]:
    """Totals quoted in the text (see the module docstring)."""
    recorded = [r for r in rows if not r.get("estimated", False) and not math.isnan(r["minutes"])]
    estimated = [r for r in rows if r.get("estimated", False)]
    total = totals(rows)
    missing = [r["study"].replace("_", r"\_") for r in rows if math.isnan(r["minutes"])]
    hours = (lambda m, ok: C.fmt(m / 60, 1) if ok else "--")  # noqa: E731
    return {"ComputeMinutesRecorded": C.fmt(total["recorded"], 0) if recorded else "--",
            "ComputeHoursRecorded": hours(total["recorded"], recorded),
            "ComputeStudiesRecorded": str(len(recorded)),
            "ComputeMinutesEstimated": C.fmt(total["estimated"], 0) if estimated else "--",
            "ComputeHoursEstimated": hours(total["estimated"], estimated),
            "ComputeStudiesEstimated": str(len(estimated)),
            "ComputeStudiesEstimatedList": ", ".join(r["study"].replace("_", r"\_") for r in estimated) or "none",
            "ComputeMinutesTotal": C.fmt(total["total"], 0) if recorded or estimated else "--",
            "ComputeHoursTotal": hours(total["total"], recorded or estimated),
            "ComputeStudies": str(len(rows)),
            "ComputeStudiesMissing": ", ".join(missing) if missing else "none"}


def render(ctx: C.Context, timings: dict) -> None:
    """Write ``tables/compute.tex`` and ``generated/compute.tex`` for the studies of ``ctx.results_dir``."""
    rows = records(Path(ctx.results_dir), timings)
    C.write_table(ctx.out("tables", "compute.tex"), table(rows, float_labels()))
    C.write_macros(ctx.out("generated", "compute.tex"), macros(rows),
                   "Compute time and code version of every study (experiments/provenance.py).")


def main(argv=None) -> int:
    """Re-render only ``tables/compute.tex`` and ``generated/compute.tex`` from the committed archive (what
    ``make render`` writes for them), e.g. after ``experiments/time_estimate.py`` updated the estimates."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m experiments.provenance", description=main.__doc__)
    parser.add_argument("--results-dir", default=str(C.ARCHIVE))
    parser.add_argument("--paper-dir", default=str(C.PAPER))
    args = parser.parse_args(argv)
    ctx = C.Context(quick=False, results_dir=Path(args.results_dir), paper_dir=Path(args.paper_dir), n_jobs=1)
    render(ctx, C.read_timings(ctx))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
