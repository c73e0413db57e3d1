"""Study: pdpboot's PD speed next to its peers on the same models and grids (issues 14 and 17).

The measurement is :mod:`benchmarks.bench_peers` (imported, not copied): Friedman #1 (10
features, noise sd 1), the training rows as background rows, one thread (OpenMP/BLAS limited
to 1; forests predict with ``n_jobs=1``), the 50-point curve of ``x0`` on its 5-95 % quantiles
(and, for the random forest at the smallest n, the 50 x 50 surface of ``x0``, ``x1``); every
contender computes the same averaged PD; runs are interleaved (one run of each contender per
repeat) and the median CPU time of the process is kept.  Contenders: pdpboot
``method="auto"`` (the exact tree engine where it applies, else brute force), pdpboot
``method="brute"``, scikit-learn ``partial_dependence(method="brute")``, dalex
``model_profile``, effector ``PDP``, PDPbox ``PDPIsolate`` and scikit-explain ``pd`` (1-D only;
scikit-explain evaluates its own 50-point grid from the minimum to the maximum and centres it, so its
agreement is measured against scikit-learn brute on that grid, centred), scikit-learn
``method="recursion"`` on the models it supports (forests, HGB: a different quantity, the training
cover's weighted average, so its difference from brute force is a column of its own), and woodelf
``woodelf_fast_pdp`` on tree models (exact PD; it has no one-feature call and returns the curves of all
10 features on their grids at once, so its ratio is to ``pdpboot all p``, pdpboot computing the same 10
curves; the per-curve ratio is a macro too; on the fully grown forest only up to 2,000 rows: minutes per
call at 10k).  A peer that is not
installed is reported as "not installed" - never replaced or estimated (PDPbox is not in the
``bench`` extra: it declares the full ``xgboost`` package as a run-time dependency, which would
replace ``xgboost-cpu``; ``pip install --no-deps pdpbox==0.3.0 pqdm bounded-pool-executor``).
The agreement with scikit-learn's brute force (max absolute difference) and the load average
of the machine before and after each case are recorded.  Every contender runs once, untimed,
on a tiny case first (imports, numba's compiled-code cache: one-time costs of the process).

    python -m experiments peers --quick              # n = 500, 20-tree forest, one repeat
    python -m experiments peers                       # n = 1k and 10k, 100 trees, 3 repeats
    python -m experiments peers --render-only --archive

Writes ``tables/peers.tex`` (median CPU seconds of pdpboot, and peer / pdpboot ratios: above 1
means pdpboot is faster) and ``generated/peers.tex`` (the numbers the text quotes).
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks import bench_peers as bp

from . import _common as C

STUDY = "peers"
#: Compact file of a run (``--archive`` copies it): every median and every repeat's CPU time.
ARCHIVE = ("peers.json",)
SETTINGS = {
    "full": {"ns": [1000, 10000], "repeats": 3, "two_d_n": 1000},
    "quick": {"ns": [500], "repeats": 1, "two_d_n": 0},
}
#: Columns of the table: contender name in :mod:`benchmarks.bench_peers` -> (header, peer of PEERS).
COLUMNS = {
    "pdpboot brute": ("pdpboot brute", None),
    "sklearn brute": ("scikit-learn", "scikit-learn"),
    "dalex": ("dalex", "dalex"),
    "effector": ("effector", "effector"),
    "pdpbox": ("PDPbox", "PDPbox"),
    "skexplain": ("scikit-explain$^{b}$", "scikit-explain"),
    "woodelf": ("woodelf$^{c}$", "woodelf"),
    "sklearn recursion": ("recursion$^{d}$", "scikit-learn"),
}
#: Contenders timed against something other than pdpboot's one curve (woodelf returns all p curves at once).
BASES = {"woodelf": "pdpboot all p"}
#: Notes under the table (the columns marked a-d).
NOTES = (
    r"$^{a}$ pdpboot's max $|\Delta|$ from scikit-learn brute force.",
    r"$^{b}$ its own grid (minimum to maximum), centred; $|\Delta|$ on that grid.",
    r"$^{c}$ all 10 curves per call, over pdpboot's time for them; --: not a tree model, or not run"
    r" (full-depth forest at 10{,}000: minutes per call).",
    r"$^{d}$ a different quantity (averages over node covers, not rows); last column: its max $|\Delta|$"
    r" from brute force.",
)
#: Macro keys of the models (first word of the model name in bench_peers).
MODEL_KEYS = {"RF": "RF", "HGB": "HGB", "MLP": "MLP", "XGBoost": "XGB", "LightGBM": "LGBM"}
#: Contenders that are other software (not pdpboot).
PEER_KEYS = ("sklearn brute", "dalex", "effector", "pdpbox", "skexplain")
MACRO_PEERS = {"pdpboot brute": "Brute", "sklearn brute": "Sklearn", "dalex": "Dalex", "effector": "Effector",
               "pdpbox": "PDPbox", "skexplain": "Skexplain", "woodelf": "Woodelf", "sklearn recursion": "Recursion"}


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("pdpboot", "numpy", "scikit-learn", "xgboost", "xgboost-cpu", "lightgbm", "numba"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def compute(ctx: C.Context) -> None:
    """Run the benchmark cases (cached: ``<results>/peers/peers.json``; every finished case is kept in
    ``peers.partial.json`` first, so an interrupted run resumes at the next case)."""
    from threadpoolctl import threadpool_limits

    from pdpboot.engine.tree import kernel_available

    path = ctx.study_dir(STUDY) / "peers.json"
    if not ctx.needs(path):
        return
    partial = ctx.study_dir(STUDY) / "peers.partial.json"
    cfg = SETTINGS[ctx.mode]
    warnings.filterwarnings("ignore")
    record = {"mode": ctx.mode, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "repeats": cfg["repeats"], "ns": cfg["ns"], "peers": bp.peer_versions(), "libraries": _versions(),
              "compiled_walk": kernel_available(), "cpu_count": os.cpu_count(), "machine": platform.machine(),
              "load_start": bp.load_average(), "rows": []}
    if partial.is_file() and not ctx.force:
        old = json.loads(partial.read_text())
        if old["mode"] == ctx.mode and old["peers"] == record["peers"] and old["libraries"] == record["libraries"]:
            record = old
    done = {(r["n"], r["model"], r["grid"]) for r in record["rows"]}
    with threadpool_limits(limits=1):
        bp.warm_up()
        for n in cfg["ns"]:
            X, y = bp.data(n)
            for name, make in bp.models(ctx.quick).items():
                two_d = name.startswith("RF") and n == cfg["two_d_n"]
                todo = [(f, g) for f, g in bp.cases(X, two_d)
                        if (n, name, "x".join(str(len(x)) for x in g)) not in done]
                if not todo:
                    continue
                fit_cpu, est = bp.cpu_time(lambda make=make, X=X, y=y: make().fit(X, y))
                for features, grids in todo:
                    row = bp.measure_case(est, X, y, features, grids, cfg["repeats"], sklearn_2d=True)
                    row.update(n=n, model=name, fit_cpu=fit_cpu)
                    record["rows"].append(row)
                    partial.write_text(json.dumps(record, indent=1))
                    print(f"peers: n={n} {name} grid {row['grid']}: "
                          + ", ".join(f"{k} {v:.3f}s" for k, v in row["times"].items())
                          + f"; max err {row['err']:.1e}; load {row['load'][1]:.1f}", flush=True)
    record["load_end"] = bp.load_average()
    path.write_text(json.dumps(record, indent=1))
    partial.unlink(missing_ok=True)


def _ratio(row: dict, key: str, base: str | None = None) -> float:
    """CPU time of ``key`` over pdpboot's on the same output (:data:`BASES`; NaN: not run)."""
    times = row["times"]
    base = base or BASES.get(key, "pdpboot auto")
    return times[key] / times[base] if key in times and base in times else float("nan")


def _recursion_err(row: dict) -> str:
    err = row.get("errs", {}).get("sklearn recursion")
    return "--" if err is None else C.fmt(err, 2)


def _model_key(name: str) -> str:
    return MODEL_KEYS.get(re.split(r"[ (]", name)[0], re.sub("[^A-Za-z]", "", name))


def _sci(value: float) -> str:
    if value == 0:
        return "0"
    mant, exp = f"{value:.0e}".split("e")
    return f"${mant}\\times 10^{{{int(exp)}}}$"


def _cell(row: dict, key: str, peer: str | None, versions: dict) -> str:
    if peer is not None and peer in versions and versions[peer] is None:
        return "n.i."
    return _fmt_ratio(_ratio(row, key))


def _fmt_ratio(ratio: float) -> str:
    """One decimal; none from 100 on (thousands separated), judged after rounding (99.97 is "100", not "100.0")."""
    if np.isnan(ratio):
        return "--"
    return f"{ratio:,.0f}".replace(",", "{,}") if round(ratio, 1) >= 100 else C.fmt(ratio, 1)


def records(ctx: C.Context) -> dict:
    return json.loads((ctx.study_dir(STUDY) / "peers.json").read_text())


def render(ctx: C.Context) -> dict:
    rec = records(ctx)
    versions = rec["peers"]
    cols = list(COLUMNS)
    width = 6 + len(cols)
    lines = [r"\begin{tabular}{rlr" + "r" * (1 + len(cols)) + "rr}", r"\toprule",
             r" & & & pdpboot & \multicolumn{" + str(len(cols)) + r"}{c}{CPU time / pdpboot's} & max & recursion \\",
             r"\cmidrule(lr){5-" + str(4 + len(cols)) + "}",
             r"$n$ & model & grid & CPU s & " + " & ".join(COLUMNS[c][0] for c in cols)
             + r" & $|\Delta|^{a}$ & $|\Delta|^{d}$ \\",
             r"\midrule"]
    for row in rec["rows"]:
        grid = row["grid"].replace("x", r"$\times$")
        model = row["model"].replace("fully grown", "full depth")
        lines.append(f"{row['n']:,} & {model} & {grid} & {C.fmt(row['times']['pdpboot auto'], 3)} & "
                     + " & ".join(_cell(row, c, COLUMNS[c][1], versions) for c in cols)
                     + f" & {_sci(row['err'])} & {_recursion_err(row)} \\\\")
    lines.append(r"\midrule")
    lines.append(r"\multicolumn{4}{l}{version} & " + " & ".join(
        (versions.get(COLUMNS[c][1]) or "not installed") if COLUMNS[c][1] else rec["libraries"].get("pdpboot", "")
        for c in cols) + r" & & \\")
    lines += [r"\bottomrule"] + [rf"\multicolumn{{{width}}}{{l}}{{\footnotesize {note}}} \\" for note in NOTES]
    lines += [r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "peers.tex"), "\n".join(lines).replace(",", "{,}").replace("{{,}}", "{,}"))
    C.write_macros(ctx.out("generated", "peers.tex"), macros(rec),
                   "experiments/peer_speed.py: PD speed of pdpboot and its peers (CPU-time ratios, medians)")
    return rec


def macros(rec: dict) -> dict:
    """The numbers the text quotes (ratios peer / pdpboot auto; letters-only names)."""
    rows = rec["rows"]
    ns = sorted({r["n"] for r in rows})
    labels = {n: [lab for lab, m in (("Small", ns[0]), ("Large", ns[-1])) if m == n] for n in ns}  # one n: both
    loads = [x for r in rows for x in r["load"]] + [rec["load_start"], rec["load_end"]]
    out = {"PeersRepeats": str(rec["repeats"]), "PeersSmallN": f"{ns[0]:,}".replace(",", "{,}") if ns else "--",
           "PeersLargeN": f"{ns[-1]:,}".replace(",", "{,}") if ns else "--",
           "PeersLoadMin": C.fmt(min(loads), 1), "PeersLoadMax": C.fmt(max(loads), 1),
           "PeersCores": str(rec["cpu_count"]), "PeersMaxErr": _sci(max(r["err"] for r in rows)) if rows else "--",
           "PeersDate": rec["date"]}
    double = [r["err"] for r in rows if not r["model"].startswith("XGBoost")]  # XGBoost sums in float32
    out["PeersMaxErrDouble"] = _sci(max(double)) if double else "--"
    # the grids timed: one 1-D size and one square 2-D size (else "--")
    curves = {r["grid"] for r in rows if "x" not in r["grid"]}
    surfaces = {side for r in rows if "x" in r["grid"] for side in r["grid"].split("x")}
    out["PeersGridPoints"] = curves.pop() if len(curves) == 1 else "--"
    out["PeersSurfaceSide"] = surfaces.pop() if len(surfaces) == 1 else "--"
    for key, short in MACRO_PEERS.items():
        peer = COLUMNS[key][1]
        if peer is not None:
            out[f"Peers{short}Version"] = rec["peers"].get(peer) or "not installed"
        ratios = [_ratio(r, key) for r in rows if "x" not in r["grid"]]
        ratios = [x for x in ratios if not np.isnan(x)]
        out[f"Peers{short}Min"] = _fmt_ratio(min(ratios)) if ratios else "--"
        out[f"Peers{short}Max"] = _fmt_ratio(max(ratios)) if ratios else "--"
        for r in rows:
            shape = "TwoD" if "x" in r["grid"] else ""
            for label in labels.get(r["n"], []):
                out[f"Peers{_model_key(r['model'])}{shape}{label}{short}"] = _fmt_ratio(_ratio(r, key))
    # issue 14 item 4: pdpboot's brute force against every peer (peer / pdpboot brute, 1-D rows)
    vs_brute = [r["times"][k] / r["times"]["pdpboot brute"] for r in rows if "x" not in r["grid"]
                for k in PEER_KEYS if k in r["times"]]
    out["PeersBruteVsPeersMin"] = _fmt_ratio(min(vs_brute)) if vs_brute else "--"
    out["PeersBruteVsPeersMinTwo"] = f"{min(vs_brute):.2f}" if vs_brute else "--"
    out.update(_new_peer_macros(rows))
    for r in rows:
        shape = "TwoD" if "x" in r["grid"] else ""
        for label in labels.get(r["n"], []):
            out[f"Peers{_model_key(r['model'])}{shape}{label}Seconds"] = C.fmt(r["times"]["pdpboot auto"], 3)
    for label in ("Small", "Large"):  # the text quotes the forest's surface: "--" when a run has none (quick mode)
        for short in [*MACRO_PEERS.values(), "Seconds"]:
            out.setdefault(f"PeersRFTwoD{label}{short}", "--")
    return out


def _new_peer_macros(rows: list[dict]) -> dict:
    """Issue 30.5's peers: woodelf per curve, agreement of woodelf / scikit-explain, recursion's difference."""
    out = {}
    curves = [r for r in rows if "x" not in r["grid"]]
    per_curve = [_ratio(r, "woodelf", "pdpboot auto") for r in curves]
    per_curve = [x for x in per_curve if not np.isnan(x)]
    out["PeersWoodelfPerCurveMin"] = _fmt_ratio(min(per_curve)) if per_curve else "--"
    out["PeersWoodelfPerCurveMax"] = _fmt_ratio(max(per_curve)) if per_curve else "--"
    for key, short in (("woodelf", "Woodelf"), ("skexplain", "Skexplain")):
        errs = [r["errs"][key] for r in rows if key in r.get("errs", {})]
        out[f"Peers{short}Err"] = _sci(max(errs)) if errs else "--"
    rec_errs = [r["errs"]["sklearn recursion"] for r in rows if "sklearn recursion" in r.get("errs", {})]
    out["PeersRecursionErrMin"] = C.fmt(min(rec_errs), 2) if rec_errs else "--"
    out["PeersRecursionErrMax"] = C.fmt(max(rec_errs), 2) if rec_errs else "--"
    return out


def markdown(rec: dict) -> str:
    """The table of a run (finished or ``peers.partial.json``) as Markdown, for ``benchmarks/README.md``."""
    versions = rec["peers"]
    cols = list(COLUMNS)
    head = ["n", "model", "grid", "pdpboot auto CPU s", *[re.sub(r"\$\^\{(\w)\}\$", r" (\1)", COLUMNS[c][0])
                                                          for c in cols], "max abs diff (a)", "recursion diff (d)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rec["rows"]:
        cells = [f"{row['n']:,}", row["model"], row["grid"].replace("x", "×"), f"{row['times']['pdpboot auto']:.3f}"]
        cells += [_cell(row, c, COLUMNS[c][1], versions).replace("{,}", ",") for c in cols]
        cells += [f"{row['err']:.0e}", _recursion_err(row)]
        lines.append("| " + " | ".join(cells) + " |")
    loads = [x for r in rec["rows"] for x in r["load"]] + [rec[k] for k in ("load_start", "load_end") if k in rec]
    errs = {k: max(r["errs"][k] for r in rec["rows"] if k in r.get("errs", {}))
            for k in ("woodelf", "skexplain", "dalex", "effector", "pdpbox")
            if any(k in r.get("errs", {}) for r in rec["rows"])}
    lines.append("")
    lines.append(f"date {rec['date']}, {rec['repeats']} repeats, load average {min(loads):.1f}–{max(loads):.1f} on "
                 f"{rec['cpu_count']} cores; peers' max abs diff from scikit-learn brute: "
                 + ", ".join(f"{k} {v:.0e}" for k, v in errs.items())
                 + "; woodelf per curve (÷ pdpboot's one curve): "
                 + ", ".join(f"{r['n']:,} {r['model']} {_fmt_ratio(_ratio(r, 'woodelf', 'pdpboot auto'))}"
                             for r in rec["rows"] if "woodelf" in r["times"]))
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m experiments.peer_speed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--markdown", metavar="JSON", help="print the table of peers.json (or peers.partial.json) "
                        "as Markdown and exit")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return 0
    ctx = C.default_context(args.quick, args.results_dir, None, 1, args.force)
    compute(ctx)
    render(ctx)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
