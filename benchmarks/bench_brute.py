"""Brute-force tuning (issue 14 item 4): block size per model family.

On the models and data of :mod:`benchmarks.bench_peers` (Friedman #1, the 50-point curve of
``x0``, one thread) it times, interleaved in one process, CPU-time medians:

* ``sklearn brute``: ``partial_dependence(method="brute")`` (one predict call per grid point);
* ``pdpboot brute``: ``compute_pd(method="brute")`` - the family's block
  (:func:`pdpboot.engine.brute.block_plan`) and, for a column-wise Pipeline on an array, the
  preprocessing applied once (:func:`pdpboot.engine.brute.split_pipeline`);
* ``<MiB> MiB``: :func:`pdpboot.engine.brute.brute_partial_dependence` on the whole model with
  that block size (``--sizes``);
* ``old brute`` (with ``--old PATH``): another version of ``brute.py`` (e.g. ``git show
  <commit>:pdpboot/engine/brute.py > old.py``) with the block rule it had (forests 128 MiB,
  others ``--old-mib``), row order, whole model - the A/B that shows no model got slower.

Every record (JSON line, ``--out``) holds all repeats' CPU times and the max abs difference to
scikit-learn.  Usage::

    python -m benchmarks.bench_brute --n 1000 10000 --models MLP XGBoost --repeats 5
    python -m benchmarks.bench_brute --sizes --old /tmp/old_brute.py --out benchmarks/results/brute_ab.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
import warnings

import numpy as np
from sklearn.inspection import partial_dependence
from threadpoolctl import threadpool_limits

from benchmarks import bench_peers as bp
from benchmarks._timing import interleaved_cpu
from pdpboot.engine import compute_pd
from pdpboot.engine.brute import brute_partial_dependence
from pdpboot.engine.response import response_function

MiB = 2**20


def _load(path: str):
    spec = importlib.util.spec_from_file_location("old_brute", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def contenders(est, X, grids, sizes, old=None, old_mib: float = 4.0, forest: bool = False) -> dict:
    """Name -> zero-argument function returning the flat averaged PD of ``x0``."""
    predict = response_function(est, "predict")
    run = {
        "sklearn brute": lambda: partial_dependence(est, X, [0], method="brute", kind="average",
                                                    custom_values={0: grids[0]})["average"].ravel(),
        "pdpboot brute": lambda: compute_pd(est, X, [0], grids, response_method="predict",
                                            method="brute")[0].ravel(),
    }
    if old is not None:
        limit = 128 * MiB if forest else int(old_mib * MiB)
        run["old brute"] = lambda: old.brute_partial_dependence(predict, X, [0], grids, memory_limit=limit,
                                                                order="row")[0].ravel()
    for mib in sizes:
        run[f"{mib:g} MiB"] = (lambda mib=mib: brute_partial_dependence(
            predict, X, [0], grids, memory_limit=int(mib * MiB))[0].ravel())
    return run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--models", nargs="+", default=None, help="name prefixes of bench_peers.models")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=float, nargs="*", default=[], help="block sizes in MiB")
    parser.add_argument("--old", help="path of an older brute.py for the A/B")
    parser.add_argument("--old-mib", type=float, default=4.0, help="the old block size of non-forest models")
    parser.add_argument("--out", help="append JSON lines here")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    old = _load(args.old) if args.old else None
    with threadpool_limits(limits=1):
        for n in args.n:
            X, y = bp.data(n)
            (_, grids), = bp.cases(X, two_d=False)
            for name, make in bp.models(quick=False, catboost=True).items():
                if args.models and not any(name.startswith(m) for m in args.models):
                    continue
                est = make().fit(X, y)
                run = contenders(est, X, grids, args.sizes, old, args.old_mib, forest=name.startswith("RF"))
                for fn in run.values():
                    fn()  # untimed: first-call costs
                load = [bp.load_average()]
                times, outputs = interleaved_cpu(run, args.repeats)
                load.append(bp.load_average())
                med = {k: statistics.median(v) for k, v in times.items()}
                ref = outputs["sklearn brute"]
                rec = {"bench": "brute", "n": n, "model": name, "repeats": args.repeats, "median_cpu": med,
                       "all_cpu": times, "max_abs_vs_sklearn": {k: float(np.max(np.abs(v - ref)))
                                                                for k, v in outputs.items()},
                       "load": load, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
                sk = med["sklearn brute"]
                print(f"n={n} {name}: " + " | ".join(f"{k} {v:.3f}s ({sk / v:.2f})" for k, v in med.items()),
                      flush=True)
                if args.out:
                    with open(args.out, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
