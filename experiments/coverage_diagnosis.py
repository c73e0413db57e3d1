"""Why least squares covers a little below 95 % and the network at n = 500 above it: two measurements.

Part of the coverage study (:mod:`experiments.coverage` computes and renders it; settings in
``config("coverage")["diagnosis"]``).  Every output is compact (no resample curves are kept).

Least squares (scenarios A and C).  The refits of least squares have a closed form, so many data
sets with thousands of resamples each are affordable: for resample row counts ``c`` the refit is
``beta* = (D' C D)^{-1} D' C y`` and, the design being linear in every column except the product
``x1 * x2``, the PD over the resample's rows at ``x_j = z`` is the design row of the
count-weighted column means with ``x_j`` set to ``z`` (one factor of the product is then constant)
times ``beta*`` -- what :func:`pdpboot.bootstrap_partial_dependence` computes for
:class:`experiments.learners.LeastSquares`, checked in ``experiments/tests/test_experiments.py``.  Bands are formed
by the package's :func:`pdpboot.bands.band_arrays` from the first ``b`` resamples, for each ``b``
of ``B``.  The band ``estimate -/+ z * SD``, with SD the standard deviation of the estimate over
the R data sets (the true standard error), has no bootstrap error at all.

Network (scenario B, n = 500).  ``sd_fits`` fits on fresh data sets of size n give the estimator's
true SD (PD over the training rows, as the estimate) and the learner's PD (over a fresh background,
as the study's truth); as many fits on ``round(fraction * n)`` rows give the SD of a learner trained
on as many distinct rows as a bootstrap resample holds on average (0.632 n).  ``R`` data sets with
``B`` resamples each give the bootstrap SE to compare with both.
"""

from __future__ import annotations

import sys

import numpy as np
import xarray as xr
from joblib import Parallel, delayed

import pdpboot
from pdpboot import Grid
from pdpboot.bands import band_arrays

from . import _common as C
from .learners import make_learner, reseed

#: Methods of the least-squares measurement: (band_arrays method, simultaneous).
OLS_METHODS = {"percentile": ("percentile", False), "normal": ("normal", False), "supt": ("normal", True)}


def predicted_percentile_coverage(n_resamples: int, level: float = 0.95) -> float:
    """Coverage of a percentile interval from ``n_resamples`` draws when the bootstrap is exact.

    If the truth sits in the resample distribution like one more draw, the interval between the
    order statistics of (1-based) ranks ``h`` and ``B + 1 - h`` covers it with probability
    ``(B + 1 - 2h) / (B + 1)``; NumPy's default (linear) quantile puts the alpha/2 quantile at
    ``h = (B - 1) alpha / 2 + 1`` (interpolated ranks counted the same way).
    """
    b = n_resamples
    h = (b - 1) * (1 - level) / 2 + 1
    return (b + 1 - 2 * h) / (b + 1)


# --------------------------------------------------------------------------- least squares


def ols_design(X: np.ndarray, interaction: bool) -> np.ndarray:
    cols = [np.ones(len(X)), X[:, 0], X[:, 1]]
    if interaction:
        cols.append(X[:, 0] * X[:, 1])
    return np.column_stack(cols)


def ols_bootstrap_pd(X: np.ndarray, y: np.ndarray, counts: np.ndarray, grid: np.ndarray,
                     interaction: bool) -> np.ndarray:
    """PD of x1 and x2 of least-squares refits, averaged over each resample's rows: (B, 2, G).

    ``counts`` (B, n): row multiplicities of each resample (all ones: the estimate itself).
    """
    D = ols_design(X, interaction)
    n, p = D.shape
    counts = np.asarray(counts, dtype=float)
    gram = (counts @ (D[:, :, None] * D[:, None, :]).reshape(n, p * p)).reshape(-1, p, p)
    beta = np.linalg.solve(gram, (counts @ (D * y[:, None]))[..., None])[..., 0]  # (B, p)
    means = counts @ X[:, :2] / counts.sum(axis=1, keepdims=True)  # (B, 2) column means over the resample
    out = np.empty((len(counts), 2, len(grid)))
    for j in (0, 1):
        other = means[:, 1 - j][:, None]  # (B, 1)
        z = np.broadcast_to(grid[None, :], (len(counts), len(grid)))
        x1, x2 = (z, other) if j == 0 else (other, z)
        pd = beta[:, [0]] + beta[:, [1]] * x1 + beta[:, [2]] * x2
        if interaction:
            pd = pd + beta[:, [3]] * x1 * x2
        out[:, j] = pd
    return out


def _resample_counts(gen: np.random.Generator, n: int, b: int) -> np.ndarray:
    idx = gen.integers(0, n, size=(b, n)) + n * np.arange(b)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n)


def _ols_repetition(sc: dict, seed: np.random.SeedSequence, b_values: list[int], level: float,
                    data) -> dict:
    data_seed, boot_seed = seed.spawn(2)
    X, y = data(sc, sc["n"], data_seed)
    grid = np.asarray(sc["grid"], dtype=float)
    interaction = sc["learner"] == "ols_interaction"
    est = ols_bootstrap_pd(X, y, np.ones((1, len(X))), grid, interaction)[0]
    res = ols_bootstrap_pd(X, y, _resample_counts(np.random.default_rng(boot_seed), len(X), max(b_values)), grid,
                           interaction)
    lower = np.empty((len(b_values), len(OLS_METHODS), *est.shape))
    upper = np.empty_like(lower)
    se = np.empty((len(b_values), *est.shape))
    for i, b in enumerate(b_values):
        for k, (method, simultaneous) in enumerate(OLS_METHODS.values()):
            lo, hi, sd, _, _ = band_arrays(est, res[:b], level=level, method=method, simultaneous=simultaneous,
                                           simultaneous_method="sup-t")
            lower[i, k], upper[i, k] = lo, hi
        se[i] = sd
    return {"estimate": est, "lower": lower, "upper": upper, "se": se}


def compute_ols(ctx: C.Context, cfg: dict, name: str, data, dgp_pd) -> xr.Dataset:
    """Coverage of the learner's PD (exact: the DGP's PD) by percentile/normal/sup-t bands for each b."""
    diag = cfg["diagnosis"]["ols"]
    sc = cfg["scenarios"][name]
    b_values = list(diag["B"])
    seeds = C.seed_sequence(cfg["seed"], name, "diagnosis").spawn(diag["R"])
    reps = Parallel(n_jobs=ctx.n_jobs, batch_size=16)(
        delayed(_ols_repetition)(sc, s, b_values, cfg["level"], data) for s in seeds)
    truth = np.stack([dgp_pd(sc, f, np.asarray(sc["grid"])) for f in sc["features"]])
    est = np.stack([r["estimate"] for r in reps])
    lower, upper = np.stack([r["lower"] for r in reps], axis=2), np.stack([r["upper"] for r in reps], axis=2)
    inside = (lower <= truth) & (truth <= upper)  # (b, method, rep, feature, grid)
    dims = ("B", "method", "rep", "feature", "grid")
    return xr.Dataset(
        {"inside": (dims, inside), "width": (dims[:3], (upper - lower).mean(axis=(3, 4))),
         "estimate": (("rep", "feature", "grid"), est), "truth": (("feature", "grid"), truth),
         "se": (("B", "rep", "feature", "grid"), np.stack([r["se"] for r in reps], axis=1).astype(np.float32))},
        coords={"B": b_values, "method": list(OLS_METHODS), "feature": [f"x{f + 1}" for f in sc["features"]]},
        attrs={"scenario": name, "n": sc["n"], "level": cfg["level"]})


# --------------------------------------------------------------------------- network


def _pd_of(model, X_background: np.ndarray, sc: dict) -> np.ndarray:
    custom = {f: np.asarray(sc["grid"]) for f in sc["features"]}
    result = pdpboot.partial_dependence(model, X_background, sc["features"], grid=Grid(custom_values=custom))
    return np.stack([pdpboot.get_node(result, f"x{f}").ds["pd"].isel(output=-1).values for f in sc["features"]])


def _single_fit(sc: dict, n: int, seed: np.random.SeedSequence, n_background: int, data) -> tuple:
    """One fit on a fresh data set of size n: (PD over its training rows, PD over a fresh background)."""
    data_seed, fit_seed, background_seed = seed.spawn(3)
    X, y = data(sc, n, data_seed)
    model = reseed(make_learner(sc["learner"]), np.random.default_rng(fit_seed)).fit(X, y)
    X_background, _ = data(sc, n_background, background_seed)
    return _pd_of(model, X, sc), _pd_of(model, X_background, sc)


def _mlp_repetition(sc: dict, seed: np.random.SeedSequence, b: int, data) -> dict:
    data_seed, boot_seed = seed.spawn(2)
    X, y = data(sc, sc["n"], data_seed)
    res = pdpboot.bootstrap_partial_dependence(
        make_learner(sc["learner"]), X, y, sc["features"], n_resamples=b,
        grid=Grid(custom_values={f: np.asarray(sc["grid"]) for f in sc["features"]}),
        rng=int(boot_seed.generate_state(1)[0]),
        resampling=pdpboot.Resampling("bootstrap", background="resample"),
        execution=pdpboot.Execution(n_jobs=1, progress=False))
    curves = {v: np.stack([pdpboot.get_node(res, f"x{f}").ds[v].isel(output=-1).values for f in sc["features"]],
                          axis=-2) for v in ("pd", "pd_resamples")}
    return {"estimate": curves["pd"], "se": curves["pd_resamples"].std(axis=0, ddof=1),
            "resample_mean": curves["pd_resamples"].mean(axis=0)}


def mlp_fit_sizes(cfg: dict) -> list[int]:
    """Training sizes of the network's single fits: n and ``round(fraction * n)``."""
    diag = cfg["diagnosis"]["mlp"]
    n = cfg["scenarios"][diag["scenario"]]["n"]
    return [n, int(round(diag["fraction"] * n))]


def compute_mlp_fits(ctx: C.Context, cfg: dict, data, size: int) -> xr.Dataset:
    """``sd_fits`` single fits of the network on fresh data sets of ``size`` rows."""
    diag = cfg["diagnosis"]["mlp"]
    sc = cfg["scenarios"][diag["scenario"]]
    seeds = C.seed_sequence(cfg["seed"], "diagnosis-mlp-fits", size).spawn(diag["sd_fits"])
    fits = Parallel(n_jobs=ctx.n_jobs)(delayed(_single_fit)(sc, size, s, cfg["truth_background"], data) for s in seeds)
    dims = ("fit", "feature", "grid")
    return xr.Dataset({"own_rows": (dims, np.stack([f[0] for f in fits])),
                       "fresh_background": (dims, np.stack([f[1] for f in fits]))},
                      coords={"feature": [f"x{f + 1}" for f in sc["features"]]},
                      attrs={"scenario": diag["scenario"], "size": size})


def compute_mlp_reps(ctx: C.Context, cfg: dict, data, first: int, count: int) -> xr.Dataset:
    """Repetitions ``first .. first + count - 1`` of the network's bootstrap (B = ``diag["B"]``)."""
    diag = cfg["diagnosis"]["mlp"]
    sc = cfg["scenarios"][diag["scenario"]]
    seeds = C.seed_sequence(cfg["seed"], "diagnosis-mlp-reps").spawn(diag["R"])[first:first + count]
    reps = Parallel(n_jobs=ctx.n_jobs)(delayed(_mlp_repetition)(sc, s, diag["B"], data) for s in seeds)
    dims = ("rep", "feature", "grid")
    return xr.Dataset({k: (dims, np.stack([r[k] for r in reps])) for k in ("estimate", "se", "resample_mean")},
                      coords={"rep": np.arange(first, first + len(reps)),
                              "feature": [f"x{f + 1}" for f in sc["features"]]},
                      attrs={"B": diag["B"]})


def summarize_mlp(fits: list[xr.Dataset], reps: xr.Dataset, level: float) -> dict:
    """SD of the estimate at n and at 0.632 n, bootstrap SE, and the coverage these SEs imply."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    n, n_small = (int(f.attrs["size"]) for f in fits)
    own_n = fits[0]["own_rows"].values
    sd_n = own_n.std(axis=0, ddof=1)
    sd_small = fits[1]["own_rows"].values.std(axis=0, ddof=1)
    truth = fits[0]["fresh_background"].values.mean(axis=0)
    se_boot = reps["se"].values
    est = reps["estimate"].values
    n_rep = est.shape[0]
    inside = np.abs(est - truth) <= z * se_boot
    per_rep = inside.mean(axis=(1, 2))
    ratio = se_boot.mean(axis=0) / sd_n
    # Coverage a normal band would have with SE = ratio * true SD, if the estimate were N(truth, SD^2).
    implied = float(np.mean(2 * norm.cdf(z * ratio) - 1))
    # Monte Carlo SEs of the two ratios: bootstrap over the fits (and the repetitions), 200 draws.
    gen = np.random.default_rng(0)
    own_small = fits[1]["own_rows"].values
    draws = []
    with np.errstate(divide="ignore", invalid="ignore"):  # tiny smoke runs can draw one fit only
        for _ in range(200):
            i, k, r = (gen.integers(0, m, m) for m in (len(own_n), len(own_small), n_rep))
            sd_i = own_n[i].std(axis=0, ddof=1)
            draws.append(((se_boot[r].mean(axis=0) / sd_i).mean(),
                          (own_small[k].std(axis=0, ddof=1) / sd_i).mean()))
    draws = np.asarray(draws)
    draws = draws[np.isfinite(draws).all(axis=1)]
    return {
        "R": int(n_rep), "B": int(reps.attrs["B"]), "fits": int(own_n.shape[0]), "n": n, "n_small": n_small,
        "se_ratio": float(ratio.mean()), "sd_small_ratio": float((sd_small / sd_n).mean()),
        "se_ratio_mcse": float(draws[:, 0].std(ddof=1)), "sd_small_ratio_mcse": float(draws[:, 1].std(ddof=1)),
        "normal_boot_se": float(per_rep.mean()), "normal_boot_se_mcse": float(per_rep.std(ddof=1) / np.sqrt(n_rep)),
        "implied": implied,
        "offset_over_sd": float(np.mean(np.abs(own_n.mean(axis=0) - truth) / sd_n)),
    }


# --------------------------------------------------------------------------- study interface

STUDY = "diagnosis"
#: Compact files ``render`` reads.
ARCHIVE = ("summary/*.nc",)


def compute(ctx: C.Context) -> None:
    from .config import config
    from .coverage import dgp_pd, simulate

    cfg = config("coverage", ctx.quick)
    folder = ctx.study_dir(STUDY)
    diag = cfg["diagnosis"]
    for name in diag["ols"]["scenarios"]:
        C.cached(folder / f"ols_{name}.nc", ctx, lambda name=name: compute_ols(ctx, cfg, name, simulate, dgp_pd))
        print(f"  diagnosis: least squares {name} done", file=sys.stderr, flush=True)
    for size in mlp_fit_sizes(cfg):
        C.cached(folder / f"mlp_fits_{size}.nc", ctx, lambda size=size: compute_mlp_fits(ctx, cfg, simulate, size))
    chunk = diag["mlp"]["chunk"]
    for first in range(0, diag["mlp"]["R"], chunk):
        count = min(chunk, diag["mlp"]["R"] - first)
        C.cached(folder / f"mlp_reps_{first:05d}.nc", ctx,
                 lambda first=first, count=count: compute_mlp_reps(ctx, cfg, simulate, first, count))
        print(f"  diagnosis: network {first + count}/{diag['mlp']['R']} repetitions", file=sys.stderr, flush=True)


def _ols_summary(ds: xr.Dataset) -> xr.Dataset:
    """Per-repetition coverage of every (B, method) and of the band with the true SE; SE ratios as attrs."""
    from scipy.stats import norm

    est, truth = ds["estimate"].values, ds["truth"].values
    sd_true = est.std(axis=0, ddof=1)
    z = norm.ppf(0.5 + float(ds.attrs["level"]) / 2)
    inside = ds["inside"]
    out = xr.Dataset({
        "pointwise": inside.mean(["feature", "grid"]).astype(np.float32),
        "simultaneous": inside.all("grid").mean("feature").astype(np.float32),
        "width": ds["width"].astype(np.float32),
        "true_se": (("rep",), (np.abs(est - truth) <= z * sd_true).mean(axis=(1, 2)).astype(np.float32)),
    }, attrs=dict(ds.attrs))
    for b in ds["B"].values:
        out.attrs[f"se_ratio_{int(b)}"] = float((ds["se"].sel(B=b).values.mean(axis=0) / sd_true).mean())
    out.attrs["bias_over_sd"] = float(np.mean(np.abs(est.mean(axis=0) - truth) / sd_true))
    return out


def _load_mlp(ctx: C.Context, cfg: dict) -> tuple[list[xr.Dataset], xr.Dataset]:
    folder = ctx.study_dir(STUDY)
    reps = xr.concat([C.load_dataset(p) for p in sorted(folder.glob("mlp_reps_*.nc"))], dim="rep")
    return [C.load_dataset(folder / f"mlp_fits_{size}.nc") for size in mlp_fit_sizes(cfg)], reps


def summarize(ctx: C.Context) -> None:
    """``summary/ols_<scenario>.nc`` (per-repetition coverage) and ``summary/mlp.nc`` (per repetition, SD ratios)."""
    from .config import config

    cfg = config("coverage", ctx.quick)
    folder = ctx.study_dir(STUDY)
    for name in cfg["diagnosis"]["ols"]["scenarios"]:
        C.save_dataset(_ols_summary(C.load_dataset(folder / f"ols_{name}.nc")), folder / "summary" / f"ols_{name}.nc",
                       compress=True)
    fits, reps = _load_mlp(ctx, cfg)
    from scipy.stats import norm

    z = norm.ppf(0.5 + cfg["level"] / 2)
    truth = fits[0]["fresh_background"].values.mean(axis=0)
    inside = np.abs(reps["estimate"].values - truth) <= z * reps["se"].values
    out = xr.Dataset({"normal_boot_se": (("rep",), inside.mean(axis=(1, 2)).astype(np.float32))},
                     attrs={k: v for k, v in summarize_mlp(fits, reps, cfg["level"]).items()
                            if not k.startswith("normal_boot_se")})
    C.save_dataset(out, folder / "summary" / "mlp.nc", compress=True)


def render(ctx: C.Context) -> None:
    """Macros ``Diag...`` (``generated/diagnosis.tex``) quoted where the paper explains the coverage."""
    from .config import config

    cfg = config("coverage", ctx.quick)
    diag = cfg["diagnosis"]
    folder = ctx.study_dir(STUDY) / "summary"
    words = {"A_n200": "ASmall", "A_n1000": "A", "C_n1000": "C"}
    b_values = [int(b) for b in diag["ols"]["B"]]
    macros = {"DiagReps": str(diag["ols"]["R"]), "DiagBSmall": str(min(b_values)), "DiagBMid": str(b_values[1]),
              "DiagBLarge": str(max(b_values))}
    for b, word in zip(sorted(b_values), ("Small", "Mid", "Large")):
        macros[f"DiagPredicted{word}"] = C.fmt(predicted_percentile_coverage(b, cfg["level"]), 3)
    for name in diag["ols"]["scenarios"]:
        ds = C.load_dataset(folder / f"ols_{name}.nc")
        key = words.get(name, name.replace("_", ""))
        for b, word in zip(sorted(b_values), ("Small", "Mid", "Large")):
            for method, mword in (("percentile", "Perc"), ("normal", "Normal")):
                mean, se = C.mean_se(ds["pointwise"].sel({"B": b, "method": method}).values)
                macros[f"Diag{key}{mword}{word}"] = C.fmt(mean, 3)
                macros[f"Diag{key}{mword}{word}MCSE"] = C.fmt(se, 3)
            mean, se = C.mean_se(ds["simultaneous"].sel({"B": b, "method": "supt"}).values)
            macros[f"Diag{key}Supt{word}"] = C.fmt(mean, 3)
            macros[f"Diag{key}SEratio{word}"] = C.fmt(ds.attrs[f"se_ratio_{b}"], 3)
        gain = (ds["pointwise"].sel({"B": max(b_values), "method": "percentile"}).values.astype(float)
                - ds["pointwise"].sel({"B": min(b_values), "method": "percentile"}).values)
        mean, se = C.mean_se(gain)
        macros[f"Diag{key}Gain"], macros[f"Diag{key}GainMCSE"] = C.fmt(mean, 3), C.fmt(se, 3)
        mean, se = C.mean_se(ds["true_se"].values)
        macros[f"Diag{key}TrueSE"], macros[f"Diag{key}TrueSEMCSE"] = C.fmt(mean, 3), C.fmt(se, 3)
        macros[f"Diag{key}BiasOverSD"] = C.fmt(ds.attrs["bias_over_sd"], 3)
    mlp = C.load_dataset(folder / "mlp.nc")
    a = mlp.attrs
    mean, se = C.mean_se(mlp["normal_boot_se"].values)
    macros.update({
        "DiagMLPReps": str(a["R"]), "DiagMLPB": str(a["B"]), "DiagMLPFits": str(a["fits"]), "DiagMLPN": str(a["n"]),
        "DiagMLPNsmall": str(a["n_small"]), "DiagMLPSEratio": C.fmt(a["se_ratio"]),
        "DiagMLPSEratioMCSE": C.fmt(a["se_ratio_mcse"]), "DiagMLPSDsmallRatioMCSE": C.fmt(a["sd_small_ratio_mcse"]),
        "DiagMLPSDsmallRatio": C.fmt(a["sd_small_ratio"]), "DiagMLPImplied": C.fmt(a["implied"]),
        "DiagMLPNormal": C.fmt(mean), "DiagMLPNormalMCSE": C.fmt(se, 3),
        "DiagMLPOffset": C.fmt(a["offset_over_sd"]),
        "DiagMLPRootRatio": C.fmt(np.sqrt(a["n"] / a["n_small"])),
    })
    C.write_macros(ctx.out("generated", "diagnosis.tex"), macros, f"mode: {ctx.mode}")
