"""NumPy layer of the bands: quantiles, BC/BCa (against SciPy and hand formulas), simultaneous bands."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr, ndtri

from pdpboot.engine.intervals import (
    band_arrays,
    bias_correction,
    calibrated_level,
    clip_to_support,
    envelope_level,
    inside_share,
    jackknife_acceleration,
    jackknife_after_bootstrap_acceleration,
    pointwise_interval,
    quantile,
    standard_error,
    sup_t_critical_value,
)
from pdpboot.engine.resample import AbsentRows


def _absent(counts) -> AbsentRows:
    counts = np.asarray(counts)
    return AbsentRows(np.packbits(counts == 0, axis=1), counts.shape[1])


def test_quantile_equals_numpy_weibull_with_nan_and_per_point_probabilities():
    """The (B + 1) q rule is NumPy's method="weibull" (Hyndman & Fan type 6), NaN resamples dropped."""
    rng = np.random.default_rng(0)
    res = rng.normal(size=(37, 2, 5))
    res[3, 1, 2] = np.nan
    for q in (0.0, 0.01, 0.025, 0.5, 0.975, 0.99, 1.0):
        np.testing.assert_allclose(quantile(res, q), np.nanquantile(res, q, axis=0, method="weibull"),
                                   rtol=0, atol=1e-14)
    probs = rng.uniform(size=(2, 5))
    expected = np.array([[np.nanquantile(res[:, o, g], probs[o, g], method="weibull") for g in range(5)]
                         for o in range(2)])
    np.testing.assert_allclose(quantile(res, probs), expected, atol=1e-14)
    np.testing.assert_allclose(quantile(np.moveaxis(res, 0, 2), probs, axis=2), expected, atol=1e-14)


def test_quantile_is_the_order_statistic_of_rank_b_plus_1_q_by_hand():
    """Davison & Hinkley (1997, Sec. 5.2): rank (B + 1) q; between neighbours when not an integer; extremes."""
    res = np.arange(1.0, 100.0)  # B = 99, x_(k) = k
    assert float(quantile(res, 0.025)) == pytest.approx(2.5)  # rank 100 * 0.025 = 2.5 (NumPy's default: 3.45)
    assert float(quantile(res, 0.975)) == pytest.approx(97.5)
    assert float(quantile(res, 0.05)) == pytest.approx(5.0)  # an integer rank: the order statistic itself
    x = np.array([[0.0], [10.0], [20.0], [40.0]])  # B = 4, x_(1..4) = 0, 10, 20, 40
    assert float(quantile(x, 0.5)[0]) == 15.0  # rank 2.5
    assert float(quantile(x, 0.7)[0]) == pytest.approx(30.0)  # rank 3.5: 20 + 0.5 * (40 - 20)
    assert float(quantile(x, 0.1)[0]) == 0.0  # rank 0.5 < 1: the smallest
    assert float(quantile(x, 0.95)[0]) == 40.0  # rank 4.75 > B: the largest
    assert np.isnan(quantile(np.full((3, 1), np.nan), 0.5)[0])


def test_percentile_band_covers_its_level_for_an_exact_bootstrap_distribution():
    """est ~ N(0, 1), B = 100 draws N(est, 1): the truth's rank among the draws is uniform, so the 95 % band
    covers 0.95 (NumPy's default quantile: 0.931)."""
    rng = np.random.default_rng(11)
    n_sets, B = 40000, 100
    est = rng.normal(size=n_sets)
    draws = est[None, :] + rng.normal(size=(B, n_sets))
    lo, hi = pointwise_interval(est, draws, level=0.95)
    cover = float(np.mean((lo <= 0) & (0 <= hi)))
    mcse = np.sqrt(0.95 * 0.05 / n_sets)  # 0.0011
    assert abs(cover - 0.95) < 3 * mcse
    old = np.quantile(draws, [0.025, 0.975], axis=0)
    assert float(np.mean((old[0] <= 0) & (0 <= old[1]))) < 0.95 - 10 * mcse  # the rule it replaces


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_bca_equals_scipy_with_exact_jackknife_acceleration(level):
    rng = np.random.default_rng(1)
    x = rng.lognormal(size=40)  # skewed: z0 and a both matter
    out = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=999, confidence_level=level,
                          rng=np.random.default_rng(2))
    dist = out.bootstrap_distribution
    loo = (x.sum() - x) / (x.size - 1)  # leave-one-out means: SciPy's jackknife values
    a = jackknife_acceleration(loo)
    # the same acceleration written out (Efron 1987, eq. 6.6)
    d = loo.mean() - loo
    assert float(a) == pytest.approx(np.sum(d**3) / (6 * np.sum(d**2) ** 1.5), rel=1e-12)
    lo, hi = pointwise_interval(x.mean(), dist, level=level, method="bca", acceleration=a)
    # SciPy's BCa probabilities (its z0: share below, ties half) by hand; SciPy reads them with NumPy's
    # default quantile, the package with the (B + 1) q rule (method="weibull")
    z0 = ndtri((np.sum(dist < x.mean()) + 0.5 * np.sum(dist == x.mean())) / dist.size)
    z = ndtri([(1 - level) / 2, (1 + level) / 2])
    p = ndtr(z0 + (z0 + z) / (1 - float(a) * (z0 + z)))
    np.testing.assert_allclose([out.confidence_interval.low, out.confidence_interval.high],
                               np.quantile(dist, p), rtol=1e-12)
    np.testing.assert_allclose([lo, hi], np.quantile(dist, p, method="weibull"), rtol=1e-12)


def test_bc_is_bca_with_zero_acceleration_and_hand_formula():
    rng = np.random.default_rng(3)
    res = rng.gamma(2.0, size=(500, 3))
    est = np.array([1.5, 2.0, 2.5])
    lo, hi = pointwise_interval(est, res, level=0.9, method="bc")
    lo0, hi0 = pointwise_interval(est, res, level=0.9, method="bca", acceleration=np.zeros(3))
    np.testing.assert_array_equal(lo, lo0)
    for g in range(3):
        share = (np.sum(res[:, g] < est[g]) + 0.5 * np.sum(res[:, g] == est[g])) / 500
        z0 = ndtri(share)
        p = ndtr(2 * z0 + ndtri([0.05, 0.95]))
        np.testing.assert_allclose([lo[g], hi[g]], np.quantile(res[:, g], p, method="weibull"), rtol=1e-12)


def test_bias_correction_zero_for_median_estimate_and_finite_when_outside():
    res = np.arange(1.0, 11.0)
    assert float(bias_correction(5.5, res)) == 0.0
    assert np.isfinite(bias_correction(-1.0, res)) and float(bias_correction(-1.0, res)) == pytest.approx(ndtri(0.05))


def test_jackknife_after_bootstrap_by_hand():
    rng = np.random.default_rng(4)
    n, b = 12, 60
    counts = rng.multinomial(n, np.full(n, 1 / n), size=b)
    res = rng.normal(size=(b, 2)) ** 3
    a = jackknife_after_bootstrap_acceleration(res, _absent(counts))
    for p in range(2):
        theta = []
        for i in range(n):
            left_out = [res[k, p] for k in range(b) if counts[k, i] == 0]
            if left_out:
                theta.append(sum(left_out) / len(left_out))
        theta = np.array(theta)
        d = theta.mean() - theta
        assert a[p] == pytest.approx(np.sum(d**3) / (6 * np.sum(d**2) ** 1.5), rel=1e-12)
    with pytest.raises(ValueError, match="absent rows are given for 5 resamples, not 60"):
        jackknife_after_bootstrap_acceleration(res, _absent(counts[:5]))


def test_jackknife_after_bootstrap_approaches_the_jackknife_for_the_mean():
    """For the sample mean, the JAB acceleration estimates the exact jackknife's (B large)."""
    rng = np.random.default_rng(5)
    x = rng.exponential(size=30)
    counts = rng.multinomial(30, np.full(30, 1 / 30), size=20000)
    res = counts @ x / 30
    exact = jackknife_acceleration((x.sum() - x) / 29)
    assert float(jackknife_after_bootstrap_acceleration(res, _absent(counts))) == pytest.approx(float(exact), rel=0.1)


def test_standard_error_and_support_clipping():
    res = np.array([[1.0, np.nan], [3.0, 2.0], [5.0, 4.0]])
    np.testing.assert_allclose(standard_error(res), [2.0, np.sqrt(2.0)])
    lo, hi = clip_to_support([-0.5, 0.2, 1.2], [-0.1, 0.5, 1.5], (0.0, 1.0))
    np.testing.assert_array_equal(lo, [0.0, 0.2, 1.0])
    np.testing.assert_array_equal(hi, [0.0, 0.5, 1.0])


def test_calibrated_level_per_output_by_brute_force():
    rng = np.random.default_rng(6)
    est = np.zeros((2, 8))
    res = rng.normal(size=(400, 2, 8)) * np.array([1.0, 1.0])[None, :, None]
    res[:, 1] += rng.normal(size=(400, 1)) * 3  # output 1: strongly correlated curve, needs a lower level
    levels = calibrated_level(est, res, level=0.9)
    grid = np.linspace(0.9, 1.0, 401)
    for o in range(2):
        bounds = np.quantile(res[:, o], np.concatenate([(1 - grid) / 2, (1 + grid) / 2]), axis=0,
                             method="weibull")
        lo, hi = bounds[: grid.size], bounds[grid.size:]
        shares = ((res[None, :, o] >= lo[:, None]) & (res[None, :, o] <= hi[:, None])).all(axis=2).mean(axis=1)
        first = grid[np.argmax(shares >= 0.9)]  # first grid level reaching the share
        assert first - 0.1 / 400 - 1e-9 <= levels[o] <= first + 1e-9
    assert levels[1] < levels[0]  # calibrated per output, not one shared (minimum) level
    lo, hi, *_, info = band_arrays(est, res, level=0.9, method="percentile", simultaneous=True,
                                   simultaneous_method="calibrated")
    np.testing.assert_allclose(info["calibrated_level"], levels)
    assert np.all(inside_share(res, lo, hi) >= 0.9)


def test_sup_t_by_hand_and_contains_percentile_band():
    rng = np.random.default_rng(7)
    est = rng.normal(size=(2, 6))
    res = est + rng.gamma(1.0, size=(300, 2, 6)) - 1.0
    crit = sup_t_critical_value(est, res, level=0.95)
    se = res.std(axis=0, ddof=1)
    for o in range(2):
        t_max = np.max(np.abs(res[:, o] - est[o]) / se[o], axis=1)
        # rank 0.95 * 301 = 285.95 of the 300 sorted maxima, rounded up: the 286th
        srt = np.sort(t_max)
        assert crit[o] == pytest.approx(max(srt[285], ndtri(0.975)), rel=1e-12)
    lo, hi, *_ = band_arrays(est, res, level=0.95, method="percentile", simultaneous=True,
                             simultaneous_method="sup-t")
    p_lo, p_hi, *_ = band_arrays(est, res, level=0.95, method="percentile", simultaneous=False)
    assert np.all(lo <= p_lo) and np.all(hi >= p_hi)
    np.testing.assert_allclose(np.minimum(est - crit[:, None] * se, p_lo), lo, rtol=1e-12)


def test_sup_t_critical_value_is_the_order_statistic_by_hand():
    """rank ceil(level (B + 1)) of the B valid maxima (Davison & Hinkley 1997, 2.4); NaN curves dropped; cap at B."""
    # one curve point, est = 0, res = +-1..+-19 (alternating signs): se = sd, t_b = |res_b| / se
    values = np.arange(1.0, 20.0) * np.where(np.arange(19) % 2, -1.0, 1.0)
    res = np.concatenate([values, [np.nan]])[:, None, None]  # B = 20 resamples, one of them failed
    se = np.std(values, ddof=1)
    # B_valid = 19: rank 0.8 * 20 = 16 -> the 16th smallest |res| is 16 (NumPy's quantile: 15.4)
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.8)
    assert crit[0] == pytest.approx(max(16.0 / se, ndtri(0.9)), rel=1e-12)
    assert 16.0 / se > ndtri(0.9) and np.quantile(np.abs(values), 0.8) == pytest.approx(15.4)
    # level 0.99: rank 0.99 * 20 = 19.8 > B_valid -> the largest, 19
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.99)
    assert crit[0] == pytest.approx(max(19.0 / se, ndtri(0.995)), rel=1e-12)
    # exact integer level (B + 1): 0.75 * 20 = 15 -> the 15th, not 16th (no rounding up past an integer)
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.75)
    assert crit[0] == pytest.approx(max(15.0 / se, ndtri(0.875)), rel=1e-12)
    # rank 0.78 * 20 = 15.6, rounded up: the 16th (the pointwise quantile would interpolate to 15.6)
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.78)
    assert crit[0] == pytest.approx(max(16.0 / se, ndtri(0.89)), rel=1e-12)
    # the floor: tiny maxima never give a band narrower than the pointwise normal one
    flat = np.full((5, 1, 3), 1.0)
    flat[::2] = -1.0
    assert sup_t_critical_value(np.zeros((1, 3)), flat, level=0.95)[0] == pytest.approx(ndtri(0.975))


def test_envelope_level():
    assert envelope_level(99) == pytest.approx(0.98)  # rank 100 * 0.01 = 1: the smallest resample
    assert float(quantile(np.arange(1.0, 100.0), (1 - envelope_level(99)) / 2)) == pytest.approx(1.0)
    assert envelope_level(1) == 0.0


def test_bca_needs_absent_rows_and_methods_checked():
    with pytest.raises(ValueError, match="absent="):
        band_arrays(np.zeros((1, 2)), np.zeros((5, 1, 2)), level=0.9, method="bca", simultaneous=False)
    with pytest.raises(ValueError, match="method="):
        pointwise_interval(0.0, np.zeros(5), level=0.9, method="studentized")
    with pytest.raises(ValueError, match="acceleration"):
        pointwise_interval(0.0, np.zeros(5), level=0.9, method="bca")


@pytest.mark.parametrize("n_rows", [1, 7, 8, 61, 200])
def test_jackknife_after_bootstrap_in_blocks_equals_the_whole_mask(monkeypatch, n_rows):
    """Unpacking the mask a few rows at a time gives the acceleration of the whole counts matrix, bit for bit
    (the formula on explicit counts: theta_(i) = mean of the resamples with counts[:, i] == 0)."""
    from pdpboot.engine import intervals

    rng = np.random.default_rng(n_rows)
    counts = rng.multinomial(n_rows, np.full(n_rows, 1 / n_rows), size=40)
    res = rng.normal(size=(40, 2, 3)) ** 3
    res[4, 1, 2] = np.nan
    flat = res.reshape(40, -1)
    valid = ~np.isnan(flat)
    out = (counts == 0).astype(float).T
    total, n_out = out @ np.where(valid, flat, 0.0), out @ valid.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(n_out > 0, total / n_out, np.nan)
    expected = jackknife_acceleration(theta, axis=0).reshape(2, 3)
    for block in (8 * 40, 3 * 8 * 40, intervals._MASK_BLOCK):  # 8 rows, 24 rows, all rows at a time
        monkeypatch.setattr(intervals, "_MASK_BLOCK", block)
        np.testing.assert_array_equal(jackknife_after_bootstrap_acceleration(res, _absent(counts)), expected)
