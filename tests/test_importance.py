"""pd_importance: Greenwell et al.'s PD-based importance with bootstrap intervals, checked by hand."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

import pdpboot
from pdpboot import Grid
from pdpboot.engine.ice_stats import pd_flatness
from pdpboot.importance import IMPORTANCE_COLUMNS


@pytest.fixture(scope="module")
def linear():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=100), "b": rng.normal(size=100), "c": rng.integers(0, 4, 100)})
    y = 2.0 * X["a"] - 0.5 * X["b"] + 4.0 * X["c"]  # no noise: the fitted slopes are these numbers
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b", "c"], n_resamples=30,
                                               grid=Grid(8, categorical_features=["c"]), rng=0,
                                               execution=pdpboot.Execution(progress=False))
    return X, res


def test_importance_equals_the_hand_computed_sd_and_range_over_4(linear):
    X, res = linear
    table = pdpboot.pd_importance(res)
    assert list(table.columns) == list(IMPORTANCE_COLUMNS)
    got = table.set_index("feature")
    grid_a, grid_b = res["a"]["a"].values, res["b"]["b"].values
    # PD of a linear model is slope * grid + const: its SD over the grid is |slope| * SD of the grid
    sd = lambda v: np.sqrt(np.sum((v - v.mean()) ** 2) / (len(v) - 1))  # noqa: E731
    assert got.loc["a", "importance"] == pytest.approx(2.0 * sd(grid_a), rel=1e-9)
    assert got.loc["b", "importance"] == pytest.approx(0.5 * sd(grid_b), rel=1e-9)
    levels = np.sort(X["c"].unique())
    assert got.loc["c", "importance"] == pytest.approx(4.0 * (levels[-1] - levels[0]) / 4, rel=1e-9)
    assert got.loc["c", "measure"] == "range/4" and got.loc["a", "measure"] == "sd"
    assert table["feature"].tolist() == ["c", "a", "b"] and table["rank"].tolist() == [1, 2, 3]


def test_interval_is_the_percentile_interval_of_the_resamples_importances(linear):
    _, res = linear
    table = pdpboot.pd_importance(res, ["a"], confidence_level=0.9).iloc[0]
    curves = res["a"]["pd_resamples"].isel(output=0).transpose("resample", "a").values
    per_resample = [np.std(c, ddof=1) for c in curves]
    lo, hi = np.quantile(per_resample, [0.05, 0.95])
    assert (table["lower"], table["upper"]) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    assert table["se"] == pytest.approx(np.std(per_resample, ddof=1), rel=1e-12)
    assert table["n_resamples"] == 30 and table["method"] == "percentile"


def test_a_feature_the_model_ignores_has_importance_zero_and_one_fit_has_no_interval():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "z": rng.normal(size=60)})
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X[["a"]].assign(z=0.0), X["a"])
    one = pdpboot.partial_dependence(model, X, ["a", "z"], grid=Grid(6))
    table = pdpboot.pd_importance(one).set_index("feature")
    assert table.loc["z", "importance"] == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(table.loc["a", "lower"]) and table.loc["a", "n_resamples"] == 0


def test_flatness_of_classifier_outputs_and_errors():
    curves = np.array([[0.1, 0.5, 0.9], [0.9, 0.5, 0.1]])
    np.testing.assert_allclose(pd_flatness(curves, categorical=False), [0.4, 0.4])
    np.testing.assert_allclose(pd_flatness(curves, categorical=True), [0.2, 0.2])
    with pytest.raises(TypeError, match="DataTree"):
        pdpboot.pd_importance(curves)


def test_plot_importance_draws_bars_and_intervals(linear):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, res = linear
    table = pdpboot.pd_importance(res)
    ax = pdpboot.plot_importance(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c (levels)", "a", "b"]
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, table["importance"])
    (lines,) = [c for c in ax.collections if "interval" in c.get_label()]
    np.testing.assert_allclose([s[:, 0] for s in lines.get_segments()], table[["lower", "upper"]].to_numpy())
    with pytest.raises(TypeError, match="pd_importance"):
        pdpboot.plot_importance(res)
    plt.close("all")
