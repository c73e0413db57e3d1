"""Pipelines with column-wise preprocessing on the exact tree engine, against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from threadpoolctl import threadpool_limits

from pdpboot.engine import compute_pd_many
from pdpboot.engine.pipeline import column_map, prepare_pipeline

from .test_tree import brute_ice


@pytest.fixture(autouse=True)
def _one_thread():
    """Tree models predict with OpenMP; many tiny predicts are slow on a busy machine."""
    with threadpool_limits(limits=1):
        yield

TOL = 1e-9


def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.random(n),
        "b": np.where(rng.random(n) < 0.15, np.nan, rng.normal(size=n)),
        "c": rng.choice(["x", "y", "z", "w"], n),
        "d": rng.choice(["p", "q"], n),
        "e": rng.random(n) * 3,
    })
    y = 3 * X.a + np.nan_to_num(X.b) + (X.c == "y") * 2 - (X.d == "q") + np.log1p(X.e)
    return X, y.to_numpy()


def _pipe(final, onehot_drop=None):
    pre = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), ["b"]),
        ("one", make_pipeline(SimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(handle_unknown="ignore", drop=onehot_drop)), ["c"]),
        ("ord", OrdinalEncoder(), ["d"]),
        ("log", FunctionTransformer(np.log1p), ["e"]),
    ], remainder=MinMaxScaler())
    return make_pipeline(pre, final)


def _check(est, X, cols, grids, method):
    idx = [list(X.columns).index(c) for c in cols]
    ref = brute_ice(est, X, idx, grids, method)
    (avg, ice), = compute_pd_many(est, X, [idx], [grids], response_method=method, method="tree",
                                  individual=True)
    np.testing.assert_allclose(ice, ref, rtol=0, atol=TOL)
    np.testing.assert_allclose(avg, ref.mean(axis=0), rtol=0, atol=TOL)
    (avg2, _), = compute_pd_many(est, X, [idx], [grids], response_method=method, method="tree")
    np.testing.assert_allclose(avg2, ref.mean(axis=0), rtol=0, atol=TOL)


GRIDS = {"a": np.array([0.1, 0.5, 0.9]), "b": np.array([-1.0, 0.0, 0.7, np.nan]),
         "c": np.array(["y", "x", "w", "z", "unseen"], dtype=object), "d": np.array(["q", "p"], dtype=object),
         "e": np.array([0.2, 1.5, 2.9])}


@pytest.mark.parametrize("cols", [("c",), ("a",), ("b",), ("e",), ("c", "d"), ("a", "c")])
def test_regressor_pipeline_exact(cols):
    X, y = _frame()
    est = _pipe(RandomForestRegressor(n_estimators=4, random_state=0)).fit(X, y)
    assert prepare_pipeline(est, X, "predict") is not None
    _check(est, X, cols, [GRIDS[c] for c in cols], "predict")


def test_classifier_pipeline_onehot_drop_exact():
    X, y = _frame()
    est = _pipe(HistGradientBoostingClassifier(max_iter=3, max_leaf_nodes=7, random_state=0),
                onehot_drop="first")
    est.fit(X, (y > np.median(y)).astype(int))
    assert prepare_pipeline(est, X, "predict_proba") is not None
    _check(est, X, ("c",), [GRIDS["c"][:4]], "predict_proba")
    _check(est, X, ("c", "a"), [GRIDS["c"][:3], GRIDS["a"][:2]], "predict_proba")


def test_not_columnwise_falls_back_to_brute():
    X, y = _frame()
    Xn = X[["a", "e"]]
    poly = make_pipeline(PolynomialFeatures(2), RandomForestRegressor(n_estimators=2, random_state=0)).fit(Xn, y)
    assert prepare_pipeline(poly, Xn, "predict") is None
    mixing = make_pipeline(FunctionTransformer(lambda z: np.asarray(z) - np.asarray(z).mean(axis=1, keepdims=True)),
                           RandomForestRegressor(n_estimators=2, random_state=0)).fit(Xn, y)
    assert prepare_pipeline(mixing, Xn, "predict") is None  # two in, two out, but each output reads both
    normalised = make_pipeline(Normalizer(), RandomForestRegressor(n_estimators=2, random_state=0)).fit(Xn, y)
    assert prepare_pipeline(normalised, Xn, "predict") is None
    marked = make_pipeline(FunctionTransformer(lambda z: z * 2), RandomForestRegressor(n_estimators=2))
    marked.steps[0][1].pdpboot_elementwise = True
    marked.fit(Xn, y)
    assert prepare_pipeline(marked, Xn, "predict") is not None
    for est in (poly, mixing, normalised):
        (avg, _), = compute_pd_many(est, Xn, [[0]], [[GRIDS["a"]]], response_method="predict")
        np.testing.assert_allclose(avg, brute_ice(est, Xn, [0], [GRIDS["a"]], "predict").mean(axis=0),
                                   rtol=0, atol=TOL)


class _Tagged(Pipeline):
    """A Pipeline subclass that changes only its tags (as the command line's pipeline does)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class _Clipped(Pipeline):
    """A Pipeline subclass with its own predict: never read as its steps."""

    def predict(self, X, **params):
        return np.clip(super().predict(X, **params), -1.0, 1.0)


class _Text(TransformerMixin, BaseEstimator):
    """A transformer the engine does not know: each column as text, missing as a level of its own."""

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        frame = pd.DataFrame(X)
        out = frame.astype(str).to_numpy(dtype=object)
        out[frame.isna().to_numpy()] = "(missing)"
        return out

    def get_feature_names_out(self, input_features=None):
        return np.asarray([f"x{j}" for j in range(self.n_features_in_)], dtype=object)


def _text_frame(n=300, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
        "c": rng.choice(["x", "y", "z", "w", "rare"], n, p=[0.4, 0.3, 0.2, 0.09, 0.01]).astype(object),
        "s": rng.choice(["low", "mid", "high"], n).astype(object),
        "e": rng.random(n) * 3,
    })
    X.loc[rng.choice(n, 6, replace=False), "c"] = None
    y = np.nan_to_num(X.a) + (X.c == "y") * 2 - (X.s == "low") + X.e
    return X, y.to_numpy()


def _text_pipeline(final, impute: bool, cls=_Tagged):
    numeric = make_pipeline(SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True)) \
        if impute else "passthrough"
    text = Pipeline([("as_text", _Text()), ("one_hot", OneHotEncoder(handle_unknown="infrequent_if_exist",
                                                                     max_categories=4, sparse_output=False))])
    encode = ColumnTransformer([("numeric", numeric, ["a", "e"]), ("categorical", text, ["c", "s"])],
                               remainder="drop", verbose_feature_names_out=False)
    return cls([("encode", encode), ("model", final)])


@pytest.mark.parametrize("final, impute", [
    (HistGradientBoostingRegressor(max_iter=15, random_state=0), False),
    (GradientBoostingRegressor(n_estimators=10, random_state=0), True),
    (RandomForestRegressor(n_estimators=5, random_state=0), False),
])
def test_pipeline_subclass_with_text_columns_exact(final, impute):
    """A Pipeline subclass, a transformer of unknown type (text), one-hot encoding with infrequent levels and
    an imputer with missing-value indicators: the tree engine, equal to brute force."""
    X, y = _text_frame()
    est = _text_pipeline(final, impute).fit(X, y)
    assert prepare_pipeline(est, X, "predict") is not None
    grids = {"a": np.array([-1.0, 0.0, 0.5, np.nan]), "e": np.array([0.2, 1.5, 2.9]),
             "c": np.array(["y", "x", "rare", None, "unseen"], dtype=object),
             "s": np.array(["high", "low", "mid"], dtype=object)}
    for cols in (("c",), ("s",), ("a",), ("c", "e")):
        _check(est, X, cols, [grids[c] for c in cols], "predict")
        choices = []
        idx = [list(X.columns).index(c) for c in cols]
        compute_pd_many(est, X, [idx], [[grids[c] for c in cols]], response_method="predict", choices=choices)
        assert choices[0].engine == "tree", choices[0].reason


def test_pipeline_subclass_with_its_own_predict_is_not_read():
    X, y = _text_frame()
    est = _text_pipeline(RandomForestRegressor(n_estimators=3, random_state=0), False, cls=_Clipped).fit(X, y)
    assert prepare_pipeline(est, X, "predict") is None


def test_pandas_output_into_categorical_boosting_exact():
    """``set_output(transform="pandas")`` keeps a category dtype for ``categorical_features="from_dtype"``."""
    X, y = _text_frame()
    X = X.assign(c=X.c.astype("category"), s=X.s.astype("category"))
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "e"]), ("cat", "passthrough", ["c", "s"])],
                            verbose_feature_names_out=False).set_output(transform="pandas")
    est = make_pipeline(pre, HistGradientBoostingRegressor(categorical_features="from_dtype", max_iter=10,
                                                           random_state=0)).fit(X, y)
    for col, grid in (("c", np.array(["y", "x", "rare", np.nan], dtype=object)),
                      ("a", np.array([-1.0, 0.3, np.nan]))):
        _check(est, X, (col,), [grid], "predict")


def test_a_dropped_column_is_served_by_brute_force():
    """The engine cannot plan a column the preprocessing drops: brute force for that set, the reason recorded,
    the tree engine for the others (no error)."""
    X, y = _text_frame()
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "e"])], remainder="drop")
    est = make_pipeline(pre, HistGradientBoostingRegressor(max_iter=10, random_state=0)).fit(X, y)
    grids = [[np.array([-1.0, 0.0, 1.0])], [np.array(["x", "y"], dtype=object)], [np.array([0.5, 2.0])]]
    choices = []
    out = compute_pd_many(est, X, [[0], [1], [3]], grids, response_method="predict", choices=choices)
    assert [c.engine for c in choices] == ["tree", "brute", "tree"]
    assert "input column 1 is dropped by the preprocessing" in choices[1].reason
    for (avg, _), j, g in zip(out, [0, 1, 3], grids):
        np.testing.assert_allclose(avg, brute_ice(est, X, [j], g, "predict").mean(axis=0), rtol=0, atol=TOL)
    with pytest.raises(ValueError, match="cannot compute feature set .1. .*dropped.*method='auto' or 'brute'"):
        compute_pd_many(est, X, [[1]], [grids[1]], response_method="predict", method="tree")


def test_column_map():
    X, y = _frame()
    pre = _pipe(RandomForestRegressor(n_estimators=1)).fit(X, y)[:-1]
    maps = column_map(pre[0], X.shape[1])
    # output order: num (b), one (c: 4 columns), ord (d), log (e), remainder (a)
    assert maps == [[7], [0], [1, 2, 3, 4], [5], [6]]
