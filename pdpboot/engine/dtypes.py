"""Input dtypes: which columns are categorical (the one rule the grid, ALE and the CLI share), and the
rows of an XGBoost / LightGBM model as one array (the readers' shared conversion)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["is_categorical_column", "reader_array"]


def is_categorical_column(col: pd.Series) -> bool:
    """Whether a column is categorical by its dtype.

    Parameters
    ----------
    col : pandas.Series
        One input column.

    Returns
    -------
    bool
        True for pandas ``Categorical``, boolean (NumPy or nullable), object, bytes, NumPy
        string and pandas string dtypes; False for numeric and datetime dtypes.

    Examples
    --------
    >>> import pandas as pd
    >>> from pdpboot.engine.dtypes import is_categorical_column
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
