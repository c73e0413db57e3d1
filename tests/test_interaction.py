"""Interaction statistics: NumPy layer, xarray layer, bootstrap integration and the refit test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

import pdpboot
from pdpboot import Grid
from pdpboot.engine.hstats import (
    h2_overall,
    h2_pairwise,
    interaction_statistics,
    pd_variance_interaction,
    point_matrix,
    subsample_rows,
)
from pdpboot.engine.ice_stats import pd_flatness
from pdpboot.interaction import IMPORTANCE_COLUMNS

# ----------------------------------------------------------------------------- references


def _friedman1_reference() -> tuple[float, float]:
    """Population H2_12 and overall H2_1 of Friedman #1 on U(0,1) features, by quadrature.

    The interaction part of g = 10 sin(pi x1 x2) is g - g1(x1) - g2(x2) + gbar with
    g1(a) = int_0^1 g(a, b) db = 10 (1 - cos(pi a)) / (pi a); the other terms are additive.
    """
    def g(a, b):
        return 10 * np.sin(np.pi * a * b)

    def g1(a):
        return 10 * (1 - np.cos(np.pi * a)) / (np.pi * a) if a > 0 else 0.0

    opts = dict(epsabs=1e-12, epsrel=1e-12)
    gbar = integrate.quad(g1, 0, 1, **opts)[0]
    var_g = integrate.dblquad(lambda b, a: g(a, b) ** 2, 0, 1, 0, 1, **opts)[0] - gbar**2
    inter = integrate.dblquad(lambda b, a: (g(a, b) - g1(a) - g1(b) + gbar) ** 2, 0, 1, 0, 1, **opts)[0]
    # Var(20 (x3 - 1/2)^2) = 400 (1/80 - 1/144) = 20/9; Var(10 x4) = 100/12; Var(5 x5) = 25/12
    var_f = var_g + 20 / 9 + 100 / 12 + 25 / 12
    return inter / var_g, inter / var_f


def _literal_h2(f, X, j, k, w):
    """Eqs. 44/45 of Friedman & Popescu (2008) transcribed with explicit loops (slow, tiny inputs)."""
    X = np.asarray(X, dtype=float)
    m = X.shape[0]
    w = np.asarray(w, float) / np.sum(w)

    def pd(cols, point):
        Z = X.copy()
        Z[:, cols] = point
        return float(np.sum(w * f(Z)))

    def centre(v):
        return v - np.sum(w * v)

    pd_jk = centre(np.array([pd([j, k], X[p, [j, k]]) for p in range(m)]))
    pd_j = centre(np.array([pd([j], X[p, [j]]) for p in range(m)]))
    pd_k = centre(np.array([pd([k], X[p, [k]]) for p in range(m)]))
    others = [c for c in range(X.shape[1]) if c != j]
    pd_not_j = centre(np.array([pd(others, X[i, others]) for i in range(m)]))
    f_all = centre(f(X))
    h2_jk = np.sum(w * (pd_jk - pd_j - pd_k) ** 2) / np.sum(w * pd_jk**2)
    h2_j = np.sum(w * (f_all - pd_j - pd_not_j) ** 2) / np.sum(w * f_all**2)
    return h2_jk, h2_j


# ----------------------------------------------------------------------------- NumPy layer


def test_point_matrix_layout():
    X = np.arange(12.0).reshape(4, 3)

    def f(Z):
        Z = np.asarray(Z)
        return np.column_stack([Z[:, 0] * 100 + Z[:, 1] * 10 + Z[:, 2], -Z[:, 0]])

    m = point_matrix(f, X, [0, 2], n_outputs=2)
    assert m.shape == (4, 2, 4)
    for i in range(4):
        for p in range(4):
            row = X[i].copy()
            row[[0, 2]] = X[p, [0, 2]]
            np.testing.assert_array_equal(m[i, :, p], f(row[None])[0])


def test_h2_matches_literal_transcription_with_weights():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 4))
    w = rng.integers(1, 4, size=25).astype(float)

    def f(Z):
        Z = np.asarray(Z)
        return np.exp(0.3 * Z[:, 0]) * Z[:, 1] + np.sin(Z[:, 2]) * Z[:, 0] + Z[:, 3] ** 2

    def f2(Z):
        return f(Z)[:, None]

    expected_jk, expected_j = _literal_h2(f, X, 0, 1, w)
    m01, m0, m1 = (point_matrix(f2, X, s) for s in ([0, 1], [0], [1]))
    h2, h_un = h2_pairwise(m01, m0, m1, w)
    np.testing.assert_allclose(h2, [expected_jk], rtol=1e-10)
    np.testing.assert_allclose(h2_overall(m0, w), [expected_j], rtol=1e-10)
    assert 0 < expected_jk < 1 and 0 < expected_j < 1 and h_un[0] > 0


def test_weights_equal_repeated_rows():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(15, 3))
    counts = rng.integers(1, 4, size=15)

    def f(Z):
        Z = np.asarray(Z)
        return np.column_stack([Z[:, 0] * Z[:, 1] + Z[:, 2], np.cos(3 * Z[:, 0] * Z[:, 2])])

    weighted = interaction_statistics(f, X, singles=[0, 2], pairs=[(0, 2)], weights=counts, n_outputs=2)
    expanded = interaction_statistics(f, np.repeat(X, counts, axis=0), singles=[0, 2], pairs=[(0, 2)],
                                      n_outputs=2)
    for key, stats in weighted.items():
        for name, value in stats.items():
            assert value.shape == (2,)
            np.testing.assert_allclose(value, expanded[key][name], rtol=1e-10, atol=1e-12)


def test_interaction_dgp_h2_is_one_third():
    # y = x1 + x2 + x1 x2 with independent N(0, 1): H2_12 = Var(x1 x2) / (1 + 1 + 1) = 1/3
    rng = np.random.default_rng(2)
    X = rng.standard_normal(size=(1500, 2))

    def f(Z):
        Z = np.asarray(Z)
        return (Z[:, 0] + Z[:, 1] + Z[:, 0] * Z[:, 1])[:, None]

    out = interaction_statistics(f, X, singles=[0], pairs=[(0, 1)], n_max=1500)
    np.testing.assert_allclose(out[(0, 1)]["h2"], 1 / 3, atol=0.04)
    # with two features, F = PD_12 and PD_-1 = PD_2, so the overall and pairwise H2 coincide
    np.testing.assert_allclose(out[(0,)]["h2_overall"], out[(0, 1)]["h2"], rtol=1e-10)
    np.testing.assert_allclose(out[(0, 1)]["h_unnormalized"], 1.0, atol=0.08)  # SD(x1 x2) = 1


def test_additive_model_has_zero_h2():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))

    def f(Z):
        Z = np.asarray(Z)
        return (np.sin(Z[:, 0]) + Z[:, 1] ** 3 - 2 * Z[:, 2])[:, None]

    out = interaction_statistics(f, X, singles=[0, 1], pairs=[(0, 1), (1, 2)])
    for stats in out.values():
        for value in stats.values():
            np.testing.assert_allclose(value, 0.0, atol=1e-12)


def test_constant_function_gives_zero_not_nan():
    X = np.random.default_rng(4).normal(size=(30, 2))
    out = interaction_statistics(lambda Z: np.full((len(Z), 1), 3.0), X, singles=[0], pairs=[(0, 1)])
    assert out[(0,)]["h2_overall"][0] == 0.0 and out[(0, 1)]["h2"][0] == 0.0


def test_subsample_rows():
    rng = np.random.default_rng(6)
    pos, w = subsample_rows(10, 20, rng, np.arange(1.0, 11.0))
    np.testing.assert_array_equal(pos, np.arange(10))
    np.testing.assert_array_equal(w, np.arange(1.0, 11.0))
    pos1, w1 = subsample_rows(1000, 50, np.random.default_rng(7))
    pos2, _ = subsample_rows(1000, 50, np.random.default_rng(7))
    assert pos1.size == 50 and np.unique(pos1).size == 50 and np.all(np.diff(pos1) > 0)
    np.testing.assert_array_equal(pos1, pos2)
    np.testing.assert_array_equal(w1, 1.0)
    with pytest.raises(ValueError, match="n_max"):
        subsample_rows(10, 1, rng)
    with pytest.raises(ValueError, match="rng is required"):
        interaction_statistics(lambda Z: np.zeros((len(Z), 1)), np.zeros((10, 2)), singles=[0], n_max=5)


def test_pd_variance_interaction_hand_computed():
    # PD(a, b) on a in {0, 1}, b in {0, 1, 2}: [[0, 0, 0], [0, 1, 2]]
    # I(a | b) = SD over b of SD_a(PD) = SD(0, 1/sqrt2, sqrt2) = 1/sqrt2
    # I(b | a) = SD over a of SD_b(PD) = SD(0, 1) = 1/sqrt2
    surface = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]])
    np.testing.assert_allclose(pd_variance_interaction(surface), 1 / np.sqrt(2), rtol=1e-12)
    # categorical first feature: importance = range / 4 -> (0, 1/4, 1/2) with SD 1/4; mean with 1/sqrt2
    np.testing.assert_allclose(
        pd_variance_interaction(surface, categorical=(True, False)), (0.25 + 1 / np.sqrt(2)) / 2, rtol=1e-12
    )
    a, b = np.meshgrid(np.linspace(0, 1, 7), np.linspace(-1, 3, 5), indexing="ij")
    additive = np.stack([np.sin(a) + b**2, a - b])
    np.testing.assert_allclose(pd_variance_interaction(additive), [0.0, 0.0], atol=1e-12)


# ----------------------------------------------------------------------------- xarray layer and bootstrap

import xarray as xr  # noqa: E402
from sklearn.base import BaseEstimator, RegressorMixin  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures  # noqa: E402

from pdpboot.datasets import (  # noqa: E402
    make_additive_uniform,
    make_friedman1,
    make_goldstein,
    make_interaction,
    true_function,
)
from pdpboot.interaction import h_statistic, h_statistic_of_model, h_statistic_test  # noqa: E402


class _TrueFunction(RegressorMixin, BaseEstimator):
    """A simulated DGP's noise-free regression function posing as a fitted regressor."""

    def __init__(self, name="friedman1"):
        self.name = name

    def fit(self, X, y=None):
        return self

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return true_function(self.name, X)


def _interaction_ols():
    return make_pipeline(PolynomialFeatures(2, interaction_only=True, include_bias=False), LinearRegression())


def test_interaction_ols_h2_one_third_covered_by_band():
    X, y = make_interaction(500, rng=0)
    res = pdpboot.bootstrap_partial_dependence(
        _interaction_ols(), X, y, ["x1", ("x1", "x2")], n_resamples=100, grid=Grid(3), rng=1,
        execution=pdpboot.Execution(progress=False),
        statistics={"interactions": 150},
    )
    h = h_statistic(res)
    ds = h["x1__x2"].ds
    assert set(ds.data_vars) >= {"h2", "h2_resamples", "h2_band", "h_unnormalized_band",
                                 "pd_variance_interaction_band"}
    assert ds["h2_resamples"].dims == ("resample", "output") and ds["h2_band"].dims == ("ci_bound", "output")
    lower, upper = ds["h2_band"].sel(output="y").values
    assert lower < 1 / 3 < upper
    assert abs(float(ds["h2"][0]) - 1 / 3) < 0.06
    # two features: F = PD_12 and PD_-1 = PD_2, so H2_1 (overall) equals H2_12 on the same rows
    xr.testing.assert_allclose(h["x1"].ds["h2_overall"], ds["h2"].rename("h2_overall"))
    assert h["x1"].ds["h2_overall_band"].dims == ("ci_bound", "output")


def test_additive_model_h2_zero_in_every_resample():
    X, y = make_additive_uniform(200, rng=2)
    res = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["x1", ("x1", "x2")], n_resamples=10, grid=Grid(5), rng=3,
        execution=pdpboot.Execution(progress=False),
        statistics=["interactions"],
    )
    h = h_statistic(res)
    for var in ("h2", "h2_resamples", "h_unnormalized", "pd_variance_interaction_resamples"):
        np.testing.assert_allclose(h["x1__x2"].ds[var], 0.0, atol=1e-10)
    np.testing.assert_allclose(h["x1"].ds["h2_overall_resamples"], 0.0, atol=1e-10)


def test_h2_subsample_flows_from_the_run_seed():
    X, y = make_interaction(300, rng=4)
    kwargs = dict(n_resamples=3, statistics={"interactions": 50}, grid=Grid(4))
    a = pdpboot.bootstrap_partial_dependence(_interaction_ols(), X, y, [("x1", "x2")], rng=5, **kwargs)
    b = pdpboot.bootstrap_partial_dependence(_interaction_ols(), X, y, [("x1", "x2")], rng=5, **kwargs,
                                             execution=pdpboot.Execution(n_jobs=2))
    c = pdpboot.bootstrap_partial_dependence(_interaction_ols(), X, y, [("x1", "x2")], rng=6, **kwargs)
    xr.testing.assert_identical(a["x1__x2"].ds["h2_resamples"], b["x1__x2"].ds["h2_resamples"])
    assert not np.allclose(a["x1__x2"].ds["h2"], c["x1__x2"].ds["h2"])
    # the flag does not disturb the other random streams
    plain = pdpboot.bootstrap_partial_dependence(
        _interaction_ols(), X, y, [("x1", "x2")], rng=5, n_resamples=3, grid=Grid(4),
        execution=pdpboot.Execution(progress=False)
    )
    xr.testing.assert_identical(plain["x1__x2"].ds["pd_resamples"], a["x1__x2"].ds["pd_resamples"])


def test_goldstein_h2_23_near_one():
    X, y = make_goldstein(1000, rng=6)
    basis = FunctionTransformer(lambda Z: np.column_stack([Z[:, 0], Z[:, 1], Z[:, 1] * (Z[:, 2] >= 0)]))
    model = make_pipeline(basis, LinearRegression()).fit(X.to_numpy(), y.to_numpy())
    h = h_statistic_of_model(model, X.to_numpy(), [(1, 2), (0, 1)], n_max=400, rng=0)
    assert 0.9 < float(h["x1__x2"].ds["h2"][0]) < 1.1  # the DGP's x2, x3
    np.testing.assert_allclose(h["x0__x1"].ds["h2"], 0.0, atol=1e-10)


def test_friedman1_true_function_reference_values():
    ref_h2_12, ref_h2_1 = _friedman1_reference()
    assert abs(ref_h2_12 - 0.16) < 0.005 and abs(ref_h2_1 - 0.075) < 0.002  # the rounded values
    X, _ = make_friedman1(1500, rng=7)
    h = h_statistic_of_model(_TrueFunction(), X, ["x1", ("x1", "x2"), ("x3", "x4")], n_max=1500, rng=0,
                    grid=Grid(10))
    # sampling SD of the estimates at m = 1500 rows: about 0.008 (H2_12) and 0.003 (H2_1)
    np.testing.assert_allclose(h["x1__x2"].ds["h2"], ref_h2_12, atol=0.03)
    np.testing.assert_allclose(h["x1"].ds["h2_overall"], ref_h2_1, atol=0.012)
    np.testing.assert_allclose(h["x3__x4"].ds["h2"], 0.0, atol=1e-10)
    assert h.attrs["n_resamples"] == 0 and "h2_band" not in h["x1__x2"].ds


def test_h_statistic_of_model_root_attrs_are_written_by_the_header():
    """Its n_max and seed entropy join the root attrs through ResultHeader (the one writer), not after it."""
    from pdpboot.header import ResultHeader

    X = np.random.default_rng(0).normal(size=(50, 2))
    model = LinearRegression().fit(X, X[:, 0] - X[:, 1])
    h = h_statistic_of_model(model, X, [(0, 1)], n_max=30, rng=np.random.default_rng(4))
    header = ResultHeader.from_attrs(h.attrs)
    assert h.attrs["n_max"] == 30 and header.extra["n_max"] == 30
    assert h.attrs["rng_entropy"] == str(np.random.default_rng(4).bit_generator.seed_seq.entropy)
    assert list(h.attrs) == list(header.to_attrs())  # key for key and in order: what the header writes


def test_classifier_outputs_and_errors():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(150, 2))
    labels = np.where(X[:, 0] * X[:, 1] > 0.3, "a", np.where(X[:, 0] > 0, "b", "c"))
    clf = make_pipeline(PolynomialFeatures(2), LogisticRegression(max_iter=500)).fit(X, labels)
    h = h_statistic_of_model(clf, X, [(0, 1)], n_max=60, rng=0, grid=Grid(5))
    assert list(h["x0__x1"].ds["output"].values) == ["a", "b", "c"]
    assert (h["x0__x1"].ds["h2"] > 0).all()
    res = pdpboot.partial_dependence(clf, X, [0])
    with pytest.raises(ValueError, match="statistics=.interactions."):
        h_statistic(res)
    with pytest.raises(TypeError, match="h_statistic_of_model"):
        h_statistic(clf)
    with pytest.raises(TypeError):
        h_statistic(res, X)  # the result form takes no data
    with pytest.raises(ValueError, match="n_max"):
        h_statistic_of_model(clf, X, [(0, 1)], n_max=1)
    with pytest.raises(ValueError, match="not fitted"):
        h_statistic_of_model(LogisticRegression(), X, [(0, 1)])
    with pytest.raises(ValueError, match="interactions"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=2,
                                             statistics={"interactions": 1})


def test_save_load_round_trip(tmp_path):
    X, y = make_interaction(100, rng=9)
    res = pdpboot.bootstrap_partial_dependence(
        _interaction_ols(), X, y, ["x1", ("x1", "x2")], n_resamples=3, grid=Grid(4), rng=10,
        execution=pdpboot.Execution(progress=False),
        statistics={"interactions": 40, "heterogeneity": True},
    )
    pdpboot.save(res, tmp_path / "run.nc")
    back = pdpboot.load(tmp_path / "run.nc")
    xr.testing.assert_identical(h_statistic(back)["x1__x2"].ds, h_statistic(res)["x1__x2"].ds)


# ----------------------------------------------------------------------------- refit-based test


def _null(out, node: str = "x1__x2", statistic: str = "h2") -> np.ndarray:
    """The null distribution of an h_statistic_test result (one output)."""
    return out[node].ds[f"{statistic}_null"].values[:, 0]


def test_h_statistic_test_rejects_strong_interaction_and_is_reproducible():
    X, y = make_interaction(200, rng=11)
    first = h_statistic_test(_interaction_ols(), X, y, ("x1", "x2"), n_resamples=19, n_max=80, rng=12)
    again = h_statistic_test(_interaction_ols(), X, y, ("x1", "x2"), n_resamples=19, n_max=80, rng=12)
    assert first["x1__x2"].ds["h2_null"].dims == ("resample", "output") and _null(first).shape == (19,)
    np.testing.assert_array_equal(_null(first), _null(again))
    assert first.attrs["pvalue"] == pytest.approx(1 / 20)  # the smallest possible p-value with 19 refits
    assert first.attrs["statistic"] > 10 * _null(first).max()
    assert first.attrs["statistic"] == float(first["x1__x2"].ds["h2"][0])
    assert first.attrs["effect"] == "h" and first.attrs["null_model"] == "smooth"
    assert first.attrs["n_rows"] == 200  # the one header of every result


def test_null_surrogate_has_no_interaction():
    from pdpboot.engine.hstats import interaction_part

    X, y = make_interaction(300, rng=13)
    model = _interaction_ols().fit(X, y)
    f0 = model.predict(X) - interaction_part(lambda Z: model.predict(Z)[:, None], X, (0, 1))
    refit = _interaction_ols().fit(X, f0)
    # OLS with an interaction term fitted to f0: the x1*x2 coefficient vanishes, the main effects stay
    np.testing.assert_allclose(refit[-1].coef_[2], 0.0, atol=1e-8)
    np.testing.assert_allclose(refit[-1].coef_[:2], model[-1].coef_[:2], atol=0.15)


class _OffsetOLS(RegressorMixin, BaseEstimator):
    """Weighted OLS of y - offset on (1, x1, x2, x1 x2): a regressor with a per-row fit parameter."""

    def fit(self, X, y, sample_weight=None, offset=None):
        D = _design(np.asarray(X, dtype=float))
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        target = np.asarray(y, dtype=float) - (0.0 if offset is None else np.asarray(offset))
        self.coef_ = np.linalg.lstsq(D * np.sqrt(w)[:, None], target * np.sqrt(w), rcond=None)[0]
        return self

    def predict(self, X):
        return _design(np.asarray(X, dtype=float)) @ self.coef_


def _design(X):
    return np.column_stack([np.ones(len(X)), X[:, 0], X[:, 1], X[:, 0] * X[:, 1]])


def test_h_statistic_test_smooth_null_equals_hand_loop():
    """The default (smooth) null by hand: scikit-learn's Gaussian process on standardised features, its
    interaction part by explicit weighted PD sums, its residuals rescaled to its white-noise SD, then the refits."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    from pdpboot.engine.hstats import interaction_statistics

    rng = np.random.default_rng(40)
    n = 70
    X = rng.uniform(-1, 1, size=(n, 3))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 1] * X[:, 2] + rng.normal(scale=0.3, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    offset = rng.normal(scale=0.1, size=n)
    out = h_statistic_test(_OffsetOLS(), X[:, :2], y, (0, 1), n_resamples=4, n_max=40, sample_weight=w,
                           fit_params={"offset": offset}, rng=41)
    assert out.attrs["null_model"] == "smooth"
    X = X[:, :2]

    # the run's seeds: children fit, background, instances of the root, then one per null refit; the null
    # model's rows from the background child's first child, the H rows from the fit child's first child
    generator = np.random.default_rng(41)
    fit_seed, bg_seed, _ = generator.spawn(3)
    null_seeds = generator.spawn(4)
    bg_seed.spawn(1)[0].spawn(2)  # background rows and GP rows: all 70 rows here (n <= 500, n <= 1000)

    def h_seed():
        return np.random.default_rng(41).spawn(1)[0].spawn(1)[0]

    centre, spread = X.mean(axis=0), X.std(axis=0)
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(2), (1e-2, 1e3)) + WhiteKernel(0.1, (1e-6, 1e1))
    gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=0).fit((X - centre) / spread, y)
    g = lambda Z: gp.predict((Z - centre) / spread)  # noqa: E731
    sd = np.sqrt(gp.kernel_.k2.noise_level) * np.std(y)
    assert out.attrs["noise_sd"] == pytest.approx(sd, rel=1e-10)
    wn = w / w.sum()
    pd_jk, pd_j, pd_k = np.empty(n), np.empty(n), np.empty(n)
    for row in range(n):  # PD_S at row's x_S, averaged over all rows with weights w
        for target, cols in ((pd_jk, [0, 1]), (pd_j, [0]), (pd_k, [1])):
            Z = X.copy()
            Z[:, cols] = X[row, cols]
            target[row] = wn @ g(Z)
    parts = [v - wn @ v for v in (pd_jk, pd_j, pd_k)]
    mean = g(X) - (parts[0] - parts[1] - parts[2])
    resid = (y - g(X)) - wn @ (y - g(X))
    noise = resid * sd / np.sqrt(np.mean(resid**2))

    def wls(target):
        D = _design(X)
        sw = np.sqrt(w)
        return np.linalg.lstsq(D * sw[:, None], (target - offset) * sw, rcond=None)[0]

    def h2(coef):  # on the same 40 rows for the observed fit and every null refit
        stats = interaction_statistics(lambda Z: (_design(np.asarray(Z)) @ coef)[:, None], X, pairs=[(0, 1)],
                                       n_max=40, rng=h_seed(), weights=w)
        return float(stats[(0, 1)]["h2"][0])

    assert out.attrs["statistic"] == pytest.approx(h2(wls(y)), abs=1e-12)
    null = [h2(wls(mean + noise[seed.spawn(1)[0].integers(0, n, size=n)])) for seed in null_seeds]
    np.testing.assert_allclose(_null(out, "x0__x1"), null, rtol=0, atol=1e-10)
    assert out.attrs["pvalue"] == pytest.approx((1 + np.sum(np.array(null) >= out.attrs["statistic"])) / 5)
    with pytest.raises(ValueError, match="sample_weight"):
        h_statistic_test(_OffsetOLS(), X, y, (0, 1), sample_weight=w[:5])
    with pytest.raises(ValueError, match="sample_weight="):
        h_statistic_test(_OffsetOLS(), X, y, (0, 1), fit_params={"sample_weight": w})
    with pytest.raises(TypeError, match="fit_params"):
        h_statistic_test(_OffsetOLS(), X, y, (0, 1), fit_params=[1])


def test_h_statistic_test_needs_numeric_features():
    import pandas as pd

    rng = np.random.default_rng(42)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.choice(["u", "v"], size=60)})
    y = X["a"].to_numpy() + (X["b"] == "u") + rng.normal(scale=0.3, size=60)
    with pytest.raises(ValueError, match="needs numeric, finite features.*encode categorical columns"):
        h_statistic_test(LinearRegression(), X, y, ("a", "b"), n_resamples=3, n_max=30, rng=0)


def test_h_statistic_test_validation():
    X, y = make_interaction(50, rng=14)
    with pytest.raises(ValueError, match="already fitted"):
        h_statistic_test(_interaction_ols().fit(X, y), X, y, ("x1", "x2"))
    with pytest.raises(ValueError, match="regressors only"):
        h_statistic_test(LogisticRegression(), X, y > 0, ("x1", "x2"))
    with pytest.raises(ValueError, match="statistic"):
        h_statistic_test(_interaction_ols(), X, y, ("x1", "x2"), statistic="h")
    with pytest.raises(ValueError, match="two features"):
        h_statistic_test(_interaction_ols(), X, y, "x1")
    with pytest.raises(TypeError, match="calibration"):
        h_statistic_test(_interaction_ols(), X, y, ("x1", "x2"), calibration="scale")


# ----------------------------------------------------------------------------- slow studies (outside CI)


def _rejection_rate(make_model, make_data, pair, *, replications, n_resamples, n_rows, alpha=0.05):
    from threadpoolctl import threadpool_limits

    pvalues = []
    with threadpool_limits(1):
        for r in range(replications):
            X, y = make_data(n_rows, 1000 + r)
            result = h_statistic_test(make_model(), X, y, pair, n_resamples=n_resamples, n_max=150, rng=r)
            pvalues.append(result.attrs["pvalue"])
    return float(np.mean(np.asarray(pvalues) <= alpha))


def _not_above(rate: float, replications: int, target: float) -> bool:
    """True unless the rejection rate is significantly (one-sided 95 %) above the target."""
    from scipy.stats import binomtest

    k = round(rate * replications)
    return binomtest(k, replications, target, alternative="greater").pvalue > 0.05


@pytest.mark.slow
def test_h_statistic_test_false_positive_rate_ols():
    # additive DGP y = x1 - x2 + 0.5 e, fitted by OLS *with* an x1 x2 term (so noise creates spurious H2)
    rate = _rejection_rate(
        _interaction_ols, lambda n, s: make_additive_uniform(n, noise=0.5, rng=s), ("x1", "x2"),
        replications=400, n_resamples=99, n_rows=300,
    )
    print(f"false-positive rate (OLS, additive, alpha=0.05, R=400): {rate:.4f}")  # measured (plug-in null): 0.0375
    assert _not_above(rate, 400, 0.06)


@pytest.mark.slow
def test_h_statistic_test_false_positive_rate_boosting():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rate = _rejection_rate(
        lambda: HistGradientBoostingRegressor(max_iter=50, max_depth=3),
        lambda n, s: make_additive_uniform(n, noise=0.5, rng=s), ("x1", "x2"),
        replications=100, n_resamples=39, n_rows=300,
    )
    print(f"false-positive rate (boosting, additive, alpha=0.05, R=100): {rate:.4f}")  # measured (plug-in): 0.02
    assert _not_above(rate, 100, 0.06)


@pytest.mark.slow
def test_h_statistic_test_power():
    from sklearn.ensemble import HistGradientBoostingRegressor

    def weak(n, s):  # y = x1 + x2 + 0.2 x1 x2 + e
        X, y = make_interaction(n, rng=s)
        return X, y - 0.8 * X["x1"] * X["x2"]

    power_weak = _rejection_rate(_interaction_ols, weak, ("x1", "x2"), replications=100, n_resamples=99,
                                 n_rows=300)
    power_goldstein = _rejection_rate(
        lambda: HistGradientBoostingRegressor(max_iter=50, max_depth=3),
        lambda n, s: make_goldstein(n, rng=s), ("x2", "x3"), replications=30, n_resamples=39, n_rows=300,
    )
    print(f"power (OLS, x1 + x2 + 0.2 x1 x2, n=300): {power_weak:.3f}; "
          f"(boosting, Goldstein x2:x3, n=300): {power_goldstein:.3f}")
    assert power_weak >= 0.8 and power_goldstein >= 0.9  # measured (plug-in null): 0.94 and 1.0


class _FixedProduct(RegressorMixin, BaseEstimator):
    """``x0 + x0 * x1`` whatever it is fitted on: every refit is the same function."""

    def fit(self, X, y=None):
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        return X[:, 0] + X[:, 0] * X[:, 1]


def test_h2_estimate_and_resamples_are_the_same_statistic():
    """Issue 27 item 4: the estimate and every resample use the same H rows (not independent subsamples).

    With a fixed background every refit of a data-independent function must give exactly the
    estimate's H statistics; before, each resample drew its own ``n_max`` rows and they scattered
    around the estimate (whose own subsample was independent of theirs).
    """
    X = np.random.default_rng(0).uniform(-1, 1, size=(200, 2))
    res = pdpboot.bootstrap_partial_dependence(
        _FixedProduct(), X, X[:, 0], [0, (0, 1)], n_resamples=6, grid=Grid(3), rng=1,
        resampling=pdpboot.Resampling(background="original"),
        execution=pdpboot.Execution(progress=False), statistics={"interactions": 40})
    for node, stat in (("x0__x1", "h2"), ("x0__x1", "h_unnormalized"), ("x0", "h2_overall")):
        ds = res[node].ds
        assert float(ds[stat][0]) > 0.01
        np.testing.assert_allclose(ds[f"{stat}_resamples"].values[:, 0], float(ds[stat][0]), rtol=1e-12)
    # with resampled backgrounds, the estimate sits among its resamples (same rows, reweighted)
    res = pdpboot.bootstrap_partial_dependence(
        _FixedProduct(), X, X[:, 0], [(0, 1)], n_resamples=40, grid=Grid(3), rng=2,
        execution=pdpboot.Execution(progress=False), statistics={"interactions": 40})
    ds = res["x0__x1"].ds
    below = float((ds["h2_resamples"] < ds["h2"]).mean())
    assert 0.1 < below < 0.9


def test_h_statistic_keeps_resample_absent_for_bca():
    X, y = make_interaction(120, rng=3)
    res = pdpboot.bootstrap_partial_dependence(_interaction_ols(), X, y, [("x1", "x2")], n_resamples=20,
                                               grid=Grid(3), rng=4,
                                               execution=pdpboot.Execution(progress=False),
                                               statistics={"interactions": 40})
    h = h_statistic(res, confidence_level=None)
    xr.testing.assert_identical(h["resample_absent"], res["resample_absent"])
    band = pdpboot.confidence_bands(h, method="bca")["x1__x2"].ds["h2_band"]
    assert band.attrs["method"] == "bca" and "acceleration_max" in band.attrs
    assert float(band.sel(ci_bound="lower")[0]) >= 0.0  # h2 is bounded below: the header says so


class _CountingOLS(LinearRegression):
    """Least squares counting its fits; raises on targets whose :func:`_parity` is ``fail_parity``."""

    fits = 0

    def __init__(self, fail_parity=None):
        super().__init__()
        self.fail_parity = fail_parity

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        if _parity(y) == self.fail_parity:
            raise ValueError("sentinel: a target of the failing parity")
        return super().fit(np.column_stack([X, X[:, 0] * X[:, 1]]), y, sample_weight=sample_weight)

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        return super().predict(np.column_stack([X, X[:, 0] * X[:, 1]]))


def _parity(y) -> int:
    """A pseudo-random bit of a target vector (about half of the null targets have each value)."""
    return int(round(abs(float(np.sum(y))) * 1e6)) % 2


def test_h_statistic_test_runs_through_the_loop(tmp_path):
    """Checkpoints, on_error, progress and n_jobs of the H test come from the resampling loop."""
    X, y = make_interaction(80, rng=7)
    X = np.asarray(X)[:, :2]
    kw = dict(n_resamples=6, n_max=30, rng=3)
    plain = h_statistic_test(_CountingOLS(), X, y, (0, 1), **kw)
    calls = []
    _CountingOLS.fits = 0
    first = h_statistic_test(_CountingOLS(), X, y, (0, 1), **kw, execution=pdpboot.Execution(
        checkpoint=tmp_path / "ck", progress=lambda done, total: calls.append((done, total))))
    assert _CountingOLS.fits == 1 + 6 and calls[-1] == (6, 6)
    parallel = h_statistic_test(_CountingOLS(), X, y, (0, 1), **kw, execution=pdpboot.Execution(n_jobs=2))
    np.testing.assert_array_equal(_null(parallel, "x0__x1"), _null(plain, "x0__x1"))
    np.testing.assert_array_equal(_null(first, "x0__x1"), _null(plain, "x0__x1"))
    assert first.attrs["pvalue"] == plain.attrs["pvalue"]
    _CountingOLS.fits = 0
    again = h_statistic_test(_CountingOLS(), X, y, (0, 1), **kw, execution=pdpboot.Execution(
        checkpoint=tmp_path / "ck"))
    assert _CountingOLS.fits == 0  # the observed fit and the null refits were loaded, not recomputed
    np.testing.assert_array_equal(_null(again, "x0__x1"), _null(plain, "x0__x1"))
    # a failing null refit: skipped, left out of the p-value, with a warning
    bar = 1 - _parity(y)  # the observed fit succeeds
    with pytest.warns(RuntimeWarning, match="null refits failed"):
        skipped = h_statistic_test(_CountingOLS(fail_parity=bar), X, y, (0, 1), **kw,
                                   execution=pdpboot.Execution(on_error="skip", max_failure_share=0.95))
    null = _null(skipped, "x0__x1")
    failed = np.isnan(null)
    assert 0 < failed.sum() < 6 and skipped.attrs["n_failed_resamples"] == failed.sum()
    expected = (1 + np.sum(null[~failed] >= skipped.attrs["statistic"])) / (1 + (~failed).sum())
    assert skipped.attrs["pvalue"] == expected
    with pytest.raises(ValueError, match="sentinel"):
        h_statistic_test(_CountingOLS(fail_parity=bar), X, y, (0, 1), **kw)


def test_h_statistic_of_model_evaluates_the_model_once(monkeypatch):
    """One engine pass per feature-set kind: the PD surfaces were computed twice (once by partial_dependence,
    once more beside the H statistics); the PD-variance index still equals the one of partial_dependence's PD."""
    from pdpboot import _evaluate
    from pdpboot.interaction import pd_variance_statistic

    X, y = make_interaction(120, rng=3)
    model = _interaction_ols().fit(X, y)
    calls = []
    real = _evaluate.compute_pd_many
    monkeypatch.setattr(_evaluate, "compute_pd_many", lambda *a, **k: calls.append(1) or real(*a, **k))
    h = pdpboot.h_statistic_of_model(model, X, ["x1", ("x1", "x2")], n_max=50, rng=0,
                                     grid=Grid(5))
    assert len(calls) == 1
    monkeypatch.setattr(_evaluate, "compute_pd_many", real)
    surface = pdpboot.partial_dependence(model, X, [("x1", "x2")], grid=Grid(5))["x1__x2"].ds["pd"]
    index = pd_variance_statistic(surface, dims=("x1", "x2"))
    np.testing.assert_array_equal(h["x1__x2"].ds["pd_variance_interaction"].values, index.values)


def test_h_statistic_test_refuses_execution_fields_it_does_not_use():
    X, y = make_interaction(60, rng=1)
    with pytest.raises(ValueError, match=r"Execution\(method=...\) does not apply to h_statistic_test"):
        h_statistic_test(_interaction_ols(), X, y, ("x1", "x2"), n_resamples=9,
                         execution=pdpboot.Execution(method="brute"))


# ----------------------------------------------------------------------------- pd_importance


@pytest.fixture(scope="module")
def linear():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=100), "b": rng.normal(size=100), "c": rng.integers(0, 4, 100)})
    y = 2.0 * X["a"] - 0.5 * X["b"] + 4.0 * X["c"]  # no noise: the fitted slopes are these numbers
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", "b", "c"], n_resamples=30,
                                               grid=Grid(8, categorical_features=["c"]), rng=0,
                                               execution=pdpboot.Execution(progress=False))
    return X, res


def test_importance_equals_the_hand_computed_sd_and_range_over_4(linear):
    X, res = linear
    table = pdpboot.pd_importance(res)
    assert list(table.columns) == list(IMPORTANCE_COLUMNS)
    got = table.set_index("feature")
    grid_a, grid_b = res["a"]["a"].values, res["b"]["b"].values
    # PD of a linear model is slope * grid + const: its SD over the grid is |slope| * SD of the grid
    sd = lambda v: np.sqrt(np.sum((v - v.mean()) ** 2) / (len(v) - 1))  # noqa: E731
    assert got.loc["a", "importance"] == pytest.approx(2.0 * sd(grid_a), rel=1e-9)
    assert got.loc["b", "importance"] == pytest.approx(0.5 * sd(grid_b), rel=1e-9)
    levels = np.sort(X["c"].unique())
    assert got.loc["c", "importance"] == pytest.approx(4.0 * (levels[-1] - levels[0]) / 4, rel=1e-9)
    assert got.loc["c", "measure"] == "range/4" and got.loc["a", "measure"] == "sd"
    assert table["feature"].tolist() == ["c", "a", "b"] and table["rank"].tolist() == [1, 2, 3]


def test_interval_is_the_percentile_interval_of_the_resamples_importances(linear):
    _, res = linear
    table = pdpboot.pd_importance(res, ["a"], confidence_level=0.9).iloc[0]
    curves = res["a"]["pd_resamples"].isel(output=0).transpose("resample", "a").values
    per_resample = [np.std(c, ddof=1) for c in curves]
    lo, hi = np.quantile(per_resample, [0.05, 0.95])
    assert (table["lower"], table["upper"]) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    assert table["se"] == pytest.approx(np.std(per_resample, ddof=1), rel=1e-12)
    assert table["n_resamples"] == 30 and table["method"] == "percentile"


def test_a_feature_the_model_ignores_has_importance_zero_and_one_fit_has_no_interval():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "z": rng.normal(size=60)})
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X[["a"]].assign(z=0.0), X["a"])
    one = pdpboot.partial_dependence(model, X, ["a", "z"], grid=Grid(6))
    table = pdpboot.pd_importance(one).set_index("feature")
    assert table.loc["z", "importance"] == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(table.loc["a", "lower"]) and table.loc["a", "n_resamples"] == 0


def test_flatness_of_classifier_outputs_and_errors():
    curves = np.array([[0.1, 0.5, 0.9], [0.9, 0.5, 0.1]])
    np.testing.assert_allclose(pd_flatness(curves, categorical=False), [0.4, 0.4])
    np.testing.assert_allclose(pd_flatness(curves, categorical=True), [0.2, 0.2])
    with pytest.raises(TypeError, match="DataTree"):
        pdpboot.pd_importance(curves)


def test_plot_importance_draws_bars_and_intervals(linear):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, res = linear
    table = pdpboot.pd_importance(res)
    ax = pdpboot.plot_importance(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c (levels)", "a", "b"]
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, table["importance"])
    (lines,) = [c for c in ax.collections if "interval" in c.get_label()]
    np.testing.assert_allclose([s[:, 0] for s in lines.get_segments()], table[["lower", "upper"]].to_numpy())
    with pytest.raises(TypeError, match="pd_importance"):
        pdpboot.plot_importance(res)
    plt.close("all")
