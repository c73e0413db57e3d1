"""Exact partial dependence and ICE for scikit-learn tree models, without brute force.

The result equals scikit-learn's brute-force PD/ICE (set the feature(s) of interest
to each grid value for every background row, predict, average) up to floating-point
rounding, but each row is pushed through each tree once instead of once per grid point.

Method.  A leaf ``L`` of a tree is a box:
a range ``box_S(L)`` of the features of interest S times a range of the complement
features C.  For a background row ``x_C`` and grid point ``z``, ``(z, x_C)`` reaches
the unique leaf with ``x_C`` in its C-box and ``z`` in its S-box, so

    ICE_i(z) = offset + sum over leaves L with x_C^(i) in box_C(L) of value_L * 1[z in box_S(L)]
    PD(z)    = offset + sum over leaves L of value_L * w_L * 1[z in box_S(L)],
    w_L      = sum_i w_i 1[x_C^(i) in box_C(L)] / sum_i w_i.

All trees of the ensemble are walked at once, level by level, on one concatenated
node table (:mod:`._tree_walk`): background rows travel as bitsets, split at the
C-splits and copied to both children at the S-splits; the grid boxes are propagated
over the node table once.  Each leaf's box is added to a difference array (interval
end points in 1-D, rectangle corners in 2-D; arbitrary subsets for categorical
features) and one cumulative sum per grid axis gives PD or the per-row ICE.  When the
response is not linear in the tree outputs (probabilities of gradient boosting, HGB
regressors with a log link) the raw outputs are formed per row and grid point (the
ICE form), the estimator's own link is applied, and then the rows are averaged.

Cost.  Average: about (nodes reached) x rows / 64 word operations per block, plus one
prefix table per complement feature (rows + thresholds); the grid only enters through
the leaves' boxes (leaves x corners).  ICE and non-linear responses: additionally
about (row, reachable leaf) pairs x box corners scatter-adds and a cumulative sum over
the rows x grid output.  Brute force costs rows x grid points x trees x depth.

Memory bound.  Rows are processed in blocks of at most 4096 rows.  Per block, the
largest arrays are the row bitsets of one level of nodes (all trees) and, for ICE,
of the reached leaves (reached nodes x block rows bits); the prefix tables (at most
one bitset per distinct threshold: C-split nodes x block rows bits); the (row, leaf,
corner) entries of one chunk, capped at ``_PAIR_BUDGET`` (2**21) entries; and, on the
per-row paths, the block's raw ICE, at most about 64 MiB (the block shrinks to fit).
No array exceeds rows x reachable leaves, except the ICE output when it is asked for.

Exact scikit-learn semantics: inputs validated to float32 (float64 for
HistGradientBoosting, after its own categorical encoding) and compared with
``x <= threshold``; NaN follows ``missing_go_to_left``; grid values are converted the
same way as inputs; categorical HGB splits use the node bitsets, unknown categories
going the missing way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import NotFittedError

from ._tree_model import (
    _check_supported,
    _convert_quietly,
    _Model,
    _model_grid,
    _read_model,
    _to_array,
    _Unsupported,
)
from ._tree_walk import (
    _Boxes,
    _c_nodes,
    _counter,
    _decode,
    _grid_boxes,
    _levels,
    _members,
    _popcount,
    _walk_rows,
)

__all__ = ["supports", "tree_partial_dependence"]

_MAX_BLOCK = 4096  # rows per block
_ICE_BLOCK_BYTES = 2**26  # raw ICE of one block on the per-row paths
_PAIR_BUDGET = 2**21  # (row, leaf, box corner) entries handled at once
_UNPACK_BUDGET = 2**24  # bits of row sets turned into (row, leaf) pairs at once


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
        True for fitted ``DecisionTree*``, ``RandomForest*``, ``ExtraTrees*``,
        ``GradientBoosting*`` (constant init) and ``HistGradientBoosting*`` models
        with a response they define (regressors: ``"predict"``; classifiers:
        ``"predict_proba"``, and ``"decision_function"`` for the boosting ones), single
        output for classifiers, and an ``X`` the estimator itself accepts (dense; NaN
        only where the estimator supports missing values).  False otherwise
        (pipelines, other models, class labels as response, ...).
    """
    try:
        _check_supported(estimator, response_method)
        xa = _convert_quietly(estimator, X)
    except (_Unsupported, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
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
        Unsupported estimator/response, bad feature indices, grids or weights.
    """
    if not (average or individual):
        raise ValueError("Nothing to compute: set average=True and/or individual=True.")
    try:
        model = _read_model(estimator, response_method)
    except _Unsupported as exc:
        raise ValueError(
            f"The exact tree engine does not support this case ({exc}); use the brute engine."
        ) from None
    xa = np.ascontiguousarray(_to_array(estimator, X))
    n_rows, n_features = xa.shape
    feature_idx, grids = _check_features(feature_idx, grid_values, estimator.n_features_in_)
    w = _check_weights(weights, n_rows)
    s_cols = [int(model.columns[j]) for j in feature_idx]
    grids = [_model_grid(model, j, g) for j, g in zip(feature_idx, grids)]
    levels = _levels(model)
    boxes = _grid_boxes(model, s_cols, grids, levels)
    c_nodes = _c_nodes(model, s_cols, boxes.alive)
    if model.link is None and not individual:
        return _average_linear(model, xa, s_cols, boxes, c_nodes, w), None
    return _per_row(model, xa, s_cols, boxes, c_nodes, w, average, individual)


def _check_features(feature_idx, grid_values, n_features: int):
    idx = tuple(int(j) for j in np.atleast_1d(feature_idx))
    if len(idx) not in (1, 2):
        raise ValueError(f"feature_idx must hold 1 or 2 column positions, got {feature_idx!r}.")
    if len(set(idx)) != len(idx):
        raise ValueError(f"feature_idx must not repeat a column, got {feature_idx!r}.")
    if any(j < 0 or j >= n_features for j in idx):
        raise ValueError(f"feature_idx {feature_idx!r} out of range for {n_features} features.")
    if len(grid_values) != len(idx):
        raise ValueError(f"Need one grid per feature: {len(idx)} features, {len(grid_values)} grids.")
    grids = [np.asarray(g).reshape(-1) if np.ndim(g) else np.asarray([g]) for g in grid_values]
    if any(len(g) == 0 for g in grids):
        raise ValueError("Every grid must hold at least one value.")
    return idx, grids


def _check_weights(weights, n_rows: int) -> np.ndarray | None:
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},), got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    return w


def _blocks(n_rows: int, size: int):
    for start in range(0, n_rows, size):
        yield slice(start, min(start + size, n_rows))


def _average_linear(model: _Model, xa, s_cols, boxes: _Boxes, c_nodes, w) -> np.ndarray:
    """PD of a response linear in the tree outputs, from one weight per leaf."""
    leaf_w = np.zeros(len(boxes.leaves))
    for rows in _blocks(len(xa), _MAX_BLOCK):
        xb = xa[rows]
        count = _counter(None if w is None else w[rows], (xb.shape[0] + 63) // 64)
        for leaves, sets in _walk_rows(model, xb, s_cols, boxes.alive, c_nodes):
            leaf_w[boxes.local[leaves]] += count(sets)
    total = len(xa) if w is None else w.sum()
    owner = np.repeat(np.arange(len(boxes.leaves)), np.diff(boxes.ptr))
    vals = model.value[boxes.leaves][owner] * (leaf_w[owner] * boxes.coef)[:, None]
    size = int(np.prod(boxes.shape))
    enc = np.stack([np.bincount(boxes.pos, vals[:, k], minlength=size) for k in range(vals.shape[1])])
    return _decode(enc, boxes) / total + _expand(model.offset, len(boxes.shape))


def _expand(offset: np.ndarray, n_axes: int) -> np.ndarray:
    return offset.reshape((-1,) + (1,) * n_axes)


def _per_row(model: _Model, xa, s_cols, boxes: _Boxes, c_nodes, w, average: bool, individual: bool):
    """Raw outputs per row and grid point (the ICE form), then link and average."""
    n_rows = len(xa)
    n_raw = model.value.shape[1]
    size = int(np.prod(boxes.shape))
    per_row_bytes = size * (n_raw + model.n_out) * 8 * 2
    block = int(min(_MAX_BLOCK, max(64, _ICE_BLOCK_BYTES // per_row_bytes)))
    ice = np.empty((n_rows, model.n_out) + boxes.shape) if individual else None
    acc = np.zeros((model.n_out,) + boxes.shape) if average else None
    leaf_vals = model.value[boxes.leaves]
    for rows in _blocks(n_rows, block):
        b = rows.stop - rows.start
        walked = list(_walk_rows(model, xa[rows], s_cols, boxes.alive, c_nodes))
        enc = np.zeros((n_raw, b * size))
        if walked:
            leaves = np.concatenate([lv for lv, _ in walked])
            sets = np.concatenate([st for _, st in walked])
            _add_pairs(enc, boxes.local[leaves], sets, b, boxes, leaf_vals)
        raw = _decode(enc.reshape(n_raw, b, size), boxes) + _expand(model.offset, len(boxes.shape) + 1)
        resp = _respond(model, raw)  # (b, n_out, *grid)
        if individual:
            ice[rows] = resp
        if average:
            acc += np.tensordot(np.ones(b) if w is None else w[rows], resp, axes=1)
    avg = acc / (n_rows if w is None else w.sum()) if average else None
    return avg, ice


def _respond(model: _Model, raw: np.ndarray) -> np.ndarray:
    """(n_raw, b, *grid) raw outputs -> (b, n_out, *grid) response."""
    per_row = np.moveaxis(raw, 0, -1)  # (b, *grid, n_raw)
    if model.link is not None:
        flat = per_row.reshape(-1, per_row.shape[-1])
        per_row = np.asarray(model.link(flat), dtype=np.float64).reshape(per_row.shape[:-1] + (-1,))
    return np.moveaxis(per_row, -1, 1)


def _add_pairs(enc, local, sets, n_rows: int, boxes: _Boxes, leaf_vals) -> None:
    """Add every (row, leaf) pair's box corners, times the leaf value, to ``enc``.

    Pairs come ordered by leaf, so per-leaf data reach the pairs by ``np.repeat``.
    A leaf's corners sit in ``n_slots`` slots (weight 0 where a leaf has fewer).
    """
    size = enc.shape[1] // n_rows
    n_corner = boxes.ptr[local + 1] - boxes.ptr[local]
    n_slots = int(n_corner.max(initial=0))
    slot = np.arange(n_slots)
    has = slot[None, :] < n_corner[:, None]  # (leaves, slots)
    corner = np.where(has, boxes.ptr[local][:, None] + slot[None, :], 0)
    pos = np.where(has, boxes.pos[corner], 0)
    coef = np.where(has, boxes.coef[corner], 0.0)
    count = _popcount(sets)
    bounds = _chunks(count, _PAIR_BUDGET // max(n_slots, 1), max(1, _UNPACK_BUDGET // (sets.shape[1] * 64)))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        row = _members(sets[start:stop])
        reps = count[start:stop]
        flat = (row * size)[:, None] + np.repeat(pos[start:stop], reps, axis=0)
        for k in range(enc.shape[0]):
            val = coef[start:stop] * leaf_vals[local[start:stop], k][:, None]
            if val.any():
                weight = np.repeat(val, reps, axis=0).ravel()
                enc[k] += np.bincount(flat.ravel(), weight, minlength=enc.shape[1])


def _chunks(count: np.ndarray, budget: int, max_items: int) -> list[int]:
    """Boundaries of consecutive chunks with total ``count`` <= budget (at least one item) and
    at most ``max_items`` items each."""
    csum = np.concatenate([[0], np.cumsum(count)])
    bounds = [0]
    while bounds[-1] < len(count):
        start = bounds[-1]
        stop = int(np.searchsorted(csum, csum[start] + budget, side="right")) - 1
        bounds.append(min(max(stop, start + 1), start + max_items, len(count)))
    return bounds
