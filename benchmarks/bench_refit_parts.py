"""Where one booster refit's PD time goes: CPU medians of each part of ``compute_pd_many`` (issue 30 item 2).

One bootstrap resample of Friedman #1 (10 features, n rows), the model fitted on it, then the engine's
work on the resample's distinct rows with their multiplicities as weights (what a refit of
``bootstrap_partial_dependence`` does), three curves and a 25 x 25 surface (``bench_fit_share``'s
feature sets), one thread: the fit, the whole ``compute_pd_many`` (self-check cache cleared each
time, as for a new fitted model), and its parts: reading the model (``engine.tree.prepare``; for
LightGBM also ``model_to_string`` and the reader alone), planning the four sets, the self-check, the
shared average walk (``partial_dependence_many``).

    python -m benchmarks.bench_refit_parts lightgbm 2000
    python -m benchmarks.bench_refit_parts xgboost 20000 --repeats 15
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import bench_fit_share as fs
from pdpboot.engine import _lightgbm, _tree_check, compute_pd_many
from pdpboot.engine import tree as tree_engine


def _model(lib: str):
    if lib == "lightgbm":
        from lightgbm import LGBMRegressor

        return LGBMRegressor(**fs.MODEL_SETTINGS["lightgbm"], n_jobs=1, verbose=-1)
    if lib == "xgboost":
        from xgboost import XGBRegressor

        return XGBRegressor(**fs.MODEL_SETTINGS["xgboost"], n_jobs=1, tree_method="hist")
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(**fs.MODEL_SETTINGS["hgb"])


def _median_ms(f, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        start = time.process_time()
        out = f()
        times.append(time.process_time() - start)
    return 1e3 * float(np.median(times)), out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=["lightgbm", "xgboost", "hgb"])
    parser.add_argument("n", type=int)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    X, y = fs.make_friedman1(args.n, n_features=10, rng=0)
    idx = np.random.default_rng(0).integers(0, args.n, args.n)
    distinct, inverse = np.unique(idx, return_inverse=True)
    Xu, w = X.iloc[distinct], np.bincount(inverse).astype(float)
    sets = [(1,), (2,), (3,), (1, 2)]
    grids = [[np.quantile(X.iloc[:, j], np.linspace(0.05, 0.95, 25)) for j in s] for s in sets]
    with threadpool_limits(limits=1):
        fit, est = _median_ms(lambda: _model(args.model).fit(X.iloc[idx], y[idx]), 3)
        parts = {"fit": fit}

        def whole():
            _tree_check._CACHE.clear()
            return compute_pd_many(est, Xu, sets, grids, response_method="predict", weights=w)

        whole()  # compiled code loaded
        parts["compute_pd_many"] = _median_ms(whole, args.repeats)[0]
        parts["read (prepare)"], prepared = _median_ms(lambda: tree_engine.prepare(est, Xu, "predict"), args.repeats)
        if args.model == "lightgbm":
            parts["  model_to_string"] = _median_ms(lambda: est.booster_.model_to_string(), args.repeats)[0]
            parts["  reader (dump + parse)"] = _median_ms(
                lambda: _lightgbm.LightGBMReader(est, "predict", ValueError), args.repeats)[0]
        parts["plan"], plans = _median_ms(lambda: [prepared.plan(s, g) for s, g in zip(sets, grids)], args.repeats)
        merged = {1: grids[0][0], 2: grids[1][0], 3: grids[2][0]}

        def check():
            _tree_check._CACHE.clear()
            return _tree_check.check_reading(prepared, est, Xu, "predict", merged)

        parts["self-check"] = _median_ms(check, args.repeats)[0]
        parts["walk (partial_dependence_many)"] = _median_ms(
            lambda: prepared.partial_dependence_many(plans, weights=w), args.repeats)[0]
    print(f"{args.model} n = {args.n:,} ({len(distinct):,} distinct rows), CPU medians of {args.repeats}:")
    for name, ms in parts.items():
        print(f"  {name:32s} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
