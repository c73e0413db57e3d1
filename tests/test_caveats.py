"""Coverage caveats: which bands warn and when."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

import pdpboot
from pdpboot.caveats import is_boosting_classifier, warn_interval_method


def _tree(estimator: str = "LinearRegression()", name: str = "pd") -> xr.DataTree:
    rng = np.random.default_rng(0)
    est = rng.normal(size=(1, 4))
    res = est + rng.normal(scale=0.2, size=(40, 1, 4))
    ds = xr.Dataset({name: (("output", "x"), est), f"{name}_resamples": (("resample", "output", "x"), res)},
                    coords={"output": ["y"], "x": np.arange(4.0)}, attrs={"features": ["x"]})
    tree = xr.DataTree(children={"x": xr.DataTree(ds)})
    tree.attrs = {"resampling": "bootstrap", "estimator": estimator}
    return tree


@pytest.mark.parametrize("name", ["pd", "ale"])
def test_basic_warns_on_curves(name):
    with pytest.warns(pdpboot.CoverageWarning, match=r"method='basic'"):
        pdpboot.confidence_bands(_tree(name=name), method="basic")


@pytest.mark.parametrize("method", ["percentile", "normal", "bc"])
def test_other_methods_and_scalar_statistics_do_not_warn(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(_tree(), method=method)
        pdpboot.confidence_bands(_tree(), method=method, simultaneous=True)
        pdpboot.confidence_bands(_tree(name="h2"), method="basic")  # not a curve: no study says it under-covers


def test_boosting_classifier_simultaneous_warns_pointwise_does_not():
    tree = _tree(repr(HistGradientBoostingClassifier(max_iter=60)))
    with pytest.warns(pdpboot.CoverageWarning):
        pdpboot.confidence_bands(tree, simultaneous=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(tree)
        pdpboot.confidence_bands(_tree(repr(LogisticRegression())), simultaneous=True)


def test_boosting_classifier_names():
    for text in ("HistGradientBoostingClassifier()", "Pipeline(steps=[('m', GradientBoostingClassifier())])",
                 "XGBClassifier(n_estimators=10)", "LGBMClassifier()", "<catboost.CatBoostClassifier>"):
        assert is_boosting_classifier(text), text
    for text in ("HistGradientBoostingRegressor()", "RandomForestClassifier()", "LogisticRegression()", ""):
        assert not is_boosting_classifier(text), text


def test_coverage_warning_is_a_user_warning_and_percentile_is_silent():
    assert issubclass(pdpboot.CoverageWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_interval_method("percentile")  # no-op


def _classifier_result(resampling="subsample", estimator=None):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    y = (rng.uniform(size=120) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return pdpboot.bootstrap_partial_dependence(estimator or LogisticRegression(), X, y, [0, (0, 1)], n_resamples=40,
                                                grid_resolution=5, resampling=resampling, rng=0,
                                                execution=pdpboot.Execution(progress=False))


def test_probability_bands_are_logit_bands_mapped_back():
    from scipy.special import expit, logit

    from pdpboot.engine.intervals import band_arrays

    res = _classifier_result()
    out = pdpboot.probability_bands(res, simultaneous=True)
    plain = pdpboot.confidence_bands(res, simultaneous=True)
    ds, node = out["x0"].ds, res["x0"].ds
    scale = np.sqrt(res.attrs["subsample_size"] / (res.attrs["n_rows"] - res.attrs["subsample_size"]))
    le, ld = logit(node["pd"].values), logit(node["pd_resamples"].values)
    lo, hi, *_ = band_arrays(le, le + scale * (ld - le), level=0.95, method="percentile", simultaneous=True)
    np.testing.assert_allclose(ds["pd_band"].values, expit(np.stack([lo, hi])), rtol=1e-10)
    assert ds["pd_band"].attrs["scale"] == "logit" and ds["pd_band_pointwise"].attrs["scale"] == "logit"
    for name in ("pd_se", "pd_bias", "pd_centered_band"):  # probability scale, as confidence_bands
        xr.testing.assert_identical(ds[name], plain["x0"].ds[name])
    assert "pd_band" in out["x0__x1"].ds and ((ds["pd_band"] > 0) & (ds["pd_band"] < 1)).all()


def test_probability_bands_refuse_a_regression_and_warn_for_boosting():
    from sklearn.linear_model import LinearRegression

    X = np.random.default_rng(0).normal(size=(40, 2))
    reg = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=20,
                                               grid_resolution=3, rng=0,
                                               execution=pdpboot.Execution(progress=False))
    with pytest.raises(ValueError, match="probability PD"):
        pdpboot.probability_bands(reg)
    # the bootstrap on the logit scale under-covered a boosting classifier (rare outcome 0.858): it warns, once
    res = _classifier_result("bootstrap", estimator=HistGradientBoostingClassifier(max_iter=5))
    with pytest.warns(pdpboot.CoverageWarning, match="resampling='bootstrap'") as caught:
        pdpboot.probability_bands(res, simultaneous=True)
    assert len(caught) == 1
    # the 0.632 subsample on the logit scale (the default for probabilities) was not measured to under-cover
    res = _classifier_result("subsample", estimator=HistGradientBoostingClassifier(max_iter=5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.probability_bands(res, simultaneous=True)


def test_auto_is_the_subsample_on_the_logit_scale_for_probabilities():
    """resampling='auto' gives a classifier's probabilities the 0.632 subsample with logit-scale bands."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=3, grid_resolution=3,
                                               rng=0, execution=pdpboot.Execution(progress=False))
    assert res.attrs["resampling"] == "subsample" and res.attrs["subsample_size"] == 37  # floor(0.632 x 60)
    assert res.attrs["band_scale"] == "logit" and res.attrs["resampling_requested"] == "auto"
