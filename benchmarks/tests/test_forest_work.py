"""The work counter of ``benchmarks/forest_work.py`` against scikit-learn's own paths (brute force)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

pytest.importorskip("numba")

from benchmarks.forest_work import count_work  # noqa: E402


def test_counts_equal_decision_paths():
    """own = mean own-path length; dev = nodes on some grid value's path off the own path; pieces = the
    leaves reached by grid values other than the own leaf (each from ``decision_path`` / ``apply`` of
    the rows with ``x_j`` set to every grid value); dev_grouped = for each group of rows sharing an own
    leaf, the nodes off the own path that some row of the group reaches (one part per node: rows that
    reach one node took the same path)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=120)
    est = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    grids = [np.linspace(0.1, 0.9, 6), np.array([0.5]), np.linspace(-1.0, 2.0, 4)]
    got = count_work(est, X, grids, trees=3)
    own = 0.0
    devs, piecess, grouped = np.zeros(3), np.zeros(3), np.zeros(3)
    for tree in est.estimators_:
        own_path = tree.decision_path(X).toarray().astype(bool)
        own_leaf = tree.apply(X)
        own += own_path.sum()
        for j, grid in enumerate(grids):
            union = np.zeros_like(own_path)  # per row: nodes on the path of some grid value
            leaves = [set() for _ in range(len(X))]
            for g in grid:
                Xg = X.copy()
                Xg[:, j] = g
                union |= tree.decision_path(Xg).toarray().astype(bool)
                for i, leaf in enumerate(tree.apply(Xg)):
                    leaves[i].add(leaf)
            off_path = union & ~own_path  # per row: the nodes only deviated grid values reach
            devs[j] += off_path.sum()
            grouped[j] += sum(off_path[own_leaf == leaf].any(axis=0).sum() for leaf in np.unique(own_leaf))
            piecess[j] += sum(len(s - {own_leaf[i]}) for i, s in enumerate(leaves))
    norm = 3 * len(X)
    np.testing.assert_allclose(got["own"], own / norm, rtol=1e-12)
    np.testing.assert_allclose(got["dev"], devs / norm, rtol=1e-12)
    np.testing.assert_allclose(got["pieces"], piecess / norm, rtol=1e-12)
    np.testing.assert_allclose(got["dev_grouped"], grouped / norm, rtol=1e-12)
    assert got["rows_per_leaf"] > 1.0 and np.all(grouped < devs)  # out-of-bag rows share leaves
    assert got["pieces"][1] < got["pieces"][0]  # one grid point: fewer pieces than six
