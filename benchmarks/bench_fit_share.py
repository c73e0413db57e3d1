"""Share of a bootstrap's time spent outside ``fit`` with the exact tree engine (issue 3).

Friedman #1 (10 features, n = 2,000), RandomForestRegressor(100 trees, min_samples_leaf=5),
B resamples, three 1-D features and one 2-D pair on 50-point grids, PD over each
resample's rows (the default).  ``fit`` is timed inside the run by a subclass that adds up
the seconds spent in it; n_jobs=1 so every fit is in this process.

    python -m benchmarks.bench_fit_share [--resamples 200]
"""

from __future__ import annotations

import argparse
import time

from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import make_friedman1

FIT_SECONDS: list[float] = []


class TimedForest(RandomForestRegressor):
    """A random forest that records how long each fit takes."""

    def fit(self, X, y, sample_weight=None):
        start = time.perf_counter()
        out = super().fit(X, y, sample_weight=sample_weight)
        FIT_SECONDS.append(time.perf_counter() - start)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    X, y = make_friedman1(2000, n_features=10, rng=0)
    est = TimedForest(n_estimators=100, min_samples_leaf=5, random_state=0)
    start = time.perf_counter()
    pdpboot.bootstrap_partial_dependence(est, X, y, ["x1", "x2", "x3", ("x1", "x2")], n_resamples=args.resamples,
                                         grid_resolution=50, n_jobs=1, rng=0, progress=False)
    total = time.perf_counter() - start
    fit = sum(FIT_SECONDS)
    print(f"B = {args.resamples}: total {total:.1f} s, in fit {fit:.1f} s ({len(FIT_SECONDS)} fits), "
          f"outside fit {total - fit:.1f} s = {100 * (total - fit) / total:.1f} % (target < 25 %)")


if __name__ == "__main__":
    main()
