"""Argument validation in one place: every public function calls these first."""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .schema import RESERVED_NAMES


def check_table(X) -> tuple[pd.DataFrame | np.ndarray, list[str]]:
    """Validate the data table and name its columns.

    Returns
    -------
    X : DataFrame or 2-D ndarray
        The table (a DataFrame stays a DataFrame, anything else becomes an ndarray).
    names : list of str
        Column names (``x0, x1, ...`` for arrays).
    """
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"X has duplicate column names {duplicated}; rename them so each is unique.")
        numeric = X.select_dtypes(include=[np.number])
        if numeric.shape[1] and np.isinf(numeric.to_numpy(dtype=float)).any():
            bad = [c for c in numeric.columns if np.isinf(numeric[c].to_numpy(dtype=float)).any()]
            raise ValueError(f"X contains infinite values in column(s) {bad}; replace or drop them.")
    else:
        if isinstance(X, pd.Series):
            raise TypeError("X must be 2-D (a DataFrame or an array of shape (n_rows, n_columns)), got a Series.")
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_rows, n_columns); got an array with {X.ndim} dimension(s).")
        if X.dtype.kind in "fc" and np.isinf(X).any():
            bad = [f"x{j}" for j in np.flatnonzero(np.isinf(X).any(axis=0))]
            raise ValueError(f"X contains infinite values in column(s) {bad}; replace or drop them.")
        names = [f"x{j}" for j in range(X.shape[1])]
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty (shape {X.shape}); it needs at least one row and one column.")
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
                    f"Feature name {names[p]!r} contains '/', which xarray cannot use in a dim name; "
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


def check_target(y, n_rows: int, estimator) -> np.ndarray | pd.Series | pd.DataFrame:
    """Validate the target against X's length and the estimator type."""
    if y is None:
        raise ValueError("y is required to refit the estimator on resamples.")
    y_arr = y if isinstance(y, (pd.Series, pd.DataFrame)) else np.asarray(y)
    if len(y_arr) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(y_arr)}; they must have the same length.")
    values = np.asarray(y_arr)
    if values.dtype.kind in "fc" and np.isnan(values).any():
        raise ValueError(f"y contains {int(np.isnan(values).sum())} missing value(s); drop those rows or impute y.")
    if values.dtype.kind == "O" and pd.isna(values).any():
        raise ValueError(f"y contains {int(pd.isna(values).sum())} missing value(s); drop those rows or impute y.")
    if not is_classifier(estimator) and values.dtype.kind not in "biuf":
        raise TypeError(
            f"{type(estimator).__name__} is a regressor but y has non-numeric values "
            f"(dtype {values.dtype}); use a classifier or encode y as numbers."
        )
    if is_classifier(estimator) and len(np.unique(values.astype(str) if values.dtype.kind == "O" else values)) < 2:
        raise ValueError("y has a single class; a classifier needs at least two.")
    return y_arr


def is_fitted(estimator) -> bool:
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    except TypeError:
        return False
    return True


def check_positive_int(value, name: str, minimum: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_choice(value, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {list(choices)}.")
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


def check_missing_supported(estimator, X, names: list[str]) -> None:
    """Refuse missing values in X for an estimator that cannot take them (naming the columns)."""
    if isinstance(X, pd.DataFrame):
        missing = [name for name, has in zip(names, X.isna().any().to_numpy()) if has]
    else:
        mask = pd.isna(X).any(axis=0) if X.dtype.kind in "fcO" else np.zeros(X.shape[1], bool)
        missing = [name for name, has in zip(names, mask) if has]
    if missing and not _allows_nan(estimator):
        raise ValueError(
            f"X has missing values in column(s) {missing}, which {type(estimator).__name__} cannot handle. "
            "Impute them (e.g. sklearn.pipeline.make_pipeline(SimpleImputer(), estimator)), drop those rows, "
            "or use a model that accepts missing values (e.g. HistGradientBoostingRegressor/Classifier)."
        )
