"""Study (issue 27 item 1): does the classifier default hold for a multiclass classifier's probabilities?

``resampling="auto"`` gives every classifier's predicted probabilities the 0.632 subsample with the PD's
bands formed on the logit scale (per class, one-vs-rest probability); ``experiments/classifier_default.py``
measured it on binary outcomes only.  Here the package itself runs (``pdpboot.bootstrap_partial_dependence``
with its defaults, then ``pdpboot.confidence_bands(simultaneous=True)``) on a three-class DGP: the correlated,
skewed features of ``classifier_se``'s ``skewcorr`` DGP (x0 normal, x1 log-normal, x2 normal, latent
correlation 0.5) and class probabilities ``softmax(0, eta1, eta2)`` with ``eta1 = 0.3 + 1.2 tanh(1.5 x0) -
0.5 (x1 - 1)`` (a bump in x0) and ``eta2 = -0.4 - 0.8 x0 + 0.6 x0 x2 + 0.5 log x1`` (an interaction); class
shares about 0.29 / 0.37 / 0.34.  n = 400, G = 12 grid points (population 5-95 % quantiles) of x0 and x1,
B = 100.  Learners: ``hgb_clf`` (HistGradientBoosting, 60 rounds), ``rf_clf`` (60 trees, min leaf 5) and
``logreg``, as in ``classifier_se``.

Truth: the learner's expected PD (the package's estimand), the mean over ``T = 200`` fits on independent
data sets of each fit's PD over its own rows.  Coverage: pointwise (every grid point of every class and
feature), and whole curve (a class's curve of one feature inside its simultaneous band), each with its
Monte Carlo SE over data sets; the target is the issue's (pointwise 0.95 +/- 0.02, whole curve >= 0.93).

    python -m experiments.multiclass_default compute [--quick] [--cells hgb_clf=60 logreg=100]
    python -m experiments.multiclass_default render [--summaries]
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

STUDY = "multiclass_default"
SEED = 27_3_2026
LEARNERS = ("hgb_clf", "rf_clf", "logreg")
SETTINGS = {"full": {"n": 400, "B": 100, "T": 200, "R": {"hgb_clf": 60, "rf_clf": 45, "logreg": 100}},
            "quick": {"n": 150, "B": 20, "T": 6, "R": {"hgb_clf": 2, "rf_clf": 0, "logreg": 2}}}
CHUNK = 3
N_CLASSES = 3


def class_probabilities(X: np.ndarray) -> np.ndarray:
    """``P(y = k | x)``, k = 0, 1, 2: softmax of (0, eta1, eta2)."""
    eta1 = 0.3 + 1.2 * np.tanh(1.5 * X[:, 0]) - 0.5 * (X[:, 1] - 1.0)
    eta2 = -0.4 - 0.8 * X[:, 0] + 0.6 * X[:, 0] * X[:, 2] + 0.5 * np.log(X[:, 1])
    logits = np.column_stack([np.zeros(len(X)), eta1, eta2])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = cs._skewcorr_x(n, rng)
    cumulative = np.cumsum(class_probabilities(X), axis=1)
    return X, (rng.uniform(size=n)[:, None] > cumulative[:, :-1]).sum(axis=1)


def pd_of_fit(model, X: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Each class's PD of each feature in ``cs.FEATURES`` over the rows ``X``: (classes, F, G)."""
    out = np.empty((N_CLASSES, len(cs.FEATURES), grid.shape[1]))
    for f, j in enumerate(cs.FEATURES):
        rows = np.repeat(X, grid.shape[1], axis=0)
        rows[:, j] = np.tile(grid[f], len(X))
        out[:, f] = model.predict_proba(rows).reshape(len(X), grid.shape[1], N_CLASSES).mean(axis=0).T
    return out


def _truth(learner: str, n: int, T: int, quick: bool) -> xr.Dataset:
    grid = cs.grid_of("skewcorr")
    seeds = np.random.SeedSequence([SEED, LEARNERS.index(learner), 1]).spawn(T)
    fits = []
    for seed in seeds:
        X, y = make_data(n, np.random.default_rng(seed))
        fits.append(pd_of_fit(cs.make_learner(learner, quick).fit(X, y), X, grid))
    return xr.Dataset({"fits": (("fit", "cls", "feature", "x"), np.array(fits))})


def truth_of(ctx: C.Context, learner: str) -> xr.Dataset:
    cfg = SETTINGS[ctx.mode]
    return C.cached(ctx.study_dir(STUDY) / f"{learner}_truth.nc", ctx,
                    partial(_truth, learner, cfg["n"], cfg["T"], ctx.quick))


def _rep(learner: str, seed: np.random.SeedSequence, grid: np.ndarray, n: int, B: int, quick: bool) -> dict:
    """One data set through the package's defaults: estimate, pointwise and simultaneous bands (cls, F, G)."""
    import pdpboot

    data_seed, run_seed = seed.spawn(2)
    X, y = make_data(n, np.random.default_rng(data_seed))
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample may miss a class; the run records it
        res = pdpboot.bootstrap_partial_dependence(
            cs.make_learner(learner, quick), X, y, list(cs.FEATURES), n_resamples=B, rng=run_seed,
            grid=Grid(custom_values={j: grid[f] for f, j in enumerate(cs.FEATURES)}),
            execution=pdpboot.Execution(n_jobs=1, progress=False))
        bands = pdpboot.confidence_bands(res, simultaneous=True)
    cpu = time.process_time() - start
    out = {key: np.empty((N_CLASSES, len(cs.FEATURES), grid.shape[1]))
           for key in ("estimate", "lower", "upper", "lower_pointwise", "upper_pointwise")}
    for f, j in enumerate(cs.FEATURES):
        ds = bands[f"x{j}"].ds
        out["estimate"][:, f] = ds["pd"].values
        out["lower"][:, f], out["upper"][:, f] = ds["pd_band"].values
        out["lower_pointwise"][:, f], out["upper_pointwise"][:, f] = ds["pd_band_pointwise"].values
    out["scheme"] = f"{res.attrs['resampling']}/{res.attrs.get('band_scale', 'identity')}"
    out["cpu_seconds"] = cpu
    return out


def _chunk(ctx: C.Context, learner: str, first: int, last: int) -> xr.Dataset:
    cfg = SETTINGS[ctx.mode]
    seeds = np.random.SeedSequence([SEED, LEARNERS.index(learner), 2]).spawn(last)
    grid = cs.grid_of("skewcorr")  # (200,000 draws: once per chunk)
    reps = [_rep(learner, seeds[r], grid, cfg["n"], cfg["B"], ctx.quick) for r in range(first, last)]
    print(f"[{time.strftime('%H:%M:%S')}] multiclass {learner} reps {first}..{last} "
          f"{sum(r['cpu_seconds'] for r in reps):.0f} s CPU", file=sys.stderr, flush=True)
    dims = ("rep", "cls", "feature", "x")
    data = {k: (dims, np.array([r[k] for r in reps]))
            for k in ("estimate", "lower", "upper", "lower_pointwise", "upper_pointwise")}
    data["cpu_seconds"] = ("rep", np.array([r["cpu_seconds"] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, last)}, attrs={"scheme": reps[0]["scheme"]})


def compute(ctx: C.Context, counts: dict[str, int] | None = None) -> None:
    for learner, R in (counts or SETTINGS[ctx.mode]["R"]).items():
        if R == 0:
            continue
        truth_of(ctx, learner)
        for first in range(0, R, CHUNK):
            last = min(first + CHUNK, R)
            path = ctx.study_dir(STUDY) / f"{learner}_{first:05d}.nc"
            C.cached(path, ctx, partial(_chunk, ctx, learner, first, last))


def records(ctx: C.Context) -> list[dict]:
    out = []
    for learner in LEARNERS:
        files = sorted(ctx.study_dir(STUDY).glob(f"{learner}_0*.nc"))
        if not files or not (ctx.study_dir(STUDY) / f"{learner}_truth.nc").exists():
            continue
        chunks = [C.load_dataset(f) for f in files]
        ds = xr.concat(chunks, dim="rep")
        fits = truth_of(ctx, learner)["fits"].values
        truth = fits.mean(axis=0)  # (cls, F, G)
        inside = (ds["lower_pointwise"].values <= truth) & (truth <= ds["upper_pointwise"].values)
        whole = np.all((ds["lower"].values <= truth) & (truth <= ds["upper"].values), axis=-1)  # (R, cls, F)
        rec = {"learner": learner, "R": int(ds.sizes["rep"]), "B": SETTINGS[ctx.mode]["B"], "T": int(fits.shape[0]),
               "n": SETTINGS[ctx.mode]["n"], "scheme": str(chunks[0].attrs["scheme"]),
               "cpu_seconds_per_rep": float(ds["cpu_seconds"].mean())}
        rec["pointwise"], rec["pointwise_mcse"] = C.mean_se(inside.mean(axis=(1, 2, 3)))
        rec["whole"], rec["whole_mcse"] = C.mean_se(whole.mean(axis=(1, 2)))
        rec["whole_by_class"] = [float(v) for v in whole.mean(axis=(0, 2))]
        rec["pointwise_by_class"] = [float(v) for v in inside.mean(axis=(0, 2, 3))]
        width = (ds["upper_pointwise"].values - ds["lower_pointwise"].values) / (2 * fits.std(axis=0, ddof=1))
        rec["halfwidth_sd"] = float(np.median(width))
        rec["meets_issue"] = bool(abs(rec["pointwise"] - 0.95) <= 0.02 and rec["whole"] >= 0.93)
        out.append(rec)
    return out


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    cfg = SETTINGS[ctx.mode]
    lines = ["resampling='auto' (the package's defaults) on a three-class outcome: each class's probability PD of "
             f"x0 and x1, n = {cfg['n']}, B = {cfg['B']}, truth the mean of T = {cfg['T']} fits on independent data "
             "sets. Pointwise: every "
             "grid point of every class and feature; whole curve: one class's curve of one feature inside its "
             "simultaneous band; MC SE over data sets; issue target pointwise 0.95 +/- 0.02, whole >= 0.93.",
             f"{'learner':8s} {'scheme':16s} {'R':>4s}  {'pointwise':>13s}  {'whole curve':>13s}  "
             f"{'whole by class':>20s}  halfwidth/SD  CPU/rep  target"]
    for r in recs:
        by_class = " ".join(f"{v:.3f}" for v in r["whole_by_class"])
        lines.append(f"{r['learner']:8s} {r['scheme']:16s} {r['R']:4d}  "
                     f"{r['pointwise']:.3f} ({r['pointwise_mcse']:.3f})  {r['whole']:.3f} ({r['whole_mcse']:.3f})  "
                     f"{by_class:>20s}  {r['halfwidth_sd']:12.2f}  "
                     f"{r['cpu_seconds_per_rep']:6.1f} s  {'meets' if r['meets_issue'] else 'misses'}")
    text = "\n".join(lines) + "\n"
    C.write_summary(ctx.study_dir(STUDY), recs, text)
    if summaries and not ctx.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / STUDY, recs, text)
    print(text)
    return recs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.multiclass_default", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--summaries", action="store_true", help="also write experiments/summaries/" + STUDY)
    parser.add_argument("--cells", nargs="*", metavar="LEARNER=R", help="data sets per learner (default: the mode's)")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    counts = None
    if args.cells:
        counts = {}
        for item in args.cells:
            learner, _, R = item.partition("=")
            if learner not in LEARNERS or not R.isdigit():
                raise SystemExit(f"--cells {item!r}: expected LEARNER=R with LEARNER in {LEARNERS}")
            counts[learner] = int(R)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            compute(ctx, counts)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
