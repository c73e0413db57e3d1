"""ALE drawn by the PD plots: 1-D curves with bands and rug, the 2-D pure-interaction surface."""

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.contour import QuadContourSet  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import PolynomialFeatures  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot.plotting import plot_pd, plot_pd_contour  # noqa: E402


def _ale_result():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 200), "b": rng.uniform(0, 1, 200)})
    y = X.a + 2 * X.a * X.b + rng.normal(0, 0.1, 200)
    model = make_pipeline(PolynomialFeatures(2, interaction_only=True), LinearRegression())
    res = pdpboot.bootstrap_ale(model, X, y, ["a", ("a", "b")], n_resamples=20, grid=Grid(5), rng=0,
                                execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(res)


def test_ale_surface_is_diverging_and_centred_at_zero():
    bands = _ale_result()
    fig, ax = plt.subplots()
    plot_pd_contour(bands, ("a", "b"), variable="ale", ax=ax)
    filled = next(c for c in ax.collections if isinstance(c, QuadContourSet) and c.filled)
    assert filled.get_cmap().name == "RdBu_r"
    levels = np.asarray(filled.levels)
    np.testing.assert_allclose(levels[0], -levels[-1])  # symmetric: white is "no interaction"
    surface = bands["a__b"]["ale"].values
    assert levels[0] <= surface.min() and surface.max() <= levels[-1]
    assert fig.axes[-1].get_ylabel().startswith("ALE (pure interaction)")
    plt.close(fig)
    fig, ax = plt.subplots()
    plot_pd_contour(bands, ("a", "b"), variable="ale", what="width", ax=ax)
    assert "2-D ALE" in fig.axes[-1].get_ylabel()
    plt.close(fig)
    fig, ax = plt.subplots()  # PD keeps its sequential map
    pd_res = pdpboot.bootstrap_partial_dependence(LinearRegression(), _table(), _target(), [("a", "b")],
                                                  n_resamples=3, grid=Grid(4), rng=0,
                                                  execution=pdpboot.Execution(progress=False))
    plot_pd_contour(pd_res, ("a", "b"), ax=ax)
    filled = next(c for c in ax.collections if isinstance(c, QuadContourSet) and c.filled)
    assert filled.get_cmap().name == "viridis"
    plt.close(fig)


def _table():
    rng = np.random.default_rng(1)
    return pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)})


def _target():
    return _table().sum(axis=1)


def test_ale_curve_with_bands_and_rug():
    bands = _ale_result()
    fig, ax = plt.subplots()
    plot_pd(bands, "a", variable="ale", ax=ax)
    assert ax.get_ylabel() == "ALE of predicted y"
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), bands["a"]["ale"].values[0])
    assert len(ax.collections) >= 2  # the band and the rug
    plt.close(fig)
