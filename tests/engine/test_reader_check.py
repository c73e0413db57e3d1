"""Tree readers that parsed a model wrongly: the three cases found (regressions), and the self-check.

Every expected value comes from the model's own ``predict`` (brute force here, or
``sklearn.inspection.partial_dependence(method="brute")``), never from the tree engine.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import partial_dependence
from threadpoolctl import threadpool_limits

import pdpboot.engine._tree_prepared as prepared_mod
from pdpboot import Grid
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


# --------------------------------------------------------------------------- the self-check
def _forest(n=300):
    from sklearn.ensemble import RandomForestRegressor

    X, y = _data(n=n)
    return X, RandomForestRegressor(n_estimators=10, min_samples_leaf=3, random_state=0).fit(X, y)


def _corrupt_first_tree(monkeypatch, shift=0.5, every=1):
    """Every ``every``-th node of the first tree read ``shift`` too high: a parse error the walks cannot see."""
    import dataclasses


    real = prepared_mod.read_model

    def corrupted(estimator, response_method):
        model = real(estimator, response_method)
        value = model.value.copy()
        first = slice(int(model.roots[0]), int(model.roots[1]) if len(model.roots) > 1 else len(value))
        value[first][::every] += shift
        return dataclasses.replace(model, value=value)

    monkeypatch.setattr(prepared_mod, "read_model", corrupted)


def test_corrupted_parse_falls_back_to_brute_with_the_reason(monkeypatch, caplog):
    from pdpboot.engine import compute_pd_many, record_engine_choices

    X, est = _forest()
    grid = np.linspace(-2, 2, 7)
    _corrupt_first_tree(monkeypatch)
    choices = []
    with record_engine_choices() as recorded, caplog.at_level("WARNING", logger="pdpboot.engine"):
        (avg, _), = compute_pd_many(est, X, [[0]], [[grid]], response_method="predict", choices=choices)
    np.testing.assert_allclose(avg[0], _brute(est, X, 0, grid), rtol=0, atol=1e-12)  # brute, not the corrupted
    assert recorded == choices and len(choices) == 1
    assert choices[0].engine == "brute" and choices[0].fallback
    assert "self-check" in choices[0].reason and "RandomForestRegressor.predict" in choices[0].reason
    assert "self-check" in caplog.text


def test_corrupted_parse_with_method_tree_raises(monkeypatch):
    X, est = _forest()
    _corrupt_first_tree(monkeypatch)
    with pytest.raises(ValueError, match="method='tree'.*disagrees with its own predict"):
        compute_pd(est, X, [0], [np.linspace(-2, 2, 7)], response_method="predict", method="tree")


def test_the_check_catches_a_wrong_grid_conversion(monkeypatch):
    """A reader that converts grid values wrongly (rows right): caught by the grid-value probe rows."""
    import pdpboot.engine._tree_check as check_mod

    X, est = _forest()
    real = check_mod.model_grid
    monkeypatch.setattr(check_mod, "model_grid", lambda model, j, values: real(model, j, values) + 0.7)
    with pytest.raises(ValueError, match="grid values"):
        compute_pd(est, X, [0], [np.linspace(-2, 2, 7)], response_method="predict", method="tree")


def test_an_honest_model_is_checked_once_per_fit(monkeypatch):
    """The verdict is cached per fitted model and parse: several calls and feature sets, one probe;
    a refit in place (same object, other trees) is probed again."""
    import pdpboot.engine._tree_check as check_mod
    from pdpboot.engine import compute_pd_many

    X, est = _forest()
    calls = []
    real = check_mod._probe
    monkeypatch.setattr(check_mod, "_probe", lambda *a, **k: calls.append(1) or real(*a, **k))
    grids = [[np.linspace(-2, 2, 5)], [np.linspace(-1, 1, 4)]]
    choices = []
    for _ in range(3):
        compute_pd_many(est, X, [[0], [1]], grids, response_method="predict", method="tree", choices=choices)
    assert len(calls) == 1
    assert {c.engine for c in choices} == {"tree"}
    compute_pd_many(est, X, [[2]], [[np.array([0.0, 1.0])]], response_method="predict", method="tree")
    assert len(calls) == 2  # a new column: probed on its own
    est.set_params(random_state=1).fit(X, X[:, 0])
    compute_pd_many(est, X, [[0], [1]], grids, response_method="predict", method="tree")
    assert len(calls) == 3


def test_partial_dependence_records_the_engine_and_the_fallback_reason(monkeypatch):
    import pdpboot

    X, est = _forest()
    honest = pdpboot.partial_dependence(est, X, features=[0], grid=Grid(20))
    assert honest.attrs["engine"] == "tree: exact, checked against the model's predictions"
    _corrupt_first_tree(monkeypatch)
    res = pdpboot.partial_dependence(est, X, features=[0], grid=Grid(20))
    assert re.match(r"brute: tree engine failed its self-check: on \d+ probe rows", res.attrs["engine"])
    grid = res["x0"].ds["x0"].values
    np.testing.assert_allclose(res["x0"].ds["pd"].values[0], _brute(est, X, 0, grid), rtol=0, atol=1e-12)


@pytest.mark.parametrize("bug", ["sentinel", "reg_sqrt", "early_stopping"])
def test_the_check_alone_catches_each_historical_bug(bug, monkeypatch):
    """Each of the three readings fixed above, re-introduced: ``method="auto"`` still returns brute force's
    numbers (the self-check refuses the reading) and says why; ``method="tree"`` raises."""
    from pdpboot.engine import _lightgbm, _xgboost, compute_pd_many

    X, y = _data(n=2000)
    if bug == "sentinel":
        monkeypatch.setattr(_xgboost.XGBoostReader, "as_missing", lambda self, values: values)
        est = xgb.XGBRegressor(n_estimators=40, max_depth=4, missing=0.0, n_jobs=1).fit(X, y)
    elif bug == "reg_sqrt":
        real = _lightgbm.booster_link
        monkeypatch.setattr(_lightgbm, "booster_link",
                            lambda *a, **k: real(a[0], a[1], "identity" if a[2] == "signed_square" else a[2], **k))
        est = lgb.LGBMRegressor(n_estimators=30, reg_sqrt=True, verbose=-1, n_jobs=1).fit(X, np.abs(y) * 3)
    else:
        monkeypatch.setattr(_xgboost, "_trees_predict_uses", lambda estimator, gb: len(gb["trees"]))
        est = xgb.XGBRegressor(n_estimators=300, max_depth=3, learning_rate=0.5, n_jobs=1,
                               callbacks=[xgb.callback.EarlyStopping(rounds=3)])
        est.fit(X[:1500], y[:1500], eval_set=[(X[1500:], y[1500:])], verbose=False)
    grid = np.linspace(-2, 2, 120)  # enough grid points for the cost model to pick the tree engine
    choices = []
    (avg, _), = compute_pd_many(est, X, [[0]], [[grid]], response_method="predict", choices=choices)
    assert choices[0].engine == "brute" and choices[0].fallback, choices
    np.testing.assert_allclose(avg[0], _brute(est, X, 0, grid), rtol=0, atol=1e-5)  # float32 predictions
    with pytest.raises(ValueError, match="disagrees with its own predict"):
        compute_pd(est, X, [0], [grid], response_method="predict", method="tree")


def test_tree_partial_dependence_refuses_a_wrong_reading(monkeypatch):
    from pdpboot.engine.tree import tree_partial_dependence

    X, est = _forest()
    _corrupt_first_tree(monkeypatch)
    with pytest.raises(ValueError, match="disagrees with its own predict"):
        tree_partial_dependence(est, X, (0,), [np.linspace(-1, 1, 5)], response_method="predict")


def test_pipeline_reading_is_checked_through_its_own_transforms(monkeypatch):
    """A column-wise Pipeline into a tree model: the probe goes through the pipeline's transforms (grid values
    too); an honest reading passes, a corrupted one falls back to brute force."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from pdpboot.engine import compute_pd_many

    X, y = _data(n=300)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(k=np.where(X[:, 3] > 0, "p", "q"))
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "b", "c"]), ("cat", OneHotEncoder(), ["k"])])
    est = make_pipeline(pre, RandomForestRegressor(n_estimators=10, random_state=0)).fit(df, y)
    sets, grids = [[0], [4]], [[np.linspace(-2, 2, 200)], [np.array(["q", "p"], dtype=object)]]
    honest = []
    out = compute_pd_many(est, df, sets, grids, response_method="predict", method="tree", choices=honest)
    assert {c.engine for c in honest} == {"tree"}
    _corrupt_first_tree(monkeypatch)
    choices = []
    again = compute_pd_many(est, df, sets, grids, response_method="predict", choices=choices)
    assert [c.engine for c in choices] == ["brute", "brute"]
    assert choices[0].fallback and "self-check" in choices[0].reason  # the long grid: auto tried the tree engine
    for (avg, _), (ref, _) in zip(again, out):  # brute force on the corrupted run = the honest tree result
        np.testing.assert_allclose(avg, ref, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- what the probe covers
def _wrong_at(monkeypatch, bad_value):
    """A reading that converts one grid value wrongly, to the far end of the data (every other value and
    every row right)."""
    import pdpboot.engine._tree_check as check_mod

    real = check_mod.model_grid

    def converted(model, j, values):
        out = np.array(real(model, j, values), dtype=float)
        out[np.asarray(values, dtype=float) == bad_value] = 3.0 if bad_value < 0 else -3.0
        return out

    monkeypatch.setattr(check_mod, "model_grid", converted)


@pytest.mark.parametrize("position", [0, 57, 97, 119])
def test_every_grid_value_meets_the_check(position, monkeypatch):
    """A reading wrong at a single grid value of a 120-point grid is caught wherever that value sits
    (the probe held the first 64 values of the cycle only)."""
    X, est = _forest(n=300)
    grid = np.linspace(-2, 2, 120)
    _wrong_at(monkeypatch, grid[position])
    with pytest.raises(ValueError, match="disagrees with its own predict"):
        compute_pd(est, X, [0], [grid], response_method="predict", method="tree")


def test_every_grid_value_meets_the_check_on_few_rows(monkeypatch):
    """Fewer background rows than grid values: rows are repeated so each grid value is still probed
    (the probe had one row per background row: 6 of the 30 values)."""
    X, est = _forest(n=300)
    grid = np.linspace(-2, 2, 30)
    _wrong_at(monkeypatch, grid[23])
    with pytest.raises(ValueError, match="disagrees with its own predict"):
        compute_pd(est, X[:6], [0], [grid], response_method="predict", method="tree")


def test_the_probe_holds_every_grid_value_nan_and_the_sentinel_in_one_call(monkeypatch):
    """One call of the model's predict per check: every grid value of every probed feature, NaN and the
    ``missing=`` sentinel among its rows; the features' missing values on different rows."""
    X, y = _data(n=500)
    est = xgb.XGBRegressor(n_estimators=20, max_depth=3, missing=-999.0, n_jobs=1).fit(X, y)
    seen = []
    real = est.predict

    def predict(Z, **kwargs):
        if not kwargs:
            seen.append(np.array(Z))
        return real(Z, **kwargs)

    monkeypatch.setattr(est, "predict", predict)
    grids = [np.linspace(-2, 2, 50), np.linspace(-1, 1, 9)]
    compute_pd(est, X, [0, 1], grids, response_method="predict", method="tree")
    assert len(seen) == 1  # (the reader's offset comes from predict(output_margin=True), not counted)
    probe = seen[0]
    assert len(probe) == 54  # 50 grid values + 4 missing values: the longest list sets the rows
    for j, grid in enumerate(grids):
        assert set(grid) <= set(probe[:, j])
        assert np.isnan(probe[:, j]).sum() >= 2 and (probe[:, j] == -999.0).sum() >= 2
    assert not (np.isnan(probe[:, 0]) & np.isnan(probe[:, 1])).any()


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_a_bool_column_passes_the_check(library):
    """A NumPy bool column of a DataFrame cannot hold NaN (brute force writes True there, as the probe did):
    the check no longer probes NaN in it, so an honest reading of a bool feature is trusted (it failed)."""
    import pandas as pd

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=300), "flag": rng.random(300) > 0.5})
    y = X["a"] + 2.0 * X["flag"] + rng.normal(size=300) * 0.1
    est = (lgb.LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1, n_jobs=1) if library == "lightgbm"
           else xgb.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1)).fit(X, y)
    tree, _ = compute_pd(est, X, [1], [np.array([False, True])], response_method="predict", method="tree")
    ref = [est.predict(X.assign(flag=v)).mean() for v in (False, True)]
    np.testing.assert_allclose(tree[0], ref, rtol=0, atol=1e-5)


def test_pipeline_grid_values_meet_the_final_models_missing_sentinel():
    """``SimpleImputer(fill_value=-1)`` into ``XGBRegressor(missing=-1)``: a grid value the pipeline turns into
    the sentinel is missing to XGBoost. The pipeline's grid path skipped the reader's sentinel conversion (the
    self-check caught it: brute force every time); now the tree engine equals the pipeline's own predict."""
    import pandas as pd
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    X, y = _data(n=400)
    X[::7, 1] = np.nan
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = make_pipeline(SimpleImputer(strategy="constant", fill_value=-1.0),
                        xgb.XGBRegressor(n_estimators=20, max_depth=3, missing=-1.0, n_jobs=1)).fit(df, y)
    grid = np.array([np.nan, -1.0, -0.5, 0.5, 2.0])
    tree, _ = compute_pd(est, df, [1], [grid], response_method="predict", method="tree")
    ref = [est.predict(df.assign(b=v)).mean() for v in grid]
    np.testing.assert_allclose(tree[0], ref, rtol=0, atol=1e-5)


def _lgb_and_catboost_models():
    cb = pytest.importorskip("catboost")
    X, y = _data(n=400)
    X[::9, 1] = np.nan
    label = (y > np.median(y)).astype(int)
    three = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    fit = dict(verbose=-1, n_estimators=15, n_jobs=1)
    cbk = dict(iterations=15, depth=4, verbose=0, allow_writing_files=False, thread_count=1)
    return X, [
        (lgb.LGBMRegressor(**fit).fit(X, y), "predict", "num_threads"),
        (lgb.LGBMClassifier(**fit).fit(X, label), "predict_proba", "num_threads"),
        (lgb.LGBMClassifier(**fit).fit(X, three), "predict_proba", "num_threads"),
        (cb.CatBoostRegressor(**cbk).fit(X, y), "predict", "thread_count"),
        (cb.CatBoostClassifier(**cbk).fit(X, three), "predict_proba", "thread_count"),
    ]


def test_one_thread_predictions_are_the_same_bits():
    """Why the check may ask LightGBM / CatBoost for one thread: each row's prediction is computed in one
    thread, so the library's default thread count and one thread give identical values (NaN rows too)."""
    X, models = _lgb_and_catboost_models()
    Z = np.vstack([X[:37], X[-20:]])
    for est, method, keyword in models:
        if keyword == "num_threads":
            est.set_params(n_jobs=-1)  # every core at predict time (CatBoost's predict defaults to every core)
        default = getattr(est, method)(Z)
        one = getattr(est, method)(Z, **{keyword: 1})
        np.testing.assert_array_equal(one, default)


def test_the_check_asks_lightgbm_and_catboost_for_one_thread(monkeypatch):
    """The probe goes through the user's own predict / predict_proba with one thread (the library default
    started every core's thread for a few rows: 8 ms of CPU against 1.3 ms), and the engine still equals
    brute force."""
    X, models = _lgb_and_catboost_models()
    grid = np.linspace(-2, 2, 9)
    for est, method, keyword in models:
        calls = []
        real = getattr(est, method)

        def spy(*args, _real=real, _calls=calls, **kwargs):
            _calls.append({k: v for k, v in kwargs.items() if k != "X"})
            return _real(*args, **kwargs)

        monkeypatch.setattr(est, method, spy)
        choices = []
        from pdpboot.engine import compute_pd_many

        (tree, _), = compute_pd_many(est, X, [[0]], [[grid]], response_method=method, method="tree",
                                     choices=choices)
        assert choices[0].engine == "tree"
        assert {keyword: 1} in calls, (type(est).__name__, calls)  # the probe's call
        ref = np.array([real(np.column_stack([X[:, :0], np.full(len(X), v), X[:, 1:]])).mean(axis=0)
                        for v in grid]).T.reshape(tree.shape)
        np.testing.assert_allclose(tree, ref, rtol=0, atol=1e-6)
        monkeypatch.undo()


def test_only_the_librarys_own_method_gets_the_thread_keyword():
    """The thread keyword goes to the LightGBM / CatBoost model read and to its library's own method only: not
    to a subclass's override of it (which may not take the keyword), not to a pipeline, not to XGBoost."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from pdpboot.engine import tree
    from pdpboot.engine._tree_check import _one_thread

    class Logged(lgb.LGBMRegressor):
        def predict(self, X, **kwargs):
            return super().predict(X, **kwargs)

    X, y = _data(n=300)
    est = lgb.LGBMRegressor(n_estimators=5, verbose=-1, n_jobs=1).fit(X, y)
    model = tree.prepare(est, X, "predict").model
    assert _one_thread(model, est, "predict") == {"num_threads": 1}
    assert _one_thread(model, Logged(), "predict") == {}  # not the model read
    from types import SimpleNamespace

    logged = Logged()
    assert _one_thread(SimpleNamespace(source=SimpleNamespace(estimator=logged)), logged, "predict") == {}

    class Plain(lgb.LGBMRegressor):
        pass

    plain = Plain()
    assert _one_thread(SimpleNamespace(source=SimpleNamespace(estimator=plain)), plain, "predict") == {
        "num_threads": 1}
    pipe = make_pipeline(StandardScaler(), lgb.LGBMRegressor(n_estimators=5, verbose=-1, n_jobs=1)).fit(X, y)
    assert _one_thread(model, pipe, "predict") == {}
    xgb_est = xgb.XGBRegressor(n_estimators=5, max_depth=2, n_jobs=1).fit(X, y)
    assert _one_thread(tree.prepare(xgb_est, X, "predict").model, xgb_est, "predict") == {}


def test_probe_rows_are_evenly_spaced_first_and_last_included():
    """i (n - 1) / (k - 1) rounded half up, by hand: 11 rows, 5 probes -> 0, 2.5, 5, 7.5, 10; rows repeat when
    there are fewer rows than probes."""
    from pdpboot.engine._tree_check import probe_rows

    np.testing.assert_array_equal(probe_rows(11, 5), [0, 3, 5, 8, 10])
    np.testing.assert_array_equal(probe_rows(3, 5), [0, 1, 1, 2, 2])  # 0, .5, 1, 1.5, 2
    np.testing.assert_array_equal(probe_rows(1, 4), [0, 0, 0, 0])
    np.testing.assert_array_equal(probe_rows(7, 1), [0])


def test_the_verdict_cache_key_reads_every_part_of_the_reading():
    """The cache key of a verdict changes with any one value the descent reads (a threshold, a leaf value,
    a child, a missing-value direction, a split column): a refit in place that changes only one of them is
    probed again, never answered from the old verdict."""
    import dataclasses

    from pdpboot.engine import tree
    from pdpboot.engine._tree_check import _fingerprint

    X, est = _forest(n=120)
    base = tree.prepare(est, X, "predict").model
    split = int(np.flatnonzero(base.feature >= 0)[1])
    leaf = int(np.flatnonzero(base.feature < 0)[0])

    def changed(field, fn):
        arr = getattr(base, field).copy()
        fn(arr)
        return dataclasses.replace(base, **{field: arr})

    variants = {
        "threshold": changed("threshold", lambda a: a.__setitem__(split, np.nextafter(a[split], np.inf))),
        "value": changed("value", lambda a: a.__setitem__((leaf, 0), a[leaf, 0] + 1e-12)),
        "left": changed("left", lambda a: a.__setitem__(split, base.right[split])),
        "missing_left": changed("missing_left", lambda a: a.__setitem__(split, not a[split])),
        "feature": changed("feature", lambda a: a.__setitem__(split, (a[split] + 1) % X.shape[1])),
    }

    class Prepared:  # what the fingerprint reads of a prepared model: the model and its compiled node table
        def __init__(self, model):
            from pdpboot.engine._tree_compiled import _kernel_base

            self.model, self._base = model, None
            self._build = _kernel_base

        def kernel_base(self):
            if self._base is None:
                self._base = self._build(self.model)
            return self._base

    reference = _fingerprint(Prepared(base))
    assert _fingerprint(Prepared(dataclasses.replace(base))) == reference
    for field, model in variants.items():
        assert _fingerprint(Prepared(model)) != reference, field


@pytest.mark.parametrize("kind", ["float64", "float32", "mixed", "int", "numpy-int"])
def test_the_probe_rows_are_the_rows_brute_force_builds(kind):
    """The self-check's probe input (a few rows taken first, :func:`rows_with`) equals brute force's design
    block for the same (row, value) pairs, column by column and dtype by dtype: a float DataFrame (one
    2-D block), float32, a mixed table (categorical, object text, nullable Int64, bool, int), an integer
    column meeting a float grid, and a NumPy integer array meeting a float grid (widened)."""
    from pdpboot.engine.inputs import Table, rows_with

    rng = np.random.default_rng(3)
    n = 40
    X = {
        "float64": pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd")),
        "float32": pd.DataFrame(rng.normal(size=(n, 3)).astype(np.float32), columns=list("abc")),
        "mixed": pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n),
                               "c": pd.Categorical(rng.choice(list("xyz"), n)),
                               "d": rng.choice(["u", "v"], n).astype(object),
                               "e": pd.array(rng.integers(0, 3, n), dtype="Int64"), "f": rng.random(n) > 0.5}),
        "int": pd.DataFrame({"a": rng.integers(0, 9, n), "b": rng.normal(size=n)}),
        "numpy-int": rng.integers(0, 9, size=(n, 3)),
    }[kind]
    rows = np.array([0, 3, 3, 7, n - 1, 12])
    for j in range(X.shape[1]):
        col = X.iloc[:, j] if isinstance(X, pd.DataFrame) else pd.Series(X[:, j])
        values = col.to_numpy()[[1, 2, 5, 6, 7, 8]]
        if not isinstance(col.dtype, pd.api.extensions.ExtensionDtype) and col.dtype.kind in "iu":
            values = values.astype(float) + 0.5  # a float grid on an integer column: kept, never rounded
        expected = Table(X, [j], [values]).block(rows, np.arange(len(rows)))
        got = rows_with(X, rows, {j: values})
        if isinstance(X, pd.DataFrame):
            pd.testing.assert_frame_equal(got, expected, check_exact=True)
        else:
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
