"""Study (issue 27 items 1 and 4): H2 intervals of a classifier's probabilities under ``resampling="auto"``.

``resampling="auto"`` gives a classifier's probabilities the 0.632 subsample (deviations rescaled by
``sqrt(m / (n - m))``); the H statistics of such a run come from the same subsamples, and their intervals had
been studied with the bootstrap only (``experiments/bounded_shared.py``, regression).  Here the package runs end
to end (``pdpboot.bootstrap_partial_dependence(..., statistics={"interactions": N_MAX})``, then
``pdpboot.h_statistic``: percentile band, the default) on ``classifier_se``'s ``skewcorr`` binary DGP (an
``x0 x2`` interaction on the logit scale), for the pair (x0, x2) of a HistGradientBoostingClassifier (60 rounds),
under ``resampling="auto"`` (the subsample) and ``resampling="bootstrap"``, n = 400, B = 100, H2 on
``N_MAX = 100`` rows.

Target: the learner's expected H2 as the package estimates it, the mean over ``T = 200`` fits on independent
data sets of H2 of the fit on a random ``N_MAX``-row subsample of its own rows
(``pdpboot.h_statistic_of_model``).  Coverage of the 95 % interval with MC SE ``sqrt(p (1 - p) / R)``; misses
above and below the interval counted apart.

    python -m experiments.h2_classifier compute [--quick] [--schemes auto bootstrap] [--reps R]
    python -m experiments.h2_classifier render [--summaries]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from functools import partial

import numpy as np
import xarray as xr

from pdpboot import Grid

from . import _common as C
from . import classifier_se as cs

STUDY = "h2_classifier"
SEED = 27_4_2026
PAIR = (0, 2)
N_MAX = 100
SCHEMES = ("auto", "bootstrap")
SETTINGS = {"full": {"n": 400, "B": 100, "T": 200, "R": 60}, "quick": {"n": 150, "B": 20, "T": 4, "R": 2}}
CHUNK = 3


def _h2_of_fit(model, X: np.ndarray, rng) -> float:
    import pdpboot

    stats = pdpboot.h_statistic_of_model(model, X, [PAIR], n_max=N_MAX, rng=rng)
    return float(stats[f"x{PAIR[0]}__x{PAIR[1]}"].ds["h2"].values[-1])  # the positive class's probability


def _truth(n: int, T: int, quick: bool) -> xr.Dataset:
    values = []
    for seed in np.random.SeedSequence([SEED, 1]).spawn(T):
        data_seed, rows_seed = seed.spawn(2)
        X, y = cs.make_data("skewcorr", n, np.random.default_rng(data_seed))
        values.append(_h2_of_fit(cs.make_learner("hgb_clf", quick).fit(X, y), X, np.random.default_rng(rows_seed)))
    return xr.Dataset({"h2": ("fit", np.array(values))})


def truth_of(ctx: C.Context) -> xr.Dataset:
    cfg = SETTINGS[ctx.mode]
    return C.cached(ctx.study_dir(STUDY) / "truth.nc", ctx, partial(_truth, cfg["n"], cfg["T"], ctx.quick))


def _rep(scheme: str, seed: np.random.SeedSequence, cfg: dict, quick: bool) -> dict:
    import pdpboot

    data_seed, run_seed = seed.spawn(2)
    X, y = cs.make_data("skewcorr", cfg["n"], np.random.default_rng(data_seed))
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pdpboot.bootstrap_partial_dependence(
            cs.make_learner("hgb_clf", quick), X, y, [PAIR], n_resamples=cfg["B"], resampling=scheme,
            statistics={"interactions": N_MAX}, grid=Grid(5), rng=run_seed,
            execution=pdpboot.Execution(n_jobs=1, progress=False))
        ds = pdpboot.h_statistic(res)[f"x{PAIR[0]}__x{PAIR[1]}"].ds
    return {"estimate": float(ds["h2"].values[-1]), "lower": float(ds["h2_band"].values[0, -1]),
            "upper": float(ds["h2_band"].values[1, -1]), "se": float(ds["h2_se"].values[-1]),
            "cpu_seconds": time.process_time() - start, "resampling": res.attrs["resampling"]}


def _chunk(ctx: C.Context, scheme: str, first: int, last: int) -> xr.Dataset:
    cfg = SETTINGS[ctx.mode]
    seeds = np.random.SeedSequence([SEED, 2]).spawn(last)  # the same data sets for both schemes
    reps = [_rep(scheme, seeds[r], cfg, ctx.quick) for r in range(first, last)]
    print(f"[{time.strftime('%H:%M:%S')}] h2 {scheme} reps {first}..{last}", file=sys.stderr, flush=True)
    data = {k: ("rep", np.array([r[k] for r in reps])) for k in ("estimate", "lower", "upper", "se", "cpu_seconds")}
    return xr.Dataset(data, coords={"rep": np.arange(first, last)}, attrs={"resampling": reps[0]["resampling"]})


def compute(ctx: C.Context, schemes=SCHEMES, reps: int | None = None) -> None:
    truth_of(ctx)
    R = reps or SETTINGS[ctx.mode]["R"]
    for scheme in schemes:
        for first in range(0, R, CHUNK):
            path = ctx.study_dir(STUDY) / f"{scheme}_{first:05d}.nc"
            C.cached(path, ctx, partial(_chunk, ctx, scheme, first, min(first + CHUNK, R)))


def records(ctx: C.Context) -> list[dict]:
    out = []
    truth_path = ctx.study_dir(STUDY) / "truth.nc"
    if not truth_path.exists():
        return out
    fits = C.load_dataset(truth_path)["h2"].values
    target, true_sd = float(fits.mean()), float(fits.std(ddof=1))
    for scheme in SCHEMES:
        files = sorted(ctx.study_dir(STUDY).glob(f"{scheme}_0*.nc"))
        if not files:
            continue
        ds = xr.concat([C.load_dataset(f) for f in files], dim="rep")
        lo, hi = ds["lower"].values, ds["upper"].values
        R = len(lo)
        cover = float(np.mean((lo <= target) & (target <= hi)))
        out.append({"scheme": scheme, "resampling": str(ds.attrs["resampling"]), "R": R, "B": SETTINGS[ctx.mode]["B"],
                    "T": int(len(fits)), "target": target, "estimate_sd": float(ds["estimate"].std(ddof=1)),
                    "true_sd": true_sd, "se_ratio": float(np.median(ds["se"].values) / true_sd),
                    "coverage": cover, "coverage_mcse": float(np.sqrt(cover * (1 - cover) / R)),
                    "miss_above": float(np.mean(target > hi)), "miss_below": float(np.mean(target < lo)),
                    "cpu_seconds_per_rep": float(ds["cpu_seconds"].mean())})
    return out


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    cfg = SETTINGS[ctx.mode]
    lines = [f"H2 of (x0, x2), HistGradientBoostingClassifier (60 rounds) on classifier_se's skewcorr DGP, "
             f"n = {cfg['n']}, B = {cfg['B']}, H2 on {N_MAX} rows, 95 % percentile interval (pdpboot.h_statistic's "
             "default). Target: "
             f"the learner's expected H2 (mean of T = {cfg['T']} fits). MC SE sqrt(p (1 - p) / R).",
             f"{'resampling':22s} {'R':>4s}  {'coverage':>14s}  {'above':>6s}  {'below':>6s}  SE/SD  target  CPU/rep"]
    for r in recs:
        lines.append(f"{r['scheme'] + ' (' + r['resampling'] + ')':22s} {r['R']:4d}  {r['coverage']:.3f} "
                     f"({r['coverage_mcse']:.3f})  {r['miss_above']:6.3f}  {r['miss_below']:6.3f}  "
                     f"{r['se_ratio']:5.2f}  {r['target']:.3f}  {r['cpu_seconds_per_rep']:5.1f} s")
    text = "\n".join(lines) + "\n"
    C.write_summary(ctx.study_dir(STUDY), recs, text)
    if summaries and not ctx.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / STUDY, recs, text)
    print(text)
    return recs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.h2_classifier", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--summaries", action="store_true", help="also write experiments/summaries/" + STUDY)
    parser.add_argument("--schemes", nargs="*", choices=SCHEMES, default=list(SCHEMES))
    parser.add_argument("--reps", type=int)
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            compute(ctx, args.schemes, args.reps)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
