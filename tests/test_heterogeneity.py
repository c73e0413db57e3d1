"""ICE heterogeneity statistics: NumPy layer, xarray layer and bootstrap integration."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import pdpboot
from pdpboot import Grid
from pdpboot.engine.ice_stats import (
    centered_ice,
    derivative_ice,
    heterogeneity_index,
    ice_statistics,
    weighted_sd,
)
from pdpboot.heterogeneity import BINNED_COLUMNS

# ----------------------------------------------------------------------------- helpers


def _goldstein_data(n, rng):
    """y = 0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0] + eps, U(-1, 1) features (Goldstein et al. 2015)."""
    X = rng.uniform(-1, 1, size=(n, 3))
    y = 0.2 * X[:, 0] - 5 * X[:, 1] + 10 * X[:, 1] * (X[:, 2] >= 0) + rng.normal(0, 0.5, n)
    return X, y


def _goldstein_basis(X):
    X = np.asarray(X, dtype=float)
    return np.column_stack([X[:, 0], X[:, 1], X[:, 1] * (X[:, 2] >= 0)])


def _goldstein_model(X, y):
    """A correctly specified (hence well-fitting) linear model of the Goldstein DGP."""
    return make_pipeline(FunctionTransformer(_goldstein_basis), LinearRegression()).fit(X, y)


# ----------------------------------------------------------------------------- NumPy layer


def test_weighted_sd_equals_sd_of_repeated_rows():
    rng = np.random.default_rng(1)
    values = rng.normal(size=(7, 2, 5))
    counts = np.array([1, 3, 0, 2, 1, 4, 1])
    expanded = np.repeat(values, counts, axis=0)
    np.testing.assert_allclose(weighted_sd(values, counts, axis=0), expanded.std(axis=0), rtol=1e-12)
    np.testing.assert_allclose(weighted_sd(values, axis=0), values.std(axis=0), rtol=1e-12)
    # another axis
    np.testing.assert_allclose(weighted_sd(values, np.ones(5), axis=-1), values.std(axis=-1), rtol=1e-12)


@pytest.mark.parametrize("weights", [[1, 2], [-1, 1, 1, 1, 1, 1, 1], [0] * 7])
def test_weighted_sd_rejects_bad_weights(weights):
    with pytest.raises(ValueError, match="weights"):
        weighted_sd(np.ones((7, 3)), weights, axis=0)


def test_centered_ice_anchors_first_grid_value():
    ice = np.arange(24.0).reshape(2, 3, 4) ** 1.5
    c = centered_ice(ice)
    np.testing.assert_array_equal(c[..., 0], 0.0)
    np.testing.assert_allclose(c[..., 3], ice[..., 3] - ice[..., 0])
    c0 = centered_ice(ice, grid_axis=0)
    np.testing.assert_allclose(c0[1], ice[1] - ice[0])


def test_derivative_ice_exact_for_quadratics_on_uneven_grid():
    grid = np.array([-1.0, -0.7, 0.1, 0.15, 0.9, 2.0])
    slopes = np.array([-2.0, 0.5, 3.0])
    ice = slopes[:, None, None] * grid + 0.7 * grid**2 + 4.0  # (3, 1, 6)
    d = derivative_ice(ice, grid)
    interior = slopes[:, None, None] + 1.4 * grid[1:-1]
    np.testing.assert_allclose(d[..., 1:-1], interior, rtol=1e-12, atol=1e-12)
    # one-sided first differences at the ends
    np.testing.assert_allclose(d[..., 0], (ice[..., 1] - ice[..., 0]) / 0.3, rtol=1e-12)
    np.testing.assert_allclose(d[..., -1], (ice[..., -1] - ice[..., -2]) / 1.1, rtol=1e-12)


def test_derivative_ice_categorical_steps_between_consecutive_levels():
    ice = np.array([[[1.0, 4.0, 2.0]], [[0.0, 0.0, 5.0]]])
    d = derivative_ice(ice, np.array(["a", "b", "c"]), categorical=True)
    np.testing.assert_array_equal(d[..., 0], 0.0)  # no predecessor: 0 by convention
    np.testing.assert_array_equal(d[..., 1:], [[[3.0, -2.0]], [[0.0, 5.0]]])


def test_derivative_ice_validates_grid():
    with pytest.raises(ValueError, match="strictly increasing"):
        derivative_ice(np.ones((2, 3)), [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="one value per grid point"):
        derivative_ice(np.ones((2, 3)), [0.0, 1.0])
    with pytest.raises(TypeError, match="categorical=True"):
        derivative_ice(np.ones((2, 2)), np.array(["a", "b"]))
    np.testing.assert_array_equal(derivative_ice(np.ones((2, 1)), [3.0]), 0.0)


def test_heterogeneity_index_of_linear_ice_curves():
    # ICE_i(z) = a_i + b_i z: mean-centred curves b_i (z - zbar), so the index is Var_w(b) * mean (z - zbar)^2
    grid = np.array([0.0, 0.5, 2.0, 3.0])
    a = np.array([1.0, -2.0, 5.0, 0.3])
    b = np.array([2.0, -1.0, 0.5, 1.0])
    w = np.array([1.0, 2.0, 3.0, 1.0])
    ice = (a[:, None] + b[:, None] * grid)[:, None, :]
    var_b = np.average((b - np.average(b, weights=w)) ** 2, weights=w)
    expected = var_b * np.mean((grid - grid.mean()) ** 2)
    np.testing.assert_allclose(heterogeneity_index(ice, w), [expected], rtol=1e-12)
    # parallel curves (only the level differs) are not heterogeneous
    parallel = (a[:, None] + np.sin(grid))[:, None, :]
    np.testing.assert_allclose(heterogeneity_index(parallel), [0.0], atol=1e-14)


def test_ice_statistics_additive_model_has_zero_dice_sd():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    model = make_pipeline(
        FunctionTransformer(lambda Z: np.column_stack([np.sin(Z[:, 0]), Z[:, 1] ** 2, Z[:, 2]])),
        LinearRegression(),
    ).fit(X, y)
    sk = sk_partial_dependence(model, X, [0], kind="individual", grid_resolution=20)
    ice = sk["individual"][0][:, None, :]  # sklearn: (n_outputs=1, n_rows, grid) -> (rows, 1, grid)
    grid = sk["grid_values"][0]
    stats = ice_statistics(ice.transpose(1, 0, 2), grid, instance_axis=1)
    assert stats["dice_sd"].shape == (1, 20)
    np.testing.assert_allclose(stats["dice_sd"], 0.0, atol=1e-10)
    np.testing.assert_allclose(stats["cice_sd"], 0.0, atol=1e-10)
    np.testing.assert_allclose(stats["heterogeneity_index"], 0.0, atol=1e-18)
    # ICE_i(z) = c0 sin(z) + rest(x_-0^(i)): the curves differ only in level, by SD(rest) at every z
    rest = model.predict(X) - model[-1].coef_[0] * np.sin(X[:, 0])
    np.testing.assert_allclose(stats["ice_sd"], np.full((1, 20), rest.std()), rtol=1e-9)


def test_ice_statistics_goldstein_on_sklearn_ice():
    rng = np.random.default_rng(3)
    X, y = _goldstein_data(2000, rng)
    model = _goldstein_model(X, y)
    sk = sk_partial_dependence(model, X, [1], kind="both", grid_resolution=15)
    ice = np.moveaxis(sk["individual"], 0, 1)  # (rows, outputs, grid)
    stats = ice_statistics(ice, sk["grid_values"][0])
    # PD of x2 is flat: the two subgroups' slopes -5 and +5 cancel
    np.testing.assert_allclose(np.ptp(sk["average"][0]), 0.0, atol=0.25)
    np.testing.assert_allclose(stats["dice_sd"], 5.0, atol=0.15)
    share = np.mean(X[:, 2] >= 0)
    slope = model[-1].coef_
    slopes = np.where(X[:, 2] >= 0, slope[1] + slope[2], slope[1])
    np.testing.assert_allclose(stats["dice_sd"], slopes.std(), rtol=1e-9)
    assert abs(share - 0.5) < 0.05
    # c-ICE spread grows linearly from the anchor: |z - z_1| * SD(slopes)
    grid = sk["grid_values"][0]
    expected = np.abs(grid - grid[0]) * slopes.std()
    np.testing.assert_allclose(stats["cice_sd"][0], expected, rtol=1e-9, atol=1e-12)


def test_ice_statistics_shapes_and_weights():
    rng = np.random.default_rng(4)
    ice = rng.normal(size=(6, 2, 5))
    counts = np.array([2, 0, 1, 1, 3, 1])
    stats = ice_statistics(ice, np.linspace(0, 1, 5), weights=counts)
    expanded = ice_statistics(np.repeat(ice, counts, axis=0), np.linspace(0, 1, 5))
    for name in ("ice_sd", "cice_sd", "dice_sd"):
        assert stats[name].shape == (2, 5)
        np.testing.assert_allclose(stats[name], expanded[name], rtol=1e-12)
    assert stats["heterogeneity_index"].shape == (2,)
    np.testing.assert_allclose(stats["heterogeneity_index"], expanded["heterogeneity_index"], rtol=1e-12)


# ----------------------------------------------------------------------------- xarray layer and bootstrap

import xarray as xr  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

from pdpboot.datasets import make_additive_uniform, make_goldstein, make_interaction  # noqa: E402
from pdpboot.heterogeneity import centered_ice as xr_centered_ice  # noqa: E402
from pdpboot.heterogeneity import derivative_ice as xr_derivative_ice  # noqa: E402
from pdpboot.heterogeneity import ice_heterogeneity  # noqa: E402
from pdpboot.interaction import h_statistic  # noqa: E402

STATS = ("ice_sd", "cice_sd", "dice_sd", "heterogeneity_index")


def _interaction_ols():
    from sklearn.preprocessing import PolynomialFeatures

    return make_pipeline(PolynomialFeatures(2, interaction_only=True, include_bias=False), LinearRegression())


def test_loop_statistics_equal_statistics_of_stored_ice():
    # background="original" and ice=True: the ICE instances are exactly the background rows
    X, y = make_interaction(150, rng=0)
    res = pdpboot.bootstrap_partial_dependence(
        _interaction_ols(), X, y, ["x1", "x2"], n_resamples=6, grid=Grid(8), rng=1,
        resampling=pdpboot.Resampling(background="original"),
        execution=pdpboot.Execution(progress=False), statistics=["heterogeneity", "ice"],
    )
    loop = ice_heterogeneity(res, source="loop", confidence_level=None)
    from_ice = ice_heterogeneity(res, source="ice", confidence_level=None)
    auto = ice_heterogeneity(res, confidence_level=None)
    for feature in ("x1", "x2"):
        assert loop[feature].attrs["source"] == "loop" and from_ice[feature].attrs["source"] == "ice"
        assert auto[feature].attrs["source"] == "loop"
        for name in STATS:
            for var in (name, f"{name}_resamples"):
                xr.testing.assert_allclose(loop[feature].ds[var], from_ice[feature].ds[var], rtol=1e-10)
        assert loop[feature].ds["ice_sd_resamples"].dims == ("resample", "output", feature)
        assert loop[feature].ds["heterogeneity_index"].dims == ("output",)


def test_additive_model_bands_and_zero_dice_sd():
    X, y = make_additive_uniform(200, rng=2)
    res = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["x1", "x2"], n_resamples=20, grid=Grid(6),
        rng=3, execution=pdpboot.Execution(progress=False), statistics=["heterogeneity"],
    )
    het = ice_heterogeneity(res)
    ds = het["x1"].ds
    zero = ("dice_sd", "dice_sd_resamples", "cice_sd", "heterogeneity_index", "heterogeneity_index_resamples")
    for var in zero:
        np.testing.assert_allclose(ds[var], 0.0, atol=1e-10)
    assert ds["dice_sd_band"].dims == ("ci_bound", "output", "x1")
    assert ds["heterogeneity_index_band"].dims == ("ci_bound", "output")
    assert ds["ice_sd_band"].attrs["method"] == "percentile"
    # the band of a non-degenerate statistic contains its estimate here
    lower, upper = ds["ice_sd_band"].sel(output="y").isel(x1=0).values
    assert lower <= ds["ice_sd"].sel(output="y").isel(x1=0) <= upper
    assert set(het.children) == {"x1", "x2"}


def test_resample_ice_sd_uses_resample_rows_and_multiplicities():
    from pdpboot.engine.resample import multiplicities

    X, y = make_additive_uniform(120, rng=4)
    res = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["x1"], n_resamples=3, grid=Grid(5), rng=5,
        execution=pdpboot.Execution(progress=False), statistics=["heterogeneity"],
    )
    # recompute resample 0 by hand from the documented seed streams
    seed = np.random.default_rng(5).spawn(3 + 3)[3]
    draw_rng, _, _ = seed.spawn(3)
    rows = np.sort(draw_rng.integers(0, 120, size=120))  # n rows with replacement
    distinct, counts = multiplicities(rows, 120)
    model = LinearRegression().fit(X.iloc[rows], y.iloc[rows])
    # ICE_i(z) = b1 z + b2 x2_i + c: the level spread is |b2| * weighted SD of x2 over the resample rows
    x2 = X["x2"].to_numpy()[distinct]
    mean = np.average(x2, weights=counts)
    expected = abs(model.coef_[1]) * np.sqrt(np.average((x2 - mean) ** 2, weights=counts))
    got = res["x1"].ds["ice_sd_resamples"].isel(resample=0).values
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_goldstein_hidden_effect_correctly_specified_model():
    X, y = make_goldstein(2000, rng=6)
    model = _goldstein_model(X.to_numpy(), y.to_numpy())
    # an array input names its columns x0, x1, x2: "x1" is the DGP's x2
    pdr = pdpboot.partial_dependence(model, X.to_numpy(), [1], kind="both", grid=Grid(12))
    het = ice_heterogeneity(pdr)
    assert "x1" in het.children and het["x1"].attrs["source"] == "ice"
    np.testing.assert_allclose(pdr["x1"].ds["pd"] - pdr["x1"].ds["pd"].mean(), 0.0, atol=0.3)
    np.testing.assert_allclose(het["x1"].ds["dice_sd"], 5.0, atol=0.2)
    assert "dice_sd_band" not in het["x1"].ds  # one fit: no resamples, no bands


def test_goldstein_hidden_effect_gradient_boosting():
    from threadpoolctl import threadpool_limits

    X, y = make_goldstein(2000, rng=7)
    with threadpool_limits(1):  # OpenMP threads crawl on a busy shared machine
        model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
        pdr = pdpboot.partial_dependence(model, X, ["x2"], kind="both", grid=Grid(15))
    dice = ice_heterogeneity(pdr)["x2"].ds["dice_sd"].values
    # flat PD (the truth is exactly flat), while single ICE curves move by about 9 over the grid
    assert np.ptp(pdr["x2"].ds["pd"].values) < 1.0
    # a step-function model's finite-difference slopes are noisy point by point, right on average
    assert 4.4 < dice.mean() < 5.6 and np.median(dice) > 4.0


def test_categorical_feature_in_the_loop_has_finite_bands():
    rng = np.random.default_rng(8)
    n = 200
    color = rng.choice(["blue", "green", "red"], size=n)
    x = rng.normal(size=n)
    effect = pd.Series(color).map({"blue": 0.0, "green": 1.0, "red": -1.0}).to_numpy()
    y = effect * (1 + x) + rng.normal(0, 0.3, n)  # the colour effect depends on x
    X = pd.DataFrame({"color": pd.Categorical(color), "x": x})
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures

    model = make_pipeline(
        make_column_transformer((OneHotEncoder(sparse_output=False), ["color"]), ("passthrough", ["x"])),
        PolynomialFeatures(2, interaction_only=True, include_bias=False),
        LinearRegression(),
    )
    res = pdpboot.bootstrap_partial_dependence(model, X, y, ["color", ("color", "x")], n_resamples=10,
                                               grid=Grid(5),
                                               rng=9, execution=pdpboot.Execution(progress=False),
                                               statistics=["heterogeneity", "interactions"])
    ds = ice_heterogeneity(res)["color"].ds
    h = h_statistic(res)
    assert float(h["color__x"].ds["h2"][0]) > 0.1  # the colour effect depends on x
    assert np.isfinite(h["color__x"].ds["pd_variance_interaction_band"]).all()
    assert list(ds["color"].values) == ["blue", "green", "red"]
    np.testing.assert_array_equal(ds["dice_sd"].sel(color="blue"), 0.0)  # no step into the first level
    steps = ds["dice_sd"].sel(output="y").values[1:]
    # step blue->green is 1 + x, green->red is -2 (1 + x): SDs SD(x) and 2 SD(x) (approximately, fitted)
    np.testing.assert_allclose(steps, [x.std(), 2 * x.std()], rtol=0.15)
    assert np.isfinite(ds["dice_sd_band"]).all()


def test_xarray_centered_and_derivative_ice_and_errors():
    X, y = make_interaction(100, rng=10)
    pdr = pdpboot.partial_dependence(_interaction_ols().fit(X, y), X, ["x1"], kind="individual",
                                     grid=Grid(6))
    ice = pdr["x1"].ds["ice"]
    c = xr_centered_ice(ice, "x1")
    assert c.dims == ice.dims
    np.testing.assert_allclose(c.isel(x1=0), 0.0)
    d = xr_derivative_ice(ice, "x1")
    np.testing.assert_allclose(d.values, derivative_ice(ice.values, ice["x1"].values))
    with pytest.raises(ValueError, match="no dim"):
        xr_centered_ice(ice, "x9")
    with pytest.raises(ValueError, match="statistics=.heterogeneity."):
        ice_heterogeneity(pdpboot.partial_dependence(_interaction_ols().fit(X, y), X, ["x1"]))
    with pytest.raises(ValueError, match="source"):
        ice_heterogeneity(pdr, source="everything")
    with pytest.raises(ValueError, match="single features"):
        ice_heterogeneity(pdr, [("x1", "x2")])
    with pytest.raises(TypeError, match="DataTree"):
        ice_heterogeneity(pdr["x1"].ds)


def test_loop_statistics_agree_between_tree_and_brute_engines():
    from sklearn.ensemble import RandomForestRegressor

    X, y = make_goldstein(200, rng=11)
    runs = {
        method: pdpboot.bootstrap_partial_dependence(
            RandomForestRegressor(n_estimators=10, max_depth=4), X, y, ["x2"], n_resamples=3,
            grid=Grid(6), rng=12,
            execution=pdpboot.Execution(method=method, progress=False), statistics=["heterogeneity"],
        )
        for method in ("tree", "brute")
    }
    for name in STATS:
        for var in (name, f"{name}_resamples"):
            xr.testing.assert_allclose(runs["tree"]["x2"].ds[var], runs["brute"]["x2"].ds[var], rtol=1e-9)


# ----------------------------------------------------------------------------- binned_outcome


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.exponential(size=150), "b": rng.normal(size=150)})
    X.loc[[3, 7], "a"] = np.nan  # rows without a value are in no bin
    y = pd.Series(3 * X["a"].fillna(0) + X["b"] + rng.normal(size=150))
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X.fillna(0.0), y, ["a"], n_resamples=6,
                                               grid=Grid(7), rng=0, execution=pdpboot.Execution(progress=False))
    return X, y, pdpboot.confidence_bands(res)


def test_counts_and_means_are_those_of_the_nearest_grid_value(regression):
    X, y, res = regression
    table = pdpboot.binned_outcome(res, X, y, "a")
    assert list(table.columns) == list(BINNED_COLUMNS)
    grid = res["a"]["a"].values
    a = X["a"].to_numpy()
    nearest = np.array([np.argmin(np.abs(grid - v)) if np.isfinite(v) else -1 for v in a])
    for i in range(len(grid)):
        rows = nearest == i
        assert table["count"][i] == rows.sum()
        assert table["observed"][i] == pytest.approx(y[rows].mean(), rel=1e-12)
    assert table["count"].sum() == 148


def test_classifier_observed_is_the_share_of_each_class():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"c": rng.choice(["lo", "mid", "hi"], 200), "b": rng.normal(size=200)})
    y = np.where(rng.uniform(size=200) < np.where(X["c"] == "hi", 0.8, 0.3), "yes", "no")
    model = RandomForestClassifier(n_estimators=10, random_state=0)
    Xn = X.assign(c=X["c"].map({"lo": 0, "mid": 1, "hi": 2}))
    res = pdpboot.bootstrap_partial_dependence(model, Xn, y, ["c"], grid=Grid(categorical_features=["c"]),
                                               n_resamples=4, rng=0, execution=pdpboot.Execution(progress=False))
    table = pdpboot.binned_outcome(res, Xn, y, "c")
    for (level, output), row in table.set_index(["value", "output"]).iterrows():
        mask = Xn["c"].to_numpy() == level
        assert row["count"] == mask.sum()
        assert row["observed"] == pytest.approx(np.mean(y[mask] == output), rel=1e-12)
    assert set(table["output"]) == {"no", "yes"}


def test_missing_or_text_outcomes_are_refused(regression):
    """Hostile round 3: a missing outcome counted as a row of no class (class shares biased towards 0) or made
    every regression bin's mean NaN, silently."""
    X, y, res = regression
    with_na = pd.Series(pd.array(np.where(np.arange(len(y)) % 10 == 0, None, y), dtype="Float64"))
    with pytest.raises(ValueError, match=r"y has 15 missing value\(s\).*X\[keep\], y\[keep\]"):
        pdpboot.binned_outcome(res, X, with_na, "a")
    with pytest.raises(ValueError, match=r"y has 15 missing value\(s\)"):
        pdpboot.binned_outcome(res, X, y.where(np.arange(len(y)) % 10 != 0), "a")
    with pytest.raises(ValueError, match=r"not numbers \(e.g. 'high'\)"):
        pdpboot.binned_outcome(res, X, y.astype(object).where(np.arange(len(y)) != 4, "high"), "a")


def test_classifier_share_with_a_missing_label_is_refused():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"b": rng.normal(size=120)})
    y = np.where(X["b"] > 0, "yes", "no").astype(object)
    res = pdpboot.partial_dependence(RandomForestClassifier(5, random_state=0).fit(X, y), X, ["b"], grid=Grid(4))
    y[:12] = None
    with pytest.raises(ValueError, match=r"y has 12 missing value\(s\)"):
        pdpboot.binned_outcome(res, X, y, "b")


def test_plot_target_draws_the_pd_the_observed_means_and_the_counts(regression):
    X, y, res = regression
    top, bottom = pdpboot.plot_target(res, X, y, "a")
    table = pdpboot.binned_outcome(res, X, y, "a")
    np.testing.assert_allclose(top.lines[0].get_ydata(), res["a"]["pd"].values[0])
    (observed,) = [line for line in top.lines if "observed" in line.get_label()]
    np.testing.assert_allclose(observed.get_ydata(), table["observed"])
    np.testing.assert_allclose([p.get_height() for p in bottom.patches], table["count"])
    assert top.get_legend().get_texts()[0].get_text() == "PD estimate"
    assert bottom.get_ylabel() == "rows" and bottom.get_xlabel().startswith("a")
    with pytest.raises(ValueError, match="column 'a'"):
        pdpboot.binned_outcome(res, X.drop(columns="a"), y, "a")
    plt.close("all")
