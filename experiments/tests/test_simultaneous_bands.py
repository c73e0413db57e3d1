"""experiments.simultaneous_bands: its fast resample PDs are the package's."""

import numpy as np

import pdpboot
from pdpboot import Grid


def test_study_learner_of_the_simultaneous_band_study_matches_the_package():
    """experiments.simultaneous_bands computes resample PDs on precomputed designs: same as refit + package PD."""
    from experiments.simultaneous_bands import FastSplineRidge, SplineRidge, make_data

    X, y = make_data(80, np.random.default_rng(0))
    grid = np.linspace(-0.9, 0.9, 5)
    counts = np.random.default_rng(1).multinomial(80, np.full(80, 1 / 80))
    rows = np.repeat(np.arange(80), counts)
    model = SplineRidge().fit(X[rows], y[rows])
    expected = pdpboot.partial_dependence(model, X[rows], [0],
                                          grid=Grid(custom_values={0: grid}))["x0"].ds["pd"].values[0]
    np.testing.assert_allclose(FastSplineRidge(X, grid).pd(y, counts), expected, atol=1e-10)
