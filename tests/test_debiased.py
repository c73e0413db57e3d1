"""The debiased (cross-fitted, doubly robust) estimator of the DGP's partial dependence."""

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression

import pdpboot
from pdpboot import Grid
from pdpboot.engine import debiased as eng
from pdpboot.engine.resample import fold_labels

matplotlib.use("Agg")
#: Grid values without a band warn (tested where it is the subject); elsewhere the warning is noise.
pytestmark = pytest.mark.filterwarnings("ignore:No band for the data's PD:pdpboot.CoverageWarning")

COV = np.array([[1.0, 0.5, 0.3], [0.5, 1.0, 0.0], [0.3, 0.0, 1.0]])


def _linear_gaussian(n, seed):
    """y = 1 + 2 x0 - x1 + 0.5 x2 + e with correlated Gaussian features; PD of x0 is 1 + 2 a."""
    gen = np.random.default_rng(seed)
    X = gen.multivariate_normal(np.zeros(3), COV, size=n)
    y = 1 + 2 * X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + gen.standard_normal(n)
    return X, y


def _identical_but_created(a, b):
    a, b = a.copy(), b.copy()
    a.attrs.pop("created"), b.attrs.pop("created")
    xr.testing.assert_identical(a, b)


# --------------------------------------------------------------------------- engine


def test_rbc_weights_reproduce_quadratics_exactly():
    # The local-linear bias of a quadratic is exactly c(a) beta_2, and the local quadratic pilot recovers beta_2:
    # the bias-corrected smoother is exact for quadratics, at interior and boundary points alike.
    gen = np.random.default_rng(0)
    a = gen.uniform(0, 1, 400)
    grid = np.linspace(0.0, 1.0, 7)
    weights, _ = eng.rbc_weights(a, grid, 0.2)
    f = lambda t: 3 - 2 * t + 5 * t**2  # noqa: E731
    np.testing.assert_allclose(weights @ f(a), f(grid), rtol=0, atol=1e-10)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    ll = eng.local_polynomial_weights(a, grid, 0.2, 1)[0]
    assert np.abs(ll @ f(a) - f(grid)).max() > 1e-3  # the uncorrected local-linear fit is not


def test_rule_of_thumb_bandwidth_limits():
    gen = np.random.default_rng(1)
    a = gen.uniform(0, 1, 500)
    grid = np.linspace(0.05, 0.95, 10)
    flat, info = eng.rule_of_thumb_bandwidth(a, np.full(500, 2.0), grid)
    assert flat == pytest.approx(info["h_max"])  # no curvature: the widest bandwidth
    noisy, _ = eng.rule_of_thumb_bandwidth(a, 2.0 + a + gen.standard_normal(500), grid)
    curved, _ = eng.rule_of_thumb_bandwidth(a, np.sin(12 * a) + 0.01 * gen.standard_normal(500), grid)
    assert curved < noisy / 2  # curvature without noise: a narrower window than a line in noise
    tiny, info = eng.rule_of_thumb_bandwidth(a, 1e3 * a**4 + 1e-6 * gen.standard_normal(500), grid)
    assert tiny == pytest.approx(info["h_min"]) and info["h_rot"] < info["h_min"]
    counts = (np.abs(a[None, :] - grid[:, None]) < tiny).sum(axis=1)
    assert counts.min() >= eng.MIN_WINDOW


def test_feature_with_few_distinct_values_gets_a_window_with_enough_of_them():
    # An hour of the day (24 values) on a 20-point grid: a window of 30 rows alone could hold a single value and
    # leave the local fits' Gram matrices singular.
    gen = np.random.default_rng(2)
    hour = gen.integers(0, 24, 3000).astype(float)
    other = gen.standard_normal(3000)
    y = np.sin(hour / 24 * 2 * np.pi) + other + 0.3 * gen.standard_normal(3000)
    X = np.column_stack([hour, other])
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(20), rng=0)
    assert np.isfinite(res["x0"].ds["pd"].values).all()
    grid = res["x0"].ds["x0"].values
    h = res["x0"].ds.attrs["bandwidth"][0]
    inside = np.abs(np.unique(hour)[None, :] - grid[:, None]) < h
    assert inside.sum(axis=1).min() >= eng.MIN_DISTINCT
    with pytest.raises(ValueError, match="distinct values"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(20), rng=0,
                                            options=pdpboot.DebiasedOptions(bandwidth=0.5))


def test_aipw_levels_hand_computation():
    ice = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 4.0]])[:, None, :]   # mu_hat(level, C_j), 3 rows, 2 levels
    residual = np.array([[0.5], [-1.0], [2.0]])
    codes = np.array([0, 1, 1])
    inv = np.array([2.0, 4.0, 1.5])
    out = eng.aipw_levels(ice, residual, codes, inv)
    level0 = ((1 + 2 * 0.5) + 0 + 2) / 3
    level1 = (2 + (1 + 4 * -1.0) + (4 + 1.5 * 2.0)) / 3
    np.testing.assert_allclose(out["estimate"][0], [level0, level1])
    terms1 = np.array([2, -3.0, 7.0])
    np.testing.assert_allclose(out["se"][0, 1], np.sqrt(((terms1 - level1) ** 2).sum()) / 3)


def test_effective_sample_size_and_overlap():
    kernel = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    weights = np.array([1.0, 1.0, 1.0, 13.0])
    ess, mass, ok = eng.overlap(kernel, weights, min_effective_size=1.5, mass_range=(0.5, 2.0))
    np.testing.assert_allclose(ess, [16**2 / 172, 2.0])
    np.testing.assert_allclose(mass, [4.0, 1.0])
    np.testing.assert_array_equal(ok, [False, True])
    _, mass, ok = eng.overlap(kernel, weights / 3, min_effective_size=1.0, mass_range=(0.5, 2.0))
    np.testing.assert_array_equal(ok, [True, False])


def test_density_ratio_is_one_for_independent_features_and_tracks_dependence():
    gen = np.random.default_rng(2)
    n = 3000
    fit = lambda F, y: LogisticRegression(C=1.0, max_iter=2000).fit(F, y).predict_proba  # noqa: E731

    def fitter(F, y):
        predict = fit(F, y)
        return lambda G: predict(G)[:, 1]

    c = gen.standard_normal((n, 1))
    a = gen.standard_normal(n)
    w = eng.fit_density_ratio(fitter, a, c, a, c, rng=0)["weights"]
    assert np.abs(w - 1).mean() < 0.1
    a = 0.8 * c[:, 0] + 0.6 * gen.standard_normal(n)   # w = p(a) / p(a | c), known in closed form
    true = np.exp(-a**2 / 2) / np.exp(-(a - 0.8 * c[:, 0]) ** 2 / (2 * 0.36)) * 0.6
    w = eng.fit_density_ratio(fitter, a, c, a, c, rng=0, max_weight=1e6)["weights"]
    assert np.corrcoef(np.log(w), np.log(true))[0, 1] > 0.95


def test_normal_scores_by_hand():
    # levels 1, 2, 3 with counts 1, 2, 1 of n = 4: mid-rank ECDF 0.5/4, (1 + 1)/4, (3 + 0.5)/4
    from scipy.stats import norm

    scores, at = eng.normal_scores(np.array([3.0, 1.0, 2.0, 2.0]), at=np.array([0.0, 1.5, 2.5, 9.0]))
    np.testing.assert_allclose(scores, norm.ppf([0.875, 0.125, 0.5, 0.5]))
    np.testing.assert_allclose(at, norm.ppf([0.125, 0.3125, 0.6875, 0.875]))   # interpolated, clamped


def _gaussian_copula_ratio(n, seed):
    """Log-normal a = exp(0.6 z1) and c = z2 with corr(z1, z2) = 0.5: the true w = p(c) / p(c | a)."""
    gen = np.random.default_rng(seed)
    z = gen.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=n)
    a, c = np.exp(0.6 * z[:, 0]), z[:, 1]
    true = np.exp(-c**2 / 2) / np.exp(-(c - 0.5 * z[:, 0]) ** 2 / (2 * 0.75)) * np.sqrt(0.75)
    return a, c, true


def test_density_ratio_of_a_skewed_feature_is_right_at_its_sparse_boundary():
    """On the raw scale the polynomial basis misses the Gaussian copula's ratio where a log-normal feature is
    smallest; on the normal-score scale (the estimator's inputs) its log is quadratic."""
    fit = lambda F, y: LogisticRegression(C=1.0, max_iter=5000).fit(F, y).predict_proba  # noqa: E731

    def fitter(F, y):
        predict = fit((F - F.mean(0)) / F.std(0), y)
        mean, sd = F.mean(0), F.std(0)
        return lambda G: predict((G - mean) / sd)[:, 1]

    a, c, true = _gaussian_copula_ratio(4000, 3)
    low = a < np.quantile(a, 0.1)   # the sparse lower boundary of the skewed feature
    errors = {}
    from pdpboot.debiased import _ratio_inputs

    standardized = ((c - c.mean()) / c.std())[:, None]
    inputs = {"normal-scores": _ratio_inputs(a, a[:2], standardized),
              "standardized": ((a - a.mean()) / a.std(), None, standardized)}
    for scale, (a_in, _, c_in) in inputs.items():
        w = eng.fit_density_ratio(fitter, a_in, c_in, a_in, c_in, rng=0, max_weight=1e6)["weights"]
        errors[scale] = np.sqrt(np.mean(np.log(w[low] / true[low]) ** 2))
    assert errors["normal-scores"] < 0.15 < 0.2 < errors["standardized"], errors


def test_restricted_cubic_spline_by_hand_and_linear_beyond_the_outer_knots():
    knots = (0.0, 1.0, 2.0, 3.0)
    # column 1 at t = 2.5: [(2.5)^3 - (0.5)^3 (3 - 0) / (3 - 2) + 0] / (3 - 0)^2; column 2: [(1.5)^3 - (0.5)^3 * 2] / 9
    basis = eng.restricted_cubic_spline(np.array([2.5]), knots)
    np.testing.assert_allclose(basis[0], [2.5, (2.5**3 - 0.5**3 * 3) / 9, (1.5**3 - 0.5**3 * 2) / 9])
    t = np.array([3.5, 4.0, 4.5, -2.0, -1.0, 0.0])   # second differences vanish beyond the outer knots
    b = eng.restricted_cubic_spline(t, knots)
    np.testing.assert_allclose(b[0] - 2 * b[1] + b[2], 0.0, atol=1e-12)
    np.testing.assert_allclose(b[3] - 2 * b[4] + b[5], 0.0, atol=1e-12)
    assert np.abs(eng.restricted_cubic_spline(np.array([1.0, 1.5, 2.0]), knots)[:, 1] @ [1, -2, 1]) > 1e-3


def test_held_out_loss_and_weights_of_a_constant_classifier_by_hand():
    # A prior-only classifier: p1 = 1/3 with two permuted copies, so every weight is (2/3) / (1/3) / 2 = 1 and the
    # held-out log loss is that of the base rate, -(1/3) log(1/3) - (2/3) log(2/3).
    def fitter(F, y):
        model = DummyClassifier(strategy="prior").fit(F, y)
        return lambda G: model.predict_proba(G)[:, 1]

    gen = np.random.default_rng(0)
    a, c = gen.standard_normal(90), gen.standard_normal((90, 2))
    for design in (eng.ratio_design, eng.spline_ratio_design):
        out = eng.fit_density_ratio(fitter, a[:60], c[:60], a[60:], c[60:], design=design, rng=1, a_grid=a[:3])
        np.testing.assert_allclose(out["weights"], 1.0)
        np.testing.assert_allclose(out["counterfactual"], 1.0)
        assert out["holdout_loss"] == pytest.approx(-(np.log(1 / 3) + 2 * np.log(2 / 3)) / 3)


def _exponential_ratio(n, seed):
    """Own DGP E's pair (x1, x2): x1 ~ Exp(1), x2 = 0.6 tanh(x1 - 1) + 0.8 z; true w = p(x2) / p(x2 | x1)."""
    gen = np.random.default_rng(seed)
    a = gen.exponential(size=n)
    c = 0.6 * np.tanh(a - 1) + 0.8 * gen.standard_normal(n)
    nodes, weights = np.polynomial.laguerre.laggauss(80)     # p(x2) = E_x1 N(x2; 0.6 tanh(x1 - 1), 0.64)
    density = lambda x, m: np.exp(-(x - m) ** 2 / (2 * 0.64))  # noqa: E731
    marginal = (weights[None, :] * density(c[:, None], 0.6 * np.tanh(nodes[None, :] - 1))).sum(axis=1)
    return a, c, marginal / density(c, 0.6 * np.tanh(a - 1))


def test_spline_ratio_holds_a_conditional_mean_that_is_not_linear_in_the_score():
    """x2's mean given x1 ~ Exp(1) is a tanh of x1, not linear in x1's normal score, so the
    Gaussian-copula polynomial basis misses the ratio; the varying-coefficient spline basis holds it."""
    from pdpboot.debiased import _ratio_inputs

    def fitter(F, y):
        mean, sd = F.mean(0), F.std(0)
        model = LogisticRegression(C=1.0, max_iter=5000).fit((F - mean) / sd, y)
        return lambda G: model.predict_proba((G - mean) / sd)[:, 1]

    errors = {"polynomial": [], "spline": []}
    for seed in range(3):
        a, c, true = _exponential_ratio(2000, seed)
        a_in, _, c_in = _ratio_inputs(a, a[:2], ((c - c.mean()) / c.std())[:, None])
        for name, design in (("polynomial", eng.ratio_design), ("spline", eng.spline_ratio_design)):
            w = eng.fit_density_ratio(fitter, a_in, c_in, a_in, c_in, design=design, rng=0, max_weight=1e6)["weights"]
            errors[name].append(np.sqrt(np.mean(np.log(w / true) ** 2)))
    assert np.mean(errors["spline"]) < 0.11 < 0.12 < np.mean(errors["polynomial"]), errors


# --------------------------------------------------------------------------- public layer


def test_linear_gaussian_estimate_equals_analytic_pd_within_se():
    X, y = _linear_gaussian(2000, 0)
    grid = np.linspace(-1.2, 1.2, 9)  # at 1.5 sd the weight model's ESS is about 9 (E[w^2 | a] = 12.7): flagged
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(custom_values={0: grid}), rng=1)
    ds = res["x0"].ds
    est, se = ds["pd"].values[0], ds["pd_se"].values[0]
    assert np.all(np.abs(est - (1 + 2 * grid)) < 3 * se)
    assert np.all(se < 0.15) and np.all(se > 0.01)
    band = ds["pd_band"].values[:, 0]
    assert np.all((band[0] <= 1 + 2 * grid) & (1 + 2 * grid <= band[1]))
    sim = ds["pd_band_simultaneous"]
    assert sim.attrs["simultaneous"] == 1 and sim.attrs["target"] == "dgp"
    assert np.all(sim.values[1] - sim.values[0] > band[1] - band[0])
    assert res.attrs["target"] == "dgp" and res.attrs["uncertainty"] == "debiased-crossfit"
    assert ds["overlap"].values.all()


def test_categorical_aipw_equals_hand_computation():
    gen = np.random.default_rng(3)
    n, K = 300, 3
    c = gen.standard_normal(n)
    a = np.where(gen.uniform(size=n) < 1 / (1 + np.exp(-c)), "b", "a")
    y = (a == "b") * 2.0 + c + gen.standard_normal(n)
    X = pd.DataFrame({"level": a, "c": c})
    X_num = pd.DataFrame({"b": (a == "b").astype(float), "c": c})

    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    model = make_pipeline(make_column_transformer((OneHotEncoder(drop="first"), ["level"]), remainder="passthrough"),
                          LinearRegression())
    options = pdpboot.DebiasedOptions(n_folds=K, weight_estimator=DummyClassifier(strategy="prior"))
    res = pdpboot.debiased_partial_dependence(model, X, y, ["level"], options=options, rng=5)
    # By hand: the same folds (drawn from the root seed's first child), OLS on each complement, the propensity is
    # the training fold's level frequency (a prior-only classifier), AIPW mean per level.
    folds = fold_labels(n, K, np.random.default_rng(5).spawn(1)[0])
    terms = np.zeros((n, 2))
    for k in range(K):
        tr, te = folds != k, folds == k
        ols = LinearRegression().fit(X_num[tr], y[tr])
        freq_b = (a[tr] == "b").mean()
        mu = ols.predict(X_num[te])
        for j, (level, p) in enumerate((("a", 1 - freq_b), ("b", freq_b))):
            counter = X_num[te].assign(b=float(level == "b"))
            terms[te, j] = ols.predict(counter) + (a[te] == level) / p * (y[te] - mu)
    ds = res["level"].ds
    np.testing.assert_allclose(ds["pd"].values[0], terms.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(ds["pd_se"].values[0], terms.std(axis=0) / np.sqrt(n), rtol=1e-10)
    assert list(ds["level"].values) == ["a", "b"]


def test_same_rng_same_result_and_other_rng_differs():
    X, y = _linear_gaussian(300, 4)
    kw = dict(grid=Grid(6), rng=7)
    one = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0, 2], **kw)
    two = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0, 2], **kw)
    _identical_but_created(one, two)
    other = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0, 2], grid=Grid(6), rng=8)
    assert not np.array_equal(one["x0"].ds["pd"].values, other["x0"].ds["pd"].values)


def test_grid_equals_the_bootstraps_grid():
    X, y = _linear_gaussian(200, 5)
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [1], grid=Grid(7), rng=0)
    boot = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [1], grid=Grid(7), n_resamples=2,
                                                rng=0, execution=pdpboot.Execution(progress=False))
    np.testing.assert_array_equal(res["x1"].ds["x1"].values, boot["x1"].ds["x1"].values)


def test_poor_overlap_is_flagged_and_gets_no_band():
    # x0 is nearly determined by x1: at the grid's ends most rows' x1 rules the value out.
    gen = np.random.default_rng(6)
    n = 1500
    x1 = gen.standard_normal(n)
    x0 = x1 + 0.1 * gen.standard_normal(n)
    X = np.column_stack([x0, x1])
    y = x0 + x1 + gen.standard_normal(n)
    with pytest.warns(pdpboot.CoverageWarning, match="'x0' at every grid value .9/9 grid values.") as caught:
        res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(9), rng=0)
    ds = res["x0"].ds  # no band anywhere: the estimate is still returned, so the warning is the signal
    flagged = ds["overlap"].values[0] == 0
    assert flagged.all() and len(caught) == 1 and ds.attrs["no_band"] == str(caught[0].message)
    assert np.isnan(ds["pd_band"].values[:, 0, flagged]).all()
    assert np.isnan(ds["pd_band_simultaneous"].values[:, 0, flagged]).all()
    assert np.isfinite(ds["pd"].values).all()
    assert (ds["weight_mass"].values[0, flagged] < 0.5).all()
    ax = pdpboot.plot_pd(res, "x0")  # the plot says where the band is withheld
    marks = [line for line in ax.lines if line.get_label() == "thin overlap: no band"]
    assert len(marks) == 1 and len(marks[0].get_xdata()) == flagged.sum()
    assert "thin overlap: no band" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_weak_overlap_is_judged_from_the_weight_model_not_from_the_rows_drawn():
    # Correlated Gaussians, n = 2000: at 1.6 sd, E[w^2 | a] is about 17, so the ~100 rows in the window carry the
    # information of a handful although the sample ESS of the drawn weights looks fine: those points are flagged
    # and get no band; the centre keeps its band.
    X, y = _linear_gaussian(2000, 11)
    grid = np.linspace(-1.6, 1.6, 9)
    with pytest.warns(pdpboot.CoverageWarning) as caught:
        res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(custom_values={0: grid}),
                                                  rng=2)
    ds = res["x0"].ds
    ess, ok = ds["effective_sample_size"].values[0], ds["overlap"].values[0].astype(bool)
    assert not ok[0] and not ok[-1] and ok[2:-2].all()
    message = str(caught[0].message)  # the grid values without a band, why, and what to use instead
    assert message.startswith("No band for the data's PD of 'x0' at -1.6") and "1.6 (" in message
    assert f"({(~ok).sum()}/9 grid values): few rows there given the other columns" in message
    assert len(message) < 300 and "ALE" in message and ds.attrs["no_band"] == message
    assert ess[0] < 20 and ess[4] > 100
    h = eng.diagnostic_bandwidth(X[:, 0], ds.attrs["bandwidth"][0])
    assert (np.abs(X[:, 0] - grid[-1]) < h).sum() > 100  # plenty of rows near the end: overlap, not count, is short
    assert np.isnan(ds["pd_band"].values[:, 0, ~ok]).all() and np.isfinite(ds["pd_band"].values[:, 0, ok]).all()


def test_model_effective_size_and_small_sample_factor_by_hand():
    kernel = np.array([[1.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5]])
    np.testing.assert_allclose(eng.model_effective_size(kernel, np.array([2.0, 0.5])), [2 / 2, 4 / 1])
    # t_19 / z at 95 %: 2.093024 / 1.959964
    np.testing.assert_allclose(eng.small_sample_factor(np.array([20.0, 1e9]), 0.95), [2.093024 / 1.959964, 1.0],
                               rtol=1e-5)


def test_binary_classifier_gives_every_class():
    gen = np.random.default_rng(7)
    X = gen.standard_normal((400, 2))
    y = (gen.uniform(size=400) < 1 / (1 + np.exp(-(X[:, 0] - X[:, 1])))).astype(int)
    res = pdpboot.debiased_partial_dependence(LogisticRegression(), X, y, [0], grid=Grid(5), rng=0)
    pd_ = res["x0"].ds["pd"]
    assert list(pd_["output"].values) == [0, 1]
    np.testing.assert_allclose(pd_.sum("output").values, 1.0, atol=1e-12)
    assert res.attrs["task"] == "classification"


def test_plot_and_save_load_round_trip(tmp_path):
    X, y = _linear_gaussian(300, 8)
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(8), rng=0)
    ax = pdpboot.plot_pd(res, "x0")
    ax.figure.savefig(tmp_path / "debiased.png")
    assert len(ax.collections) >= 2  # pointwise and simultaneous bands
    path = tmp_path / "debiased.nc"
    pdpboot.save(res, path)
    xr.testing.assert_identical(pdpboot.load(path), res)


def test_refuses_pairs_and_decision_function():
    X, y = _linear_gaussian(100, 9)
    with pytest.raises(ValueError, match="1-D"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [(0, 1)])
    with_nan = X.copy()
    with_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        pdpboot.debiased_partial_dependence(LinearRegression(), with_nan, y, [0])
    with pytest.raises(ValueError, match="decision_function"):
        pdpboot.debiased_partial_dependence(LogisticRegression(), X, (y > 1).astype(int), [0],
                                            response_method="decision_function")


def test_options_object_reaches_the_estimator():
    X, y = _linear_gaussian(200, 10)
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(5), rng=0,
                                              options=pdpboot.DebiasedOptions(n_folds=3, n_multipliers=500))
    assert res.attrs["n_folds"] == 3
    with pytest.raises(ValueError, match="n_folds"):
        pdpboot.DebiasedOptions(n_folds=1)
    with pytest.raises(TypeError, match="DebiasedOptions"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], options={"n_folds": 3})


@pytest.mark.slow
def test_influence_se_matches_sampling_sd():
    grid = np.linspace(-1.5, 1.5, 5)
    est, se = [], []
    for r in range(60):
        X, y = _linear_gaussian(500, 100 + r)
        ds = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(custom_values={0: grid}),
                                                 rng=r)["x0"].ds
        est.append(ds["pd"].values[0])
        se.append(ds["pd_se"].values[0])
    ratio = np.mean(se, axis=0) / np.std(est, axis=0, ddof=1)
    # SD of an SD from 60 draws is ~9 %: allow 0.75..1.33
    assert np.all((ratio > 0.75) & (ratio < 1.33)), ratio


def test_ratio_model_and_clipping_are_recorded():
    X, y = _linear_gaussian(600, 7)   # 480 training rows for 41 spline columns: the spline basis
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0], grid=Grid(5), rng=3)
    attrs = res["x0"].ds.attrs
    assert attrs["ratio_model"] == "spline" and set(json.loads(attrs["ratio_holdout_loss"])) == {"spline"}
    assert attrs["clipped_share"] == attrs["n_clipped_weights"] / 600


def test_spline_ratio_falls_back_to_the_polynomial_with_too_few_rows_per_column():
    """With nine other columns the spline basis has 195 columns: at n = 500 (400 training rows per fold) the
    default uses the polynomial basis, and says so."""
    from pdpboot.datasets import make_friedman1

    assert eng.spline_columns(9) == 195 == eng.spline_ratio_design(np.zeros(3), np.zeros((3, 9))).shape[1]
    X, y = make_friedman1(500, rng=0)
    grid = {"x1": np.linspace(0.2, 0.8, 4)}
    used = {}
    for rows_per_column in (10.0, 0.0):
        res = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, ["x1"], grid=Grid(custom_values=grid),
                                                  rng=1,
                                                  options=pdpboot.DebiasedOptions(min_rows_per_column=rows_per_column))
        used[rows_per_column] = res["x1"].ds.attrs["ratio_model"]
    assert used == {10.0: "polynomial", 0.0: "spline"}
    X2, y2 = _linear_gaussian(600, 3)   # two other columns: 41 spline columns, 480 training rows: the spline basis
    res = pdpboot.debiased_partial_dependence(LinearRegression(), X2, y2, [0], grid=Grid(4), rng=1)
    assert res["x0"].ds.attrs["ratio_model"] == "spline"
    with pytest.raises(ValueError, match="min_rows_per_column must be a number >= 0"):
        pdpboot.DebiasedOptions(min_rows_per_column=-1)


# --------------------------------------------------------------------------- cross-fitting on the one loop


def test_forest_tree_engine_equals_brute_force():
    from sklearn.ensemble import RandomForestRegressor

    X, y = _linear_gaussian(300, 2)
    kw = dict(grid=Grid(5), rng=0, options=pdpboot.DebiasedOptions(n_folds=3, n_multipliers=200))
    forest = RandomForestRegressor(n_estimators=10, min_samples_leaf=5)
    tree = pdpboot.debiased_partial_dependence(forest, X, y, [0, 1], execution=pdpboot.Execution(method="tree"), **kw)
    brute = pdpboot.debiased_partial_dependence(forest, X, y, [0, 1], execution=pdpboot.Execution(method="brute"),
                                                **kw)
    for node in ("x0", "x1"):
        for var in ("pd", "pd_se", "pd_plugin", "pd_band", "effective_sample_size", "weight_mass"):
            np.testing.assert_allclose(tree[node].ds[var].values, brute[node].ds[var].values, rtol=0, atol=1e-12)


def test_results_are_bit_identical_for_any_n_jobs():
    from sklearn.ensemble import RandomForestRegressor

    X, y = _linear_gaussian(240, 3)
    kw = dict(grid=Grid(4), rng=1, options=pdpboot.DebiasedOptions(n_folds=3, n_multipliers=200))
    forest = RandomForestRegressor(n_estimators=8)   # random_state drawn from rng, per fold
    one = pdpboot.debiased_partial_dependence(forest, X, y, [0], execution=pdpboot.Execution(n_jobs=1), **kw)
    two = pdpboot.debiased_partial_dependence(forest, X, y, [0], execution=pdpboot.Execution(n_jobs=2), **kw)
    _identical_but_created(one, two)


def test_checkpoint_resume_equals_the_uninterrupted_run(tmp_path):
    X, y = _linear_gaussian(240, 5)
    kw = dict(grid=Grid(4), options=pdpboot.DebiasedOptions(n_folds=4, n_multipliers=200))

    def stop_after_two(done, total):   # called as the third fold arrives, before it is saved
        if done == 3:
            raise KeyboardInterrupt

    path = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0, 1], rng=4, **kw,
                                            execution=pdpboot.Execution(checkpoint=path, progress=stop_after_two))
    assert len(list(path.glob("resample_*.npz"))) == 2
    seen = []
    resumed = pdpboot.debiased_partial_dependence(  # rng=None: the checkpoint's seed
        LinearRegression(), X, y, [0, 1], **kw,
        execution=pdpboot.Execution(checkpoint=path, progress=lambda done, total: seen.append(done)))
    assert seen == [3, 4]   # only the two folds left were fitted
    whole = pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0, 1], rng=4, **kw)
    _identical_but_created(resumed, whole)


def test_skipping_a_failed_fold_is_refused():
    X, y = _linear_gaussian(100, 1)
    with pytest.raises(ValueError, match="on_error='skip' would drop a cross-fitting fold"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, y, [0],
                                            execution=pdpboot.Execution(on_error="skip"))


def test_multiplier_sup_t_is_the_order_statistic_rule():
    # one row per multiplier draw's influence: z_b = g_b1 - g_b2 over n se; rank ceil((B + 1) 0.9) = 91 of B = 100
    influence = np.array([[[1.0]], [[-1.0]]])
    se = np.array([[np.sqrt(2) / 2]])
    crit = eng.supt_critical_value(influence, se, 0.9, n_multipliers=100, rng=0)
    draws = np.random.default_rng(0).standard_normal((100, 2))
    t = np.sort(np.abs(draws[:, 0] - draws[:, 1]) / np.sqrt(2))
    assert crit[0] == pytest.approx(max(t[90], 1.6448536269514722))


@pytest.mark.filterwarnings("ignore:Feature 'a' is constant:UserWarning")
def test_a_constant_feature_is_refused_before_any_fit():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"]).assign(a=1.0)
    with pytest.raises(ValueError, match="'a' takes one value in X"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, X["b"], ["a"], rng=0,
                                            execution=pdpboot.Execution(progress=False))


def test_a_feature_its_weight_model_cannot_fit_gets_one_line_not_a_lapack_error():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"]).assign(a=0.0)
    X.loc[:1, "a"] = 1.0  # two rows of 120 differ: the weight model's system is singular
    with pytest.raises(ValueError, match="'a' depends on the other columns could not be fitted"):
        pdpboot.debiased_partial_dependence(LinearRegression(), X, X["b"], ["a"], rng=0,
                                            execution=pdpboot.Execution(progress=False))
