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
``sqrt(p (1 - p) / R)``, and the Kolmogorov-Smirnov distance of the null p-values from the
discrete uniform law of ``(1 + k) / (1 + K)``.

    python -m experiments.stats_htest [--quick] [--learners ols gbm rf]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from pdpboot.datasets import make_additive_uniform, make_goldstein, make_interaction
from pdpboot.interaction import h_statistic_test

from . import _common as C
from .learners import LeastSquares

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


def make_data(name: str, n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    if name == "additive":
        X, y = make_additive_uniform(n, noise=0.5, rng=rng)
        return X, np.asarray(y)
    if name == "audit":
        X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 4)), columns=["x1", "x2", "x3", "x4"])
        y = 2 * X["x1"] + np.sin(3 * X["x2"]) + 1.5 * X["x3"] * X["x4"] + rng.normal(scale=0.5, size=n)
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


def _one(learner: str, dgp: str, cfg: dict, quick: bool, seed: np.random.SeedSequence) -> tuple[float, ...]:
    data_seed, test_seed = seed.spawn(2)
    maker, pair, _ = SETTINGS_DGP[dgp]
    X, y = make_data(maker, cfg["n"], np.random.default_rng(data_seed))
    K = cfg["reps"][learner]["K"]
    out = h_statistic_test(make_learner(learner, quick), X, y, pair, n_resamples=K, n_max=cfg["n_max"], n_jobs=1,
                           calibration="scale", rng=np.random.default_rng(test_seed))
    # the plug-in (calibration="none") p-value of the same refits: the first level is identical
    plugin = (1 + np.sum(out.null_distribution >= out.statistic)) / (1 + K)
    return out.statistic, out.pvalue, float(plugin), out.scale


def compute(ctx: C.Context, learners=("ols", "gbm", "rf"), max_reps: int | None = None, dgps=None,
            chunk_size: int | None = None, overrides: dict | None = None) -> None:
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
                    out = [_one(learner, dgp, cfg, ctx.quick, s) for s in chunk]
                    stats, pvalues, plugin, scale = map(np.array, zip(*out))
                    print(f"[{time.strftime('%H:%M:%S')}] htest {learner}/{dgp} reps {first}..{first + len(chunk)}"
                          f" took {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
                    return xr.Dataset({"statistic": ("rep", stats), "pvalue": ("rep", pvalues),
                                       "pvalue_plugin": ("rep", plugin), "scale": ("rep", scale)},
                                      coords={"rep": np.arange(first, first + len(chunk))},
                                      attrs={"K": cfg["reps"][learner]["K"], "n": cfg["n"]})

                C.cached(folder / f"{learner}_{dgp}_{first:05d}.nc", ctx, run)


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


def _records(ctx: C.Context) -> list[dict]:
    """One record per (learner, DGP) from the per-chunk caches."""
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    records = []
    for learner in cfg["reps"]:
        for dgp, (_, _, interacting) in SETTINGS_DGP.items():
            files = sorted(folder.glob(f"{learner}_{dgp}_*.nc"))
            if not files:
                continue
            data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
            K = int(data.attrs["K"])
            p = data["pvalue"].values
            rec = {"learner": learner, "dgp": dgp, "null": not interacting, "R": int(p.size), "K": K,
                   "n": int(data.attrs["n"]), "mean_pvalue": float(np.mean(p))}
            rec["rejection"], rec["rejection_mcse"] = _rate(p, cfg["alpha"])
            rec["ks"] = _ks_discrete(p, K) if not interacting else float("nan")
            if "pvalue_plugin" in data:
                plug = data["pvalue_plugin"].values
                rec["rejection_plugin"], rec["rejection_plugin_mcse"] = _rate(plug, cfg["alpha"])
                rec["ks_plugin"] = _ks_discrete(plug, K) if not interacting else float("nan")
                rec["scale_mean"] = float(np.mean(data["scale"].values))
                rec["scale_sd"] = float(np.std(data["scale"].values, ddof=1)) if p.size > 1 else float("nan")
            records.append(rec)
    return records


_NAMES = {"ols": "Ols", "gbm": "Gbm", "rf": "Rf", "additive": "Additive", "audit": "Audit", "weak": "Weak",
          "goldstein": "Goldstein"}


def _macros(records: list[dict]) -> dict:
    r"""``\Htest<Kind><Learner><Dgp>``: rejection rates (calibrated and plug-in), MC SEs, R, KS, mean scale."""
    macros = {}
    for learner in SETTINGS["full"]["reps"]:  # "--" for every setting not (yet) run: the text always compiles
        for dgp, (_, _, interacting) in SETTINGS_DGP.items():
            key = _NAMES[learner] + _NAMES[dgp]
            for kind in ("Rej", "RejSE", "R", "Plugin", "PluginSE", "Scale") + (() if interacting else ("KS",)):
                macros[f"Htest{kind}{key}"] = "--"
    for rec in records:
        key = _NAMES[rec["learner"]] + _NAMES[rec["dgp"]]
        macros[f"HtestRej{key}"] = C.fmt(rec["rejection"], 3)
        macros[f"HtestRejSE{key}"] = C.fmt(rec["rejection_mcse"], 3)
        macros[f"HtestR{key}"] = str(rec["R"])
        if "rejection_plugin" in rec:
            macros[f"HtestPlugin{key}"] = C.fmt(rec["rejection_plugin"], 3)
            macros[f"HtestPluginSE{key}"] = C.fmt(rec["rejection_plugin_mcse"], 3)
            macros[f"HtestScale{key}"] = C.fmt(rec["scale_mean"], 2)
        if rec["null"]:
            macros[f"HtestKS{key}"] = C.fmt(rec.get("ks_plugin", rec["ks"]), 3)
    if records:
        macros["HtestK"] = str(records[0]["K"])
        macros["HtestN"] = str(records[0].get("n", "--"))
        nulls = [r["R"] for r in records if r["null"]]
        macros["HtestRMin"] = str(min(nulls)) if nulls else "--"
    return macros


#: Compact files (``python -m experiments <study> --archive``): the per-chunk caches are small.
ARCHIVE = ("*_0*.nc",)


def render(ctx: C.Context) -> list[dict]:
    records = _records(ctx)
    lines = [r"\begin{tabular}{llrrrrr}", r"\toprule",
             r"learner & DGP & $R$ & calibrated (MC SE) & plug-in (MC SE) & KS (plug-in) & mean $c$ \\", r"\midrule"]
    for rec in records:
        plugin = (f"{C.fmt(rec['rejection_plugin'], 3)} ({C.fmt(rec['rejection_plugin_mcse'], 3)})"
                  if "rejection_plugin" in rec else "--")
        lines.append(f"{rec['learner'].upper() if rec['learner'] != 'gbm' else 'GBM'} & "
                     f"{rec['dgp']}{'' if rec['null'] else ' (alt.)'} & {rec['R']} & "
                     f"{C.fmt(rec['rejection'], 3)} ({C.fmt(rec['rejection_mcse'], 3)}) & {plugin} & "
                     f"{C.fmt(rec.get('ks_plugin', rec['ks']), 3)} & "
                     f"{C.fmt(rec.get('scale_mean', float('nan')), 2)} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "h_test_size_power.tex"), "\n".join(lines))
    C.write_macros(ctx.out("generated", "htest.tex"), _macros(records),
                   "stats_htest: size and power of h_statistic_test")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.stats_htest", description=__doc__,
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
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        compute(ctx, args.learners, args.max_reps, args.dgps, args.chunk,
                {"n": args.n, "n_max": args.n_max, "K": args.K})
        records = render(ctx)
    for rec in records:
        print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
