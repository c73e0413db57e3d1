"""Skewed features: which count as skewed, quantile-spaced axes, contour labels that never overlap."""

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

import pdpboot  # noqa: E402
from pdpboot.plotting import is_skewed, tidy_ticks  # noqa: E402
from pdpboot.plotting._common import quantile_knots  # noqa: E402


def _rain(n=1461, seed=0):
    """Seattle-like daily precipitation: 57 % of days dry, a gamma tail up to 18 mm."""
    rng = np.random.default_rng(seed)
    rain = np.where(rng.uniform(size=n) < 0.57, 0.0, np.minimum(rng.gamma(0.7, 4.0, n), 18.0)).round(1)
    rain[:2] = [18.0, 16.3]
    return rain


@pytest.mark.parametrize(("values", "expected"), [
    (np.random.default_rng(0).normal(size=2000), False),
    (np.random.default_rng(0).uniform(size=2000), False),
    (np.random.default_rng(0).exponential(size=2000), False),
    (np.random.default_rng(0).lognormal(0, 0.5, size=2000), False),
    (np.random.default_rng(0).lognormal(0, 1.5, size=2000), True),
    (_rain(), True),
    (np.r_[np.zeros(60), np.linspace(1, 100, 40)], True),  # a pile at one value
    (np.r_[np.linspace(0, 100, 40), np.full(60, 100.0)], True),  # ... at the top
    (np.arange(10.0), False),
])
def test_which_features_count_as_skewed(values, expected):
    assert is_skewed(values) is expected


def test_rule_by_hand_five_deciles_within_a_tenth_of_the_range():
    # deciles 1..9 of this sample: 0, 0, 0, 0, 0.5, 1, 2, 4, 8 -> 5 consecutive ones (0..0.5) within 0.05
    # of a range of 10: skewed; moved apart (0..2 over 10) they are not
    x = np.r_[np.zeros(45), np.full(10, 0.5), np.full(10, 1), np.full(10, 2), np.full(10, 4), np.full(10, 8),
              np.full(5, 10.0)]
    assert is_skewed(x)
    assert not is_skewed(np.r_[np.linspace(0, 2, 50), np.linspace(2, 10, 50)])


def test_quantile_map_is_strictly_increasing_and_puts_a_pile_at_one_point():
    deciles = np.array([0, 0, 0, 0, 0, 0.1, 1, 3, 6.0])
    xs, ps = quantile_knots(deciles, 0.0, 18.0)
    assert xs.tolist() == [0.0, 0.1, 1.0, 3.0, 6.0, 18.0]
    assert np.all(np.diff(ps) > 0) and ps[0] == 0.0 and ps[-1] == pytest.approx(1.0)
    # the dense part (0..6 mm, 90 % of the days) gets most of the axis, not the 1/3 of a linear one
    assert ps[-2] > 0.6


@pytest.fixture(scope="module")
def rain_result():
    rng = np.random.default_rng(1)
    rain = _rain()
    temp = rng.normal(16, 7, rain.size)
    X = pd.DataFrame({"precipitation": rain, "temp_max": temp})
    # the surface falls steeply over the first millimetre: on a linear axis its contour lines crowd into a strip
    y = 0.3 * temp - 12 * np.log1p(3 * rain) + rng.normal(0, 1.0, rain.size)
    res = pdpboot.bootstrap_partial_dependence(
        HistGradientBoostingRegressor(max_iter=40, random_state=0), X, y,
        ["precipitation", "temp_max", ("temp_max", "precipitation")], n_resamples=6, grid=Grid(25, percentiles=(0, 1)),
        statistics={"ice": 30}, rng=0, execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(res)


def test_skewed_feature_gets_a_quantile_axis_with_data_ticks(rain_result):
    ax = pdpboot.plot_pd(rain_result, "precipitation")
    assert ax.get_xscale() == "function" and ax.get_xlabel() == "precipitation (quantile-spaced axis)"
    ticks = ax.get_xticks()
    deciles = np.asarray(rain_result["precipitation"].attrs["deciles"])
    assert ticks[0] == 0.0 and ticks[-1] == 18.0
    assert set(ticks[1:-1]) <= set(deciles)  # the data's own values, in mm
    # half the axis (at least) holds the lower 90 % of the days; a linear axis gives them a third
    lo, hi = ax.get_xlim()
    to_px = ax.transData.transform
    share = (to_px((deciles[-1], 0))[0] - to_px((lo, 0))[0]) / (to_px((hi, 0))[0] - to_px((lo, 0))[0])
    assert share > 0.5
    assert pdpboot.plot_pd(rain_result, "temp_max").get_xscale() == "linear"
    het = pdpboot.ice_heterogeneity(rain_result, ["precipitation"])
    assert pdpboot.plot_heterogeneity(het, "precipitation", stat="ice_sd").get_xscale() == "function"
    assert pdpboot.plot_pd(rain_result, "precipitation", scale="linear").get_xscale() == "linear"
    with pytest.raises(ValueError, match="scale must be one of"):
        pdpboot.plot_pd(rain_result, "precipitation", scale="log10")
    ax = pdpboot.plot_pd_contour(rain_result, ("temp_max", "precipitation"))
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "function"
    assert ax.get_ylabel() == "precipitation (quantile-spaced axis)"
    plt.close("all")


def _label_boxes(ax):
    fig = ax.figure
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in ax.texts if t.get_visible() and t.get_text()]


def _overlapping(boxes):
    return [(i, j) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]


def test_contour_labels_never_overlap(rain_result):
    # many levels on a linear axis crowd the surface into a strip: labelled as the old code did (matplotlib's
    # clabel on every other level, inline), two labels collide
    fig, ax = plt.subplots(figsize=(3.0, 2.4), layout="constrained")
    node = rain_result["temp_max__precipitation"]
    z = node["pd"].isel(output=0).transpose("precipitation", "temp_max").values
    filled = ax.contourf(node["temp_max"].values, node["precipitation"].values, z, levels=30)
    fig.colorbar(filled, ax=ax)
    lines = ax.contour(node["temp_max"].values, node["precipitation"].values, z, levels=filled.levels)
    ax.clabel(lines, lines.levels[::2], fontsize="x-small", inline=True, fmt="{:.3g}".format)
    assert _overlapping(_label_boxes(ax)), "the scene must crowd matplotlib's own labels (else the test is void)"
    plt.close(fig)
    for scale in ("linear", "auto"):
        fig, ax = plt.subplots(figsize=(3.0, 2.4), layout="constrained")
        pdpboot.plot_pd_contour(rain_result, ("temp_max", "precipitation"), ax=ax, style={"surface": {"levels": 30}},
                                scale=scale)
        boxes = _label_boxes(ax)
        assert boxes, "some labels are kept"
        assert not _overlapping(boxes)
        frame = ax.get_window_extent(fig.canvas.get_renderer())
        assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
        tidy_ticks(fig)  # after a layout change labels that now collide are hidden
        assert not _overlapping(_label_boxes(ax))
        plt.close(fig)
