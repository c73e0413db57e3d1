"""Study 3: ICE heterogeneity and interaction statistics with uncertainty, on DGPs with known answers.

(a) One bootstrap per DGP (Goldstein et al.'s ``0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0]``, the
    multiplicative interaction ``x1 + x2 + x1 x2``, Friedman #1) with a gradient-boosting model:
    PD + ICE and centred ICE curves, the SD of derivative ICE curves (``dice_sd``) and
    Friedman-Popescu H^2 of feature pairs, each with percentile bands.
(b) The refit test of "no interaction" (:func:`pdpboot.interaction.h_statistic_test`, default smooth
    null) on fresh data sets: its rejection rate at the 5 % level for pairs without an interaction
    (false-positive rate) and with one (power).  The settings run round-robin in chunks saved as they
    finish (a stopped run keeps them and a rerun resumes); the table quotes the repetitions reached.

Known answers: the population SD of the ICE slopes is 5 for Goldstein's x2 (slopes -5 or +5), 0
for x1 (slope 0.2 everywhere) and 1 for x1 of the interaction DGP (slope ``1 + x2``); H^2 is 1 for
Goldstein's (x2, x3) (its PD surface is pure interaction), 1/3 for the interaction DGP, and
:func:`friedman_h2` for Friedman's (x1, x2); every other pair has H^2 = 0.
"""

from __future__ import annotations

import functools
import re
import sys

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from sklearn.ensemble import HistGradientBoostingRegressor

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import make_friedman1, make_goldstein, make_interaction
from pdpboot.heterogeneity import ice_heterogeneity
from pdpboot.interaction import h_statistic, h_statistic_test

from . import _common as C
from .config import config

STUDY = "heterogeneity"
_MAKERS = {"goldstein": make_goldstein, "interaction": make_interaction, "friedman1": make_friedman1}
DGPS = {
    "goldstein": {"features": ["x1", "x2", "x3"], "pairs": [("x1", "x2"), ("x1", "x3"), ("x2", "x3")],
                  "label": "Goldstein"},
    "interaction": {"features": ["x1", "x2"], "pairs": [("x1", "x2")], "label": "Interaction"},
    "friedman1": {"features": ["x1", "x2", "x4"], "pairs": [("x1", "x2"), ("x1", "x4"), ("x2", "x4")],
                  "label": "Friedman #1", "tex": r"Friedman \#1"},
}
#: Refit-test settings: (DGP, pair, has an interaction).
TESTS = {
    "goldstein_x1x2": ("goldstein", ("x1", "x2"), False),
    "friedman1_x4x5": ("friedman1", ("x4", "x5"), False),
    "goldstein_x2x3": ("goldstein", ("x2", "x3"), True),
    "interaction_x1x2": ("interaction", ("x1", "x2"), True),
    "friedman1_x1x2": ("friedman1", ("x1", "x2"), True),
}
TRUE_DICE_SD = {("goldstein", "x1"): 0.0, ("goldstein", "x2"): 5.0, ("interaction", "x1"): 1.0}


@functools.cache
def friedman_h2() -> float:
    """Population H^2 of (x1, x2) in Friedman #1: midpoint rule on a 2000 x 2000 grid."""
    u = (np.arange(2000) + 0.5) / 2000
    g12 = 10 * np.sin(np.pi * u[:, None] * u[None, :])
    g1 = g12.mean(axis=1)
    g2 = g12.mean(axis=0)
    centred = g12 - g12.mean()
    pure = centred - (g1 - g1.mean())[:, None] - (g2 - g2.mean())[None, :]
    return float((pure**2).mean() / (centred**2).mean())


def true_h2(dgp: str, pair: tuple[str, str]) -> float:
    if dgp == "goldstein":
        return 1.0 if set(pair) == {"x2", "x3"} else 0.0
    if dgp == "interaction":
        return 1.0 / 3.0
    return friedman_h2() if set(pair) == {"x1", "x2"} else 0.0


def _learner(max_iter: int) -> HistGradientBoostingRegressor:
    return HistGradientBoostingRegressor(max_iter=max_iter, learning_rate=0.1, early_stopping=False)


# --------------------------------------------------------------------------- compute


def _bootstrap(ctx: C.Context, cfg: dict, dgp: str) -> bool:
    """The bootstrap of one DGP (cached); whether it was computed."""
    path = ctx.study_dir(STUDY) / f"bootstrap_{dgp}.nc"
    if not ctx.needs(path):
        return False
    spec = DGPS[dgp]
    X, y = _MAKERS[dgp](cfg["n"], rng=C.seed_sequence(cfg["seed"], dgp, "data"))
    res = pdpboot.bootstrap_partial_dependence(
        _learner(cfg["max_iter"]), X, y, [*spec["features"], *spec["pairs"]], n_resamples=cfg["B"],
        grid=Grid(20),
        rng=C.seed_sequence(cfg["seed"], dgp, "bootstrap").generate_state(1)[0],
        execution=pdpboot.Execution(n_jobs=ctx.n_jobs, progress=False),
        statistics={"ice": cfg["n_ice"], "heterogeneity": True, "interactions": cfg["h_rows"]})
    pdpboot.save(res, path)
    return True


def _one_test(dgp: str, pair, cfg: dict, seed: np.random.SeedSequence) -> tuple[float, float]:
    data_seed, test_seed = seed.spawn(2)
    X, y = _MAKERS[dgp](cfg["n"], rng=np.random.default_rng(data_seed))
    out = h_statistic_test(_learner(cfg["max_iter"]), X, y, pair, n_resamples=cfg["null_refits"],
                           n_max=cfg["h_rows"], rng=np.random.default_rng(test_seed),
                           execution=pdpboot.Execution(n_jobs=1, progress=False))
    return out.attrs["statistic"], out.attrs["pvalue"]


def _planned_reps(cfg: dict, name: str) -> int:
    return cfg["test"]["reps_power"] if TESTS[name][2] else cfg["test"]["reps_null"]


def _chunk_dir(ctx: C.Context, name: str):
    return ctx.study_dir(STUDY) / f"test_{name}"


def _done_reps(ctx: C.Context, name: str) -> set[int]:
    """Repetition indices of the refit test ``name`` in its saved chunks (``*.tmp.nc`` of a killed write ignored)."""
    done: set[int] = set()
    for path in sorted(_chunk_dir(ctx, name).glob("reps_*.nc")):
        if not path.name.endswith(".tmp.nc"):
            done.update(int(r) for r in C.load_dataset(path)["rep"].values)
    return done


def _test_chunk(ctx: C.Context, cfg: dict, name: str, reps: list[int]) -> None:
    """Repetitions ``reps`` of the refit test ``name`` (repetition i uses the i-th child seed), saved as one chunk."""
    dgp, pair, interacting = TESTS[name]
    children = C.seed_sequence(cfg["seed"], name, "test").spawn(max(reps) + 1)
    with C.timed() as t:
        out = Parallel(n_jobs=ctx.n_jobs)(delayed(_one_test)(dgp, pair, cfg["test"], children[i]) for i in reps)
        stats, pvalues = map(np.array, zip(*out))
        ds = xr.Dataset({"statistic": ("rep", stats), "pvalue": ("rep", pvalues)}, coords={"rep": reps})
        C.save_dataset(ds, _chunk_dir(ctx, name) / f"reps_{reps[0]:05d}.nc")
    C.record_timing(ctx, STUDY, t["wall"], resumed=True)
    print(f"  heterogeneity test {name}: repetitions {reps[0]}-{reps[-1]} ({t['wall']:.0f} s)",
          file=sys.stderr, flush=True)


def _assemble_tests(ctx: C.Context, cfg: dict, name: str) -> xr.Dataset:
    """All saved repetitions of the refit test ``name`` in one data set, with the reached and planned R."""
    dgp, pair, interacting = TESTS[name]
    chunks = [C.load_dataset(p) for p in sorted(_chunk_dir(ctx, name).glob("reps_*.nc"))
              if not p.name.endswith(".tmp.nc")]
    ds = xr.concat(chunks, dim="rep").sortby("rep") if chunks else xr.Dataset(
        {"statistic": ("rep", np.empty(0)), "pvalue": ("rep", np.empty(0))}, coords={"rep": np.empty(0, int)})
    return ds.assign_attrs(dgp=dgp, pair=list(pair), interaction=int(interacting),
                           null_refits=cfg["test"]["null_refits"], n=cfg["test"]["n"],
                           reps_planned=_planned_reps(cfg, name), reps_reached=int(ds.sizes["rep"]))


#: compute adds every bootstrap's and every test chunk's wall time to timings.json (a stopped run keeps it).
RECORDS_OWN_TIMING = True


def compute(ctx: C.Context) -> None:
    """Bootstraps first, then the refit tests round-robin: one chunk of every unfinished setting in turn.

    Each chunk is saved as it finishes, so a run stopped by PID keeps every finished chunk and a later
    run goes on from the first missing repetition; ``summarize`` gathers the repetitions reached.
    """
    cfg = config(STUDY, ctx.quick)
    for dgp in DGPS:
        with C.timed() as t:
            computed = _bootstrap(ctx, cfg, dgp)
        if computed:
            C.record_timing(ctx, STUDY, t["wall"], resumed=True)
    if ctx.force:
        for name in TESTS:
            for path in _chunk_dir(ctx, name).glob("reps_*.nc"):
                path.unlink()
    chunk = cfg["test"]["chunk"]
    pending = {name: True for name in TESTS}
    while any(pending.values()):
        for name in TESTS:
            if not pending[name]:
                continue
            done = _done_reps(ctx, name)
            todo = [i for i in range(_planned_reps(cfg, name)) if i not in done]
            if not todo:
                pending[name] = False
                continue
            ctx.computed += 1
            _test_chunk(ctx, cfg, name, todo[:chunk["power" if TESTS[name][2] else "null"]])


# --------------------------------------------------------------------------- render


#: Compact files ``render`` reads (per DGP: PD with bands, heterogeneity and H^2 with bands; test p-values).
ARCHIVE = ("bands_*.nc", "het_*.nc", "h2_*.nc", "test_*.nc")


def summarize(ctx: C.Context) -> None:
    """Bands of the PD, of the heterogeneity statistics and of H^2 per DGP, without the resample curves."""
    folder = ctx.study_dir(STUDY)
    for dgp in DGPS:
        res = pdpboot.load(folder / f"bootstrap_{dgp}.nc")
        pdpboot.save(C.compact_tree(pdpboot.confidence_bands(res)), folder / f"bands_{dgp}.nc")
        pdpboot.save(C.compact_tree(ice_heterogeneity(res)), folder / f"het_{dgp}.nc")
        pdpboot.save(C.compact_tree(h_statistic(res)), folder / f"h2_{dgp}.nc")
    cfg = config(STUDY, ctx.quick)
    for name in TESTS:
        C.save_dataset(_assemble_tests(ctx, cfg, name), folder / f"test_{name}.nc")


def summaries_stale(ctx: C.Context) -> bool:
    """Whether a test chunk is newer than its assembled ``test_<name>.nc`` (a run went on since)."""
    folder = ctx.study_dir(STUDY)
    for name in TESTS:
        target = folder / f"test_{name}.nc"
        chunks = list(_chunk_dir(ctx, name).glob("reps_*.nc"))
        if chunks and (not target.exists() or max(p.stat().st_mtime for p in chunks) > target.stat().st_mtime):
            return True
    return False


def _load(ctx: C.Context, dgp: str) -> dict[str, xr.DataTree]:
    folder = ctx.study_dir(STUDY)
    return {kind: pdpboot.load(folder / f"{kind}_{dgp}.nc") for kind in ("bands", "het", "h2")}


def _figure_ice(ctx: C.Context, results: dict) -> dict:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style, plot_heterogeneity, plot_pd

    rows = [("goldstein", "x2", "x1"), ("interaction", "x1", None)]
    stats = {}
    with paper_style(7):
        fig, axes = plt.subplots(2, 3, figsize=(C.FULL_WIDTH, 4.2), layout="constrained")
        for i, (dgp, feature, other) in enumerate(rows):
            res = results[dgp]["bands"]
            het = results[dgp]["het"]
            ice_style = {"ice": {"rasterized": True}}
            plot_pd(res, feature, ax=axes[i, 0], ice=True, legend=False, style=ice_style)
            plot_pd(res, feature, ax=axes[i, 1], ice=True, centered=True, band=False, legend=False, style=ice_style)
            ax = axes[i, 2]
            plot_heterogeneity(het, feature, stat="dice_sd", ax=ax, legend=False)
            if other is not None:
                plot_heterogeneity(het, other, stat="dice_sd", ax=ax, legend=False, rug=False,
                                   style={"line": {"color": OKABE_ITO["orange"]},
                                          "band": {"color": OKABE_ITO["orange"]}})
            for f in (feature, other):
                if f is None:
                    continue
                truth = TRUE_DICE_SD[(dgp, f)]
                ax.axhline(truth, color="k", ls=":", lw=0.8)
                node = pdpboot.get_node(het, f).ds
                stats[(dgp, f)] = {
                    "mean": float(node["dice_sd"].isel(output=0).mean()),
                    "lower": float(node["dice_sd_band"].isel(output=0).sel(ci_bound="lower").mean()),
                    "upper": float(node["dice_sd_band"].isel(output=0).sel(ci_bound="upper").mean()),
                }
            ax.set_xlabel(feature if other is None else f"{feature} (blue), {other} (orange)")
            ax.set_ylabel("SD of derivative ICE")
            label = DGPS[dgp]["label"]
            axes[i, 0].set_title(f"{label}: PD and ICE of {feature}", fontsize=7)
            axes[i, 1].set_title(f"{label}: centred ICE of {feature}", fontsize=7)
            ax.set_title(f"{label}: d-ICE spread (dotted: truth)", fontsize=7)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "heterogeneity_ice")
    return stats


def _figure_h2(ctx: C.Context, results: dict) -> dict:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style, plot_h_statistic

    stats = {}
    with paper_style(7):
        fig, axes = plt.subplots(1, 3, figsize=(C.FULL_WIDTH, 2.1), layout="constrained",
                                 gridspec_kw={"width_ratios": [3, 1.4, 3]})
        for ax, dgp in zip(axes, DGPS):
            h2 = results[dgp]["h2"]
            plot_h_statistic(h2, ax=ax, sort=False, legend=False)
            pairs = DGPS[dgp]["pairs"]
            y = np.arange(len(pairs))[::-1]
            truth = [true_h2(dgp, p) for p in pairs]
            ax.plot(truth, y, "D", color=OKABE_ITO["vermillion"], ms=3.5, zorder=4,
                    label="population $H^2$" if dgp == "goldstein" else None)
            ax.set_xlim(0, 1.05)
            ax.set_xticks([0, 0.5, 1] if len(pairs) == 1 else [0, 0.25, 0.5, 0.75, 1])  # the narrow panel: 3 ticks
            ax.set_title(DGPS[dgp]["label"], fontsize=7)
            ax.set_xlabel("$H^2$ (pairwise)")
            ax.set_yticks(ax.get_yticks(), [math_pair_label(t.get_text()) for t in ax.get_yticklabels()])
            for p in pairs:
                node = pdpboot.get_node(h2, p).ds
                stats[(dgp, p)] = {"est": float(node["h2"].isel(output=0)),
                                   "lower": float(node["h2_band"].isel(output=0).sel(ci_bound="lower")),
                                   "upper": float(node["h2_band"].isel(output=0).sel(ci_bound="upper"))}
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=3, frameon=False)
        C.savefig(fig, ctx, "heterogeneity_h2")
    return stats


def math_pair_label(text: str) -> str:
    """A pair label as mathematics: ``"x1 × x2"`` -> ``"$x_{1} \\times x_{2}$"`` (other labels unchanged)."""
    parts = [p.strip() for p in text.split("×")]
    if not all(re.fullmatch(r"x\d+", p) for p in parts):
        return text
    return "$" + r" \times ".join(f"x_{{{p[1:]}}}" for p in parts) + "$"


#: Fewest data sets for which a rejection rate is shown as a rate with its binomial Monte Carlo SE; below
#: it the table gives the count ("3 of 3"): a rate of 1.00 with SE 0.00 from three data sets is no evidence.
MIN_RATE_REPS = 20


def rejection_cell(rejected: int, total: int) -> str:
    """``"0.08 (0.05)"`` (rate and binomial SE) from ``MIN_RATE_REPS`` data sets on, else ``"3 of 3"``."""
    if total < MIN_RATE_REPS:
        return f"{rejected} of {total}"
    rate = rejected / total
    return f"{C.fmt(rate)} ({C.fmt(float(np.sqrt(rate * (1 - rate) / total)))})"


def math_feature(name: str) -> str:
    """``"x12"`` -> ``"x_{12}"`` (inside maths); other names as they are."""
    return f"x_{{{name[1:]}}}" if re.fullmatch(r"x\d+", name) else rf"\text{{{name}}}"


def _table_tests(ctx: C.Context, tests: dict[str, xr.Dataset], alpha: float = 0.05) -> dict:
    lines = [r"\begin{tabular}{@{}llcrrr@{}}", r"\toprule",
             r"DGP & Pair & Interaction & $R$ & Rejection rate & Mean $H^2$ \\", r"\midrule"]
    rates = {}
    for name, ds in tests.items():
        dgp, pair, interacting = TESTS[name]
        reject = ds["pvalue"].values <= alpha
        rate = float(reject.mean())
        se = float(np.sqrt(rate * (1 - rate) / reject.size))
        rates[name] = (rate, se, reject.size)
        label = DGPS[dgp].get("tex", DGPS[dgp]["label"])
        lines.append(" & ".join([label, "$(" + ", ".join(math_feature(f) for f in pair) + ")$",
                                 "yes" if interacting else "no", str(reject.size),
                                 rejection_cell(int(reject.sum()), reject.size),
                                 C.fmt(float(ds["statistic"].mean()), 3)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "h_test.tex"), "\n".join(lines))
    return rates


def _span(values: list[int]) -> str:
    """``"40"`` or ``"38--40"``: a count, or the range of counts over settings."""
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}--{hi}"


def render(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    results = {dgp: _load(ctx, dgp) for dgp in DGPS}
    dice = _figure_ice(ctx, results)
    h2 = _figure_h2(ctx, results)
    tests = {name: C.load_dataset(ctx.study_dir(STUDY) / f"test_{name}.nc") for name in TESTS}
    rates = _table_tests(ctx, tests)
    null = [rates[n] for n in TESTS if not TESTS[n][2]]
    pooled_rej = round(sum(r * k for r, _, k in null))
    pooled_n = sum(k for _, _, k in null)
    power = [rates[n][0] for n in TESTS if TESTS[n][2]]
    macros = {
        "HetN": str(cfg["n"]), "HetB": str(cfg["B"]), "HetRounds": str(cfg["max_iter"]),
        "HetTestRounds": str(cfg["test"]["max_iter"]), "HetIce": str(cfg["n_ice"]), "HetHRows": str(cfg["h_rows"]),
        "HetTestN": str(cfg["test"]["n"]), "HetTestRefits": str(cfg["test"]["null_refits"]),
        "HetTestHRows": str(cfg["test"]["h_rows"]),
        "HetTestRepsNull": _span([k for _, _, k in null]),
        "HetTestRepsPower": _span([rates[n][2] for n in TESTS if TESTS[n][2]]),
        "HetTestRepsNullPlanned": str(cfg["test"]["reps_null"]),
        "HetTestRepsPowerPlanned": str(cfg["test"]["reps_power"]),
        "HetTestRepsPooledNull": str(pooled_n),
        "HetPowerSEMax": C.fmt(max(rates[n][1] for n in TESTS if TESTS[n][2])),
        "HetFPR": C.fmt(pooled_rej / pooled_n), "HetFPRse": C.fmt(np.sqrt(
            (pooled_rej / pooled_n) * (1 - pooled_rej / pooled_n) / pooled_n)),
        "HetPowerMin": C.fmt(min(power)), "HetPowerMax": C.fmt(max(power)),
        "HetPowerText": (f"{C.fmt(min(power))} in all three settings" if C.fmt(min(power)) == C.fmt(max(power))
                         else f"{C.fmt(min(power))}--{C.fmt(max(power))}"),
        "HetGoldDiceXtwo": C.fmt(dice[("goldstein", "x2")]["mean"], 1),
        "HetGoldDiceXtwoLo": C.fmt(dice[("goldstein", "x2")]["lower"], 1),
        "HetGoldDiceXtwoHi": C.fmt(dice[("goldstein", "x2")]["upper"], 1),
        "HetGoldDiceXone": C.fmt(dice[("goldstein", "x1")]["mean"], 2),
        "HetInterDiceXone": C.fmt(dice[("interaction", "x1")]["mean"], 2),
        "HetInterDiceXoneLo": C.fmt(dice[("interaction", "x1")]["lower"], 2),
        "HetInterDiceXoneHi": C.fmt(dice[("interaction", "x1")]["upper"], 2),
        "HetInterHtwo": C.fmt(h2[("interaction", ("x1", "x2"))]["est"]),
        "HetInterHtwoLo": C.fmt(h2[("interaction", ("x1", "x2"))]["lower"]),
        "HetInterHtwoHi": C.fmt(h2[("interaction", ("x1", "x2"))]["upper"]),
        "HetGoldHtwo": C.fmt(h2[("goldstein", ("x2", "x3"))]["est"]),
        "HetGoldHtwoLo": C.fmt(h2[("goldstein", ("x2", "x3"))]["lower"]),
        "HetGoldHtwoHi": C.fmt(h2[("goldstein", ("x2", "x3"))]["upper"]),
        "HetGoldNullHtwo": C.fmt(h2[("goldstein", ("x1", "x2"))]["est"], 3),
        "HetGoldNullHtwoHi": C.fmt(h2[("goldstein", ("x1", "x2"))]["upper"], 3),
        "HetFriedmanHtwoTrue": C.fmt(friedman_h2(), 3),
        "HetFriedmanHtwo": C.fmt(h2[("friedman1", ("x1", "x2"))]["est"], 3),
        "HetFriedmanHtwoLo": C.fmt(h2[("friedman1", ("x1", "x2"))]["lower"], 3),
        "HetFriedmanHtwoHi": C.fmt(h2[("friedman1", ("x1", "x2"))]["upper"], 3),
    }
    C.write_macros(ctx.out("generated", "heterogeneity.tex"), macros, f"mode: {ctx.mode}")
