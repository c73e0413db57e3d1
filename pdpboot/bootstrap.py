"""The PD of one fitted model (:func:`partial_dependence`, through :func:`one_fit_tree`, the one-fit path of every
effect) and of refits on resamples (:func:`run_bootstrap`: plan -> run -> result tree, for any effect)."""

from __future__ import annotations

import datetime
import json
import warnings
from collections.abc import Iterable, Mapping

import numpy as np
import xarray as xr

from ._evaluate import Evaluation, PDEffect, check_statistics, resolve_outputs
from ._loop import run, start_workers  # noqa: F401  (public: pdpboot.start_workers)
from ._plan import BootstrapPlan, make_plan, make_spec
from ._validate import (
    check_choice,
    check_enough_rows,
    check_fitted_columns,
    check_missing_supported,
    check_optional_positive_int,
    check_predictions_finite,
    check_rng,
    check_sample_weight,
    is_fitted,
)
from .engine import describe_choices, record_engine_choices
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.response import resolve_response_method
from .grid import Grid
from .header import ResultHeader
from .io import build_tree
from .options import Execution, Resampling, resolve_run_options
from .schema import ABSENT

KINDS = ("average", "individual", "both")


def partial_dependence(
    estimator,
    X,
    features,
    *,
    grid: Grid | None = None,
    response_method: str = "auto",
    kind: str = "average",
    sample_weight=None,
    max_ice_instances: int | None = None,
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    target_names=None,
    rng=None,
) -> xr.DataTree:
    """Partial dependence (and ICE) of a fitted estimator, without resampling.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Background data: the PD averages the model over these rows.
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    grid : Grid, optional
        Where the PD is evaluated (:class:`pdpboot.Grid`; None: scikit-learn's rule).
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
    kind : {"average", "individual", "both"}
        ``individual``/``both`` also store ICE curves.
    sample_weight : array of shape (n_rows,), optional
        Weights of the average (ICE curves are unweighted).
    max_ice_instances : int, optional
        Keep ICE for a random subset of this many rows (drawn with ``rng``).
    method, memory_limit
        As in :class:`pdpboot.Execution`.
    target_names : list of str, optional
        Names of the regression targets (``output`` coordinate).

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, ``*features``) and, for ICE kinds, ``ice``
        (``instance``, ``output``, ``*features``).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot import Grid
    >>> from pdpboot.datasets import make_electricity_prices
    >>> X, y = make_electricity_prices(200, rng=0)
    >>> pd1 = partial_dependence(LinearRegression().fit(X, y), X, ["Hour"], grid=Grid(5))
    >>> pd1["Hour"]["pd"].dims
    ('output', 'Hour')
    """
    if not is_fitted(estimator):
        raise ValueError(
            f"{type(estimator).__name__} is not fitted; fit it first, or use "
            "pdpboot.bootstrap_partial_dependence, which fits clones itself."
        )
    check_fitted_columns(estimator, X)
    check_choice(kind, "kind", KINDS)
    engine = Execution(method=method, memory_limit=memory_limit)  # validated where a run's are
    spec = make_spec(X, features, grid, method=engine.method, memory_limit=engine.memory_limit)
    check_missing_supported(estimator, spec.X, spec.names, spec.grids)
    max_ice_instances = check_optional_positive_int(max_ice_instances, "max_ice_instances")
    generator = np.random.default_rng(check_rng(rng))
    ice_rows = None
    if kind != "average":
        ice_rows = np.arange(spec.n_rows)
        if max_ice_instances is not None and max_ice_instances < spec.n_rows:
            ice_rows = np.sort(generator.choice(spec.n_rows, size=int(max_ice_instances), replace=False))
    settings = dict(response_method=response_method, kind=kind, max_ice_instances=max_ice_instances,
                    sample_weight=sample_weight is not None)
    return one_fit_tree(estimator, PDEffect(spec), settings, response_method=response_method,
                        sample_weight=sample_weight, target_names=target_names, ice_rows=ice_rows,
                        rng_entropy=str(generator.bit_generator.seed_seq.entropy))


def one_fit_tree(estimator, effect, settings: dict, *, response_method: str, sample_weight=None,
                 target_names=None, ice_rows=None, h_rows=None, rng_entropy: str | None = None) -> xr.DataTree:
    """The one-fit path of every effect: one evaluation of a fitted model as a result tree with its header."""
    spec = effect.spec
    weights = check_sample_weight(sample_weight, spec.n_rows)
    resolved = resolve_response_method(estimator, response_method)
    outputs = resolve_outputs(estimator, resolved, target_names=target_names, rows=spec.rows(np.arange(1)))
    evaluation = Evaluation(resolved, outputs, np.arange(spec.n_rows), weights, {"ice": ice_rows, "h": h_rows})
    with record_engine_choices() as choices:  # which engine computed each feature set, and why
        per_node = effect.evaluate(estimator, evaluation)
    check_predictions_finite(per_node, what=f"{type(estimator).__name__}")
    header = ResultHeader.describe(estimator, dict(spec.settings, **settings), response=resolved, outputs=outputs,
                                   n_rows=spec.n_rows, rng_entropy=rng_entropy, supports=effect.supports(resolved),
                                   engine=describe_choices(choices), effect=effect.name)
    return build_tree(spec, per_node, outputs=outputs, ice_rows=ice_rows, header=header,
                      node_attrs=effect.node_attrs())


def bootstrap_partial_dependence(
    estimator,
    X,
    y,
    features,
    *,
    n_resamples: int = 200,
    resampling: str | Resampling = "auto",
    statistics: str | Iterable[str] | Mapping[str, bool | int] | None = None,
    grid: Grid | None = None,
    response_method: str = "auto",
    sample_weight=None,
    rng=None,
    execution: Execution | None = None,
) -> xr.DataTree:
    """Refit an estimator on resamples and compute its PD on one grid fixed on the full data.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator or Pipeline
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,) or (n_rows, n_targets)
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    n_resamples : int
        Number of resamples B.
    resampling : {"auto", "bootstrap", "stratified", "subsample", "group"} or Resampling
        How rows are resampled (:class:`pdpboot.Resampling`; the root attrs record the choice).
    statistics : str, list of str or dict, optional
        What to keep besides the PD: ``"ice"`` (``{"ice": n}``: of ``n`` random rows),
        ``"heterogeneity"`` and ``"interactions"`` (H statistics on at most 500 rows,
        ``{"interactions": n_max}``), each with its ``_resamples``.
    grid : Grid, optional
        As in :func:`pdpboot.partial_dependence`.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        A refit that never saw a class has probability 0 for it; its decision function fails.
    sample_weight : array of shape (n_rows,), optional
        Passed to every fit and used in every PD average.
    rng : None, int or numpy.random.Generator
        The one seed every random draw flows from.
    execution : Execution, optional
        How the resamples run (:class:`pdpboot.Execution`); results are identical for any ``n_jobs``.

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, ``*features``), ``pd_resamples``
        (``resample``, ``output``, ``*features``) and the statistics requested; root attrs hold the
        provenance.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot import Grid
    >>> from pdpboot.datasets import make_electricity_prices
    >>> X, y = make_electricity_prices(200, rng=0)
    >>> res = bootstrap_partial_dependence(LinearRegression(), X, y, ["Temperature"],
    ...                                    n_resamples=20, grid=Grid(5), rng=0)
    >>> res["Temperature"]["pd_resamples"].dims
    ('resample', 'output', 'Temperature')
    >>> from pdpboot import Execution, Resampling
    >>> res = bootstrap_partial_dependence(
    ...     LinearRegression(), X, y, ["Temperature"], n_resamples=20, grid=Grid(5), rng=0,
    ...     statistics={"ice": 10}, resampling=Resampling("subsample", subsample_fraction=0.5),
    ...     execution=Execution(on_error="skip"))
    >>> res["Temperature"]["ice_resamples"].sizes["instance"]
    10
    """
    resampling, execution = resolve_run_options(resampling, execution, n_resamples=n_resamples)
    check_enough_rows(X)
    spec = make_spec(X, features, grid, method=execution.method, memory_limit=execution.memory_limit)
    effect = PDEffect.from_options(spec, **check_statistics(statistics))
    plan = make_plan(estimator, y, effect, resampling=resampling, execution=execution,
                     response_method=response_method, sample_weight=sample_weight, rng=rng)
    return run_bootstrap(plan)


def run_bootstrap(plan: BootstrapPlan, *, stacklevel: int = 3) -> xr.DataTree:
    """Run a validated plan of any effect and assemble its result tree (``stacklevel``: of the failure warning)."""
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    out = run(plan, created)
    failures = out.failures
    if failures:
        first = min(failures)
        warnings.warn(
            f"{len(failures)} of {plan.n_resamples} resamples failed and were skipped (the first, resample "
            f"{first}, raised {failures[first]}); bands use the {plan.n_resamples - len(failures)} successful ones.",
            RuntimeWarning, stacklevel=stacklevel,
        )
    header = bootstrap_header(plan, out.evaluation.response_method, out.evaluation.outputs, created=out.created,
                              rng_entropy=out.seed["entropy"], engine=out.engine, n_failed_resamples=len(failures),
                              n_missing_class_resamples=int(max(
                                  np.sum(out.missing_class), sum(f.missing_class for f in failures.values()))),
                              failed_resamples=json.dumps([{"resample": b, "error": str(failures[b])}
                                                           for b in sorted(failures)]))
    tree = build_tree(plan.spec, out.stacked(), outputs=out.evaluation.outputs,
                      ice_rows=out.evaluation.fixed.get("ice"),
                      header=header, node_attrs=plan.effect.node_attrs(),
                      extra_coords={"resample": np.arange(plan.n_resamples)})
    if plan.scheme.keeps_absent:  # for BCa: the rows each resample did not draw, one bit each
        tree[ABSENT] = xr.Variable(("resample", "packed_row"), out.absent.bits, {"n_rows": out.absent.n_rows})
    return tree


def bootstrap_header(plan: BootstrapPlan, response: str, outputs, **fields) -> ResultHeader:
    """The header of a refit-bootstrap result of ``plan`` (``fields``: the run's own entries)."""
    resampling, n_rows, choice = plan.resampling, plan.spec.n_rows, plan.choice
    logit = choice is not None and choice.band_scale == "logit" and response == "predict_proba"
    fields = {"resampling_requested": choice.requested if choice is not None else resampling.scheme,
              "band_scale": "logit" if logit else "identity",
              "resampling_reason": choice.reason if choice is not None and choice.reason else
              f"resampling={resampling.scheme!r} as requested.", **fields}
    return ResultHeader.describe(
        plan.estimator, dict(plan.settings, n_resamples=plan.n_resamples), response=response, outputs=outputs,
        n_rows=n_rows, effect=plan.effect.name, target="learner", uncertainty="bootstrap",
        n_resamples=plan.n_resamples, resampling=resampling.scheme, background=resampling.background,
        subsample_size=plan.scheme.size(n_rows), supports=plan.effect.supports(response), **fields)

