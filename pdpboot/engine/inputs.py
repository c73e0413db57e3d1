"""Inputs of the NumPy layer: the one categorical-column rule, the one check of ``weights``, the
readers' conversion of rows, and background rows as per-column arrays for stacked blocks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["average_rows", "column", "is_categorical_column", "normalised_weights", "reader_array", "row_weights"]


def column(X, j: int) -> np.ndarray:
    """Column ``j`` of a DataFrame or array as a NumPy array."""
    return X.iloc[:, j].to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)[:, j]


def is_categorical_column(col: pd.Series) -> bool:
    """Whether a column is categorical by its dtype.

    True for pandas ``Categorical``, boolean (NumPy or nullable), object, bytes, NumPy string and
    pandas string dtypes; False for numeric and datetime dtypes.

    Examples
    --------
    >>> import pandas as pd
    >>> from pdpboot.engine.inputs import is_categorical_column
    >>> is_categorical_column(pd.Series(["a", "b"])), is_categorical_column(pd.Series([1.0, 2.0]))
    (True, False)
    """
    dtype = col.dtype
    return isinstance(dtype, pd.CategoricalDtype) or dtype.kind in "bOSU" or pd.api.types.is_string_dtype(dtype)


def reader_array(X, n_features: int, dtype, categories_for: Callable, numeric: Callable | None = None) -> np.ndarray:
    """Rows of an XGBoost / LightGBM model as ``dtype``: pandas categories as codes, NaN if unknown.

    ``categories_for(j, col)`` gives the categories that code pandas categorical column ``j``;
    ``numeric`` (optional) post-processes numeric values (e.g. a ``missing=`` sentinel to NaN).
    """
    numeric = numeric or (lambda values: values)
    if isinstance(X, pd.DataFrame):
        if X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} columns, the model {n_features}.")
        if all(isinstance(d, np.dtype) and d.kind == "f" for d in X.dtypes):  # plain floats: one conversion
            return numeric(np.asarray(X.to_numpy(), dtype=dtype))
        out = np.empty(X.shape, dtype=dtype)
        for j in range(X.shape[1]):
            col = X.iloc[:, j]
            if isinstance(col.dtype, pd.CategoricalDtype):
                codes = pd.Categorical(col, categories=categories_for(j, col)).codes.astype(dtype)
                out[:, j] = np.where(codes < 0, np.nan, codes)
            else:
                out[:, j] = numeric(np.asarray(col, dtype=dtype))
        return out
    xa = np.asarray(X, dtype=dtype)
    if xa.ndim != 2 or xa.shape[1] != n_features:
        raise ValueError(f"X must be 2-D with {n_features} columns.")
    return numeric(xa)


def row_weights(weights, n_rows: int, *, what: str = "row", positive_sum: bool = True) -> np.ndarray:
    """``weights`` (n_rows,) as float64 after checking them (all ones when None).

    ``what`` names what one weight belongs to in the message; ``positive_sum`` also refuses all zeros.

    Examples
    --------
    >>> row_weights([0.0, 2.0], 2)
    array([0., 2.])
    """
    w = np.ones(n_rows) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},), one per {what}, got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or (positive_sum and w.sum() <= 0):
        raise ValueError("weights must be finite and non-negative" + (", with a positive sum." if positive_sum
                                                                       else "."))
    return w


def normalised_weights(weights, n_rows: int, *, what: str = "row") -> np.ndarray:
    """:func:`row_weights` divided by their sum (``1 / n_rows`` each when None)."""
    if weights is None:
        return np.full(n_rows, 1.0 / n_rows)
    w = row_weights(weights, n_rows, what=what)
    return w / w.sum()


def average_rows(weights: np.ndarray | None, n_rows: int) -> tuple[np.ndarray, float, np.ndarray]:
    """(weights or all ones, divisor of the average, rows of positive weight) for a walk over ``n_rows`` rows.

    >>> average_rows(np.array([2.0, 0.0, 1.0]), 3)
    (array([2., 0., 1.]), 3.0, array([0, 2]))
    """
    if weights is None:
        return np.ones(n_rows), float(n_rows), np.arange(n_rows, dtype=np.int64)
    return weights, float(weights.sum()), np.flatnonzero(weights > 0).astype(np.int64)


class Table:
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

    def whole_block(self, lo: int, hi: int, n_points: int):
        """Design matrix of whole background rows ``lo:hi``, each row once per grid point (points innermost)."""
        if self.frame:
            return self.block(np.repeat(np.arange(lo, hi), n_points), np.tile(np.arange(n_points), hi - lo))
        block = np.repeat(self.array[lo:hi], n_points, axis=0)
        cube = block.reshape(hi - lo, n_points, self.array.shape[1])
        for j, values in zip(self.feature_idx, self.columns):
            cube[:, :, j] = values
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
    """Grid values as brute force sets them into a DataFrame column of ``dtype`` (a float grid in an integer
    column stays float; object columns take the values as they are)."""
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        return pd.array(values, dtype=dtype)
    if dtype.kind in "iu" and values.dtype.kind == "f":
        return values
    if dtype.kind in "iufb":
        return values.astype(dtype)
    return values


def rows_with(X, rows: np.ndarray, subs: dict):
    """Rows ``rows`` of ``X`` with column ``j`` set to ``subs[j]`` (one value per row), as :meth:`Table.block`
    builds them, for a few rows (duplicate column names stay apart)."""
    subs = {j: np.asarray(v) for j, v in subs.items()}
    if not isinstance(X, pd.DataFrame):
        return Table(np.asarray(X)[rows], list(subs), list(subs.values())).block(np.arange(len(rows)),
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
