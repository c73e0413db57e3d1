"""Feature grids, fixed once on the full data and shared by every resample."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats.mstats import mquantiles

from .engine.inputs import is_categorical_column as _is_categorical_dtype

DECILES = np.linspace(0.1, 0.9, 9)
#: ``Grid().resolution`` of partial dependence (grid points) and of ALE (bins)
PD_RESOLUTION, ALE_RESOLUTION = 50, 20


@dataclass(frozen=True)
class FeatureGrid:
    """The grid of one feature."""

    name: str  # column name, and the name of its dim in results
    position: int  # column position in X
    values: np.ndarray  # numbers, or category levels in order
    categorical: bool  # whether ``values`` are category levels
    deciles: np.ndarray  # the 9 deciles of the feature's data (NaN for a categorical feature)


@dataclass(frozen=True)
class Grid:
    """Where an effect is evaluated: the grid of every feature, fixed once on the full data.

    Parameters
    ----------
    resolution : int, optional
        Equally spaced points between the ``percentiles`` of a numeric feature (partial dependence;
        its distinct values when fewer), or its number of quantile bins (ALE).  None: 50 points for
        partial dependence, 20 bins for ALE.
    percentiles : (float, float), default (0.05, 0.95)
        The ends of a numeric feature's partial dependence grid (ALE bins span the data).
    custom_values : dict, optional
        Feature (name or index) -> its grid values (partial dependence), or its bin edges or level
        order (ALE).
    categorical_features : list or boolean mask, optional
        Columns treated as categorical besides pandas categoricals, strings and booleans.

    Examples
    --------
    >>> Grid(20, custom_values={"Hour": [0, 6, 12, 18]}).resolution
    20
    >>> Grid(percentiles=(0.9, 0.1))
    Traceback (most recent call last):
    ...
    ValueError: percentiles must be two increasing numbers in [0, 1], got (0.9, 0.1).
    """

    resolution: int | None = None
    percentiles: tuple[float, float] = (0.05, 0.95)
    custom_values: Mapping | None = None
    categorical_features: Sequence | None = None

    def __post_init__(self):
        res = self.resolution
        if res is not None:
            if isinstance(res, (bool, np.bool_)) or not isinstance(res, numbers.Integral) or res < 2:
                raise ValueError(f"Grid(resolution=...) must be an integer >= 2 or None, got {res!r:.80}.")
            object.__setattr__(self, "resolution", int(res))
        object.__setattr__(self, "percentiles", check_percentiles(self.percentiles))
        if self.custom_values is not None and not isinstance(self.custom_values, Mapping):
            raise TypeError(f"custom_values must be a dict mapping a feature (name or index) to its grid values, "
                            f"got {type(self.custom_values).__name__}.")
        cats = self.categorical_features
        if cats is not None and not isinstance(cats, (str, numbers.Integral)):
            try:
                ndim = np.asarray(cats).ndim
            except (TypeError, ValueError):
                ndim = None
            if ndim != 1:
                raise TypeError(f"categorical_features must be a list of column names or indices, or a boolean "
                                f"mask; got {cats!r:.80}.")


def check_grid(grid: Grid | None, resolution: int) -> Grid:
    """``grid`` (None: ``Grid()``) with ``resolution`` filled in where it is None; anything else is refused."""
    if grid is None:
        grid = Grid()
    elif not isinstance(grid, Grid):
        raise TypeError(f"grid must be a pdpboot.Grid (e.g. grid=pdpboot.Grid(20)), got {type(grid).__name__}.")
    return grid if grid.resolution is not None else replace(grid, resolution=resolution)


def column(X, position: int) -> pd.Series:
    """Column ``position`` of a DataFrame or 2-D array, as a Series."""
    return X.iloc[:, position] if isinstance(X, pd.DataFrame) else pd.Series(np.asarray(X)[:, position])


def _categorical_mask(X, names: list[str], categorical_features) -> list[bool]:
    auto = [_is_categorical_dtype(column(X, j)) for j in range(len(names))]
    if categorical_features is None:
        return auto
    if isinstance(categorical_features, (str, numbers.Integral)):
        categorical_features = [categorical_features]
    cats = np.asarray(categorical_features)  # a 1-D list or mask (checked by Grid)
    if cats.dtype == bool:
        if cats.shape != (len(names),):
            raise ValueError(
                f"categorical_features as a boolean mask needs one entry per column ({len(names)}), got {cats.shape}."
            )
        return [a or bool(c) for a, c in zip(auto, cats)]
    mask = list(auto)
    for c in categorical_features:
        mask[column_position(c, names, "categorical_features", "holds the index")] = True
    return mask


def column_position(key, names: list[str], what: str, index_words: str) -> int:
    """The column position of ``key`` (a name or an index) among ``names``, refused in one line otherwise."""
    if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
        if not -len(names) <= int(key) < len(names):
            raise ValueError(f"{what} {index_words} {int(key)}, out of range for X with {len(names)} columns.")
        return int(key) % len(names)
    if str(key) in names:
        return names.index(str(key))
    raise ValueError(f"{what} names {key!r:.100}, which is not a column of X.")


def _str_array(values: list) -> np.ndarray:
    """Strings as a fixed-width array, or an object array when one ends in NUL (which ``<U`` drops)."""
    return np.asarray(values, dtype=object if any(v.endswith("\x00") for v in values) else str)


def _value_kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Real):
        return "number"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


def _uniform_levels(name: str, values) -> np.ndarray:
    """Distinct values of one type as a storable array, in natural order; mixed types are refused."""
    distinct = list(dict.fromkeys(values))
    kinds = sorted({_value_kind(v) for v in values})
    if len(kinds) > 1 or kinds[0] not in ("bool", "number", "str"):
        raise ValueError(
            f"Column {name!r:.100} mixes value types ({', '.join(kinds)}) or holds values of a type a result "
            f"cannot store; convert it to one type first (e.g. X[{name!r:.40}].astype(str))."
        )
    if kinds[0] == "str":
        return _str_array(sorted(distinct))
    return np.unique(np.asarray(distinct))


def _levels(name: str, col: pd.Series) -> np.ndarray:
    observed = col.dropna()
    if isinstance(col.dtype, pd.CategoricalDtype):
        present = set(observed.unique())
        levels = [c for c in col.dtype.categories if c in present]
        if levels and not all(isinstance(v, str) for v in levels):
            _uniform_levels(name, levels)  # refuses mixed types; the categories' own order is kept
        return _str_array(levels) if levels and isinstance(levels[0], str) else np.asarray(levels)
    values = observed.to_numpy()
    if values.dtype.kind == "O" or pd.api.types.is_string_dtype(col.dtype):
        return _uniform_levels(name, values) if values.size else values
    return np.unique(values)


def _refuse_unsupported_dtype(name: str, col: pd.Series) -> None:
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return
    if dtype.kind in "mMc" or isinstance(dtype, (pd.DatetimeTZDtype, pd.PeriodDtype, pd.IntervalDtype)):
        raise ValueError(
            f"Feature {name!r:.100} has dtype {dtype}, which a PD grid cannot use (grids are numbers or "
            "category levels); convert it, e.g. to elapsed days or to a number of seconds."
        )


def _numeric_grid(name: str, col: pd.Series, grid_resolution: int, percentiles) -> np.ndarray:
    values = col.to_numpy(dtype=float, na_value=np.nan)
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise ValueError(f"Feature {name!r} has only missing values; a grid cannot be built. Drop the feature.")
    uniques = np.unique(values)
    if uniques.size < grid_resolution:
        if uniques.size == 1 and values.size > 1:  # a one-row table is warned about by check_table
            warnings.warn(
                f"Feature {name!r} is constant ({uniques[0]!r}); its grid has one point.",
                UserWarning,
                stacklevel=4,
            )
        if col.dtype.kind in "iu":
            return uniques.astype(col.dtype)
        return uniques
    low, high = mquantiles(values, prob=percentiles)
    grid = np.linspace(low, high, grid_resolution)
    # relative, not np.isclose's absolute 1e-8: a feature measured on a 1e-9 scale has a grid
    if not high > low or np.unique(grid).size < grid_resolution:
        raise ValueError(
            f"The {percentiles} percentiles of feature {name!r} coincide ({low}) or are too close for "
            f"{grid_resolution} distinct grid points; choose percentiles further apart or give custom_values "
            "for this feature."
        )
    return grid


def check_percentiles(percentiles) -> tuple[float, float]:
    """Two increasing numbers in [0, 1] (the grid's lower and upper percentiles)."""
    expected = "percentiles must be a pair (lower, upper) of numbers in [0, 1] such as (0.05, 0.95)"
    if isinstance(percentiles, (str, bytes)) or not isinstance(percentiles, (Sequence, np.ndarray)):
        raise TypeError(f"{expected}, got {percentiles!r:.80}.")
    if np.ndim(percentiles) != 1 or len(percentiles) != 2:
        shape = f"{len(percentiles)} values" if np.ndim(percentiles) == 1 else f"shape {np.shape(percentiles)}"
        raise TypeError(f"{expected}: the two ends of the grid; got {shape}, {percentiles!r:.80}.")
    if not all(isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_)) for p in percentiles):
        raise TypeError(f"{expected}, got {percentiles!r:.80}.")
    low, high = float(percentiles[0]), float(percentiles[1])
    if not 0 <= low < high <= 1:
        raise ValueError(f"percentiles must be two increasing numbers in [0, 1], got {percentiles!r}.")
    return low, high


def _custom_grids(custom_values, names: list[str]) -> dict[int, np.ndarray]:
    """Validate ``custom_values`` (keyed by column name or position) into position -> grid values."""
    if custom_values is None:
        return {}
    if not isinstance(custom_values, Mapping):
        raise TypeError(
            f"custom_values must be a dict mapping a feature (name or index) to its grid values, "
            f"got {type(custom_values).__name__}."
        )
    custom: dict[int, np.ndarray] = {}
    for key, values in custom_values.items():
        pos = column_position(key, names, "custom_values", "has the key")
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, pd.Index, pd.Series)):
            raise TypeError(
                f"custom_values[{key!r:.100}] must be a 1-D sequence of grid values (e.g. [1.0, 2.0]), "
                f"got {type(values).__name__} {values!r:.60}."
            )
        if len(values) and all(isinstance(v, (Sequence, np.ndarray, pd.Index, pd.Series))
                               and not isinstance(v, (str, bytes)) for v in values):
            try:
                shape = np.shape(values)
            except ValueError:  # ragged
                shape = f"({len(values)}, ragged)"
            raise ValueError(
                f"custom_values[{key!r:.100}] must be a 1-D sequence of grid values, one per grid point (e.g. "
                f"[1.0, 2.0, 3.0]), got nested values of shape {shape}; a 2-D grid is given per feature: "
                "custom_values={'a': [...], 'b': [...]} with the pair ('a', 'b') in features."
            )
        values = list(values)
        if not values:
            raise ValueError(f"custom_values[{key!r:.100}] must be a non-empty 1-D sequence of grid values.")
        kinds = {_value_kind(v) for v in values}
        if len(kinds) > 1 or not kinds <= {"bool", "number", "str"}:
            raise TypeError(
                f"custom_values[{key!r:.100}] must hold numbers, or strings, or booleans (one type), "
                f"got {sorted(kinds)}."
            )
        arr = _str_array(values) if kinds == {"str"} else np.asarray(values)
        if arr.ndim != 1:
            raise ValueError(f"custom_values[{key!r:.100}] must be a non-empty 1-D sequence of grid values.")
        if len(set(values)) != len(values):
            raise ValueError(f"custom_values[{key!r:.100}] repeats a value; give each grid value once.")
        if pos in custom:
            raise ValueError(f"custom_values gives column {names[pos]!r:.100} twice (by name and by index).")
        custom[pos] = arr
    return custom


def _check_custom_kind(name: str, col: pd.Series, values: np.ndarray) -> None:
    """Refuse custom grid values the column cannot hold: text for a numeric column, infinite numbers."""
    numeric_column = pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)
    if numeric_column and values.dtype.kind in "USO":
        raise TypeError(f"custom_values[{name!r:.100}] holds text ({values.tolist()[:3]!r:.80}) but column "
                        f"{name!r:.100} is numeric; give numbers, e.g. [1.0, 2.0].")
    if values.dtype.kind in "fc" and np.isinf(values).any():
        raise ValueError(f"custom_values[{name!r:.100}] holds an infinite value; grid values must be finite "
                         "numbers (NaN is allowed: the missing-value grid point).")


#: Bytes the engine holds per point of a feature set's grid for one output: the PD value and the flat,
#: grid-point and row index of its stacked evaluation (``engine.brute``'s block layout).
GRID_POINT_BYTES = 32


def check_grid_size(grids: Mapping[int, FeatureGrid], feature_sets: Sequence[tuple[int, ...]],
                    memory_limit: int) -> None:
    """Refuse, before any work, a feature set whose grid (a surface: the product) cannot fit in ``memory_limit``."""
    for feature_set in feature_sets:
        sizes = [int(np.asarray(grids[p].values).size) for p in feature_set]
        points = int(np.prod(sizes, dtype=object))
        if points * GRID_POINT_BYTES > memory_limit:
            names = tuple(grids[p].name for p in feature_set)
            shown = names[0] if len(names) == 1 else names
            raise ValueError(
                f"The grid of {shown!r:.200} has {' x '.join(map(str, sizes))} = {points:,} points, which needs "
                f"about {points * GRID_POINT_BYTES / 2**30:,.1f} GiB, more than memory_limit "
                f"({memory_limit / 2**20:,.0f} MiB); give fewer custom_values or a smaller grid_resolution "
                "(or raise memory_limit)."
            )


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
    """Build the grid of every feature that appears in a feature set (column position -> :class:`FeatureGrid`).

    Numeric features get ``grid_resolution`` equally spaced points between the ``percentiles`` of the
    data (scikit-learn's rule), or their unique values when fewer; categorical features get their
    observed levels in order; ``custom_values`` win.  Missing values are ignored.
    """
    custom = _custom_grids(custom_values, names)
    mask = _categorical_mask(X, names, categorical_features)
    grids = {}
    for pos in dict.fromkeys(positions):
        col = column(X, pos)
        categorical = mask[pos]
        _refuse_unsupported_dtype(names[pos], col)
        if pos in custom:
            values = custom[pos]
            _check_custom_kind(names[pos], col, values)
            if not categorical and values.dtype.kind in "iufMm":
                # a numeric axis runs one way: curves, bands, centring at the first grid value and ICE
                # derivatives read it in order (NaN, the missing-value grid point, goes last)
                values = np.sort(values)
            if isinstance(col.dtype, pd.CategoricalDtype):
                unknown = [v for v in values.tolist() if v not in set(col.dtype.categories)]
                if unknown:
                    raise ValueError(
                        f"custom_values[{names[pos]!r:.100}] holds {unknown[:5]!r:.200}, which are not categories "
                        f"of that categorical column (they would be evaluated as missing values); use levels "
                        f"from {list(col.dtype.categories)[:20]!r:.300}."
                    )
        elif categorical:
            values = _levels(names[pos], col)
            if values.size == 0:
                raise ValueError(f"Feature {names[pos]!r} has only missing values; drop the feature.")
        else:
            values = _numeric_grid(names[pos], col, grid_resolution, percentiles)
        if categorical:
            deciles = np.full(DECILES.size, np.nan)
        else:
            numeric = col.to_numpy(dtype=float, na_value=np.nan)
            deciles = np.nanquantile(numeric, DECILES) if (~np.isnan(numeric)).any() else np.full(DECILES.size, np.nan)
        grids[pos] = FeatureGrid(names[pos], pos, values, bool(categorical), deciles)
    return grids
