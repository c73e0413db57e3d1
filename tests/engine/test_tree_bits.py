"""The bitset walk of small trees (``walk_bits``: the rows of a node as one bitset) equals brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor, RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_compiled as compiled_mod
import pdpboot.engine._tree_prepared as prepared_mod
from pdpboot.engine import compute_pd_many
from pdpboot.engine.tree import PreparedTrees

from .test_tree import _data, _grid, brute_ice
from .test_tree_kernel import _categorical_frame

TOL = 1e-12


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(limits=1):
        yield


def _bits_equal_brute(est, X, sets, grids, weights, tol=TOL, rtol=0.0):
    """``_kernel_pd_bits`` (called directly, so the walk is the bitset walk) == weighted brute force."""
    prepared = PreparedTrees(est, X, "predict")
    plans = [prepared.plan(idx, g) for idx, g in zip(sets, grids)]
    assert all(p.boxes is not None for p in plans)
    out = compiled_mod._kernel_pd_bits(prepared.model, prepared.xt, [p.boxes for p in plans], weights)
    assert out is not None
    w = np.ones(len(X)) if weights is None else weights
    for idx, g, avg in zip(sets, grids, out):
        ref = np.tensordot(w, brute_ice(est, X, idx, g, "predict"), axes=1) / w.sum()
        np.testing.assert_allclose(avg, ref, rtol=rtol, atol=tol)


def _weights(n, seed):
    """Bootstrap-like integer weights: zeros and values up to 6 (three bit planes)."""
    return np.random.default_rng(seed).integers(0, 7, n).astype(float)


@pytest.mark.parametrize("est", [HistGradientBoostingRegressor(max_iter=8, max_leaf_nodes=12, random_state=0),
                                 GradientBoostingRegressor(n_estimators=6, max_depth=3, random_state=0),
                                 RandomForestRegressor(n_estimators=3, min_samples_leaf=10, random_state=0)],
                         ids=lambda e: type(e).__name__)
def test_bits_walk_equals_brute(est):
    """Curves, surfaces and overlapping sets (a column of interest in one set is a complement column of
    another), NaN rows going either way, equal and integer weights with zeros: == brute 1e-12."""
    hgb = isinstance(est, HistGradientBoostingRegressor)
    X, y = _data(nan=hgb)
    est.fit(X, y)
    g = {j: _grid(est, X, j, n=4) for j in range(4)}
    sets = [(0,), (1,), (2,), (0, 1), (1, 0), (3, 2), (1, 3)]
    grids = [[g[j] for j in s] for s in sets]
    _bits_equal_brute(est, X, sets, grids, None)
    _bits_equal_brute(est, X, sets, grids, _weights(len(X), 5))


def test_bits_walk_categorical_splits_and_mask_axes():
    """Categorical splits as complement splits (their own bitsets, NaN and unseen codes to the missing
    side) and as mask axes, a NaN grid: == brute 1e-12."""
    df, y, cats, X = _categorical_frame()
    est = HistGradientBoostingRegressor(max_iter=8, categorical_features="from_dtype", random_state=0).fit(df, y)
    g_cat = np.array([cats[2], cats[0], cats[3], cats[1]], dtype=object)
    g_num = np.concatenate([np.quantile(X[:, 0], np.linspace(0.05, 0.95, 5)), [np.nan]])
    g1 = np.quantile(X[:, 1], np.linspace(0.1, 0.9, 4))
    sets, grids = [(3,), (0,), (3, 0), (1,), (0, 1)], [[g_cat], [g_num], [g_cat, g_num], [g1], [g_num, g1]]
    _bits_equal_brute(est, df, sets, grids, None)
    _bits_equal_brute(est, df, sets, grids, _weights(len(df), 6))


def _booster_frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"x{j}": rng.random(n) for j in range(4)})
    X.loc[rng.random(n) < 0.15, "x1"] = np.nan
    cat = rng.choice(["a", "b", "c", "d"], n)
    X["c"] = pd.Categorical(cat, categories=["a", "b", "c", "d"])
    shift = np.select([cat == "a", cat == "b"], [3.0, -2.0], 0.0)
    y = 10 * np.sin(3 * X["x0"]) + 5 * X["x1"].fillna(0.3) * X["x2"] + shift + rng.normal(0, 0.5, n)
    return X, np.asarray(y)


@pytest.mark.parametrize("lib", ["lightgbm", "xgboost"])
def test_bits_walk_boosters(lib):
    """LightGBM and XGBoost (NaN rows, a categorical complement column): the bitset walk equals brute force
    to float32 precision (their predictions are float32) and the row walk to 1e-12."""
    X, y = _booster_frame()
    if lib == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        est = lgb.LGBMRegressor(n_estimators=20, num_leaves=8, min_child_samples=5, n_jobs=1, verbose=-1)
    else:
        xgb = pytest.importorskip("xgboost")
        est = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1, enable_categorical=True, tree_method="hist")
    est.fit(X, y)
    grid = {c: np.nanquantile(X[c], [0.05, 0.3, 0.5, 0.7, 0.95]) for c in ("x0", "x1", "x2")}
    sets = [(0,), (1,), (0, 2)]
    grids = [[grid[f"x{j}"] for j in s] for s in sets]
    w = _weights(len(X), 7)
    scale = np.abs(y).max()
    _bits_equal_brute(est, X, sets, grids, w, tol=1e-6 * scale, rtol=1e-6)
    prepared = PreparedTrees(est, X, "predict")
    plans = [prepared.plan(s, g) for s, g in zip(sets, grids)]
    rows = [prepared.partial_dependence(p, weights=w)[0] for p in plans]
    bits = compiled_mod._kernel_pd_bits(prepared.model, prepared.xt, [p.boxes for p in plans], w)
    for a, b in zip(rows, bits):
        np.testing.assert_allclose(b, a, rtol=0, atol=TOL)


def test_left_bits_are_the_split_conditions():
    """``left_bits``: each numeric entry's bitset holds exactly the rows with ``x <= t`` (ties, thresholds
    between and beyond the values, infinities; NaN rows in no entry and in ``nan_bits``), a categorical
    entry the rows whose code its table sends left; checked row by row against plain comparisons."""
    kern = compiled_mod._kernel()
    rng = np.random.default_rng(0)
    m = 150  # three words, the last one partly used
    xc = np.round(rng.normal(size=(3, m)), 1)
    xc[0, ::7] = np.nan
    xc[1, 3], xc[1, 4] = np.inf, -np.inf
    xc[2] = rng.integers(-1, 6, m)  # codes, some negative or unseen
    xc[2, ::11] = np.nan
    thr0 = np.array([-np.inf, -0.5, 0.0, 0.1, 2.5])
    thr1 = np.array([-1.0, np.nextafter(0.3, 1.0), np.inf])
    cat_left = np.zeros((1, 257), dtype=bool)
    cat_left[0, [0, 2, 256]] = True  # codes 0 and 2, and the missing column, go left
    ent_feat = np.array([0] * len(thr0) + [1] * len(thr1) + [2], dtype=np.int64)
    ent_thr = np.concatenate([thr0, thr1, [0.0]])
    ent_aux = np.array([-1] * (len(thr0) + len(thr1)) + [0], dtype=np.int64)
    bits, nan_bits = kern.left_bits(xc, cat_left, ent_feat, ent_thr, ent_aux, 3)

    def unpack(words):
        return np.unpackbits(words.view(np.uint8), bitorder="little")[:m].astype(bool)

    for e in range(len(ent_feat) - 1):
        np.testing.assert_array_equal(unpack(bits[e]), xc[ent_feat[e]] <= ent_thr[e])
    code = np.where(np.isnan(xc[2]) | (xc[2] < 0), 256, np.nan_to_num(xc[2]).astype(int))
    np.testing.assert_array_equal(unpack(bits[-1]), cat_left[0, code])
    for f in range(2):
        np.testing.assert_array_equal(unpack(nan_bits[f]), np.isnan(xc[f]))
    assert not np.unpackbits(bits.view(np.uint8), axis=1, bitorder="little")[:, m:].any()  # unused bits


def test_weight_planes_exact_or_refused():
    """Integer weights become exact bit planes; fractional or huge weights are refused (None)."""
    w = np.array([1.0, 5.0, 2.0, 7.0] * 20)
    planes, scale = compiled_mod._weight_planes(w)
    bits = np.unpackbits(planes.view(np.uint8), axis=1, bitorder="little")[:, :len(w)]
    np.testing.assert_array_equal(scale @ bits, w)
    assert compiled_mod._weight_planes(np.array([1.0, 0.5])) is None
    assert compiled_mod._weight_planes(np.array([1.0, 2.0**20])) is None


def test_shared_average_takes_the_bits_walk_for_small_trees(monkeypatch):
    """compute_pd_many of a booster takes the bitset walk (once for all sets); fractional weights fall back
    to the row walk (same values); a fully grown forest never takes it."""
    X, y = _data(n=400, seed=3)
    est = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    sets = [(0,), (1,), (0, 2)]
    grids = [[_grid(est, X, j, n=4) for j in s] for s in sets]
    calls = []
    real = compiled_mod._kernel_pd_bits
    monkeypatch.setattr(prepared_mod, "_kernel_pd_bits", lambda *a: calls.append(1) or real(*a))
    out = compute_pd_many(est, X, sets, grids, response_method="predict", method="tree")
    assert calls == [1]
    for idx, g, (avg, _) in zip(sets, grids, out):
        np.testing.assert_allclose(avg, brute_ice(est, X, idx, g, "predict").mean(axis=0), rtol=0, atol=TOL)
    w = np.random.default_rng(4).random(len(X))
    prepared = PreparedTrees(est, X, "predict")
    plans = [prepared.plan(s, g) for s, g in zip(sets, grids)]
    assert real(prepared.model, prepared.xt, [p.boxes for p in plans], w) is None
    for idx, g, (avg, _) in zip(sets, grids, prepared.partial_dependence_many(plans, weights=w)):
        ref = np.tensordot(w, brute_ice(est, X, idx, g, "predict"), axes=1) / w.sum()
        np.testing.assert_allclose(avg, ref, rtol=0, atol=TOL)
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    calls.clear()
    compute_pd_many(forest, X, sets, grids, response_method="predict", method="tree")
    assert calls == []  # one or two rows per leaf: no shared walk, no bitset walk


def test_bits_walk_two_outputs():
    """A two-output forest (two leaf values per leaf, one bitset walk for both): == brute 1e-12."""
    from sklearn.ensemble import ExtraTreesRegressor

    X, y = _data(n=300, seed=8)
    Y = np.column_stack([y, np.sin(X[:, 0])])
    est = ExtraTreesRegressor(n_estimators=4, min_samples_leaf=8, random_state=0).fit(X, Y)
    sets = [(0,), (1, 2)]
    grids = [[_grid(est, X, j, n=4) for j in s] for s in sets]
    _bits_equal_brute(est, X, sets, grids, _weights(len(X), 9))
