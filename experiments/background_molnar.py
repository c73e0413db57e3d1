"""Study (stats, issue 27 item 5): fixed-rows vs resample-rows background for flexible learners, and
Molnar et al. (2023) at equal cost.

Setting: the coverage study's scenario B (:mod:`experiments.coverage`): Friedman #1 (10 features,
noise SD 1), n = 500, PD of x1, x3, x4 on the 15-point grid 0.05..0.95, learners ``rf`` (30 trees) and
``gbm`` (100 rounds) of :mod:`experiments.learners`.  Per data set:

* the estimate: the full-data fit's PD averaged over the n rows;
* ``B = 100`` bootstrap refits (rows with replacement), each PD averaged two ways from the same refit:
  over its own rows with their multiplicities (``background="resample"``, the package's default) and over
  the n original rows (``background="original"``, fixed rows);
* Molnar et al.'s refits (:mod:`experiments.molnar`): ``K`` fits on ``n1 = round(f n)`` rows without
  replacement, each PD averaged over its held-out rows; ``f = 0.7`` with ``K = 200`` refits on the first
  ``k200_reps`` data sets (their first 15 give the ``K = 15`` interval) and ``K = 15`` elsewhere, and
  ``f = 0.5`` with ``K = 15``.

Bands (level 0.95): the bootstrap's percentile (pointwise) and sup-t (whole curve) bands for each background
at B = 100; the normal band ``estimate -/+ 1.96 SD`` from the first 15 and the first 30 resamples (the cost of
Molnar's K = 15 .. 30 refits); Molnar's corrected t-interval with K = 15 and K = 200.  Targets: the learner's
expected PD at training size n (the bootstrap's estimand) and at n1 (Molnar's: the mean of K fits on n1 rows),
each the mean of ``T`` fits on fresh data averaged over a fresh 2000-row sample of X (as ``coverage``), and
the DGP's PD.  Width at matched coverage: ``coverage.matched_width`` (every band scaled about its midpoint
until its pointwise coverage of the target is 0.95), against the learner's PD at n for every band (the same
estimand) and against each band's own estimand.

    python -m experiments.background_molnar [compute|render|both] [--learners gbm rf] [--R 16] [--summaries]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial

import numpy as np
import xarray as xr
from scipy import stats

from pdpboot.engine.intervals import band_arrays

from . import _common as C
from .config import config
from .coverage import dgp_pd, matched_width, simulate
from .learners import make_learner, reseed

STUDY = "background_molnar"
SEED = 27_0005
SETTINGS = {
    "full": {"n": 500, "B": 100, "k_small": 15, "k_large": 200, "k200_reps": 8, "T": 100, "n_background": 2000,
             "R": 16, "chunk": 2},
    "quick": {"n": 150, "B": 10, "k_small": 4, "k_large": 8, "k200_reps": 1, "T": 3, "n_background": 200,
              "R": 2, "chunk": 1},
}
FRACTIONS = (0.7, 0.5)
LEVEL = 0.95


def scenario(learner: str, quick: bool) -> dict:
    return config("coverage", quick)["scenarios"][f"B_{learner}_n500"]


def _pd_rows(model, X: np.ndarray, features, grid: np.ndarray) -> np.ndarray:
    """Per-row ICE values: (n_rows, F, G) of ``model.predict`` with feature ``f`` set to each grid value."""
    n, G = X.shape[0], grid.size
    out = np.empty((n, len(features), G))
    for i, f in enumerate(features):
        rows = np.repeat(X, G, axis=0)
        rows[:, f] = np.tile(grid, n)
        out[:, i] = model.predict(rows).reshape(n, G)
    return out


def repetition(learner: str, cfg: dict, quick: bool, rep: int, seed: np.random.SeedSequence) -> dict:
    sc = scenario(learner, quick)
    feats, grid = sc["features"], np.asarray(sc["grid"])
    data_seed, boot_seed, molnar_seed = seed.spawn(3)
    X, y = simulate(sc, cfg["n"], data_seed)
    n = len(y)
    rng = np.random.default_rng(boot_seed)
    model = reseed(make_learner(learner, quick), rng).fit(X, y)
    out = {"estimate": _pd_rows(model, X, feats, grid).mean(axis=0)}
    resample, fixed = [], []
    for _ in range(cfg["B"]):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        rows = np.repeat(np.arange(n), counts)
        ice = _pd_rows(reseed(make_learner(learner, quick), rng).fit(X[rows], y[rows]), X, feats, grid)
        fixed.append(ice.mean(axis=0))
        resample.append(np.tensordot(counts / n, ice, axes=1))
    out["resample"], out["fixed"] = np.array(resample), np.array(fixed)
    for fraction, s in zip(FRACTIONS, molnar_seed.spawn(len(FRACTIONS))):
        K = cfg["k_large"] if fraction == 0.7 and rep < cfg["k200_reps"] else cfg["k_small"]
        gen = np.random.default_rng(s)
        n1 = int(round(fraction * n))
        curves = np.full((cfg["k_large"], len(feats), grid.size), np.nan)
        for k in range(K):
            order = gen.permutation(n)
            fit = reseed(make_learner(learner, quick), gen).fit(X[order[:n1]], y[order[:n1]])
            curves[k] = _pd_rows(fit, X[order[n1:]], feats, grid).mean(axis=0)
        out[f"molnar_{fraction}"] = curves
    return out


def _chunk(learner: str, cfg: dict, quick: bool, first: int, last: int, seeds) -> xr.Dataset:
    start = time.perf_counter()
    reps = [repetition(learner, cfg, quick, r, seeds[r]) for r in range(first, last)]
    print(f"[{time.strftime('%H:%M:%S')}] background_molnar {learner} reps {first}..{last} took "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    fg = ("feature", "grid")
    data = {"estimate": (("rep", *fg), np.array([r["estimate"] for r in reps])),
            "resample": (("rep", "resample_id", *fg), np.array([r["resample"] for r in reps])),
            "fixed": (("rep", "resample_id", *fg), np.array([r["fixed"] for r in reps]))}
    for fr in FRACTIONS:
        data[f"molnar_{fr}"] = (("rep", "refit", *fg), np.array([r[f"molnar_{fr}"] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, last)})


def _truth_fit(learner: str, quick: bool, n: int, n_background: int, seed) -> np.ndarray:
    sc = scenario(learner, quick)
    data_seed, fit_seed, bg_seed = seed.spawn(3)
    X, y = simulate(sc, n, data_seed)
    Xb, _ = simulate(sc, n_background, bg_seed)
    model = reseed(make_learner(learner, quick), np.random.default_rng(fit_seed)).fit(X, y)
    return _pd_rows(model, Xb, sc["features"], np.asarray(sc["grid"])).mean(axis=0)


def _truth(learner: str, cfg: dict, quick: bool, seed) -> xr.Dataset:
    sizes = [cfg["n"]] + [int(round(f * cfg["n"])) for f in FRACTIONS]
    fits = np.array([[_truth_fit(learner, quick, m, cfg["n_background"], s) for s in child.spawn(cfg["T"])]
                     for m, child in zip(sizes, seed.spawn(len(sizes)))])
    return xr.Dataset({"fits": (("size", "fit", "feature", "grid"), fits)}, coords={"size": sizes})


def compute(ctx: C.Context, learners=("gbm", "rf"), R: int | None = None) -> None:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    for learner in learners:
        truth_seed, rep_seed = C.seed_sequence(SEED, learner).spawn(2)
        C.cached(folder / f"{learner}_truth.nc", ctx, partial(_truth, learner, cfg, ctx.quick, truth_seed))
        total = R or cfg["R"]
        seeds = [np.random.SeedSequence(rep_seed.entropy, spawn_key=(*rep_seed.spawn_key, r)) for r in range(total)]
        for first in range(0, total, cfg["chunk"]):
            last = min(first + cfg["chunk"], total)
            C.cached(folder / f"{learner}_{first:05d}.nc", ctx,
                     partial(_chunk, learner, cfg, ctx.quick, first, last, seeds))


# --------------------------------------------------------------------------- render


def _molnar_band(curves: np.ndarray, K: int, fraction: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Molnar et al.'s corrected t-interval from the first K curves (K, F, G)."""
    c = curves[:K]
    n1 = int(round(fraction * n))
    se = np.sqrt(c.var(axis=0, ddof=1) * (1.0 / K + (n - n1) / n1))
    t = stats.t.ppf(0.5 + LEVEL / 2, df=K - 1)
    return c.mean(axis=0) - t * se, c.mean(axis=0) + t * se


def _boot(est: np.ndarray, resamples: np.ndarray, method: str, simultaneous: bool):
    """Bands (lower, upper) of every data set: estimate (R, F, G), resamples (R, B, F, G)."""
    lo, hi = np.empty_like(est), np.empty_like(est)
    for r in range(est.shape[0]):
        lo[r], hi[r], *_ = band_arrays(est[r], resamples[r], level=LEVEL, method=method, simultaneous=simultaneous)
    return lo, hi


def _cover(lower, upper, truth) -> tuple[np.ndarray, np.ndarray]:
    inside = (lower <= truth) & (truth <= upper)  # (R, F, G)
    return inside.mean(axis=(1, 2)), inside.all(axis=2).mean(axis=1)


def records(ctx: C.Context) -> list[dict]:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    out = []
    for learner in ("gbm", "rf"):
        files = sorted(folder.glob(f"{learner}_0*.nc"))
        if not files or not (folder / f"{learner}_truth.nc").exists():
            continue
        sc = scenario(learner, ctx.quick)
        data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
        fits = C.load_dataset(folder / f"{learner}_truth.nc")["fits"].values  # (size, T, F, G)
        truth_n, t_n1 = fits[0].mean(axis=0), {fr: fits[1 + i].mean(axis=0) for i, fr in enumerate(FRACTIONS)}
        truth_mcse = float((fits.std(axis=1, ddof=1) / np.sqrt(fits.shape[1])).max())
        dgp = np.stack([dgp_pd(sc, f, np.asarray(sc["grid"])) for f in sc["features"]])
        est = data["estimate"].values
        bands: list[tuple[dict, np.ndarray, np.ndarray, np.ndarray]] = []

        for kind in ("resample", "fixed"):
            lo, hi = _boot(est, data[kind].values[:, :cfg["B"]], "percentile", False)
            bands.append(({"band": f"bootstrap {kind} rows, percentile", "refits": cfg["B"]}, lo, hi, truth_n))
            lo, hi = _boot(est, data[kind].values[:, :cfg["B"]], "percentile", True)
            bands.append(({"band": f"bootstrap {kind} rows, sup-t", "refits": cfg["B"]}, lo, hi, truth_n))
        for B in (cfg["k_small"], 2 * cfg["k_small"]):
            lo, hi = _boot(est, data["resample"].values[:, :B], "normal", False)
            bands.append(({"band": f"bootstrap normal, B = {B}", "refits": B}, lo, hi, truth_n))
        for fr in FRACTIONS:
            curves = data[f"molnar_{fr}"].values
            for K in (cfg["k_small"], cfg["k_large"]):
                keep = np.all(np.isfinite(curves[:, :K]), axis=(1, 2, 3))
                if keep.sum() < 2:
                    continue
                lo, hi = np.array([_molnar_band(c, K, fr, cfg["n"]) for c in curves[keep]]).transpose(1, 0, 2, 3)
                bands.append(({"band": f"Molnar K = {K}, n1/n = {fr}", "refits": K, "reps": keep}, lo, hi, t_n1[fr]))
        for label, lo, hi, own in bands:
            keep = label.pop("reps", np.ones(est.shape[0], dtype=bool))
            R = int(keep.sum())
            rec = {"learner": learner, **label, "R": R, "n": cfg["n"], "truth_fits": int(fits.shape[1]),
                   "truth_mcse_max": truth_mcse}
            for name, target in (("learner_n", truth_n), ("own", own), ("dgp", dgp)):
                pw, whole = _cover(lo, hi, target)
                rec[f"pointwise_{name}"], rec[f"pointwise_{name}_mcse"] = float(pw.mean()), float(
                    pw.std(ddof=1) / np.sqrt(R))
                rec[f"whole_{name}"], rec[f"whole_{name}_mcse"] = float(whole.mean()), float(
                    whole.std(ddof=1) / np.sqrt(R))
            # verdict against 0.95: whole curve for sup-t bands, pointwise (own estimand) for the others
            kind = "whole_learner_n" if "sup-t" in rec["band"] else "pointwise_own"
            floor = np.sqrt(0.95 * 0.05 / R) if kind.startswith("whole") else 1e-12  # whole: at least binomial
            gap = (rec[kind] - 0.95) / max(rec[f"{kind}_mcse"], floor)
            rec["verdict"] = ("within 2 MC SE of 0.95" if abs(gap) <= 2 else
                              "UNDER-COVERS" if gap < 0 else "over-covers") + f" ({kind.split('_')[0]})"
            rec["width"] = float((hi - lo).mean())
            rec["matched_width_learner_n"] = matched_width(lo, hi, truth_n, LEVEL)[0]
            rec["matched_width_own"] = matched_width(lo, hi, own, LEVEL)[0]
            out.append(rec)
    return out


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    cfg = SETTINGS[ctx.mode]
    lines = [f"Friedman #1, n = {cfg['n']}, PD of x1, x3, x4 (15 points); level 0.95; target: pointwise 0.95, "
             "whole curve 0.95 for sup-t bands. Coverage (MC SE over data sets) of the learner's expected PD at n "
             "(the bootstrap's estimand) and of each band's own estimand (Molnar: expected PD at n1); widths "
             "matched to 0.95 pointwise coverage.",
             f"{'learner':7s} {'band':38s} {'refits':>6s} {'R':>3s}  {'pointwise (PD at n)':>19s} "
             f"{'whole (PD at n)':>16s}  {'pointwise (own)':>16s}  width  matched(n)  matched(own)  verdict"]
    for r in recs:
        lines.append(f"{r['learner']:7s} {r['band']:38s} {r['refits']:6d} {r['R']:3d}  "
                     f"{r['pointwise_learner_n']:.3f} ({r['pointwise_learner_n_mcse']:.3f})    "
                     f"{r['whole_learner_n']:.3f} ({r['whole_learner_n_mcse']:.3f})  "
                     f"{r['pointwise_own']:.3f} ({r['pointwise_own_mcse']:.3f})  {r['width']:.3f}  "
                     f"{r['matched_width_learner_n']:.3f}      {r['matched_width_own']:.3f}  {r['verdict']}")
    text = "\n".join(lines) + "\n"
    (ctx.study_dir(STUDY) / "summary.json").write_text(json.dumps(recs, indent=1))
    if summaries and not ctx.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / STUDY, recs, text)
    print(text)
    return recs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.background_molnar", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--learners", nargs="*", default=["gbm", "rf"], choices=["gbm", "rf"])
    parser.add_argument("--R", type=int)
    parser.add_argument("--k200-reps", type=int, help="data sets (the first ones) that get K = 200 Molnar refits")
    parser.add_argument("--summaries", action="store_true")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            if args.k200_reps is not None:
                SETTINGS[ctx.mode]["k200_reps"] = args.k200_reps
            compute(ctx, args.learners, args.R)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
