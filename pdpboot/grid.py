"""Feature grids, fixed once on the full data and shared by every resample."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats.mstats import mquantiles

DECILES = np.linspace(0.1, 0.9, 9)


@dataclass(frozen=True)
class FeatureGrid:
    """The grid of one feature.

    Attributes
    ----------
    name : str
        Feature (column) name; also the name of its dim in results.
    position : int
        Column position in X.
    values : ndarray
        Grid values (numbers, or category levels in order).
    categorical : bool
        Whether the values are category levels.
    deciles : ndarray of shape (9,)
        10 %..90 % deciles of the feature's data (NaN for categorical features).
    """

    name: str
    position: int
    values: np.ndarray
    categorical: bool
    deciles: np.ndarray


def _column(X, position: int):
    return X.iloc[:, position] if isinstance(X, pd.DataFrame) else pd.Series(np.asarray(X)[:, position])


def _is_categorical_dtype(col: pd.Series) -> bool:
    dtype = col.dtype
    return isinstance(dtype, pd.CategoricalDtype) or dtype.kind in "bOSU" or pd.api.types.is_string_dtype(dtype)


def _categorical_mask(X, names: list[str], categorical_features) -> list[bool]:
    auto = [_is_categorical_dtype(_column(X, j)) for j in range(len(names))]
    if categorical_features is None:
        return auto
    cats = np.asarray(categorical_features)
    if cats.dtype == bool:
        if cats.shape != (len(names),):
            raise ValueError(
                f"categorical_features as a boolean mask needs one entry per column ({len(names)}), got {cats.shape}."
            )
        return [a or bool(c) for a, c in zip(auto, cats)]
    mask = list(auto)
    for c in categorical_features:
        if isinstance(c, numbers.Integral):
            mask[int(c)] = True
        elif str(c) in names:
            mask[names.index(str(c))] = True
        else:
            raise ValueError(f"categorical_features names {c!r}, which is not a column of X.")
    return mask


def _levels(col: pd.Series) -> np.ndarray:
    observed = col.dropna()
    if isinstance(col.dtype, pd.CategoricalDtype):
        present = set(observed.unique())
        levels = [c for c in col.dtype.categories if c in present]
        return np.asarray(levels)
    values = observed.to_numpy()
    if values.dtype.kind == "O" or pd.api.types.is_string_dtype(col.dtype):
        return np.asarray(sorted(set(values), key=str)).astype(str) if all(
            isinstance(v, str) for v in values
        ) else np.asarray(sorted(set(values), key=str), dtype=object)
    return np.unique(values)


def _numeric_grid(name: str, col: pd.Series, grid_resolution: int, percentiles) -> np.ndarray:
    values = col.to_numpy(dtype=float, na_value=np.nan)
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise ValueError(f"Feature {name!r} has only missing values; a grid cannot be built. Drop the feature.")
    uniques = np.unique(values)
    if uniques.size < grid_resolution:
        if uniques.size == 1:
            warnings.warn(
                f"Feature {name!r} is constant ({uniques[0]!r}); its grid has one point.",
                UserWarning,
                stacklevel=4,
            )
        if col.dtype.kind in "iu":
            return uniques.astype(col.dtype)
        return uniques
    low, high = mquantiles(values, prob=percentiles)
    if np.isclose(low, high):
        raise ValueError(
            f"The {percentiles} percentiles of feature {name!r} coincide ({low}); choose percentiles "
            "further apart or give custom_values for this feature."
        )
    return np.linspace(low, high, grid_resolution)


def make_grids(
    X,
    names: list[str],
    positions: Sequence[int],
    *,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
) -> dict[int, FeatureGrid]:
    """Build the grid of every feature that appears in a feature set.

    Numeric features get ``grid_resolution`` equally spaced points between the
    ``percentiles`` of the data (scikit-learn's rule, same quantile definition),
    or their unique values when there are fewer.  Categorical features
    (pandas ``category``, strings, booleans, or listed in
    ``categorical_features``) get their observed levels in order.  Missing
    values are ignored.  ``custom_values`` (keyed by name or position) win.

    Returns
    -------
    dict
        Column position -> :class:`FeatureGrid`.
    """
    if not (isinstance(grid_resolution, numbers.Integral) and grid_resolution >= 2):
        raise ValueError(f"grid_resolution must be an integer >= 2, got {grid_resolution!r}.")
    if len(percentiles) != 2 or not 0 <= percentiles[0] < percentiles[1] <= 1:
        raise ValueError(f"percentiles must be two increasing numbers in [0, 1], got {percentiles!r}.")
    custom = {}
    for key, values in (custom_values or {}).items():
        pos = int(key) if isinstance(key, numbers.Integral) else names.index(str(key)) if str(key) in names else None
        if pos is None:
            raise ValueError(f"custom_values names {key!r}, which is not a column of X.")
        arr = np.asarray(values, dtype=object if any(isinstance(v, str) for v in values) else None)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"custom_values[{key!r}] must be a non-empty 1-D sequence of grid values.")
        custom[pos] = arr
    mask = _categorical_mask(X, names, categorical_features)
    grids = {}
    for pos in dict.fromkeys(positions):
        col = _column(X, pos)
        categorical = mask[pos]
        if pos in custom:
            values = custom[pos]
        elif categorical:
            values = _levels(col)
            if values.size == 0:
                raise ValueError(f"Feature {names[pos]!r} has only missing values; drop the feature.")
        else:
            values = _numeric_grid(names[pos], col, grid_resolution, percentiles)
        if categorical:
            deciles = np.full(DECILES.size, np.nan)
        else:
            deciles = np.nanquantile(col.to_numpy(dtype=float, na_value=np.nan), DECILES)
        grids[pos] = FeatureGrid(names[pos], pos, values, bool(categorical), deciles)
    return grids
