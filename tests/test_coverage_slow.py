"""Slow (outside CI) coverage check of the default bootstrap bands on a known-truth DGP.

y = x1 + x2 + x1 x2 + eps, x1, x2, eps ~ N(0, 1) independent, OLS with the
interaction term, n = 500: the true PD of x1 is PD(x1) = x1 (E[x2] = 0).
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

import pdpboot
from pdpboot import Grid

N_REPETITIONS = 400


def _one_repetition(seed: int, background: str) -> tuple[float, bool]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(500, 2))
    y = X[:, 0] + X[:, 1] + X[:, 0] * X[:, 1] + rng.normal(size=500)
    model = make_pipeline(PolynomialFeatures(interaction_only=True, include_bias=False), LinearRegression())
    res = pdpboot.bootstrap_partial_dependence(
        model, X, y, [0], n_resamples=200, grid=Grid(11, custom_values={0: np.linspace(-2, 2, 11)}), rng=rng,
        resampling=pdpboot.Resampling(background=background),
        execution=pdpboot.Execution(progress=False),
    )
    point = pdpboot.confidence_bands(res)["x0"].ds["pd_band"].values[:, 0, :]
    simul = pdpboot.confidence_bands(res, simultaneous=True)["x0"].ds["pd_band"].values[:, 0, :]
    truth = np.linspace(-2, 2, 11)
    pointwise = np.mean((point[0] <= truth) & (truth <= point[1]))
    simultaneous = bool(np.all((simul[0] <= truth) & (truth <= simul[1])))
    return pointwise, simultaneous


@pytest.mark.slow
def test_pointwise_percentile_coverage_of_true_pd():
    results = [_one_repetition(seed, "resample") for seed in range(N_REPETITIONS)]
    pointwise = np.mean([r[0] for r in results])
    simultaneous = np.mean([r[1] for r in results])
    print(f"pointwise coverage {pointwise:.3f}, simultaneous coverage {simultaneous:.3f}")
    assert 0.92 <= pointwise <= 0.97
    assert simultaneous >= 0.90
