"""The fresh designs of experiments/fresh_designs.py on tiny n: shapes, truths and the package's call sites."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from experiments import fresh_designs as fd

ALL = {**fd.DEBIASED, **fd.CLASSIFIER}


@pytest.mark.parametrize("name", sorted(ALL))
def test_simulate_shapes_and_outcome(name):
    design = ALL[name]
    X, y = design.simulate(60, 0)
    assert X.shape[0] == y.shape[0] == 60 and X.ndim == 2 and np.isfinite(X).all()
    assert X.shape[1] == {"p12": 12, "sine_rho060": 5, "scenario_e": 2}.get(design.dgp, 3)
    if name in fd.CLASSIFIER or design.dgp == "binary":
        assert set(np.unique(y)) <= {0, 1}
    X2, y2 = design.simulate(60, 0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


@pytest.mark.parametrize("dgp, rho", [("strong_rho080", 0.8), ("strong_rho095", 0.95), ("sine_rho060", 0.6),
                                      ("p12", 0.3)])
def test_dependence_as_stated(dgp, rho):
    X, _ = fd.simulate(dgp, 40_000, np.random.default_rng(1))
    assert np.corrcoef(X[:, 0], X[:, 1])[0, 1] == pytest.approx(rho, abs=0.02)


def test_rare_base_rate_and_categorical_dependence():
    _, y = fd.simulate("rare", 200_000, np.random.default_rng(2))
    assert y.mean() == pytest.approx(0.05, abs=0.003)
    X, _ = fd.simulate("categorical", 50_000, np.random.default_rng(3))
    assert set(np.unique(X[:, 2])) == {0.0, 1.0, 2.0, 3.0}
    # level 1 is likelier at high x1, level 2 at low x1
    assert X[X[:, 0] > 1, 2].tolist().count(1.0) > 3 * X[X[:, 0] < -1, 2].tolist().count(1.0)


@pytest.mark.parametrize("dgp", ["strong_rho080", "p12", "sine_rho060", "categorical", "binary"])
def test_data_pd_against_monte_carlo_of_the_dgp(dgp):
    """The stated PD against an independent Monte Carlo: data drawn from the DGP, x1 set to a, the
    outcome's mean estimated from the simulated noise-free signal (regression) or probability (binary)."""
    grid = np.array([-1.0, 0.0, 0.7])
    truth = fd.data_pd(dgp, grid, draws=100_000)
    gen = np.random.default_rng(5)
    X, _ = fd.simulate(dgp, 100_000, gen)
    for a, t in zip(grid, truth):
        Z = X.copy()
        Z[:, 0] = a
        if dgp == "binary":
            est = fd._binary_prob(Z).mean()
        elif dgp == "categorical":  # c keeps its own (x1-dependent) marginal draw
            c = Z[:, 2].astype(int)
            est = np.mean(np.sin(2 * a) + fd.TAU[c] + 0.8 * (c == 1) * a)
        elif dgp == "sine_rho060":
            est = np.mean(1.5 * np.tanh(2 * a) + np.sin(2 * Z[:, 1]) + a * Z[:, 1] + 0.5 * Z[:, 2] - 0.5 * Z[:, 3])
        elif dgp == "p12":
            est = np.mean(2 * np.sin(1.5 * a) + a * Z[:, 1] + Z[:, 2] ** 2)
        else:
            est = np.mean(2 * np.sin(1.5 * a) + a * Z[:, 1] + Z[:, 1] + 0.5 * Z[:, 2] ** 2)
        assert est == pytest.approx(t, abs=0.02)


def test_threshold_is_steep_at_zero():
    X = np.zeros((3, 3))
    X[:, 0] = [-0.12, 0.0, 0.12]
    p = fd.threshold_prob(X)
    assert p[0] < expit(-1.0) and p[2] > expit(1.0) and p[0] < p[1] < p[2]


@pytest.mark.parametrize("name", ["threshold_hgb25", "rare_mlp", "scenario_e_gbc"])
def test_learner_truth_shapes(name):
    design = fd.CLASSIFIER[name]
    small = fd.Design(design.name, design.dgp, design.learner, 120, design.features, design.grid, design.rounds)
    fits = fd.learner_truth(small, fits=2)
    assert fits.shape == (2, len(design.features), len(design.grid))
    assert np.all((fits >= 0) & (fits <= 1)) and not np.array_equal(fits[0], fits[1])


def test_auto_band_call_site():
    design = fd.CLASSIFIER["threshold_hgb25"]
    X, y = design.simulate(150, 0)
    out = fd.auto_band(design, X, y, rng=1, n_resamples=20)
    assert out["estimate"].shape == (1, 15) and out["resamples"].shape == (20, 1, 15)
    assert out["pointwise"].shape == out["simultaneous"].shape == (2, 1, 15)
    assert out["scale"] == "logit"
    assert np.all(out["simultaneous"][0] <= out["pointwise"][0] + 1e-12)


def test_debiased_band_call_site():
    design = fd.DEBIASED["categorical"]
    X, y = design.simulate(300, 0)
    out = fd.debiased_band(design, X, y, rng=1)
    assert out["pd"].shape == (15,)
