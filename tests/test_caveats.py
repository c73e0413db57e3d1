"""Measured coverage caveats (issue 27): who warns, when, with which numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

import pdpboot
from pdpboot.caveats import (
    BASIC_BCA_NOTE,
    BOOSTING_CLASSIFIER_NOTE,
    FOREST_IJ_NOTE,
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
    assert "0.717" in FOREST_IJ_NOTE and "0.402" in FOREST_IJ_NOTE and "0.933" in FOREST_IJ_NOTE
    assert "0.78-0.85" in BASIC_BCA_NOTE and "0.62" in BOOSTING_CLASSIFIER_NOTE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_interval_method("percentile")  # no-op
