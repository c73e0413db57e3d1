"""The exact tree engine's walk variants against the plain compiled walk, side by side.

Friedman #1 (scikit-learn's generator, 10 features, noise 1), background rows = the n training
rows; models ``RandomForestRegressor(100)`` (fully grown), ``HistGradientBoostingRegressor()`` and
``GradientBoostingRegressor()`` (scikit-learn defaults); the feature sets of a bootstrap refit: the
1-D curve of every feature and the pair (x0, x1), grids of 50 points on the 5-95 % quantiles
(50 x 50 for the pair); equal weights, or with ``--weights frac`` positive non-integer weights (a user's
sample weights: the bitset walk does not take them).  One thread (BLAS / OpenMP limited to 1).

Contenders, each computing every feature set's PD of one prepared model (reading and planning
excluded, the same for all), run in turn once per repeat (interleaved), CPU seconds
(``time.process_time``), medians over repeats:

* ``plain`` - one compiled walk (``_tree_compiled._kernel_pd``) per feature set, rows in the order given;
* ``locality`` - the same with the rows first sorted by the leaf they reach in the first tree
  (``locality_order``, its cost included);
* ``shared`` - one walk per tree for all feature sets (``_kernel_pd_many``);
* ``bits`` - one walk per set and tree, the rows of a node as a bitset (``_kernel_pd_bits``);
* ``curves`` - one walk per tree following each row's path once for all 1-D curves
  (``_kernel_pd_curves``), the pair by ``plain``;
* ``curves+locality`` - the same on the rows in leaf order (what the package does for deep trees
  from ``_LOCALITY_MIN_ROWS`` rows on);
* ``engine`` - what the package does (``PreparedTrees.partial_dependence_many``).

A variant the installed package no longer has is left out.  Every contender's PD is checked
against ``plain`` (largest absolute difference printed).  Prints one Markdown row per
(variant, case) with the medians, the ratio plain / variant (> 1: the variant is faster) and the
load average, and appends JSON lines to ``--out``.  Run it as a script so that the package on
``PYTHONPATH`` is the one timed (e.g. another source tree for a before / after table)::

    python benchmarks/bench_walks.py --label after --repeats 3
    PYTHONPATH=/tmp/before python benchmarks/bench_walks.py --label before
    python benchmarks/bench_walks.py --table before after    # the README's table from --out

``--table A B`` prints, from the rows of ``--out``, one row per (variant, case) with label A's and
label B's medians and ratios side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_compiled as tc
from pdpboot.engine.tree import PreparedTrees

MODELS = {
    "rf": lambda: RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=2),
    "hgb": lambda: HistGradientBoostingRegressor(random_state=0),
    "gb": lambda: GradientBoostingRegressor(random_state=0),
}


def _load() -> float:
    return os.getloadavg()[0]


def _plain(prepared, plans, w, local: bool) -> list[np.ndarray]:
    model, xt = prepared.model, prepared.xt
    order = tc.locality_order(model, prepared.kernel_base(), xt) if local else None
    loc = None if order is None else (order, np.ascontiguousarray(xt[:, order]))
    return [tc._kernel_pd(model, xt, p.boxes, w, True, False, loc)[0] for p in plans]


def contenders(prepared, plans, w) -> dict:
    """Name -> a call computing every plan's PD (a list of arrays); variants missing from the package are left out."""
    model, xt = prepared.model, prepared.xt
    tables = [p.boxes for p in plans]
    curves = [k for k, p in enumerate(plans) if len(p.boxes.shape) == 1]
    out = {"plain": lambda: _plain(prepared, plans, w, False)}
    if hasattr(tc, "locality_order"):
        # with a locality switch in the package, the order is computed only when it is on (its default)
        out["locality"] = lambda: _plain(prepared, plans, w, True)
    if hasattr(tc, "_kernel_pd_many"):
        out["shared"] = lambda: tc._kernel_pd_many(model, xt, tables, w)
    if hasattr(tc, "_kernel_pd_bits"):
        out["bits"] = lambda: tc._kernel_pd_bits(model, xt, tables, w)
    if hasattr(tc, "_kernel_pd_curves"):
        def curves_then_pair(local: bool):
            order = tc.locality_order(model, prepared.kernel_base(), xt) if local else None
            xo, wo = (xt, w) if order is None else (np.ascontiguousarray(xt[:, order]), None if w is None else w[order])
            res = dict(zip(curves, tc._kernel_pd_curves(model, xo, [tables[k] for k in curves], wo)))
            rest = [k for k in range(len(plans)) if k not in res]
            res.update(zip(rest, _plain(prepared, [plans[k] for k in rest], w, False)))
            return [res[k] for k in range(len(plans))]
        out["curves"] = lambda: curves_then_pair(False)
        if hasattr(tc, "locality_order"):
            out["curves+locality"] = lambda: curves_then_pair(True)

    def engine():
        prepared._local = False  # the row order is part of the package's cost (computed once per model)
        return [avg for avg, _ in prepared.partial_dependence_many(plans, weights=w)]

    out["engine"] = engine
    return out


def run_case(name: str, n: int, repeats: int, weights: str = "none") -> list[dict]:
    X, y = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
    est = MODELS[name]().fit(X, y)
    if hasattr(est, "n_jobs"):
        est.set_params(n_jobs=None)
    grids = [np.quantile(X[:, j], np.linspace(0.05, 0.95, 50)) for j in range(10)]
    sets = [((j,), [grids[j]]) for j in range(10)] + [((0, 1), [grids[0], grids[1]])]
    prepared = PreparedTrees(est, X, "predict")
    plans = [prepared.plan(f, g) for f, g in sets]
    w = None if weights == "none" else np.random.default_rng(1).uniform(0.5, 1.5, n)
    runs = contenders(prepared, plans, w)
    for fn in runs.values():  # compile and warm up
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    loads = [_load()]
    results: dict = {}
    for _ in range(repeats):
        for key, fn in runs.items():
            start = time.process_time()
            results[key] = fn()
            times[key].append(time.process_time() - start)
        loads.append(_load())
    rows = []
    base = statistics.median(times["plain"])
    for key, ts in times.items():
        if results[key] is None:  # bits: weights it does not take
            continue
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(results[key], results["plain"]))
        med = statistics.median(ts)
        rows.append({"variant": key, "model": name, "n": n, "plain_s": base, "variant_s": med,
                     "ratio": base / med, "max_abs_diff": diff, "load": [min(loads), max(loads)],
                     "weights": weights, "times": ts})
    return rows


def table(path: Path, labels: list[str]) -> None:
    """Markdown table of the recorded rows of two labels side by side (the last row of each key wins)."""
    rows: dict = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("label") in labels:
            rows[(r["label"], r["variant"], r["model"], r["n"], r.get("weights", "none"))] = r
    a, b = labels
    print(f"| variant | case | {a}: plain / variant (s) | {a}: ratio | {b}: plain / variant (s) | {b}: ratio | "
          f"load {a} / {b} |")
    print("|---|---|---:|---:|---:|---:|---|")
    order = ["plain", "locality", "shared", "bits", "curves", "curves+locality", "engine"]
    keys = sorted({k[1:] for k in rows}, key=lambda k: (k[3], k[2], list(MODELS).index(k[1]), order.index(k[0])))
    for variant, model, n, weights in keys:
        cells = []
        for label in labels:
            r = rows.get((label, variant, model, n, weights))
            cells.append(("—", "—", "—") if r is None else (f"{r['plain_s']:.3f} / {r['variant_s']:.3f}",
                                                           f"{r['ratio']:.2f}",
                                                           f"{r['load'][0]:.0f}-{r['load'][1]:.0f}"))
        case = f"{model} n={n:,}" + (" frac. weights" if weights == "frac" else "")
        print(f"| {variant} | {case} | {cells[0][0]} | {cells[0][1]} | {cells[1][0]} | {cells[1][1]} | "
              f"{cells[0][2]} / {cells[1][2]} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--n", nargs="+", type=int, default=[2000, 20000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--weights", default="none", choices=["none", "frac"])
    parser.add_argument("--label", default="", help="recorded with each row (e.g. before / after)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "walks.jsonl")
    parser.add_argument("--table", nargs=2, metavar="LABEL", help="print the recorded rows of two labels")
    args = parser.parse_args(argv)
    if args.table:
        return table(args.out, args.table)
    print("| variant | case | plain (s) | variant (s) | plain / variant | max abs diff | load |")
    print("|---|---|---:|---:|---:|---:|---|")
    with threadpool_limits(1):
        for n in args.n:
            for name in args.models:
                for row in run_case(name, n, args.repeats, args.weights):
                    row.update(label=args.label, repeats=args.repeats, machine=platform.machine(),
                               date=time.strftime("%Y-%m-%d %H:%M"))
                    with args.out.open("a") as fh:
                        fh.write(json.dumps(row) + "\n")
                    case = f"{name} n={n:,}" + (" frac. weights" if args.weights == "frac" else "")
                    print(f"| {row['variant']} | {case} | {row['plain_s']:.3f} | {row['variant_s']:.3f} | "
                          f"{row['ratio']:.2f} | {row['max_abs_diff']:.1e} | "
                          f"{row['load'][0]:.1f}-{row['load'][1]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
