"""pdpboot.tidy: any result as one long table; plot_facets: seaborn panels drawn from it."""

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot.plotting import TIDY_COLUMNS  # noqa: E402


@pytest.fixture(scope="module")
def banded():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 80), "c": rng.choice([0.0, 1.0, 2.0], 80)})
    y = X.a + X.c + rng.normal(0, 0.1, 80)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "c", ("a", "c")], n_resamples=10,
                                               grid=Grid(4, categorical_features=["c"]), rng=0,
                                               execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(res)


def test_tidy_has_one_row_per_grid_value_with_the_stored_band(banded):
    table = pdpboot.tidy(banded, effects=["pd"])
    assert tuple(table.columns) == TIDY_COLUMNS
    one = table[(table.feature == "a") & table.feature_2.isna()]
    node = banded["a"].ds
    np.testing.assert_array_equal(one["value"], node["a"].values)
    np.testing.assert_array_equal(one["estimate"], node["pd"].values[0])
    np.testing.assert_array_equal(one["lower"], node["pd_band"].sel(ci_bound="lower").values[0])
    np.testing.assert_array_equal(one["upper"], node["pd_band"].sel(ci_bound="upper").values[0])
    np.testing.assert_array_equal(one["se"], node["pd_se"].values[0])
    assert set(one["method"]) == {"percentile, pointwise"} and set(one["confidence_level"]) == {0.95}
    pair = table[table.feature_2 == "c"]
    assert len(pair) == banded["a__c"].ds.sizes["a"] * banded["a__c"].ds.sizes["c"]
    surface = banded["a__c"].ds["pd"].sel(output=pair["output"].iloc[0]).transpose("a", "c").values.ravel()
    np.testing.assert_array_equal(pair["estimate"], surface)
    assert {"pd", "pd_centered"} <= set(pdpboot.tidy(banded)["effect"])  # default: every estimate on the grid


def test_tidy_of_one_fit_has_no_band():
    X = pd.DataFrame({"a": np.arange(20.0)})
    res = pdpboot.partial_dependence(LinearRegression().fit(X, X.a * 2), X, ["a"], grid=Grid(3))
    table = pdpboot.tidy(res)
    assert table["lower"].isna().all() and table["method"].isna().all()
    np.testing.assert_allclose(table["estimate"], 2 * table["value"])


def test_plot_facets_draws_a_panel_per_feature(banded):
    grid = pdpboot.plot_facets(banded)
    axes = grid.axes.ravel()
    assert [ax.get_title() for ax in axes] == ["a", "c"]
    assert axes[0].lines and axes[0].collections  # line and shaded band
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["0.0", "1.0", "2.0"]  # levels, with bars
    plt.close(grid.figure)
    with pytest.raises(ValueError, match="No 1-D 'ale'"):
        pdpboot.plot_facets(banded, effect="ale")


def test_plot_facets_keeps_its_title_and_y_label_inside_the_saved_figure(banded):
    grid = pdpboot.plot_facets(banded)
    figure = grid.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    inside = figure.bbox.padded(1)  # a pixel of slack for rounding
    title = [t for t in figure.findobj(matplotlib.text.Text) if t.get_text() == figure.get_suptitle()]
    texts = [*title[:1], *(ax.yaxis.label for ax in grid.axes.flat if ax.get_ylabel())]
    assert len(texts) >= 2
    for text in texts:
        box = text.get_window_extent(renderer)
        assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), text.get_text()
    plt.close(figure)
