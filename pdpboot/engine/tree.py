"""Exact partial dependence and ICE for tree models, without brute force.

Supported: scikit-learn trees, forests and (histogram) gradient boosting, XGBoost,
LightGBM and CatBoost, read from their own model dumps.  The result equals brute force
up to floating-point rounding, but each row is pushed through each tree once instead of
once per grid point.  A leaf ``L`` is a box ``box_S(L) x box_C(L)`` over the features of
interest S and the others C, so

    PD(z) = offset + sum over leaves L of value_L * w_L * 1[z in box_S(L)],
    w_L   = sum_i w_i 1[x_C^(i) in box_C(L)] / sum_i w_i,

and ICE keeps the sum per row.  The walk (:mod:`._tree_kernel`, compiled with numba)
carries the rows meeting the complement splits down each tree and adds each leaf's value
at its grid box; responses not linear in the tree outputs (boosting probabilities, log
links) are formed per row and grid point before averaging.  Inputs are converted and
compared as the estimator itself does (float32 thresholds, missing-value directions,
categorical bitsets).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import NotFittedError

from ._tree_check import check_reading
from ._tree_compiled import (
    _KERNEL_ICE_BYTES,
    _MASK_MAX,
    _blocks,
    _expand,
    _kernel_walk,
    decode_boxes,
    kernel_available,
)
from ._tree_model import (
    UnsupportedModel,
    check_supported,
    convert_quietly,
    external_reader,
    is_external,
)
from ._tree_prepared import PreparedTrees, TreePlan, _check_weights, _external_read_dominates

__all__ = [
    "PreparedTrees",
    "TreePlan",
    "kernel_available",
    "per_tree_partial_dependence",
    "prepare",
    "supports",
    "supports_estimator",
    "tree_partial_dependence",
]

def prepare(estimator, X, response_method: str, n_grid: int | None = None) -> PreparedTrees | None:
    """:class:`PreparedTrees` for a supported estimator / input / response, else None.

    Parameters
    ----------
    estimator, X, response_method
        As for :func:`tree_partial_dependence`.
    n_grid : int, optional
        Largest number of grid points to come; models whose reading alone would cost more
        than brute force are declined.

    Returns
    -------
    PreparedTrees or None
        None when the tree engine does not handle the case (use brute force).
    """
    if not kernel_available():
        return None
    if is_external(estimator):  # reading the model is the check (read it once)
        if n_grid is not None and _external_read_dominates(estimator, len(X), n_grid):
            return None
        try:
            return PreparedTrees(estimator, X, response_method)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, NotFittedError):
            return None
    try:  # the checks of ``supports``, keeping the converted rows (converting twice costs ~10 % of a walk)
        check_supported(estimator, response_method)
        xa = convert_quietly(estimator, X)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    if not (isinstance(xa, np.ndarray) and xa.ndim == 2 and xa.dtype.kind == "f"):
        return None
    return PreparedTrees(estimator, X, response_method, converted=xa)

def supports_estimator(estimator, response_method: str) -> bool:
    """Whether the estimator / response pair is one the tree engine handles (input not checked)."""
    try:
        check_supported(estimator, response_method)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return False
    return True

def supports(estimator, X, response_method: str) -> bool:
    """Whether :func:`tree_partial_dependence` handles this estimator, input and response.

    Parameters
    ----------
    estimator : object
        A fitted estimator.
    X : array-like of shape (n_rows, n_features)
        Background rows in the estimator's input space.
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.

    Returns
    -------
    bool
        True for fitted scikit-learn tree models (``GradientBoosting*`` with a constant
        init), single-output classifiers, a response they define and an ``X`` the
        estimator itself accepts.
    """
    try:
        check_supported(estimator, response_method)
        if is_external(estimator):
            return external_reader(estimator, response_method).to_array(X).ndim == 2
        xa = convert_quietly(estimator, X)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return False
    return isinstance(xa, np.ndarray) and xa.ndim == 2 and xa.dtype.kind == "f"

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
    """Exact brute-force-equivalent PD and ICE of a scikit-learn tree model.

    Parameters
    ----------
    estimator : fitted tree model
        One for which :func:`supports` is True.
    X : array-like of shape (n_rows, n_features)
        Background rows (ndarray or DataFrame) in the estimator's input space; may
        contain NaN where the estimator supports missing values.
    feature_idx : tuple of int
        One or two column positions of the features of interest.
    grid_values : list of 1-D arrays
        One grid per feature, in the column's value space (for a categorical
        HistGradientBoosting feature: the category values as they appear in ``X``).
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.
    weights : array-like of shape (n_rows,), optional
        Non-negative row weights for the average.
    average, individual : bool
        Which results to compute.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
        ``sum_i w_i f_i(z) / sum_i w_i`` for each response column (dims ``output``,
        then one per feature, grid order as given).  None unless ``average``.
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        The response of every row at every grid point (dims ``instance``,
        ``output``, features).  None unless ``individual``.

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
    _check_or_raise(prepared, estimator, X, response_method, plan, grid_values)
    return prepared.partial_dependence(plan, weights=weights, average=average, individual=individual)


def _check_or_raise(prepared, estimator, X, response_method: str, plan: TreePlan, grid_values) -> None:
    """The self-check (:func:`._tree_check.check_reading`) of a direct call: an error on disagreement."""
    reason = check_reading(prepared, estimator, X, response_method, dict(zip(plan.feature_idx, grid_values)))
    if reason is not None:
        raise ValueError(f"The exact tree engine's reading of {type(estimator).__name__} disagrees with its own "
                         f"{response_method} ({reason}); use brute force (method='brute').")

def per_tree_partial_dependence(
    forest,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    weights: np.ndarray | None = None,
    individual: bool = False,
    oob: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """PD of every tree of a forest (and the forest's ICE) from one compiled walk.

    Equivalent to brute-force PD of each tree ``forest.estimators_[b]`` in turn.

    Parameters
    ----------
    forest : fitted RandomForest* / ExtraTrees*
    X : array-like of shape (n_rows, n_features)
        Background rows.
    feature_idx : tuple of int
        One or two column positions.
    grid_values : list of 1-D arrays
        One grid per feature (categorical features and grids with NaN: at most 62 points).
    response_method : {"predict", "predict_proba"}
    weights : array-like of shape (n_rows,), optional
        Non-negative row weights of each tree's average.
    individual : bool, default False
        Also return the forest's ICE.
    oob : bool array of shape (n_trees, n_rows), optional
        With ``individual``: also return, per row, the sum of the ICE of the trees with
        ``oob[b, i]`` True.

    Returns
    -------
    tree_pd : ndarray of shape (n_trees, n_outputs, *grid_shape)
        ``sum_i w_i f_b(z, x_C^(i)) / sum_i w_i`` for each tree ``b`` (dims ``tree``,
        ``output``, then one per feature).
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        The forest's ICE (dims ``instance``, ``output``, features); None unless ``individual``.
    oob_ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        ``sum_{b: oob[b, i]} f_b(z, x_C^(i))``; None unless ``individual`` and ``oob`` given.


    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from pdpboot.engine.tree import per_tree_partial_dependence
    >>> X = np.random.default_rng(0).random((40, 3)); y = X[:, 0]
    >>> rf = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    >>> tree_pd, _, _ = per_tree_partial_dependence(rf, X, (0,), [np.array([0.2, 0.8])],
    ...                                             response_method="predict")
    >>> tree_pd.shape
    (4, 1, 2)
    """
    from ._tree_model import FOREST_TYPES

    if not isinstance(forest, FOREST_TYPES):
        raise ValueError(f"forest must be a fitted RandomForest*/ExtraTrees* model, got {type(forest).__name__}.")
    prepared = PreparedTrees(forest, X, response_method)
    plan = prepared.plan(feature_idx, grid_values)
    _check_or_raise(prepared, forest, X, response_method, plan, grid_values)
    if plan.boxes is None:
        raise ValueError("per_tree_partial_dependence handles categorical grids and grids with NaN of at most "
                         f"{_MASK_MAX} points.")
    model, table, xt = prepared.model, plan.boxes, prepared.xt
    n_rows, n_trees = xt.shape[1], len(model.roots)
    w = _check_weights(weights, n_rows)
    weights_ = np.ones(n_rows) if w is None else w
    if oob is not None:
        oob = np.asarray(oob)
        if oob.shape != (n_trees, n_rows) or oob.dtype.kind not in "bui":
            raise ValueError(f"oob must be a boolean array of shape ({n_trees}, {n_rows}), got {oob.shape}.")
        oob = oob.astype(bool)
    n_raw, size = model.value.shape[1], table.size
    tree_values = model.value * n_trees  # each tree's own prediction (the forest averages them)
    acc = np.zeros((n_trees, n_raw, size))
    rows = np.arange(n_rows, dtype=np.int64) if w is None else np.flatnonzero(w > 0).astype(np.int64)
    no_ice = np.zeros((0, 0, 0))
    _kernel_walk(model, table, xt, rows, weights_, acc, no_ice, value=tree_values,
                 slot=np.arange(n_trees, dtype=np.int64))
    tree_pd = decode_boxes(acc, table) / weights_.sum() + _expand(model.offset, len(table.shape))
    ice = oob_ice = None
    if individual:
        block = int(max(1, min(n_rows, _KERNEL_ICE_BYTES // (size * n_raw * 8 * (1 if oob is None else 2)))))
        ice = np.empty((n_rows, n_raw) + table.shape)
        oob_ice = None if oob is None else np.empty_like(ice)
        for blk in _blocks(n_rows, block):
            b = blk.stop - blk.start
            enc = np.zeros((b, n_raw, size))
            enc_oob = None if oob is None else np.zeros_like(enc)
            _kernel_walk(model, table, xt[:, blk], np.arange(b, dtype=np.int64), weights_[blk], no_ice, enc,
                         oob=None if oob is None else oob[:, blk], ice_oob=enc_oob)
            ice[blk] = decode_boxes(enc, table) + _expand(model.offset, len(table.shape))
            if oob is not None:
                oob_ice[blk] = decode_boxes(enc_oob, table) * n_trees
    return tree_pd, ice, oob_ice
