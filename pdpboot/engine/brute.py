"""Model-agnostic ("brute force") partial dependence and ICE.

For every grid point ``z`` and background row ``i`` the model is evaluated at
``(z, x_C^(i))``.  Instead of one prediction call per grid point, the
(grid point x background row) pairs are stacked into blocks that are as large
as ``memory_limit`` allows and sent to the model in one call each.

Memory bound: one block holds ``m`` stacked rows, with
``m * (bytes per design row + 8 * n_outputs + 24 index bytes) <= memory_limit``
(at least one row).  With ``individual=False`` nothing of size rows x grid is kept: each
block is reduced to weighted sums per grid point as soon as it is predicted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

DEFAULT_MEMORY_LIMIT = 128 * 2**20
_INDEX_BYTES = 24  # flat, grid-point and row index of each stacked row


def _design_row_bytes(X) -> int:
    if isinstance(X, (pd.DataFrame, _Table)) and getattr(X, "frame", True):
        dtypes = X.dtypes
        per_col = [8 if (dtype.kind in "fiub" or isinstance(dtype, pd.CategoricalDtype)) else 64 for dtype in dtypes]
        return max(1, sum(per_col))
    array = X.array if isinstance(X, _Table) else X
    return max(1, array.shape[1] * array.dtype.itemsize)


def block_rows(X, n_outputs: int, memory_limit: int) -> int:
    """Largest number of stacked rows one prediction block may hold."""
    if memory_limit <= 0:
        raise ValueError(f"memory_limit must be a positive number of bytes, got {memory_limit}.")
    per_row = _design_row_bytes(X) + 8 * max(n_outputs, 1) + _INDEX_BYTES
    return max(1, int(memory_limit // per_row))


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


class _Table:
    """Background rows as per-column arrays, so stacked blocks are cheap to build."""

    def __init__(self, X, feature_idx: Sequence[int], columns: Sequence[np.ndarray]):
        self.frame = isinstance(X, pd.DataFrame)
        self.shape = X.shape
        if self.frame:
            self.names = list(X.columns)
            self.arrays = [X.iloc[:, j].array for j in range(X.shape[1])]
            self.dtypes = list(X.dtypes)
        else:
            X = np.asarray(X)
            if X.dtype.kind in "iub" and any(np.asarray(v).dtype.kind == "f" for v in columns):
                X = X.astype(float)  # a float grid must not be rounded into an integer array
            self.array = X
        self.feature_idx = list(feature_idx)
        self.columns = list(columns)

    def block(self, rows: np.ndarray, points: np.ndarray):
        """Design matrix of the pairs (background row ``rows[t]``, grid point ``points[t]``)."""
        if not self.frame:
            block = self.array[rows]
            for j, values in zip(self.feature_idx, self.columns):
                block[:, j] = values[points]
            return block
        data = {}
        for j, name in enumerate(self.names):
            if j in self.feature_idx:
                new = self.columns[self.feature_idx.index(j)][points]
                dtype = self.dtypes[j]
                if isinstance(dtype, pd.api.extensions.ExtensionDtype):
                    new = pd.array(new, dtype=dtype)  # categorical, string, nullable types
                elif dtype.kind in "iu" and new.dtype.kind == "f":
                    pass  # keep the float grid; an integer column would round it
                elif dtype.kind in "iufb":
                    new = new.astype(dtype)
                data[name] = new
            else:
                data[name] = self.arrays[j].take(rows)
        return pd.DataFrame(data, copy=False)


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
    order: str = "row",
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Partial dependence and ICE by evaluating the model on stacked blocks.

    Parameters
    ----------
    predict : callable
        ``predict(X_block) -> ndarray (m, n_outputs)``.
    X : ndarray or DataFrame of shape (n_rows, n_columns)
        Background rows.
    feature_idx : sequence of int
        Column positions of the features of interest.
    grid_values : sequence of 1-D arrays
        Grid of each feature.  With ``points=False`` the cartesian product is
        evaluated; with ``points=True`` the arrays have one common length P and
        give P points.
    weights : ndarray of shape (n_rows,), optional
        Non-negative row weights of the average (e.g. bootstrap multiplicities).
    average, individual : bool
        Whether to return the weighted average and/or the per-row ICE.
    memory_limit : int
        Bytes allowed for one stacked design block plus its predictions.
    n_outputs : int
        Expected number of response columns, used to size the first block.
    order : {"row", "point"}
        Stacking order of the (row, grid point) pairs: ``"row"`` keeps each background
        row's grid points together (the block repeats few distinct rows, which is
        cache-friendly for most models), ``"point"`` stacks all rows for one grid point
        after another.  The result does not depend on it.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
        Weighted average over rows (grid_shape is ``(P,)`` with ``points``).
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        Per-row curves.
    """
    n_rows = X.shape[0]
    if order not in ("row", "point"):
        raise ValueError(f"order must be 'row' or 'point', got {order!r}.")
    if n_rows == 0:
        raise ValueError("The background data has no rows; partial dependence needs at least one.")
    columns, grid_shape = _grid_points(grid_values, points)
    n_points = int(np.prod(grid_shape))
    w = np.ones(n_rows) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n_rows,) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be non-negative, one per background row, with a positive sum.")
    table = _Table(X, feature_idx, columns)

    expected_outputs = n_outputs
    n_outputs = None
    sums = None
    ice = None
    chunk = block_rows(table, expected_outputs, memory_limit)
    total = n_points * n_rows
    start = 0
    while start < total:
        stop = min(total, start + chunk)
        flat = np.arange(start, stop)
        if order == "point":
            point_of, row_of = np.divmod(flat, n_rows)
        else:
            row_of, point_of = np.divmod(flat, n_points)
        pred = predict(table.block(row_of, point_of))
        if n_outputs is None:
            n_outputs = pred.shape[1]
            sums = np.zeros((n_outputs, n_points)) if average else None
            ice = np.empty((n_rows, n_outputs, n_points)) if individual else None
            # size further blocks with the true output count
            chunk = block_rows(table, n_outputs, memory_limit)
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
