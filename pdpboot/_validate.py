"""Argument validation in one place: every public function calls these first."""

from __future__ import annotations

import difflib
import numbers
import os
import warnings
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .schema import RESERVED_NAMES

#: Upper bound on ``n_resamples``: every resample's seed is spawned before any work starts, and
#: 10**6 spawned generators already take seconds and about a gigabyte; more is a typo, not a study.
MAX_N_RESAMPLES = 10**6


def _plain_column(col: pd.Series) -> pd.Series:
    """A pandas nullable/extension column as a plain NumPy-backed one (other columns unchanged)."""
    dtype = col.dtype
    if isinstance(dtype, np.dtype) or isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)):
        return col
    if pd.api.types.is_bool_dtype(dtype):
        if col.isna().any():
            return pd.Series(col.astype(object).where(col.notna(), np.nan).to_numpy(dtype=object),
                             index=col.index, name=col.name, dtype=object)
        return col.astype(bool)
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
        if col.isna().any() or pd.api.types.is_float_dtype(dtype):
            return pd.Series(col.to_numpy(dtype=float, na_value=np.nan), index=col.index, name=col.name)
        kind = "uint64" if pd.api.types.is_unsigned_integer_dtype(dtype) else "int64"
        return pd.Series(col.to_numpy(dtype=kind), index=col.index, name=col.name)
    if pd.api.types.is_string_dtype(dtype):
        return pd.Series(col.to_numpy(dtype=object, na_value=np.nan), index=col.index, name=col.name, dtype=object)
    return col


def _storable_index(index: pd.Index) -> pd.Index:
    """Row labels netCDF/Zarr can store (numbers, strings, booleans, naive datetimes); others as strings."""
    if isinstance(index, pd.MultiIndex):
        return pd.Index([str(v) for v in index], dtype=object)
    values = np.asarray(index)
    if values.dtype.kind in "iufbmM":
        return index
    if values.dtype.kind == "U" or all(isinstance(v, str) for v in values):
        return index
    if values.dtype.kind == "O" and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values
    ):
        return pd.Index(values.astype(float) if any(isinstance(v, float) for v in values) else values.astype(int))
    return pd.Index([str(v) for v in values], dtype=object)


def check_table(X) -> tuple[pd.DataFrame | np.ndarray, list[str]]:
    """The validated table (a DataFrame, or else an ndarray) and its column names (``x0, x1, ...`` for arrays).

    pandas nullable columns become NumPy-backed and row labels netCDF cannot store become strings (the
    caller's table is not modified); a one-row table warns (its bands have zero width).
    """
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"X has duplicate column names {duplicated}; rename them so each is unique.")
        plain = [_plain_column(X.iloc[:, j]) for j in range(X.shape[1])]
        index = _storable_index(X.index)
        if any(p is not X.iloc[:, j] for j, p in enumerate(plain)) or index is not X.index:
            converted = pd.concat([p.set_axis(X.index) for p in plain], axis=1) if plain else X.copy()
            converted.columns = X.columns
            converted.index = index
            X = converted
        numeric = X.select_dtypes(include=[np.number])
        if numeric.shape[1] and np.isinf(numeric.to_numpy(dtype=float)).any():
            bad = [str(c) for c in numeric.columns if np.isinf(numeric[c].to_numpy(dtype=float)).any()]
            raise ValueError(f"X contains infinite values in column(s) {bad}; replace or drop them.")
    else:
        if isinstance(X, pd.Series):
            raise TypeError("X must be 2-D (a DataFrame or an array of shape (n_rows, n_columns)), got a Series.")
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"X must be a DataFrame or a 2-D array; np.asarray(X) failed: {exc}") from None
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_rows, n_columns); got an array with {X.ndim} dimension(s).")
        if X.dtype.kind in "fc" and np.isinf(X).any():
            bad = [f"x{j}" for j in np.flatnonzero(np.isinf(X).any(axis=0))]
            raise ValueError(f"X contains infinite values in column(s) {bad}; replace or drop them.")
        names = [f"x{j}" for j in range(X.shape[1])]
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty (shape {X.shape}); it needs at least one row and one column.")
    if X.shape[0] == 1:
        warnings.warn(
            "X has a single row: its partial dependence is that row's ICE curve, and every bootstrap "
            "resample draws the same row, so confidence bands have zero width.",
            UserWarning, stacklevel=3,
        )
    return X, names


def _closest(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, names, n=3)
    hint = f" Did you mean {close}?" if close else ""
    shown = names if len(names) <= 30 else [*names[:30], "..."]
    return f"{hint} Available columns: {shown}."


def _feature_position(feature: Hashable, names: list[str]) -> int:
    if isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
        if not -len(names) <= int(feature) < len(names):
            raise ValueError(f"Feature index {feature} is out of range for X with {len(names)} columns.")
        return int(feature) % len(names)
    if str(feature) not in names:
        raise ValueError(f"Feature {feature!r} is not a column of X.{_closest(str(feature), names)}")
    return names.index(str(feature))


def resolve_features(features, names: list[str]) -> list[tuple[int, ...]]:
    """Turn ``features`` (names/indices and pairs of them) into tuples of column positions."""
    if features is None:
        raise ValueError("features is required: give column names or indices, and pairs for 2-D surfaces.")
    if isinstance(features, (str, numbers.Integral)):
        features = [features]
    resolved = []
    for item in features:
        group = item if isinstance(item, (tuple, list)) else (item,)
        if len(group) not in (1, 2):
            raise ValueError(f"Feature set {item!r} has {len(group)} features; only 1-D and 2-D are supported.")
        positions = tuple(_feature_position(f, names) for f in group)
        for p in positions:
            if "/" in names[p]:
                raise ValueError(
                    f"Feature name {names[p]!r:.100} contains '/', which xarray's DataTree refuses in the "
                    "name of a dim coordinate (results name dims after features); "
                    "rename the column (e.g. replace '/' by '_per_')."
                )
        if len(set(positions)) != len(positions):
            raise ValueError(f"Feature pair {item!r} names the same feature twice; use two different features.")
        for p in positions:
            if names[p] in RESERVED_NAMES:
                raise ValueError(
                    f"Feature name {names[p]!r} is reserved by the result schema (dims and variables: "
                    "resample, instance, output, ci_bound, pd, ...); rename the column."
                )
        if positions in resolved:
            raise ValueError(f"Feature set {item!r} is requested twice.")
        resolved.append(positions)
    if not resolved:
        raise ValueError("features is empty: give at least one column name or index.")
    return resolved


def _plain_target(y):
    """y as a NumPy array or a Series/DataFrame of NumPy dtypes (nullable columns converted)."""
    if isinstance(y, pd.Series):
        return _plain_column(y)
    if isinstance(y, pd.DataFrame):
        names = [str(c) for c in y.columns]
        duplicated = list(dict.fromkeys(n for n in names if names.count(n) > 1))
        if duplicated:
            raise ValueError(f"y has duplicate column names {duplicated!r:.200}; the target names label the "
                             "'output' dim of the result, so rename them to be distinct.")
        converted = pd.concat([_plain_column(y.iloc[:, j]) for j in range(y.shape[1])], axis=1)
        converted.columns = y.columns
        return converted
    try:
        values = np.asarray(y)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"y must be array-like of shape (n_rows,) or (n_rows, n_targets): {exc}") from None
    if values.ndim == 2 and values.shape[1] == 1:
        return values[:, 0]
    if values.ndim == 2:
        return pd.DataFrame(values, columns=[f"y{k}" for k in range(values.shape[1])])
    if values.ndim != 1:
        raise ValueError(f"y must have shape (n_rows,) or (n_rows, n_targets); got shape {values.shape}.")
    return values


def check_target(y, n_rows: int, estimator) -> np.ndarray | pd.Series | pd.DataFrame:
    """Validate the target against X's length and the estimator type (several columns: ``y0, y1, ...``)."""
    check_estimator(estimator)
    if y is None:
        raise ValueError("y is required to refit the estimator on resamples.")
    y_arr = _plain_target(y)
    if len(y_arr) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(y_arr)}; they must have the same length.")
    values = np.asarray(y_arr)
    if values.dtype.kind in "fc" and np.isnan(values).any():
        raise ValueError(f"y contains {int(np.isnan(values).sum())} missing value(s); drop those rows or impute y.")
    if values.dtype.kind == "O" and pd.isna(values).any():
        raise ValueError(f"y contains {int(pd.isna(values).sum())} missing value(s); drop those rows or impute y.")
    if values.dtype.kind in "fc" and np.isinf(values).any():
        raise ValueError(f"y contains {int(np.isinf(values).sum())} infinite value(s); drop those rows or fix y.")
    classifier = is_classifier(estimator)
    if classifier and values.ndim == 2:
        raise ValueError(
            f"y has {values.shape[1]} columns, but {type(estimator).__name__} is a classifier: multi-output "
            "classification is not supported (as in sklearn.inspection.partial_dependence). Compute one "
            "target at a time."
        )
    if not classifier and values.dtype.kind not in "biuf":
        raise TypeError(
            f"{type(estimator).__name__} is a regressor but y has non-numeric values "
            f"(dtype {values.dtype}); use a classifier or encode y as numbers."
        )
    if classifier and len(np.unique(values.astype(str) if values.dtype.kind == "O" else values)) < 2:
        raise ValueError("y has a single class; a classifier needs at least two.")
    return y_arr


_NOT_SUPERVISED = {"clusterer": "a clusterer", "outlier_detector": "an outlier detector",
                   "density_estimator": "a density estimator", "transformer": "a transformer"}


def _estimator_type(estimator) -> str | None:
    try:
        from sklearn.utils import get_tags

        return get_tags(estimator).estimator_type
    except (ImportError, AttributeError, TypeError, ValueError):
        return getattr(estimator, "_estimator_type", None)


def check_estimator(estimator) -> None:
    """Refuse what is not a supervised scikit-learn-style estimator instance pdpboot can use."""
    if isinstance(estimator, type):
        raise TypeError(
            f"estimator must be an estimator instance, got the class {estimator.__name__}; "
            f"write {estimator.__name__}() instead."
        )
    missing = [m for m in ("fit", "get_params") if not callable(getattr(estimator, m, None))]
    if missing or not any(callable(getattr(estimator, m, None))
                          for m in ("predict", "predict_proba", "decision_function")):
        raise TypeError(
            f"estimator must be a scikit-learn regressor or classifier (with fit, get_params and predict), "
            f"got {type(estimator).__name__!s:.80}. Wrap the model in a scikit-learn estimator."
        )
    kind = _estimator_type(estimator)
    if kind in _NOT_SUPERVISED and not is_classifier(estimator):
        raise TypeError(
            f"{type(estimator).__name__} is {_NOT_SUPERVISED[kind]}; partial dependence needs a regressor "
            "or a classifier."
        )


def is_fitted(estimator) -> bool:
    """Whether ``estimator`` is fitted (after :func:`check_estimator`); a multiclass-multioutput one is refused."""
    check_estimator(estimator)
    try:
        check_is_fitted(estimator)
    except (NotFittedError, TypeError):
        return False
    classes = getattr(estimator, "classes_", None)
    if is_classifier(estimator) and (isinstance(classes, list) or (
            isinstance(classes, np.ndarray) and classes.dtype == object
            and classes.size and isinstance(classes.flat[0], np.ndarray))):
        raise ValueError(
            f"{type(estimator).__name__} was fitted on several target columns (multiclass-multioutput); "
            "partial dependence supports one classification target (as in sklearn.inspection). "
            "Fit one model per target."
        )
    return True


def check_fitted_columns(estimator, X) -> None:
    """Refuse, in one line, a table whose columns are not those a fitted ``estimator`` was fitted on."""
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    expected = getattr(estimator, "n_features_in_", None)
    n_columns = np.shape(X)[1] if np.ndim(X) == 2 else None
    if names is not None and columns is not None:
        names, columns = [str(n) for n in names], [str(c) for c in columns]
        if names == columns:
            return
        missing = [n for n in names if n not in columns]
        extra = [c for c in columns if c not in names]
        what = "; ".join(part for part in (f"missing {missing}" if missing else "",
                                           f"not seen in fit {extra}" if extra else "") if part)
        message = (f"X's columns are not the columns {type(estimator).__name__} was fitted on (feature_names_in_): "
                   f"{what or 'the same columns in another order'}; pass X[list(model.feature_names_in_)], the "
                   "table with the model's own columns in its order.")
    elif names is None and isinstance(expected, (int, np.integer)) and n_columns not in (None, expected):
        message = (f"X has {n_columns} columns but {type(estimator).__name__} was fitted on {int(expected)} "
                   "(n_features_in_); pass the columns the model was fitted on, in that order.")
    else:
        return
    predict = getattr(estimator, "predict", None)
    if predict is None:
        return
    one = X.iloc[:1] if isinstance(X, pd.DataFrame) else np.asarray(X)[:1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predict(one)
    except ValueError as exc:
        raise ValueError(message) from exc


def check_positive_int(value, name: str, minimum: int, *, maximum: int | None = None) -> int:
    """An integer >= ``minimum`` (and <= ``maximum``); NumPy integers accepted, bools refused."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r:.80}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value!r}.")
    return int(value)


def check_n_resamples(n_resamples, minimum: int = 2) -> int:
    """``n_resamples`` as an int in [``minimum``, :data:`MAX_N_RESAMPLES`]."""
    if isinstance(n_resamples, numbers.Real) and not isinstance(n_resamples, numbers.Integral):
        raise ValueError(
            f"n_resamples must be an integer between {minimum} and {MAX_N_RESAMPLES}, got the "
            f"{type(n_resamples).__name__} {n_resamples!r}."
        )
    return check_positive_int(n_resamples, "n_resamples", minimum, maximum=MAX_N_RESAMPLES)


def check_optional_positive_int(value, name: str, minimum: int = 1) -> int | None:
    """None, or an integer >= ``minimum`` (e.g. ``max_ice_instances``, ``max_background``)."""
    return None if value is None else check_positive_int(value, name, minimum)


def check_ice(ice) -> bool | int:
    """``ice``: True/False (or None: False), or a positive number of instances."""
    if ice is None or isinstance(ice, (bool, np.bool_)):
        return bool(ice)
    if isinstance(ice, numbers.Integral) and ice >= 1:
        return int(ice)
    raise ValueError(f"ice must be True, False or a positive integer (a number of instances), got {ice!r:.80}.")


def check_rng(rng):
    """The seed ``rng`` (None, an int >= 0, a SeedSequence, BitGenerator or Generator), unchanged.

    A legacy ``numpy.random.RandomState`` is refused with ``TypeError``.
    """
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return rng
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "rng=np.random.RandomState(...) is the legacy NumPy generator, which pdpboot does not take: "
            "pass an int seed (rng=0) or a Generator (rng=np.random.default_rng(0))."
        )
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed, got {rng}.")
        return int(rng)
    raise TypeError(
        f"rng must be None, a non-negative int, or a numpy.random.Generator/SeedSequence, "
        f"got {type(rng).__name__} {rng!r:.60}."
    )


def check_probability(value, name: str) -> float:
    """A number strictly between 0 and 1 (any real type, NumPy scalars included) as a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1), e.g. 0.95; got {value!r:.80}.")
    return float(value)


def check_enough_rows(X, minimum: int = 2, *, what: str = "the bootstrap") -> None:
    """Refuse a table with fewer than ``minimum`` rows for ``what`` (before any grid is built)."""
    try:
        n_rows = len(X)
    except TypeError:
        return
    if 0 < n_rows < minimum:  # an empty X is check_table's to refuse
        raise ValueError(
            f"X has only {n_rows} row(s); {what} needs at least {minimum} (each resample refits the model on "
            "rows drawn from X). Use partial_dependence for the PD of one fitted model on few rows."
        )


def check_subsample_fraction(subsample_fraction, n_rows: int, resampling: str = "subsample", *,
                             minimum: int = 2):
    """``subsample_fraction`` in (0, 1) leaving every subsample at least ``minimum`` rows."""
    if resampling != "subsample":
        return subsample_fraction
    if (isinstance(subsample_fraction, (bool, np.bool_)) or not isinstance(subsample_fraction, numbers.Real)
            or not 0 < subsample_fraction < 1):
        raise ValueError(f"subsample_fraction must be in (0, 1), got {subsample_fraction!r:.80}.")
    size = int(np.floor(subsample_fraction * n_rows))
    if size < minimum:
        raise ValueError(
            f"subsample_fraction={subsample_fraction!r} draws floor({subsample_fraction!r} x {n_rows}) = {size} "
            f"row(s) per subsample; the model needs at least {minimum}: use subsample_fraction >= "
            f"{min(np.ceil(minimum / n_rows * 1e4) / 1e4, 0.99):g}."
        )
    return float(subsample_fraction)


def check_sample_weight(sample_weight, n_rows: int) -> np.ndarray | None:
    """None, or one finite, non-negative weight per row with a positive sum (float64 array)."""
    if sample_weight is None:
        return None
    try:
        weights = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("sample_weight must be an array of numbers, one per row of X.") from None
    if weights.shape != (n_rows,):
        raise ValueError(f"sample_weight must have one entry per row of X ({n_rows}), got shape {weights.shape}.")
    bad = ~np.isfinite(weights)
    if bad.any():
        raise ValueError(
            f"sample_weight has {int(bad.sum())} missing or infinite value(s) (first at row "
            f"{int(np.flatnonzero(bad)[0])}); give finite weights."
        )
    if (weights < 0).any() or weights.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return weights


def check_target_names(target_names, n_targets: int) -> list[str] | None:
    """None, or one distinct name per regression target."""
    if target_names is None:
        return None
    if isinstance(target_names, str):
        target_names = [target_names]
    names = [str(t) for t in target_names]
    if len(names) != n_targets:
        raise ValueError(
            f"target_names has {len(names)} name(s) but the model predicts {n_targets} target(s); "
            "give one name per target."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"target_names must be distinct, got {names}.")
    return names


def check_predictions_finite(per_node: Mapping, *, what: str = "the model fitted on the full data") -> None:
    """Refuse PD/ICE arrays (node -> variable -> ``(dims, array)``) holding NaN or infinite values."""
    for node, variables in per_node.items():
        for var, (_, arr) in variables.items():
            values = np.asarray(arr)
            if values.dtype.kind in "fc" and not np.isfinite(values).all():
                share = float(np.mean(~np.isfinite(values)))
                raise ValueError(
                    f"{what} gives non-finite {var!r} values in node {node!r} ({share:.0%} of them): the "
                    "model predicts NaN or infinity on the grid. Check the model (e.g. its handling of "
                    "missing values or of grid values outside the training range)."
                )


def check_choice(value, name: str, choices: Sequence[str]) -> str:
    """One of ``choices`` (compared by equality; unhashable values are refused cleanly)."""
    if not isinstance(value, (str, type(None), bool, numbers.Number)) or value not in choices:
        raise ValueError(f"{name}={value!r:.80} is not one of {list(choices)}.")
    return value


def _allows_nan(estimator) -> bool:
    """Whether the estimator's first step takes missing values (unknown counts as yes)."""
    from sklearn.pipeline import Pipeline

    try:
        from sklearn.utils import get_tags

        tagged = bool(get_tags(estimator).input_tags.allow_nan)
    except (ImportError, AttributeError, TypeError, ValueError):
        return True  # unknown: let the estimator decide
    if isinstance(estimator, Pipeline) and not tagged:
        # scikit-learn's Pipeline does not derive the tag from its steps; missing values meet the
        # first step first (an imputer, or a model that takes them)
        first = estimator.steps[0][1]
        return first in (None, "passthrough") or _allows_nan(first)
    return tagged


def check_missing_supported(estimator, X, names: list[str], grids=None) -> None:
    """Refuse missing values in X, or a NaN grid value among ``grids`` (``FeatureGrid``s, e.g. from
    ``custom_values``), for an estimator that cannot take them (naming the columns), before any fit."""
    if isinstance(X, pd.DataFrame):
        missing = [name for name, has in zip(names, X.isna().any().to_numpy()) if has]
    else:
        mask = pd.isna(X).any(axis=0) if X.dtype.kind in "fcO" else np.zeros(X.shape[1], bool)
        missing = [name for name, has in zip(names, mask) if has]
    nan_grid = [g.name for g in (grids or {}).values()
                if getattr(g.values, "dtype", None) is not None and g.values.dtype.kind == "f"
                and np.isnan(g.values).any() and g.name not in missing]
    if nan_grid and not _allows_nan(estimator):
        raise ValueError(
            f"The grid of {nan_grid} holds NaN (the missing-value grid point), which {type(estimator).__name__} "
            "cannot take; drop NaN from custom_values, or use a model that accepts missing values (e.g. "
            "HistGradientBoostingRegressor/Classifier, or a Pipeline starting with SimpleImputer).")
    if missing and not _allows_nan(estimator):
        raise ValueError(
            f"X has missing values in column(s) {missing}, which {type(estimator).__name__} cannot handle. "
            "Impute them (e.g. sklearn.pipeline.make_pipeline(SimpleImputer(), estimator)), drop those rows, "
            "or use a model that accepts missing values (e.g. HistGradientBoostingRegressor/Classifier)."
        )


def check_path(path, what: str, *, folder: bool = False) -> Path:
    """``path`` as a Path, refused in one line when it is not a path, when a part of its folder is an
    existing file, or (``folder``) when it is an existing file itself."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path (str or pathlib.Path), got {type(path).__name__}.")
    path = Path(path)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{what} {str(path)!r} lies under {str(parent)!r}, which is a file, not a folder; "
                                 "choose a path in a folder.")
            break
    if folder and path.exists() and not path.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a file; give a folder (created when missing).")
    return path
