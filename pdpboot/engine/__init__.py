"""NumPy layer: partial dependence and ICE of one fitted model on plain arrays.

``compute_pd`` dispatches between the exact tree-ensemble engine
(:mod:`pdpboot.engine.tree`) and the model-agnostic brute-force engine
(:mod:`pdpboot.engine.brute`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import tree
from .brute import DEFAULT_MEMORY_LIMIT, brute_partial_dependence
from .response import response_function

METHODS = ("auto", "brute", "tree")



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
        Already resolved (see :func:`pdpboot._response.resolve_response_method`).
    method : {"auto", "brute", "tree"}
        ``auto`` uses the tree engine when it supports the estimator, else brute.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
    """
    if method in ("auto", "tree"):
        if tree.supports(estimator, X, response_method):
            return tree.tree_partial_dependence(
                estimator, X, feature_idx, grid_values, response_method=response_method,
                weights=weights, average=average, individual=individual,
            )
        if method == "tree":
            raise ValueError(
                f"method='tree' does not support {type(estimator).__name__} with this input "
                "(supported: scikit-learn >= 1.6 decision trees, random forests, extra trees, gradient "
                "boosting and histogram gradient boosting - HGB with pandas categoricals too - "
                "but not Pipelines). "
                "Use method='auto' or 'brute'."
            )
    elif method != "brute":
        raise ValueError(f"method={method!r} is not one of {list(METHODS)}.")
    return brute_partial_dependence(
        response_function(estimator, response_method), X, feature_idx, grid_values,
        weights=weights, average=average, individual=individual,
        memory_limit=memory_limit, n_outputs=n_outputs,
    )
