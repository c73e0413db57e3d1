"""The compiled walk of the tree engine (numba) equals scikit-learn brute force to 1e-12."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_compiled as compiled_mod
import pdpboot.engine._tree_prepared as cost_mod
import pdpboot.engine._tree_prepared as prepared_mod
from pdpboot.engine import compute_pd, compute_pd_many
from pdpboot.engine.tree import PreparedTrees

from .test_tree import _data, _grid, brute_ice

TOL = 1e-12


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(limits=1):
        yield


def check_kernel_exact(est, X, idx, grids, method, weights=None, tol=TOL, rtol=0.0):
    """Compiled walk == brute force (average alone, average + ICE)."""
    prepared = PreparedTrees(est, X, method)
    plan = prepared.plan(idx, grids)
    assert plan.boxes is not None
    ref = brute_ice(est, X, idx, grids, method)
    w = np.ones(ref.shape[0]) if weights is None else weights
    ref_avg = np.tensordot(w, ref, axes=1) / w.sum()
    avg, ice = prepared.partial_dependence(plan, weights=weights)
    assert ice is None
    np.testing.assert_allclose(avg, ref_avg, rtol=rtol, atol=tol)
    avg2, ice = prepared.partial_dependence(plan, weights=weights, individual=True)
    np.testing.assert_allclose(ice, ref, rtol=rtol, atol=tol)
    np.testing.assert_allclose(avg2, ref_avg, rtol=rtol, atol=tol)


REGRESSORS = [
    DecisionTreeRegressor(random_state=0),
    RandomForestRegressor(n_estimators=5, random_state=0),
    ExtraTreesRegressor(n_estimators=3, min_samples_leaf=2, random_state=0),
    GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0),
    HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=15, min_samples_leaf=5, random_state=0),
]


@pytest.mark.parametrize("est", REGRESSORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("idx", [(0,), (2,), (0, 1)])
def test_kernel_regressors_exact(est, idx):
    X, y = _data()
    est.fit(X, y)
    grids = [_grid(est, X, j) for j in idx]  # includes points on / next to split thresholds
    check_kernel_exact(est, X, idx, grids, "predict")


@pytest.mark.parametrize("est", [DecisionTreeRegressor(random_state=0), RandomForestRegressor(4, random_state=0),
                                 HistGradientBoostingRegressor(max_iter=4, random_state=0)],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("idx", [(1,), (0, 3)])
def test_kernel_nan_and_weights(est, idx):
    """NaN rows follow the missing direction; integer and fractional weights (with zeros)."""
    X, y = _data(nan=True)
    est.fit(X, y)
    grids = [_grid(est, X, j, n=4) for j in idx]
    rng = np.random.default_rng(3)
    check_kernel_exact(est, X, idx, grids, "predict", weights=rng.integers(0, 3, len(X)).astype(float))
    check_kernel_exact(est, X, idx, grids, "predict", weights=rng.random(len(X)) * (rng.random(len(X)) < 0.7))


@pytest.mark.parametrize(
    "est",
    [
        RandomForestClassifier(n_estimators=4, random_state=0),
        GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0),
        HistGradientBoostingClassifier(max_iter=4, max_leaf_nodes=8, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("classes", [2, 3])
def test_kernel_classifier_probabilities(est, classes):
    """Multi-output (class probabilities; boosting applies its link per row and grid point)."""
    X, y = _data(classes=classes)
    est.fit(X, y)
    for idx in [(0,), (0, 1)]:
        check_kernel_exact(est, X, idx, [_grid(est, X, j, n=4) for j in idx], "predict_proba")


def test_kernel_categorical_complement_split():
    """HGB with a categorical column: categorical C-splits are looked up in the node bitsets."""
    X, y = _data()
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["x3"] = pd.Categorical(np.where(X[:, 3] > 0.5, "b", np.where(X[:, 3] > 0.2, "a", "c")))
    df.loc[::7, "x3"] = np.nan
    est = HistGradientBoostingRegressor(max_iter=6, categorical_features="from_dtype", random_state=0).fit(df, y)
    for idx in [(0,), (0, 1)]:
        check_kernel_exact(est, df, idx, [_grid(est, X, j, n=4) for j in idx], "predict")



def _categorical_frame(n=300, seed=0, n_cats=4):
    X, y = _data(n=n, seed=seed)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    cats = np.array([f"c{k}" for k in range(n_cats)], dtype=object)
    codes = np.minimum((X[:, 3] * n_cats).astype(int), n_cats - 1)
    df["x3"] = pd.Categorical(cats[codes], categories=list(cats))
    df.loc[::9, "x3"] = np.nan
    return df, y + 3 * (codes % 3 == 1), cats, X


def test_kernel_categorical_feature_of_interest():
    """HGB native categorical features of interest: mask axes of the compiled walk (1-D, 2-D with a
    numeric axis either side, a grid value unseen in fit, NaN in the rows), average and ICE, weights."""
    df, y, cats, X = _categorical_frame()
    est = HistGradientBoostingRegressor(max_iter=8, categorical_features="from_dtype", random_state=0).fit(df, y)
    g_cat = np.array([cats[2], cats[0], cats[3], cats[1]], dtype=object)  # not sorted: the caller's order
    g_num = np.quantile(X[:, 0], np.linspace(0.05, 0.95, 5))
    w = np.random.default_rng(3).integers(0, 3, len(df)).astype(float)
    for idx, grids in [((3,), [g_cat]), ((3, 0), [g_cat, g_num]), ((0, 3), [g_num, g_cat[:3]])]:
        check_kernel_exact(est, df, idx, grids, "predict")
        check_kernel_exact(est, df, idx, grids, "predict", weights=w)


def test_kernel_categorical_classifier_and_long_grid():
    """Class probabilities with a categorical feature of interest (link per row); a mask axis longer
    than 62 points is not the compiled walk's case: brute force with method="auto", an error with "tree"."""
    df, y, cats, _ = _categorical_frame(n=400, seed=1, n_cats=70)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    est = HistGradientBoostingClassifier(max_iter=4, categorical_features="from_dtype", random_state=0)
    est.fit(df, labels)
    check_kernel_exact(est, df, (3,), [cats[:6]], "predict_proba")
    plan = PreparedTrees(est, df, "predict_proba").plan((3,), [cats[:63]])
    assert plan.boxes is None and not plan.prefers_tree()
    with pytest.raises(ValueError, match="at most 62 points"):
        compute_pd(est, df, (3,), [cats[:63]], response_method="predict_proba", method="tree")
    choices = []
    avg, _ = compute_pd_many(est, df, [(3,)], [[cats[:63]]], response_method="predict_proba", choices=choices)[0]
    assert choices[0].engine == "brute"
    ref = brute_ice(est, df, (3,), [cats[:63]], "predict_proba").mean(axis=0)
    np.testing.assert_allclose(avg, ref, rtol=0, atol=TOL)


def test_kernel_nan_grid_value():
    """A numeric feature of interest whose grid holds NaN (HGB sends it the missing way): a mask axis."""
    X, y = _data(nan=True)
    est = HistGradientBoostingRegressor(max_iter=6, random_state=0).fit(X, y)
    g = np.concatenate([_grid(est, X, 1, n=4), [np.nan]])
    check_kernel_exact(est, X, (1,), [g], "predict")
    check_kernel_exact(est, X, (1, 0), [g, _grid(est, X, 0, n=3)], "predict")


def test_kernel_onehot_pipeline_feature_of_interest():
    """One-hot (and NaN-grid) features of interest of a Pipeline: the compiled walk's mask axes, == brute 1e-9."""
    from pdpboot.engine.pipeline import prepare_pipeline

    from .test_pipeline import GRIDS, _frame, _pipe

    X, y = _frame()
    est = _pipe(RandomForestRegressor(n_estimators=4, random_state=0)).fit(X, y)
    prepared = prepare_pipeline(est, X, "predict")
    for cols in [("c",), ("b",), ("c", "d"), ("a", "c"), ("c", "b")]:
        idx = [list(X.columns).index(c) for c in cols]
        grids = [GRIDS[c] for c in cols]
        assert prepared.plan(idx, grids).boxes is not None
        ref = brute_ice(est, X, idx, grids, "predict")
        (avg, ice), = compute_pd_many(est, X, [idx], [grids], response_method="predict", method="tree",
                                      individual=True)
        np.testing.assert_allclose(ice, ref, rtol=0, atol=1e-9)
        (avg2, _), = compute_pd_many(est, X, [idx], [grids], response_method="predict", method="tree")
        np.testing.assert_allclose(avg2, ref.mean(axis=0), rtol=0, atol=1e-9)


def test_kernel_deep_forest_and_compute_pd():
    """Fully grown trees (deep paths: the walk's stack grows) through compute_pd's auto choice."""
    X, y = _data(n=600, p=6, seed=2)
    est = RandomForestRegressor(n_estimators=8, random_state=0).fit(X, y)
    grids = [np.quantile(X[:, 0], np.linspace(0.05, 0.95, 20)), np.quantile(X[:, 1], np.linspace(0.1, 0.9, 7))]
    for idx, g in [((0,), grids[:1]), ((0, 1), grids)]:
        avg, ice = compute_pd(est, X, idx, g, response_method="predict", method="tree", individual=True)
        ref_avg, ref_ice = compute_pd(est, X, idx, g, response_method="predict", method="brute", individual=True)
        np.testing.assert_allclose(avg, ref_avg, rtol=0, atol=TOL)
        np.testing.assert_allclose(ice, ref_ice, rtol=0, atol=TOL)
    plan = PreparedTrees(est, X, "predict").plan((0,), grids[:1])
    assert plan.boxes is not None and plan.prefers_tree()


def test_kernel_external_models():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data()
    est = lightgbm.LGBMRegressor(n_estimators=10, num_leaves=8, min_child_samples=5, verbose=-1).fit(X, y)
    check_kernel_exact(est, X, (0,), [np.quantile(X[:, 0], np.linspace(0.05, 0.95, 6))], "predict")
    xgboost = pytest.importorskip("xgboost")
    est = xgboost.XGBRegressor(n_estimators=10, max_depth=4, n_jobs=1).fit(X, y)
    # XGBoost sums its leaves in float32: equal to its own predictions to 1e-6 relative
    check_kernel_exact(est, X, (0, 1), [np.quantile(X[:, j], [0.1, 0.5, 0.9]) for j in (0, 1)], "predict",
                       tol=1e-5, rtol=1e-6)


def _run_python(code: str, env_extra=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=240)


NO_KERNEL_CHECK = """
    import numpy as np
    import pytest
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor
    from pdpboot.engine import compute_pd, compute_pd_many
    from pdpboot.engine.tree import PreparedTrees, kernel_available, prepare, tree_partial_dependence
    assert not kernel_available()
    X, y = make_friedman1(n_samples=200, n_features=5, random_state=0)
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    g = [np.quantile(X[:, 0], [0.1, 0.5, 0.9])]
    assert prepare(rf, X, "predict") is None
    choices = []
    a, _ = compute_pd_many(rf, X, [(0,)], [g], response_method="predict", choices=choices)[0]
    b, _ = compute_pd(rf, X, (0,), g, response_method="predict", method="brute")
    assert choices[0].engine == "brute" and np.array_equal(a, b)
    with pytest.raises(ValueError, match="needs numba, which is not installed"):
        compute_pd(rf, X, (0,), g, response_method="predict", method="tree")
    with pytest.raises(ValueError, match="needs numba, which is not installed"):
        tree_partial_dependence(rf, X, (0,), g, response_method="predict")
    print("ok")
"""


def test_engine_without_numba():
    """numba missing: the package imports, method="auto" computes by brute force, the tree engine says why not."""
    code = "import sys\nsys.modules['numba'] = None\n" + textwrap.dedent(NO_KERNEL_CHECK) + (
        "assert 'pdpboot.engine._tree_kernel' not in sys.modules\n")
    out = _run_python(code)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


def test_auto_prefers_brute_when_grid_is_tiny(monkeypatch):
    """The cost model compares the compiled walk with brute force (tiny model, one grid point)."""
    X, y = _data(n=40)
    est = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    plan = PreparedTrees(est, X, "predict").plan((0,), [np.array([0.5])])
    assert plan.boxes is not None
    monkeypatch.setitem(cost_mod._COST, "kernel_visit", 1.0)
    plan = PreparedTrees(est, X, "predict").plan((0,), [np.array([0.5])])
    assert not plan.prefers_tree()


def test_kernel_row_blocks(monkeypatch):
    """Rows walked in several blocks (cache-sized at large n): same PD, ICE and weights."""
    monkeypatch.setattr(compiled_mod, "_KERNEL_ROW_BLOCK", 64)
    X, y = _data(n=300, seed=4)
    est = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    w = np.random.default_rng(5).integers(0, 3, len(X)).astype(float)
    for idx in [(0,), (0, 1)]:
        grids = [_grid(est, X, j, n=4) for j in idx]
        check_kernel_exact(est, X, idx, grids, "predict", weights=w)


def _check_many(est, X, sets, grids, weights=None, tol=TOL):
    """``partial_dependence_many`` (the shared walks) == brute force for each set."""
    prepared = PreparedTrees(est, X, "predict")
    plans = [prepared.plan(idx, g) for idx, g in zip(sets, grids)]
    out = prepared.partial_dependence_many(plans, weights=weights)
    w = np.ones(len(X)) if weights is None else weights
    for idx, g, (avg, ice) in zip(sets, grids, out):
        assert ice is None
        ref = np.tensordot(w, brute_ice(est, X, idx, g, "predict"), axes=1) / w.sum()
        np.testing.assert_allclose(avg, ref, rtol=0, atol=tol)


@pytest.mark.parametrize("est", [HistGradientBoostingRegressor(max_iter=6, max_leaf_nodes=12, random_state=0),
                                 RandomForestRegressor(n_estimators=3, random_state=0),
                                 GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0)],
                         ids=lambda e: type(e).__name__)
def test_shared_walks_exact(est):
    """Curves, surfaces and overlapping sets (a column of interest in one set is a complement column of
    another), with NaN rows, integer weights with zeros and non-integer weights (no bitset walk), == brute 1e-12."""
    X, y = _data(nan=isinstance(est, HistGradientBoostingRegressor))
    est.fit(X, y)
    g = {j: _grid(est, X, j, n=4) for j in range(4)}
    sets = [(0,), (1,), (2,), (0, 1), (1, 0), (3, 2), (1, 3)]
    grids = [[g[j] for j in s] for s in sets]
    _check_many(est, X, sets, grids)
    rng = np.random.default_rng(5)
    _check_many(est, X, sets, grids, weights=rng.integers(0, 3, len(X)).astype(float))
    _check_many(est, X, sets, grids, weights=rng.random(len(X)))


def test_row_walks_mask_axes_and_compute_pd_many(monkeypatch):
    """Categorical features of interest and a NaN grid (mask axes) without the bitset walk (tested in
    test_tree_bits.py): compute_pd_many gives brute force's averages."""
    monkeypatch.setattr(prepared_mod, "_bits_pay", lambda model, n: False)
    df, y, cats, X = _categorical_frame()
    est = HistGradientBoostingRegressor(max_iter=8, categorical_features="from_dtype", random_state=0).fit(df, y)
    g_cat = np.array([cats[2], cats[0], cats[3], cats[1]], dtype=object)
    g_num = np.concatenate([np.quantile(X[:, 0], np.linspace(0.05, 0.95, 5)), [np.nan]])
    g1 = np.quantile(X[:, 1], np.linspace(0.1, 0.9, 4))
    sets, grids = [(3,), (0,), (3, 0), (1,), (0, 1)], [[g_cat], [g_num], [g_cat, g_num], [g1], [g_num, g1]]
    _check_many(est, df, sets, grids)
    out = compute_pd_many(est, df, sets, grids, response_method="predict", method="tree")
    for idx, g, (avg, ice) in zip(sets, grids, out):
        assert ice is None
        np.testing.assert_allclose(avg, brute_ice(est, df, idx, g, "predict").mean(axis=0), rtol=0, atol=TOL)


def test_bits_walk_not_for_fully_grown_forests():
    """One or two rows per leaf: the bitset walk is not taken (the curves walk is)."""
    X, y = _data()
    est = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    assert not compiled_mod._bits_pay(PreparedTrees(est, X, "predict").model, len(X))


def test_non_integer_weights_take_the_curves_walk(monkeypatch):
    """Small trees with non-integer weights: the 1-D curves share the curves walk, the pair walks alone."""
    calls = []
    real = compiled_mod._kernel_pd_curves
    monkeypatch.setattr(prepared_mod, "_kernel_pd_curves", lambda *a: calls.append(len(a[2])) or real(*a))
    X, y = _data()
    est = HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=8, random_state=0).fit(X, y)
    assert compiled_mod._bits_pay(PreparedTrees(est, X, "predict").model, len(X))
    g = {j: _grid(est, X, j, n=3) for j in range(3)}
    sets = [(0,), (2, 1), (1,)]
    _check_many(est, X, sets, [[g[j] for j in s] for s in sets], weights=np.random.default_rng(2).random(len(X)))
    assert calls == [2]


def test_locality_order_is_exact(monkeypatch):
    """Background rows walked in the first tree's leaf order (large n; here forced at n = 300): the PD of
    one walk, of one walk per set and of the shared walks equal brute force to 1e-12, with weights and zeros."""
    monkeypatch.setattr(compiled_mod, "_LOCALITY_MIN_ROWS", 16)
    X, y = _data(n=300, seed=7)
    w = np.random.default_rng(8).integers(0, 3, len(X)).astype(float)
    for est in (RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y),
                HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y)):
        prepared = PreparedTrees(est, X, "predict")
        assert prepared.local is not None and sorted(prepared.local[0]) == list(range(len(X)))
        sets = [(0,), (1,), (2, 3)]
        plans = [prepared.plan(idx, [_grid(est, X, j, n=5) for j in idx]) for idx in sets]
        for bits in (True, False):
            monkeypatch.setattr(prepared_mod, "_bits_pay", lambda model, n, bits=bits: bits)
            for weights in (None, w):
                out = prepared.partial_dependence_many(plans, weights=weights)
                for idx, (avg, _) in zip(sets, out):
                    ref = brute_ice(est, X, idx, [_grid(est, X, j, n=5) for j in idx], "predict")
                    ww = np.ones(len(X)) if weights is None else weights
                    np.testing.assert_allclose(avg, np.tensordot(ww, ref, axes=1) / ww.sum(), rtol=0, atol=TOL)


def test_locality_order_groups_the_first_trees_leaves():
    """The order puts the rows of each leaf of the first tree next to each other (checked with ``apply``)."""
    X, y = _data(n=5000, seed=9)
    est = RandomForestRegressor(n_estimators=2, min_samples_leaf=20, random_state=0).fit(X, y)
    prepared = PreparedTrees(est, X, "predict")
    order = prepared.local[0]
    leaves = est.estimators_[0].apply(X.astype(np.float32))[order]
    changes = np.count_nonzero(np.diff(leaves))
    assert changes == len(np.unique(leaves)) - 1  # each leaf one contiguous run
    np.testing.assert_array_equal(prepared.local[1], prepared.xt[:, order])


def test_average_walk_is_one_block_of_rows(monkeypatch):
    """Each tree is walked once for all rows of an average (no 16k-row blocks: every block re-visited every
    node, a cost growing as rows x nodes)."""
    X, y = _data(n=40000, seed=10)
    est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    kern = compiled_mod._kernel()
    calls = []
    real = kern.walk
    monkeypatch.setattr(kern, "walk", lambda *a: calls.append(1) or real(*a))
    prepared = PreparedTrees(est, X, "predict")
    prepared.partial_dependence(prepared.plan((0,), [_grid(est, X, 0, n=5)]))
    assert len(calls) == 1


@pytest.mark.parametrize("weighted", [False, True])
def test_curve_walk_equals_brute(monkeypatch, weighted):
    """One walk per tree for all 1-D curves of a deep forest (each row's own path once, rows that
    cross a split on a curve's feature carried for that curve alone): every curve equals brute force
    to 1e-12, with NaN rows, integer weights with zeros, a two-output forest, and grids beyond the data."""
    monkeypatch.setattr(prepared_mod, "_bits_pay", lambda model, n: False)
    calls = []
    real = compiled_mod._kernel_pd_curves
    monkeypatch.setattr(prepared_mod, "_kernel_pd_curves", lambda *a: calls.append(1) or real(*a))
    X, y = _data(n=250, seed=11)
    X[::17, 2] = np.nan
    w = np.random.default_rng(12).integers(0, 3, len(X)).astype(float) if weighted else None
    Y = np.column_stack([y, np.sin(X[:, 0])])
    for est in (RandomForestRegressor(n_estimators=6, random_state=0).fit(X, y),
                ExtraTreesRegressor(n_estimators=4, random_state=1).fit(np.nan_to_num(X), Y)):
        Xb = X if isinstance(est, RandomForestRegressor) else np.nan_to_num(X)
        prepared = PreparedTrees(est, Xb, "predict")
        sets = [(0,), (2,), (3,), (1,)]
        grids = [[_grid(est, Xb, j, n=7)] for (j,) in sets]
        grids[3] = [np.linspace(-3.0, 3.0, 9)]  # reaches beyond the data on both sides
        plans = [prepared.plan(idx, g) for idx, g in zip(sets, grids)]
        out = prepared.partial_dependence_many(plans, weights=w)
        for idx, g, (avg, _) in zip(sets, grids, out):
            ref = brute_ice(est, Xb, idx, g, "predict")
            ww = np.ones(len(Xb)) if w is None else w
            np.testing.assert_allclose(avg, np.tensordot(ww, ref, axes=1) / ww.sum(), rtol=0, atol=TOL)
    assert len(calls) == 2


@pytest.mark.parametrize("n_rows", [1, 7, 8, 13, 54])
def test_descend_equals_the_models_predictions(n_rows):
    """The self-check's compiled descent (rows in lock step, the last group partly filled) plus the offset
    reproduces HistGradientBoosting's own predictions: NaN both ways, categorical and numeric splits."""
    from pdpboot.engine import _tree_kernel

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.integers(0, 6, 300).astype(float),
                      "c": rng.normal(size=300)})
    X.loc[rng.random(300) < 0.2, "a"] = np.nan
    X.loc[rng.random(300) < 0.1, "b"] = np.nan
    y = X["a"].fillna(3.0) + np.where(X["b"].isin([1, 4]), 2.0, -1.0) + X["c"] ** 2
    est = HistGradientBoostingRegressor(max_iter=20, categorical_features=[1], random_state=0).fit(X, y)
    prepared = PreparedTrees(est, X, "predict")
    model = prepared.model
    nodes, thr = prepared.kernel_base()
    rows = np.linspace(0, 299, n_rows).round().astype(int)
    raw = _tree_kernel.descend(nodes, thr, np.ascontiguousarray(model.cat_left), np.ascontiguousarray(model.value),
                               np.ascontiguousarray(model.roots, dtype=np.int64),
                               np.ascontiguousarray(prepared.xa[rows]))
    np.testing.assert_allclose(raw[:, 0] + model.offset[0], est.predict(X.iloc[rows]), rtol=0, atol=1e-12)
