"""Grids: hostile custom_values, categorical_features, percentiles, dtypes (issue 13, items 5-7)."""

import numpy as np
import pandas as pd
import pytest

import pdpboot
from pdpboot import Grid
from pdpboot._validate import check_table
from pdpboot.grid import check_grid, check_percentiles, make_grids


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "num": rng.normal(size=12),
        "cat": pd.Categorical(rng.choice(["u", "v"], 12), categories=["u", "v", "w"]),
        "ints": pd.Series([3, 1, 2, 10] * 3, dtype=object),
    })
    return X, list(X.columns)


def _grids(X, names, positions, **kw):
    return make_grids(X, names, positions, grid_resolution=4, **kw)


def test_custom_values_level_not_a_category_is_refused(table):
    X, names = table
    with pytest.raises(ValueError, match=r"custom_values\['cat'\] holds \['zz'\].*not categories"):
        _grids(X, names, [1], custom_values={"cat": ["u", "zz"]})
    # an unused but declared category is a level the model can be asked about
    assert list(_grids(X, names, [1], custom_values={"cat": ["u", "w"]})[1].values) == ["u", "w"]


@pytest.mark.parametrize("custom, error, match", [
    ({99: [1.0]}, ValueError, r"key 99, out of range for X with 3 columns"),
    ({"nope": [1.0]}, ValueError, r"names 'nope', which is not a column"),
    ({"num": 1.0}, TypeError, r"custom_values\['num'\] must be a 1-D sequence.*float 1.0"),
    ({"num": "abc"}, TypeError, r"custom_values\['num'\] must be a 1-D sequence"),
    ({"num": []}, ValueError, r"non-empty"),
    ({"num": [1.0, 1.0]}, ValueError, r"repeats a value"),
    ({"num": [1.0, "a"]}, TypeError, r"one type"),
    ({"num": [1.0], 0: [2.0]}, ValueError, r"twice"),
    ([("num", [1.0])], TypeError, r"custom_values must be a dict"),
])
def test_bad_custom_values(table, custom, error, match):
    X, names = table
    with pytest.raises(error, match=match):
        _grids(X, names, [0], custom_values=custom)


@pytest.mark.parametrize("custom, error, match", [
    ({"num": ["1", "2"]}, TypeError, r"custom_values\['num'\] holds text \(\['1', '2'\]\) but column 'num' is numeric"),
    ({"num": [1.0, np.inf]}, ValueError, r"custom_values\['num'\] holds an infinite value"),
    ({"num": [-np.inf, 0.0]}, ValueError, r"infinite"),
])
def test_custom_values_the_column_cannot_hold_are_refused(table, custom, error, match):
    """Hostile round 2: text grid values on a numeric column were accepted (stored as a text grid, drawn as
    levels); an infinite one failed inside scikit-learn's input check ("Input X contains infinity")."""
    X, names = table
    with pytest.raises(error, match=match):
        _grids(X, names, [0], custom_values=custom)
    # NaN stays allowed (the missing-value grid point), and text stays allowed on a text column
    assert np.isnan(_grids(X, names, [0], custom_values={"num": [0.0, np.nan]})[0].values).sum() == 1
    Xs = X.assign(num=X["num"].round(1).astype(str))
    assert list(_grids(Xs, names, [0], custom_values={"num": ["0.5", "x"]})[0].values) == ["0.5", "x"]


def test_negative_custom_key_counts_from_the_end(table):
    X, names = table
    assert list(_grids(X, names, [2], custom_values={-1: [1, 2]})[2].values) == [1, 2]


@pytest.mark.parametrize("cats, error, match", [
    ([99], ValueError, r"index 99, out of range for X with 3 columns"),
    ([-4], ValueError, r"index -4, out of range"),
    (["nope"], ValueError, r"names 'nope'"),
    ([True, False], ValueError, r"boolean mask needs one entry per column \(3\)"),
])
def test_bad_categorical_features(table, cats, error, match):
    X, names = table
    with pytest.raises(error, match=match):
        _grids(X, names, [0], categorical_features=cats)


def test_categorical_features_by_name_string(table):
    X, names = table
    assert _grids(X, names, [0], categorical_features="num")[0].categorical


@pytest.mark.parametrize("percentiles, error", [
    (0.5, TypeError), ("ab", TypeError), ((0.1,), TypeError), ((0.1, "x"), TypeError),
    ((0.9, 0.1), ValueError), ((-0.1, 0.5), ValueError), ((True, 0.5), TypeError),
])
def test_bad_percentiles_name_the_argument(percentiles, error):
    with pytest.raises(error, match="percentiles"):
        check_percentiles(percentiles)


def test_numpy_percentiles_accepted():
    assert check_percentiles(np.array([0.05, 0.95], dtype=np.float32)) == pytest.approx((0.05, 0.95))


def test_object_numbers_get_numeric_levels_in_natural_order(table):
    X, names = table
    grid = _grids(X, names, [2])[2]
    assert grid.categorical and grid.values.tolist() == [1, 2, 3, 10]  # not "1, 10, 2, 3"
    assert grid.values.dtype.kind == "i"


@pytest.mark.parametrize("values", [[1, "a", 2.5], [True, "a", "b"], [(1, 2), (3, 4), (1, 2)]])
def test_mixed_object_column_refused_naming_it(values):
    X = pd.DataFrame({"m": pd.Series(values * 2, dtype=object)})
    with pytest.raises(ValueError, match=r"Column 'm' mixes value types|Column 'm'.*cannot store"):
        make_grids(X, ["m"], [0])


@pytest.mark.parametrize("column", [
    pd.Series(pd.date_range("2020", periods=6)),
    pd.Series(pd.date_range("2020", periods=6, tz="UTC")),
    pd.Series(pd.timedelta_range("1D", periods=6)),
    pd.Series(pd.period_range("2020", periods=6, freq="M")),
])
def test_datetime_like_features_refused_naming_them(column):
    X = pd.DataFrame({"when": column, "x": np.arange(6.0)})
    X, names = check_table(X)
    with pytest.raises(ValueError, match=r"Feature 'when' has dtype .*convert it"):
        make_grids(X, names, [0])
    make_grids(X, names, [1])  # another feature of the same table is fine


@pytest.mark.parametrize("dtype, values, expected_kind", [
    ("Int64", [1, 2, 3, 2], "i"),
    ("Int64", [1, None, 3, 2], "f"),
    ("Float64", [1.5, None, 3.0, 2.0], "f"),
    ("boolean", [True, False, True, True], "b"),
    ("boolean", [True, None, False, True], "b"),
    ("string", ["a", "b", None, "a"], "U"),
])
def test_nullable_columns_become_plain(dtype, values, expected_kind):
    X = pd.DataFrame({"v": pd.array(values, dtype=dtype)})
    plain, names = check_table(X)
    assert isinstance(plain["v"].dtype, np.dtype)
    grid = make_grids(plain, names, [0], grid_resolution=10)[0]
    assert grid.values.dtype.kind == expected_kind
    assert not pd.isna(grid.values).any()
    assert X["v"].dtype == dtype  # the caller's table is untouched


def test_unused_categories_are_not_grid_points():
    X = pd.DataFrame({"c": pd.Categorical(["b", "a", "b"], categories=["c", "b", "a", "z"])})
    assert make_grids(X, ["c"], [0])[0].values.tolist() == ["b", "a"]  # category order, observed only


def test_string_level_ending_in_nul_is_kept():
    X = pd.DataFrame({"c": ["a\x00", "a", "a\x00"]})
    assert sorted(make_grids(X, ["c"], [0])[0].values.tolist()) == ["a", "a\x00"]


# ----------------------------------------------------------------------------- issue 26 D: one rule for PD and ALE


def test_a_few_valued_integer_feature_is_numeric_in_pd_and_ale():
    """mtcars' hp (22 integers, 52 to 335) was drawn as equally spaced ALE levels while PD used numbers."""
    from sklearn.linear_model import LinearRegression

    import pdpboot

    hp = np.array([110, 110, 93, 110, 175, 105, 245, 62, 95, 123, 123, 180, 180, 180, 205, 215, 230, 66, 52, 65,
                   97, 150, 150, 245, 175, 66, 91, 113, 264, 175, 335, 109])
    wt = np.random.default_rng(0).uniform(1.5, 5.4, hp.size)
    X = pd.DataFrame({"hp": hp, "wt": wt})
    model = LinearRegression().fit(X, 30 - 0.03 * hp - 3 * wt)
    pd1 = pdpboot.partial_dependence(model, X, ["hp"], grid=Grid(30))["hp"]
    ale = pdpboot.accumulated_local_effects(model, X, ["hp"], grid=Grid(30))["hp"]
    for node in (pd1, ale):
        np.testing.assert_array_equal(node["hp"].values, np.unique(hp))  # the values themselves, numbers
        assert not bool(node.attrs["categorical"][0])
    assert ale.attrs["ale_kind"] == ["numeric"]
    curve = ale["ale"].sel(output=ale["output"].values[0]).values
    np.testing.assert_allclose(np.diff(curve), -0.03 * np.diff(np.unique(hp)), atol=1e-10)
    # named categorical, it has levels (the user's choice)
    named = pdpboot.accumulated_local_effects(model, X, ["hp"], grid=Grid(30, categorical_features=["hp"]))
    assert named["hp"].attrs["ale_kind"] != ["numeric"]


def test_numeric_custom_values_are_sorted_so_every_reader_reads_the_axis_in_order():
    """custom_values {"a": [1, -1, 0.5, -0.5]} used to stay in that order: the band was drawn as a zigzag
    polygon, ice_heterogeneity refused the finished result ("must be strictly increasing") and the centred
    PD was anchored at 1.0.  Numeric custom grids are now sorted (NaN last); the PD at each value is
    unchanged (by hand: the model's own predictions averaged)."""
    import pandas as pd
    from sklearn.linear_model import LinearRegression

    import pdpboot

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    y = X.a + X.b
    res = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["a"], grid=Grid(custom_values={"a": [1.0, -1.0, 0.5, -0.5]}), n_resamples=4, rng=0,
        statistics="ice", execution=pdpboot.Execution(n_jobs=1, progress=False))
    np.testing.assert_array_equal(res["a"]["a"].values, [-1.0, -0.5, 0.5, 1.0])
    model = LinearRegression().fit(X, y)
    np.testing.assert_allclose(res["a"]["pd"].values.ravel(),
                               [model.predict(X.assign(a=v)).mean() for v in (-1.0, -0.5, 0.5, 1.0)], rtol=1e-12)
    assert "cice_sd" in pdpboot.ice_heterogeneity(res)["a"].to_dataset()
    centred = pdpboot.confidence_bands(res)["a"]["pd_centered"].values.ravel()
    np.testing.assert_allclose(centred, res["a"]["pd"].values.ravel() - res["a"]["pd"].values.ravel()[0])


def test_a_nan_grid_value_for_a_model_without_missing_values_is_refused_before_any_fit():
    """custom_values with NaN for a LinearRegression failed after the full-data fit with scikit-learn's
    several-line "Input X contains NaN"; now one line before any fit (and a model taking NaN still runs)."""
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import LinearRegression

    import pdpboot

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    y = X.a + X.b
    calls = [lambda: pdpboot.bootstrap_partial_dependence(
                 LinearRegression(), X, y, ["a"], grid=Grid(custom_values={"a": [1.0, np.nan]}), n_resamples=2, rng=0,
                 execution=pdpboot.Execution(n_jobs=1, progress=False)),
             lambda: pdpboot.partial_dependence(LinearRegression().fit(X, y), X, ["a"],
                                                grid=Grid(custom_values={"a": [1.0, np.nan]}))]
    for call in calls:
        with pytest.raises(ValueError, match=r"The grid of \['a'\] holds NaN.*LinearRegression cannot take") as info:
            call()
        assert "\n" not in str(info.value)
    model = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
    res = pdpboot.partial_dependence(model, X, ["a"], grid=Grid(custom_values={"a": [np.nan, 1.0]}))
    np.testing.assert_allclose(res["a"]["pd"].values.ravel(),
                               [model.predict(X.assign(a=v)).mean() for v in (1.0, np.nan)], rtol=1e-12)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"resolution": 1}, ValueError, r"Grid\(resolution=...\) must be an integer >= 2 or None, got 1"),
    ({"resolution": 2.5}, ValueError, r"Grid\(resolution=...\)"),
    ({"resolution": True}, ValueError, r"Grid\(resolution=...\)"),
    ({"percentiles": (0.9, 0.1)}, ValueError, r"percentiles must be two increasing numbers"),
    ({"custom_values": [("num", [1.0])]}, TypeError, r"custom_values must be a dict"),
    ({"categorical_features": [[0, 1]]}, TypeError, r"categorical_features must be a list"),
])
def test_grid_is_validated_when_made(kwargs, error, match):
    with pytest.raises(error, match=match):
        Grid(**kwargs)


def test_grid_defaults_per_effect_and_refusals():
    """None resolution: 50 PD points, 20 ALE bins (also beside custom_values); a grid that is not a Grid, or PD
    percentiles given to ALE, are refused in one line."""
    from sklearn.linear_model import LinearRegression

    X = pd.DataFrame(np.random.default_rng(0).normal(size=(200, 2)), columns=["a", "b"])
    model = LinearRegression().fit(X, X["a"])
    assert check_grid(None, 50) == Grid(50)
    assert check_grid(Grid(percentiles=(0.1, 0.9)), 20) == Grid(20, (0.1, 0.9))
    custom = Grid(custom_values={"b": [0.0, 1.0]})
    pd_ = pdpboot.partial_dependence(model, X, ["a", "b"], grid=custom)
    assert (pd_["a"]["a"].size, pd_["b"]["b"].size) == (50, 2)
    ale = pdpboot.accumulated_local_effects(model, X, ["a"], grid=custom)
    assert ale["a"]["a"].size == 21  # 20 bins: 21 edges
    assert pd_.attrs["settings"] == pdpboot.partial_dependence(model, X, ["a", "b"], grid=Grid(50, custom_values={
        "b": [0.0, 1.0]})).attrs["settings"]
    with pytest.raises(TypeError, match=r"grid must be a pdpboot.Grid \(e.g. grid=pdpboot.Grid\(20\)\), got dict"):
        pdpboot.partial_dependence(model, X, ["a"], grid={"resolution": 5})
    with pytest.raises(ValueError, match=r"ALE bins span the data: Grid\(percentiles=...\) does not apply"):
        pdpboot.accumulated_local_effects(model, X, ["a"], grid=Grid(percentiles=(0.1, 0.9)))
