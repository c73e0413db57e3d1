"""NumPy layer: partial dependence and ICE of one fitted model on plain arrays.

``compute_pd`` / ``compute_pd_many`` dispatch between the registered exact engines
(:mod:`pdpboot.engine.registry`) and brute force (:mod:`pdpboot.engine.brute`), recording
the engine used for each feature set and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from . import pipeline  # noqa: F401  (registers the exact tree engine)
from .brute import DEFAULT_MEMORY_LIMIT, block_plan, brute_partial_dependence, split_pipeline
from .registry import Engine, EngineChoice, describe_choices, note, record_engine_choices, registered
from .response import response_function

METHODS = ("auto", "brute", "tree")

__all__ = ["DEFAULT_MEMORY_LIMIT", "METHODS", "EngineChoice", "compute_pd", "compute_pd_many", "describe_choices",
           "record_engine_choices"]


def compute_pd(
    estimator,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    method: str = "auto",
    weights: np.ndarray | None = None,
    average: bool = True,
    individual: bool = False,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """PD and ICE of a fitted estimator with the fastest exact engine available.

    Parameters
    ----------
    response_method : {"predict", "predict_proba", "decision_function"}
        Already resolved (see :func:`pdpboot.engine.response.resolve_response_method`).
    method : {"auto", "brute", "tree"}
        ``auto`` uses the tree engine when it supports the estimator, is estimated no slower
        than brute force and passes its self-check; ``tree`` raises where it does not apply.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
    """
    return compute_pd_many(
        estimator, X, [feature_idx], [grid_values], response_method=response_method, method=method,
        weights=weights, average=average, individual=individual, memory_limit=memory_limit,
        n_outputs=n_outputs,
    )[0]


def compute_pd_many(
    estimator,
    X,
    feature_sets: Sequence[Sequence[int]],
    grid_values: Sequence[Sequence[np.ndarray]],
    *,
    response_method: str,
    method: str = "auto",
    weights: np.ndarray | None = None,
    average: bool = True,
    individual: bool = False,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
    choices: list | None = None,
    prepared: dict | None = None,
) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
    """:func:`compute_pd` for several feature sets, reading / converting the model once.

    Parameters
    ----------
    feature_sets : sequence of sequences of int
        Column positions of each feature set (one or two columns for the tree engine).
    grid_values : sequence of sequences of 1-D arrays
        ``grid_values[k]`` holds one grid per feature of ``feature_sets[k]``.
    choices : list, optional
        When given, one :class:`~pdpboot.engine.registry.EngineChoice` per feature set (the
        engine used and why) is appended to it.
    prepared : dict, optional
        A cache of the engines' readings of this ``estimator`` on this ``X``, shared by calls.
    Other parameters
        As for :func:`compute_pd`.

    Returns
    -------
    list of (avg, ice)
        One pair per feature set, shapes as for :func:`compute_pd`.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not one of {list(METHODS)}.")
    if len(feature_sets) != len(grid_values):
        raise ValueError(
            f"Need one list of grids per feature set: {len(feature_sets)} feature sets, "
            f"{len(grid_values)} grid lists."
        )
    results: list = [None] * len(feature_sets)
    record = [EngineChoice(tuple(int(j) for j in fs), "brute", "no exact engine requested")
              for fs in feature_sets]
    n_grid = max((int(np.prod([np.size(g) for g in grids])) for grids in grid_values), default=1)
    for engine in registered():
        todo = [k for k, done in enumerate(results) if done is None]
        if not todo or method not in ("auto", engine.name):
            continue
        _run_exact(engine, estimator, X, feature_sets, grid_values, todo, results, record,
                   response_method=response_method, explicit=method == engine.name, n_grid=n_grid,
                   weights=weights, average=average, individual=individual, cache=prepared)
    predict = split = final_predict = None
    block_bytes = block_plan(estimator, memory_limit)
    for k, (features, grids) in enumerate(zip(feature_sets, grid_values)):
        if results[k] is not None:
            continue
        if predict is None:
            predict = response_function(estimator, response_method)
            split = split_pipeline(estimator, X)
            final_predict = None if split is None else response_function(split.final, response_method)
        columns = None if split is None else split.columns(features)
        if columns is None:  # the whole model on the stacked input rows
            target = (predict, X, features, grids)
        else:  # column-wise preprocessing applied once (brute.SplitPipeline)
            target = (final_predict, split.Xt, columns, [split.grid(j, g) for j, g in zip(features, grids)])
        results[k] = brute_partial_dependence(
            *target, weights=weights, average=average, individual=individual,
            memory_limit=block_bytes, n_outputs=n_outputs,
        )
    note(choices, record)
    return results


def _run_exact(engine: Engine, estimator, X, feature_sets, grid_values, todo: list[int], results: list,
               record: list, *, response_method: str, explicit: bool, n_grid: int, weights, average: bool,
               individual: bool, cache: dict | None = None) -> None:
    """Fill ``results[k]`` for the sets ``todo`` that ``engine`` supports, prefers and passes its check on."""
    name = type(estimator).__name__
    key = (engine.name, id(estimator), id(X), response_method)
    prepared = None if cache is None else cache.get(key)
    if prepared is None:
        prepared = engine.prepare(estimator, X, response_method, None if explicit else n_grid)
        if cache is not None and prepared is not None:
            cache[key] = prepared
    if prepared is None:
        if explicit:
            raise ValueError(f"method={engine.name!r} does not support {name} with this input "
                             f"(supported: {engine.supported}). Use method='auto' or 'brute'.")
        for k in todo:
            record[k] = replace(record[k], reason=f"the {engine.name} engine does not support {name} here "
                                                  "(or reading it would cost more than brute force)")
        return
    plans = {}
    for k in todo:
        try:
            plans[k] = prepared.plan(feature_sets[k], grid_values[k])
        except (ValueError, TypeError, KeyError, IndexError) as exc:  # this set by brute force
            if explicit:
                raise ValueError(f"method={engine.name!r} cannot compute feature set {list(feature_sets[k])} "
                                 f"of {name}: {exc}. Use method='auto' or 'brute'.") from None
            record[k] = replace(record[k], reason=f"the {engine.name} engine cannot plan this feature set: {exc}")
    picked = [k for k in plans if explicit or engine.faster(prepared, plans[k], individual)]
    for k in set(plans) - set(picked):
        record[k] = replace(record[k], reason=f"brute force estimated faster than the {engine.name} engine")
    if not picked:
        return
    grids: dict[int, list] = {}
    for k in picked:
        for j, g in zip(feature_sets[k], grid_values[k]):
            grids.setdefault(int(j), []).append(np.asarray(g).reshape(-1))
    merged = {j: np.concatenate(gs) if len(gs) > 1 else gs[0] for j, gs in grids.items()}
    reason = engine.check(prepared, estimator, X, response_method, merged)
    if reason is not None:
        if explicit:
            raise ValueError(f"method={engine.name!r}: the {engine.name} engine's reading of {name} disagrees "
                             f"with its own {response_method} ({reason}). Use method='auto' or 'brute'.")
        for k in picked:
            record[k] = replace(record[k], reason=f"{engine.name} engine failed its self-check: {reason}",
                                fallback=True)
        return
    done = prepared.partial_dependence_many([plans[k] for k in picked], weights=weights, average=average,
                                            individual=individual)
    for k, pair in zip(picked, done):
        results[k] = pair
        record[k] = replace(record[k], engine=engine.name, reason="exact, checked against the model's predictions")
