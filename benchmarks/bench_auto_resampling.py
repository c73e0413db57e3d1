"""The cost of ``resampling="auto"`` for a classifier (issue 27 item 1): the 0.632 subsample against the bootstrap.

``auto`` refits a classifier on floor(0.632 n) rows drawn without replacement; the bootstrap on n rows drawn
with replacement (about 0.632 n distinct rows, repeated).  Both run B refits and evaluate the PD over the
resample's own rows, so the difference is what the learner's fit and the PD cost on fewer rows.  One process,
one thread, CPU time (``time.process_time``), the two contenders interleaved (load drifts hit both alike),
medians over repeats.

    python -m benchmarks.bench_auto_resampling --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics

import numpy as np
from scipy.special import expit
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

import pdpboot
from pdpboot import Grid

from ._timing import interleaved_cpu

LEARNERS = {
    "hgb_clf": lambda: HistGradientBoostingClassifier(max_iter=60, random_state=0),
    "rf_clf": lambda: RandomForestClassifier(n_estimators=60, min_samples_leaf=5, n_jobs=1, random_state=0),
    "logreg": lambda: LogisticRegression(),
}


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.uniform(size=n) < expit(X[:, 0] + np.sin(2 * X[:, 1]) - 0.5 * X[:, 2])).astype(int)
    return X, y


def compare(learner: str, n: int, n_resamples: int, repeats: int) -> dict:
    """Median CPU seconds of one run per scheme and their ratio (auto / bootstrap)."""
    X, y = _data(n)

    def run(scheme: str):
        return lambda: pdpboot.bootstrap_partial_dependence(
            LEARNERS[learner](), X, y, [0, 1], n_resamples=n_resamples, grid=Grid(12), rng=0,
            resampling=scheme, execution=pdpboot.Execution(n_jobs=1, progress=False))

    times, outputs = interleaved_cpu({"auto": run("auto"), "bootstrap": run("bootstrap")}, repeats)
    assert outputs["auto"].attrs["resampling"] == "subsample"
    assert outputs["bootstrap"].attrs["resampling"] == "bootstrap"
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"learner": learner, "n": n, "B": n_resamples, "auto_s": med["auto"], "bootstrap_s": med["bootstrap"],
            "ratio": med["auto"] / med["bootstrap"], "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=list(LEARNERS))
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'learner':8s} {'n':>6s} {'B':>4s} {'auto (s)':>9s} {'bootstrap (s)':>14s} {'auto/bootstrap':>15s} load")
    for learner in args.learners:
        r = compare(learner, args.n, args.resamples, args.repeats)
        print(f"{r['learner']:8s} {r['n']:6d} {r['B']:4d} {r['auto_s']:9.2f} {r['bootstrap_s']:14.2f} "
              f"{r['ratio']:15.2f} {r['load']:.1f}", flush=True)


if __name__ == "__main__":
    main()
