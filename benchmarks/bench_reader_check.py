"""Cost of the tree engine's self-check (its reading of a model against the model's own predictions).

Friedman #1 (10 features), n = 2,000 and 20,000 training rows; RandomForestRegressor(100 trees,
min_samples_leaf=5), HistGradientBoostingRegressor(100 iterations), XGBRegressor(100, depth 6),
LGBMRegressor(100), CatBoostRegressor(100, depth 6).  One refit (``fit`` of a fresh clone) against
one self-check as a bootstrap pays it (the refit model, read and planned, then checked: no cached verdict;
50-point grids on three features: one block of probe rows holding every grid value and the
missing values, one call of the model's ``predict``, one plain descent of the parsed ensemble).
One thread for everything (OpenMP/BLAS limited); medians over repeats of wall and CPU time (the
CPU time of this process is robust to other jobs sharing the cores).  The target is a check of at
most 2 % of one refit.

The row ``LGBM-dflt`` is the same LightGBM refit (fitted with one thread) checked after
``set_params(n_jobs=None)``: the library's default of all physical cores at predict time, as most
users leave it (LightGBM passes its own thread count, so the OpenMP limit above does not apply).
The row ``LGBM-frame`` is the same LightGBM fitted and checked on a pandas DataFrame of the same
values (as the CLI passes its tables): the probe's rows are a DataFrame, and LightGBM reads it
through its pandas path.

The output starts with the library versions and the code's commit and gives the load average
(1, 5, 15 min) before and after each size: the other jobs on the machine inflate wall times much
more than CPU times, so compare CPU % across runs, and runs only at similar load.

``--lightgbm-floor`` prints what no check that calls the model's own ``predict`` can go below for
LightGBM at n = 2,000: one call of ``LGBMRegressor.predict`` on 54 probe rows (one thread, as the
check calls it) against ``booster_.predict`` on the same rows (the scikit-learn wrapper's share) and
the refit's fit, CPU means over 200 calls.

Usage::

    nice -n 15 python -m benchmarks.bench_reader_check [--repeats 3] [--sizes 2000 20000]
    python -m benchmarks.bench_reader_check --lightgbm-floor
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

from pdpboot.engine.registry import registered


def _models() -> dict:
    out = {
        "RF": RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=0),
        "HGB": HistGradientBoostingRegressor(max_iter=100, random_state=0),
    }
    try:
        import xgboost

        out["XGBoost"] = xgboost.XGBRegressor(n_estimators=100, max_depth=6, n_jobs=1, random_state=0)
    except ImportError:
        pass
    try:
        import lightgbm

        out["LightGBM"] = lightgbm.LGBMRegressor(n_estimators=100, n_jobs=1, verbose=-1, random_state=0)
        out["LGBM-dflt"] = out["LightGBM"]
        out["LGBM-frame"] = out["LightGBM"]
    except ImportError:
        pass
    try:
        import catboost

        out["CatBoost"] = catboost.CatBoostRegressor(iterations=100, depth=6, thread_count=1, verbose=0,
                                                     allow_writing_files=False, random_seed=0)
    except ImportError:
        pass
    return out


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _one(engine, est, X, y, grids, predict_threads=None) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds of one refit and of the self-check of that refit, in the order a bootstrap
    pays them (fit, read, plan, check; a fresh model, so no cached verdict; the plans build the node
    table the compiled walks and the check's descent share, so it is not the check's cost); ``predict_threads``: the
    fitted model's ``n_jobs`` for reading and checking (``"default"``: None, the library's own)."""
    model = clone(est)
    fit = _timed(lambda: model.fit(X, y))
    if predict_threads == "default":
        model.set_params(n_jobs=None)
    prepared = engine.prepare(model, X, "predict", None)
    for j, grid in grids.items():  # the engine plans every feature set before it checks (engine._run_exact)
        prepared.plan((j,), [grid])
    reason = []
    check = _timed(lambda: reason.append(engine.check(prepared, model, X, "predict", grids)))
    assert reason[0] is None, reason[0]
    return fit, check


def lightgbm_floor(n: int = 2000, calls: int = 200) -> None:
    """The cost of the one call the check cannot avoid (the model's own ``predict`` of the probe rows)."""
    import lightgbm

    X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    est = lightgbm.LGBMRegressor(n_estimators=100, n_jobs=1, verbose=-1, random_state=0)
    with threadpool_limits(limits=1):
        fit = statistics.median(_timed(lambda: clone(est).fit(X, y))[1] for _ in range(5))
        model = clone(est).fit(X, y)
        rows = X[np.linspace(0, n - 1, 54).round().astype(int)]
        own = _timed(lambda: [model.predict(rows, num_threads=1) for _ in range(calls)])[1] / calls
        booster = _timed(lambda: [model.booster_.predict(rows, num_threads=1) for _ in range(calls)])[1] / calls
    print(f"LightGBM(100), n = {n}: fit {1000 * fit:.1f} ms CPU (2 % = {20 * fit:.2f} ms); its own predict of 54 "
          f"rows {1000 * own:.2f} ms ({100 * own / fit:.2f} % of the fit), booster_.predict {1000 * booster:.2f} ms; "
          f"load {_load()}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--lightgbm-floor", action="store_true",
                        help="only the cost of LightGBM's own predict of the probe rows (see the module docstring)")
    args = parser.parse_args(argv)
    if args.lightgbm_floor:
        lightgbm_floor()
        return
    engine = {e.name: e for e in registered()}["tree"]
    print(_versions())
    print(f"{'model':>10} {'n':>6} {'refit s':>9} {'check s':>9} {'wall %':>7} {'refit CPU':>10} "
          f"{'check CPU':>10} {'CPU %':>6}")
    with threadpool_limits(limits=1):
        for n in args.sizes:
            print(f"# n = {n}: load average before {_load()}", flush=True)
            X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
            grids = {j: np.quantile(X[:, j], np.linspace(0.05, 0.95, 50)) for j in (0, 1, 2)}
            frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
            for name, est in _models().items():
                fits, checks = [], []
                for _ in range(args.repeats):
                    data = frame if name == "LGBM-frame" else X
                    fit, check = _one(engine, est, data, y, grids, "default" if name == "LGBM-dflt" else None)
                    fits.append(fit)
                    checks.append(check)
                fit, check = (statistics.median(f[0] for f in fits), statistics.median(c[0] for c in checks))
                fcpu, ccpu = (statistics.median(f[1] for f in fits), statistics.median(c[1] for c in checks))
                print(f"{name:>10} {n:>6} {fit:>9.3f} {check:>9.4f} {100 * check / fit:>6.2f}% {fcpu:>10.3f} "
                      f"{ccpu:>10.4f} {100 * ccpu / fcpu:>5.2f}%", flush=True)
            print(f"# n = {n}: load average after {_load()}", flush=True)


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def _versions() -> str:
    """Library versions and the code's commit (the first line of the output)."""
    import importlib

    found = []
    for lib in ("sklearn", "xgboost", "lightgbm", "catboost", "numba", "numpy"):
        try:
            found.append(f"{lib} {importlib.import_module(lib).__version__}")
        except ImportError:
            pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__)), check=False).stdout.strip()
    except OSError:
        commit = ""
    return f"# {', '.join(found)}; code {commit or 'unknown'}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"


if __name__ == "__main__":
    main()
