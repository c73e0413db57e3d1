"""Estimated CPU time of the studies whose archive records none (issue 31, point 1).

Seven studies (bands, htest, bounded, classification, ale, forest_ij, debiased) were archived before their
manifests recorded a compute time.  For each, this module splits the archived run into *parts* (a cell of
repetitions, the truth fits, a diagnostic), takes the number of units of every part **from the archive** (the
repetitions its files hold; the study's own ``SETTINGS`` only where the archive does not say, e.g. the number
of truth fits, and then says so), and gets each part's CPU seconds per unit in one of two ways:

``measured``
    a few units are re-run with the study's **own** compute functions, full-mode settings as archived (the same
    n, B, K, learners, grid; the study's own seeds for the first units), in one process with one BLAS thread,
    and timed with :func:`time.process_time` (CPU time: other jobs on a shared machine hardly inflate it);
    the estimate is the mean per unit times the archive's number of units;
``archive``
    the archive itself records the CPU time of every unit (``forest_ij``'s ``time``, ``debiased``'s ``cpu``):
    those are summed, and only what they leave out is measured.

The result, per study (minutes, parts, units timed, units in the archive, commit, date, a fingerprint of the
archive it describes), is written to ``experiments/archive/TIME_ESTIMATES.json``, which :mod:`.provenance`
renders into the paper's compute table as estimates ("\\approx 12 (est.)"), never as recorded times.  Nothing is
computed at render time.

    nice -n 15 python -m experiments.time_estimate [--studies bands htest ...] [--sample 2]

Each measured part is cached in ``experiments/results/time_estimate/<study>.json`` (the run resumes).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _common as C

#: The committed estimates (read by :mod:`.provenance`).
ESTIMATES = C.ARCHIVE / "TIME_ESTIMATES.json"
#: Measured parts, cached so that an interrupted run resumes.
CACHE = C.RESULTS / "time_estimate"
#: Studies whose archive records no compute time (the ones this module estimates).
STUDIES = ("bands", "htest", "bounded", "classification", "ale", "forest_ij", "debiased")


@dataclass
class Part:
    """One part of a study's archived run: ``count`` units, each timed by ``run(i)`` or recorded in the archive.

    Attributes
    ----------
    name : str
        What the part is (``"smooth null ols/additive"``).
    count : int
        Units of the part in the archive (repetitions, truth fits, data sets).
    unit : str
        What one unit is.
    run : callable or None
        ``run(i)`` computes unit ``i`` with the study's own code (``None``: nothing to measure).
    sample : int
        Units to time (the first ones, with the study's own seeds).
    recorded_seconds : float
        CPU seconds the archive itself records for the part (added to the measured extrapolation).
    scale : float
        Units represented by one call of ``run`` (a diagnostic timed on a fraction of its data sets).
    note : str
        Where ``count`` comes from when not from the archive's files, or what the timing leaves out.
    """

    name: str
    count: int
    unit: str
    run: Callable[[int], object] | None = None
    sample: int = 2
    recorded_seconds: float = 0.0
    scale: float = 1.0
    note: str = ""


# --------------------------------------------------------------------------- parts of each study


def _full_context(folder: Path) -> C.Context:
    return C.Context(quick=False, results_dir=Path(folder), paper_dir=Path(folder) / "paper", n_jobs=1, force=True)


def _bands_parts(archive: Path, sample: int) -> list[Part]:
    from . import simultaneous_bands as sb

    records = json.loads((archive / "summary.json").read_text())
    R, B = max(r["R"] for r in records), max(r["B"] for r in records)
    cfg = dict(sb.SETTINGS["full"], R=R, B=B)

    def seeds():
        return C.seed_sequence(cfg["seed"], sb.STUDY).spawn(2)

    reps = seeds()[1].spawn(R)
    truth = seeds()[0].spawn(cfg["truth_fits"])
    return [Part(f"repetitions (n = {cfg['n']}, B = {B})", R, "repetition",
                 lambda i: sb._repetition(cfg, reps[i]), sample=max(sample, 3)),
            Part("truth fits", cfg["truth_fits"], "fit", lambda i: sb._truth_fit(cfg, truth[i]), sample=20,
                 note="number of truth fits from the module's SETTINGS (the archive keeps summaries only)")]


def _nc_reps(files: list[str]) -> tuple[int, dict]:
    """Repetitions (``rep`` dim) summed over netCDF files, and the attrs of the first."""
    total, attrs = 0, {}
    for f in files:
        ds = C.load_dataset(Path(f))
        total += int(ds.sizes.get("rep", 0))
        attrs = attrs or dict(ds.attrs)
    return total, attrs


def _htest_parts(archive: Path, sample: int) -> list[Part]:
    from . import h_test_size_power as ht

    parts = []
    for null_model, prefix in ht.PREFIX.items():
        for learner in ht.SETTINGS["full"]["reps"]:
            for dgp in ht.SETTINGS_DGP:
                files = sorted(glob.glob(str(archive / f"{prefix}{learner}_{dgp}_0*.nc")))
                if not files:
                    continue
                count, attrs = _nc_reps(files)
                n_max = int(attrs.get("n_max", ht.ARCHIVED_N_MAX))
                overrides = {"n": int(attrs["n"]), "K": int(attrs["K"]), "n_max": n_max}
                cfg = ht._settings(_full_context(archive), overrides)
                seeds = C.seed_sequence(cfg["seed"], learner, dgp).spawn(count)

                def run(i, learner=learner, dgp=dgp, cfg=cfg, seeds=seeds, null_model=null_model):
                    return ht._one(learner, dgp, cfg, False, seeds[i], null_model)

                parts.append(Part(f"{null_model} null {learner}/{dgp} (n = {overrides['n']}, K = {overrides['K']}, "
                                  f"n_max = {n_max})", count, "test", run,
                                  sample=sample if null_model == "smooth" else 1,
                                  note="" if "n_max" in attrs else f"n_max = {n_max}: ht.ARCHIVED_N_MAX (not in the "
                                                                    "archived files)"))
    for name, file in (("decomposition", "decomposition_00000.nc"), ("shrinkage", "shrinkage_00000.nc")):
        path = archive / file
        if not path.exists():
            continue
        count = int(C.load_dataset(path).sizes["rep"])
        n = int(C.load_dataset(path).attrs["n"])
        timed = 2

        def run(i, name=name, timed=timed, n=n):
            with tempfile.TemporaryDirectory() as tmp:
                ctx = _full_context(Path(tmp))
                if name == "decomposition":
                    ht.compute_decomposition(ctx, n_sets=timed)
                else:
                    ht.compute_shrinkage(ctx, n_sets=timed, overrides={"n": n})

        parts.append(Part(f"{name} diagnostic ({count} data sets)", count, "data set", run, sample=1, scale=timed,
                          note=f"timed on its first {timed} data sets"))
    return parts


def _bounded_parts(archive: Path, sample: int) -> list[Part]:
    from . import bounded_statistics as bs

    records = json.loads((archive / "summary.json").read_text())
    cfg = dict(bs.SETTINGS["full"])
    parts = []
    for dgp, learner, R, B in sorted({(r["dgp"], r["learner"], r["R"], r["B"]) for r in records}):
        key = f"{dgp}:{learner}"
        run = dict(cfg["runs"][key], B=B)

        def seeds(key=key):
            return C.seed_sequence(cfg["seed"], key).spawn(2)

        reps = seeds()[1].spawn(cfg["runs"][key]["R"])
        truth = seeds()[0].spawn(run["T"])
        parts.append(Part(f"{key} repetitions (n = {cfg['n']}, B = {B})", R, "repetition",
                          lambda i, dgp=dgp, learner=learner, run=run, reps=reps:
                          bs._repetition(dgp, learner, cfg, run, False, reps[i]), sample=sample))
        parts.append(Part(f"{key} truth fits", run["T"], "fit",
                          lambda i, dgp=dgp, learner=learner, truth=truth: bs._truth_fit(dgp, learner, cfg, False,
                                                                                          truth[i]),
                          sample=10, note="number of truth fits from the module's SETTINGS"))
    return parts


def _classification_parts(archive: Path, sample: int) -> list[Part]:
    from . import classification_coverage as cc

    cfg = cc.SETTINGS["full"]
    parts = []
    for name, settings in cfg["runs"].items():
        files = sorted(glob.glob(str(archive / f"{name}_0*.nc")))
        if not files:
            continue
        R, _ = _nc_reps(files)
        B = int(C.load_dataset(Path(files[0])).sizes["resample"])
        run = dict(settings, B=B)
        truth_seed, rep_seed = C.seed_sequence(cfg["seed"], name).spawn(2)
        reps, truth = rep_seed.spawn(settings["R"]), truth_seed.spawn(settings["T"])
        parts.append(Part(f"{name} repetitions (n = {cfg['n']}, B = {B})", R, "repetition",
                          lambda i, name=name, run=run, reps=reps: cc._repetition(name, cfg, run, False, reps[i]),
                          sample=sample))
        parts.append(Part(f"{name} truth fits", settings["T"], "fit",
                          lambda i, name=name, truth=truth: cc._truth_fit(name, cfg, False, truth[i]), sample=10,
                          note="number of truth fits from the module's SETTINGS"))
    return parts


def _ale_parts(archive: Path, sample: int) -> list[Part]:
    from . import ale_coverage as ac

    parts = []
    for rho in sorted(ac.RHOS, reverse=True):
        for learner in ac.LEARNERS:
            files = sorted(glob.glob(str(archive / f"coverage_{learner}_rho{rho:g}_part*.nc")))
            if not files:
                continue
            R, attrs = _nc_reps(files)
            n, B = int(attrs["n"]), int(attrs["B"])
            seeds = C.seed_sequence(ac.STUDY, learner, int(rho * 10)).spawn(R)
            parts.append(Part(f"{learner} rho = {rho:g} (n = {n}, B = {B})", R, "repetition",
                              lambda i, learner=learner, rho=rho, n=n, B=B, seeds=seeds:
                              ac.one_repetition(learner, rho, n, B, False, seeds[i]), sample=sample))
    if (archive / "figure.nc").exists():
        n = int(ac.settings(False)["n"])
        parts.append(Part("figure (boosting, rho = 0.9, B = 200)", 1, "run",
                          lambda i: ac._figure_data(False, {"n": n}), sample=1))
    return parts


def _forest_ij_parts(archive: Path, sample: int) -> list[Part]:
    """Recorded per-repetition CPU (``time``; IJ cells also ``forest_pd_time``) plus, for IJ cells, the
    jackknife-after-bootstrap variance the recorded ``time`` leaves out, measured on one repetition."""
    from threadpoolctl import threadpool_limits

    from . import forest_ij as fi

    parts = []
    for folder in sorted(p for p in archive.glob("*/*") if p.is_dir()):
        files = sorted(folder.glob("rep*.npz"))
        if not files:
            continue
        arrays = [np.load(f) for f in files]
        recorded = sum(float(a["time"]) + float(a["forest_pd_time"]) if "forest_pd_time" in a.files
                       else float(a["time"]) for a in arrays)
        scenario, name = folder.parent.name, folder.name
        dgp, n = scenario.rsplit("_n", 1)
        fields = name.split("_")
        kind, trees = fields[0], int(fields[1][1:])
        ms = next((float(f[2:]) for f in fields if f.startswith("ms")), None)
        B = next((int(f[1:]) for f in fields if f.startswith("B")), 0)
        cell = fi.Cell(dgp, int(n), kind, trees, len(files), max_samples=ms, n_resamples=B)
        first = int(files[0].stem[3:])
        if kind != "ij":
            parts.append(Part(f"{scenario}/{name}", len(files), "repetition", None, sample=0,
                              recorded_seconds=recorded,
                              note="CPU recorded per repetition (the whole bootstrap call)"))
            continue

        def run(i, cell=cell, first=first):
            fi._warm_up()
            X, y = fi._data(cell.dgp, cell.n, first + i)
            with threadpool_limits(1), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                start = time.process_time()
                out = fi._ij_run(X, y, cell, fi._cell_seed(cell, first + i))
                total = time.process_time() - start
            return {"unrecorded_seconds": total - float(out["time"]) - float(out["forest_pd_time"])}

        parts.append(Part(f"{scenario}/{name}", len(files), "repetition", run, sample=1, recorded_seconds=recorded,
                          note="CPU recorded per repetition (fit, per-tree PDs, IJ, one forest PD) plus the "
                               "jackknife variance it leaves out, measured on one repetition"))
    return parts


def _debiased_parts(archive: Path, sample: int) -> list[Part]:
    """Sum of the per-repetition CPU the archived summary records (mean CPU x R per row), nothing re-run."""
    rows = json.loads((archive / "summary.json").read_text())
    parts = []
    for row in rows:
        parts.append(Part(f"{row['setting']} ({row['estimator']} estimator)", int(row["R"]), "repetition", None,
                          sample=0, recorded_seconds=float(row["cpu"]) * int(row["R"]),
                          note="mean CPU per repetition recorded in the summary, times R"))
        paired = row.get("paired_current")
        if paired:
            parts.append(Part(f"{row['setting']} current estimator on the paired data sets", int(paired["R"]),
                              "repetition", None, sample=0, recorded_seconds=float(row["cpu"]) * int(paired["R"]),
                              note="CPU not recorded: the row's recorded mean CPU per repetition, times R"))
        refit = row.get("refit_same_data")
        if refit:
            parts.append(Part(f"{row['setting']} refit bootstrap on the same data (B = {refit['B']})",
                              int(refit["R"]), "repetition", None, sample=0,
                              recorded_seconds=float(refit["cpu"]) * int(refit["R"]),
                              note="mean CPU per repetition recorded in the summary, times R"))
    figures = [name for name in ("figure_electricity.nc", "figure_anes.nc") if (archive / name).exists()]
    if figures:
        from . import debiased_coverage as dc

        def run(i):
            with tempfile.TemporaryDirectory() as tmp:
                dc.compute_figures(_full_context(Path(tmp)))

        parts.append(Part("figures (electricity, ANES 1996)", 1, "run", run, sample=1,
                          note="both figure fits timed once with the current estimator"))
    return parts


PARTS = {"bands": _bands_parts, "htest": _htest_parts, "bounded": _bounded_parts,
         "classification": _classification_parts, "ale": _ale_parts, "forest_ij": _forest_ij_parts,
         "debiased": _debiased_parts}

# --------------------------------------------------------------------------- measure and store


def fingerprint(archive: Path) -> str:
    """SHA-256 (first 16 hex digits) of the archive's file list and checksums: which archive an estimate is of."""
    files = json.loads((Path(archive) / "MANIFEST.json").read_text())["files"]
    text = json.dumps({k: v["sha256"] for k, v in sorted(files.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def measure(part: Part) -> dict:
    """CPU seconds of the part: its first ``sample`` units timed (mean x count / scale) plus what is recorded."""
    per_unit, timed, spent = [], min(part.sample, part.count) if part.run else 0, 0.0
    for i in range(timed):
        start = time.process_time()
        out = part.run(i)
        elapsed = time.process_time() - start
        spent += elapsed
        # a run that measured the share its archive does not record returns it (forest_ij)
        if isinstance(out, dict) and "unrecorded_seconds" in out:
            elapsed = out["unrecorded_seconds"]
        per_unit.append(elapsed / part.scale)
    measured = float(np.mean(per_unit)) * part.count if per_unit else 0.0
    return {"part": part.name, "unit": part.unit, "units_in_archive": part.count,
            "units_timed": int(timed * part.scale), "cpu_seconds_per_unit": round(float(np.mean(per_unit)), 3)
            if per_unit else None, "cpu_seconds_recorded": round(part.recorded_seconds, 1),
            "cpu_seconds": round(measured + part.recorded_seconds, 1), "timing_cpu_seconds": round(spent, 1),
            "note": part.note}


def estimate_study(study: str, archive_root: Path = C.ARCHIVE, sample: int = 2, cache: Path = CACHE) -> dict:
    """Estimate one study (resuming from the cached parts) and return its record.

    The first unit of the first part to measure runs once untimed (a warm-up), so that one-off costs (imports,
    numba compilation, scikit-learn's first-call checks) are not multiplied by the archive's repetitions.
    """
    archive = Path(archive_root) / study
    cache_file = Path(cache) / f"{study}.json"
    done = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    key = fingerprint(archive)
    if done.get("fingerprint") != key:
        done = {"fingerprint": key, "parts": {}}
    from threadpoolctl import threadpool_info, threadpool_limits

    # The parts first: they import the study's modules, hence scikit-learn's OpenMP runtime, which a
    # threadpool_limits entered before it was loaded would not limit (2 OpenMP threads under load: CPU time
    # inflated by spinning threads).
    parts = PARTS[study](archive, sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        todo = [p for p in parts if p.name not in done["parts"]]
        runnable = [p for p in todo if p.run is not None]
        if runnable:  # one untimed unit first: imports, caches and compilation are not a unit's cost
            with threadpool_limits(1):
                runnable[0].run(0)
        with threadpool_limits(1):  # again: the warm-up may have loaded more thread pools
            for part in todo:
                start = time.perf_counter()
                done["parts"][part.name] = measure(part)
                threads = [(info["internal_api"], info["num_threads"]) for info in threadpool_info()]
                if any(n != 1 for _, n in threads):
                    raise RuntimeError(f"time_estimate: {part.name} ran with more than one thread: {threads}.")
                print(f"[{time.strftime('%H:%M:%S')}] {study}: {part.name}: "
                      f"{done['parts'][part.name]['cpu_seconds'] / 60:.1f} min estimated "
                      f"({time.perf_counter() - start:.0f} s wall to time)", file=sys.stderr, flush=True)
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                cache_file.write_text(json.dumps(done, indent=1))
    parts = list(done["parts"].values())
    measured = any(p["units_timed"] for p in parts)
    return {"cpu_minutes": round(sum(p["cpu_seconds"] for p in parts) / 60, 1),
            "method": "measured sample" if measured else "recorded in the archive",
            "cells": len(parts), "units_in_archive": sum(p["units_in_archive"] for p in parts),
            "units_timed": sum(p["units_timed"] for p in parts),
            "cpu_minutes_recorded_in_archive": round(sum(p["cpu_seconds_recorded"] for p in parts) / 60, 1),
            "archive_fingerprint": key, "code": C.code_version(), "date": time.strftime("%Y-%m-%d"),
            "parts": parts}


ABOUT = ("CPU minutes of each study whose archive records no compute time (issue 31, point 1), written by "
         "experiments/time_estimate.py: every part of the archived run (a cell of repetitions, the truth fits, a "
         "diagnostic) counts its units from the archive; its CPU seconds per unit were measured by re-running the "
         "first units with the study's own code and full-mode settings as archived (one process, one BLAS thread, "
         "time.process_time) and multiplied by the archive's units, or summed from the CPU the archive records per "
         "repetition (forest_ij, debiased). CPU time, not wall time: runs with 2 workers took about half as long. "
         "archive_fingerprint: the archive an estimate describes (provenance.py ignores a stale one).")


def write(estimates: dict, path: Path = ESTIMATES) -> None:
    data = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    data.update(estimates)
    data["_about"] = ABOUT
    Path(path).write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")


def summary(estimates: dict) -> str:
    """A plain-text table of the estimates: per study, then per part."""
    lines = [f"{'study':15s} {'CPU min':>8s} {'of it recorded':>14s} {'parts':>5s} {'units':>6s} {'timed':>5s}  "
             f"{'timing CPU s':>12s}  code     date"]
    total = 0.0
    for study, rec in estimates.items():
        if study.startswith("_"):
            continue
        timing = sum(p.get("timing_cpu_seconds", (p["cpu_seconds_per_unit"] or 0) * p["units_timed"])
                     for p in rec["parts"])
        total += rec["cpu_minutes"]
        lines.append(f"{study:15s} {rec['cpu_minutes']:8.1f} {rec['cpu_minutes_recorded_in_archive']:14.1f} "
                     f"{rec['cells']:5d} {rec['units_in_archive']:6d} {rec['units_timed']:5d}  {timing:12.0f}  "
                     f"{rec['code']}  {rec['date']}")
    lines.append(f"{'total':15s} {total:8.1f}")
    for study, rec in estimates.items():
        if study.startswith("_"):
            continue
        lines.append(f"\n{study}:")
        for p in rec["parts"]:
            per = "" if p["cpu_seconds_per_unit"] is None else f"{p['cpu_seconds_per_unit']:.3f} s/unit"
            lines.append(f"  {p['part']:70s} {p['units_timed']:3d}/{p['units_in_archive']:5d} {per:>14s} "
                         f"{p['cpu_seconds'] / 60:7.1f} min  {p['note']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.time_estimate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", nargs="*", default=list(STUDIES), choices=STUDIES)
    parser.add_argument("--sample", type=int, default=2, help="repetitions timed per cell (default 2)")
    parser.add_argument("--summary", action="store_true",
                        help="print the committed estimates (TIME_ESTIMATES.json) and measure nothing")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(json.loads(ESTIMATES.read_text())))
        return 0
    out = {}
    for study in args.studies:
        out[study] = estimate_study(study, sample=args.sample)
        print(f"{study}: {out[study]['cpu_minutes']} CPU min ({out[study]['method']}, "
              f"{out[study]['units_timed']} of {out[study]['units_in_archive']} units timed)", flush=True)
        write({study: out[study]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
