"""Study 5: real data.

Bike sharing (regression, 8,645 hours of 2011): ``HistGradientBoostingRegressor`` with
``categorical_features="from_dtype"``; 1-D PD bands for temperature, humidity and hour, a 2-D
temperature x humidity surface with its band-width map, and ICE heterogeneity.  Hours of the same
day share weather and demand shocks, so the resampling unit is the day (a cluster bootstrap,
``resampling="group"``, 365 days), not the hour.

ANES 1996 (classification, 944 voters, Clinton vs Dole): ``HistGradientBoostingClassifier``;
PD of the probability of a Dole vote, with bands (plain bootstrap of the respondents, the default for classifiers).
"""

from __future__ import annotations

from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import load_anes96, load_bike_sharing
from pdpboot.heterogeneity import ice_heterogeneity

from . import _common as C
from .config import config

STUDY = "real_data"
BIKE_FEATURES = ["temp", "hum", "hr"]
BIKE_PAIR = ("temp", "hum")
ANES_FEATURES = ["selfLR", "PID", "age", "income"]
_PID_SHORT = ["SD", "WD", "ID", "I", "IR", "WR", "SR"]  # strong Democrat ... strong Republican


def _bike_model(max_iter: int) -> HistGradientBoostingRegressor:
    return HistGradientBoostingRegressor(categorical_features="from_dtype", max_iter=max_iter, learning_rate=0.1,
                                         early_stopping=False)


def _anes_model(max_iter: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(categorical_features="from_dtype", max_iter=max_iter, learning_rate=0.05,
                                          max_depth=3, early_stopping=False)


def _holdout_score(model, X, y, seed: int, stratify=None) -> float:
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=stratify)
    return float(model.set_params(random_state=seed).fit(X_tr, y_tr).score(X_te, y_te))


def compute(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    folder = ctx.study_dir(STUDY)
    bike = cfg["bike"]
    path = folder / "bike.nc"
    if ctx.needs(path):
        X, y = load_bike_sharing()
        res = pdpboot.bootstrap_partial_dependence(
            _bike_model(bike["max_iter"]), X, y, [*BIKE_FEATURES, BIKE_PAIR], n_resamples=bike["B"],
            grid=Grid(bike["grid_resolution"]),
            rng=cfg["seed"],
            resampling=pdpboot.Resampling("group", groups=X["day"].to_numpy(), max_background=bike["max_background"]),
            execution=pdpboot.Execution(n_jobs=ctx.n_jobs, progress=False),
            statistics={"ice": bike["n_ice"], "heterogeneity": True})
        res.attrs["holdout_r2"] = _holdout_score(_bike_model(bike["max_iter"]), X, y, cfg["seed"])
        pdpboot.save(res, path)
    anes = cfg["anes"]
    path = folder / "anes.nc"
    if ctx.needs(path):
        X, y = load_anes96()
        res = pdpboot.bootstrap_partial_dependence(
            _anes_model(anes["max_iter"]), X, y, ANES_FEATURES, n_resamples=anes["B"],
            grid=Grid(anes["grid_resolution"]), rng=cfg["seed"],
            resampling="bootstrap",  # as archived (before resampling="auto" made classifiers subsample)
            execution=pdpboot.Execution(n_jobs=ctx.n_jobs, progress=False))
        res.attrs["holdout_accuracy"] = _holdout_score(_anes_model(anes["max_iter"]), X, y, cfg["seed"], stratify=y)
        pdpboot.save(res, path)


def _figure_bike(ctx: C.Context, res, het) -> dict:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import paper_style, plot_heterogeneity, plot_pd, plot_pd_contour

    labels = {"temp": "temperature (normalised)", "hum": "relative humidity", "hr": "hour of day"}
    with paper_style(7):
        fig, axes = plt.subplots(2, 3, figsize=(C.FULL_WIDTH, 4.3), layout="constrained")
        for ax, feature in zip(axes[0], BIKE_FEATURES):
            plot_pd(res, feature, ax=ax, legend=False, ice=feature == "hr", style={"ice": {"rasterized": True}})
            ax.set_xlabel(labels[feature])
        handles, legend_labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, legend_labels, loc="outside upper center", ncols=3, frameon=False)
        axes[0, 1].set_ylabel("")
        axes[0, 2].set_ylabel("")
        # No inline contour labels (the colour bar gives the levels): they collided with the decile rug.
        plot_pd_contour(res, BIKE_PAIR, ax=axes[1, 0], style={"labels": False})
        axes[1, 0].set_title("PD estimate", fontsize=7)
        plot_pd_contour(res, BIKE_PAIR, ax=axes[1, 1], what="width", band="pointwise",
                        style={"colorbar": {"label": "band width (bikers)"}})
        axes[1, 1].set_title("width of the 95 % percentile band", fontsize=7)
        for ax in axes[1, :2]:
            ax.set_xlabel(labels[BIKE_PAIR[0]])
        # The width map shares the PD map's axes: one y label, clear of the PD map's colour-bar label.
        axes[1, 0].set_ylabel(labels[BIKE_PAIR[1]])
        axes[1, 1].set_ylabel("")
        plot_heterogeneity(het, "hr", stat="cice_sd", ax=axes[1, 2], legend=False)
        axes[1, 2].set_title("spread of centred ICE curves of hour", fontsize=7)
        axes[1, 2].set_xlabel(labels["hr"])
        C.savefig(fig, ctx, "bike")
    node = pdpboot.get_node(res, "temp").ds
    band = node["pd_band_pointwise"].isel(output=0)
    width = band.sel(ci_bound="upper") - band.sel(ci_bound="lower")
    return {"temp_width_min": float(width.min()), "temp_width_max": float(width.max())}


def _figure_anes(ctx: C.Context, res) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import paper_style, plot_pd

    labels = {"selfLR": "self-placement (1 liberal, 7 conservative)", "PID": "party identification",
              "age": "age", "income": "income bracket"}
    with paper_style(7):
        fig = plt.figure(figsize=(C.FULL_WIDTH, 2.5), layout="constrained")
        axes = fig.subplots(1, 4, gridspec_kw={"width_ratios": [1, 1.5, 1, 1]}, sharey=True)
        for ax, feature in zip(axes, ANES_FEATURES):
            plot_pd(res, feature, ax=ax, output="Dole", legend=False)
            ax.set_xlabel(labels[feature], fontsize=6)
            if feature == "PID":
                ax.set_xticks(range(len(_PID_SHORT)), _PID_SHORT, rotation=0, ha="center")
            if feature != "selfLR":
                ax.set_ylabel("")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "anes")


#: Compact files ``render`` reads: results with bands (and the bike data's heterogeneity), no resamples.
ARCHIVE = ("bike_bands.nc", "bike_het.nc", "anes_bands.nc")


def summarize(ctx: C.Context) -> None:
    """Bands of both results and the heterogeneity statistics of the bike data, without resample curves."""
    folder = ctx.study_dir(STUDY)
    bike = pdpboot.load(folder / "bike.nc")
    pdpboot.save(C.compact_tree(pdpboot.confidence_bands(bike, simultaneous=True)), folder / "bike_bands.nc")
    pdpboot.save(C.compact_tree(ice_heterogeneity(bike)), folder / "bike_het.nc")
    anes = pdpboot.confidence_bands(pdpboot.load(folder / "anes.nc"), simultaneous=True)
    pdpboot.save(C.compact_tree(anes), folder / "anes_bands.nc")


def render(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    folder = ctx.study_dir(STUDY)
    bike_bands = pdpboot.load(folder / "bike_bands.nc")
    bike = bike_bands
    het = pdpboot.load(folder / "bike_het.nc")
    stats = _figure_bike(ctx, bike_bands, het)
    anes = pdpboot.load(folder / "anes_bands.nc")
    _figure_anes(ctx, anes)
    sel = pdpboot.get_node(anes, "selfLR").ds
    dole = sel["pd"].sel(output="Dole")
    band = sel["pd_band_pointwise"].sel(output="Dole")
    hr = pdpboot.get_node(het, "hr").ds
    macros = {
        "BikeB": str(cfg["bike"]["B"]), "BikeRows": str(bike.attrs["n_rows"]),
        "BikeIters": str(cfg["bike"]["max_iter"]),
        "BikeRsq": C.fmt(bike.attrs["holdout_r2"]),
        "BikeTempWidthMin": C.fmt(stats["temp_width_min"], 0), "BikeTempWidthMax": C.fmt(stats["temp_width_max"], 0),
        "BikeHetIndex": C.fmt(float(hr["heterogeneity_index"].isel(output=0)), 0),
        "BikeHetIndexLo": C.fmt(float(hr["heterogeneity_index_band"].isel(output=0).sel(ci_bound="lower")), 0),
        "BikeHetIndexHi": C.fmt(float(hr["heterogeneity_index_band"].isel(output=0).sel(ci_bound="upper")), 0),
        "AnesB": str(cfg["anes"]["B"]), "AnesRows": str(anes.attrs["n_rows"]),
        "AnesAccuracy": C.fmt(anes.attrs["holdout_accuracy"]),
        "AnesLeft": C.fmt(float(dole.isel(selfLR=0))), "AnesLeftLo": C.fmt(float(band.isel(selfLR=0)[0])),
        "AnesLeftHi": C.fmt(float(band.isel(selfLR=0)[1])),
        "AnesRight": C.fmt(float(dole.isel(selfLR=-1))), "AnesRightLo": C.fmt(float(band.isel(selfLR=-1)[0])),
        "AnesRightHi": C.fmt(float(band.isel(selfLR=-1)[1])),
    }
    C.write_macros(ctx.out("generated", "real_data.tex"), macros, f"mode: {ctx.mode}")
