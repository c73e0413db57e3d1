"""Interaction statistics with bootstrap uncertainty, and a calibrated refit test (xarray layer).

Statistics (estimators in :mod:`pdpboot.engine.hstats`):

``h2`` (``output``), per 2-D node ``(j, k)``
    Friedman-Popescu pairwise ``H2_jk`` (2008, eq. 44): the share of the
    variance of the centred 2-D PD function that is not the sum of the two
    centred 1-D PD functions, all evaluated at the observed rows.
``h_unnormalized`` (``output``), per 2-D node
    The root of that numerator as a weighted mean: the size of the
    interaction in response units (Friedman & Popescu's unnormalised H).
``h2_overall`` (``output``), per 1-D node ``j``
    Overall ``H2_j`` (eq. 45): the share of the variance of the centred
    prediction ``F`` not explained by ``PD_j(x_j) + PD_-j(x_-j)``, where
    ``PD_-j(x_-j^(i)) = mean_l f(x_j^(l), x_-j^(i))`` is the partial
    dependence on all other features jointly.
``pd_variance_interaction`` (``output``), per 2-D node
    Greenwell et al. (2018): from the 2-D PD surface on the grid, the SD over
    one feature of the PD-importance of the other (SD of the PD over its grid,
    or range / 4 for a categorical feature), averaged over both directions.

The H statistics need predictions of the model at ``n_max**2`` points per
feature set, so they are computed on a random subsample of at most ``n_max``
(default 500) rows, drawn once from a generator that flows from the run's
seed: the full-data fit uses these rows, and every resample the rows of its
own background that are among them (with their multiplicities), so the
estimate and its resamples are one statistic.

Uncertainty.  ``bootstrap_partial_dependence(..., statistics="interactions")``
computes ``h2``/``h_unnormalized``/``h2_overall`` for the full-data fit and
every resample; :func:`h_statistic` returns them with bands like the PD's.
``pd_variance_interaction`` is computed from the stored ``pd`` and
``pd_resamples`` of 2-D nodes, so it needs no flag.

**A percentile interval is not a test of "no interaction".**  ``H2 >= 0``
and its estimate is biased upwards (noise in the fitted model and Monte-Carlo
noise of the PD estimates both add to the numerator), so the resampled values
of a model without any interaction still sit above 0 and an interval "away
from 0" says nothing about significance.  Use :func:`h_statistic_test`, which
compares the observed ``H2_jk`` with its distribution under refits on data
whose ``(j, k)`` interaction was removed.
"""

from __future__ import annotations

import datetime
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import xarray as xr
from sklearn.base import is_classifier

from ._evaluate import HEffect, PDEffect
from ._loop import run
from ._pd import one_fit_tree
from ._plan import make_plan, make_spec
from ._validate import (
    check_fitted_columns,
    check_n_resamples,
    check_positive_int,
    check_rng,
    check_target,
    is_fitted,
)
from .bands import confidence_bands
from .engine.hstats import (
    gaussian_process_fit,
    interaction_part,
    pd_variance_interaction,
    subsample_rows,
)
from .engine.resample import Job, Scheme, child
from .grid import Grid
from .header import ResultHeader
from .options import Execution, Resampling, resolve_execution
from .schema import feature_nodes, node_name

__all__ = ["h_statistic", "h_statistic_of_model", "h_statistic_test", "pd_variance_statistic"]

H_STATISTICS = ("h2_overall", "h2", "h_unnormalized")


def pd_variance_statistic(
    pd: xr.DataArray, categorical: tuple[bool, bool] = (False, False), dims: tuple | None = None
) -> xr.DataArray:
    """Greenwell et al.'s PD-variance interaction index of 2-D PD surfaces.

    Parameters
    ----------
    pd : xarray.DataArray
        A 2-D node's ``pd`` (``output``, f1, f2) or ``pd_resamples``
        (``resample``, ``output``, f1, f2).
    categorical : (bool, bool)
        Whether each feature is categorical.
    dims : (str, str), optional
        The two grid dims (default: the last two dims of ``pd``).

    Returns
    -------
    xarray.DataArray
        The input's dims without the two grid dims (``output`` or
        ``resample``, ``output``).

    See Also
    --------
    pdpboot.engine.hstats.pd_variance_interaction : the NumPy function it wraps.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> surface = xr.DataArray(np.add.outer([0.0, 1.0, 2.0], [0.0, 5.0]), dims=("a", "b"))
    >>> float(pd_variance_statistic(surface))
    0.0
    """
    grid_dims = list(pd.dims[-2:] if dims is None else dims)
    return xr.apply_ufunc(
        pd_variance_interaction, pd, input_core_dims=[grid_dims],
        kwargs={"categorical": tuple(bool(c) for c in categorical)},
    )


def _from_result(result: xr.DataTree, *, confidence_level, method, simultaneous) -> xr.DataTree:
    children = {}
    found = False
    for node in feature_nodes(result):
        ds = node.to_dataset()
        names = [n for s in H_STATISTICS for n in (s, f"{s}_resamples") if n in ds]
        found = found or bool(names)
        out = ds[names]
        if len(node.attrs["features"]) == 2:
            categorical = tuple(bool(c) for c in node.attrs.get("categorical", [0, 0]))
            dims = tuple(node.attrs["features"])
            out["pd_variance_interaction"] = pd_variance_statistic(ds["pd"], categorical, dims)
            if "pd_resamples" in ds:
                out["pd_variance_interaction_resamples"] = pd_variance_statistic(
                    ds["pd_resamples"], categorical, dims
                )
        if not out.data_vars:
            continue
        out = out.drop_vars([c for c in out.coords if c not in out.dims])
        out.attrs = dict(node.attrs)
        children[node.name] = xr.DataTree(out)
    if not found:
        raise ValueError(
            "This result holds no H statistics. Rerun bootstrap_partial_dependence(..., "
            "statistics='interactions'), or compute them for one fitted model with "
            "h_statistic_of_model(estimator, X, features)."
        )
    tree = xr.DataTree(children=children)
    tree.attrs = dict(result.attrs)
    if "resample_counts" in result.ds:  # BCa's jackknife-after-bootstrap acceleration needs them
        tree["resample_counts"] = result.ds["resample_counts"].variable
    if confidence_level is not None and any(
        v.endswith("_resamples") for child in children.values() for v in child.ds.data_vars
    ):
        tree = confidence_bands(tree, confidence_level=confidence_level, method=method,
                                simultaneous=simultaneous)
    return tree


def h_statistic_of_model(
    estimator,
    X,
    features,
    *,
    n_max: int = 500,
    sample_weight=None,
    rng=None,
    response_method: str = "auto",
    grid: Grid | None = None,
) -> xr.DataTree:
    """H statistics and the PD-variance interaction index of one fitted model (no resampling).

    Parameters
    ----------
    estimator : fitted estimator
        Anything with ``predict``, ``predict_proba`` or ``decision_function``.
    X : DataFrame or array of shape (n_rows, n_columns)
        Data the partial dependence functions average over.
    features : list
        Column names/indices (overall ``H2_j``) and pairs (pairwise ``H2_jk``).
    n_max : int
        The H statistics use at most this many rows of X, drawn with ``rng``.
    sample_weight : array_like of shape (n_rows,), optional
        Row weights of every partial dependence average.
    rng : None, int or numpy.random.Generator
        Seed of that subsample (None: fresh entropy).
    response_method : str
        As in :func:`pdpboot.partial_dependence`.
    grid : Grid, optional
        The grid of the 2-D PD surfaces behind ``pd_variance_interaction``, as in
        :func:`pdpboot.partial_dependence`.

    Returns
    -------
    xarray.DataTree
        One child per feature set: 1-D nodes ``h2_overall`` (``output``); 2-D
        nodes ``h2``, ``h_unnormalized`` and ``pd_variance_interaction``
        (``output``).  Root attrs as in :func:`pdpboot.partial_dependence`, plus
        ``n_max``.

    See Also
    --------
    h_statistic : the same statistics with bands, from a bootstrap result.
    h_statistic_test : a refit test of "no interaction".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> model = LinearRegression().fit(X, X[:, 0] - X[:, 1])
    >>> h = h_statistic_of_model(model, X, [(0, 1)], rng=0)
    >>> round(float(h["x0__x1"].ds["h2"][0]), 6)
    0.0
    """
    n_max = check_positive_int(n_max, "n_max", 2)
    if not is_fitted(estimator):
        raise ValueError(f"{type(estimator).__name__} is not fitted; fit it before h_statistic_of_model, or "
                         "use bootstrap_partial_dependence(..., statistics='interactions'), which fits clones itself.")
    check_fitted_columns(estimator, X)
    generator = np.random.default_rng(check_rng(rng))
    spec = make_spec(X, features, grid)
    h_rows = subsample_rows(spec.n_rows, n_max, generator)[0]  # the rows of every H statistic of the package
    # one evaluation: the PD surfaces (for the PD-variance index) and the H statistics from the same pass
    tree = one_fit_tree(estimator, PDEffect(spec, n_max=n_max),
                        dict(response_method=response_method, sample_weight=sample_weight is not None, n_max=n_max),
                        response_method=response_method, sample_weight=sample_weight, h_rows=h_rows,
                        rng_entropy=str(generator.bit_generator.seed_seq.entropy))
    tree.attrs = ResultHeader.from_attrs(tree.attrs).replace(n_max=n_max).to_attrs()  # the one writer of root attrs
    return _from_result(tree, confidence_level=None, method="percentile", simultaneous=False)


def h_statistic(
    result: xr.DataTree,
    *,
    confidence_level: float | None = 0.95,
    method: str = "percentile",
    simultaneous: bool = False,
) -> xr.DataTree:
    """Friedman-Popescu H statistics and the PD-variance interaction index of a bootstrap result, with bands.

    Selects the statistics computed in the resample loop by
    ``bootstrap_partial_dependence(..., statistics="interactions")``, adds
    ``pd_variance_interaction`` (from ``pd``/``pd_resamples`` of 2-D nodes) and
    bands.  All these statistics are >= 0: their band bounds are clipped at 0.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result.
    confidence_level : float or None
        Level of the bands (:func:`pdpboot.confidence_bands`); None adds none.
    method : {"percentile", "basic", "normal", "bc", "bca"}
        Band method, as in :func:`pdpboot.confidence_bands`.  Measured
        (``y = x1 + x2 + x1 x2 + eps``, OLS with the product term, n = 300, H2
        on 100 rows, B = 200, learner's expected ``H2 = 1/3``; 95 %
        intervals): with the estimate and every resample on one shared
        subsample of at most ``n_max`` rows, as now, coverage of the learner's
        expected H2 was 0.895 (MC SE 0.015) for ``percentile``, 0.910 for
        ``bc``, 0.907 for ``bca``, 0.882 for ``normal`` and 0.840 for
        ``basic`` (R = 400 data sets, ``experiments/bounded_shared.py``).
        The resamples' SD equals the estimate's sampling SD on average (ratio
        1.01), but it grows with the estimate (correlation 0.82), so intervals
        are too narrow exactly when the estimate is low and miss above the
        target (0.095 of data sets, 0.010 below).  Read an H2 interval as
        about 0.90 coverage.  (Before the shared rows, the estimate carried
        the noise of its own subsample: percentile then covered 0.980, bc and
        bca 0.73, ``experiments/bounded_statistics.py``, R = 150.)  For a
        boosting classifier's probabilities under ``resampling="auto"`` (the
        0.632 subsample; ``experiments/h2_classifier.py``, n = 400, B = 100,
        H2 on 100 rows) the percentile interval covered 0.950 (MC SE 0.020,
        R = 120), the bootstrap's 0.983 (0.017, R = 60).
        ``percentile`` stays the default.
    simultaneous : bool
        As in :func:`pdpboot.confidence_bands` (each statistic is one number
        per output, so this only changes the construction, e.g. sup-t).

    Returns
    -------
    xarray.DataTree
        One child per feature set that has a statistic (node names and attrs
        as in the result): 1-D nodes ``h2_overall`` (``output``); 2-D nodes
        ``h2``, ``h_unnormalized`` and ``pd_variance_interaction``
        (``output``); with resamples each also has ``<stat>_resamples``
        (``resample``, ``output``) and ``<stat>_band`` (``ci_bound``,
        ``output``), ``<stat>_se``, ``<stat>_bias``.  The band of ``h2`` is
        not a test of ``H2 = 0`` (see :func:`h_statistic_test`).

    See Also
    --------
    h_statistic_of_model : the statistics of one fitted model, without resampling.
    h_statistic_test : a refit test of "no interaction".
    pdpboot.plot_h_statistic : draws the result.

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(40, 2)); y = X[:, 0] + X[:, 1]
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [(0, 1)], n_resamples=5,
    ...                                            statistics="interactions", grid=pdpboot.Grid(3), rng=0)
    >>> pdpboot.h_statistic(res)["x0__x1"].ds["h2_band"].dims
    ('ci_bound', 'output')
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(
            f"h_statistic takes a pdpboot result (xarray.DataTree), got {type(result).__name__}; for one "
            "fitted model use h_statistic_of_model(estimator, X, features)."
        )
    return _from_result(result, confidence_level=confidence_level, method=method, simultaneous=simultaneous)


# ----------------------------------------------------------------------------- refit-based test


@dataclass(frozen=True, eq=False)
class NullReplicates(Scheme):
    """Refits on null data ``y* = f0(X) + e*`` without the ``(j, k)`` interaction (see :func:`h_statistic_test`).

    Prepared once per run (:meth:`prepare`: the Gaussian-process reference fit ``g``, ``f0 = g - I_jk(g)`` and
    the noise); job ``b`` draws its noise with replacement from its seed's first child and fits on all rows.
    """

    name: ClassVar[str] = "null"
    keeps_counts: ClassVar[bool] = False
    pair: tuple[int, int] = (0, 1)
    mean: np.ndarray | None = None
    noise: np.ndarray | None = None
    noise_sd: float = float("nan")

    def prepare(self, X, y, weights, seed: np.random.Generator) -> NullReplicates:
        background_seed, gp_seed = seed.spawn(2)
        background, _ = subsample_rows(X.shape[0], SMOOTH_BACKGROUND_ROWS, background_seed)
        predict, noise_sd = gaussian_process_fit(X, y, gp_seed)
        fitted = predict(X)[:, 0]
        mean = fitted - interaction_part(predict, X, self.pair, weights=weights, background=background)
        return NullReplicates(self.pair, mean, _rescaled(y - fitted, weights, noise_sd), float(noise_sd))

    def job(self, index: int, seed: np.random.Generator, n_rows: int) -> Job:
        draw = child(seed, 0).integers(0, self.noise.size, size=self.noise.size)
        return Job(index, seed, y=self.mean + self.noise[draw])


def h_statistic_test(
    estimator,
    X,
    y,
    pair,
    *,
    n_resamples: int = 99,
    n_max: int = 500,
    statistic: str = "h2",
    sample_weight=None,
    fit_params: Mapping | None = None,
    rng=None,
    execution: Execution | None = None,
) -> xr.DataTree:
    """Refit-based (parametric bootstrap) test of "no interaction between features j and k" (regression).

    The observed ``H2_jk`` of the fitted model is compared with its law under
    refits of the same learner on null data ``y* = f0(X) + e*``, where ``f0``
    is additive in ``(j, k)`` and ``e*`` is noise of the data's size
    (Friedman & Popescu 2008, sec. 8.3, with a smooth null model):

    1. Fit the estimator to all rows; its ``H2_jk`` on a fixed subsample of at
       most ``n_max`` rows is the observed statistic ``T``.
    2. Null model: a smooth reference fit ``g`` of ``y`` on ``X`` by
       Gaussian-process regression
       (:func:`pdpboot.engine.hstats.gaussian_process_fit`: RBF kernel with one
       length scale per standardised feature plus white noise, hyperparameters
       by maximum marginal likelihood, on at most 1000 rows), and
       ``f0 = g - I_jk(g)``: ``g`` minus its centred interaction part
       ``I_jk = PD_jk - PD_j - PD_k``
       (:func:`pdpboot.engine.hstats.interaction_part`, PDs averaged over at
       most 500 rows, evaluated at every row).  Noise: the centred residuals
       ``y - g(X)``, rescaled to the noise SD the white-noise kernel estimated.
    3. ``n_resamples`` times: ``y* = f0(X) + e*`` (noise drawn with
       replacement), refit a clone of the estimator on all rows; its
       ``H2_jk`` on the same rows as ``T`` is ``T*_b``.
    4. p-value ``(1 + #{T*_b >= T}) / (1 + n_resamples)``.

    The null's truth must be about as hard for the learner as the real one
    (smooth, flexible, not built from the learner's own steps), so the
    interaction the learner invents under the null is part of the null law;
    see the validation page of the documentation for the size and power
    measured.

    Parameters
    ----------
    estimator : unfitted scikit-learn regressor (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Numeric, finite features (the Gaussian-process reference fit uses them as they are).
    y : array-like of shape (n_rows,)
    pair : (feature, feature)
        Names or indices of j and k.
    n_resamples : int
        Number of null refits.
    n_max : int
        Rows used by each H statistic (one fixed subsample for ``T`` and every ``T*_b``).
    statistic : {"h2", "h_unnormalized"}
        The test statistic.
    sample_weight : array-like of shape (n_rows,), optional
        Passed to every fit of the estimator and used in every PD average,
        H statistic and residual mean; the Gaussian-process reference fit is
        unweighted.
    fit_params : mapping, optional
        Further ``fit`` keyword arguments; per-row arrays (length n_rows) are
        passed whole (every fit uses all rows).
    rng : None, int or numpy.random.Generator
        The one seed every draw flows from (None: fresh entropy; with a
        checkpoint, its seed), as in :func:`pdpboot.bootstrap_partial_dependence`.
    execution : Execution, optional
        How the null refits run (they go through the loop of
        :func:`pdpboot.bootstrap_partial_dependence`): ``n_jobs``,
        ``threads_per_job``, ``progress``, ``checkpoint`` (finished null refits
        are saved and a repeated call resumes), ``on_error`` (``"skip"``: a
        failed refit is left out of the p-value, NaN in the null distribution,
        with a warning) and ``max_failure_share``.

    Returns
    -------
    xarray.DataTree
        Root attrs: the header of every result, ``statistic`` (the observed
        ``T``), ``statistic_name``, ``pvalue``, ``null_model`` (``"smooth"``),
        ``noise_sd`` (SD of the null data's noise) and ``n_failed_resamples``.
        One node for the pair (named as in
        :func:`pdpboot.bootstrap_partial_dependence`) with ``<statistic>``
        (``output``) and ``<statistic>_null`` (``resample``, ``output``), the
        null distribution.

    See Also
    --------
    h_statistic : H statistics of a bootstrap result, with bands.
    h_statistic_of_model : H statistics of one fitted model.

    Notes
    -----
    Assumes exchangeable (homoscedastic, independent) errors.  Classification
    is not supported.  The smooth null assumes the truth is reasonably smooth
    where the data are; a truth with jumps is smoothed, which makes the null
    harder to fit than the truth and the test conservative.  Cost: the
    Gaussian process is fitted once (cubic in its at most 1000 rows), and its
    PDs need ``n_rows * 500 * 3`` of its predictions; the refits dominate
    for moderate ``n_rows``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.random.default_rng(0).normal(size=(60, 2)); y = X[:, 0] + X[:, 1] + 3 * X[:, 0] * X[:, 1]
    >>> from sklearn.preprocessing import PolynomialFeatures
    >>> from sklearn.pipeline import make_pipeline
    >>> model = make_pipeline(PolynomialFeatures(interaction_only=True), LinearRegression())
    >>> out = h_statistic_test(model, X, y, (0, 1), n_resamples=9, rng=0)
    >>> out.attrs["pvalue"]
    0.1
    """
    if is_classifier(estimator):
        raise ValueError("h_statistic_test supports regressors only (the null data are y* = f0(X) + noise).")
    if statistic not in ("h2", "h_unnormalized"):
        raise ValueError(f"statistic={statistic!r} is not one of ['h2', 'h_unnormalized'].")
    if isinstance(pair, str) or len(pair) != 2:
        raise ValueError(f"pair must name two features, got {pair!r}.")
    execution = resolve_execution(execution)
    execution.check_used("h_statistic_test", ("n_jobs", "threads_per_job", "progress", "checkpoint", "on_error",
                                              "max_failure_share"))  # (its H statistics need no PD engine)
    spec = make_spec(X, [tuple(pair)], Grid(2))  # (the H effect uses no grid)
    if len(spec.feature_sets[0]) != 2:
        raise ValueError(f"pair must name two different features, got {pair!r}.")
    if not _numeric(spec.X):
        raise ValueError("h_statistic_test needs numeric, finite features (its null model is a Gaussian-process "
                         "fit of y on X); encode categorical columns as numbers and drop rows with missing values.")
    y = np.asarray(check_target(y, spec.n_rows, estimator), dtype=float)
    if y.ndim != 1:
        raise ValueError(f"h_statistic_test needs a 1-D target, got shape {y.shape}.")
    effect = HEffect(spec, check_positive_int(n_max, "n_max", 2))
    resampling = Resampling("bootstrap", n_resamples=check_n_resamples(n_resamples, minimum=1), fit_params=fit_params)
    plan = make_plan(estimator, y, effect, resampling=resampling, execution=execution, response_method="predict",
                     sample_weight=sample_weight, rng=rng, scheme=NullReplicates(spec.feature_sets[0]))
    out = run(plan, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    node = node_name(spec.dims(spec.feature_sets[0]))
    observed = out.estimate[node][statistic][1]
    null = out.stacked()[node][f"{statistic}_resamples"][1]
    failed = sorted(out.failures)
    if failed:
        warnings.warn(f"{len(failed)} of {plan.n_resamples} null refits failed and were left out of the p-value "
                      f"(the first, refit {failed[0]}, raised {out.resamples[failed[0]]}).", RuntimeWarning,
                      stacklevel=2)
    valid = ~np.isnan(null[:, 0])
    pvalue = (1 + np.sum(null[valid, 0] >= observed[0])) / (1 + valid.sum())
    header = ResultHeader.describe(
        estimator, dict(plan.settings, resampling="null", n_resamples=plan.n_resamples, statistic=statistic),
        response="predict", outputs=out.evaluation.outputs, n_rows=spec.n_rows, effect="h", target="learner",
        uncertainty="null-refits",
        n_resamples=plan.n_resamples, created=out.created, rng_entropy=out.seed["entropy"], n_max=effect.n_max,
        statistic=float(observed[0]), statistic_name=statistic, pvalue=float(pvalue), null_model="smooth",
        noise_sd=out.scheme.noise_sd, n_failed_resamples=len(failed))
    coords = {"output": list(out.evaluation.outputs), "resample": np.arange(plan.n_resamples)}
    ds = xr.Dataset({statistic: (("output",), observed), f"{statistic}_null": (("resample", "output"), null)},
                    coords=coords, attrs={"features": list(spec.dims(spec.feature_sets[0]))})
    tree = xr.DataTree(children={node: xr.DataTree(ds)})
    tree.attrs = header.to_attrs()
    return tree


def _numeric(X) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(X, dtype=float))))
    except (TypeError, ValueError):
        return False


def _rescaled(residuals: np.ndarray, weights, sd: float) -> np.ndarray:
    """Residuals centred by their (weighted) mean and rescaled to root mean square ``sd``."""
    w = np.ones_like(residuals) if weights is None else weights
    centred = residuals - np.sum(w * residuals) / w.sum()
    return centred * sd / max(np.sqrt(np.mean(centred**2)), 1e-300)


#: rows the PD functions of the Gaussian-process surrogate average over, at most
SMOOTH_BACKGROUND_ROWS = 500
