"""Speed of the exact tree engine against scikit-learn's brute and recursion PD.

Friedman #1 (10 features, noise 1), n = 2,000 background rows (the training rows),
RandomForestRegressor(n_estimators=100, min_samples_leaf=5) and
HistGradientBoostingRegressor(max_iter=200); a 50-point curve of x0 and a 50 x 50
surface of (x0, x1), grids on the 5-95 % percentiles.  Single core: OpenMP/BLAS
limited to one thread, forests predict with n_jobs=None.  Each repeat times every
method once, side by side; the table shows medians over repeats and the ratios.
The engine's average and ICE are checked against sklearn's brute result.

Usage::

    python -m benchmarks.bench_tree [--repeats 3] [--n 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence
from threadpoolctl import threadpool_limits

from pdpboot.engine.tree import tree_partial_dependence


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _case(est, X, features, grids, repeats: int) -> dict:
    custom = dict(zip(features, grids))
    runs = {"engine": [], "engine_ice": [], "brute": [], "recursion": []}
    for _ in range(repeats):
        t, (avg, _) = _timed(
            lambda: tree_partial_dependence(est, X, features, grids, response_method="predict")
        )
        runs["engine"].append(t)
        t, (_, ice) = _timed(
            lambda: tree_partial_dependence(
                est, X, features, grids, response_method="predict", average=False, individual=True
            )
        )
        runs["engine_ice"].append(t)
        t, brute = _timed(
            lambda: partial_dependence(
                est, X, list(features), method="brute", kind="both", custom_values=custom
            )
        )
        runs["brute"].append(t)
        t, rec = _timed(
            lambda: partial_dependence(est, X, list(features), method="recursion", custom_values=custom)
        )
        runs["recursion"].append(t)
    med = {k: statistics.median(v) for k, v in runs.items()}
    for key, individual in (("peak_avg", False), ("peak_ice", True)):
        tracemalloc.start()
        tree_partial_dependence(
            est, X, features, grids, response_method="predict", average=not individual, individual=individual
        )
        med[key] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    med["ice_out"] = ice.nbytes / 2**20
    med["err_avg"] = float(np.abs(avg - brute["average"]).max())
    med["err_ice"] = float(np.abs(ice[:, 0] - brute["individual"][0]).max())
    med["rec_diff"] = float(np.abs(rec["average"] - brute["average"]).max())
    return med


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per method (median)")
    parser.add_argument("--n", type=int, default=2000, help="background / training rows")
    args = parser.parse_args(argv)

    X, y = make_friedman1(n_samples=args.n, n_features=10, noise=1.0, random_state=0)
    grid = [np.quantile(X[:, j], np.linspace(0.05, 0.95, 50)) for j in (0, 1)]
    models = {
        "RandomForest(100, leaf>=5)": RandomForestRegressor(
            n_estimators=100, min_samples_leaf=5, random_state=0
        ),
        "HistGradientBoosting(200)": HistGradientBoostingRegressor(max_iter=200, random_state=0),
    }
    header = (
        f"{'model':<28}{'PD':>7}{'engine s':>10}{'ICE s':>9}{'brute s':>10}{'recur s':>9}"
        f"{'brute/eng':>11}{'brute/ICE':>11}{'recur/eng':>11}{'max|err|':>10}{'|rec-brute|':>13}"
        f"{'peak MiB':>10}{'ICE peak/out':>14}"
    )
    print(f"Friedman #1, n={args.n}, 10 features; single thread; median of {args.repeats} repeats")
    print(header)
    print("-" * len(header))
    with threadpool_limits(limits=1):
        for name, est in models.items():
            est.fit(X, y)
            for features, grids, label in [((0,), grid[:1], "50"), ((0, 1), grid, "50x50")]:
                r = _case(est, X, features, grids, args.repeats)
                speedup, speedup_ice = r["brute"] / r["engine"], r["brute"] / r["engine_ice"]
                print(
                    f"{name:<28}{label:>7}{r['engine']:>10.4f}{r['engine_ice']:>9.3f}{r['brute']:>10.3f}"
                    f"{r['recursion']:>9.4f}{speedup:>10.0f}x{speedup_ice:>10.1f}x"
                    f"{r['recursion'] / r['engine']:>10.2f}x{max(r['err_avg'], r['err_ice']):>10.1e}"
                    f"{r['rec_diff']:>13.2e}{r['peak_avg']:>10.1f}{r['peak_ice']:>7.0f}/{r['ice_out']:<6.0f}",
                    flush=True,
                )
    print("brute/eng: sklearn brute (average+ICE) time / engine average time; brute/ICE: same over the")
    print("engine's ICE time; recur/eng > 1 means the engine is faster than sklearn's recursion, which")
    print("computes a different quantity (|rec-brute| is its distance from the brute-force PD).")
    print("peak MiB: largest traced allocation peak of one engine call (average only); ICE peak/out:")
    print("the same for an ICE call, next to the size of the ICE output itself.")


if __name__ == "__main__":
    main()
