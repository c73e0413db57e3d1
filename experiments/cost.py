"""Study 4: what the PD computations cost.

(a) PD of one fitted random forest (electricity prices; three 1-D curves and one 2-D surface on
    fixed grids), computed by: the notebook's loop (copy the data, set the value, predict, mean,
    per grid value); scikit-learn's ``partial_dependence(method="brute")`` per feature set;
    pdpboot's generic engine (``method="brute"``: stacked grid x row blocks); pdpboot's exact tree
    engine (``method="tree"``); and, for reference, scikit-learn's ``method="recursion"``, which is
    fast but a different quantity (it weights tree leaves by the training rows, not by X).
    Two models: a fully grown random forest and histogram gradient boosting. Median of ``repeats``
    timings, the methods run in turn (interleaved) so that a change of load hits all alike; the same
    fitted models for all methods.
(b) End-to-end bootstrap: B refits with the notebook's loop vs ``bootstrap_partial_dependence``
    (both models).
(c) Scaling of ``bootstrap_partial_dependence`` (``n_jobs=1``; 1-D PD of Temperature and Hour) with
    B, n and grid size, for the brute and tree engines, next to the time of the refits alone (forest).

Every time is the CPU time of this (single-threaded) process: ``time.process_time`` with every
thread pool limited to one thread and ``n_jobs=1``. On a shared machine the wall time of a run
depends on the other jobs; its CPU time, and above all the ratio of two CPU times measured side by
side, hardly does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.inspection import partial_dependence as sk_partial_dependence

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import make_electricity_prices

from . import _common as C
from .config import config

STUDY = "cost"
MODELS = ["forest", "boosting"]
MODEL_LABELS = {"forest": "random forest", "boosting": "histogram gradient boosting"}
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
    res = pdpboot.partial_dependence(model, X, sets, grid=Grid(custom_values={f: grids[f] for f in names}),
                                     method=method)
    return [pdpboot.get_node(res, fs).ds["pd"].isel(output=0).values for fs in sets]


def _run(method: str, model, X, grids, sets):
    if method == "notebook":
        return _notebook(model, X, grids, sets)
    if method.startswith("sklearn"):
        return _sklearn(model, X, grids, sets, method.split("_")[1])
    return _pdpboot(model, X, grids, sets, method.split("_")[1])


def _cpu_time(fn) -> tuple[float, object]:
    """CPU seconds of ``fn()`` in this process (one thread: every thread pool limited to 1) and its output."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        start = time.process_time()
        out = fn()
        return time.process_time() - start, out


def _model(name: str, cfg: dict, *, n_trees: int | None = None):
    """An unfitted model: the fully grown forest (``n_trees`` trees) or boosting (``max_iter`` rounds)."""
    if name == "forest":
        return RandomForestRegressor(n_estimators=n_trees or cfg["n_trees"], n_jobs=1)
    return HistGradientBoostingRegressor(max_iter=cfg["max_iter"], early_stopping=False)


def _per_model(cfg: dict) -> xr.Dataset:
    X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
    X = X.astype(float)  # scikit-learn's brute method refuses integer grid columns
    grids_1d, grids_2d = _grids(X, cfg["grid_1d"], cfg["grid_2d"])
    shape = (len(MODELS), len(METHODS), 2)
    seconds = np.full((*shape, cfg["repeats"]), np.nan)
    max_diff = np.full(shape, np.nan)
    for m, name in enumerate(MODELS):
        model = _model(name, cfg).set_params(random_state=0).fit(X, y)
        for k, (sets, grids) in enumerate(((FEATURES, grids_1d), ([PAIR], grids_2d))):
            for method in METHODS[1:]:  # warm-up (imports, compilation, caches) outside the timings
                _run(method, model, X, grids, sets)
            curves = {}
            for r in range(cfg["repeats"]):  # interleaved: every method once per round
                for i, method in enumerate(METHODS):
                    seconds[m, i, k, r], curves[method] = _cpu_time(
                        lambda m_=method, f=model, g=grids, s=sets: _run(m_, f, X, g, s))
            reference = curves["notebook"]
            for i, method in enumerate(METHODS):
                max_diff[m, i, k] = max(float(np.max(np.abs(c - r))) for c, r in zip(curves[method], reference))
                print(f"  cost {name} {method} {'1-D' if k == 0 else '2-D'}: "
                      f"{np.median(seconds[m, i, k]):.3f} s CPU", file=sys.stderr, flush=True)
    return xr.Dataset(
        {"seconds": (("model", "approach", "kind"), np.median(seconds, axis=-1)),
         "seconds_repeats": (("model", "approach", "kind", "repeat"), seconds),
         "max_abs_diff": (("model", "approach", "kind"), max_diff)},
        coords={"model": MODELS, "approach": METHODS, "kind": ["1-D", "2-D"]},
        attrs={"n": cfg["n"], "n_trees": cfg["n_trees"], "max_iter": cfg["max_iter"], "grid_1d": cfg["grid_1d"],
               "grid_2d": cfg["grid_2d"], "repeats": cfg["repeats"], "clock": "process CPU time, one thread",
               "load_average": os.getloadavg()[0]})


def _bootstrap_times(cfg: dict) -> xr.Dataset:
    """End-to-end: B refits with notebook PD vs pdpboot (brute and tree engines), n_jobs=1, per model."""
    X, y = make_electricity_prices(cfg["n"], rng=cfg["seed"])
    X = X.astype(float)
    grids_1d, grids_2d = _grids(X, cfg["grid_1d"], cfg["grid_2d"])
    grids = {**grids_1d, **grids_2d}
    B = cfg["B"]
    rng = np.random.default_rng(cfg["seed"])
    draws = [rng.integers(0, len(X), len(X)) for _ in range(B)]
    runs = ["notebook", "fits_only", "pdpboot_brute", "pdpboot_tree"]
    seconds = np.full((len(MODELS), len(runs)), np.nan)
    for m, name in enumerate(MODELS):
        est = _model(name, cfg)

        def notebook(est=est):
            for rows in draws:
                model = clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])
                _notebook(model, X, grids_1d, FEATURES)
                _notebook(model, X, grids_2d, [PAIR])

        def fits_only(est=est):
            for rows in draws:
                clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])

        def boot(method, est=est):
            return lambda: pdpboot.bootstrap_partial_dependence(
                est, X, y, [*FEATURES, PAIR], n_resamples=B, grid=Grid(custom_values=grids), rng=0,
                resampling=pdpboot.Resampling(background="original"),
                execution=pdpboot.Execution(method=method, n_jobs=1, progress=False))

        fns = {"notebook": notebook, "fits_only": fits_only, "pdpboot_brute": boot("brute"),
               "pdpboot_tree": boot("tree")}
        for j, run in enumerate(runs):
            seconds[m, j], _ = _cpu_time(fns[run])
            print(f"  cost bootstrap {name} {run}: {seconds[m, j]:.1f} s CPU", file=sys.stderr, flush=True)
    return xr.Dataset({"seconds": (("model", "run"), seconds)}, coords={"model": MODELS, "run": runs},
                      attrs={"B": B, "n": cfg["n"], "n_trees": cfg["n_trees"], "max_iter": cfg["max_iter"],
                             "clock": "process CPU time, one thread"})


def _time_bootstrap(est, X, y, n_resamples: int, grids: dict, method: str) -> float:
    return _cpu_time(lambda: pdpboot.bootstrap_partial_dependence(
        est, X, y, ["Temperature", "Hour"], n_resamples=n_resamples, grid=Grid(custom_values=grids), rng=0,
        execution=pdpboot.Execution(method=method, n_jobs=1, progress=False)))[0]


def _time_fits(est, X, y, draws: list) -> float:
    def fits():
        for rows in draws:
            clone(est).set_params(random_state=0).fit(X.iloc[rows], y.iloc[rows])

    return _cpu_time(fits)[0]


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
            est = _model("forest", cfg, n_trees=sc["n_trees"])
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
        attrs={"n_trees": sc["n_trees"], "clock": "process CPU time, one thread",
               **{f"base_{k}": v for k, v in base.items()}})


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
             r"Method & CPU s & speed-up & CPU s & speed-up & max.\ $|\Delta|$ \\"]
    for model in MODELS:
        label = MODEL_LABELS[model] + (f" ({per_model.attrs['n_trees']} trees)" if model == "forest"
                                       else f" ({per_model.attrs['max_iter']} rounds)")
        lines += [r"\midrule", rf"\multicolumn{{6}}{{@{{}}l}}{{\emph{{{label[0].upper() + label[1:]}}}}} \\"]
        for method in METHODS:
            cells = [LABELS[method]]
            for kind in ("1-D", "2-D"):
                t = float(sec.sel(model=model, approach=method, kind=kind))
                ratio = float(sec.sel(model=model, approach="notebook", kind=kind)) / t
                cells += [C.fmt(t, 3), C.fmt(ratio, 1 if ratio < 10 else 0) + r"$\times$"]
            cells.append(_difference(float(per_model["max_abs_diff"].sel(model=model, approach=method).max())))
            lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "cost.tex"), "\n".join(lines))

    def speed(m, k, model="forest"):
        return float(sec.sel(model=model, approach="notebook", kind=k) / sec.sel(model=model, approach=m, kind=k))

    one_decimal = lambda v: C.fmt(v, 1 if v < 10 else 0)  # noqa: E731
    macros = {
        "CostN": str(per_model.attrs["n"]), "CostTrees": str(per_model.attrs["n_trees"]),
        "CostRounds": str(per_model.attrs["max_iter"]), "CostRepeats": str(per_model.attrs["repeats"]),
        "CostGridOne": str(per_model.attrs["grid_1d"]), "CostGridTwo": str(per_model.attrs["grid_2d"]),
        "CostLoad": C.fmt(per_model.attrs["load_average"], 1),
        "CostBootB": str(boot.attrs["B"]),
    }
    for model, suffix in (("forest", ""), ("boosting", "Boost")):
        for method, key in (("pdpboot_tree", "Tree"), ("pdpboot_brute", "Brute"), ("sklearn_brute", "Sklearn")):
            macros[f"Cost{key}Speedup{suffix}One"] = one_decimal(speed(method, "1-D", model))
            macros[f"Cost{key}Speedup{suffix}Two"] = one_decimal(speed(method, "2-D", model))
        macros[f"CostTreeOverSklearn{suffix}Two"] = one_decimal(float(
            sec.sel(model=model, approach="sklearn_brute", kind="2-D")
            / sec.sel(model=model, approach="pdpboot_tree", kind="2-D")))
        macros[f"CostTreeOverSklearn{suffix}One"] = one_decimal(float(
            sec.sel(model=model, approach="sklearn_brute", kind="1-D")
            / sec.sel(model=model, approach="pdpboot_tree", kind="1-D")))
        b = boot["seconds"].sel(model=model)
        pd_part = lambda run, b=b: float(b.sel(run=run) - b.sel(run="fits_only"))  # noqa: E731
        macros.update({
            f"CostBoot{suffix}Notebook": one_decimal(float(b.sel(run="notebook"))),
            f"CostBoot{suffix}Tree": C.fmt(float(b.sel(run="pdpboot_tree")), 1),
            f"CostBoot{suffix}Brute": C.fmt(float(b.sel(run="pdpboot_brute")), 1),
            f"CostBoot{suffix}Fits": C.fmt(float(b.sel(run="fits_only")), 1),
            f"CostBoot{suffix}Speedup": one_decimal(float(b.sel(run="notebook") / b.sel(run="pdpboot_tree"))),
            f"CostBoot{suffix}BruteSpeedup": one_decimal(float(b.sel(run="notebook") / b.sel(run="pdpboot_brute"))),
            f"CostBoot{suffix}TreeOverFits": C.fmt(float(b.sel(run="pdpboot_tree") / b.sel(run="fits_only")), 2),
            # PD part of the bootstrap (total minus the refits alone): notebook loop vs tree engine
            f"CostBoot{suffix}PDSpeedup": one_decimal(pd_part("notebook") / max(pd_part("pdpboot_tree"), 1e-3)),
        })
    return macros


def _figure_scaling(ctx: C.Context, scaling: xr.Dataset) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    titles = {"B": "resamples $B$", "n": "rows $n$", "grid": "grid points per feature"}
    with paper_style(9):  # tick labels 8 pt at full width (7 pt was too small to read in print)
        fig, axes = plt.subplots(1, 3, figsize=(C.FULL_WIDTH, 2.3), layout="constrained", sharey=True)
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
        axes[0].set_ylabel("CPU seconds (one thread)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "cost_scaling")


# --------------------------------------------------------------------------- benchmark records -> macros

#: Committed benchmark records (JSON lines, force-added to git) that Section "Cost of the exact engine" quotes.
BENCHMARK_RESULTS = C.ROOT / "benchmarks" / "results"
#: Training sizes of the fit-share runs the text quotes, by the word used in the macro names.
FIT_SHARE_SIZES = {"Small": 2000, "Large": 20000}
FIT_SHARE_MODELS = {"rf": "RF", "hgb": "HGB", "catboost": "CatBoost", "xgboost": "XGBoost", "lightgbm": "LightGBM"}


def benchmark_records(folder=BENCHMARK_RESULTS) -> list[dict]:
    """Every record of every ``*.jsonl`` under ``folder`` (lines that are not JSON objects are skipped).

    Each record gets ``_file`` (the file's stem); files are read in name order, lines in order.
    """
    rows = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict):
                rows.append({**row, "_file": path.stem})
    return rows


def latest_record(rows: list[dict], **match) -> dict | None:
    """The most recent record (by its ``date`` field, then file order) whose fields equal ``match``; None if none.

    A field missing from a record counts as None, so ``fixed_model_rows=None`` also matches older records
    without that field.
    """
    hits = [(str(r.get("date", "")), i, r) for i, r in enumerate(rows)
            if all(r.get(k) == v for k, v in match.items())]
    return max(hits, key=lambda h: h[:2])[2] if hits else None


def _kernel_time(row: dict | None, key: str) -> float:
    times = (row or {}).get("times") or {}
    value = times.get(key)
    return float(value) if value is not None else float("nan")


def _exponent(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log time on log n (NaN with fewer than two points)."""
    points = [(n, t) for n, t in points if t == t and t > 0]
    if len(points) < 2:
        return float("nan")
    n, t = map(np.log, zip(*points))
    return float(np.polyfit(n, t, 1)[0])


def speed_macros(rows: list[dict]) -> tuple[dict, list[str]]:
    """Macros of the engine paragraph from benchmark records; the list names the records not found (``--``).

    Fields read (``benchmarks/bench_kernel.py``): ``n``, ``trees``, ``grid`` (``"50"`` or ``"50x50"``),
    ``fixed_model_rows``, ``times`` (``kernel``, ``brute``, ``numpy``), ``speedup_vs_brute``, ``date``;
    (``benchmarks/bench_fit_share.py``): ``model``, ``n``, ``resamples``, ``ratio``, ``fit_cpu``, ``fits``,
    ``total_cpu`` and, in its A/B runs, ``shared_walk`` (records with ``shared_walk`` false are the
    ``...Separate`` macros, every other record the default engine's).  The most recent matching record
    wins, so a rerun appended to any file flows in; a missing field reads ``--``.
    """
    missing: list[str] = []

    def kernel(n, grid="50", trees=100, fixed=None):
        row = latest_record(rows, n=n, grid=grid, trees=trees, fixed_model_rows=fixed)
        if row is None:
            missing.append(f"bench_kernel n={n} grid={grid} trees={trees} fixed_model_rows={fixed}")
        return row

    def speedup(row, digits=1):
        if row is None:
            return "--"
        value = row.get("speedup_vs_brute") or _kernel_time(row, "brute") / _kernel_time(row, "kernel")
        return C.fmt(float(value), digits if value < 100 else 0)

    def numpy_ratio(row):
        return C.fmt(_kernel_time(row, "numpy") / _kernel_time(row, "kernel"), 1)

    one_k, ten_k = kernel(1000), kernel(10000)
    one_k_2d, ten_k_2d = kernel(1000, "50x50"), kernel(10000, "50x50")
    hundred_k, hundred_k_20 = kernel(100000), kernel(100000, trees=20)
    macros = {
        "SpeedKernelOneK": speedup(one_k), "SpeedKernelTenK": speedup(ten_k),
        "SpeedKernelTwoDOneK": speedup(one_k_2d), "SpeedKernelTwoDTenK": speedup(ten_k_2d),
        "SpeedNumpyOneK": numpy_ratio(one_k), "SpeedNumpyTenK": numpy_ratio(ten_k),
        "SpeedKernelHundredK": speedup(hundred_k), "SpeedKernelHundredKTwenty": speedup(hundred_k_20),
    }
    twenty = [kernel(n, trees=20) for n in (1000, 10000, 100000)]
    macros["SpeedExpKernelTwenty"] = C.fmt(_exponent([(r["n"], _kernel_time(r, "kernel")) for r in twenty if r]))
    macros["SpeedExpBruteTwenty"] = C.fmt(_exponent([(r["n"], _kernel_time(r, "brute")) for r in twenty if r]))
    fixed = {n: kernel(n, fixed=10000) for n in (1000, 10000, 100000)}
    pts = lambda key, ns: [(n, _kernel_time(fixed[n], key)) for n in ns if fixed[n]]  # noqa: E731
    macros.update({
        "SpeedFixedExpKernel": C.fmt(_exponent(pts("kernel", (1000, 100000)))),
        "SpeedFixedExpKernelUpper": C.fmt(_exponent(pts("kernel", (10000, 100000)))),
        "SpeedFixedExpBrute": C.fmt(_exponent(pts("brute", (1000, 100000)))),
        "SpeedFixedHundredK": speedup(fixed[100000]),
    })
    share = [r for r in rows if "ratio" in r and "model" in r]
    for model, key in FIT_SHARE_MODELS.items():
        for word, n in FIT_SHARE_SIZES.items():
            # The default engine: records of --ab runs with the shared walk switched off are read separately.
            default = [r for r in share if r.get("shared_walk", True)]
            row = latest_record(default, model=model, n=n)
            if row is None:
                missing.append(f"bench_fit_share model={model} n={n}")
                row = {}
            fits = row.get("fits") or float("nan")
            macros[f"SpeedFitShare{key}{word}"] = C.fmt(float(row.get("ratio", float("nan"))), 2)
            macros[f"SpeedFitShare{key}{word}B"] = str(row["resamples"]) if "resamples" in row else "--"
            macros[f"SpeedFitShare{key}{word}Fit"] = C.fmt(float(row.get("fit_cpu", float("nan"))) / fits, 2)
            separate = latest_record([r for r in share if r.get("shared_walk") is False], model=model, n=n)
            macros[f"SpeedFitShare{key}{word}Separate"] = C.fmt(float((separate or {}).get("ratio", float("nan"))), 2)
    for word, n in FIT_SHARE_SIZES.items():
        macros[f"SpeedFitShareN{word}"] = f"{n:,}".replace(",", "{,}")
    # The spread of the end-to-end ratio (whole bootstrap over its refits) across model families and sizes,
    # quoted in the abstract (issue 31, point 6): the smallest and largest of the ratios above.
    ratios = [float(macros[f"SpeedFitShare{key}{word}"]) for key in FIT_SHARE_MODELS.values()
              for word in FIT_SHARE_SIZES if macros[f"SpeedFitShare{key}{word}"] != "--"]
    macros["SpeedFitShareMin"] = C.fmt(min(ratios), 2) if ratios else "--"
    macros["SpeedFitShareMax"] = C.fmt(max(ratios), 2) if ratios else "--"
    macros["SpeedFitShareCount"] = str(len(ratios))
    macros["SpeedSharedWalkText"] = _shared_walk_text(share)
    macros.update(_speed_setting_macros(one_k, one_k_2d, hundred_k, hundred_k_20, ten_k, fixed[100000], share))
    return macros, missing


def _thousands(n) -> str:
    """An integer for the text: a thin comma from five digits on (1000, 2500, 10{,}000)."""
    return f"{int(n):,}".replace(",", "{,}") if int(n) >= 10_000 else str(int(n))


def _speed_setting_macros(one_k, one_k_2d, hundred_k, hundred_k_20, ten_k, fixed, share) -> dict:
    r"""The benchmark settings quoted in the engine paragraph, from the records read (``--`` if missing) and from
    ``benchmarks/bench_fit_share.py`` (models and feature sets).

    ``\SpeedGridPoints`` (1-D grid), ``\SpeedSurfaceSide`` and ``\SpeedSurfacePoints`` (the 2-D grid),
    ``\SpeedTrees`` and ``\SpeedTreesSmall`` (forests), ``\SpeedN<OneK|TenK|HundredK>`` (rows),
    ``\SpeedFixedModelRows``; fit share: ``\SpeedFitShareGrid``, ``\SpeedFitShareCurves`` (in words), the models'
    ``\SpeedHGBIterations``, ``\SpeedCatBoostTrees``/``Depth``, ``\SpeedXGBoostTrees``/``Depth``,
    ``\SpeedLightGBMTrees``/``Leaves``; ``\SpeedBlockMiBOther``: brute force's block (MiB) for models of no listed
    family, e.g. neural networks (``pdpboot.engine.brute.FAMILY_BLOCK_BYTES``).
    """
    from benchmarks.bench_fit_share import FEATURE_SETS, MODEL_SETTINGS
    from pdpboot.engine.brute import FAMILY_BLOCK_BYTES

    def field(row, key, fmt=str):
        return fmt(row[key]) if row and row.get(key) is not None else "--"

    side = one_k_2d["grid"].split("x") if one_k_2d else None
    default_rf = latest_record([r for r in share if r.get("shared_walk", True)], model="rf",
                               n=FIT_SHARE_SIZES["Small"])
    curves = sum(isinstance(f, str) for f in FEATURE_SETS)
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    ms = MODEL_SETTINGS
    return {
        "SpeedGridPoints": field(one_k, "grid_points"), "SpeedTrees": field(one_k, "trees"),
        "SpeedTreesSmall": field(hundred_k_20, "trees"),
        "SpeedSurfaceSide": side[0] if side and len(set(side)) == 1 else "--",
        "SpeedSurfacePoints": field(one_k_2d, "grid_points", _thousands),
        "SpeedNOneK": field(one_k, "n", _thousands), "SpeedNTenK": field(ten_k, "n", _thousands),
        "SpeedNHundredK": field(hundred_k, "n", _thousands),
        "SpeedFixedModelRows": field(fixed, "fixed_model_rows", _thousands),
        "SpeedFitShareGrid": field(default_rf, "grid"), "SpeedFitShareCurves": words.get(curves, str(curves)),
        "SpeedHGBIterations": str(ms["hgb"]["max_iter"]),
        "SpeedCatBoostTrees": str(ms["catboost"]["iterations"]), "SpeedCatBoostDepth": str(ms["catboost"]["depth"]),
        "SpeedXGBoostTrees": str(ms["xgboost"]["n_estimators"]), "SpeedXGBoostDepth": str(ms["xgboost"]["max_depth"]),
        "SpeedLightGBMTrees": str(ms["lightgbm"]["n_estimators"]),
        "SpeedLightGBMLeaves": str(ms["lightgbm"]["num_leaves"]),
        "SpeedBlockMiBOther": f"{FAMILY_BLOCK_BYTES['other'] / 2**20:g}",
    }


def _shared_walk_text(share: list[dict]) -> str:
    """The engine paragraph's last clause: the A/B result of the shared walk if recorded, else the plan.

    An A/B pair is the latest ``shared_walk`` true and false records of ``--ab`` runs (they carry
    ``repeats``) of one model and size (boosting, then the forest, then CatBoost; the larger size first).
    """
    names = {"hgb": "histogram boosting", "rf": "the forest", "catboost": "CatBoost"}
    for model in ("hgb", "rf", "catboost"):
        for n in sorted(FIT_SHARE_SIZES.values(), reverse=True):
            paired = [r for r in share if "repeats" in r]  # the two arms of one --ab run, not a later plain run
            on = latest_record([r for r in paired if r.get("shared_walk") is True], model=model, n=n)
            off = latest_record([r for r in paired if r.get("shared_walk") is False], model=model, n=n)
            if on and off:
                repeats = on.get("repeats")
                runs = f", medians of {repeats} interleaved runs each" if repeats else ""
                n_tex = f"{n:,}".replace(",", "{,}")
                return (f"; one walk per tree now serves all feature sets of a resample, which brought the ratio "
                        f"for {names[model]} at $n = {n_tex}$ from {C.fmt(float(off['ratio']))} (one walk per "
                        f"feature set) to {C.fmt(float(on['ratio']))}{runs}")
    return (": each feature set walks the same rows through the same trees again, which a walk shared by the "
            "feature sets would avoid")


def render_speed(ctx: C.Context, folder=BENCHMARK_RESULTS) -> None:
    """``generated/speed.tex``: the engine paragraph's numbers from the committed benchmark records."""
    macros, missing = speed_macros(benchmark_records(folder))
    for what in missing:
        print(f"  cost: no benchmark record for {what} (its macros read --)", file=sys.stderr, flush=True)
    comment = "from benchmarks/results/*.jsonl (the most recent matching record)"
    if missing:
        comment += "; missing: " + "; ".join(missing)
    C.write_macros(ctx.out("generated", "speed.tex"), macros, comment)


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
    n_points = sc.where(sc["axis"] == "n", drop=True)
    largest_n = n_points.isel(point=int(np.argmax(n_points["value"].values)))
    smallest_n = n_points.isel(point=int(np.argmin(n_points["value"].values)))
    pd_share = lambda pt, v: float((pt[v] - pt["fits"]) / pt["fits"])  # noqa: E731  PD time per unit of refit time
    macros.update({"CostScaleTreeOverFitsMin": C.fmt(float(ratio.min()), 1),
                   "CostScaleTreeOverFitsMax": C.fmt(float(ratio.max()), 1),
                   "CostScaleBruteOverTreeLargestGrid": C.fmt(float(largest["brute"] / largest["tree"]), 1),
                   "CostScaleLargestGrid": str(int(largest["value"])),
                   "CostScaleLargestN": str(int(largest_n["value"])),
                   "CostScaleSmallestN": str(int(smallest_n["value"])),
                   "CostScaleBruteOverTreeLargestN": C.fmt(float(largest_n["brute"] / largest_n["tree"]), 2),
                   "CostScaleBruteOverTreeSmallestN": C.fmt(float(smallest_n["brute"] / smallest_n["tree"]), 2),
                   "CostScaleBruteShareLargestN": C.fmt(pd_share(largest_n, "brute"), 2),
                   "CostScaleTreeShareLargestN": C.fmt(pd_share(largest_n, "tree"), 2),
                   "CostScaleBruteShareSmallestN": C.fmt(pd_share(smallest_n, "brute"), 2),
                   "CostScaleTreeShareSmallestN": C.fmt(pd_share(smallest_n, "tree"), 2)})
    macros.update({"CostScaleB": str(sc.attrs["base_B"]), "CostScaleN": str(sc.attrs["base_n"]),
                   "CostScaleGrid": str(sc.attrs["base_grid"])})
    # The base setting is timed once on each axis: the spread of its refit times shows the timing noise.
    base = {"B": sc.attrs["base_B"], "n": sc.attrs["base_n"], "grid": sc.attrs["base_grid"]}
    is_base = np.array([float(v) == float(base[a]) for a, v in zip(sc["axis"].values, sc["value"].values)])
    base_fits = sc["fits"].values[is_base]
    if base_fits.size:
        macros.update({"CostScaleBaseFitsMin": C.fmt(float(base_fits.min())),
                       "CostScaleBaseFitsMax": C.fmt(float(base_fits.max())),
                       "CostScaleBaseTimings": str(int(base_fits.size))})
    C.write_macros(ctx.out("generated", "cost.tex"), macros, f"mode: {ctx.mode}")
    render_speed(ctx)
