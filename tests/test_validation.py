"""Bad input gets a clear error naming the problem and the fix - and writes nothing."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.svm import SVC

import pdpboot
from pdpboot import Grid


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["temp", "hum", "wind"])
    y = pd.Series(X["temp"] + rng.normal(size=40), name="count")
    return X, y


def _boot(est, X, y, features, **kw):
    kw.setdefault("n_resamples", 2)
    kw.setdefault("grid", Grid(4))
    return pdpboot.bootstrap_partial_dependence(est, X, y, features, **kw)


def test_inf_in_X(frame):
    X, y = frame
    X.loc[3, "hum"] = np.inf
    with pytest.raises(ValueError, match=r"infinite values in column\(s\) \['hum'\]"):
        _boot(LinearRegression(), X, y, ["temp"])


def test_nan_in_y(frame):
    X, y = frame
    y[2] = np.nan
    with pytest.raises(ValueError, match="y contains 1 missing"):
        _boot(LinearRegression(), X, y, ["temp"])


def test_nan_in_X_for_model_without_nan_support(frame, tmp_path):
    X, y = frame
    X.loc[5, "wind"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in column\(s\) \['wind'\].*Impute"):
        _boot(LinearRegression(), X, y, ["temp"], execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    assert not (tmp_path / "ck").exists()
    _boot(HistGradientBoostingRegressor(max_iter=3), X, y, ["temp"])  # accepts NaN


def test_length_mismatch(frame):
    X, y = frame
    with pytest.raises(ValueError, match="X has 40 rows but y has 39"):
        _boot(LinearRegression(), X, y[:-1], ["temp"])


def test_empty_X():
    with pytest.raises(ValueError, match="empty"):
        _boot(LinearRegression(), np.empty((0, 2)), np.empty(0), [0])


def test_unknown_feature_lists_closest(frame):
    X, y = frame
    with pytest.raises(ValueError, match=r"'tmp' is not a column of X. Did you mean \['temp'\]"):
        _boot(LinearRegression(), X, y, ["tmp"])


def test_duplicate_columns(frame):
    X, y = frame
    X.columns = ["temp", "temp", "wind"]
    with pytest.raises(ValueError, match=r"duplicate column names \['temp'\]"):
        _boot(LinearRegression(), X, y, ["wind"])


def test_pair_with_same_feature(frame):
    X, y = frame
    with pytest.raises(ValueError, match="same feature twice"):
        _boot(LinearRegression(), X, y, [("temp", "temp")])


@pytest.mark.parametrize("name", ["resample", "output", "instance", "ci_bound", "pd"])
def test_reserved_names(frame, name):
    X, y = frame
    X = X.rename(columns={"hum": name})
    with pytest.raises(ValueError, match="reserved"):
        _boot(LinearRegression(), X, y, [name])


def test_grid_resolution_too_small(frame):
    X, y = frame
    with pytest.raises(ValueError, match=r"Grid\(resolution=...\) must be an integer >= 2"):
        _boot(LinearRegression(), X, y, ["temp"], grid=Grid(1))


def test_too_few_resamples(frame):
    X, y = frame
    with pytest.raises(ValueError, match="n_resamples must be an integer >= 2"):
        _boot(LinearRegression(), X, y, ["temp"], n_resamples=1)
    res = _boot(LinearRegression(), X, y, ["temp"], n_resamples=5)
    with pytest.raises(ValueError, match="at least 20 resamples"):
        pdpboot.confidence_bands(res, simultaneous=True)


def test_classifier_without_predict_proba(frame):
    X, y = frame
    with pytest.raises(ValueError, match="SVC has no predict_proba"):
        _boot(SVC(), X, y > 0, ["temp"], response_method="predict_proba")


def test_regressor_with_string_target(frame):
    X, _ = frame
    with pytest.raises(TypeError, match="regressor but y has non-numeric values"):
        _boot(LinearRegression(), X, np.array(["a", "b"] * 20), ["temp"])


def test_fitted_vs_unfitted(frame):
    X, y = frame
    with pytest.raises(ValueError, match="already fitted"):
        _boot(LinearRegression().fit(X, y), X, y, ["temp"])
    with pytest.raises(ValueError, match="not fitted"):
        pdpboot.partial_dependence(LinearRegression(), X, ["temp"])


def test_groups_wrong_length(frame):
    X, y = frame
    with pytest.raises(ValueError, match="one label per row of X \\(40\\); got 10"):
        _boot(LinearRegression(), X, y, ["temp"], resampling=pdpboot.Resampling("group", groups=np.arange(10)))


def test_constant_feature_warns_and_gives_one_point(frame):
    X, y = frame
    X["const"] = 3.0
    with pytest.warns(UserWarning, match="'const' is constant"):
        res = _boot(LinearRegression(), X, y, ["const"])
    assert res["const"].ds.sizes["const"] == 1


def test_single_class_target(frame):
    X, _ = frame
    with pytest.raises(ValueError, match="single class"):
        _boot(LogisticRegression(), X, np.zeros(40, dtype=int), ["temp"])


# --- random small tables: a schema-valid result or a documented error, never anything else

DOCUMENTED = (ValueError, TypeError)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 12))
    columns = {}
    for j in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["float", "int", "cat", "str", "bool"]))
        if kind == "float":
            values = draw(st.lists(st.one_of(st.floats(-5, 5), st.just(np.nan)), min_size=n, max_size=n))
        elif kind == "int":
            values = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
        elif kind == "bool":
            values = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            values = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
        columns[f"c{j}"] = pd.Categorical(values) if kind == "cat" else values
    X = pd.DataFrame(columns)
    y = draw(st.lists(st.floats(-10, 10), min_size=n, max_size=n))
    return X, np.asarray(y)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(), pair=st.booleans())
def test_random_tables_give_valid_result_or_documented_error(data, pair):
    X, y = data
    features = [("c0", X.columns[-1])] if pair and X.shape[1] > 1 else ["c0"]
    est = HistGradientBoostingRegressor(max_iter=2, min_samples_leaf=1, categorical_features="from_dtype")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant features warn; sklearn may warn on tiny data
        try:
            res = pdpboot.bootstrap_partial_dependence(est, X, y, features, n_resamples=2, grid=Grid(3),
                                                       rng=0,
                                                       execution=pdpboot.Execution(progress=False))
        except DOCUMENTED as exc:
            assert str(exc)
            return
    node = pdpboot.get_node(res, features[0])
    dims = tuple(node.attrs["features"])
    assert node.ds["pd"].dims == ("output", *dims)
    assert node.ds["pd_resamples"].dims == ("resample", "output", *dims)


def test_pipeline_with_imputer_accepts_missing_values(frame):
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = frame
    X.loc[5, "wind"] = np.nan
    _boot(make_pipeline(SimpleImputer(), LinearRegression()), X, y, ["temp"])
    with pytest.raises(ValueError, match=r"missing values in column\(s\) \['wind'\]"):
        _boot(make_pipeline(LinearRegression()), X, y, ["temp"])
    # a first step that passes NaN through: the model itself reports the problem at fit
    with pytest.raises(ValueError, match="NaN"):
        _boot(make_pipeline(StandardScaler(), LinearRegression()), X, y, ["temp"])


def test_slash_in_feature_name(frame):
    X, y = frame
    X = X.rename(columns={"hum": "km/h"})
    with pytest.raises(ValueError, match="contains '/'"):
        _boot(LinearRegression(), X, y, ["km/h"])


# --- issue 13, items 5-7: hostile arguments get a clear error before any fit ------------------------

from sklearn.cluster import KMeans  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import pdpboot.bootstrap as bootstrap_module  # noqa: E402
from pdpboot import _validate as v  # noqa: E402


class NoFit(LinearRegression):
    """Any fit is a test failure: the error must come first."""

    def fit(self, X, y):
        raise AssertionError("fitted before validating")


@pytest.mark.parametrize("estimator, match", [
    (object(), r"estimator must be a scikit-learn regressor or classifier.*got object"),
    (LinearRegression, r"estimator instance, got the class LinearRegression; write LinearRegression\(\)"),
    (KMeans(n_clusters=2), r"KMeans is a clusterer"),
])
def test_non_estimators_refused(frame, estimator, match):
    X, y = frame
    with pytest.raises(TypeError, match=match):
        _boot(estimator, X, y, ["temp"])


def test_fitted_clusterer_and_multioutput_classifier_refused_by_partial_dependence(frame):
    X, y = frame
    with pytest.raises(TypeError, match="clusterer"):
        pdpboot.partial_dependence(KMeans(n_clusters=2, n_init=1).fit(X), X, ["temp"])
    clf = DecisionTreeClassifier(max_depth=1).fit(X, np.c_[y > 0, y > 1])
    with pytest.raises(ValueError, match="multiclass-multioutput"):
        pdpboot.partial_dependence(clf, X, ["temp"])


def test_multioutput_classification_target_refused(frame):
    X, y = frame
    with pytest.raises(ValueError, match=r"y has 2 columns.*multi-output classification"):
        _boot(DecisionTreeClassifier(), X, np.c_[y > 0, y > 1], ["temp"])


def test_inf_in_y_refused(frame):
    X, y = frame
    y[4] = -np.inf
    with pytest.raises(ValueError, match=r"y contains 1 infinite"):
        _boot(NoFit(), X, y, ["temp"])


def test_two_column_numpy_y_is_multi_output(frame):
    X, y = frame
    Y = np.c_[y, 2 * y.to_numpy()]
    res = _boot(DecisionTreeRegressor(max_depth=2), X, Y, ["temp"])
    assert list(res["temp"].ds["output"].values) == ["y0", "y1"]
    np.testing.assert_allclose(res["temp"].ds["pd"].sel(output="y1"), 2 * res["temp"].ds["pd"].sel(output="y0"))
    one = _boot(LinearRegression(), X, y.to_numpy()[:, None], ["temp"])  # one column: a plain target
    assert one["temp"].ds.sizes["output"] == 1


def test_nullable_dtypes_work_end_to_end(frame, tmp_path):
    X, y = frame
    X = X.assign(count=pd.array(np.arange(40) % 5, dtype="Int64"),
                 flag=pd.array([True, False] * 20, dtype="boolean"))
    y = pd.Series(y.to_numpy(), dtype="Float64")
    from sklearn.ensemble import HistGradientBoostingRegressor as HGB

    res = _boot(HGB(max_iter=3), X, y, ["count", "flag", ("count", "temp")], statistics={"ice": 2},
                grid=Grid(6))
    assert res["count"].ds["count"].values.tolist() == [0, 1, 2, 3, 4]
    assert res["flag"].ds["flag"].values.tolist() == [False, True]
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / "n.nc"))
    import xarray as xr

    xr.testing.assert_identical(res, loaded)


@pytest.mark.parametrize("index", [
    pd.MultiIndex.from_arrays([np.arange(40) % 4, np.arange(40)]),
    pd.Index([*range(20), *[f"r{k}" for k in range(20)]], dtype=object),
    pd.date_range("2020-01-01", periods=40, freq="h", tz="Europe/Paris"),
])
def test_row_labels_netcdf_cannot_store_become_strings(frame, tmp_path, index):
    X, y = frame
    X.index = index
    res = _boot(LinearRegression(), X, y.to_numpy(), ["temp"], statistics={"ice": 3})
    labels = res["temp"].ds["instance"].values
    assert all(isinstance(lab, str) for lab in labels)
    assert set(labels) <= {str(i) for i in index}
    import xarray as xr

    for suffix in (".nc", ".zarr"):
        xr.testing.assert_identical(res, pdpboot.load(pdpboot.save(res, tmp_path / f"r{suffix}")))


def test_one_row_warns_zero_width():
    X = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.warns(UserWarning, match="single row.*zero width"):
        v.check_table(X)


def test_rng_validator():
    for ok in (None, 0, np.int64(3), np.random.default_rng(0), np.random.SeedSequence(1)):
        v.check_rng(ok)
    with pytest.raises(TypeError, match=r"RandomState.*rng=0.*default_rng\(0\)"):
        v.check_rng(np.random.RandomState(0))
    with pytest.raises(TypeError, match="rng must be"):
        v.check_rng(1.5)
    with pytest.raises(ValueError, match="non-negative"):
        v.check_rng(-1)


def test_n_resamples_validator():
    assert v.check_n_resamples(np.int32(10)) == 10
    with pytest.raises(ValueError, match=r"at most 1000000"):
        v.check_n_resamples(10**8)
    with pytest.raises(ValueError, match="must be an integer"):
        v.check_n_resamples(1e12)
    with pytest.raises(ValueError, match=">= 2"):
        v.check_n_resamples(True)


def test_small_validators():
    assert v.check_probability(np.float32(0.9), "confidence_level") == pytest.approx(0.9)
    for bad in (1.0, 0, True, "0.9", np.nan):
        with pytest.raises(ValueError, match="confidence_level must be a number in"):
            v.check_probability(bad, "confidence_level")
    assert v.check_ice(True) is True and v.check_ice(np.int64(3)) == 3 and v.check_ice(None) is False
    for bad in ("yes", -1, 0, 1.5):
        with pytest.raises(ValueError, match="ice must be True, False or a positive integer"):
            v.check_ice(bad)
    with pytest.raises(ValueError, match="max_ice_instances must be an integer >= 1"):
        v.check_optional_positive_int(-1, "max_ice_instances")
    assert v.check_optional_positive_int(None, "max_ice_instances") is None
    with pytest.raises(ValueError, match=r"target_names has 2 name\(s\) but the model predicts 1"):
        v.check_target_names(["a", "b"], 1)
    with pytest.raises(ValueError, match="distinct"):
        v.check_target_names(["a", "a"], 2)
    with pytest.raises(ValueError, match=r"sample_weight has 1 missing or infinite value\(s\) \(first at row 1\)"):
        v.check_sample_weight([1.0, np.nan, 2.0], 3)
    with pytest.raises(ValueError, match=r"sample_weight has 1 missing or infinite"):
        v.check_sample_weight([1.0, np.inf, 2.0], 3)
    with pytest.raises(ValueError, match="one entry per row"):
        v.check_sample_weight([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="positive sum"):
        v.check_sample_weight([0.0, 0.0], 2)
    with pytest.raises(ValueError, match=r"ice=\['a'\] is not one of"):
        v.check_choice(["a"], "ice", ("a", "b"))


def test_nan_predictions_helper():
    good = {"x0": {"pd": (("output", "x0"), np.zeros((1, 3)))}}
    v.check_predictions_finite(good)
    bad = {"x0": {"pd": (("output", "x0"), np.array([[0.0, np.nan, 1.0]]))}}
    with pytest.raises(ValueError, match=r"non-finite 'pd' values in node 'x0' \(33%.*predicts NaN"):
        v.check_predictions_finite(bad)


# end-to-end checks that need bootstrap.py/_pd.py/bands.py to call the validators above (lead wiring)



def test_rng_random_state_clear_error(frame):
    X, y = frame
    with pytest.raises(TypeError, match="RandomState"):
        _boot(NoFit(), X, y, ["temp"], rng=np.random.RandomState(0))


def test_ice_yes_clear_error(frame):
    X, y = frame
    with pytest.raises(ValueError, match="ice must be True, False or a positive integer"):
        _boot(NoFit(), X, y, ["temp"], statistics={"ice": "yes"})


def test_max_ice_instances_negative_clear_error(frame):
    X, y = frame
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="max_ice_instances must be an integer >= 1"):
        pdpboot.partial_dependence(fitted, X, ["temp"], kind="both", max_ice_instances=-1)


def test_wrong_length_target_names_clear_error(frame):
    X, y = frame
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="target_names has 2 name"):
        pdpboot.partial_dependence(fitted, X, ["temp"], target_names=["a", "b"])


def test_nan_sample_weight_names_the_argument(frame):
    X, y = frame
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="sample_weight has 1 missing"):
        pdpboot.partial_dependence(fitted, X, ["temp"], sample_weight=np.r_[np.nan, np.ones(39)])


class NaNModel(LinearRegression):
    def predict(self, X):
        return np.full(len(X), np.nan)


def test_model_predicting_nan_clear_error(frame):
    X, y = frame
    with pytest.raises(ValueError, match="predicts NaN"):
        pdpboot.partial_dependence(NaNModel().fit(X, y), X, ["temp"])


def test_confidence_level_numpy_float_accepted(frame):
    """A NumPy float level gives the bands of the same Python float."""
    X, y = frame
    res = _boot(LinearRegression(), X, y, ["temp"], n_resamples=20)
    level = np.float32(0.9)
    numpy_level = pdpboot.confidence_bands(res, confidence_level=level)["temp"].ds["pd_band"]
    python_level = pdpboot.confidence_bands(res, confidence_level=float(level))["temp"].ds["pd_band"]
    np.testing.assert_array_equal(numpy_level.values, python_level.values)
    wider = pdpboot.confidence_bands(res)["temp"].ds["pd_band"].values  # 0.95
    assert np.all(np.diff(wider, axis=0) >= np.diff(numpy_level.values, axis=0)) and not np.array_equal(
        wider, numpy_level.values)


class _SpawnGuard:
    """Wraps a Generator; spawning an absurd number of children is a test failure (it would hang)."""

    def __init__(self, generator):
        self._generator = generator

    def spawn(self, n):
        if n > v.MAX_N_RESAMPLES:
            raise AssertionError(f"spawned {n} generators instead of refusing n_resamples")
        return self._generator.spawn(n)

    def __getattr__(self, name):
        return getattr(self._generator, name)


def test_huge_n_resamples_refused_before_spawning(frame, monkeypatch):
    X, y = frame
    real = np.random.default_rng
    monkeypatch.setattr(np.random, "default_rng", lambda *a, **k: _SpawnGuard(real(*a, **k)))
    assert bootstrap_module is not None
    with pytest.raises(ValueError, match="n_resamples must be at most"):
        _boot(NoFit(), X, y, ["temp"], n_resamples=10**8)


# ----------------------------------------------------------------------------- issue 26 C: clear errors, not deep ones


def test_a_huge_custom_grid_is_refused_before_any_allocation(frame):
    X, y = frame
    fitted = LinearRegression().fit(X, y)
    grid = np.linspace(-1, 1, 10**5)
    with pytest.raises(ValueError, match=r"grid of \('temp', 'hum'\) has 100000 x 100000 = 10,000,000,000 points"
                                         r".*more than memory_limit \(128 MiB\)"):
        pdpboot.partial_dependence(fitted, X, [("temp", "hum")], grid=Grid(custom_values={"temp": grid, "hum": grid}))
    with pytest.raises(ValueError, match="memory_limit"):
        pdpboot.accumulated_local_effects(fitted, X, [("temp", "hum")],
                                          grid=Grid(custom_values={"temp": grid, "hum": grid}))
    # the same grid within a raised budget is not refused by the size check (1-D: 1e5 points, 3 MiB)
    res = pdpboot.partial_dependence(fitted, X.iloc[:3], ["temp"], grid=Grid(custom_values={"temp": grid}))
    assert res["temp"].ds.sizes["temp"] == 10**5


def test_a_feature_on_a_tiny_scale_gets_its_grid(frame):
    """np.isclose's absolute 1e-8 tolerance called the percentiles of a 1e-9-scale feature equal."""
    X, y = frame
    tiny = X * 1e-9
    fitted = LinearRegression().fit(tiny, y)
    res = pdpboot.partial_dependence(fitted, tiny, ["temp"], grid=Grid(10))
    reference = pdpboot.partial_dependence(LinearRegression().fit(X, y), X, ["temp"], grid=Grid(10))
    np.testing.assert_allclose(res["temp"]["temp"].values, reference["temp"]["temp"].values * 1e-9, rtol=1e-12)
    np.testing.assert_allclose(res["temp"]["pd"].values, reference["temp"]["pd"].values, rtol=1e-9)
    # truly coinciding percentiles are still refused
    X["spike"] = np.r_[np.zeros(39), 1.0]
    with pytest.raises(ValueError, match="percentiles of feature 'spike' coincide"):
        pdpboot.partial_dependence(LinearRegression().fit(X, y), X, ["spike"], grid=Grid(2))


def test_a_one_row_table_is_too_few_rows_not_a_constant_feature():
    X = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.raises(ValueError, match=r"X has only 1 row\(s\); the bootstrap needs at least 2"):
        _boot(LinearRegression(), X, np.array([1.0]), ["a"])
    fitted = LinearRegression().fit(pd.DataFrame({"a": [1.0, 2.0], "b": [2.0, 0.0]}), [1.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdpboot.partial_dependence(fitted, X, ["a"])  # one fitted model: that row's ICE curve
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "single row" in said[0]


def test_duplicate_target_names_are_refused(frame):
    X, y = frame
    Y = pd.DataFrame({"t": y, "u": 2 * y})
    Y.columns = ["t", "t"]
    with pytest.raises(ValueError, match=r"y has duplicate column names \['t'\]"):
        _boot(LinearRegression(), X, Y, ["temp"])


@pytest.mark.parametrize("fraction", [0.01, 0.049])
def test_a_subsample_without_rows_is_refused(frame, fraction):
    X, y = frame
    with pytest.raises(ValueError, match=r"subsample_fraction=.* draws floor\(.* x 40\) = 1? ?\d? ?row.*"
                                         r"at least 2: use subsample_fraction >= 0.05"):
        _boot(LinearRegression(), X, y, ["temp"], resampling=pdpboot.Resampling("subsample",
                                                                                 subsample_fraction=fraction))
    assert _boot(LinearRegression(), X, y, ["temp"],
                 resampling=pdpboot.Resampling("subsample", subsample_fraction=0.05))


def test_shapes_of_percentiles_and_custom_values_are_named(frame):
    X, y = frame
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(TypeError, match=r"pair \(lower, upper\).*got 3 values, \(0.1, 0.5, 0.9\)"):
        pdpboot.partial_dependence(fitted, X, ["temp"], grid=Grid(percentiles=(0.1, 0.5, 0.9)))
    for nested in ([[1, 2], [3, 4]], np.array([[1.0, 2.0], [3.0, 4.0]]), [[1, 2], [3]]):
        with pytest.raises(ValueError, match=r"custom_values\['temp'\] must be a 1-D sequence.*got nested values "
                                             r"of shape \(2, .*a 2-D grid is given per feature"):
            pdpboot.partial_dependence(fitted, X, ["temp"], grid=Grid(custom_values={"temp": nested}))


def test_heterogeneity_without_ice_says_what_is_missing(frame):
    X, y = frame
    res = _boot(LinearRegression(), X, y, ["temp"])
    with pytest.raises(ValueError, match=r"holds neither heterogeneity statistics nor ICE curves") as caught:
        pdpboot.ice_heterogeneity(res)
    assert "no either" not in str(caught.value)


@pytest.mark.parametrize("change", ["reordered", "renamed", "extra", "missing"])
def test_a_fitted_model_given_other_columns_is_refused_in_one_line(frame, change):
    """A model fitted on a DataFrame, given X with its columns in another order, renamed, with one more or
    one fewer: scikit-learn's several-line "feature names should match" error came from deep in predict;
    every one-fit entry point now refuses in one line naming the columns and the fix."""
    X, y = frame
    model = LinearRegression().fit(X, y)
    table = {"reordered": X[["hum", "temp", "wind"]], "renamed": X.rename(columns={"wind": "Wind"}),
             "extra": X.assign(z=1.0), "missing": X[["temp", "hum"]]}[change]
    named = {"reordered": "another order", "renamed": "missing ['wind']; not seen in fit ['Wind']",
             "extra": "not seen in fit ['z']", "missing": "missing ['wind']"}[change]
    calls = [lambda: pdpboot.partial_dependence(model, table, ["temp"]),
             lambda: pdpboot.accumulated_local_effects(model, table, ["temp"]),
             lambda: pdpboot.h_statistic_of_model(model, table, [("temp", "hum")])]
    for call in calls:
        with pytest.raises(ValueError, match="feature_names_in_") as info:
            call()
        assert named in str(info.value) and "\n" not in str(info.value)


def test_a_model_fitted_on_an_array_given_more_columns_is_refused(frame):
    X, y = frame
    model = LinearRegression().fit(X.to_numpy()[:, :2], y)
    with pytest.raises(ValueError, match=r"X has 3 columns but LinearRegression was fitted on 2") as info:
        pdpboot.partial_dependence(model, X.to_numpy(), [0])
    assert "\n" not in str(info.value)
    np.testing.assert_allclose(  # its own columns: the PD by hand
        pdpboot.partial_dependence(model, X.to_numpy()[:, :2], [0], grid=Grid(custom_values={0: [0.0, 1.0]}))
        ["x0"]["pd"].values.ravel(),
        [model.predict(X.iloc[:, :2].to_numpy() * [0, 1] + [v, 0]).mean() for v in (0.0, 1.0)])


def test_a_fitted_pipeline_selecting_columns_by_name_takes_extra_and_reordered_columns(frame):
    """A Pipeline whose ColumnTransformer selects columns by name accepts a table with more columns or
    another order (scikit-learn allows it): no refusal, and the PD is the model's own (by hand)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    X, y = frame
    model = Pipeline([("pick", ColumnTransformer([("num", "passthrough", ["temp", "hum"])])),
                      ("lr", LinearRegression())]).fit(X, y)
    for table in (X.assign(z=1.0), X[["wind", "hum", "temp"]]):
        res = pdpboot.partial_dependence(model, table, ["temp"], grid=Grid(custom_values={"temp": [0.0, 1.0]}))
        np.testing.assert_allclose(res["temp"]["pd"].values.ravel(),
                                   [model.predict(table.assign(temp=v)).mean() for v in (0.0, 1.0)], rtol=1e-12)
