"""One-fit ALE of pdpboot against effector, PyALE and scikit-explain, and ``bootstrap_ale`` against
the PD bootstrap on the same refits (issue 30, item 4).

Friedman #1 (10 features, noise 1), n rows (default 2,000), ``RandomForestRegressor(100,
min_samples_leaf=5)`` fitted once; the 1-D ALE of ``x0`` with 20 bins.  Each peer computes its own
ALE (its own bins: effector equal-width bins over the data range, PyALE and scikit-explain
quantile bins); the cost of every implementation is dominated by two predictions of the n rows at
the bin edges, so the bins do not change the time.  pdpboot is timed on PyALE's bin edges
(``custom_values``) and its values compared with PyALE's (max |diff| printed).  Single thread, CPU
time (``time.process_time``), every contender once per repeat (interleaved), medians; ratio = peer /
pdpboot (above 1: pdpboot faster).  Peers are benchmark-only (``pip install effector PyALE
scikit-explain``); a peer that is not installed is skipped.

``--bootstrap B``: ``bootstrap_ale`` and ``bootstrap_partial_dependence`` with the same ``rng``
(the same B refits), features ``x0``, ``x1``, ``x2``, 20 bins / 20 grid points; CPU seconds and
their ratio.

    python -m benchmarks.bench_ale_peers --repeats 5
    python -m benchmarks.bench_ale_peers --repeats 3 --bootstrap 20
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot
from pdpboot import Grid


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def contenders(model, X: pd.DataFrame, bins: int) -> dict:
    """name -> callable returning (values or None); pdpboot on PyALE's edges when PyALE is installed."""
    out: dict = {}
    edges = None
    try:
        from PyALE import ale

        logging.getLogger("PyALE._ALE_generic").setLevel(logging.WARNING)
        ref = ale(X, model, ["x0"], grid_size=bins, include_CI=False, plot=False)
        edges = ref.index.to_numpy(float)
        out["PyALE"] = lambda: ale(X, model, ["x0"], grid_size=bins, include_CI=False, plot=False)["eff"].to_numpy()
    except ImportError:
        pass
    custom = None if edges is None else {"x0": edges}
    grid = Grid(bins + 1, custom_values=custom)
    out["pdpboot"] = lambda: pdpboot.accumulated_local_effects(model, X, ["x0"], grid=grid)["x0"]["ale"].values[0]
    try:
        import effector

        Xa = X.to_numpy()

        def eff():
            a = effector.ALE(Xa, model.predict, nof_instances="all")
            a.fit(features=[0], binning_method=effector.axis_partitioning.Fixed(nof_bins=bins))
            return a.eval(feature=0, xs=np.linspace(Xa[:, 0].min(), Xa[:, 0].max(), bins + 1))

        out["effector"] = eff
    except ImportError:
        pass
    try:
        import skexplain

        def skx():
            tk = skexplain.ExplainToolkit(("rf", model), X=X, y=np.zeros(len(X)))
            return tk.ale(features=["x0"], n_bins=bins, n_jobs=1, n_bootstrap=1)

        out["scikit-explain"] = skx
    except ImportError:
        pass
    return out


def one_fit(n: int, bins: int, repeats: int) -> dict:
    Xa, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    X = pd.DataFrame(Xa, columns=[f"x{j}" for j in range(10)])
    model = RandomForestRegressor(100, min_samples_leaf=5, random_state=0, n_jobs=1).fit(X, y)
    runs = contenders(model, X, bins)
    for fn in runs.values():  # untimed: imports, caches
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    values: dict = {}
    for _ in range(repeats):
        for name, fn in runs.items():
            t, values[name] = _cpu(fn)
            times[name].append(t)
    med = {k: statistics.median(v) for k, v in times.items()}
    diff = (float(np.max(np.abs(np.asarray(values["pdpboot"]) - np.asarray(values["PyALE"]))))
            if "PyALE" in values else float("nan"))
    load = os.getloadavg()[0]
    print(f"one-fit ALE, n = {n}, RF(100, leaf 5), x0, {bins} bins, medians of {repeats} (load {load:.1f}):")
    for name, t in med.items():
        print(f"  {name:<15} {t:.4f} s CPU   ratio {name}/pdpboot = {t / med['pdpboot']:.2f}")
    print(f"  max |pdpboot - PyALE| = {diff:.1e}")
    return {"times": med, "diff": diff, "load": load}


def bootstrap(n: int, resamples: int, repeats: int) -> None:
    Xa, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    X = pd.DataFrame(Xa, columns=[f"x{j}" for j in range(10)])
    est = RandomForestRegressor(100, min_samples_leaf=5, random_state=0, n_jobs=1)
    kw = dict(n_resamples=resamples, resampling="bootstrap", rng=0,  # the same refits
              execution=pdpboot.Execution(n_jobs=1, progress=False))
    feats = ["x0", "x1", "x2"]
    runs = {"bootstrap_ale": lambda: pdpboot.bootstrap_ale(est, X, y, feats, grid=Grid(21), **kw),
            "bootstrap_partial_dependence": lambda: pdpboot.bootstrap_partial_dependence(
                est, X, y, feats, grid=Grid(20), **kw)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            times[name].append(_cpu(fn)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"bootstrap, n = {n}, B = {resamples}, 3 features, medians of {repeats} (load {os.getloadavg()[0]:.1f}): "
          f"ALE {med['bootstrap_ale']:.2f} s, PD {med['bootstrap_partial_dependence']:.2f} s CPU, "
          f"ALE / PD = {med['bootstrap_ale'] / med['bootstrap_partial_dependence']:.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--bins", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=0, metavar="B")
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1):
        one_fit(args.n, args.bins, args.repeats)
        if args.bootstrap:
            bootstrap(args.n, args.bootstrap, args.repeats)


if __name__ == "__main__":
    main()
