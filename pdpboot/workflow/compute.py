"""Fit, bootstrap and bands: everything ``results.nc`` depends on (and ``repro.py`` re-runs)."""

from __future__ import annotations

import contextlib
import inspect
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.base import clone

from ..bands import confidence_bands
from ..bootstrap import bootstrap_partial_dependence
from ..schema import node_name
from .data import Problem
from .model import build_estimator, evaluate, split
from .options import RunConfig
from .progress import bootstrap_progress


@dataclass
class Outcome:
    """Everything a run computes."""

    result: xr.DataTree  # with bands and heterogeneity (and H) statistics
    estimator: object  # unfitted
    fitted: object  # fitted on the training rows (the estimate's model)
    metrics: list  # (name, value, description)
    predictions: pd.DataFrame | None
    X_train: pd.DataFrame
    y_train: pd.Series
    notes: list[str]
    seconds: dict[str, float]


def feature_sets(problem: Problem) -> list:
    """Features and pairs in the order of the result's nodes."""
    return [*problem.pd_features, *[tuple(p) for p in problem.pairs]]


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
        ``cli_display_names`` (JSON) and ``created`` = the run's time.
    """
    seconds = {}
    estimator, notes = build_estimator(config, problem)
    if config.uncertainty == "ij":  # before any fit: the one-fit jackknife needs a bare forest
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
    say(f"Bootstrap: {config.n_resamples} refits, PD of {len(problem.pd_features)} feature(s) and "
        f"{len(problem.pairs)} pair(s) on a {config.grid_resolution}-point grid ...")
    start = time.perf_counter()
    threads, limits = thread_limits(config)
    run = lambda: bootstrap_partial_dependence(  # noqa: E731 - called once, maybe inside the progress reader
        estimator, X_train, y_train, sets,
        n_resamples=config.n_resamples,
        grid_resolution=config.grid_resolution,
        custom_values=_training_levels(problem.custom_values, X_train, used) or None,
        categorical_features=[c for c in [*problem.categorical, *problem.points] if c in used] or None,
        response_method="predict_proba" if problem.task == "classification" else "predict",
        ice=config.ice_samples if config.ice_samples > 0 else False,
        heterogeneity=True,
        interactions=config.interactions if config.interactions > 0 else False,
        max_background=config.max_background or None,
        n_jobs=config.n_jobs,
        rng=config.random_state,
        **({} if problem.groups is None else {"groups": problem.groups.loc[X_train.index].to_numpy(),
                                              "resampling": "group"}),
        progress=True if progress_lines is not None else progress,
        **threads,
    )
    with limits:
        if progress_lines is None:
            result = run()
        else:
            result = bootstrap_progress(run, emit=progress_lines, n_resamples=config.n_resamples,
                                        terminal=progress)
    seconds["bootstrap"] = time.perf_counter() - start
    result = confidence_bands(result, confidence_level=config.confidence_level, method=config.band,
                              simultaneous=config.simultaneous)
    for a, b in problem.pairs:  # resampled ICE surfaces: B x N x grid^2 numbers nothing reads
        node = result[node_name([a, b])]
        if "ice_resamples" in node.ds:
            node.dataset = node.to_dataset().drop_vars("ice_resamples")
    result.attrs.update(
        created=config.created,
        cli_config=json.dumps(config.to_dict(), sort_keys=True),
        cli_metrics=json.dumps([[m, _jsonable(v), d] for m, v, d in metrics]),
        cli_notes=json.dumps([*problem.notes, *notes]),
        cli_display_names=json.dumps(problem.display, sort_keys=True),
    )
    return Outcome(result=result, estimator=estimator, fitted=fitted, metrics=metrics, predictions=predictions,
                   X_train=X_train, y_train=y_train, notes=[*problem.notes, *notes], seconds=seconds)
