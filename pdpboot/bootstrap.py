"""The refit bootstrap of any effect: options -> effect -> plan -> run -> result tree.

:func:`bootstrap_partial_dependence` turns its arguments into
:class:`~pdpboot.options.Resampling`, :class:`~pdpboot.options.Execution` and a
:class:`~pdpboot._evaluate.PDEffect`, validates them into a plan
(:func:`pdpboot._plan.make_plan`), and :func:`run_bootstrap` runs any plan
(:func:`pdpboot._loop.run`) and assembles its typed results into a DataTree
with one :class:`~pdpboot.header.ResultHeader` (:mod:`pdpboot._assemble`).
"""

from __future__ import annotations

import datetime
import json
import warnings
from collections.abc import Iterable, Mapping

import numpy as np
import xarray as xr

from ._assemble import build_tree
from ._evaluate import PDEffect, check_statistics
from ._loop import class_labels, run, start_workers  # noqa: F401  (public: pdpboot.start_workers)
from ._plan import BootstrapPlan, make_plan, make_spec
from ._validate import check_enough_rows
from .grid import Grid
from .header import ResultHeader
from .options import Execution, Resampling, resolve_run_options


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
    """Refit an estimator on resamples and compute PD curves/surfaces on one fixed grid.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator (or Pipeline)
        Cloned and fitted on the full data (the estimate) and on every resample.
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,) or (n_rows, n_targets)
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    n_resamples : int
        Number of resamples B (a shortcut of ``Resampling(n_resamples=...)``).
    resampling : {"auto", "bootstrap", "stratified", "subsample", "group"} or Resampling
        How rows are resampled.  A :class:`pdpboot.Resampling` holds every
        resampling option: ``subsample_fraction``, ``groups``, ``background``
        (the rows each resample's PD is averaged over: its own rows with their
        multiplicities, the default; the full data's rows; or the rows it did
        not draw), ``max_background`` and ``fit_params`` (keyword arguments of
        every ``fit``; per-row arrays are resampled with the rows).
        ``auto`` (default): for a classifier's predicted probabilities
        (``response_method`` ``"auto"`` or ``"predict_proba"``) ``subsample``
        at ``subsample_fraction=0.632`` with the PD's bands formed on the logit
        scale and mapped back (:func:`pdpboot.confidence_bands` reads the root
        attr ``band_scale="logit"``); for regressors and decision functions
        ``bootstrap``.  The estimate is always the fit on the full data.  Why:
        for a gradient-boosting classifier the bootstrap's SE is too small
        (0.80-0.89 of the true SD); in ``experiments/classifier_default.py``
        (n = 400, B = 100, four DGPs x boosting, forest and
        logistic-regression classifiers, R = 60-201 data sets per cell) the
        subsample with logit-scale bands covered 0.940-0.976 pointwise and
        0.912-0.985 whole curve in every cell, where the bootstrap covered a
        boosting classifier's PD on a rare outcome in 0.908 (MC SE 0.006)
        pointwise and 0.613 (0.030) whole curve (R = 120); for logistic
        regression, already right with the bootstrap, it moved pointwise
        coverage by at most 0.01 and whole-curve coverage up by 0.007-0.027.
        Each refit uses 0.632 n rows (CPU 0.83-1.00 of the bootstrap's,
        ``benchmarks/bench_auto_resampling.py``).  On a three-class outcome
        (``experiments/multiclass_default.py``, n = 400, B = 100) it covered
        0.979 / 0.978 (boosting, R = 60), 0.971 / 0.956 (forest, R = 45) and
        0.945 / 0.948 (multinomial logistic regression, R = 100) pointwise /
        whole curve.  The ICE heterogeneity and H statistics of such
        a run come from the same subsamples (deviations rescaled).  H2 of a
        boosting classifier's probabilities (``experiments/h2_classifier.py``,
        n = 400, B = 100, H2 on 100 rows): the 95 % percentile interval
        covered the learner's expected H2 in 0.950 (MC SE 0.020) of R = 120
        data sets (every miss above the interval), against 0.983 (0.017) for
        the bootstrap (R = 60); the ICE heterogeneity intervals were studied
        with the bootstrap only.  The
        root attrs ``resampling`` (the scheme that drew the rows),
        ``resampling_requested``, ``band_scale`` and ``resampling_reason``
        (one sentence) record the choice.  ``bootstrap``: rows drawn with
        replacement (a boosting classifier's probability PD then draws a
        :class:`pdpboot.CoverageWarning` with simultaneous bands).
        ``stratified`` keeps each class's count fixed: right only
        when the class counts are fixed by the design (e.g. case-control
        sampling); otherwise it freezes the level of a probability PD (a model
        with a free intercept matches the class share) and its bands
        under-cover.  ``subsample``: ``subsample_fraction`` of the rows without
        replacement (deviations from the estimate rescaled by
        ``sqrt(m / (n - m))`` in the bands; bands on the probability scale
        unless ``confidence_bands(scale="logit")``).  ``group`` needs
        ``groups`` (a cluster bootstrap).
    statistics : str, list of str or dict, optional
        What to keep besides the PD, by name, or as a dict name -> option:

        - ``"ice"``: ICE curves (``ice``, ``ice_resamples``) of all background
          rows of the estimate, or (``{"ice": n}``) of ``n`` randomly chosen
          rows; each resample's model is evaluated on the same instances.
        - ``"heterogeneity"``: ICE heterogeneity statistics of every 1-D
          feature on every model, from the ICE curves of its background rows
          (weighted by their multiplicities), keeping only the statistics:
          ``ice_sd``, ``cice_sd``, ``dice_sd`` (``output``, feature) and
          ``heterogeneity_index`` (``output``), each with ``_resamples``.  See
          :func:`pdpboot.ice_heterogeneity`.
        - ``"interactions"``: Friedman-Popescu H statistics on every model:
          ``h2_overall`` (``output``) in 1-D nodes, ``h2`` and
          ``h_unnormalized`` (``output``) in 2-D nodes, each with
          ``_resamples``, on one random subsample of at most 500 of the
          estimate's background rows (``{"interactions": n_max}`` sets that
          maximum), drawn once: every resample uses the rows of its own
          background that are in it, with their multiplicities, so the
          estimate and its resamples are the same statistic.  Costs about
          ``n_max**2`` predictions per 1-D node and ``3 * n_max**2`` per 2-D
          node and model.  See :func:`pdpboot.h_statistic`.
    grid : Grid, optional
        As in :func:`pdpboot.partial_dependence`.
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
        As in :func:`pdpboot.partial_dependence`.  With
        ``response_method="decision_function"``, a resample whose refit saw
        fewer classes than the full data has scores on another scale (a binary
        score instead of multinomial ones): it is recorded as failed (root
        attrs ``failed_resamples`` and ``n_missing_class_resamples``, NaN
        resamples) whatever ``on_error`` says, and counts towards
        ``max_failure_share``.  Probabilities of a class a refit never saw are 0
        (``n_missing_class_resamples`` counts those refits too).
    sample_weight : array of shape (n_rows,), optional
        Survey or importance weights: passed to every fit (for the rows drawn,
        with their multiplicity; to a Pipeline's final step) and used in every
        PD average (times the resample multiplicities).
    rng : None, int or numpy.random.Generator
        The one seed every random draw flows from (None: fresh entropy).
    execution : Execution, optional
        How the resamples run (:class:`pdpboot.Execution`): ``n_jobs``
        (parallel resamples; results are identical for any value),
        ``threads_per_job`` (native threads per fit; default: the libraries'
        own in a sequential run, one per job in a parallel one; results are
        bit-identical for every ``n_jobs``; inner joblib parallelism of the
        estimator defaults to one job), ``progress`` (a tqdm bar,
        "auto": on a terminal for B >= 20, or ``progress(done, total)``),
        ``checkpoint`` (a directory where the estimate and every finished
        resample are saved as they complete; calling again with the same
        arguments resumes and equals an uninterrupted run; ``n_resamples`` may
        be raised to extend a run; with ``rng=None`` the checkpoint's own seed
        is reused; a checkpoint made with other data, estimator, grid, seed or
        settings is refused), ``on_error`` ("raise", or "skip": a failed
        resample is recorded in the root attr ``failed_resamples`` and NaN in
        every ``*_resamples``, bands use the successful ones and a warning says
        how many failed), ``max_failure_share`` (with "skip", stop as soon as
        more than this share has failed), ``method`` ("auto", "brute" or
        "tree": the PD engine) and ``memory_limit`` (bytes of one stacked
        prediction block).
    Returns
    -------
    xarray.DataTree
        Root variable ``resample_counts`` (``resample``, ``row``): how often
        each row was drawn into each resample (for ``method="bca"``; not with
        ``subsample``).  One child per feature set with ``pd`` (``output``, *features),
        ``pd_resamples`` (``resample``, ``output``, *features) and, with
        ``ice``, ``ice`` (``instance``, ``output``, *features) and
        ``ice_resamples``; with ``heterogeneity``/``interactions``, the
        statistics above.  Root attrs hold the provenance.

    See Also
    --------
    pdpboot.confidence_bands : Pointwise and simultaneous bands from the resamples.
    pdpboot.partial_dependence : PD/ICE of one fitted model, no resampling.
    pdpboot.ice_heterogeneity, pdpboot.h_statistic : Statistics with intervals.

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
    ...     execution=Execution(n_jobs=1, on_error="skip"))
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


def missing_class_resamples(plan, counts: np.ndarray, failures: dict) -> int:
    """Resamples whose rows hold no row of some class of the data (a classifier's refit that never saw it:
    its probability is 0 there, and a decision-function refit failed), from the rows each one drew."""
    labels = class_labels(plan)
    failed = sum(f.missing_class for f in failures.values())
    if labels is None:
        return failed
    n_classes = len(np.unique(labels))
    lacking = sum(len(np.unique(labels[row > 0])) < n_classes for row in np.asarray(counts))
    return int(max(lacking, failed))


def run_bootstrap(plan: BootstrapPlan, *, stacklevel: int = 3) -> xr.DataTree:
    """Run a validated plan of any effect and assemble its result tree (the refit-bootstrap strategy).

    Parameters
    ----------
    plan : BootstrapPlan
        From :func:`pdpboot._plan.make_plan`.
    stacklevel : int
        Of the warning about failed resamples (3: the caller of the public function).

    Returns
    -------
    xarray.DataTree
        As :func:`bootstrap_partial_dependence` describes, with the plan's effect's variables.
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
                              n_missing_class_resamples=missing_class_resamples(plan, out.counts, failures),
                              failed_resamples=json.dumps([{"resample": b, "error": str(failures[b])}
                                                           for b in sorted(failures)]))
    tree = build_tree(plan.spec, out.stacked(), outputs=out.evaluation.outputs,
                      ice_rows=out.evaluation.fixed.get("ice"),
                      header=header, node_attrs=plan.effect.node_attrs(),
                      extra_coords={"resample": np.arange(plan.n_resamples)})
    if plan.scheme.keeps_counts:  # for BCa: how often each row went into each resample
        tree["resample_counts"] = xr.Variable(("resample", "row"), out.counts)
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

