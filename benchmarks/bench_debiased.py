"""Cost of the debiased DGP-PD estimator against the B = 200 refit bootstrap, on the same data.

Friedman #1 (10 features, noise 1), n rows (default 500 and 2000), the coverage study's learners
(random forest: 30 trees, a third of the features per split, leaves >= 5; histogram boosting: 100
rounds), PD of x1, x3, x4 on 15 grid points.  ``debiased_partial_dependence`` fits the learner
K = 5 times plus K density-ratio classifiers per feature and evaluates ICE on the grid plus a
64-point fine grid; ``bootstrap_partial_dependence`` refits B = 200 times.  CPU seconds of one
single-threaded process (OpenMP/BLAS limited to one thread), interleaved repeats, medians; the
printed ratio is bootstrap / debiased.

Usage::

    python -m benchmarks.bench_debiased [--repeats 3] [--n 500 2000] [--B 200] [--learners rf gbm]

Every row is also appended to ``benchmarks/results/debiased.jsonl`` with the time and the load average.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks._timing import interleaved_cpu
from pdpboot import Execution, Grid, bootstrap_partial_dependence, debiased_partial_dependence
from pdpboot.datasets import make_friedman1

LEARNERS = {
    "rf": lambda: RandomForestRegressor(n_estimators=30, max_features=0.33, min_samples_leaf=5),
    "gbm": lambda: HistGradientBoostingRegressor(max_iter=100, learning_rate=0.1, early_stopping=False),
}


def run(n: int, learner: str, B: int, repeats: int) -> dict:
    X, y = make_friedman1(n, rng=0)
    features = ["x1", "x3", "x4"]
    custom = {f: np.linspace(0.05, 0.95, 15) for f in features}
    contenders = {
        "debiased": lambda: debiased_partial_dependence(LEARNERS[learner](), X, y, features,
                                                        grid=Grid(custom_values=custom), rng=0),
        "bootstrap": lambda: bootstrap_partial_dependence(LEARNERS[learner](), X, y, features, n_resamples=B,
                                                          grid=Grid(custom_values=custom), rng=0,
                                                          execution=Execution(n_jobs=1, progress=False)),
    }
    with threadpool_limits(1):
        times, _ = interleaved_cpu(contenders, repeats)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"n": n, "learner": learner, "B": B, "repeats": repeats, "debiased_s": med["debiased"],
            "bootstrap_s": med["bootstrap"], "ratio": med["bootstrap"] / med["debiased"],
            "debiased_all": times["debiased"], "bootstrap_all": times["bootstrap"],
            "load": os.getloadavg()[0],
            "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


RESULTS = Path(__file__).parent / "results" / "debiased.jsonl"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, nargs="*", default=[500, 2000])
    parser.add_argument("--B", type=int, default=200)
    parser.add_argument("--learners", nargs="*", default=list(LEARNERS))
    args = parser.parse_args(argv)
    print(f"{'learner':8} {'n':>6} {'debiased [s]':>13} {'bootstrap B=' + str(args.B) + ' [s]':>20} {'ratio':>7} "
          f"{'load':>5}")
    for learner in args.learners:
        for n in args.n:
            r = run(n, learner, args.B, args.repeats)
            print(f"{learner:8} {n:6d} {r['debiased_s']:13.2f} {r['bootstrap_s']:20.2f} {r['ratio']:7.1f} "
                  f"{r['load']:5.1f}", flush=True)
            with RESULTS.open("a") as fh:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
