"""Bands for the data's partial dependence: a cross-fitted, doubly robust (debiased) estimator.

Every other band of the package is about the *learner's* PD: how the fitted model's curve varies
from sample to sample.  :func:`debiased_partial_dependence` targets the PD of the data-generating
process, ``theta(a) = E_C[E(Y | x_s = a, X_C)]``, with bands whose coverage does not depend on the
learner being unbiased: the learner's bias is estimated from held-out residuals reweighted by the
density ratio of ``x_s`` and ``x_C`` and removed (the estimator, its influence function and the
bandwidth rule are in :mod:`pdpboot.engine.debiased`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._assemble import band_variables, build_tree
from ._evaluate import PDEffect
from ._loop import fit_seeded
from ._plan import make_spec
from ._validate import check_positive_int, check_probability, check_rng, check_target
from .engine import debiased as eng
from .engine.brute import brute_partial_dependence
from .engine.refit import rows_of
from .engine.response import output_labels, resolve_response_method, response_function
from .header import ResultHeader
from .schema import node_name

METHOD = "debiased-crossfit"
#: Default minimum effective sample size of a grid point's window (below it: no band there).
MIN_EFFECTIVE_SIZE = 20.0
#: Default range of the local weight mass (population value 1 under overlap) outside which a grid point is flagged.
WEIGHT_MASS_RANGE = (0.5, 2.0)
#: Scales of the density-ratio model's inputs (:class:`DebiasedOptions`).
RATIO_SCALES = ("normal-scores", "both", "standardized")
#: Density-ratio models of a numeric feature (:class:`DebiasedOptions`); ``"auto"`` picks one of
#: :data:`AUTO_RATIO_MODELS` per feature by cross-fitted (held-out) classification loss.
RATIO_MODELS = ("spline", "polynomial", "boosting", "auto")
#: Fewest training rows (real, not permuted) per column of the spline basis; with fewer, ``ratio_model="spline"``
#: uses the polynomial basis (:class:`DebiasedOptions`).
MIN_ROWS_PER_COLUMN = 10.0
AUTO_RATIO_MODELS = ("polynomial", "spline", "boosting")


@dataclass(frozen=True, eq=False)
class DebiasedOptions:
    """The nuisance, smoothing and overlap settings of :func:`debiased_partial_dependence`, validated once.

    Parameters
    ----------
    n_folds : int
        Cross-fitting folds K (>= 2).
    weight_estimator : classifier with ``predict_proba``, optional
        Nuisance classifier (default :func:`default_weight_classifier`).
    bandwidth : float, optional
        Fixed kernel bandwidth (in the feature's units) for every numeric feature; default the
        rule-of-thumb MSE bandwidth of the pseudo-outcome regression, used with robust bias correction.
    min_effective_size : float
        Grid points whose window has a smaller effective sample size are flagged (``overlap = 0``)
        and get no band (NaN).  The ESS is the smaller of that of the drawn weights (kernel times
        density ratio or inverse propensity) and the weight model's ``rows in the window /
        E[w^2 | A = a]`` (:func:`pdpboot.engine.debiased.model_effective_size`).  Windows: the
        smoother's kernel, narrowed to Silverman's bandwidth if wider; the level itself for a
        categorical feature.  Default 20; the other points' bands use Student-t quantiles with
        ``ESS - 1`` degrees of freedom.
    weight_mass_range : (float, float)
        Grid points whose local weight mass ``sum K w / sum K`` (unnormalised density ratios, or
        ``p(a) / pi(a | c)``; 1 in the population under overlap) is outside this range are flagged
        too: the rows near ``a`` cannot represent every ``x_C`` (see
        :func:`pdpboot.engine.debiased.overlap`).
    max_weight : float
        Density-ratio / inverse-propensity weights are clipped at this value.
    n_permutations : int
        Permuted copies of the training rows in the density-ratio classification.
    n_fine : int
        Equally spaced points over the range of a numeric feature, added to its grid, at which the
        learner's ICE curves are computed and interpolated to the observed values.
    localize : {"pseudo-outcome", "residual"}
        What the kernel smoother localises: the doubly robust pseudo-outcome (default; Kennedy et
        al.) or, for comparison, only the weighted residuals added to the plug-in PD at the grid
        point (see :func:`pdpboot.engine.debiased.debiased_curve`).
    n_multipliers : int
        Gaussian multiplier draws of the whole-curve band.
    ratio_scale : {"normal-scores", "both", "standardized"}
        Scale of a numeric feature and of the other non-binary columns in the density-ratio model
        (:func:`pdpboot.engine.debiased.ratio_design`).  ``"normal-scores"`` (default): their normal
        scores ``Phi^{-1}(F_n(x))`` (:func:`pdpboot.engine.debiased.normal_scores`); the ratio is
        invariant to monotone maps and its log is exactly quadratic on this scale for any Gaussian
        copula, so a skewed feature's sparse boundary is modelled as well as its centre (for Gaussian
        features it is the old basis up to the ranks' noise).  ``"standardized"``: the standardised raw
        values (the estimator before round 5; on the study's DGP H it left a bias of 1.2 SD at the
        lower grid point of the log-normal feature).  ``"both"``: the union of the two bases.  Applies to
        the polynomial ratio model; the spline model always works on normal scores (its knots are normal
        quantiles), the boosting model on the raw values (trees are invariant to monotone maps).
    ratio_model : {"spline", "polynomial", "boosting", "auto"}
        The density-ratio model of a numeric feature, a real-versus-permuted classifier fitted on each
        fold's complement like the learner.  ``"spline"`` (default): the logistic on the varying-coefficient
        spline basis of :func:`pdpboot.engine.debiased.spline_ratio_design` -- the mean and the variance of
        every other column given the feature may be any smooth function of the feature's normal score.
        ``"polynomial"``: the logistic on the polynomial basis of :func:`pdpboot.engine.debiased.ratio_design`
        (exact for Gaussian copulas only; the estimator of round 5).  ``"boosting"``:
        :func:`default_boosting_classifier` on the raw columns.  ``"auto"``: the three, and per feature the
        one with the smallest held-out log loss summed over the folds (each held-out fold's rows against
        permutations of their own feature values, the same permutations for every model); 2 K more
        classifier fits.  Why spline is the default (the study's DGP E, R = 100, whole-curve coverage
        polynomial 0.795, spline 0.890, boosting 0.590): a misspecified parametric ratio leaves a
        *systematic* error that multiplies the learner's bias into a bias of the estimate, and the boosted
        ratio is shrunk towards 1 where the data are sparse, so it removes too little of the learner's bias
        there and sees no overlap problem.  A held-out loss rewards a low-variance ratio, not an unbiased
        one: on 20 of E's data sets the polynomial's error in ``log w`` of x1 has the smaller root mean
        square (0.20 against the spline's 0.24) and the smaller held-out loss in 14, yet its systematic
        part (the mean over data sets) is three to four times the spline's
        (``python -m experiments.debiased_ratio_models --ratio-error 20``), and only the systematic part
        biases the estimate; so ``"auto"`` is not the default.  ``weight_estimator``, if given, replaces
        the logistic of the spline and polynomial models (not the boosting model).
    min_rows_per_column : float
        ``ratio_model="spline"`` uses the polynomial basis instead when the spline basis has more columns
        (:func:`pdpboot.engine.debiased.spline_columns`: 6 + 17 p + p (p - 1) / 2 for p other columns) than the
        fold's training rows divided by this number (default 10, the events-per-variable rule of thumb of
        logistic regression).  With many other columns the spline basis overfits and its noisy weights flag
        and bias what the polynomial got right: on scenario B at n = 500 (ten independent features, 195
        columns for 400 training rows) it flagged 17 % of the grid points instead of 3 % and covered whole
        curves of the forest at 0.876 (0.031) instead of 0.933 (0.023) on the same 35 data sets.  The attrs'
        ``ratio_model`` says which basis a feature used; 0 always uses the spline basis.
    Examples
    --------
    >>> DebiasedOptions(n_folds=10).n_folds
    10
    >>> DebiasedOptions(localize="spline")
    Traceback (most recent call last):
    ...
    ValueError: localize must be one of ('pseudo-outcome', 'residual'), got 'spline'.
    """

    n_folds: int = 5
    weight_estimator: Any = None
    bandwidth: float | None = None
    min_effective_size: float = MIN_EFFECTIVE_SIZE
    weight_mass_range: tuple[float, float] = WEIGHT_MASS_RANGE
    max_weight: float = eng.MAX_WEIGHT
    n_permutations: int = 2
    n_fine: int = eng.N_FINE
    localize: str = "pseudo-outcome"
    n_multipliers: int = 2000
    ratio_scale: str = "normal-scores"
    ratio_model: str = "spline"
    min_rows_per_column: float = MIN_ROWS_PER_COLUMN

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        set_("n_folds", check_positive_int(self.n_folds, "n_folds", 2))
        set_("n_multipliers", check_positive_int(self.n_multipliers, "n_multipliers", 100))
        set_("n_permutations", check_positive_int(self.n_permutations, "n_permutations", 1))
        set_("n_fine", check_positive_int(self.n_fine, "n_fine", 2))
        if self.ratio_scale not in RATIO_SCALES:
            raise ValueError(f"ratio_scale must be one of {RATIO_SCALES}, got {self.ratio_scale!r:.80}.")
        if self.ratio_model not in RATIO_MODELS:
            raise ValueError(f"ratio_model must be one of {RATIO_MODELS}, got {self.ratio_model!r:.80}.")
        if not (isinstance(self.min_rows_per_column, (int, float)) and self.min_rows_per_column >= 0):
            raise ValueError(f"min_rows_per_column must be a number >= 0, got {self.min_rows_per_column!r:.80}.")
        if self.localize not in eng.LOCALIZE:
            raise ValueError(f"localize must be one of {eng.LOCALIZE}, got {self.localize!r:.80}.")
        if not (isinstance(self.max_weight, (int, float)) and self.max_weight > 1):
            raise ValueError(f"max_weight must be a number > 1, got {self.max_weight!r:.80}.")
        if not (isinstance(self.min_effective_size, (int, float)) and self.min_effective_size >= 0):
            raise ValueError(f"min_effective_size must be a number >= 0, got {self.min_effective_size!r:.80}.")
        try:
            mass_lo, mass_hi = (float(v) for v in self.weight_mass_range)
        except (TypeError, ValueError):
            raise ValueError(f"weight_mass_range must be a pair of numbers, got "
                             f"{self.weight_mass_range!r:.80}.") from None
        if not 0 <= mass_lo <= 1 <= mass_hi:
            raise ValueError(f"weight_mass_range must be (low, high) with 0 <= low <= 1 <= high, "
                             f"got {self.weight_mass_range!r:.80}.")
        set_("weight_mass_range", (mass_lo, mass_hi))
        if self.bandwidth is not None and not (isinstance(self.bandwidth, (int, float)) and self.bandwidth > 0):
            raise ValueError(f"bandwidth must be a positive number or None, got {self.bandwidth!r:.80}.")

    def settings(self) -> dict:
        """The options as netCDF-safe provenance (the classifier by its repr)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["weight_mass_range"] = list(self.weight_mass_range)
        out["weight_estimator"] = repr(self.weight_estimator)
        return out


def default_weight_classifier():
    """The default probabilistic classifier of the nuisance models of ``x_s``.

    L2-penalised logistic regression (``C = 1``) on standardised inputs: for a numeric ``x_s`` the
    inputs are the spline basis of :func:`pdpboot.engine.debiased.spline_ratio_design` (or the polynomial
    one of :func:`pdpboot.engine.debiased.ratio_design`; real versus permuted rows), for a categorical one
    the other columns and their squares (multinomial propensity).  Calibrated by construction (a logistic
    model fitted by maximum likelihood holds the mean of the labels in every basis direction), and
    flexible through its basis, not through the classifier.
    """
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))


def default_boosting_classifier():
    """The flexible density-ratio classifier of ``ratio_model="boosting"``: shallow, early-stopped gradient boosting.

    ``HistGradientBoostingClassifier`` with 8 leaves per tree, learning rate 0.1, at least 40 rows per leaf,
    L2 penalty 1 and early stopping on the log loss of a 20 % validation split (10 rounds without
    improvement; at most 300 trees).  Log-loss boosting stopped early is close to calibrated, and where
    ``x_s`` and ``x_C`` are independent it stops after a few trees with ``p1`` near its base rate (weights
    near 1).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_leaf_nodes=8, learning_rate=0.1, max_iter=300, min_samples_leaf=40,
                                          l2_regularization=1.0, early_stopping=True, validation_fraction=0.2,
                                          n_iter_no_change=10)


def _encode_columns(X, names: list[str], categorical: dict[int, bool]) -> tuple[np.ndarray, list[int]]:
    """All columns as standardised numbers (categorical ones one-hot, first level dropped).

    Returns the matrix and, per output column, the position of the input column it came from.
    Missing numeric values are set to the column mean (the nuisance models only).
    """
    blocks, owners = [], []
    for j in range(len(names)):
        col = X.iloc[:, j] if isinstance(X, pd.DataFrame) else pd.Series(np.asarray(X)[:, j])
        if categorical.get(j, False) or not pd.api.types.is_numeric_dtype(col.dtype) or col.dtype == bool:
            dummies = pd.get_dummies(col.astype(str), drop_first=True).to_numpy(dtype=float)
            if dummies.shape[1]:
                blocks.append(dummies)
                owners += [j] * dummies.shape[1]
            continue
        v = col.to_numpy(dtype=float, na_value=np.nan)
        v = np.where(np.isnan(v), np.nanmean(v), v)
        sd = v.std()
        blocks.append(((v - v.mean()) / (sd if sd > 0 else 1.0))[:, None])
        owners.append(j)
    if not blocks:
        return np.zeros((len(X), 0)), []
    return np.hstack(blocks), owners


def _ratio_inputs(a: np.ndarray, grid: np.ndarray, others: np.ndarray,
                  scale: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The feature, its grid and the other (standardised) columns on the scale(s) of the density-ratio model.

    ``"standardized"``: as given, (n,), (G,), (n, p).  ``"normal-scores"``: the feature and every
    non-binary column by :func:`pdpboot.engine.debiased.normal_scores`.  ``"both"``: the two stacked,
    (n, 2), (G, 2), (n, 2, p), for the union basis of :func:`pdpboot.engine.debiased.ratio_design`.
    """
    sd = a.std() or 1.0
    std = ((a - a.mean()) / sd, (grid - a.mean()) / sd, others)
    if scale == "standardized":
        return std
    scores = eng.normal_scores(a, at=grid)
    ns_others = np.column_stack([eng.normal_scores(c) if np.unique(c).size > 2 else c for c in others.T]
                                ) if others.shape[1] else others
    if scale == "normal-scores":
        return scores[0], scores[1], ns_others
    return (np.column_stack([std[0], scores[0]]), np.column_stack([std[1], scores[1]]),
            np.stack([others, ns_others], axis=1))


def _cross_fitted_ratio(model: str, a_raw: np.ndarray, values: np.ndarray, others: np.ndarray, folds: np.ndarray,
                        fold_seeds, opts: DebiasedOptions, weight_estimator, score_seeds) -> dict:
    """One density-ratio model cross-fitted over the folds: held-out weights, counterfactual ratios on the grid,
    clipped rows and the held-out log loss summed over the folds (:func:`pdpboot.engine.debiased.fit_density_ratio`)."""
    n = a_raw.size
    if model == "polynomial":
        a_in, grid_in, c_in = _ratio_inputs(a_raw, values, others, opts.ratio_scale)
        design, classifier = eng.ratio_design, weight_estimator
    else:
        a_in, grid_in, c_in = _ratio_inputs(a_raw, values, others, "normal-scores")
        if model == "spline":
            design, classifier = eng.spline_ratio_design, weight_estimator
        else:
            a_in, grid_in, c_in = a_raw, values, others
            design, classifier = eng.raw_ratio_design, default_boosting_classifier()
    out = {"weights": np.empty(n), "counterfactual": np.empty((n, values.size)), "n_clipped": 0, "holdout_loss": 0.0}
    for k in range(int(folds.max()) + 1):
        train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        fit = eng.fit_density_ratio(_classifier_fitter(classifier, fold_seeds[k]), a_in[train], c_in[train],
                                    a_in[test], c_in[test], design=design, n_permutations=opts.n_permutations,
                                    max_weight=opts.max_weight, rng=fold_seeds[k], a_grid=grid_in,
                                    score_rng=score_seeds[k])
        out["weights"][test], out["counterfactual"][test] = fit["weights"], fit["counterfactual"]
        out["n_clipped"] += fit["n_clipped"]
        out["holdout_loss"] += fit["holdout_loss"] * test.size / n
    return out


def _classifier_fitter(weight_estimator, seed: np.random.Generator):
    """``fit(features, labels) -> predict_proba`` with a clone of the nuisance classifier."""
    def fit(features: np.ndarray, labels: np.ndarray):
        model = fit_seeded(weight_estimator, features, labels, seed, only_if_unset=True)
        classes = list(model.classes_)

        def predict(new: np.ndarray) -> np.ndarray:
            proba = model.predict_proba(new)
            return proba[:, classes.index(1)] if len(classes) == 2 and 1 in classes else proba

        predict.classes = classes
        return predict
    return fit


def _response_matrix(y, resolved: str, classes) -> np.ndarray:
    """Observed response on the scale of the model's output: y as (n, 1), or one-hot classes (n, L)."""
    values = np.asarray(y)
    if resolved == "predict":
        return values.astype(float).reshape(values.shape[0], -1)
    return (values[:, None] == np.asarray(classes)[None, :]).astype(float)


def debiased_partial_dependence(
    estimator,
    X,
    y,
    features,
    *,
    options: DebiasedOptions | None = None,
    confidence_level: float = 0.95,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
    response_method: str = "auto",
    rng=None,
) -> xr.DataTree:
    """Partial dependence of the data-generating process with pointwise and whole-curve bands.

    The target is ``theta(a) = E_C[mu(a, X_C)]``, ``mu(x) = E[Y | X = x]`` -- the PD of the
    process that generated the data (not of the fitted learner).  ``estimator`` is cross-fitted
    on ``n_folds`` folds (each row's prediction and ICE come from the model fitted without its fold),
    and so is a model of how ``x_s`` depends on the other columns ``x_C``: the density ratio
    ``p(a) p(c) / p(a, c)`` by real-versus-permuted classification (numeric ``x_s``) or the
    propensity ``P(x_s = a | x_C)`` (categorical ``x_s``).  The estimate is the cross-fitted plug-in
    PD plus a localised, density-ratio-weighted average of held-out residuals (robust-bias-corrected
    local-linear smoother; categorical: the AIPW mean per level), so the learner's bias is removed
    to first order and nuisance errors enter only as a product.  Details and formulas:
    :mod:`pdpboot.engine.debiased`.

    Parameters
    ----------
    estimator : scikit-learn regressor or classifier
        Unfitted (it is cloned and fitted ``n_folds`` times; ``random_state`` parameters left at
        None are drawn from ``rng``).  Regressors: one target.  Classifiers: ``predict_proba`` (the
        PD of every class probability; the residual is the class indicator minus the probability).
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,)
    features : list
        Column names or indices; 1-D only (no pairs).
    options : DebiasedOptions, optional
        Cross-fitting folds, the nuisance classifier, bandwidth, overlap thresholds, weight clipping
        and multiplier draws (:class:`DebiasedOptions`; default ``DebiasedOptions()``).
    confidence_level : float
    grid_resolution, percentiles, custom_values, categorical_features
        The grid, as in :func:`pdpboot.bootstrap_partial_dependence` (same rule, same grid).
    response_method : {"auto", "predict", "predict_proba"}
        ``decision_function`` is refused (its scale has no observed counterpart).
    rng : None, int or numpy.random.Generator
        Seeds the folds, the estimator's and the nuisance classifiers' random states, the
        permutations and the multipliers (one root, spawned).

    Returns
    -------
    xarray.DataTree
        One child per feature with ``pd`` (``output``, feature), the debiased estimate;
        ``pd_se``; ``pd_band`` (``ci_bound``, ``output``, feature), the pointwise normal band, and
        ``pd_band_simultaneous``, the sup-t band covering the whole curve (over the points with
        overlap), both NaN where overlap is too thin; ``pd_plugin``, the cross-fitted plug-in PD
        (the learner's PD without the correction); ``effective_sample_size``,
        ``weight_mass`` and ``overlap`` (1 where both pass), (``output``, feature).  Band attrs: ``method``,
        ``confidence_level``, ``simultaneous``, ``critical_value``, ``target = "dgp"``; node attrs:
        ``bandwidth``, ``bandwidth_rot`` (per output, numeric features), ``n_clipped_weights``.
        Root attrs: the header (:class:`pdpboot.header.ResultHeader`) with ``target = "dgp"``,
        ``uncertainty = "debiased-crossfit"``, ``n_folds``, ``fold_sizes``, ``n_rows``.

    Notes
    -----
    Guarantees are asymptotic and rest on: (i) overlap (``p(a, c) > 0`` wherever ``p(a) p(c) > 0``
    near the grid, with weights of finite variance; ``effective_sample_size`` judges it from the
    weight model, and grid points below ``options.min_effective_size`` get no band), (ii) the
    product of the root-mean-square errors of the learner and of the density-ratio model being
    ``o(1 / sqrt(n h))``, (iii) a smooth learner
    bias ``theta - m`` (twice differentiable) for the bias correction.  The reading as a causal
    dose-response additionally needs no unmeasured confounding; the reading as the DGP's PD needs
    nothing more.  With a consistent learner and a misspecified density ratio (or vice versa) the
    estimate stays consistent (double robustness).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot.datasets import make_interaction
    >>> X, y = make_interaction(300, rng=0)
    >>> res = debiased_partial_dependence(LinearRegression(), X, y, ["x1"], grid_resolution=5, rng=0)
    >>> res["x1"]["pd_band"].dims, res.attrs["target"]
    (('ci_bound', 'output', 'x1'), 'dgp')
    """
    if options is not None and not isinstance(options, DebiasedOptions):
        raise TypeError(f"options must be a pdpboot.DebiasedOptions, got {type(options).__name__}.")
    opts = DebiasedOptions() if options is None else options
    n_folds, bandwidth, localize, max_weight = opts.n_folds, opts.bandwidth, opts.localize, opts.max_weight
    min_effective_size, (mass_lo, mass_hi) = opts.min_effective_size, opts.weight_mass_range
    confidence_level = check_probability(confidence_level, "confidence_level")
    rng = check_rng(rng)
    spec = make_spec(X, features, grid_resolution=grid_resolution, percentiles=percentiles,
                     custom_values=custom_values, categorical_features=categorical_features)
    if any(len(fs) != 1 for fs in spec.feature_sets):
        raise ValueError("debiased_partial_dependence estimates 1-D partial dependence only; pass single "
                         "features (no pairs).")
    resolved = resolve_response_method(estimator, response_method)
    if resolved == "decision_function":
        raise ValueError("response_method='decision_function' has no observed counterpart to form residuals; "
                         "use 'predict_proba' (classifiers) or 'predict' (regressors).")
    y = check_target(y, spec.n_rows, estimator)
    if np.asarray(y).ndim != 1:
        raise ValueError("debiased_partial_dependence takes one target (y of shape (n_rows,)).")
    n = spec.n_rows
    if n < 2 * n_folds:
        raise ValueError(f"{n} rows are too few for {n_folds} cross-fitting folds.")
    weight_estimator = default_weight_classifier() if opts.weight_estimator is None else opts.weight_estimator

    generator = np.random.default_rng(rng)
    fold_seed, model_seed, weight_seed, multiplier_seed = generator.spawn(4)
    folds = eng.fold_labels(n, n_folds, fold_seed)
    classes = np.unique(np.asarray(y)) if resolved == "predict_proba" else None
    categorical = {p: g.categorical for p, g in spec.grids.items()}
    evaluated = {}  # where each feature's ICE is computed: its levels, or the fine grid holding the grid
    for fs in spec.feature_sets:
        grid = spec.grids[fs[0]]
        if grid.categorical:
            evaluated[fs] = grid.values
        else:
            a_col = np.asarray(rows_of(spec.X.iloc[:, fs[0]] if isinstance(spec.X, pd.DataFrame)
                                       else spec.X[:, fs[0]], np.arange(n)), dtype=float)
            if np.isnan(a_col).any():
                raise ValueError(f"Feature {spec.names[fs[0]]!r:.100} has missing values; the debiased estimator "
                                 "needs the observed value of every row (drop or impute those rows).")
            evaluated[fs] = eng.fine_grid(a_col, grid.values, opts.n_fine)
    outputs = None
    mu = None
    ice = {fs: None for fs in spec.feature_sets}
    for k, seed in enumerate(model_seed.spawn(n_folds)):
        train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        model = fit_seeded(estimator, spec.X, y, seed, rows=train, only_if_unset=True)
        if classes is not None and list(model.classes_) != list(classes):
            raise ValueError(f"Fold {k}'s training rows miss a class of y; use fewer folds or more rows per class.")
        outputs = output_labels(model, resolved, None, 1)
        respond = response_function(model, resolved)
        x_test = spec.rows(test)
        pred = respond(x_test)
        if mu is None:
            mu = np.empty((n, pred.shape[1]))
        mu[test] = pred
        for fs in spec.feature_sets:
            _, curves = brute_partial_dependence(respond, x_test, fs, [evaluated[fs]], average=False,
                                                 individual=True, n_outputs=pred.shape[1])
            if ice[fs] is None:
                ice[fs] = np.empty((n, *curves.shape[1:]))
            ice[fs][test] = curves
    if resolved == "predict":
        outputs = [str(getattr(y, "name", None) or "y")]
    residual = _response_matrix(y, resolved, classes) - mu

    encoded, owners = _encode_columns(spec.X, spec.names, categorical)
    owners = np.asarray(owners, dtype=int)
    z = ndtri(0.5 + confidence_level / 2)
    per_node, node_attrs, band_attrs, bands = {}, {}, {}, {}
    for fs, w_seed, m_seed in zip(spec.feature_sets, weight_seed.spawn(len(spec.feature_sets)),
                                  multiplier_seed.spawn(len(spec.feature_sets))):
        pos = fs[0]
        grid = spec.grids[pos]
        others = encoded[:, owners != pos]
        col = rows_of(spec.X.iloc[:, pos] if isinstance(spec.X, pd.DataFrame) else spec.X[:, pos], np.arange(n))
        weights = np.empty(n)
        n_clipped = 0
        fold_seeds = w_seed.spawn(n_folds)
        if grid.categorical:
            values = np.asarray(col)
            level_index = {v: i for i, v in enumerate(grid.values.tolist())}
            codes = np.array([level_index.get(v, -1) for v in values.tolist()])
            design = np.hstack([others, others**2]) if others.shape[1] else np.zeros((n, 1))
            full_proba = np.zeros((n, grid.values.size))
            for k in range(n_folds):
                train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
                fit = _classifier_fitter(weight_estimator, fold_seeds[k])
                keep = train[codes[train] >= 0]
                predict = fit(design[keep], codes[keep])
                proba_fit = predict(design[test])
                proba = np.zeros((test.size, grid.values.size))
                if proba_fit.ndim == 1:  # two levels: the classifier returned P(level 1)
                    proba_fit = np.column_stack([1 - proba_fit, proba_fit])
                proba[:, predict.classes] = proba_fit
                full_proba[test] = proba
                weights[test], clipped = eng.inverse_propensity(proba, codes[test], max_weight=max_weight)
                n_clipped += clipped
            fit_out = eng.aipw_levels(ice[fs], residual, codes, weights)
            kernel = np.broadcast_to(fit_out["kernel"], (len(outputs), *fit_out["kernel"].shape))
            freq = np.bincount(codes[codes >= 0], minlength=grid.values.size) / n
            diag_weights = weights * np.where(codes >= 0, freq[np.maximum(codes, 0)], 0.0)
            second_moment = freq * (1.0 / np.maximum(full_proba, 1e-6)).mean(axis=0)   # E[w^2 | A = level]
            extra = {}
        else:
            a_raw = np.asarray(col, dtype=float)
            values = np.asarray(grid.values, dtype=float)
            models = AUTO_RATIO_MODELS if opts.ratio_model == "auto" else (opts.ratio_model,)
            if (models == ("spline",)
                    and eng.spline_columns(others.shape[1]) * opts.min_rows_per_column > n - np.bincount(folds).max()):
                models = ("polynomial",)   # too few training rows per coefficient for the spline basis
            # Seeds by model, whichever are fitted (a model chosen by "auto" gives the weights it gives alone; the
            # polynomial's are those of round 5), and the same held-out permutations for every model (a paired
            # comparison of their losses).
            seeds = dict(zip(AUTO_RATIO_MODELS, [fold_seeds] + [w_seed.spawn(n_folds) for _ in AUTO_RATIO_MODELS[1:]]))
            score_seeds = w_seed.spawn(n_folds)
            fits = {m: _cross_fitted_ratio(m, a_raw, values, others, folds, seeds[m], opts, weight_estimator,
                                           score_seeds) for m in models}
            losses = {m: f["holdout_loss"] for m, f in fits.items()}
            chosen = min(losses, key=losses.get)
            weights, n_clipped, counterfactual = (fits[chosen][k] for k in ("weights", "n_clipped", "counterfactual"))
            weights = weights.copy()
            second_moment = counterfactual.mean(axis=0)                       # E[w^2 | A = a] = E_C[w(a, C)]
            diag_weights = weights.copy()
            for k in range(n_folds):  # normalised to mean 1 per held-out fold for the estimate
                weights[folds == k] /= weights[folds == k].mean()
            fit_out = eng.debiased_curve(ice[fs], evaluated[fs], weights[:, None] * residual, a_raw, values,
                                         bandwidth=bandwidth, localize=localize)
            kernel = np.stack([eng.epanechnikov((a_raw[None, :] - values[:, None]) / eng.diagnostic_bandwidth(a_raw, h))
                               for h in fit_out["bandwidth"]])
            extra = {"bandwidth": [float(h) for h in fit_out["bandwidth"]],
                     "bandwidth_rot": [float(h) for h in fit_out["h_rot"]], "ratio_model": chosen,
                     "ratio_holdout_loss": json.dumps({m: round(v, 6) for m, v in losses.items()})}
        ess, mass, overlap = eng.overlap(kernel, diag_weights, min_effective_size=min_effective_size,
                                         mass_range=(mass_lo, mass_hi), second_moment=second_moment)
        est, se = fit_out["estimate"], fit_out["se"]
        crit = eng.supt_critical_value(fit_out["influence"], se, confidence_level, n_multipliers=opts.n_multipliers,
                                       rng=m_seed, mask=overlap)
        shape = est.shape
        vdims = ("output", spec.names[pos])
        # Student-t quantiles with ESS - 1 degrees of freedom: a window resting on few effective rows gets a
        # wider band (t_19 = 2.09 vs z = 1.96); the sup-t value is widened by the same factor.
        stretch = eng.small_sample_factor(ess, confidence_level)
        point = np.where(overlap, 1.0, np.nan) * np.stack([est - z * stretch * se, est + z * stretch * se])
        half = crit[:, None] * stretch * se
        simult = np.where(overlap, 1.0, np.nan) * np.stack([est - half, est + half])
        name = node_name((spec.names[pos],))
        bands[name] = (point[0], point[1], simult[0], simult[1], se)
        per_node[name] = {
            "pd": (vdims, est), "pd_plugin": (vdims, fit_out["plugin"].reshape(shape)),
            "effective_sample_size": (vdims, ess), "weight_mass": (vdims, mass),
            "overlap": (vdims, overlap.astype(np.int8)),
        }
        common = {"method": METHOD, "interval": "normal", "confidence_level": float(confidence_level),
                  "target": "dgp", "n_folds": n_folds}
        band_attrs[(name, "pd_band")] = dict(common, simultaneous=0)
        band_attrs[(name, "pd_band_simultaneous")] = dict(common, simultaneous=1,
                                                          critical_value=[float(c) for c in crit])
        node_attrs[name] = dict(extra, n_clipped_weights=int(n_clipped), clipped_share=float(n_clipped / n),
                                target="dgp",
                                smoother="none (AIPW per level)" if grid.categorical
                                else "local linear, robust bias correction (local quadratic, b = h), Epanechnikov",
                                min_effective_size=float(min_effective_size), weight_mass_range=[mass_lo, mass_hi],
                                max_weight=float(max_weight))

    settings = dict(spec.settings, **opts.settings())
    settings.update(weight_estimator=repr(weight_estimator), confidence_level=float(confidence_level),
                    response_method=response_method)
    header = ResultHeader.describe(estimator, settings, response=resolved, outputs=outputs, n_rows=n,
                                   target="dgp", uncertainty=METHOD, n_folds=n_folds,
                                   rng_entropy=str(generator.bit_generator.seed_seq.entropy),
                                   fold_sizes=json.dumps(np.bincount(folds).tolist()),
                                   supports=PDEffect(spec).supports(resolved))
    result = build_tree(spec, per_node, outputs=outputs, ice_rows=None, header=header, node_attrs=node_attrs)
    for name in per_node:
        ds = result[name].to_dataset()
        lo, hi, slo, shi, se = bands[name]
        ds.update(band_variables("pd", ds["pd"], lo, hi, se=se, attrs=band_attrs[(name, "pd_band")]))
        simultaneous = band_variables("pd", ds["pd"], slo, shi, attrs=band_attrs[(name, "pd_band_simultaneous")])
        ds["pd_band_simultaneous"] = simultaneous["pd_band"]
        result[name].dataset = ds
    return result
