"""Tests of the forest infinitesimal jackknife of the forest_ij study (experiments/forest_ij_estimator.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import ndtri
from sklearn.base import clone
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.tree import DecisionTreeRegressor

from experiments import forest_ij_estimator as jk


def _data(n=60, p=3, seed=0, classes=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + X[:, 0] * X[:, 1] + rng.normal(scale=0.5, size=n)
    if classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("forest", [
    RandomForestRegressor(n_estimators=8, random_state=0),
    RandomForestRegressor(n_estimators=5, max_samples=0.5, random_state=1),
    ExtraTreesRegressor(n_estimators=5, bootstrap=True, max_samples=17, random_state=2),
    RandomForestClassifier(n_estimators=6, random_state=3),
    ExtraTreesClassifier(n_estimators=4, bootstrap=True, random_state=4),
])
def test_inbag_counts_match_sklearn_samples_and_reproduce_each_tree(forest):
    classify = "Classifier" in type(forest).__name__
    X, y = _data(classes=3 if classify else None)
    forest.fit(X, y)
    counts = jk.inbag_counts(forest, len(X))
    expected = np.stack([np.bincount(s, minlength=len(X)) for s in forest.estimators_samples_])
    np.testing.assert_array_equal(counts, expected)
    assert (counts.sum(axis=1) == jk.bootstrap_draws(forest, len(X))).all()
    # refitting each tree on the recovered counts (same seed) gives the same tree
    y_fit = np.searchsorted(forest.classes_, y) if classify else y
    for b, tree in enumerate(forest.estimators_):
        refit = clone(tree).fit(X, y_fit, sample_weight=counts[b].astype(float))
        np.testing.assert_array_equal(refit.tree_.feature, tree.tree_.feature)
        np.testing.assert_array_equal(refit.tree_.threshold, tree.tree_.threshold)
        np.testing.assert_array_equal(refit.tree_.value, tree.tree_.value)
        np.testing.assert_array_equal(refit.predict(X), tree.predict(X))


def test_check_training_rows_accepts_the_training_data_and_rejects_shuffled_rows():
    X, y = _data()
    forest = RandomForestRegressor(n_estimators=4, min_samples_leaf=3, random_state=0).fit(X, y)
    counts = jk.inbag_counts(forest, len(X))
    jk.check_training_rows(forest, X, counts)
    with pytest.raises(ValueError, match="not the data this forest was fitted on"):
        jk.check_training_rows(forest, X[::-1], counts)


def test_unsupported_forests_are_refused_with_a_reason():
    X, y = _data()
    with pytest.raises(ValueError, match="bootstrap=False"):
        jk.inbag_counts(ExtraTreesRegressor(n_estimators=2).fit(X, y), len(X))
    with pytest.raises(TypeError, match="bootstrap_partial_dependence"):
        jk.inbag_counts(GradientBoostingRegressor(n_estimators=2).fit(X, y), len(X))
    with pytest.raises(ValueError, match="class_weight"):
        jk.inbag_counts(RandomForestClassifier(n_estimators=2, class_weight="balanced"), len(X))


def _sklearn_tree_pd_ice(forest, X, features, grid):
    """Per-tree PD and ICE from scikit-learn's brute force (independent of pdpboot)."""
    custom = {f: g for f, g in zip(features, grid)}
    pd_b, ice_b = [], []
    for tree in forest.estimators_:
        res = sk_partial_dependence(tree, X, list(features), custom_values=custom, method="brute",
                                    kind="both", response_method="auto")
        pd_b.append(res["average"])
        ice_b.append(np.moveaxis(res["individual"], 1, 0))  # (n, outputs, *grid)
    return np.array(pd_b), np.array(ice_b)


@pytest.mark.parametrize("classify,features", [(False, (0,)), (True, (0, 1))])
def test_ij_and_jackknife_equal_a_direct_reference(classify, features):
    X, y = _data(n=40, classes=3 if classify else None, seed=5)
    cls = RandomForestClassifier if classify else RandomForestRegressor
    forest = cls(n_estimators=25, min_samples_leaf=3, random_state=1).fit(X, y)
    grid = [np.linspace(-1.5, 1.5, 4)] * len(features)
    counts = jk.inbag_counts(forest, len(X))
    ev = jk.evaluate_trees(forest, X, features, grid, counts=counts, method="lookup",
                           response_method="predict_proba" if classify else "predict")
    pd_b, ice_b = _sklearn_tree_pd_ice(forest, X, features, grid)
    np.testing.assert_allclose(ev.tree_pd, pd_b, atol=1e-12)
    np.testing.assert_allclose(ev.ice, ice_b.mean(axis=0), atol=1e-12)

    n, B = len(X), len(forest.estimators_)
    pd_forest = pd_b.mean(axis=0)
    # direct O(n B) loops, paper's notation
    v_ij = np.zeros_like(pd_forest)
    v_j = np.zeros_like(pd_forest)
    for i in range(n):
        cov = sum((counts[b, i] - counts[:, i].mean()) * (pd_b[b] - pd_forest) for b in range(B)) / B
        v_ij += (cov + (ice_b[:, i].mean(axis=0) - pd_forest) / n) ** 2
        keep = [b for b in range(B) if counts[b, i] == 0]
        loo = np.mean([(pd_b[b] * n - ice_b[b, i]) / (n - 1) for b in keep], axis=0)
        v_j += (n - 1) / n * (loo - pd_forest) ** 2
    spread = sum((pd_b[b] - pd_forest) ** 2 for b in range(B))
    np.testing.assert_allclose(jk.ij_variance(counts, ev.tree_pd, ev.ice, bias_correction=False), v_ij, rtol=1e-10)
    np.testing.assert_allclose(jk.ij_variance(counts, ev.tree_pd, ev.ice), v_ij - n / B**2 * spread, rtol=1e-9,
                               atol=1e-15)
    np.testing.assert_allclose(jk.jackknife_variance(counts, ev.tree_pd, ev.oob_ice, bias_correction=False), v_j,
                               rtol=1e-10)
    np.testing.assert_allclose(jk.jackknife_variance(counts, ev.tree_pd, ev.oob_ice),
                               v_j - (np.e - 1) * n / B**2 * spread, rtol=1e-9, atol=1e-15)


def test_influence_is_the_derivative_of_the_bagged_pd_functional():
    """Enumerate all n^m bootstrap draws of a tiny data set: the 'forest' of all of them is the
    ideal bagged learner, and the PD functional theta(P) = sum_j P_j f_P(z, x_jC) is a polynomial
    in the row probabilities P.  Its derivative along e_i - P0 (finite differences) must be n U_i."""
    rng = np.random.default_rng(3)
    n = 4
    X = rng.normal(size=(n, 2))
    y = X[:, 0] * X[:, 1] + X[:, 1]
    grid = [np.array([-0.5, 0.2, 1.0])]
    seqs = np.array(list(itertools.product(range(n), repeat=n)))  # all 256 draw sequences
    counts = np.stack([np.bincount(s, minlength=n) for s in seqs])
    ice_all = []  # (seq, row, grid)
    for c in counts:
        tree = DecisionTreeRegressor(random_state=0).fit(X, y, sample_weight=c.astype(float))
        rows = np.repeat(X[:, None, :], len(grid[0]), axis=1)
        rows[:, :, 0] = grid[0]
        ice_all.append(tree.predict(rows.reshape(-1, 2)).reshape(n, -1))
    ice_all = np.array(ice_all)
    pd_b = ice_all.mean(axis=1)
    u = jk.ij_influence(counts, pd_b, ice_all.mean(axis=0))

    def theta(p):
        prob = np.prod(p[seqs], axis=1)  # probability of each draw sequence under P
        f = np.tensordot(prob, ice_all, axes=1)  # bagged ICE of every row
        return p @ f

    p0 = np.full(n, 1 / n)
    eps = 1e-5
    for i in range(n):
        direction = np.eye(n)[i] - p0
        deriv = (theta(p0 + eps * direction) - theta(p0 - eps * direction)) / (2 * eps)
        np.testing.assert_allclose(n * u[i], deriv, rtol=1e-6, atol=1e-9)


def test_bias_correction_removes_the_monte_carlo_bias_of_a_bagged_mean():
    """Single-leaf trees: t_b = sum_i N_bi y_i / n, whose ideal IJ variance is sum (y_i - ybar)^2 / n^2
    (the plug-in variance of the mean).  With B = 100 trees and n = 50 rows V_IJ is biased upwards
    by about n/B = 50 %; V_IJ-U must be unbiased to within its Monte Carlo error (and a -2/B term)."""
    rng = np.random.default_rng(11)
    n, B, reps = 50, 100, 1500
    y = rng.normal(size=n)
    target = ((y - y.mean()) ** 2).sum() / n**2
    raw, corrected = [], []
    for _ in range(reps):
        counts = rng.multinomial(n, np.full(n, 1 / n), size=B)
        t = counts @ y / n
        raw.append(jk.ij_variance(counts, t, bias_correction=False))
        corrected.append(jk.ij_variance(counts, t))
    raw, corrected = np.array(raw), np.array(corrected)
    se = corrected.std() / np.sqrt(reps)
    assert raw.mean() / target > 1.4
    assert abs(corrected.mean() - target) < 3 * se + 0.03 * target
    # the jackknife's (e - 1) correction too
    jack = [jk.jackknife_variance(c, c @ y / n) for c in (rng.multinomial(n, np.full(n, 1 / n), size=B)
                                                          for _ in range(400))]
    assert abs(np.mean(jack) / target - 1) < 0.1


def test_supt_critical_value_matches_closed_forms():
    rng = np.random.default_rng(0)
    level = 0.9
    one_point = rng.normal(size=(200, 1, 1))
    # one point: the pointwise normal quantile (up to Monte Carlo error; never below it)
    crit_one = jk.supt_critical_value(one_point, level=level, n_multipliers=20000, rng=1)[0]
    assert ndtri(0.95) <= crit_one < ndtri(0.95) + 0.04
    # P orthogonal influence columns: independent coordinates, Sidak quantile
    n_pts = 8
    u = np.zeros((n_pts, 1, n_pts))
    u[np.arange(n_pts), 0, np.arange(n_pts)] = rng.uniform(0.5, 2, n_pts)
    crit = jk.supt_critical_value(u, level=level, n_multipliers=20000, rng=2)
    sidak = ndtri((1 + level ** (1 / n_pts)) / 2)
    assert crit[0] == pytest.approx(sidak, abs=0.05)
    # perfectly correlated points: back to the pointwise value
    same = np.repeat(rng.normal(size=(50, 1, 1)), 6, axis=2)
    assert jk.supt_critical_value(same, level=level, n_multipliers=20000, rng=3)[0] < ndtri(0.95) + 0.04


def test_evaluate_trees_does_not_depend_on_n_jobs():
    from joblib import parallel_backend

    X, y = _data(n=30)
    forest = RandomForestRegressor(n_estimators=70, max_depth=3, random_state=0).fit(X, y)  # two chunks of trees
    counts = jk.inbag_counts(forest, len(X))
    grid = [np.array([-1.0, 0.0, 1.0])]
    one = jk.evaluate_trees(forest, X, (1,), grid, response_method="predict", counts=counts)
    with parallel_backend("threading"):
        two = jk.evaluate_trees(forest, X, (1,), grid, response_method="predict", counts=counts, n_jobs=2)
    for a, b in ((one.tree_pd, two.tree_pd), (one.ice, two.ice), (one.oob_ice, two.oob_ice)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(one.ice, _ice_by_hand(forest, X, 1, grid[0]), rtol=1e-12)  # the forest's ICE


def _ice_by_hand(forest, X, feature, grid):
    rows = np.repeat(X[:, None, :], len(grid), axis=1)
    rows[:, :, feature] = grid
    return forest.predict(rows.reshape(-1, X.shape[1])).reshape(len(X), 1, len(grid))


def test_leaf_lookup_equals_per_tree_brute_force_across_blocks_and_outputs(monkeypatch):
    """The stacked leaf lookup (method="auto") gives scikit-learn's per-tree predictions exactly, also
    when the grid is split over several blocks, for two regression targets and for class probabilities."""
    X, y = _data(n=30, seed=2)
    monkeypatch.setattr(jk, "_BLOCK_ROWS", 70)  # two grid points (60 rows) per block: 3 blocks for 6 points
    grid = [np.linspace(-1, 1, 3), np.array([-0.5, 0.5])]
    two_targets = ExtraTreesRegressor(n_estimators=9, bootstrap=True, random_state=0).fit(X, np.c_[y, y**2])
    classes = RandomForestClassifier(n_estimators=9, random_state=0).fit(X, np.digitize(y, [-0.5, 0.5]))
    for forest, rm, n_out in ((two_targets, "predict", 2), (classes, "predict_proba", 3)):
        counts = jk.inbag_counts(forest, len(X))
        ev = jk.evaluate_trees(forest, X, (0, 2), grid, response_method=rm, counts=counts, n_outputs=n_out)
        rows = np.repeat(X[:, None, :], 6, axis=1)
        rows[:, :, 0] = np.repeat(grid[0], 2)
        rows[:, :, 2] = np.tile(grid[1], 3)
        flat = rows.reshape(-1, X.shape[1])
        per_tree = np.stack([getattr(t, rm)(flat).reshape(len(X), 6, n_out) for t in forest.estimators_])
        per_tree = per_tree.transpose(0, 1, 3, 2).reshape(len(forest.estimators_), len(X), n_out, 3, 2)
        np.testing.assert_allclose(ev.tree_pd, per_tree.mean(axis=1), rtol=1e-12)
        np.testing.assert_allclose(ev.ice, per_tree.mean(axis=0), rtol=1e-12)
        oob = np.einsum("bi,bi...->i...", (counts == 0).astype(float), per_tree)
        np.testing.assert_allclose(ev.oob_ice, oob, rtol=1e-12, atol=1e-15)
