"""Study 4: what the PD computations cost.

(a) PD of one fitted random forest (electricity prices; three 1-D curves and one 2-D surface on
    fixed grids), computed by: the notebook's loop (copy the data, set the value, predict, mean,
    per grid value); scikit-learn's ``partial_dependence(method="brute")`` per feature set;
    pdpboot's generic engine (``method="brute"``: stacked grid x row blocks); pdpboot's exact tree
    engine (``method="tree"``); and, for reference, scikit-learn's ``method="recursion"``, which is
    fast but a different quantity (it weights tree leaves by the training rows, not by X).
    Minimum of ``repeats`` timings; the same fitted models for all methods; one process, one thread.
(b) End-to-end bootstrap: B refits with the notebook's loop vs ``bootstrap_partial_dependence``.
(c) Scaling of ``bootstrap_partial_dependence`` (``n_jobs=1``; 1-D PD of Temperature and Hour) with
    B, n and grid size, for the brute and tree engines, next to the time of the refits alone.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
import xarray as xr
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_partial_dependence

import pdpboot
from pdpboot.datasets import make_electricity_prices

from . import _common as C
from .config import config

STUDY = "cost"
FEATURES = ["Temperature", "Hour", "Day"]
PAIR = ("Temperature", "Hour")
METHODS = ["notebook", "sklearn_brute", "pdpboot_brute", "pdpboot_tree", "sklearn_recursion"]
LABELS = {
    "notebook": "Notebook loop",
    "sklearn_brute": r"scikit-learn \texttt{brute}, per feature set",
    "pdpboot_brute": r"pdpboot, generic engine (\texttt{brute})",
    "pdpboot_tree": r"pdpboot, exact tree engine (\texttt{tree})",
    "sklearn_recursion": r"scikit-learn \texttt{recursion}$^\ast$",
}


def _grids(X, n_1d: int, n_2d: int) -> tuple[dict, dict]:
    lin = lambda f, k: np.linspace(X[f].quantile(0.05), X[f].quantile(0.95), k)  # noqa: E731
    one = {"Temperature": lin("Temperature", n_1d), "Hour": lin("Hour", n_1d), "Day": np.arange(7.0)}
    two = {"Temperature": lin("Temperature", n_2d), "Hour": lin("Hour", n_2d)}
    return one, two


def _notebook(model, X, grids: dict, sets: list) -> list[np.ndarray]:
    out = []
    for fs in sets:
        if isinstance(fs, str):
            values = []
            for v in grids[fs]:
                X_copy = X.copy()
                X_copy[fs] = v
                values.append(model.predict(X_copy).mean())
            out.append(np.array(values))
        else:
            a, b = fs
            surface = np.empty((len(grids[a]), len(grids[b])))
            for i, va in enumerate(grids[a]):
                for j, vb in enumerate(grids[b]):
                    X_copy = X.copy()
                    X_copy[a] = va
                    X_copy[b] = vb
                    surface[i, j] = model.predict(X_copy).mean()
            out.append(surface)
    return out


def _sklearn(model, X, grids: dict, sets: list, method: str) -> list[np.ndarray]:
    out = []
    for fs in sets:
        names = [fs] if isinstance(fs, str) else list(fs)
        r = sk_partial_dependence(model, X, names, method=method,
                                  kind="average", custom_values={f: grids[f] for f in names})
        out.append(np.asarray(r["average"][0]))
    return out


def _pdpboot(model, X, grids: dict, sets: list, method: str) -> list[np.ndarray]:
    names = sorted({f for fs in sets for f in ([fs] if isinstance(fs, str) else fs)})
    res = pdpboot.partial_dependence(model, X, sets, custom_values={f: grids[f] for f in names}, method=method)
    return [pdpboot.get_node(res, fs).ds["pd"].isel(output=0).values for fs in sets]


def _run(method: str, model, X, grids, sets):
    if method == "notebook":
        return _notebook(model, X, grids, sets)
    if method.startswith("sklearn"):
        return _sklearn(model, X, grids, sets, method.split("_")[1])
    return _pdpboot(model, X, grids, sets, method.split("_")[1])


def _best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _per_model(cfg: dict) -> xr.Dataset:
    X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
    X = X.astype(float)  # scikit-learn's brute method refuses integer grid columns
    grids_1d, grids_2d = _grids(X, cfg["grid_1d"], cfg["grid_2d"])
    model = RandomForestRegressor(n_estimators=cfg["n_trees"], random_state=0).fit(X, y)
    seconds = np.full((len(METHODS), 2), np.nan)
    max_diff = np.full((len(METHODS), 2), np.nan)
    for k, (sets, grids) in enumerate(((FEATURES, grids_1d), ([PAIR], grids_2d))):
        reference = None
        for method in METHODS:  # warm-up (imports, caches) outside the timings
            _run(method, model, X, grids, sets)
        for i, method in enumerate(METHODS):
            seconds[i, k], curves = _best_time(lambda m=method, g=grids, s=sets: _run(m, model, X, g, s),
                                               cfg["repeats"])
            reference = curves if reference is None else reference
            max_diff[i, k] = max(float(np.max(np.abs(c - r))) for c, r in zip(curves, reference))
            print(f"  cost {method} {'1-D' if k == 0 else '2-D'}: {seconds[i, k]:.3f} s", file=sys.stderr,
                  flush=True)
    return xr.Dataset({"seconds": (("approach", "kind"), seconds), "max_abs_diff": (("approach", "kind"), max_diff)},
                      coords={"approach": METHODS, "kind": ["1-D", "2-D"]},
                      attrs={"n": cfg["n"], "n_trees": cfg["n_trees"], "grid_1d": cfg["grid_1d"],
                             "grid_2d": cfg["grid_2d"], "load_average": os.getloadavg()[0]})


def _bootstrap_times(cfg: dict) -> xr.Dataset:
    """End-to-end: B refits with notebook PD vs pdpboot (auto and brute), n_jobs=1."""
    X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
    X = X.astype(float)
    grids_1d, grids_2d = _grids(X, cfg["grid_1d"], cfg["grid_2d"])
    grids = {**grids_1d, **grids_2d}
    est = RandomForestRegressor(n_estimators=cfg["n_trees"])
    B = cfg["B"]
    rng = np.random.default_rng(cfg["seed"])
    draws = [rng.integers(0, len(X), len(X)) for _ in range(B)]

    def notebook():
        for rows in draws:
            model = clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])
            _notebook(model, X, grids_1d, FEATURES)
            _notebook(model, X, grids_2d, [PAIR])

    def fits_only():
        for rows in draws:
            clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])

    def boot(method):
        return lambda: pdpboot.bootstrap_partial_dependence(
            est, X, y, [*FEATURES, PAIR], n_resamples=B, custom_values=grids, method=method, n_jobs=1,
            background="original", rng=0, progress=False)

    runs = {"notebook": notebook, "fits_only": fits_only, "pdpboot_brute": boot("brute"), "pdpboot_tree": boot("tree")}
    seconds = {}
    for name, fn in runs.items():
        seconds[name], _ = _best_time(fn, 1)
        print(f"  cost bootstrap {name}: {seconds[name]:.1f} s", file=sys.stderr, flush=True)
    return xr.Dataset({"seconds": ("run", [seconds[k] for k in runs])}, coords={"run": list(runs)},
                      attrs={"B": B, "n": cfg["n"], "n_trees": cfg["n_trees"]})


def _time_bootstrap(est, X, y, n_resamples: int, grids: dict, method: str) -> float:
    start = time.perf_counter()
    pdpboot.bootstrap_partial_dependence(est, X, y, ["Temperature", "Hour"], n_resamples=n_resamples,
                                         custom_values=grids, method=method, n_jobs=1, rng=0, progress=False)
    return time.perf_counter() - start


def _time_fits(est, X, y, draws: list) -> float:
    start = time.perf_counter()
    for rows in draws:
        clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])
    return time.perf_counter() - start


def _scaling(cfg: dict) -> xr.Dataset:
    sc = cfg["scaling"]
    base = sc["base"]
    records = []
    for axis in ("B", "n", "grid"):
        for value in sc[axis]:
            setting = dict(base, **{axis: value})
            X, y = make_electricity_prices(setting["n"], rng=cfg["seed"])
            X = X.astype(float)
            grids_1d, _ = _grids(X, setting["grid"], setting["grid"])
            est = RandomForestRegressor(n_estimators=sc["n_trees"])
            times = {method: _time_bootstrap(est, X, y, setting["B"], grids_1d, method) for method in ("brute", "tree")}
            rng = np.random.default_rng(0)
            draws = [rng.integers(0, len(X), len(X)) for _ in range(setting["B"] + 1)]
            times["fits"] = _time_fits(est, X, y, draws)
            records.append({"axis": axis, "value": value, **times})
            print(f"  cost scaling {axis}={value}: {json.dumps({k: round(v, 2) for k, v in times.items()})}",
                  file=sys.stderr, flush=True)
    return xr.Dataset(
        {k: ("point", [r[k] for r in records]) for k in ("brute", "tree", "fits")},
        coords={"axis": ("point", [r["axis"] for r in records]), "value": ("point", [r["value"] for r in records])},
        attrs={"n_trees": sc["n_trees"], **{f"base_{k}": v for k, v in base.items()}})


#: Compact files ``render`` reads (timings only; nothing to summarise).
ARCHIVE = ("per_model.nc", "bootstrap.nc", "scaling.nc")


def compute(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    folder = ctx.study_dir(STUDY)
    C.cached(folder / "per_model.nc", ctx, lambda: _per_model(cfg))
    C.cached(folder / "bootstrap.nc", ctx, lambda: _bootstrap_times(cfg))
    C.cached(folder / "scaling.nc", ctx, lambda: _scaling(cfg))


# --------------------------------------------------------------------------- render


def _difference(diff: float) -> str:
    if diff == 0:
        return "0"
    if diff < 1e-6:
        return f"$<10^{{{int(np.ceil(np.log10(diff)))}}}$"
    return C.fmt(diff, 2)


def _table(ctx: C.Context, per_model: xr.Dataset, boot: xr.Dataset) -> dict:
    sec = per_model["seconds"]
    lines = [r"\begin{tabular}{@{}lrrrrr@{}}", r"\toprule",
             r" & \multicolumn{2}{c}{1-D (3 curves)} & \multicolumn{2}{c}{2-D (1 surface)} & \\",
             r"\cmidrule(lr){2-3}\cmidrule(lr){4-5}",
             r"Method & seconds & speed-up & seconds & speed-up & max.\ $|\Delta|$ \\", r"\midrule"]
    for method in METHODS:
        cells = [LABELS[method]]
        for kind in ("1-D", "2-D"):
            s = float(sec.sel(approach=method, kind=kind))
            ratio = float(sec.sel(approach="notebook", kind=kind)) / s
            cells += [C.fmt(s, 3), C.fmt(ratio, 1 if ratio < 10 else 0) + r"$\times$"]
        cells.append(_difference(float(per_model["max_abs_diff"].sel(approach=method).max())))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "cost.tex"), "\n".join(lines))
    b = boot["seconds"]
    speed = lambda m, k: float(sec.sel(approach="notebook", kind=k) / sec.sel(approach=m, kind=k))  # noqa: E731
    one_decimal = lambda v: C.fmt(v, 1 if v < 10 else 0)  # noqa: E731
    return {
        "CostN": str(per_model.attrs["n"]), "CostTrees": str(per_model.attrs["n_trees"]),
        "CostGridOne": str(per_model.attrs["grid_1d"]), "CostGridTwo": str(per_model.attrs["grid_2d"]),
        "CostTreeSpeedupOne": one_decimal(speed("pdpboot_tree", "1-D")),
        "CostTreeSpeedupTwo": one_decimal(speed("pdpboot_tree", "2-D")),
        "CostBruteSpeedupOne": one_decimal(speed("pdpboot_brute", "1-D")),
        "CostBruteSpeedupTwo": one_decimal(speed("pdpboot_brute", "2-D")),
        "CostSklearnSpeedupOne": one_decimal(speed("sklearn_brute", "1-D")),
        "CostSklearnSpeedupTwo": one_decimal(speed("sklearn_brute", "2-D")),
        "CostTreeOverSklearnTwo": C.fmt(float(sec.sel(approach="sklearn_brute", kind="2-D")
                                              / sec.sel(approach="pdpboot_tree", kind="2-D")), 0),
        "CostBootB": str(boot.attrs["B"]),
        "CostBootNotebook": C.fmt(float(b.sel(run="notebook")), 0),
        "CostBootTree": C.fmt(float(b.sel(run="pdpboot_tree")), 1),
        "CostBootBrute": C.fmt(float(b.sel(run="pdpboot_brute")), 1),
        "CostBootFits": C.fmt(float(b.sel(run="fits_only")), 1),
        "CostBootSpeedup": C.fmt(float(b.sel(run="notebook") / b.sel(run="pdpboot_tree")), 0),
        "CostLoad": C.fmt(per_model.attrs["load_average"], 1),
    }


def _figure_scaling(ctx: C.Context, scaling: xr.Dataset) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    titles = {"B": "resamples $B$", "n": "rows $n$", "grid": "grid points per feature"}
    with paper_style():
        fig, axes = plt.subplots(1, 3, figsize=(C.FULL_WIDTH, 2.0), layout="constrained", sharey=True)
        for ax, axis in zip(axes, ("B", "n", "grid")):
            sel = scaling.where(scaling["axis"] == axis, drop=True)
            x = sel["value"].values
            for var, color, marker, label in (("brute", OKABE_ITO["orange"], "s", "pdpboot brute"),
                                              ("tree", OKABE_ITO["blue"], "o", "pdpboot tree"),
                                              ("fits", "0.4", "", "refits alone")):
                ax.plot(x, sel[var].values, color=color, marker=marker or None, ms=3,
                        ls=":" if var == "fits" else "-", label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(x, [str(int(v)) for v in x])
            ax.minorticks_off()
            ax.set_xlabel(titles[axis])
        lows = min(float(scaling[v].min()) for v in ("brute", "tree", "fits"))
        highs = max(float(scaling[v].max()) for v in ("brute", "tree", "fits"))
        ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500)
                 if lows / 1.5 <= t <= highs * 1.5]
        axes[0].set_yticks(ticks, [f"{t:g}" for t in ticks])
        axes[0].set_ylabel("seconds (one core)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "cost_scaling")


def render(ctx: C.Context) -> None:
    folder = ctx.study_dir(STUDY)
    per_model = C.load_dataset(folder / "per_model.nc")
    boot = C.load_dataset(folder / "bootstrap.nc")
    scaling = C.load_dataset(folder / "scaling.nc")
    macros = _table(ctx, per_model, boot)
    _figure_scaling(ctx, scaling)
    sc = scaling
    macros["CostScalingTrees"] = str(sc.attrs["n_trees"])
    ratio = sc["tree"] / sc["fits"]
    grid_points = sc.where(sc["axis"] == "grid", drop=True)
    largest = grid_points.isel(point=int(np.argmax(grid_points["value"].values)))
    macros.update({"CostScaleTreeOverFitsMin": C.fmt(float(ratio.min()), 1),
                   "CostScaleTreeOverFitsMax": C.fmt(float(ratio.max()), 1),
                   "CostScaleBruteOverTreeLargestGrid": C.fmt(float(largest["brute"] / largest["tree"]), 1),
                   "CostScaleLargestGrid": str(int(largest["value"]))})
    macros.update({"CostScaleB": str(sc.attrs["base_B"]), "CostScaleN": str(sc.attrs["base_n"]),
                   "CostScaleGrid": str(sc.attrs["base_grid"])})
    C.write_macros(ctx.out("generated", "cost.tex"), macros, f"mode: {ctx.mode}")
