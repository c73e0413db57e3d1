"""Study 1: the electricity-price example of the notebook pdpboot grew from, with its known truth.

One simulated data set (:func:`pdpboot.datasets.make_electricity_prices`), a random forest, B
bootstrap refits, 1-D PD of Temperature, Hour and Day and 2-D PD of the three pairs, computed
twice from the same refits: PD averaged over each resample's rows (``background="resample"``,
the default) and over the fixed original rows (``"original"``, the notebook's design).
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot.datasets import electricity_true_pd, electricity_true_pd_2d, make_electricity_prices

from . import _common as C
from .config import config

STUDY = "electricity"
FEATURES = ["Temperature", "Hour", "Day"]
PAIRS = [("Temperature", "Hour"), ("Temperature", "Day"), ("Hour", "Day")]
BACKGROUNDS = ("resample", "original")


def _path(ctx: C.Context, background: str):
    return ctx.study_dir(STUDY) / f"bootstrap_{background}.nc"


def compute(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
    for background in BACKGROUNDS:
        path = _path(ctx, background)
        if not ctx.needs(path):
            continue
        res = pdpboot.bootstrap_partial_dependence(
            RandomForestRegressor(n_estimators=cfg["n_trees"]), X, y, [*FEATURES, *PAIRS],
            n_resamples=cfg["B"], background=background, grid_resolution=cfg["grid_resolution"],
            n_jobs=ctx.n_jobs, rng=cfg["seed"], progress=False)
        pdpboot.save(res, path)


def _load(ctx: C.Context, background: str):
    res = pdpboot.load(_path(ctx, background))
    return pdpboot.confidence_bands(res, confidence_level=0.95, method="percentile", simultaneous=True)


def _shifted_truth(node, feature: str) -> np.ndarray:
    """True PD on the node's grid, shifted to the estimate's mean over the grid."""
    grid = node.ds[feature].values
    truth = electricity_true_pd(feature, grid)
    return truth - truth.mean() + float(node.ds["pd"].isel(output=0).mean())


def _figure_bands(ctx: C.Context, results: dict) -> dict:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style, plot_pd

    stats = {}
    with paper_style():
        fig, axes = plt.subplots(2, 3, figsize=(C.FULL_WIDTH, 3.9), layout="constrained", sharey="col")
        for i, background in enumerate(BACKGROUNDS):
            res = results[background]
            for j, feature in enumerate(FEATURES):
                ax = axes[i, j]
                node = pdpboot.get_node(res, feature)
                plot_pd(res, feature, ax=ax, legend=False)
                truth = _shifted_truth(node, feature)
                grid = node.ds[feature].values.astype(float)
                ax.plot(grid, truth, color=OKABE_ITO["vermillion"], lw=1.0, ls="--", label="true PD (common mean)")
                band = node.ds["pd_band_pointwise"].isel(output=0)
                simultaneous = node.ds["pd_band"].isel(output=0)
                stats[(background, feature)] = {
                    "width": float((band.sel(ci_bound="upper") - band.sel(ci_bound="lower")).mean()),
                    "covered": float(((band.sel(ci_bound="lower") <= truth)
                                      & (truth <= band.sel(ci_bound="upper"))).mean()),
                    "covered_sim": bool(((simultaneous.sel(ci_bound="lower") <= truth)
                                         & (truth <= simultaneous.sel(ci_bound="upper"))).all()),
                }
                if j > 0:
                    ax.set_ylabel("")
                ax.set_title(f"{feature}, PD over {'resample' if background == 'resample' else 'original'} rows",
                             fontsize=7)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=4, frameon=False)
        C.savefig(fig, ctx, "electricity_bands")
    return stats


def _figure_contours(ctx: C.Context, res) -> dict:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from pdpboot.plotting import paper_style, plot_pd_contour

    stats = {}
    with paper_style(7):
        fig, axes = plt.subplots(3, 3, figsize=(C.FULL_WIDTH, 6.0), layout="constrained")
        for j, pair in enumerate(PAIRS):
            node = pdpboot.get_node(res, pair)
            ga, gb = (node.ds[f].values.astype(float) for f in pair)
            truth = electricity_true_pd_2d(pair, ga, gb)
            est = node.ds["pd"].isel(output=0).transpose(*pair).values
            shifted = truth - truth.mean() + est.mean()
            lo = min(est.min(), shifted.min())
            hi = max(est.max(), shifted.max())
            levels = MaxNLocator(10).tick_values(lo, hi)
            plot_pd_contour(res, pair, ax=axes[0, j], levels=levels, colorbar_kw={"label": "PD estimate"})
            axes[0, j].set_title(f"estimate, B = {res.attrs['n_resamples']}", fontsize=7)
            cs = axes[1, j].contourf(ga, gb, shifted.T, levels=levels, cmap="viridis")
            axes[1, j].contour(ga, gb, shifted.T, levels=levels, colors="k", linewidths=0.5, alpha=0.6)
            fig.colorbar(cs, ax=axes[1, j], label="true PD (common mean)")
            axes[1, j].set_xlabel(pair[0])
            axes[1, j].set_ylabel(pair[1])
            axes[1, j].set_title("truth", fontsize=7)
            plot_pd_contour(res, pair, ax=axes[2, j], what="width", band="pointwise")
            axes[2, j].set_title("width of the 95 % percentile band", fontsize=7)
            band = node.ds["pd_band_pointwise"].isel(output=0).transpose("ci_bound", *pair)
            inside = (band.sel(ci_bound="lower").values <= shifted) & (shifted <= band.sel(ci_bound="upper").values)
            stats[pair] = {"covered": float(inside.mean()),
                           "width": float((band.sel(ci_bound="upper") - band.sel(ci_bound="lower")).mean())}
        C.savefig(fig, ctx, "electricity_contours")
    return stats


def render(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    results = {bg: _load(ctx, bg) for bg in BACKGROUNDS}
    stats = _figure_bands(ctx, results)
    stats2 = _figure_contours(ctx, results["resample"])
    macros = {"ElecN": str(cfg["n"]), "ElecB": str(cfg["B"]), "ElecTrees": str(cfg["n_trees"])}
    for feature in FEATURES:
        res_stat, orig_stat = stats[("resample", feature)], stats[("original", feature)]
        macros[f"Elec{feature}WidthRatio"] = C.fmt(res_stat["width"] / orig_stat["width"])
        macros[f"Elec{feature}CovRes"] = C.fmt(100 * res_stat["covered"], 0)
        macros[f"Elec{feature}CovOrig"] = C.fmt(100 * orig_stat["covered"], 0)
    ratios = [stats[("resample", f)]["width"] / stats[("original", f)]["width"] for f in FEATURES]
    macros["ElecWidthRatioMin"] = C.fmt(min(ratios))
    macros["ElecWidthRatioMax"] = C.fmt(max(ratios))
    covered_2d = [stats2[p]["covered"] for p in PAIRS]
    macros["ElecContourCovMin"] = C.fmt(100 * min(covered_2d), 0)
    macros["ElecContourCovMax"] = C.fmt(100 * max(covered_2d), 0)
    C.write_macros(ctx.out("generated", "electricity.tex"), macros, f"mode: {ctx.mode}")
