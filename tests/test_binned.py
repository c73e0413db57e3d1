"""binned_outcome and plot_target: rows and observed outcome per grid bin, checked by hand."""

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot.binned import BINNED_COLUMNS  # noqa: E402


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
