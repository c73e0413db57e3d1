"""Plot signatures: at most 15 parameters, styling through ``style=``, old keywords through one shim."""

import inspect

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot import plotting  # noqa: E402

MAX_PARAMETERS = 15


@pytest.fixture(scope="module")
def res():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    y = X["a"] * X["b"] + X["a"] + rng.normal(size=80)
    out = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b", ("a", "b")], n_resamples=8,
                                               grid_resolution=6, statistics={"ice": 10}, rng=0,
                                               execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(out)


def test_no_plot_function_has_more_than_15_parameters():
    names = [n for n in plotting.__all__ if n.startswith("plot_")]
    assert {"plot_pd", "plot_pd_contour", "plot_pd_panels", "plot_heterogeneity", "plot_h_statistic"} <= set(names)
    counts = {n: len(inspect.signature(getattr(plotting, n)).parameters) for n in names
              if n != "plot_partial_dependence"}  # the deprecated alias takes *args, **kwargs
    assert max(counts.values()) <= MAX_PARAMETERS, counts


@pytest.mark.parametrize(("old", "element", "value"), [
    ("line_kw", "line", {"color": "red", "linewidth": 4}),
    ("band_kw", "band", {"alpha": 0.5}),
    ("legend_kw", "legend", {"loc": "lower left"}),
])
def test_old_plot_pd_keywords_warn_and_draw_as_style(res, old, element, value):
    with pytest.warns(FutureWarning, match=rf"{old}= is deprecated; pass style=\{{'{element}': "):
        ax_old = pdpboot.plot_pd(res, "a", **{old: value})
    ax_new = pdpboot.plot_pd(res, "a", style={element: value})
    assert [line.get_color() for line in ax_old.lines] == [line.get_color() for line in ax_new.lines]
    assert [line.get_linewidth() for line in ax_old.lines] == [line.get_linewidth() for line in ax_new.lines]
    assert ([c.get_alpha() for c in ax_old.collections] == [c.get_alpha() for c in ax_new.collections])
    plt.close("all")


def test_old_contour_keywords_warn_and_map_to_style(res):
    with pytest.warns(FutureWarning, match=r"clabel= is deprecated; pass style=\{'labels': False\}"):
        ax = pdpboot.plot_pd_contour(res, ("a", "b"), clabel=False)
    assert len(ax.texts) == 0
    with pytest.warns(FutureWarning, match="colorbar_kw"):
        ax = pdpboot.plot_pd_contour(res, ("a", "b"), colorbar_kw={"label": "my label"})
    assert ax.figure.axes[-1].get_ylabel() == "my label"
    ax = pdpboot.plot_pd_contour(res, ("a", "b"), style={"colorbar": {"label": "new"}})
    assert ax.figure.axes[-1].get_ylabel() == "new"
    plt.close("all")


def test_old_panel_and_statistic_keywords_warn(res):
    with pytest.warns(FutureWarning, match=r"pd_kw= is deprecated; pass panel_kw=\{'curve': "):
        fig, axes = pdpboot.plot_pd_panels(res, ["a"], pd_kw={"style": {"line": {"color": "red"}}})
    assert axes[0, 0].lines[0].get_color() == "red"
    fig, axes = pdpboot.plot_pd_panels(res, ["a"], panel_kw={"curve": {"style": {"line": {"color": "red"}}}})
    assert axes[0, 0].lines[0].get_color() == "red"
    het = pdpboot.ice_heterogeneity(res)
    with pytest.warns(FutureWarning, match="rug_kw"):
        pdpboot.plot_heterogeneity(het, "a", rug_kw={"colors": "red"})
    plt.close("all")


def test_style_errors_name_the_elements(res):
    with pytest.raises(ValueError, match=r"style has no element\(s\) \['lines'\]; its elements are line, band"):
        pdpboot.plot_pd(res, "a", style={"lines": {}})
    with pytest.raises(TypeError, match=r"style\['line'\] must be a dict"):
        pdpboot.plot_pd(res, "a", style={"line": "red"})
    with pytest.raises(ValueError, match="panel_kw has no key"):
        pdpboot.plot_pd_panels(res, ["a"], panel_kw={"pd": {}})
    plt.close("all")


def test_style_false_leaves_an_element_out(res):
    ax = pdpboot.plot_pd(res, "a", style={"rug": False, "legend": False})
    assert ax.get_legend() is None
    assert not [c for c in ax.collections if c.get_label() == "" and type(c).__name__ == "LineCollection"]
    ax = pdpboot.plot_pd_contour(res, ("a", "b"), style={"colorbar": False})
    assert len(ax.figure.axes) == 1
    plt.close("all")
