"""The compiled walk's cost estimate simulates a bounded number of nodes (large fully grown forests)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

import pdpboot.engine._tree_prepared as cost_mod
from pdpboot.engine.tree import PreparedTrees


def _forest():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 4))
    y = X[:, 0] + np.sin(6 * X[:, 1]) + 0.1 * rng.normal(size=300)
    return X, RandomForestRegressor(n_estimators=12, random_state=0).fit(X, y)


@pytest.mark.parametrize(("budget", "expected"), [(None, 8), (10**9, 8), (1, 1), ("three trees", 3)])
def test_cost_simulation_trees_bounded_by_nodes(monkeypatch, budget, expected):
    """At most 8 trees, and no more trees than ``_KERNEL_SAMPLE_NODES`` nodes hold (at least one)."""
    X, est = _forest()
    prepared = PreparedTrees(est, X, "predict")
    per_tree = len(prepared.model.feature) / len(prepared.model.roots)
    if budget == "three trees":
        budget = int(3.5 * per_tree)
    if budget is not None:
        monkeypatch.setattr(cost_mod, "_KERNEL_SAMPLE_NODES", budget)
    kern = cost_mod._kernel()
    seen = []
    real = kern.plan_stats
    monkeypatch.setattr(kern, "plan_stats", lambda *a: seen.append(len(a[3])) or real(*a))
    plan = prepared.plan([0], [np.linspace(0.1, 0.9, 9)])
    assert plan.boxes is not None and seen == [expected]
    assert plan.tree_cost > 0 and plan.brute_cost > 0

