"""Study 7: correlated features - bootstrap bands for PD and for accumulated local effects (ALE).

DGP: ``(x1, x2)`` standard bivariate normal with correlation rho in {0, 0.5, 0.9},
``y = x1 + x2 + x1 x2 + e``, ``e ~ N(0, 1)``.  PD of x1 evaluates the model at
``(a, x2_i)`` for every row - at rho = 0.9 mostly at combinations that never occur,
so a flexible learner is extrapolated there.  ALE only uses local differences.

The two effects estimate different things, each with its own known truth on the
fixed grid ``z_k = Phi^{-1}(0.05 + 0.09 k)``, k = 0..10 (the 5-95 % range):

- PD: ``PD(a) = a + E[x2] (1 + a) = a`` for every rho;
- ALE (population version of the estimator on these bins, Apley & Zhu eq. (15)):
  the local effect of bin m is ``dz_m (1 + rho E[x1 | bin m])`` (the truncated-normal
  mean), accumulated from zero and centred with the bin probabilities at the bin
  midpoints; as the bins shrink it tends to ``a + rho a^2 / 2 - const``.

Learners: the well-specified OLS with the x1 x2 column, and a small histogram gradient
boosting model (flexible; see :func:`learner_for`).  Each repetition draws n rows, runs
:func:`pdpboot.bootstrap_ale` with ``with_pd=True`` (B refits give both the PD and the ALE,
each averaged over the resample's rows; the PD equals ``bootstrap_partial_dependence`` with the
same seed) and forms 95 % percentile bands with :func:`pdpboot.confidence_bands`
(pointwise, and simultaneous over the 11 grid points).  Coverage = share of
repetitions whose band contains the truth at a point (averaged over the points) or
at every point (simultaneous); Monte Carlo SE ``sqrt(p (1 - p) / R)`` (simultaneous)
and the SE of the mean over repetitions (pointwise).

Outputs: ``tables/ale_coverage.tex``, ``generated/ale.tex`` and the figure
``figures/ale_pd_vs_ale`` (PD and ALE of the boosted model with bands, rho = 0.9).

Run alone::

    python -m experiments.ale_coverage --quick            # about 30 s of CPU
    python -m experiments.ale_coverage                    # R = 40 (OLS) / 16 (boosting), B = 200 / 100
    python -m experiments ale --render-only --results-dir experiments/archive   # from the archived results

``summarize`` writes ``summary.csv`` (one row per learner and rho: coverage, Monte Carlo SE, mean band
width and max |bias| of both effects) next to the cached results; ``ARCHIVE`` lists the compact files
``render`` needs (``python -m experiments ale --render-only --archive`` copies them to experiments/archive).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from scipy.stats import norm

import pdpboot
from pdpboot import Grid

from . import _common as C
from .learners import LEARNER_LABELS, make_learner


def learner_for(name: str, quick: bool):
    """The well-specified OLS (with the x1 x2 column) or a small histogram gradient boosting model
    (50 rounds of at most 15 leaves, learning rate 0.2; 20 rounds in quick mode)."""
    if name == "gbm":
        from sklearn.ensemble import HistGradientBoostingRegressor

        return HistGradientBoostingRegressor(max_iter=20 if quick else 50, learning_rate=0.2, max_leaf_nodes=15,
                                             early_stopping=False)
    return make_learner(name, quick)

STUDY = "ale"
RHOS = (0.0, 0.5, 0.9)
LEARNERS = ("ols_interaction", "gbm")
GRID = norm.ppf(np.linspace(0.05, 0.95, 11))
LEVEL = 0.95


def settings(quick: bool, reps: int | None = None, resamples: int | None = None) -> dict:
    base = {"n": 300, "reps": {"ols_interaction": 3, "gbm": 2}, "B": {"ols_interaction": 20, "gbm": 20}} if quick \
        else {"n": 500, "reps": {"ols_interaction": 40, "gbm": 16}, "B": {"ols_interaction": 200, "gbm": 100}}
    if reps is not None:
        base["reps"] = {k: reps for k in base["reps"]}
    if resamples is not None:
        base["B"] = {k: resamples for k in base["B"]}
    return base


def true_pd(grid: np.ndarray) -> np.ndarray:
    return np.asarray(grid, dtype=float)


def true_ale(edges: np.ndarray, rho: float) -> np.ndarray:
    """Population ALE of f = x1 + x2 + x1 x2 on the bins ``edges`` (binormal, correlation rho)."""
    lo, hi = edges[:-1], edges[1:]
    prob = norm.cdf(hi) - norm.cdf(lo)
    mean_x1 = (norm.pdf(lo) - norm.pdf(hi)) / prob
    effect = np.diff(edges) * (1 + rho * mean_x1)
    g = np.concatenate([[0.0], np.cumsum(effect)])
    return g - np.sum(prob * (g[:-1] + g[1:]) / 2) / prob.sum()


def draw(n: int, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x1 = rng.standard_normal(n)
    x2 = rho * x1 + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    X = np.column_stack([x1, x2])
    return X, x1 + x2 + x1 * x2 + rng.standard_normal(n)


def _bands(res: xr.DataTree) -> dict:
    node = pdpboot.confidence_bands(res, confidence_level=LEVEL, simultaneous=True)["x0"]
    return {var: {"estimate": node[var].values[0], "sim": node[f"{var}_band"].values[:, 0],
                  "point": node[f"{var}_band_pointwise"].values[:, 0]} for var in ("pd", "ale")}


def both_effects(learner: str, X: np.ndarray, y: np.ndarray, B: int, quick: bool, rng) -> dict:
    """PD and ALE of x1 on GRID with bands, from one set of B refits (``bootstrap_ale(with_pd=True)``)."""
    res = pdpboot.bootstrap_ale(learner_for(learner, quick), X, y, ["x0"], n_resamples=B,
                                grid=Grid(custom_values={"x0": GRID}),
                                with_pd=True, rng=rng,
                                execution=pdpboot.Execution(n_jobs=1, progress=False))
    return _bands(res)


def one_repetition(learner: str, rho: float, n: int, B: int, quick: bool, seed: np.random.SeedSequence) -> dict:
    data_seed, boot_seed = seed.spawn(2)
    X, y = draw(n, rho, np.random.default_rng(data_seed))
    return both_effects(learner, X, y, B, quick, boot_seed)


def _stack(outs: list[dict], rho: float, learner: str) -> xr.Dataset:
    data = {}
    for effect in ("pd", "ale"):
        data[f"{effect}_estimate"] = (("rep", "grid"), np.stack([o[effect]["estimate"] for o in outs]))
        for kind in ("sim", "point"):
            data[f"{effect}_{kind}"] = (("rep", "bound", "grid"), np.stack([o[effect][kind] for o in outs]))
    ds = xr.Dataset(data, coords={"grid": GRID, "bound": ["lower", "upper"]})
    ds["pd_truth"] = ("grid", true_pd(GRID))
    ds["ale_truth"] = ("grid", true_ale(GRID, rho))
    ds.attrs = {"rho": rho, "learner": learner}
    return ds


#: repetitions per cached part in full mode: the parts of all (learner, rho) cells are computed round-robin,
#: so a run cut short (a busy machine) still has every cell, each with a similar number of repetitions
CHUNK = {"ols_interaction": 5, "gbm": 2}


def compute(ctx: C.Context, reps: int | None = None, resamples: int | None = None) -> None:
    cfg = settings(ctx.quick, reps, resamples)
    folder = ctx.study_dir(STUDY)
    C.cached(folder / "figure.nc", ctx, lambda: _figure_data(ctx.quick, cfg))
    # rho = 0.9 first: the case the study is about
    cells = [(rho, learner) for rho in sorted(RHOS, reverse=True) for learner in LEARNERS]
    seeds = {(rho, learner): C.seed_sequence(STUDY, learner, int(rho * 10)).spawn(cfg["reps"][learner])
             for rho, learner in cells}
    chunk = {learner: cfg["reps"][learner] if ctx.quick else CHUNK[learner] for learner in LEARNERS}
    n_parts = max(-(-cfg["reps"][learner] // chunk[learner]) for learner in LEARNERS)
    for k in range(n_parts):
        for rho, learner in cells:
            part = seeds[(rho, learner)][k * chunk[learner]:(k + 1) * chunk[learner]]
            if not part:
                continue

            def run(learner=learner, rho=rho, part=part):
                outs = Parallel(n_jobs=ctx.n_jobs)(
                    delayed(one_repetition)(learner, rho, cfg["n"], cfg["B"][learner], ctx.quick, s) for s in part)
                ds = _stack(outs, rho, learner)
                ds.attrs["B"] = cfg["B"][learner]
                ds.attrs["n"] = cfg["n"]
                return ds

            C.cached(folder / f"coverage_{learner}_rho{rho:g}_part{k:03d}.nc", ctx, run)
            print(f"  {STUDY}: {learner} rho={rho:g} part {k + 1}/{n_parts} done", file=sys.stderr, flush=True)


def _figure_data(quick: bool, cfg: dict) -> xr.Dataset:
    rho = 0.9
    X, y = draw(cfg["n"], rho, np.random.default_rng(C.seed_sequence(STUDY, "figure")))
    B = 20 if quick else 200
    bands = both_effects("gbm", X, y, B, quick, 1)
    p, a = bands["pd"], bands["ale"]
    return xr.Dataset({"x1": ("row", X[:, 0]), "x2": ("row", X[:, 1]),
                       **{f"pd_{k}": (("bound", "grid") if v.ndim == 2 else ("grid",), v) for k, v in p.items()},
                       **{f"ale_{k}": (("bound", "grid") if v.ndim == 2 else ("grid",), v) for k, v in a.items()},
                       "pd_truth": ("grid", true_pd(GRID)), "ale_truth": ("grid", true_ale(GRID, rho))},
                      coords={"grid": GRID, "bound": ["lower", "upper"]}, attrs={"rho": rho, "B": B})


# --------------------------------------------------------------------------- render


def coverage(ds: xr.Dataset, effect: str, kind: str) -> tuple[float, float]:
    """(coverage, Monte Carlo SE): pointwise averaged over the grid, or simultaneous."""
    band = ds[f"{effect}_{kind}"].values
    truth = ds[f"{effect}_truth"].values
    inside = (band[:, 0] <= truth + 1e-12) & (truth <= band[:, 1] + 1e-12)  # (rep, grid)
    per_rep = inside.mean(axis=1) if kind == "point" else inside.all(axis=1).astype(float)
    R = per_rep.size
    p = float(per_rep.mean())
    se = float(per_rep.std(ddof=1) / np.sqrt(R)) if kind == "point" and R > 1 else float(np.sqrt(p * (1 - p) / R))
    return p, se


def _results(ctx: C.Context) -> list[xr.Dataset]:
    """One Dataset per (learner, rho) cell: its cached parts, repetitions concatenated in order."""
    folder = ctx.study_dir(STUDY)
    out = []
    for learner in LEARNERS:
        for rho in RHOS:
            parts = sorted(folder.glob(f"coverage_{learner}_rho{rho:g}_part*.nc"))
            if parts:
                datasets = [C.load_dataset(p) for p in parts]
                ds = xr.concat(datasets, dim="rep", data_vars="minimal", coords="minimal", compat="override",
                               join="override", combine_attrs="override")
                for name in ("pd_truth", "ale_truth"):
                    ds[name] = datasets[0][name]
                out.append(ds)
    return out


def _table(ctx: C.Context, results: list[xr.Dataset]) -> str:
    lines = [r"\begin{tabular}{llrrcccc}", r"\toprule",
             r"learner & $\rho$ & $R$ & $B$ & PD pointwise & PD simult. & ALE pointwise & ALE simult. \\", r"\midrule"]
    text = []
    for ds in results:
        cells = []
        for effect in ("pd", "ale"):
            for kind in ("point", "sim"):
                p, se = coverage(ds, effect, kind)
                cells.append(f"{p:.2f} ({se:.2f})")
        label = LEARNER_LABELS.get(ds.attrs["learner"], ds.attrs["learner"])
        lines.append(f"{label} & {ds.attrs['rho']:g} & {ds.sizes['rep']} & {ds.attrs['B']} & " + " & ".join(cells)
                     + r" \\")
        text.append(f"{ds.attrs['learner']:<16} rho={ds.attrs['rho']:<4g} R={ds.sizes['rep']:<4} B={ds.attrs['B']:<4} "
                    + "  ".join(cells))
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "ale_coverage.tex"), "\n".join(lines))
    return "\n".join(text)


def summary_rows(results: list[xr.Dataset]) -> list[dict]:
    """One row per learner and rho: R, B, coverage and MC SE, mean pointwise band width, max |mean bias|."""
    rows = []
    for ds in results:
        row = {"learner": ds.attrs["learner"], "rho": float(ds.attrs["rho"]), "R": int(ds.sizes["rep"]),
               "B": int(ds.attrs["B"]), "n": int(ds.attrs.get("n", 0))}
        for effect in ("pd", "ale"):
            for kind in ("point", "sim"):
                p, se = coverage(ds, effect, kind)
                row[f"{effect}_{kind}_coverage"], row[f"{effect}_{kind}_se"] = round(p, 4), round(se, 4)
            band = ds[f"{effect}_point"].values
            row[f"{effect}_mean_width"] = round(float(np.mean(band[:, 1] - band[:, 0])), 4)
            bias = ds[f"{effect}_estimate"].values.mean(axis=0) - ds[f"{effect}_truth"].values
            row[f"{effect}_max_abs_bias"] = round(float(np.max(np.abs(bias))), 4)
        rows.append(row)
    return rows


#: the compact files ``render`` reads (all small: per repetition, only the bands on the 11 grid points)
ARCHIVE = ("coverage_*_part*.nc", "figure.nc", "summary.csv")


def summarize(ctx: C.Context) -> None:
    """``summary.csv``: one row per learner and rho (see :func:`summary_rows`) next to the caches."""
    import pandas as pd

    results = _results(ctx)
    if results:
        pd.DataFrame(summary_rows(results)).to_csv(ctx.study_dir(STUDY) / "summary.csv", index=False)


def _macros(ctx: C.Context, results: list[xr.Dataset]) -> None:
    macros = {}
    names = {"ols_interaction": "Ols", "gbm": "Gbm"}
    rho_names = {0.0: "Zero", 0.5: "Half", 0.9: "High"}
    for ds, row in zip(results, summary_rows(results)):
        tag = names[ds.attrs["learner"]] + rho_names[float(ds.attrs["rho"])]
        for effect in ("pd", "ale"):
            for kind in ("point", "sim"):
                p, se = coverage(ds, effect, kind)
                key = f"Ale{tag}{effect.title()}{kind.title()}"
                macros[key] = C.fmt(p)
                macros[key + "Se"] = C.fmt(se)
            macros[f"Ale{tag}{effect.title()}Width"] = C.fmt(row[f"{effect}_mean_width"])
            macros[f"Ale{tag}{effect.title()}Bias"] = C.fmt(row[f"{effect}_max_abs_bias"])
        macros[f"AleRho{rho_names[float(ds.attrs['rho'])]}"] = f"{float(ds.attrs['rho']):g}"
        learner = names[ds.attrs["learner"]]
        macros[f"Ale{learner}Reps"] = str(row["R"])
        macros[f"Ale{learner}B"] = str(row["B"])
        macros["AleN"] = str(row["n"])
    macros["AleGridPoints"] = str(len(GRID))
    # the grid's levels: z_k = Phi^{-1}(low + step k), k = 0..len(GRID)-1
    levels = norm.cdf(GRID)
    macros["AleGridLow"] = f"{levels[0]:.2f}"
    macros["AleGridStep"] = f"{(levels[-1] - levels[0]) / (len(GRID) - 1):.2f}"
    gbm = learner_for("gbm", ctx.quick)
    macros["AleGbmRounds"] = str(gbm.max_iter)
    macros["AleGbmLeaves"] = str(gbm.max_leaf_nodes)
    macros["AleGbmRate"] = f"{gbm.learning_rate:g}"
    figure = ctx.study_dir(STUDY) / "figure.nc"
    if figure.exists():
        macros["AleFigureB"] = str(int(C.load_dataset(figure).attrs["B"]))
        macros["AleFigureRho"] = f"{float(C.load_dataset(figure).attrs['rho']):g}"
    C.write_macros(ctx.out("generated", "ale.tex"), macros, "coverage of 95 % PD and ALE bands (ale_coverage)")


def _figure(ctx: C.Context) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import paper_style

    ds = C.load_dataset(ctx.study_dir(STUDY) / "figure.nc")
    # The paper's figure style (7 pt, as every other figure) and the legend above the panels, off the curves.
    with paper_style(7):
        fig, axes = plt.subplots(1, 3, figsize=(C.FULL_WIDTH, 2.4), layout="constrained")
        ax = axes[0]
        ax.scatter(ds["x1"], ds["x2"], s=3, alpha=0.4, color="0.3", linewidths=0)
        a = np.linspace(GRID[0], GRID[-1], 5)
        for value in a:
            ax.plot([value, value], [ds["x2"].min(), ds["x2"].max()], color="tab:red", lw=0.6, alpha=0.6)
        ax.set(xlabel="$x_1$", ylabel="$x_2$")
        ax.set_title(f"data, $\\rho$ = {ds.attrs['rho']:g}", fontsize=7)
        ax.text(0.02, 0.97, "PD evaluates\nalong red lines", transform=ax.transAxes, va="top", fontsize=6,
                color="tab:red", bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
        for ax, effect, title in ((axes[1], "pd", "partial dependence"), (axes[2], "ale", "accumulated local effect")):
            z = ds["grid"].values
            ax.fill_between(z, *ds[f"{effect}_sim"].values, color="tab:blue", alpha=0.18, lw=0,
                            label="95 % simultaneous band")
            ax.fill_between(z, *ds[f"{effect}_point"].values, color="tab:blue", alpha=0.35, lw=0,
                            label="95 % pointwise band")
            ax.plot(z, ds[f"{effect}_estimate"], color="tab:blue", lw=1.5, label="boosting estimate")
            ax.plot(z, ds[f"{effect}_truth"], color="black", ls="--", lw=1.2, label="truth")
            ax.plot(ds["x1"].values, np.full(ds.sizes["row"], ax.get_ylim()[0]), "|", color="0.4", ms=4, alpha=0.3)
            ax.set(xlabel="$x_1$")
            ax.set_title(title, fontsize=7)
        handles, labels = axes[1].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=4, frameon=False)
        C.savefig(fig, ctx, "ale_pd_vs_ale")


def render(ctx: C.Context) -> None:
    results = _results(ctx)
    print(_table(ctx, results), file=sys.stderr)
    _macros(ctx, results)
    _figure(ctx)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.ale_coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, help="repetitions per learner and rho (overrides the mode)")
    parser.add_argument("--resamples", type=int, help="bootstrap resamples B (overrides the mode)")
    parser.add_argument("--results-dir")
    parser.add_argument("--paper-dir")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, args.paper_dir, args.n_jobs, args.force)
    C.agg_backend()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if not args.render_only:
            compute(ctx, args.reps, args.resamples)
            summarize(ctx)
        render(ctx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
