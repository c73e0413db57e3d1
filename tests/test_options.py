"""The option objects: validated once, accepted by every entry point, equal to the keyword shortcuts."""

import dataclasses

import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot import Execution, Resampling


def _data(n=60):
    X = np.random.default_rng(0).normal(size=(n, 2))
    return X, X[:, 0] + X[:, 0] * X[:, 1]


def test_objects_are_frozen_and_validated_once():
    r = Resampling("subsample", n_resamples=10, subsample_fraction=0.5)
    assert r.subsample_size(101) == 50 and r.groups is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_resamples = 3
    with pytest.raises(ValueError, match="subsample_fraction"):
        Resampling("subsample", subsample_fraction=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        Resampling(n_resamples=1)
    with pytest.raises(ValueError, match="background"):
        Resampling(background="fixed")
    with pytest.raises(ValueError, match="needs groups"):
        Resampling("group")
    with pytest.raises(ValueError, match="on_error"):
        Execution(on_error="ignore")
    assert Execution(threads_per_job=None).threads_per_job == 1


def test_subsample_that_leaves_no_rows_is_refused_before_any_fit():
    X, y = _data(10)
    with pytest.raises(ValueError, match=r"= 0 row\(s\) per subsample; the model needs at least 2"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=3,
                                             resampling=pdpboot.Resampling("subsample", subsample_fraction=0.05),
                                             execution=pdpboot.Execution(progress=False))


def test_objects_equal_the_keyword_shortcuts():
    X, y = _data()
    groups = np.repeat(np.arange(12), 5)
    common = dict(grid_resolution=3, rng=0)
    with pytest.warns(FutureWarning, match="deprecated"):  # the keywords before 0.2
        by_keywords = pdpboot.bootstrap_partial_dependence(
            LinearRegression(), X, y, [0, (0, 1)], n_resamples=4, resampling="group", groups=groups,
            max_background=40, n_jobs=1, on_error="skip", progress=False, interactions=True, **common)
    by_objects = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, [0, (0, 1)], resampling=Resampling("group", n_resamples=4, groups=groups,
                                                                    max_background=40),
        execution=Execution(n_jobs=1, on_error="skip", progress=False), statistics=["interactions"], **common)
    by_objects.attrs["created"] = by_keywords.attrs["created"]
    xr.testing.assert_identical(by_keywords, by_objects)
    ale = pdpboot.bootstrap_ale(LinearRegression(), X, y, [0], resampling=Resampling(n_resamples=3),
                                execution=Execution(progress=False), rng=0)
    assert ale["x0"].ds["ale_resamples"].sizes["resample"] == 3


def test_an_object_and_a_conflicting_shortcut_are_refused():
    X, y = _data()
    with pytest.raises(TypeError, match=r"n_resamples=7 contradicts resampling=Resampling\(n_resamples=5\)"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], resampling=Resampling(n_resamples=5),
                                             n_resamples=7)
    with pytest.raises(TypeError, match=r"n_jobs=2 contradicts execution=Execution\(n_jobs=1\)"), \
            pytest.warns(FutureWarning):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], execution=Execution(n_jobs=1), n_jobs=2)


def test_a_shortcut_fills_a_field_the_object_leaves_at_its_default():
    """``n_resamples=`` next to ``Resampling("subsample", subsample_fraction=0.5)`` is what users write."""
    X, y = _data()
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=3, rng=0,
                                               resampling=Resampling("subsample", subsample_fraction=0.5))
    assert res["x0"].ds.sizes["resample"] == 3 and res.attrs["resampling"] == "subsample"
    with pytest.raises(TypeError, match="must be a pdpboot.Execution"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], execution={"n_jobs": 2})


def test_failures_are_typed_and_counted():
    from pdpboot._loop import Failure

    failure = Failure.from_text("MissingClassError: the refit saw no rows: of class 2")
    assert failure.missing_class and failure.message == "the refit saw no rows: of class 2"
    assert str(failure) == "MissingClassError: the refit saw no rows: of class 2"
    assert not Failure.of(ValueError("x")).missing_class


def test_every_registered_strategy_fills_the_schema():
    from sklearn.ensemble import RandomForestRegressor

    from pdpboot.debiased import DebiasedOptions
    from pdpboot.header import ResultHeader
    from pdpboot.strategies import STRATEGIES, get_strategy

    X, y = _data(80)
    options = {"bootstrap": dict(n_resamples=3), "debiased": dict(options=DebiasedOptions(n_folds=2))}
    assert set(options) == set(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        estimator = RandomForestRegressor(n_estimators=30, max_depth=3, random_state=0)
        with np.errstate(all="ignore"):
            res = get_strategy(name)(estimator, X, y, [0], grid_resolution=3, rng=0, **options[name])
        header = ResultHeader.from_attrs(res.attrs)
        assert header.target == strategy.target and header.uncertainty != "none"
        ds = res["x0"].ds
        assert ("pd_resamples" in ds) == strategy.resamples
        if not strategy.resamples:
            assert ds["pd_band"].dims == ("ci_bound", "output", "x0") and "pd_se" in ds
    with pytest.raises(ValueError, match="not one of"):
        get_strategy("magic")

