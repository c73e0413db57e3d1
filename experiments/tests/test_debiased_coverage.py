"""experiments.debiased_coverage: its DGPs' true PDs, its quick run, resumption, scheduler, pairing and summary."""

import numpy as np
import pytest
import xarray as xr


def test_coverage_study_quick_mode_runs_resumes_and_summarizes(tmp_path):
    from experiments import _common as C
    from experiments import debiased_coverage as study

    ctx = C.default_context(True, results_dir=tmp_path / "results", paper_dir=tmp_path / "paper")
    study.compute(ctx, R=2, settings=["K_cat_gbm_n1000"], chunk=1, figures=False)
    first = study.summarize_setting(ctx, "K_cat_gbm_n1000")
    study.compute(ctx, R=2, settings=["K_cat_gbm_n1000"], chunk=1, figures=False)  # nothing left to do
    assert study.summarize_setting(ctx, "K_cat_gbm_n1000") == first
    # a chunk another process is writing (C.save_dataset's temporary file) is not read
    (ctx.study_dir("debiased") / study.CHUNKS / "K_cat_gbm_n1000" / "chunk_00002.tmp.nc").write_bytes(b"half-written")
    assert study.summarize_setting(ctx, "K_cat_gbm_n1000") == first
    assert first["R"] == 2 and 0 <= first["pointwise"] <= 1 and first["pointwise_width"] > 0
    # the registry's steps: the figure's results, summary.json, then the table, the macros and the figure
    study.compute(ctx, R=1, settings=["B_rf_n500"], chunk=1)
    rows = study.summarize(ctx)
    assert [r["setting"] for r in rows] == ["B_rf_n500", "K_cat_gbm_n1000"]
    study.render(ctx)
    table = (tmp_path / "paper" / "tables" / "debiased_coverage.tex").read_text()
    assert "categorical (K)" in table and "Friedman 1 (B)" in table and r"\bottomrule" in table
    macros = (tmp_path / "paper" / "generated" / "debiased.tex").read_text()
    assert r"\newcommand{\DebiasedKPointwise}{" in macros and r"\newcommand{\DebiasedGPointwise}{--}" in macros
    assert (tmp_path / "paper" / "figures" / "debiased_bands.pdf").stat().st_size > 1000


def _assert_pd_is_the_monte_carlo_average(study, setting, mu, x1, x2, x3):
    """The study's PD of x1 and of x2 on its grid is within 5 Monte Carlo SE of the average of mu(a, X_C) over the
    independent draws (x1, x2, x3)."""
    for feature in (0, 1):
        grid = study.grid_of(setting, feature)
        draws = [mu(a, x2, x3) if feature == 0 else mu(x1, a, x3) for a in grid]
        mc = np.array([d.mean() for d in draws])
        mc_se = np.array([d.std() for d in draws]) / np.sqrt(len(x1))
        np.testing.assert_array_less(np.abs(study.dgp_pd(setting, feature, grid) - mc), 5 * mc_se + 1e-12)


def test_skewed_dgp_truth_is_the_monte_carlo_average_of_its_regression():
    """Own DGP 4's closed-form/quadrature PD against a plain Monte Carlo average of mu(a, X_C)."""
    from experiments import debiased_coverage as study

    setting = study.SETTINGS["H_skew_gbm_n1000"]
    gen = np.random.default_rng(7)
    m = 400_000
    z = gen.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=m)
    x1, x2, x3 = np.exp(0.6 * z[:, 0]), z[:, 1], gen.uniform(-1, 1, size=m)

    def mu(a1, a2, a3):
        return 2 * np.tanh(a1 - 1) + 1.5 * a1 * a2 + a2 + 0.5 * a3

    _assert_pd_is_the_monte_carlo_average(study, setting, mu, x1, x2, x3)
    # the grids are the 5..95 % quantiles of each marginal (log-normal x1, standard normal x2)
    X, _ = study.simulate(setting, 200_000, np.random.SeedSequence(3))
    for feature in (0, 1):
        np.testing.assert_allclose(np.quantile(X[:, feature], [0.05, 0.5, 0.95]),
                                   study.grid_of(setting, feature)[[0, 7, 14]], atol=0.03)


def test_exponential_dgp_truth_is_the_monte_carlo_average_of_its_regression():
    """Own DGP 5's closed-form PD against a plain Monte Carlo average of mu(a, X_C) over independent draws."""
    from experiments import debiased_coverage as study

    setting = study.SETTINGS["E_exp_rf_n1000"]
    gen = np.random.default_rng(11)
    m = 400_000
    x1 = gen.exponential(size=m)
    x2 = 0.6 * np.tanh(x1 - 1) + 0.8 * gen.standard_normal(m)
    x3 = gen.uniform(-1, 1, size=m)

    def mu(a1, a2, a3):
        return 2 * np.cos(1.5 * a1) + a1 * a2 + a2 + a3**2

    _assert_pd_is_the_monte_carlo_average(study, setting, mu, x1, x2, x3)
    X, y = study.simulate(setting, 200_000, np.random.SeedSequence(3))
    np.testing.assert_allclose(np.quantile(X[:, 0], [0.05, 0.5, 0.95]), study.grid_of(setting, 0)[[0, 7, 14]],
                               atol=0.03)
    # the noise sd grows with x1: residual spread of the rows with x1 < 0.5 vs x1 > 2
    resid = y - mu(X[:, 0], X[:, 1], X[:, 2])
    assert resid[X[:, 0] < 0.5].std() < 0.6 < 1.5 < resid[X[:, 0] > 2].std()


def test_halfnormal_dgp_truth_is_the_monte_carlo_average_of_its_regression():
    """Own DGP V's PD (Gauss-Hermite quadrature) against a plain Monte Carlo average of mu(a, X_C)."""
    from experiments import debiased_coverage as study

    setting = study.SETTINGS["V_halfnormal_gbm_n1000"]
    gen = np.random.default_rng(12)
    m = 400_000
    x1 = np.abs(gen.standard_normal(m))
    x2 = 0.8 * np.sin(2 * x1) + (0.5 + 0.5 * x1) * gen.standard_normal(m)
    x3 = gen.uniform(-1, 1, size=m)

    def mu(a1, a2, a3):
        return 2 * np.exp(-a1) + a1 * a2 + a2 + a3

    _assert_pd_is_the_monte_carlo_average(study, setting, mu, x1, x2, x3)
    X, y = study.simulate(setting, 200_000, np.random.SeedSequence(3))
    np.testing.assert_allclose(np.quantile(X[:, 0], [0.05, 0.5, 0.95]), study.grid_of(setting, 0)[[0, 7, 14]],
                               atol=0.03)
    resid = y - mu(X[:, 0], X[:, 1], X[:, 2])   # noise sd 0.5 + 0.5 x1
    assert resid[X[:, 0] < 0.2].std() < 0.6 < 1.0 < resid[X[:, 0] > 1.5].std()


def test_refit_bootstrap_runs_on_the_debiased_runs_own_data_sets(tmp_path, monkeypatch):
    from experiments import _common as C
    from experiments import debiased_coverage as study

    drawn = []
    simulate = study.simulate

    def recording(setting, n, seed):
        X, y = simulate(setting, n, seed)
        drawn.append((X, y))
        return X, y

    monkeypatch.setattr(study, "simulate", recording)
    ctx = C.default_context(True, results_dir=tmp_path / "results", paper_dir=tmp_path / "paper")
    name = "K_cat_gbm_n1000"
    study.compute(ctx, R=2, settings=[name], chunk=2, figures=False)
    study.compute_refit(ctx, R=1, settings=[name], chunk=1, B=20)
    assert len(drawn) == 3
    np.testing.assert_array_equal(drawn[0][0], drawn[2][0])     # repetition 0: the same rows for both methods
    np.testing.assert_array_equal(drawn[0][1], drawn[2][1])
    assert not np.array_equal(drawn[0][1], drawn[1][1])
    row = study.summarize_setting(ctx, name)
    same = row["refit_same_data"]
    assert same["R"] == 1 and same["B"] == 20 and row["R"] == 2
    # width ratio of repetition 0 by hand from the two caches (grid points with a debiased band only)
    folder = ctx.study_dir("debiased") / study.CHUNKS
    deb = C.load_dataset(next((folder / name).glob("chunk_*.nc"))).isel(rep=0)
    ref = C.load_dataset(next((folder / f"{name}__refit").glob("chunk_*.nc"))).isel(rep=0)
    ok = deb["overlap"].values.astype(bool)
    for key, var in (("percentile", "pd_band"), ("supt", "pd_band_simultaneous")):
        d = (deb[var].sel(ci_bound="upper") - deb[var].sel(ci_bound="lower")).values[ok].mean()
        r = (ref[var].sel(ci_bound="upper") - ref[var].sel(ci_bound="lower")).values[ok].mean()
        assert same[key]["ratio"] == pytest.approx(d / r, rel=1e-12)
    # the refit band's coverage of the DGP's PD: tau_a + 1{a = 2} inside [lower, upper] at each level
    truth = study.TAU + (np.arange(4) == 2)
    lo, hi = ref["pd_band"].sel(ci_bound="lower").values[0], ref["pd_band"].sel(ci_bound="upper").values[0]
    assert same["percentile"]["pointwise"] == pytest.approx(np.mean((lo <= truth) & (truth <= hi)))
    table = study._table([row])
    assert "B = 20" in table and r"\multicolumn{3}{c}{refit band" in table


def test_round_robin_takes_one_chunk_of_each_setting_in_turn_and_resumes(tmp_path):
    """Review D1: the debiased and the refit runs share one scheduler; it never recomputes a cached repetition."""
    from experiments import _common as C
    from experiments import debiased_coverage as study

    calls = []

    def run_chunk(name, todo, seeds):
        calls.append((name, list(todo)))
        assert len(seeds) == 5
        ds = xr.Dataset({"x": (("rep",), np.zeros(len(todo)))}, coords={"rep": todo})
        C.save_dataset(ds, tmp_path / name / f"chunk_{todo[0]:05d}.nc")

    folders = {"a": tmp_path / "a", "b": tmp_path / "b"}
    study._round_robin(folders, R=5, chunk=2, until=None, run_chunk=run_chunk)
    assert calls == [("a", [0, 1]), ("b", [0, 1]), ("a", [2, 3]), ("b", [2, 3]), ("a", [4]), ("b", [4])]
    calls.clear()
    (tmp_path / "b" / "chunk_00002.nc").unlink()   # a lost chunk is redone, nothing else
    study._round_robin(folders, R=5, chunk=2, until=None, run_chunk=run_chunk)
    assert calls == [("b", [2, 3])]


def test_paired_comparison_of_two_estimators_by_hand():
    from experiments import debiased_coverage as study

    def ds(pd_values, se, overlap, half):
        pd_values = np.asarray(pd_values, dtype=float)[:, None, :]
        band = np.stack([pd_values - half, pd_values + half], axis=1)
        return xr.Dataset({"pd": (("rep", "feature", "grid"), pd_values),
                           "pd_se": (("rep", "feature", "grid"), np.full(pd_values.shape, se)),
                           "overlap": (("rep", "feature", "grid"), np.asarray(overlap, dtype=np.int8)[:, None, :]),
                           "pd_band": (("rep", "ci_bound", "feature", "grid"), band),
                           "pd_band_simultaneous": (("rep", "ci_bound", "feature", "grid"), band)},
                          coords={"rep": [0, 1], "ci_bound": ["lower", "upper"]})

    truth = np.zeros((1, 3))
    prev = ds([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]], 0.5, [[1, 1, 1], [1, 1, 0]], 0.6)
    cur = ds([[0.5, 1.0, 0.0], [0.0, 0.5, 9.0]], 0.1, [[1, 1, 1], [1, 1, 1]], 0.6)
    out = study._paired(prev, cur, truth)
    # |differences| / 0.5 at the 5 points both leave unflagged: 1, 0, 4, 0, 1
    assert out["R"] == 2 and out["mean_abs_diff_se"] == pytest.approx(6 / 5) and out["max_abs_diff_se"] == 4
    # previous covers 0 at (0, 0), (1, 0..1) and the flagged (1, 2) counts as covered: 4 of 6; whole curve 1 of 2
    assert out["previous"]["pointwise"] == pytest.approx(4 / 6) and out["previous"]["simultaneous"] == 0.5
    assert out["current"]["pointwise"] == pytest.approx(4 / 6) and out["current"]["flagged"] == 0


def test_summary_falls_back_to_the_newest_earlier_estimator_with_enough_data_sets(tmp_path, monkeypatch):
    """Regression (round 6): with too few repetitions of the current estimator, the row shows the newest earlier
    estimator that has MIN_R of them (not merely the first with more than the current), paired with the newest one
    that ran some, and the table marks it."""
    from experiments import _common as C
    from experiments import debiased_coverage as study

    monkeypatch.setattr(study, "MIN_R", 3)
    ctx = C.default_context(True, results_dir=tmp_path / "results", paper_dir=tmp_path / "paper")
    setting = study.SETTINGS["K_cat_gbm_n1000"]

    def rep(value):
        pd_ = np.full((1, 4), float(value))
        return {"pd": pd_, "pd_se": np.ones((1, 4)), "pd_plugin": pd_, "effective_sample_size": np.full((1, 4), 50.0),
                "overlap": np.ones((1, 4), dtype=np.int8), "pd_band": np.stack([pd_ - 1, pd_ + 1]),
                "pd_band_simultaneous": np.stack([pd_ - 2, pd_ + 2]), "cpu": 1.0}

    for folder, n_reps in (("v4", 1), ("v3", 2), ("v2", 3)):
        path = ctx.study_dir("debiased") / folder / "K_cat_gbm_n1000" / "chunk_00000.nc"
        C.save_dataset(study._chunk(setting, [rep(i) for i in range(n_reps)], 0), path)
    row = study.summarize_setting(ctx, "K_cat_gbm_n1000")
    assert row["estimator"] == "round 4" and row["R"] == 3
    assert row["paired_current"]["against"] == "current" and row["paired_current"]["R"] == 1
    assert r"$^\ddagger$" in study._table([row])
