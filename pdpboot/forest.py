"""One-fit confidence bands for the partial dependence of a random forest.

A refit bootstrap of a random forest refits B forests, each of which already
is a bootstrap ensemble.  The infinitesimal jackknife (IJ) of Wager, Hastie &
Efron (2014) estimates the sampling variance of a bagged prediction from the
one fitted forest, through the covariance over its trees between the in-bag
counts of each row and the trees' outputs.  :func:`forest_partial_dependence`
applies it to the partial dependence (PD), whose influence has a second part
through the average over the rows; the derivation and the estimators are in
:mod:`pdpboot.engine.jackknife`.

The result has the schema of :func:`pdpboot.confidence_bands` output (``pd``,
``pd_se``, ``pd_band`` and, for 1-D nodes, ``pd_centered`` with its own band),
without ``pd_resamples``; ``pd_band.attrs["method"]`` names the estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import xarray as xr
from scipy.special import ndtri
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from ._assemble import band_variables, build_tree
from ._evaluate import PDEffect, resolve_outputs
from ._plan import make_spec
from ._validate import check_choice, check_positive_int, check_probability, check_rng, check_target, is_fitted
from .caveats import warn_forest_ij
from .engine import jackknife as jk
from .engine.response import resolve_response_method
from .header import ResultHeader
from .options import Execution, resolve_execution
from .schema import node_name

UNCERTAINTY = {"ij": "infinitesimal-jackknife", "jackknife": "jackknife-after-bootstrap"}

#: Fewer trees than this draw a warning (see the note on the number of trees in
#: :func:`forest_partial_dependence`).
MIN_TREES = 1000
#: Warn when the Monte Carlo bias correction removes more than this share of the raw IJ variance
#: (median over the grid points of a node); the warning then names the number of trees that would
#: bring it down to this share (the correction falls like 1 / n_estimators).
MAX_NOISE_SHARE = 0.5


def _training_array(X) -> np.ndarray:
    """The rows as the trees see them (trees inside a forest are fitted on plain arrays)."""
    try:
        return np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"X must be numeric for a random forest (as scikit-learn requires); converting it failed: {exc}"
        ) from None


def _parts(model):
    """(fitted-or-not preprocessing or None, forest) of a bare forest or a Pipeline ending in one."""
    if isinstance(model, Pipeline):
        if len(model.steps) < 2:
            return None, model.steps[-1][1]
        return model[:-1], model.steps[-1][1]
    return None, model


def _check_model(model) -> None:
    pre, forest = _parts(model)
    if pre is not None and not isinstance(forest, jk.FOREST_TYPES):
        raise TypeError(f"The last step of this Pipeline is a {type(forest).__name__}; the infinitesimal jackknife "
                        "needs a Pipeline ending in a scikit-learn random forest or extra-trees model. For other "
                        "models use pdpboot.bootstrap_partial_dependence.")
    jk.check_forest(forest)
    if not is_fitted(forest) and forest.n_estimators < 2:
        raise ValueError(f"The forest has n_estimators={forest.n_estimators}; the infinitesimal jackknife needs "
                         "many trees (at least 2, better 1000 or more): raise n_estimators.")


def _set_forest_params(model, **params):
    if isinstance(model, Pipeline):
        params = {f"{model.steps[-1][0]}__{k}": v for k, v in params.items()}
    model.set_params(**params)


def _fit_forest(forest, X, y, n_estimators, seed: np.random.Generator):
    _check_model(forest)
    if is_fitted(forest):
        trees = len(_parts(forest)[1].estimators_)
        if n_estimators is not None and n_estimators != trees:
            raise ValueError(
                f"n_estimators={n_estimators} but the forest is already fitted with {trees} "
                "trees; leave n_estimators=None, or pass an unfitted forest."
            )
        return forest, False
    y = check_target(y, X.shape[0], forest)
    model = clone(forest)
    if n_estimators is not None:
        _set_forest_params(model, n_estimators=n_estimators)
    if _parts(model)[1].random_state is None:
        _set_forest_params(model, random_state=int(seed.integers(0, 2**31 - 1)))
    return model.fit(X, y), True


def _stats(u, t, m, level, crit, *, oob=None, counts=None, jackknife=False):
    """Estimate, SE and bands of one statistic from its influence (n, O, P) and tree values (B, O, P)."""
    raw = (u**2).sum(axis=0)
    noise = jk.mc_noise(t, m)
    if jackknife:
        var = jk.jackknife_variance(counts, t, oob, n_draws=m)
    else:
        var = raw - noise
    se = np.sqrt(np.clip(var, 0, None))
    est = t.mean(axis=0)
    z = ndtri(0.5 + level / 2)
    live = raw > 0  # (the centred PD has no variance at its anchor point)
    share = float(np.median(noise[live] / raw[live])) if live.any() else 0.0
    info = {"n_negative_variance": int((var < 0).sum()), "mc_noise_share": share}
    bands = {"pointwise": (est - z * se, est + z * se)}
    if crit is not None:
        bands["simultaneous"] = (est - crit[:, None] * se, est + crit[:, None] * se)
    return est, se, bands, info


def forest_partial_dependence(
    forest,
    X,
    y,
    features,
    *,
    uncertainty: str = "ij",
    confidence_level: float = 0.95,
    simultaneous: bool = False,
    n_multipliers: int = 1000,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
    response_method: str = "auto",
    rng=None,
    execution: Execution | None = None,
) -> xr.DataTree:
    """PD of a random forest with one-fit (infinitesimal-jackknife) confidence bands. **Experimental.**

    The bands do not meet the package's own criteria (coverage within 0.03 of
    the refit bootstrap's at 1/20 of its cost) and every call draws a
    :class:`pdpboot.CoverageWarning`.  Measured on Friedman 1
    (``experiments/forest_ij.py``, 95 % bands): n = 500, 1000 trees,
    R = 20 data sets: pointwise 0.877 (MC SE 0.034), whole curve (sup-t)
    0.717 (0.078), against 0.933 (0.031) for the refit bootstrap's
    normal/sup-t band (B = 50 forests of 100 trees) at a quarter of its CPU
    (4.1 s against 16.7 s, not the 1/20 targeted); n = 2000, 1000 trees,
    R = 29: pointwise 0.867 (0.013), whole curve 0.402 (0.053); 5000 trees
    reach 0.83 whole curve but cost more than that bootstrap.  An
    independent audit (n = 300, 1000 trees, R = 40) measured pointwise 0.900
    and whole curve 0.800.  Use
    :func:`pdpboot.bootstrap_partial_dependence` for bands you report.

    The forest is fitted once (or taken as fitted); each tree's bootstrap
    counts are recovered from its seed, each tree's PD over the rows of ``X``
    is computed, and the variance of the forest's PD at every grid point is
    estimated from them: ``V_IJ-U = sum_i U_i(z)^2 - (m/B^2) sum_b (PD_b(z) -
    PD(z))^2`` with the influence ``U_i(z) = Cov_b(N_bi, PD_b(z)) + (ICE_i(z) -
    PD(z))/n`` (derivation in :mod:`pdpboot.engine.jackknife`).  This targets
    the same sampling variance as :func:`pdpboot.bootstrap_partial_dependence`
    with ``background="resample"`` (refit on resampled rows and average over
    them), for one forest fit instead of B.

    Parameters
    ----------
    forest : RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor or ExtraTreesClassifier
        With ``bootstrap=True`` and ``class_weight=None``, or a Pipeline ending
        in one (e.g. categorical columns one-hot encoded): the rows with the
        features set to each grid point are then passed through its fitted
        preprocessing and the trees read the result; the preprocessing is held
        fixed (the IJ sees the variability of the forest's fit, not of an
        imputer's or scaler's statistics).  Unfitted: cloned,
        given (if unset) a ``random_state`` drawn from ``rng``, and fitted on
        ``X, y``.  The IJ needs many trees (set the forest's own
        ``n_estimators``): its Monte Carlo noise shrinks like n/B; fewer than
        ``MIN_TREES`` (1000) draw a warning, as does a bias correction that
        removes more than half of the raw variance somewhere.  Fitted: ``X`` must be its training
        data in the same row order (checked) and ``y`` may be None.
    X : DataFrame or array of shape (n_rows, n_columns)
        Training rows, which are also the rows the PD averages over (a
        Pipeline's input: category columns allowed; a bare forest's: numeric).
    y : array-like of shape (n_rows,) or (n_rows, n_targets), or None
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    uncertainty : {"ij", "jackknife"}
        The bias-corrected infinitesimal jackknife ``V_IJ-U`` (default), or
        the bias-corrected jackknife-after-bootstrap ``V_J-U`` (a comparator:
        more Monte Carlo noise, and an upward bias).
    confidence_level : float
        In (0, 1).
    simultaneous : bool
        ``pd_band`` is then the sup-t band covering each whole curve or
        surface (per output); its critical value is the ``confidence_level``
        quantile of the maximum of a Gaussian multiplier process
        ``sum_i xi_i U_i(z) / sd(z)``.  The pointwise band is kept as
        ``pd_band_pointwise``.
    n_multipliers : int
        Multiplier draws for the simultaneous band.
    grid_resolution, percentiles, custom_values, categorical_features, response_method
        As in :func:`pdpboot.partial_dependence` (classifiers: ``predict_proba``).
    rng : None, int or numpy.random.Generator
        Seeds the forest (if unfitted and without ``random_state``) and the multipliers.
    execution : Execution, optional
        Of a :class:`pdpboot.Execution` only two fields apply (one fit; the
        others are refused): ``method`` {"auto", "brute", "tree"}, how each
        tree's PD and ICE are computed (``auto``: one compiled walk of the
        forest, or one traversal of the stacked rows per tree reading leaf
        values; ``brute``/``tree``: the package's engines tree by tree; same
        numbers, see :func:`pdpboot.engine.jackknife.evaluate_trees`;
        Pipelines: ``auto`` only), and ``n_jobs``, joblib workers (threads)
        over chunks of trees (fitting an unfitted forest uses the forest's own
        ``n_jobs``); results do not depend on it.

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, *features), the
        forest's PD; ``pd_se`` (``output``, *features); ``pd_band``
        (``ci_bound``, ``output``, *features), a normal band whose attrs record
        ``method`` ("infinitesimal-jackknife" or "jackknife-after-bootstrap"),
        ``confidence_level``, ``simultaneous``, ``critical_value``,
        ``n_estimators``, ``mc_noise_share`` (median over the grid of the
        share of the raw IJ variance removed by the bias correction) and ``n_negative_variance``
        (points whose corrected variance was negative, given SE 0); with
        ``simultaneous``, ``pd_band_pointwise``.  1-D nodes also hold
        ``pd_centered`` (PD minus its value at the first grid point) with
        ``pd_centered_se`` and ``pd_centered_band``.  Root attrs: provenance,
        ``uncertainty``, ``n_estimators``, ``n_rows``.

    Warns
    -----
    pdpboot.CoverageWarning
        Always: the method is experimental (measured coverage above).
    UserWarning
        Fewer than ``MIN_TREES`` trees, or a bias correction removing more
        than half of the raw variance.

    See Also
    --------
    pdpboot.bootstrap_partial_dependence : refit bootstrap, any estimator.
    pdpboot.engine.jackknife : the NumPy layer and the derivation.

    Notes
    -----
    The IJ is a first-order (linearisation) estimate of the variance of the
    forest's PD around the learner's expected PD; it does not see the bias of
    the forest, and it is noisy when the forest has few trees relative to the
    number of rows (Wager et al.: B of order n is needed).

    Examples
    --------
    >>> import warnings
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from pdpboot import Execution
    >>> from pdpboot.datasets import make_friedman1
    >>> X, y = make_friedman1(100, rng=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # 20 trees are far too few for reliable bands
    ...     res = forest_partial_dependence(RandomForestRegressor(20, min_samples_leaf=5), X, y, ["x1"],
    ...                                     grid_resolution=5, execution=Execution(method="brute"), rng=0)
    >>> res["x1"]["pd_band"].dims
    ('ci_bound', 'output', 'x1')
    >>> res["x1"]["pd_band"].attrs["method"]
    'infinitesimal-jackknife'
    """
    execution = resolve_execution(execution)
    execution.check_used("forest_partial_dependence", ("n_jobs", "method"))
    method, n_jobs = execution.method, execution.n_jobs
    n_estimators = None
    check_choice(uncertainty, "uncertainty", tuple(UNCERTAINTY))
    warn_forest_ij()  # experimental: measured below its criteria (issue 27)
    confidence_level = check_probability(confidence_level, "confidence_level")
    rng = check_rng(rng)
    if n_estimators is not None:
        n_estimators = check_positive_int(n_estimators, "n_estimators", 2)
    n_multipliers = check_positive_int(n_multipliers, "n_multipliers", 100)
    _check_model(forest)
    pipeline = _parts(forest)[0] is not None
    if pipeline and method != "auto":
        raise ValueError(f"method={method!r}: behind a Pipeline the trees are evaluated on the transformed "
                         "stacked rows (leave method='auto').")
    spec = make_spec(X, features, grid_resolution=grid_resolution, percentiles=percentiles,
                     custom_values=custom_values, categorical_features=categorical_features, method=method)
    generator = np.random.default_rng(rng)
    fit_seed, multiplier_seed = generator.spawn(2)
    xa = None if pipeline else _training_array(spec.X)
    n_rows = spec.X.shape[0]
    resolved = resolve_response_method(forest, response_method)  # before the fit: fail early
    model, fitted_here = _fit_forest(forest, spec.X, y, n_estimators, fit_seed)
    pre, trees = _parts(model)
    if pre is not None:  # the trees see the transformed rows; the grids stay in the input space
        xt = pre.transform(spec.X)
        xt = np.asarray(xt.toarray() if hasattr(xt, "toarray") else xt, dtype=np.float32)
    counts = jk.inbag_counts(trees, n_rows)
    if not fitted_here:
        jk.check_training_rows(trees, xa if pre is None else xt, counts)
    m = jk.bootstrap_draws(trees, n_rows)
    n_trees = counts.shape[0]
    outputs = resolve_outputs(model, resolved, y=y, rows=spec.rows(np.arange(1)))
    jackknife = uncertainty == "jackknife"
    label = UNCERTAINTY[uncertainty]

    per_node, bands, worst = {}, {}, 0.0
    seeds = multiplier_seed.spawn(len(spec.feature_sets))
    for fs, seed in zip(spec.feature_sets, seeds):
        dims = spec.dims(fs)
        ev = jk.evaluate_trees(trees, spec.X if pre is not None else xa, fs, spec.grid_values(fs),
                               response_method=resolved, counts=counts if jackknife else None, method=method,
                               n_outputs=len(outputs), n_jobs=n_jobs,
                               transform=None if pre is None else pre.transform)
        shape = ev.tree_pd.shape[1:]
        t = ev.tree_pd.reshape(n_trees, len(outputs), -1)
        u = jk.ij_influence(counts, t, ev.ice.reshape(n_rows, len(outputs), -1))
        oob = ev.oob_ice.reshape(n_rows, len(outputs), -1) if jackknife else None
        targets = [("pd", u, t, oob)]
        if len(fs) == 1:
            targets.append(("pd_centered", u - u[..., :1], t - t[..., :1],
                            None if oob is None else oob - oob[..., :1]))
        variables, node_bands = {}, {}
        for name, u_s, t_s, oob_s in targets:
            crit = None
            if simultaneous:
                crit = jk.supt_critical_value(u_s, level=confidence_level, n_multipliers=n_multipliers,
                                              rng=seed)
            est, se, limits, info = _stats(u_s, t_s, m, confidence_level, crit, oob=oob_s, counts=counts,
                                           jackknife=jackknife)
            if name == "pd":
                worst = max(worst, info["mc_noise_share"])
            variables[name] = (("output", *dims), est.reshape(shape))
            attrs = {"method": label, "interval": "normal", "confidence_level": float(confidence_level),
                     "n_estimators": n_trees, "bias_correction": 1, "simultaneous": int(simultaneous), **info}
            if simultaneous:
                attrs["critical_value"] = [float(c) for c in crit]
            node_bands[name] = dict(lower=limits["simultaneous" if simultaneous else "pointwise"][0], se=se,
                                    upper=limits["simultaneous" if simultaneous else "pointwise"][1], attrs=attrs,
                                    pointwise=limits["pointwise"] if simultaneous else None)
        per_node[node_name(dims)] = variables
        bands[node_name(dims)] = node_bands

    _warn_trees(n_trees, n_rows, worst)
    settings = dict(spec.settings, n_estimators=n_trees, uncertainty=uncertainty,
                    confidence_level=float(confidence_level), simultaneous=bool(simultaneous),
                    n_multipliers=n_multipliers, response_method=response_method, n_jobs=n_jobs)
    header = ResultHeader.describe(model, settings, response=resolved, outputs=outputs, n_rows=n_rows,
                                   uncertainty=label, n_estimators=n_trees, bootstrap_draws=m,
                                   forest_fitted_here=int(fitted_here), mc_noise_share=worst,
                                   rng_entropy=str(generator.bit_generator.seed_seq.entropy),
                                   supports=PDEffect(spec).supports(resolved))
    result = build_tree(spec, per_node, outputs=outputs, ice_rows=None, header=header)
    for node, node_bands in bands.items():
        ds = result[node].to_dataset()
        for name, band in node_bands.items():
            pointwise = band["pointwise"]
            ds.update(band_variables(name, ds[name], band["lower"], band["upper"], se=band["se"],
                                     attrs=band["attrs"], pointwise=None if pointwise is None else pointwise))
        result[node].dataset = ds
    return result


def _warn_trees(n_trees: int, n_rows: int, noise_share: float) -> None:
    reasons = []
    if n_trees < MIN_TREES:
        reasons.append(f"the forest has {n_trees} trees (fewer than {MIN_TREES})")
    if noise_share > MAX_NOISE_SHARE:
        # noise ~ 1/B and the corrected variance V does not depend on B: share(B') = c / (V + c) with
        # c = noise * B / B'; share <= s  <=>  B' >= B * (noise / V) * (1 - s) / s
        ratio = noise_share / (1 - noise_share)
        needed = int(np.ceil(n_trees * ratio * (1 - MAX_NOISE_SHARE) / MAX_NOISE_SHARE / 100) * 100)
        reasons.append(f"Monte Carlo noise is {noise_share:.0%} of the raw IJ variance (median over a grid; "
                       f"about {needed} trees would bring it to {MAX_NOISE_SHARE:.0%})")
    if reasons:
        warnings.warn(
            "Infinitesimal-jackknife bands may be unreliable: " + " and ".join(reasons) + f" (n = {n_rows} rows). "
            "Use more trees (the noise falls like n / n_estimators), or the refit bootstrap "
            "(pdpboot.bootstrap_partial_dependence).",
            UserWarning, stacklevel=3,
        )
