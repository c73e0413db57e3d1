"""Which input columns are categorical by their dtype: the one rule the grid, ALE and the CLI share."""

from __future__ import annotations

import pandas as pd

__all__ = ["is_categorical_column"]


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
