"""Model-agnostic ("brute force") partial dependence and ICE.

The model is evaluated at every (grid point, background row) pair, stacked into blocks of at most
``memory_limit`` bytes, one prediction call per block; without ICE each block is reduced to weighted
sums at once.  Block size, stacking order and the column-wise pipeline shortcut change the speed
only, never the result beyond floating-point summation order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .inputs import Table, row_weights

DEFAULT_MEMORY_LIMIT = 128 * 2**20
_INDEX_BYTES = 24  # flat, grid-point and row index of each stacked row
_MiB = 2**20

#: Block bytes per model family, at most the caller's ``memory_limit`` (benchmarks/README.md,
#: "Brute-force tuning"): forests and boosters with a large per-call cost like few calls; models with
#: per-row intermediates (an MLP's activations) like blocks that stay in the cache.
FAMILY_BLOCK_BYTES = {"forest": 128 * _MiB, "xgboost": 128 * _MiB, "catboost": 128 * _MiB, "hgb": 4 * _MiB,
                      "lightgbm": 4 * _MiB, "other": 1 * _MiB}


def _design_row_bytes(X) -> int:
    if isinstance(X, (pd.DataFrame, Table)) and getattr(X, "frame", True):
        dtypes = X.dtypes
        per_col = [8 if (dtype.kind in "fiub" or isinstance(dtype, pd.CategoricalDtype)) else 64 for dtype in dtypes]
        return max(1, sum(per_col))
    array = X.array if isinstance(X, Table) else X
    return max(1, array.shape[1] * array.dtype.itemsize)


def block_rows(X, n_outputs: int, memory_limit: int) -> int:
    """Largest number of stacked rows one prediction block may hold."""
    if memory_limit <= 0:
        raise ValueError(f"memory_limit must be a positive number of bytes, got {memory_limit}.")
    per_row = _design_row_bytes(X) + 8 * max(n_outputs, 1) + _INDEX_BYTES
    return max(1, int(memory_limit // per_row))


def model_family(estimator) -> str:
    """Family of the estimator (the last step of a Pipeline) for :data:`FAMILY_BLOCK_BYTES`."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    from ._tree_model import FOREST_TYPES

    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    if isinstance(final, FOREST_TYPES):
        return "forest"
    if isinstance(final, (HistGradientBoostingRegressor, HistGradientBoostingClassifier)):
        return "hgb"
    module = type(final).__module__.split(".")[0]
    return module if module in ("xgboost", "lightgbm", "catboost") else "other"


def block_plan(estimator, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> int:
    """Block bytes for ``estimator``: its family's block size, at most ``memory_limit``."""
    return min(int(memory_limit), FAMILY_BLOCK_BYTES[model_family(estimator)])


class SplitPipeline:
    """A Pipeline with column-wise preprocessing, split: rows transformed once, grid values on their own."""

    def __init__(self, pre, final, X, Xt: np.ndarray, maps: list[list[int]]):
        self.pre, self.final, self.X, self.Xt, self.maps = pre, final, X, Xt, maps

    def columns(self, feature_idx: Sequence[int]) -> list[int] | None:
        """Transformed column of each feature (None when one feature has several, e.g. one-hot)."""
        cols = [self.maps[j] for j in feature_idx]
        return [c[0] for c in cols] if all(len(c) == 1 for c in cols) else None

    def grid(self, j: int, values) -> np.ndarray:
        """Transformed values of input column ``j`` at each grid value."""
        values = np.asarray(values).reshape(-1)
        base = np.repeat(self.X[:1], len(values), axis=0)
        if base.dtype.kind in "iub" and values.dtype.kind == "f":
            base = base.astype(float)
        base[:, j] = values
        return np.asarray(self.pre.transform(base))[:, self.maps[j][0]]


def split_pipeline(estimator, X) -> SplitPipeline | None:
    """:class:`SplitPipeline` for a NumPy ``X`` and a provably column-wise dense Pipeline, else None."""
    from sklearn.pipeline import Pipeline

    from .pipeline import column_map

    if type(estimator) is not Pipeline or len(estimator.steps) < 2:  # subclasses may change predict
        return None
    if not isinstance(X, np.ndarray):
        # A DataFrame reaches the final step as a column-major array, the stacked transformed rows
        # as a row-major one: BLAS then sums in another order (1 ulp); keep the pipeline's own path.
        return None
    pre, final = estimator[:-1], estimator.steps[-1][1]
    if final is None or final == "passthrough":
        return None
    try:
        maps = column_map(pre if len(pre.steps) > 1 else pre.steps[0][1], X.shape[1])
        Xt = pre.transform(X)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    if not isinstance(Xt, np.ndarray) or Xt.ndim != 2 or Xt.dtype.kind != "f":
        return None  # sparse or DataFrame output (feature names): keep the pipeline
    if sum(len(m) for m in maps) != Xt.shape[1] or len({c for m in maps for c in m}) != Xt.shape[1]:
        return None
    return SplitPipeline(pre, final, X, Xt, maps)


def _aligned(chunk: int, unit: int) -> int:
    """``chunk`` rounded down to whole units (rows or grid points) when at least one fits."""
    return chunk - chunk % unit if chunk >= unit else chunk


def _grid_points(grid_values: Sequence[np.ndarray], points: bool) -> tuple[list[np.ndarray], tuple[int, ...]]:
    """Columns of grid values, one entry per flattened grid point (C order)."""
    if points:
        lengths = {len(v) for v in grid_values}
        if len(lengths) != 1:
            raise ValueError("With points=True every grid_values array must have the same length.")
        return [np.asarray(v) for v in grid_values], (lengths.pop(),)
    shape = tuple(len(v) for v in grid_values)
    mesh = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return [np.asarray(v)[m.ravel()] for v, m in zip(grid_values, mesh)], shape


def brute_partial_dependence(
    predict: Callable[[object], np.ndarray],
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    weights: np.ndarray | None = None,
    average: bool = True,
    individual: bool = False,
    points: bool = False,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Partial dependence and ICE by evaluating the model on stacked blocks.

    Parameters
    ----------
    predict : callable
        ``predict(X_block) -> ndarray (m, n_outputs)``.
    grid_values : sequence of 1-D arrays
        Grid of each feature: their cartesian product, or with ``points=True`` P points given by
        arrays of one common length.
    memory_limit : int
        Bytes allowed for one stacked design block plus its predictions.
    n_outputs : int
        Expected number of response columns, used to size the first block.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
        Weighted average over the rows of ``X`` (grid_shape is ``(P,)`` with ``points``).
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
    """
    n_rows = X.shape[0]
    if n_rows == 0:
        raise ValueError("The background data has no rows; partial dependence needs at least one.")
    columns, grid_shape = _grid_points(grid_values, points)
    n_points = int(np.prod(grid_shape))
    w = row_weights(weights, n_rows, what="background row")
    table = Table(X, feature_idx, columns)

    expected_outputs = n_outputs
    n_outputs = None
    sums = None
    ice = None
    # Blocks hold whole background rows (each row's n_points pairs) whenever one fits: a repeat of
    # the data whose predictions reshape to (rows, points) for the average and the ICE.
    chunk = _aligned(block_rows(table, expected_outputs, memory_limit), n_points)
    total = n_points * n_rows
    start = 0
    while start < total:
        stop = min(total, start + chunk)
        whole = start % n_points == 0 and (stop - start) % n_points == 0
        if whole:
            lo, hi = start // n_points, stop // n_points
            pred = predict(table.whole_block(lo, hi, n_points))
        else:
            row_of, point_of = np.divmod(np.arange(start, stop), n_points)
            pred = predict(table.block(row_of, point_of))
        if n_outputs is None:
            n_outputs = pred.shape[1]
            sums = np.zeros((n_outputs, n_points)) if average else None
            ice = np.empty((n_rows, n_outputs, n_points)) if individual else None
            # size further blocks with the true output count
            chunk = _aligned(block_rows(table, n_outputs, memory_limit), n_points)
        if whole:
            if average:  # rows added one after another, as np.bincount does
                sums += (w[lo:hi, None] * pred.reshape(hi - lo, -1)).sum(axis=0).reshape(n_points, n_outputs).T
            if individual:
                ice[lo:hi] = pred.reshape(hi - lo, n_points, n_outputs).transpose(0, 2, 1)
        else:
            if average:
                first = int(point_of.min())
                span = int(point_of.max()) - first + 1
                for k in range(n_outputs):
                    sums[k, first : first + span] += np.bincount(
                        point_of - first, weights=w[row_of] * pred[:, k], minlength=span
                    )
            if individual:
                ice[row_of, :, point_of] = pred
        start = stop

    avg = (sums / w.sum()).reshape((n_outputs, *grid_shape)) if average else None
    if individual:
        ice = ice.reshape((n_rows, n_outputs, *grid_shape))
    return avg, ice
