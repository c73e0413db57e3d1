"""NumPy layer: partial dependence and ICE of one fitted model on plain arrays.

``compute_pd`` / ``compute_pd_many`` dispatch between the exact tree-ensemble engine
(:mod:`pdpboot.engine.tree`) and the model-agnostic brute-force engine
(:mod:`pdpboot.engine.brute`).  With ``method="auto"`` the tree engine is used when it
supports the model and its estimated cost (:class:`pdpboot.engine.tree.TreePlan`) is
not above brute force's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import tree
from .brute import DEFAULT_MEMORY_LIMIT, block_plan, brute_partial_dependence, split_pipeline
from .pipeline import prepare_pipeline
from .response import response_function

METHODS = ("auto", "brute", "tree")

__all__ = ["DEFAULT_MEMORY_LIMIT", "METHODS", "compute_pd", "compute_pd_many"]


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
        ``auto`` uses the tree engine when it supports the estimator and is estimated
        to be no slower than brute force, else brute.

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
) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
    """:func:`compute_pd` for several feature sets, reading / converting the model once.

    The tree engine's feature sets are computed together: where only their averages of a
    response linear in the tree outputs are needed and the trees hold many rows per leaf
    (HGB, CatBoost), one compiled walk per tree serves all of them
    (:meth:`pdpboot.engine.tree.PreparedTrees.partial_dependence_many`).

    Parameters
    ----------
    feature_sets : sequence of sequences of int
        Column positions of each feature set (one or two columns for the tree engine).
    grid_values : sequence of sequences of 1-D arrays
        ``grid_values[k]`` holds one grid per feature of ``feature_sets[k]``.
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
    prepared = None
    if method in ("auto", "tree"):
        n_grid = max((int(np.prod([np.size(g) for g in grids])) for grids in grid_values), default=1)
        prepared = tree.prepare(estimator, X, response_method, n_grid=n_grid if method == "auto" else None)
        if prepared is None:
            prepared = prepare_pipeline(estimator, X, response_method)
        if prepared is None and method == "tree":
            raise ValueError(
                f"method='tree' does not support {type(estimator).__name__} with this input "
                "(supported: scikit-learn >= 1.6 decision trees, random forests, extra trees, gradient "
                "boosting and histogram gradient boosting - HGB with pandas categoricals too - "
                "and Pipelines of column-wise preprocessing into them, see pdpboot.engine.pipeline). "
                "Use method='auto' or 'brute'."
            )
    results: list = [None] * len(feature_sets)
    if prepared is not None:  # the tree engine's sets at once (their walks may be shared)
        per_row = individual or prepared.model.link is not None
        plans = [prepared.plan(features, grids) for features, grids in zip(feature_sets, grid_values)]
        chosen = [k for k, plan in enumerate(plans) if method == "tree" or plan.prefers_tree(per_row)]
        if chosen:
            done = prepared.partial_dependence_many([plans[k] for k in chosen], weights=weights, average=average,
                                                    individual=individual)
            for k, pair in zip(chosen, done):
                results[k] = pair
    predict = split = final_predict = None
    block_bytes, order = block_plan(estimator, memory_limit)
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
            memory_limit=block_bytes, n_outputs=n_outputs, order=order,
        )
    return results
