"""Coverage of the debiased estimator on the fresh designs ``DEBIASED`` of :mod:`experiments.fresh_designs`.

Per design: repetitions (a data set, ``pdpboot.debiased_partial_dependence`` with the package's defaults, 95 %),
one cache file per repetition under ``experiments/results/fresh_debiased/<design>/`` (resumable), and after every
repetition the summary ``experiments/summaries/fresh_debiased/<design>.json`` (a stopped run keeps its numbers).

    nice -n 19 python -m experiments.fresh_debiased sine_rho060_rf strong_rho080 --R 100 --until 15:45

Summary, with MC SEs (SD over data sets / sqrt(R)): the share of the grid banded (not flagged); pointwise and
whole-curve coverage over the banded grid values (what a band claims) and over the whole grid (a grid value
without a band counts as not covered); widths; per grid value the banded share, coverage, mean SE / SD of the
estimates (on data sets where it is banded) and bias / SD.  Designs interleave repetition by repetition.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from . import _common as C
from . import fresh_designs as fd

STUDY = "fresh_debiased"
RESULTS = C.RESULTS / STUDY
SUMMARIES = C.ROOT / "experiments" / "summaries" / STUDY
KEEP = ("pd", "pd_se", "pd_band", "pd_band_simultaneous", "overlap", "effective_sample_size", "weight_mass")


def repetition(design: fd.Design, rep: int) -> dict:
    data_seed, band_seed = fd.repetition_seed(design, rep).spawn(2)
    X, y = design.simulate(design.n, data_seed)
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fd.debiased_band(design, X, y, rng=int(band_seed.generate_state(1)[0]))
    kept = {k: out[k] for k in KEEP}
    kept["warned"] = np.array(any("No band" in str(w.message) for w in caught))
    kept["cpu"] = np.array(time.process_time() - start)
    return kept


def mcse(per_rep: np.ndarray) -> float:
    return float(per_rep.std(ddof=1) / np.sqrt(len(per_rep))) if len(per_rep) > 1 else float("nan")


def summarize(design: fd.Design, reps: list[dict]) -> dict:
    truth = fd.data_pd(design.dgp, design.grid)
    stack = {k: np.array([r[k] for r in reps]) for k in reps[0]}
    ok = stack["overlap"].astype(bool)                                     # (R, G)
    est, se = stack["pd"], stack["pd_se"]
    out = {"design": design.name, "R": len(reps), "partial": len(reps) < 100, "n": design.n,
           "banded_share": float(ok.mean()), "banded_share_mcse": mcse(ok.mean(axis=1)),
           "warned_share_of_flagged_runs": float(stack["warned"][~ok.all(axis=1)].mean()) if (~ok.all(axis=1)).any()
           else None, "cpu_s": float(stack["cpu"].mean())}
    for kind, var in (("pointwise", "pd_band"), ("whole_curve", "pd_band_simultaneous")):
        lo, hi = stack[var][:, 0], stack[var][:, 1]
        inside = (lo <= truth) & (truth <= hi)
        claimed = np.where(ok, inside, True)
        per_rep = claimed.mean(axis=1) if kind == "pointwise" else claimed.all(axis=1).astype(float)
        grid_rep = (ok & inside).mean(axis=1) if kind == "pointwise" else (ok & inside).all(axis=1).astype(float)
        out[kind] = {"over_banded": float(per_rep.mean()), "over_banded_mcse": mcse(per_rep),
                     "over_grid": float(grid_rep.mean()), "over_grid_mcse": mcse(grid_rep),
                     "halfwidth_mean": float(np.nanmean(np.where(ok, (hi - lo) / 2, np.nan)))}
    sd = est.std(axis=0, ddof=1)
    per_grid = []
    for g, a in enumerate(design.grid):
        live = ok[:, g]
        per_grid.append({"a": round(float(a), 3), "banded": round(float(live.mean()), 3),
                         "coverage": round(float(((stack["pd_band"][:, 0, g] <= truth[g])
                                                  & (truth[g] <= stack["pd_band"][:, 1, g]))[live].mean()), 3)
                         if live.any() else None,
                         "se_over_sd": round(float(se[live, g].mean() / est[live, g].std(ddof=1)), 3)
                         if live.sum() > 2 else None,
                         "bias_over_sd": round(float((est[:, g].mean() - truth[g]) / sd[g]), 3)})
    out["per_grid"] = per_grid
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("designs", nargs="+", choices=sorted(fd.DEBIASED))
    parser.add_argument("--R", type=int, default=100)
    parser.add_argument("--until", help="HH:MM UTC: start no repetition after this time")
    args = parser.parse_args(argv)
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    for rep in range(args.R):
        for name in args.designs:
            if args.until and time.strftime("%H:%M", time.gmtime()) >= args.until:
                return
            design, folder = fd.DEBIASED[name], RESULTS / name
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{rep:04d}.npz"
            if not path.exists():
                with threadpool_limits(1):
                    np.savez(path, **repetition(design, rep))
            reps = [dict(np.load(p)) for p in sorted(folder.glob("*.npz"))]
            (SUMMARIES / f"{name}.json").write_text(json.dumps(summarize(design, reps), indent=1))


if __name__ == "__main__":
    main()
