"""Study 1: the electricity-price example of the notebook pdpboot grew from, with its known truth.

One simulated data set (:func:`pdpboot.datasets.make_electricity_prices`), a random forest, B
bootstrap refits, 1-D PD of Temperature, Hour and Day and 2-D PD of the three pairs, computed
twice from the same refits: PD averaged over each resample's rows (``background="resample"``,
the default) and over the fixed original rows (``"original"``, the notebook's design).  Day (seven
levels) is a categorical feature, so its surfaces are heatmaps, not contours.

Bands are compared with the exact true PD at its exact level (not shifted to the estimate's mean:
a shift would remove the level error that averaging over fixed rows leaves out).  The macros
``ElecOtherSD<feature>`` give the standard deviation, over the rows, of the other features' terms of
the additive truth: the part of the estimate's error that fixed rows freeze (a level shift).
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestRegressor

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import make_electricity_prices

from . import _common as C
from .config import config
from .truth import true_pd

STUDY = "electricity"
FEATURES = ["Temperature", "Hour", "Day"]
PAIRS = [("Temperature", "Hour"), ("Temperature", "Day"), ("Hour", "Day")]
BACKGROUNDS = ("resample", "original")
#: Compact files ``render`` reads: the results with their bands and without the resample curves.
ARCHIVE = ("bands_*.nc",)


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
            n_resamples=cfg["B"], grid=Grid(cfg["grid_resolution"], categorical_features=["Day"]), rng=cfg["seed"],
            resampling=pdpboot.Resampling(background=background),
            execution=pdpboot.Execution(n_jobs=ctx.n_jobs, progress=False))
        pdpboot.save(res, path)


def summarize(ctx: C.Context) -> None:
    """Bands (95 % percentile, pointwise and simultaneous) of each cache, without the resample curves."""
    for background in BACKGROUNDS:
        res = pdpboot.confidence_bands(pdpboot.load(_path(ctx, background)), confidence_level=0.95,
                                       method="percentile", simultaneous=True)
        pdpboot.save(C.compact_tree(res), ctx.study_dir(STUDY) / f"bands_{background}.nc")


def _load(ctx: C.Context, background: str):
    return pdpboot.load(ctx.study_dir(STUDY) / f"bands_{background}.nc")


def _truth(node, feature: str) -> np.ndarray:
    """Exact true PD on the node's grid, at its exact level."""
    return true_pd("electricity", feature, node.ds[feature].values.astype(float))


def other_feature_sd() -> dict[str, float]:
    """SD over the rows of the sum of the other features' terms of the additive truth, per feature.

    Averaging over fixed rows freezes exactly this part of the error of a PD estimate (a level
    shift of the whole curve): its variance over samples of n rows is this SD squared over n.
    Midpoint rules on 200 000 points (Temperature, Hour) and the 7 days.
    """
    m = 200_000
    temp = true_pd("electricity", "Temperature", (np.arange(m) + 0.5) * 40.0 / m)
    hour = true_pd("electricity", "Hour", (np.arange(m) + 0.5) * 24.0 / m)
    day = true_pd("electricity", "Day", np.arange(7.0))
    var = {"Temperature": temp.var(), "Hour": hour.var(), "Day": day.var()}
    return {f: float(np.sqrt(sum(v for k, v in var.items() if k != f))) for f in FEATURES}


def _figure_bands(ctx: C.Context, results: dict) -> dict:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import paper_style, plot_pd

    stats = {}
    with paper_style():
        fig, axes = plt.subplots(2, 3, figsize=(C.FULL_WIDTH, 3.9), layout="constrained", sharey="col")
        for i, background in enumerate(BACKGROUNDS):
            res = results[background]
            for j, feature in enumerate(FEATURES):
                ax = axes[i, j]
                node = pdpboot.get_node(res, feature)
                plot_pd(res, feature, ax=ax, legend=False)
                truth = _truth(node, feature)
                grid = node.ds[feature].values.astype(float)
                # Black, dotted: the simultaneous band is drawn dashed in the accent colour.
                ax.plot(grid, truth, color="k", lw=1.3, ls="none" if feature == "Day" else ":",
                        marker="_" if feature == "Day" else None, ms=10, mew=1.5, label="true PD", zorder=5)
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


def _edges(values: np.ndarray, categorical: bool) -> np.ndarray:
    """Cell edges of a heatmap axis: level positions 0..k-1 for categories, midpoints for numbers."""
    if categorical:
        return np.arange(len(values) + 1) - 0.5
    v = np.asarray(values, dtype=float)
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def _draw_truth(ax, pair, ga, gb, truth, levels):
    """The true surface in the estimate's style: contours for two numeric features, else a heatmap."""
    from matplotlib.ticker import MaxNLocator

    # Numeric axes get the ticks plot_pd_contour gives the estimate and width panels of the same column
    # (matplotlib's default steps, at most 4 intervals), so the three rows of a column read alike.
    def ticks(axis):
        axis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))

    if "Day" in pair:
        cat = [f == "Day" for f in pair]
        from matplotlib.colors import BoundaryNorm

        mappable = ax.pcolormesh(_edges(ga, cat[0]), _edges(gb, cat[1]), truth.T, cmap="viridis",
                                 norm=BoundaryNorm(levels, ncolors=256), rasterized=True)
        if cat[1]:
            ax.set_yticks(np.arange(len(gb)), [str(int(v)) for v in gb])
        if not cat[0]:
            ticks(ax.xaxis)
        return mappable
    mappable = ax.contourf(ga, gb, truth.T, levels=levels, cmap="viridis")
    ax.contour(ga, gb, truth.T, levels=levels, colors="k", linewidths=0.5, alpha=0.6)
    ticks(ax.yaxis)
    ticks(ax.xaxis)
    return mappable


def _figure_contours(ctx: C.Context, res) -> dict:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from pdpboot.plotting import paper_style, plot_pd_contour

    stats = {}
    with paper_style(8.5):  # tick labels 7.5 pt: 6 pt was too small to read in print
        fig, axes = plt.subplots(3, 3, figsize=(C.FULL_WIDTH, 6.6), layout="constrained")
        for j, pair in enumerate(PAIRS):
            node = pdpboot.get_node(res, pair)
            ga, gb = (node.ds[f].values.astype(float) for f in pair)
            truth = true_pd("electricity", tuple(pair), (ga, gb))
            est = node.ds["pd"].isel(output=0).transpose(*pair).values
            levels = MaxNLocator(10).tick_values(min(est.min(), truth.min()), max(est.max(), truth.max()))
            # Contour labels off: the colour bar gives the levels, and inline labels collided with the rug.
            surface = {"levels": levels, "rasterized": True} if "Day" in pair else {"levels": levels}
            plot_pd_contour(res, pair, ax=axes[0, j],
                            style={"labels": False, "colorbar": {"label": "PD estimate"}, "surface": surface})
            axes[0, j].set_title(f"estimate, B = {res.attrs['n_resamples']}", fontsize=8)
            mappable = _draw_truth(axes[1, j], pair, ga, gb, truth, levels)
            fig.colorbar(mappable, ax=axes[1, j], label="true PD")
            axes[1, j].set_xlabel(pair[0])
            axes[1, j].set_ylabel(pair[1])
            axes[1, j].set_title("truth (exact level)", fontsize=8)
            plot_pd_contour(res, pair, ax=axes[2, j], what="width", band="pointwise",
                            style={"labels": False, "colorbar": {"label": "band width"},
                                   **({"surface": {"rasterized": True}} if "Day" in pair else {})})
            axes[2, j].set_title("width of the 95 % percentile band", fontsize=8)
            band = node.ds["pd_band_pointwise"].isel(output=0).transpose("ci_bound", *pair)
            inside = (band.sel(ci_bound="lower").values <= truth) & (truth <= band.sel(ci_bound="upper").values)
            for ax in axes[:, j]:
                ax.grid(False)  # grid lines over a heatmap read as cell borders
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
    other_sd = other_feature_sd()
    for feature in FEATURES:
        res_stat, orig_stat = stats[("resample", feature)], stats[("original", feature)]
        macros[f"Elec{feature}WidthRatio"] = C.fmt(res_stat["width"] / orig_stat["width"])
        macros[f"Elec{feature}CovRes"] = C.fmt(100 * res_stat["covered"], 0)
        macros[f"Elec{feature}CovOrig"] = C.fmt(100 * orig_stat["covered"], 0)
        macros[f"Elec{feature}SimRes"] = "yes" if res_stat["covered_sim"] else "no"
        macros[f"Elec{feature}SimOrig"] = "yes" if orig_stat["covered_sim"] else "no"
        macros[f"ElecOtherSD{feature}"] = C.fmt(other_sd[feature], 1)
        # Standard error of the frozen level term, other_sd / sqrt(n), beside the band's half-width.
        macros[f"ElecFrozenSE{feature}"] = C.fmt(other_sd[feature] / np.sqrt(cfg["n"]), 2)
        macros[f"Elec{feature}HalfWidthOrig"] = C.fmt(orig_stat["width"] / 2, 2)
        macros[f"Elec{feature}HalfWidthRes"] = C.fmt(res_stat["width"] / 2, 2)
        # Predicted resample-rows half-width: the fixed-rows one with the frozen term's variance added back.
        frozen = 1.959964 * other_sd[feature] / np.sqrt(cfg["n"])
        macros[f"Elec{feature}HalfWidthPred"] = C.fmt(float(np.hypot(orig_stat["width"] / 2, frozen)), 2)
    macros["ElecNoiseSD"] = C.fmt(4.0, 0)  # make_electricity_prices: 2 * N(0, 2^2) noise
    ratios = [stats[("resample", f)]["width"] / stats[("original", f)]["width"] for f in FEATURES]
    macros["ElecWidthRatioMin"] = C.fmt(min(ratios))
    macros["ElecWidthRatioMax"] = C.fmt(max(ratios))
    covered_2d = [stats2[p]["covered"] for p in PAIRS]
    macros["ElecContourCovMin"] = C.fmt(100 * min(covered_2d), 0)
    macros["ElecContourCovMax"] = C.fmt(100 * max(covered_2d), 0)
    C.write_macros(ctx.out("generated", "electricity.tex"), macros, f"mode: {ctx.mode}")
