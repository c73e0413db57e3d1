"""Study (stats, issue 27 item 1): should the 0.632-subsample (+ logit-scale bands) be the classifiers' default?

The candidate remedy of :mod:`experiments.classifier_se` -- ``m = floor(0.632 n)`` rows without replacement,
deviations rescaled by ``sqrt(m / (n - m))``, for a classifier the bands built on the logit scale and mapped
back (``pdpboot.probability_bands``) -- at **B = 100** on four DGPs x four learners, against the target of
the issue: whole-curve (sup-t) coverage >= 0.93 and pointwise (percentile) coverage 0.95 +/- 0.02 in every
cell; for the regressor the remedy is the subsample without the logit scale, and it must not over-cover
(whole curve <= 0.97).  The plain bootstrap (B = 100) is the reference where it is cheap (logistic
regression); for the boosting classifier the reference is the B = 50 run of ``classifier_se``.

Cells: DGPs ``skewcorr`` (correlated, log-normal x1, a bump and an interaction), ``logistic`` (two normal
features, an interaction), ``step`` (a jump in x0, skewed x1), ``rare`` (base rate about 0.15); learners
``hgb_clf`` (HistGradientBoosting, 60 rounds), ``rf_clf`` (60 trees, min leaf 5), ``logreg``, ``hgb_reg``
(HistGradientBoostingRegressor on the regression version of the DGP: mean ``eta(x)`` with heavy-tailed
heteroscedastic noise; for ``rare`` a rare, heavy-tailed outcome ``Bernoulli(expit(eta)) * LogNormal(0, 1)``;
for ``skewcorr`` the ``regression`` DGP of ``classifier_se``).  n = 400, G = 12 grid points, two features.

Data set ``r`` of a cell is the data set ``r`` of the same combination in ``classifier_se`` (same seeds);
where that study cached B = 50 draws of a scheme, this one adds 50 more from a fresh stream (iid given
the data), so every data set ends with B = 100.  Truth: the mean (the learner's expected PD, the target)
and SD of ``T = 200`` fits on independent data sets (``classifier_se``'s truth file where it exists).

    python -m experiments.classifier_default compute [--quick] [--plan NAME]
    python -m experiments.classifier_default render [--summaries]

Chunks of 3 data sets are cached under ``results/<mode>/classifier_default``; a rerun resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

import numpy as np
import xarray as xr
from scipy.special import expit, logit

from . import _common as C
from . import classifier_se as cs

STUDY = "classifier_default"
DGPS = ("skewcorr", "logistic", "step", "rare")
LEARNERS = ("hgb_clf", "rf_clf", "logreg", "hgb_reg")
B_TARGET = {"full": 100, "quick": 12}  #: quick: classifier_se's 8 draws + 4
CHUNK = 3
#: stream children of a data set's SeedSequence used for the draws added here (classifier_se uses 0..9)
_STREAM = {"sub632": 10, "plain": 11}

#: (cell, R, schemes) in the order they are computed: the cheap cells and the ones that decide first.
PLANS = {
    "full": [
        ("rare:hgb_clf", 24, ("sub632",)),
        *[(f"{d}:logreg", 60, ("plain", "sub632")) for d in DGPS],
        *[(f"{d}:hgb_reg", 24, ("sub632",)) for d in DGPS],
        ("logistic:hgb_clf", 24, ("sub632",)),
        ("step:hgb_clf", 24, ("sub632",)),
        *[(f"{d}:rf_clf", 9, ("sub632",)) for d in DGPS],
        ("skewcorr:hgb_clf", 120, ("sub632",)),
        *[(f"{d}:logreg", 150, ("plain", "sub632")) for d in DGPS],
        *[(f"{d}:hgb_clf", 48, ("sub632",)) for d in ("rare", "logistic", "step")],
        *[(f"{d}:hgb_reg", 48, ("sub632",)) for d in DGPS],
        *[(f"{d}:rf_clf", 24, ("sub632",)) for d in DGPS],
        # session of 14:20 (issue 27's last order): the rare outcome at R = 60 with the plain bootstrap too,
        # logistic regression at R = 201, the forest at R = 30 / 21
        ("rare:hgb_clf", 60, ("sub632",)),
        *[(f"{d}:logreg", 201, ("plain", "sub632")) for d in ("logistic", "rare", "skewcorr", "step")],
        ("rare:hgb_clf", 60, ("plain",)),
        ("skewcorr:rf_clf", 30, ("sub632",)),
        *[(f"{d}:rf_clf", 21, ("sub632",)) for d in ("logistic", "step", "rare")],
    ],
    "quick": [(f"{d}:{m}", 2, ("plain", "sub632")) for d in ("skewcorr", "rare") for m in ("hgb_clf", "hgb_reg")],
}

# --------------------------------------------------------------------------- DGPs


def source_combo(cell: str) -> str:
    """The ``classifier_se`` combination whose seeds (and cached draws) data set ``r`` of ``cell`` shares."""
    return "regression:hgb_reg" if cell == "skewcorr:hgb_reg" else cell


def make_data(cell: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One data set of the cell: the binary DGP, or its regression version for ``hgb_reg``."""
    dgp, learner = cell.split(":")
    if learner != "hgb_reg":
        return cs.make_data(dgp, n, rng)
    if dgp == "skewcorr":
        return cs.make_data("regression", n, rng)
    X = cs.make_x(dgp, n, rng)
    eta = cs._eta(dgp, X)
    if dgp == "rare":  # rare, heavy-tailed outcome: mostly 0, sometimes log-normal
        hit = rng.uniform(size=n) < expit(eta)
        return X, hit * np.exp(rng.normal(size=n))
    return X, eta + (0.5 + 0.4 * np.abs(X[:, 0])) * rng.standard_t(4, size=n) / np.sqrt(2)


def _grid(cell: str) -> np.ndarray:
    return cs.grid_of(cell.split(":")[0])


# --------------------------------------------------------------------------- compute


def _seeds(cell: str, count: int) -> tuple[np.random.SeedSequence, list[np.random.SeedSequence]]:
    truth_seed, rep_seed = C.seed_sequence(cs.SEED, source_combo(cell)).spawn(2)
    return truth_seed, cs._rep_seeds(rep_seed, count)


def _cached_se(ctx: C.Context, cell: str) -> dict[int, xr.Dataset]:
    """``classifier_se``'s cached data sets of the cell, by rep (empty when there are none)."""
    folder = ctx.study_dir(cs.STUDY)
    dgp, learner = source_combo(cell).split(":")
    out = {}
    for path in sorted(folder.glob(f"{dgp}_{learner}_0*.nc")):
        ds = C.load_dataset(path)
        for i, r in enumerate(ds["rep"].values):
            out[int(r)] = ds.isel(rep=i)
    return out


def _truth(cell: str, n: int, T: int, quick: bool, seed) -> xr.Dataset:
    grid = _grid(cell)
    learner = cs.make_learner(cell.split(":")[1], quick)
    fits = [cs._fit_pd(learner, *make_data(cell, n, np.random.default_rng(s)), grid) for s in seed.spawn(T)]
    return xr.Dataset({"fits": (("fit", "feature", "x"), np.array(fits)), "grid": (("feature", "x"), grid)})


def truth_of(ctx: C.Context, cell: str) -> xr.Dataset:
    """``classifier_se``'s truth file of the cell where it exists, else this study's (computed if missing)."""
    dgp, learner = source_combo(cell).split(":")
    old = ctx.study_dir(cs.STUDY) / f"{dgp}_{learner}_truth.nc"
    if old.exists():
        return C.load_dataset(old)
    cfg = cs.SETTINGS[ctx.mode]
    truth_seed, _ = _seeds(cell, 0)
    path = ctx.study_dir(STUDY) / f"{cell.replace(':', '_')}_truth.nc"
    return C.cached(path, ctx, partial(_truth, cell, cfg["n"], cfg["T"], ctx.quick, truth_seed))


def _rep(cell: str, seed: np.random.SeedSequence, schemes, old: xr.Dataset | None, B: int, quick: bool) -> dict:
    cfg = cs.SETTINGS["quick" if quick else "full"]
    children = seed.spawn(max(_STREAM.values()) + 1)  # children 0..9 are classifier_se's, in its order
    X, y = make_data(cell, cfg["n"], np.random.default_rng(children[0]))
    learner = cs.make_learner(cell.split(":")[1], quick)
    grid = _grid(cell)
    out = {"estimate": cs.pd_of_fit(learner.fit(X, y), X, grid)}
    if old is not None and not np.allclose(old["estimate"].values, out["estimate"]):
        raise RuntimeError(f"{cell}: data set differs from classifier_se's cached one")
    for scheme in schemes:
        have = 0 if old is None or scheme not in old else old.sizes["resample"]
        start = time.perf_counter()
        out[scheme] = cs._scheme_draws(scheme, learner, X, y, grid, B - have,
                                       np.random.default_rng(children[_STREAM[scheme]]), {})
        out[f"{scheme}_seconds"] = (time.perf_counter() - start) * B / max(B - have, 1)
    return out


def _chunk(ctx: C.Context, cell: str, schemes, first: int, last: int) -> xr.Dataset:
    _, seeds = _seeds(cell, last)
    old = _cached_se(ctx, cell)
    B = B_TARGET[ctx.mode]
    start = time.perf_counter()
    reps = [_rep(cell, seeds[r], schemes, old.get(r), B, ctx.quick) for r in range(first, last)]
    print(f"[{time.strftime('%H:%M:%S')}] {cell} reps {first}..{last} {schemes} took "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    data = {"estimate": (("rep", "feature", "x"), np.array([r["estimate"] for r in reps]))}
    for s in schemes:
        data[s] = (("rep", f"new_{s}", "feature", "x"), np.array([r[s] for r in reps]))
        data[f"{s}_seconds"] = ("rep", np.array([r[f"{s}_seconds"] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, last)})


def compute(ctx: C.Context, plan=None) -> None:
    """Every step of the plan in order (truth, then chunks of ``CHUNK`` data sets); cached, resumable.

    A step is ``(cell, R, schemes)`` or ``(cell, R, schemes, first)``: data sets ``first..R-1`` (``first`` a
    multiple of ``CHUNK``), e.g. to add a scheme to data sets whose other scheme is already cached.
    """
    folder = ctx.study_dir(STUDY)
    for cell, R, schemes, *start in plan or PLANS[ctx.mode]:
        truth_of(ctx, cell)
        for first in range(start[0] if start else 0, R, CHUNK):
            last = min(first + CHUNK, R)
            tag = "_".join(schemes)
            C.cached(folder / f"{cell.replace(':', '_')}_{tag}_{first:05d}.nc", ctx,
                     partial(_chunk, ctx, cell, tuple(schemes), first, last))


# --------------------------------------------------------------------------- summaries

TARGET = "whole >= 0.93, pointwise 0.95 +/- 0.02 (regressor: also whole <= 0.97)"


def draws_of(ctx: C.Context, cell: str, scheme: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reps, estimates (R, F, G), draws (R, B, F, G)) of the data sets with B_TARGET draws of ``scheme``."""
    folder = ctx.study_dir(STUDY)
    old = _cached_se(ctx, cell)
    B = B_TARGET[ctx.mode]
    got = {}
    for path in sorted(folder.glob(f"{cell.replace(':', '_')}_*_0*.nc")):
        ds = C.load_dataset(path)
        if scheme not in ds:
            continue
        for i, r in enumerate(ds["rep"].values):
            new = ds[scheme].values[i]
            prev = old.get(int(r))
            d = new if prev is None or scheme not in prev else np.concatenate([prev[scheme].values, new])
            if d.shape[0] == B:
                got[int(r)] = (ds["estimate"].values[i], d)
    reps = np.array(sorted(got))
    if reps.size == 0:
        return reps, np.empty(0), np.empty(0)
    return reps, np.array([got[r][0] for r in reps]), np.array([got[r][1] for r in reps])


def _verdict(rec: dict, classifier: bool) -> str:
    p, w = rec["pointwise"], rec["whole"]
    ok = w >= 0.93 and abs(p - 0.95) <= 0.02 and (classifier or w <= 0.97)
    if ok:
        return "meets"
    # how far outside, in Monte Carlo SEs
    def over(miss: float, mcse: float, bound: float | None) -> float:
        # in MC SEs; a whole-curve share's SE no smaller than a binomial one at the bound (24/24 is no proof)
        floor = 0.0 if bound is None else np.sqrt(bound * (1 - bound) / rec["R"])
        return miss / max(mcse, floor) if max(mcse, floor) > 0 else np.inf

    gaps = [over(0.93 - w, rec["whole_mcse"], 0.93) if w < 0.93 else 0.0,
            over(abs(p - 0.95) - 0.02, rec["pointwise_mcse"], None) if abs(p - 0.95) > 0.02 else 0.0,
            over(w - 0.97, rec["whole_mcse"], 0.97) if not classifier and w > 0.97 else 0.0]
    return "FAILS (> 2 MC SE)" if max(gaps) > 2 else "misses (within 2 MC SE)"


def order_statistic_quantile(draws: np.ndarray, q, method: str = "weibull") -> np.ndarray:
    """The ``q`` quantile(s) of ``draws`` (axis 0) at rank ``(B + 1) q`` (1-based), interpolated between order
    statistics and clipped to the extreme draws (Hyndman & Fan type 6; Davison & Hinkley 1997, Sec. 5.2): the
    package's rule (``pdpboot.engine.intervals.quantile``) since commit bba61ac.  ``method="linear"``: NumPy's
    default (rank ``(B - 1) q + 1``), the package's percentile rule before it."""
    return np.quantile(draws, q, axis=0, method=method)


def pointwise_b1(est: np.ndarray, draws: np.ndarray, truth: np.ndarray, shown: str, n: int,
                 method: str = "weibull") -> float:
    """Pointwise coverage of the scheme's percentile band with the quantile ``method`` of
    :func:`order_statistic_quantile` (the same pseudo-resamples as ``classifier_se._package_bands``)."""
    scale = cs._sub632_scale(n) if shown.startswith("sub632") else 1.0
    if shown in ("logit", "sub632_logit"):
        eps = 1e-6
        le, ld = logit(np.clip(est, eps, 1 - eps)), logit(np.clip(draws, eps, 1 - eps))
        lo, hi = expit(order_statistic_quantile(le + scale * (ld - le), [0.025, 0.975], method))
    else:
        lo, hi = order_statistic_quantile(est + scale * (draws - est), [0.025, 0.975], method)
    return float(np.mean((lo <= truth) & (truth <= hi)))


def records(ctx: C.Context) -> list[dict]:
    n = cs.SETTINGS[ctx.mode]["n"]
    out = []
    for dgp in DGPS:
        for learner in LEARNERS:
            cell = f"{dgp}:{learner}"
            classifier = learner != "hgb_reg"
            truth_path_old = ctx.study_dir(cs.STUDY) / f"{'_'.join(source_combo(cell).split(':'))}_truth.nc"
            truth_path = ctx.study_dir(STUDY) / f"{cell.replace(':', '_')}_truth.nc"
            if not truth_path_old.exists() and not truth_path.exists():
                continue
            fits = truth_of(ctx, cell)["fits"].values
            truth, true_sd = np.nanmean(fits, axis=0), np.nanstd(fits, axis=0, ddof=1)
            for stored, shown in (("plain", "plain"), ("plain", "logit"), ("sub632", "sub632"),
                                  ("sub632", "sub632_logit")):
                if shown.endswith("logit") and not classifier:
                    continue
                reps, est, draws = draws_of(ctx, cell, stored)
                if reps.size < 2:
                    continue
                res = np.array([cs._package_bands(est[r], None, draws[r], truth, shown, n, true_sd)
                                for r in range(len(reps))])
                rec = {"cell": cell, "scheme": shown, "R": int(len(reps)), "B": int(draws.shape[1]),
                       "T": int(fits.shape[0])}
                rec["pointwise"], rec["pointwise_mcse"] = C.mean_se(res[:, 0])
                rec["pointwise_b1"], rec["pointwise_b1_mcse"] = C.mean_se(
                    [pointwise_b1(est[r], draws[r], truth, shown, n) for r in range(len(reps))])
                rec["pointwise_numpy"], rec["pointwise_numpy_mcse"] = C.mean_se(
                    [pointwise_b1(est[r], draws[r], truth, shown, n, "linear") for r in range(len(reps))])
                rec["whole"], rec["whole_mcse"] = C.mean_se(res[:, 1])
                rec["supt_halfwidth_sd"] = float(np.mean(res[:, 2]))
                se = np.nanstd(draws, axis=1, ddof=1) * (cs._sub632_scale(n) if stored == "sub632" else 1.0)
                rec["se_ratio_median"] = float(np.nanmedian(np.sqrt(np.nanmean(se**2, axis=0)) / true_sd))
                rec["remedy"] = shown == ("sub632_logit" if classifier else "sub632")
                rec["verdict"] = _verdict(rec, classifier)
                out.append(rec)
    return out


#: The audit's bar for the classifier default (issue 27 acceptance) and the issue's own target.
AUDIT = {"pointwise": 0.92, "whole": 0.90}
ISSUE = {"pointwise": (0.93, 0.97), "whole": 0.93}
#: How ``resampling`` names each stored scheme of a classifier cell: "auto" is the 0.632 subsample with the
#: bands on the logit scale (what ``pdpboot.confidence_bands`` forms for ``resampling="auto"``).
METHOD_OF = {"plain": "plain", "logit": "plain+logit", "sub632": "sub632", "sub632_logit": "auto"}


def _judge(rec: dict, pointwise: tuple[float, float], whole: float) -> str:
    """'meets', 'misses (within 2 MC SE)' or 'FAILS (> 2 MC SE)' against pointwise in [lo, hi], whole >= bound."""
    lo, hi = pointwise
    p, w = rec["pointwise"], rec["whole"]
    gaps = []
    if w < whole:
        floor = np.sqrt(whole * (1 - whole) / rec["R"])  # a whole-curve share's SE no smaller than binomial
        gaps.append((whole - w) / max(rec["whole_mcse"], floor))
    if p < lo or p > hi:
        gaps.append((lo - p if p < lo else p - hi) / max(rec["pointwise_mcse"], 1e-12))
    if not gaps:
        return "meets"
    return "FAILS (> 2 MC SE)" if max(gaps) > 2 else "misses (within 2 MC SE)"


def auto_table(recs: list[dict]) -> tuple[list[dict], str]:
    """The classifier cells, ``resampling="auto"`` against the plain bootstrap where it ran at B = 100, with
    verdicts against the audit's bar (pointwise >= 0.92, whole >= 0.90) and the issue's target (pointwise
    0.95 +/- 0.02, whole >= 0.93)."""
    rows = []
    for rec in recs:
        if rec["cell"].endswith(":hgb_reg") or rec["scheme"] not in ("plain", "sub632_logit"):
            continue
        rows.append({"cell": rec["cell"], "method": METHOD_OF[rec["scheme"]], "R": rec["R"], "B": rec["B"],
                     "pointwise": rec["pointwise"], "pointwise_mcse": rec["pointwise_mcse"], "whole": rec["whole"],
                     "whole_mcse": rec["whole_mcse"],
                     "audit": _judge(rec, (AUDIT["pointwise"], 1.0), AUDIT["whole"]),
                     "issue": _judge(rec, ISSUE["pointwise"], ISSUE["whole"])})
    rows.sort(key=lambda r: (r["cell"].split(":")[1], r["cell"], r["method"] != "plain"))
    lines = ["resampling='auto' (0.632 subsample, bands on the logit scale) against the plain bootstrap, classifier "
             "cells at B = 100 (rows of default_B100.txt; the plain bootstrap ran at B = 100 only for logistic "
             "regression and the rare outcome's boosting classifier).",
             "audit: pointwise >= 0.92 and whole >= 0.90; issue: pointwise 0.95 +/- 0.02 and whole >= 0.93; "
             "'misses' = within 2 MC SE, 'FAILS' = more than 2 MC SE (whole curve: SE at least binomial at the bound).",
             f"{'cell':18s} {'method':9s} {'R':>4s} {'B':>4s}  {'pointwise':>13s}  {'whole':>13s}  "
             f"{'audit':24s} issue"]
    for r in rows:
        lines.append(f"{r['cell']:18s} {r['method']:9s} {r['R']:4d} {r['B']:4d}  {r['pointwise']:.3f} "
                     f"({r['pointwise_mcse']:.3f})  {r['whole']:.3f} ({r['whole_mcse']:.3f})  {r['audit']:24s} "
                     f"{r['issue']}")
    return rows, "\n".join(lines) + "\n"


#: Band variants of :func:`centring_table` (logit scale; ``le`` the estimate, ``ld`` the subsample fits, ``m`` their
#: mean, ``s = sqrt(m / (n - m))``): what ``resampling="auto"`` forms, and two that keep the band around the estimate.
CENTRING = {
    "auto": lambda le, ld, m, s: le + s * (ld - le),
    "centred on the estimate": lambda le, ld, m, s: le + s * (ld - m),
    "offset not rescaled": lambda le, ld, m, s: m + s * (ld - m),
}


def centring_table(ctx: C.Context) -> tuple[list[dict], str]:
    """Why the default band may lie wholly on one side of its estimate, and what centring it would cost.

    ``resampling="auto"``'s band is ``le + s (ld - le)`` on the logit scale: the subsample fits' mean offset from the
    full-data estimate is kept (and rescaled with the spread).  Where that offset is large the pointwise band can
    exclude the estimate (seen on statsmodels' ``modechoice`` with a forest classifier).  Per classifier cell, on the
    same cached draws: coverage of the default and of two bands that keep the estimate inside; the correlation, over
    data sets, of the offset (mean of the fits minus the estimate, logit scale) with the estimate's error (estimate
    minus the truth's logit), median over grid points; the share of grid points whose default band excludes the
    estimate, and the default's coverage at those points.
    """
    from pdpboot.engine.intervals import band_arrays

    n = cs.SETTINGS[ctx.mode]["n"]
    s, eps = cs._sub632_scale(n), 1e-6
    rows = []
    for dgp in DGPS:
        for learner in ("hgb_clf", "rf_clf", "logreg"):
            cell = f"{dgp}:{learner}"
            reps, est, draws = draws_of(ctx, cell, "sub632")
            if reps.size < 2:
                continue
            truth = np.nanmean(truth_of(ctx, cell)["fits"].values, axis=0)
            lt = logit(np.clip(truth, eps, 1 - eps))
            cover = {name: [] for name in CENTRING}
            offsets, errors, excluded, covered_there = [], [], [], []
            for r in range(len(reps)):
                le, ld = logit(np.clip(est[r], eps, 1 - eps)), logit(np.clip(draws[r], eps, 1 - eps))
                mean = ld.mean(axis=0)
                for name, band in CENTRING.items():
                    pseudo = band(le, ld, mean, s)
                    lo, hi, *_ = band_arrays(le, pseudo, level=0.95, method="percentile", simultaneous=False)
                    slo, shi, *_ = band_arrays(le, pseudo, level=0.95, method="percentile", simultaneous=True)
                    inside = (lo <= lt) & (lt <= hi)
                    cover[name].append((inside.mean(), np.all((slo <= lt) & (lt <= shi), axis=1).mean()))
                    if name == "auto":
                        out = (le < lo) | (le > hi)
                        excluded.append(out.mean())
                        covered_there.extend(inside[out].tolist())
                offsets.append(mean - le)
                errors.append(le - lt)
            offsets, errors = np.array(offsets).reshape(len(reps), -1), np.array(errors).reshape(len(reps), -1)
            corr = [np.corrcoef(offsets[:, g], errors[:, g])[0, 1] for g in range(offsets.shape[1])
                    if offsets[:, g].std() > 0 and errors[:, g].std() > 0]
            row = {"cell": cell, "R": int(len(reps)), "B": int(draws.shape[1]),
                   "offset_error_correlation": float(np.median(corr)) if corr else float("nan"),
                   "excluded_share": float(np.mean(excluded)),
                   "coverage_where_excluded": float(np.mean(covered_there)) if covered_there else float("nan"),
                   "points_excluded": len(covered_there)}
            for name, values in cover.items():
                values = np.array(values)
                (point, point_se), (whole, whole_se) = C.mean_se(values[:, 0]), C.mean_se(values[:, 1])
                row[name] = {"pointwise": point, "pointwise_mcse": point_se, "whole": whole, "whole_mcse": whole_se}
            rows.append(row)
    names = list(CENTRING)
    lines = ["Where resampling='auto' puts a classifier's band: the 0.632 subsample's fits keep their mean offset "
             "from the full-data estimate (logit scale, rescaled with the spread), so a pointwise band can lie wholly "
             "on one side of the estimate. Same cached draws (B = 100) as auto_default.txt; pointwise / whole-curve "
             "coverage (MC SE) of the default and of two bands that keep the estimate inside: 'centred on the "
             "estimate' (le + s (ld - mean)) and 'offset not rescaled' (mean + s (ld - mean)). corr: median over "
             "grid points of the correlation, over data sets, of the offset (mean of the fits - estimate) with the "
             "estimate's error (estimate - truth); excluded: share of grid points whose default band excludes the "
             "estimate, and the default's coverage there.",
             f"{'cell':18s} {'R':>4s}  " + "  ".join(f"{n:>26s}" for n in names)
             + f"  {'corr':>6s}  excluded (covered there)"]
    for row in rows:
        cells = "  ".join(f"{row[n]['pointwise']:.3f} / {row[n]['whole']:.3f} ({row[n]['whole_mcse']:.3f})".rjust(26)
                          for n in names)
        there = "" if np.isnan(row["coverage_where_excluded"]) else (
            f" ({row['coverage_where_excluded']:.3f} of {row['points_excluded']})")
        lines.append(f"{row['cell']:18s} {row['R']:4d}  {cells}  {row['offset_error_correlation']:6.2f}  "
                     f"{row['excluded_share']:.3f}{there}")
    return rows, "\n".join(lines) + "\n"


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    head = (f"Target: {TARGET}.  Remedy rows marked '*'.  MC SE in brackets (SD over data sets / sqrt(R)); a verdict "
            "'FAILS' misses the target by more than 2 MC SE (whole curve: SE at least binomial at the bound).\n"
            "pointwise: the package's percentile band (quantile at rank (B + 1) q, Davison & Hinkley 1997, Sec. 5.2; "
            "since bba61ac); pointwise (old): the same band with NumPy's interpolated quantile (rank (B - 1) q + 1), "
            "the package's rule before; the verdict reads the package's band.\n"
            f"{'cell':18s} {'scheme':13s} {'R':>4s} {'B':>4s} {'T':>4s}  {'pointwise':>15s} {'pointwise (old)':>15s} "
            f"{'whole (sup-t)':>15s}  SE/SD  halfwidth/SD  verdict")
    lines = [head]
    for r in recs:
        mark = "*" if r["remedy"] else " "
        lines.append(f"{r['cell']:18s} {r['scheme']:12s}{mark} {r['R']:4d} {r['B']:4d} {r['T']:4d}  "
                     f"{r['pointwise']:.3f} ({r['pointwise_mcse']:.3f})   {r['pointwise_numpy']:.3f} "
                     f"({r['pointwise_numpy_mcse']:.3f})   {r['whole']:.3f} ({r['whole_mcse']:.3f})"
                     f"   {r['se_ratio_median']:.2f}   {r['supt_halfwidth_sd']:.2f}        {r['verdict']}")
    text = "\n".join(lines) + "\n"
    C.write_summary(ctx.study_dir(STUDY), recs, text)
    rows, auto_text = auto_table(recs)
    if not ctx.quick and summaries:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "classifier_se", recs, text, stem="default_B100")
        C.write_summary(C.ROOT / "experiments" / "summaries" / "classifier_se", rows, auto_text, stem="auto_default")
    centring_rows, centring_text = centring_table(ctx)
    if not ctx.quick and summaries:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "classifier_se", centring_rows, centring_text,
                        stem="auto_centring")
    print(text)
    print(auto_text)
    print(centring_text)
    return recs


def parse_cell(item: str) -> tuple:
    """``"DGP:LEARNER=[FIRST-]R[@SCHEME,...]"`` -> (cell, R, schemes[, first]); schemes default to the cell's
    plan schemes, ``first`` (a multiple of ``CHUNK``) to 0."""
    spec, _, schemes = item.partition("@")
    cell, _, counts = spec.partition("=")
    dgp, _, learner = cell.partition(":")
    first, _, R = counts.rpartition("-")
    if (dgp not in DGPS or learner not in LEARNERS or not R.isdigit() or (first and not first.isdigit())
            or (first and int(first) % CHUNK)):
        raise SystemExit(f"--cells {item!r}: expected DGP:LEARNER=[FIRST-]R[@SCHEME,...] with DGP in {DGPS}, "
                         f"LEARNER in {LEARNERS}, R a count, FIRST a multiple of {CHUNK}")
    chosen = tuple(schemes.split(",")) if schemes else (("plain", "sub632") if learner == "logreg" else ("sub632",))
    if not set(chosen) <= set(_STREAM):
        raise SystemExit(f"--cells {item!r}: schemes must be among {tuple(_STREAM)}")
    return (cell, int(R), chosen, int(first)) if first else (cell, int(R), chosen)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.classifier_default", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--summaries", action="store_true",
                        help="also write experiments/summaries/classifier_se/default_B100.* (full mode)")
    parser.add_argument("--steps", help="a slice 'i:j' of the mode's plan (default: all of it)")
    parser.add_argument("--cells", nargs="*", metavar="DGP:LEARNER=[FIRST-]R[@SCHEME,...]",
                        help="instead of the plan: these cells up to R data sets with the given schemes (default: "
                             "logreg plain and sub632, others sub632), e.g. rare:hgb_clf=24-60@plain,sub632")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            plan = PLANS[ctx.mode]
            if args.steps:
                i, j = (int(v) if v else None for v in args.steps.split(":"))
                plan = plan[i:j]
            if args.cells:
                plan = [parse_cell(item) for item in args.cells]
            compute(ctx, plan)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
