"""Render every pdpboot plot type from real (small) bootstraps, for visual checking.

Run from the repository root::

    python experiments/gallery.py            # PNGs (+ one PDF and one SVG) in experiments/gallery/

Compute and render are separated: :func:`compute` runs the bootstraps (B = 30, about a minute on
two cores), :func:`render` draws single-column (3.3 in) figures with :func:`paper_style`, plus a
full-width (7 in) panel grid.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib

from pdpboot import Grid

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pdpboot  # noqa: E402
from pdpboot.datasets import make_electricity_prices  # noqa: E402
from pdpboot.plotting import (  # noqa: E402
    paper_style,
    plot_h_statistic,
    plot_heterogeneity,
    plot_ice,
    plot_importance,
    plot_pd,
    plot_pd_contour,
    plot_pd_panels,
    plot_target,
)

OUT = Path(__file__).resolve().parent / "gallery"
B = 30
SINGLE = (3.3, 2.5)  # single-column figure, inches
DPI = 150  # enough to check the figures; paper_style saves at 300 dpi by default


def compute(n_resamples: int = B, rng: int = 0) -> dict:
    """Bootstrap a regressor (electricity prices, with a categorical Day) and a classifier.

    Returns
    -------
    dict
        "regression" and "classification": results after ``confidence_bands(simultaneous=True)``.
    """
    X, y = make_electricity_prices(800, rng=rng)
    forest = RandomForestRegressor(n_estimators=60, min_samples_leaf=5, n_jobs=1)
    reg = pdpboot.bootstrap_partial_dependence(
        forest, X, y, features=["Temperature", "Hour", "Day", ("Temperature", "Hour"), ("Day", "Hour")],
        grid=Grid(25, categorical_features=["Day"]), n_resamples=n_resamples,
        rng=rng, execution=pdpboot.Execution(progress=False),
        statistics={"ice": 60, "heterogeneity": True, "interactions": 150})
    data = load_breast_cancer(as_frame=True)
    Xc = data.data[["mean radius", "mean concave points", "worst texture"]]
    clf = pdpboot.bootstrap_partial_dependence(
        RandomForestClassifier(n_estimators=60, min_samples_leaf=3, n_jobs=1), Xc, data.target,
        features=["mean concave points", "worst texture", ("mean concave points", "worst texture")],
        n_resamples=n_resamples, grid=Grid(20), rng=rng, execution=pdpboot.Execution(progress=False),
        statistics={"ice": 40})
    # a skewed feature (Seattle-like daily rain: 57 % of days dry, a tail to 18 mm) for the quantile-spaced axis
    gen = np.random.default_rng(rng)
    rain = np.where(gen.uniform(size=800) < 0.57, 0.0, np.minimum(gen.gamma(0.7, 4.0, 800), 18.0)).round(1)
    temp = gen.normal(16, 7, 800)
    Xr = pd.DataFrame({"precipitation": rain, "temp_max": temp})
    yr = 0.3 * temp - 12 * np.log1p(3 * rain) + gen.normal(0, 1.0, 800)
    skew = pdpboot.bootstrap_partial_dependence(
        RandomForestRegressor(n_estimators=60, min_samples_leaf=5, n_jobs=1), Xr, yr,
        features=["precipitation", ("temp_max", "precipitation")], n_resamples=n_resamples,
        grid=Grid(25, percentiles=(0, 1)), rng=rng, execution=pdpboot.Execution(progress=False))
    return {"regression": pdpboot.confidence_bands(reg, simultaneous=True),
            "classification": pdpboot.confidence_bands(clf, simultaneous=True),
            "skewed": pdpboot.confidence_bands(skew), "data": (X, y, forest.fit(X, y))}


def _single(name: str, draw, *, size=SINGLE, formats=("png",)) -> None:
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    draw(ax)
    for fmt in formats:
        fig.savefig(OUT / f"{name}.{fmt}", dpi=DPI)
    plt.close(fig)


def render(results: dict) -> list[Path]:
    """Draw every plot type into ``OUT``; returns the files written."""
    OUT.mkdir(exist_ok=True)
    reg, clf = results["regression"], results["classification"]
    with paper_style():
        _single("pd_numeric_band_ice", lambda ax: plot_pd(reg, "Temperature", ax=ax, ice=30),
                formats=("png", "pdf", "svg"))
        _single("pd_numeric_simultaneous_lines", lambda ax: plot_pd(reg, "Hour", ax=ax,
                                                                    style={"simultaneous": {"kind": "lines"}}))
        _single("pd_categorical", lambda ax: plot_pd(reg, "Day", ax=ax))
        _single("pd_categorical_bars", lambda ax: plot_pd(reg, "Day", ax=ax, style={"line": {"kind": "bars"}},
                                                          band="pointwise"))
        _single("pd_centered_ice", lambda ax: plot_pd(reg, "Hour", ax=ax, ice=40, centered=True))
        _single("contour_estimate", lambda ax: plot_pd_contour(reg, ("Temperature", "Hour"), ax=ax),
                formats=("png", "pdf"))
        _single("contour_width", lambda ax: plot_pd_contour(reg, ("Temperature", "Hour"), ax=ax, what="width"))
        _single("contour_additive_hatch", lambda ax: plot_pd_contour(reg, ("Temperature", "Hour"), ax=ax,
                                                                     mark="hatch"))
        _single("heatmap_categorical", lambda ax: plot_pd_contour(reg, ("Day", "Hour"), ax=ax))
        _single("classifier_pd", lambda ax: plot_pd(clf, "mean concave points", ax=ax, ice=30))
        _single("classifier_contour", lambda ax: plot_pd_contour(clf, ("mean concave points", "worst texture"),
                                                                 ax=ax))
        _single("heterogeneity_cice", lambda ax: plot_heterogeneity(reg, "Hour", stat="cice_sd", ax=ax))
        _single("h_statistic", lambda ax: plot_h_statistic(reg, ax=ax), size=(3.3, 1.8))
        _single("h_statistic_overall", lambda ax: plot_h_statistic(reg, stat="h2_overall", ax=ax),
                size=(3.3, 1.8))
        X, y, fitted = results["data"]
        _single("importance", lambda ax: plot_importance(pdpboot.pd_importance(reg), ax=ax), size=(3.3, 1.8))
        _single("ice_fitted_model", lambda ax: plot_ice(fitted, X, "Temperature", result=reg, ice=30, ax=ax))
        fig = plt.figure(figsize=(3.3, 3.2), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
        plot_target(reg, X, y, "Temperature", ax=(top, bottom))
        fig.savefig(OUT / "target_temperature.png", dpi=DPI)
        plt.close(fig)
        skew = results["skewed"]
        for scale in ("linear", "auto"):
            _single(f"skewed_pd_{scale}", lambda ax, s=scale: plot_pd(skew, "precipitation", ax=ax, scale=s))
            _single(f"skewed_contour_{scale}", lambda ax, s=scale: plot_pd_contour(
                skew, ("temp_max", "precipitation"), ax=ax, style={"surface": {"levels": 20}}, scale=s))
        fig, _ = plot_pd_panels(reg, n_cols=3, panel_kw={"size": (2.4, 2.0)})
        fig.savefig(OUT / "panel_grid.png", dpi=DPI)
        plt.close(fig)
        fig, _ = plot_pd_panels(clf, n_cols=3, panel_kw={"size": (2.4, 2.0)})
        fig.savefig(OUT / "panel_grid_classifier.png", dpi=DPI)
        plt.close(fig)
    return sorted(OUT.iterdir())


def main() -> None:
    start = time.perf_counter()
    results = compute()
    computed = time.perf_counter()
    files = render(results)
    print(f"compute {computed - start:.1f} s, render {time.perf_counter() - computed:.1f} s")
    for path in files:
        print(f"  {path.relative_to(OUT.parent)}  {path.stat().st_size / 1024:.0f} kB")


if __name__ == "__main__":
    main()
