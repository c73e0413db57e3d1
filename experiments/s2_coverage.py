"""Study 2: coverage of bootstrap PD bands on known-truth data.

Scenarios (settings in :mod:`experiments.config`):

A. ``y = x1 + x2 + x1 x2 + e``, N(0, 1) features, OLS with the interaction, n = 200 and 1000;
B. Friedman #1 (10 features, noise sd 1), random forest, gradient boosting and a small neural
   network, n = 500 and 2000 (PD of x1, x3, x4);
C. ``y = x1 - x2 + e``, U(0, 1) features, OLS, n = 1000 (the setting of Molnar et al. 2023).

Each repetition draws a fresh data set, runs :func:`pdpboot.bootstrap_partial_dependence` on a
fixed 15-point grid (once per background; the same seed, so the same refits) and Molnar et al.'s
corrected t-interval (:mod:`experiments.molnar`).  The cache keeps the full-data estimate and
every resample curve, so bands of any method (and any smaller B, by taking the first resamples)
are formed at render time with :func:`pdpboot.bands.band_arrays`, the NumPy layer of
:func:`pdpboot.confidence_bands`.

Two truths per scenario: the analytic PD of the DGP, and the learner's expected PD (the mean,
over ``truth_fits`` fits on fresh data sets of size n, of the fitted model's PD averaged over a
fixed large fresh sample; also at size ``0.7 n``, the training size of the Molnar refits).
"""

from __future__ import annotations

import sys

import numpy as np
import xarray as xr
from joblib import Parallel, delayed

import pdpboot
from pdpboot.bands import band_arrays
from pdpboot.datasets import make_additive_uniform, make_friedman1, make_interaction, true_pd

from . import _common as C
from .config import config
from .learners import LEARNER_LABELS, make_learner, reseed
from .molnar import corrected_t_interval

STUDY = "coverage"
_MAKERS = {"interaction": make_interaction, "friedman1": make_friedman1, "additive_uniform": make_additive_uniform}
METHODS = {"percentile": ("percentile", False), "basic": ("basic", False), "supt": ("normal", True)}
MOLNAR_TRAIN_FRACTION = 0.7


def _data(dgp: str, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    X, y = _MAKERS[dgp](n, rng=np.random.default_rng(seed))
    return X.to_numpy(dtype=float), y.to_numpy(dtype=float)


def _curves(result: xr.DataTree, features: list[int], var: str) -> np.ndarray:
    """Stack a variable of the 1-D nodes: (..., feature, grid) with the output dim dropped."""
    arrays = []
    for f in features:
        da = pdpboot.get_node(result, f"x{f}").ds[var]
        arrays.append(da.isel(output=0).values)
    return np.stack(arrays, axis=-2)


# --------------------------------------------------------------------------- compute


def _one_repetition(sc: dict, quick: bool, seed: np.random.SeedSequence, molnar_refits: int) -> dict:
    data_seed, boot_seed, molnar_seed = seed.spawn(3)
    X, y = _data(sc["dgp"], sc["n"], data_seed)
    boot_int = int(boot_seed.generate_state(1)[0])  # same refits for every background
    custom = {f: np.asarray(sc["grid"]) for f in sc["features"]}
    out: dict = {"resamples": []}
    for background in sc["backgrounds"]:
        res = pdpboot.bootstrap_partial_dependence(
            make_learner(sc["learner"], quick), X, y, sc["features"], n_resamples=sc["B"],
            background=background, custom_values=custom, n_jobs=1, rng=boot_int, progress=False)
        out["estimate"] = _curves(res, sc["features"], "pd")
        out["resamples"].append(_curves(res, sc["features"], "pd_resamples").astype(np.float32))
    if sc["molnar"]:
        molnar = corrected_t_interval(make_learner(sc["learner"], quick), X, y, sc["features"],
                                      [np.asarray(sc["grid"])] * len(sc["features"]), n_refits=molnar_refits,
                                      train_fraction=MOLNAR_TRAIN_FRACTION, rng=molnar_seed)
        out.update({f"molnar_{k}": molnar[k] for k in ("estimate", "lower", "upper")})
    return out


def _chunk_dataset(sc: dict, reps: list[dict], first: int) -> xr.Dataset:
    dims_fg = ("feature", "grid")
    ds = xr.Dataset(
        {
            "estimate": (("rep", *dims_fg), np.stack([r["estimate"] for r in reps])),
            "resamples": (("rep", "background", "resample", *dims_fg), np.stack([np.stack(r["resamples"])
                                                                              for r in reps])),
            **{f"molnar_{k}": (("rep", *dims_fg), np.stack([r[f"molnar_{k}"] for r in reps]))
               for k in ("estimate", "lower", "upper") if sc["molnar"]},
        },
        coords={"rep": np.arange(first, first + len(reps)), "background": sc["backgrounds"],
                "feature": [f"x{f + 1}" for f in sc["features"]], "grid": np.arange(len(sc["grid"]))},
    )
    return ds


def _truth_fit(sc: dict, quick: bool, n: int, seed: np.random.SeedSequence, n_background: int) -> np.ndarray:
    """PD of one fit on a fresh data set of size n, averaged over its own fresh sample of X."""
    data_seed, fit_seed, background_seed = seed.spawn(3)
    X, y = _data(sc["dgp"], n, data_seed)
    X_background, _ = _data(sc["dgp"], n_background, background_seed)
    model = reseed(make_learner(sc["learner"], quick), np.random.default_rng(fit_seed)).fit(X, y)
    custom = {f: np.asarray(sc["grid"]) for f in sc["features"]}
    result = pdpboot.partial_dependence(model, X_background, sc["features"], custom_values=custom)
    return _curves(result, sc["features"], "pd")


def _truth(sc: dict, ctx: C.Context, cfg: dict, name: str) -> xr.Dataset:
    """Learner PD: the mean over fits of the PD averaged over an independent fresh sample per fit.

    A fresh background per fit makes the mean unbiased for E_D E_X f_D(z, X_C); one fixed background
    sample would add the same Monte Carlo error to every fit.
    """
    fit_seed, fit_seed_n1 = C.seed_sequence(cfg["seed"], name, "truth", "fresh-background").spawn(2)
    n1 = int(round(MOLNAR_TRAIN_FRACTION * sc["n"]))
    targets = [("learner_pd", sc["n"], fit_seed)] + ([("learner_pd_n1", n1, fit_seed_n1)] if sc["molnar"] else [])
    out = {}
    for key, n, seeds in targets:
        fits = Parallel(n_jobs=ctx.n_jobs)(
            delayed(_truth_fit)(sc, ctx.quick, n, s, cfg["truth_background"]) for s in seeds.spawn(sc["truth_fits"]))
        fits = np.stack(fits)
        out[key] = (("feature", "grid"), fits.mean(axis=0))
        out[f"{key}_mcse"] = (("feature", "grid"), fits.std(axis=0, ddof=1) / np.sqrt(len(fits)))
    grid = np.asarray(sc["grid"])
    out["dgp_pd"] = (("feature", "grid"), np.stack([true_pd(sc["dgp"], f"x{f + 1}", grid) for f in sc["features"]]))
    out["grid_value"] = (("grid",), grid)
    return xr.Dataset(out, coords={"feature": [f"x{f + 1}" for f in sc["features"]],
                                   "grid": np.arange(len(grid))})


def _molnar_repetition(seed: np.random.SeedSequence, n: int, fractions: list[float], refits: int,
                       grid: np.ndarray) -> np.ndarray:
    """Scenario C: Molnar et al.'s interval for several training fractions on one data set -> (fraction, 2, G)."""
    data_seed, *interval_seeds = seed.spawn(1 + len(fractions))
    X, y = _data("additive_uniform", n, data_seed)
    out = []
    for fraction, s in zip(fractions, interval_seeds):
        r = corrected_t_interval(make_learner("ols"), X, y, [0], [grid], n_refits=refits, train_fraction=fraction,
                                 rng=s)
        out.append(np.stack([r["lower"][0], r["upper"][0]]))
    return np.stack(out)


def _molnar_sensitivity(ctx: C.Context, cfg: dict) -> xr.Dataset:
    """Coverage of the corrected t-interval in scenario C as the training fraction n1/n varies."""
    sens = cfg["molnar_sensitivity"]
    sc = cfg["scenarios"]["C_n1000"]
    grid = np.asarray(sc["grid"])
    seeds = C.seed_sequence(cfg["seed"], "molnar-sensitivity").spawn(sens["R"])
    bounds = Parallel(n_jobs=ctx.n_jobs)(
        delayed(_molnar_repetition)(s, sc["n"], sens["fractions"], cfg["molnar_refits"], grid) for s in seeds)
    return xr.Dataset({"bounds": (("rep", "fraction", "ci_bound", "grid"), np.stack(bounds))},
                      coords={"fraction": sens["fractions"], "ci_bound": ["lower", "upper"]},
                      attrs={"n": sc["n"], "refits": cfg["molnar_refits"]})


def compute(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    folder = ctx.study_dir(STUDY)
    for name, sc in cfg["scenarios"].items():
        C.cached(folder / f"{name}_truth.nc", ctx, lambda sc=sc, name=name: _truth(sc, ctx, cfg, name))
        seeds = C.seed_sequence(cfg["seed"], name).spawn(sc["R"])
        for first in range(0, sc["R"], cfg["chunk"]):
            chunk = seeds[first:first + cfg["chunk"]]

            def run(chunk=chunk, first=first, sc=sc):
                reps = Parallel(n_jobs=ctx.n_jobs)(
                    delayed(_one_repetition)(sc, ctx.quick, s, cfg["molnar_refits"]) for s in chunk)
                return _chunk_dataset(sc, reps, first)

            C.cached(folder / name / f"chunk_{first:05d}.nc", ctx, run)
            print(f"  coverage {name}: {min(first + cfg['chunk'], sc['R'])}/{sc['R']} repetitions",
                  file=sys.stderr, flush=True)
    C.cached(folder / "molnar_sensitivity.nc", ctx, lambda: _molnar_sensitivity(ctx, cfg))


# --------------------------------------------------------------------------- summarise


def load_scenario(ctx: C.Context, name: str) -> tuple[xr.Dataset, xr.Dataset]:
    folder = ctx.study_dir(STUDY)
    chunks = sorted((folder / name).glob("chunk_*.nc"))
    if not chunks:
        raise FileNotFoundError(f"No cached repetitions for scenario {name} in {folder / name}; run compute.")
    reps = xr.concat([C.load_dataset(p) for p in chunks], dim="rep")
    return reps, C.load_dataset(folder / f"{name}_truth.nc")


def bands(estimate: np.ndarray, resamples: np.ndarray, method: str, level: float) -> tuple[np.ndarray, ...]:
    """Bands of every repetition: estimate (R, F, G), resamples (R, B, F, G) -> lower, upper, se."""
    band_method, simultaneous = METHODS[method]
    lower = np.empty_like(estimate)
    upper = np.empty_like(estimate)
    se = np.empty_like(estimate)
    for r in range(estimate.shape[0]):
        lo, hi, s, _, _ = band_arrays(estimate[r], resamples[r].astype(float), level=level, method=band_method,
                                      simultaneous=simultaneous)
        lower[r], upper[r], se[r] = lo, hi, s
    return lower, upper, se


def _coverage(lower, upper, truth) -> dict:
    """Coverage summaries of bands (R, F, G) for a truth (F, G), with Monte Carlo SEs."""
    inside = (lower <= truth) & (truth <= upper)
    n_rep = inside.shape[0]
    per_rep_point = inside.mean(axis=(1, 2))
    per_rep_edge = inside[:, :, [0, -1]].mean(axis=(1, 2))
    per_rep_sim = inside.all(axis=2).mean(axis=1)
    mcse = lambda v: float(v.std(ddof=1) / np.sqrt(n_rep)) if n_rep > 1 else float("nan")  # noqa: E731
    return {
        "pointwise": float(per_rep_point.mean()), "pointwise_mcse": mcse(per_rep_point),
        "edge": float(per_rep_edge.mean()), "edge_mcse": mcse(per_rep_edge),
        "simultaneous": float(per_rep_sim.mean()), "simultaneous_mcse": mcse(per_rep_sim),
        "by_grid": inside.mean(axis=(0, 1)),
    }


def summarize(ctx: C.Context) -> list[dict]:
    """One record per (scenario, background, method, B) with coverage against both truths."""
    cfg = config(STUDY, ctx.quick)
    level = cfg["level"]
    records = []
    for name, sc in cfg["scenarios"].items():
        reps, truth = load_scenario(ctx, name)
        est = reps["estimate"].values
        sd_est = est.std(axis=0, ddof=1)
        truths = {"learner": truth["learner_pd"].values, "dgp": truth["dgp_pd"].values}
        base = {"scenario": name, "label": sc["label"], "dgp": sc["dgp"], "learner": sc["learner"], "n": sc["n"],
                "R": int(est.shape[0])}
        accuracy = {f"bias_over_se_{k}": float(np.mean(np.abs(est.mean(axis=0) - t) / sd_est))
                    for k, t in truths.items()}
        b_values = [sc["B"]] + ([cfg["small_B"]] if sc["B"] > cfg["small_B"] else [])
        for background in sc["backgrounds"]:
            res_all = reps["resamples"].sel(background=background).values
            for b in b_values:
                res = res_all[:, :b]
                for method in METHODS:
                    lower, upper, se = bands(est, res, method, level)
                    rec = dict(base, background=background, method=method, B=b, **accuracy,
                               width=float((upper - lower).mean()),
                               se_ratio=float(np.mean(se.mean(axis=0) / sd_est)))
                    for key, t in truths.items():
                        for stat, value in _coverage(lower, upper, t).items():
                            rec[f"{key}_{stat}"] = value
                    records.append(rec)
        if not sc["molnar"]:
            continue
        lower, upper = reps["molnar_lower"].values, reps["molnar_upper"].values
        rec = dict(base, background="holdout", method="molnar", B=cfg["molnar_refits"], **accuracy,
                   width=float((upper - lower).mean()), se_ratio=float("nan"))
        for key, t in {"learner": truth["learner_pd_n1"].values, "dgp": truths["dgp"]}.items():
            for stat, value in _coverage(lower, upper, t).items():
                rec[f"{key}_{stat}"] = value
        records.append(rec)
    return records


# --------------------------------------------------------------------------- render

_SCENARIO_ORDER = ["A_n200", "A_n1000", "C_n1000", "B_rf_n500", "B_rf_n2000", "B_gbm_n500", "B_gbm_n2000",
                   "B_mlp_n500", "B_mlp_n2000"]


_NONE = {"learner_pointwise": float("nan"), "dgp_pointwise": float("nan"), "width": float("nan"),
         "learner_pointwise_mcse": 0.0, "dgp_pointwise_mcse": 0.0}


def _find(records, **keys) -> dict:
    for rec in records:
        if all(rec.get(k) == v for k, v in keys.items()):
            return rec
    if keys.get("method") == "molnar":
        return _NONE
    raise KeyError(keys)


def _setting(sc_name: str, sc: dict) -> str:
    return f"{sc['label']}: {LEARNER_LABELS[sc['learner']]}"


def _table_coverage(ctx: C.Context, records: list[dict], cfg: dict) -> dict:
    """Main coverage table; returns the largest Monte Carlo SE of its entries per scenario label."""
    lines = [r"\begin{tabular}{@{}llrr rrrr r rrrr@{}}", r"\toprule",
             r" & & & & \multicolumn{5}{c}{vs.\ learner PD} & \multicolumn{4}{c}{vs.\ DGP PD} \\",
             r"\cmidrule(lr){5-9}\cmidrule(l){10-13}",
             r"Setting & Background & $n$ & $R$ & Perc. & Basic & Edges & M23 & Sup-$t$ & Perc. & Edges & Sup-$t$ "
             r"& M23 \\",
             r"\midrule"]
    worst = {"A": 0.0, "B": 0.0, "C": 0.0}
    previous = None
    for name in [s for s in _SCENARIO_ORDER if s in cfg["scenarios"]]:
        sc = cfg["scenarios"][name]
        if previous is not None and previous != sc["label"]:
            lines.append(r"\addlinespace")
        previous = sc["label"]
        molnar = _find(records, scenario=name, method="molnar")
        for i, background in enumerate(sc["backgrounds"]):
            perc, basic, supt = (_find(records, scenario=name, background=background, method=m, B=sc["B"])
                                 for m in ("percentile", "basic", "supt"))
            cells = [perc["learner_pointwise"], basic["learner_pointwise"], perc["learner_edge"]]
            m_cell = C.fmt(molnar["learner_pointwise"]) if i == 0 else ""
            m_dgp = C.fmt(molnar["dgp_pointwise"]) if i == 0 else ""
            for rec, keys in ((perc, ("learner_pointwise", "learner_edge", "dgp_pointwise", "dgp_edge")),
                              (basic, ("learner_pointwise",)), (supt, ("learner_simultaneous", "dgp_simultaneous"))):
                worst[sc["label"]] = max(worst[sc["label"]], *(rec[f"{k}_mcse"] for k in keys))
            if i == 0:
                worst[sc["label"]] = max(worst[sc["label"]], molnar["learner_pointwise_mcse"],
                                         molnar["dgp_pointwise_mcse"])
            setting = _setting(name, sc) if i == 0 else ""
            n_cell = str(sc["n"]) if i == 0 else ""
            lines.append(" & ".join([setting, background, n_cell, str(perc["R"]), *map(C.fmt, cells), m_cell,
                                     C.fmt(supt["learner_simultaneous"]), C.fmt(perc["dgp_pointwise"]),
                                     C.fmt(perc["dgp_edge"]), C.fmt(supt["dgp_simultaneous"]), m_dgp]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "coverage.tex"), "\n".join(lines))
    return worst


def _table_width(ctx: C.Context, records: list[dict], cfg: dict) -> None:
    lines = [r"\begin{tabular}{@{}llr rrr rr rr@{}}", r"\toprule",
             r" & & & \multicolumn{3}{c}{Mean width} & \multicolumn{2}{c}{$B = " + str(cfg["small_B"]) +
             r"$} & \multicolumn{2}{c}{$|\text{bias}|/\text{SE}$} \\",
             r"\cmidrule(lr){4-6}\cmidrule(lr){7-8}\cmidrule(l){9-10}",
             r"Setting & Background & $n$ & Perc. & Sup-$t$ & M23 & Perc. & Sup-$t$ & Learner & DGP \\",
             r"\midrule"]
    previous = None
    for name in [s for s in _SCENARIO_ORDER if s in cfg["scenarios"]]:
        sc = cfg["scenarios"][name]
        if previous is not None and previous != sc["label"]:
            lines.append(r"\addlinespace")
        previous = sc["label"]
        molnar = _find(records, scenario=name, method="molnar")
        for i, background in enumerate(sc["backgrounds"]):
            perc = _find(records, scenario=name, background=background, method="percentile", B=sc["B"])
            supt = _find(records, scenario=name, background=background, method="supt", B=sc["B"])
            small = ["", ""]
            if sc["B"] > cfg["small_B"]:
                small = [C.fmt(_find(records, scenario=name, background=background, method="percentile",
                                     B=cfg["small_B"])["learner_pointwise"]),
                         C.fmt(_find(records, scenario=name, background=background, method="supt",
                                     B=cfg["small_B"])["learner_simultaneous"])]
            lines.append(" & ".join([
                _setting(name, sc) if i == 0 else "", background, str(sc["n"]) if i == 0 else "",
                C.fmt(perc["width"], 3), C.fmt(supt["width"], 3), C.fmt(molnar["width"], 3) if i == 0 else "",
                *small,
                C.fmt(perc["bias_over_se_learner"]) if i == 0 else "",
                C.fmt(perc["bias_over_se_dgp"]) if i == 0 else "",
            ]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "coverage_width.tex"), "\n".join(lines))


def _figure_by_grid(ctx: C.Context, records: list[dict], cfg: dict) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    panels = [("A_n1000", "A: OLS + inter., $n$ = 1000"), ("C_n1000", "C: OLS, $n$ = 1000"),
              ("B_rf_n2000", "B: forest, $n$ = 2000"), ("B_gbm_n2000", "B: boosting, $n$ = 2000"),
              ("B_mlp_n2000", "B: network, $n$ = 2000")]
    panels = [p for p in panels if p[0] in cfg["scenarios"]]
    colors = {"percentile": OKABE_ITO["blue"], "basic": OKABE_ITO["orange"], "molnar": OKABE_ITO["green"]}
    with paper_style():
        fig, axes = plt.subplots(2, len(panels), figsize=(C.FULL_WIDTH, 3.3), sharey=True, sharex=True,
                                 layout="constrained")
        for j, (name, title) in enumerate(panels):
            sc = cfg["scenarios"][name]
            for i, truth in enumerate(("learner", "dgp")):
                ax = axes[i, j]
                ax.axhline(cfg["level"], color="0.5", lw=0.8, ls=":")
                for method in ("percentile", "basic", "molnar"):
                    if method == "molnar" and not sc["molnar"]:
                        continue
                    if method == "molnar":
                        rec = _find(records, scenario=name, method="molnar")
                    else:
                        rec = _find(records, scenario=name, background="resample", method=method, B=sc["B"])
                    ax.plot(np.linspace(0, 1, len(rec[f"{truth}_by_grid"])), rec[f"{truth}_by_grid"],
                            color=colors[method], marker="o", ms=2, lw=1,
                            label={"percentile": "percentile", "basic": "basic", "molnar": "M23 $t$"}[method])
                if "original" in sc["backgrounds"]:
                    rec = _find(records, scenario=name, background="original", method="percentile", B=sc["B"])
                    ax.plot(np.linspace(0, 1, len(rec[f"{truth}_by_grid"])), rec[f"{truth}_by_grid"],
                            color=OKABE_ITO["vermillion"], ls="--", lw=1, label="percentile, original rows")
                ax.set_ylim(0, 1.02)
                if i == 0:
                    ax.set_title(title, fontsize=6.5)
                if j == 0:
                    ax.set_ylabel(f"coverage of\n{'learner' if truth == 'learner' else 'DGP'} PD")
                if i == 1:
                    ax.set_xlabel("grid position")
        handles, labels = [], []
        for ax in axes.ravel():
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="outside upper center", ncols=4, frameon=False)
        C.savefig(fig, ctx, "coverage_by_grid")


def _figure_example(ctx: C.Context, cfg: dict) -> None:
    """One repetition of scenario B (random forest, n = 500): band, learner PD and DGP PD."""
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    name = "B_rf_n500"
    reps, truth = load_scenario(ctx, name)
    sc = cfg["scenarios"][name]
    est = reps["estimate"].values[:1]
    lower, upper, _ = bands(est, reps["resamples"].sel(background="resample").values[:1], "percentile", cfg["level"])
    s_lower, s_upper, _ = bands(est, reps["resamples"].sel(background="resample").values[:1], "supt", cfg["level"])
    x = truth["grid_value"].values
    with paper_style():
        fig, axes = plt.subplots(1, len(sc["features"]), figsize=(C.FULL_WIDTH, 2.1), layout="constrained")
        for j, ax in enumerate(axes):
            ax.fill_between(x, s_lower[0, j], s_upper[0, j], color=OKABE_ITO["blue"], alpha=0.15, lw=0,
                            label="95 % sup-$t$ band")
            ax.fill_between(x, lower[0, j], upper[0, j], color=OKABE_ITO["blue"], alpha=0.35, lw=0,
                            label="95 % percentile band")
            ax.plot(x, est[0, j], color=OKABE_ITO["blue"], label="PD estimate")
            ax.plot(x, truth["learner_pd"].values[j], color="k", ls="--", lw=1, label="learner PD")
            ax.plot(x, truth["dgp_pd"].values[j], color=OKABE_ITO["vermillion"], lw=1, label="DGP PD")
            ax.set_xlabel(str(truth["feature"].values[j]))
        axes[0].set_ylabel("PD of $y$")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=5, frameon=False)
        C.savefig(fig, ctx, "coverage_example")


def render(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    records = summarize(ctx)
    worst = _table_coverage(ctx, records, cfg)
    _table_width(ctx, records, cfg)
    _figure_by_grid(ctx, records, cfg)
    _figure_example(ctx, cfg)
    sc = cfg["scenarios"]
    get = lambda name, bg, m, key: _find(records, scenario=name, background=bg, method=m,  # noqa: E731
                                         B=sc[name]["B"])[key]
    macros = {
        "CovReps": str(min(r["R"] for r in records if r["label"] in "AC")),
        "CovRepsFlex": str(min(r["R"] for r in records if r["label"] == "B")),
        "CovRepsFlexMax": str(max(r["R"] for r in records if r["label"] == "B")),
        "CovB": str(sc["A_n1000"]["B"]), "CovBFlex": str(sc["B_rf_n500"]["B"]), "CovSmallB": str(cfg["small_B"]),
        "CovTruthFits": str(sc["A_n1000"]["truth_fits"]), "CovTruthFitsFlex": str(sc["B_rf_n500"]["truth_fits"]),
        "CovTruthRows": str(cfg["truth_background"]), "CovMolnarRefits": str(cfg["molnar_refits"]),
        "CovMaxMCSEAC": C.fmt(max(worst["A"], worst["C"]), 3), "CovMaxMCSEB": C.fmt(worst["B"], 3),
        "CovAResPerc": C.fmt(get("A_n1000", "resample", "percentile", "learner_pointwise")),
        "CovAOrigPerc": C.fmt(get("A_n1000", "original", "percentile", "learner_pointwise")),
        "CovAResSupt": C.fmt(get("A_n1000", "resample", "supt", "learner_simultaneous")),
        "CovAOrigSupt": C.fmt(get("A_n1000", "original", "supt", "learner_simultaneous")),
        "CovASmallResPerc": C.fmt(get("A_n200", "resample", "percentile", "learner_pointwise")),
        "CovASmallOrigPerc": C.fmt(get("A_n200", "original", "percentile", "learner_pointwise")),
        "CovCResPerc": C.fmt(get("C_n1000", "resample", "percentile", "learner_pointwise")),
        "CovCResSupt": C.fmt(get("C_n1000", "resample", "supt", "learner_simultaneous")),
        "CovCOrigPerc": C.fmt(get("C_n1000", "original", "percentile", "learner_pointwise")),
        "CovCOrigSupt": C.fmt(get("C_n1000", "original", "supt", "learner_simultaneous")),
        "CovAMolnar": C.fmt(_find(records, scenario="A_n1000", method="molnar")["learner_pointwise"]),
        "CovAResPercSmallB": C.fmt(_find(records, scenario="A_n1000", background="resample", method="percentile",
                                         B=min(cfg["small_B"], sc["A_n1000"]["B"]))["learner_pointwise"]),
        "CovAResSuptSmallB": C.fmt(_find(records, scenario="A_n1000", background="resample", method="supt",
                                         B=min(cfg["small_B"], sc["A_n1000"]["B"]))["learner_simultaneous"]),
        "CovCMolnar": C.fmt(_find(records, scenario="C_n1000", method="molnar")["learner_pointwise"]),
        "CovCMolnarWidthRatio": C.fmt(_find(records, scenario="C_n1000", method="molnar")["width"]
                                      / get("C_n1000", "resample", "percentile", "width")),
    }
    for learner, word in (("rf", "RF"), ("gbm", "GBM"), ("mlp", "MLP")):
        for n, size in ((500, "Small"), (2000, "Large")):
            name = f"B_{learner}_n{n}"
            macros[f"Cov{word}{size}Perc"] = C.fmt(get(name, "resample", "percentile", "learner_pointwise"))
            macros[f"Cov{word}{size}Supt"] = C.fmt(get(name, "resample", "supt", "learner_simultaneous"))
            macros[f"Cov{word}{size}PercDGP"] = C.fmt(get(name, "resample", "percentile", "dgp_pointwise"))
            macros[f"Cov{word}{size}BiasDGP"] = C.fmt(get(name, "resample", "percentile", "bias_over_se_dgp"))
            macros[f"Cov{word}{size}Basic"] = C.fmt(get(name, "resample", "basic", "learner_pointwise"))
            macros[f"Cov{word}{size}EdgeDGP"] = C.fmt(get(name, "resample", "percentile", "dgp_edge"))
            macros[f"Cov{word}{size}SuptDGP"] = C.fmt(get(name, "resample", "supt", "dgp_simultaneous"))
            macros[f"Cov{word}{size}Shrink"] = C.fmt(_shrinkage_slope(ctx, name))
    macros.update(_setting_macros(ctx, cfg))
    macros.update(_molnar_sensitivity_macros(ctx, cfg))
    C.write_macros(ctx.out("generated", "coverage.tex"), macros, f"mode: {ctx.mode}")


def _shrinkage_slope(ctx: C.Context, name: str) -> float:
    """Slope of (mean of the refits - estimate) on (estimate - learner PD), pooled over grid points.

    Negative: the mean of the refits (a bagged estimate) is pulled back towards the learner's PD.
    """
    reps, truth = load_scenario(ctx, name)
    est = reps["estimate"].values
    shift = reps["resamples"].sel(background="resample").values.astype(float).mean(axis=1) - est
    error = est - truth["learner_pd"].values
    shift = shift - shift.mean(axis=0)
    error = error - error.mean(axis=0)
    return float((shift * error).sum() / (error * error).sum())


_FRACTION_WORDS = {0.5: "Fifty", 0.632: "SixtyThree", 0.7: "Seventy", 0.8: "Eighty"}


def _molnar_sensitivity_macros(ctx: C.Context, cfg: dict) -> dict:
    """Pointwise coverage of the corrected t-interval in scenario C for each training fraction.

    The truth is the DGP's PD, which equals the learner's PD at any training size for unbiased OLS.
    """
    ds = C.load_dataset(ctx.study_dir(STUDY) / "molnar_sensitivity.nc")
    truth = true_pd("additive_uniform", "x1", np.asarray(cfg["scenarios"]["C_n1000"]["grid"]))
    macros = {"CovMolnarSensReps": str(ds.sizes["rep"])}
    for fraction in ds["fraction"].values:
        b = ds["bounds"].sel(fraction=fraction)
        inside = (b.sel(ci_bound="lower").values <= truth) & (truth <= b.sel(ci_bound="upper").values)
        word = _FRACTION_WORDS[round(float(fraction), 3)]
        macros[f"CovMolnar{word}"] = C.fmt(float(inside.mean()))
        macros[f"CovMolnarFrac{word}"] = f"{float(fraction):g}"
    return macros


def _setting_macros(ctx: C.Context, cfg: dict) -> dict:
    """The settings quoted in the text: sample sizes, grid, learners, the Molnar et al. constants."""
    sc = cfg["scenarios"]
    rf, gbm, mlp = (make_learner(k, ctx.quick) for k in ("rf", "gbm", "mlp"))
    return {
        "CovANsmall": str(sc["A_n200"]["n"]), "CovANlarge": str(sc["A_n1000"]["n"]), "CovCN": str(sc["C_n1000"]["n"]),
        "CovBNsmall": str(sc["B_rf_n500"]["n"]), "CovBNlarge": str(sc["B_rf_n2000"]["n"]),
        "CovGridPoints": str(len(sc["A_n1000"]["grid"])), "CovTrainPercent": C.fmt(100 * MOLNAR_TRAIN_FRACTION, 0),
        "CovHoldoutPercent": C.fmt(100 * (1 - MOLNAR_TRAIN_FRACTION), 0),
        "CovTrainFraction": C.fmt(MOLNAR_TRAIN_FRACTION, 1),
        "CovRFTrees": str(rf.n_estimators), "CovRFLeaf": str(rf.min_samples_leaf), "CovGBMRounds": str(gbm.max_iter),
        "CovMLPUnits": str(mlp[-1].hidden_layer_sizes[0]),
    }
