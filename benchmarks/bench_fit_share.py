"""Bootstrap total time against the fit floor with the exact tree engine (issues 3 and 14).

Friedman #1 (10 features), n rows, B resamples, three 1-D features and one 2-D pair
(``x1``, ``x2``, ``x3``, ``(x1, x2)``) on ``--grid``-point grids, PD over each resample's
rows (the default), ``n_jobs=1`` so every fit is in this process.  ``fit`` is timed
inside the run by a subclass that adds up the CPU seconds spent in it; the *fit floor* is
that sum (B + 1 fits: the original and one per resample), the ratio total / fit floor is
what the bootstrap costs beyond fitting (issue 14's target: at most 1.25).  By default a tiny
bootstrap of the same model runs first, untimed, so that the one-time costs of the process
(numba's import and compiled-code cache, about 1-2 s CPU; xarray's lazy imports) are not
counted - scikit-learn's own import is not counted either; ``--cold`` counts them.

Models: ``rf`` = RandomForestRegressor(100) fully grown, ``rf5`` = the same with
``min_samples_leaf=5``, ``hgb`` = HistGradientBoostingRegressor(100 iterations).

    python -m benchmarks.bench_fit_share --model rf --n 2000 --resamples 50
    python -m benchmarks.bench_fit_share --model hgb --n 20000 --resamples 20
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot
from pdpboot.datasets import make_friedman1
from pdpboot.engine.tree import kernel_available

FIT_SECONDS: list[float] = []


class TimedForest(RandomForestRegressor):
    """A random forest that records the CPU time of each fit."""

    def fit(self, X, y, sample_weight=None):
        start = time.process_time()
        out = super().fit(X, y, sample_weight=sample_weight)
        FIT_SECONDS.append(time.process_time() - start)
        return out


class TimedHGB(HistGradientBoostingRegressor):
    """A histogram gradient boosting model that records the CPU time of each fit."""

    def fit(self, X, y, sample_weight=None):
        start = time.process_time()
        out = super().fit(X, y, sample_weight=sample_weight)
        FIT_SECONDS.append(time.process_time() - start)
        return out


MODELS = {
    "rf": lambda: TimedForest(n_estimators=100, random_state=0, n_jobs=1),
    "rf5": lambda: TimedForest(n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=1),
    "hgb": lambda: TimedHGB(max_iter=100, random_state=0),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="rf")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--grid", type=int, default=25, help="grid points per feature")
    parser.add_argument("--cold", action="store_true",
                        help="no warm-up run: the one-time costs of the process count in the total")
    parser.add_argument("--out", default="", help="append a JSON line with the result to this file")
    args = parser.parse_args(argv)
    X, y = make_friedman1(args.n, n_features=10, rng=0)
    est = MODELS[args.model]()
    load = os.getloadavg()[0]
    warmup = 0.0
    if not args.cold:  # one-time costs of the process (numba import, compiled-code cache, xarray's lazy imports)
        start = time.process_time()
        with threadpool_limits(limits=1):
            pdpboot.bootstrap_partial_dependence(MODELS[args.model](), X[:200], y[:200], ["x1", ("x1", "x2")],
                                                 n_resamples=2, grid_resolution=5, n_jobs=1, rng=0, progress=False)
        warmup = time.process_time() - start
    FIT_SECONDS.clear()
    with threadpool_limits(limits=1):
        start = time.process_time()
        pdpboot.bootstrap_partial_dependence(est, X, y, ["x1", "x2", "x3", ("x1", "x2")],
                                             n_resamples=args.resamples, grid_resolution=args.grid, n_jobs=1,
                                             rng=0, progress=False)
        total = time.process_time() - start
    fit = sum(FIT_SECONDS)
    row = {"model": args.model, "n": args.n, "resamples": args.resamples, "grid": args.grid,
           "kernel": kernel_available(), "total_cpu": total, "fit_cpu": fit, "fits": len(FIT_SECONDS),
           "ratio": total / fit, "cold": args.cold, "warmup_cpu": warmup,
           "load_average": load, "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print(f"{args.model} n={args.n} B={args.resamples}: total {total:.1f} s CPU, fit floor {fit:.1f} s "
          f"({len(FIT_SECONDS)} fits) -> total / fit floor {total / fit:.3f} (target <= 1.25); "
          f"compiled walk {row['kernel']}; {'cold process' if args.cold else f'after a {warmup:.1f} s warm-up'}; "
          f"load {load:.1f}", flush=True)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
