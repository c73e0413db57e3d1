"""Run studies: compute (cached) then render, and write the run's summary macros.

    python -m experiments all                  # full mode: paper/figures, paper/tables, paper/generated
    python -m experiments all --quick          # smoke run into experiments/results/quick/paper
    python -m experiments coverage --render-only
    python -m experiments all --quick --results-dir /tmp/r --paper-dir /tmp/p
    python -m experiments coverage --render-only --archive     # copy its compact files to experiments/archive
    python -m experiments all --render-only --results-dir experiments/archive   # `make render`: from the archive

A study module may declare ``ARCHIVE`` (glob patterns, relative to its results folder, of the compact
files its ``render`` reads) and ``summarize(ctx)`` (writes those files from the full caches).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

import pdpboot

from . import STUDIES, provenance, summary_macros
from . import _common as C

_QUICK_TIMINGS = C.RESULTS / "quick" / "timings.json"
#: A committed copy of a complete quick run's ``timings.json`` (``make quick``, then copy it here), so that a clone
#: rendering from the archive can quote the quick run's time; the local record above wins when it is complete.
_QUICK_TIMINGS_ARCHIVE = C.ARCHIVE / "quick_timings.json"


def _module(study: str):
    return importlib.import_module(f"experiments.{STUDIES[study]}")


def missing_compact_files(ctx: C.Context, study: str) -> list[str]:
    """``ARCHIVE`` patterns of ``study`` that match no file in ``ctx.results_dir`` (empty: ready to render)."""
    module = _module(study)
    folder = Path(ctx.results_dir) / study
    return [p for p in getattr(module, "ARCHIVE", ()) if not any(q.is_file() for q in folder.glob(p))]


def summarize(ctx: C.Context, study: str, *, always: bool) -> None:
    """Write a study's compact files from its caches (``always``, or when some are missing or out of date)."""
    module = _module(study)
    stale = getattr(module, "summaries_stale", lambda ctx: False)
    if hasattr(module, "summarize") and (always or missing_compact_files(ctx, study) or stale(ctx)):
        print(f"[{time.strftime('%H:%M:%S')}] {study}: summarize", file=sys.stderr, flush=True)
        module.summarize(ctx)


def run(studies, ctx: C.Context, *, compute: bool = True, render: bool = True, skip_missing: bool = False) -> dict:
    """Run the given studies in order; returns {study: {"wall": seconds}} of their compute steps.

    ``skip_missing`` (render only): studies whose compact files are missing are skipped, and listed in
    the returned dict under ``"missing"``, instead of raising ``FileNotFoundError``.
    """
    C.agg_backend()
    times: dict = {}
    with threadpool_limits(1):
        for study in studies:
            module = _module(study)
            if compute:
                print(f"[{time.strftime('%H:%M:%S')}] {study}: compute ({ctx.mode})", file=sys.stderr, flush=True)
                before = (ctx.computed, ctx.reused)
                with C.timed() as t:
                    module.compute(ctx)
                times[study] = t
                if getattr(module, "RECORDS_OWN_TIMING", False):
                    pass  # its compute adds each chunk's time to timings.json itself (a stopped run keeps it)
                elif ctx.computed > before[0]:  # all cached: keep the recorded time of the run that computed them
                    C.record_timing(ctx, study, t["wall"], resumed=ctx.reused > before[1])
                print(f"[{time.strftime('%H:%M:%S')}] {study}: compute took {t['wall']:.0f} s wall",
                      file=sys.stderr, flush=True)
            if render:
                try:
                    if not compute and not (Path(ctx.results_dir) / study).is_dir():
                        # Nothing to draw from: never overwrite committed outputs with empty tables.
                        raise FileNotFoundError(f"{study}: no results folder {Path(ctx.results_dir) / study}")
                    summarize(ctx, study, always=compute)
                    missing = missing_compact_files(ctx, study)
                    if missing:
                        raise FileNotFoundError(f"{study}: no compact file matches {missing} in "
                                                f"{Path(ctx.results_dir) / study} (run its compute, or commit its "
                                                "archive with --archive)")
                    module.render(ctx)
                except FileNotFoundError as err:
                    if not skip_missing:
                        raise
                    print(f"SKIPPED {study}: {err}", file=sys.stderr, flush=True)
                    times.setdefault("missing", []).append(study)
        if render:
            write_run_macros(ctx)
            write_pending_macros(ctx)
    return times


_PAPER_SOURCES = Path(__file__).resolve().parents[1] / "paper"
_MACRO_USE = re.compile(r"\\([A-Z][a-z]+)([A-Za-z]*)")
_MACRO_DEF = re.compile(r"\\newcommand\{\\([A-Za-z]+)\}")


def pending_macros(paper_dir: Path, sources: Path = _PAPER_SOURCES) -> list[str]:
    """Generated-number macros the paper quotes that no study has written yet.

    A macro counts as a generated number when its first capitalised word (``Cov`` in ``\\CovAResPerc``)
    starts some macro written to ``paper_dir/generated``; LaTeX's own names (``\\Large``) never do.
    """
    defined: set[str] = set()
    for path in sorted(Path(paper_dir, "generated").glob("*.tex")):
        if path.name != "pending.tex":
            defined.update(_MACRO_DEF.findall(path.read_text()))
    for path in [sources / "main.tex", *sorted((sources / "sections").glob("*.tex"))]:
        defined.update(_MACRO_DEF.findall(path.read_text()))
    families = {_MACRO_USE.match("\\" + name).group(1) for name in defined if _MACRO_USE.match("\\" + name)}
    used = set()
    for path in [sources / "main.tex", *sorted((sources / "sections").glob("*.tex"))]:
        used.update(head + tail for head, tail in _MACRO_USE.findall(path.read_text()) if head in families)
    return sorted(used - defined)


def write_pending_macros(ctx: C.Context) -> None:
    """``generated/pending.tex``: a visible "pending" mark for every number no study has produced yet.

    The paper inputs it last (``\\providecommand``), so it builds before every full run has finished and
    shows where a number is still missing instead of stopping on an undefined macro.
    """
    names = pending_macros(Path(ctx.paper_dir))
    lines = ["% Generated by experiments/ -- do not edit by hand.",
             "% Numbers the paper quotes whose study has not been run in full yet (see paper/README.md)."]
    lines += [f"\\providecommand{{\\{name}}}{{\\fbox{{\\scriptsize pending}}}}" for name in names]
    Path(ctx.out("generated", "pending.tex")).write_text("\n".join(lines) + "\n")


def write_run_macros(ctx: C.Context) -> None:
    """Mode and compute times of the last run of each study (``generated/run.tex``)."""
    timings = C.read_timings(ctx)
    main = ("electricity", "coverage", "heterogeneity", "cost", "real_data")
    # The total is quoted as the paper's compute time: "--" unless every main study's time is known.
    total = (sum(v["wall_seconds"] for k, v in timings.items() if k in STUDIES)
             if all(k in timings for k in main) else float("nan"))
    macros = {"RunMode": ctx.mode, "RunMinutes": C.fmt(total / 60, 0)}
    for study, key in (("electricity", "Electricity"), ("coverage", "Coverage"), ("heterogeneity", "Heterogeneity"),
                       ("cost", "Cost"), ("real_data", "RealData")):
        seconds = timings.get(study, {}).get("wall_seconds", float("nan"))
        macros[f"RunMinutes{key}"] = C.fmt(seconds / 60, 0)
    # The quick (smoke) run's own time, quoted where the paper describes it: this run's timings in quick
    # mode, else those recorded by the last `make quick` in the default folder, else the committed copy of one;
    # "--" unless the record has every study (a partial quick run's sum is not the quick run's time).
    macros["RunQuickMinutes"] = C.fmt(quick_minutes(timings if ctx.quick else None), 1)
    # ... and the whole quick command (imports and rendering included) on the machine and load it recorded.
    run_record = quick_run_record(timings if ctx.quick else None)
    macros["RunQuickWallMinutes"] = C.fmt(run_record.get("wall_seconds", float("nan")) / 60, 1)
    macros["RunQuickLoad"] = C.fmt(run_record.get("load_average_1min", float("nan")), 1)
    macros["RunQuickCores"] = str(run_record.get("cpu_count", "--"))
    macros["RunQuickCPUMinutes"] = C.fmt(run_record.get("cpu_seconds", float("nan")) / 60, 1)
    # The package version the paper describes (JSS): the one this render imports.
    macros["PdpbootVersion"] = pdpboot.__version__
    C.write_macros(ctx.out("generated", "run.tex"), macros)
    # Every study's compute time (or "not recorded") and code version (issue 31, points 1 and 2).
    provenance.render(ctx, timings)
    # Numbers the paper quotes from the side studies' committed summaries (experiments/summaries/).
    summary_macros.render(ctx)


def quick_minutes(timings: dict | None = None, paths=(_QUICK_TIMINGS, _QUICK_TIMINGS_ARCHIVE)) -> float:
    """Minutes of a complete quick run: ``timings`` if given, else the first of ``paths`` that holds every study."""
    records = [timings] if timings is not None else [json.loads(p.read_text()) for p in map(Path, paths) if p.exists()]
    for quick in records:
        if all(study in quick for study in STUDIES):
            return sum(quick[study]["wall_seconds"] for study in STUDIES) / 60
    return float("nan")


def quick_run_record(timings: dict | None = None, paths=(_QUICK_TIMINGS, _QUICK_TIMINGS_ARCHIVE)) -> dict:
    """The ``_run`` entry (whole command: wall seconds, load, cores) of the record :func:`quick_minutes` uses."""
    records = [timings] if timings is not None else [json.loads(p.read_text()) for p in map(Path, paths) if p.exists()]
    for quick in records:
        if all(study in quick for study in STUDIES):
            return quick.get("_run", {})
    return {}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("studies", nargs="*", default=["all"], help=f"'all' or some of {list(STUDIES)}")
    parser.add_argument("--quick", action="store_true", help="small B and repetitions (CI smoke run)")
    parser.add_argument("--results-dir", help="cached computations (default experiments/results/<mode>)")
    parser.add_argument("--paper-dir", help="figures/, tables/, generated/ go here (default: paper/ in full "
                                            "mode, <results-dir>/paper in quick mode)")
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib worker processes (default 2)")
    parser.add_argument("--force", action="store_true", help="recompute even when cached")
    parser.add_argument("--archive", action="store_true",
                        help="afterwards copy each study's compact files (its ARCHIVE) to experiments/archive/<study>")
    parser.add_argument("--skip-missing", action="store_true",
                        help="with --render-only: render the studies whose compact files exist, list the others "
                             "and exit with status 1")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--render-only", action="store_true", help="only redraw from the caches")
    group.add_argument("--compute-only", action="store_true", help="only fill the caches")
    args = parser.parse_args(argv)
    studies = list(STUDIES) if args.studies in (["all"], []) else args.studies
    unknown = [s for s in studies if s not in STUDIES]
    if unknown:
        parser.error(f"unknown studies {unknown}; choose from 'all' or {list(STUDIES)}")
    ctx = C.default_context(args.quick, args.results_dir, args.paper_dir, args.n_jobs, args.force)
    start = time.perf_counter()
    times = run(studies, ctx, compute=not args.render_only, render=not args.compute_only,
                skip_missing=args.skip_missing)
    if not args.render_only and set(studies) == set(STUDIES):
        # The whole command's wall time (imports, every study, rendering), with the machine it ran on: what
        # `make quick` costs a reader, next to the sum of the studies' compute times (issue 31, minor point).
        C.record_run(ctx, time.perf_counter() - start, " ".join(["python -m experiments", *(argv or sys.argv[1:])]))
        if not args.compute_only:
            write_run_macros(ctx)
    if args.archive:
        for study in (s for s in studies if s not in times.get("missing", [])):
            module = _module(study)
            if not hasattr(module, "ARCHIVE"):
                print(f"{study}: no ARCHIVE patterns declared; not archived", file=sys.stderr)
                continue
            summarize(ctx, study, always=False)
            print(f"{study}: archived in {C.archive_study(ctx, study, module.ARCHIVE)}", file=sys.stderr)
    print(f"done in {time.perf_counter() - start:.0f} s; outputs in {ctx.paper_dir}", file=sys.stderr)
    if times.get("missing"):
        print(f"not rendered (compact files missing): {times['missing']}", file=sys.stderr)
        return 1
    return 0
