"""experiments.truth: the true PDs of the simulated DGPs, against quadrature and Monte Carlo.

True PDs are checked against (a) tensor-product Gauss quadrature of each DGP's noise-free response
(:func:`pdpboot.datasets.true_function`, tested against the published formulas in tests/test_datasets.py)
over the feature distributions (deterministic, tight tolerance) and (b) Monte
Carlo averages over a large sample drawn by pdpboot's own generators (tolerance from the Monte
Carlo standard error).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from experiments.truth import true_pd
from pdpboot import datasets as ds


def f(name, point):
    """The DGP's noise-free response at ``point`` (columns, broadcast), by pdpboot.datasets.true_function."""
    columns = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in point.values()))
    return ds.true_function(name, pd.DataFrame({k: c.ravel() for k, c in zip(point, columns, strict=True)}))


# --------------------------------------------------------------------------- quadrature rules
# A rule is (nodes, weights) of a probability distribution: weights sum to 1.


def uniform_rule(lo, hi, n, breaks=()):
    """Piecewise Gauss-Legendre rule for U(lo, hi), exact for piecewise polynomials of degree < 2n."""
    edges = [lo, *breaks, hi]
    x, w = np.polynomial.legendre.leggauss(n)
    nodes = [(a + b) / 2 + (b - a) / 2 * x for a, b in zip(edges[:-1], edges[1:], strict=True)]
    weights = [w * (b - a) / 2 / (hi - lo) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    return np.concatenate(nodes), np.concatenate(weights)


def normal_rule(n):
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / math.sqrt(2 * math.pi)


RULES = {
    "electricity": {
        "Temperature": uniform_rule(0, 40, 4),
        "Hour": uniform_rule(0, 24, 30, breaks=(7, 10, 17, 18, 22)),
        "Day": (np.arange(7.0), np.full(7, 1 / 7)),
    },
    "friedman1": {
        "x1": uniform_rule(0, 1, 24), "x2": uniform_rule(0, 1, 24),
        "x3": uniform_rule(0, 1, 3), "x4": uniform_rule(0, 1, 2), "x5": uniform_rule(0, 1, 2),
    },
    "interaction": {"x1": normal_rule(6), "x2": normal_rule(6)},
    "goldstein": {
        "x1": uniform_rule(-1, 1, 2), "x2": uniform_rule(-1, 1, 2),
        "x3": uniform_rule(-1, 1, 2, breaks=(0,)),
    },
    "additive_uniform": {"x1": uniform_rule(0, 1, 2), "x2": uniform_rule(0, 1, 2)},
}


def quadrature_pd(name, fixed):
    """E[f(fixed, X_rest)] by tensor-product quadrature over the features not fixed."""
    rules = RULES[name]
    rest = [c for c in rules if c not in fixed]
    for c in rest:
        assert abs(rules[c][1].sum() - 1) < 1e-13
    nodes = np.meshgrid(*[rules[c][0] for c in rest], indexing="ij")
    weights = np.prod(np.meshgrid(*[rules[c][1] for c in rest], indexing="ij"), axis=0)
    point = {c: g.ravel() for c, g in zip(rest, nodes, strict=True)}
    point.update(fixed)
    values = np.broadcast_to(f(name, point), weights.size)
    return float(np.sum(weights.ravel() * values))


GRIDS = {
    "Temperature": np.array([0.0, 5.0, 13.3, 20.0, 31.0, 40.0]),
    "Hour": np.array([0.0, 3.5, 7.0, 8.5, 10.0, 12.0, 17.0, 17.5, 18.0, 20.0, 22.0, 23.9]),
    "Day": np.arange(7.0),
    "x1": np.array([0.0, 1e-7, 0.1, 0.37, 0.5, 0.8, 1.0]),
    "x2": np.array([0.0, 0.25, 0.6, 1.0]),
    "x3": np.array([0.0, 0.2, 0.5, 0.9]),
    "x4": np.array([0.0, 0.5, 1.0]),
    "x5": np.array([0.0, 0.3, 1.0]),
    "x7": np.array([0.1, 0.9]),
}
GRIDS_BY_DGP = {
    "interaction": {"x1": np.array([-2.0, -0.5, 0.0, 1.0, 2.5]), "x2": np.array([-1.5, 0.0, 0.7, 2.0])},
    "goldstein": {"x1": np.array([-1.0, -0.2, 0.4, 1.0]), "x2": np.array([-0.9, 0.0, 0.5, 1.0]),
                  "x3": np.array([-1.0, -0.01, 0.0, 0.3, 1.0])},
    "additive_uniform": {"x1": np.array([0.0, 0.3, 1.0]), "x2": np.array([0.0, 0.55, 0.8, 1.0])},
}


def grid(name, feature):
    return GRIDS_BY_DGP.get(name, GRIDS)[feature]


ONE_D = [
    ("electricity", "Temperature"), ("electricity", "Hour"), ("electricity", "Day"),
    ("friedman1", "x1"), ("friedman1", "x2"), ("friedman1", "x3"), ("friedman1", "x4"),
    ("friedman1", "x5"), ("friedman1", "x7"),
    ("interaction", "x1"), ("interaction", "x2"),
    ("goldstein", "x1"), ("goldstein", "x2"), ("goldstein", "x3"),
    ("additive_uniform", "x1"), ("additive_uniform", "x2"),
]
TWO_D = [
    ("electricity", ("Temperature", "Hour")), ("electricity", ("Day", "Hour")),
    ("electricity", ("Temperature", "Day")),
    ("friedman1", ("x1", "x2")), ("friedman1", ("x2", "x3")), ("friedman1", ("x4", "x1")),
    ("friedman1", ("x3", "x7")),
    ("interaction", ("x1", "x2")),
    ("goldstein", ("x2", "x3")), ("goldstein", ("x1", "x3")), ("goldstein", ("x1", "x2")),
    ("additive_uniform", ("x2", "x1")),
]


# --------------------------------------------------------------------------- true PD vs quadrature


@pytest.mark.parametrize(("name", "feature"), ONE_D)
def test_true_pd_1d_matches_quadrature(name, feature):
    values = grid(name, feature)
    expected = [quadrature_pd(name, {feature: v}) for v in values]
    got = true_pd(name, feature, values)
    assert got.shape == values.shape
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(("name", "pair"), TWO_D)
def test_true_pd_2d_matches_quadrature(name, pair):
    a, b = pair
    va, vb = grid(name, a), grid(name, b)
    expected = [[quadrature_pd(name, {a: x, b: z}) for z in vb] for x in va]
    got = true_pd(name, pair, (va, vb))
    assert got.shape == (len(va), len(vb))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_simple_dgps_closed_forms():
    x = GRIDS["x1"]
    np.testing.assert_array_equal(true_pd("interaction", "x2", x), x)
    np.testing.assert_array_equal(true_pd("goldstein", "x2", x), np.zeros_like(x))
    np.testing.assert_allclose(true_pd("additive_uniform", "x1", x), x - 0.5)


def test_simple_closed_forms():
    v = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(true_pd("interaction", ("x1", "x2"), (v, v[:4])),
                               v[:, None] + v[None, :4] + v[:, None] * v[None, :4])
    np.testing.assert_allclose(true_pd("goldstein", "x1", v), 0.2 * v)
    np.testing.assert_array_equal(true_pd("goldstein", "x3", v), 0.0)
    np.testing.assert_allclose(true_pd("additive_uniform", ("x1", "x2"), (v, v)), v[:, None] - v[None, :])


# ------------------------------------------------------------------ Friedman #1 vs scipy.integrate.quad


def test_friedman1_closed_forms_vs_quad():
    def quad(fun, lo=0.0, hi=1.0):
        return integrate.quad(fun, lo, hi, epsabs=1e-13, epsrel=1e-13)[0]

    sin_mean = integrate.dblquad(lambda u, v: 10 * np.sin(np.pi * u * v), 0, 1, 0, 1,
                                 epsabs=1e-13, epsrel=1e-13)[0]
    quad3 = quad(lambda x: 20 * (x - 0.5) ** 2)
    lin4 = quad(lambda x: 10 * x)
    lin5 = quad(lambda x: 5 * x)
    assert true_pd("friedman1", "x9", [0.3])[0] == pytest.approx(sin_mean + quad3 + lin4 + lin5, abs=1e-11)
    for v in (0.0, 1e-9, 1e-4, 0.25, 0.5, 0.99, 1.0, 1.7, -0.4):
        sin_v = quad(lambda u, v=v: 10 * np.sin(np.pi * v * u))
        assert true_pd("friedman1", "x1", [v])[0] == pytest.approx(sin_v + quad3 + lin4 + lin5, abs=1e-11)
        assert true_pd("friedman1", "x2", [v])[0] == pytest.approx(sin_v + quad3 + lin4 + lin5, abs=1e-11)
        assert true_pd("friedman1", "x3", [v])[0] == pytest.approx(
            sin_mean + 20 * (v - 0.5) ** 2 + lin4 + lin5, abs=1e-11)
        assert true_pd("friedman1", "x4", [v])[0] == pytest.approx(
            sin_mean + quad3 + 10 * v + lin5, abs=1e-11)
    # near zero the x1 term is 5 pi v to first order: no cancellation error
    tiny = true_pd("friedman1", "x1", [1e-12])[0] - (quad3 + lin4 + lin5)
    assert tiny == pytest.approx(5 * np.pi * 1e-12, rel=1e-3)


# --------------------------------------------------------------------------- true PD vs Monte Carlo

MAKERS = {
    "electricity": lambda n, rng: ds.make_electricity_prices(n, rng=rng),
    "friedman1": lambda n, rng: ds.make_friedman1(n, n_features=7, rng=rng),
    "interaction": lambda n, rng: ds.make_interaction(n, rng=rng),
    "goldstein": lambda n, rng: ds.make_goldstein(n, rng=rng),
    "additive_uniform": lambda n, rng: ds.make_additive_uniform(n, rng=rng),
}
MC_N = 200_000


@pytest.fixture(scope="module")
def mc_samples():
    return {name: {c: col.to_numpy() for c, col in make(MC_N, 20240611 + i)[0].items()}
            for i, (name, make) in enumerate(MAKERS.items())}


def _mc_check(name, sample, fixed_points, truth):
    for fixed, expected in zip(fixed_points, truth, strict=True):
        values = np.broadcast_to(f(name, {**sample, **fixed}), MC_N)
        se = values.std() / math.sqrt(MC_N)
        assert abs(values.mean() - expected) <= 4.5 * se + 1e-9, (fixed, values.mean(), expected, se)


@pytest.mark.parametrize(("name", "feature"), ONE_D)
def test_true_pd_1d_matches_monte_carlo(mc_samples, name, feature):
    values = grid(name, feature)
    _mc_check(name, mc_samples[name], [{feature: v} for v in values], true_pd(name, feature, values))


@pytest.mark.parametrize(("name", "pair"), TWO_D)
def test_true_pd_2d_matches_monte_carlo(mc_samples, name, pair):
    a, b = pair
    va, vb = grid(name, a)[::2], grid(name, b)[::2]
    truth = true_pd(name, pair, (va, vb))
    points = [{a: x, b: z} for x in va for z in vb]
    _mc_check(name, mc_samples[name], points, truth.ravel())


def test_monte_carlo_check_can_fail(mc_samples):
    # the tolerance is tight enough to see the 5/7 Day constant of the electricity PD
    sample = mc_samples["electricity"]
    wrong = true_pd("electricity", "Hour", GRIDS["Hour"]) - 5 / 7
    with pytest.raises(AssertionError):
        _mc_check("electricity", sample, [{"Hour": v} for v in GRIDS["Hour"]], wrong)


# --------------------------------------------------------------------------- input validation


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: true_pd("nope", "x1", [0]), ValueError, "Unknown DGP"),
    (lambda: true_pd("interaction", "x3", [0]), ValueError, "Unknown feature"),
    (lambda: true_pd("friedman1", "x0", [0]), ValueError, "Unknown feature"),
    (lambda: true_pd("electricity", ("Hour", "Hour"), ([0], [0])), ValueError, "twice"),
    (lambda: true_pd("electricity", ("Hour", "Day", "Temperature"), ([0], [0])), ValueError, "pair"),
    (lambda: true_pd("electricity", ("Hour", "Day"), [0, 1]), ValueError, "pair"),
    (lambda: true_pd("electricity", "Hour", [[0, 1]]), ValueError, "1-D"),
    (lambda: true_pd("electricity", "Hour", 3.0), ValueError, "1-D"),
    (lambda: true_pd("electricity", "Hour", [np.nan]), ValueError, "finite"),
    (lambda: true_pd("electricity", "Hour", ["a"]), TypeError, "numeric"),
])
def test_bad_input_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()
