"""Exact tree engine (compiled walk) against pdpboot brute force on fully grown forests (issue 14).

Friedman #1 (scikit-learn's generator, 10 features, noise 1), n background rows = the
training rows, ``RandomForestRegressor(100)`` fully grown (fitted with 2 jobs; timed
calls run single-threaded, ``n_jobs=1``, BLAS/OpenMP limited to 1).  Grids: 50 points on
the 5-95 % quantiles of ``x0`` (1-D) and of ``x0`` x ``x1`` (2-D, 50 x 50).

Contenders, each a full ``pdpboot.engine.compute_pd`` call (model reading, planning and
the walk included), interleaved (one run of each per repeat), CPU time
(``time.process_time``), medians over repeats:

* ``kernel`` - ``method="tree"`` with the compiled walk (numba);
* ``brute`` - ``method="brute"`` (row-major stacking) on the whole 1-D grid; for the
  2-D surface (``--brute-2d from-1d``, the default) 2,500 times the per-point time of
  that 1-D run (every grid point is the same n stacked rows through the same predict);
  with ``--brute-2d subset`` on ``k`` and on ``2k`` values of the first grid times the
  whole second grid: its full cost is the subset's time plus the remaining points
  times the per-point slope between the two subsets, which leaves the per-call
  overhead unscaled.  The subsets should hold at least one full block of stacked rows
  (128 MiB for forests: 160 grid points at n = 10k); smaller subsets overstate the
  per-point cost (measured at n = 10k, 20 trees: 5 -> 10 points extrapolate to 1.85 s
  for the 50-point curve, which took 0.87 s).  The number of points is printed.

The largest difference between the kernel's and brute force's PD on the points brute
force evaluated is printed as a check.  Results are appended as JSON lines to
``--out`` (default ``benchmarks/results/kernel.jsonl``); the fitted cost exponent in n
(least squares on log time vs log n over the sizes run) is printed at the end.

Usage::

    python -m benchmarks.bench_kernel --n 1000 10000 --repeats 3
    python -m benchmarks.bench_kernel --n 100000 --trees 20 --repeats 1
    python -m benchmarks.bench_kernel --quick
    python -m benchmarks.bench_kernel --fixed-model 10000 --n 1000 10000 100000   # one model, vary n

By default each n gets its own forest fitted on the n rows, so the trees deepen with n
(fully grown: about log2 n levels) and the work per row grows with them - for brute
force as for the tree engine; ``--fixed-model`` keeps one forest and varies only the
background rows, which isolates the cost's dependence on n.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot.engine.tree as tree_mod
from pdpboot.engine import compute_pd

from ._timing import interleaved_cpu


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


def _subset(grids, k: int):
    """k values of the first grid spread over it, times the whole second grid (2-D)."""
    first = grids[0][np.unique(np.linspace(0, len(grids[0]) - 1, k).round().astype(int))]
    return [first] + list(grids[1:]), first


def run_case_2d(est, X, grids, *, repeats: int, brute_per_point: list[float]) -> dict:
    """2-D surface: the engines timed; brute force = grid points x its per-point time on the
    1-D curve of the same n (same rows and predict per point; one block per 160 points)."""
    features = (0, 1)
    n_grid = len(grids[0]) * len(grids[1])
    contenders = {"kernel": lambda: compute_pd(est, X, features, grids, response_method="predict", method="tree")[0]}
    times, out = interleaved_cpu(contenders, repeats)
    check = compute_pd(est, X, features, [grids[0][::12], grids[1]], response_method="predict", method="brute")[0]
    err = float(np.max(np.abs(out["kernel"][:, ::12] - check)))
    med = {key: statistics.median(v) for key, v in times.items()}
    brute = [p * n_grid for p in brute_per_point]
    med["brute"] = statistics.median(brute)
    ratios = [b / a for a, b in zip(times["kernel"], brute)]
    return {"times": med, "brute_points": 0, "grid_points": n_grid, "brute_from": "1-D per-point time",
            "speedup_vs_brute": statistics.median(ratios), "max_abs_diff": err}


def run_case(est, X, features, grids, *, repeats: int, brute_points: int) -> dict:
    n_grid = int(np.prod([len(g) for g in grids]))
    k = min(brute_points, len(grids[0]))
    sub, first = _subset(grids, k)
    k_total = int(np.prod([len(g) for g in sub]))
    contenders = {
        "kernel": lambda: compute_pd(est, X, features, grids, response_method="predict", method="tree")[0],
        "brute": lambda: compute_pd(est, X, features, sub, response_method="predict", method="brute")[0],
    }
    partial = k_total < n_grid
    if partial:  # a second subset of 2k points: the per-point cost without the per-call overhead
        sub2, _ = _subset(grids, min(2 * k, len(grids[0])))
        k2_total = int(np.prod([len(g) for g in sub2]))
        contenders["brute_2k"] = lambda: compute_pd(est, X, features, sub2, response_method="predict",
                                                    method="brute")[0]
    times, out = interleaved_cpu(contenders, repeats)
    def full(t_k: float, t_2k: float | None) -> float:
        """Brute force's cost on the whole grid: the k-point time plus the per-point slope."""
        if t_2k is None:
            return t_k
        slope = max(t_2k - t_k, 0.0) / (k2_total - k_total)
        return t_k + (n_grid - k_total) * slope

    brute_full = [full(a, b if partial else None)
                  for a, b in zip(times["brute"], times.get("brute_2k", times["brute"]))]
    med = {key: statistics.median(v) for key, v in times.items() if key != "brute_2k"}
    med["brute"] = statistics.median(brute_full)
    rank = np.searchsorted(grids[0], first)
    kern = out["kernel"][:, rank]
    err = float(np.max(np.abs(kern - out["brute"].reshape(kern.shape))))
    ratios = [b / a for a, b in zip(times["kernel"], brute_full)]
    return {"times": med, "brute_points": k_total, "grid_points": n_grid,
            "speedup_vs_brute": statistics.median(ratios), "max_abs_diff": err,
            "brute_per_point": [b / n_grid for b in brute_full]}


def report(paths) -> None:
    """Markdown table and fitted exponents from result files (JSON lines of this script)."""
    rows = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines() if line.strip()]
    print("| forest | n | grid | kernel s | brute s | kernel vs brute | NumPy walks s | max abs diff | load |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        t = r["times"]
        forest = f"RF({r['trees']})" + (f", fitted on {r['fixed_model_rows']:,} rows" if r.get("fixed_model_rows")
                                        else ", fitted on the n rows")
        numpy = f"{t['numpy']:.3f}" if "numpy" in t else "—"
        print(f"| {forest} | {r['n']:,} | {r['grid']} | {t['kernel']:.3f} | {t['brute']:.2f} | "
              f"**{r['speedup_vs_brute']:.1f}×** | {numpy} | {r['max_abs_diff']:.1e} | {r['load_average']:.0f} |")
    groups = {}
    for r in rows:
        groups.setdefault((r["trees"], r.get("fixed_model_rows"), r["grid"]), []).append(r)
    for (trees, fixed, grid), rs in groups.items():
        if len({r["n"] for r in rs}) < 2:
            continue
        ns = np.log([r["n"] for r in rs])
        for key in ("kernel", "brute"):
            slope = np.polyfit(ns, np.log([r["times"][key] for r in rs]), 1)[0]
            print(f"exponent in n, {key}, RF({trees}), fixed model {fixed}, grid {grid}: {slope:.2f} "
                  f"(n = {[r['n'] for r in rs]})")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--brute-points", type=int, default=50, help="1-D grid points brute force evaluates")
    parser.add_argument("--brute-points-2d", type=int, default=4,
                        help="2-D: values of the first grid brute force evaluates (times the whole second grid)")
    parser.add_argument("--brute-2d", choices=["from-1d", "subset"], default="from-1d",
                        help="2-D brute cost: grid points x the 1-D per-point time, or timed on grid subsets")
    parser.add_argument("--no-2d", action="store_true")
    parser.add_argument("--quick", action="store_true", help="n = 1000, 20 trees, one repeat")
    parser.add_argument("--fixed-model", type=int, default=0, metavar="N_FIT",
                        help="fit one forest on N_FIT rows and vary only the background rows")
    parser.add_argument("--out", default="benchmarks/results/kernel.jsonl")
    parser.add_argument("--report", nargs="+", metavar="FILE", help="print the table of earlier results and exit")
    args = parser.parse_args(argv)
    if args.report:
        report(args.report)
        return
    if args.quick:
        args.n, args.trees, args.repeats = [1000], 20, 1
    print(f"compiled walk available: {tree_mod.kernel_available()}; load average {_load():.1f}", flush=True)
    results = []
    fixed = None
    if args.fixed_model:
        X_all, y_all = make_friedman1(n_samples=max(args.n), n_features=10, noise=1.0, random_state=0)
        X_fit, y_fit = make_friedman1(n_samples=args.fixed_model, n_features=10, noise=1.0, random_state=1)
        fixed = RandomForestRegressor(args.trees, random_state=0, n_jobs=2).fit(X_fit, y_fit)
        fixed.set_params(n_jobs=1)
    for n in args.n:
        start = time.perf_counter()
        if fixed is None:
            X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
            est = RandomForestRegressor(args.trees, random_state=0, n_jobs=2).fit(X, y)
        else:
            X, est = X_all[:n], fixed
        fit_wall = time.perf_counter() - start
        est.set_params(n_jobs=1)
        base = X if fixed is None else X_all  # one grid for every n with a fixed model
        grids = [np.quantile(base[:, j], np.linspace(0.05, 0.95, 50)) for j in (0, 1)]
        cases = [((0,), grids[:1], args.brute_points)]
        if not args.no_2d:
            cases.append(((0, 1), grids, args.brute_points_2d))
        with threadpool_limits(limits=1):
            compute_pd(est, X, (0,), [grids[0][:2]], response_method="predict", method="tree")  # warm-up
            per_point = None
            for features, g, k in cases:
                load = _load()
                if len(features) == 2 and args.brute_2d == "from-1d" and per_point is not None:
                    row = run_case_2d(est, X, g, repeats=args.repeats, brute_per_point=per_point)
                else:
                    row = run_case(est, X, features, g, repeats=args.repeats, brute_points=k)
                    per_point = row.pop("brute_per_point")
                row.update(n=n, trees=args.trees, fixed_model_rows=args.fixed_model or None,
                            grid="x".join(str(len(a)) for a in g), repeats=args.repeats,
                           load_average=load, fit_wall_2jobs=fit_wall,
                           date=time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
                results.append(row)
                t = row["times"]
                extra = f" numpy {t['numpy']:.3f}s ({t['numpy'] / t['kernel']:.2f}x)" if "numpy" in t else ""
                src = row.get("brute_from") or f"from {row['brute_points']} of {row['grid_points']} points"
                print(f"n={n:>7} grid {row['grid']:<6} kernel {t['kernel']:.3f}s | brute {t['brute']:.2f}s "
                      f"({src}) -> {row['speedup_vs_brute']:.1f}x"
                      f" |{extra} | max|diff| {row['max_abs_diff']:.1e} | load {load:.1f}", flush=True)
                out = Path(args.out)
                out.parent.mkdir(parents=True, exist_ok=True)
                with out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    for grid in sorted({r["grid"] for r in results}):
        pts = [(r["n"], r["times"]["kernel"]) for r in results if r["grid"] == grid]
        if len(pts) >= 2:
            slope = np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0]
            print(f"grid {grid}: cost exponent in n (kernel) {slope:.2f} over n = {[p[0] for p in pts]}")


if __name__ == "__main__":
    main()
