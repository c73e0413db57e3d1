"""Categorical and one-hot features of interest: compiled walk vs NumPy walks vs brute force (issue 14).

Friedman #1 (10 features) plus a 12-level categorical column ``c`` that shifts the response,
n rows (background = training rows), one thread, CPU time, medians of interleaved repeats,
each a full ``compute_pd`` call.  Models: ``HistGradientBoostingRegressor(100)`` with ``c``
as a native categorical (pandas ``category``), and a Pipeline of ``OneHotEncoder`` on ``c``
into ``RandomForestRegressor(100, min_samples_leaf=5)``.  Feature sets: ``c`` (12-point grid) and
``(c, x0)`` (12 x 25).  ``kernel`` = ``method="tree"`` with the compiled walk (mask axes),
``numpy`` = the same with the compiled walk disabled, ``brute`` = ``method="brute"``.

    python -m benchmarks.bench_categorical --n 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from threadpoolctl import threadpool_limits

from pdpboot.engine import compute_pd

from ._timing import interleaved_cpu
from .bench_kernel import numpy_walk_pd

LEVELS = np.array([f"l{k}" for k in range(12)], dtype=object)


def _data(n: int):
    X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    rng = np.random.default_rng(0)
    code = rng.integers(0, len(LEVELS), n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])
    df["c"] = pd.Categorical(LEVELS[code], categories=list(LEVELS))
    return df, y + np.sin(code)


def _contenders(est, X, idx, grids) -> dict:
    """The compiled walk, the NumPy walks and brute force on the same PD."""
    return {
        "kernel": lambda: compute_pd(est, X, idx, grids, response_method="predict", method="tree")[0],
        "numpy": lambda: numpy_walk_pd(est, X, idx, grids),
        "brute": lambda: compute_pd(est, X, idx, grids, response_method="predict", method="brute")[0],
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    df, y = _data(args.n)
    hgb = HistGradientBoostingRegressor(max_iter=100, categorical_features="from_dtype", random_state=0)
    onehot = make_pipeline(ColumnTransformer([("c", OneHotEncoder(), ["c"])], remainder="passthrough"),
                           RandomForestRegressor(100, min_samples_leaf=5, random_state=0, n_jobs=1))
    x0 = np.quantile(df["x0"], np.linspace(0.05, 0.95, 25))
    c = df.columns.get_loc("c")
    with threadpool_limits(limits=1):
        for name, est in [("HGB(100), native categorical", hgb), ("one-hot -> RF(100, leaf 5)", onehot)]:
            est.fit(df, y)
            for idx, grids in [((c,), [LEVELS]), ((c, 0), [LEVELS, x0])]:
                compute_pd(est, df.iloc[:50], idx, grids, response_method="predict", method="tree")  # compile
                times, out = interleaved_cpu(_contenders(est, df, idx, grids), args.repeats)
                med = {k: statistics.median(v) for k, v in times.items()}
                err = max(float(np.max(np.abs(out[k] - out["brute"]))) for k in ("kernel", "numpy"))
                grid = "x".join(str(len(g)) for g in grids)
                print(f"n={args.n} {name:<30} grid {grid:<6} kernel {med['kernel']:.3f}s | numpy {med['numpy']:.3f}s "
                      f"({med['numpy'] / med['kernel']:.1f}x) | brute {med['brute']:.3f}s "
                      f"({med['brute'] / med['kernel']:.1f}x) | max |diff| {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
