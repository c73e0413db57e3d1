"""The compiled-routing walk of the tree engine gives the same exact PD/ICE as brute force."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_compiled as compiled_mod
import pdpboot.engine._tree_cost as cost_mod
import pdpboot.engine._tree_numpy as numpy_mod
import pdpboot.engine._tree_prepared as prepared_mod

from .test_tree import _data, _grid, check_exact


@pytest.fixture(autouse=True)
def _one_thread():
    """Tree models predict with OpenMP; many tiny predicts are slow on a busy machine."""
    with threadpool_limits(limits=1):
        yield



@pytest.fixture(autouse=True)
def _force_route(monkeypatch):
    monkeypatch.setattr(compiled_mod, "_KERNEL", False)  # the NumPy walks, also when numba is installed
    monkeypatch.setattr(cost_mod, "_ROUTE_MIN_ROWS", 0)
    monkeypatch.setitem(cost_mod._COST, "word", 1e9)
    monkeypatch.setattr(numpy_mod, "_ROUTE_BLOCK", 64)  # several row blocks
    monkeypatch.setattr(numpy_mod._RouteWalk, "block", 64)


def test_route_walk_is_used():
    X, y = _data()
    est = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    plan = prepared_mod.PreparedTrees(est, X, "predict").plan((0,), [np.array([0.5])])
    assert plan.walk == "route"


REGRESSORS = [
    DecisionTreeRegressor(random_state=0),
    RandomForestRegressor(n_estimators=4, random_state=0),
    ExtraTreesRegressor(n_estimators=3, min_samples_leaf=2, random_state=0),
]


@pytest.mark.parametrize("est", REGRESSORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("idx", [(0,), (2,), (0, 1)])
@pytest.mark.parametrize("nan", [False, True])
def test_route_regressors_exact(est, idx, nan):
    X, y = _data(nan=nan)
    if nan and isinstance(est, ExtraTreesRegressor):
        pytest.skip("ExtraTrees reject NaN")
    est.fit(X, y)
    grids = [_grid(est, X, j) for j in idx]
    w = np.random.default_rng(1).integers(0, 3, len(X)).astype(float)
    check_exact(est, X, idx, grids, "predict", weights=w if nan else None)


@pytest.mark.parametrize("idx", [(0,), (0, 1)])
def test_route_hgb_float64_ranks_exact(idx):
    """HGB inputs are float64: routed on threshold ranks."""
    X, y = _data(nan=True)
    est = HistGradientBoostingRegressor(max_iter=4, max_leaf_nodes=15, min_samples_leaf=5, random_state=0)
    est.fit(X, y)
    grids = [_grid(est, X, j, n=3) for j in idx]
    check_exact(est, X, idx, grids, "predict")


@pytest.mark.parametrize(
    "est",
    [
        RandomForestClassifier(n_estimators=3, random_state=0),
        GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_route_classifiers_exact(est):
    X, y = _data(classes=3)
    est.fit(X, y)
    grids = [_grid(est, X, j) for j in (1, 3)]
    check_exact(est, X, (1,), grids[:1], "predict_proba")
    check_exact(est, X, (1, 3), grids, "predict_proba")
