"""Exact partial dependence and ICE of tree models, equal to brute force up to rounding.

scikit-learn trees, forests and (histogram) gradient boosting, XGBoost, LightGBM and CatBoost. A
leaf ``L`` is a box ``box_S(L) x box_C(L)`` over the features of interest S and the others C, so

    PD(z) = offset + sum over leaves L of value_L * w_L * 1[z in box_S(L)],
    w_L   = sum_i w_i 1[x_C^(i) in box_C(L)] / sum_i w_i;

the compiled walk (:mod:`._tree_kernel`) pushes each row through each tree once.  Responses not
linear in the tree outputs are formed per row and grid point before averaging.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import NotFittedError

from ._tree_check import check_reading
from ._tree_compiled import kernel_available
from ._tree_model import UnsupportedModel, check_supported, convert_quietly, external_reader, is_external
from ._tree_prepared import PreparedTrees, TreePlan, _external_read_dominates

__all__ = ["PreparedTrees", "TreePlan", "kernel_available", "prepare", "supports", "supports_estimator",
           "tree_partial_dependence"]

#: what declining a case raises: an unsupported or unfitted model, or rows the estimator refuses
_DECLINED = (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError)


def _float_rows(xa) -> bool:
    return isinstance(xa, np.ndarray) and xa.ndim == 2 and xa.dtype.kind == "f"


def prepare(estimator, X, response_method: str, n_grid: int | None = None) -> PreparedTrees | None:
    """:class:`PreparedTrees` for a supported estimator / input / response, else None.

    ``n_grid``, the largest number of grid points to come, declines models whose reading alone
    would cost more than brute force.
    """
    if not kernel_available():
        return None
    if is_external(estimator):  # reading the model is the check (read it once)
        if n_grid is not None and _external_read_dominates(estimator, len(X), n_grid):
            return None
        try:
            return PreparedTrees(estimator, X, response_method)
        except _DECLINED:
            return None
    try:  # the checks of ``supports``, keeping the converted rows
        check_supported(estimator, response_method)
        xa = convert_quietly(estimator, X)
    except _DECLINED:
        return None
    return PreparedTrees(estimator, X, response_method, converted=xa) if _float_rows(xa) else None


def supports_estimator(estimator, response_method: str) -> bool:
    """Whether the estimator / response pair is one the tree engine handles (input not checked)."""
    try:
        check_supported(estimator, response_method)
    except _DECLINED:
        return False
    return True


def supports(estimator, X, response_method: str) -> bool:
    """Whether :func:`tree_partial_dependence` handles this fitted estimator, response and input ``X``.

    True for the supported tree models (``GradientBoosting*`` with a constant init), single-output
    classifiers, a response they define and an ``X`` the estimator itself accepts.
    """
    try:
        check_supported(estimator, response_method)
        if is_external(estimator):
            return external_reader(estimator, response_method).to_array(X).ndim == 2
        return _float_rows(convert_quietly(estimator, X))
    except _DECLINED:
        return False


def tree_partial_dependence(
    estimator,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    weights: np.ndarray | None = None,
    average: bool = True,
    individual: bool = False,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Exact PD and ICE of a tree model, equal to brute force up to rounding.

    Parameters
    ----------
    estimator, X
        A fitted model for which :func:`supports` is True; background rows in its input space.
    feature_idx : tuple of int
        One or two column positions of the features of interest.
    grid_values : list of 1-D arrays
        One grid per feature, in the column's value space (categories as they appear in ``X``).
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.
    weights : array-like of shape (n_rows,), optional
        Non-negative row weights of the average (``average``); ``individual`` also returns the ICE.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None

    Raises
    ------
    ValueError
        Unsupported estimator or response, bad indices, grids or weights, or a reading of
        the model that disagrees with its own predictions.
    """
    if not (average or individual):
        raise ValueError("Nothing to compute: set average=True and/or individual=True.")
    prepared = PreparedTrees(estimator, X, response_method)
    plan = prepared.plan(feature_idx, grid_values)
    reason = check_reading(prepared, estimator, X, response_method, dict(zip(plan.feature_idx, grid_values)))
    if reason is not None:
        raise ValueError(f"The exact tree engine's reading of {type(estimator).__name__} disagrees with its own "
                         f"{response_method} ({reason}); use brute force (method='brute').")
    return prepared.partial_dependence(plan, weights=weights, average=average, individual=individual)
