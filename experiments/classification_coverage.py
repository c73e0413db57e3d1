"""Study (stats): coverage of probability-PD bands for classifiers, plain bootstrap resampling.

DGP: ``x1, x2 ~ N(0, 1)`` independent, ``P(y = 1 | x) = logistic(-0.3 + x1 - 0.5 x2 + 0.8 x1 x2)``,
``n`` rows.  Learners: logistic regression on ``(x1, x2, x1 x2)`` (well specified, large C) and
a histogram gradient-boosting classifier (flexible).  Per repetition one
``bootstrap_partial_dependence(..., resampling="bootstrap")`` run (B resamples, PD of
``P(class 1)`` for ``x1`` on a fixed 9-point grid, averaged over each resample's own rows).
Target: the learner's expected PD (the mean over ``truth_fits`` fits on fresh data of the PD
averaged over each fit's own rows).  Reported: mean pointwise coverage of the percentile band
and whole-curve coverage of the default simultaneous band (sup-t) and of the calibrated
percentile band, level 0.95, with Monte Carlo SEs.

    python -m experiments.classification_coverage [--quick] [--learners logistic gbm] [--max-reps R]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import xarray as xr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

import pdpboot
from pdpboot import Grid
from pdpboot.engine.intervals import band_arrays

from . import _common as C
from .learners import learner_label

STUDY = "classification"
GRID = np.linspace(-1.5, 1.5, 9)
SETTINGS = {
    "full": {"seed": 91, "n": 300, "chunk": 10,
             "runs": {"logistic": {"R": 200, "B": 100, "T": 400}, "gbm": {"R": 100, "B": 100, "T": 200}}},
    "quick": {"seed": 91, "n": 150, "chunk": 2,
              "runs": {"logistic": {"R": 2, "B": 20, "T": 4}, "gbm": {"R": 2, "B": 20, "T": 2}}},
}


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, 2))
    eta = -0.3 + X[:, 0] - 0.5 * X[:, 1] + 0.8 * X[:, 0] * X[:, 1]
    return X, (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)


def make_learner(name: str, quick: bool):
    if name == "logistic":
        return make_pipeline(PolynomialFeatures(2, interaction_only=True, include_bias=False),
                             LogisticRegression(C=1e4, max_iter=1000))
    return HistGradientBoostingClassifier(max_iter=15 if quick else 40, max_depth=3, learning_rate=0.1,
                                          early_stopping=False)


def _pd_of_fit(model, X: np.ndarray) -> np.ndarray:
    rows = np.repeat(X, GRID.size, axis=0)
    rows[:, 0] = np.tile(GRID, X.shape[0])
    return model.predict_proba(rows)[:, 1].reshape(X.shape[0], GRID.size).mean(axis=0)


def _truth_fit(name: str, cfg: dict, quick: bool, seed) -> np.ndarray:
    X, y = make_data(cfg["n"], np.random.default_rng(seed))
    return _pd_of_fit(make_learner(name, quick).fit(X, y), X)


def _repetition(name: str, cfg: dict, run: dict, quick: bool, seed) -> tuple[np.ndarray, np.ndarray]:
    data_seed, boot_seed = seed.spawn(2)
    X, y = make_data(cfg["n"], np.random.default_rng(data_seed))
    res = pdpboot.bootstrap_partial_dependence(
        make_learner(name, quick), X, y, [0], n_resamples=run["B"], grid=Grid(custom_values={0: GRID}),
        resampling="bootstrap", response_method="predict_proba", rng=np.random.default_rng(boot_seed),
        execution=pdpboot.Execution(progress=False))
    ds = res["x0"].ds
    k = list(ds["output"].values).index(1)
    return ds["pd"].values[k], ds["pd_resamples"].values[:, k, :]


def compute(ctx: C.Context, learners=None, max_reps: int | None = None) -> None:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    for name in learners or cfg["runs"]:
        run = cfg["runs"][name]
        truth_seed, rep_seed = C.seed_sequence(cfg["seed"], name).spawn(2)

        def truth(name=name, run=run, truth_seed=truth_seed):
            curves = np.array([_truth_fit(name, cfg, ctx.quick, s) for s in truth_seed.spawn(run["T"])])
            return xr.Dataset({"truth": ("x", curves.mean(axis=0)),
                               "truth_mcse": ("x", curves.std(axis=0, ddof=1) / np.sqrt(len(curves)))},
                              coords={"x": GRID})

        C.cached(folder / f"{name}_truth.nc", ctx, truth)
        reps = run["R"] if max_reps is None else min(run["R"], max_reps)
        seeds = rep_seed.spawn(run["R"])
        for first in range(0, reps, cfg["chunk"]):
            def chunk(first=first, name=name, run=run, seeds=seeds):
                start = time.perf_counter()
                out = [_repetition(name, cfg, run, ctx.quick, s) for s in seeds[first:first + cfg["chunk"]]]
                est, res = map(np.array, zip(*out))
                print(f"[{time.strftime('%H:%M:%S')}] classification {name} reps {first}..{first + len(out)} took "
                      f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
                return xr.Dataset({"estimate": (("rep", "x"), est), "resamples": (("rep", "resample", "x"), res)},
                                  coords={"rep": np.arange(first, first + len(out)), "x": GRID})

            C.cached(folder / f"{name}_{first:05d}.nc", ctx, chunk)


def _records(ctx: C.Context, level: float = 0.95) -> list[dict]:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    records = []
    for name in cfg["runs"]:
        files = sorted(folder.glob(f"{name}_0*.nc"))
        if not files or not (folder / f"{name}_truth.nc").exists():
            continue
        truth = C.load_dataset(folder / f"{name}_truth.nc")["truth"].values
        data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
        est, res = data["estimate"].values, data["resamples"].values
        n_rep = est.shape[0]
        pointwise, supt, calibrated = [], [], []
        for r in range(n_rep):
            e, s = est[r][None], res[r][:, None, :]
            lo, hi, *_ = band_arrays(e, s, level=level, method="percentile", simultaneous=False, support=(0.0, 1.0))
            pointwise.append(np.mean((lo[0] <= truth) & (truth <= hi[0])))
            for store, sim in ((supt, "sup-t"), (calibrated, "calibrated")):
                lo, hi, *_ = band_arrays(e, s, level=level, method="percentile", simultaneous=True,
                                         simultaneous_method=sim, support=(0.0, 1.0))
                store.append(bool(np.all((lo[0] <= truth) & (truth <= hi[0]))))
        rec = {"learner": name, "R": int(n_rep), "B": int(res.shape[1]), "n": cfg["n"],
               "pointwise": float(np.mean(pointwise)),
               "pointwise_mcse": float(np.std(pointwise, ddof=1) / np.sqrt(n_rep)) if n_rep > 1 else float("nan")}
        for key, values in (("simultaneous_supt", supt), ("simultaneous_calibrated", calibrated)):
            p = float(np.mean(values))
            rec[key] = p
            rec[f"{key}_mcse"] = float(np.sqrt(p * (1 - p) / n_rep))
        records.append(rec)
    return records


#: Compact files (``python -m experiments <study> --archive``): the per-chunk caches are small.
ARCHIVE = ("*.nc",)


def _setting_macros(ctx: C.Context) -> dict:
    r"""The design quoted in the text: ``\ClassN`` rows, ``\ClassGridPoints`` (of the archived truth curves, else
    the module's grid), the boosting classifier's ``\ClassGbmRounds`` and ``\ClassGbmDepth``."""
    truth = ctx.study_dir(STUDY) / "logistic_truth.nc"
    points = C.load_dataset(truth).sizes["x"] if truth.exists() else GRID.size
    gbm = make_learner("gbm", ctx.quick)
    return {"ClassN": str(SETTINGS[ctx.mode]["n"]), "ClassGridPoints": str(points),
            "ClassGbmRounds": str(gbm.max_iter), "ClassGbmDepth": str(gbm.max_depth)}


def render(ctx: C.Context) -> list[dict]:
    records = _records(ctx)
    lines = [r"\begin{tabular}{lrrrrr}", r"\toprule",
             r"learner & $R$ & $B$ & pointwise & simultaneous (sup-$t$) & simultaneous (calibrated) \\", r"\midrule"]
    for rec in records:
        cells = [f"{C.fmt(rec[k], 3)} ({C.fmt(rec[k + '_mcse'], 3)})"
                 for k in ("pointwise", "simultaneous_supt", "simultaneous_calibrated")]
        lines.append(f"{learner_label(rec['learner'], classifier=True)} & {rec['R']} & {rec['B']} & "
                     + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "coverage_classification.tex"), "\n".join(lines))
    macros = {}
    for rec in records:
        key = {"logistic": "Logistic", "gbm": "Gbm"}[rec["learner"]]
        macros[f"ClassR{key}"] = str(rec["R"])
        macros[f"ClassB{key}"] = str(rec["B"])
        for field, name in (("pointwise", "Pointwise"), ("simultaneous_supt", "Supt"),
                            ("simultaneous_calibrated", "Calibrated")):
            macros[f"Class{name}{key}"] = C.fmt(rec[field], 3)
            macros[f"Class{name}SE{key}"] = C.fmt(rec[f"{field}_mcse"], 3)
    macros.update(_setting_macros(ctx))
    C.write_macros(ctx.out("generated", "classification.tex"), macros,
                   "classification_coverage: probability-PD coverage for classifiers")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.classification_coverage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--learners", nargs="*")
    parser.add_argument("--max-reps", type=int)
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        compute(ctx, args.learners, args.max_reps)
        records = render(ctx)
    for rec in records:
        print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
