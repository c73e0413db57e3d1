"""Fresh designs for issue 40, committed before any of their results.

Every design in this module was written down, and committed, before a single repetition of it was run: its
results are reported apart from the designs the package's defaults were tuned on (experiments/coverage.py,
classifier_se.py, classifier_default.py, debiased_coverage.py).  Changing a design after its results exist
makes it a tuned design; add a new one instead.

Two families, each with its own target.

``DEBIASED`` -- the debiased estimator (``pdpboot.debiased_partial_dependence``); target: the *data's* PD of x1
(``E_X[mu(a, X_C)]``), analytic where it has a closed form, else by Monte Carlo over ``TRUTH_DRAWS`` = 400,000
draws of the other features.  n = 1,000, PD of x1 on the 15-point grid at the N(0, 1) 5..95 % quantiles
(``GRID_NORMAL``; x1 is N(0, 1) in every design).

- ``strong_rho080`` / ``strong_rho095`` (forest): ``(x1, x2, x3)`` Gaussian, ``corr(x1, x2) = rho``,
  ``corr(x1, x3) = 0.3``; ``y = 2 sin(1.5 x1) + x1 x2 + x2 + 0.5 x3^2 + e``; PD ``2 sin(1.5 a) + 0.5``.
- ``categorical`` (pipeline: one-hot encoder on column 2 + forest): ``x1, x2 ~ N(0, 1)``, a level
  ``c in {0, 1, 2, 3}`` (column 2, integer-coded) with multinomial-logit propensity, logits
  ``(0, 1.2 x1, -1.2 x1, 0.5 x2)``; ``y = sin(2 x1) + tau_c + 0.8 1{c = 1} x1 + x2 + e``,
  ``tau = (0, 1, -0.5, 0.5)``; PD of x1 ``sin(2 a) + E tau_c + 0.8 a P(c = 1)`` (the two expectations by
  Monte Carlo).
- ``binary`` (HistGradientBoostingClassifier, probability of class 1): ``(x1, x2, x3)`` Gaussian,
  ``corr(x1, x2) = 0.5``, ``corr(x2, x3) = 0.3``; ``P(y = 1 | x) = expit(-0.3 + 2 tanh(1.5 x1) - 0.8 x2
  + 0.6 x1 x3)``; PD by Monte Carlo over ``(x2, x3)``.
- ``p12`` (forest): 12 equicorrelated Gaussian features (``rho = 0.3``), three relevant;
  ``y = 2 sin(1.5 x1) + x1 x2 + x3^2 + e``; PD ``2 sin(1.5 a) + 1``.
- ``sine_rho060_rf`` / ``sine_rho060_gbm`` (the audit's design as we read it: five Gaussian features,
  ``corr(x1, x2) = 0.6``, sine + interaction, with the ``1.5 tanh(2 a)`` bend the audit names):
  ``y = 1.5 tanh(2 x1) + sin(2 x2) + x1 x2 + 0.5 x3 - 0.5 x4 + e``; PD ``1.5 tanh(2 a)``
  (``E sin(2 x2) = E x2 = 0``).

``e ~ N(0, 1)`` throughout.

``CLASSIFIER`` -- the classifier default ``resampling="auto"`` (``pdpboot.bootstrap_partial_dependence``, B = 100);
target: the *learner's* expected PD (``E_D`` of the fit's PD over its own rows), truth and true SD from
``TRUTH_FITS`` = 200 fits on independent data sets (:func:`learner_truth`).

- ``threshold`` (n = 500): ``x1, x2`` Gaussian with ``corr = 0.3``, ``x3 ~ U(-1, 1)``;
  ``P(y = 1 | x) = expit(-1.2 + 2.5 expit(30 x1) + 0.8 x2 - 0.5 x3)`` (a step of 2.5 on the logit scale,
  10-90 % within |x1| < 0.07); PD of x1 on ``GRID_NORMAL`` (points at 0 and +/-0.12 next to the step).
  Learners: HistGradientBoostingClassifier at ``ROUNDS`` = (25, 50, 100, 200) rounds, and the MLP.
- ``rare`` (n = 500): ``x ~ N(0, I_3)``; ``P(y = 1 | x) = expit(RARE_INTERCEPT + 1.5 x1 + 0.8 x2 - 0.6 x3^2)``,
  base rate 5 %; same learners.
- ``scenario_e`` (n = 1,000): the paper's scenario E (experiments/coverage.py: ``x ~ N(0, I_2)``,
  ``logit P(y = 1) = 0.5 + 1.5 x1 - x2``), gradient-boosting classifier of 100 rounds
  (``experiments.learners.make_learner("gbc")``); PD of x1 and x2 on ``GRID_NORMAL``.

MLP: standardisation + ``MLPClassifier`` (one hidden layer of 20 tanh units, L-BFGS, 300 iterations,
L2 ``1e-2``): a flexible learner that is not a tree ensemble.

The package is reached through its public names only, in :func:`auto_band` and :func:`debiased_band`;
when the package's signatures change, only those two call sites change.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from scipy.stats import norm
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from . import coverage
from .learners import make_learner, reseed

SEED = 40_2026
GRID_NORMAL = norm.ppf(np.linspace(0.05, 0.95, 15))
TRUTH_DRAWS = 400_000
TRUTH_FITS = 200
B = 100
ROUNDS = (25, 50, 100, 200)
#: Intercept of ``rare`` giving ``P(y = 1) = 0.05`` (root of the base rate over 400,000 draws).
RARE_INTERCEPT = -3.63
TAU = np.array([0.0, 1.0, -0.5, 0.5])


# --------------------------------------------------------------------------- designs


@dataclass(frozen=True)
class Design:
    """One fresh design: a DGP, a learner, n, the PD features and their grid."""

    name: str
    dgp: str
    learner: str
    n: int
    features: tuple[int, ...] = (0,)
    grid: np.ndarray = field(default_factory=lambda: GRID_NORMAL)
    rounds: int | None = None  # HistGradientBoostingClassifier's max_iter

    def simulate(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        return simulate(self.dgp, n, np.random.default_rng(rng))

    def learner_factory(self):
        return make_estimator(self.learner, self.rounds)


def _debiased() -> dict[str, Design]:
    return {d.name: d for d in [
        Design("strong_rho080", "strong_rho080", "rf", 1000),
        Design("strong_rho095", "strong_rho095", "rf", 1000),
        Design("categorical", "categorical", "onehot_rf", 1000),
        Design("binary", "binary", "hgb_clf", 1000, rounds=100),
        Design("p12", "p12", "rf", 1000),
        Design("sine_rho060_rf", "sine_rho060", "rf", 1000),
        Design("sine_rho060_gbm", "sine_rho060", "gbm", 1000),
    ]}


def _classifier() -> dict[str, Design]:
    out = {}
    for dgp in ("threshold", "rare"):
        for rounds in ROUNDS:
            out[f"{dgp}_hgb{rounds}"] = Design(f"{dgp}_hgb{rounds}", dgp, "hgb_clf", 500, rounds=rounds)
        out[f"{dgp}_mlp"] = Design(f"{dgp}_mlp", dgp, "mlp_clf", 500)
    out["scenario_e_gbc"] = Design("scenario_e_gbc", "scenario_e", "gbc", 1000, features=(0, 1))
    return out


DEBIASED = _debiased()
CLASSIFIER = _classifier()


# --------------------------------------------------------------------------- DGPs


def _gauss(gen: np.random.Generator, n: int, cov) -> np.ndarray:
    cov = np.asarray(cov, dtype=float)
    return gen.standard_normal((n, cov.shape[0])) @ np.linalg.cholesky(cov).T


def _strong_cov(rho: float) -> np.ndarray:
    return np.array([[1.0, rho, 0.3], [rho, 1.0, 0.0], [0.3, 0.0, 1.0]])


COV_BINARY = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.0]])
COV_SINE = np.eye(5)
COV_SINE[0, 1] = COV_SINE[1, 0] = 0.6
COV_P12 = np.full((12, 12), 0.3) + 0.7 * np.eye(12)


def _categorical_probs(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    logits = np.column_stack([np.zeros_like(x1), 1.2 * x1, -1.2 * x1, 0.5 * x2])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def _binary_prob(X: np.ndarray) -> np.ndarray:
    return expit(-0.3 + 2 * np.tanh(1.5 * X[:, 0]) - 0.8 * X[:, 1] + 0.6 * X[:, 0] * X[:, 2])


def threshold_prob(X: np.ndarray) -> np.ndarray:
    """``P(y = 1 | x)`` of the ``threshold`` design."""
    return expit(-1.2 + 2.5 * expit(30 * X[:, 0]) + 0.8 * X[:, 1] - 0.5 * X[:, 2])


def rare_prob(X: np.ndarray) -> np.ndarray:
    """``P(y = 1 | x)`` of the ``rare`` design."""
    return expit(RARE_INTERCEPT + 1.5 * X[:, 0] + 0.8 * X[:, 1] - 0.6 * X[:, 2] ** 2)


def simulate(dgp: str, n: int, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One data set ``(X, y)`` of ``dgp`` (plain float arrays; binary ``y`` as int)."""
    if dgp in ("strong_rho080", "strong_rho095"):
        X = _gauss(gen, n, _strong_cov(0.8 if dgp == "strong_rho080" else 0.95))
        y = 2 * np.sin(1.5 * X[:, 0]) + X[:, 0] * X[:, 1] + X[:, 1] + 0.5 * X[:, 2] ** 2
        return X, y + gen.standard_normal(n)
    if dgp == "categorical":
        x = gen.standard_normal((n, 2))
        p = _categorical_probs(x[:, 0], x[:, 1])
        c = (gen.uniform(size=(n, 1)) > np.cumsum(p, axis=1)).sum(axis=1).clip(0, 3)
        y = np.sin(2 * x[:, 0]) + TAU[c] + 0.8 * (c == 1) * x[:, 0] + x[:, 1] + gen.standard_normal(n)
        return np.column_stack([x, c.astype(float)]), y
    if dgp == "binary":
        X = _gauss(gen, n, COV_BINARY)
        return X, (gen.uniform(size=n) < _binary_prob(X)).astype(int)
    if dgp == "p12":
        X = _gauss(gen, n, COV_P12)
        return X, 2 * np.sin(1.5 * X[:, 0]) + X[:, 0] * X[:, 1] + X[:, 2] ** 2 + gen.standard_normal(n)
    if dgp == "sine_rho060":
        X = _gauss(gen, n, COV_SINE)
        y = 1.5 * np.tanh(2 * X[:, 0]) + np.sin(2 * X[:, 1]) + X[:, 0] * X[:, 1] + 0.5 * X[:, 2] - 0.5 * X[:, 3]
        return X, y + gen.standard_normal(n)
    if dgp == "threshold":
        X = np.column_stack([_gauss(gen, n, [[1.0, 0.3], [0.3, 1.0]]), gen.uniform(-1, 1, size=n)])
        return X, (gen.uniform(size=n) < threshold_prob(X)).astype(int)
    if dgp == "rare":
        X = gen.standard_normal((n, 3))
        return X, (gen.uniform(size=n) < rare_prob(X)).astype(int)
    if dgp == "scenario_e":
        return coverage.simulate({"dgp": "logistic"}, n, gen)
    raise ValueError(f"unknown fresh DGP {dgp!r}")


def data_pd(dgp: str, grid: np.ndarray, feature: int = 0, draws: int = TRUTH_DRAWS, seed: int = SEED) -> np.ndarray:
    """The DGP's PD of ``feature`` on ``grid`` (the debiased estimator's target): closed form, else Monte Carlo
    over ``draws`` draws of the other features (a fixed seed, so the truth is one array)."""
    grid = np.asarray(grid, dtype=float)
    if feature != 0:
        raise ValueError("the debiased designs' PD is of x1 (feature 0) only")
    if dgp in ("strong_rho080", "strong_rho095"):
        return 2 * np.sin(1.5 * grid) + 0.5
    if dgp == "p12":
        return 2 * np.sin(1.5 * grid) + 1.0
    if dgp == "sine_rho060":
        return 1.5 * np.tanh(2 * grid)
    gen = np.random.default_rng(seed)
    if dgp == "categorical":  # E over (x1, x2, c) of tau_c and 1{c = 1}: the marginal of c
        x = gen.standard_normal((draws, 2))
        p = _categorical_probs(x[:, 0], x[:, 1]).mean(axis=0)
        return np.sin(2 * grid) + float(p @ TAU) + 0.8 * grid * p[1]
    if dgp == "binary":  # average the probability over the marginal of (x2, x3) at x1 = a
        other = _gauss(gen, draws, COV_BINARY)[:, 1:]
        out = np.empty(grid.size)
        for i, a in enumerate(grid):
            out[i] = _binary_prob(np.column_stack([np.full(draws, a), other])).mean()
        return out
    raise ValueError(f"no data PD for {dgp!r}")


# --------------------------------------------------------------------------- learners


class QuietMLPClassifier(MLPClassifier):
    """MLPClassifier that does not warn when L-BFGS stops at ``max_iter`` (a fixed budget is the design)."""

    def fit(self, X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return super().fit(X, y)


def make_estimator(name: str, rounds: int | None = None):
    """An unfitted learner of a fresh design."""
    if name == "hgb_clf":
        return HistGradientBoostingClassifier(max_iter=rounds or 100, learning_rate=0.1, early_stopping=False)
    if name == "mlp_clf":
        return make_pipeline(StandardScaler(), QuietMLPClassifier(hidden_layer_sizes=(20,), activation="tanh",
                                                                  solver="lbfgs", max_iter=300, alpha=1e-2))
    if name == "onehot_rf":
        encode = ColumnTransformer([("level", OneHotEncoder(categories=[[0.0, 1.0, 2.0, 3.0]]), [2])],
                                   remainder="passthrough")
        return make_pipeline(encode, RandomForestRegressor(n_estimators=30, max_features=0.33, min_samples_leaf=5))
    if name in ("rf", "gbm", "gbc"):
        return make_learner(name)
    raise ValueError(f"unknown fresh learner {name!r}")


# --------------------------------------------------------------------------- truths


def fit_pd(model, X: np.ndarray, features, grid: np.ndarray) -> np.ndarray:
    """PD of a fitted model over its rows ``X`` by brute force (probability of class 1 for a classifier):
    ``(len(features), len(grid))``."""
    n, g = X.shape[0], len(grid)
    out = np.empty((len(features), g))
    for f, j in enumerate(features):
        rows = np.repeat(X, g, axis=0)
        rows[:, j] = np.tile(grid, n)
        pred = model.predict_proba(rows)[:, 1] if hasattr(model, "predict_proba") else model.predict(rows)
        out[f] = pred.reshape(n, g).mean(axis=0)
    return out


def learner_truth(design: Design, fits: int = TRUTH_FITS, seed=None) -> np.ndarray:
    """PDs of ``fits`` fits on independent data sets of ``design`` (each over its own rows):
    ``(fits, len(features), len(grid))``; their mean is the learner's expected PD, their SD the true SD."""
    seed = np.random.SeedSequence([SEED, sum(map(ord, design.name)), 1]) if seed is None else seed
    out = []
    for s in seed.spawn(fits):
        data_seed, fit_seed = s.spawn(2)
        X, y = design.simulate(design.n, data_seed)
        model = reseed(clone(design.learner_factory()), np.random.default_rng(fit_seed)).fit(X, y)
        out.append(fit_pd(model, X, design.features, design.grid))
    return np.array(out)


def repetition_seed(design: Design, rep: int) -> np.random.SeedSequence:
    """The seed of data set ``rep`` of ``design`` (independent of the truth's)."""
    return np.random.SeedSequence([SEED, sum(map(ord, design.name)), 2, rep])


# --------------------------------------------------------------------------- the package's call sites


def auto_band(design: Design, X, y, rng, n_resamples: int = B, level: float = 0.95) -> dict[str, np.ndarray]:
    """The package's default band for a classifier (``resampling="auto"``): estimate, pointwise and
    simultaneous band, and the resamples, each ``(len(features), len(grid))`` (resamples ``(B, F, G)``),
    probability of class 1."""
    import pdpboot

    tree = pdpboot.bootstrap_partial_dependence(
        design.learner_factory(), X, y, list(design.features), n_resamples=n_resamples,
        grid=pdpboot.Grid(custom_values={f: np.asarray(design.grid) for f in design.features}), rng=rng,
        execution=pdpboot.Execution(n_jobs=1, threads_per_job=1, progress=False))
    tree = pdpboot.confidence_bands(tree, confidence_level=level, simultaneous=True)
    nodes = [tree[f"x{f}"].to_dataset() for f in design.features]

    def stack(var: str) -> np.ndarray:
        return np.stack([ds[var].sel(output=1).values for ds in nodes], axis=-2)

    return {"estimate": stack("pd"), "pointwise": stack("pd_band_pointwise"), "simultaneous": stack("pd_band"),
            "resamples": stack("pd_resamples"), "scale": tree.attrs.get("band_scale"),
            "resampling": tree.attrs.get("resampling")}


def debiased_band(design: Design, X, y, rng, level: float = 0.95) -> dict[str, np.ndarray]:
    """The debiased estimator of the data's PD of x1 with the package's defaults: estimate, pointwise band,
    and the variables it returns (``overlap`` among them), on ``design.grid``."""
    import pdpboot

    tree = pdpboot.debiased_partial_dependence(
        design.learner_factory(), X, y, [0], confidence_level=level,
        grid=pdpboot.Grid(custom_values={0: np.asarray(design.grid)}),
        rng=rng)
    ds = tree["x0"].to_dataset()
    if "output" in ds.dims:
        ds = ds.sel(output=ds["output"].values[-1])
    return {str(k): np.asarray(v.values) for k, v in ds.data_vars.items()}
