"""Shared plumbing of the paper's experiments: run context, cached results, macros, tables, figures.

Every study module (``electricity`` ... ``real_data``) has ``compute(ctx)``, which runs the
expensive part and caches it as netCDF under ``ctx.results_dir / <study>``, and ``render(ctx)``,
which writes figures (``ctx.paper_dir / "figures"``), LaTeX tables (``tables``) and LaTeX macros
(``generated``).  A colour change therefore reruns ``render`` only.

Archive.  ``render`` reads only the study's *compact* files, those matched by its ``ARCHIVE`` glob
patterns (relative to its results folder).  Where the caches hold every resample curve, the study
also has ``summarize(ctx)``, which writes those compact files from the caches (bands, per-replication
coverage indicators); ``python -m experiments <study> --archive`` copies them, with a
``MANIFEST.json`` (files, sizes, SHA-256, run mode and date), into ``experiments/archive/<study>/``,
which is committed; ``make render`` then redraws the paper from the archive alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "paper"
RESULTS = ROOT / "experiments" / "results"
ARCHIVE = ROOT / "experiments" / "archive"
#: Largest archive of one study (bytes): compact summaries only, never every resample.
ARCHIVE_MAX_BYTES = 3_000_000

#: Column widths of the paper (inches): a full text width and a half of it.
FULL_WIDTH = 6.5
HALF_WIDTH = 3.2


@dataclass
class Context:
    """Where a run reads and writes, and how hard it works.

    Attributes
    ----------
    quick : bool
        Small B and few repetitions (CI smoke run) instead of the paper's numbers.
    results_dir : Path
        Cached computations (netCDF, JSON timings), one sub-folder per study.
    paper_dir : Path
        Receives ``figures/``, ``tables/`` and ``generated/``.
    n_jobs : int
        Worker processes (joblib) for repetitions and resamples.
    force : bool
        Recompute even when a cache exists.
    """

    quick: bool = False
    results_dir: Path = field(default_factory=lambda: RESULTS / "full")
    paper_dir: Path = field(default_factory=lambda: PAPER)
    n_jobs: int = 2
    force: bool = False
    computed: int = 0  # cache files computed in this run
    reused: int = 0  # cache files found and reused

    def needs(self, path) -> bool:
        """Whether the cache file ``path`` must be computed (missing, or ``force``); counts both cases."""
        if Path(path).exists() and not self.force:
            self.reused += 1
            return False
        self.computed += 1
        return True

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"

    def study_dir(self, study: str) -> Path:
        path = Path(self.results_dir) / study
        path.mkdir(parents=True, exist_ok=True)
        return path

    def out(self, kind: str, name: str) -> Path:
        """Path of an output file: ``kind`` is ``figures``, ``tables`` or ``generated``."""
        path = Path(self.paper_dir) / kind
        path.mkdir(parents=True, exist_ok=True)
        return path / name


def default_context(quick: bool, results_dir=None, paper_dir=None, n_jobs: int = 2, force: bool = False) -> Context:
    """Full runs write into ``paper/``; quick runs into ``experiments/results/quick/paper`` by default."""
    mode = "quick" if quick else "full"
    results = Path(results_dir) if results_dir else RESULTS / mode
    if paper_dir:
        paper = Path(paper_dir)
    else:
        paper = PAPER if not quick else results / "paper"
    return Context(quick=quick, results_dir=results, paper_dir=paper, n_jobs=n_jobs, force=force)


# --------------------------------------------------------------------------- seeds


def seed_sequence(*keys: int | str) -> np.random.SeedSequence:
    """A SeedSequence from integers and strings (strings hashed stably, not with ``hash()``)."""
    entropy = []
    for key in keys:
        if isinstance(key, str):
            entropy.append(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little"))
        else:
            entropy.append(int(key))
    return np.random.SeedSequence(entropy)


# --------------------------------------------------------------------------- caches


def cached(path: Path, ctx: Context, compute: Callable[[], xr.Dataset]) -> xr.Dataset:
    """Load ``path`` if it exists (and ``ctx.force`` is off), else compute, save and return it."""
    path = Path(path)
    if not ctx.needs(path):
        return load_dataset(path)
    ds = compute()
    save_dataset(ds, path)
    return ds


def save_dataset(ds: xr.Dataset, path: Path, *, compress: bool = False) -> None:
    """Write ``ds`` atomically; ``compress``: zlib (level 9) for every data variable (archived summaries)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.nc")
    encoding = {v: {"zlib": True, "complevel": 9} for v in ds.data_vars} if compress else None
    ds.to_netcdf(tmp, encoding=encoding)
    os.replace(tmp, path)


def compact_tree(tree):
    """A pdpboot result without its resample curves (``*_resamples``, ``resample_absent``).

    Estimates, ICE curves and the bands already added (``confidence_bands``, ``ice_heterogeneity``,
    ``h_statistic``) are kept, which is all the plotting functions draw.
    """
    nodes = {}
    for node in tree.subtree:
        ds = node.to_dataset(inherit=False)
        drop = [v for v in ds.data_vars if str(v).endswith("_resamples") or str(v) == "resample_absent"]
        nodes[node.path] = ds.drop_vars(drop)
    return xr.DataTree.from_dict(nodes, name=tree.name)


def archive_study(ctx: Context, study: str, patterns, dest: Path | None = None) -> Path:
    """Copy a study's compact files (``patterns``, globs under its results folder) to the archive.

    Writes ``<dest>/<study>/MANIFEST.json`` (file, bytes, SHA-256; mode and date of the run); raises
    ``FileNotFoundError`` if a pattern matches nothing and ``ValueError`` above ``ARCHIVE_MAX_BYTES``.
    """
    import shutil

    source = Path(ctx.results_dir) / study
    target = Path(dest or ARCHIVE) / study
    if source.resolve() == target.resolve():
        raise ValueError("--archive copies from the results folder into experiments/archive; they are the same.")
    files = []
    for pattern in patterns:
        found = sorted(p for p in source.glob(pattern) if p.is_file())
        if not found:
            raise FileNotFoundError(f"{study}: nothing matches {pattern!r} in {source}; run its compute first.")
        files += found
    total = sum(p.stat().st_size for p in files)
    if total > ARCHIVE_MAX_BYTES:
        raise ValueError(f"{study}: the compact files take {total / 1e6:.1f} MB, above the archive's limit of "
                         f"{ARCHIVE_MAX_BYTES / 1e6:.1f} MB per study; summarise them further.")
    if target.exists():
        shutil.rmtree(target)
    manifest = {"study": study, "mode": ctx.mode, "archived": time.strftime("%Y-%m-%d %H:%M:%S"), "files": {}}
    for p in files:
        rel = p.relative_to(source).as_posix()
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target / rel)
        manifest["files"][rel] = {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    manifest["code"] = code_version()
    timings = read_timings(ctx)
    if study in timings:
        manifest["timing"] = timings[study]
    (target / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return target


def archived_timings(results_dir: Path) -> dict:
    """Compute times recorded in the archive's manifests, as ``read_timings`` returns them."""
    out = {}
    for manifest in sorted(Path(results_dir).glob("*/MANIFEST.json")):
        data = json.loads(manifest.read_text())
        if "timing" in data:
            out[data["study"]] = data["timing"]
    return out


def load_dataset(path: Path) -> xr.Dataset:
    with xr.open_dataset(path) as ds:
        return ds.load()


def record_timing(ctx: Context, study: str, wall: float, *, resumed: bool) -> None:
    """Store the compute time of a study in ``results_dir/timings.json``.

    ``resumed``: part of the caches existed already, so this run's time is added to the recorded one.
    """
    path = Path(ctx.results_dir) / "timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    note = {}
    if resumed and study in data:
        wall += data[study]["wall_seconds"]
        note = {k: v for k, v in data[study].items() if k == "note"}
    data[study] = {"wall_seconds": round(wall, 1), "n_jobs": ctx.n_jobs, "load_average_1min": os.getloadavg()[0],
                   "finished": time.strftime("%Y-%m-%d %H:%M:%S"), "code": code_version(), **note}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def record_run(ctx: Context, wall: float, command: str) -> None:
    """Store the wall time of a whole ``python -m experiments`` command as ``_run`` in ``timings.json``."""
    path = Path(ctx.results_dir) / "timings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    import resource

    # CPU seconds of this process and of its finished children (joblib workers): unlike the wall time,
    # hardly inflated by other jobs on a shared machine.
    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    data["_run"] = {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "command": command,
                    "n_jobs": ctx.n_jobs,
                    "cpu_count": os.cpu_count(), "load_average_1min": os.getloadavg()[0],
                    "finished": time.strftime("%Y-%m-%d %H:%M:%S"), "code": code_version()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def code_version(root: Path = ROOT) -> str:
    """The commit the package and the studies run from (``git describe``-like short hash), for provenance.

    ``"<hash>+modified"`` when ``pdpboot/`` or ``experiments/`` differ from that commit (uncommitted code
    computed the numbers); ``"unknown"`` outside a git checkout.
    """
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "pdpboot", "experiments/*.py")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}+modified" if dirty else commit


def read_timings(ctx: Context) -> dict:
    """``timings.json`` of the results folder; in the archive, the times its manifests record."""
    path = Path(ctx.results_dir) / "timings.json"
    if path.exists():
        return json.loads(path.read_text())
    return archived_timings(ctx.results_dir)


@contextmanager
def timed() -> Iterator[dict]:
    """Wall-clock seconds of a block (``out["wall"]``)."""
    out: dict = {}
    start = time.perf_counter()
    yield out
    out["wall"] = time.perf_counter() - start


def mean_se(values) -> tuple[float, float]:
    """Mean of ``values`` and its Monte Carlo SE (SD over the values / sqrt(count); NaN for one value)."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


# --------------------------------------------------------------------------- LaTeX output

_MACRO_NAME = re.compile(r"[A-Za-z]+")


def fmt(value: float, digits: int = 2) -> str:
    """A number for the text: fixed decimals, a minus sign for negatives, ``--`` for NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    text = f"{value:.{digits}f}"
    return text.replace("-", "$-$") if text.startswith("-") else text


def write_macros(path: Path, macros: Mapping[str, Any], comment: str = "") -> None:
    r"""Write ``\newcommand{\Name}{value}`` lines; names must be letters only (LaTeX rule)."""
    lines = ["% Generated by experiments/ -- do not edit by hand."]
    if comment:
        lines.append(f"% {comment}")
    for name, value in macros.items():
        if not _MACRO_NAME.fullmatch(name):
            raise ValueError(f"LaTeX macro names must be letters only; got {name!r}.")
        lines.append(f"\\newcommand{{\\{name}}}{{{value}}}")
    Path(path).write_text("\n".join(lines) + "\n")


def write_summary(folder: Path, recs, text: str, stem: str = "summary") -> None:
    """Write a study's summary records (``<stem>.json``) and its printed table (``<stem>.txt``) into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(recs, indent=1))
    (folder / f"{stem}.txt").write_text(text)


def write_table(path: Path, body: str) -> None:
    Path(path).write_text("% Generated by experiments/ -- do not edit by hand.\n" + body)


def savefig(fig, ctx: Context, name: str) -> Path:
    """Save ``fig`` as ``figures/<name>.pdf`` and close it."""
    import matplotlib.pyplot as plt

    path = ctx.out("figures", f"{name}.pdf")
    # No creation date: re-rendering unchanged results gives byte-identical files (no spurious diffs).
    fig.savefig(path, bbox_inches="tight", pad_inches=0.02, metadata={"CreationDate": None})
    plt.close(fig)
    return path


def agg_backend() -> None:
    import matplotlib

    matplotlib.use("Agg")


def absent_rows(counts: np.ndarray):
    """The package's record of the rows each resample did not draw, from a study's stored row counts
    ``(n_resamples, n_rows)`` (what BCa's acceleration reads: ``band_arrays(absent=...)``)."""
    from pdpboot.engine.resample import AbsentRows

    counts = np.asarray(counts)
    return AbsentRows(np.packbits(counts == 0, axis=1), counts.shape[1])
