"""The refit bootstrap of any effect: options -> effect -> plan -> run -> result tree."""

from __future__ import annotations

import datetime
import json
import warnings
from collections.abc import Iterable, Mapping

import numpy as np
import xarray as xr

from ._evaluate import PDEffect, check_statistics
from ._loop import run, start_workers  # noqa: F401  (public: pdpboot.start_workers)
from ._plan import BootstrapPlan, make_plan, make_spec
from ._validate import check_enough_rows
from .grid import Grid
from .header import ResultHeader
from .io import build_tree
from .options import Execution, Resampling, resolve_run_options
from .schema import ABSENT


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
    """Refit an estimator on resamples and compute its PD on one fixed grid.

    The estimate is the fit on the full data; each resample's refit gives one
    replicate of the PD and of the statistics requested.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator or Pipeline
        Cloned and fitted on the full data and on every resample.
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,) or (n_rows, n_targets)
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    n_resamples : int
        Number of resamples B (shortcut of ``Resampling(n_resamples=...)``).
    resampling : {"auto", "bootstrap", "stratified", "subsample", "group"} or Resampling
        How rows are resampled (see :class:`pdpboot.Resampling`).  ``"auto"``
        subsamples a classifier's probabilities (bands on the logit scale) and
        bootstraps everything else; the root attrs ``resampling``,
        ``band_scale`` and ``resampling_reason`` record the choice.  See the
        validation page of the documentation.
    statistics : str, list of str or dict, optional
        What to keep besides the PD: ``"ice"`` (ICE curves of all background
        rows, or ``{"ice": n}`` of ``n`` random rows), ``"heterogeneity"``
        (see :func:`pdpboot.ice_heterogeneity`) and ``"interactions"`` (H
        statistics on at most 500 background rows, ``{"interactions": n_max}``;
        see :func:`pdpboot.h_statistic`), each with its ``_resamples``.
    grid : Grid, optional
        As in :func:`pdpboot.partial_dependence`.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        As in :func:`pdpboot.partial_dependence`.  A refit that never saw a
        class has probability 0 for it (root attr ``n_missing_class_resamples``);
        with ``"decision_function"`` such a resample fails.
    sample_weight : array of shape (n_rows,), optional
        Passed to every fit and used in every PD average.
    rng : None, int or numpy.random.Generator
        The one seed every random draw flows from.
    execution : Execution, optional
        How the resamples run (:class:`pdpboot.Execution`): jobs, threads,
        progress, checkpoint, failures and the PD engine.  Results are
        identical for any ``n_jobs``.

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, *features) and
        ``pd_resamples`` (``resample``, ``output``, *features), plus ``ice``
        (``instance``, ``output``, *features) and the statistics requested,
        each with its ``_resamples``.  Root variable ``resample_absent``
        (the rows each resample did not draw, bit-packed) for schemes that draw with replacement; root
        attrs hold the provenance.

    See Also
    --------
    pdpboot.confidence_bands : Bands from the resamples.
    pdpboot.partial_dependence : PD/ICE of one fitted model.

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

    Options of the resampling and of the run go in their objects:

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


def missing_class_resamples(missing: np.ndarray, failures: dict) -> int:
    """Resamples whose rows hold no row of some class of the data (a classifier's refit that never saw it:
    its probability is 0 there, and a decision-function refit failed), from the rows each one drew."""
    return int(max(np.sum(missing), sum(f.missing_class for f in failures.values())))


def run_bootstrap(plan: BootstrapPlan, *, stacklevel: int = 3) -> xr.DataTree:
    """Run a validated plan of any effect and assemble its result tree.

    ``stacklevel`` is that of the warning about failed resamples.
    """
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
                              n_missing_class_resamples=missing_class_resamples(out.missing_class, failures),
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
    resampling, n_rows = plan.resampling, plan.spec.n_rows
    choice = plan.choice
    logit = choice is not None and choice.band_scale == "logit" and response == "predict_proba"
    chosen = {"resampling_requested": choice.requested if choice is not None else resampling.scheme,
              "band_scale": "logit" if logit else "identity",
              "resampling_reason": choice.reason if choice is not None and choice.reason else
              f"resampling={resampling.scheme!r} as requested."}
    fields = {**chosen, **fields}
    return ResultHeader.describe(
        plan.estimator, dict(plan.settings, n_resamples=plan.n_resamples), response=response, outputs=outputs,
        n_rows=n_rows, effect=plan.effect.name, target="learner", uncertainty="bootstrap",
        n_resamples=plan.n_resamples, resampling=resampling.scheme, background=resampling.background,
        subsample_size=plan.scheme.size(n_rows), supports=plan.effect.supports(response), **fields)

