"""Fit, then every requested effect under the run's uncertainty strategy: what the result files hold.

:func:`compute` is deterministic given the configuration and the table; ``repro.py`` re-runs it.  The
effects come from :mod:`~pdpboot.workflow.registry` and the strategy from
:mod:`~pdpboot.workflow.strategy`, both chosen once, before any fit.  A caller that writes files
(:func:`pdpboot.workflow.run.run_workflow`) gets each finished effect through ``on_effect`` before the
next one starts, and with ``keep_going`` an effect that fails is recorded in ``Outcome.failures``
while the others go on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np
import xarray as xr
from sklearn.base import clone

from . import InputError
from .effect import EffectReport, FitContext, Outcome
from .model import build_estimator, check_given_model, evaluate, given_fitted_model, leakage_notes, model_option, split
from .modelcheck import check_model_parameters
from .options import RunConfig
from .problem import Problem
from .registry import EFFECTS, requested
from .strategy import strategy_for


def engine_notes(engine: str) -> list[str]:
    """What a user must know about how the PD was computed: an exact engine whose reading of the model
    failed its self-check against the model's own predictions (the numbers then come from brute force).

    ``engine`` is the result's ``engine`` attr (:func:`pdpboot.engine.describe_choices`).

    >>> engine_notes("tree: exact, checked against the model's predictions")
    []
    >>> engine_notes("brute: tree engine failed its self-check: differs by up to 0.1")
    ['computed by brute force (exact, slower): tree engine failed its self-check: differs by up to 0.1']
    """
    return [f"computed by brute force (exact, slower): {part.split(': ', 1)[1]}"
            for part in engine.split("; ") if part.startswith("brute: ") and "self-check" in part]


def feature_sets(problem: Problem) -> list:
    """Features and pairs in the order of the PD result's nodes."""
    return [*problem.pd_features, *[tuple(p) for p in problem.pairs]]


def _jsonable(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def _model_name(estimator) -> str:
    if hasattr(estimator, "steps"):
        return f"Pipeline(... {type(estimator.steps[-1][1]).__name__})"
    return type(estimator).__name__


def compute(config: RunConfig, problem: Problem, *, say: Callable[[str], None] = print,
            log: Callable[[str], None] | None = None, progress: bool = False,
            progress_lines: Callable[[str], None] | None = None,
            on_fit: Callable[[Outcome], None] | None = None,
            on_effect: Callable[[EffectReport, xr.DataTree, Outcome], None] | None = None,
            keep_going: bool = False) -> Outcome:
    """Split, fit, evaluate, then compute every requested effect (with its uncertainty) in turn.

    Parameters
    ----------
    on_fit : callable, optional
        Called with the outcome once the model is fitted and evaluated (before any effect).
    on_effect : callable, optional
        ``on_effect(effect, tree, outcome)`` after each effect finished, before the next starts.
    keep_going : bool
        Record a failing effect in ``Outcome.failures`` and go on with the others (raise when every
        effect failed); False: raise at once.

    Returns
    -------
    Outcome
        ``results`` holds one DataTree per effect (``pd``: ``results.nc``, ``ale``: ``ale.nc``); their root
        attrs add ``cli_config``, ``cli_metrics``, ``cli_notes``, ``cli_display_names`` (JSON) and ``created``.
    """
    log = log or say
    strategy = strategy_for(config)
    effects = requested(config)
    specs = {}
    notes_of_effects = []
    for effect in effects:  # every effect's refusal and feature sets before any fit
        strategy.check(effect)
        sets, effect_notes = effect.feature_sets(problem)
        if strategy.check_data is not None:
            strategy.check_data(problem, sets)
        specs[effect.name] = sets
        notes_of_effects += [f"{effect.label}: {note}" for note in effect_notes]
    estimator, notes = build_estimator(config, problem)
    for note in [*(f"model: {note}" for note in notes), *notes_of_effects]:
        log(note)
    outcome = _fit(config, problem, estimator, given_fitted_model(config) if not strategy.bands else None, say)
    outcome.notes[:0] = [*problem.notes, *notes]
    outcome.notes += notes_of_effects
    outcome.strategy = strategy.name
    if on_fit is not None:
        on_fit(outcome)
    ctx = FitContext(config=config, problem=problem, estimator=estimator, fitted=outcome.fitted,
                     X_train=outcome.X_train, y_train=outcome.y_train, say=say, log=log, progress=progress,
                     progress_lines=progress_lines, seconds=outcome.seconds, notes=outcome.notes)
    run_attrs = dict(created=config.created, cli_config=json.dumps(config.to_dict(), sort_keys=True),
                     cli_metrics=json.dumps([[m, _jsonable(v), d] for m, v, d in outcome.metrics]),
                     cli_display_names=json.dumps(problem.display, sort_keys=True))
    first_error = None
    for effect in effects:
        sets = specs[effect.name]
        n_pairs = sum(isinstance(fs, tuple) for fs in sets)
        say(f"{strategy.announce.format(config=config)}, {effect.label} of {len(sets) - n_pairs} feature(s) and "
            f"{n_pairs} pair(s) on {effect.grid.format(n=config.grid_resolution)} ...")
        try:
            tree = strategy.run(effect, ctx, sets)
            if effect.tidy is not None:
                tree = effect.tidy(tree, problem)
            for note in engine_notes(tree.attrs.get("engine", "")):
                say(f"NOTE: {effect.label}: {note}")
                outcome.notes.append(f"{effect.label}: {note}")
        except Exception as exc:
            if not keep_going:
                raise
            first_error = first_error or exc
            reason = " ".join(str(exc).split()) or type(exc).__name__
            outcome.failures[effect.name] = f"{type(exc).__name__}: {reason}"
            say(f"ERROR: {effect.label} failed: {type(exc).__name__}: {reason}")
            continue
        attrs = {**tree.attrs, **run_attrs, "cli_notes": json.dumps(outcome.notes)}
        tree.attrs = {k: v for k, v in attrs.items() if v is not None}  # netCDF stores no None
        outcome.results[effect.name] = tree
        if on_effect is not None:
            on_effect(effect, tree, outcome)
    if first_error is not None and not outcome.results:  # nothing finished: the run fails as a whole
        if isinstance(first_error, InputError):
            raise first_error
        name = next(iter(outcome.failures))
        raise RuntimeError(f"{EFFECTS[name].label} failed: {outcome.failures[name]}") from first_error
    return outcome


def _fit(config: RunConfig, problem: Problem, estimator, given, say: Callable[[str], None]) -> Outcome:
    """The model fitted on the training rows (or the user's fitted ``given`` as it is), with test metrics."""
    if given is not None:  # the user's fitted model, used as it is: no split, no fit
        check_given_model(given, problem)  # before any prediction
        X_train, y_train = problem.X, problem.y
        say(f"Using the fitted {_model_name(given)} from --model-file as it is (no refit) on all "
            f"{len(X_train)} rows ...")
        start = time.perf_counter()
        fitted = given
        metrics, predictions = evaluate(fitted, problem, X_train, y_train, X_train, y_train, fitted_elsewhere=True)
        leaks = []
    else:
        check_model_parameters(estimator, problem.X, problem.y, what=model_option(config),  # before the first fit
                               custom=bool(config.model_spec or config.model_file),
                               classification=problem.task == "classification")
        X_train, X_test, y_train, y_test = split(config, problem)
        test = "no test set" if X_test is None else f"{len(X_test)} test rows"
        say(f"Fitting {_model_name(estimator)} on {len(X_train)} training rows ({test}) ...")
        start = time.perf_counter()
        fitted = clone(estimator).fit(X_train, y_train)
        metrics, predictions = evaluate(fitted, problem, X_train, y_train, X_test, y_test)
        # a perfect score means leakage only on held-out rows (a given model may have been fitted on these)
        leaks = leakage_notes(fitted, problem, metrics, X_test, y_test)
    seconds = {"fit": time.perf_counter() - start}
    for leak in leaks:
        say(leak)
    return Outcome(estimator=estimator, fitted=fitted, metrics=metrics, predictions=predictions, X_train=X_train,
                   y_train=y_train, notes=leaks, seconds=seconds)
