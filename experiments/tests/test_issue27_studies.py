"""Issue 27 studies: classifier_default extends classifier_se's data sets, background_molnar's two backgrounds and
Molnar band, bounded_shared's shared-row H2."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LinearRegression

from experiments import _common as C
from experiments import background_molnar as BM
from experiments import bounded_shared as SB
from experiments import classifier_default as CD
from experiments import classifier_se as S
from experiments import pointwise_diagnosis as PD
from pdpboot.engine.hstats import interaction_statistics


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # two data sets: spreads over 1 degree of freedom
def test_classifier_default_adds_draws_to_classifier_se_data_sets(tmp_path):
    ctx = C.default_context(True, tmp_path / "r", tmp_path / "p", 1)
    S.compute(ctx, ["skewcorr:hgb_clf"], schemes=["sub632"])  # 2 data sets, 8 draws each
    CD.compute(ctx, [("skewcorr:hgb_clf", 2, ("sub632",))])  # the same data sets (checked), 4 draws more
    reps, est, draws = CD.draws_of(ctx, "skewcorr:hgb_clf", "sub632")
    old = S.load_combo(ctx, "skewcorr:hgb_clf")[0]
    first = np.concatenate([c["sub632"].values for c in old])
    assert reps.tolist() == [0, 1] and draws.shape[1] == CD.B_TARGET["quick"] == 12
    np.testing.assert_array_equal(draws[:, :8], first)  # classifier_se's draws first, then new ones
    assert not np.allclose(draws[:, 8:].mean(axis=1), draws[:, :4].mean(axis=1))
    recs = CD.records(ctx)
    assert {r["scheme"] for r in recs} == {"sub632", "sub632_logit"} and all(r["B"] == 12 for r in recs)


def test_regression_versions_of_the_dgps():
    rng = np.random.default_rng(0)
    X, y = CD.make_data("rare:hgb_reg", 4000, rng)
    assert np.mean(y == 0) > 0.7 and y.max() > 1  # rare, heavy-tailed outcome
    X, y = CD.make_data("step:hgb_clf", 50, rng)
    assert set(np.unique(y)) <= {0, 1}


def test_background_molnar_pds_and_band(tmp_path):
    X = np.random.default_rng(1).normal(size=(30, 4))
    model = LinearRegression().fit(X, X @ [1.0, 2.0, -1.0, 0.5])
    grid = np.array([-1.0, 0.0, 2.0])
    ice = BM._pd_rows(model, X, [0, 2], grid)  # (n, F, G): a linear model's ICE, by hand
    by_hand = model.intercept_ + X @ model.coef_
    for i, f in enumerate([0, 2]):
        np.testing.assert_allclose(ice[:, i], (by_hand - X[:, f] * model.coef_[f])[:, None]
                                   + np.outer(np.ones(30), grid) * model.coef_[f])
    curves = np.random.default_rng(2).normal(size=(15, 1, 3))
    lo, hi = BM._molnar_band(curves, 15, 0.7, 500)
    se = np.sqrt(curves.var(axis=0, ddof=1) * (1 / 15 + 150 / 350))
    np.testing.assert_allclose(hi - lo, 2 * 2.1447866879169273 * se)  # t_{14, 0.975}


def test_shared_h2_weights_are_duplicated_rows():
    """A resample's H2 on the rows of S it drew, weighted by their counts, is H2 on those rows duplicated."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    model = LinearRegression().fit(np.column_stack([X, X[:, 0] * X[:, 1]]), X[:, 0] * X[:, 1])

    class Product:
        def predict(self, Z):
            return model.predict(np.column_stack([Z, Z[:, 0] * Z[:, 1]]))

    keep = np.array([1, 4, 7, 9, 20])
    counts = np.array([1, 2, 1, 3, 1])
    weighted = SB._h2(Product(), X, keep, counts)
    dup = np.repeat(keep, counts)

    def predict(Z):
        return Product().predict(Z).reshape(-1, 1)

    out = interaction_statistics(predict, X[dup], pairs=[(0, 1)], n_max=dup.size, rng=None)
    assert weighted == pytest.approx(float(out[(0, 1)]["h2"][0]), rel=1e-10)


def test_order_statistic_quantile_is_rank_b_plus_1_q():
    draws = np.arange(1.0, 100.0)[:, None]  # B = 99 draws 1..99: rank (B + 1) q = 100 q, by hand
    np.testing.assert_allclose(CD.order_statistic_quantile(draws, [0.025, 0.975])[:, 0], [2.5, 97.5])
    np.testing.assert_allclose(CD.order_statistic_quantile(draws, 0.001)[0], 1.0)  # clipped to the smallest draw
    # the "old" column: NumPy's default, rank (B - 1) q + 1 = 3.45 and 96.55
    np.testing.assert_allclose(CD.order_statistic_quantile(draws, [0.025, 0.975], "linear")[:, 0], [3.45, 96.55])
    # the study's rule is the package's (pdpboot.engine.intervals.quantile) on random draws
    from pdpboot.engine.intervals import quantile

    rnd = np.random.default_rng(3).normal(size=(100, 4))
    for q in (0.025, 0.975, 0.95):
        np.testing.assert_allclose(CD.order_statistic_quantile(rnd, q), quantile(rnd, q), atol=1e-14)


def test_pointwise_b1_maps_the_logit_band_back():
    est = np.full((2, 3), 0.5)
    x = np.linspace(-2.0, 2.0, 199)  # B = 199: ranks (B + 1) q = 5 and 195 are order statistics, no interpolation
    draws = expit(x)[:, None, None] * np.ones((1, 2, 3))
    lo, hi = expit(x[4]), expit(x[194])
    truth = np.array([[lo - 1e-9, lo + 1e-9, hi - 1e-9], [hi + 1e-9, 0.5, 0.5]])
    assert CD.pointwise_b1(est, draws, truth, "plain", 400) == 4 / 6
    assert CD.pointwise_b1(est, draws, truth, "logit", 400) == 4 / 6
    # sub632: deviations from the estimate scaled by sqrt(m / (n - m)) on the logit scale
    s = S._sub632_scale(400)
    truth = np.array([[expit(s * x[4]) - 1e-9, expit(s * x[4]) + 1e-9, expit(s * x[194]) - 1e-9],
                      [expit(s * x[194]) + 1e-9, 0.5, 0.5]])
    assert CD.pointwise_b1(est, draws, truth, "sub632_logit", 400) == 4 / 6


def test_finite_b_coverage_matches_the_rank_argument():
    """Exact bootstrap, B = 100: the truth's rank among B + 1 exchangeable values is uniform, so a band between
    ranks h_lo and h_hi (1-based) covers (h_hi - h_lo) / (B + 1): interpolated 94.05 / 101, order statistic
    95.95 / 101."""
    fb = PD.finite_b_coverage(100, 20_000, np.random.default_rng(5))
    assert abs(fb["percentile_interpolated"] - 94.05 / 101) < 4 * fb["mcse"]
    assert abs(fb["percentile_order_statistic"] - 95.95 / 101) < 4 * fb["mcse"]


def test_diagnose_oracle_band_and_offset():
    rng = np.random.default_rng(6)
    fits = 0.5 + 0.05 * rng.normal(size=(2000, 1, 2))  # truth 0.5, SD 0.05
    est = 0.5 + 0.05 * rng.normal(size=(400, 1, 2))
    draws = est[:, None] + 0.05 * rng.normal(size=(400, 100, 1, 2)) + 0.01  # offset 0.2 SD
    out = PD.diagnose(est, draws, fits)
    assert abs(out["oracle_normal"] - 0.95) < 0.025 and abs(out["offset_sd_max"] - 0.2) < 0.05
    assert abs(out["se_ratio_median"] - 1.0) < 0.05 and out["R"] == 400 and out["B"] == 100


def test_whole_curve_misses_counts_the_side():
    rng = np.random.default_rng(7)
    fits = 0.3 + 0.01 * rng.normal(size=(500, 1, 4))
    est = np.full((3, 1, 4), 0.3)
    est[1, 0, 2] = 0.5  # data set 1: the estimate far above the truth at grid point 2 -> truth below the band
    est[2, 0, 0] = 0.1  # data set 2: far below at grid point 0 -> truth above the band
    draws = est[:, None] + 0.01 * rng.normal(size=(3, 100, 1, 4))  # resamples spread about their estimate
    for scheme in ("plain", "sub632_logit"):
        out = PD.whole_curve_misses(est, draws, fits, scheme, 400)
        assert out["below"] == [[0, 0, 1, 0]] and out["above"] == [[1, 0, 0, 0]]
        assert out["whole"] == 1 / 3 and out["R"] == 3


def test_parse_cell_reads_first_rep_and_schemes():
    assert CD.parse_cell("rare:hgb_clf=24-60@plain,sub632") == ("rare:hgb_clf", 60, ("plain", "sub632"), 24)
    assert CD.parse_cell("rare:logreg=201") == ("rare:logreg", 201, ("plain", "sub632"))
    assert CD.parse_cell("step:rf_clf=21") == ("step:rf_clf", 21, ("sub632",))
    for bad in ("rare:hgb_clf=5-60", "rare:gbm=6", "rare:hgb_clf=6@half"):
        with pytest.raises(SystemExit, match="--cells"):
            CD.parse_cell(bad)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_centring_table_reads_the_default_band_as_records_does(tmp_path):
    """The 'auto' column of centring_table is the default's coverage of records() on the same draws; the band
    centred on the estimate always contains it, the default may not."""
    ctx = C.default_context(True, tmp_path / "r", tmp_path / "p", 1)
    S.compute(ctx, ["skewcorr:hgb_clf"], schemes=["sub632"])
    CD.compute(ctx, [("skewcorr:hgb_clf", 2, ("sub632",))])
    rows, text = CD.centring_table(ctx)
    row = next(r for r in rows if r["cell"] == "skewcorr:hgb_clf")
    rec = next(r for r in CD.records(ctx) if r["cell"] == "skewcorr:hgb_clf" and r["scheme"] == "sub632_logit")
    assert row["auto"]["pointwise"] == pytest.approx(rec["pointwise"])
    assert row["auto"]["whole"] == pytest.approx(rec["whole"])
    assert 0.0 <= row["excluded_share"] <= 1.0 and "centred on the estimate" in text
    # by hand: fits all above the estimate put the default band above it; the centred band straddles it
    le, s = np.zeros((1, 3)), 1.3
    ld = 2.0 + np.random.default_rng(0).normal(scale=0.1, size=(99, 1, 3))
    mean = ld.mean(axis=0)
    auto, centred = CD.CENTRING["auto"](le, ld, mean, s), CD.CENTRING["centred on the estimate"](le, ld, mean, s)
    assert np.all(np.quantile(auto, 0.025, axis=0) > 0) and np.all(np.quantile(centred, 0.025, axis=0) < 0)


def test_multiclass_dgp_and_pd_by_hand():
    from sklearn.inspection import partial_dependence
    from sklearn.linear_model import LogisticRegression

    from experiments import multiclass_default as MC

    X, y = MC.make_data(60_000, np.random.default_rng(0))
    np.testing.assert_allclose(np.bincount(y) / len(y), MC.class_probabilities(X).mean(axis=0), atol=0.01)
    X, y = MC.make_data(300, np.random.default_rng(1))
    model = LogisticRegression(max_iter=1000).fit(X, y)
    grid = S.grid_of("skewcorr")
    ours = MC.pd_of_fit(model, X, grid)
    for f, j in enumerate(S.FEATURES):
        ref = partial_dependence(model, X, [j], custom_values={j: grid[f]}, method="brute")["average"]
        np.testing.assert_allclose(ours[:, f], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_multiclass_quick_run_uses_the_package_default(tmp_path):
    from experiments import multiclass_default as MC

    ctx = C.default_context(True, tmp_path / "r", tmp_path / "p", 1)
    MC.compute(ctx, {"logreg": 2})
    (rec,) = MC.records(ctx)
    assert rec["scheme"] == "subsample/logit" and rec["R"] == 2 and len(rec["whole_by_class"]) == 3
    assert 0.0 <= rec["pointwise"] <= 1.0 and 0.0 <= rec["whole"] <= 1.0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_h2_classifier_quick_run_under_both_schemes(tmp_path):
    """The H2 study runs the package end to end under resampling='auto' (a classifier: the subsample) and
    'bootstrap' on the same data sets; its target is the mean of h_statistic_of_model over independent fits."""
    import pdpboot
    from experiments import h2_classifier as H2

    ctx = C.default_context(True, tmp_path / "r", tmp_path / "p", 1)
    H2.compute(ctx)
    recs = {r["scheme"]: r for r in H2.records(ctx)}
    assert recs["auto"]["resampling"] == "subsample" and recs["bootstrap"]["resampling"] == "bootstrap"
    assert all(r["R"] == 2 and 0.0 <= r["coverage"] <= 1.0 for r in recs.values())
    X, y = S.make_data("skewcorr", 150, np.random.default_rng(0))
    model = S.make_learner("hgb_clf", True).fit(X, y)
    direct = pdpboot.h_statistic_of_model(model, X, [H2.PAIR], n_max=H2.N_MAX, rng=np.random.default_rng(1))
    assert H2._h2_of_fit(model, X, np.random.default_rng(1)) == float(direct["x0__x2"].ds["h2"].values[-1])
