"""Fit, bootstrap and bands: everything ``results.nc`` depends on (and ``repro.py`` re-runs)."""

from __future__ import annotations

import contextlib
import inspect
import json
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.base import clone

from ..ale import bootstrap_ale
from ..bands import confidence_bands
from ..bootstrap import bootstrap_partial_dependence
from ..schema import node_name
from .data import Problem
from .model import build_estimator, evaluate, split
from .options import RunConfig
from .outcome import Outcome
from .progress import bootstrap_progress


def feature_sets(problem: Problem) -> list:
    """Features and pairs in the order of the result's nodes."""
    return [*problem.pd_features, *[tuple(p) for p in problem.pairs]]


def wants(config: RunConfig, effect: str) -> bool:
    """Whether ``--effect`` asks for ``effect`` ("pd" or "ale")."""
    return getattr(config, "effect", "pd") in (effect, "both")


def ale_pairs(problem: Problem) -> list[tuple[str, str]]:
    """Pairs that get a 2-D ALE surface: both features numeric (2-D ALE needs ordered features)."""
    return [tuple(p) for p in problem.pairs if not any(f in problem.categorical for f in p)]


def _jsonable(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def _training_levels(custom: dict, X_train: pd.DataFrame, used: set) -> dict:
    """The custom level grids, without levels that occur only in test rows (the model never saw them)."""
    out = {}
    for name, levels in custom.items():
        if name in used:
            seen = set(X_train[name].dropna().tolist())
            out[name] = levels[[v in seen for v in levels.tolist()]]
    return out


def thread_limits(config: RunConfig) -> tuple[dict, contextlib.AbstractContextManager]:
    """How ``--threads-per-job`` reaches the bootstrap: its ``threads_per_job`` argument when it has
    one, else a threadpoolctl limit around the call (which covers serial runs; joblib's loky workers
    get cores // n_jobs threads by themselves)."""
    if "threads_per_job" in inspect.signature(bootstrap_partial_dependence).parameters:
        return {"threads_per_job": config.threads_per_job}, contextlib.nullcontext()
    return {}, fit_limits(config)


def fit_limits(config: RunConfig) -> contextlib.AbstractContextManager:
    """Native-thread limit of the fits made in this process (none unless ``--threads-per-job``)."""
    if config.threads_per_job is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=config.threads_per_job)


def compute(config: RunConfig, problem: Problem, *, say: Callable[[str], None] = print,
            log: Callable[[str], None] | None = None, progress: bool = False,
            progress_lines: Callable[[str], None] | None = None) -> Outcome:
    """Split, fit, evaluate, bootstrap and band (deterministic given ``config`` and the table).

    Returns
    -------
    Outcome
        ``result`` is the DataTree saved as ``results.nc``: one node per feature and pair with
        ``pd``, ``pd_resamples``, ``pd_band`` (``ci_bound``, ``output``, *features), ``pd_se``,
        ``pd_bias``, ICE (``ice``; ``ice_resamples`` in 1-D nodes only) when ``ice_samples > 0``,
        the heterogeneity statistics ``ice_sd``/``cice_sd``/``dice_sd``/``heterogeneity_index`` of 1-D nodes and,
        with ``interactions``, ``h2_overall``/``h2``/``h_unnormalized``, each with resamples and
        bands.  Root attrs add ``cli_config``, ``cli_metrics``, ``cli_notes`` and
        ``cli_display_names`` (JSON) and ``created`` = the run's time.  ``result`` is None with
        ``--effect ale``; with ``--effect ale|both``, ``ale`` is the DataTree saved as ``ale.nc``
        (:func:`pdpboot.bootstrap_ale` of every feature and numeric pair, same seed and resampling,
        with ``ale_band``/``ale_se``/``ale_bias`` and the same root attrs).
    """
    seconds = {}
    estimator, notes = build_estimator(config, problem)
    if config.uncertainty == "ij":  # before any fit: the one-fit jackknife needs a forest (Pipelines end in one)
        from .forest_ij import check_estimator

        check_estimator(estimator)
    for note in notes:
        (log or say)(f"model: {note}")
    X_train, X_test, y_train, y_test = split(config, problem)
    name = type(estimator).__name__ if not hasattr(estimator, "steps") else (
        f"Pipeline(... {type(estimator.steps[-1][1]).__name__})")
    test = "no test set" if X_test is None else f"{len(X_test)} test rows"
    say(f"Fitting {name} on {len(X_train)} training rows ({test}) ...")
    start = time.perf_counter()
    with fit_limits(config):
        fitted = clone(estimator).fit(X_train, y_train)
        metrics, predictions = evaluate(fitted, problem, X_train, y_train, X_test, y_test)
    seconds["fit"] = time.perf_counter() - start

    sets = feature_sets(problem)
    used = {f for fs in sets for f in (fs if isinstance(fs, tuple) else (fs,))}
    if config.uncertainty == "ij":  # one fit instead of B refits (see pdpboot.workflow.forest_ij)
        from .forest_ij import ij_outcome

        return ij_outcome(config, problem, estimator=estimator, fitted=fitted, metrics=metrics,
                          predictions=predictions, X_train=X_train, y_train=y_train, notes=notes, seconds=seconds,
                          sets=sets, custom_values=_training_levels(problem.custom_values, X_train, used) or None,
                          say=say)
    result = None
    threads, limits = thread_limits(config)
    if wants(config, "pd"):
        result = _bootstrap_pd(config, problem, estimator, X_train, y_train, sets, used, threads, limits, say,
                               progress, progress_lines, seconds)
    ale, pairs, ale_notes = None, [], []
    if wants(config, "ale"):
        ale, pairs, ale_notes = _bootstrap_ale(config, problem, estimator, X_train, y_train, threads, limits, say,
                                               progress, progress_lines, seconds)
    for note in ale_notes:
        (log or say)(f"ALE: {note}")
    all_notes = [*problem.notes, *notes, *ale_notes]
    run_attrs = dict(
        created=config.created,
        cli_config=json.dumps(config.to_dict(), sort_keys=True),
        cli_metrics=json.dumps([[m, _jsonable(v), d] for m, v, d in metrics]),
        cli_notes=json.dumps(all_notes),
        cli_display_names=json.dumps(problem.display, sort_keys=True),
    )
    for tree in (result, ale):
        if tree is not None:
            tree.attrs.update(run_attrs)
    return Outcome(result=result, estimator=estimator, fitted=fitted, metrics=metrics, predictions=predictions,
                   X_train=X_train, y_train=y_train, notes=all_notes, seconds=seconds, ale=ale, ale_pairs=pairs)


def _run_bootstrap(run, config, limits, progress, progress_lines):
    with limits:
        if progress_lines is None:
            return run()
        return bootstrap_progress(run, emit=progress_lines, n_resamples=config.n_resamples, terminal=progress)


def _common_arguments(config: RunConfig, problem: Problem, X_train) -> dict:
    """Arguments both effects' bootstraps share (same rng and resampling: the same rows and fits' seeds)."""
    return dict(
        n_resamples=config.n_resamples,
        grid_resolution=config.grid_resolution,
        response_method="predict_proba" if problem.task == "classification" else "predict",
        n_jobs=config.n_jobs,
        rng=config.random_state,
        **({"resampling": "bootstrap"} if problem.groups is None else {
            "groups": problem.groups.loc[X_train.index].to_numpy(), "resampling": "group"}),
    )


def _bootstrap_ale(config, problem, estimator, X_train, y_train, threads, limits, say, progress, progress_lines,
                   seconds) -> tuple[xr.DataTree, list, list[str]]:
    """ALE of every feature and numeric pair, with bands (``--effect ale|both``)."""
    pairs = ale_pairs(problem)
    notes = [f"no 2-D ALE for {problem.display[a]!r} x {problem.display[b]!r}: 2-D ALE needs two numeric "
             "features" for a, b in problem.pairs if (a, b) not in pairs]
    sets = [*problem.pd_features, *pairs]
    used = {f for fs in sets for f in (fs if isinstance(fs, tuple) else (fs,))}
    # a user's --level-order is kept; other categorical levels get ALE's own order (by similarity)
    ordered = {f: v for f, v in problem.custom_values.items()
               if problem.display.get(f) in config.level_order and f in problem.categorical}
    say(f"Bootstrap: {config.n_resamples} refits, ALE of {len(problem.pd_features)} feature(s) and "
        f"{len(pairs)} pair(s) on {config.grid_resolution} quantile bins ...")
    start = time.perf_counter()
    run = lambda: bootstrap_ale(  # noqa: E731 - called once, maybe inside the progress reader
        estimator, X_train, y_train, sets,
        custom_values=_training_levels(ordered, X_train, used) or None,
        categorical_features=[c for c in [*problem.categorical, *problem.points] if c in used] or None,
        progress=True if progress_lines is not None else progress,
        **_common_arguments(config, problem, X_train), **threads,
    )
    ale = _run_bootstrap(run, config, limits, progress, progress_lines)
    seconds["bootstrap_ale"] = time.perf_counter() - start
    ale = confidence_bands(ale, confidence_level=config.confidence_level, method=config.band,
                           simultaneous=config.simultaneous)
    return ale, pairs, notes


def _bootstrap_pd(config, problem, estimator, X_train, y_train, sets, used, threads, limits, say, progress,
                  progress_lines, seconds) -> xr.DataTree:
    say(f"Bootstrap: {config.n_resamples} refits, PD of {len(problem.pd_features)} feature(s) and "
        f"{len(problem.pairs)} pair(s) on a {config.grid_resolution}-point grid ...")
    start = time.perf_counter()
    run = lambda: bootstrap_partial_dependence(  # noqa: E731 - called once, maybe inside the progress reader
        estimator, X_train, y_train, sets,
        custom_values=_training_levels(problem.custom_values, X_train, used) or None,
        categorical_features=[c for c in [*problem.categorical, *problem.points] if c in used] or None,
        ice=config.ice_samples if config.ice_samples > 0 else False,
        heterogeneity=True,
        interactions=config.interactions if config.interactions > 0 else False,
        max_background=config.max_background or None,
        progress=True if progress_lines is not None else progress,
        **_common_arguments(config, problem, X_train), **threads,
    )
    result = _run_bootstrap(run, config, limits, progress, progress_lines)
    seconds["bootstrap"] = time.perf_counter() - start
    result = confidence_bands(result, confidence_level=config.confidence_level, method=config.band,
                              simultaneous=config.simultaneous)
    for a, b in problem.pairs:  # resampled ICE surfaces: B x N x grid^2 numbers nothing reads
        node = result[node_name([a, b])]
        if "ice_resamples" in node.ds:
            node.dataset = node.to_dataset().drop_vars("ice_resamples")
    return result
