"""compute_pd_many: one model read for several feature sets; auto picks an exact engine."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import partial_dependence
from sklearn.linear_model import LinearRegression
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_prepared as cost_mod
import pdpboot.engine._tree_prepared as prepared_mod
from pdpboot import Grid
from pdpboot.engine import compute_pd, compute_pd_many


def _fitted():
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    return X, RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)

@pytest.fixture(autouse=True)
def _one_thread():
    """Tree models predict with OpenMP; many tiny predicts are slow on a busy machine."""
    with threadpool_limits(limits=1):
        yield



@pytest.mark.parametrize("method", ["auto", "tree", "brute"])
def test_many_equals_sklearn_brute(method):
    X, est = _fitted()
    sets = [[0], [1, 2], [3]]
    grids = [[np.linspace(0.1, 0.9, 4)], [np.linspace(0.2, 0.8, 3), np.linspace(0, 1, 2)],
             [np.array([0.5])]]
    out = compute_pd_many(est, X, sets, grids, response_method="predict", method=method, individual=True)
    assert len(out) == 3
    for (avg, ice), s, g in zip(out, sets, grids):
        ref = partial_dependence(est, X, s, custom_values=dict(zip(s, g)), method="brute", kind="both")
        np.testing.assert_allclose(avg, ref["average"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(ice[:, 0], ref["individual"][0], rtol=0, atol=1e-12)
        single = compute_pd(est, X, s, g, response_method="predict", method=method)[0]
        np.testing.assert_allclose(single, avg, rtol=0, atol=1e-12)


def test_model_is_read_once(monkeypatch):
    X, est = _fitted()
    calls = []
    real = prepared_mod.read_model
    monkeypatch.setattr(prepared_mod, "read_model", lambda *a: calls.append(1) or real(*a))
    compute_pd_many(est, X, [[0], [1], [2]], [[np.array([0.5])]] * 3, response_method="predict",
                    method="tree")
    assert len(calls) == 1


def test_model_is_read_once_per_refit_for_both_passes(monkeypatch):
    """A refit whose 1-D sets keep ICE (heterogeneity) and whose pair does not makes two engine passes:
    the model is read once for both, and every PD still equals scikit-learn's brute force."""
    from pdpboot import bootstrap_partial_dependence

    X, est = _fitted()
    y = est.predict(X)
    calls = []
    real = prepared_mod.read_model
    monkeypatch.setattr(prepared_mod, "read_model", lambda *a: calls.append(1) or real(*a))
    res = bootstrap_partial_dependence(RandomForestRegressor(n_estimators=3, random_state=0), X, y, [0, (1, 2)],
                                       n_resamples=2, statistics={"heterogeneity": True}, grid=Grid(4), rng=0)
    assert len(calls) == 3  # the full-data fit and two refits: one reading each
    assert res["x0"].ds.pd.shape[-1] == 4 and "ice_sd" in res["x0"].ds


def test_auto_falls_back_to_brute_when_cheaper(monkeypatch):
    X, est = _fitted()
    monkeypatch.setitem(cost_mod._COST, "kernel_visit", 1.0)  # make the tree engine look expensive
    monkeypatch.setitem(cost_mod._COST, "kernel_node", 1.0)
    plan = prepared_mod.PreparedTrees(est, X, "predict").plan((0,), [np.array([0.5])])
    assert not plan.prefers_tree()
    avg, _ = compute_pd(est, X, [0], [np.array([0.2, 0.5])], response_method="predict")
    ref = partial_dependence(est, X, [0], custom_values={0: [0.2, 0.5]}, method="brute")["average"]
    np.testing.assert_allclose(avg, ref, rtol=0, atol=1e-12)


def test_bad_arguments():
    X, est = _fitted()
    with pytest.raises(ValueError, match="one list of grids per feature set"):
        compute_pd_many(est, X, [[0], [1]], [[np.array([0.5])]], response_method="predict")
    with pytest.raises(ValueError, match="method"):
        compute_pd_many(est, X, [[0]], [[np.array([0.5])]], response_method="predict", method="fast")
    with pytest.raises(ValueError, match="method='tree'"):
        compute_pd_many(LinearRegression().fit(X, X[:, 0]), X, [[0]], [[np.array([0.5])]],
                        response_method="predict", method="tree")
