"""Coverage of the debiased estimator's bands for the DGP's partial dependence (issue 28).

Settings (``SETTINGS``; quick mode shrinks R and the learners):

B_<learner>_n<n>
    The coverage study's scenario B (:mod:`experiments.coverage`): Friedman #1 (10 independent
    U(0, 1) features, noise sd 1), random forest, gradient boosting and a small network, n = 500 and
    2000, PD of x1, x3, x4 on the same 15-point grid; truth in closed form
    (:func:`experiments.truth.true_pd`).  The refit bootstrap's widths and coverage (B = 200) are read
    from the archived summaries of that study (``experiments/archive/coverage/summary``) for the
    width ratio.
G_corr_gbm_n1000 (own DGP 1: correlated features, curved PD)
    ``X ~ N(0, S)``, three features, ``corr(x1, x2) = 0.6``, ``corr(x1, x3) = 0.3``;
    ``y = 2 sin(1.5 x1) + x1 x2 + x2 + 0.5 x3^2 + e``, ``e ~ N(0, 1)``; PD of x1 is
    ``2 sin(1.5 a) + 0.5`` (``E x2 = 0``, ``E x3^2 = 1``), of x2 ``a + 0.5`` (with
    ``E[x1 x2 | x2 = a]`` replaced by ``a E x1 = 0``) -- a marginal plot would be biased by the
    correlation; boosting, 15-point grid at the N(0, 1) 5..95 % quantiles.
K_cat_gbm_n1000 (own DGP 2: categorical x_s)
    Level ``A in {0, 1, 2, 3}`` with multinomial-logit propensity given ``x1, x2 ~ N(0, 1)``
    (logits ``0, 0.8 x1, -0.8 x1 + 0.5 x2, 0.5 + 0.5 x2``);
    ``y = tau_A + sin(2 x1) + 1{A = 2} x1^2 + x2 + e``, ``tau = (0, 1, 0.5, -0.5)``; PD of A is
    ``tau_a + 1{a = 2}``; boosting on (A, x1, x2); AIPW per level.
L_logit_gbc_n1000 (own DGP 3: binary outcome, the PD of a probability)
    ``X ~ N(0, S)``, ``corr = (0.5, 0.3, 0.2)``; ``P(y = 1 | x) = expit(1.5 sin(1.5 x1) + x2 - 0.75 x1 x3 - 0.5)``;
    PD of x1 and x2 (probability of class 1) by Monte Carlo over the marginal of the other two
    features (400,000 draws); boosted classifier (``predict_proba``).
H_skew_gbm_n1000 (own DGP 4: skewed x_s, heteroscedastic noise, strong interaction)
    ``(z1, z2) ~ N(0, [[1, 0.5], [0.5, 1]])``, ``x1 = exp(0.6 z1)`` (log-normal: right-skewed, its
    upper grid points sparse), ``x2 = z2``, ``x3 ~ U(-1, 1)`` independent;
    ``y = 2 tanh(x1 - 1) + 1.5 x1 x2 + x2 + 0.5 x3 + (0.5 + 0.5 x1) e``, ``e ~ N(0, 1)`` (noise sd
    grows with x1); PD of x1 is ``2 tanh(a - 1)`` (``E x2 = E x3 = 0``), of x2
    ``2 E tanh(x1 - 1) + (1.5 E x1 + 1) a`` with ``E x1 = exp(0.18)`` and the expectation by
    Gauss-Hermite quadrature (80 nodes); boosting; grids at the 5..95 % quantiles of each marginal.
E_exp_rf_n1000 (own DGP 5: the boundary class of H with another shape, learner and boundary)
    ``x1 ~ Exp(1)`` (density largest at the hard lower boundary 0, long right tail),
    ``x2 = 0.6 tanh(x1 - 1) + 0.8 z``, ``x3 ~ U(-1, 1)``;
    ``y = 2 cos(1.5 x1) + x1 x2 + x2 + x3^2 + (0.3 + 0.7 x1) e`` (noise sd grows with x1, the PD of x1
    is most curved at the lower boundary); PD of x1 is ``2 cos(1.5 a) + (a + 1) E x2 + 1/3`` (``E x2`` by
    Gauss-Laguerre quadrature), of x2 ``2 E cos(1.5 x1) + (E x1 + 1) a + 1/3 = 2 / 3.25 + 2 a + 1/3``;
    random forest; grid of x1 at the
    Exp(1) 5..95 % quantiles, of x2 at the N(0, 1) ones.  Designed in round 5 so that the boundary rule
    is not tuned to H.
V_halfnormal_gbm_n1000 (own DGP 6, round 6: another hard boundary, a dependence that is no Gaussian copula)
    ``x1 = |Z|`` (half-normal: density largest at the hard lower boundary 0), ``x2 = 0.8 sin(2 x1) + (0.5 + 0.5 x1) z``
    (mean and spread of x2 both non-linear functions of x1), ``x3 ~ U(-1, 1)``;
    ``y = 2 exp(-x1) + x1 x2 + x2 + x3 + (0.5 + 0.5 x1) e``; PD of x1 is ``2 exp(-a) + (a + 1) E x2``, of x2
    ``2 E exp(-x1) + (E x1 + 1) a`` (``E x1 = sqrt(2 / pi)``; the other means by adaptive quadrature); boosting;
    grid of x1 at the half-normal 5..95 % quantiles, of x2 at the N(0, 1) ones.  Designed in round 6 with the
    density-ratio model, as the third DGP (with E and H) on which the models were compared.

Each repetition draws a data set from the repetition's own seed (the i-th child of the setting's
seed sequence) and runs :func:`pdpboot.debiased_partial_dependence` (K = 5 folds, default nuisance
classifier and bandwidth rule, 95 %).  Chunks of repetitions are cached as netCDF under
``experiments/results/<mode>/debiased/v2/<setting>/chunk_*.nc`` and the run is resumable and extendable
(a larger R only adds chunks).  ``python -m experiments.debiased_coverage [--quick] [--R N]
[--settings ...] [--until HH:MM]`` computes; ``--summary`` prints the table.

``--refit`` runs the learner's refit bootstrap (:func:`pdpboot.bootstrap_partial_dependence`, B = 100
by default, the package's default bands: percentile pointwise and sup-t whole-curve) on the first R
data sets of every setting -- the very data sets of the debiased repetitions -- into
``v2/<setting>__refit``; the summary then reports the width ratio on the same data and the refit
band's own coverage of the DGP's PD.  B = 100 is enough for widths (a percentile band's
width from B = 100 resamples has a Monte Carlo CV of a few per cent).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import xarray as xr
from scipy.stats import norm
from threadpoolctl import threadpool_limits

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import make_friedman1

from . import _common as C
from .learners import make_learner
from .truth import true_pd

STUDY = "debiased"
SEED = 20261201
LEVEL = 0.95
GRID_UNIFORM = np.linspace(0.05, 0.95, 15)
GRID_NORMAL = norm.ppf(np.linspace(0.05, 0.95, 15))
TAU = np.array([0.0, 1.0, 0.5, -0.5])
#: Own DGP 4: ``x1 = exp(SKEW_SD * z1)``, ``corr(z1, x2) = SKEW_RHO``.
SKEW_SD = 0.6
SKEW_RHO = 0.5
#: Own DGP 5: ``x2 = EXP_SHIFT tanh(x1 - 1) + 0.8 z`` (a bounded shift: with a linear one, ``0.6 (x1 - 1)``, the
#: exponential tail of x1 leaves the density ratio of x2 without a second moment -- an overlap failure, not the
#: boundary class this DGP is for).
EXP_SHIFT = 0.6
#: Own DGP 6: ``x2 = HALF_SHIFT sin(2 x1) + (0.5 + 0.5 x1) z`` with ``x1 = |Z|`` (half-normal).
HALF_SHIFT = 0.8


def _settings() -> dict[str, dict]:
    out = {}
    for learner in ("rf", "gbm", "mlp"):
        for n in (500, 2000):
            out[f"B_{learner}_n{n}"] = {"dgp": "friedman1", "learner": learner, "n": n, "features": [0, 2, 3],
                                        "grid": GRID_UNIFORM, "refit": f"B_{learner}_n{n}"}
    out["G_corr_gbm_n1000"] = {"dgp": "corr_curved", "learner": "gbm", "n": 1000, "features": [0, 1],
                               "grid": GRID_NORMAL, "refit": None}
    out["K_cat_gbm_n1000"] = {"dgp": "categorical", "learner": "gbm", "n": 1000, "features": [0],
                              "grid": np.arange(4), "refit": None, "categorical": [0]}
    out["L_logit_gbc_n1000"] = {"dgp": "logistic", "learner": "gbc", "n": 1000, "features": [0, 1],
                                "grid": GRID_NORMAL, "refit": None}
    out["H_skew_gbm_n1000"] = {"dgp": "skewed", "learner": "gbm", "n": 1000, "features": [0, 1],
                               "grid": np.stack([np.exp(SKEW_SD * GRID_NORMAL), GRID_NORMAL]), "refit": None}
    out["V_halfnormal_gbm_n1000"] = {"dgp": "halfnormal", "learner": "gbm", "n": 1000, "features": [0, 1],
                                     "grid": np.stack([norm.ppf(0.5 + np.linspace(0.05, 0.95, 15) / 2), GRID_NORMAL]),
                                     "refit": None}
    out["E_exp_rf_n1000"] = {"dgp": "exponential", "learner": "rf", "n": 1000, "features": [0, 1],
                             "grid": np.stack([-np.log1p(-np.linspace(0.05, 0.95, 15)), GRID_NORMAL]), "refit": None}
    return out


SETTINGS = _settings()


def simulate(setting: dict, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """One data set of the setting's DGP (plain arrays)."""
    gen = np.random.default_rng(seed)
    if setting["dgp"] == "friedman1":
        X, y = make_friedman1(n, rng=gen)
        return X.to_numpy(dtype=float), y.to_numpy(dtype=float)
    if setting["dgp"] == "corr_curved":
        cov = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.0], [0.3, 0.0, 1.0]])
        X = gen.multivariate_normal(np.zeros(3), cov, size=n)
        y = 2 * np.sin(1.5 * X[:, 0]) + X[:, 0] * X[:, 1] + X[:, 1] + 0.5 * X[:, 2] ** 2 + gen.standard_normal(n)
        return X, y
    if setting["dgp"] == "logistic":
        X = gen.multivariate_normal(np.zeros(3), COV_LOGISTIC, size=n)
        p = 1 / (1 + np.exp(-_logit(X[:, 0], X[:, 1], X[:, 2])))
        return X, (gen.uniform(size=n) < p).astype(int)
    if setting["dgp"] == "categorical":
        c = gen.standard_normal((n, 2))
        logits = np.column_stack([np.zeros(n), 0.8 * c[:, 0], -0.8 * c[:, 0] + 0.5 * c[:, 1], 0.5 + 0.5 * c[:, 1]])
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        a = (gen.uniform(size=(n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
        y = TAU[a] + np.sin(2 * c[:, 0]) + (a == 2) * c[:, 0] ** 2 + c[:, 1] + gen.standard_normal(n)
        return np.column_stack([a.astype(float), c]), y
    if setting["dgp"] == "skewed":
        z = gen.multivariate_normal(np.zeros(2), [[1.0, SKEW_RHO], [SKEW_RHO, 1.0]], size=n)
        x1, x2, x3 = np.exp(SKEW_SD * z[:, 0]), z[:, 1], gen.uniform(-1, 1, size=n)
        y = 2 * np.tanh(x1 - 1) + 1.5 * x1 * x2 + x2 + 0.5 * x3 + (0.5 + 0.5 * x1) * gen.standard_normal(n)
        return np.column_stack([x1, x2, x3]), y
    if setting["dgp"] == "exponential":
        x1 = gen.exponential(size=n)
        x2 = EXP_SHIFT * np.tanh(x1 - 1) + 0.8 * gen.standard_normal(n)
        x3 = gen.uniform(-1, 1, size=n)
        y = 2 * np.cos(1.5 * x1) + x1 * x2 + x2 + x3**2 + (0.3 + 0.7 * x1) * gen.standard_normal(n)
        return np.column_stack([x1, x2, x3]), y
    if setting["dgp"] == "halfnormal":
        x1 = np.abs(gen.standard_normal(n))
        x2 = HALF_SHIFT * np.sin(2 * x1) + (0.5 + 0.5 * x1) * gen.standard_normal(n)
        x3 = gen.uniform(-1, 1, size=n)
        y = 2 * np.exp(-x1) + x1 * x2 + x2 + x3 + (0.5 + 0.5 * x1) * gen.standard_normal(n)
        return np.column_stack([x1, x2, x3]), y
    raise ValueError(setting["dgp"])


def grid_of(setting: dict, feature: int) -> np.ndarray:
    """The setting's grid of one feature (one shared grid, or one row per feature)."""
    grid = np.asarray(setting["grid"])
    return grid[setting["features"].index(feature)] if grid.ndim == 2 else grid


def _skewed_pd(feature: int, grid: np.ndarray) -> np.ndarray:
    """PD of own DGP 4: ``2 tanh(a - 1)`` for x1; ``2 E tanh(x1 - 1) + (1.5 E x1 + 1) a`` for x2."""
    if feature == 0:
        return 2 * np.tanh(grid - 1)
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)    # E f(Z), Z ~ N(0, 1)
    mean_tanh = float(weights @ np.tanh(np.exp(SKEW_SD * nodes) - 1) / weights.sum())
    return 2 * mean_tanh + (1.5 * np.exp(SKEW_SD**2 / 2) + 1) * grid


def dgp_pd(setting: dict, feature: int, grid: np.ndarray) -> np.ndarray:
    """The DGP's PD on the grid (closed form)."""
    if setting["dgp"] == "friedman1":
        return true_pd("friedman1", f"x{feature + 1}", grid)
    if setting["dgp"] == "corr_curved":
        return 2 * np.sin(1.5 * grid) + 0.5 if feature == 0 else grid + 0.5
    if setting["dgp"] == "categorical":
        return TAU[grid.astype(int)] + (grid == 2)
    if setting["dgp"] == "logistic":
        return _logistic_pd(feature, tuple(np.asarray(grid, dtype=float).tolist()))
    if setting["dgp"] == "skewed":
        return _skewed_pd(feature, np.asarray(grid, dtype=float))
    if setting["dgp"] == "exponential":  # E cos(1.5 X) = 1 / (1 + 1.5^2), X ~ Exp(1); E x1 = 1, E x3^2 = 1/3
        grid = np.asarray(grid, dtype=float)
        nodes, weights = np.polynomial.laguerre.laggauss(80)     # E f(X), X ~ Exp(1)
        mean_x2 = EXP_SHIFT * float(weights @ np.tanh(nodes - 1))
        return 2 * np.cos(1.5 * grid) + mean_x2 * (grid + 1) + 1 / 3 if feature == 0 else 2 / 3.25 + 2 * grid + 1 / 3
    if setting["dgp"] == "halfnormal":  # E f(|Z|) = 2 int_0^inf f(t) phi(t) dt (adaptive quadrature: |z| has a kink)
        from scipy.integrate import quad

        grid = np.asarray(grid, dtype=float)
        mean = lambda f: 2 * quad(lambda t: f(t) * norm.pdf(t), 0, np.inf)[0]  # noqa: E731
        mean_x2 = HALF_SHIFT * mean(lambda t: np.sin(2 * t))
        if feature == 0:
            return 2 * np.exp(-grid) + (grid + 1) * mean_x2
        return 2 * mean(lambda t: np.exp(-t)) + (np.sqrt(2 / np.pi) + 1) * grid
    raise ValueError(setting["dgp"])


#: Own DGP 3 (binary outcome): correlated Gaussian features, P(y = 1 | x) = expit(_logit(x)).
COV_LOGISTIC = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.2], [0.3, 0.2, 1.0]])
#: Monte Carlo draws of x_C behind the logistic DGP's PD (fixed seed: the truth is one fixed curve).
N_TRUTH = 400_000


def _logit(x1, x2, x3):
    return 1.5 * np.sin(1.5 * x1) + x2 - 0.75 * x1 * x3 - 0.5


@functools.lru_cache(maxsize=8)
def _logistic_pd(feature: int, grid: tuple) -> np.ndarray:
    """``E_C[expit(logit(a, X_C))]`` by Monte Carlo over the marginal of the other two features (SE < 1e-3)."""
    gen = np.random.default_rng(SEED)
    X = gen.multivariate_normal(np.zeros(3), COV_LOGISTIC, size=N_TRUTH)
    out = []
    for a in grid:
        cols = [X[:, 0], X[:, 1], X[:, 2]]
        cols[feature] = np.full(N_TRUTH, a)
        out.append(float(np.mean(1 / (1 + np.exp(-_logit(*cols))))))
    return np.asarray(out)


@contextlib.contextmanager
def no_band_quiet():
    """Silence the debiased estimator's "No band" warning: the studies record the flagged values in ``overlap``."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No band for the data's PD", category=pdpboot.CoverageWarning)
        yield


def one_repetition(setting: dict, seed: np.random.SeedSequence, quick: bool) -> dict:
    """Debiased PD of every feature of one fresh data set: arrays (feature, grid) and timings."""
    data_seed, fit_seed = seed.spawn(2)
    X, y = simulate(setting, setting["n"], data_seed)
    custom = {f: grid_of(setting, f) for f in setting["features"]}
    start = time.process_time()
    with no_band_quiet():  # the study records the flagged grid values itself (``overlap``)
        res = pdpboot.debiased_partial_dependence(
            make_learner(setting["learner"], quick), X, y, setting["features"],
            grid=Grid(custom_values=custom, categorical_features=setting.get("categorical")), confidence_level=LEVEL,
            rng=np.random.default_rng(fit_seed))
    cpu = time.process_time() - start
    out: dict = {"cpu": cpu}
    for var in ("pd", "pd_se", "pd_plugin", "effective_sample_size", "overlap"):
        out[var] = np.stack([pdpboot.get_node(res, f"x{f}").ds[var].values[-1] for f in setting["features"]])
    for var in ("pd_band", "pd_band_simultaneous"):
        out[var] = np.stack([pdpboot.get_node(res, f"x{f}").ds[var].values[:, -1] for f in setting["features"]],
                            axis=1)
    bw = [pdpboot.get_node(res, f"x{f}").ds.attrs.get("bandwidth", [np.nan])[-1] for f in setting["features"]]
    out["bandwidth"] = np.asarray(bw, dtype=float)
    attrs = [pdpboot.get_node(res, f"x{f}").ds.attrs for f in setting["features"]]
    out["ratio_choice"] = np.array([RATIO_MODELS.index(a["ratio_model"]) if "ratio_model" in a else -1 for a in attrs])
    out["clipped_share"] = np.array([float(a.get("clipped_share", np.nan)) for a in attrs])
    return out


#: Codes of ``ratio_choice`` in the cache (the density-ratio model a repetition's feature used; -1 categorical).
RATIO_MODELS = ("polynomial", "spline", "boosting")


CURVES = ("pd", "pd_se", "pd_plugin", "effective_sample_size", "overlap")


def _chunk(setting: dict, reps: list[dict], first: int, curves: tuple[str, ...] = CURVES) -> xr.Dataset:
    """Repetitions -> one dataset (rep, [ci_bound,] feature, grid); ``curves``: the (feature, grid) variables."""
    fg = ("feature", "grid")
    data = {var: (("rep", *fg), np.stack([r[var] for r in reps])) for var in curves}
    for var in ("pd_band", "pd_band_simultaneous"):
        data[var] = (("rep", "ci_bound", *fg), np.stack([r[var] for r in reps]))
    for var in ("bandwidth", "ratio_choice", "clipped_share"):
        if var in reps[0]:
            data[var] = (("rep", "feature"), np.stack([r[var] for r in reps]))
    data["cpu"] = (("rep",), np.array([r["cpu"] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, first + len(reps)), "ci_bound": ["lower", "upper"],
                                    "feature": [f"x{f + 1}" for f in setting["features"]],
                                    "grid_value": (("feature", "grid") if np.ndim(setting["grid"]) == 2 else "grid",
                                                   np.asarray(setting["grid"], dtype=float))})


def _chunk_files(folder: Path) -> list[Path]:
    """The finished chunks of a folder, in order (not the ``chunk_*.tmp.nc`` a running process is writing)."""
    return sorted(folder.glob("chunk_[0-9][0-9][0-9][0-9][0-9].nc"))


def _done(folder: Path) -> set[int]:
    done: set[int] = set()
    for path in _chunk_files(folder):
        with xr.open_dataset(path) as ds:
            done.update(int(i) for i in ds["rep"].values)
    return done


#: Cache folder of the current estimator's repetitions (``<results>/debiased/<CHUNKS>/<setting>``); the
#: first round's caches (weights clipped at 20, sample ESS only) stay in ``<results>/debiased/<setting>``.
CHUNKS = "v4"
#: Fewest repetitions of the current estimator a setting's row needs (the issue's R >= 100); below it the latest
#: earlier estimator's cache with more repetitions is summarised instead (:data:`PREVIOUS`; round 4: the density
#: ratio on the raw scale; round 1: weights clipped at 20, sample ESS >= 10, normal quantiles, no HC3), labelled,
#: with the paired comparison on the data sets both ran.
MIN_R = 100
#: Settings of a quick (smoke) run, and of the full run in the order they are computed.
QUICK_SETTINGS = ("B_rf_n500", "K_cat_gbm_n1000", "L_logit_gbc_n1000")


def _folder(ctx: C.Context, name: str, localize: str, ratio_model: str | None = None) -> Path:
    """``<setting>`` (the default estimator), ``<setting>__residual``, ``<setting>__<ratio model>`` (a fixed one)."""
    suffix = "".join(f"__{v}" for v in ((localize if localize != "pseudo-outcome" else None), ratio_model) if v)
    return ctx.study_dir(STUDY) / CHUNKS / f"{name}{suffix}"


def compute(ctx: C.Context, *, R: int | None = None, settings: list[str] | None = None, chunk: int = 5,
            until: datetime.datetime | None = None, figures: bool = True) -> None:
    """Round-robin: one chunk of repetitions of every unfinished setting in turn, until R or ``until`` (UTC).

    Defaults: R = 2 (quick) or 200 (full); every setting (full) or :data:`QUICK_SETTINGS`.  Then the
    debiased results behind the figure (:func:`compute_figures`).  The comparison arms cached in
    ``<setting>__residual`` and ``<setting>__<ratio model>`` were computed with estimator variants the package
    no longer has; they are only read (``--summary --localize/--ratio-model``).
    """
    R = R if R is not None else (2 if ctx.quick else 200)
    settings = list(settings or (QUICK_SETTINGS if ctx.quick else SETTINGS))
    _compute_reps(ctx, R=R, settings=settings, chunk=chunk, until=until)
    if figures and (until is None or datetime.datetime.now(datetime.timezone.utc) < until):
        compute_figures(ctx)


def _round_robin(folders: dict[str, Path], R: int, chunk: int, until, run_chunk) -> None:
    """One chunk of repetitions of every unfinished setting in turn, until each has ``R`` or ``until`` (UTC).

    ``folders`` maps a setting to its cache folder; ``run_chunk(name, todo, seeds)`` computes the
    repetitions ``todo`` (consecutive, not yet cached) from the setting's per-repetition seeds and
    writes them to ``folders[name] / chunk_<first>.nc``.  Resumable and extendable: what is cached
    is never recomputed, a larger ``R`` only adds chunks.
    """
    for f in folders.values():
        f.mkdir(parents=True, exist_ok=True)
    seeds = {name: C.seed_sequence(SEED, name).spawn(max(R, 1)) for name in folders}
    active = list(folders)
    while active:
        for name in list(active):
            if until is not None and datetime.datetime.now(datetime.timezone.utc) >= until:
                return
            done = _done(folders[name])
            todo = [i for i in range(R) if i not in done][:chunk]
            if not todo:
                active.remove(name)
                continue
            todo = [i for i in todo if i < todo[0] + chunk and all(j not in done for j in range(todo[0], i + 1))]
            with threadpool_limits(1):
                run_chunk(name, todo, seeds[name])
            print(f"  {folders[name].name}: {len(done) + len(todo)}/{R}", file=sys.stderr, flush=True)


def _compute_reps(ctx: C.Context, *, R: int, settings: list[str], chunk: int, until) -> None:
    def run_chunk(name, todo, seeds):
        reps = [one_repetition(SETTINGS[name], seeds[i], ctx.quick) for i in todo]
        C.save_dataset(_chunk(SETTINGS[name], reps, todo[0]),
                       _folder(ctx, name, "pseudo-outcome") / f"chunk_{todo[0]:05d}.nc")
        print(f"  debiased {name}: {np.mean([r['cpu'] for r in reps]):.1f} s CPU per repetition", file=sys.stderr,
              flush=True)

    _round_robin({name: _folder(ctx, name, "pseudo-outcome") for name in settings}, R, chunk, until, run_chunk)


def _truth(setting: dict, ds: xr.Dataset) -> np.ndarray:
    """The DGP's PD on a chunk dataset's grid, (feature, grid)."""
    grid = ds["grid_value"].values
    return np.stack([dgp_pd(setting, f, grid[i] if grid.ndim == 2 else grid)
                     for i, f in enumerate(setting["features"])])


#: Refits of the learner's bootstrap on the same data sets (``--refit``): enough for band widths.
REFIT_B = 100


def _refit_folder(ctx: C.Context, name: str) -> Path:
    return ctx.study_dir(STUDY) / CHUNKS / f"{name}__refit"


def refit_repetition(setting: dict, seed: np.random.SeedSequence, quick: bool, B: int) -> dict:
    """The learner's refit bootstrap on the data set of :func:`one_repetition` (same ``seed``).

    The package's default bands: percentile pointwise (``pd_band_pointwise``) and sup-t whole-curve
    (``pd_band``), 95 %; the bootstrap's own seed is the seed's third child (the first two are the data's
    and the debiased fit's).
    """
    data_seed, _ = seed.spawn(2)
    (boot_seed,) = seed.spawn(1)
    X, y = simulate(setting, setting["n"], data_seed)
    custom = {f: grid_of(setting, f) for f in setting["features"]}
    start = time.process_time()
    res = pdpboot.bootstrap_partial_dependence(
        make_learner(setting["learner"], quick), X, y, setting["features"], n_resamples=B,
        grid=Grid(custom_values=custom, categorical_features=setting.get("categorical")),
        rng=np.random.default_rng(boot_seed),
        resampling="bootstrap",  # the archived comparison is with the plain bootstrap (before resampling="auto")
        execution=pdpboot.Execution(n_jobs=1, progress=False))
    with warnings.catch_warnings():   # the boosted classifier's known refit under-coverage: measured here, not new
        warnings.simplefilter("ignore", pdpboot.CoverageWarning)
        bands = pdpboot.confidence_bands(res, confidence_level=LEVEL, simultaneous=True)
    cpu = time.process_time() - start
    nodes = [pdpboot.get_node(bands, f"x{f}").ds for f in setting["features"]]
    return {"cpu": cpu, "pd": np.stack([d["pd"].values[-1] for d in nodes]),
            "pd_band": np.stack([d["pd_band_pointwise"].values[:, -1] for d in nodes], axis=1),
            "pd_band_simultaneous": np.stack([d["pd_band"].values[:, -1] for d in nodes], axis=1)}


def compute_refit(ctx: C.Context, *, R: int = 10, settings: list[str] | None = None, chunk: int = 2,
                  B: int = REFIT_B, until: datetime.datetime | None = None) -> None:
    """Round-robin over the settings: the refit bootstrap on the first ``R`` data sets of each, cached in chunks."""
    settings = list(settings or (QUICK_SETTINGS if ctx.quick else SETTINGS))

    def run_chunk(name, todo, seeds):
        reps = [refit_repetition(SETTINGS[name], seeds[i], ctx.quick, B) for i in todo]
        ds = _chunk(SETTINGS[name], reps, todo[0], curves=("pd",)).assign_attrs(n_resamples=B)
        C.save_dataset(ds, _refit_folder(ctx, name) / f"chunk_{todo[0]:05d}.nc")
        print(f"  refit {name}: {np.mean([r['cpu'] for r in reps]):.1f} s CPU per repetition, B = {B}",
              file=sys.stderr, flush=True)

    _round_robin({name: _refit_folder(ctx, name) for name in settings}, R, chunk, until, run_chunk)


def _coverage(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray, ok: np.ndarray) -> dict:
    """Pointwise and whole-curve coverage per repetition (R, F, G) -> means and MC SEs; unflagged points only."""
    inside = np.where(ok, (lo <= truth) & (truth <= hi), True)
    R = inside.shape[0]
    out = {}
    for kind, per_rep in (("pointwise", inside.mean(axis=(1, 2))), ("simultaneous", inside.all(axis=2).mean(axis=1))):
        out[kind] = float(per_rep.mean())
        out[f"{kind}_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
    return out


def refit_same_data(ctx: C.Context, name: str, debiased: xr.Dataset) -> dict:
    """The refit bootstrap on the debiased run's own data sets: widths, ratios and its DGP coverage.

    Width ratio of one repetition: the debiased band's mean width over the grid points it does not
    flag, over the refit band's mean width at the same points; the row reports the mean over
    repetitions with its MC SE (pointwise: percentile; whole curve: sup-t).
    """
    chunks = _chunk_files(_refit_folder(ctx, name))
    if not chunks:
        return {}
    refit = xr.concat([C.load_dataset(p) for p in chunks], dim="rep").sortby("rep")
    reps = np.intersect1d(refit["rep"].values, debiased["rep"].values)
    if reps.size == 0:
        return {}
    refit, debiased = refit.sel(rep=reps), debiased.sel(rep=reps)
    truth = _truth(SETTINGS[name], refit)
    ok = debiased["overlap"].values.astype(bool)
    everywhere = np.ones_like(ok)
    out = {"R": int(reps.size), "B": int(refit.attrs.get("n_resamples", REFIT_B)), "cpu": float(refit["cpu"].mean())}
    for key, var in (("percentile", "pd_band"), ("supt", "pd_band_simultaneous")):
        lo, hi = (refit[var].sel(ci_bound=b).values for b in ("lower", "upper"))
        dlo, dhi = (debiased[var].sel(ci_bound=b).values for b in ("lower", "upper"))
        width = np.nanmean(np.where(ok, hi - lo, np.nan), axis=(1, 2))
        ratio = np.nanmean(np.where(ok, dhi - dlo, np.nan), axis=(1, 2)) / width
        out[key] = {"width": float(np.mean(width)), "ratio": float(np.mean(ratio)),
                    "ratio_mcse": float(np.std(ratio, ddof=1) / np.sqrt(reps.size)) if reps.size > 1 else np.nan,
                    **_coverage(lo, hi, truth, everywhere)}
    return out


def _refit(name: str | None) -> dict:
    """Refit-bootstrap (B = 200) widths and DGP coverage of the same scenario from the archived study."""
    if name is None:
        return {}
    path = C.ARCHIVE / "coverage" / "summary" / f"{name}.nc"
    if not path.exists():
        return {}
    with xr.open_dataset(path) as ds:
        out = {}
        for b in range(ds.sizes["band"]):
            if int(ds.B.values[b]) != 200 or str(ds.background.values[b]) != "resample":
                continue
            method = str(ds.method.values[b])
            if method in ("percentile", "supt"):
                out[method] = {"width": float(ds.width.isel(band=b).mean()),
                               "pointwise": float(ds.pointwise.isel(band=b).sel(truth="dgp").mean()),
                               "simultaneous": float(ds.simultaneous.isel(band=b).sel(truth="dgp").mean()),
                               "R": int(ds.sizes["rep"])}
        return out


def summarize_setting(ctx: C.Context, name: str, localize: str = "pseudo-outcome",
                      ratio_model: str | None = None) -> dict | None:
    """Coverage of the DGP's PD with Monte Carlo SEs, widths, overlap and cost of one setting."""
    current = _chunk_files(_folder(ctx, name, localize, ratio_model))
    chunks, estimator = current, "current" if ratio_model is None else f"ratio model {ratio_model}"
    # not rerun (enough): the latest earlier run with MIN_R repetitions (else the largest), labelled
    if localize == "pseudo-outcome" and ratio_model is None and _reps(current) < MIN_R:
        for label, folder in PREVIOUS:
            older = _chunk_files(ctx.study_dir(STUDY) / folder / name)
            if _reps(older) > _reps(chunks):
                chunks, estimator = older, label
                if _reps(older) >= MIN_R:
                    break
    if not chunks:
        return None
    ds = xr.concat([C.load_dataset(p) for p in chunks], dim="rep").sortby("rep")
    setting = SETTINGS[name]
    truth = _truth(setting, ds)                                                       # (F, G)
    R = ds.sizes["rep"]
    ok = ds["overlap"].values.astype(bool)                                             # (R, F, G)
    out = {"setting": name, "estimator": estimator, "R": R, "cpu": float(ds["cpu"].mean()),
           "flagged": float(1 - ok.mean())}
    for kind, var in (("pointwise", "pd_band"), ("simultaneous", "pd_band_simultaneous")):
        lo = ds[var].sel(ci_bound="lower").values
        hi = ds[var].sel(ci_bound="upper").values
        inside = (lo <= truth) & (truth <= hi)
        covered = ok & inside                  # over the whole grid: a flagged point counts as not covered
        out[f"{kind}_grid_covered_share"] = float(covered.mean())
        if kind == "simultaneous":
            whole = covered.all(axis=2).mean(axis=1)
            out["simultaneous_whole_grid"] = float(whole.mean())
            out["simultaneous_whole_grid_mcse"] = float(whole.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
        inside = np.where(ok, inside, True)    # flagged points have no band; they are not claimed
        per_rep = inside.mean(axis=(1, 2)) if kind == "pointwise" else inside.all(axis=2).mean(axis=1)
        out[kind] = float(per_rep.mean())
        out[f"{kind}_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
        out[f"{kind}_width"] = float(np.nanmean(np.where(ok, hi - lo, np.nan)))
        if kind == "pointwise":
            out["by_feature"] = inside.mean(axis=(0, 2)).round(3).tolist()
            out["by_grid"] = inside.mean(axis=(0, 1)).round(3).tolist()
            out["edge"] = float(inside[:, :, [0, -1]].mean())
        elif inside.shape[2] > 2:  # whole curve without the two outermost grid points (where overlap is thinnest)
            interior = inside[:, :, 1:-1].all(axis=2).mean(axis=1)
            out["simultaneous_interior"] = float(interior.mean())
            out["simultaneous_interior_mcse"] = float(interior.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
    est = ds["pd"].values
    plug = ds["pd_plugin"].values
    se = ds["pd_se"].values
    sd = est.std(axis=0, ddof=1) if R > 1 else np.full(est.shape[1:], np.nan)
    out["se_over_sd"] = float(np.mean(se.mean(axis=0) / sd))
    out["bias_over_sd"] = float(np.mean(np.abs(est.mean(axis=0) - truth) / sd))
    out["plugin_bias_over_sd"] = float(np.mean(np.abs(plug.mean(axis=0) - truth) / sd))
    out["min_ess"] = float(ds["effective_sample_size"].min())
    refit = _refit(setting["refit"])
    if refit:  # the coverage study's B = 200 runs (other data sets of the same design): the fallback for the ratio
        out["refit"] = refit
        out["width_ratio_pointwise"] = out["pointwise_width"] / refit["percentile"]["width"]
        out["width_ratio_simultaneous"] = out["simultaneous_width"] / refit["supt"]["width"]
    if estimator != "current" and ratio_model is None:  # paired with the newest estimator that ran some data sets
        newer = [("current", current)] + [(label, _chunk_files(ctx.study_dir(STUDY) / folder / name))
                                          for label, folder in PREVIOUS]
        for label, files in newer:
            if label == estimator:
                break
            if files:
                out["paired_current"] = dict(_paired(ds, xr.concat([C.load_dataset(p) for p in files], dim="rep"),
                                                     truth), against=label)
                break
    if "ratio_choice" in ds:
        choice = ds["ratio_choice"].values
        numeric = choice[choice >= 0]
        out["ratio_choice"] = ({m: float((numeric == i).mean()) for i, m in enumerate(RATIO_MODELS)}
                               if numeric.size else {})
        out["clipped_share"] = float(np.nanmean(ds["clipped_share"].values))
    same = (refit_same_data(ctx, name, ds) if localize == "pseudo-outcome" and ratio_model is None
            and estimator != "round 1" else {})
    if same:
        out["refit_same_data"] = same
        out["width_ratio_pointwise"] = same["percentile"]["ratio"]
        out["width_ratio_pointwise_mcse"] = same["percentile"]["ratio_mcse"]
        out["width_ratio_simultaneous"] = same["supt"]["ratio"]
        out["width_ratio_simultaneous_mcse"] = same["supt"]["ratio_mcse"]
    return out


def _reps(chunks: list[Path]) -> int:
    """Repetitions in a list of chunk files."""
    total = 0
    for path in chunks:
        with xr.open_dataset(path) as ds:
            total += ds.sizes["rep"]
    return total


def _paired(previous: xr.Dataset, current: xr.Dataset, truth: np.ndarray) -> dict:
    """The current estimator against a previous one on their common data sets (same seeds).

    ``mean_abs_diff_se`` / ``max_abs_diff_se``: ``|pd_current - pd_previous| / se_previous`` over the
    grid points both leave unflagged; the two estimators' DGP coverage on those data sets.
    """
    reps = np.intersect1d(previous["rep"].values, current["rep"].values)
    prev, cur = previous.sel(rep=reps), current.sel(rep=reps)
    ok = prev["overlap"].values.astype(bool) & cur["overlap"].values.astype(bool)
    diff = np.abs(cur["pd"].values - prev["pd"].values) / prev["pd_se"].values
    out = {"R": int(reps.size), "mean_abs_diff_se": float(diff[ok].mean()), "max_abs_diff_se": float(diff[ok].max())}
    for key, ds in (("previous", prev), ("current", cur)):
        lo, hi = (ds["pd_band"].sel(ci_bound=b).values for b in ("lower", "upper"))
        slo, shi = (ds["pd_band_simultaneous"].sel(ci_bound=b).values for b in ("lower", "upper"))
        flag_ok = ds["overlap"].values.astype(bool)
        out[key] = {"pointwise": _coverage(lo, hi, truth, flag_ok)["pointwise"],
                    "simultaneous": _coverage(slo, shi, truth, flag_ok)["simultaneous"],
                    "flagged": float(1 - flag_ok.mean())}
    return out


#: Earlier estimators' caches, newest first (``<results>/debiased/<folder>/<setting>``): summarised, and labelled,
#: where the current one has fewer than :data:`MIN_R` repetitions of a setting.
PREVIOUS = (("round 5", "v3"), ("round 4", "v2"), ("round 1", "."))

ARCHIVE = ("summary.json", "figure_electricity.nc", "figure_anes.nc")
ELECTRICITY_FEATURES = ["Temperature", "Hour", "Day"]
ANES_FEATURES = ["selfLR", "age", "income"]


def summarize(ctx: C.Context) -> list[dict]:
    """``summary.json`` in the study folder: one row per setting with finished repetitions (the table's source)."""
    rows = [row for name in SETTINGS if (row := summarize_setting(ctx, name)) is not None]
    (ctx.study_dir(STUDY) / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def compute_figures(ctx: C.Context) -> None:
    """The debiased results the figure draws next to the learner's refit bands (cached in the study folder).

    Electricity: the data, forest (100 trees) and grid (25 points, Day categorical) of
    :mod:`experiments.electricity`, whose archived B = 200 percentile bands are the learner's.
    ANES 1996: the boosted classifier and 20-point grid of :mod:`experiments.real_data`
    (B = 200 learner bands archived there); self-placement (7 values) as levels.
    """
    from sklearn.ensemble import RandomForestRegressor

    from pdpboot.datasets import load_anes96, make_electricity_prices

    from .config import config
    from .real_data import _anes_model

    folder = ctx.study_dir(STUDY)
    path = folder / "figure_electricity.nc"
    if ctx.needs(path):
        cfg = config("electricity", ctx.quick)
        X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
        with threadpool_limits(1), no_band_quiet():
            res = pdpboot.debiased_partial_dependence(
                RandomForestRegressor(n_estimators=cfg["n_trees"]), X, y, ELECTRICITY_FEATURES,
                grid=Grid(cfg["grid_resolution"], categorical_features=["Day"]), rng=cfg["seed"])
        pdpboot.save(res, path)
    path = folder / "figure_anes.nc"
    if ctx.needs(path):
        cfg = config("real_data", ctx.quick)
        X, y = load_anes96()
        with threadpool_limits(1), no_band_quiet():
            res = pdpboot.debiased_partial_dependence(
                _anes_model(cfg["anes"]["max_iter"]), X, y, ANES_FEATURES,
                grid=Grid(cfg["anes"]["grid_resolution"], categorical_features=["selfLR"]), rng=cfg["seed"])
        pdpboot.save(res, path)


def _learner_bands(ctx: C.Context, study: str, name: str):
    """The learner's archived refit bands (from this run's results folder, else the committed archive)."""
    path = Path(ctx.results_dir) / study / name
    return pdpboot.load(path if path.exists() else C.ARCHIVE / study / name, verify=False)


def _figure(ctx: C.Context) -> None:
    """Learner band (refit bootstrap) next to the data's band (debiased) on electricity (top) and ANES (bottom)."""
    import matplotlib.pyplot as plt

    from pdpboot.plotting import paper_style

    folder = ctx.study_dir(STUDY)
    rows = [("electricity", pdpboot.load(folder / "figure_electricity.nc"),
             _learner_bands(ctx, "electricity", "bands_resample.nc"), ELECTRICITY_FEATURES, "Price", None),
            ("anes", pdpboot.load(folder / "figure_anes.nc"), _learner_bands(ctx, "real_data", "anes_bands.nc"),
             ANES_FEATURES, "P(Dole vote)", "Dole")]
    labels = {"selfLR": "self-placement (1 liberal, 7 conservative)", "income": "income bracket",
              "age": "age", "Temperature": "Temperature", "Hour": "Hour", "Day": "Day"}
    with paper_style(7):
        fig, axes = plt.subplots(2, 3, figsize=(C.FULL_WIDTH, 4.2), layout="constrained")
        for r, (data, dgp, learner, features, ylabel, output) in enumerate(rows):
            for c, feature in enumerate(features):
                ax = axes[r, c]
                dg = pdpboot.get_node(dgp, feature).ds
                ln = pdpboot.get_node(learner, feature).ds
                out = -1 if output is None else list(dg["output"].values).index(output)
                x = dg[feature].values.astype(float)   # every feature drawn here is numeric (levels: 0..6, 1..7)
                levels = feature in ("Day", "selfLR")
                pos = x
                step = "mid" if levels else None
                lband = ln["pd_band_pointwise"] if "pd_band_pointwise" in ln else ln["pd_band"]
                lo, hi = lband.isel(output=out).values
                lx = ln[feature].values.astype(float)   # the learner's own grid (the same in the full run)
                ax.fill_between(lx, lo, hi, color="tab:orange", alpha=0.35, step=step, lw=0,
                                label=f"learner's PD: refit bootstrap, B = {learner.attrs.get('n_resamples', '')}")
                ax.plot(lx, ln["pd"].isel(output=out).values, color="tab:orange", lw=1,
                        drawstyle="steps-mid" if levels else "default")
                dlo, dhi = dg["pd_band"].isel(output=out).values
                slo, shi = dg["pd_band_simultaneous"].isel(output=out).values
                ax.fill_between(pos, dlo, dhi, color="tab:blue", alpha=0.3, step=step, lw=0,
                                label="data's PD: debiased, pointwise")
                draw = "steps-mid" if levels else "default"
                ax.plot(pos, slo, color="tab:blue", lw=0.7, ls="--", drawstyle=draw,
                        label="data's PD: debiased, whole curve")
                ax.plot(pos, shi, color="tab:blue", lw=0.7, ls="--", drawstyle=draw)
                est = dg["pd"].isel(output=out).values
                flagged = dg["overlap"].isel(output=out).values == 0
                ax.plot(pos, np.where(flagged, np.nan, est), color="tab:blue", lw=1)
                if flagged.any():
                    ax.plot(pos[flagged], est[flagged], "x", color="tab:red", ms=3,
                            label="thin overlap: no band")
                if data == "electricity":
                    ax.plot(pos, true_pd("electricity", feature, x), color="black", lw=1.1, label="true PD")
                if levels:
                    ax.set_xticks(pos, [f"{v:g}" for v in x])
                ax.set_xlabel(labels[feature])
                ax.set_ylabel(ylabel if c == 0 else "")
        handles, names = [], []
        for ax in axes.flat:
            for h, n in zip(*ax.get_legend_handles_labels()):
                if n not in names:
                    handles.append(h)
                    names.append(n)
        fig.legend(handles, names, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "debiased_bands")


SHORT = {"B": "Friedman 1 (B)", "G": "correlated (G)", "K": "categorical (K)", "L": "binary (L)",
         "V": "half-normal, heterosc. (V)",
         "H": "skewed, heterosc. (H)", "E": "exponential, heterosc. (E)"}
LEARNER = {"rf": "forest", "gbm": "boosting", "mlp": "network", "gbc": "boosting"}


def _cell(value: float | None, se: float | None = None, digits: int = 3) -> str:
    if value is None or value != value:
        return "--"
    return f"{value:.{digits}f}" + ("" if se is None or se != se else f" ({se:.{digits}f})")


def _refit_cells(row: dict) -> list[str]:
    """Width ratios and the refit band's DGP coverage: on the same data sets if run, else the coverage study's."""
    same = row.get("refit_same_data")
    if same:
        return [_cell(row["width_ratio_pointwise"], digits=2), _cell(row["width_ratio_simultaneous"], digits=2),
                str(same["R"]), _cell(same["percentile"]["pointwise"], same["percentile"]["pointwise_mcse"], digits=2),
                _cell(same["supt"]["simultaneous"], same["supt"]["simultaneous_mcse"], digits=2)]
    refit = row.get("refit", {})
    return [_cell(row.get("width_ratio_pointwise"), digits=2), _cell(row.get("width_ratio_simultaneous"), digits=2),
            str(refit["percentile"]["R"]) + "$^\\dagger$" if refit else "--",
            _cell(refit.get("percentile", {}).get("pointwise"), digits=2),
            _cell(refit.get("supt", {}).get("simultaneous"), digits=2)]


#: Table marks of the rows that show an earlier estimator (not rerun).
MARKERS = {"round 1": "$^*$", "round 4": "$^\\ddagger$", "round 5": "$^\\S$"}


def _table(rows: list[dict]) -> str:
    lines = [r"\begin{tabular}{llrrllrrrrll}", r"\toprule",
             r" & & & & \multicolumn{2}{c}{debiased: DGP coverage (MC SE)} & & \multicolumn{2}{c}{width / refit} & "
             r"\multicolumn{3}{c}{refit band: DGP coverage (MC SE)} \\",
             r"\cmidrule(lr){5-6}\cmidrule(lr){8-9}\cmidrule(lr){10-12}",
             r"DGP & learner & $n$ & $R$ & pointwise & whole curve & flagged & pw & sup-$t$ & $R$ & pw & whole \\",
             r"\midrule"]
    for row in rows:
        dgp, learner, n = row["setting"].split("_")[0], row["setting"].split("_")[-2], row["setting"].split("_n")[-1]
        lines.append(" & ".join([
            SHORT[dgp] + MARKERS.get(row.get("estimator"), ""), LEARNER[learner],
            f"{int(n):,}".replace(",", "{,}"), str(row["R"]),
            _cell(row["pointwise"], row["pointwise_mcse"]), _cell(row["simultaneous"], row["simultaneous_mcse"]),
            f"{row['flagged']:.3f}", *_refit_cells(row)]) + r" \\")
    lines += [r"\bottomrule"]
    same = [r["refit_same_data"] for r in rows if r.get("refit_same_data")]
    if same:
        lines.append(r"\multicolumn{12}{l}{width / refit and refit band: the learner's refit bootstrap "
                     f"(B = {same[0]['B']}, percentile pointwise, sup-$t$ whole curve) on the first $R$ data sets "
                     r"of the row} \\")
    if any(not r.get("refit_same_data") and r.get("refit") for r in rows):
        lines.append(r"\multicolumn{12}{l}{$^\dagger$ refit band (and width ratio: of mean widths) from the coverage "
                     r"study (B = 200, other data sets of the same design)} \\")
    notes = {"round 4": (r"$^\ddagger$ round-4 estimator (density ratio modelled on the raw scale of the features)"),
             "round 5": (r"$^\S$ round-5 estimator (density ratio: polynomial logistic on normal scores)")}
    for label, text in notes.items():
        previous = [row for row in rows if row.get("estimator") == label]
        if not previous:
            continue
        paired = [row["paired_current"] for row in previous if row.get("paired_current")]
        against = paired[0].get("against", "current").replace("round ", "round-") if paired else ""
        note = (f"; on the first {min(p['R'] for p in paired)}--{max(p['R'] for p in paired)} data sets the {against} "
                f"estimate differs from it by {max(p['mean_abs_diff_se'] for p in paired):.2f} SE on average at most"
                if paired else "")
        lines.append(r"\multicolumn{12}{l}{" + text + ", not rerun for lack of CPU" + note + r"} \\")
    if any(row.get("estimator") == "round 1" for row in rows):
        lines.append(r"\multicolumn{12}{l}{$^*$ first-round estimator (weights clipped at 20, overlap from the drawn "
                     r"weights, normal quantiles); not rerun for lack of time} \\")
    lines += [r"\end{tabular}", ""]
    return "\n".join(lines)


def _macros(rows: list[dict]) -> dict:
    b = [r for r in rows if r["setting"].startswith("B_")]
    out = {"DebiasedRMin": str(min((r["R"] for r in rows), default=0)),
           "DebiasedRMax": str(max((r["R"] for r in rows), default=0))}
    for kind, key in (("pointwise", "Pointwise"), ("simultaneous", "Whole")):
        vals = [r[kind] for r in b]
        out[f"DebiasedB{key}Min"] = _cell(min(vals) if vals else None)
        out[f"DebiasedB{key}Max"] = _cell(max(vals) if vals else None)
    ratios = [r["width_ratio_pointwise"] for r in b if "width_ratio_pointwise" in r]
    out["DebiasedWidthRatioMin"] = _cell(min(ratios) if ratios else None, digits=2)
    out["DebiasedWidthRatioMax"] = _cell(max(ratios) if ratios else None, digits=2)
    rf = next((r for r in b if r["setting"] == "B_rf_n500" and "refit" in r), None)
    out["DebiasedRefitRFPointwise"] = _cell(rf["refit"]["percentile"]["pointwise"] if rf else None, digits=2)
    out["DebiasedRefitRFWhole"] = _cell(rf["refit"]["percentile"]["simultaneous"] if rf else None, digits=2)
    for letter in ("G", "K", "L", "H", "E", "V"):
        row = next((r for r in rows if r["setting"].startswith(f"{letter}_")), None)
        for kind, key in (("pointwise", "Pointwise"), ("simultaneous", "Whole")):
            out[f"Debiased{letter}{key}"] = _cell(row[kind] if row else None)
            out[f"Debiased{letter}{key}SE"] = _cell(row[f"{kind}_mcse"] if row else None)
        out[f"Debiased{letter}Flagged"] = _cell(row["flagged"] if row else None)
    return out


def render(ctx: C.Context) -> list[dict]:
    """``tables/debiased_coverage``, ``figures/debiased_bands`` and ``generated/debiased`` from the study folder."""
    rows = json.loads((ctx.study_dir(STUDY) / "summary.json").read_text())
    C.write_table(ctx.out("tables", "debiased_coverage.tex"), _table(rows))
    C.write_macros(ctx.out("generated", "debiased.tex"), _macros(rows),
                   "experiments/debiased_coverage.py: coverage of the debiased bands for the DGP's PD")
    _figure(ctx)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--R", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=5)
    parser.add_argument("--settings", nargs="*", default=None)
    parser.add_argument("--until", default=None, help="stop starting chunks at this UTC time (HH:MM)")
    parser.add_argument("--summary", action="store_true", help="write summary.json in the study folder and print it")
    parser.add_argument("--localize", default="pseudo-outcome", choices=["pseudo-outcome", "residual"],
                        help="with --summary: the cached comparison arm <setting>__residual")
    parser.add_argument("--ratio-model", default=None, choices=list(RATIO_MODELS),
                        help="with --summary: the cached comparison arm <setting>__<model> (a fixed ratio model)")
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--no-figures", action="store_true", help="only the repetitions (not the figure's results)")
    parser.add_argument("--refit", action="store_true",
                        help="the learner's refit bootstrap on the first R data sets of every setting (R default 10)")
    parser.add_argument("--B", type=int, default=REFIT_B, help="refits per data set with --refit")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, results_dir=args.results_dir, n_jobs=1)
    if args.summary:
        if args.localize != "pseudo-outcome" or args.ratio_model:
            for name in args.settings or list(SETTINGS):
                print(summarize_setting(ctx, name, args.localize, args.ratio_model))
            return
        for row in summarize(ctx):
            print(row)
        return
    until = None
    if args.until:
        hh, mm = map(int, args.until.split(":"))
        now = datetime.datetime.now(datetime.timezone.utc)
        until = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if args.refit:
        compute_refit(ctx, R=args.R if args.R is not None else (2 if ctx.quick else 10), settings=args.settings,
                      chunk=args.chunk, B=args.B, until=until)
        return
    if args.localize != "pseudo-outcome" or args.ratio_model:
        parser.error("--localize and --ratio-model only summarise cached comparison arms (with --summary)")
    compute(ctx, R=args.R, settings=args.settings, chunk=args.chunk, until=until, figures=not args.no_figures)


if __name__ == "__main__":
    main()
