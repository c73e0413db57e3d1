"""Every target of issue 30 measured side by side in one process: prints the rows of ``benchmarks/README.md``.

One thread, CPU time (``time.process_time``), contenders interleaved, medians over repeats, the load
average printed beside every number (the machine is shared: read ratios, not seconds).  Parts:

``forest``   fully grown ``RandomForestRegressor(T)`` fitted on n Friedman #1 rows (the n rows are the
             background), 50-point grids on the 5-95 % quantiles: the ``x0`` curve and all 10 curves of
             one model (the rows recorded during issue 30 also timed the engine as before it, through
             switches since deleted; ``benchmarks/bench_walks.py`` times the walk variants now); the
             exponent in n of one curve and all-10 / one.  Fitted forests are
             cached in ``--cache`` (joblib files).  Cost is linear in the number of trees for both
             the walk and the fit, so ``T = 20`` (default) gives the ratios of ``T = 100``.
``forest-work``  the same forests: the walk's work counted row by row (``benchmarks/forest_work.py``: own
             path, each feature's deviated nodes and ICE pieces per row and tree, first ``--sample-trees``
             trees), the growth of the work per row over n and the all-10 / one bounds it implies.
``forest-bootstrap``  ``bootstrap_partial_dependence`` of the fully grown ``RandomForestRegressor(T)``
             at n rows with the 10 features, B resamples: total CPU / fit floor (the B + 1 fits).
``boosters`` ``benchmarks.bench_fit_share`` (three curves and a 25 x 25 surface, B = 20) for
             LightGBM, XGBoost and HGB at n = 2,000 and 20,000: total / fit floor.
``parallel`` HGB(100), n = 2,000, B = 40, three curves: ``n_jobs=2`` against ``n_jobs=1`` (wall time,
             interleaved; workers started beforehand with ``pdpboot.start_workers``).
``ale``      ``benchmarks.bench_ale_peers`` (one-fit ALE against effector, PyALE, scikit-explain;
             ``bootstrap_ale`` against the PD bootstrap on the same refits).

Every result is appended as a JSON line to ``--out`` (default ``benchmarks/results/issue30.jsonl``).

    python -m benchmarks.bench_issue30 forest --n 10000 30000 100000 --repeats 3
    python -m benchmarks.bench_issue30 forest-work --n 10000 30000 100000
    python -m benchmarks.bench_issue30 forest-bootstrap --n 100000 --resamples 2
    python -m benchmarks.bench_issue30 boosters
    python -m benchmarks.bench_issue30 parallel --repeats 3
    python -m benchmarks.bench_issue30 ale --repeats 5 --resamples 10
    python -m benchmarks.bench_issue30 report            # the table of every recorded row
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

from pdpboot import Grid

OUT = Path(__file__).parent / "results" / "issue30.jsonl"


def _load() -> float:
    try:
        return round(os.getloadavg()[0], 1)
    except (AttributeError, OSError):
        return float("nan")


def _record(path: Path, row: dict) -> None:
    row = {**row, "load_average": _load(), "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def _forest(n: int, trees: int, cache: Path):
    import joblib

    path = cache / f"rf_{n}_{trees}.joblib"
    if path.exists():
        return joblib.load(path)
    X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    start = time.process_time()
    est = RandomForestRegressor(trees, random_state=0, n_jobs=1).fit(X, y)
    fit = time.process_time() - start
    cache.mkdir(parents=True, exist_ok=True)
    joblib.dump((X, y, est, fit), path)
    return X, y, est, fit


def forest(args) -> None:
    from pdpboot.engine import compute_pd_many

    cache = Path(args.cache)
    for n in args.n:
        X, _, est, fit = _forest(n, args.trees, cache)
        grids = [np.linspace(*np.quantile(X[:, j], [0.05, 0.95]), 50) for j in range(10)]

        def pd(sets, X=X, est=est, grids=grids):
            return compute_pd_many(est, X, [[j] for j in sets], [[grids[j]] for j in sets],
                                   response_method="predict", method="tree")

        pd([0])  # untimed: compiled code loaded
        times: dict[str, list[float]] = {k: [] for k in ("now one", "now all 10")}
        for _ in range(args.repeats):
            for key, sets in (("one", [0]), ("all 10", list(range(10)))):
                start = time.process_time()
                pd(sets)
                times[f"now {key}"].append(time.process_time() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        _record(Path(args.out), {"part": "forest", "n": n, "trees": args.trees, "fit_cpu": fit,
                                 "repeats": args.repeats, **{k.replace(" ", "_"): v for k, v in med.items()},
                                 "all10_over_one_now": med["now all 10"] / med["now one"]})


def forest_work(args) -> None:
    from benchmarks.forest_work import count_work

    cache = Path(args.cache)
    for n in args.n:
        X, _, est, _ = _forest(n, args.trees, cache)
        grids = [np.linspace(*np.quantile(X[:, j], [0.05, 0.95]), 50) for j in range(10)]
        work = count_work(est, X, grids, trees=args.sample_trees)
        own, dev, pieces = work["own"], work["dev"], work["pieces"]
        _record(Path(args.out), {"part": "forest-work", "n": n, "trees": args.trees,
                                 "sample_trees": args.sample_trees, **work,
                                 "visits_x0": own + dev[0], "visits_all10": own + sum(dev),
                                 "walk_all10_over_one": (own + sum(dev)) / (own + dev[0]),
                                 "grouped_share_x0": work["dev_grouped"][0] / dev[0],
                                 "grouped_share_all10": sum(work["dev_grouped"]) / sum(dev),
                                 "pieces_bound_all10_over_one": (own + sum(pieces)) / (own + pieces[0])})


def forest_bootstrap(args) -> None:
    import pdpboot
    from benchmarks.bench_fit_share import FIT_SECONDS, TimedForest

    for n in args.n:
        X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
        with threadpool_limits(limits=1):
            pdpboot.bootstrap_partial_dependence(TimedForest(5, n_jobs=1), X[:2000], y[:2000], [0, 1],
                                                 n_resamples=2, rng=0,
                                                 execution=pdpboot.Execution(n_jobs=1, progress=False))
            FIT_SECONDS.clear()
            start = time.process_time()
            pdpboot.bootstrap_partial_dependence(TimedForest(args.trees, random_state=0, n_jobs=1), X, y,
                                                 list(range(10)), n_resamples=args.resamples, grid=Grid(50),
                                                 rng=0, execution=pdpboot.Execution(n_jobs=1, progress=False))
            total = time.process_time() - start
        fit = sum(FIT_SECONDS)
        _record(Path(args.out), {"part": "forest-bootstrap", "n": n, "trees": args.trees, "features": 10,
                                 "resamples": args.resamples, "total_cpu": total, "fit_cpu": fit,
                                 "fits": len(FIT_SECONDS), "ratio": total / fit})


def boosters(args) -> None:
    from benchmarks import bench_fit_share as fs

    for model in args.models:
        for n in args.n:
            X, y = fs.make_friedman1(n, n_features=10, rng=0)
            with threadpool_limits(limits=1):
                fs._warm_up(model, X, y)
            ratios, totals, fits = [], [], []
            for _ in range(args.repeats):
                total, fit, _ = fs._run(argparse.Namespace(model=model, resamples=args.resamples, grid=25), X, y)
                ratios.append(total / fit)
                totals.append(total)
                fits.append(fit)
            _record(Path(args.out), {"part": "boosters", "model": model, "n": n, "resamples": args.resamples,
                                     "total_cpu": statistics.median(totals), "fit_cpu": statistics.median(fits),
                                     "ratio": statistics.median(ratios), "ratios": ratios})


def parallel(args) -> None:
    import pdpboot

    X, y = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=0)
    est = HistGradientBoostingRegressor(max_iter=100)
    start = time.perf_counter()
    workers = pdpboot.start_workers(2)
    started = time.perf_counter() - start

    def run(jobs: int | str) -> float:
        # "1t": one process and one OpenMP/BLAS thread, the serial floor
        threads = threadpool_limits(limits=1) if jobs == "1t" else contextlib.nullcontext()
        start = time.perf_counter()
        with threads:
            pdpboot.bootstrap_partial_dependence(
                est, X, y, [0, 1, 2], n_resamples=args.resamples, rng=0,
                execution=pdpboot.Execution(n_jobs=1 if jobs == "1t" else jobs, progress=False))
        return time.perf_counter() - start

    # n_jobs=1 as a user calls it (the model's own threads: HGB's OpenMP uses both cores) and with one thread
    times: dict = {1: [], "1t": [], 2: []}
    for rep in range(args.repeats):
        for jobs in ((1, "1t", 2) if rep % 2 == 0 else (2, "1t", 1)):
            times[jobs].append(run(jobs))
    one, one_thread, two = (statistics.median(times[k]) for k in (1, "1t", 2))
    _record(Path(args.out), {"part": "parallel", "model": "HGB(100)", "n": 2000, "resamples": args.resamples,
                             "workers": workers, "start_workers_s": started, "wall_1": one,
                             "wall_1_one_thread": one_thread, "wall_2": two, "speedup": one / two,
                             "speedup_vs_one_thread": one_thread / two, "walls_1": times[1],
                             "walls_1_one_thread": times["1t"], "walls_2": times[2]})


def ale(args) -> None:
    from benchmarks import bench_ale_peers

    with threadpool_limits(limits=1):
        res = bench_ale_peers.one_fit(2000, 20, args.repeats)
        base = res["times"]["pdpboot"]
        _record(Path(args.out), {"part": "ale", "n": 2000, "times": res["times"], "max_abs_diff_pyale": res["diff"],
                                 "ratios": {k: v / base for k, v in res["times"].items()}})
        if args.resamples:
            bench_ale_peers.bootstrap(2000, args.resamples, max(1, args.repeats // 2))


def report(args) -> None:
    path = Path(args.out)
    for line in path.read_text().splitlines() if path.exists() else []:
        row = json.loads(line)
        part, load = row["part"], row["load_average"]
        if part == "forest":
            before = (f" (before {row['before_one']:.3f}, {row['speedup_one']:.2f}x)" if "before_one" in row else "")
            print(f"| forest | RF({row['trees']}) fully grown, n = {row['n']:,} | one curve {row['now_one']:.3f} s"
                  f"{before} | all 10 {row['now_all_10']:.3f} s = {row['all10_over_one_now']:.2f}x one | load {load} |")
        elif part == "forest-work":
            print(f"| forest work | RF({row['trees']}) n = {row['n']:,} (first {row['sample_trees']} trees) | per row "
                  f"and tree: own path {row['own']:.1f}, x0 deviated {row['dev'][0]:.1f} ({row['pieces'][0]:.2f} "
                  f"pieces), all 10 deviated {sum(row['dev']):.1f} ({sum(row['pieces']):.1f} pieces); in j-only "
                  f"subtrees {row['pure'][0]:.2f} (x0); rows per occupied leaf {row['rows_per_leaf']:.2f}, rows of a "
                  f"leaf moved as one group: {row.get('grouped_share_x0', float('nan')):.2f} of x0's deviated "
                  f"incidences left | "
                  f"all 10 / one: walk {row['walk_all10_over_one']:.2f}x, row-by-row bound "
                  f"{row['pieces_bound_all10_over_one']:.2f}x | load {load} |")
        elif part == "forest-bootstrap":
            print(f"| forest bootstrap | RF({row['trees']}) n = {row['n']:,}, 10 features, B = {row['resamples']} | "
                  f"total / fit floor {row['ratio']:.3f} ({row['total_cpu']:.1f} / {row['fit_cpu']:.1f} s) "
                  f"| load {load} |")
        elif part == "boosters":
            print(f"| boosters | {row['model']} n = {row['n']:,} B = {row['resamples']} | total / fit floor "
                  f"{row['ratio']:.3f} (runs {', '.join(f'{r:.3f}' for r in row['ratios'])}) | load {load} |")
        elif part == "parallel":
            print(f"| parallel | HGB(100) n = 2,000 B = {row['resamples']} | n_jobs=2 vs 1 {row['speedup']:.2f}x "
                  f"({row['wall_1']:.1f} / {row['wall_2']:.1f} s wall)"
                  + (f"; vs n_jobs=1 on one thread {row['speedup_vs_one_thread']:.2f}x"
                     if "speedup_vs_one_thread" in row else "") + f" | load {load} |")
        elif part == "ale":
            ratios = ", ".join(f"{k} {v:.2f}" for k, v in row["ratios"].items() if k != "pdpboot")
            print(f"| ALE one fit | RF(100, leaf 5) n = 2,000 | peer / pdpboot: {ratios} | load {load} |")
    forest_rows = [json.loads(line) for line in (path.read_text().splitlines() if path.exists() else [])]
    work_rows = {r["n"]: r for r in forest_rows if r["part"] == "forest-work"}
    if 10000 in work_rows and 100000 in work_rows:
        for key in ("visits_x0", "own"):
            ratio = work_rows[100000][key] / work_rows[10000][key]
            print(f"work per row and tree ({key}), 10k -> 100k: {ratio:.2f}x, exponent in n of the total "
                  f"{1 + np.log10(ratio):.2f}")
    forest_rows = [r for r in forest_rows if r["part"] == "forest"]
    for key in ("now_one", "before_one"):
        pts = {r["n"]: r[key] for r in forest_rows if key in r}
        if 10000 in pts and 100000 in pts:
            print(f"exponent in n of one curve ({key.split('_')[0]}), 10k -> 100k: "
                  f"{np.log(pts[100000] / pts[10000]) / np.log(10):.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["forest", "forest-work", "forest-bootstrap", "boosters", "parallel", "ale", "report"]
    parser.add_argument("part", choices=parts)
    parser.add_argument("--n", type=int, nargs="+", default=None)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sample-trees", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--models", nargs="+", default=["lightgbm", "xgboost", "hgb"])
    parser.add_argument("--cache", default="/tmp/pdpboot_bench_issue30")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    defaults = {"forest": ([10000, 30000, 100000], None), "forest-work": ([10000, 30000, 100000], None),
                "forest-bootstrap": ([100000], 2),
                "boosters": ([2000, 20000], 20), "parallel": (None, 40), "ale": (None, 10), "report": (None, None)}
    n, b = defaults[args.part]
    args.n = args.n or n
    args.resamples = b if args.resamples is None else args.resamples
    with threadpool_limits(limits=1):
        {"forest": forest, "forest-work": forest_work, "forest-bootstrap": forest_bootstrap, "boosters": boosters,
         "parallel": parallel, "ale": ale, "report": report}[args.part](args)


if __name__ == "__main__":
    main()
