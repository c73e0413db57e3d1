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
``min_samples_leaf=5``, ``hgb`` = HistGradientBoostingRegressor(100 iterations), ``catboost`` =
CatBoostRegressor(100 iterations, depth 6, one thread; ``pip install catboost``), ``xgboost`` =
XGBRegressor(100 trees, depth 6, hist, one thread), ``lightgbm`` = LGBMRegressor(100 trees, one thread).

The walk variants (shared walk, bitset walk, ...) are timed against each other by
``benchmarks/bench_walks.py``.

JSON fields (stable; the paper reads them): ``model``, ``n``, ``resamples``, ``grid``, ``kernel``
(compiled walk used), ``total_cpu``, ``fit_cpu`` (fit floor), ``fits``, ``ratio`` (total / fit
floor), ``shared_walk`` (always True since the switch was deleted: the engine may share one walk
between a refit's feature sets; it does so for trees with >= 8 background rows per leaf, e.g. HGB
and CatBoost, not for fully grown forests), ``cold``, ``warmup_cpu``, ``load_average``, ``date``.

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
import pdpboot.engine._tree_compiled as compiled_mod
from pdpboot import Grid
from pdpboot.datasets import make_friedman1
from pdpboot.engine.tree import kernel_available

FIT_SECONDS: list[float] = []
#: settings of each model (the paper quotes them from here: experiments/cost.py, ``speed_macros``)
MODEL_SETTINGS = {
    "rf": {"n_estimators": 100}, "rf5": {"n_estimators": 100, "min_samples_leaf": 5}, "hgb": {"max_iter": 100},
    "catboost": {"iterations": 100, "depth": 6}, "xgboost": {"n_estimators": 100, "max_depth": 6},
    "lightgbm": {"n_estimators": 100, "num_leaves": 31},
}
#: the feature sets of every bootstrap: three curves and one surface
FEATURE_SETS = ("x1", "x2", "x3", ("x1", "x2"))


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


def _timed_catboost():
    """CatBoostRegressor(100 iterations, depth 6, one thread) that records the CPU time of each fit."""
    from catboost import CatBoostRegressor

    class TimedCatBoost(CatBoostRegressor):
        def fit(self, X, y=None, **kwargs):
            start = time.process_time()
            out = super().fit(X, y, **kwargs)
            FIT_SECONDS.append(time.process_time() - start)
            return out

    return TimedCatBoost(**MODEL_SETTINGS["catboost"], thread_count=1, verbose=0, allow_writing_files=False,
                         random_seed=0)


def _time_fits_of(cls) -> None:
    """Make ``cls.fit`` record its CPU time (patched on the class itself: the engine recognises
    XGBoost and LightGBM models by their module, so a timed subclass would not take the tree engine)."""
    if getattr(cls.fit, "_timed", False):
        return
    plain = cls.fit

    def fit(self, X, y, **kwargs):
        start = time.process_time()
        out = plain(self, X, y, **kwargs)
        FIT_SECONDS.append(time.process_time() - start)
        return out

    fit._timed = True
    cls.fit = fit


def _timed_xgboost():
    """XGBRegressor(100 trees, depth 6, hist, one thread) whose fits record their CPU time."""
    from xgboost import XGBRegressor

    _time_fits_of(XGBRegressor)
    return XGBRegressor(**MODEL_SETTINGS["xgboost"], tree_method="hist", n_jobs=1, random_state=0)


def _timed_lightgbm():
    """LGBMRegressor(100 trees, 31 leaves, one thread) whose fits record their CPU time."""
    from lightgbm import LGBMRegressor

    _time_fits_of(LGBMRegressor)
    return LGBMRegressor(**MODEL_SETTINGS["lightgbm"], n_jobs=1, random_state=0, verbose=-1)


MODELS = {
    "rf": lambda: TimedForest(**MODEL_SETTINGS["rf"], random_state=0, n_jobs=1),
    "rf5": lambda: TimedForest(**MODEL_SETTINGS["rf5"], random_state=0, n_jobs=1),
    "hgb": lambda: TimedHGB(**MODEL_SETTINGS["hgb"], random_state=0),
    "catboost": _timed_catboost,
    "xgboost": _timed_xgboost,
    "lightgbm": _timed_lightgbm,
}


def _warm_up(model: str, X, y) -> None:
    """A small bootstrap on the tree engine (1,000 rows, 10-point grids), so its compiled walk is loaded.

    ``method="tree"``: with ``"auto"`` a small LightGBM bootstrap takes brute force, and the
    compiled walk's one-time load (about 1 s CPU) then fell into the timed run.  From
    ``_LOCALITY_MIN_ROWS`` rows on, the walks read rows in leaf order (``locality_order``, its own
    compiled kernel): the warm-up then takes that many rows, or the first timed run at n = 20,000 paid
    that load (LightGBM: total / fit floor 2.12 in the first run, 1.41 in the second).
    """
    k = 1000 if len(X) < compiled_mod._LOCALITY_MIN_ROWS else compiled_mod._LOCALITY_MIN_ROWS
    pdpboot.bootstrap_partial_dependence(MODELS[model](), X[:k], y[:k], ["x1", ("x1", "x2")],
                                         n_resamples=2, grid=Grid(10), rng=0,
                                         execution=pdpboot.Execution(n_jobs=1, progress=False, method="tree"))


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
    load = os.getloadavg()[0]
    warmup = 0.0
    if not args.cold:  # one-time costs of the process (numba import, compiled-code cache, xarray's lazy imports)
        start = time.process_time()
        with threadpool_limits(limits=1):
            _warm_up(args.model, X, y)
        warmup = time.process_time() - start
    total, fit, fits = _run(args, X, y)
    row = {"model": args.model, "n": args.n, "resamples": args.resamples, "grid": args.grid,
           "kernel": kernel_available(), "total_cpu": total, "fit_cpu": fit, "fits": fits,
           "ratio": total / fit, "shared_walk": True, "cold": args.cold, "warmup_cpu": warmup,
           "load_average": load, "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print(f"{args.model} n={args.n} B={args.resamples}: total {total:.1f} s CPU, fit floor {fit:.1f} s "
          f"({fits} fits) -> total / fit floor {total / fit:.3f} (target <= 1.25); "
          f"compiled walk {row['kernel']}; {'cold process' if args.cold else f'after a {warmup:.1f} s warm-up'}; "
          f"load {load:.1f}", flush=True)
    _append(args.out, row)


def _append(path: str, row: dict) -> None:
    """Append ``row`` as one JSON line to ``path`` (nothing when ``path`` is empty)."""
    if path:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as fh:
            fh.write(json.dumps(row) + "\n")


def _run(args, X, y) -> tuple[float, float, int]:
    """(total CPU, fit floor CPU, fits) of one bootstrap."""
    FIT_SECONDS.clear()
    with threadpool_limits(limits=1):
        start = time.process_time()
        pdpboot.bootstrap_partial_dependence(MODELS[args.model](), X, y, list(FEATURE_SETS),
                                             n_resamples=args.resamples, grid=Grid(args.grid), rng=0,
                                             execution=pdpboot.Execution(n_jobs=1, progress=False))
        total = time.process_time() - start
    return total, sum(FIT_SECONDS), len(FIT_SECONDS)


if __name__ == "__main__":
    main()
