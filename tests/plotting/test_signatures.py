"""Plot signatures: at most 12 parameters, styling through ``style=`` and ``panel_kw=``."""

import inspect

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot import plotting  # noqa: E402

MAX_PARAMETERS = 12


@pytest.fixture(scope="module")
def res():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    y = X["a"] * X["b"] + X["a"] + rng.normal(size=80)
    out = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b", ("a", "b")], n_resamples=8,
                                               grid=Grid(6), statistics={"ice": 10}, rng=0,
                                               execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(out)


def test_no_plot_function_has_more_than_12_parameters():
    names = [n for n in plotting.__all__ if n.startswith("plot_")]
    assert {"plot_pd", "plot_pd_contour", "plot_pd_panels", "plot_heterogeneity", "plot_h_statistic"} <= set(names)
    counts = {n: len(inspect.signature(getattr(plotting, n)).parameters) for n in names}
    assert max(counts.values()) <= MAX_PARAMETERS, counts


@pytest.mark.parametrize(("element", "value"), [("line", {"color": "red", "linewidth": 4}), ("band", {"alpha": 0.5})])
def test_plot_pd_style_reaches_the_artists(res, element, value):
    ax = pdpboot.plot_pd(res, "a", style={element: value})
    if element == "line":
        assert any(line.get_color() == "red" and line.get_linewidth() == 4 for line in ax.lines)
    else:
        assert any(c.get_alpha() == 0.5 for c in ax.collections)
    plt.close("all")


def test_contour_and_panel_styles_reach_the_artists(res):
    ax = pdpboot.plot_pd_contour(res, ("a", "b"), style={"colorbar": {"label": "new"}, "labels": False})
    assert ax.figure.axes[-1].get_ylabel() == "new" and len(ax.texts) == 0
    fig, axes = pdpboot.plot_pd_panels(res, ["a"], panel_kw={"curve": {"style": {"line": {"color": "red"}}}})
    assert axes[0, 0].lines[0].get_color() == "red"
    plt.close("all")


def test_style_errors_name_the_elements(res):
    with pytest.raises(ValueError, match=r"style has no element\(s\) \['lines'\]; its elements are line, band"):
        pdpboot.plot_pd(res, "a", style={"lines": {}})
    with pytest.raises(TypeError, match=r"style\['line'\] must be a dict"):
        pdpboot.plot_pd(res, "a", style={"line": "red"})
    with pytest.raises(ValueError, match="panel_kw has no key"):
        pdpboot.plot_pd_panels(res, ["a"], panel_kw={"pd": {}})
    with pytest.raises(ValueError, match=r"\['kind'\] is one of \['lines', 'fill'\]; got 'dots'"):
        pdpboot.plot_pd(res, "a", style={"simultaneous": {"kind": "dots"}})
    with pytest.raises(ValueError, match=r"style\['band'\]\['kind'\] is not allowed"):
        pdpboot.plot_pd(res, "a", style={"band": {"kind": "fill"}})
    plt.close("all")


def test_surface_levels_and_cmap_go_through_style(res):
    ax = pdpboot.plot_pd_contour(res, ("a", "b"), style={"surface": {"levels": [-5.0, 0.0, 5.0], "cmap": "plasma"}})
    (filled,) = [c for c in ax.collections if hasattr(c, "levels") and c.get_cmap().name == "plasma"]
    np.testing.assert_array_equal(filled.levels, [-5.0, 0.0, 5.0])
    plt.close("all")


def test_panel_size_and_share(res):
    fig, axes = pdpboot.plot_pd_panels(res, ["a", "b"], panel_kw={"size": (2.0, 1.5)})
    np.testing.assert_allclose(fig.get_size_inches(), [4.0, 1.5])
    assert axes[0, 0].get_ylim() == axes[0, 1].get_ylim()
    fig, axes = pdpboot.plot_pd_panels(res, ["a", "b"], share=False, panel_kw={"curve": {"rug": False}})
    assert axes[0, 0].get_ylim() != axes[0, 1].get_ylim()
    plt.close("all")


def test_style_false_leaves_an_element_out(res):
    ax = pdpboot.plot_pd(res, "a", style={"rug": False, "legend": False})
    assert ax.get_legend() is None
    assert not [c for c in ax.collections if c.get_label() == "" and type(c).__name__ == "LineCollection"]
    ax = pdpboot.plot_pd_contour(res, ("a", "b"), style={"colorbar": False})
    assert len(ax.figure.axes) == 1
    plt.close("all")
