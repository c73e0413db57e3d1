"""Size of :func:`pdpboot.h_statistic_test` under the null DGPs with the current code (the study's design).

Same data and test seeds as :mod:`experiments.h_test_size_power` (``seed_sequence(71, learner, dgp)``, repetition r),
n = 300, n_max = 100, K = 39, alpha = 0.05.  Repetitions run round-robin over the cells so that a run stopped at
``--deadline`` (UTC ``HH:MM``) has balanced R; every repetition is appended to ``reps.jsonl`` (resumable) and
``summary.json`` is rewritten after each round.

    PYTHONPATH=. OMP_NUM_THREADS=1 nice -n 19 python experiments/summaries/h_test_size_power/run_size.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from experiments import _common as C
from experiments import h_test_size_power as H

HERE = Path(__file__).parent


def _load(path: Path) -> dict:
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            done[(rec["learner"], rec["dgp"], rec["rep"])] = rec
    return done


def _summary(done: dict, cells, cfg: dict, target: int, commit: str) -> dict:
    out = {"design": {"n": cfg["n"], "n_max": cfg["n_max"], "K": cfg["reps"]["ols"]["K"], "alpha": cfg["alpha"],
                      "seed": cfg["seed"], "target_R": target}, "commit": commit, "cells": {}}
    for learner, dgp in cells:
        recs = sorted((r for (le, d, _), r in done.items() if (le, d) == (learner, dgp)), key=lambda r: r["rep"])
        if not recs:
            continue
        p = np.array([r["pvalue"] for r in recs])
        K = cfg["reps"][learner]["K"]
        rate, se = H._rate(p, cfg["alpha"])
        se_alpha = float(np.sqrt(cfg["alpha"] * (1 - cfg["alpha"]) / p.size))  # MC SE if the size were exactly alpha
        stat = np.array([r["statistic"] for r in recs])
        null = np.array([r["null_mean"] for r in recs])
        out["cells"][f"{learner}/{dgp}"] = {
            "R": int(p.size), "partial": bool(p.size < target), "rejection": rate, "rejection_mcse": se,
            "size_ok_2se": bool(rate <= cfg["alpha"] + 2 * se),
            "mcse_at_alpha": se_alpha, "size_ok_2se_at_alpha": bool(rate <= cfg["alpha"] + 2 * se_alpha),
            "mean_pvalue": float(np.mean(p)),
            "ks": H._ks_discrete(p, K), "ratio_mean_T_over_null": float(np.mean(stat) / np.nanmean(null)),
            "mean_seconds_per_rep": float(np.mean([r["seconds"] for r in recs]))}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--learners", nargs="*", default=["ols", "gbm"])
    parser.add_argument("--dgps", nargs="*", default=["additive", "audit"])
    parser.add_argument("--extra-learners", nargs="*", default=["rf"], help="run after the first ones finish")
    parser.add_argument("--max-reps", type=int, default=200)
    parser.add_argument("--summary-only", action="store_true", help="rewrite summary.json from reps.jsonl")
    parser.add_argument("--deadline", default="09:10", help="UTC HH:MM: no repetition starts after it")
    args = parser.parse_args(argv)
    cfg = H._settings(C.Context(quick=False), None)
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    now = dt.datetime.now(dt.timezone.utc)
    hh, mm = map(int, args.deadline.split(":"))
    deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    phases = [[(le, d) for le in group for d in args.dgps if (le, d) not in H.SKIP]
              for group in (args.learners, args.extra_learners) if group]
    cells = [c for phase in phases for c in phase]
    seeds = {c: C.seed_sequence(cfg["seed"], *c).spawn(cfg["reps"][c[0]]["null"]) for c in cells}
    log, done = HERE / "reps.jsonl", _load(HERE / "reps.jsonl")
    if args.summary_only:
        summary = _summary(done, cells, cfg, args.max_reps, commit)
        (HERE / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        return 0
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        for rep, phase in ((r, ph) for ph in phases for r in range(args.max_reps)):
            for learner, dgp in phase:
                if (learner, dgp, rep) in done:
                    continue
                if dt.datetime.now(dt.timezone.utc) >= deadline:
                    break
                start = time.perf_counter()
                stat, pvalue, _, _, null_mean = H._one(learner, dgp, cfg, False, seeds[(learner, dgp)][rep])
                rec = {"learner": learner, "dgp": dgp, "rep": rep, "statistic": float(stat), "pvalue": float(pvalue),
                       "null_mean": float(null_mean), "seconds": time.perf_counter() - start}
                done[(learner, dgp, rep)] = rec
                with log.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
            summary = _summary(done, cells, cfg, args.max_reps, commit)
            (HERE / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
            print(f"[{time.strftime('%H:%M:%S')}] rep {rep} done", file=sys.stderr, flush=True)
            if dt.datetime.now(dt.timezone.utc) >= deadline:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
