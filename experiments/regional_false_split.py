"""Study (stats): false-split rate and power of the naive 5 %-drop rule vs :func:`pdpboot.regional_split_test`
on the designs of :mod:`experiments.regional_designs`.  Resumable: one JSON line per (design, repetition).

    nice -n 19 python -m experiments.regional_false_split [--reps 20] [--designs additive ...] [--summarise]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

import pdpboot
from experiments.regional_designs import DESIGNS, N_ROWS, TRUE_FEATURE, make_design
from pdpboot.engine.ice_stats import centred_curves, find_partition

OUT = Path(__file__).parent / "summaries" / "regional"
RUNS = OUT / "false_split_runs.jsonl"
B_NULL, ALPHA, NAIVE_DROP, GRID = 19, 0.05, 0.05, 10


def one(design: str, rep: int) -> dict:
    rng = np.random.default_rng([DESIGNS.index(design), rep])
    X, y = make_design(design, N_ROWS, rng)
    started = time.process_time()
    if design == "classifier":  # naive rule only: the refit test is for regressors
        model = GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=rep).fit(X, y)
        ice = pdpboot.partial_dependence(model, X, ["x1"], grid=pdpboot.Grid(GRID), kind="individual")
        curves = ice["x1"]["ice"].sel(output=1).values[:, None, :]
        columns = {p: (X.iloc[:, p].to_numpy(), False) for p in (1, 2, 3)}
        part = find_partition(centred_curves(curves), np.ones(len(X)), columns, max_depth=1,
                              min_size=max(20, 0.1 * len(X)), min_drop=0.0)
        drop, feature, pvalue = part.splits[0].drop, ["x1", "x2", "x3", "x4"][part.splits[0].feature], None
    else:
        if design == "categorical_split":
            X = X.assign(x3=X["x3"].map({"a": 0.0, "b": 1.0, "c": 2.0}))
        res = pdpboot.regional_split_test(GradientBoostingRegressor(n_estimators=50, max_depth=3), X, y, "x1",
                                          n_resamples=B_NULL, grid=pdpboot.Grid(GRID), rng=rep,
                                          execution=pdpboot.Execution(progress=False))
        drop, feature, pvalue = res.attrs["drop_share"], res.attrs["split_feature"], res.attrs["pvalue"]
    return {"design": design, "rep": rep, "drop": float(drop), "feature": feature, "pvalue": pvalue,
            "naive_split": bool(drop >= NAIVE_DROP), "test_split": None if pvalue is None else bool(pvalue <= ALPHA),
            "cpu_s": time.process_time() - started}


def summarise() -> dict:
    rows = list({(r["design"], r["rep"]): r for r in map(json.loads, RUNS.read_text().splitlines()) if r}.values())
    out = {"status": "partial (quick run; target R >= 200)", "n_rows": N_ROWS, "null_refits": B_NULL,
           "alpha": ALPHA, "naive_drop": NAIVE_DROP, "learner": "GradientBoosting(50 trees, depth 3)", "designs": {}}
    for design in DESIGNS:
        mine = [r for r in rows if r["design"] == design]
        if not mine:
            continue
        entry = {"R": len(mine), "mean_drop": float(np.mean([r["drop"] for r in mine]))}
        for rule in ("naive_split", "test_split"):
            hits = [r[rule] for r in mine if r[rule] is not None]
            if hits:
                p = float(np.mean(hits))
                entry[rule.replace("_split", "")] = {"rate": p, "mc_se": float(np.sqrt(p * (1 - p) / len(hits)))}
        if design in TRUE_FEATURE:
            entry["true_feature_share"] = float(np.mean([r["feature"] == TRUE_FEATURE[design] for r in mine]))
        out["designs"][design] = entry
    (OUT / "false_split.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.summarise:
        done = set()
        if RUNS.exists():
            done = {(r["design"], r["rep"]) for r in map(json.loads, RUNS.read_text().splitlines()) if r}
        for rep in range(args.reps):
            for design in args.designs:
                if (design, rep) not in done:
                    row = one(design, rep)
                    with RUNS.open("a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(row, flush=True)
    print(json.dumps(summarise(), indent=2))


if __name__ == "__main__":
    main()
