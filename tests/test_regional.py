"""Regional PD: the partition search recovers a known split, a region's PD is the model's brute-force PD on that
region's rows, and the result goes through the one loop, the bands and save/load."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.tree import DecisionTreeRegressor

import pdpboot
from pdpboot.engine.ice_stats import centred_curves, find_partition, heterogeneity

QUIET = pdpboot.Execution(progress=False)


def _truth(X):
    X = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"]) if not isinstance(X, pd.DataFrame) else X
    on = (X["x3"] > 0) if X["x3"].dtype.kind == "f" else (X["x3"] == "b")
    return np.asarray(X["x1"] * on + X["x2"], dtype=float)


class TrueFunction(RegressorMixin, BaseEstimator):
    """The data-generating function as a "model" (fit learns nothing)."""

    def fit(self, X, y):
        self.fitted_ = True
        return self

    def predict(self, X):
        return _truth(X)


def _data(n=400, seed=0, categorical=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x1", "x2", "x3", "x4"])
    if categorical:
        X["x3"] = np.array(["a", "b", "c"], dtype=object)[rng.integers(0, 3, n)]
    return X, _truth(X) + 0.1 * rng.normal(size=n)


def _run(model, X, y, n_resamples=4, **kwargs):
    return pdpboot.regional_partial_dependence(
        model, X, y, ["x1"], grid=pdpboot.Grid(9), resampling=pdpboot.Resampling("bootstrap", n_resamples=n_resamples),
        execution=QUIET, rng=0, **kwargs)


def test_the_search_on_true_curves_splits_at_zero_and_explains_everything():
    X, _ = _data()
    grid = np.linspace(-1, 1, 11)
    ice = np.stack([_truth(X.assign(x1=v)) for v in grid], axis=1)[:, None, :]
    C = centred_curves(ice)
    columns = {p: (X.iloc[:, p].to_numpy(), False) for p in (1, 2, 3)}
    part = find_partition(C, np.ones(len(X)), columns, max_depth=2, min_size=40, min_drop=0.05)
    assert [s.feature for s in part.splits] == [2]  # no second split: each region's curves are identical
    below = X["x3"][X["x3"] <= 0].max()
    above = X["x3"][X["x3"] > 0].min()
    assert part.splits[0].threshold == pytest.approx((below + above) / 2) and part.splits[0].drop == pytest.approx(1)
    region = part.assign(columns)
    assert heterogeneity(C[region == 0], np.ones((region == 0).sum())) == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("categorical", [False, True])
def test_the_true_function_as_a_model_is_split_on_x3(categorical):
    X, y = _data(categorical=categorical)
    res = _run(TrueFunction(), X, y, max_depth=1)
    split = json.loads(res["x1"].attrs["splits"])
    assert [s["feature"] for s in split] == ["x3"]
    if categorical:
        assert split[0]["levels"] in (["b"], ["a", "c"])
        assert sorted(res["x1"].attrs["regions"]) == sorted(["x3 in {b}", "x3 not in {b}"]) or \
            sorted(res["x1"].attrs["regions"]) == sorted(["x3 in {a, c}", "x3 not in {a, c}"])
    else:
        assert abs(split[0]["threshold"]) < 0.02
    np.testing.assert_allclose(res["x1"]["split_frequency"].sel(split=0, candidate="x3"), 1.0)


def test_a_fitted_model_recovers_the_split_and_the_refits_agree():
    X, y = _data(n=600)
    res = _run(DecisionTreeRegressor(min_samples_leaf=10, random_state=0), X, y, n_resamples=10, max_depth=1)
    split = json.loads(res["x1"].attrs["splits"])
    assert split[0]["feature"] == "x3" and abs(split[0]["threshold"]) < 0.1
    assert float(res["x1"]["split_frequency"].sel(split=0, candidate="x3")) >= 0.9
    # the full-data fit of the loop searched the same partition as the one fixed before the refits
    assert int(res["x1"]["split_feature"][0]) == 2
    assert float(res["x1"]["split_threshold"][0]) == split[0]["threshold"]


def test_a_regions_pd_is_the_brute_force_pd_of_the_model_on_that_regions_rows():
    X, y = _data(n=300)
    model = DecisionTreeRegressor(min_samples_leaf=10, random_state=0)
    res = _run(model, X, y, max_depth=2)
    fitted = DecisionTreeRegressor(min_samples_leaf=10, random_state=0).fit(X, y)  # the loop keeps random_state=0
    grid = res["x1"]["x1"].values
    splits = {s["node"]: s for s in json.loads(res["x1"].attrs["splits"])}
    assert len(res["x1"]["region"]) == len(splits) + 1 >= 2
    for r, label in enumerate(res["x1"]["region"].values):
        rows = np.ones(len(X), dtype=bool)
        for condition in label.split(" & "):
            name, op, value = condition.split(" ")
            threshold = next(s["threshold"] for s in splits.values() if s["feature"] == name
                             and f"{s['threshold']:.4g}" == value)
            rows &= (X[name] <= threshold) if op == "<=" else (X[name] > threshold)
        assert np.isclose(res["x1"]["region_share"].values[r], rows.mean())
        brute = sk_partial_dependence(fitted, X[rows], ["x1"], custom_values={"x1": grid}, method="brute",
                                      kind="average")["average"][0]
        np.testing.assert_allclose(res["x1"]["pd"].values[0, r], brute, rtol=0, atol=1e-10)


def test_bands_per_region_save_load_and_n_jobs():
    X, y = _data(n=200)
    res = _run(DecisionTreeRegressor(max_depth=4), X, y, n_resamples=6, max_depth=1)
    bands = pdpboot.confidence_bands(res)
    assert bands["x1"]["pd_band"].dims == ("ci_bound", "output", "region", "x1")
    assert "refit_split_feature_band" not in bands["x1"].ds and "split_frequency" in bands["x1"].ds
    assert res["x1"]["refit_split_feature"].dims == ("resample", "split")
    parallel = pdpboot.regional_partial_dependence(
        DecisionTreeRegressor(max_depth=4), X, y, ["x1"], grid=pdpboot.Grid(9), max_depth=1, rng=0,
        resampling=pdpboot.Resampling("bootstrap", n_resamples=6),
        execution=pdpboot.Execution(progress=False, n_jobs=2))
    np.testing.assert_array_equal(parallel["x1"]["pd_resamples"], res["x1"]["pd_resamples"])


def test_save_and_load_keep_regions(tmp_path):
    X, y = _data(n=200)
    res = _run(DecisionTreeRegressor(max_depth=4), X, y, max_depth=2)
    pdpboot.save(res, tmp_path / "regional.nc")
    back = pdpboot.load(tmp_path / "regional.nc")
    assert back["x1"].attrs["regions"] == res["x1"].attrs["regions"]
    assert list(back["x1"]["region"].values) == list(res["x1"]["region"].values)
    np.testing.assert_array_equal(back["x1"]["split_frequency"], res["x1"]["split_frequency"])


def test_bad_input_is_refused_in_one_line():
    X, y = _data(n=50)
    with pytest.raises(ValueError, match="max_depth must be 1 or 2"):
        _run(DecisionTreeRegressor(), X, y, max_depth=3)
    with pytest.raises(ValueError, match="single features"):
        pdpboot.regional_partial_dependence(DecisionTreeRegressor(), X, y, [("x1", "x2")])


def test_the_split_test_rejects_a_real_split_and_names_its_feature():
    X, y = _data(n=200)
    res = pdpboot.regional_split_test(DecisionTreeRegressor(max_depth=4, random_state=0), X, y, "x1", n_resamples=9,
                                      grid=pdpboot.Grid(9), rng=0, execution=QUIET)
    assert res.attrs["split_feature"] == "x3" and res.attrs["pvalue"] == pytest.approx(0.1)
    null = res["x1"]["removed_null"].values
    assert null.shape == (9,) and np.all(null < res.attrs["statistic"])
    with pytest.raises(ValueError, match="numeric, finite columns"):
        pdpboot.regional_split_test(DecisionTreeRegressor(), _data(n=50, categorical=True)[0], y[:50], "x1")


def test_the_plot_draws_one_curve_and_band_per_region():
    import matplotlib

    matplotlib.use("Agg")
    X, y = _data(n=200)
    res = pdpboot.confidence_bands(_run(DecisionTreeRegressor(max_depth=4), X, y, n_resamples=5, max_depth=1))
    ax = pdpboot.plot_regional_pd(res)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(ax.lines) == len(ax.collections) == 2
    assert all(label.startswith(region) for label, region in zip(labels, res["x1"].attrs["regions"]))
