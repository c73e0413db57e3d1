"""ALE results (xarray layer): analytic truth, peer agreement, bootstrap, bands, determinism, errors."""

import json
import logging

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures
from sklearn.tree import DecisionTreeRegressor

import pdpboot
from pdpboot import Execution, Grid, accumulated_local_effects, bootstrap_ale, confidence_bands

B1, B2, B3 = 1.0, 2.0, 3.0


def _binormal_frame(n, rho, seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rho * x1 + np.sqrt(1 - rho**2) * rng.normal(size=n)
    return pd.DataFrame({"x1": x1, "x2": x2})


def test_model_equal_to_truth_matches_analytic_ale():
    """A noiseless fit of f = b1 x1 + b2 x2 + b3 x1 x2 is f; its ALE follows the closed form."""
    rho = 0.8
    X = _binormal_frame(8000, rho)
    y = B1 * X.x1 + B2 * X.x2 + B3 * X.x1 * X.x2
    model = make_pipeline(PolynomialFeatures(2, interaction_only=True), LinearRegression()).fit(X, y)
    res = accumulated_local_effects(model, X, ["x1", ("x1", "x2")], grid=Grid(20))
    ale = res["x1"]["ale"].sel(output="y").values
    z = res["x1"]["x1"].values
    truth = B1 * z + B3 * rho * z**2 / 2
    inner = slice(2, -2)
    counts = np.asarray(res["x1"].attrs["bin_counts"])[2:-2]
    se = B3 * np.sqrt(1 - rho**2) * np.sqrt(np.sum(np.diff(z)[2:-2] ** 2 / counts))
    err = (ale[inner] - ale[inner][0]) - (truth[inner] - truth[inner][0])
    assert np.max(np.abs(err)) < 4 * se
    # the second-order surface of b3 x1 x2 has second differences b3 * cell area
    surf = res["x1__x2"]["ale"].sel(output="y").values
    e1, e2 = res["x1__x2"]["x1"].values, res["x1__x2"]["x2"].values
    np.testing.assert_allclose(np.diff(np.diff(surf, axis=0), axis=1), B3 * np.outer(np.diff(e1), np.diff(e2)),
                               atol=1e-8)
    assert res["x1__x2"].attrs["ale_kind"] == ["numeric", "numeric"]


def _pyale():
    pyale = pytest.importorskip("PyALE")
    logging.getLogger("PyALE._ALE_generic").setLevel(logging.WARNING)
    return pyale


def _peer_data():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"])
    df["b"] += df["a"]
    df["k"] = rng.integers(0, 5, 400)
    y = np.sin(2 * df.a) * df.b + df.k**2 + df.c + rng.normal(size=400)
    return df, DecisionTreeRegressor(max_depth=6, random_state=0).fit(df, y)


def test_agrees_with_pyale_continuous_on_the_same_bins():
    """PyALE centres like we do (bin midpoints weighted by counts); its bin rule differs slightly
    from R's type-1 quantiles, so its edges are given to pdpboot as custom_values."""
    pyale = _pyale()
    df, model = _peer_data()
    peer = pyale.ale(df, model, ["a"], grid_size=12, include_CI=False, plot=False)
    edges = peer.index.to_numpy(dtype=float)
    ours = accumulated_local_effects(model, df, ["a"], grid=Grid(custom_values={"a": edges}))
    np.testing.assert_allclose(ours["a"]["ale"].sel(output="y").values, peer["eff"].to_numpy(), atol=1e-10)
    # its edges are the data quantiles: our own rule gives nearly the same grid
    own = accumulated_local_effects(model, df, ["a"], grid=Grid(12))["a"]["a"].values
    assert own.size == edges.size and own[0] == edges[0] and own[-1] == edges[-1]


def test_agrees_with_pyale_discrete():
    pyale = _pyale()
    df, model = _peer_data()
    peer = pyale.ale(df, model, ["k"], feature_type="discrete", include_CI=False, plot=False)
    # an integer column is numeric (as in PD) unless named categorical; PyALE's discrete rule is our levels rule
    ours = accumulated_local_effects(model, df, ["k"], grid=Grid(10, custom_values={"k": [0, 1, 2, 3, 4]},
                                                                 categorical_features=["k"]))
    assert ours["k"].attrs["ale_kind"] == ["ordinal"]
    np.testing.assert_array_equal(ours["k"]["k"].values, peer.index.to_numpy())
    np.testing.assert_allclose(ours["k"]["ale"].sel(output="y").values, peer["eff"].to_numpy(), atol=1e-10)


def test_agrees_with_pyale_second_order_without_empty_cells():
    """PyALE's 2-D ALE follows ALEPlot as ours does; it fills empty cells differently (copies the
    nearest cell's effect), so the comparison uses independent features and no empty cell."""
    pyale = _pyale()
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.uniform(size=(2000, 3)), columns=["a", "b", "c"])
    y = np.sin(3 * df.a) * df.b**2 + df.c
    model = DecisionTreeRegressor(max_depth=8, random_state=0).fit(df, y)
    peer = pyale.ale(df, model, ["a", "b"], grid_size=5, plot=False)
    edges = {"a": peer.index.to_numpy(dtype=float), "b": peer.columns.to_numpy(dtype=float)}
    ours = accumulated_local_effects(model, df, [("a", "b")], grid=Grid(custom_values=edges))
    np.testing.assert_allclose(ours["a__b"]["ale"].sel(output="y").values, peer.to_numpy(), atol=1e-10)


def test_categorical_ordering_and_user_order():
    rng = np.random.default_rng(3)
    means = {"a": 0.0, "b": 3.0, "c": 1.0, "d": 2.0}
    g = rng.choice(list(means), size=600)
    X = pd.DataFrame({"g": pd.Categorical(g), "z": [rng.normal(means[v], 0.3) for v in g]})
    effect = {"a": 0.0, "b": 1.0, "c": 5.0, "d": -2.0}
    y = X.z + np.array([effect[v] for v in g])
    model = make_pipeline(_OneHot(), LinearRegression()).fit(X, y)
    res = accumulated_local_effects(model, X, ["g"])
    assert list(res["g"]["g"].values) == ["a", "c", "d", "b"]
    assert res["g"].attrs["ale_kind"] == ["categorical"]
    ale = res["g"]["ale"].sel(output="y").to_series()
    # an additive model: ALE differences between levels are the level effects
    for u, v in (("a", "c"), ("c", "d"), ("d", "b")):
        assert ale[v] - ale[u] == pytest.approx(effect[v] - effect[u], abs=1e-8)
    user = accumulated_local_effects(model, X, ["g"], grid=Grid(custom_values={"g": ["d", "c", "b", "a"]}))
    assert list(user["g"]["g"].values) == ["d", "c", "b", "a"]
    assert user["g"].attrs["ale_kind"] == ["ordinal"]
    with pytest.raises(ValueError, match="every observed level"):
        accumulated_local_effects(model, X, ["g"], grid=Grid(custom_values={"g": ["a", "b"]}))
    with pytest.raises(ValueError, match="2-D ALE"):
        accumulated_local_effects(model, X, [("g", "z")])


class _OneHot:
    """Minimal stateless encoder for the categorical column g (keeps the test free of sklearn's version quirks)."""

    def fit(self, X, y=None):
        self.levels_ = sorted(X["g"].cat.categories)
        return self

    def transform(self, X):
        return np.column_stack([X["z"].to_numpy()] + [(X["g"] == v).to_numpy(float) for v in self.levels_])

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self


def test_classifier_probabilities_of_all_classes_sum_to_zero():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2))
    y = np.digitize(X[:, 0] + X[:, 1] + rng.normal(size=300), [-1, 1])
    model = LogisticRegression().fit(X, y)
    res = accumulated_local_effects(model, X, ["x0", ("x0", "x1")], grid=Grid(8))
    ale = res["x0"]["ale"]
    assert list(ale["output"].values) == [0, 1, 2]
    np.testing.assert_allclose(ale.sum("output"), 0.0, atol=1e-12)  # probabilities sum to one
    np.testing.assert_allclose(res["x0__x1"]["ale"].sum("output"), 0.0, atol=1e-12)
    binary = LogisticRegression().fit(X, y > 0)
    scores = accumulated_local_effects(binary, X, ["x0"], response_method="decision_function", grid=Grid(8))
    # a linear score: its ALE is the coefficient times the centred grid
    z = scores["x0"]["x0"].values
    np.testing.assert_allclose(np.diff(scores["x0"]["ale"].values[0]), binary.coef_[0, 0] * np.diff(z), atol=1e-10)


def _linear_data(n=120, seed=5):
    rng = np.random.default_rng(seed + 1000)  # noise independent of the features
    X = _binormal_frame(n, 0.6, seed)
    y = 2 * X.x1 - X.x2 + rng.normal(size=n)
    return X, y


def _resample_rows(rng, n_rows, n_resamples):
    """The rows the bootstrap draws (the documented seed scheme shared with PD: root -> 3 fixed children, then
    one child per resample, whose first child draws n rows with replacement)."""
    root = np.random.default_rng(rng)
    root.spawn(3)
    return [seed.spawn(3)[0].integers(0, n_rows, size=n_rows) for seed in root.spawn(n_resamples)]


def test_bootstrap_estimand_is_the_refit_models_ale_on_its_rows():
    """For least squares each resample's ALE is linear with the refit slope on that resample."""
    X, y = _linear_data()
    res = bootstrap_ale(LinearRegression(), X, y, ["x1"], n_resamples=5, grid=Grid(6), rng=7)
    z = res["x1"]["x1"].values
    slopes = []
    for b, rows in enumerate(_resample_rows(7, len(X), 5)):
        coef = LinearRegression().fit(X.iloc[rows], y.iloc[rows]).coef_[0]
        slopes.append(coef)
        np.testing.assert_allclose(np.diff(res["x1"]["ale_resamples"].values[b, 0]), coef * np.diff(z), atol=1e-8)
    assert np.ptp(slopes) > 0.01  # the resamples' slopes differ: the rows matter


def test_bootstrap_bands_and_determinism_across_n_jobs():
    X, y = _linear_data(60)
    X["k"] = np.random.default_rng(8).integers(0, 3, len(X))
    kwargs = dict(n_resamples=12, grid=Grid(30), rng=3)  # 2 rows per bin: resamples leave bins empty
    one = bootstrap_ale(DecisionTreeRegressor(max_depth=3), X, y, ["x1", "k", ("x1", "x2")], **kwargs,
                        execution=Execution(n_jobs=1))
    two = bootstrap_ale(DecisionTreeRegressor(max_depth=3), X, y, ["x1", "k", ("x1", "x2")], **kwargs,
                        execution=Execution(n_jobs=2))
    for name in ("x1", "k", "x1__x2"):
        xr.testing.assert_equal(one[name].to_dataset(), two[name].to_dataset())
        assert np.isfinite(one[name]["ale_resamples"].values).all()
    assert dict(one["x1__x2"]["ale_resamples"].sizes) == {"resample": 12, "output": 1, "x1": 31, "x2": 31}
    # the resamples (drawn as bootstrap_ale draws them) do leave 1-D bins empty
    edges = one["x1"]["x1"].values
    empty = 0
    for rows in _resample_rows(3, len(X), 12):
        bins = np.clip(np.searchsorted(edges, X["x1"].to_numpy()[rows], "left") - 1, 0, edges.size - 2)
        empty += edges.size - 1 - np.unique(bins).size
    assert empty > 0
    bands = confidence_bands(one, confidence_level=0.9, simultaneous=True)
    band = bands["x1"]["ale_band"]
    assert band.dims == ("ci_bound", "output", "x1")
    assert band.attrs["simultaneous"] == 1
    pointwise = bands["x1"]["ale_band_pointwise"]
    assert (band.sel(ci_bound="lower") <= pointwise.sel(ci_bound="lower") + 1e-12).all()
    assert "ale_se" in bands["x1__x2"] and "ale_bias" in bands["k"]
    # BCa needs the resample counts the shared loop records; the bands match percentile's ordering
    with pytest.warns(pdpboot.CoverageWarning, match="method='bca'"):  # measured to under-cover curves
        bca = confidence_bands(one, confidence_level=0.8, method="bca")["x1"]["ale_band"]
    assert bca.attrs["method"] == "bca" and bool((bca.sel(ci_bound="lower") <= bca.sel(ci_bound="upper")).all())


def test_save_load_round_trip(tmp_path):
    X, y = _linear_data(60)
    res = bootstrap_ale(LinearRegression(), X, y, ["x1"], n_resamples=3, grid=Grid(4), rng=0)
    pdpboot.save(res, tmp_path / "ale.nc")
    back = pdpboot.load(tmp_path / "ale.nc")
    np.testing.assert_array_equal(back["x1"]["ale_resamples"].values, res["x1"]["ale_resamples"].values)


def test_bad_input():
    X, y = _linear_data(40)
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        accumulated_local_effects(LinearRegression(), X, ["x1"])
    with pytest.raises(ValueError, match="already fitted"):
        bootstrap_ale(fitted, X, y, ["x1"])
    with pytest.raises(ValueError, match="strictly increasing"):
        accumulated_local_effects(fitted, X, ["x1"], grid=Grid(custom_values={"x1": [1.0, 0.0]}))
    with pytest.raises(ValueError, match="percentiles.*does not apply"):
        accumulated_local_effects(fitted, X, ["x1"], grid=Grid(percentiles=(0.1, 0.9)))
    with pytest.raises(ValueError, match="not a column"):
        accumulated_local_effects(fitted, X, ["nope"])


def test_bootstrap_ale_shares_the_pd_machinery(tmp_path):
    """Same rng -> the same resample rows as the PD bootstrap; checkpoints resume; progress is reported."""
    X, y = _linear_data(50)
    kw = dict(n_resamples=4, rng=11)
    pd_res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["x1"], grid=Grid(4), **kw)
    ale_res = bootstrap_ale(LinearRegression(), X, y, ["x1"], grid=Grid(4), **kw)
    np.testing.assert_array_equal(ale_res["resample_absent"].values, pd_res["resample_absent"].values)
    counts = np.stack([np.bincount(rows, minlength=len(X)) for rows in _resample_rows(11, len(X), 4)])
    absent = np.unpackbits(ale_res["resample_absent"].values, axis=1, count=len(X)).astype(bool)
    np.testing.assert_array_equal(absent, counts == 0)
    # a checkpointed run cut at 2 resamples and extended to 4 equals the uninterrupted run
    calls = []
    first = bootstrap_ale(LinearRegression(), X, y, ["x1"], grid=Grid(4), **dict(kw, n_resamples=2),
                          execution=Execution(checkpoint=tmp_path / "ck"))
    resumed = bootstrap_ale(LinearRegression(), X, y, ["x1"], grid=Grid(4),
                            **kw, execution=Execution(checkpoint=tmp_path / "ck",
                                                      progress=lambda done, total: calls.append((done, total))))
    np.testing.assert_array_equal(first["x1"]["ale_resamples"].values, ale_res["x1"]["ale_resamples"].values[:2])
    xr.testing.assert_equal(resumed["x1"].to_dataset(), ale_res["x1"].to_dataset())
    assert calls == [(3, 4), (4, 4)]  # only the two missing resamples ran
    # a PD checkpoint is not an ALE checkpoint
    pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["x1"], grid=Grid(4),
                                         **kw,
                                         execution=pdpboot.Execution(checkpoint=tmp_path / "pd"))
    with pytest.raises(ValueError, match="checkpoint"):
        bootstrap_ale(LinearRegression(), X, y, ["x1"], grid=Grid(4), **kw,
                      execution=Execution(checkpoint=tmp_path / "pd"))


class _FailsOnSomeResamples(LinearRegression):
    """Raises when fitted on rows whose mean target is above the full data's (about half the resamples)."""

    threshold = 0.0

    def fit(self, X, y, sample_weight=None):
        if len(y) and np.mean(y) > self.threshold:
            raise RuntimeError("boom")
        return super().fit(X, y, sample_weight)


def test_bootstrap_ale_on_error_skip_records_failures():
    X, y = _linear_data(50)
    _FailsOnSomeResamples.threshold = float(np.mean(y)) + 1e-9  # the full-data fit passes
    with pytest.warns(RuntimeWarning, match="resamples failed"):
        res = bootstrap_ale(_FailsOnSomeResamples(), X, y, ["x1"], n_resamples=8, grid=Grid(4), rng=1,
                            execution=Execution(on_error="skip", max_failure_share=0.9, progress=False))
    failed = [f["resample"] for f in json.loads(res.attrs["failed_resamples"])]
    means = [np.mean(y.to_numpy()[rows]) for rows in _resample_rows(1, len(X), 8)]
    assert failed == [b for b, m in enumerate(means) if m > _FailsOnSomeResamples.threshold] and failed
    resamples = res["x1"]["ale_resamples"].values
    assert np.isnan(resamples[failed]).all()
    assert np.isfinite(np.delete(resamples, failed, axis=0)).all()
    with pytest.raises(RuntimeError, match="boom"):
        bootstrap_ale(_FailsOnSomeResamples(), X, y, ["x1"], n_resamples=8, grid=Grid(4), rng=1,
                      execution=Execution(progress=False))


def test_with_pd_gives_the_pd_bootstrap_on_the_same_grid_from_the_same_refits():
    X, y = _linear_data(60)
    X["x3"] = X.x1 * X.x2
    kw = dict(n_resamples=4, rng=2)
    both = bootstrap_ale(DecisionTreeRegressor(max_depth=3), X, y, ["x1", ("x1", "x2")], grid=Grid(5),
                         with_pd=True, **kw)
    edges = {"x1": both["x1"]["x1"].values, "x2": both["x1__x2"]["x2"].values}
    pd_res = pdpboot.bootstrap_partial_dependence(DecisionTreeRegressor(max_depth=3), X, y, ["x1", ("x1", "x2")],
                                                  grid=Grid(custom_values=edges), **kw,
                                                  execution=pdpboot.Execution(method="brute"))
    for name in ("x1", "x1__x2"):
        np.testing.assert_array_equal(both[name]["pd"].values, pd_res[name]["pd"].values)
        np.testing.assert_array_equal(both[name]["pd_resamples"].values, pd_res[name]["pd_resamples"].values)
    alone = bootstrap_ale(DecisionTreeRegressor(max_depth=3), X, y, ["x1"], grid=Grid(5), **kw)
    np.testing.assert_array_equal(both["x1"]["ale_resamples"].values, alone["x1"]["ale_resamples"].values)
    bands = confidence_bands(both)
    assert {"pd_band", "ale_band"} <= set(bands["x1"].ds.data_vars)


def _table_with_missing_text(n=150):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": rng.choice(np.array(["x", "y", "z", None], dtype=object), size=n),
                      "d": pd.Series(rng.choice(np.array(["p", "q", "r", np.nan], dtype=object), size=n),
                                     dtype=object)})
    return X, X["a"] + (X["d"] == "q") + rng.normal(scale=0.1, size=n)


@pytest.mark.parametrize("feature", ["c", "a"])
def test_ale_spec_of_a_table_with_missing_text_is_built(feature):
    """Issue 26 B.8: ALE ordered the levels of a categorical feature by the other columns; a text column
    with missing values (str and float mixed under pandas 3) crashed that sort with a TypeError."""
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.preprocessing import OrdinalEncoder

    X, y = _table_with_missing_text()
    codes = make_column_transformer((OrdinalEncoder(encoded_missing_value=-1), ["c", "d"]), remainder="passthrough")
    model = make_pipeline(codes, HistGradientBoostingRegressor(max_iter=10)).fit(X, y)
    res = accumulated_local_effects(model, X, [feature], grid=Grid(5))
    ale = res[feature].ds["ale"]
    assert np.isfinite(ale).all()
    if feature == "c":
        assert sorted(ale["c"].values.tolist()) == ["x", "y", "z"]


def test_bootstrap_ale_builds_every_spec_before_the_first_fit():
    """A spec that cannot be built fails before any model is fitted (nothing is lost after a long run)."""
    fits = []

    class Counting(LinearRegression):
        def fit(self, X, y, sample_weight=None):
            fits.append(1)
            return super().fit(X, y, sample_weight=sample_weight)

    X = pd.DataFrame({"a": np.arange(40.0), "b": np.r_[np.zeros(20), np.ones(20)]})
    with pytest.raises(ValueError, match="2-D ALE"):
        bootstrap_ale(Counting(), X.assign(k=pd.Categorical(["u", "v", "w", "t"] * 10)), X["a"],
                      ["a", ("a", "k")], n_resamples=3, rng=0, execution=Execution(progress=False))
    assert fits == []


def test_ale_sample_weight_uses_the_shared_check():
    X = np.random.default_rng(0).normal(size=(30, 2))
    model = LinearRegression().fit(X, X[:, 0])
    weights = np.ones(30)
    weights[3] = np.nan
    with pytest.raises(ValueError, match="missing or infinite"):
        accumulated_local_effects(model, X, [0], sample_weight=weights)


def test_a_pair_with_text_levels_ordered_by_custom_values_equals_the_same_pair_on_their_ranks():
    """2-D ALE of a text feature ordered by custom_values (what the refusal of an unordered one advises)
    failed with "could not convert string to float: 'lo'".  Its levels now enter as their ranks: the
    surface equals the 2-D ALE of the same model fed the ranks 0, 1, 2 as a numeric column (edges 0, 1, 2)."""
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    levels = ["lo", "mid", "hi"]
    X = pd.DataFrame({"a": rng.normal(size=150), "c": rng.choice(levels, 150)})
    codes = X.assign(c=X.c.map({v: float(k) for k, v in enumerate(levels)}))
    forest = RandomForestRegressor(20, random_state=0).fit(codes, codes.a * codes.c + codes.c)

    class OnText(BaseEstimator, RegressorMixin):
        def fit(self, X, y):
            self.fitted_ = True
            return self

        def predict(self, X):
            return forest.predict(X.assign(c=X.c.map({v: float(k) for k, v in enumerate(levels)})))

    text = pdpboot.accumulated_local_effects(OnText().fit(X, None), X, [("c", "a")],
                                             grid=Grid(4, custom_values={"c": levels}))["c__a"]["ale"]
    ranks = pdpboot.accumulated_local_effects(forest, codes, [("c", "a")],
                                              grid=Grid(4, custom_values={"c": [0.0, 1.0, 2.0]}))["c__a"]["ale"]
    assert list(text["c"].values) == levels
    np.testing.assert_allclose(text.values, ranks.values, rtol=1e-12, atol=1e-12)
    assert np.abs(text.values).max() > 0.1  # an interaction: not a trivially zero surface
