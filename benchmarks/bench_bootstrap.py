"""Bootstrap PD cost: notebook loop vs scikit-learn brute in a loop vs the stacked lower bound vs pdpboot.

Setting (issue 2): simulated electricity prices, n = 1000, RandomForestRegressor(10 trees),
grids of 70, 48 and 7 points for Temperature, Hour, Day, B = 100, PD averaged over the fixed
original rows (so every method does the same work).  All methods run side by side in one
process; the table reports medians of ``--repeats`` runs and ratios.

    python -m benchmarks.bench_bootstrap [--resamples 100] [--repeats 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_partial_dependence

import pdpboot
from benchmarks._timing import median_time
from pdpboot import Grid
from pdpboot.datasets import make_electricity_prices

FEATURES = ["Temperature", "Hour", "Day"]


def _grids(X: pd.DataFrame) -> dict[str, np.ndarray]:
    return {
        "Temperature": np.linspace(X["Temperature"].min(), X["Temperature"].max(), 70),
        "Hour": np.linspace(X["Hour"].min(), X["Hour"].max(), 48),
        "Day": np.arange(7),
    }


def _resamples(n: int, n_resamples: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, n, size=n) for _ in range(n_resamples)]


def notebook_loop(est, X, y, grids, resamples):
    """(a) copy X, set the value, predict, mean - per grid value and resample."""
    for rows in resamples:
        model = clone(est).fit(X.iloc[rows], y.iloc[rows])
        for feature in FEATURES:
            for value in grids[feature]:
                X_copy = X.copy()
                X_copy[feature] = value
                model.predict(X_copy).mean()


def sklearn_brute_loop(est, X, y, grids, resamples):
    """(b) sklearn.inspection.partial_dependence (brute) inside a bootstrap loop."""
    Xf = X.astype(float)  # sklearn refuses integer columns
    for rows in resamples:
        model = clone(est).fit(Xf.iloc[rows], y.iloc[rows])
        for feature in FEATURES:
            sk_partial_dependence(model, Xf, [feature], method="brute", kind="average",
                                  custom_values={feature: grids[feature]})


def stacked_lower_bound(est, X, y, grids, resamples):
    """(c) fit each resample plus one prediction call over all stacked grid blocks."""
    Xf = X.to_numpy(dtype=float)
    blocks = []
    for j, feature in enumerate(FEATURES):
        for value in grids[feature]:
            block = Xf.copy()
            block[:, j] = value
            blocks.append(block)
    stacked = np.vstack(blocks)
    for rows in resamples:
        model = clone(est).fit(Xf[rows], y.to_numpy()[rows])
        model.predict(stacked)


def run_pdpboot(est, X, y, grids, n_resamples, n_jobs, method):
    pdpboot.bootstrap_partial_dependence(
        est, X.astype(float), y, FEATURES, n_resamples=n_resamples, grid=Grid(custom_values=grids), rng=0,
        resampling=pdpboot.Resampling(background="original"),
        execution=pdpboot.Execution(method=method, n_jobs=n_jobs, progress=False),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_electricity_prices(1000, rng=0)
    est = RandomForestRegressor(n_estimators=10, random_state=0)
    grids = _grids(X)
    resamples = _resamples(len(X), args.resamples)
    B = args.resamples
    timings = {
        "(a) notebook loop": lambda: notebook_loop(est, X, y, grids, resamples),
        "(b) sklearn brute in a loop": lambda: sklearn_brute_loop(est, X, y, grids, resamples),
        "(c) lower bound: fit + one stacked predict": lambda: stacked_lower_bound(est, X, y, grids, resamples),
        "(d) pdpboot brute, n_jobs=1": lambda: run_pdpboot(est, X, y, grids, B, 1, "brute"),
        "(d) pdpboot brute, n_jobs=2": lambda: run_pdpboot(est, X, y, grids, B, 2, "brute"),
        "(e) pdpboot auto (tree engine), n_jobs=1": lambda: run_pdpboot(est, X, y, grids, B, 1, "auto"),
        "(e) pdpboot auto (tree engine), n_jobs=2": lambda: run_pdpboot(est, X, y, grids, B, 2, "auto"),
    }
    # one-time costs of a process (imports that xarray and joblib make on first use) are not per-run work
    run_pdpboot(est, X, y, grids, 2, 2, "brute")
    results = {name: median_time(fn, args.repeats) for name, fn in timings.items()}
    ref_b = results["(b) sklearn brute in a loop"]
    ref_c = results["(c) lower bound: fit + one stacked predict"]
    print(f"B = {B}, median of {args.repeats} runs")
    print(f"{'method':45s} {'seconds':>8s} {'vs (b)':>8s} {'vs (c)':>8s}")
    for name, seconds in results.items():
        print(f"{name:45s} {seconds:8.2f} {ref_b / seconds:7.2f}x {seconds / ref_c:7.2f}")
    p1 = results["(d) pdpboot brute, n_jobs=1"]
    p2 = results["(d) pdpboot brute, n_jobs=2"]
    print(f"pdpboot brute n_jobs=1 -> 2 speed-up: {p1 / p2:.2f}x")
    print(f"pdpboot brute n_jobs=1: {ref_b / p1:.2f}x faster than (b); {100 * (p1 / ref_c - 1):+.1f} % vs (c)")


if __name__ == "__main__":
    main()
