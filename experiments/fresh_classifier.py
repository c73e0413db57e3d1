"""Coverage of the classifier default (``resampling="auto"``) on the fresh designs of :mod:`experiments.fresh_designs`.

Per design: the truth (``TRUTH_FITS`` fits on independent data sets: the learner's expected PD and the true SD),
then repetitions: a data set, the package's default band (B = 100, 95 %, pointwise percentile and simultaneous),
cached in chunks under ``experiments/results/fresh_classifier/<design>/`` (resumable), and after every chunk the
summary ``experiments/summaries/fresh_classifier/<design>.json`` (so a stopped run keeps its numbers).

    nice -n 19 python -m experiments.fresh_classifier threshold_hgb50 --R 100 [--chunk 5] [--until HH:MM]

Summary: pointwise and whole-curve coverage with MC SE (SD over data sets / sqrt(R)), per grid point coverage,
the misses' sides (band below / above the truth), pointwise half-width / true SD and the simultaneous half-width /
true SD; and a diagnosis of the sampling distribution of the fitted PD (skewness, bimodality across the truth's
fits) against the subsample's deviations.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import logit
from scipy.stats import kurtosis, skew
from threadpoolctl import threadpool_limits

from . import _common as C
from . import fresh_designs as fd

STUDY = "fresh_classifier"
RESULTS = C.RESULTS / STUDY
SUMMARIES = C.ROOT / "experiments" / "summaries" / STUDY


def truth(design: fd.Design, folder: Path) -> np.ndarray:
    """The ``TRUTH_FITS`` fits' PDs ``(T, F, G)``, cached."""
    path = folder / "truth.npz"
    if path.exists():
        return np.load(path)["fits"]
    start = time.perf_counter()
    fits = fd.learner_truth(design)
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(path, fits=fits)
    print(f"[{time.strftime('%H:%M:%S')}] {design.name}: truth ({len(fits)} fits) took "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return fits


def repetition(design: fd.Design, rep: int) -> dict:
    data_seed, band_seed = fd.repetition_seed(design, rep).spawn(2)
    X, y = design.simulate(design.n, data_seed)
    out = fd.auto_band(design, X, y, rng=int(band_seed.generate_state(1)[0]))
    out["resamples"] = out["resamples"].astype(np.float32)
    return out


def chunk(design: fd.Design, folder: Path, first: int, last: int) -> None:
    start = time.perf_counter()
    reps = [repetition(design, r) for r in range(first, last)]
    arrays = {k: np.stack([r[k] for r in reps]) for k in ("estimate", "pointwise", "simultaneous", "resamples")}
    tmp = folder / f"chunk_{first:05d}.tmp.npz"
    np.savez(tmp, rep=np.arange(first, last), scale=reps[0]["scale"], resampling=reps[0]["resampling"], **arrays)
    tmp.rename(folder / f"chunk_{first:05d}.npz")
    print(f"[{time.strftime('%H:%M:%S')}] {design.name}: reps {first}..{last - 1} took "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)


def load(folder: Path) -> dict[str, np.ndarray]:
    files = sorted(folder.glob("chunk_*[0-9].npz"))
    data = [np.load(p) for p in files]
    out = {k: np.concatenate([d[k] for d in data]) for k in ("rep", "estimate", "pointwise", "simultaneous",
                                                             "resamples")}
    out["scale"] = str(data[0]["scale"])
    out["resampling"] = str(data[0]["resampling"])
    return out


def _shape_stats(values: np.ndarray) -> dict:
    """Skewness, excess kurtosis, Sarle's bimodality coefficient (> 0.555 suggests bimodality) and standardised
    2.5 / 50 / 97.5 % quantiles of a sample."""
    z = (values - values.mean()) / values.std(ddof=1)
    g, k = float(skew(values)), float(kurtosis(values))
    n = len(values)
    bc = (g**2 + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return {"skewness": g, "excess_kurtosis": k, "bimodality_coefficient": float(bc),
            "q025_q50_q975_standardised": [float(q) for q in np.quantile(z, [0.025, 0.5, 0.975])]}


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> float | None:
    return float(values[mask].mean()) if mask.any() else None


def summarize(design: fd.Design, folder: Path) -> dict:
    fits = truth(design, folder)
    target, true_sd = fits.mean(axis=0), fits.std(axis=0, ddof=1)
    d = load(folder)
    R = len(d["rep"])
    lo, hi = d["pointwise"][:, 0], d["pointwise"][:, 1]  # (R, F, G)
    slo, shi = d["simultaneous"][:, 0], d["simultaneous"][:, 1]
    inside = (lo <= target) & (target <= hi)
    whole = np.all((slo <= target) & (target <= shi), axis=2)  # (R, F)
    half = (hi - lo) / 2 / true_sd
    shalf = (shi - slo) / 2 / true_sd
    rec = {"design": design.name, "dgp": design.dgp, "learner": design.learner, "rounds": design.rounds,
           "n": design.n, "B": int(d["resamples"].shape[1]), "R": R, "T": int(fits.shape[0]),
           "resampling": d["resampling"], "band_scale": d["scale"], "target": "learner's expected PD",
           "code": C.code_version(), "features": {}}
    m = round(0.632 * design.n)
    scale = np.sqrt(m / (design.n - m))
    eps = 1e-6
    for f, feat in enumerate(design.features):
        point, point_se = C.mean_se(inside[:, f].mean(axis=1))
        w, w_se = C.mean_se(whole[:, f].astype(float))
        err = d["estimate"][:, f] - target[f]  # (R, G)
        dev = scale * (d["resamples"][:, :, f] - d["estimate"][:, None, f])  # (R, B, G), probability scale
        le = logit(np.clip(d["estimate"][:, f], eps, 1 - eps))
        ld = logit(np.clip(d["resamples"][:, :, f].astype(float), eps, 1 - eps))
        lt = logit(np.clip(target[f], eps, 1 - eps))
        per_point = []
        for g, a in enumerate(design.grid):
            sub_sd = np.sqrt(np.mean(np.var(dev[:, :, g], axis=1, ddof=1)))  # rescaled subsample SD, RMS over reps
            offset = ld[:, :, g].mean(axis=1) - le[:, g]  # subsample fits' mean minus the estimate (logit)
            per_point.append({
                "x": float(a), "truth": float(target[f, g]), "true_sd": float(true_sd[f, g]),
                "coverage": float(inside[:, f, g].mean()),
                "coverage_mcse": float(np.sqrt(inside[:, f, g].mean() * (1 - inside[:, f, g].mean()) / R)),
                "miss_band_below": float((hi[:, f, g] < target[f, g]).mean()),
                "miss_band_above": float((lo[:, f, g] > target[f, g]).mean()),
                "halfwidth_over_sd": float(half[:, f, g].mean()),
                "estimate_bias_over_sd": float(err[:, g].mean() / true_sd[f, g]),
                "estimate_sd_over_true_sd": float(err[:, g].std(ddof=1) / true_sd[f, g]),
                "subsample_sd_over_true_sd": float(sub_sd / true_sd[f, g]),
                "subsample_offset_logit_mean": float(offset.mean()),
                "estimate_error_logit_sd": float((le[:, g] - lt[g]).std(ddof=1)),
                "fits_shape": _shape_stats(fits[:, f, g]),
                "estimates_shape": _shape_stats(d["estimate"][:, f, g]),
                "subsample_shape": {"skewness_mean": float(np.mean(skew(dev[:, :, g], axis=1))),
                                    "excess_kurtosis_mean": float(np.mean(kurtosis(dev[:, :, g], axis=1)))},
            })
        rec["features"][f"x{feat}"] = {
            "pointwise": point, "pointwise_mcse": point_se, "whole": w, "whole_mcse": w_se,
            "misses_band_below_share": float((hi[:, f] < target[f]).sum() / max(int((~inside[:, f]).sum()), 1)),
            # where the band misses against where it covers (all grid points): its half-width / true SD and the
            # estimate / truth -- a band that scales with a low estimate is narrow exactly where it misses
            "misses_halfwidth_over_sd_mean": _masked_mean(half[:, f], ~inside[:, f]),
            "covered_halfwidth_over_sd_mean": _masked_mean(half[:, f], inside[:, f]),
            "misses_estimate_over_truth_mean": _masked_mean(d["estimate"][:, f] / target[f], ~inside[:, f]),
            "covered_estimate_over_truth_mean": _masked_mean(d["estimate"][:, f] / target[f], inside[:, f]),
            "pointwise_halfwidth_over_sd_mean": float(half[:, f].mean()),
            "simultaneous_halfwidth_over_sd_mean": float(shalf[:, f].mean()),
            "grid": per_point}
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    (SUMMARIES / f"{design.name}.json").write_text(json.dumps(rec, indent=1))
    return rec


def compute(design: fd.Design, R: int, size: int, until: float | None) -> None:
    folder = RESULTS / design.name
    truth(design, folder)
    done = {int(p.stem.split("_")[1]) for p in folder.glob("chunk_*[0-9].npz")}
    for first in range(0, R, size):
        if first in done:
            continue
        if until is not None and time.time() > until:
            print(f"stopped at --until before rep {first}", file=sys.stderr, flush=True)
            break
        chunk(design, folder, first, min(first + size, R))
        rec = summarize(design, folder)
        for name, feat in rec["features"].items():
            print(f"  R = {rec['R']} {name}: pointwise {feat['pointwise']:.3f} ({feat['pointwise_mcse']:.3f}), "
                  f"whole {feat['whole']:.3f} ({feat['whole_mcse']:.3f}), half-width / SD "
                  f"{feat['pointwise_halfwidth_over_sd_mean']:.2f}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.fresh_classifier", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("design", choices=sorted(fd.CLASSIFIER))
    parser.add_argument("--R", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=5)
    parser.add_argument("--until", help="HH:MM (local): start no chunk after this time")
    parser.add_argument("--summary", action="store_true", help="only rewrite the summary from the caches")
    args = parser.parse_args(argv)
    design = fd.CLASSIFIER[args.design]
    until = None
    if args.until:
        h, mnt = map(int, args.until.split(":"))
        now = time.localtime()
        until = time.mktime((*now[:3], h, mnt, 0, *now[6:]))
    with threadpool_limits(1):
        if args.summary:
            summarize(design, RESULTS / design.name)
        else:
            compute(design, args.R, args.chunk, until)
    return 0


if __name__ == "__main__":
    sys.exit(main())
