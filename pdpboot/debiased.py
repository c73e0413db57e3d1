"""Bands for the data's partial dependence: a cross-fitted, doubly robust (debiased) estimator.

Every other band of the package is about the *learner's* PD.  :func:`debiased_partial_dependence`
targets the PD of the data-generating process, ``theta(a) = E_C[E(Y | x_s = a, X_C)]``: cross-fitting
(:class:`pdpboot.engine.resample.CrossFit`) times the :class:`DebiasedEffect` (each fold's model's held-out
predictions and ICE curves) on the one resampling loop, then the combination with a density-ratio or
propensity model (the estimator, its influence function and the bandwidth rule are in
:mod:`pdpboot.engine.debiased`).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._evaluate import Evaluation, NodeArrays, PDEffect, resolve_outputs
from ._loop import fit_seeded, root_generator, run
from ._plan import PDSpec, make_plan, make_spec, names_of_target
from ._validate import check_positive_int, check_probability, check_rng, check_target
from .engine import compute_pd_many
from .engine import debiased as eng
from .engine.refit import rows_of
from .engine.resample import CrossFit, child
from .engine.response import resolve_response_method, response_function
from .grid import Grid
from .header import ResultHeader
from .io import band_variables, build_tree
from .options import Execution, Resampling, resolve_execution
from .schema import node_name

METHOD = "debiased-crossfit"
#: Default minimum effective sample size of a grid point's window (below it: no band there).
MIN_EFFECTIVE_SIZE = 20.0
#: Default range of the local weight mass (population value 1 under overlap) outside which a grid point is flagged.
WEIGHT_MASS_RANGE = (0.5, 2.0)
#: Fewest training rows per column of the spline basis of the density ratio; with fewer, the polynomial basis.
MIN_ROWS_PER_COLUMN = 10.0
#: The node of a fold's held-out predictions among the effect's arrays (no feature node has a "/" in its name).
HELD_OUT = "/held-out"
#: Execution fields a cross-fitted run uses (``max_failure_share`` has no use: no fold may fail).
EXECUTION_USED = ("n_jobs", "threads_per_job", "progress", "checkpoint", "on_error", "method", "memory_limit")


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
        rule-of-thumb MSE bandwidth of the pseudo-outcome regression, with robust bias correction.
    min_effective_size : float
        Grid points whose window has a smaller effective sample size
        (:func:`pdpboot.engine.debiased.overlap`) are flagged (``overlap = 0``) and get no band; the
        others' bands use Student-t quantiles with ``ESS - 1`` degrees of freedom.
    weight_mass_range : (float, float)
        Grid points whose local weight mass (1 in the population under overlap) is outside this
        range are flagged too.
    max_weight : float
        Density-ratio / inverse-propensity weights are clipped at this value.
    n_permutations : int
        Permuted copies of the training rows in the density-ratio classification.
    n_fine : int
        Equally spaced points over the range of a numeric feature, added to its grid, at which the
        learner's ICE curves are computed and interpolated to the observed values.
    n_multipliers : int
        Gaussian multiplier draws of the whole-curve band.
    min_rows_per_column : float
        The density ratio of a numeric feature uses the spline basis
        (:func:`pdpboot.engine.debiased.spline_ratio_design`) when a fold has at least this many training
        rows per basis column, else the polynomial basis (:func:`pdpboot.engine.debiased.ratio_design`);
        node attr ``ratio_model``.  See the validation page of the documentation.

    Examples
    --------
    >>> DebiasedOptions(n_folds=10).n_folds
    10
    >>> DebiasedOptions(max_weight=1)
    Traceback (most recent call last):
    ...
    ValueError: max_weight must be a number > 1, got 1.
    """

    n_folds: int = 5
    weight_estimator: Any = None
    bandwidth: float | None = None
    min_effective_size: float = MIN_EFFECTIVE_SIZE
    weight_mass_range: tuple[float, float] = WEIGHT_MASS_RANGE
    max_weight: float = eng.MAX_WEIGHT
    n_permutations: int = 2
    n_fine: int = eng.N_FINE
    n_multipliers: int = 2000
    min_rows_per_column: float = MIN_ROWS_PER_COLUMN

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        set_("n_folds", check_positive_int(self.n_folds, "n_folds", 2))
        set_("n_multipliers", check_positive_int(self.n_multipliers, "n_multipliers", 100))
        set_("n_permutations", check_positive_int(self.n_permutations, "n_permutations", 1))
        set_("n_fine", check_positive_int(self.n_fine, "n_fine", 2))
        if not (isinstance(self.min_rows_per_column, (int, float)) and self.min_rows_per_column >= 0):
            raise ValueError(f"min_rows_per_column must be a number >= 0, got {self.min_rows_per_column!r:.80}.")
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
    basis of the density ratio (real versus permuted rows), for a categorical one the other columns and
    their squares (multinomial propensity).
    """
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))


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


def _ratio_inputs(a: np.ndarray, grid: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The feature, its grid and the other non-binary columns as normal scores
    (:func:`pdpboot.engine.debiased.normal_scores`): the density ratio's inputs."""
    scores = eng.normal_scores(a, at=grid)
    ns_others = np.column_stack([eng.normal_scores(c) if np.unique(c).size > 2 else c for c in others.T]
                                ) if others.shape[1] else others
    return scores[0], scores[1], ns_others


def _cross_fitted_ratio(model: str, a_raw: np.ndarray, values: np.ndarray, others: np.ndarray, folds: np.ndarray,
                        fold_seeds, opts: DebiasedOptions, weight_estimator, score_seeds) -> dict:
    """The density ratio (``model``: the ``"spline"`` or ``"polynomial"`` basis) cross-fitted over the folds:
    held-out weights, counterfactual ratios on the grid, clipped rows and the held-out log loss
    (:func:`pdpboot.engine.debiased.fit_density_ratio`)."""
    n = a_raw.size
    a_in, grid_in, c_in = _ratio_inputs(a_raw, values, others)
    design = eng.spline_ratio_design if model == "spline" else eng.ratio_design
    out = {"weights": np.empty(n), "counterfactual": np.empty((n, values.size)), "n_clipped": 0, "holdout_loss": 0.0}
    for k in range(int(folds.max()) + 1):
        train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        fit = eng.fit_density_ratio(_classifier_fitter(weight_estimator, fold_seeds[k]), a_in[train], c_in[train],
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


def _column(spec: PDSpec, pos: int):
    """Every row's value of column ``pos``."""
    return rows_of(spec.X.iloc[:, pos] if isinstance(spec.X, pd.DataFrame) else spec.X[:, pos], np.arange(spec.n_rows))


@dataclass(frozen=True, eq=False)
class DebiasedEffect:
    """One fold's model on its held-out rows: its predictions and every feature's ICE curves.

    Parameters
    ----------
    spec : PDSpec
        Table, feature sets (1-D) and grids.
    evaluated : tuple of ndarray
        Per feature set, where its ICE is computed: a numeric feature's fine grid holding its grid
        (:func:`pdpboot.engine.debiased.fine_grid`), a categorical feature's levels.
    y : array-like
        The target (for the output labels, :func:`pdpboot._evaluate.resolve_outputs`).
    outputs : tuple
        The labels every fold's model must have (a classifier's classes).
    """

    spec: PDSpec
    evaluated: tuple
    y: Any
    outputs: tuple
    name: str = "debiased"

    def fixed_rows(self, background: np.ndarray, seeds: Sequence[np.random.Generator]) -> dict:
        return {}

    def evaluate(self, fitted, evaluation: Evaluation) -> NodeArrays:
        """``prediction`` (``row``, ``output``) in node :data:`HELD_OUT` and ``ice`` (``row``, ``output``,
        ``fine``) per feature node, on the held-out rows (``evaluation.background``), through the engines."""
        method = evaluation.response_method
        own = resolve_outputs(fitted, method, y=self.y)
        if list(own) != list(self.outputs):
            raise ValueError(f"A fold's model has outputs {own} instead of {list(self.outputs)}; use fewer folds.")
        X = self.spec.rows(evaluation.background)
        sets = self.spec.feature_sets
        curves = compute_pd_many(fitted, X, sets, [[values] for values in self.evaluated], response_method=method,
                                 method=self.spec.method, memory_limit=self.spec.memory_limit, average=False,
                                 individual=True, n_outputs=len(own))
        out = {HELD_OUT: {"prediction": (("row", "output"), response_function(fitted, method)(X))}}
        for fs, (_, ice) in zip(sets, curves):
            out[node_name(self.spec.dims(fs))] = {"ice": (("row", "output", "fine"), ice)}
        return out

    @property
    def settings(self) -> dict:
        return {"n_fine": [int(np.size(v)) for v in self.evaluated]}

    def supports(self, response_method: str) -> dict[str, tuple[float | None, float | None]]:
        return PDEffect(self.spec).supports(response_method)

    def node_attrs(self) -> dict[str, dict]:
        return {}


def _evaluated(spec: PDSpec, n_fine: int) -> tuple:
    """Where each feature's ICE is computed: its levels, or the fine grid holding its grid."""
    out = []
    for fs in spec.feature_sets:
        grid = spec.grids[fs[0]]
        if grid.categorical:
            out.append(grid.values)
            continue
        a_col = np.asarray(_column(spec, fs[0]), dtype=float)
        if np.isnan(a_col).any():
            raise ValueError(f"Feature {spec.names[fs[0]]!r:.100} has missing values; the debiased estimator "
                             "needs the observed value of every row (drop or impute those rows).")
        out.append(eng.fine_grid(a_col, grid.values, n_fine))
    return tuple(out)


def _check_call(estimator, X, y, features, opts, execution, response_method, grid) -> tuple:
    """The validated spec, response, target and output labels (before any fit)."""
    if execution.on_error != "raise":
        raise ValueError("on_error='skip' would drop a cross-fitting fold, whose rows then have no prediction; "
                         "use Execution(on_error='raise').")
    execution.check_used("debiased_partial_dependence", EXECUTION_USED)
    spec = make_spec(X, features, grid, method=execution.method, memory_limit=execution.memory_limit)
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
    if spec.n_rows < 2 * opts.n_folds:
        raise ValueError(f"{spec.n_rows} rows are too few for {opts.n_folds} cross-fitting folds.")
    outputs = names_of_target(y) if resolved == "predict" else np.unique(np.asarray(y)).tolist()
    return spec, resolved, y, outputs


def _check_folds(folds: np.ndarray, y, resolved: str) -> None:
    """Refuse, before any fit, folds whose training rows miss a class of a classifier's ``y``."""
    if resolved != "predict_proba":
        return
    labels = np.asarray(y)
    for k in range(int(folds.max()) + 1):
        if np.unique(labels[folds != k]).size < np.unique(labels).size:
            raise ValueError(f"Fold {k}'s training rows miss a class of y; use fewer folds or more rows per class.")


def _held_out(jobs: list, folds: np.ndarray, spec: PDSpec) -> tuple[np.ndarray, dict]:
    """Every row's held-out prediction (n, O) and ICE curves per feature set (n, O, M), from the fold jobs."""
    mu, ice = None, {}
    for k, arrays in enumerate(jobs):
        test = folds == k
        pred = arrays[HELD_OUT]["prediction"][1]
        mu = np.empty((folds.size, pred.shape[1])) if mu is None else mu
        mu[test] = pred
        for fs in spec.feature_sets:
            curves = arrays[node_name(spec.dims(fs))]["ice"][1]
            ice.setdefault(fs, np.empty((folds.size, *curves.shape[1:])))[test] = curves
    return mu, ice


def _categorical_fit(ice, residual, values, grid, others, folds, fold_seeds, opts, weight_estimator) -> dict:
    """AIPW per level with the cross-fitted propensity: the estimate and its overlap inputs."""
    n, n_folds = folds.size, int(folds.max()) + 1
    level_index = {v: i for i, v in enumerate(grid.values.tolist())}
    codes = np.array([level_index.get(v, -1) for v in np.asarray(values).tolist()])
    design = np.hstack([others, others**2]) if others.shape[1] else np.zeros((n, 1))
    weights, full_proba, n_clipped = np.empty(n), np.zeros((n, grid.values.size)), 0
    for k in range(n_folds):
        train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        keep = train[codes[train] >= 0]
        predict = _classifier_fitter(weight_estimator, fold_seeds[k])(design[keep], codes[keep])
        proba_fit = predict(design[test])
        if proba_fit.ndim == 1:  # two levels: the classifier returned P(level 1)
            proba_fit = np.column_stack([1 - proba_fit, proba_fit])
        full_proba[test[:, None], np.asarray(predict.classes)[None, :]] = proba_fit
        weights[test], clipped = eng.inverse_propensity(full_proba[test], codes[test], max_weight=opts.max_weight)
        n_clipped += clipped
    fit = eng.aipw_levels(ice, residual, codes, weights)
    freq = np.bincount(codes[codes >= 0], minlength=grid.values.size) / n
    return dict(fit, kernel=np.broadcast_to(fit["kernel"], (residual.shape[1], *fit["kernel"].shape)),
                diag_weights=weights * np.where(codes >= 0, freq[np.maximum(codes, 0)], 0.0),
                second_moment=freq * (1.0 / np.maximum(full_proba, 1e-6)).mean(axis=0),   # E[w^2 | A = level]
                n_clipped=n_clipped, extra={})


def _numeric_fit(ice, residual, values, grid, fine, others, folds, w_seed, opts, weight_estimator) -> dict:
    """The debiased curve with the cross-fitted density ratio: the estimate and its overlap inputs."""
    n_folds = int(folds.max()) + 1
    a_raw, points = np.asarray(values, dtype=float), np.asarray(grid.values, dtype=float)
    seeds = w_seed.spawn(4 * n_folds)  # polynomial, spline, (unused), held-out scoring: K each, in this order
    model = "spline"
    if eng.spline_columns(others.shape[1]) * opts.min_rows_per_column > folds.size - np.bincount(folds).max():
        model = "polynomial"   # too few training rows per coefficient for the spline basis
    model_seeds = seeds[:n_folds] if model == "polynomial" else seeds[n_folds:2 * n_folds]
    ratio = _cross_fitted_ratio(model, a_raw, points, others, folds, model_seeds, opts, weight_estimator,
                                seeds[3 * n_folds:])
    weights = ratio["weights"].copy()
    for k in range(n_folds):  # normalised to mean 1 per held-out fold for the estimate
        weights[folds == k] /= weights[folds == k].mean()
    fit = eng.debiased_curve(ice, fine, weights[:, None] * residual, a_raw, points, bandwidth=opts.bandwidth)
    kernel = np.stack([eng.epanechnikov((a_raw[None, :] - points[:, None]) / eng.diagnostic_bandwidth(a_raw, h))
                       for h in fit["bandwidth"]])
    extra = {"bandwidth": [float(h) for h in fit["bandwidth"]], "bandwidth_rot": [float(h) for h in fit["h_rot"]],
             "ratio_model": model, "ratio_holdout_loss": json.dumps({model: round(ratio["holdout_loss"], 6)})}
    return dict(fit, kernel=kernel, diag_weights=ratio["weights"], n_clipped=ratio["n_clipped"], extra=extra,
                second_moment=ratio["counterfactual"].mean(axis=0))                # E[w^2 | A = a] = E_C[w(a, C)]


def _bands(fit: dict, opts: DebiasedOptions, level: float, m_seed) -> dict:
    """Overlap, the pointwise and the sup-t band of one feature (NaN where overlap is too thin)."""
    ess, mass, ok = eng.overlap(fit["kernel"], fit["diag_weights"], min_effective_size=opts.min_effective_size,
                                mass_range=opts.weight_mass_range, second_moment=fit["second_moment"])
    est, se = fit["estimate"], fit["se"]
    crit = eng.supt_critical_value(fit["influence"], se, level, n_multipliers=opts.n_multipliers, rng=m_seed,
                                   mask=ok)
    # Student-t quantiles with ESS - 1 degrees of freedom (a window resting on few effective rows gets a wider
    # band); the sup-t value is widened by the same factor
    stretch = eng.small_sample_factor(ess, level)
    live = np.where(ok, 1.0, np.nan)
    z = ndtri(0.5 + level / 2)
    half = crit[:, None] * stretch * se
    return {"point": live * np.stack([est - z * stretch * se, est + z * stretch * se]),
            "simultaneous": live * np.stack([est - half, est + half]),
            "crit": crit, "ess": ess, "mass": mass, "overlap": ok}


def _feature_node(dim: str, grid, fit: dict, bands: dict, opts: DebiasedOptions, level: float) -> tuple:
    """The node's variables, node attrs and band attrs of one feature."""
    vdims = ("output", dim)
    variables = {"pd": (vdims, fit["estimate"]), "pd_plugin": (vdims, fit["plugin"].reshape(fit["estimate"].shape)),
                 "effective_sample_size": (vdims, bands["ess"]), "weight_mass": (vdims, bands["mass"]),
                 "overlap": (vdims, bands["overlap"].astype(np.int8))}
    n = fit["diag_weights"].size
    node = dict(fit["extra"], n_clipped_weights=int(fit["n_clipped"]), clipped_share=float(fit["n_clipped"] / n),
                target="dgp", smoother="none (AIPW per level)" if grid.categorical
                else "local linear, robust bias correction (local quadratic, b = h), Epanechnikov",
                min_effective_size=float(opts.min_effective_size), weight_mass_range=list(opts.weight_mass_range),
                max_weight=float(opts.max_weight))
    common = {"method": METHOD, "interval": "normal", "confidence_level": float(level), "target": "dgp",
              "n_folds": opts.n_folds}
    critical = [float(c) for c in bands["crit"]]
    attrs = (dict(common, simultaneous=0), dict(common, simultaneous=1, critical_value=critical))
    return variables, node, attrs


def _result_tree(spec, per_node, node_attrs, bands, header, outputs) -> xr.DataTree:
    """The one assembly (:func:`pdpboot.io.build_tree`) plus each node's two bands."""
    result = build_tree(spec, per_node, outputs=outputs, ice_rows=None, header=header, node_attrs=node_attrs)
    for name in per_node:
        ds = result[name].to_dataset()
        band, attrs = bands[name]
        ds.update(band_variables("pd", ds["pd"], *band["point"], se=band["se"], attrs=attrs[0]))
        ds["pd_band_simultaneous"] = band_variables("pd", ds["pd"], *band["simultaneous"], attrs=attrs[1])["pd_band"]
        result[name].dataset = ds
    return result


def debiased_partial_dependence(
    estimator,
    X,
    y,
    features,
    *,
    options: DebiasedOptions | None = None,
    confidence_level: float = 0.95,
    grid: Grid | None = None,
    response_method: str = "auto",
    rng=None,
    execution: Execution | None = None,
) -> xr.DataTree:
    """Partial dependence of the data-generating process with pointwise and whole-curve bands.

    The target is ``theta(a) = E_C[mu(a, X_C)]``, ``mu(x) = E[Y | X = x]`` -- the PD of the
    process that generated the data (not of the fitted learner).  ``estimator`` is cross-fitted
    on ``n_folds`` folds (each row's prediction and ICE come from the model fitted without its fold,
    computed by the package's engines: the exact tree engine for tree models), and so is a model of
    how ``x_s`` depends on the other columns ``x_C``: the density ratio ``p(a) p(c) / p(a, c)`` by
    real-versus-permuted classification (numeric ``x_s``) or the propensity ``P(x_s = a | x_C)``
    (categorical ``x_s``).  The estimate is the cross-fitted plug-in PD plus a localised,
    density-ratio-weighted average of held-out residuals (robust-bias-corrected local-linear
    smoother; categorical: the AIPW mean per level), so the learner's bias is removed to first order
    and nuisance errors enter only as a product.  Details and formulas: :mod:`pdpboot.engine.debiased`;
    coverage: see the validation page of the documentation.

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
    grid : Grid, optional
        The grid, as in :func:`pdpboot.partial_dependence` (same rule, same grid).
    response_method : {"auto", "predict", "predict_proba"}
        ``decision_function`` is refused (its scale has no observed counterpart).
    rng : None, int or numpy.random.Generator
        The one seed of the folds, the fits, the nuisance classifiers, the permutations and the
        multipliers (None: fresh entropy; with a checkpoint, its seed).
    execution : Execution, optional
        How the ``n_folds`` fits run (:class:`pdpboot.Execution`): ``n_jobs`` (results identical for any
        value), ``threads_per_job``, ``progress``, ``checkpoint`` (finished folds are saved; a repeated
        call resumes), ``method`` and ``memory_limit`` of the PD engine.  ``on_error`` must stay
        ``"raise"``: no fold may be dropped.

    Returns
    -------
    xarray.DataTree
        One child per feature with ``pd`` (``output``, feature), the debiased estimate;
        ``pd_se``; ``pd_band`` (``ci_bound``, ``output``, feature), the pointwise normal band, and
        ``pd_band_simultaneous``, the sup-t band covering the whole curve (over the points with
        overlap), both NaN where overlap is too thin; ``pd_plugin``, the cross-fitted plug-in PD;
        ``effective_sample_size``, ``weight_mass`` and ``overlap`` (1 where both pass), (``output``,
        feature).  Band attrs: ``method``, ``confidence_level``, ``simultaneous``, ``critical_value``,
        ``target = "dgp"``; node attrs: ``bandwidth``, ``bandwidth_rot`` (per output, numeric features),
        ``ratio_model``, ``n_clipped_weights``.  Root attrs: the header
        (:class:`pdpboot.header.ResultHeader`) with ``target = "dgp"``, ``uncertainty =
        "debiased-crossfit"``, ``n_folds``, ``fold_sizes``, ``n_rows``.

    Notes
    -----
    Guarantees are asymptotic and rest on: (i) overlap (``p(a, c) > 0`` wherever ``p(a) p(c) > 0``
    near the grid, with weights of finite variance; grid points below ``options.min_effective_size``
    get no band), (ii) the product of the root-mean-square errors of the learner and of the
    density-ratio model being ``o(1 / sqrt(n h))``, (iii) a smooth ``theta`` for the bias correction.
    The reading as a causal dose-response additionally needs no unmeasured confounding.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot import Grid
    >>> from pdpboot.datasets import make_interaction
    >>> X, y = make_interaction(300, rng=0)
    >>> res = debiased_partial_dependence(LinearRegression(), X, y, ["x1"], grid=Grid(5), rng=0)
    >>> res["x1"]["pd_band"].dims, res.attrs["target"]
    (('ci_bound', 'output', 'x1'), 'dgp')
    """
    if options is not None and not isinstance(options, DebiasedOptions):
        raise TypeError(f"options must be a pdpboot.DebiasedOptions, got {type(options).__name__}.")
    opts = DebiasedOptions() if options is None else options
    level = check_probability(confidence_level, "confidence_level")
    execution = resolve_execution(execution)
    spec, resolved, y, outputs = _check_call(estimator, X, y, features, opts, execution, response_method, grid)
    # the run's seed (a checkpoint's for rng=None); its children: 0 the folds, 2 the nuisance classifiers, the
    # loop's own (the fits: 3 .. 2 + K), and 3 + K the multipliers, all counted from the children spawned before
    root = root_generator(check_rng(rng), execution.checkpoint)
    first = root.bit_generator.seed_seq.n_children_spawned
    scheme = CrossFit.from_seed(spec.n_rows, opts.n_folds, child(root, first))
    _check_folds(scheme.folds, y, resolved)
    effect = DebiasedEffect(spec, _evaluated(spec, opts.n_fine), y, tuple(outputs))
    plan = make_plan(estimator, y, effect, resampling=Resampling("bootstrap", n_resamples=opts.n_folds),
                     execution=execution, response_method=resolved, rng=root, scheme=scheme)
    out = run(plan, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    mu, ice = _held_out(out.resamples, scheme.folds, spec)
    residual = _response_matrix(y, resolved, outputs) - mu
    weight_estimator = default_weight_classifier() if opts.weight_estimator is None else opts.weight_estimator
    encoded, owners = _encode_columns(spec.X, spec.names, {p: g.categorical for p, g in spec.grids.items()})
    n_sets = len(spec.feature_sets)
    per_node, node_attrs, bands = {}, {}, {}
    for fs, fine, w_seed, m_seed in zip(spec.feature_sets, effect.evaluated, child(root, first + 2).spawn(n_sets),
                                        child(root, first + 3 + opts.n_folds).spawn(n_sets)):
        pos, name = fs[0], node_name(spec.dims(fs))
        others, values = encoded[:, np.asarray(owners, dtype=int) != pos], _column(spec, pos)
        if spec.grids[pos].categorical:
            fit = _categorical_fit(ice[fs], residual, values, spec.grids[pos], others, scheme.folds,
                                   w_seed.spawn(opts.n_folds), opts, weight_estimator)
        else:
            fit = _numeric_fit(ice[fs], residual, values, spec.grids[pos], fine, others, scheme.folds, w_seed, opts,
                               weight_estimator)
        band = dict(_bands(fit, opts, level, m_seed), se=fit["se"])
        per_node[name], node_attrs[name], attrs = _feature_node(spec.names[pos], spec.grids[pos], fit, band,
                                                                opts, level)
        bands[name] = (band, attrs)
    settings = dict(spec.settings, **dict(opts.settings(), weight_estimator=repr(weight_estimator)),
                    confidence_level=float(level), response_method=response_method)
    header = ResultHeader.describe(estimator, settings, response=resolved, outputs=outputs, n_rows=spec.n_rows,
                                   target="dgp", uncertainty=METHOD, n_folds=opts.n_folds, created=out.created,
                                   rng_entropy=out.seed["entropy"], supports=effect.supports(resolved),
                                   fold_sizes=json.dumps(np.bincount(scheme.folds).tolist()))
    return _result_tree(spec, per_node, node_attrs, bands, header, outputs)
