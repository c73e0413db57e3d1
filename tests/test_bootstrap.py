"""partial_dependence (equal to scikit-learn's brute method) and the resample loop: determinism, backgrounds,
class alignment, seeding, weights."""

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_iris, make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import pdpboot
from pdpboot import Grid

TOL = 1e-9


def _compare(est, X, features, *, output_slice=slice(None), response_method="auto", sample_weight=None):
    res = pdpboot.partial_dependence(est, X, features, kind="both", method="brute",
                                     response_method=response_method, sample_weight=sample_weight)
    for f in features:
        fs = f if isinstance(f, tuple) else (f,)
        node = pdpboot.get_node(res, fs if isinstance(X, pd.DataFrame) else tuple(f"x{i}" for i in fs))
        grids = [node.ds[d].values for d in node.attrs["features"]]
        kw = {"sample_weight": sample_weight} if sample_weight is not None else {}
        sk = sk_partial_dependence(
            est, X, list(fs), method="brute", kind="average" if kw else "both",
            custom_values=dict(zip(fs, grids)), response_method=response_method, **kw,
        )
        ours_avg = node.ds["pd"].values[output_slice]
        assert ours_avg.shape == sk["average"].shape
        np.testing.assert_allclose(ours_avg, sk["average"], rtol=0, atol=TOL)
        if not kw:
            ours_ice = np.moveaxis(node.ds["ice"].values, 1, 0)[output_slice]
            np.testing.assert_allclose(ours_ice, sk["individual"], rtol=0, atol=TOL)
    return res


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    return X, y


def test_regressor_numpy_matches_sklearn(friedman):
    X, y = friedman
    est = KNeighborsRegressor().fit(X, y)
    _compare(est, X, [0, 3, (1, 2)])


def test_regressor_dataframe_pipeline_matches_sklearn(friedman):
    X, y = friedman
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    est = make_pipeline(StandardScaler(), KNeighborsRegressor()).fit(df, y)
    _compare(est, df, ["f0", ("f1", "f3")])


def test_sample_weight_matches_sklearn(friedman):
    X, y = friedman
    est = LinearRegression().fit(X, y)
    w = np.random.default_rng(1).uniform(0.1, 2, size=len(y))
    _compare(est, X, [0, (0, 1)], sample_weight=w)


def test_multioutput_regressor(friedman):
    X, y = friedman
    Y = np.column_stack([y, -2 * y])
    est = KNeighborsRegressor().fit(X, Y)
    res = _compare(est, X, [1])
    assert list(res["x1"].ds.output.values) == ["y0", "y1"]


def test_binary_classifier_keeps_both_classes():
    X, y = make_friedman1(n_samples=150, n_features=5, random_state=1)
    labels = np.where(y > np.median(y), "high", "low")
    est = LogisticRegression().fit(X, labels)
    # sklearn reports the positive class only; we report all classes
    res = _compare(est, X, [0, (1, 2)], output_slice=slice(1, 2))
    pd_node = res["x0"].ds["pd"]
    assert list(pd_node.output.values) == ["high", "low"]
    np.testing.assert_allclose(pd_node.sum("output"), 1.0, atol=1e-12)


def test_binary_decision_function():
    X, y = make_friedman1(n_samples=150, n_features=5, random_state=1)
    est = LogisticRegression().fit(X, y > np.median(y))
    res = _compare(est, X, [2], response_method="decision_function")
    assert list(res["x2"].ds.output.values) == [True]


def test_multiclass_classifier_dataframe():
    iris = load_iris(as_frame=True)
    X, y = iris.data, iris.target
    est = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    _compare(est, X, ["petal length (cm)", ("sepal width (cm)", "petal width (cm)")])


def test_categorical_and_integer_columns_in_pipeline():
    rng = np.random.default_rng(2)
    n = 150
    df = pd.DataFrame({
        "num": rng.normal(size=n),
        "count": rng.integers(0, 5, size=n),  # integer column with few levels
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=n), categories=["red", "green", "blue"]),
        "flag": rng.choice(["yes", "no"], size=n),
    })
    y = df["num"] + df["count"] + (df["colour"] == "red") * 2 + (df["flag"] == "yes")
    pre = make_column_transformer((OneHotEncoder(), ["colour", "flag"]), remainder="passthrough")
    est = make_pipeline(pre, LinearRegression()).fit(df, y)
    res = pdpboot.partial_dependence(est, df, ["colour", "flag", "count", ("colour", "num")], kind="both")
    assert list(res["colour"].ds.colour.values) == ["red", "green", "blue"]  # category order kept
    assert res["colour"].attrs["categorical"] == [1]
    assert res["count"].attrs["categorical"] == [0]
    np.testing.assert_array_equal(res["count"].ds["count"].values, [0, 1, 2, 3, 4])
    for feature in ["colour", "flag"]:
        grid = res[feature].ds[feature].values
        sk = sk_partial_dependence(est, df, [feature], categorical_features=[feature], kind="both",
                                   custom_values={feature: list(grid)})
        np.testing.assert_allclose(res[feature].ds["pd"].values, sk["average"], atol=TOL)
        np.testing.assert_allclose(np.moveaxis(res[feature].ds["ice"].values, 1, 0), sk["individual"], atol=TOL)
    # the linear model is additive: PD(colour) differences equal the coefficients' effect
    pd_colour = res["colour"].ds["pd"].values[0]
    assert pd_colour[0] - pd_colour[1] == pytest.approx(2.0, abs=1e-9)
    # integer grid: compare with sklearn on a float copy (sklearn refuses integer columns)
    df_float = df.assign(count=df["count"].astype(float))
    sk = sk_partial_dependence(est, df_float, ["count"], kind="average", custom_values={"count": [0, 1, 2, 3, 4]})
    np.testing.assert_allclose(res["count"].ds["pd"].values, sk["average"], atol=TOL)


def test_integer_column_with_many_levels_gets_float_grid():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(18, 90, size=200), "x": rng.normal(size=200)})
    y = 0.1 * df["age"] + df["x"]
    est = LinearRegression().fit(df, y)
    res = pdpboot.partial_dependence(est, df, ["age"], grid=Grid(20))
    grid = res["age"].ds["age"].values
    assert grid.dtype.kind == "f" and grid.size == 20
    np.testing.assert_allclose(res["age"].ds["pd"].values[0], 0.1 * grid + df["x"].mean() + est.intercept_ - 0.0,
                               atol=1e-9)


def test_default_grid_matches_sklearn_rule(friedman):
    X, y = friedman
    est = LinearRegression().fit(X, y)
    res = pdpboot.partial_dependence(est, X, [0], grid=Grid(30, percentiles=(0.1, 0.9)))
    sk = sk_partial_dependence(est, X, [0], grid_resolution=30, percentiles=(0.1, 0.9), kind="average")
    np.testing.assert_allclose(res["x0"].ds["x0"].values, sk["grid_values"][0], rtol=0, atol=1e-12)


def test_nan_ignored_in_grid():
    x = np.r_[np.linspace(0, 1, 99), np.nan]
    X = np.column_stack([x, np.ones_like(x)])
    from sklearn.ensemble import HistGradientBoostingRegressor

    est = HistGradientBoostingRegressor(max_iter=5).fit(X, np.nan_to_num(x))
    res = pdpboot.partial_dependence(est, X, [0], grid=Grid(10))
    assert not np.isnan(res["x0"].ds["x0"].values).any()


def test_max_ice_instances_subsample(friedman):
    X, y = friedman
    est = LinearRegression().fit(X, y)
    res = pdpboot.partial_dependence(est, X, [0], kind="individual", max_ice_instances=7, rng=0)
    ice = res["x0"].ds["ice"]
    assert ice.sizes["instance"] == 7
    rows = ice.instance.values
    expected = est.predict(np.repeat(X[rows], 1, axis=0))  # at own value only: check one grid point
    g = res["x0"].ds["x0"].values[3]
    Xg = X[rows].copy()
    Xg[:, 0] = g
    np.testing.assert_allclose(ice.values[:, 0, 3], est.predict(Xg), atol=1e-12)
    assert expected.shape == (7,)


def test_unfitted_estimator_rejected(friedman):
    X, _ = friedman
    with pytest.raises(ValueError, match="not fitted"):
        pdpboot.partial_dependence(LinearRegression(), X, [0])


def test_predict_labels_refused_for_classifier():
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=0)
    est = LogisticRegression().fit(X, y > 14)
    with pytest.raises(ValueError, match="predicted labels"):
        pdpboot.partial_dependence(est, X, [0], response_method="predict")


def test_regressor_outputs_need_no_predict_call():
    """The output labels of a fitted regressor that records ``n_outputs_`` come without a predict call
    (a forest's predict costs ~0.03 s whatever the rows: most of a one-fit ALE's overhead)."""
    from pdpboot._evaluate import resolve_outputs

    X = np.random.default_rng(0).normal(size=(30, 3))

    class NoPredict(RandomForestRegressor):
        def predict(self, X):
            raise AssertionError("predict called")

    one = NoPredict(n_estimators=2, random_state=0).fit(X, X[:, 0])
    two = NoPredict(n_estimators=2, random_state=0).fit(X, X[:, :2])
    assert resolve_outputs(one, "predict", rows=X[:1]) == ["y"]
    assert resolve_outputs(two, "predict", rows=X[:1]) == ["y0", "y1"]



@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    y = pd.Series(X["a"] + X["b"] * X["c"] + rng.normal(scale=0.5, size=120), name="target")
    return X, y


def test_bit_identical_across_n_jobs(data):
    X, y = data
    kw = dict(n_resamples=4, rng=7, statistics={"ice": 3}, grid=Grid(6))
    est = RandomForestRegressor(n_estimators=5)
    r1 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", ("b", "c")], **kw,
                                              execution=pdpboot.Execution(n_jobs=1))
    r2 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", ("b", "c")], **kw,
                                              execution=pdpboot.Execution(n_jobs=2))
    for name in ["a", "b__c"]:
        xr.testing.assert_identical(r1[name].to_dataset(), r2[name].to_dataset())
    # a different seed gives different resamples
    r3 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], **dict(kw, rng=8),
                                              execution=pdpboot.Execution(n_jobs=1))
    assert not np.array_equal(r1["a"].ds.pd_resamples.values, r3["a"].ds.pd_resamples.values)


def test_started_workers_run_the_bootstrap_unchanged(data):
    """``start_workers`` warms joblib's workers (every one runs a task) and a bootstrap on warm workers
    is bit-identical to one job; with one job nothing is started."""
    X, y = data
    assert pdpboot.start_workers(1) == 1
    assert pdpboot.start_workers(2) == 2
    kw = dict(n_resamples=3, rng=11, grid=Grid(5))
    est = RandomForestRegressor(n_estimators=4)
    one = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", "b"], **kw, execution=pdpboot.Execution(n_jobs=1))
    two = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", "b"], **kw, execution=pdpboot.Execution(n_jobs=2))
    for name in ["a", "b"]:
        xr.testing.assert_identical(one[name].to_dataset(), two[name].to_dataset())


def test_more_resamples_extend_the_same_run(data):
    X, y = data
    kw = dict(rng=3, grid=Grid(5))
    small = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=3, **kw)
    large = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=6, **kw)
    np.testing.assert_array_equal(small["a"].ds.pd_resamples.values, large["a"].ds.pd_resamples.values[:3])


def test_schema(data):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", ("a", "b")], n_resamples=3,
                                               grid=Grid(5), rng=0, statistics={"ice": 4})
    node = res["a__b"].ds
    assert res["a__b"].attrs["features"] == ["a", "b"]
    assert node["pd"].dims == ("output", "a", "b")
    assert node["pd_resamples"].dims == ("resample", "output", "a", "b")
    assert node["ice"].dims == ("instance", "output", "a", "b")
    assert node["ice_resamples"].dims == ("resample", "instance", "output", "a", "b")
    assert list(node.output.values) == ["target"]
    np.testing.assert_array_equal(node["resample"].values, np.arange(3))
    # the grid of a feature is the same in every node it appears in
    np.testing.assert_array_equal(res["a"].ds.a.values, node.a.values)
    for key in ["creation_library", "creation_library_version", "created", "estimator", "estimator_params",
                "settings", "rng_entropy", "n_resamples", "n_failed_resamples"]:
        assert key in res.attrs
    assert res.attrs["n_resamples"] == 3


def _manual_resample_pd(X, y, seed_root, b, background, grid):
    """Recompute resample b by hand from the documented seed layout."""
    generator = np.random.default_rng(seed_root)
    generator.spawn(3)
    child = generator.spawn(b + 1)[b]
    draw_rng, _, _ = child.spawn(3)
    rows = np.sort(draw_rng.integers(0, len(y), size=len(y)))  # n rows with replacement
    model = LinearRegression().fit(X.iloc[rows], y.iloc[rows])
    bg = X.iloc[rows] if background == "resample" else X
    out = []
    for g in grid:
        Xg = bg.copy()
        Xg["a"] = g
        out.append(model.predict(Xg).mean())
    return np.array(out)


@pytest.mark.parametrize("background", ["resample", "original"])
def test_resample_pd_equals_hand_computation(data, background):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=3,
                                               grid=Grid(5), rng=11,
                                               resampling=pdpboot.Resampling(background=background))
    grid = res["a"].ds.a.values
    for b in range(3):
        np.testing.assert_allclose(res["a"].ds.pd_resamples.values[b, 0],
                                   _manual_resample_pd(X, y, 11, b, background, grid), atol=1e-10)
    full = LinearRegression().fit(X, y)
    Xg = X.copy()
    expected = []
    for g in grid:
        Xg["a"] = g
        expected.append(full.predict(Xg).mean())
    np.testing.assert_allclose(res["a"].ds.pd.values[0], expected, atol=1e-10)


def test_out_of_bag_background_differs(data):
    X, y = data
    kw = dict(n_resamples=3, grid=Grid(5), rng=5)
    est = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=5))
    oob = pdpboot.bootstrap_partial_dependence(est, X, y, ["b"], **kw,
                                               resampling=pdpboot.Resampling(background="out-of-bag"))
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["b"], **kw,
                                               resampling=pdpboot.Resampling(background="resample"))
    assert not np.allclose(oob["b"].ds.pd_resamples, res["b"].ds.pd_resamples)
    np.testing.assert_array_equal(oob["b"].ds.pd.values, res["b"].ds.pd.values)


def test_random_state_of_pipeline_step_is_set_per_resample(data):
    X, y = data
    est = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3, random_state=None))
    a = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid=Grid(4), rng=1)
    b = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid=Grid(4), rng=1)
    xr.testing.assert_identical(a["a"].to_dataset(), b["a"].to_dataset())


def test_classifier_missing_class_in_resample_aligned():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 2)), columns=["u", "v"])
    y = np.array(["a"] * 29 + ["b"] * 29 + ["rare"] * 2)
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, ["u"], n_resamples=12,
                                               resampling="bootstrap", grid=Grid(4), rng=0)
    node = res["u"].ds
    assert list(node.output.values) == ["a", "b", "rare"]
    probs = node.pd_resamples.values
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    # some resample missed the rare class: its probability is 0 there
    missed = [b for b in range(12) if np.all(probs[b, 2] == 0)]
    assert missed, "expected at least one resample without the rare class"


def test_plain_bootstrap_moves_the_pd_level_of_a_classifier():
    # A logistic fit with a free intercept makes the mean fitted probability equal the class share:
    # stratified resamples freeze it (SD 0 over resamples), the plain bootstrap lets it vary as it does
    # over repeated samples (issue 12: stratified under-covered at 0.77).
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (rng.random(200) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    kw = dict(n_resamples=30, grid=Grid(3), rng=0)
    # the default for probabilities is now resampling="auto" (the 0.632 subsample, tests/test_auto_resampling.py)
    default = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [1], **kw,
                                                   resampling=pdpboot.Resampling("bootstrap", background="original"))
    strat = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [1], **kw,
                                                 resampling=pdpboot.Resampling("stratified", background="original"))
    assert default.attrs["resampling"] == "bootstrap"
    assert list(default["x1"].ds.output.values) == [0, 1]
    level = default["x1"].ds.pd_resamples.sel(output=1).mean("x1")
    frozen = strat["x1"].ds.pd_resamples.sel(output=1).mean("x1")
    assert float(level.std()) > 0.01
    assert float(level.std()) > 2 * float(frozen.std())  # measured 0.032 vs 0.011


def test_decision_function_refit_missing_a_class_is_recorded_not_mixed():
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["u", "v"])
    y = np.array(["a"] * 19 + ["b"] * 19 + ["rare"] * 2)
    with pytest.warns(RuntimeWarning, match="failed and were skipped"):
        res = pdpboot.bootstrap_partial_dependence(
            LogisticRegression(), X, y, ["u"], n_resamples=20, grid=Grid(3), rng=0,
            response_method="decision_function",
            execution=pdpboot.Execution(max_failure_share=0.9))
    n_missing = res.attrs["n_missing_class_resamples"]
    assert 0 < n_missing == res.attrs["n_failed_resamples"]
    scores = res["u"].ds.pd_resamples.values
    failed = np.isnan(scores).all(axis=(1, 2))
    assert failed.sum() == n_missing  # NaN in every output: never a binary score beside multinomial ones
    assert np.isfinite(scores[~failed]).all()


def test_too_many_missing_class_resamples_stop_with_advice():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = np.array([0] * 19 + [1] * 19 + [2] * 2)
    with pytest.raises(RuntimeError, match="predict_proba"):
        pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=20, grid=Grid(3),
                                             rng=0, response_method="decision_function")


def _hand_loop(estimator, X, y, rng, n_resamples, grid, fit_weight_key=None, fit_weights=None, pd_weights=None):
    """The bootstrap written out by hand: seeds as documented, PD of feature 0 averaged with weights."""
    from pdpboot.engine.resample import multiplicities, seed_estimator

    root = np.random.default_rng(rng)
    root.spawn(3)
    curves = []
    for seed in root.spawn(n_resamples):
        draw_rng, fit_rng, _ = seed.spawn(3)
        rows = np.sort(draw_rng.integers(0, len(X), size=len(X)))
        kwargs = {} if fit_weights is None else {fit_weight_key: fit_weights[rows]}
        model = seed_estimator(clone(estimator), fit_rng).fit(X[rows], y[rows], **kwargs)
        distinct, counts = multiplicities(rows, len(X))
        w = counts * (1.0 if pd_weights is None else pd_weights[distinct])
        curve = []
        for z in grid:
            Xz = X[distinct].copy()
            Xz[:, 0] = z
            curve.append(np.average(model.predict(Xz), weights=w))
        curves.append(curve)
    return np.array(curves)


def test_sample_weight_flows_into_every_refit_and_every_average():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + X[:, 0] * X[:, 1] + rng.normal(size=80)
    w = rng.uniform(0.2, 3.0, size=80)
    grid = np.array([-1.0, 0.0, 1.5])
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=5, rng=11,
                                               sample_weight=w, grid=Grid(custom_values={0: grid}))
    expected = _hand_loop(LinearRegression(), X, y, 11, 5, grid, "sample_weight", w, w)
    np.testing.assert_allclose(res["x0"].ds.pd_resamples.values[:, 0], expected, rtol=1e-12, atol=1e-12)
    assert json.loads(res.attrs["settings"])["sample_weight"] is True


def test_fit_params_are_sliced_to_the_drawn_rows():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 2))
    y = 2 * X[:, 0] + rng.normal(size=60)
    w = rng.uniform(0.5, 2.0, size=60)
    grid = np.array([-1.0, 1.0])
    pipe = make_pipeline(StandardScaler(), LinearRegression())
    res = pdpboot.bootstrap_partial_dependence(
        pipe, X, y, [0], n_resamples=4, rng=2, grid=Grid(custom_values={0: grid}),
        resampling=pdpboot.Resampling(fit_params={"linearregression__sample_weight": w}))
    expected = _hand_loop(pipe, X, y, 2, 4, grid, "linearregression__sample_weight", w, None)
    np.testing.assert_allclose(res["x0"].ds.pd_resamples.values[:, 0], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad, match", [
    (dict(sample_weight=np.r_[np.nan, np.ones(59)]), "finite"),
    (dict(sample_weight=np.ones(3)), "one entry per row"),
    (dict(resampling=lambda: pdpboot.Resampling(fit_params={"sample_weight": np.ones(60)})), "sample_weight="),
    (dict(resampling=lambda: pdpboot.Resampling(fit_params=[1, 2])), "dict"),
    (dict(execution=lambda: pdpboot.Execution(threads_per_job=0)), "threads_per_job"),
])
def test_weights_and_fit_params_refused_before_any_fit(bad, match):
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises((ValueError, TypeError), match=match):
        bad = {k: v() if callable(v) else v for k, v in bad.items()}  # the objects refuse them when made
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=2, **bad)


def test_threads_per_job_does_not_change_results(data):
    X, y = data
    kw = dict(n_resamples=3, rng=4, grid=Grid(4))
    one = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], **kw,
                                               execution=pdpboot.Execution(threads_per_job=1))
    two = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], **kw,
                                               execution=pdpboot.Execution(threads_per_job=2))
    np.testing.assert_array_equal(one["a"].ds.pd_resamples.values, two["a"].ds.pd_resamples.values)


class _ThreadsSeen(LinearRegression):
    """Records the native thread counts threadpoolctl sees while it is fitted."""

    seen: list = []

    def fit(self, X, y, sample_weight=None):
        from threadpoolctl import threadpool_info

        type(self).seen.append({pool["num_threads"] for pool in threadpool_info()})
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("threads", [1, 2])
def test_refits_run_under_the_thread_limit(data, threads):
    X, y = data
    _ThreadsSeen.seen = []
    pdpboot.bootstrap_partial_dependence(_ThreadsSeen(), X, y, ["a"], n_resamples=3, rng=0, grid=Grid(3),
                                         execution=pdpboot.Execution(threads_per_job=threads))
    refits = _ThreadsSeen.seen[1:]  # the first fit is the full-data one, outside the resample loop
    assert len(refits) == 3 and all(seen == {threads} for seen in refits), refits


def test_group_resampling_requires_groups(data):
    X, y = data
    with pytest.raises(ValueError, match="groups"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], resampling="group", n_resamples=2)
    groups = np.repeat(np.arange(30), 4)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=2, grid=Grid(3), rng=0,
                                               resampling=pdpboot.Resampling("group", groups=groups))
    assert res.attrs["resampling"] == "group"


def test_fitted_estimator_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="already fitted"):
        pdpboot.bootstrap_partial_dependence(LinearRegression().fit(X, y), X, y, ["a"], n_resamples=2)
    est = clone(LinearRegression())
    pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid=Grid(3))


def test_max_background_subsamples(data):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=2, grid=Grid(3),
                                               rng=2,
                                               resampling=pdpboot.Resampling(max_background=10, background="original"),
                                               statistics=["ice"])
    assert res["a"].ds.sizes["instance"] == 10
    # linear model: PD = mean over the 10 rows, equal to the mean of their ICE curves
    np.testing.assert_allclose(res["a"].ds.pd.values, res["a"].ds.ice.mean("instance").values, atol=1e-12)


def test_progress_callable_reports_every_resample(data):
    X, y = data
    calls = []
    pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["a"], n_resamples=4, grid=Grid(3), rng=0,
        execution=pdpboot.Execution(progress=lambda done, total: calls.append((done, total))))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


class _NanForLargeX(LinearRegression):
    """Predicts NaN wherever x0 > 1.5 when fitted without the row x0 = 3 (some resamples miss it)."""

    def fit(self, X, y):
        self.max_seen_ = np.max(np.asarray(X)[:, 0])
        return super().fit(X, y)

    def predict(self, X):
        out = super().predict(X)
        return np.where((np.asarray(X)[:, 0] > 1.5) & (self.max_seen_ < 3.0), np.nan, out)


def test_a_refit_that_predicts_nan_is_a_recorded_failure_not_silent_nan():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    X[0, 0] = 3.0
    model = _NanForLargeX()
    kw = dict(n_resamples=12, grid=Grid(custom_values={0: np.array([0.0, 2.0])}), rng=1)
    with pytest.raises(ValueError, match="non-finite"):
        pdpboot.bootstrap_partial_dependence(model, X, X[:, 1], [0], **kw)
    with pytest.warns(RuntimeWarning, match="failed and were skipped"):
        res = pdpboot.bootstrap_partial_dependence(model, X, X[:, 1], [0], **kw,
                                                   execution=pdpboot.Execution(on_error="skip", max_failure_share=0.9))
    failed = json.loads(res.attrs["failed_resamples"])
    assert failed and all("non-finite" in f["error"] for f in failed)


def test_predict_returning_the_wrong_number_of_rows_is_named():
    class Short(LinearRegression):
        def predict(self, X):
            return super().predict(X)[:-1]

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match="one row of outputs per input row"):
        pdpboot.partial_dependence(Short().fit(X, X[:, 0]), X, [0], grid=Grid(3))


def test_resample_absent_is_the_rows_each_refit_was_not_fitted_on(data):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=5, grid=Grid(3),
                                               rng=9)
    absent = np.unpackbits(res["resample_absent"].values, axis=1, count=len(X)).astype(bool)
    root = np.random.default_rng(9)
    root.spawn(3)
    for b, seed in enumerate(root.spawn(5)):
        rows = np.sort(seed.spawn(3)[0].integers(0, len(X), size=len(X)))
        np.testing.assert_array_equal(absent[b], np.bincount(rows, minlength=len(X)) == 0)
    with pytest.warns(pdpboot.CoverageWarning, match="method='bca'"):  # measured to under-cover curves
        bands = pdpboot.confidence_bands(res, method="bca")  # the jackknife-after-bootstrap acceleration uses them
    assert np.isfinite(bands["a"].ds.pd_band.values).all()
