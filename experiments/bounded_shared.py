"""Study (stats, issue 27 item 4): coverage of the H2 intervals when the estimate and its resamples share rows.

:mod:`experiments.bounded_statistics` measured the H2 intervals when the estimate and every resample drew
their own ``n_max``-row subsample (the package's rule before issue 27): the estimate then carried Monte
Carlo noise of its own, independent of the resamples'.  The package now draws one fixed subsample ``S``
of at most ``n_max`` rows per data set; the estimate is H2 of the full-data fit on ``S`` and every
resample's H2 is evaluated on the rows of ``S`` it drew, weighted by their multiplicities
(``pdpboot._loop.fixed_rows``).  This module repeats the H2 settings of ``bounded_statistics`` (same DGP,
learners, n, n_max, B, seeds of the data sets and resamples) under that rule; the d-ICE SD uses all
rows under both rules (no ``n_max``), so its archived coverage stands.

Targets: the learner's expected H2 as archived by ``bounded_statistics`` (mean over 1000 / 200 fits on fresh
data of the estimate, whose distribution the rule does not change: H2 of a full-data fit on a random
``n_max``-row subsample) and the population value 1/3.  Coverage with MC SE ``sqrt(p (1 - p) / R)``.

    python -m experiments.bounded_shared [--settings h2_linear:ols ...] [--max-reps R]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import xarray as xr
from scipy.stats import norm
from sklearn.base import clone

from pdpboot.engine.hstats import interaction_statistics
from pdpboot.engine.intervals import band_arrays

from . import _common as C
from . import bounded_statistics as sb

STUDY = "bounded_shared"
RUNS = ("h2_linear:ols", "h2_linear:gbm")
CHUNK = {"full": 5, "quick": 3}  #: data sets per cache file


def _h2(model, X: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> float:
    def predict(Z):
        return np.asarray(model.predict(np.asarray(Z, dtype=float)), dtype=float).reshape(-1, 1)

    out = interaction_statistics(predict, X[rows], pairs=[(0, 1)], weights=weights.astype(float),
                                 n_max=rows.size, rng=None)
    return float(out[(0, 1)]["h2"][0])


def repetition(learner: str, cfg: dict, run: dict, quick: bool, seed) -> tuple:
    """(estimate, resamples, counts) of one data set; the data and the resamples' rows as ``bounded_statistics``."""
    data_seed, boot_seed, stat_seed = seed.spawn(3)
    X, y = sb._data("h2_linear", cfg["n"], np.random.default_rng(data_seed))
    n = len(y)
    base = sb._learner("h2_linear", learner, quick)
    shared = np.sort(np.random.default_rng(stat_seed).choice(n, size=min(cfg["n_max"], n), replace=False))
    estimate = _h2(clone(base).fit(X, y), X, shared, np.ones(shared.size))
    counts = np.random.default_rng(boot_seed).multinomial(n, np.full(n, 1.0 / n), size=run["B"])
    resamples = []
    for c in counts:
        rows = np.repeat(np.arange(n), c)
        model = clone(base).fit(X[rows], y[rows])
        keep = shared[c[shared] > 0]  # the rows of S this resample drew, with their multiplicities
        resamples.append(_h2(model, X, keep, c[keep]))
    return estimate, np.array(resamples), counts.astype(np.uint8)


def compute(ctx: C.Context, runs=None, max_reps: int | None = None) -> None:
    cfg = sb.SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    for key in runs or RUNS:
        run = cfg["runs"][key]
        learner = key.split(":")[1]
        _, rep_seed = C.seed_sequence(cfg["seed"], key).spawn(2)  # bounded_statistics' data-set seeds
        seeds = rep_seed.spawn(run["R"])
        R = run["R"] if max_reps is None else min(run["R"], max_reps)
        step = CHUNK[ctx.mode]
        for first in range(0, R, step):
            def chunk(first=first, learner=learner, run=run, seeds=seeds, step=step, R=R, key=key):
                start = time.perf_counter()
                out = [repetition(learner, cfg, run, ctx.quick, s) for s in seeds[first:min(first + step, R)]]
                est, res, counts = map(np.array, zip(*out))
                print(f"[{time.strftime('%H:%M:%S')}] bounded_shared {key} reps {first}..{first + len(out)} took "
                      f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
                return xr.Dataset({"estimate": ("rep", est), "resamples": (("rep", "resample"), res),
                                   "counts": (("rep", "resample", "row"), counts)},
                                  coords={"rep": np.arange(first, first + len(out))})

            C.cached(folder / f"{key.replace(':', '_')}_{first:05d}.nc", ctx, chunk)


def _expected(key: str) -> tuple[float, float]:
    """The learner's expected H2 (and its MC SE) as archived by ``bounded_statistics``."""
    dgp, learner = key.split(":")
    recs = json.loads((C.ARCHIVE / "bounded" / "summary.json").read_text())
    rec = next(r for r in recs if r["dgp"] == dgp and r["learner"] == learner)
    return rec["expected"], rec["expected_mcse"]


def records(ctx: C.Context, level: float = 0.95) -> list[dict]:
    folder = ctx.study_dir(STUDY)
    out = []
    for key in RUNS:
        files = sorted(folder.glob(f"{key.replace(':', '_')}_0*.nc"))
        if not files:
            continue
        data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
        est, res, counts = data["estimate"].values, data["resamples"].values, data["counts"].values
        expected, expected_mcse = _expected(key)
        R = est.size
        for method in (*sb.METHODS, "normal_log"):
            cover, cover_pop, widths, below, above = [], [], [], [], []
            for r in range(R):
                if method == "normal_log":  # diagnostic: estimate -/+ z SD on the log scale, mapped back
                    z = float(norm.ppf(0.5 + level / 2))
                    sd = np.std(np.log(np.clip(res[r], 1e-9, None)), ddof=1)
                    lo, hi = (float(est[r] * np.exp(-z * sd)), float(est[r] * np.exp(z * sd)))
                else:
                    lo, hi, *_ = band_arrays(est[r].reshape(1, 1), res[r].reshape(-1, 1, 1), level=level,
                                             method=method, simultaneous=False, absent=C.absent_rows(counts[r]),
                                             support=(0.0, None))
                    lo, hi = float(lo[0, 0]), float(hi[0, 0])
                cover.append(lo <= expected <= hi)
                below.append(expected < lo)  # the interval lies above the target
                above.append(expected > hi)
                cover_pop.append(lo <= 1 / 3 <= hi)
                widths.append(hi - lo)
            p, q = float(np.mean(cover)), float(np.mean(cover_pop))
            out.append({"setting": key, "rule": "shared S", "method": method, "R": int(R), "B": int(res.shape[1]),
                        "expected": expected, "expected_mcse": expected_mcse, "mean_estimate": float(est.mean()),
                        "mean_resample_minus_estimate": float(np.mean(res.mean(axis=1) - est)),
                        "coverage_expected": p, "coverage_expected_mcse": float(np.sqrt(p * (1 - p) / R)),
                        "coverage_population": q, "coverage_population_mcse": float(np.sqrt(q * (1 - q) / R)),
                        "mean_width": float(np.mean(widths)), "target": 0.95,
                        "miss_target_below_interval": float(np.mean(below)),
                        "miss_target_above_interval": float(np.mean(above)),
                        "sd_resamples_over_sd_estimate": float(np.sqrt(np.mean(res.var(axis=1, ddof=1)))
                                                               / est.std(ddof=1)),
                        "corr_estimate_sd_resamples": float(np.corrcoef(est, res.std(axis=1, ddof=1))[0, 1]),
                        "verdict": "within 2 MC SE of 0.95" if abs(p - 0.95) <= 2 * max(np.sqrt(p * (1 - p) / R),
                                                                                         1e-9) else
                        ("over-covers" if p > 0.95 else "UNDER-COVERS")})
    return out


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    old = {(r["dgp"] + ":" + r["learner"], r["method"]): r
           for r in json.loads((C.ARCHIVE / "bounded" / "summary.json").read_text())}
    lines = ["H2_12 of y = x1 + x2 + x1 x2 + eps (n = 300, H2 on n_max = 100 rows), 95 % intervals; coverage of the "
             "learner's expected H2 (MC SE); target 0.95.",
             f"{'setting':15s} {'method':10s} {'R':>4s} {'B':>4s}  {'own subsample (archived)':>26s}  "
             f"{'shared S (now)':>16s}  width old/new  verdict (shared)"]
    for r in recs:
        o = old.get((r["setting"], r["method"]))
        old_txt = (f"{o['coverage_expected']:.3f} ({o['coverage_expected_mcse']:.3f}) R={o['R']}" if o else "--")
        lines.append(f"{r['setting']:15s} {r['method']:10s} {r['R']:4d} {r['B']:4d}  {old_txt:>26s}  "
                     f"{r['coverage_expected']:.3f} ({r['coverage_expected_mcse']:.3f})  "
                     f"{(o['mean_width'] if o else float('nan')):.3f}/{r['mean_width']:.3f}  {r['verdict']}; misses "
                     f"below/above {r['miss_target_below_interval']:.3f}/{r['miss_target_above_interval']:.3f}")
    for key in RUNS:
        first = next((r for r in recs if r["setting"] == key), None)
        if first:
            lines.append(f"{key}: SD of the resamples / SD of the estimates over data sets "
                         f"{first['sd_resamples_over_sd_estimate']:.3f}; correlation of the estimate with its "
                         f"resamples' SD {first['corr_estimate_sd_resamples']:.2f}; mean estimate "
                         f"{first['mean_estimate']:.4f}, learner's expected H2 {first['expected']:.4f} "
                         f"(MC SE {first['expected_mcse']:.4f})")
    text = "\n".join(lines) + "\n"
    (ctx.study_dir(STUDY) / "summary.json").write_text(json.dumps(recs, indent=1))
    if summaries and not ctx.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "bounded_shared", recs, text)
    print(text)
    return recs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bounded_shared", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--settings", nargs="*", choices=RUNS)
    parser.add_argument("--max-reps", type=int)
    parser.add_argument("--summaries", action="store_true")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            compute(ctx, args.settings, args.max_reps)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
