"""Confidence bands: textbook formulas, invariants, schema."""

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import norm

import pdpboot
from pdpboot import Grid
from pdpboot.engine.intervals import (
    band_arrays,
    jackknife_acceleration,
    jackknife_after_bootstrap_acceleration,
    pointwise_interval,
)
from pdpboot.engine.resample import AbsentRows
from pdpboot.header import ResultHeader


def _result(est, res, resampling="bootstrap", n_rows=100, subsample_size=100):
    """A hand-built result node following the schema (grid of P points, one feature 'x')."""
    n_b, n_o, n_p = res.shape
    ds = xr.Dataset(
        {"pd": (("output", "x"), est), "pd_resamples": (("resample", "output", "x"), res)},
        coords={"x": np.linspace(0, 1, n_p), "output": [f"y{k}" for k in range(n_o)], "resample": np.arange(n_b)},
        attrs={"features": ["x"], "categorical": [0]},
    )
    tree = xr.DataTree(children={"x": xr.DataTree(ds)})
    tree.attrs = {"resampling": resampling, "n_rows": n_rows, "subsample_size": subsample_size}
    return tree


@pytest.fixture
def sample():
    rng = np.random.default_rng(0)
    est = rng.normal(size=(2, 6))
    res = est + rng.normal(scale=0.3, size=(200, 2, 6)) + 0.05
    return est, res


def test_percentile_and_basic_equal_textbook(sample):
    est, res = sample
    tree = _result(est, res)
    pct = pdpboot.confidence_bands(tree, confidence_level=0.9, method="percentile")["x"].ds["pd_band"]
    with pytest.warns(pdpboot.CoverageWarning, match="method=.basic. bands under-cover"):
        bas = pdpboot.confidence_bands(tree, confidence_level=0.9, method="basic")["x"].ds["pd_band"]
    for o in range(2):
        for g in range(6):
            sample_bg = np.sort(res[:, o, g])

            def q(p, s=sample_bg):
                # the order statistic of rank (B + 1) p (1-based), linear between neighbours (Davison & Hinkley
                # 1997, 5.2); B = 200: rank 10.05 and 190.95, inside [1, B]
                h = (len(s) + 1) * p
                lo = int(np.floor(h))
                return s[lo - 1] + (h - lo) * (s[lo] - s[lo - 1])
            assert pct.values[0, o, g] == pytest.approx(q(0.05), abs=1e-12)
            assert pct.values[1, o, g] == pytest.approx(q(0.95), abs=1e-12)
            assert bas.values[0, o, g] == pytest.approx(2 * est[o, g] - q(0.95), abs=1e-12)
            assert bas.values[1, o, g] == pytest.approx(2 * est[o, g] - q(0.05), abs=1e-12)
    assert pct.dims == ("ci_bound", "output", "x")
    assert list(pct.ci_bound.values) == ["lower", "upper"]
    assert pct.attrs["method"] == "percentile" and pct.attrs["confidence_level"] == 0.9


def test_normal_se_and_bias(sample):
    est, res = sample
    out = pdpboot.confidence_bands(_result(est, res), method="normal")["x"].ds
    se = res.std(axis=0, ddof=1)
    np.testing.assert_allclose(out["pd_se"].values, se, atol=1e-12)
    np.testing.assert_allclose(out["pd_bias"].values, res.mean(axis=0) - est, atol=1e-12)
    z = norm.ppf(0.975)
    np.testing.assert_allclose(out["pd_band"].values[0], est - z * se, atol=1e-12)
    np.testing.assert_allclose(out["pd_band"].values[1], est + z * se, atol=1e-12)


def test_sup_t_critical_value_by_hand(sample):
    est, res = sample
    out = pdpboot.confidence_bands(_result(est, res), method="normal", simultaneous=True)["x"].ds
    se = res.std(axis=0, ddof=1)
    for o in range(2):
        t_max = np.max(np.abs(res[:, o] - est[o]) / se[o], axis=1)
        k = int(np.ceil(0.95 * (t_max.size + 1)))  # rank 190.95 of B = 200, rounded up: the 191st (D&H 1997, 2.4)
        crit = max(np.sort(t_max)[k - 1], norm.ppf(0.975))
        np.testing.assert_allclose(out["pd_band"].values[1, o], est[o] + crit * se[o], atol=1e-12)
    assert out["pd_band"].attrs["simultaneous"] == 1
    assert out["pd_band_pointwise"].attrs["simultaneous"] == 0


@pytest.mark.filterwarnings("ignore:The calibrated level")  # pd_centered's curves are independent noise
def test_calibrated_percentile_band_covers_share_of_curves(sample):
    est, res = sample
    res = res + np.random.default_rng(1).normal(size=(200, 2, 1))  # correlated along the curve
    out = pdpboot.confidence_bands(_result(est, res), simultaneous=True, simultaneous_method="calibrated")["x"].ds
    lo, hi = out["pd_band"].values
    inside = ((res >= lo) & (res <= hi)).all(axis=2).mean(axis=0)
    assert inside.min() >= 0.95
    levels = out["pd_band"].attrs["calibrated_level"]
    assert len(levels) == 2 and min(levels) > 0.95  # one level per output
    assert out["pd_band"].attrs["simultaneous_method"] == "calibrated"
    for o in range(2):  # each output's band is its pointwise band at its own level
        np.testing.assert_allclose(lo[o], np.quantile(res[:, o], (1 - levels[o]) / 2, axis=0, method="weibull"),
                                   atol=1e-12)


def test_default_simultaneous_band_is_sup_t(sample):
    est, res = sample
    out = pdpboot.confidence_bands(_result(est, res), simultaneous=True)["x"].ds
    se = res.std(axis=0, ddof=1)
    crit = out["pd_band"].attrs["critical_value"]
    for o in range(2):
        np.testing.assert_allclose(out["pd_band"].values[1, o],
                                   np.maximum(est[o] + crit[o] * se[o],
                                              np.quantile(res[:, o], 0.975, axis=0, method="weibull")))
    assert out["pd_band"].attrs["simultaneous_method"] == "sup-t"


def test_calibrated_band_warns_at_its_ceiling(sample):
    est, res = sample
    with pytest.warns(UserWarning, match="envelope"):
        out = pdpboot.confidence_bands(_result(est, res[:25]), simultaneous=True, simultaneous_method="calibrated")
    attrs = out["x"].ds["pd_band"].attrs
    assert max(attrs["calibrated_level"]) > 1 - 2 / 24 and attrs["resamples_suggested"] > 100


def test_bca_and_bc_from_stored_absent_rows(sample):
    est, res = sample
    rng = np.random.default_rng(9)
    counts = rng.multinomial(50, np.full(50, 1 / 50), size=res.shape[0])
    tree = _result(est, res)
    with pytest.raises(ValueError, match="resample_absent"):
        pdpboot.confidence_bands(tree, method="bca")
    root = xr.Dataset({"resample_absent": xr.Variable(("resample", "packed_row"), np.packbits(counts == 0, axis=1),
                                                      {"n_rows": 50})})
    tree = xr.DataTree(root, children={"x": tree["x"]}).copy()
    tree.attrs = {"resampling": "bootstrap"}
    with pytest.warns(pdpboot.CoverageWarning, match="method='bca'"):
        out = pdpboot.confidence_bands(tree, method="bca", confidence_level=0.9)["x"].ds
    a = jackknife_after_bootstrap_acceleration(res, AbsentRows(np.packbits(counts == 0, axis=1), 50))
    for o, g in [(0, 0), (1, 5)]:
        sample_bg = res[:, o, g]
        z0 = norm.ppf(np.mean(sample_bg < est[o, g]))  # no ties in continuous draws
        z = norm.ppf([0.05, 0.95])
        p = norm.cdf(z0 + (z0 + z) / (1 - a[o, g] * (z0 + z)))
        np.testing.assert_allclose(out["pd_band"].values[:, o, g], np.quantile(sample_bg, p, method="weibull"),
                                       rtol=1e-10)
    assert out["pd_band"].attrs["method"] == "bca" and out["pd_band"].attrs["acceleration_max"] > 0
    bc = pdpboot.confidence_bands(_result(est, res), method="bc")["x"].ds  # no counts needed
    assert bc["pd_band"].attrs["method"] == "bc"
    with pytest.raises(ValueError, match="subsample"):
        pdpboot.confidence_bands(_result(est, res, "subsample", 100, 50), method="bc")


def test_non_negative_statistic_clipped_at_zero():
    """A statistic is clipped into the range its result declares: the header's ``supports``, or its own attr."""
    rng = np.random.default_rng(10)
    est = np.array([[0.02]])
    res = np.abs(rng.normal(0.03, 0.05, size=(100, 1, 1)))
    ds = xr.Dataset({"h2": (("output",), est[:, 0]), "h2_resamples": (("resample", "output"), res[:, :, 0])},
                    coords={"output": ["y"]}, attrs={"features": ["a", "b"]})
    undeclared = xr.DataTree(children={"a__b": xr.DataTree(ds)})
    by_header = undeclared.copy()
    by_header.attrs = {"supports": json.dumps({"h2": [0, None]})}
    by_attr = undeclared.copy()
    by_attr["a__b"].dataset = ds.assign(h2=ds["h2"].assign_attrs(support=[0.0, np.nan]))
    for method in ("normal", "basic"):
        free = pdpboot.confidence_bands(undeclared, method=method)["a__b"].ds["h2_band"]
        assert float(free.sel(ci_bound="lower", output="y")) < 0 and "support" not in free.attrs
        for tree in (by_header, by_attr):
            band = pdpboot.confidence_bands(tree, method=method)["a__b"].ds["h2_band"]
            assert float(band.sel(ci_bound="lower", output="y")) == 0.0  # would be negative without the clip
            assert list(band.attrs["support"])[0] == 0.0


def test_results_declare_their_bounded_statistics():
    X = np.random.default_rng(0).normal(size=(60, 2))
    y = X[:, 0] * X[:, 1]
    from sklearn.linear_model import LinearRegression

    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0, (0, 1)], n_resamples=3,
                                               grid=Grid(3), rng=0,
                                               execution=pdpboot.Execution(progress=False),
                                               statistics=["interactions", "heterogeneity"])
    header = ResultHeader.from_attrs(res.attrs)
    for stat in ("h2", "h2_overall", "h_unnormalized", "ice_sd", "heterogeneity_index", "pd_range",
                 "pd_variance_interaction"):
        assert header.support(stat) == (0.0, None), stat
    assert header.support("pd") == (None, None)  # a regression PD is unbounded
    assert header.target == "learner" and header.uncertainty == "bootstrap" and header.effect == "pd"


def test_subsample_deviations_rescaled(sample):
    est, res = sample
    plain = pdpboot.confidence_bands(_result(est, res), method="normal")["x"].ds
    sub = pdpboot.confidence_bands(_result(est, res, "subsample", 100, 50), method="normal")["x"].ds
    # m = n - m: scale 1
    np.testing.assert_allclose(sub["pd_band"].values, plain["pd_band"].values, atol=1e-12)
    sub = pdpboot.confidence_bands(_result(est, res, "subsample", 100, 80), method="normal")["x"].ds
    np.testing.assert_allclose(sub["pd_se"].values, plain["pd_se"].values * 2, atol=1e-12)


def test_too_few_resamples_for_simultaneous(sample):
    est, res = sample
    with pytest.raises(ValueError, match="at least 20 resamples"):
        pdpboot.confidence_bands(_result(est, res[:10]), simultaneous=True)


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1])
def test_bad_level(sample, bad):
    with pytest.raises(ValueError, match="confidence_level"):
        pdpboot.confidence_bands(_result(*sample), confidence_level=bad)


def test_failed_resamples_ignored(sample):
    est, res = sample
    res = res.copy()
    res[3] = np.nan
    out = pdpboot.confidence_bands(_result(est, res), method="normal")["x"].ds
    np.testing.assert_allclose(out["pd_se"].values, np.delete(res, 3, axis=0).std(axis=0, ddof=1), atol=1e-12)
    assert out["pd_band"].attrs["n_resamples"] == 199


finite = st.floats(-1e3, 1e3, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    res=arrays(np.float64, st.tuples(st.integers(20, 60), st.just(1), st.integers(1, 5)), elements=finite),
    shift=finite,
    method=st.sampled_from(["percentile", "basic", "normal", "bc"]),
)
def test_band_invariants(res, shift, method):
    est = res.mean(axis=0) + shift * 1e-3
    bands = {}
    for level in (0.5, 0.8, 0.95):
        lo, hi, *_ = band_arrays(est, res, level=level, method=method, simultaneous=False)
        tol = 1e-9 * (1 + np.abs(res).max())
        assert np.all(lo <= hi + tol)
        for sim in ("sup-t", "calibrated"):
            slo, shi, *_ = band_arrays(est, res, level=level, method=method, simultaneous=True,
                                       simultaneous_method=sim)
            assert np.all(slo <= lo + tol) and np.all(shi >= hi - tol)  # simultaneous contains pointwise
        bands[level] = (lo, hi)
    for small, large in [(0.5, 0.8), (0.8, 0.95)]:  # bands nest as the level grows
        tol = 1e-9 * (1 + np.abs(res).max())
        assert np.all(bands[large][0] <= bands[small][0] + tol)
        assert np.all(bands[large][1] >= bands[small][1] - tol)


def test_bands_on_real_result_and_scalar_statistic():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] + rng.normal(size=80)
    from sklearn.linear_model import LinearRegression

    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0, (0, 1)], n_resamples=25,
                                               grid=Grid(5), rng=0)
    out = pdpboot.confidence_bands(res, simultaneous=True)
    assert out["x0__x1"].ds["pd_band"].dims == ("ci_bound", "output", "x0", "x1")
    assert "pd_band" not in res["x0"].ds  # the input is not modified
    # a scalar statistic (dims: output) gets a band too
    node = out["x0"].to_dataset()
    node["slope"] = node["pd"].isel(x0=-1) - node["pd"].isel(x0=0)
    node["slope_resamples"] = node["pd_resamples"].isel(x0=-1) - node["pd_resamples"].isel(x0=0)
    out["x0"].dataset = node
    banded = pdpboot.confidence_bands(out)["x0"].ds
    assert banded["slope_band"].dims == ("ci_bound", "output")


def test_centred_pd_band_by_hand(sample):
    est, res = sample
    out = pdpboot.confidence_bands(_result(est, res))["x"].ds
    centred = res - res[:, :, :1]
    np.testing.assert_allclose(out["pd_centered"].values, est - est[:, :1], atol=1e-12)
    np.testing.assert_allclose(out["pd_centered_band"].values[1],
                               np.quantile(centred, 0.975, axis=0, method="weibull"), atol=1e-12)
    np.testing.assert_allclose(out["pd_centered_band"].values[:, :, 0], 0.0, atol=1e-12)  # anchored


@pytest.mark.filterwarnings("ignore::pdpboot.caveats.CoverageWarning", "ignore:The calibrated level")
@pytest.mark.parametrize("method, simultaneous_method", [("percentile", "sup-t"), ("normal", "sup-t"),
                                                         ("bca", "sup-t"), ("bca", "calibrated")])
def test_simultaneous_band_computes_its_pointwise_companion_once(monkeypatch, method, simultaneous_method):
    """One band_arrays call per statistic (the bca acceleration was computed twice), same numbers."""
    from sklearn.linear_model import LinearRegression

    from pdpboot.engine import intervals

    X = np.random.default_rng(0).normal(size=(60, 2))
    y = X[:, 0] + np.random.default_rng(1).normal(size=60)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0, (0, 1)], n_resamples=40,
                                               grid=Grid(4), rng=0)
    pointwise = pdpboot.confidence_bands(res, method=method)
    calls = []
    real = intervals.jackknife_after_bootstrap_acceleration
    monkeypatch.setattr(intervals, "jackknife_after_bootstrap_acceleration",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    both = pdpboot.confidence_bands(res, method=method, simultaneous=True, simultaneous_method=simultaneous_method)
    for node, names in (("x0", ("pd", "pd_centered")), ("x0__x1", ("pd",))):
        for name in names:
            np.testing.assert_array_equal(both[node].ds[f"{name}_band_pointwise"].values,
                                          pointwise[node].ds[f"{name}_band"].values)
    assert len(calls) == (3 if method == "bca" else 0)  # pd, pd_centered of x0; pd of x0__x1


def _classifier_result(resampling="subsample"):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    y = (rng.uniform(size=120) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0, (0, 1)], n_resamples=40,
                                                grid=Grid(5), resampling=resampling, rng=0,
                                                execution=pdpboot.Execution(progress=False))


def test_logit_scale_bands_are_logit_bands_mapped_back():
    from scipy.special import expit, logit

    res = _classifier_result()
    out = pdpboot.confidence_bands(res, simultaneous=True, scale="logit")
    plain = pdpboot.confidence_bands(res, simultaneous=True, scale="identity")
    ds, node = out["x0"].ds, res["x0"].ds
    scale = np.sqrt(res.attrs["subsample_size"] / (res.attrs["n_rows"] - res.attrs["subsample_size"]))
    le, ld = logit(node["pd"].values), logit(node["pd_resamples"].values)
    lo, hi, *_ = band_arrays(le, le + scale * (ld - le), level=0.95, method="percentile", simultaneous=True)
    np.testing.assert_allclose(ds["pd_band"].values, expit(np.stack([lo, hi])), rtol=1e-10)
    assert ds["pd_band"].attrs["scale"] == "logit" and ds["pd_band_pointwise"].attrs["scale"] == "logit"
    for name in ("pd_se", "pd_bias", "pd_centered_band"):  # probability scale, as with scale="identity"
        xr.testing.assert_identical(ds[name], plain["x0"].ds[name])
    assert "pd_band" in out["x0__x1"].ds and ((ds["pd_band"] > 0) & (ds["pd_band"] < 1)).all()


def test_logit_scale_refuses_a_regression():
    from sklearn.linear_model import LinearRegression

    X = np.random.default_rng(0).normal(size=(40, 2))
    reg = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=20,
                                               grid=Grid(3), rng=0, execution=pdpboot.Execution(progress=False))
    with pytest.raises(ValueError, match="needs a probability PD"):
        pdpboot.confidence_bands(reg, scale="logit")


def test_the_envelope_warning_is_short(sample):
    est, res = sample
    tree = _result(est, res[:25])
    tree["x"].dataset = tree["x"].ds.rename({"pd": "a_rather_long_statistic_name_of_forty_chars",
                                             "pd_resamples": "a_rather_long_statistic_name_of_forty_chars_resamples"})
    with pytest.warns(UserWarning, match="envelope") as caught:
        pdpboot.confidence_bands(tree, simultaneous=True, simultaneous_method="calibrated")
    assert caught and all(len(str(w.message)) < 300 for w in caught)


@pytest.mark.filterwarnings("ignore::pdpboot.caveats.CoverageWarning")
def test_bca_band_of_a_run_equals_the_band_from_its_explicit_row_counts():
    """The stored bits give the BCa band the B x n counts matrix gave, bit for bit: the counts are redrawn by
    hand from the seeds (a resample's rows: child 0 of its own seed), the acceleration computed from them."""
    from sklearn.linear_model import LinearRegression

    n, b = 61, 30  # n not a multiple of 8: the last byte is padded
    X = np.random.default_rng(0).normal(size=(n, 2))
    y = X[:, 0] + np.random.default_rng(1).normal(size=n)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=b, grid=pdpboot.Grid(4),
                                               rng=7)
    root = np.random.default_rng(7)
    root.spawn(3)
    counts = np.stack([np.bincount(seed.spawn(1)[0].integers(0, n, size=n), minlength=n) for seed in root.spawn(b)])
    stored = res["resample_absent"]
    assert stored.dtype == np.uint8 and stored.shape == (b, 8) and stored.attrs["n_rows"] == n
    np.testing.assert_array_equal(np.unpackbits(stored.values, axis=1, count=n).astype(bool), counts == 0)
    est = res["x0"]["pd"].values
    draws = est + (res["x0"]["pd_resamples"].values - est) * 1.0  # as the bands rescale (bootstrap: by 1)
    out = (counts == 0).astype(float).T
    theta = (out @ draws.reshape(b, -1)) / (out @ np.ones((b, draws[0].size)))
    a = jackknife_acceleration(theta, axis=0).reshape(est.shape)
    lower, upper = pointwise_interval(est, draws, level=0.9, method="bca", acceleration=a)
    band = pdpboot.confidence_bands(res, method="bca", confidence_level=0.9)["x0"]["pd_band"].values
    np.testing.assert_array_equal(band, np.stack([lower, upper]))
