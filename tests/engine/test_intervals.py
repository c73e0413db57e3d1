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


def test_quantile_equals_numpy_with_nan_and_per_point_probabilities():
    rng = np.random.default_rng(0)
    res = rng.normal(size=(37, 2, 5))
    res[3, 1, 2] = np.nan
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        np.testing.assert_array_equal(quantile(res, q), np.nanquantile(res, q, axis=0))
    probs = rng.uniform(size=(2, 5))
    expected = np.array([[np.nanquantile(res[:, o, g], probs[o, g]) for g in range(5)] for o in range(2)])
    np.testing.assert_allclose(quantile(res, probs), expected, atol=1e-14)
    np.testing.assert_allclose(quantile(np.moveaxis(res, 0, 2), probs, axis=2), expected, atol=1e-14)


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
    assert float(lo) == pytest.approx(out.confidence_interval.low, rel=1e-12)
    assert float(hi) == pytest.approx(out.confidence_interval.high, rel=1e-12)


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
        np.testing.assert_allclose([lo[g], hi[g]], np.quantile(res[:, g], p), rtol=1e-12)


def test_bias_correction_zero_for_median_estimate_and_finite_when_outside():
    res = np.arange(1.0, 11.0)
    assert float(bias_correction(5.5, res)) == 0.0
    assert np.isfinite(bias_correction(-1.0, res)) and float(bias_correction(-1.0, res)) == pytest.approx(ndtri(0.05))


def test_jackknife_after_bootstrap_by_hand():
    rng = np.random.default_rng(4)
    n, b = 12, 60
    counts = rng.multinomial(n, np.full(n, 1 / n), size=b)
    res = rng.normal(size=(b, 2)) ** 3
    a = jackknife_after_bootstrap_acceleration(res, counts)
    for p in range(2):
        theta = []
        for i in range(n):
            left_out = [res[k, p] for k in range(b) if counts[k, i] == 0]
            if left_out:
                theta.append(sum(left_out) / len(left_out))
        theta = np.array(theta)
        d = theta.mean() - theta
        assert a[p] == pytest.approx(np.sum(d**3) / (6 * np.sum(d**2) ** 1.5), rel=1e-12)
    with pytest.raises(ValueError, match="counts must have shape"):
        jackknife_after_bootstrap_acceleration(res, counts[:5])


def test_jackknife_after_bootstrap_approaches_the_jackknife_for_the_mean():
    """For the sample mean, the JAB acceleration estimates the exact jackknife's (B large)."""
    rng = np.random.default_rng(5)
    x = rng.exponential(size=30)
    counts = rng.multinomial(30, np.full(30, 1 / 30), size=20000)
    res = counts @ x / 30
    exact = jackknife_acceleration((x.sum() - x) / 29)
    assert float(jackknife_after_bootstrap_acceleration(res, counts)) == pytest.approx(float(exact), rel=0.1)


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
        bounds = np.quantile(res[:, o], np.concatenate([(1 - grid) / 2, (1 + grid) / 2]), axis=0)
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
        # order statistic k = ceil(0.95 * 301) = 286 of the 300 sorted maxima
        assert crit[o] == pytest.approx(max(np.sort(t_max)[286 - 1], ndtri(0.975)), rel=1e-12)
    lo, hi, *_ = band_arrays(est, res, level=0.95, method="percentile", simultaneous=True,
                             simultaneous_method="sup-t")
    p_lo, p_hi, *_ = band_arrays(est, res, level=0.95, method="percentile", simultaneous=False)
    assert np.all(lo <= p_lo) and np.all(hi >= p_hi)
    np.testing.assert_allclose(np.minimum(est - crit[:, None] * se, p_lo), lo, rtol=1e-12)


def test_sup_t_critical_value_is_the_order_statistic_by_hand():
    """k = ceil(level (B + 1)) of the B valid maxima (Davison & Hinkley 1997, 2.4); NaN curves dropped; cap at B."""
    # one curve point, est = 0, res = +-1..+-19 (alternating signs): se = sd, t_b = |res_b| / se
    values = np.arange(1.0, 20.0) * np.where(np.arange(19) % 2, -1.0, 1.0)
    res = np.concatenate([values, [np.nan]])[:, None, None]  # B = 20 resamples, one of them failed
    se = np.std(values, ddof=1)
    # B_valid = 19: k = ceil(0.8 * 20) = 16 -> the 16th smallest |res| is 16 (NumPy's quantile: 15.4)
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.8)
    assert crit[0] == pytest.approx(max(16.0 / se, ndtri(0.9)), rel=1e-12)
    assert 16.0 / se > ndtri(0.9) and np.quantile(np.abs(values), 0.8) == pytest.approx(15.4)
    # level 0.99: k = ceil(0.99 * 20) = 20 > B_valid -> capped at the largest, 19
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.99)
    assert crit[0] == pytest.approx(max(19.0 / se, ndtri(0.995)), rel=1e-12)
    # exact integer level (B + 1): 0.75 * 20 = 15 -> k = 15, not 16 (no rounding up past an integer)
    crit = sup_t_critical_value(np.zeros((1, 1)), res, level=0.75)
    assert crit[0] == pytest.approx(max(15.0 / se, ndtri(0.875)), rel=1e-12)
    # the floor: tiny maxima never give a band narrower than the pointwise normal one
    flat = np.full((5, 1, 3), 1.0)
    flat[::2] = -1.0
    assert sup_t_critical_value(np.zeros((1, 3)), flat, level=0.95)[0] == pytest.approx(ndtri(0.975))


def test_envelope_level():
    assert envelope_level(101) == pytest.approx(0.98)
    assert envelope_level(2) == 0.0


def test_bca_needs_counts_and_methods_checked():
    with pytest.raises(ValueError, match="counts"):
        band_arrays(np.zeros((1, 2)), np.zeros((5, 1, 2)), level=0.9, method="bca", simultaneous=False)
    with pytest.raises(ValueError, match="method="):
        pointwise_interval(0.0, np.zeros(5), level=0.9, method="studentized")
    with pytest.raises(ValueError, match="acceleration"):
        pointwise_interval(0.0, np.zeros(5), level=0.9, method="bca")
