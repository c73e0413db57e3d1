"""Each "one X" of the architecture is called by every entry point that needs it.

The one implementation is wrapped in every ``pdpboot`` module that holds a reference to it, so a
second implementation (or a private copy) would leave the counter at zero.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot import Execution, Grid

QUIET = Execution(progress=False)


def _data(n: int = 60):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X["a"] - 2 * X["b"] + X["a"] * X["c"] + rng.normal(size=n)


def _count(monkeypatch, module_name: str, name: str) -> list:
    """Wrap ``module_name.name`` wherever a ``pdpboot`` module holds it; returns the list of calls."""
    for public in pdpboot.__all__:  # import every module of the public names first
        getattr(pdpboot, public)
    __import__(module_name)
    original = getattr(sys.modules[module_name], name)
    calls: list = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for mod_name, module in list(sys.modules.items()):
        if (mod_name == "pdpboot" or mod_name.startswith("pdpboot.")) and getattr(module, name, None) is original:
            monkeypatch.setattr(module, name, counting)
    return calls


def _assert_each_calls(monkeypatch, module_name: str, name: str, entry_points: dict) -> None:
    for label, call in entry_points.items():
        calls = _count(monkeypatch, module_name, name)
        call()
        assert calls, f"{label} did not call {module_name}.{name}"
        monkeypatch.undo()


@pytest.mark.filterwarnings("ignore:No band for the data's PD:pdpboot.CoverageWarning")  # n = 120: thin ends
def test_one_sup_t_rule_for_bands_and_the_debiased_estimator(monkeypatch):
    X, y = _data(120)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=40, grid=Grid(4), rng=0,
                                               execution=QUIET)
    _assert_each_calls(monkeypatch, "pdpboot.engine.intervals", "maxima_critical_value", {
        "confidence_bands": lambda: pdpboot.confidence_bands(res, simultaneous=True),
        "debiased_partial_dependence": lambda: pdpboot.debiased_partial_dependence(
            LinearRegression(), X, y, ["a"], grid=Grid(4), rng=0, execution=QUIET),
    })


def test_one_one_fit_path(monkeypatch):
    X, y = _data()
    model = LinearRegression().fit(X, y)
    _assert_each_calls(monkeypatch, "pdpboot.bootstrap", "one_fit_tree", {
        "partial_dependence": lambda: pdpboot.partial_dependence(model, X, ["a"], grid=Grid(4)),
        "accumulated_local_effects": lambda: pdpboot.accumulated_local_effects(model, X, ["a"], grid=Grid(4)),
        "h_statistic_of_model": lambda: pdpboot.h_statistic_of_model(model, X, ["a", "c"], n_max=30),
    })


def test_one_auto_resolver(monkeypatch):
    X, y = _data()
    _assert_each_calls(monkeypatch, "pdpboot._plan", "resolve_scheme", {
        "bootstrap_partial_dependence": lambda: pdpboot.bootstrap_partial_dependence(
            LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4), rng=0, execution=QUIET),
        "bootstrap_ale": lambda: pdpboot.bootstrap_ale(LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4),
                                                       rng=0, execution=QUIET),
    })


@pytest.mark.filterwarnings("ignore")
def test_one_store_for_every_run(monkeypatch):
    X, y = _data()
    _assert_each_calls(monkeypatch, "pdpboot.checkpoint", "open_store", {
        "bootstrap_partial_dependence": lambda: pdpboot.bootstrap_partial_dependence(
            LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4), rng=0, execution=QUIET),
        "bootstrap_ale": lambda: pdpboot.bootstrap_ale(LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4),
                                                       rng=0, execution=QUIET),
        "h_statistic_test": lambda: pdpboot.h_statistic_test(LinearRegression(), X, y, ("a", "c"), n_resamples=3,
                                                             n_max=30, rng=0, execution=QUIET),
        "debiased_partial_dependence": lambda: pdpboot.debiased_partial_dependence(
            LinearRegression(), X, y, ["a"], grid=Grid(4), rng=0, execution=QUIET),
    })


@pytest.mark.filterwarnings("ignore:No band for the data's PD:pdpboot.CoverageWarning")  # small n: thin ends
def test_one_dispatch_of_grid_pd_engines(monkeypatch):
    X, y = _data()
    model = LinearRegression().fit(X, y)
    _assert_each_calls(monkeypatch, "pdpboot.engine", "compute_pd_many", {
        "partial_dependence": lambda: pdpboot.partial_dependence(model, X, ["a"], grid=Grid(4)),
        "bootstrap_partial_dependence": lambda: pdpboot.bootstrap_partial_dependence(
            LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4), rng=0, execution=QUIET),
        "bootstrap_ale (with_pd)": lambda: pdpboot.bootstrap_ale(
            LinearRegression(), X, y, ["a"], n_resamples=3, grid=Grid(4), with_pd=True, rng=0, execution=QUIET),
        "debiased_partial_dependence": lambda: pdpboot.debiased_partial_dependence(
            LinearRegression(), X, y, ["a"], grid=Grid(4), rng=0, execution=QUIET),
    })
