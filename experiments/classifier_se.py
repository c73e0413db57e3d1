"""Study (stats, issue 27): why the bootstrap SE of a boosting classifier's PD is too small, and remedies.

Design.  For each (DGP, learner) combination, ``R`` data sets of ``n`` rows; on each, the PD estimate
(the full-data fit's PD averaged over its own rows, as ``pdpboot.bootstrap_partial_dependence`` with
``background="resample"``) of every feature in ``FEATURES`` on a fixed grid of ``G`` population
quantiles, and the resample PDs of several uncertainty schemes (each PD averaged over its resample's
own rows):

``plain``        rows drawn with replacement (the package's default), ``B`` refits;
``param_fit``    parametric: rows with replacement, ``y* ~ Bernoulli(p_hat)`` of the full-data fit;
``param_oof``    parametric with a smoother ``p``: 5-fold out-of-fold probabilities of the same learner
                 (regressor: ``y* = f_oof(x) + v e_oof`` with Rademacher ``v``, a wild bootstrap);
``param_oracle`` parametric with the true ``P(y = 1 | x)`` (diagnostic only: what the scheme can do);
``half``         half-sampling without replacement, ``m = n/2`` (no rescaling for a root-n statistic);
``sub632``       ``m = 0.632 n`` rows without replacement (as many distinct rows as a bootstrap sample,
                 no duplicates), SD rescaled by ``sqrt(m / (n - m))`` (exact for a mean);
``quarter``      ``m = n/4`` without replacement; with ``half`` it gives ``sub_rate``: the variance of an
                 ``m``-row fit ``S_m^2 / (1 - m/n)``, its rate ``gamma`` from the two ``m`` (median over
                 the curve) and the extrapolation ``Var_n = Var_{n/2} 2^-gamma``;
``iterated``     second-level bootstrap: ``k`` first-level resamples, ``b2`` resamples of each; the SE is
                 ``SD_1 * median_g(SD_1 / SD_2)`` (``SD_2``: the pooled second-level SD), ``k * b2``
                 extra refits;
``logit``        the ``plain`` resamples on the logit scale: sup-t band there, mapped back (no refits);
``sub632_logit`` the ``sub632`` resamples on the logit scale, deviations rescaled there (what
                 ``pdpboot.probability_bands`` does for a ``resampling="subsample"`` result).

Truth: ``T`` fits on independent data sets give the learner's expected PD (the target) and the true
sampling SD of the estimate.  Reported per scheme: SE / true SD (root-mean-square SE over data sets,
per grid point; median, min and max over grid points and features), pointwise coverage of
``estimate -/+ 1.96 SE`` (``plain`` also: the package's percentile band) and whole-curve coverage of the
sup-t band ``estimate -/+ c SE`` (``c`` the 0.95 quantile of the scheme's own standardised max deviation;
``plain`` also: the package's sup-t band), all with Monte Carlo SEs over data sets.

    python -m experiments.classifier_se compute [--quick] [--combos dgp:learner ...] [--max-reps R]
    python -m experiments.classifier_se render [--quick]

Every scheme is reported twice: the normal band ``estimate -/+ z SE`` with the scheme's own sup-t
critical value, and the package's bands (``pdpboot.engine.intervals.band_arrays``: percentile pointwise,
sup-t simultaneous) on the scheme's pseudo-resamples, with the sup-t half-width over the true SD.
Summary of the committed run: ``experiments/summaries/classifier_se/summary.txt``.

Chunks of ``chunk`` data sets are cached under ``results/<mode>/classifier_se``; a later run with a
larger ``R`` reuses them and adds the rest (the seeds of data set ``r`` do not depend on ``R``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial

import numpy as np
import xarray as xr
from scipy.special import expit, logit
from sklearn.base import clone, is_classifier
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from . import _common as C

STUDY = "classifier_se"
SEED = 27_2026
G = 12
FEATURES = (0, 1)
Z95 = 1.959963984540054

SETTINGS = {
    "full": {"n": 400, "B": 50, "k": 5, "b2": 10, "T": 200, "R": 30, "chunk": 3},
    "quick": {"n": 150, "B": 8, "k": 2, "b2": 4, "T": 6, "R": 2, "chunk": 1},
}
ALL_SCHEMES = ("plain", "param_fit", "param_oof", "param_oracle", "half", "sub632", "quarter", "iterated")

# --------------------------------------------------------------------------- DGPs


def _correlated_normal(n: int, rng: np.random.Generator, rho: float = 0.5, p: int = 3) -> np.ndarray:
    cov = np.full((p, p), rho) + (1 - rho) * np.eye(p)
    return rng.normal(size=(n, p)) @ np.linalg.cholesky(cov).T


def _skewcorr_x(n: int, rng: np.random.Generator) -> np.ndarray:
    """x0 normal, x1 log-normal (skewed), x2 normal; latent correlation 0.5."""
    z = _correlated_normal(n, rng)
    return np.column_stack([z[:, 0], np.exp(0.75 * z[:, 1]), z[:, 2]])


def _eta(name: str, X: np.ndarray) -> np.ndarray:
    if name == "skewcorr":  # the audit-like DGP: correlated, skewed features; a bump and an interaction
        return -0.5 + 1.5 * np.tanh(1.5 * X[:, 0]) - 0.6 * (X[:, 1] - 1.0) + 0.7 * X[:, 0] * X[:, 2]
    if name == "logistic":  # classification_coverage's DGP
        return -0.3 + X[:, 0] - 0.5 * X[:, 1] + 0.8 * X[:, 0] * X[:, 1]
    if name == "step":  # a jump in x0, skewed x1
        return -1.0 + 2.0 * (X[:, 0] > 0.3) + 0.8 * np.log(X[:, 1]) + 0.5 * X[:, 2]
    if name == "rare":  # low base rate (about 0.15), smooth effects
        return -2.3 + 1.2 * X[:, 0] + 0.8 * np.sqrt(X[:, 1]) - 0.5 * X[:, 2] ** 2
    raise ValueError(name)


def make_x(dgp: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if dgp == "logistic":
        return rng.normal(size=(n, 2))
    return _skewcorr_x(n, rng)


def true_mean(dgp: str, X: np.ndarray) -> np.ndarray:
    """``P(y = 1 | x)`` for the binary DGPs, ``E(y | x)`` for the regression one."""
    if dgp == "regression":
        return 1.5 * np.tanh(1.5 * X[:, 0]) - 0.6 * (X[:, 1] - 1.0) + 0.7 * X[:, 0] * X[:, 2]
    return expit(_eta(dgp, X))


def make_data(dgp: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = make_x(dgp, n, rng)
    mu = true_mean(dgp, X)
    if dgp == "regression":  # heavy-tailed, heteroscedastic noise
        return X, mu + (0.5 + 0.4 * np.abs(X[:, 0])) * rng.standard_t(4, size=n) / np.sqrt(2)
    return X, (rng.uniform(size=n) < mu).astype(int)


def grid_of(dgp: str) -> np.ndarray:
    """Population 5-95 % quantiles (``G`` points) of each PD feature, from 200 000 draws: (F, G)."""
    X = make_x(dgp, 200_000, np.random.default_rng(SEED))
    return np.quantile(X[:, list(FEATURES)], np.linspace(0.05, 0.95, G), axis=0).T


# --------------------------------------------------------------------------- learners


def make_learner(name: str, quick: bool = False):
    if name == "hgb_clf":  # the audit's booster (60 rounds, other settings scikit-learn's defaults)
        return HistGradientBoostingClassifier(max_iter=10 if quick else 60, random_state=0)
    if name == "rf_clf":
        return RandomForestClassifier(n_estimators=10 if quick else 60, min_samples_leaf=5, random_state=0)
    if name == "logreg":
        return LogisticRegression(max_iter=1000)
    if name == "hgb_reg":
        return HistGradientBoostingRegressor(max_iter=10 if quick else 60, random_state=0)
    raise ValueError(name)


def _response(model, X: np.ndarray) -> np.ndarray:
    return model.predict_proba(X)[:, 1] if is_classifier(model) else model.predict(X)


def pd_of_fit(model, X: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """PD of each feature in ``FEATURES`` over the rows ``X`` (the fit's own rows): (F, G)."""
    out = np.empty((len(FEATURES), grid.shape[1]))
    n = X.shape[0]
    for f, j in enumerate(FEATURES):
        rows = np.repeat(X, grid.shape[1], axis=0)
        rows[:, j] = np.tile(grid[f], n)
        out[f] = _response(model, rows).reshape(n, -1).mean(axis=0)
    return out


def _fit_pd(learner, X: np.ndarray, y: np.ndarray, grid: np.ndarray) -> np.ndarray:
    if is_classifier(learner) and np.unique(y).size < 2:
        return np.full((len(FEATURES), grid.shape[1]), np.nan)
    return pd_of_fit(clone(learner).fit(X, y), X, grid)


def out_of_fold(learner, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """5-fold out-of-fold predictions (probability of class 1, or the regression)."""
    pred = np.empty(len(y))
    folds = KFold(5, shuffle=True, random_state=int(rng.integers(2**31)))
    for train, test in folds.split(X):
        pred[test] = _response(clone(learner).fit(X[train], y[train]), X[test])
    return pred


# --------------------------------------------------------------------------- one data set


def _scheme_draws(scheme: str, learner, X, y, grid, B: int, rng, aux: dict) -> np.ndarray:
    n = len(y)
    out = np.empty((B, len(FEATURES), grid.shape[1]))
    for b in range(B):
        if scheme in ("half", "sub632", "quarter"):
            m = {"half": n // 2, "sub632": round(0.632 * n), "quarter": n // 4}[scheme]
            idx = rng.choice(n, size=m, replace=False)
            Xb, yb = X[idx], y[idx]
        else:
            idx = rng.integers(0, n, size=n)
            Xb, yb = X[idx], y[idx]
            if scheme.startswith("param"):
                p = aux[scheme][idx]
                if is_classifier(learner):
                    yb = (rng.uniform(size=n) < p).astype(int)
                else:
                    yb = p + aux["resid_oof"][idx] * rng.choice([-1.0, 1.0], size=n)
        out[b] = _fit_pd(learner, Xb, yb, grid)
    return out


def repetition(dgp: str, learner_name: str, cfg: dict, schemes, quick: bool, seed) -> dict:
    data_seed, *scheme_seeds = seed.spawn(1 + len(ALL_SCHEMES) + 1)
    X, y = make_data(dgp, cfg["n"], np.random.default_rng(data_seed))
    learner = make_learner(learner_name, quick)
    grid = grid_of(dgp)
    model = clone(learner).fit(X, y)
    out = {"estimate": pd_of_fit(model, X, grid)}
    aux = {"param_fit": _response(model, X), "param_oracle": true_mean(dgp, X)}
    if "param_oof" in schemes:
        aux["param_oof"] = out_of_fold(learner, X, y, np.random.default_rng(scheme_seeds[-1]))
        aux["resid_oof"] = y - aux["param_oof"]
    timings = {}
    for scheme, s in zip(ALL_SCHEMES, scheme_seeds):
        if scheme not in schemes or scheme == "iterated":
            continue
        if scheme == "param_oracle" and dgp == "regression":
            continue
        start = time.perf_counter()
        out[scheme] = _scheme_draws(scheme, learner, X, y, grid, cfg["B"], np.random.default_rng(s), aux)
        timings[scheme] = time.perf_counter() - start
    if "iterated" in schemes:
        rng = np.random.default_rng(scheme_seeds[ALL_SCHEMES.index("iterated")])
        n = len(y)
        second = np.empty((cfg["k"], cfg["b2"], len(FEATURES), grid.shape[1]))
        start = time.perf_counter()
        for i in range(cfg["k"]):
            idx1 = rng.integers(0, n, size=n)
            second[i] = _scheme_draws("plain", learner, X[idx1], y[idx1], grid, cfg["b2"], rng, aux)
        out["iterated"] = second
        timings["iterated"] = time.perf_counter() - start
    out["timings"] = timings
    return out


def _to_dataset(reps: list[dict], first: int) -> xr.Dataset:
    data = {"estimate": (("rep", "feature", "x"), np.array([r["estimate"] for r in reps]))}
    for key in reps[0]:
        if key in ("estimate", "timings"):
            continue
        arr = np.array([r[key] for r in reps])
        dims = ("rep", "first", "second", "feature", "x") if key == "iterated" else ("rep", "resample", "feature", "x")
        data[key] = (dims, arr)
        data[f"{key}_seconds"] = ("rep", np.array([r["timings"][key] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, first + len(reps))})


# --------------------------------------------------------------------------- compute

#: (DGP, learner, schemes) in order of priority: the audit's combination with every scheme first (the diagnosis),
#: then the candidate remedies only (``param_fit``/``param_oracle`` are diagnostics, ``iterated`` was no better
#: than ``sub632`` on the first combination at a cost of 50 refits) on the other DGPs and learners, the cheap
#: learners that must not be over-corrected first.
_REMEDIES = ("plain", "param_oof", "sub632", "half", "quarter")
COMBOS = {
    "skewcorr:hgb_clf": ALL_SCHEMES,
    "skewcorr:logreg": ALL_SCHEMES,
    "logistic:hgb_clf": _REMEDIES,
    "regression:hgb_reg": _REMEDIES,
    "step:hgb_clf": _REMEDIES,
    "skewcorr:rf_clf": ("plain", "param_oof", "sub632"),
    "rare:hgb_clf": _REMEDIES,
}


def _truth(dgp: str, learner_name: str, cfg: dict, quick: bool, seed) -> xr.Dataset:
    grid = grid_of(dgp)
    learner = make_learner(learner_name, quick)
    fits = []
    for s in seed.spawn(cfg["T"]):
        X, y = make_data(dgp, cfg["n"], np.random.default_rng(s))
        fits.append(_fit_pd(learner, X, y, grid))
    return xr.Dataset({"fits": (("fit", "feature", "x"), np.array(fits)), "grid": (("feature", "x"), grid)})


def compute(ctx: C.Context, combos=None, max_reps: int | None = None, R: int | None = None,
            schemes=None) -> None:
    """Truth fits and data-set chunks of each combination (``schemes``: override its list for new chunks)."""
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    for combo in combos or COMBOS:
        dgp, learner_name = combo.split(":")
        combo_schemes = tuple(schemes) if schemes else COMBOS[combo]
        truth_seed, rep_seed = C.seed_sequence(SEED, combo).spawn(2)
        C.cached(folder / f"{dgp}_{learner_name}_truth.nc", ctx,
                 partial(_truth, dgp, learner_name, cfg, ctx.quick, truth_seed))
        total = R or cfg["R"]
        reps = total if max_reps is None else min(total, max_reps)
        seeds = _rep_seeds(rep_seed, reps)
        for first in range(0, reps, cfg["chunk"]):
            C.cached(folder / f"{dgp}_{learner_name}_{first:05d}.nc", ctx,
                     partial(_chunk, combo, cfg, combo_schemes, ctx.quick, seeds[first:first + cfg["chunk"]], first))


def _chunk(combo: str, cfg: dict, schemes, quick: bool, seeds, first: int) -> xr.Dataset:
    dgp, learner_name = combo.split(":")
    start = time.perf_counter()
    out = [repetition(dgp, learner_name, cfg, schemes, quick, s) for s in seeds]
    print(f"[{time.strftime('%H:%M:%S')}] {combo} reps {first}..{first + len(out)} took "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return _to_dataset(out, first)


def _rep_seeds(root: np.random.SeedSequence, count: int) -> list[np.random.SeedSequence]:
    """Seeds of data sets ``0..count-1``: data set ``r``'s seed does not depend on ``count``."""
    return [np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, r)) for r in range(count)]


# --------------------------------------------------------------------------- summaries


def _supt_c(draws: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Sup-t critical value per feature from draws (B, F, G): quantile of max_g |d - mean| / sd."""
    sd = np.nanstd(draws, axis=0, ddof=1)
    t = np.abs(draws - np.nanmean(draws, axis=0)) / np.where(sd > 0, sd, np.inf)
    return np.nanquantile(np.nanmax(t, axis=2), level, axis=0)  # (F,)


def _sub632_scale(n: int) -> float:
    """``sqrt(m / (n - m))`` for the ``m = round(0.632 n)`` rows of ``sub632``."""
    m = round(0.632 * n)
    return float(np.sqrt(m / (n - m)))


def scheme_se(ds: xr.Dataset, scheme: str, r: int, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(SE of the estimate (F, G), draws whose shape gives the sup-t critical value) of data set ``r``."""
    if scheme == "plain" or scheme == "logit":
        d = ds["plain"].values[r]
        return np.nanstd(d, axis=0, ddof=1), d
    if scheme == "sub632_logit":
        d = ds["sub632"].values[r]
        return np.nanstd(d, axis=0, ddof=1) * _sub632_scale(n_rows), d
    if scheme in ("half", "param_fit", "param_oof", "param_oracle"):
        d = ds[scheme].values[r]
        return np.nanstd(d, axis=0, ddof=1), d
    if scheme == "sub632":
        d = ds[scheme].values[r]
        return np.nanstd(d, axis=0, ddof=1) * _sub632_scale(n_rows), d
    if scheme == "sub_rate":
        half, quarter = ds["half"].values[r], ds["quarter"].values[r]
        v_half = np.nanvar(half, axis=0, ddof=1) / 0.5
        v_quarter = np.nanvar(quarter, axis=0, ddof=1) / 0.75
        gamma = np.nanmedian(np.log(v_quarter / v_half), axis=1, keepdims=True) / np.log(2.0)
        gamma = np.clip(gamma, 0.25, 2.0)
        return np.sqrt(v_half * 2.0 ** (-gamma)), half
    if scheme == "iterated":
        d = ds["plain"].values[r]
        sd1 = np.nanstd(d, axis=0, ddof=1)
        sd2 = np.sqrt(np.nanmean(np.nanvar(ds["iterated"].values[r], axis=1, ddof=1), axis=0))
        ratio = np.nanmedian(sd1 / sd2, axis=1, keepdims=True)
        return sd1 * ratio, d
    raise ValueError(scheme)


SCHEME_ORDER = ("plain", "logit", "param_fit", "param_oof", "param_oracle", "half", "sub632", "sub632_logit",
                "sub_rate", "iterated")


def schemes_of(ds: xr.Dataset, classifier: bool = True) -> list[str]:
    have = set(ds.data_vars)
    out = [s for s in ("plain", "logit", "param_fit", "param_oof", "param_oracle", "half", "sub632") if
           s in have or (s == "logit" and classifier and "plain" in have)]
    if classifier and "sub632" in have:
        out.append("sub632_logit")
    if {"half", "quarter"} <= have:
        out.append("sub_rate")
    if "iterated" in have:
        out.append("iterated")
    return out


def _coverage(est, se, draws, truth, scheme: str, classifier: bool, n_rows: int) -> tuple[float, float]:
    """(pointwise share, whole-curve share over features) of ``est -/+ z se`` and the sup-t band."""
    if scheme in ("logit", "sub632_logit") and classifier:
        eps = 1e-6
        le, ld = logit(np.clip(est, eps, 1 - eps)), logit(np.clip(draws, eps, 1 - eps))
        if scheme == "sub632_logit":
            ld = le + _sub632_scale(n_rows) * (ld - le)
        lse = np.nanstd(ld, axis=0, ddof=1)
        c = _supt_c(ld)[:, None]
        lo, hi = expit(le - Z95 * lse), expit(le + Z95 * lse)
        slo, shi = expit(le - c * lse), expit(le + c * lse)
    else:
        c = _supt_c(draws)[:, None]
        lo, hi = est - Z95 * se, est + Z95 * se
        slo, shi = est - c * se, est + c * se
    point = np.mean((lo <= truth) & (truth <= hi))
    whole = np.mean(np.all((slo <= truth) & (truth <= shi), axis=1))
    return float(point), float(whole)


def _package_bands(est, se, draws, truth, scheme: str, n_rows: int, true_sd) -> tuple[float, float, float]:
    """(pointwise, whole-curve) coverage of the package's bands (``band_arrays``: percentile pointwise, sup-t
    simultaneous) on the scheme's pseudo-resamples.

    ``plain``: the resamples; ``sub632``: deviations from the estimate rescaled by ``sqrt(m / (n - m))``, as
    ``resampling="subsample"`` does; ``logit``: the bands on the logit scale, mapped back; every other scheme:
    ``est + k (draws - mean(draws))`` with ``k = se / sd(draws)`` pointwise (its spread, centred on the estimate).
    """
    from pdpboot.engine.intervals import band_arrays

    if scheme == "plain":
        pseudo = draws
    elif scheme == "sub632":
        pseudo = est + _sub632_scale(n_rows) * (draws - est)
    elif scheme in ("logit", "sub632_logit"):
        eps = 1e-6
        le, ld = logit(np.clip(est, eps, 1 - eps)), logit(np.clip(draws, eps, 1 - eps))
        if scheme == "sub632_logit":
            ld = le + _sub632_scale(n_rows) * (ld - le)
        lo, hi, *_ = band_arrays(le, ld, level=0.95, method="percentile", simultaneous=False)
        slo, shi, *_ = band_arrays(le, ld, level=0.95, method="percentile", simultaneous=True)
        lo, hi, slo, shi = expit(lo), expit(hi), expit(slo), expit(shi)
        return (float(np.mean((lo <= truth) & (truth <= hi))),
                float(np.mean(np.all((slo <= truth) & (truth <= shi), axis=1))),
                float(np.mean((shi - slo) / (2 * true_sd))))
    else:
        sd = np.nanstd(draws, axis=0, ddof=1)
        pseudo = est + (se / np.where(sd > 0, sd, np.inf)) * (draws - np.nanmean(draws, axis=0))
    lo, hi, *_ = band_arrays(est, pseudo, level=0.95, method="percentile", simultaneous=False)
    slo, shi, *_ = band_arrays(est, pseudo, level=0.95, method="percentile", simultaneous=True,
                               simultaneous_method="sup-t")
    return (float(np.mean((lo <= truth) & (truth <= hi))),
            float(np.mean(np.all((slo <= truth) & (truth <= shi), axis=1))),
            float(np.mean((shi - slo) / (2 * true_sd))))


def load_combo(ctx: C.Context, combo: str) -> tuple[xr.Dataset, xr.Dataset] | None:
    folder = ctx.study_dir(STUDY)
    dgp, learner = combo.split(":")
    files = sorted(folder.glob(f"{dgp}_{learner}_0*.nc"))
    truth_file = folder / f"{dgp}_{learner}_truth.nc"
    if not files or not truth_file.exists():
        return None
    return [C.load_dataset(f) for f in files], C.load_dataset(truth_file)


#: Stored variables each reported scheme reads.
_NEEDS = {"logit": ("plain",), "sub632_logit": ("sub632",), "sub_rate": ("half", "quarter"),
          "iterated": ("plain", "iterated")}


def _scheme_data(chunks: list[xr.Dataset], scheme: str) -> xr.Dataset:
    """The data sets (chunks) that hold every variable ``scheme`` reads, concatenated over ``rep``."""
    needs = ["estimate", *_NEEDS.get(scheme, (scheme,))]
    return xr.concat([c[needs] for c in chunks if set(needs) <= set(c.data_vars)], dim="rep")


def records(ctx: C.Context) -> list[dict]:
    out = []
    for combo in COMBOS:
        loaded = load_combo(ctx, combo)
        if loaded is None:
            continue
        chunks, tr = loaded
        fits = tr["fits"].values
        truth, true_sd = np.nanmean(fits, axis=0), np.nanstd(fits, axis=0, ddof=1)
        n_t = int(np.sum(np.all(np.isfinite(fits), axis=(1, 2))))
        classifier = not combo.endswith("hgb_reg")
        schemes = [s for s in SCHEME_ORDER if any(s in schemes_of(c, classifier) for c in chunks)]
        for scheme in schemes:
            ds = _scheme_data(chunks, scheme)
            R = ds.sizes["rep"]
            est = ds["estimate"].values
            if f"{scheme}_seconds" in chunks[0]:
                ds[f"{scheme}_seconds"] = xr.concat([c[f"{scheme}_seconds"] for c in chunks
                                                     if f"{scheme}_seconds" in c], dim="rep")
            ses, points, wholes, pkg = [], [], [], []
            for r in range(R):
                se, draws = scheme_se(ds, scheme, r, SETTINGS[ctx.mode]["n"])
                ses.append(se)
                p, w = _coverage(est[r], se, draws, truth, scheme, classifier, SETTINGS[ctx.mode]["n"])
                points.append(p)
                wholes.append(w)
                pkg.append(_package_bands(est[r], se, draws, truth, scheme, SETTINGS[ctx.mode]["n"], true_sd))
            ses = np.array(ses)  # (R, F, G)
            ratio = np.sqrt(np.nanmean(ses**2, axis=0)) / true_sd  # (F, G)
            # MC SE of the median ratio: delta method over data sets and over the truth fits
            rel = np.nanstd(ses**2, axis=0, ddof=1) / np.nanmean(ses**2, axis=0) / np.sqrt(R) / 2
            rel_t = 1 / np.sqrt(2 * (n_t - 1))
            rec = {"combo": combo, "scheme": scheme, "R": int(R), "T": n_t,
                   "B": int(ds.sizes.get("resample", 0)),
                   "se_ratio_median": float(np.nanmedian(ratio)), "se_ratio_min": float(np.nanmin(ratio)),
                   "se_ratio_max": float(np.nanmax(ratio)),
                   "se_ratio_mcse": float(np.nanmedian(ratio) * np.sqrt(np.nanmedian(rel) ** 2 + rel_t**2))}
            rec["pointwise"], rec["pointwise_mcse"] = C.mean_se(points)
            rec["whole"], rec["whole_mcse"] = C.mean_se(wholes)
            rec["pointwise_pkg"], rec["pointwise_pkg_mcse"] = C.mean_se([p for p, _, _ in pkg])
            rec["whole_pkg"], rec["whole_pkg_mcse"] = C.mean_se([w for _, w, _ in pkg])
            # half-width of the package's sup-t band over the true SD (1.96 would be an exact pointwise band)
            rec["supt_halfwidth_sd"] = float(np.mean([h for _, _, h in pkg]))
            if f"{scheme}_seconds" in ds:
                rec["seconds_per_dataset"] = float(ds[f"{scheme}_seconds"].mean())
            out.append(rec)
    return out


def render(ctx: C.Context, summaries: bool = False) -> list[dict]:
    recs = records(ctx)
    folder = ctx.study_dir(STUDY)
    (folder / "summary.json").write_text(json.dumps(recs, indent=1))
    lines = [f"{'combo':20s} {'scheme':12s} {'R':>3s} {'B':>3s} {'T':>4s}  SE/SD med [min,max] (mcse)  "
             "normal: pointwise  whole(sup-t) | package bands: pointwise  whole  halfwidth/SD | refit s/data set"]
    for r in recs:
        lines.append(f"{r['combo']:20s} {r['scheme']:12s} {r['R']:3d} {r['B']:3d} {r['T']:4d}  "
                     f"{r['se_ratio_median']:.2f} [{r['se_ratio_min']:.2f},{r['se_ratio_max']:.2f}] "
                     f"({r['se_ratio_mcse']:.2f})  {r['pointwise']:.3f} ({r['pointwise_mcse']:.3f}) "
                     f"{r['whole']:.3f} ({r['whole_mcse']:.3f}) | {r['pointwise_pkg']:.3f} "
                     f"({r['pointwise_pkg_mcse']:.3f}) {r['whole_pkg']:.3f} ({r['whole_pkg_mcse']:.3f}) "
                     f"{r['supt_halfwidth_sd']:.2f} | "
                     f"{r.get('seconds_per_dataset', float('nan')):.1f}")
    text = "\n".join(lines)
    (folder / "summary.txt").write_text(text + "\n")
    if not ctx.quick and summaries:  # the committed copy (experiments/summaries/classifier_se)
        C.write_summary(C.ROOT / "experiments" / "summaries" / STUDY, recs, text + "\n")
    print(text)
    return recs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.classifier_se", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["compute", "render", "both"], nargs="?", default="both")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--combos", nargs="*")
    parser.add_argument("--max-reps", type=int)
    parser.add_argument("--R", type=int, help="data sets per combination (default: the mode's R)")
    parser.add_argument("--summaries", action="store_true",
                        help="also write experiments/summaries/classifier_se (full mode)")
    parser.add_argument("--schemes", nargs="*", choices=ALL_SCHEMES,
                        help="schemes of the chunks computed now (default: each combination's list)")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.action in ("compute", "both"):
            compute(ctx, args.combos, args.max_reps, args.R, args.schemes)
        if args.action in ("render", "both"):
            render(ctx, args.summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
