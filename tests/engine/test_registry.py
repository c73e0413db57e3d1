"""The engine registry: a registered engine is chosen by ``method="auto"``, checked, and recorded."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import pdpboot.engine.registry as registry
from pdpboot.engine import compute_pd_many
from pdpboot.engine.registry import Engine, register, registered


class _Exact:
    """A toy exact engine for linear models: PD of a linear model is the model at the column means."""

    def __init__(self, model, X):
        self.model, self.X = model, np.asarray(X, dtype=float)

    def plan(self, features, grids):
        return list(features), [np.asarray(g, dtype=float) for g in grids]

    def partial_dependence_many(self, plans, *, weights=None, average=True, individual=False):
        out = []
        for features, grids in plans:
            (j,), (g,) = features, grids
            rows = np.repeat(self.X.mean(axis=0)[None, :], len(g), axis=0)
            rows[:, j] = g
            out.append((self.model.predict(rows)[None, :], None))
        return out


def _toy(check=lambda *a: None):
    return Engine(
        name="toy",
        prepare=lambda est, X, response_method, n_grid: _Exact(est, X) if isinstance(est, LinearRegression) else None,
        faster=lambda prepared, plan, individual: not individual,
        check=check,
        supported="LinearRegression",
    )


@pytest.fixture
def toy_registered(monkeypatch):
    """Register into a copy of the registry (the real one is restored afterwards)."""
    monkeypatch.setattr(registry, "_ENGINES", dict(registry._ENGINES))
    return register


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    return X, LinearRegression().fit(X, X @ np.array([1.0, -2.0, 0.5]))


def test_auto_uses_a_registered_engine_and_records_it(toy_registered):
    X, est = _data()
    toy_registered(_toy())
    assert [e.name for e in registered()] == ["tree", "toy"]
    grid = np.array([-1.0, 0.0, 2.0])
    choices = []
    (avg, _), = compute_pd_many(est, X, [[1]], [[grid]], response_method="predict", choices=choices)
    brute, _ = compute_pd_many(est, X, [[1]], [[grid]], response_method="predict", method="brute")[0]
    np.testing.assert_allclose(avg, brute, rtol=0, atol=1e-12)  # linear: exact
    assert choices[0].engine == "toy" and not choices[0].fallback


def test_a_failed_check_of_a_registered_engine_falls_back(toy_registered):
    X, est = _data()
    toy_registered(_toy(check=lambda *a: "toy reading is off"))
    choices = []
    compute_pd_many(est, X, [[0]], [[np.array([0.0, 1.0])]], response_method="predict", choices=choices)
    assert choices[0].engine == "brute" and choices[0].fallback and "toy reading is off" in choices[0].reason


def test_reserved_names_cannot_be_registered():
    with pytest.raises(ValueError, match="reserved"):
        register(Engine("brute", None, None, None, ""))
