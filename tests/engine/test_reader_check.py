"""Tree readers that parsed a model wrongly: the three cases found (regressions), and the self-check.

Every expected value comes from the model's own ``predict`` (brute force here, or
``sklearn.inspection.partial_dependence(method="brute")``), never from the tree engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.inspection import partial_dependence
from threadpoolctl import threadpool_limits

from pdpboot.engine import compute_pd

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(limits=1):
        yield


def _data(n=600, seed=0, zeros=0.2):
    """x0 is exactly 0 in a share ``zeros`` of the rows (the value a ``missing=0`` model treats as missing)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(n) < zeros, 0] = 0.0
    y = 3 * X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] * X[:, 0] + rng.normal(size=n) * 0.1
    return X, y


def _brute(est, X, j, grid):
    """The model's own predict at every (row, grid value), averaged: the reference."""
    out = []
    for v in grid:
        Xv = X.copy()
        Xv[:, j] = v
        out.append(np.mean(est.predict(Xv)))
    return np.array(out)


def _assert_tree_equals_brute(est, X, j, grid, atol):
    tree, _ = compute_pd(est, X, [j], [grid], response_method="predict", method="tree")
    ref = _brute(est, X, j, grid)
    np.testing.assert_allclose(tree[0], ref, rtol=0, atol=atol)
    sk = partial_dependence(est, X, [j], custom_values={j: grid}, method="brute", kind="average")["average"][0]
    np.testing.assert_allclose(tree[0], sk, rtol=0, atol=atol)


def test_xgboost_missing_zero_sentinel():
    """``XGBRegressor(missing=0.0)``: every 0 in the input is missing (was read as the number 0)."""
    X, y = _data()
    est = xgb.XGBRegressor(n_estimators=40, max_depth=4, missing=0.0, n_jobs=1).fit(X, y)
    grid = np.array([-2.0, -1.0, -0.3, 0.0, 0.4, 1.0, 2.0])
    _assert_tree_equals_brute(est, X, 0, grid, atol=1e-4)


def test_xgboost_missing_sentinel_grid_point():
    """``missing=-999``: the sentinel as a grid value is missing too (the grid path converts it)."""
    X, y = _data()
    X[X[:, 0] == 0.0, 0] = -999.0
    est = xgb.XGBRegressor(n_estimators=40, max_depth=4, missing=-999.0, n_jobs=1).fit(X, y)
    grid = np.array([-999.0, -1.5, 0.0, 1.5])
    _assert_tree_equals_brute(est, X, 0, grid, atol=1e-4)


def test_lightgbm_reg_sqrt_back_transformed():
    """``reg_sqrt=True``: ``predict`` squares the raw score (sign kept); PD was on the square-root scale."""
    X, y = _data()
    est = lgb.LGBMRegressor(n_estimators=30, reg_sqrt=True, verbose=-1, n_jobs=1).fit(X, np.abs(y) * 3 - 1)
    _assert_tree_equals_brute(est, X, 0, np.linspace(-2, 2, 6), atol=1e-9)


@pytest.mark.parametrize("how", ["callback", "constructor"])
def test_xgboost_early_stopping_uses_best_iteration(how):
    """Early stopping (callback or ``early_stopping_rounds=``): ``predict`` sums the trees up to
    ``best_iteration`` only; the reader used every tree (callback) or declined (constructor)."""
    X, y = _data(n=800)
    kw = ({"callbacks": [xgb.callback.EarlyStopping(rounds=3)]} if how == "callback"
          else {"early_stopping_rounds": 3})
    est = xgb.XGBRegressor(n_estimators=300, max_depth=3, learning_rate=0.5, n_jobs=1, **kw)
    est.fit(X[:600], y[:600], eval_set=[(X[600:], y[600:])], verbose=False)
    assert est.best_iteration + 1 < est.get_booster().num_boosted_rounds()  # the case: trees after the best
    _assert_tree_equals_brute(est, X, 0, np.linspace(-2, 2, 6), atol=1e-4)


def test_lightgbm_early_stopping_and_catboost_best_model():
    """LightGBM's ``best_iteration_`` and CatBoost's ``use_best_model`` shrink what the dump holds."""
    cb = pytest.importorskip("catboost")
    X, y = _data(n=800)
    est = lgb.LGBMRegressor(n_estimators=300, learning_rate=0.5, verbose=-1, n_jobs=1)
    est.fit(X[:600], y[:600], eval_X=(X[600:],), eval_y=(y[600:],), callbacks=[lgb.early_stopping(3, verbose=False)])
    assert est.best_iteration_ < 300
    _assert_tree_equals_brute(est, X, 0, np.linspace(-2, 2, 6), atol=1e-9)
    est = cb.CatBoostRegressor(iterations=200, learning_rate=0.5, depth=3, verbose=0, thread_count=1,
                               allow_writing_files=False, random_seed=0)
    est.fit(X[:600], y[:600], eval_set=(X[600:], y[600:]), early_stopping_rounds=3)
    _assert_tree_equals_brute(est, X, 0, np.linspace(-2, 2, 6), atol=1e-9)
