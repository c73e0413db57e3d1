"""The tree engine's self-check, old code against new, interleaved call by call in one process.

At the machine's usual load, two benchmark processes run minutes apart differ by as much as a change
of a few per cent; here both versions of ``pdpboot/engine/_tree_check.py`` check the same fitted
LightGBM(100) reading on Friedman #1 (50-point grids on three features: 54 probe rows), alternately,
each call with an empty verdict cache, and the medians of their CPU times are compared.  The old
module is read from a checkout of the older commit (``git archive <commit> | tar -x -C DIR``); it
imports the current engine's other modules, so only differences in ``_tree_check.py`` (and in what
it calls from the engine) are measured.

Usage::

    git archive 8ffaaff | tar -x -C /tmp/old
    nice -n 15 python -m benchmarks.bench_reader_check_ab /tmp/old [--n 2000] [--calls 401] [--default-threads]

``--default-threads``: the fitted model (fitted with one thread) is checked after
``set_params(n_jobs=None)``, LightGBM's default of all physical cores, as most users leave it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import types
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from threadpoolctl import threadpool_limits

from pdpboot.engine import _tree_check
from pdpboot.engine.registry import registered


def _module_from(checkout: Path) -> types.ModuleType:
    """The ``_tree_check`` module of an older checkout, importing the current engine's modules."""
    path = checkout / "pdpboot" / "engine" / "_tree_check.py"
    old = types.ModuleType("old_tree_check")
    source = path.read_text().replace("from .", "from pdpboot.engine.")
    exec(compile(source, str(path), "exec"), old.__dict__)  # noqa: S102 - the project's own older source
    return old


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="a checkout (git archive) of the older commit")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=401)
    parser.add_argument("--default-threads", action="store_true")
    args = parser.parse_args(argv)
    import lightgbm

    arms = {"old": _module_from(args.old), "new": _tree_check}
    X, y = make_friedman1(n_samples=args.n, n_features=10, noise=1.0, random_state=0)
    grids = {j: np.quantile(X[:, j], np.linspace(0.05, 0.95, 50)) for j in (0, 1, 2)}
    engine = {e.name: e for e in registered()}["tree"]
    times: dict[str, list[int]] = {name: [] for name in arms}
    load = os.getloadavg()
    with threadpool_limits(limits=1):
        est = lightgbm.LGBMRegressor(n_estimators=100, n_jobs=1, verbose=-1, random_state=0).fit(X, y)
        if args.default_threads:
            est.set_params(n_jobs=None)
        prepared = engine.prepare(est, X, "predict", None)
        order = list(arms)
        for call in range(args.calls):
            for name in order[call % 2:] + order[:call % 2]:
                module = arms[name]
                module._CACHE.clear()
                start = time.process_time_ns()
                reason = module.check_reading(prepared, est, X, "predict", grids)
                times[name].append(time.process_time_ns() - start)
                assert reason is None, reason
    old, new = (statistics.median(times[name]) / 1e6 for name in ("old", "new"))
    load_after = os.getloadavg()
    print(f"LightGBM(100) n = {args.n}, n_jobs = {'None' if args.default_threads else 1} at predict, "
          f"{args.calls} calls per arm: check CPU median old {old:.3f} ms, new {new:.3f} ms (new / old "
          f"{new / old:.3f}); load {load[0]:.1f} -> {load_after[0]:.1f}")


if __name__ == "__main__":
    main()
