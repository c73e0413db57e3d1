"""Bands for the data's partial dependence: a cross-fitted, doubly robust (debiased) estimator.

Cross-fitting (:class:`pdpboot.engine.resample.CrossFit`) times :class:`DebiasedEffect` on the one loop, then
the combination with a density-ratio or propensity model (formulas: :mod:`pdpboot.engine.debiased`).
"""

from __future__ import annotations

import datetime
import json
import warnings
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
from .caveats import CoverageWarning, no_band_message
from .engine import compute_pd_many
from .engine import debiased as eng
from .engine.resample import CrossFit, child, rows_of
from .engine.response import resolve_response_method, response_function
from .grid import Grid
from .header import ResultHeader
from .io import band_variables, build_tree
from .options import Execution, Resampling, resolve_execution
from .schema import node_name

METHOD = "debiased-crossfit"
#: The node of a fold's held-out predictions among the effect's arrays (no feature node has a "/" in its name).
HELD_OUT = "/held-out"
#: Execution fields a cross-fitted run uses (no fold may fail).
EXECUTION_USED = ("n_jobs", "threads_per_job", "progress", "checkpoint", "on_error", "method", "memory_limit")


@dataclass(frozen=True, eq=False)
class DebiasedOptions:
    """The nuisance, smoothing and overlap settings of :func:`debiased_partial_dependence`, validated once.

    Parameters
    ----------
    n_folds : int
        Cross-fitting folds (>= 2).
    weight_estimator : classifier with ``predict_proba``, optional
        Nuisance classifier (default :func:`default_weight_classifier`).
    bandwidth : float, optional
        Kernel bandwidth of every numeric feature (default: the rule of thumb).
    min_effective_size, weight_mass_range : float, (float, float)
        Grid points with a smaller effective sample size or a local weight mass outside the range get no band.
    max_weight : float
        Density-ratio and inverse-propensity weights are clipped at this value.
    n_permutations, n_fine, n_multipliers : int
        Permuted copies in the density-ratio classification; points of a numeric feature's fine ICE grid;
        Gaussian multiplier draws of the whole-curve band.
    min_rows_per_column : float
        Fewest training rows per spline-basis column of the density ratio, else the polynomial basis.

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
    min_effective_size: float = 20.0
    weight_mass_range: tuple[float, float] = (0.5, 2.0)
    max_weight: float = eng.MAX_WEIGHT
    n_permutations: int = 2
    n_fine: int = eng.N_FINE
    n_multipliers: int = 2000
    min_rows_per_column: float = 10.0

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 - frozen
        set_("n_folds", check_positive_int(self.n_folds, "n_folds", 2))
        set_("n_multipliers", check_positive_int(self.n_multipliers, "n_multipliers", 100))
        set_("n_permutations", check_positive_int(self.n_permutations, "n_permutations", 1))
        set_("n_fine", check_positive_int(self.n_fine, "n_fine", 2))
        for name, low, op in (("min_rows_per_column", 0, ">="), ("max_weight", 1, ">"),
                              ("min_effective_size", 0, ">=")):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and (value > low if op == ">" else value >= low)):
                raise ValueError(f"{name} must be a number {op} {low}, got {value!r:.80}.")
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

    def classifier(self):
        """The nuisance classifier: ``weight_estimator`` or :func:`default_weight_classifier`."""
        return default_weight_classifier() if self.weight_estimator is None else self.weight_estimator

    def settings(self) -> dict:
        """The options as netCDF-safe provenance (the classifier by its repr)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return dict(out, weight_mass_range=list(self.weight_mass_range), weight_estimator=repr(self.classifier()))


def default_weight_classifier():
    """L2-penalised logistic regression on standardised inputs: the default nuisance classifier."""
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))


def _encode_columns(X, names: list[str], categorical: dict[int, bool]) -> tuple[np.ndarray, list[int]]:
    """All columns as standardised numbers (categorical ones one-hot, first level dropped, missing values the mean),
    and per output column the position of its input column."""
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
    """The feature, its grid and the other non-binary columns as normal scores: the density ratio's inputs."""
    scores = eng.normal_scores(a, at=grid)
    ns_others = np.column_stack([eng.normal_scores(c) if np.unique(c).size > 2 else c for c in others.T]
                                ) if others.shape[1] else others
    return scores[0], scores[1], ns_others


def _splits(folds: np.ndarray):
    """``(k, training rows, held-out rows)`` of every fold."""
    for k in range(int(folds.max()) + 1):
        yield k, np.flatnonzero(folds != k), np.flatnonzero(folds == k)


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


def _column(spec: PDSpec, pos: int):
    """Every row's value of column ``pos``."""
    return rows_of(spec.X.iloc[:, pos] if isinstance(spec.X, pd.DataFrame) else spec.X[:, pos], np.arange(spec.n_rows))


@dataclass(frozen=True, eq=False)
class DebiasedEffect:
    """One fold's model on its held-out rows: its predictions and every feature's ICE curves.

    ``evaluated``: per feature set, where its ICE is computed (a numeric feature's fine grid, a categorical
    one's levels); ``outputs``: the labels every fold's model must have.
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
        ``fine``) per feature node, on the held-out rows (``evaluation.background``)."""
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
    for fs in spec.feature_sets:
        if pd.Series(_column(spec, fs[0])).nunique() < 2:
            raise ValueError(f"Feature {spec.names[fs[0]]!r} takes one value in X: it has no partial dependence to "
                             "estimate; leave it out of features.")
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
    for k, train, _ in _splits(folds):
        if np.unique(labels[train]).size < np.unique(labels).size:
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


def _categorical_fit(ice, residual, values, grid, fine, others, folds, w_seed, opts, weight_estimator) -> dict:
    """AIPW per level with the cross-fitted propensity: the estimate and its overlap inputs."""
    n, fold_seeds = folds.size, w_seed.spawn(opts.n_folds)
    level_index = {v: i for i, v in enumerate(grid.values.tolist())}
    codes = np.array([level_index.get(v, -1) for v in np.asarray(values).tolist()])
    design = np.hstack([others, others**2]) if others.shape[1] else np.zeros((n, 1))
    weights, full_proba, n_clipped = np.empty(n), np.zeros((n, grid.values.size)), 0
    for k, train, test in _splits(folds):
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
    n, n_folds = folds.size, int(folds.max()) + 1
    a_raw, points = np.asarray(values, dtype=float), np.asarray(grid.values, dtype=float)
    seeds = w_seed.spawn(4 * n_folds)   # K each: the polynomial basis, the spline basis, unused, held-out scoring
    spline = eng.spline_columns(others.shape[1]) * opts.min_rows_per_column <= n - np.bincount(folds).max()
    model, design = ("spline", eng.spline_ratio_design) if spline else ("polynomial", eng.ratio_design)
    a_in, grid_in, c_in = _ratio_inputs(a_raw, points, others)
    weights, counterfactual, n_clipped, loss = np.empty(n), np.empty((n, points.size)), 0, 0.0
    for k, train, test in _splits(folds):
        seed = seeds[n_folds + k] if spline else seeds[k]
        fit = eng.fit_density_ratio(_classifier_fitter(weight_estimator, seed), a_in[train], c_in[train], a_in[test],
                                    c_in[test], design=design, n_permutations=opts.n_permutations,
                                    max_weight=opts.max_weight, rng=seed, a_grid=grid_in,
                                    score_rng=seeds[3 * n_folds + k])
        weights[test], counterfactual[test] = fit["weights"], fit["counterfactual"]
        n_clipped += fit["n_clipped"]
        loss += fit["holdout_loss"] * test.size / n
    normalised = weights.copy()
    for _, _, test in _splits(folds):   # mean 1 per held-out fold for the estimate
        normalised[test] /= normalised[test].mean()
    fit = eng.debiased_curve(ice, fine, normalised[:, None] * residual, a_raw, points, bandwidth=opts.bandwidth)
    kernel = np.stack([eng.epanechnikov((a_raw[None, :] - points[:, None]) / eng.diagnostic_bandwidth(a_raw, h))
                       for h in fit["bandwidth"]])
    extra = {"bandwidth": [float(h) for h in fit["bandwidth"]], "bandwidth_rot": [float(h) for h in fit["h_rot"]],
             "ratio_model": model, "ratio_holdout_loss": json.dumps({model: round(loss, 6)})}
    return dict(fit, kernel=kernel, diag_weights=weights, n_clipped=n_clipped, extra=extra,
                second_moment=counterfactual.mean(axis=0))                # E[w^2 | A = a] = E_C[w(a, C)]


def _feature_node(dim: str, grid, fit: dict, opts: DebiasedOptions, level: float, m_seed) -> tuple:
    """The node's variables and node attrs, and its pointwise and sup-t bands (NaN where overlap is too thin)."""
    ess, mass, ok = eng.overlap(fit["kernel"], fit["diag_weights"], min_effective_size=opts.min_effective_size,
                                mass_range=opts.weight_mass_range, second_moment=fit["second_moment"])
    est, se = fit["estimate"], fit["se"]
    crit = eng.supt_critical_value(fit["influence"], se, level, n_multipliers=opts.n_multipliers, rng=m_seed,
                                   mask=ok)
    stretch = eng.small_sample_factor(ess, level)   # Student-t with ESS - 1 degrees of freedom, for both bands
    live, z = np.where(ok, 1.0, np.nan), ndtri(0.5 + level / 2)
    half = crit[:, None] * stretch * se
    vdims, n = ("output", dim), fit["diag_weights"].size
    variables = {"pd": (vdims, est), "pd_plugin": (vdims, fit["plugin"].reshape(est.shape)),
                 "effective_sample_size": (vdims, ess), "weight_mass": (vdims, mass),
                 "overlap": (vdims, ok.astype(np.int8))}
    node = dict(fit["extra"], n_clipped_weights=int(fit["n_clipped"]), clipped_share=float(fit["n_clipped"] / n),
                target="dgp", smoother="none (AIPW per level)" if grid.categorical
                else "local linear, robust bias correction (local quadratic, b = h), Epanechnikov",
                min_effective_size=float(opts.min_effective_size), weight_mass_range=list(opts.weight_mass_range),
                max_weight=float(opts.max_weight))
    common = {"method": METHOD, "interval": "normal", "confidence_level": float(level), "target": "dgp",
              "n_folds": opts.n_folds}
    band = {"se": se, "point": live * np.stack([est - z * stretch * se, est + z * stretch * se]),
            "simultaneous": live * np.stack([est - half, est + half]), "attrs": (
                dict(common, simultaneous=0), dict(common, simultaneous=1, critical_value=[float(c) for c in crit]))}
    return variables, node, band


def _grid_runs(values, flagged: np.ndarray, most: int = 3) -> str:
    """The grid values with ``flagged`` as ranges ``a to b`` (at most ``most``, then ``...``), or every one."""
    if flagged.all():
        return "every grid value"
    def show(v) -> str:
        return f"{v:.3g}" if isinstance(v, (int, float, np.number)) else str(v)

    runs, start = [], None
    for i, flag in enumerate([*flagged, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append(show(values[start]) if start == i - 1 else f"{show(values[start])} to {show(values[i - 1])}")
            start = None
    return ", ".join(runs[:most]) + (", ..." if len(runs) > most else "")


def _no_band(feature: str, values, variables: dict, opts: DebiasedOptions) -> str | None:
    """The warning of a feature's grid values without a band (overlap flags), or None when every one has one."""
    ok = variables["overlap"][1].astype(bool)
    flagged = ~ok.all(axis=0)
    if not flagged.any():
        return None
    lo, hi = opts.weight_mass_range
    ess, mass = variables["effective_sample_size"][1], variables["weight_mass"][1]
    reasons = []
    if (ess < opts.min_effective_size).any(axis=0)[flagged].any():
        reasons.append(f"few rows there given the other columns (effective size < {opts.min_effective_size:g})")
    if ((mass < lo) | (mass > hi)).any(axis=0)[flagged].any():
        reasons.append(f"density-ratio weights off (mass outside [{lo:g}, {hi:g}])")
    return no_band_message(feature, _grid_runs(list(values), flagged), int(flagged.sum()), flagged.size, reasons)


def _result_tree(spec, per_node, node_attrs, bands, header, outputs) -> xr.DataTree:
    """The one assembly (:func:`pdpboot.io.build_tree`) plus each node's two bands."""
    result = build_tree(spec, per_node, outputs=outputs, ice_rows=None, header=header, node_attrs=node_attrs)
    for name in per_node:
        ds, band = result[name].to_dataset(), bands[name]
        ds.update(band_variables("pd", ds["pd"], *band["point"], se=band["se"], attrs=band["attrs"][0]))
        ds["pd_band_simultaneous"] = band_variables("pd", ds["pd"], *band["simultaneous"],
                                                    attrs=band["attrs"][1])["pd_band"]
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

    The target is ``theta(a) = E_C[E(Y | x_s = a, X_C)]``, the PD of the process that generated the data (not of
    the fitted learner).  ``estimator`` is cross-fitted on the folds (its held-out predictions and ICE curves
    through the package's engines), and so is a model of ``x_s`` given the other columns (a density ratio, or a
    propensity for a categorical ``x_s``); the estimate is the plug-in PD plus a smoothed, weighted average of
    held-out residuals (the AIPW mean per level for a categorical ``x_s``).

    Parameters
    ----------
    estimator : scikit-learn regressor or classifier
        Unfitted; cloned and fitted once per fold.  Classifiers: the PD of every class probability.
    X, y : table of shape (n_rows, n_columns), array-like of shape (n_rows,)
    features : list
        Column names or indices; 1-D only.
    options : DebiasedOptions, optional
        Folds, nuisance classifier, bandwidth, overlap thresholds, weight clipping, multiplier draws.
    confidence_level : float
    grid : Grid, optional
        The grid, as in :func:`pdpboot.partial_dependence`.
    response_method : {"auto", "predict", "predict_proba"}
    rng : None, int or numpy.random.Generator
        The one seed of the folds, fits, nuisance models, permutations and multipliers.
    execution : Execution, optional
        How the fold fits run (:class:`pdpboot.Execution`); ``on_error`` must stay ``"raise"``.

    Returns
    -------
    xarray.DataTree
        One child per feature with ``pd``, ``pd_se``, ``pd_band`` (pointwise) and ``pd_band_simultaneous``
        (sup-t), both NaN where overlap is too thin; ``pd_plugin``; ``effective_sample_size``, ``weight_mass``
        and ``overlap``.  Root attrs: the header with ``target = "dgp"``, ``uncertainty = "debiased-crossfit"``.

    Notes
    -----
    The bands are asymptotic and need overlap (``p(a, c) > 0`` wherever ``p(a) p(c) > 0``) and the product of
    the learner's and the density-ratio model's errors to be ``o(1 / sqrt(n h))``; they fail where overlap is
    weak.  See the validation page of the documentation.

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
    # the run's seed (a checkpoint's for rng=None); its children, counted from those spawned before: 0 the folds,
    # 2 the nuisance models, 3 .. 2 + K the loop's fits, 3 + K the multipliers
    root = root_generator(check_rng(rng), execution.checkpoint)
    first = root.bit_generator.seed_seq.n_children_spawned
    scheme = CrossFit.from_seed(spec.n_rows, opts.n_folds, child(root, first))
    _check_folds(scheme.folds, y, resolved)
    effect = DebiasedEffect(spec, _evaluated(spec, opts.n_fine), y, tuple(outputs))
    plan = make_plan(estimator, y, effect, resampling=Resampling("bootstrap", n_resamples=opts.n_folds),
                     execution=execution, response_method=resolved, rng=root, scheme=scheme)
    out = run(plan, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    mu, ice = _held_out(out.resamples, scheme.folds, spec)
    observed = np.asarray(y)   # on the scale of the model's output: y, or the class indicators
    residual = (observed.astype(float)[:, None] if resolved == "predict"
                else (observed[:, None] == np.asarray(outputs)[None, :]).astype(float)) - mu
    encoded, owners = _encode_columns(spec.X, spec.names, {p: g.categorical for p, g in spec.grids.items()})
    n_sets = len(spec.feature_sets)
    per_node, node_attrs, bands = {}, {}, {}
    for fs, fine, w_seed, m_seed in zip(spec.feature_sets, effect.evaluated, child(root, first + 2).spawn(n_sets),
                                        child(root, first + 3 + opts.n_folds).spawn(n_sets)):
        pos, name = fs[0], node_name(spec.dims(fs))
        others, values = encoded[:, np.asarray(owners, dtype=int) != pos], _column(spec, pos)
        try:
            fit = (_categorical_fit if spec.grids[pos].categorical else _numeric_fit)(
                ice[fs], residual, values, spec.grids[pos], fine, others, scheme.folds, w_seed, opts,
                opts.classifier())
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"The model of how {spec.names[pos]!r} depends on the other columns could not be fitted "
                             f"({exc}): it barely varies or is determined by them. Leave it out, or band the "
                             "learner's PD with pdpboot.bootstrap_partial_dependence.") from None
        per_node[name], node_attrs[name], bands[name] = _feature_node(spec.names[pos], spec.grids[pos], fit, opts,
                                                                      level, m_seed)
        note = _no_band(str(spec.names[pos]), spec.grids[pos].values, per_node[name], opts)
        if note is not None:
            node_attrs[name]["no_band"] = note
            warnings.warn(note, CoverageWarning, stacklevel=2)
    settings = dict(spec.settings, **opts.settings(), confidence_level=float(level), response_method=response_method)
    header = ResultHeader.describe(estimator, settings, response=resolved, outputs=outputs, n_rows=spec.n_rows,
                                   target="dgp", uncertainty=METHOD, n_folds=opts.n_folds, created=out.created,
                                   rng_entropy=out.seed["entropy"], supports=effect.supports(resolved),
                                   fold_sizes=json.dumps(np.bincount(scheme.folds).tolist()))
    return _result_tree(spec, per_node, node_attrs, bands, header, outputs)
