"""Speed of pdpboot's ALE against PyALE on the same model, data and bins.

Friedman #1 (10 features, noise 1), n rows (default 2,000),
RandomForestRegressor(n_estimators=100, min_samples_leaf=5) and
HistGradientBoostingRegressor(max_iter=200).  Cases: the 1-D ALE of x0 with
20 bins and the 2-D ALE of (x0, x1) with 10 x 10 bins.  PyALE's own bin edges
are given to pdpboot (``custom_values``) so both compute the same numbers
(checked).  Single core: OpenMP/BLAS limited to one thread.  Each repeat times
both side by side; the table shows medians over repeats and the ratio
PyALE / pdpboot.  alibi's ALE is not benchmarked: installing alibi would
downgrade numpy and pandas in the shared environment (it pins numpy < 2).

Usage::

    python benchmarks/bench_ale.py [--repeats 5] [--n 2000]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

from pdpboot import Grid, accumulated_local_effects


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _case(model, X, feature, grid_size, repeats):
    from PyALE import ale

    logging.getLogger("PyALE._ALE_generic").setLevel(logging.WARNING)  # it logs every call at INFO
    listed = feature if isinstance(feature, list) else [feature]
    fs = [tuple(feature)] if isinstance(feature, list) else [feature]
    ours_t, peer_t = [], []
    for _ in range(repeats):
        t, peer = _timed(lambda: ale(X, model, listed, grid_size=grid_size, include_CI=False, plot=False))
        peer_t.append(t)
        custom = {listed[0]: peer.index.to_numpy(float)}
        if len(listed) == 2:
            custom[listed[1]] = peer.columns.to_numpy(float)
        t, ours = _timed(lambda custom=custom: accumulated_local_effects(model, X, fs, grid=Grid(custom_values=custom)))
        ours_t.append(t)
    name = "__".join(feature) if isinstance(feature, list) else feature
    ours_v = ours[name]["ale"].values[0]
    peer_v = peer.to_numpy() if isinstance(feature, list) else peer["eff"].to_numpy()
    max_diff = float(np.max(np.abs(ours_v - peer_v)))
    return statistics.median(ours_t), statistics.median(peer_t), max_diff


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args(argv)
    Xa, y = make_friedman1(n_samples=args.n, n_features=10, noise=1.0, random_state=0)
    X = pd.DataFrame(Xa, columns=[f"x{j}" for j in range(10)])
    models = {
        "RandomForest(100)": RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=0),
        "HistGB(200)": HistGradientBoostingRegressor(max_iter=200, random_state=0),
    }
    print(f"n = {args.n}, repeats = {args.repeats}, single thread; times in seconds (median)")
    print(f"{'model':<20} {'case':<14} {'pdpboot':>9} {'PyALE':>9} {'PyALE/pdpboot':>14} {'max |diff|':>11}")
    with threadpool_limits(1):
        for label, model in models.items():
            model.fit(X, y)
            for feature, grid in (("x0", 20), (["x0", "x1"], 10)):
                ours, peer, diff = _case(model, X, feature, grid, args.repeats)
                case = "1-D, 20 bins" if grid == 20 else "2-D, 10x10"
                print(f"{label:<20} {case:<14} {ours:9.3f} {peer:9.3f} {peer / ours:14.2f} {diff:11.1e}")


if __name__ == "__main__":
    main()
