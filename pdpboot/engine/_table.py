"""Background rows as per-column arrays: the stacked design blocks of brute force and the tree
engine's self-check (its own module, so the exact engine's check does not import brute force)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


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

    def whole_block(self, lo: int, hi: int, order: str, n_points: int):
        """Design matrix of whole background rows ``lo:hi`` (order "row": each row once per grid
        point, grid points innermost) or of whole grid points ``lo:hi`` (order "point")."""
        n_rows = self.shape[0]
        if self.frame:
            if order == "row":
                rows, points = np.repeat(np.arange(lo, hi), n_points), np.tile(np.arange(n_points), hi - lo)
            else:
                rows, points = np.tile(np.arange(n_rows), hi - lo), np.repeat(np.arange(lo, hi), n_rows)
            return self.block(rows, points)
        d = self.array.shape[1]
        if order == "row":
            block = np.repeat(self.array[lo:hi], n_points, axis=0)
            cube = block.reshape(hi - lo, n_points, d)
            for j, values in zip(self.feature_idx, self.columns):
                cube[:, :, j] = values
        else:
            block = np.tile(self.array, (hi - lo, 1))
            cube = block.reshape(hi - lo, n_rows, d)
            for j, values in zip(self.feature_idx, self.columns):
                cube[:, :, j] = values[lo:hi, None]
        return block

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
                data[name] = column_values(self.columns[self.feature_idx.index(j)][points], self.dtypes[j])
            else:
                data[name] = self.arrays[j].take(rows)
        return pd.DataFrame(data, copy=False)


def column_values(values: np.ndarray, dtype):
    """Grid values as brute force sets them into a DataFrame column of ``dtype``: an extension dtype's
    array (categorical, string, nullable), a float grid kept in an integer column (it would be
    rounded), else cast to the column's NumPy dtype (object columns take the values as they are)."""
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        return pd.array(values, dtype=dtype)
    if dtype.kind in "iu" and values.dtype.kind == "f":
        return values
    if dtype.kind in "iufb":
        return values.astype(dtype)
    return values


def rows_with(X, rows: np.ndarray, subs: dict):
    """Rows ``rows`` of ``X`` with column ``j`` set to ``subs[j]`` (one value per row), exactly as
    :meth:`_Table.block` builds the pairs (row ``rows[t]``, value ``t``), for a few rows: one take of
    the rows instead of per-column arrays of the whole table.

    Duplicate column names stay apart; an integer array is widened to float when it meets a float grid."""
    subs = {j: np.asarray(v) for j, v in subs.items()}
    if not isinstance(X, pd.DataFrame):
        return _Table(np.asarray(X)[rows], list(subs), list(subs.values())).block(np.arange(len(rows)),
                                                                                  np.arange(len(rows)))
    dtypes = list(X.dtypes)
    first = dtypes[0] if dtypes else None
    if (first is not None and not isinstance(first, pd.api.extensions.ExtensionDtype) and first.kind == "f"
            and all(d == first for d in dtypes) and all(v.dtype.kind in "biuf" for v in subs.values())):
        block = X.take(rows).to_numpy(dtype=first, copy=True)  # the rows first: never a copy of the whole table
        for j, values in subs.items():
            block[:, j] = values
        return pd.DataFrame(block, columns=X.columns, copy=False)
    frame = X.take(rows)
    frame.index = pd.RangeIndex(len(rows))
    for j, values in subs.items():
        frame.isetitem(j, column_values(values, dtypes[j]))
    return frame
