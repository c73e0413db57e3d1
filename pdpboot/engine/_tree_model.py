"""Read fitted tree models into one flat node table (:func:`read_model` -> :class:`TreeModel`).

Semantics as in scikit-learn's prediction code: trees, forests and ``GradientBoosting*`` take
float32 input, send ``x`` left when ``x <= threshold`` and NaN along ``missing_go_to_left``;
``HistGradientBoosting*`` takes float64 after its own categorical preprocessing (which reorders
columns), and a categorical node sends a category in its bitset left, another known one right and
anything else the missing way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.validation import check_is_fitted

from ._catboost import CatBoostReader, from_catboost, is_catboost
from ._lightgbm import LightGBMReader, is_lightgbm
from ._xgboost import XGBoostReader, is_xgboost

try:  # scikit-learn >= 1.6; with older versions the engine declines and brute force is used
    from sklearn.utils import get_tags
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - depends on the installed version
    get_tags = validate_data = None

FOREST_TYPES = (RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor, ExtraTreesClassifier)
_GB = (GradientBoostingRegressor, GradientBoostingClassifier)
_HGB = (HistGradientBoostingRegressor, HistGradientBoostingClassifier)
_TREES = (DecisionTreeRegressor, DecisionTreeClassifier)  # ExtraTree* are subclasses
_CLASSIFIERS = (
    DecisionTreeClassifier,
    RandomForestClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
)
MISSING_CODE = 256  # column of ``cat_left`` used for NaN / negative / out-of-range codes


class UnsupportedModel(Exception):
    """The estimator / input pair is outside what the exact tree engine handles."""


@dataclass(frozen=True)
class TreeModel:
    """A fitted tree model as one node table plus its input and output conventions.

    Node arrays have shape (n_nodes,), ``feature`` -1 at leaves; a row's raw output is ``offset`` plus
    the ``value`` (n_nodes, n_raw) of the leaves it reaches.  ``cat_row`` indexes ``cat_left``
    (n_cat_nodes, 257: does code ``c`` go left, column 256 = missing).  ``link`` maps raw outputs to
    the response (None: identity); ``columns`` maps input columns to the trees' columns,
    ``categories`` holds the encoder's categories per input column, ``dtype`` the type of comparisons.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    cat_row: np.ndarray
    cat_left: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    offset: np.ndarray
    link: Callable[[np.ndarray], np.ndarray] | None
    n_out: int
    columns: np.ndarray
    categories: list | None
    categorical: np.ndarray
    dtype: type
    cover: np.ndarray | None = None  # training weight reaching each node (cost estimates only)
    source: object = None  # reader of an XGBoost / LightGBM / CatBoost model (input conversion, margins)


def _check_response(estimator, response_method: str) -> None:
    is_clf = isinstance(estimator, _CLASSIFIERS)
    if is_clf:
        allowed = {"predict_proba"}
        if isinstance(estimator, _GB + _HGB):
            allowed.add("decision_function")
    else:
        allowed = {"predict"}
    if response_method not in allowed:
        raise UnsupportedModel(f"response_method={response_method!r} for {type(estimator).__name__}")
    if is_clf and getattr(estimator, "n_outputs_", 1) != 1:
        raise UnsupportedModel("multi-output classifier")
    if isinstance(estimator, _GB):
        init = estimator.init_
        if not (isinstance(init, str) and init == "zero") and not isinstance(
            init, (DummyRegressor, DummyClassifier)
        ):
            raise UnsupportedModel("gradient boosting with a non-constant init estimator")


def _table(feature, threshold, left, right, missing_left, sizes, value, cat_row=None, cover=None,
           cat_left=None) -> dict:
    """Node table from per-tree arrays concatenated in tree order (child ids local to a tree)."""
    sizes = np.asarray(sizes, dtype=np.intp)
    roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    first = np.repeat(roots, sizes)
    is_leaf = np.asarray(left) < 0
    # fresh arrays, fixed in place (fewer passes over large node tables than np.where + astype)
    feat = np.array(feature, dtype=np.intp)
    lft = np.add(left, first, dtype=np.intp)
    rgt = np.add(right, first, dtype=np.intp)
    for arr in (feat, lft, rgt):
        np.putmask(arr, is_leaf, -1)
    missing = np.asarray(missing_left)
    return {
        "feature": feat,
        "threshold": np.array(threshold, dtype=np.float64),
        "left": lft,
        "right": rgt,
        "missing_left": missing.view(bool) if missing.dtype == np.uint8 else missing.astype(bool),
        "cat_row": np.full(len(left), -1, dtype=np.intp) if cat_row is None else cat_row,
        "value": value,
        "roots": roots,
        "cover": None if cover is None else np.asarray(cover, dtype=np.float64),
        "cat_left": np.zeros((0, MISSING_CODE + 1), dtype=bool) if cat_left is None else cat_left,
    }


def _sk_tables(estimator) -> tuple[dict, np.ndarray]:
    """Node table and offset for DecisionTree / forests / GradientBoosting."""
    if isinstance(estimator, _GB):
        n_raw = estimator.estimators_.shape[1]
        trees = [est.tree_ for stage in estimator.estimators_ for est in stage]
        column = np.tile(np.arange(n_raw), len(estimator.estimators_))
        scale = estimator.learning_rate
        probe = np.zeros((1, estimator.n_features_in_), dtype=np.float32)
        offset = np.asarray(estimator._raw_predict_init(probe), dtype=np.float64)[0]
    else:
        forest = isinstance(estimator, FOREST_TYPES)
        trees = [est.tree_ for est in estimator.estimators_] if forest else [estimator.tree_]
        classifier = isinstance(estimator, _CLASSIFIERS)
        n_raw = len(estimator.classes_) if classifier else estimator.n_outputs_
        column, scale, offset = None, 1.0 / len(trees), np.zeros(n_raw)
    sizes = [t.node_count for t in trees]

    def cat(attr):
        return np.concatenate([getattr(t, attr) for t in trees])

    if column is not None:  # boosting: one raw column per tree
        value = np.zeros((sum(sizes), n_raw))
        value[np.arange(len(value)), np.repeat(column, sizes)] = scale * cat("value")[:, 0, 0]
    elif isinstance(estimator, _CLASSIFIERS):
        value = cat("value")[:, 0, :n_raw] * scale
    else:
        value = cat("value")[:, :, 0] * scale
    table = _table(
        cat("feature"), cat("threshold"), cat("children_left"), cat("children_right"),
        cat("missing_go_to_left"), sizes, value, cover=cat("weighted_n_node_samples"),
    )
    return table, offset


def _bitset_member(bitsets: np.ndarray) -> np.ndarray:
    """(n, 8) uint32 bitsets -> (n, 256) bool membership of codes 0..255."""
    codes = np.arange(256)
    return ((bitsets[:, codes // 32] >> (codes % 32).astype(np.uint32)) & 1).astype(bool)


def _hgb_tables(estimator) -> tuple[dict, np.ndarray]:
    """Node table and offset for HistGradientBoosting; categorical nodes get cat_left rows."""
    n_raw = estimator.n_trees_per_iteration_
    predictors = [p for iteration in estimator._predictors for p in iteration]
    sizes = [len(p.nodes) for p in predictors]
    nodes = np.concatenate([p.nodes for p in predictors])
    is_leaf = nodes["is_leaf"].astype(bool)
    column = np.repeat(np.tile(np.arange(n_raw), len(estimator._predictors)), sizes)
    value = np.zeros((len(nodes), n_raw))
    value[np.arange(len(nodes)), column] = np.where(is_leaf, nodes["value"], 0.0)
    # categorical splits: one row of cat_left per node (does code c go left; column 256 = missing)
    is_cat = nodes["is_categorical"].astype(bool) & ~is_leaf
    cat_idx = np.flatnonzero(is_cat)
    cat_row = np.full(len(nodes), -1, dtype=np.intp)
    cat_row[cat_idx] = np.arange(len(cat_idx))
    cat_left = np.zeros((len(cat_idx), MISSING_CODE + 1), dtype=bool)
    if len(cat_idx):
        known, f_idx_map = estimator._bin_mapper.make_known_categories_bitsets()
        bitsets = np.concatenate([np.asarray(p.raw_left_cat_bitsets, dtype=np.uint32).reshape(-1, 8)
                                  for p in predictors])
        bitset_base = np.repeat(np.concatenate([[0], np.cumsum([len(p.raw_left_cat_bitsets)
                                                                for p in predictors])[:-1]]), sizes)
        in_left = _bitset_member(bitsets[bitset_base[cat_idx] + nodes["bitset_idx"][cat_idx]])
        feat = nodes["feature_idx"][cat_idx]
        in_known = _bitset_member(np.asarray(known, dtype=np.uint32))[f_idx_map[feat].astype(np.intp)]
        miss = nodes["missing_go_to_left"][cat_idx].astype(bool)[:, None]
        cat_left[:, :MISSING_CODE] = np.where(in_left, True, np.where(in_known, False, miss))
        cat_left[:, MISSING_CODE] = miss[:, 0]
    table = _table(
        nodes["feature_idx"], nodes["num_threshold"], np.where(is_leaf, -1, nodes["left"].astype(np.intp)),
        nodes["right"].astype(np.intp), nodes["missing_go_to_left"], sizes, value, cat_row,
        cover=nodes["count"], cat_left=cat_left,
    )
    offset = np.asarray(estimator._baseline_prediction, dtype=np.float64).reshape(-1)
    return table, offset


def _hgb_columns(estimator) -> tuple[np.ndarray, list | None]:
    """Model-space column of each input column, and the encoder categories per input column."""
    n = estimator.n_features_in_
    pre = getattr(estimator, "_preprocessor", None)
    if pre is None:
        return np.arange(n), None
    is_cat = np.asarray(estimator.is_categorical_, dtype=bool)
    cols = np.empty(n, dtype=np.intp)
    cat_cols, num_cols = np.flatnonzero(is_cat), np.flatnonzero(~is_cat)
    cols[cat_cols] = pre.output_indices_["encoder"].start + np.arange(len(cat_cols))
    cols[num_cols] = pre.output_indices_["numerical"].start + np.arange(len(num_cols))
    cats: list = [None] * n
    for j, c in zip(cat_cols, pre.named_transformers_["encoder"].categories_):
        cats[j] = list(c)
    return cols, cats


def _encode_categories(values: np.ndarray, categories: list) -> np.ndarray:
    """Grid values -> the OrdinalEncoder codes the HGB model sees (NaN if missing/unknown)."""
    lookup = {}
    for code, cat in enumerate(categories):
        if not _is_missing(cat):
            lookup.setdefault(cat, code)
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if not _is_missing(v):
            try:
                out[i] = lookup.get(v, np.nan)
            except TypeError:  # unhashable value: cannot be a category
                raise ValueError(f"Grid value {v!r} cannot be matched to a category.") from None
    return out


def _is_missing(v) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)
    except (TypeError, ValueError):
        return False


def _link(estimator, response_method: str):
    loss = getattr(estimator, "_loss", None)
    if isinstance(estimator, _CLASSIFIERS) and response_method == "predict_proba":
        if isinstance(estimator, _GB + _HGB):
            return loss.predict_proba
        return None
    if isinstance(estimator, HistGradientBoostingRegressor):
        try:  # private to scikit-learn: imported here, where only an HGB regressor's link needs it
            from sklearn._loss.link import IdentityLink
        except ImportError:
            raise UnsupportedModel("this scikit-learn's HistGradientBoostingRegressor link is not known") from None
        if not isinstance(loss.link, IdentityLink):
            return lambda raw: loss.link.inverse(raw).reshape(len(raw), -1)
    return None


def external_reader(estimator, response_method: str):
    """Reader of an XGBoost / LightGBM / CatBoost estimator, or None for other estimators."""
    if is_xgboost(estimator):
        return XGBoostReader(estimator, response_method, UnsupportedModel)
    if is_lightgbm(estimator):
        return LightGBMReader(estimator, response_method, UnsupportedModel)
    if is_catboost(estimator):
        return CatBoostReader(estimator, response_method, UnsupportedModel)
    return None


def is_external(estimator) -> bool:
    """Whether the estimator comes from XGBoost, LightGBM or CatBoost (read from its own dump)."""
    module = type(estimator).__module__.split(".")[0]
    return module == "lightgbm" or is_xgboost(estimator) or from_catboost(estimator)


def check_supported(estimator, response_method: str) -> None:
    """Raise UnsupportedModel (or NotFittedError) unless the engine handles this estimator and response."""
    if is_external(estimator):
        if external_reader(estimator, response_method) is None:
            raise UnsupportedModel(f"{type(estimator).__name__} is not a supported tree model")
        return
    if validate_data is None:
        raise UnsupportedModel("the exact tree engine needs scikit-learn >= 1.6")
    base = next((c for c in _TREES + FOREST_TYPES + _GB + _HGB if isinstance(estimator, c)), None)
    if base is None:
        raise UnsupportedModel(f"{type(estimator).__name__} is not a supported tree model")
    _check_response(estimator, response_method)
    if getattr(type(estimator), response_method) is not getattr(base, response_method):
        raise UnsupportedModel(f"{type(estimator).__name__} overrides {response_method}")
    check_is_fitted(estimator)
    private = {
        _HGB: ("_predictors", "_baseline_prediction", "_bin_mapper", "_loss", "_preprocess_X"),
        _GB: ("_raw_predict_init", "_loss"),
    }
    for kinds, names in private.items():  # scikit-learn internals this module reads
        if isinstance(estimator, kinds) and not all(hasattr(estimator, n) for n in names):
            raise UnsupportedModel(f"unexpected {type(estimator).__name__} internals (scikit-learn version)")


def to_array(estimator, X) -> np.ndarray:
    """Rows as the estimator's trees see them (its own validation and preprocessing)."""
    if isinstance(estimator, _HGB):
        return np.asarray(estimator._preprocess_X(X, reset=False), dtype=np.float64)
    nan_ok = (not isinstance(estimator, _GB)) and get_tags(estimator).input_tags.allow_nan
    return validate_data(
        estimator, X, dtype=np.float32, reset=False, ensure_all_finite="allow-nan" if nan_ok else True
    )


def model_grid(model: TreeModel, j: int, values) -> np.ndarray:
    """Grid values of input column ``j`` as the trees see them (category codes for HGB categoricals)."""
    if model.categories is not None and model.categories[j] is not None:
        return _encode_categories(np.asarray(values, dtype=object), model.categories[j])
    try:
        out = np.asarray(values, dtype=np.float64).astype(model.dtype)
    except (TypeError, ValueError):
        raise ValueError(
            f"The grid of numeric column {j} holds non-numeric values; pass numbers for it."
        ) from None
    as_missing = getattr(model.source, "as_missing", None)  # a ``missing=`` sentinel reads as NaN
    return out if as_missing is None else as_missing(out)


def read_model(estimator, response_method: str) -> TreeModel:
    """Build the :class:`TreeModel` of a fitted supported estimator; raise UnsupportedModel otherwise."""
    if is_external(estimator):
        reader = external_reader(estimator, response_method)
        try:
            table = reader.table(_table, MISSING_CODE)
        except (KeyError, ValueError, TypeError) as exc:
            raise UnsupportedModel(f"unexpected model dump ({exc})") from None
        fields = {"link": reader.link, "offset": np.zeros(table["value"].shape[1]), "categories": None,
                  "columns": np.arange(reader.n_features), "categorical": reader.categorical(),
                  "dtype": reader.dtype, "source": reader}
    else:
        check_supported(estimator, response_method)
        if isinstance(estimator, _HGB):
            table, offset = _hgb_tables(estimator)
            columns, categories = _hgb_columns(estimator)
            categorical, dtype = np.asarray(estimator._bin_mapper.is_categorical_, dtype=bool), np.float64
        else:
            table, offset = _sk_tables(estimator)
            columns, categories = np.arange(estimator.n_features_in_), None
            categorical, dtype = np.zeros(estimator.n_features_in_, dtype=bool), np.float32
        fields = {"link": _link(estimator, response_method), "offset": offset, "columns": columns,
                  "categories": categories, "categorical": categorical, "dtype": dtype}
    link, n_raw = fields["link"], table["value"].shape[1]
    n_out = n_raw if link is None else np.asarray(link(np.zeros((1, n_raw)))).reshape(1, -1).shape[1]
    return TreeModel(n_out=n_out, **fields, **table)


def convert_quietly(estimator, X) -> np.ndarray:
    """``to_array(estimator, X)`` with warnings silenced (used by ``supports``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_array(estimator, X)
