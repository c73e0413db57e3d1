"""Study (issue 31, point 10): scikit-explain's bootstrapped PD band against pdpboot's refit band.

scikit-explain (``ExplainToolkit.pd(..., n_bootstrap=B)``) resamples the *background rows* of one fitted
model: its band holds the Monte Carlo error of averaging over n rows, not the error of the fit.  pdpboot
refits the model on every resample.  Setting: the coverage study's scenario B (Friedman #1, noise SD 1,
n = 500), learners ``rf`` and ``gbm`` of :mod:`experiments.learners`, PD of x1, x3, x4 on scikit-explain's
own grid (``n_bins`` equally spaced points from the minimum to the maximum of the feature, passed to pdpboot
as ``custom_values``), B = 100 resamples each, 95 % percentile bands, R data sets.  Per data set and
learner: the mean width of each band over the grid, and the full-data fit's PD (the same for both: one
fit, the same rows, the same grid).  Over the data sets: the ratio of the mean widths (pdpboot /
scikit-explain) and each band's half-width divided by 1.96 times the standard deviation of the PD estimate
over the R data sets (the estimate's true sampling SD, up to a relative error of about 1/sqrt(2(R-1));
the grid moves slightly with each data set's range, so the SD is taken per grid index).

    python -m experiments.skexplain_width [--R 20] [--quick]

writes ``experiments/summaries/skexplain_width/summary.{json,txt}`` (quoted by the paper through
:mod:`experiments.summary_macros`); the per-data-set results are cached under
``experiments/results/<mode>/skexplain_width/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from pdpboot import Execution, Grid, bootstrap_partial_dependence, confidence_bands

from . import _common as C
from .coverage import simulate
from .learners import make_learner, reseed

STUDY = "skexplain_width"
SEED = 31_0010
FEATURES = ("x1", "x3", "x4")
SETTINGS = {"full": {"n": 500, "B": 100, "n_bins": 15, "R": 20}, "quick": {"n": 150, "B": 10, "n_bins": 5, "R": 2}}
LEVEL = 0.95


def _skexplain_band(est, frame: pd.DataFrame, y: np.ndarray, feature: str, s: dict, seed: int):
    """(grid, scikit-explain's resampled PD curves (B x grid)) for one feature."""
    import skexplain

    toolkit = skexplain.ExplainToolkit(estimators=("model", est), X=frame, y=y)
    ds = toolkit.pd(features=[feature], n_bins=s["n_bins"], n_bootstrap=s["B"], random_seed=seed)
    curves = np.asarray(ds[f"{feature}__model__pd"].values, dtype=float)
    grid = np.asarray(ds[f"{feature}__bin_values"].values, dtype=float)
    return grid, curves


def one_data_set(learner: str, rep: int, quick: bool) -> dict:
    """Both bands' mean widths and the full-data PD for data set ``rep`` of ``learner``."""
    s = SETTINGS["quick" if quick else "full"]
    seq = C.seed_sequence(SEED, learner, rep)
    data_seed, fit_seed, boot_seed, skx_seed = (int(x) for x in seq.generate_state(4))
    X, y = simulate({"dgp": "friedman1", "noise": 1.0}, s["n"], data_seed)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    est = reseed(make_learner(learner, quick), np.random.default_rng(fit_seed)).fit(frame, y)
    out: dict = {"learner": learner, "rep": rep}
    grids = {}
    for feature in FEATURES:
        grid, curves = _skexplain_band(est, frame, y, feature, s, skx_seed % (2**31))
        lo, hi = np.quantile(curves, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
        out[f"{feature}_skexplain_width"] = float(np.mean(hi - lo))
        grids[feature] = grid
    res = bootstrap_partial_dependence(make_learner(learner, quick), frame, y, list(FEATURES),
                                       n_resamples=s["B"], grid=Grid(custom_values=grids), rng=boot_seed,
                                       execution=Execution(n_jobs=1))
    bands = confidence_bands(res, confidence_level=LEVEL)
    for feature in FEATURES:
        node = bands[feature].dataset
        band = node["pd_band"]
        width = (band.sel(ci_bound="upper") - band.sel(ci_bound="lower")).values.ravel()
        out[f"{feature}_pdpboot_width"] = float(np.mean(width))
        out[f"{feature}_estimate"] = np.asarray(node["pd"].values, dtype=float).ravel().tolist()
    return out


def compute(learners, R: int, quick: bool) -> list[dict]:
    """Every data set of every learner, cached one file per (learner, data set)."""
    ctx = C.default_context(quick)
    folder = ctx.study_dir(STUDY)
    folder.mkdir(parents=True, exist_ok=True)
    recs = []
    for rep in range(R):
        for learner in learners:
            path = folder / f"{learner}_{rep:03d}.json"
            if not path.exists():
                start = time.process_time()
                with threadpool_limits(1):
                    rec = one_data_set(learner, rep, quick)
                rec["cpu_seconds"] = time.process_time() - start
                path.write_text(json.dumps(rec))
                print(f"{learner} rep {rep}: {rec['cpu_seconds']:.1f} s CPU", flush=True)
            recs.append(json.loads(path.read_text()))
    return recs


def summarize(recs: list[dict]) -> tuple[list[dict], str]:
    """Per learner and feature: width ratio (median, range over data sets) and half-width / (1.96 SD)."""
    rows = []
    z = 1.959963984540054
    for learner in sorted({r["learner"] for r in recs}):
        mine = [r for r in recs if r["learner"] == learner]
        for feature in FEATURES:
            ratio = np.array([r[f"{feature}_pdpboot_width"] / r[f"{feature}_skexplain_width"] for r in mine])
            sd = float(np.mean(np.std(np.array([r[f"{feature}_estimate"] for r in mine]), axis=0, ddof=1)))
            rows.append({
                "learner": learner, "feature": feature, "R": len(mine),
                "ratio_median": float(np.median(ratio)), "ratio_min": float(ratio.min()),
                "ratio_max": float(ratio.max()),
                "pdpboot_halfwidth_over_sd": float(np.mean([r[f"{feature}_pdpboot_width"] for r in mine]) / 2 / z / sd),
                "skexplain_halfwidth_over_sd": float(
                    np.mean([r[f"{feature}_skexplain_width"] for r in mine]) / 2 / z / sd),
                "estimate_sd": sd,
            })
    lines = ["Friedman #1, n = 500, B = 100, 95 % percentile bands on scikit-explain's grid; width ratio = "
             "pdpboot (refits) / scikit-explain (background rows of one fit); half-width / (1.96 SD of the "
             "estimate over the R data sets): 1 for a band of the right width.",
             "learner feature   R  ratio median [min, max]   pdpboot hw/SD  scikit-explain hw/SD"]
    for row in rows:
        lines.append(f"{row['learner']:7s} {row['feature']:7s} {row['R']:3d}  {row['ratio_median']:6.2f} "
                     f"[{row['ratio_min']:.2f}, {row['ratio_max']:.2f}]   {row['pdpboot_halfwidth_over_sd']:12.2f}  "
                     f"{row['skexplain_halfwidth_over_sd']:19.2f}")
    return rows, "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--R", type=int, default=None)
    parser.add_argument("--learners", nargs="+", default=["gbm", "rf"])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    s = SETTINGS["quick" if args.quick else "full"]
    C.agg_backend()
    recs = compute(args.learners, args.R or s["R"], args.quick)
    rows, text = summarize(recs)
    print(text)
    if not args.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / STUDY, rows, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
