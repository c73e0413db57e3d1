"""One-fit PD/ICE must equal scikit-learn's brute method on the same grid."""

import numpy as np
import pandas as pd
import pytest
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
