"""Tests of pdpboot.plotting on hand-built results that follow the schema (no core needed)."""

import io
import subprocess
import sys

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib.collections import FillBetweenPolyCollection, LineCollection, QuadMesh  # noqa: E402
from matplotlib.contour import QuadContourSet  # noqa: E402

from pdpboot.plotting import (  # noqa: E402
    paper_style,
    plot_h_statistic,
    plot_heterogeneity,
    plot_pd,
    plot_pd_contour,
    plot_pd_panels,
)
from pdpboot.plotting.surfaces import _additive_reference  # noqa: E402

B = 20
X1 = np.linspace(0.0, 1.0, 11)
X2 = np.array([-1.0, 0.0, 0.5, 2.0])
LEVELS = ["red", "green", "blue"]
DECILES_X1 = [0.1 * k for k in range(1, 10)]
DECILES_X2 = [-0.8, -0.5, -0.2, 0.0, 0.2, 0.5, 0.9, 1.3, 1.8]


def _band_attrs(simultaneous=0, level=0.95, method="percentile"):
    return {"method": method, "confidence_level": level, "simultaneous": simultaneous, "n_resamples": B}


def _node_1d(name, grid, pd, outputs, *, categorical=0, deciles=None, band=True, n_ice=30, seed=0,
             simultaneous=False):
    """One 1-D node: pd (output, name) is given; bands are pd - 0.1 .. pd + 0.2 (asymmetric on purpose)."""
    rng = np.random.default_rng(seed)
    pd = np.asarray(pd, dtype=float)
    coords = {name: grid, "output": outputs, "resample": np.arange(B),
              "instance": np.arange(100, 100 + n_ice), "ci_bound": ["lower", "upper"]}
    ds = xr.Dataset(coords=coords)
    ds["pd"] = (("output", name), pd)
    ds["pd_resamples"] = (("resample", "output", name), pd + rng.normal(0, 0.05, (B, *pd.shape)))
    ds["ice"] = (("instance", "output", name), pd + rng.normal(0, 0.5, (n_ice, *pd.shape)))
    if band:
        ds["pd_band"] = (("ci_bound", "output", name), np.stack([pd - 0.1, pd + 0.2]))
        ds["pd_band"].attrs = _band_attrs()
        if simultaneous:
            ds["pd_band_pointwise"] = ds["pd_band"].copy()
            ds["pd_band"] = (("ci_bound", "output", name), np.stack([pd - 0.3, pd + 0.4]))
            ds["pd_band"].attrs = _band_attrs(simultaneous=1)
    ds.attrs = {"features": [name], "categorical": [categorical],
                "deciles": list(deciles) if deciles is not None else [np.nan] * 9}
    return ds


def _node_2d(names, grids, pd, outputs, *, categorical=(0, 0), deciles=(None, None), half_width=0.05,
             band=True):
    pd = np.asarray(pd, dtype=float)
    coords = {names[0]: grids[0], names[1]: grids[1], "output": outputs, "ci_bound": ["lower", "upper"]}
    ds = xr.Dataset(coords=coords)
    ds["pd"] = (("output", *names), pd)
    if band:
        ds["pd_band"] = (("ci_bound", "output", *names), np.stack([pd - half_width, pd + 2 * half_width]))
        ds["pd_band"].attrs = _band_attrs()
    dec = [v for d in deciles for v in (d if d is not None else [np.nan] * 9)]
    ds.attrs = {"features": list(names), "categorical": list(categorical), "deciles": dec}
    return ds


def _pd_x1(x):
    return np.sin(3 * x)


def _pd_x2(x):
    return 0.5 * x


def _surface(x1, x2, interaction=1.0):
    return _pd_x1(x1)[:, None] + _pd_x2(x2)[None, :] + interaction * np.outer(x1 - 0.5, x2)


def _regression_tree(simultaneous=False, band=True):
    out = ["Price"]
    nodes = {
        "x1": _node_1d("x1", X1, _pd_x1(X1)[None], out, deciles=DECILES_X1, band=band,
                       simultaneous=simultaneous),
        "x2": _node_1d("x2", X2, _pd_x2(X2)[None], out, deciles=DECILES_X2, band=band, seed=1),
        "color": _node_1d("color", LEVELS, np.array([[1.0, 3.0, 2.0]]), out, categorical=1, band=band,
                          seed=2),
        "x1__x2": _node_2d(("x1", "x2"), (X1, X2), _surface(X1, X2)[None], out,
                           deciles=(DECILES_X1, DECILES_X2), band=band),
        "color__x2": _node_2d(("color", "x2"), (LEVELS, X2), (np.array([1.0, 3.0, 2.0])[:, None] + X2)[None],
                              out, categorical=(1, 0), deciles=(None, DECILES_X2), band=band),
    }
    root = xr.Dataset(attrs={"task": "regression", "response": "predict", "target_name": "Price",
                             "n_resamples": B})
    return xr.DataTree.from_dict({"/": root, **nodes})


def _classifier_tree(classes=(0, 1)):
    k = len(classes)
    pd = np.stack([np.linspace(0.1, 0.9, 11) * (c + 1) / k for c in range(k)])
    pd2 = np.stack([_surface(X1, X2) * (c + 1) for c in range(k)])
    nodes = {"x1": _node_1d("x1", X1, pd, list(classes), deciles=DECILES_X1),
             "x1__x2": _node_2d(("x1", "x2"), (X1, X2), pd2, list(classes))}
    root = xr.Dataset(attrs={"task": "classification", "response": "predict_proba", "target_name": "y",
                             "n_resamples": B})
    return xr.DataTree.from_dict({"/": root, **nodes})


@pytest.fixture(autouse=True)
def _no_figure_leak():
    assert plt.get_fignums() == []
    yield
    leaked = plt.get_fignums()
    plt.close("all")
    assert leaked == [], f"test left figures open: {leaked}"


@pytest.fixture(scope="module")
def reg():
    return _regression_tree()


def _legend_texts(ax):
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def _fills(ax):
    return [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]


def _assert_polygon_is_band(poly, x, lower, upper):
    """Every vertex of the filled polygon is a band bound, and every bound is a vertex."""
    verts = {tuple(np.round(v, 9)) for v in poly.get_paths()[0].vertices}
    expected = {tuple(np.round(p, 9)) for p in [*zip(x, lower, strict=True), *zip(x, upper, strict=True)]}
    assert verts == expected


# ------------------------------------------------------------------ plot_pd, numeric


def test_plot_pd_line_band_rug_labels(reg):
    ax = plot_pd(reg, "x1")
    pd = _pd_x1(X1)
    assert len(ax.lines) == 1
    np.testing.assert_allclose(ax.lines[0].get_xdata(), X1)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), pd)
    (fill,) = _fills(ax)
    _assert_polygon_is_band(fill, X1, pd - 0.1, pd + 0.2)
    assert ax.get_xlabel() == "x1"
    assert ax.get_ylabel() == "Predicted Price"
    assert _legend_texts(ax) == ["PD estimate", "95 % percentile band, B = 20"]
    (rug,) = [c for c in ax.collections if type(c) is LineCollection]
    rug_x = sorted(seg[0, 0] for seg in rug.get_segments())
    np.testing.assert_allclose(rug_x, DECILES_X1)
    # rug ticks are in axes coordinates along y: they must not stretch the data limits
    assert ax.get_ylim()[0] > pd.min() - 0.5
    plt.close(ax.figure)


def test_plot_pd_simultaneous_band_is_lighter_and_labelled():
    tree = _regression_tree(simultaneous=True)
    ax = plot_pd(tree, "x1", style={"simultaneous": {"kind": "fill"}})
    pd = _pd_x1(X1)
    fills = _fills(ax)
    assert len(fills) == 2
    by_label = {f.get_label(): f for f in fills}
    assert set(by_label) == {"95 % percentile band, B = 20", "95 % simultaneous band"}
    _assert_polygon_is_band(by_label["95 % percentile band, B = 20"], X1, pd - 0.1, pd + 0.2)
    _assert_polygon_is_band(by_label["95 % simultaneous band"], X1, pd - 0.3, pd + 0.4)
    alphas = {label: fill.get_alpha() for label, fill in by_label.items()}
    assert alphas["95 % simultaneous band"] < alphas["95 % percentile band, B = 20"]
    assert _legend_texts(ax)[0] == "PD estimate"
    plt.close(ax.figure)

    ax = plot_pd(tree, "x1", band="simultaneous", style={"simultaneous": {"kind": "lines"}})
    assert _fills(ax) == []
    assert len(ax.lines) == 3  # PD + two dashed bounds
    ys = sorted((tuple(line.get_ydata()) for line in ax.lines[:2]), key=lambda t: t[0])
    np.testing.assert_allclose(ys[0], pd - 0.3)
    np.testing.assert_allclose(ys[1], pd + 0.4)
    assert _legend_texts(ax) == ["PD estimate", "95 % simultaneous band, B = 20"]
    plt.close(ax.figure)


def test_simultaneous_band_has_its_own_style_by_default():
    import matplotlib.colors as mcolors

    from pdpboot.plotting import OKABE_ITO

    tree = _regression_tree(simultaneous=True)
    ax = plot_pd(tree, "x1")
    pd = _pd_x1(X1)
    assert [f.get_label() for f in _fills(ax)] == ["95 % percentile band, B = 20"]  # pointwise: shaded
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]  # simultaneous: dashed bounds
    assert len(dashed) == 2 and all(mcolors.same_color(line.get_color(), OKABE_ITO["vermillion"]) for line in dashed)
    bounds = sorted((line.get_ydata() for line in dashed), key=lambda y: y[0])
    np.testing.assert_allclose(bounds[0], pd - 0.3)
    np.testing.assert_allclose(bounds[1], pd + 0.4)
    assert "95 % simultaneous band" in _legend_texts(ax)
    plt.close(ax.figure)


def test_category_intervals_are_above_ice_with_caps():
    tree = _regression_tree()
    ax = plot_pd(tree, "color", ice=True)
    ice = [c for c in ax.collections if c.get_label().startswith("ICE")][0]
    band = tree["color"].to_dataset()["pd_band"].isel(output=0)
    intervals = [c for c in ax.collections if c.get_label() == "95 % percentile band, B = 20"]
    (vertical,) = intervals
    assert vertical.get_zorder() > ice.get_zorder()
    segs = vertical.get_segments()
    np.testing.assert_allclose([s[0][1] for s in segs], band.sel(ci_bound="lower").values)
    np.testing.assert_allclose([s[1][1] for s in segs], band.sel(ci_bound="upper").values)
    caps = [c for c in ax.collections if c is not vertical and c is not ice and c.get_zorder() == vertical.get_zorder()]
    cap_y = sorted(seg[0][1] for seg in caps[0].get_segments())
    np.testing.assert_allclose(cap_y, sorted(np.concatenate([band.sel(ci_bound="lower").values,
                                                              band.sel(ci_bound="upper").values])))
    plt.close(ax.figure)


def test_tidy_ticks_removes_collisions():
    from pdpboot.plotting import tidy_ticks
    from pdpboot.plotting._common import labels_overlap, shown_labels

    fig, axes = plt.subplots(1, 2, figsize=(3, 1.6))
    axes[0].plot([10000, 90000], [0, 1])
    axes[0].tick_params(labelsize=9)
    levels = [f"{k}. a rather long level label" for k in range(12)]
    axes[1].set_xticks(range(12), levels)
    tidy_ticks(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    shown = shown_labels(axes[0])
    assert shown and not labels_overlap([t.get_window_extent(renderer) for t in shown])
    shown = shown_labels(axes[1])  # rotated, and every level labelled (issue 26 D: never hide a label)
    assert len(shown) == 12 and shown[0].get_rotation() == 90
    assert not labels_overlap([t.get_window_extent(renderer) for t in shown])
    assert all(len(t.get_text()) <= 18 for t in axes[1].get_xticklabels())
    assert axes[1].get_xticklabels()[0].get_text() == "0. a rather long …"
    plt.close(fig)


@pytest.mark.parametrize("n_levels", [12, 40, 150])
def test_crowded_category_axes_label_every_level(n_levels):
    from pdpboot.plotting import tidy_ticks
    from pdpboot.plotting._common import labels_overlap, shown_labels

    fig, ax = plt.subplots(figsize=(4, 3))
    levels = [f"level {k}" for k in range(n_levels)]
    ax.plot(range(n_levels), np.arange(n_levels) % 3, "o")
    ax.set_xticks(range(n_levels), levels)
    tidy_ticks(fig)
    fig.draw_without_rendering()
    shown = shown_labels(ax)
    assert [t.get_text() for t in shown] == levels
    if shown[0].get_rotation() == 90:  # (at 40 degrees the boxes overlap across, the texts do not)
        assert not labels_overlap([t.get_window_extent(fig.canvas.get_renderer()) for t in shown])
    plt.close(fig)


@pytest.mark.parametrize("n_levels", [22, 40])
def test_vertical_category_labels_stay_below_the_axes(n_levels):
    """Labels turned 90 degrees end at their tick, below the axes (they were centred on it, half over the plot)."""
    from pdpboot.plotting import tidy_ticks

    fig, ax = plt.subplots(figsize=(4, 3))
    levels = [f"{'Massachusetts' if k % 2 else 'Iowa'} {k}" for k in range(n_levels)]
    ax.plot(range(n_levels), np.arange(n_levels) % 3, "o")
    ax.set_xticks(range(n_levels), levels)
    tidy_ticks(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    assert ax.get_xticklabels()[0].get_rotation() == 90
    bottom = ax.get_window_extent(renderer).y0
    assert max(t.get_window_extent(renderer).y1 for t in ax.get_xticklabels()) <= bottom + 0.5
    plt.close(fig)


@pytest.mark.parametrize("n_levels", [12, 40, 120])
def test_crowded_category_y_axis_labels_every_level(n_levels):
    """A heatmap of two categorical features: every level of the y axis keeps a label that collides with no
    other (smaller font, then a taller figure); the colour bar is left as it is (issue 26 D)."""
    from pdpboot.plotting import tidy_ticks
    from pdpboot.plotting._common import labels_overlap, shown_labels

    fig, ax = plt.subplots(figsize=(4, 3))
    levels = [f"level number {k}" for k in range(n_levels)]
    mesh = ax.pcolormesh(np.arange(4), np.arange(n_levels + 1) - 0.5, np.ones((n_levels, 3)))
    ax.set_yticks(range(n_levels), levels)
    ax.set_ylim(-0.5, n_levels - 0.5)
    cbar = fig.colorbar(mesh, ax=ax)
    size = cbar.ax.get_yticklabels()[0].get_fontsize()
    tidy_ticks(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    shown = shown_labels(ax, "y")
    assert [t.get_text() for t in shown] == levels
    assert not labels_overlap([t.get_window_extent(renderer) for t in shown], "y", gap=1.0)
    assert max(t.get_window_extent(renderer).x1 for t in shown) <= ax.get_window_extent(renderer).x0
    assert cbar.ax.get_yticklabels()[0].get_fontsize() == size
    plt.close(fig)


def test_plot_pd_band_choices():
    tree = _regression_tree(band=False)
    ax = plot_pd(tree, "x1")  # "auto": no band, no error
    assert _fills(ax) == []
    assert _legend_texts(ax) == ["PD estimate"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="confidence_bands"):
        plot_pd(tree, "x1", band=True)
    with pytest.raises(ValueError, match="simultaneous=True"):
        plot_pd(_regression_tree(), "x1", band="simultaneous")
    ax = plot_pd(_regression_tree(), "x1", band=False)
    assert _fills(ax) == []
    plt.close(ax.figure)
    assert plt.get_fignums() == []  # failed calls made no figure


def test_plot_pd_ice_subset_and_all(reg):
    ice = reg["x1"].to_dataset()["ice"].isel(output=0).values
    ax = plot_pd(reg, "x1", ice=5)
    (coll,) = [c for c in ax.collections if c.get_label().startswith("ICE")]
    segments = coll.get_segments()
    assert len(segments) == 5
    for seg in segments:
        np.testing.assert_allclose(seg[:, 0], X1)
        assert any(np.allclose(seg[:, 1], row) for row in ice)  # each drawn curve is a kept ICE curve
    assert coll.get_zorder() < ax.lines[0].get_zorder()  # ICE under the PD line
    assert "ICE (5 curves)" in _legend_texts(ax)
    plt.close(ax.figure)
    ax = plot_pd(reg, "x1", ice=True, band=False, rug=False)
    (coll,) = ax.collections
    assert len(coll.get_segments()) == ice.shape[0]
    plt.close(ax.figure)
    ax = plot_pd(reg, "x1", ice=0)  # 0 curves = no ICE
    assert not [c for c in ax.collections if "ICE" in c.get_label()]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="ice must be"):
        plot_pd(reg, "x1", ice=-2)
    plt.close("all")


def test_plot_pd_ice_missing_is_a_clear_error(reg):
    ds = reg["x1"].to_dataset().drop_vars("ice")
    with pytest.raises(ValueError, match="no 'ice' variable"):
        plot_pd(ds, "x1", ice=3)
    plt.close("all")


def _with_centred_pd(tree, name, simultaneous=False):
    """Add pd_centered and its band(s) to a 1-D node; the bands are NOT the shifted pd_band on purpose."""
    tree = tree.copy()
    ds = tree[name].to_dataset()
    pdc = ds["pd"] - ds["pd"].isel({name: 0})
    ramp = xr.DataArray(np.linspace(0.0, 1.0, ds.sizes[name]), dims=name)  # zero width at the anchor
    ds["pd_centered"] = pdc
    band = xr.concat([pdc - 0.05 * ramp, pdc + 0.15 * ramp], dim="ci_bound").transpose("ci_bound", "output", name)
    ds["pd_centered_band"] = band.assign_coords(ci_bound=["lower", "upper"])
    ds["pd_centered_band"].attrs = _band_attrs(simultaneous=int(simultaneous))
    if simultaneous:
        ds["pd_centered_band_pointwise"] = ds["pd_centered_band"].copy()
        ds["pd_centered_band_pointwise"].attrs = _band_attrs()
        ds["pd_centered_band"] = (ds["pd_centered_band"].dims,
                                  np.stack([(pdc - 0.3 * ramp).values, (pdc + 0.4 * ramp).values]))
        ds["pd_centered_band"].attrs = _band_attrs(simultaneous=1)
    tree[name] = xr.DataTree(ds)
    return tree


def test_plot_pd_centred_draws_stored_centred_band():
    tree = _with_centred_pd(_regression_tree(), "x1")
    ds = tree["x1"].to_dataset().isel(output=0)
    ax = plot_pd(tree, "x1", ice=4, centered=True)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), _pd_x1(X1) - _pd_x1(X1)[0])
    (fill,) = _fills(ax)
    lower, upper = ds["pd_centered_band"].values
    _assert_polygon_is_band(fill, X1, lower, upper)
    assert upper[0] - lower[0] == 0.0 and (upper - lower)[-1] == pytest.approx(0.2)  # not pd_band shifted
    assert _legend_texts(ax) == ["centred PD estimate", "centred ICE (4 curves)", "95 % percentile band, B = 20"]
    assert ax.get_ylabel() == "Predicted Price (centred)"
    plt.close(ax.figure)
    ax = plot_pd(tree, "x1")  # uncentred: still pd and pd_band
    _assert_polygon_is_band(_fills(ax)[0], X1, _pd_x1(X1) - 0.1, _pd_x1(X1) + 0.2)
    plt.close(ax.figure)


def test_plot_pd_centred_pointwise_and_simultaneous_bands():
    tree = _with_centred_pd(_regression_tree(simultaneous=True), "x1", simultaneous=True)
    ds = tree["x1"].to_dataset().isel(output=0)
    ax = plot_pd(tree, "x1", centered=True, style={"simultaneous": {"kind": "fill"}})
    by_label = {f.get_label(): f for f in _fills(ax)}
    assert set(by_label) == {"95 % percentile band, B = 20", "95 % simultaneous band"}
    _assert_polygon_is_band(by_label["95 % percentile band, B = 20"], X1, *ds["pd_centered_band_pointwise"].values)
    _assert_polygon_is_band(by_label["95 % simultaneous band"], X1, *ds["pd_centered_band"].values)
    plt.close(ax.figure)
    ax = plot_pd(tree, "x1", centered=True, band="pointwise")
    (fill,) = _fills(ax)
    _assert_polygon_is_band(fill, X1, *ds["pd_centered_band_pointwise"].values)
    plt.close(ax.figure)


def test_plot_pd_centred_without_pd_centered_shifts_the_band(reg):
    ax = plot_pd(reg, "x1", ice=4, centered=True)
    pd = _pd_x1(X1)
    shift = pd[0]
    (coll,) = [c for c in ax.collections if "ICE" in c.get_label()]
    for seg in coll.get_segments():
        assert seg[0, 1] == pytest.approx(0.0)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), pd - shift)
    (fill,) = _fills(ax)
    _assert_polygon_is_band(fill, X1, pd - 0.1 - shift, pd + 0.2 - shift)
    assert ax.get_ylabel() == "Predicted Price (centred)"
    assert "centred ICE (4 curves)" in _legend_texts(ax)
    plt.close(ax.figure)


def test_plot_pd_kw_merge_and_given_ax(reg):
    fig, ax = plt.subplots()
    out = plot_pd(reg, "x1", ax=ax, style={"line": {"color": "red", "linewidth": 4}, "band": {"alpha": 0.5}},
                  legend=False, rug=[0.3, 0.7])
    assert out is ax
    assert plt.get_fignums() == [fig.number]
    assert ax.lines[0].get_color() == "red"
    assert ax.lines[0].get_linewidth() == 4
    assert _fills(ax)[0].get_alpha() == 0.5
    assert ax.get_legend() is None
    rug = [c for c in ax.collections if not isinstance(c, FillBetweenPolyCollection)][0]
    np.testing.assert_allclose(sorted(s[0, 0] for s in rug.get_segments()), [0.3, 0.7])
    plt.close(fig)


def test_plot_pd_accepts_node_and_dataset(reg):
    node = reg["x2"]
    for obj in (node, node.to_dataset()):
        ax = plot_pd(obj, "x2")
        np.testing.assert_allclose(ax.lines[0].get_ydata(), _pd_x2(X2))
        plt.close(ax.figure)
    ax = plot_pd(node, "x2")
    assert ax.get_ylabel() == "Predicted Price"  # root attrs reached from the node
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="holds features"):
        plot_pd(node, "x1")
    with pytest.raises(KeyError, match="available feature sets"):
        plot_pd(reg, "nope")
    with pytest.raises(ValueError, match="plot_pd_contour"):
        plot_pd(reg["x1__x2"], ("x1", "x2"))
    with pytest.raises(TypeError, match="DataTree"):
        plot_pd(np.zeros(3), "x1")
    assert plt.get_fignums() == []


# ------------------------------------------------------------------ plot_pd, categorical


def test_plot_pd_categorical_points_intervals_levels(reg):
    ax = plot_pd(reg, "color", ice=3)
    assert [t.get_text() for t in ax.get_xticklabels()] == LEVELS
    np.testing.assert_allclose(ax.get_xticks(), [0, 1, 2])
    (points,) = ax.lines
    np.testing.assert_allclose(points.get_xdata(), [0, 1, 2])
    np.testing.assert_allclose(points.get_ydata(), [1, 3, 2])
    assert points.get_linestyle() == "None"
    (intervals,) = [c for c in ax.collections if c.get_label().startswith("95 %")]
    segs = sorted(intervals.get_segments(), key=lambda s: s[0, 0])
    for k, seg in enumerate(segs):
        np.testing.assert_allclose(seg[:, 0], [k, k])
        np.testing.assert_allclose(sorted(seg[:, 1]), [[1, 3, 2][k] - 0.1, [1, 3, 2][k] + 0.2])
    assert ax.get_xlabel() == "color"
    plt.close(ax.figure)


def test_plot_pd_categorical_bars(reg):
    ax = plot_pd(reg, "color", style={"line": {"kind": "bars"}})
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, [1, 3, 2])
    assert [t.get_text() for t in ax.get_xticklabels()] == LEVELS
    plt.close(ax.figure)


# ------------------------------------------------------------------ classifiers


def test_classifier_positive_class_by_default_and_labelled():
    tree = _classifier_tree()
    ax = plot_pd(tree, "x1")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), np.linspace(0.1, 0.9, 11))  # class 1 = (c+1)/k = 1
    assert ax.get_ylabel() == "P(class = 1)"
    plt.close(ax.figure)
    ax = plot_pd(tree, "x1", output=0)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), np.linspace(0.1, 0.9, 11) / 2)
    assert ax.get_ylabel() == "P(class = 0)"
    plt.close(ax.figure)


def test_multiclass_needs_output():
    tree = _classifier_tree(classes=("setosa", "versicolor", "virginica"))
    with pytest.raises(ValueError, match="output=<label>"):
        plot_pd(tree, "x1")
    with pytest.raises(ValueError, match="not one of"):
        plot_pd(tree, "x1", output="rose")
    ax = plot_pd(tree, "x1", output="versicolor")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), np.linspace(0.1, 0.9, 11) * 2 / 3)
    assert ax.get_ylabel() == "P(class = versicolor)"
    plt.close(ax.figure)


# ------------------------------------------------------------------ contours


def _contour_sets(ax):
    return [c for c in ax.collections if isinstance(c, QuadContourSet)]


def test_contour_estimate_levels_span_surface_and_labels(reg):
    ax = plot_pd_contour(reg, ("x1", "x2"))
    z = _surface(X1, X2)
    filled = [c for c in _contour_sets(ax) if c.filled]
    lines = [c for c in _contour_sets(ax) if not c.filled]
    assert len(filled) == 1 and len(lines) == 1
    levels = filled[0].levels
    assert levels[0] <= z.min() and levels[-1] >= z.max()
    assert len(levels) >= 5
    assert lines[0].labelTexts  # contour lines are labelled
    assert ax.get_xlabel() == "x1" and ax.get_ylabel() == "x2"
    cbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert len(cbar_axes) == 1 and cbar_axes[0].get_ylabel() == "Predicted Price"
    plt.close(ax.figure)


def test_contour_width_lower_upper(reg):
    width = 0.15  # band is pd - 0.05 .. pd + 0.10
    ax = plot_pd_contour(reg, ("x1", "x2"), what="width")
    levels = _contour_sets(ax)[0].levels
    assert levels[0] <= width <= levels[-1]
    assert levels[-1] - levels[0] < 0.1  # a constant width is not drawn on the surface's scale
    cbar = [a for a in ax.figure.axes if a is not ax][0]
    assert cbar.get_ylabel().startswith("Width of 95 % percentile band")
    plt.close(ax.figure)
    z = _surface(X1, X2)
    for what, expected in (("lower", z - 0.05), ("upper", z + 0.1)):
        ax = plot_pd_contour(reg, ("x1", "x2"), what=what, style={"labels": False, "colorbar": False})
        levels = _contour_sets(ax)[0].levels
        assert levels[0] <= expected.min() and levels[-1] >= expected.max()
        assert len(ax.figure.axes) == 1
        plt.close(ax.figure)
    tree = _regression_tree(band=False)
    with pytest.raises(ValueError, match="confidence_bands"):
        plot_pd_contour(tree, ("x1", "x2"), what="width")
    with pytest.raises(ValueError, match="what must be"):
        plot_pd_contour(reg, ("x1", "x2"), what="median")
    plt.close("all")


def test_additive_reference_from_1d_nodes_and_margins(reg):
    ds = reg["x1__x2"].to_dataset().isel(output=0)
    surface = _surface(X1, X2)
    ref = _additive_reference(ds, reg, ["x1", "x2"], "Price", reg.attrs, surface)
    by_hand = _pd_x1(X1)[:, None] + _pd_x2(X2)[None, :]
    by_hand = by_hand - by_hand.mean() + surface.mean()
    np.testing.assert_allclose(ref, by_hand, atol=1e-12)
    ref = _additive_reference(ds, None, ["x1", "x2"], "Price", reg.attrs, surface)
    rows, cols = surface.mean(axis=1), surface.mean(axis=0)
    np.testing.assert_allclose(ref, rows[:, None] + cols[None, :] - surface.mean(), atol=1e-12)
    additive = _pd_x1(X1)[:, None] + _pd_x2(X2)[None, :]
    np.testing.assert_allclose(_additive_reference(ds, None, ["x1", "x2"], None, {}, additive), additive,
                               atol=1e-12)


def test_contour_mark_hatch_and_mask(reg):
    ax = plot_pd_contour(reg, ("x1", "x2"), mark="hatch")
    hatched = [c for c in _contour_sets(ax) if c.filled and any(c.hatches)]
    assert len(hatched) == 1
    assert _legend_texts(ax) == ["band contains additive surface"]
    plt.close(ax.figure)
    # categorical x numeric heatmap: the masked cells are exactly those whose band holds the reference
    ax = plot_pd_contour(reg, ("color", "x2"), mark="mask", reference="zero")
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    z = (np.array([1.0, 3.0, 2.0])[:, None] + X2).T
    expected_mask = (z - 0.05 <= 0) & (0 <= z + 0.1)
    np.testing.assert_array_equal(np.ma.getmaskarray(mesh.get_array()).reshape(z.shape), expected_mask)
    assert expected_mask.any() and not expected_mask.all()
    assert _legend_texts(ax) == ["blank: band contains 0"]
    plt.close(ax.figure)


def test_heatmap_categorical_pair(reg):
    ax = plot_pd_contour(reg, ("color", "x2"))
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    z = (np.array([1.0, 3.0, 2.0])[:, None] + X2).T  # rows = x2, columns = colour levels
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(z.shape), z)
    assert [t.get_text() for t in ax.get_xticklabels()] == LEVELS
    assert ax.get_xlabel() == "color" and ax.get_ylabel() == "x2"
    assert mesh.norm.vmin <= z.min() and mesh.norm.vmax >= z.max()
    assert len(ax.texts) == 0  # numeric axis: no annotation by default
    plt.close(ax.figure)

    # categorical x categorical, annotated
    shape_levels = ["circle", "square"]
    values = np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    tree = xr.DataTree.from_dict({
        "/": xr.Dataset(attrs={"task": "regression", "response": "predict", "target_name": "Price"}),
        "color__shape": _node_2d(("color", "shape"), (LEVELS, shape_levels), values, ["Price"],
                                 categorical=(1, 1)),
    })
    ax = plot_pd_contour(tree, ("color", "shape"))
    assert [t.get_text() for t in ax.get_xticklabels()] == LEVELS
    assert [t.get_text() for t in ax.get_yticklabels()] == shape_levels
    assert sorted(t.get_text() for t in ax.texts) == ["1", "2", "3", "4", "5", "6"]
    plt.close(ax.figure)


def test_contour_classifier_and_node(reg):
    tree = _classifier_tree()
    ax = plot_pd_contour(tree["x1__x2"], ("x1", "x2"))
    cbar = [a for a in ax.figure.axes if a is not ax][0]
    assert cbar.get_ylabel() == "P(class = 1)"
    levels = _contour_sets(ax)[0].levels
    z = 2 * _surface(X1, X2)
    assert levels[0] <= z.min() and levels[-1] >= z.max()
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="pair"):
        plot_pd_contour(reg, ("x1",))


# ------------------------------------------------------------------ panel grid


def test_panel_grid(reg):
    fig, axes = plot_pd_panels(reg, n_cols=3)
    assert axes.shape == (2, 3)
    flat = axes.ravel()
    assert [a.get_visible() for a in flat] == [True] * 5 + [False]
    ylims = {flat[i].get_ylim() for i in (0, 1, 2)}
    assert len(ylims) == 1  # the three 1-D panels share y-limits
    lo, hi = ylims.pop()
    for pd in (_pd_x1(X1), _pd_x2(X2), np.array([1.0, 3, 2])):
        assert lo <= (pd - 0.1).min() and hi >= (pd + 0.2).max()
    assert all(a.get_legend() is None for a in flat)  # one figure legend instead
    (fig_legend,) = fig.legends
    assert [t.get_text() for t in fig_legend.get_texts()] == ["PD estimate", "95 % percentile band, B = 20"]
    assert len(fig.axes) == 7  # six panels and one shared colour bar
    assert fig.axes[-1].get_ylabel() == "Predicted Price"
    assert flat[0].get_ylabel() == "Predicted Price" and flat[1].get_ylabel() == ""
    assert _contour_sets(flat[3]) and any(isinstance(c, QuadMesh) for c in flat[4].collections)
    # the two 2-D panels share the colour scale
    levels = _contour_sets(flat[3])[0].levels
    mesh = [c for c in flat[4].collections if isinstance(c, QuadMesh)][0]
    assert (mesh.norm.vmin, mesh.norm.vmax) == (levels[0], levels[-1])
    plt.close(fig)


def test_panel_grid_subset_and_given_axes(reg):
    fig, given = plt.subplots(1, 2)
    fig2, axes = plot_pd_panels(reg, ["x2", ("x1", "x2")], ax=given)
    assert fig2 is fig and axes.shape == (1, 2) and axes[0, 0] is given[0]
    assert axes[0, 0].get_xlabel() == "x2" and axes[0, 1].get_ylabel() == "x2"
    assert _legend_texts(axes[0, 0]) == ["PD estimate", "95 % percentile band, B = 20"]
    assert len(fig.axes) == 3  # own colour bar for the single 2-D panel
    plt.close(fig)
    fig, one = plt.subplots()
    fig3, axes = plot_pd_panels(reg, ["x1", "x2", "color"], ax=one, n_cols=2)
    assert fig3 is fig and axes.shape == (2, 2) and not axes[1, 1].get_visible()
    plt.close(fig)
    fig, given = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="panels are needed"):
        plot_pd_panels(reg, ["x1", "x2", "color"], ax=given)
    plt.close(fig)


# ------------------------------------------------------------------ heterogeneity and H²


def _with_statistics(tree):
    tree = tree.copy()
    for name, grid in (("x1", X1), ("color", LEVELS)):
        ds = tree[name].to_dataset()
        sd = np.abs(np.cos(np.arange(len(grid))))[None] + 0.1
        ds["ice_sd"] = (("output", name), sd)
        ds["ice_sd_band"] = (("ci_bound", "output", name), np.stack([sd * 0.8, sd * 1.3]))
        ds["ice_sd_band"].attrs = _band_attrs(level=0.9)
        ds["h2_overall"] = (("output",), [0.2 if name == "x1" else 0.05])
        ds["h2_overall_band"] = (("ci_bound", "output"), [[0.1], [0.3]] if name == "x1" else [[0.0], [0.1]])
        ds["h2_overall_band"].attrs = _band_attrs()
        tree[name] = xr.DataTree(ds)
    for name, h2 in (("x1__x2", 0.3), ("color__x2", 0.6)):
        ds = tree[name].to_dataset()
        ds["h2"] = (("output",), [h2])
        ds["h2_band"] = (("ci_bound", "output"), [[h2 - 0.1], [h2 + 0.05]])
        ds["h2_band"].attrs = _band_attrs()
        tree[name] = xr.DataTree(ds)
    return tree


def test_plot_heterogeneity(reg):
    tree = _with_statistics(reg)
    ax = plot_heterogeneity(tree, "x1")
    sd = np.abs(np.cos(np.arange(11))) + 0.1
    np.testing.assert_allclose(ax.lines[0].get_ydata(), sd)
    (fill,) = _fills(ax)
    _assert_polygon_is_band(fill, X1, sd * 0.8, sd * 1.3)
    assert ax.get_ylabel() == "SD of ICE curves\n(Predicted Price)"
    assert _legend_texts(ax) == ["estimate", "90 % percentile band, B = 20"]
    plt.close(ax.figure)
    ax = plot_heterogeneity(tree, "color")
    assert [t.get_text() for t in ax.get_xticklabels()] == LEVELS
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="ice_heterogeneity"):
        plot_heterogeneity(tree, "x1", stat="dice_sd")


def test_plot_h_statistic(reg):
    tree = _with_statistics(reg)
    ax = plot_h_statistic(tree)
    widths = [p.get_width() for p in ax.patches]
    ys = [p.get_y() + p.get_height() / 2 for p in ax.patches]
    assert widths == [0.6, 0.3] and ys[0] > ys[1]  # sorted, largest on top
    labels = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()), strict=True))
    assert [labels[y] for y in sorted(labels, reverse=True)] == ["color × x2", "x1 × x2"]  # top to bottom
    (intervals,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    segs = sorted((tuple(np.round(s[:, 0], 9)) for s in intervals.get_segments()), key=lambda t: t[0])
    np.testing.assert_allclose(segs, [(0.2, 0.35), (0.5, 0.65)])
    assert ax.get_xlabel() == "H² (pairwise interaction)"
    assert _legend_texts(ax) == ["estimate", "95 % percentile interval, B = 20"]
    plt.close(ax.figure)
    ax = plot_h_statistic(tree, stat="h2_overall", sort=False)
    labels = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()), strict=True))
    assert [labels[y] for y in sorted(labels, reverse=True)] == ["x1", "color"]  # node order from the top
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="h_statistic"):
        plot_h_statistic(reg)


# ------------------------------------------------------------------ output formats, style, imports


@pytest.mark.parametrize("fmt", ["pdf", "svg", "png"])
def test_vector_and_raster_output(reg, fmt):
    with paper_style():
        fig, axes = plot_pd_panels(reg, ["x1", "color", ("x1", "x2")], ice=10)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
    plt.close(fig)
    head = buf.getvalue()[:200]
    magic = {"pdf": b"%PDF", "svg": b"<svg", "png": b"\x89PNG"}[fmt]
    assert magic in head or (fmt == "svg" and b"<?xml" in head)
    assert len(buf.getvalue()) > 1000


def test_importing_plotting_does_not_import_matplotlib():
    code = "import sys, pdpboot.plotting; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ on a real (tiny) bootstrap


def test_plots_of_a_real_result():
    from sklearn.tree import DecisionTreeRegressor

    import pdpboot

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (120, 3))
    y = X[:, 0] * X[:, 1] + np.sin(4 * X[:, 2]) + rng.normal(0, 0.1, 120)
    import pandas as pd

    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["g"] = rng.integers(0, 3, 120) * 10  # an integer-coded categorical feature
    res = pdpboot.bootstrap_partial_dependence(
        DecisionTreeRegressor(max_depth=4), frame[["a", "b", "g"]], pd.Series(y, name="Yield"),
        features=["a", "g", ("a", "b")], grid=Grid(7, categorical_features=["g"]), n_resamples=8, rng=1,
        execution=pdpboot.Execution(progress=False),
        statistics={"ice": 6, "heterogeneity": True, "interactions": 20})
    res = pdpboot.confidence_bands(res, confidence_level=0.8)
    node = pdpboot.get_node(res, "a").to_dataset()
    ax = plot_pd(res, "a", ice=4)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), node["pd"].isel(output=0).values)
    lower, upper = node["pd_band"].isel(output=0).values
    _assert_polygon_is_band(_fills(ax)[0], node["a"].values, lower, upper)
    assert ax.get_ylabel() == "Predicted Yield"
    assert "80 % percentile band, B = 8" in _legend_texts(ax)
    plt.close(ax.figure)
    ax = plot_pd(res, "a", centered=True)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), node["pd_centered"].isel(output=0).values)
    c_lower, c_upper = node["pd_centered_band"].isel(output=0).values
    _assert_polygon_is_band(_fills(ax)[0], node["a"].values, c_lower, c_upper)
    shifted_width = (upper - lower)[0]
    assert c_upper[0] - c_lower[0] == pytest.approx(0.0)  # the change from the anchor, not the level
    assert shifted_width > 1e-6
    plt.close(ax.figure)
    ax = plot_pd(res, "g")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "10", "20"]
    plt.close(ax.figure)
    fig, axes = plot_pd_panels(res)
    assert axes.shape == (1, 3)
    plt.close(fig)
    ax = plot_pd_contour(res, ("a", "b"), what="width")
    plt.close(ax.figure)
    ax = plot_heterogeneity(res, "a", stat="dice_sd")
    plt.close(ax.figure)
    ax = plot_h_statistic(res)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a × b"]
    plt.close(ax.figure)


def test_hatched_cells_of_mixed_heatmap_follow_uneven_numeric_grid():
    import pandas as pd
    from matplotlib.patches import Rectangle
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    import pdpboot

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"level": pd.Categorical(rng.choice(["a", "b", "c"], 120)), "num": rng.uniform(0, 10, 120)})
    y = X["num"] + (X["level"] == "b") * 2 + rng.normal(size=120)
    est = make_pipeline(make_column_transformer((OneHotEncoder(), ["level"]), remainder="passthrough"),
                        LinearRegression())
    grid = np.array([0.0, 1.0, 4.0, 9.0])  # uneven
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["level", "num", ("level", "num")], n_resamples=20,
                                               grid=Grid(custom_values={"num": grid}), rng=0)
    bands = pdpboot.confidence_bands(res)
    ax = pdpboot.plot_pd_contour(bands, ("level", "num"), mark="hatch", reference="additive")
    patches = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert patches, "an additive model's band contains the additive surface: cells are hatched"
    y_edges = np.array([-0.5, 0.5, 2.5, 6.5, 11.5])  # midpoints; end cells as wide as their neighbours' halves
    for patch in patches:
        lower, upper = patch.get_y(), patch.get_y() + patch.get_height()
        k = int(np.argmin(np.abs(y_edges - lower)))
        assert lower == pytest.approx(y_edges[k]) and upper == pytest.approx(y_edges[k + 1])
    plt.close(ax.figure)


def test_any_effect_variable_draws_like_pd():
    """An ``ale``/``ale_band`` pair (as ALE results store it) is drawn exactly like ``pd``/``pd_band``."""
    node = _regression_tree()["x1"].to_dataset()
    renamed = node.rename({"pd": "ale", "pd_band": "ale_band"})[["ale", "ale_band"]]
    renamed.attrs = node.attrs
    ax_pd = plot_pd(node[["pd", "pd_band"]].assign_attrs(node.attrs), "x1", rug=False)
    ax_ale = plot_pd(renamed, "x1", variable="ale", rug=False)
    line_pd, line_ale = ax_pd.get_lines()[0], ax_ale.get_lines()[0]
    np.testing.assert_array_equal(line_pd.get_ydata(), line_ale.get_ydata())
    np.testing.assert_array_equal(line_ale.get_ydata(), _pd_x1(X1))
    assert "ALE estimate" in [t.get_text() for t in ax_ale.get_legend().get_texts()]
    assert ax_ale.get_ylabel().startswith("ALE of")
    with pytest.raises(ValueError, match="no 'nope' variable"):
        plot_pd(node, "x1", variable="nope")
    plt.close("all")


def test_a_band_of_the_data_pd_says_so_and_names_no_resamples():
    """A debiased (target = "dgp") result is labelled as the data's PD, and its one-fit band carries no "B = 0"."""
    from sklearn.ensemble import RandomForestRegressor

    from pdpboot import debiased_partial_dependence
    from pdpboot.datasets import make_electricity_prices

    X, y = make_electricity_prices(300, rng=0)
    res = debiased_partial_dependence(RandomForestRegressor(20, min_samples_leaf=5), X, y, ["Temperature"], rng=0)
    ax = plot_pd(res, "Temperature")
    assert ax.get_ylabel() == "Price (the data's PD)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels and not any("B = 0" in t for t in labels), labels
    plt.close(ax.figure)
