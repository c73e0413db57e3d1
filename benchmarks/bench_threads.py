"""One HistGradientBoosting fit with 1 vs 2 native threads, side by side: ``python -m benchmarks.bench_threads``.

On a busy machine OpenMP threads that spin-wait for a core make a fit many times slower; this is
why ``bootstrap_partial_dependence`` defaults to ``threads_per_job=1``.  Prints the median of each
and the ratio (2 threads / 1 thread) with the 1-minute load average.
"""

import os
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits


def fit_seconds(threads: int, X, y) -> float:
    with threadpool_limits(limits=threads):
        start = time.perf_counter()
        HistGradientBoostingRegressor(max_iter=100).fit(X, y)
        return time.perf_counter() - start


def main(repeats: int = 3) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 10))
    y = X[:, 0] + rng.normal(size=400)
    times = {1: [], 2: []}
    for _ in range(repeats):
        for threads in (1, 2):
            times[threads].append(fit_seconds(threads, X, y))
    one, two = (float(np.median(times[k])) for k in (1, 2))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: 1 thread {one:.3f} s, "
          f"2 threads {two:.3f} s, ratio {two / one:.2f}")


if __name__ == "__main__":
    main()
