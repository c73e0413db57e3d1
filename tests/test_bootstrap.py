"""The resample loop: determinism, backgrounds, class alignment, seeding."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import pdpboot
from pdpboot.engine.resample import draw_rows


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    y = pd.Series(X["a"] + X["b"] * X["c"] + rng.normal(scale=0.5, size=120), name="target")
    return X, y


def test_bit_identical_across_n_jobs(data):
    X, y = data
    kw = dict(n_resamples=4, rng=7, ice=3, grid_resolution=6, progress=False)
    est = RandomForestRegressor(n_estimators=5)
    r1 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", ("b", "c")], n_jobs=1, **kw)
    r2 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", ("b", "c")], n_jobs=2, **kw)
    for name in ["a", "b__c"]:
        xr.testing.assert_identical(r1[name].to_dataset(), r2[name].to_dataset())
    # a different seed gives different resamples
    r3 = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_jobs=1, **dict(kw, rng=8))
    assert not np.array_equal(r1["a"].ds.pd_resamples.values, r3["a"].ds.pd_resamples.values)


def test_more_resamples_extend_the_same_run(data):
    X, y = data
    kw = dict(rng=3, grid_resolution=5, progress=False)
    small = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=3, **kw)
    large = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=6, **kw)
    np.testing.assert_array_equal(small["a"].ds.pd_resamples.values, large["a"].ds.pd_resamples.values[:3])


def test_schema(data):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", ("a", "b")], n_resamples=3,
                                               grid_resolution=5, ice=4, rng=0)
    node = res["a__b"].ds
    assert res["a__b"].attrs["features"] == ["a", "b"]
    assert node["pd"].dims == ("output", "a", "b")
    assert node["pd_resamples"].dims == ("resample", "output", "a", "b")
    assert node["ice"].dims == ("instance", "output", "a", "b")
    assert node["ice_resamples"].dims == ("resample", "instance", "output", "a", "b")
    assert list(node.output.values) == ["target"]
    np.testing.assert_array_equal(node["resample"].values, np.arange(3))
    # the grid of a feature is the same in every node it appears in
    np.testing.assert_array_equal(res["a"].ds.a.values, node.a.values)
    for key in ["creation_library", "creation_library_version", "created", "estimator", "estimator_params",
                "settings", "rng_entropy", "n_resamples", "n_failed_resamples"]:
        assert key in res.attrs
    assert res.attrs["n_resamples"] == 3


def _manual_resample_pd(X, y, seed_root, b, background, grid):
    """Recompute resample b by hand from the documented seed layout."""
    generator = np.random.default_rng(seed_root)
    generator.spawn(3)
    child = generator.spawn(b + 1)[b]
    draw_rng, _, _ = child.spawn(3)
    rows = draw_rows("bootstrap", len(y), draw_rng)
    model = LinearRegression().fit(X.iloc[rows], y.iloc[rows])
    bg = X.iloc[rows] if background == "resample" else X
    out = []
    for g in grid:
        Xg = bg.copy()
        Xg["a"] = g
        out.append(model.predict(Xg).mean())
    return np.array(out)


@pytest.mark.parametrize("background", ["resample", "original"])
def test_resample_pd_equals_hand_computation(data, background):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b"], n_resamples=3,
                                               grid_resolution=5, background=background, rng=11)
    grid = res["a"].ds.a.values
    for b in range(3):
        np.testing.assert_allclose(res["a"].ds.pd_resamples.values[b, 0],
                                   _manual_resample_pd(X, y, 11, b, background, grid), atol=1e-10)
    full = LinearRegression().fit(X, y)
    Xg = X.copy()
    expected = []
    for g in grid:
        Xg["a"] = g
        expected.append(full.predict(Xg).mean())
    np.testing.assert_allclose(res["a"].ds.pd.values[0], expected, atol=1e-10)


def test_out_of_bag_background_differs(data):
    X, y = data
    kw = dict(n_resamples=3, grid_resolution=5, rng=5)
    est = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=5))
    oob = pdpboot.bootstrap_partial_dependence(est, X, y, ["b"], background="out-of-bag", **kw)
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["b"], background="resample", **kw)
    assert not np.allclose(oob["b"].ds.pd_resamples, res["b"].ds.pd_resamples)
    np.testing.assert_array_equal(oob["b"].ds.pd.values, res["b"].ds.pd.values)


def test_random_state_of_pipeline_step_is_set_per_resample(data):
    X, y = data
    est = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3, random_state=None))
    a = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid_resolution=4, rng=1)
    b = pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid_resolution=4, rng=1)
    xr.testing.assert_identical(a["a"].to_dataset(), b["a"].to_dataset())


def test_classifier_missing_class_in_resample_aligned():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 2)), columns=["u", "v"])
    y = np.array(["a"] * 29 + ["b"] * 29 + ["rare"] * 2)
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, ["u"], n_resamples=12,
                                               resampling="bootstrap", grid_resolution=4, rng=0)
    node = res["u"].ds
    assert list(node.output.values) == ["a", "b", "rare"]
    probs = node.pd_resamples.values
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    # some resample missed the rare class: its probability is 0 there
    missed = [b for b in range(12) if np.all(probs[b, 2] == 0)]
    assert missed, "expected at least one resample without the rare class"


def test_stratified_is_default_for_classifiers():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    res = pdpboot.bootstrap_partial_dependence(RandomForestClassifier(n_estimators=3), X, y, [0],
                                               n_resamples=2, grid_resolution=3, rng=0)
    assert res.attrs["resampling"] == "stratified"
    assert list(res["x0"].ds.output.values) == [0, 1]


def test_group_resampling_requires_groups(data):
    X, y = data
    with pytest.raises(ValueError, match="groups"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], resampling="group", n_resamples=2)
    groups = np.repeat(np.arange(30), 4)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], resampling="group",
                                               groups=groups, n_resamples=2, grid_resolution=3, rng=0)
    assert res.attrs["resampling"] == "group"


def test_fitted_estimator_rejected(data):
    X, y = data
    with pytest.raises(ValueError, match="already fitted"):
        pdpboot.bootstrap_partial_dependence(LinearRegression().fit(X, y), X, y, ["a"], n_resamples=2)
    est = clone(LinearRegression())
    pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=2, grid_resolution=3)


def test_max_background_subsamples(data):
    X, y = data
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=2, grid_resolution=3,
                                               max_background=10, background="original", ice=True, rng=2)
    assert res["a"].ds.sizes["instance"] == 10
    # linear model: PD = mean over the 10 rows, equal to the mean of their ICE curves
    np.testing.assert_allclose(res["a"].ds.pd.values, res["a"].ds.ice.mean("instance").values, atol=1e-12)
