"""Diagnosis (stats, issue 27 item 1): why do pointwise bands of a classifier's PD under-cover at B = 100?

Reads the cached data sets of :mod:`experiments.classifier_default` (no new fits) and splits the pointwise
miss of the package's percentile band into its possible causes, per cell:

* **the quantile rule at finite B** -- the package's percentile band took NumPy's default interpolated
  quantile (``h = q (B - 1)``) until commit bba61ac, which sits inside the ``(B + 1) q``-th order statistic
  that makes the rank of an exchangeable truth uniform (Davison & Hinkley 1997, Sec. 2.4 and 5.2); since
  then the package uses the latter (``pdpboot.engine.intervals.quantile``).  ``finite_b_coverage`` gives
  the two rules' coverage when the bootstrap distribution is exact (estimate ``N(theta, 1)``, draws ``N(estimate, 1)``);
* **centring** -- the bootstrap's bias estimate ``mean(draws) - estimate`` in units of the true SD (a
  percentile band is centred on the draws, not on the estimate);
* **shape** -- the skewness of the estimate over data sets, and the coverage of ``estimate -/+ 1.96 SD``
  with the *true* SD (the best a symmetric band can do on these data sets: its shortfall from 0.95 is
  the estimate's non-normality plus the Monte Carlo luck of the R data sets);
* **bias** -- the learner's expected PD (the target: mean of T fits) against the data-generating
  process's PD, in true SDs.  It is not a source of miss for bands about the learner's PD (the estimate is
  unbiased for its own expectation by definition), but it says how far the logistic regression's PD is
  from the DGP's (misspecification, L2 penalty, finite-sample MLE bias).

    python -m experiments.pointwise_diagnosis [--summaries]

writes ``results/full/classifier_default/pointwise_diagnosis.{json,txt}`` (and with ``--summaries``
``experiments/summaries/classifier_se/pointwise_diagnosis.*``).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy.special import expit, logit

from . import _common as C
from . import classifier_default as D
from . import classifier_se as cs

Z95 = 1.959963984540054
#: (cell, stored scheme) pairs diagnosed; every learner's pointwise band is in ``classifier_default``'s table.
CELLS = (*(f"{d}:logreg" for d in D.DGPS), "rare:hgb_clf", "skewcorr:hgb_clf", "logistic:hgb_clf")


def finite_b_coverage(B: int, n_sets: int, rng: np.random.Generator) -> dict[str, float]:
    """Pointwise coverage of 95 % bands when the bootstrap distribution is exact: ``est ~ N(0, 1)``,
    ``B`` draws ``N(est, 1)``; the percentile band under both quantile rules and the normal band."""
    est = rng.normal(size=n_sets)
    draws = est[:, None] + rng.normal(size=(n_sets, B))
    lin = np.quantile(draws, [0.025, 0.975], axis=1)
    six = np.quantile(draws, [0.025, 0.975], axis=1, method="weibull")
    se = draws.std(axis=1, ddof=1)
    return {"percentile_interpolated": float(np.mean((lin[0] <= 0) & (0 <= lin[1]))),
            "percentile_order_statistic": float(np.mean((six[0] <= 0) & (0 <= six[1]))),
            "normal": float(np.mean(np.abs(est) <= Z95 * se)), "B": B, "n_sets": n_sets,
            "mcse": float(np.sqrt(0.05 * 0.95 / n_sets))}


def dgp_pd(dgp: str, grid: np.ndarray, n_mc: int = 100_000) -> np.ndarray:
    """The DGP's PD ``E_X P(y = 1 | x_j = g, X_-j)`` of each feature on its grid (F, G), by Monte Carlo."""
    X = cs.make_x(dgp, n_mc, np.random.default_rng(cs.SEED + 1))
    out = np.empty(grid.shape)
    for f, j in enumerate(cs.FEATURES):
        for g, value in enumerate(grid[f]):
            Z = X.copy()
            Z[:, j] = value
            out[f, g] = expit(cs._eta(dgp, Z)).mean()
    return out


def _cover(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Share of grid points covered, per data set: lo, hi (R, F, G)."""
    return np.mean((lo <= truth) & (truth <= hi), axis=(1, 2))


def diagnose(est: np.ndarray, draws: np.ndarray, fits: np.ndarray) -> dict:
    """Coverage of the truth (mean of ``fits``) by five pointwise bands, and the centring and shape numbers.

    ``est`` (R, F, G), ``draws`` (R, B, F, G) plain-bootstrap resamples, ``fits`` (T, F, G).
    """
    truth, sd = fits.mean(axis=0), fits.std(axis=0, ddof=1)
    eps = 1e-6
    lin = np.quantile(draws, [0.025, 0.975], axis=1)
    six = D.order_statistic_quantile(np.moveaxis(draws, 1, 0), np.array([0.025, 0.975]))
    se = draws.std(axis=1, ddof=1)
    ld = logit(np.clip(draws, eps, 1 - eps))
    lsix = expit(D.order_statistic_quantile(np.moveaxis(ld, 1, 0), np.array([0.025, 0.975])))
    bands = {"percentile": lin, "percentile_b1": six, "logit_percentile_b1": lsix,
             "normal": (est - Z95 * se, est + Z95 * se), "oracle_normal": (est - Z95 * sd, est + Z95 * sd)}
    out = {"R": int(est.shape[0]), "B": int(draws.shape[1]), "T": int(fits.shape[0])}
    for name, (lo, hi) in bands.items():
        out[name], out[f"{name}_mcse"] = C.mean_se(_cover(lo, hi, truth))
    offset = (draws.mean(axis=1) - est) / sd  # the bootstrap's bias estimate, in true SDs: (R, F, G)
    out["offset_sd_max"] = float(np.max(np.abs(offset.mean(axis=0))))
    out["est_bias_sd_max"] = float(np.max(np.abs((est.mean(axis=0) - truth) / sd)))
    z = (est - truth) / sd
    out["skew_max"] = float(np.max(np.abs(np.mean(z**3, axis=0))))
    out["se_ratio_median"] = float(np.median(np.sqrt(np.mean(se**2, axis=0)) / sd))
    return out


def simultaneous_band(est: np.ndarray, draws: np.ndarray, scheme: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The package's sup-t band (``band_arrays``) of one data set under ``classifier_default``'s scheme rows:
    ``plain`` (probability scale) or ``sub632_logit`` (rescaled 0.632 subsample on the logit scale)."""
    from pdpboot.engine.intervals import band_arrays

    if scheme == "plain":
        lo, hi, *_ = band_arrays(est, draws, level=0.95, method="percentile", simultaneous=True)
        return lo, hi
    if scheme != "sub632_logit":
        raise ValueError(scheme)
    eps = 1e-6
    le, ld = logit(np.clip(est, eps, 1 - eps)), logit(np.clip(draws, eps, 1 - eps))
    lo, hi, *_ = band_arrays(le, le + cs._sub632_scale(n) * (ld - le), level=0.95, method="percentile",
                             simultaneous=True)
    return expit(lo), expit(hi)


def whole_curve_misses(est: np.ndarray, draws: np.ndarray, fits: np.ndarray, scheme: str, n: int) -> dict:
    """Where the truth leaves the simultaneous band: per grid point, the number of data sets with the truth
    above / below it, and the skewness of the estimate there (``est`` (R, F, G), ``draws`` (R, B, F, G))."""
    truth, sd = np.nanmean(fits, axis=0), np.nanstd(fits, axis=0, ddof=1)
    above, below, whole = np.zeros(truth.shape, int), np.zeros(truth.shape, int), []
    for r in range(est.shape[0]):
        lo, hi = simultaneous_band(est[r], draws[r], scheme, n)
        above += truth > hi
        below += truth < lo
        whole.append(np.mean(np.all((lo <= truth) & (truth <= hi), axis=1)))
    skew = np.nanmean(((fits - truth) / sd) ** 3, axis=0)
    mean, mcse = C.mean_se(whole)
    return {"scheme": scheme, "R": int(est.shape[0]), "whole": mean, "whole_mcse": mcse,
            "above": above.tolist(), "below": below.tolist(), "truth": truth.tolist(), "skew": skew.tolist()}


def records(ctx: C.Context) -> list[dict]:
    recs = []
    for cell in CELLS:
        reps, est, draws = D.draws_of(ctx, cell, "plain")
        if reps.size < 2:
            continue
        fits = D.truth_of(ctx, cell)["fits"].values
        rec = {"cell": cell, **diagnose(est, draws, fits)}
        if cell.endswith(":logreg"):
            dgp = cell.split(":")[0]
            truth, sd = fits.mean(axis=0), fits.std(axis=0, ddof=1)
            rec["learner_vs_dgp_sd_max"] = float(np.max(np.abs(truth - dgp_pd(dgp, D._grid(cell))) / sd))
        recs.append(rec)
    return recs


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    fb = finite_b_coverage(100, 40_000, np.random.default_rng(27))
    recs = records(ctx)
    lines = [
        "Pointwise 95 % bands of the PD, plain bootstrap at B = 100, coverage of the learner's expected PD "
        "(MC SE over data sets in brackets).",
        f"Exact bootstrap distribution (est ~ N(0,1), draws N(est,1), {fb['n_sets']} sets, MC SE "
        f"{fb['mcse']:.3f}): percentile interpolated {fb['percentile_interpolated']:.3f}, percentile at rank "
        f"(B+1)q {fb['percentile_order_statistic']:.3f}, normal {fb['normal']:.3f}.",
        "Columns: pct = NumPy's interpolated quantile (the package's percentile rule before bba61ac), pct(B+1) = "
        "(B+1)q order statistic (the package's rule since bba61ac), "
        "logit(B+1) = that on the logit scale mapped back, normal = est -/+ 1.96 bootstrap SE, oracle = "
        "est -/+ 1.96 true SD; offset = max_g |mean(draws) - est| / SD; skew = max_g |skewness of est|; "
        "vs DGP = max_g |learner's PD - DGP's PD| / SD.",
        f"{'cell':18s} {'R':>4s}  {'pct':>13s} {'pct(B+1)':>13s} {'logit(B+1)':>13s} {'normal':>13s} "
        f"{'oracle':>13s}  SE/SD offset  skew  vs DGP",
    ]
    for r in recs:
        cols = " ".join(f"{r[k]:.3f} ({r[k + '_mcse']:.3f})" for k in
                        ("percentile", "percentile_b1", "logit_percentile_b1", "normal", "oracle_normal"))
        vs = f"{r['learner_vs_dgp_sd_max']:6.2f}" if "learner_vs_dgp_sd_max" in r else "     -"
        lines.append(f"{r['cell']:18s} {r['R']:4d}  {cols}  {r['se_ratio_median']:.2f}  {r['offset_sd_max']:.2f}"
                     f"  {r['skew_max']:.2f}  {vs}")
    misses = []
    for scheme, stored in (("plain", "plain"), ("sub632_logit", "sub632")):
        reps, est, draws = D.draws_of(ctx, "rare:hgb_clf", stored)
        if reps.size < 2:
            continue
        fits = D.truth_of(ctx, "rare:hgb_clf")["fits"].values
        m = whole_curve_misses(est, draws, fits, scheme, cs.SETTINGS[ctx.mode]["n"])
        misses.append(m)
        lines.append(f"\nrare:hgb_clf {scheme} (B = 100, R = {m['R']}): sup-t whole curve {m['whole']:.3f} "
                     f"({m['whole_mcse']:.3f}); data sets with the truth above / below the band, per grid point:")
        for f in range(len(m["above"])):
            lines.append(f"  x{f} truth " + " ".join(f"{v:5.3f}" for v in m["truth"][f]))
            lines.append(f"  x{f} skew  " + " ".join(f"{v:5.2f}" for v in m["skew"][f]))
            lines.append(f"  x{f} above " + " ".join(f"{v:5d}" for v in m["above"][f]))
            lines.append(f"  x{f} below " + " ".join(f"{v:5d}" for v in m["below"][f]))
    text = "\n".join(lines) + "\n"
    out = [{"finite_b": fb}, *recs, *({"misses": m} for m in misses)]
    C.write_summary(ctx.study_dir(D.STUDY), out, text, stem="pointwise_diagnosis")
    if summaries and not ctx.quick:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "classifier_se", out, text, stem="pointwise_diagnosis")
    print(text)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.pointwise_diagnosis", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--summaries", action="store_true")
    args = parser.parse_args(argv)
    render(C.default_context(args.quick, args.results_dir, None, 1), args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
