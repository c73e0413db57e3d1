"""XGBoost and LightGBM on the exact tree engine, checked against their own predict by brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from pdpboot.engine import compute_pd_many
from pdpboot.engine.tree import supports, tree_partial_dependence

from .test_tree import brute_ice


@pytest.fixture(autouse=True)
def _one_thread():
    """Tree models predict with OpenMP; many tiny predicts are slow on a busy machine."""
    with threadpool_limits(limits=1):
        yield

RTOL = 1e-6


def _frame(n=150, seed=0, nan=False, categorical=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"x{j}": rng.random(n) for j in range(4)})
    if nan:
        X.loc[rng.random(n) < 0.2, "x1"] = np.nan
        X.loc[rng.random(n) < 0.2, "x0"] = np.nan
    y = 10 * np.sin(3 * X["x0"].fillna(0.5)) + 5 * X["x1"].fillna(0) * X["x2"] + rng.normal(0, 0.5, n)
    if categorical:
        cat = rng.choice(["a", "b", "c", "d"], n)
        X["c"] = pd.Categorical(cat, categories=["a", "b", "c", "d"])
        y = y + np.select([cat == "a", cat == "b", cat == "c"], [3.0, -2.0, 1.0], 0.0)
    return X, np.asarray(y)


def _grid(X, col):
    if isinstance(X[col].dtype, pd.CategoricalDtype):
        return np.array(["b", "d", "a", "c"], dtype=object)
    q = np.nanquantile(X[col], [0.05, 0.3, 0.5, 0.7, 0.95])
    return np.concatenate([q, [np.nan]]) if X[col].isna().any() else q


def _check(est, X, feats, method):
    idx = [list(X.columns).index(c) for c in feats]
    grids = [_grid(X, c) for c in feats]
    assert supports(est, X, method)
    ref = brute_ice(est, X, idx, grids, method)
    avg, ice = tree_partial_dependence(est, X, idx, grids, response_method=method, individual=True)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(ice, ref, rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(avg, ref.mean(axis=0), rtol=RTOL, atol=RTOL * scale)
    avg_only, _ = tree_partial_dependence(est, X, idx, grids, response_method=method)
    np.testing.assert_allclose(avg_only, ref.mean(axis=0), rtol=RTOL, atol=RTOL * scale)


CASES = [("reg", False, False), ("reg", True, False), ("reg", False, True), ("bin", True, True),
         ("multi", False, True)]


def _target(kind, y):
    if kind == "reg":
        return y
    if kind == "bin":
        return (y > np.median(y)).astype(int)
    return np.digitize(y, np.quantile(y, [0.33, 0.66]))


@pytest.mark.parametrize("kind,nan,categorical", CASES)
def test_xgboost_exact(kind, nan, categorical):
    xgb = pytest.importorskip("xgboost")
    X, y = _frame(nan=nan, categorical=categorical)
    cls = xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier
    est = cls(n_estimators=6, max_depth=4, learning_rate=0.5, enable_categorical=categorical,
              tree_method="hist", max_cat_to_onehot=1, n_jobs=1).fit(X, _target(kind, y))
    method = "predict" if kind == "reg" else "predict_proba"
    feats = ["c"] if categorical else ["x0"]
    _check(est, X, feats, method)
    _check(est, X, ["x1", "x0"], method)


@pytest.mark.parametrize("kind,nan,categorical", CASES)
def test_lightgbm_exact(kind, nan, categorical):
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame(nan=nan, categorical=categorical)
    cls = lgb.LGBMRegressor if kind == "reg" else lgb.LGBMClassifier
    est = cls(n_estimators=6, num_leaves=8, min_child_samples=5, learning_rate=0.5, verbose=-1,
              n_jobs=1, min_data_per_group=5, cat_smooth=1).fit(X, _target(kind, y))
    method = "predict" if kind == "reg" else "predict_proba"
    feats = ["c"] if categorical else ["x0"]
    _check(est, X, feats, method)
    _check(est, X, ["x1", "x0"], method)


def test_lightgbm_wide_bitsets_rf_mode_and_nan_as_zero():
    """Categories beyond one 32-bit bitset word, random-forest averaging and NaN read as 0.0 (use_missing off)."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    n = 600
    levels = [f"k{i:02d}" for i in range(45)]
    X, _ = _frame(n=n, seed=3, nan=True)
    codes = rng.integers(0, len(levels), n)
    X["c"] = pd.Categorical(np.array(levels)[codes], categories=levels)
    y = 10 * np.sin(3 * X["x0"].fillna(0)) + np.where(codes >= 33, 4.0, np.where(codes % 3 == 0, -3.0, 0.0))
    y = y + rng.normal(0, 0.3, n)
    wide = lgb.LGBMRegressor(n_estimators=8, num_leaves=12, min_child_samples=5, learning_rate=0.5, verbose=-1,
                             n_jobs=1, min_data_per_group=3, cat_smooth=1, max_cat_threshold=40).fit(X, y)
    words = [int(b) for tree in wide.booster_.model_to_string().split("cat_boundaries=")[1:]
             for b in np.diff(np.array(tree.splitlines()[0].split(), dtype=int))]
    assert max(words) >= 2  # some split's bitset spans two words
    grid = np.array(levels[::4] + ["k44", "k33"], dtype=object)
    idx = [list(X.columns).index("c")]
    ref = brute_ice(wide, X, idx, [grid], "predict")
    avg, _ = tree_partial_dependence(wide, X, idx, [grid], response_method="predict")
    np.testing.assert_allclose(avg, ref.mean(axis=0), rtol=RTOL, atol=RTOL * np.abs(ref).max())
    forest = lgb.LGBMRegressor(boosting_type="rf", n_estimators=7, num_leaves=10, bagging_fraction=0.6,
                               bagging_freq=1, feature_fraction=0.8, use_missing=False, verbose=-1,
                               n_jobs=1).fit(X[["x0", "x1", "x2", "x3"]], y)
    _check(forest, X[["x0", "x1", "x2", "x3"]], ["x1", "x0"], "predict")


def test_lightgbm_zero_as_missing_falls_back_to_brute_force():
    """Zero-as-missing splits are not read: method='tree' says so, 'auto' computes by brute force."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame(nan=True)
    est = lgb.LGBMRegressor(n_estimators=4, num_leaves=8, zero_as_missing=True, verbose=-1, n_jobs=1).fit(X, y)
    grid = [np.array([0.0, 0.3, 0.7])]
    with pytest.raises(ValueError, match="brute"):
        compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="tree")
    (avg, _), = compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="auto")
    np.testing.assert_allclose(avg, brute_ice(est, X, [0], grid, "predict").mean(axis=0), rtol=RTOL)


@pytest.mark.parametrize("edit", ["drop leaf_count", "drop a cat_threshold"])
def test_lightgbm_dump_without_a_tree_line_is_not_read(monkeypatch, edit):
    """A dump missing a line the reader needs (a key of every tree, or one tree's categorical bitset) is
    refused by the reader (method='tree' says so) and 'auto' computes by brute force - never a table
    built from misaligned lines."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame(nan=False, categorical=True)
    est = lgb.LGBMRegressor(n_estimators=6, num_leaves=8, min_data_per_group=5, cat_smooth=1, verbose=-1,
                            n_jobs=1).fit(X, y)
    text = est.booster_.model_to_string()
    key = "leaf_count=" if edit == "drop leaf_count" else "cat_threshold="
    assert key in text
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(key))
    edited = "\n".join(lines[:first] + lines[first + 1:])
    monkeypatch.setattr(type(est.booster_), "model_to_string", lambda self, *a, **k: edited)
    grid = [np.array([0.1, 0.5, 0.9])]
    with pytest.raises(ValueError, match="brute"):
        compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="tree")
    (avg, _), = compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="auto")
    np.testing.assert_allclose(avg, brute_ice(est, X, [0], grid, "predict").mean(axis=0), rtol=RTOL)


def test_xgboost_numpy_poisson_and_many():
    xgb = pytest.importorskip("xgboost")
    X, y = _frame()
    est = xgb.XGBRegressor(n_estimators=5, max_depth=3, objective="count:poisson", n_jobs=1)
    est.fit(X.to_numpy(), np.abs(y))
    Xa = X.to_numpy()
    grids = [np.quantile(Xa[:, 0], [0.1, 0.5, 0.9])], [np.quantile(Xa[:, 2], [0.2, 0.8])]
    out = compute_pd_many(est, Xa, [[0], [2]], list(grids), response_method="predict", method="tree")
    for (avg, _), j, g in zip(out, [0, 2], grids):
        ref = brute_ice(est, Xa, [j], list(g), "predict").mean(axis=0)
        np.testing.assert_allclose(avg, ref, rtol=RTOL)


def test_categorical_splits_present():
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame(categorical=True)
    for est in (xgb.XGBRegressor(n_estimators=6, max_depth=4, enable_categorical=True, max_cat_to_onehot=1,
                                 n_jobs=1),
                lgb.LGBMRegressor(n_estimators=6, num_leaves=8, min_child_samples=5, verbose=-1,
                                  min_data_per_group=5, cat_smooth=1, n_jobs=1)):
        est.fit(X, y)
        model = tree_mod_model(est)
        assert (model.cat_row >= 0).any(), type(est).__name__


def tree_mod_model(est):
    from pdpboot.engine.tree import PreparedTrees

    X, _ = _frame(categorical=True)
    return PreparedTrees(est, X, "predict").model


# --------------------------------------------------------------------------- CatBoost
def _catboost(kind, **kw):
    cb = pytest.importorskip("catboost")
    cls = cb.CatBoostRegressor if kind == "reg" else cb.CatBoostClassifier
    loss = {"reg": "RMSE", "bin": "Logloss", "multi": "MultiClass"}[kind]
    return cls(iterations=8, depth=4, learning_rate=0.5, loss_function=loss, thread_count=1, verbose=0,
               allow_writing_files=False, random_seed=0, **kw)


@pytest.mark.parametrize("kind,nan_mode", [("reg", "Min"), ("reg", "Max"), ("bin", "Min"), ("multi", "Max")])
def test_catboost_exact(kind, nan_mode):
    """Oblivious trees, float32 borders, NaN the nan_mode's way, raw -> probability links == predict by brute."""
    X, y = _frame(nan=True)
    est = _catboost(kind, nan_mode=nan_mode).fit(X, _target(kind, y))
    method = "predict" if kind == "reg" else "predict_proba"
    _check(est, X, ["x0"], method)  # the grid holds NaN
    _check(est, X, ["x1", "x2"], method)


def test_catboost_numpy_input():
    """A CatBoost model fitted and asked on NumPy arrays."""

    X, y = _frame(nan=True)
    est = _catboost("reg").fit(X.to_numpy(), y)
    Xa = X.to_numpy()
    grids = [np.array([0.1, 0.5, 0.9, np.nan])], [np.quantile(Xa[:, 2], [0.2, 0.8])]
    out = compute_pd_many(est, Xa, [[0], [2]], list(grids), response_method="predict", method="tree")
    refs = [brute_ice(est, Xa, [j], list(g), "predict").mean(axis=0) for j, g in zip([0, 2], grids)]
    for (avg, _), ref in zip(out, refs):
        np.testing.assert_allclose(avg, ref, rtol=RTOL, atol=RTOL)


def test_catboost_categorical_features_refused():
    """CTR-based categorical features are not column-wise: brute force with method="auto", an error with "tree"."""
    X, y = _frame(categorical=True)
    X["c"] = X["c"].astype(str)
    est = _catboost("reg").fit(X, y, cat_features=["c"])
    assert not supports(est, X, "predict")
    grid = [np.array([0.2, 0.8])]
    (avg, _), = compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="auto")
    np.testing.assert_allclose(avg, brute_ice(est, X, [0], grid, "predict").mean(axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="method='tree' does not support"):
        compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="tree")


def test_catboost_nan_unseen_in_training():
    """Features without NaN in training (``nan_value_treatment`` "AsIs"): NaN at predict time goes left."""
    X, y = _frame()
    est = _catboost("reg").fit(X, y)
    Xn = X.copy()
    Xn.loc[::4, "x2"] = np.nan
    Xn.loc[::5, "x0"] = np.nan
    _check(est, Xn, ["x0"], "predict")
    _check(est, Xn, ["x2", "x1"], "predict")


def test_lightgbm_dump_numbers_parse_exactly_and_strictly():
    """The LightGBM reader's C parse of a dump line: 17-digit decimals read back to the same doubles, integers
    as integers, a blank line as no numbers (``np.fromstring`` alone reads one bogus number), and anything
    else refused."""
    from pdpboot.engine._lightgbm import parse_numbers

    values = np.random.default_rng(0).normal(scale=1e3, size=500) * 10.0 ** np.arange(-250, 250)
    text = " ".join(f"{v:.17g}" for v in values)
    np.testing.assert_array_equal(parse_numbers(text, np.float64), values)
    np.testing.assert_array_equal(parse_numbers("3 -1 0 -7", np.intp), [3, -1, 0, -7])
    assert parse_numbers("", np.float64).shape == (0,) and parse_numbers("  ", np.intp).shape == (0,)
    for bad, dtype in (("1 2 x", np.float64), ("1.5 2", np.int64), ("1 2,5", np.float64)):
        with pytest.raises(ValueError):
            parse_numbers(bad, dtype)


def test_auto_reads_boosters_of_moderate_size_instead_of_brute_force():
    """The read-cost rule (per node, fixed) against brute force: XGBoost(100, depth 6) and LightGBM(100) at
    n = 1,000 with 50 grid points are read (the exact engine, reading included, was 4.6x / 9x faster than brute
    force there for one curve: ``bench_peers --auto-choice``); tiny data stays with brute force.  Fails on the
    JSON-era constants (30 / 90 us per node), which sent both to brute force."""
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    from pdpboot.engine._tree_prepared import _external_read_dominates

    for est in (xgb.XGBRegressor(n_estimators=100, max_depth=6), lgb.LGBMRegressor(n_estimators=100)):
        # brute: 100 trees x 1,000 rows x 50 points x 30 ns = 0.15 s; read: 5 ms + 100 x 127 (61) nodes x 4 us
        assert not _external_read_dominates(est, 1000, 50)
        # brute: 100 x 50 x 20 x 30 ns = 3 ms < the read's fixed 5 ms
        assert _external_read_dominates(est, 50, 20)


@pytest.mark.parametrize("kind", ["init_score", "no_average", "poisson", "binary", "multiclass", "dart"])
def test_lightgbm_offset_is_read_from_the_dump_without_a_margin_predict(kind, monkeypatch):
    """LightGBM's offset is the dump's (zero: its starting score is in the first trees' leaves, and
    an ``init_score`` given to fit is not part of the model), with no ``predict(raw_score=True)`` per
    fitted model: PD equals brute force over the model's own predictions for every objective, and the
    only predict the engine makes is the self-check's."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _frame(n=300, seed=4, nan=True)
    kw = dict(n_estimators=6, num_leaves=8, min_child_samples=5, learning_rate=0.5, verbose=-1, n_jobs=1)
    fit_kw = {}
    if kind in ("binary", "multiclass"):
        est = lgb.LGBMClassifier(**kw)
        y = _target("bin" if kind == "binary" else "multi", y)
        method = "predict_proba"
    else:
        extra = {"init_score": {}, "no_average": {"boost_from_average": False},
                 "poisson": {"objective": "poisson"}, "dart": {"boosting_type": "dart"}}[kind]
        est = lgb.LGBMRegressor(**kw, **extra)
        y = np.exp(y / 10) if kind == "poisson" else y + 50.0
        method = "predict"
        if kind == "init_score":
            fit_kw = {"init_score": np.full(len(y), 7.5)}
    est.fit(X, y, **fit_kw)
    calls = []
    real = est.predict

    def predict(Z, **kwargs):
        calls.append(kwargs.get("raw_score", False))
        return real(Z, **kwargs)

    monkeypatch.setattr(est, "predict", predict)
    grid = [np.nanquantile(X["x0"], [0.1, 0.5, 0.9])]
    (avg, _), = compute_pd_many(est, X, [[0]], [grid], response_method=method, method="tree")
    assert True not in calls  # no margin predict
    monkeypatch.setattr(est, "predict", real)
    ref = brute_ice(est, X, [0], grid, method).mean(axis=0)
    np.testing.assert_allclose(avg, ref, rtol=RTOL, atol=RTOL * np.abs(ref).max())


def test_lightgbm_wrong_dump_offset_is_caught_by_the_self_check(monkeypatch):
    """The dump's offset is not trusted blindly: a wrong one fails the self-check (brute force with the
    reason under 'auto', an error under 'tree')."""
    lgb = pytest.importorskip("lightgbm")
    from pdpboot.engine._lightgbm import LightGBMReader

    X, y = _frame(n=200, seed=5)
    est = lgb.LGBMRegressor(n_estimators=5, num_leaves=8, verbose=-1, n_jobs=1).fit(X, y)
    monkeypatch.setattr(LightGBMReader, "dump_offset", lambda self: np.full(self.n_raw, 0.25))
    grid = [np.array([0.2, 0.5, 0.8])]
    with pytest.raises(ValueError, match="disagrees with its own predict"):
        compute_pd_many(est, X, [[0]], [grid], response_method="predict", method="tree")
