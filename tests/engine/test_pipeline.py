"""Pipelines with column-wise preprocessing on the exact tree engine, against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
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
    unmarked = make_pipeline(FunctionTransformer(lambda z: z * 2), RandomForestRegressor(n_estimators=2))
    unmarked.fit(Xn, y)
    assert prepare_pipeline(unmarked, Xn, "predict") is None
    marked = make_pipeline(FunctionTransformer(lambda z: z * 2), RandomForestRegressor(n_estimators=2))
    marked.steps[0][1].pdpboot_elementwise = True
    marked.fit(Xn, y)
    assert prepare_pipeline(marked, Xn, "predict") is not None
    (avg, _), = compute_pd_many(poly, Xn, [[0]], [[GRIDS["a"]]], response_method="predict")
    np.testing.assert_allclose(avg, brute_ice(poly, Xn, [0], [GRIDS["a"]], "predict").mean(axis=0),
                               rtol=0, atol=TOL)


def test_column_map():
    X, y = _frame()
    pre = _pipe(RandomForestRegressor(n_estimators=1)).fit(X, y)[:-1]
    maps = column_map(pre[0], X.shape[1])
    # output order: num (b), one (c: 4 columns), ord (d), log (e), remainder (a)
    assert maps == [[7], [0], [1, 2, 3, 4], [5], [6]]
