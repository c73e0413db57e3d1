"""Coverage of the debiased estimator's bands for the DGP's partial dependence (issue 28).

Settings (``SETTINGS``; quick mode shrinks R and the learners):

B_<learner>_n<n>
    The coverage study's scenario B (:mod:`experiments.s2_coverage`): Friedman #1 (10 independent
    U(0, 1) features, noise sd 1), random forest, gradient boosting and a small network, n = 500 and
    2000, PD of x1, x3, x4 on the same 15-point grid; truth in closed form
    (:func:`pdpboot.datasets.true_pd`).  The refit bootstrap's widths and coverage (B = 200) are read
    from the archived summaries of that study (``experiments/archive/coverage/summary``) for the
    width ratio.
G_corr_gbm_n1000 (own DGP 1: correlated features, curved PD)
    ``X ~ N(0, S)``, three features, ``corr(x1, x2) = 0.6``, ``corr(x1, x3) = 0.3``;
    ``y = 2 sin(1.5 x1) + x1 x2 + x2 + 0.5 x3^2 + e``, ``e ~ N(0, 1)``; PD of x1 is
    ``2 sin(1.5 a) + 0.5`` (``E x2 = 0``, ``E x3^2 = 1``), of x2 ``a + 0.5`` (with
    ``E[x1 x2 | x2 = a]`` replaced by ``a E x1 = 0``) -- a marginal plot would be biased by the
    correlation; boosting, 15-point grid at the N(0, 1) 5..95 % quantiles.
K_cat_gbm_n1000 (own DGP 2: categorical x_s)
    Level ``A in {0, 1, 2, 3}`` with multinomial-logit propensity given ``x1, x2 ~ N(0, 1)``
    (logits ``0, 0.8 x1, -0.8 x1 + 0.5 x2, 0.5 + 0.5 x2``);
    ``y = tau_A + sin(2 x1) + 1{A = 2} x1^2 + x2 + e``, ``tau = (0, 1, 0.5, -0.5)``; PD of A is
    ``tau_a + 1{a = 2}``; boosting on (A, x1, x2); AIPW per level.

Each repetition draws a data set from the repetition's own seed (the i-th child of the setting's
seed sequence) and runs :func:`pdpboot.debiased_partial_dependence` (K = 5 folds, default nuisance
classifier and bandwidth rule, 95 %).  Chunks of repetitions are cached as netCDF under
``experiments/results/<mode>/debiased/<setting>/chunk_*.nc`` and the run is resumable and extendable
(a larger R only adds chunks).  ``python -m experiments.debiased_coverage [--quick] [--R N]
[--settings ...] [--until HH:MM]`` computes; ``--summary`` prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from scipy.stats import norm
from threadpoolctl import threadpool_limits

import pdpboot
from pdpboot.datasets import make_friedman1, true_pd

from . import _common as C
from .learners import make_learner

STUDY = "debiased"
SEED = 20261201
LEVEL = 0.95
GRID_UNIFORM = np.linspace(0.05, 0.95, 15)
GRID_NORMAL = norm.ppf(np.linspace(0.05, 0.95, 15))
TAU = np.array([0.0, 1.0, 0.5, -0.5])


def _settings() -> dict[str, dict]:
    out = {}
    for learner in ("rf", "gbm", "mlp"):
        for n in (500, 2000):
            out[f"B_{learner}_n{n}"] = {"dgp": "friedman1", "learner": learner, "n": n, "features": [0, 2, 3],
                                        "grid": GRID_UNIFORM, "refit": f"B_{learner}_n{n}"}
    out["G_corr_gbm_n1000"] = {"dgp": "corr_curved", "learner": "gbm", "n": 1000, "features": [0, 1],
                               "grid": GRID_NORMAL, "refit": None}
    out["K_cat_gbm_n1000"] = {"dgp": "categorical", "learner": "gbm", "n": 1000, "features": [0],
                              "grid": np.arange(4), "refit": None, "categorical": [0]}
    return out


SETTINGS = _settings()


def simulate(setting: dict, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """One data set of the setting's DGP (plain arrays)."""
    gen = np.random.default_rng(seed)
    if setting["dgp"] == "friedman1":
        X, y = make_friedman1(n, rng=gen)
        return X.to_numpy(dtype=float), y.to_numpy(dtype=float)
    if setting["dgp"] == "corr_curved":
        cov = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.0], [0.3, 0.0, 1.0]])
        X = gen.multivariate_normal(np.zeros(3), cov, size=n)
        y = 2 * np.sin(1.5 * X[:, 0]) + X[:, 0] * X[:, 1] + X[:, 1] + 0.5 * X[:, 2] ** 2 + gen.standard_normal(n)
        return X, y
    if setting["dgp"] == "categorical":
        c = gen.standard_normal((n, 2))
        logits = np.column_stack([np.zeros(n), 0.8 * c[:, 0], -0.8 * c[:, 0] + 0.5 * c[:, 1], 0.5 + 0.5 * c[:, 1]])
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        a = (gen.uniform(size=(n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
        y = TAU[a] + np.sin(2 * c[:, 0]) + (a == 2) * c[:, 0] ** 2 + c[:, 1] + gen.standard_normal(n)
        return np.column_stack([a.astype(float), c]), y
    raise ValueError(setting["dgp"])


def dgp_pd(setting: dict, feature: int, grid: np.ndarray) -> np.ndarray:
    """The DGP's PD on the grid (closed form)."""
    if setting["dgp"] == "friedman1":
        return true_pd("friedman1", f"x{feature + 1}", grid)
    if setting["dgp"] == "corr_curved":
        return 2 * np.sin(1.5 * grid) + 0.5 if feature == 0 else grid + 0.5
    if setting["dgp"] == "categorical":
        return TAU[grid.astype(int)] + (grid == 2)
    raise ValueError(setting["dgp"])


def one_repetition(setting: dict, seed: np.random.SeedSequence, quick: bool, localize: str = "pseudo-outcome") -> dict:
    """Debiased PD of every feature of one fresh data set: arrays (feature, grid) and timings."""
    data_seed, fit_seed = seed.spawn(2)
    X, y = simulate(setting, setting["n"], data_seed)
    custom = {f: np.asarray(setting["grid"]) for f in setting["features"]}
    start = time.process_time()
    res = pdpboot.debiased_partial_dependence(
        make_learner(setting["learner"], quick), X, y, setting["features"], custom_values=custom,
        categorical_features=setting.get("categorical"), confidence_level=LEVEL,
        options=pdpboot.DebiasedOptions(localize=localize),
        rng=np.random.default_rng(fit_seed))
    cpu = time.process_time() - start
    out: dict = {"cpu": cpu}
    for var in ("pd", "pd_se", "pd_plugin", "effective_sample_size", "overlap"):
        out[var] = np.stack([pdpboot.get_node(res, f"x{f}").ds[var].values[-1] for f in setting["features"]])
    for var in ("pd_band", "pd_band_simultaneous"):
        out[var] = np.stack([pdpboot.get_node(res, f"x{f}").ds[var].values[:, -1] for f in setting["features"]],
                            axis=1)
    bw = [pdpboot.get_node(res, f"x{f}").ds.attrs.get("bandwidth", [np.nan])[-1] for f in setting["features"]]
    out["bandwidth"] = np.asarray(bw, dtype=float)
    return out


def _chunk(setting: dict, reps: list[dict], first: int) -> xr.Dataset:
    fg = ("feature", "grid")
    data = {var: (("rep", *fg), np.stack([r[var] for r in reps])) for var in
            ("pd", "pd_se", "pd_plugin", "effective_sample_size", "overlap")}
    for var in ("pd_band", "pd_band_simultaneous"):
        data[var] = (("rep", "ci_bound", *fg), np.stack([r[var] for r in reps]))
    data["bandwidth"] = (("rep", "feature"), np.stack([r["bandwidth"] for r in reps]))
    data["cpu"] = (("rep",), np.array([r["cpu"] for r in reps]))
    return xr.Dataset(data, coords={"rep": np.arange(first, first + len(reps)), "ci_bound": ["lower", "upper"],
                                    "feature": [f"x{f + 1}" for f in setting["features"]],
                                    "grid_value": ("grid", np.asarray(setting["grid"], dtype=float))})


def _done(folder: Path) -> set[int]:
    done: set[int] = set()
    for path in sorted(folder.glob("chunk_*.nc")):
        with xr.open_dataset(path) as ds:
            done.update(int(i) for i in ds["rep"].values)
    return done


def _folder(ctx: C.Context, name: str, localize: str) -> Path:
    return ctx.study_dir(STUDY) / (name if localize == "pseudo-outcome" else f"{name}__{localize}")


def compute(ctx: C.Context, *, R: int, settings: list[str], chunk: int = 5, until: datetime.datetime | None = None,
            localize: str = "pseudo-outcome") -> None:
    """Round-robin: one chunk of repetitions of every unfinished setting in turn, until R or ``until`` (UTC).

    ``localize="residual"`` runs the comparison variant (same data sets, same seeds) into ``<setting>__residual``.
    """
    folders = {name: _folder(ctx, name, localize) for name in settings}
    for f in folders.values():
        f.mkdir(parents=True, exist_ok=True)
    seeds = {name: C.seed_sequence(SEED, name).spawn(max(R, 1)) for name in settings}
    active = list(settings)
    while active:
        for name in list(active):
            if until is not None and datetime.datetime.now(datetime.timezone.utc) >= until:
                return
            done = _done(folders[name])
            todo = [i for i in range(R) if i not in done][:chunk]
            if not todo:
                active.remove(name)
                continue
            first = todo[0]
            todo = [i for i in todo if i < first + chunk and all(j not in done for j in range(first, i + 1))]
            with threadpool_limits(1):
                reps = [one_repetition(SETTINGS[name], seeds[name][i], ctx.quick, localize) for i in todo]
            C.save_dataset(_chunk(SETTINGS[name], reps, first), folders[name] / f"chunk_{first:05d}.nc")
            print(f"  debiased {name}: {len(done) + len(todo)}/{R} ({np.mean([r['cpu'] for r in reps]):.1f} s CPU "
                  f"per repetition)", file=sys.stderr, flush=True)


def _refit(name: str | None) -> dict:
    """Refit-bootstrap (B = 200) widths and DGP coverage of the same scenario from the archived study."""
    if name is None:
        return {}
    path = C.ARCHIVE / "coverage" / "summary" / f"{name}.nc"
    if not path.exists():
        return {}
    with xr.open_dataset(path) as ds:
        out = {}
        for b in range(ds.sizes["band"]):
            if int(ds.B.values[b]) != 200 or str(ds.background.values[b]) != "resample":
                continue
            method = str(ds.method.values[b])
            if method in ("percentile", "supt"):
                out[method] = {"width": float(ds.width.isel(band=b).mean()),
                               "pointwise": float(ds.pointwise.isel(band=b).sel(truth="dgp").mean()),
                               "simultaneous": float(ds.simultaneous.isel(band=b).sel(truth="dgp").mean()),
                               "R": int(ds.sizes["rep"])}
        return out


def summarize_setting(ctx: C.Context, name: str, localize: str = "pseudo-outcome") -> dict | None:
    """Coverage of the DGP's PD with Monte Carlo SEs, widths, overlap and cost of one setting."""
    folder = _folder(ctx, name, localize)
    chunks = sorted(folder.glob("chunk_*.nc"))
    if not chunks:
        return None
    ds = xr.concat([C.load_dataset(p) for p in chunks], dim="rep").sortby("rep")
    setting = SETTINGS[name]
    grid = ds["grid_value"].values
    truth = np.stack([dgp_pd(setting, f, grid) for f in setting["features"]])          # (F, G)
    R = ds.sizes["rep"]
    ok = ds["overlap"].values.astype(bool)                                             # (R, F, G)
    out = {"setting": name, "R": R, "cpu": float(ds["cpu"].mean()), "flagged": float(1 - ok.mean())}
    for kind, var in (("pointwise", "pd_band"), ("simultaneous", "pd_band_simultaneous")):
        lo = ds[var].sel(ci_bound="lower").values
        hi = ds[var].sel(ci_bound="upper").values
        inside = (lo <= truth) & (truth <= hi)
        inside = np.where(ok, inside, True)    # flagged points have no band; they are not claimed
        per_rep = inside.mean(axis=(1, 2)) if kind == "pointwise" else inside.all(axis=2).mean(axis=1)
        out[kind] = float(per_rep.mean())
        out[f"{kind}_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
        out[f"{kind}_width"] = float(np.nanmean(np.where(ok, hi - lo, np.nan)))
        if kind == "pointwise":
            out["by_feature"] = inside.mean(axis=(0, 2)).round(3).tolist()
            out["by_grid"] = inside.mean(axis=(0, 1)).round(3).tolist()
            out["edge"] = float(inside[:, :, [0, -1]].mean())
        elif inside.shape[2] > 2:  # whole curve without the two outermost grid points (where overlap is thinnest)
            interior = inside[:, :, 1:-1].all(axis=2).mean(axis=1)
            out["simultaneous_interior"] = float(interior.mean())
            out["simultaneous_interior_mcse"] = float(interior.std(ddof=1) / np.sqrt(R)) if R > 1 else np.nan
    est = ds["pd"].values
    plug = ds["pd_plugin"].values
    se = ds["pd_se"].values
    out["se_over_sd"] = float(np.mean(se.mean(axis=0) / est.std(axis=0, ddof=1)))
    out["bias_over_sd"] = float(np.mean(np.abs(est.mean(axis=0) - truth) / est.std(axis=0, ddof=1)))
    out["plugin_bias_over_sd"] = float(np.mean(np.abs(plug.mean(axis=0) - truth) / est.std(axis=0, ddof=1)))
    out["min_ess"] = float(ds["effective_sample_size"].min())
    refit = _refit(setting["refit"])
    if refit:
        out["refit"] = refit
        out["width_ratio_pointwise"] = out["pointwise_width"] / refit["percentile"]["width"]
        out["width_ratio_simultaneous"] = out["simultaneous_width"] / refit["supt"]["width"]
    return out


def figure_electricity(path: Path, *, results_dir: Path | None = None) -> Path:
    """Learner band (refit bootstrap, archived study 1) next to the DGP band (debiased) on the electricity data.

    The data set, forest (100 trees) and grid (25 points, Day categorical) are those of
    :mod:`experiments.s1_electricity`, whose archived B = 200 percentile bands are the learner's; the
    debiased estimate and its pointwise and sup-t bands are computed here (cached next to the figure);
    the true PD is exact.
    """
    from sklearn.ensemble import RandomForestRegressor

    from pdpboot.datasets import electricity_true_pd, make_electricity_prices

    from .config import config
    from .s1_electricity import FEATURES

    C.agg_backend()
    import matplotlib.pyplot as plt

    cfg = config("electricity", False)
    cache = Path(results_dir or path.parent) / "electricity_debiased.nc"
    if cache.exists():
        dgp = pdpboot.load(cache)
    else:
        X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
        with threadpool_limits(1):
            dgp = pdpboot.debiased_partial_dependence(
                RandomForestRegressor(n_estimators=cfg["n_trees"]), X, y, FEATURES,
                grid_resolution=cfg["grid_resolution"], categorical_features=["Day"], rng=cfg["seed"])
        pdpboot.save(dgp, cache)
    learner = pdpboot.load(C.ARCHIVE / "electricity" / "bands_resample.nc")
    fig, axes = plt.subplots(1, 3, figsize=(C.FULL_WIDTH, 2.4))
    for ax, feature in zip(axes, FEATURES):
        ln = pdpboot.get_node(learner, feature).ds
        dg = pdpboot.get_node(dgp, feature).ds
        x = dg[feature].values
        pos = np.arange(x.size) if feature == "Day" else x
        lo, hi = ln["pd_band_pointwise"].values if "pd_band_pointwise" in ln else ln["pd_band"].values
        ax.fill_between(pos, lo[0], hi[0], color="tab:orange", alpha=0.35, step="mid" if feature == "Day" else None,
                        label="learner: refit B = 200")
        dlo, dhi = dg["pd_band"].values
        slo, shi = dg["pd_band_simultaneous"].values
        ax.fill_between(pos, dlo[0], dhi[0], color="tab:blue", alpha=0.3, step="mid" if feature == "Day" else None,
                        label="DGP: debiased, pointwise")
        ax.plot(pos, slo[0], color="tab:blue", lw=0.8, ls="--", label="DGP: debiased, sup-t")
        ax.plot(pos, shi[0], color="tab:blue", lw=0.8, ls="--")
        ax.plot(pos, electricity_true_pd(feature, x), color="black", lw=1.2, label="true PD")
        ax.plot(pos, dg["pd"].values[0], color="tab:blue", lw=1)
        ax.plot(pos, ln["pd"].values[0], color="tab:orange", lw=1)
        ax.set_xlabel(feature)
        if feature == "Day":
            ax.set_xticks(pos, [str(v) for v in x])
    axes[0].set_ylabel("Price")
    axes[0].legend(fontsize=6, loc="upper center")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--R", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=5)
    parser.add_argument("--settings", nargs="*", default=None)
    parser.add_argument("--until", default=None, help="stop starting chunks at this UTC time (HH:MM)")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--archive", action="store_true", help="with --summary: write experiments/archive/debiased")
    parser.add_argument("--localize", default="pseudo-outcome", choices=["pseudo-outcome", "residual"])
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--figure", default=None, help="write the electricity figure (PNG/PDF) to this path")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, results_dir=args.results_dir, n_jobs=1)
    if args.figure:
        print(figure_electricity(Path(args.figure), results_dir=ctx.study_dir(STUDY)))
        return
    names = args.settings or list(SETTINGS)
    if args.summary:
        rows = [s for name in names if (s := summarize_setting(ctx, name, args.localize)) is not None]
        for row in rows:
            print(row)
        if args.archive:
            out = C.ARCHIVE / STUDY / ("summary.json" if args.localize == "pseudo-outcome"
                                       else f"summary_{args.localize}.json")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(rows, indent=1) + "\n")
            print(out)
        return
    until = None
    if args.until:
        hh, mm = map(int, args.until.split(":"))
        now = datetime.datetime.now(datetime.timezone.utc)
        until = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    R = args.R if args.R is not None else (2 if args.quick else 200)
    compute(ctx, R=R, settings=names, chunk=args.chunk, until=until, localize=args.localize)


if __name__ == "__main__":
    main()
