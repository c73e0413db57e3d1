"""plot_ice: ICE curves of a fitted model without a result that stored ICE."""

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor  # noqa: E402
from sklearn.inspection import partial_dependence as sk_partial_dependence  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import PolynomialFeatures  # noqa: E402

import pdpboot  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.uniform(-2, 2, 120), "b": rng.normal(size=120)})
    y = np.sin(X["a"]) * X["b"] + rng.normal(0, 0.1, 120)
    return X, y


def _ice_collection(ax):
    (coll,) = [c for c in ax.collections if isinstance(c, LineCollection) and "ICE" in c.get_label()]
    return coll


def _rows_of(ax, X, sk):
    """The row of X each drawn curve belongs to, found by matching scikit-learn's curves exactly."""
    drawn = np.array([seg[:, 1] for seg in _ice_collection(ax).get_segments()])
    matches = [int(np.flatnonzero(np.all(np.isclose(sk, curve, rtol=0, atol=1e-12), axis=1))[0]) for curve in drawn]
    return drawn, matches


def test_plot_ice_equals_sklearn_individual_on_the_same_grid(data):
    X, y = data  # an interaction model: every row has its own curve, so each drawn curve names its row
    model = make_pipeline(PolynomialFeatures(3), LinearRegression()).fit(X, y)
    ax = pdpboot.plot_ice(model, X, "a", ice=25)
    coll = _ice_collection(ax)
    grid = coll.get_segments()[0][:, 0]
    sk = sk_partial_dependence(model, X, ["a"], kind="individual", custom_values={"a": grid},
                               method="brute")["individual"][0]
    drawn, rows = _rows_of(ax, X, sk)
    assert len(drawn) == 25 and len(set(rows)) == 25
    np.testing.assert_allclose(drawn, sk[rows], rtol=0, atol=1e-12)
    # the thick line is the PD of the model: the mean over all rows
    np.testing.assert_allclose(ax.lines[0].get_ydata(), sk.mean(axis=0), rtol=1e-12)
    plt.close("all")


def test_plot_ice_on_a_result_without_ice_uses_its_grid_and_band(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=15, random_state=0)
    res = pdpboot.confidence_bands(pdpboot.bootstrap_partial_dependence(
        model, X, y, ["a"], n_resamples=6, grid=Grid(9), rng=0, execution=pdpboot.Execution(progress=False),
        resampling=pdpboot.Resampling(background="original")))
    assert "ice" not in res["a"].ds
    with pytest.raises(ValueError, match="plot_ice"):
        pdpboot.plot_pd(res, "a", ice=10)
    fitted = RandomForestRegressor(n_estimators=15, random_state=0).fit(X, y)
    ax = pdpboot.plot_ice(fitted, X, "a", result=res, ice=True)
    grid = res["a"]["a"].values
    sk = sk_partial_dependence(fitted, X, ["a"], kind="individual", custom_values={"a": grid},
                               method="brute")["individual"][0]
    drawn = np.array([seg[:, 1] for seg in _ice_collection(ax).get_segments()])
    np.testing.assert_allclose(drawn, sk, rtol=0, atol=1e-12)  # every row, in row order
    np.testing.assert_allclose(ax.lines[0].get_ydata(), res["a"]["pd"].values[0])  # the result's estimate
    assert any("band" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close("all")


def test_plot_ice_classifier_draws_probabilities(data):
    X, y = data
    label = (y > 0).astype(int)
    model = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, label)
    ax = pdpboot.plot_ice(model, X, "b", ice=10)
    grid = _ice_collection(ax).get_segments()[0][:, 0]
    sk = sk_partial_dependence(model, X, ["b"], kind="individual", custom_values={"b": grid},
                               method="brute", response_method="predict_proba")["individual"][0]
    drawn, rows = _rows_of(ax, X, sk)
    np.testing.assert_allclose(drawn, sk[rows], rtol=0, atol=1e-12)
    assert ax.get_ylabel() == "P(class = 1)"
    plt.close("all")


def test_plot_ice_rejects_no_curves(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="positive number of rows"):
        pdpboot.plot_ice(model, X, "a", ice=0)
