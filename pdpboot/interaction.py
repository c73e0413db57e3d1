"""Interaction and importance statistics of PDs with bootstrap bands, and a calibrated test of "no interaction".

Friedman and Popescu's (2008) H statistics (``h2``, ``h_unnormalized``, ``h2_overall``, on one
subsample of at most ``n_max`` rows) and Greenwell et al.'s (2018) PD-variance interaction index and
PD-based importance.  A band of ``h2`` is not a test of no interaction: use :func:`h_statistic_test`.
"""

from __future__ import annotations

import datetime
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.base import is_classifier

from ._evaluate import HEffect, PDEffect
from ._loop import run
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
from .bootstrap import one_fit_tree
from .engine.hstats import (
    gaussian_process_fit,
    interaction_part,
    pd_variance_interaction,
    subsample_rows,
)
from .engine.ice_stats import pd_flatness
from .engine.intervals import POINTWISE_METHODS, pointwise_interval, standard_error
from .engine.resample import Job, Scheme, child
from .grid import Grid
from .header import ResultHeader
from .options import Execution, Resampling, resolve_execution
from .schema import ABSENT, feature_nodes, is_categorical, node_name

__all__ = ["IMPORTANCE_COLUMNS", "h_statistic", "h_statistic_of_model", "h_statistic_test", "pd_importance",
           "pd_variance_statistic"]

H_STATISTICS = ("h2_overall", "h2", "h_unnormalized")


def pd_variance_statistic(
    pd: xr.DataArray, categorical: tuple[bool, bool] = (False, False), dims: tuple | None = None
) -> xr.DataArray:
    """Greenwell et al.'s PD-variance interaction index of 2-D PD surfaces ``pd`` over their grid ``dims``
    (default: the last two; ``categorical``: whether each holds levels).

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
                out["pd_variance_interaction_resamples"] = pd_variance_statistic(ds["pd_resamples"], categorical, dims)
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
    if ABSENT in result.ds:  # BCa's jackknife-after-bootstrap acceleration needs them
        tree[ABSENT] = result.ds[ABSENT].variable
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
    X : DataFrame or array of shape (n_rows, n_columns)
    features : list
        Column names/indices (overall ``H2_j``) and pairs (pairwise ``H2_jk``).
    n_max : int
        The H statistics use at most this many rows of X, drawn with ``rng``.
    sample_weight, rng, response_method, grid
        As in :func:`pdpboot.partial_dependence` (``grid``: of the 2-D PDs of ``pd_variance_interaction``).

    Returns
    -------
    xarray.DataTree
        1-D nodes ``h2_overall``; 2-D nodes ``h2``, ``h_unnormalized`` and ``pd_variance_interaction``.

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
    """Friedman-Popescu H statistics and the PD-variance interaction index of a bootstrap result
    (``statistics="interactions"``), with bands clipped at 0.

    Parameters
    ----------
    result : xarray.DataTree
    confidence_level : float or None
        Level of the bands; None adds none.
    method, simultaneous
        As in :func:`pdpboot.confidence_bands` (an H2 interval covers somewhat less than its level;
        see the validation page of the documentation).

    Returns
    -------
    xarray.DataTree
        1-D nodes ``h2_overall``; 2-D nodes ``h2``, ``h_unnormalized`` and ``pd_variance_interaction``;
        each with its resamples and band.

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
        raise TypeError(f"h_statistic takes a pdpboot result (xarray.DataTree), got {type(result).__name__}; for "
                        "one fitted model use h_statistic_of_model(estimator, X, features).")
    return _from_result(result, confidence_level=confidence_level, method=method, simultaneous=simultaneous)


# ----------------------------------------------------------------------------- refit-based test


@dataclass(frozen=True, eq=False)
class NullReplicates(Scheme):
    """Refits on null data ``y* = f0(X) + e*`` without the ``(j, k)`` interaction (see :func:`h_statistic_test`)."""

    name: ClassVar[str] = "null"
    keeps_absent: ClassVar[bool] = False
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
        return NullReplicates(self.pair, mean, rescaled_noise(y - fitted, weights, noise_sd), float(noise_sd))

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

    The observed ``H2_jk`` is compared with refits on null data ``y* = f0(X) + e*`` (``f0``: a
    Gaussian-process fit of ``y`` without its ``(j, k)`` interaction, ``e*``: its residuals resampled;
    Friedman & Popescu 2008, sec. 8.3); p-value ``(1 + #{T*_b >= T}) / (1 + n_resamples)``.  See the
    validation page of the documentation.

    Parameters
    ----------
    estimator : unfitted scikit-learn regressor (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Numeric, finite features.
    y : array-like of shape (n_rows,)
    pair : (feature, feature)
        Names or indices of j and k.
    n_resamples : int
        Number of null refits.
    n_max : int
        Rows used by each H statistic (one fixed subsample for ``T`` and every ``T*_b``).
    statistic : {"h2", "h_unnormalized"}
        The test statistic.
    sample_weight, rng
        As in :func:`pdpboot.bootstrap_partial_dependence` (weights not in the Gaussian process).
    fit_params : mapping, optional
        Further ``fit`` keyword arguments (every fit uses all rows).
    execution : Execution, optional
        How the null refits run (no PD engine fields); a failed refit is left out of the p-value.

    Returns
    -------
    xarray.DataTree
        Root attrs ``statistic`` (observed ``T``), ``statistic_name``, ``pvalue``, ``noise_sd``; one
        node for the pair with ``<statistic>`` and ``<statistic>_null`` (``resample``, ``output``).

    Notes
    -----
    Assumes independent, homoscedastic errors and a smooth truth (jumps make it conservative).

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
    effect = HEffect(spec, n_max=check_positive_int(n_max, "n_max", 2))
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


def rescaled_noise(residuals: np.ndarray, weights, sd: float) -> np.ndarray:
    """Residuals centred by their (weighted) mean and rescaled to root mean square ``sd``."""
    w = np.ones_like(residuals) if weights is None else weights
    centred = residuals - np.sum(w * residuals) / w.sum()
    return centred * sd / max(np.sqrt(np.mean(centred**2)), 1e-300)


#: rows the PD functions of the Gaussian-process surrogate average over, at most
SMOOTH_BACKGROUND_ROWS = 500


#: Columns of :func:`pd_importance`'s table, in order.
IMPORTANCE_COLUMNS = ("feature", "output", "importance", "lower", "upper", "se", "measure", "rank", "method",
                      "confidence_level", "n_resamples")


def pd_importance(
    result: xr.DataTree,
    features: Sequence[Hashable] | None = None,
    *,
    variable: str = "pd",
    confidence_level: float = 0.95,
    method: str = "percentile",
) -> pd.DataFrame:
    """PD-based feature importance of every 1-D node (the SD of the PD over the grid; range / 4 for
    levels), on the estimate and every resample's curve, with a bootstrap interval.

    Parameters
    ----------
    result : xarray.DataTree
        A pdpboot result with 1-D nodes (a one-fit result gets no interval).
    features : list of str, optional
        The features to rank; default: every 1-D node.
    variable : str, default "pd"
        The curve measured (``"ale"`` for an ALE result).
    confidence_level : float, default 0.95
        Level of the intervals.
    method : {"percentile", "basic", "normal", "bc"}, default "percentile"
        The bootstrap interval of the importance.

    Returns
    -------
    pandas.DataFrame
        One row per feature and output, columns :data:`IMPORTANCE_COLUMNS` (``importance``,
        ``lower``, ``upper``, ``se``, ``measure``, ``rank`` within an output, ...), sorted by output,
        then rank.

    Notes
    -----
    An importance is never negative, so a feature without effect has an interval above 0.

    Examples
    --------
    >>> import numpy as np, pandas as pd, pdpboot
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    >>> y = 2 * X["a"] + 0.1 * X["b"] + rng.normal(size=80)
    >>> res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=20,
    ...                                            grid=pdpboot.Grid(10), rng=0,
    ...                                            execution=pdpboot.Execution(progress=False))
    >>> pdpboot.pd_importance(res)[["feature", "rank"]].to_numpy().tolist()
    [['a', 1], ['b', 2]]
    """
    if not isinstance(result, xr.DataTree):
        raise TypeError(f"pd_importance needs a pdpboot result (an xarray.DataTree); got {type(result).__name__}.")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}.")
    if method not in POINTWISE_METHODS or method == "bca":
        raise ValueError(f"method must be 'percentile', 'basic', 'normal' or 'bc'; got {method!r}.")
    nodes = [n for n in feature_nodes(result) if len(n.attrs["features"]) == 1]
    if features is not None:
        wanted = [str(f) for f in features]
        have = {str(n.attrs["features"][0]): n for n in nodes}
        missing = [f for f in wanted if f not in have]
        if missing:
            raise ValueError(f"pd_importance: no 1-D node for {missing}; the result has {sorted(have)}.")
        nodes = [have[f] for f in wanted]
    if not nodes:
        raise ValueError("pd_importance needs 1-D nodes; this result has none.")
    rows = []
    for node in nodes:
        name = str(node.attrs["features"][0])
        ds = node.to_dataset()
        if variable not in ds:
            raise ValueError(f"The node of {name!r} has no {variable!r} variable; variables: {sorted(map(str, ds))}.")
        categorical = is_categorical(ds, node.attrs, name, 0)
        est = pd_flatness(ds[variable].transpose("output", name).values, categorical=categorical)
        res_name = f"{variable}_resamples"
        if res_name in ds and ds.sizes.get("resample", 0) > 1:
            res = pd_flatness(ds[res_name].transpose("resample", "output", name).values, categorical=categorical)
            lower, upper = pointwise_interval(est, res, level=confidence_level, method=method)
            se = standard_error(res)
            n_valid = np.sum(np.isfinite(res), axis=0)
        else:
            lower = upper = se = np.full(est.shape, np.nan)
            n_valid = np.zeros(est.shape, dtype=int)
        for o, output in enumerate(ds["output"].values.tolist()):
            rows.append({"feature": name, "output": output, "importance": float(est[o]), "lower": float(lower[o]),
                         "upper": float(upper[o]), "se": float(se[o]),
                         "measure": "range/4" if categorical else "sd",
                         "method": method if n_valid[o] else None, "confidence_level": confidence_level,
                         "n_resamples": int(n_valid[o])})
    frame = pd.DataFrame(rows)
    frame["rank"] = frame.groupby("output", sort=False)["importance"].rank(ascending=False, method="min").astype(int)
    order = {o: i for i, o in enumerate(dict.fromkeys(frame["output"]))}
    frame = frame.sort_values(["output", "rank"], key=lambda c: c.map(order) if c.name == "output" else c,
                              kind="stable")
    return frame.reset_index(drop=True)[list(IMPORTANCE_COLUMNS)]
