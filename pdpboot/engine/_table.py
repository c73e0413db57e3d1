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
