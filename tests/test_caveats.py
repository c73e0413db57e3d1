"""Measured coverage caveats (issue 27): who warns, when, with which numbers."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

import pdpboot
from pdpboot.caveats import (
    BASIC_BCA_NOTE,
    BOOSTING_CLASSIFIER_NOTE,
    is_boosting_classifier,
    warn_interval_method,
)


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
def test_basic_warns_on_curves_with_the_measured_numbers(name):
    with pytest.warns(pdpboot.CoverageWarning, match=r"method='basic'.*0\.83-0\.90.*-0\.60"):
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
    with pytest.warns(pdpboot.CoverageWarning, match=r"0\.80-0\.89.*0\.787"):
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


def test_notes_quote_numbers_and_warning_is_a_user_warning():
    assert issubclass(pdpboot.CoverageWarning, UserWarning)
    assert "0.78-0.85" in BASIC_BCA_NOTE and "0.62" in BOOSTING_CLASSIFIER_NOTE
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


def _b100_record(cell: str, scheme: str) -> dict:
    """The committed B = 100 summary's row (``experiments/summaries/classifier_se/default_B100.json``)."""
    path = Path(__file__).resolve().parents[1] / "experiments" / "summaries" / "classifier_se" / "default_B100.json"
    return next(r for r in json.loads(path.read_text()) if r["cell"] == cell and r["scheme"] == scheme)


def test_subsample_is_the_default_for_probabilities_and_the_warning_quotes_the_b100_study():
    """Issue 27 item 1: the 0.632 subsample with logit-scale bands is the default for a classifier's probabilities
    (it covered every classifier cell at B = 100 >= 0.94 pointwise and >= 0.91 whole curve); the explicit bootstrap
    of a boosting classifier warns with the B = 100 shortfall of the bootstrap and the remedy's numbers."""
    from pdpboot.caveats import SUBSAMPLE_NOTE

    rare = _b100_record("rare:hgb_clf", "sub632_logit")
    quoted = f"{rare['whole']:.3f} ({rare['whole_mcse']:.3f}) whole curve (R = {rare['R']};"
    assert quoted in SUBSAMPLE_NOTE and "It is the default" in SUBSAMPLE_NOTE
    plain = _b100_record("rare:hgb_clf", "plain")  # the bootstrap's own shortfall there, in the boosting note
    assert f"{plain['whole']:.3f} (MC SE {plain['whole_mcse']:.3f})" in BOOSTING_CLASSIFIER_NOTE
    assert f"R = {plain['R']}, B = {plain['B']}) its SE was {plain['se_ratio_median']:.2f}" in BOOSTING_CLASSIFIER_NOTE
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=3, grid_resolution=3,
                                               rng=0, execution=pdpboot.Execution(progress=False))
    assert res.attrs["resampling"] == "subsample" and res.attrs["subsample_size"] == 37  # floor(0.632 x 60)
    assert res.attrs["band_scale"] == "logit" and res.attrs["resampling_requested"] == "auto"
    with pytest.warns(pdpboot.CoverageWarning, match=re.escape(quoted)):
        pdpboot.confidence_bands(_tree(repr(HistGradientBoostingClassifier())), simultaneous=True)


def test_the_default_s_quoted_ranges_are_the_b100_summary_s():
    """Every place that quotes the classifier default's B = 100 ranges (R, pointwise, whole curve over the twelve
    classifier cells) quotes the committed summary, not an older run of it."""
    from pdpboot.caveats import AUTO_PROBABILITY_NOTE

    path = Path(__file__).resolve().parents[1] / "experiments" / "summaries" / "classifier_se" / "default_B100.json"
    auto = [r for r in json.loads(path.read_text()) if r["scheme"] == "sub632_logit"]
    assert len(auto) == 12
    r_range = f"R = {min(r['R'] for r in auto)}-{max(r['R'] for r in auto)}"
    point = f"{min(r['pointwise'] for r in auto):.3f}-{max(r['pointwise'] for r in auto):.3f} pointwise"
    whole = f"{min(r['whole'] for r in auto):.3f}-{max(r['whole'] for r in auto):.3f} whole curve"
    root = Path(__file__).resolve().parents[1]
    for text in (AUTO_PROBABILITY_NOTE, " ".join((root / "pdpboot" / "bootstrap.py").read_text().split()),
                 " ".join((root / "pdpboot" / "logit_scale.py").read_text().split())):
        assert r_range in text and point in text and whole in text
    readme = " ".join((root / "README.md").read_text().replace("–", "-").split())
    assert point in readme and whole in readme
