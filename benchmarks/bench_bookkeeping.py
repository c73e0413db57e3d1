"""Resample bookkeeping of BCa bands at n = 10^6 rows, B = 200 resamples: memory, stored bytes, file size.

What a run keeps of its draws for ``confidence_bands(method="bca")``, measured directly (no models are
fitted: the bookkeeping is the scheme's draws plus what is kept of them), old against new:

- old: every job made up front (its drawn rows held until the run ends), then a B x n counts matrix
  (``uint16``, cast to ``uint8``) stored as ``resample_counts``; the acceleration converted
  ``counts == 0`` to a B x n float matrix at once;
- new: ``_loop.draw_bookkeeping`` draws each job's rows, keeps one bit per row
  (``resample_absent``, ``np.packbits``) and drops them; jobs are made again, one at a time, as they
  are dispatched; the acceleration unpacks the bits in blocks of about 2 MB.

Peak memory is tracemalloc's (NumPy reports its buffers to it) over each step, the stored bytes are the
variable's ``nbytes``, the file size is what :func:`pdpboot.save` adds to a small result for the variable
(netCDF, Zarr).  The acceleration is timed on a 10-point curve; its jackknife values (n x points floats,
the same old and new) are counted in both peaks.  Run: ``python benchmarks/bench_bookkeeping.py``
(``--n 100000 --b 50`` for a quick look).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import xarray as xr
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot._loop import draw_bookkeeping
from pdpboot.engine.intervals import jackknife_acceleration, jackknife_after_bootstrap_acceleration
from pdpboot.engine.resample import Bootstrap

MB = 1e6


def peak(func):
    """(result, peak MB above the start, seconds) of ``func()``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    out = func()
    seconds = time.perf_counter() - start
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, top / MB, seconds


def old_bookkeeping(seeds, n_rows):
    """The previous code: all jobs made before any fit, then their row counts (``_loop.row_counts``)."""
    scheme = Bootstrap()
    jobs = [scheme.job(b, seed, n_rows) for b, seed in enumerate(seeds)]
    counts = np.ones((len(jobs), n_rows), dtype=np.uint16)
    for k, job in enumerate(jobs):
        counts[k] = np.bincount(job.rows, minlength=n_rows)
    return counts.astype(np.uint8) if counts.max(initial=0) < 256 else counts


def new_bookkeeping(seeds, n_rows):
    """The loop's bookkeeping pass, and the dispatch's second making of each job (one at a time)."""
    plan = SimpleNamespace(scheme=Bootstrap(), estimator=LinearRegression(), y=None, sample_weight=None)
    absent, _ = draw_bookkeeping(plan, Bootstrap(), seeds, n_rows)
    for b, seed in enumerate(seeds):
        Bootstrap().job(b, seed, n_rows)  # what dispatch makes as it sends job b (held only while in flight)
    return absent


def old_acceleration(res, counts):
    """The previous acceleration: ``counts == 0`` as one (n, B) float matrix."""
    flat = res.reshape(res.shape[0], -1)
    valid = ~np.isnan(flat)
    out = (counts == 0).astype(float).T
    total = out @ np.where(valid, flat, 0.0)
    n_out = out @ valid.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(n_out > 0, total / n_out, np.nan)
    return jackknife_acceleration(theta, axis=0).reshape(res.shape[1:])


def file_bytes(variable: xr.Variable, suffix: str) -> int:
    """Bytes :func:`pdpboot.save` writes for ``variable`` as a root variable of a small result."""
    X = np.random.default_rng(0).normal(size=(40, 2))
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=variable.shape[0],
                                               grid=pdpboot.Grid(3), rng=0,
                                               execution=pdpboot.Execution(progress=False))
    del res["resample_absent"]
    full = res.copy()
    full["bookkeeping"] = variable
    folder = Path(tempfile.mkdtemp())
    try:
        sizes = []
        for k, tree in enumerate((res, full)):
            path = pdpboot.save(tree, folder / f"r{k}{suffix}")
            files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
            sizes.append(sum(p.stat().st_size for p in files))
        return sizes[1] - sizes[0]
    finally:
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--b", type=int, default=200)
    args = parser.parse_args()
    n, b = args.n, args.b
    seeds = np.random.default_rng(0).spawn(b)
    counts, old_mb, old_s = peak(lambda: old_bookkeeping(seeds, n))
    absent, new_mb, new_s = peak(lambda: new_bookkeeping(seeds, n))
    assert np.array_equal(np.unpackbits(absent.bits, axis=1, count=n).astype(bool), counts == 0)
    res = np.random.default_rng(1).normal(size=(b, 1, 10)) ** 3
    a_old, acc_old_mb, acc_old_s = peak(lambda: old_acceleration(res, counts))
    a_new, acc_new_mb, acc_new_s = peak(lambda: jackknife_after_bootstrap_acceleration(res, absent))
    same = np.array_equal(a_old, a_new)
    old_var = xr.Variable(("resample", "row"), counts)
    new_var = xr.Variable(("resample", "packed_row"), absent.bits, {"n_rows": n})
    rows = [
        ("bookkeeping of the draws: peak MB", f"{old_mb:.0f}", f"{new_mb:.0f}"),
        ("  seconds", f"{old_s:.1f}", f"{new_s:.1f}"),
        ("stored variable: MB", f"{old_var.nbytes / MB:.1f}", f"{new_var.nbytes / MB:.1f}"),
        ("netCDF file: MB", f"{file_bytes(old_var, '.nc') / MB:.1f}", f"{file_bytes(new_var, '.nc') / MB:.1f}"),
        ("Zarr store: MB", f"{file_bytes(old_var, '.zarr') / MB:.1f}", f"{file_bytes(new_var, '.zarr') / MB:.1f}"),
        ("BCa acceleration (10 points): peak MB", f"{acc_old_mb:.0f}", f"{acc_new_mb:.0f}"),
        ("  seconds", f"{acc_old_s:.1f}", f"{acc_new_s:.1f}"),
    ]
    print(f"n = {n}, B = {b}; acceleration old == new bit for bit: {same}")
    print("| | old (`resample_counts`) | new (`resample_absent`) |\n|---|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
