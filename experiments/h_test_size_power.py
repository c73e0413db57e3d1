"""Study (stats): size and power of the refit test of "no (j, k) interaction" (:func:`pdpboot.h_statistic_test`).

Null DGPs (no x1 x2 interaction; ``eps ~ N(0, 0.5^2)``, features U(-1, 1) unless said):

``additive``
    ``y = x1 - x2 + eps`` (:func:`pdpboot.datasets.make_additive_uniform`, noise 0.5).
``audit``
    ``y = 2 x1 + sin(3 x2) + 1.5 x3 x4 + eps`` (the audit's null: nonlinear main effect and an
    interaction elsewhere).

Alternatives:

``weak``
    ``y = x1 + x2 + 0.2 x1 x2 + eps``, Gaussian features (:func:`make_interaction` minus 0.8 x1 x2).
``goldstein``
    Goldstein et al.'s ``0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0] + eps``, pair (x2, x3).

Learners: OLS with an ``x1 x2`` column (so noise creates a spurious H2), histogram gradient
boosting, random forest.  Per setting: rejection rate at alpha = 0.05 with its Monte Carlo SE
``sqrt(p (1 - p) / R)``, the Kolmogorov-Smirnov distance of the null p-values from the
discrete uniform law of ``(1 + k) / (1 + K)``, the mean p-value and the ratio of the mean
observed H2 to the mean null H2 (about 1 for a test of the right size).

Two null models of :func:`pdpboot.h_statistic_test`: ``smooth`` (the default: Gaussian-process
reference fit; caches ``smooth_<learner>_<dgp>_<first>.nc``) and ``plugin`` (the learner's own
fit minus its interaction part, with the scale-calibrated p-value of the same refits; caches
``<learner>_<dgp>_<first>.nc``, written by the earlier run).  Both use the same data sets and
test seeds per repetition, so their rows are paired.

    python -m experiments.h_test_size_power [--quick] [--learners ols gbm rf] [--null-model smooth]
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from pdpboot import Execution
from pdpboot.datasets import make_additive_uniform, make_goldstein, make_interaction
from pdpboot.engine.hstats import GP_MAX_ROWS, gaussian_process_fit, interaction_part, interaction_statistics
from pdpboot.interaction import SMOOTH_BACKGROUND_ROWS, h_statistic_test

from . import _common as C
from .learners import LEARNER_LABELS, LeastSquares

STUDY = "htest"
SETTINGS = {
    "full": {"seed": 71, "n": 300, "n_max": 100, "alpha": 0.05, "chunk": 20,
             "reps": {"ols": {"null": 200, "power": 100, "K": 39},
                      "gbm": {"null": 200, "power": 50, "K": 39},
                      "rf": {"null": 200, "power": 50, "K": 39}}},
    "quick": {"seed": 71, "n": 120, "n_max": 40, "alpha": 0.05, "chunk": 2,
              "reps": {"ols": {"null": 2, "power": 1, "K": 9},
                       "gbm": {"null": 2, "power": 1, "K": 9},
                       "rf": {"null": 2, "power": 1, "K": 9}}},
}
#: name: (maker, pair, has an interaction)
SETTINGS_DGP = {
    "additive": ("additive", ("x1", "x2"), False),
    "audit": ("audit", ("x1", "x2"), False),
    "weak": ("weak", ("x1", "x2"), True),
    "goldstein": ("goldstein", ("x2", "x3"), True),
}

#: OLS with an x1 x2 column cannot represent Goldstein's x2 x3 interaction: its power row says nothing
SKIP = {("ols", "goldstein")}


#: noise SD of the two null DGPs (quoted in the paper as ``\HtestNoiseSD``)
NOISE_SD = 0.5
#: rows of each H statistic in the archived run (``--n-max 50``), which did not store it in its caches; runs since
#: store ``n_max`` in the attrs, and :func:`_setting_macros` prefers that
ARCHIVED_N_MAX = 50
#: null rejection rates within this distance of alpha count as "at the nominal level" in the text
SIZE_TOLERANCE = 0.02


def make_data(name: str, n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    if name == "additive":
        X, y = make_additive_uniform(n, noise=NOISE_SD, rng=rng)
        return X, np.asarray(y)
    if name == "audit":
        X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 4)), columns=["x1", "x2", "x3", "x4"])
        y = 2 * X["x1"] + np.sin(3 * X["x2"]) + 1.5 * X["x3"] * X["x4"] + rng.normal(scale=NOISE_SD, size=n)
        return X, y.to_numpy()
    if name == "weak":
        X, y = make_interaction(n, rng=rng)
        return X, np.asarray(y - 0.8 * X["x1"] * X["x2"])
    if name == "goldstein":
        X, y = make_goldstein(n, rng=rng)
        return X, np.asarray(y)
    raise ValueError(f"unknown DGP {name!r}")


def make_learner(name: str, quick: bool):
    if name == "ols":
        return LeastSquares(interaction=True)
    if name == "gbm":
        return HistGradientBoostingRegressor(max_iter=20 if quick else 50, max_depth=3, early_stopping=False)
    if name == "rf":
        return RandomForestRegressor(n_estimators=10 if quick else 50, min_samples_leaf=5, max_features=0.5)
    raise ValueError(f"unknown learner {name!r}")


#: cache-file prefix per null model
PREFIX = {"smooth": "smooth_", "plugin": ""}


def _one(learner: str, dgp: str, cfg: dict, quick: bool, seed: np.random.SeedSequence,
         null_model: str = "smooth") -> tuple[float, ...]:
    """One null data set: (statistic, p-value, plug-in p-value, scale, mean null statistic)."""
    data_seed, test_seed = seed.spawn(2)
    maker, pair, _ = SETTINGS_DGP[dgp]
    X, y = make_data(maker, cfg["n"], np.random.default_rng(data_seed))
    K = cfg["reps"][learner]["K"]
    if null_model != "smooth":  # the plug-in null left the package; its archived results stay readable
        raise ValueError(f"null_model={null_model!r}: the package tests with the smooth null only.")
    out = h_statistic_test(make_learner(learner, quick), X, y, pair, n_resamples=K, n_max=cfg["n_max"],
                           rng=np.random.default_rng(test_seed), execution=Execution(n_jobs=1, progress=False))
    null = next(iter(out.children.values())).ds["h2_null"].values[:, 0]
    statistic, pvalue = out.attrs["statistic"], out.attrs["pvalue"]
    return statistic, pvalue, pvalue, 1.0, float(np.mean(null))


def compute(ctx: C.Context, learners=("ols", "gbm", "rf"), max_reps: int | None = None, dgps=None,
            chunk_size: int | None = None, overrides: dict | None = None, null_model: str = "smooth") -> None:
    """Fill the caches (chunks of repetitions); ``max_reps`` caps the null repetitions per setting (power: half)
    and ``dgps`` picks (and orders) the DGPs, for reduced runs."""
    cfg = _settings(ctx, overrides)
    cfg["chunk"] = chunk_size or cfg["chunk"]
    folder = ctx.study_dir(STUDY)
    for learner in learners:
        for dgp in dgps or SETTINGS_DGP:
            if (learner, dgp) in SKIP:
                continue
            interacting = SETTINGS_DGP[dgp][2]
            reps = cfg["reps"][learner]["power" if interacting else "null"]
            reps = reps if max_reps is None else min(reps, max_reps if not interacting else max(max_reps // 2, 1))
            seeds = C.seed_sequence(cfg["seed"], learner, dgp).spawn(reps)
            for first in range(0, reps, cfg["chunk"]):
                chunk = seeds[first:first + cfg["chunk"]]

                def run(chunk=chunk, first=first, learner=learner, dgp=dgp):
                    start = time.perf_counter()
                    out = [_one(learner, dgp, cfg, ctx.quick, s, null_model) for s in chunk]
                    stats, pvalues, plugin, scale, null_mean = map(np.array, zip(*out))
                    print(f"[{time.strftime('%H:%M:%S')}] htest {null_model} {learner}/{dgp} reps "
                          f"{first}..{first + len(chunk)} took {time.perf_counter() - start:.0f} s",
                          file=sys.stderr, flush=True)
                    return xr.Dataset({"statistic": ("rep", stats), "pvalue": ("rep", pvalues),
                                       "pvalue_plugin": ("rep", plugin), "scale": ("rep", scale),
                                       "null_mean": ("rep", null_mean)},
                                      coords={"rep": np.arange(first, first + len(chunk))},
                                      attrs={"K": cfg["reps"][learner]["K"], "n": cfg["n"], "n_max": cfg["n_max"],
                                             "null_model": null_model})

                C.cached(folder / f"{PREFIX[null_model]}{learner}_{dgp}_{first:05d}.nc", ctx, run)


#: truths of the decomposition diagnostic (audit null, boosting, refits without noise)
DECOMPOSITION = ("truth", "plugin", "learner_main_true_rest", "true_main_learner_rest", "smooth")


def _pd_points(predict, X: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Centred PD of ``columns`` at every row's own values, averaged over all rows (brute force)."""
    n = X.shape[0]
    block = pd.concat([X] * n, ignore_index=True)
    for c in columns:
        block[c] = np.repeat(X[c].to_numpy(), n)
    values = predict(block).reshape(n, n).mean(axis=1)
    return values - values.mean()


def compute_decomposition(ctx: C.Context, n_sets: int = 20) -> None:
    """Why the plug-in null is too easy for boosting: mean H2_12 of refits *without noise* on five truths.

    Audit null (n rows): the true ``f``; the plug-in ``f0 = f - PD_12 + PD_1 + PD_2`` of the learner's fit; the
    learner's main effects of x1, x2 plus the true ``1.5 x3 x4``; the true main effects plus the learner's part
    ``f - PD_12``; the smooth (Gaussian-process) null mean of :func:`pdpboot.h_statistic_test`.
    """
    cfg = SETTINGS[ctx.mode]
    n = 200 if not ctx.quick else cfg["n"]
    n_sets = 2 if ctx.quick else n_sets

    def run():
        values = []
        for seed in C.seed_sequence(cfg["seed"], "decomposition").spawn(n_sets):
            data_seed, gp_seed, stat_seed = seed.spawn(3)
            X, y = make_data("audit", n, np.random.default_rng(data_seed))
            main = (2 * X["x1"] + np.sin(3 * X["x2"])).to_numpy()
            rest = (1.5 * X["x3"] * X["x4"]).to_numpy()
            fit = make_learner("gbm", ctx.quick).fit(X, y)
            fitted = fit.predict(X)
            pd12, pd1, pd2 = (_pd_points(fit.predict, X, cols) for cols in (["x1", "x2"], ["x1"], ["x2"]))
            gp_predict, _ = gaussian_process_fit(X, y, np.random.default_rng(gp_seed))
            smooth = gp_predict(X)[:, 0] - interaction_part(gp_predict, X, (0, 1))
            truths = {"truth": main + rest, "plugin": fitted - pd12 + pd1 + pd2,
                      "learner_main_true_rest": pd1 + pd2 + rest,
                      "true_main_learner_rest": main + fitted - pd12, "smooth": smooth}
            row = []
            for name in DECOMPOSITION:
                refit = make_learner("gbm", ctx.quick).fit(X, truths[name])
                stats = interaction_statistics(lambda Z, m=refit: m.predict(Z)[:, None], X, pairs=[(0, 1)],
                                               n_max=cfg["n_max"] if ctx.quick else 50,
                                               rng=np.random.default_rng(stat_seed))
                row.append(float(stats[(0, 1)]["h2"][0]))
            values.append(row)
        return xr.Dataset({"h2": (("rep", "truth"), np.array(values))}, coords={"truth": list(DECOMPOSITION)},
                          attrs={"n": n})

    C.cached(ctx.study_dir(STUDY) / "decomposition_00000.nc", ctx, run)


def compute_shrinkage(ctx: C.Context, n_sets: int = 60, overrides: dict | None = None) -> None:
    """Why least squares is conservative on the additive null: the Gaussian-process null mean shrinks the main effects.

    On the first ``n_sets`` OLS/additive data sets of the study (same data seeds; the GP fit is deterministic
    below 1000 rows, so it is the test's own): the least-squares slopes of ``f0 = g - I_12(g)`` on (x1, x2), those
    of ``y`` itself, and the GP's noise SD (truth: slopes 1 and -1, noise SD 0.5).  Smaller main effects in the
    null mean make the null refits' H2 larger (same noise, smaller denominator), hence a conservative test.
    """
    cfg = _settings(ctx, overrides)
    n_sets = 2 if ctx.quick else n_sets

    def run():
        rows = []
        for seed in C.seed_sequence(cfg["seed"], "ols", "additive").spawn(n_sets):
            data_seed, test_seed = seed.spawn(2)
            X, y = make_data("additive", cfg["n"], np.random.default_rng(data_seed))
            predict, noise_sd = gaussian_process_fit(X, y, np.random.default_rng(test_seed))
            f0 = predict(X)[:, 0] - interaction_part(predict, X, (0, 1))
            design = np.column_stack([np.ones(len(y)), X.to_numpy()])
            null_slopes = np.linalg.lstsq(design, f0, rcond=None)[0][1:]
            data_slopes = np.linalg.lstsq(design, y, rcond=None)[0][1:]
            rows.append([*null_slopes, *data_slopes, noise_sd])
        values = np.array(rows)
        return xr.Dataset({"null_slope": (("rep", "feature"), values[:, :2]),
                           "data_slope": (("rep", "feature"), values[:, 2:4]), "noise_sd": ("rep", values[:, 4])},
                          coords={"feature": ["x1", "x2"]}, attrs={"n": cfg["n"]})

    C.cached(ctx.study_dir(STUDY) / "shrinkage_00000.nc", ctx, run)


def _shrinkage_macros(path) -> dict:
    r"""``\HtestShrink{Median,Mean,Collapse,Noise,R}``: slope ratio (x1 - x2 slope of f0 over that of y) median and
    mean, share of data sets with ratio below 0.5, mean GP noise SD, data sets."""
    macros = {f"HtestShrink{k}": "--" for k in ("Median", "Mean", "Collapse", "Noise", "R")}
    if path.exists():
        data = C.load_dataset(path)
        null, obs = data["null_slope"].values, data["data_slope"].values
        ratio = (null[:, 0] - null[:, 1]) / (obs[:, 0] - obs[:, 1])
        macros.update({"HtestShrinkMedian": C.fmt(float(np.median(ratio)), 3),
                       "HtestShrinkMean": C.fmt(float(np.mean(ratio)), 3),
                       "HtestShrinkCollapse": C.fmt(float(np.mean(ratio < 0.5)), 3),
                       "HtestShrinkNoise": C.fmt(float(np.mean(data["noise_sd"].values)), 3),
                       "HtestShrinkR": str(ratio.size)})
    return macros


def _settings(ctx: C.Context, overrides: dict | None) -> dict:
    """The mode's settings with ``n``, ``n_max`` and ``K`` overridden (reduced runs; use their own results dir)."""
    cfg = {k: (dict(v) if isinstance(v, dict) else v) for k, v in SETTINGS[ctx.mode].items()}
    cfg["reps"] = {k: dict(v) for k, v in cfg["reps"].items()}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "K":
            for learner in cfg["reps"]:
                cfg["reps"][learner]["K"] = value
        else:
            cfg[key] = value
    return cfg


def _ks_discrete(pvalues: np.ndarray, K: int) -> float:
    """Sup distance between the empirical CDF of p-values and the null law: P(p <= k/(K+1)) = k/(K+1)."""
    support = np.arange(1, K + 2) / (K + 1)
    ecdf = np.array([np.mean(pvalues <= s + 1e-12) for s in support])
    return float(np.max(np.abs(ecdf - support)))


def _rate(p: np.ndarray, alpha: float) -> tuple[float, float]:
    rate = float(np.mean(p <= alpha + 1e-12))
    return rate, float(np.sqrt(rate * (1 - rate) / p.size))


def _summary(data: xr.Dataset, alpha: float, interacting: bool, column: str = "pvalue") -> dict:
    p = data[column].values
    K = int(data.attrs["K"])
    rec = {"R": int(p.size), "K": K, "n": int(data.attrs["n"]), "mean_pvalue": float(np.mean(p)),
           "ks": _ks_discrete(p, K) if not interacting else float("nan")}
    rec["rejection"], rec["rejection_mcse"] = _rate(p, alpha)
    if "null_mean" in data:
        rec["ratio"] = float(np.mean(data["statistic"].values) / np.mean(data["null_mean"].values))
    return rec


def _records(ctx: C.Context) -> list[dict]:
    """One record per (learner, DGP) from the per-chunk caches: the smooth null's summary, and the plug-in
    null's (``plugin_*``: uncalibrated, ``scale_*``: scale-calibrated) where the earlier run has it."""
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    records = []
    for learner in cfg["reps"]:
        for dgp, (_, _, interacting) in SETTINGS_DGP.items():
            rec = {"learner": learner, "dgp": dgp, "null": not interacting}
            for model, prefix in PREFIX.items():
                files = sorted(folder.glob(f"{prefix}{learner}_{dgp}_*.nc"))
                if not files:
                    continue
                data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
                if model == "smooth":
                    rec.update(_summary(data, cfg["alpha"], interacting))
                else:
                    rec.update({f"plugin_{k}": v for k, v in
                                _summary(data, cfg["alpha"], interacting, "pvalue_plugin").items()})
                    rec.update({f"scale_{k}": v for k, v in _summary(data, cfg["alpha"], interacting).items()})
                    rec["scale_mean"] = float(np.mean(data["scale"].values))
            if len(rec) > 3:
                records.append(rec)
    return records


_NAMES = {"ols": "Ols", "gbm": "Gbm", "rf": "Rf", "additive": "Additive", "audit": "Audit", "weak": "Weak",
          "goldstein": "Goldstein"}


def _macros(records: list[dict]) -> dict:
    r"""``\Htest<Kind><Learner><Dgp>``.

    Smooth null (the default): ``Rej``, ``RejSE``, ``R``, ``KS``, ``MeanP``, ``Ratio`` (mean observed / mean
    null H2).  Plug-in null (earlier run, same data sets): ``Plugin``, ``PluginSE``, ``PluginR``, ``PluginKS``,
    ``PluginRatio``; with the scale calibration: ``Cal``, ``Scale`` (mean c).
    """
    kinds = ("Rej", "RejSE", "R", "MeanP", "Ratio", "Plugin", "PluginSE", "PluginR", "PluginRatio", "Cal", "Scale")
    macros = {}
    for learner in SETTINGS["full"]["reps"]:  # "--" for every setting not (yet) run: the text always compiles
        for dgp, (_, _, interacting) in SETTINGS_DGP.items():
            key = _NAMES[learner] + _NAMES[dgp]
            for kind in kinds + (() if interacting else ("KS", "PluginKS")):
                macros[f"Htest{kind}{key}"] = "--"
    for rec in records:
        key = _NAMES[rec["learner"]] + _NAMES[rec["dgp"]]
        for kind, field, digits in (("Rej", "rejection", 3), ("RejSE", "rejection_mcse", 3),
                                    ("MeanP", "mean_pvalue", 2),
                                    ("Ratio", "ratio", 2), ("Plugin", "plugin_rejection", 3),
                                    ("PluginSE", "plugin_rejection_mcse", 3), ("PluginRatio", "plugin_ratio", 2),
                                    ("Cal", "scale_rejection", 3), ("Scale", "scale_mean", 2)):
            if field in rec:
                macros[f"Htest{kind}{key}"] = C.fmt(rec[field], digits)
        for kind, field in (("R", "R"), ("PluginR", "plugin_R")):
            if field in rec:
                macros[f"Htest{kind}{key}"] = str(rec[field])
        if rec["null"]:
            for kind, field in (("KS", "ks"), ("PluginKS", "plugin_ks")):
                if field in rec:
                    macros[f"Htest{kind}{key}"] = C.fmt(rec[field], 3)
    smooth = [r for r in records if "R" in r]
    if smooth:
        macros["HtestK"] = str(smooth[0]["K"])
        macros["HtestN"] = str(smooth[0]["n"])
        nulls = [r["R"] for r in smooth if r["null"]]
        macros["HtestRMin"] = str(min(nulls)) if nulls else "--"
        macros["HtestRMax"] = str(max(nulls)) if nulls else "--"
    return macros


#: Compact files (``python -m experiments <study> --archive``): the per-chunk caches are small.
ARCHIVE = ("*_0*.nc",)


def _cell(rec: dict, prefix: str, with_ks: bool) -> list[str]:
    if f"{prefix}R" not in rec:
        return ["--"] * (3 if with_ks else 2)
    cells = [str(rec[f"{prefix}R"]),
             f"{C.fmt(rec[f'{prefix}rejection'], 3)} ({C.fmt(rec[f'{prefix}rejection_mcse'], 3)})"]
    if with_ks:
        cells.append(C.fmt(rec[f"{prefix}ks"], 3) if rec["null"] else "")
    return cells


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _setting_macros(ctx: C.Context, records: list[dict]) -> dict:
    r"""The design quoted in the text.

    ``\HtestNMax`` (rows of each H statistic: the smooth-null caches' ``n_max``, else the archived run's),
    ``\HtestGbmRounds``, ``\HtestGbmDepth``, ``\HtestRfTrees``, ``\HtestRfLeaf`` (the learners), ``\HtestNoiseSD``
    and ``\HtestWeakNoiseVar`` (the DGPs: noise SD, noise variance), ``\HtestGPRows`` and
    ``\HtestGPBackgroundRows`` (the package's smooth null), ``\HtestDiagN`` (the diagnostic's rows),
    ``\HtestSizeLow``/``High`` (alpha -+ SIZE_TOLERANCE) and
    ``\HtestNullInRange`` / ``\HtestNullRows`` (null rows of the smooth null inside that range, in words).
    """
    folder = ctx.study_dir(STUDY)
    files = sorted(folder.glob("smooth_*_0*.nc"))
    attrs = [C.load_dataset(f).attrs for f in files]
    stored = {int(a["n_max"]) for a in attrs if "n_max" in a}
    n_max = stored.pop() if len(stored) == 1 else (ARCHIVED_N_MAX if not stored and files else None)
    gbm, rf = make_learner("gbm", ctx.quick), make_learner("rf", ctx.quick)
    diag = folder / "decomposition_00000.nc"
    alpha = SETTINGS[ctx.mode]["alpha"]
    low, high = alpha - SIZE_TOLERANCE, alpha + SIZE_TOLERANCE
    nulls = [r["rejection"] for r in records if r["null"] and "rejection" in r]
    inside = sum(low - 1e-12 <= p <= high + 1e-12 for p in nulls)
    word = lambda k: _WORDS[k] if k < len(_WORDS) else str(k)  # noqa: E731
    return {"HtestNMax": str(n_max) if n_max else "--", "HtestGbmRounds": str(gbm.max_iter),
            "HtestGbmDepth": str(gbm.max_depth), "HtestRfTrees": str(rf.n_estimators),
            "HtestRfLeaf": str(rf.min_samples_leaf), "HtestNoiseSD": f"{NOISE_SD:g}",
            "HtestWeakNoiseVar": f"{inspect.signature(make_interaction).parameters['noise'].default ** 2:g}",
            "HtestGPRows": str(GP_MAX_ROWS), "HtestGPBackgroundRows": str(SMOOTH_BACKGROUND_ROWS),
            "HtestDiagN": str(int(C.load_dataset(diag).attrs["n"])) if diag.exists() else "--",
            "HtestSizeLow": f"{low:.2f}", "HtestSizeHigh": f"{high:.2f}",
            "HtestNullInRange": word(inside) if nulls else "--", "HtestNullRows": word(len(nulls)) if nulls else "--"}


def render(ctx: C.Context) -> list[dict]:
    records = _records(ctx)
    lines = [r"\begin{tabular}{llrrrrrrr}", r"\toprule",
             r" & & \multicolumn{5}{c}{smooth null (default)} & \multicolumn{2}{c}{plug-in null} \\",
             r"\cmidrule(lr){3-7}\cmidrule(lr){8-9}",
             r"learner & DGP & $R$ & rejection (MC SE) & KS & mean $p$ & $\bar T / \bar T^*$ & $R$ & "
             r"rejection (MC SE) \\", r"\midrule"]
    for rec in records:
        name = LEARNER_LABELS[rec["learner"]]
        smooth = _cell(rec, "", True)
        extra = ([C.fmt(rec["mean_pvalue"], 2) if rec["null"] else "", C.fmt(rec.get("ratio", float("nan")), 2)]
                 if "R" in rec else ["--", "--"])
        plugin = _cell(rec, "plugin_", False)
        lines.append(" & ".join([name, rec["dgp"] + ("" if rec["null"] else " (alt.)"), *smooth, *extra, *plugin])
                     + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "h_test_size_power.tex"), "\n".join(lines))
    macros = _macros(records)
    path = ctx.study_dir(STUDY) / "decomposition_00000.nc"
    names = {"truth": "Truth", "plugin": "Plugin", "learner_main_true_rest": "TrueRest",
             "true_main_learner_rest": "TrueMain", "smooth": "Smooth"}
    for name in DECOMPOSITION:
        macros[f"HtestDiag{names[name]}"] = "--"
    macros["HtestDiagR"] = "--"
    if path.exists():
        diag = C.load_dataset(path)
        for name in DECOMPOSITION:
            macros[f"HtestDiag{names[name]}"] = C.fmt(float(diag["h2"].sel(truth=name).mean()), 4)
        macros["HtestDiagR"] = str(diag.sizes["rep"])
    macros.update(_shrinkage_macros(ctx.study_dir(STUDY) / "shrinkage_00000.nc"))
    macros.update(_setting_macros(ctx, records))
    C.write_macros(ctx.out("generated", "htest.tex"), macros,
                   "h_test_size_power: size and power of h_statistic_test")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.h_test_size_power", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--learners", nargs="*", default=["ols", "gbm", "rf"])
    parser.add_argument("--max-reps", type=int, help="cap on null repetitions per setting (power: half)")
    parser.add_argument("--dgps", nargs="*", help=f"subset (in this order) of {list(SETTINGS_DGP)}")
    parser.add_argument("--chunk", type=int, help="repetitions per cache file (default from SETTINGS)")
    parser.add_argument("--n", type=int, help="override: rows per data set (reduced runs, own --results-dir)")
    parser.add_argument("--n-max", type=int, help="override: rows of each H statistic")
    parser.add_argument("--K", type=int, help="override: null refits per test")
    parser.add_argument("--decomposition", action="store_true",
                        help="also run the decomposition diagnostic (boosting, audit null, refits without noise)")
    parser.add_argument("--shrinkage", action="store_true",
                        help="also run the shrinkage diagnostic (GP null mean on the OLS/additive data sets)")
    parser.add_argument("--null-model", choices=list(PREFIX), default="smooth",
                        help="null model of h_statistic_test to run (default: smooth, the function's default)")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        compute(ctx, args.learners, args.max_reps, args.dgps, args.chunk,
                {"n": args.n, "n_max": args.n_max, "K": args.K}, args.null_model)
        if args.decomposition:
            compute_decomposition(ctx)
        if args.shrinkage:
            compute_shrinkage(ctx, overrides={"n": args.n})
        records = render(ctx)
    for rec in records:
        print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
