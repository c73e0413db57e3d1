"""Coverage caveats: who warns, when, and that every warning is short."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import xarray as xr
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import pdpboot
from pdpboot import Grid, caveats
from pdpboot.engine.resample import RESAMPLING


def _tree(name: str = "pd", **attrs) -> xr.DataTree:
    rng = np.random.default_rng(0)
    est = rng.normal(size=(1, 4))
    res = est + rng.normal(scale=0.2, size=(40, 1, 4))
    ds = xr.Dataset({name: (("output", "x"), est), f"{name}_resamples": (("resample", "output", "x"), res)},
                    coords={"output": ["y"], "x": np.arange(4.0)}, attrs={"features": ["x"]})
    tree = xr.DataTree(children={"x": xr.DataTree(ds)})
    tree.attrs = {"resampling": "bootstrap", **attrs}
    return tree


def _warn_calls():
    """Every ``warn_*`` function of pdpboot.caveats with every value of its first argument."""
    for name in [n for n in caveats.__all__ if n.startswith("warn_")]:
        fn = getattr(caveats, name)
        first = next(iter(inspect.signature(fn).parameters.values()))
        if first.kind is inspect.Parameter.KEYWORD_ONLY:
            yield name, fn, ()
        elif first.name == "method":
            yield from ((name, fn, (m,)) for m in caveats.UNDER_COVERING_METHODS)
        else:
            yield from ((name, fn, (r,)) for r in (*RESAMPLING, None))


def test_every_coverage_warning_is_short_and_points_to_the_validation_page():
    calls = list(_warn_calls())
    assert {name for name, _, _ in calls} == {"warn_interval_method", "warn_boosting_classifier"}
    for name, fn, args in calls:
        with pytest.warns(pdpboot.CoverageWarning) as caught:
            fn(*args)
        for w in caught:
            message = str(w.message)
            assert len(message) < 300, (name, args, len(message), message)
            assert message.endswith("See the validation page of the documentation."), message


@pytest.mark.parametrize("name", ["pd", "ale"])
def test_basic_warns_on_curves(name):
    with pytest.warns(pdpboot.CoverageWarning, match=r"method='basic' bands under-cover") as caught:
        pdpboot.confidence_bands(_tree(name=name), method="basic")
    assert all(len(str(w.message)) < 300 for w in caught)


@pytest.mark.parametrize("method", ["percentile", "normal", "bc"])
def test_other_methods_and_scalar_statistics_do_not_warn(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(_tree(), method=method)
        pdpboot.confidence_bands(_tree(), method=method, simultaneous=True)
        pdpboot.confidence_bands(_tree(name="h2"), method="basic")  # not a curve


def test_warn_interval_method_is_silent_for_the_default():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        caveats.warn_interval_method("percentile")
    assert issubclass(pdpboot.CoverageWarning, UserWarning)


def _classifier_result(estimator, resampling="bootstrap"):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    y = (rng.uniform(size=120) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return pdpboot.bootstrap_partial_dependence(estimator, X, y, [0], n_resamples=20, grid=Grid(4),
                                                resampling=resampling, rng=0,
                                                execution=pdpboot.Execution(progress=False))


class LogisticWrapper(LogisticRegression):
    """A logistic regression whose repr names a boosting classifier: the caveat must not be fooled by it."""

    def __repr__(self) -> str:
        return "LogisticWrapper(like=GradientBoostingClassifier())"


def test_boosting_caveat_is_decided_from_the_pipeline_s_final_step():
    res = _classifier_result(make_pipeline(StandardScaler(), HistGradientBoostingClassifier(max_iter=5)))
    assert res.attrs["learner_family"] == "gradient boosting"
    with pytest.warns(pdpboot.CoverageWarning, match="resampling='bootstrap'") as caught:
        pdpboot.confidence_bands(res, simultaneous=True)
    assert len(caught) == 1 and len(str(caught[0].message)) < 300
    with warnings.catch_warnings():  # pointwise bands carry no caveat
        warnings.simplefilter("error")
        pdpboot.confidence_bands(res)
    # the default for probabilities (the 0.632 subsample, logit-scale bands) carries none either
    res = _classifier_result(HistGradientBoostingClassifier(max_iter=5), resampling="auto")
    assert res.attrs["learner_family"] == "gradient boosting" and res.attrs["band_scale"] == "logit"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(res, simultaneous=True)


@pytest.mark.parametrize("estimator", [LogisticWrapper(), LogisticRegression()], ids=["repr-lookalike", "logistic"])
def test_no_boosting_caveat_for_other_classifiers(estimator):
    res = _classifier_result(estimator)
    assert "GradientBoostingClassifier" in res.attrs["estimator"] or isinstance(estimator, LogisticRegression)
    assert "learner_family" not in res.attrs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(res, simultaneous=True)


def test_results_without_the_learner_family_attr_carry_no_boosting_caveat():
    tree = _tree(estimator="HistGradientBoostingClassifier()", task="classification")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(tree, simultaneous=True)
    with pytest.warns(pdpboot.CoverageWarning, match="gradient-boosting classifier"):
        pdpboot.confidence_bands(_tree(learner_family="gradient boosting", task="classification"), simultaneous=True)
