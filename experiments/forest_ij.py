"""Study 8: one-fit infinitesimal-jackknife (IJ) PD bands for random forests vs the refit bootstrap.

For each data set (Monte Carlo repetition) of a scenario, a random forest with T trees is fitted
once and the IJ (``V_IJ-U``), the raw IJ (no finite-B correction) and the jackknife-after-bootstrap
(``V_J-U``) variances of its PD are computed from its trees (:mod:`experiments.forest_ij_estimator`,
the estimator this study found under-covering); in the bootstrap cells the refit bootstrap
(:func:`pdpboot.bootstrap_partial_dependence`, ``background="resample"``) runs on the same data.

Truth: the learner's expected PD (per scenario and ``max_samples``: a forest with another
``max_samples`` is another learner), estimated for repetition r by the mean over the *other*
repetitions of the forest PDs (every T: the expectation does not depend on T).  Reported per
cell: pointwise coverage (mean over grid points and features) and simultaneous coverage (whole
curve) of 95 % bands with Monte Carlo SE (SD of the per-repetition coverage / sqrt(R)), mean
width, the ratio of the mean SE to the SD of the PD across repetitions ("true SD"), the share of
the raw IJ variance removed by the bias correction, and CPU seconds per repetition.  IJ cells also
time one forest PD (3 features, brute), so that the cost of a refit bootstrap of the *same*
forest, B x (fit + forest PD), is known from the same process.

Scenarios: ``friedman1`` (the paper's scenario B: Friedman #1, 10 U(0, 1) features, noise sd 1,
PD of x1, x3, x4 on 15 points in [0.05, 0.95]) and ``friedman1_corr`` (the same function of
Gaussian-copula features, x1..x5 equicorrelated 0.6).  Forest: max_features 0.33,
min_samples_leaf 5 (the study learner ``rf``), ``max_samples`` None (m = n draws) unless a cell
says otherwise.

    python -m experiments.forest_ij --quick          # smoke run (n = 200, T in {50, 200}, 4 reps)
    python -m experiments.forest_ij --full           # the cells of PLAN, repetition-major
    python -m experiments.forest_ij --render-only    # summarise what has finished
    python -m experiments.forest_ij --render-only --results-dir experiments/archive/forest_ij

Each (cell, repetition) is cached (``<results-dir>/<scenario>/<cell>/rep<r>.npz``), so an
interrupted run resumes, ``--render-only`` summarises whatever has finished, and the same
repetition index is the same data set in every cell.  ``--archive DIR`` copies the compact
per-repetition arrays and the summary (a few MB) to DIR.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy.special import ndtri
from scipy.stats import norm
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot
from experiments import _common as C
from experiments import forest_ij_estimator as jk
from experiments.learners import METHOD_LABELS
from pdpboot import Grid
from pdpboot.datasets import make_friedman1
from pdpboot.engine import compute_pd
from pdpboot.engine.intervals import band_arrays

GRID = np.linspace(0.05, 0.95, 15)
FEATURES = [0, 2, 3]
LEVEL = 0.95
SEED = 20261130
ARCHIVE_DIR = Path(__file__).parent / "archive" / "forest_ij"
#: Compact files of a run (globs under its results folder) that ``render`` reads: ``--archive`` copies them.
ARCHIVE = ("*/*/rep*.npz",)
#: the refit bootstrap's cells as the paper quotes them: B resamples of T-tree forests (see the plans)
BOOT_TREES, BOOT_B = 100, 50
_BOOT_CELL = f"boot_T{BOOT_TREES}_B{BOOT_B}"
#: the max_samples cells the paper quotes (tag, m / n), at T = 1000 and n = 500
_SUBSAMPLE_CELLS = (("D", 0.5), ("F", 0.2))


@dataclass(frozen=True)
class Cell:
    """One cell of the study: a scenario, a method and its settings, a target number of repetitions."""

    dgp: str
    n: int
    kind: str  # "ij" or "boot"
    trees: int
    reps: int
    max_samples: float | None = None
    n_resamples: int = 0  # boot only
    pace: float = 1.0  # repetition r of this cell is queued at position r * pace (slower cells lag)

    @property
    def scenario(self) -> str:
        return f"{self.dgp}_n{self.n}"

    @property
    def name(self) -> str:
        ms = "" if self.max_samples is None else f"_ms{self.max_samples:g}"
        return f"{self.kind}_T{self.trees}{ms}" + (f"_B{self.n_resamples}" if self.kind == "boot" else "")


def _plan_full() -> list[Cell]:
    """The run behind the paper's numbers, in priority order (see the module docstring).

    The refit bootstrap runs on 100-tree forests: its coverage of the learner's expected PD does not
    depend on the number of trees beyond the forest's own Monte Carlo variance (about 4 % of the
    sampling variance at T = 100, n = 500, which it sees in its resamples too), and its cost at the
    IJ's T is projected from the IJ cells' timings (B x (fit + forest PD)).
    """
    f, c = "friedman1", "friedman1_corr"
    return [
        Cell(f, 500, "ij", 1000, 200), Cell(f, 500, "boot", 100, 200, n_resamples=50),
        Cell(f, 500, "ij", 1000, 200, max_samples=0.5), Cell(f, 500, "ij", 200, 200),
        Cell(f, 500, "ij", 5000, 200, pace=2), Cell(f, 500, "ij", 1000, 200, max_samples=0.2, pace=2),
        Cell(f, 2000, "ij", 1000, 200, pace=3), Cell(c, 500, "ij", 1000, 200, pace=3),
        Cell(c, 500, "ij", 200, 200, pace=3), Cell(f, 2000, "ij", 5000, 200, pace=6),
        Cell(f, 500, "ij", 5000, 200, max_samples=0.5, pace=4), Cell(f, 2000, "ij", 200, 200, pace=6),
        Cell(f, 2000, "boot", 100, 200, n_resamples=50, pace=8),
    ]


def _plan_focus() -> list[Cell]:
    """Session-4 run (about 1.5 h of a loaded core): the cells the issue still lacked, first.

    The refit bootstrap at n = 2000 and on the correlated DGP with their IJ cells (T = 200, 1000, 5000),
    then more repetitions of the n = 500 cells.  Bootstrap B = 50 on 100-tree forests as in
    :func:`_plan_full` (same cell names, so it resumes them).  (Started with n = 2000, T = 5000 at pace 8;
    raised to 1.5 after 35 minutes, when T = 1000 had clearly failed there.)
    """
    f, c = "friedman1", "friedman1_corr"
    return [
        Cell(f, 2000, "boot", 100, 60, n_resamples=50), Cell(f, 2000, "ij", 1000, 60),
        Cell(c, 500, "boot", 100, 60, n_resamples=50), Cell(c, 500, "ij", 1000, 60),
        Cell(c, 500, "ij", 200, 60), Cell(f, 2000, "ij", 200, 60, pace=1.5),
        Cell(f, 2000, "ij", 5000, 60, pace=1.5), Cell(c, 500, "ij", 5000, 60, pace=2),
        Cell(f, 500, "boot", 100, 100, n_resamples=50, pace=1.5), Cell(f, 500, "ij", 1000, 100, pace=1.5),
        Cell(f, 500, "ij", 200, 100, pace=1.5), Cell(f, 500, "ij", 5000, 100, pace=2.5),
    ]


def _plan_quick() -> list[Cell]:
    f = "friedman1"
    return [Cell(f, 200, "ij", 50, 4), Cell(f, 200, "ij", 200, 4), Cell(f, 200, "boot", 50, 4, n_resamples=10)]


def make_correlated_friedman1(n: int, rng: np.random.Generator, rho: float = 0.6):
    """Friedman #1 response on features whose first five are Gaussian-copula equicorrelated ``rho``."""
    cov = np.full((5, 5), rho) + (1 - rho) * np.eye(5)
    z = rng.multivariate_normal(np.zeros(5), cov, size=n)
    X = np.column_stack([norm.cdf(z), rng.uniform(size=(n, 5))])
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
         + rng.standard_normal(n))
    return X, y


def _data(dgp: str, n: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Data set of repetition r (the same in every cell of the scenario)."""
    seed = np.random.SeedSequence([SEED, n, sum(map(ord, dgp)), r])
    rng = np.random.default_rng(seed)
    if dgp == "friedman1":
        X, y = make_friedman1(n, rng=rng)
        return X.to_numpy(float), y.to_numpy(float)
    if dgp == "friedman1_corr":
        return make_correlated_friedman1(n, rng)
    raise ValueError(f"unknown dgp {dgp!r}")


def _forest(n_trees: int, seed: int | None, max_samples=None) -> RandomForestRegressor:
    return RandomForestRegressor(n_estimators=n_trees, max_features=0.33, min_samples_leaf=5, random_state=seed,
                                 max_samples=max_samples, n_jobs=1)


def _cell_seed(cell: Cell, r: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([SEED, cell.n, sum(map(ord, cell.dgp)), r, sum(map(ord, cell.name))])


def _ij_run(X, y, cell: Cell, seed: np.random.SeedSequence) -> dict:
    """Fit once; IJ, raw IJ and jackknife variances of the PD of every feature (arrays (F, G))."""
    fit_seed, mult_seed = seed.spawn(2)
    start = time.process_time()
    forest = _forest(cell.trees, int(fit_seed.generate_state(1)[0] % 2**31), cell.max_samples).fit(X, y)
    fit_time = time.process_time() - start
    xa = X.astype(np.float32)
    n = len(X)
    counts = jk.inbag_counts(forest, n)
    m = jk.bootstrap_draws(forest, n)
    out = {k: [] for k in ("pd", "v_ij", "v_raw", "v_j", "crit", "noise_share")}
    jk_time = 0.0
    for f, s in zip(FEATURES, mult_seed.spawn(len(FEATURES))):
        ev = jk.evaluate_trees(forest, xa, (f,), [GRID], response_method="predict", counts=counts)
        t, ice, oob = ev.tree_pd[:, 0], ev.ice[:, 0], ev.oob_ice[:, 0]
        u = jk.ij_influence(counts, t, ice)
        raw = (u**2).sum(axis=0)
        noise = jk.mc_noise(t, m)
        out["pd"].append(t.mean(axis=0))
        out["v_raw"].append(raw)
        out["v_ij"].append(raw - noise)
        out["crit"].append(jk.supt_critical_value(u[:, None, :], level=LEVEL, rng=np.random.default_rng(s))[0])
        out["noise_share"].append(noise / raw)
        mark = time.process_time()
        out["v_j"].append(jk.jackknife_variance(counts, t, oob, n_draws=m))
        jk_time += time.process_time() - mark
    ij_time = time.process_time() - start - jk_time  # fit + per-tree PDs + IJ
    mark = time.process_time()
    for f in FEATURES:  # one forest PD, as every refit of a bootstrap of this forest would compute it
        compute_pd(forest, xa, (f,), [GRID], response_method="predict", method="brute")
    forest_pd_time = time.process_time() - mark
    result = {k: np.asarray(v) for k, v in out.items()}
    result.update(time=np.asarray(ij_time), fit_time=np.asarray(fit_time), forest_pd_time=np.asarray(forest_pd_time))
    return result


def _boot_run(X, y, cell: Cell, seed: np.random.SeedSequence) -> dict:
    start = time.process_time()
    res = pdpboot.bootstrap_partial_dependence(
        _forest(cell.trees, None, cell.max_samples), X, y, FEATURES, n_resamples=cell.n_resamples,
        grid=Grid(custom_values={f: GRID for f in FEATURES}), rng=np.random.default_rng(seed),
        resampling=pdpboot.Resampling(background="resample"),
        execution=pdpboot.Execution(n_jobs=1, progress=False))
    elapsed = time.process_time() - start
    nodes = [pdpboot.get_node(res, f"x{f}") for f in FEATURES]
    return {"pd": np.stack([nd.ds["pd"].values[0] for nd in nodes]),
            "resamples": np.stack([nd.ds["pd_resamples"].values[:, 0] for nd in nodes], axis=1),
            "time": np.asarray(elapsed)}


def _job(path: Path, cell: Cell, r: int) -> None:
    if path.exists():
        return
    X, y = _data(cell.dgp, cell.n, r)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        arrays = (_ij_run if cell.kind == "ij" else _boot_run)(X, y, cell, _cell_seed(cell, r))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def _warm_up() -> None:
    """Run the per-tree evaluation once so that no repetition's CPU time includes first-call costs."""
    X = np.random.default_rng(0).uniform(size=(50, 10))
    forest = _forest(2, 0).fit(X, X[:, 0])
    jk.evaluate_trees(forest, X.astype(np.float32), (0,), [GRID], response_method="predict",
                      counts=jk.inbag_counts(forest, 50))


def compute_cells(cells: list[Cell], results_dir: Path, n_jobs: int = 2) -> int:
    """Run (or resume) every (cell, repetition), ordered by r * pace so that a cut run covers every cell.

    Returns the number of repetitions computed (0: all were cached).
    """
    order = sorted(((r * cell.pace, i, r, cell) for i, cell in enumerate(cells) for r in range(cell.reps)),
                   key=lambda x: x[:2])
    jobs = [delayed(_job)(results_dir / cell.scenario / cell.name / f"rep{r:04d}.npz", cell, r)
            for _, _, r, cell in order
            if not (results_dir / cell.scenario / cell.name / f"rep{r:04d}.npz").exists()]
    Parallel(n_jobs=n_jobs, verbose=0, pre_dispatch="n_jobs")(jobs)
    return len(jobs)


def _load(directory: Path) -> dict[int, dict]:
    """Finished repetitions of a cell: {repetition index: arrays}."""
    reps = {}
    for p in sorted(directory.glob("rep*.npz")):
        if ".tmp" in p.name:
            continue
        with np.load(p) as z:
            reps[int(p.stem[3:])] = {k: z[k] for k in z.files}
    return reps


def _learner(cell_name: str) -> str:
    return cell_name.split("_ms")[1].split("_")[0] if "_ms" in cell_name else "1"


def _coverage(inside_point: np.ndarray, inside_curve: np.ndarray, reps: list[int]) -> dict:
    """inside_point (R, F, G) bools, inside_curve (R, F) bools -> coverage with MC SE (and per repetition)."""
    per_rep_p = inside_point.mean(axis=(1, 2))
    per_rep_s = inside_curve.mean(axis=1)
    r = len(per_rep_p)
    return {"pointwise": float(per_rep_p.mean()), "pointwise_se": float(per_rep_p.std(ddof=1) / np.sqrt(r)),
            "simultaneous": float(per_rep_s.mean()), "simultaneous_se": float(per_rep_s.std(ddof=1) / np.sqrt(r)),
            "per_rep": {"rep": [int(i) for i in reps], "pointwise": per_rep_p.tolist(),
                        "simultaneous": per_rep_s.tolist()}}


def _paired(a: dict, b: dict, field: str) -> tuple[float, float, int]:
    """Mean and MC SE of the per-repetition coverage difference a - b over their common data sets."""
    da = dict(zip(a["per_rep"]["rep"], a["per_rep"][field]))
    db = dict(zip(b["per_rep"]["rep"], b["per_rep"][field]))
    common = sorted(set(da) & set(db))
    d = np.array([da[r] - db[r] for r in common])
    if len(d) < 3:
        return float("nan"), float("nan"), len(d)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))), len(d)


def summarise(results_dir: Path) -> dict:
    """Coverage table of every cell with at least 3 finished repetitions (see the module docstring)."""
    z = ndtri(0.5 + LEVEL / 2)
    summary = {}
    for scen_dir in sorted(p for p in Path(results_dir).iterdir() if p.is_dir()):
        cells = {d.name: _load(d) for d in sorted(scen_dir.iterdir()) if d.is_dir()}
        ij_fit = {}  # (learner, T) -> mean CPU of fit, of a forest PD (for the projected bootstrap cost)
        for learner in sorted({_learner(c) for c in cells}):
            group = {c: reps for c, reps in cells.items() if _learner(c) == learner and reps}
            pool: dict[int, list[np.ndarray]] = {}
            for reps in group.values():
                for r, rep in reps.items():
                    pool.setdefault(r, []).append(rep["pd"])
            per_rep = {r: np.mean(a, axis=0) for r, a in pool.items()}
            if len(per_rep) < 4:
                continue
            total = np.sum(list(per_rep.values()), axis=0)
            sd = np.std(list(per_rep.values()), axis=0, ddof=1)
            for cname, reps in group.items():
                idx = sorted(reps)
                if len(idx) < 3:
                    continue
                truth = np.stack([(total - per_rep[r]) / (len(per_rep) - 1) for r in idx])
                pd_hat = np.stack([reps[r]["pd"] for r in idx])
                err = np.abs(pd_hat - truth)
                R = len(idx)
                base = {"R": R, "n_datasets_truth": len(per_rep)}
                if cname.startswith("ij"):
                    T = int(cname.split("_T")[1].split("_")[0])
                    cpu = float(np.mean([reps[r]["time"] for r in idx]))
                    ij_fit[(learner, T)] = (float(np.mean([reps[r]["fit_time"] for r in idx])),
                                            float(np.mean([reps[r]["forest_pd_time"] for r in idx])), cpu)
                    for label, key in (("IJ-U", "v_ij"), ("IJ raw", "v_raw"), ("J-U", "v_j")):
                        var = np.stack([reps[r][key] for r in idx])
                        se = np.sqrt(np.clip(var, 0, None))
                        crit = np.stack([reps[r]["crit"] for r in idx])[:, :, None]
                        cov = _coverage(err <= z * se, (err <= crit * se).all(axis=2), idx)
                        ratio = se.mean(axis=0) / sd
                        summary[f"{scen_dir.name} {cname} {label}"] = dict(
                            base, **cov, width=float(2 * z * se.mean()), se_ratio_median=float(np.median(ratio)),
                            se_ratio_min=float(ratio.min()), se_ratio_max=float(ratio.max()),
                            negative_share=float((var < 0).mean()),
                            noise_share_median=float(np.median([reps[r]["noise_share"] for r in idx])),
                            cpu_seconds=cpu, fit_seconds=ij_fit[(learner, T)][0],
                            forest_pd_seconds=ij_fit[(learner, T)][1])
                    # diagnostic: the normal band with the true SD (the best an exact SE could do), and the
                    # IJ band with its SE replaced by its mean over data sets (no SE noise, same bias)
                    crit = np.stack([reps[r]["crit"] for r in idx])[:, :, None]
                    mean_se = np.sqrt(np.clip(np.stack([reps[r]["v_ij"] for r in idx]), 0, None)).mean(axis=0)
                    for label, se in (("oracle SD", sd), ("IJ-U mean SE", mean_se)):
                        cov = _coverage(err <= z * se, (err <= crit * se).all(axis=2), idx)
                        summary[f"{scen_dir.name} {cname} {label}"] = dict(
                            base, **cov, width=float(2 * z * np.mean(se)), se_ratio_median=float(np.median(se / sd)),
                            se_ratio_min=float((se / sd).min()), se_ratio_max=float((se / sd).max()), cpu_seconds=0.0)
                else:
                    res = [reps[r]["resamples"] for r in idx]  # (B, F, G) each
                    for label, (meth, sim) in (("percentile", ("percentile", False)),
                                               ("normal", ("normal", False)), ("sup-t", ("normal", True))):
                        inside_p, inside_c, widths, ses = [], [], [], []
                        for k in range(R):
                            lo, hi, se, *_ = band_arrays(pd_hat[k], res[k], level=LEVEL, method=meth,
                                                         simultaneous=sim)
                            ok = (lo <= truth[k]) & (truth[k] <= hi)
                            inside_p.append(ok)
                            inside_c.append(ok.all(axis=1))
                            widths.append((hi - lo).mean())
                            ses.append(se)
                        cov = _coverage(np.array(inside_p), np.array(inside_c), idx)
                        ratio = np.mean(ses, axis=0) / sd
                        summary[f"{scen_dir.name} {cname} {label}"] = dict(
                            base, **cov, width=float(np.mean(widths)), se_ratio_median=float(np.median(ratio)),
                            se_ratio_min=float(ratio.min()), se_ratio_max=float(ratio.max()),
                            cpu_seconds=float(np.mean([reps[r]["time"] for r in idx])), B=int(res[0].shape[0]))
        # paired differences on the same data sets: IJ-U (pointwise band) - bootstrap normal, IJ-U sup-t
        # (simultaneous) - bootstrap sup-t
        prefix = scen_dir.name + " "
        for boot_key in [k for k in summary if k.startswith(prefix + "boot") and k.endswith(" normal")]:
            boot_cell = boot_key.split(" ")[1]
            for ij_key in [k for k in summary if k.startswith(prefix + "ij") and k.endswith(" IJ-U")]:
                if "_ms" in ij_key:
                    continue
                p, p_se, n_common = _paired(summary[ij_key], summary[boot_key], "pointwise")
                s_, s_se, _ = _paired(summary[ij_key], summary[prefix + boot_cell + " sup-t"], "simultaneous")
                summary.setdefault("paired", {})[f"{ij_key} - {boot_cell}"] = {
                    "R_common": n_common, "pointwise_diff": p, "pointwise_diff_se": p_se,
                    "simultaneous_diff": s_, "simultaneous_diff_se": s_se}
        # compute ratios: bootstrap (measured at its T; projected at the IJ's T) / IJ at the IJ's T
        for key, row in list(summary.items()):
            if not key.startswith(scen_dir.name + " boot") or "B" not in row:
                continue
            B, boot_cpu = row["B"], row["cpu_seconds"]
            T_boot = int(key.split("_T")[1].split("_")[0])
            for (learner, T), (fit_s, fpd_s, ij_s) in ij_fit.items():
                if learner != "1":
                    continue
                row.setdefault("compute_ratio", {})[f"IJ T{T}"] = {
                    f"measured_boot_T{T_boot}": boot_cpu / ij_s,
                    "projected_boot_same_T": B * (fit_s + fpd_s) / ij_s,
                    "ij_cpu": ij_s, "fit_cpu": fit_s, "forest_pd_cpu": fpd_s}
    return summary


def render_markdown(summary: dict) -> str:
    """Markdown table of :func:`summarise` (one row per cell and method)."""
    lines = ["| scenario | cell | method | R | pointwise cov (MC SE) | simultaneous cov (MC SE) | mean width | "
             "SE / true SD: median [min, max] | V<0 share | noise share | CPU s / rep |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, v in summary.items():
        if key == "paired":
            continue
        scen, cell, method = key.split(" ", 2)
        neg = f"{v['negative_share']:.3f}" if "negative_share" in v else ""
        noise = f"{v['noise_share_median']:.2f}" if "noise_share_median" in v and "IJ" in method else ""
        lines.append(
            f"| {scen} | {cell} | {method} | {v['R']} | {v['pointwise']:.3f} ({v['pointwise_se']:.3f}) | "
            f"{v['simultaneous']:.3f} ({v['simultaneous_se']:.3f}) | {v['width']:.3f} | {v['se_ratio_median']:.2f} "
            f"[{v['se_ratio_min']:.2f}, {v['se_ratio_max']:.2f}] | {neg} | {noise} | {v['cpu_seconds']:.1f} |")
    if summary.get("paired"):
        lines.append("\nPaired differences on the same data sets (IJ-U pointwise - bootstrap normal; IJ-U sup-t "
                     "simultaneous - bootstrap sup-t), mean (MC SE):\n")
        for key, v in summary["paired"].items():
            lines.append(f"- {key} (R = {v['R_common']}): pointwise {v['pointwise_diff']:+.3f} "
                         f"({v['pointwise_diff_se']:.3f}), simultaneous {v['simultaneous_diff']:+.3f} "
                         f"({v['simultaneous_diff_se']:.3f})")
    ratios = [(k, v["compute_ratio"]) for k, v in summary.items() if "compute_ratio" in v and k.endswith("normal")]
    if ratios:
        lines.append("\nCompute ratio (bootstrap CPU / IJ CPU per repetition; 'projected' = B x (fit + forest PD) "
                     "of the IJ's own forest, timed in the same process):\n")
        for key, r in ratios:
            for ij, vals in r.items():
                measured = [f"{k} {x:.1f}x" for k, x in vals.items() if k.startswith("measured")]
                lines.append(f"- {key.rsplit(' ', 1)[0]} vs {ij}: {', '.join(measured)}; projected same T "
                             f"{vals['projected_boot_same_T']:.1f}x (IJ {vals['ij_cpu']:.1f} s: fit "
                             f"{vals['fit_cpu']:.1f} s; forest PD {vals['forest_pd_cpu']:.2f} s)")
    return "\n".join(lines)


def archive(results_dir: Path, target: Path) -> None:
    """Copy the per-repetition arrays (a few kB each; bootstrap cells keep their B curves) and the summary."""
    target.mkdir(parents=True, exist_ok=True)
    for p in Path(results_dir).rglob("rep*.npz"):
        if ".tmp" in p.name:
            continue
        dest = target / p.relative_to(results_dir)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest)
    for name in ("summary.json", "summary.md"):
        if (Path(results_dir) / name).exists():
            shutil.copyfile(Path(results_dir) / name, target / name)


# ----------------------------------------------------------------------------- the experiments runner's API

STUDY = "forest_ij"


def _seed_from_archive(folder: Path) -> int:
    """Copy archived repetitions missing from ``folder`` (full mode resumes the archived run)."""
    copied = 0
    for src in ARCHIVE_DIR.rglob("rep*.npz"):
        dest = folder / src.relative_to(ARCHIVE_DIR)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            copied += 1
    return copied


def compute(ctx) -> None:
    """Quick: the smoke plan (seconds).  Full: the archived repetitions, then PLAN's missing ones (hours)."""
    folder = ctx.study_dir(STUDY)
    if not ctx.quick:
        _seed_from_archive(folder)
    # Counted as computed, so that the run records this study's time (as for the studies that cache via ctx).
    ctx.computed += compute_cells(_plan_quick() if ctx.quick else _plan_full(), folder, ctx.n_jobs)


def _tex_rows(summary: dict) -> list[str]:
    labels = {"IJ-U": "IJ-U", "IJ raw": "IJ (raw)", "J-U": "J-U", "percentile": "boot.\\ percentile",
              "normal": "boot.\\ normal", "sup-t": "boot.\\ normal/" + METHOD_LABELS["sup-t"]}
    order = {m: k for k, m in enumerate(labels)}
    dgps = {"friedman1": "Friedman 1", "friedman1_corr": "Friedman 1, corr."}
    rows = []
    for key, v in summary.items():
        if key == "paired":
            continue
        scen, cell, method = key.split(" ", 2)
        if method in ("oracle SD", "IJ-U mean SE") or (method == "IJ raw" and "T1000" not in cell):
            continue  # diagnostics: in summary.md / summary.json only
        dgp, n = scen.rsplit("_n", 1)
        trees = cell.split("_T")[1].split("_")[0]
        ms = cell.split("_ms")[1].split("_")[0] if "_ms" in cell else "1"
        neg = f"{v['negative_share']:.2f}" if "negative_share" in v else ""
        text = (f"{dgps.get(dgp, dgp)} & {n} & {trees} & {ms} & {labels[method]} & {v['R']} & "
                f"{C.fmt(v['pointwise'], 3)} ({C.fmt(v['pointwise_se'], 3)}) & "
                f"{C.fmt(v['simultaneous'], 3)} ({C.fmt(v['simultaneous_se'], 3)}) & "
                f"{v['se_ratio_median']:.2f} & {neg} & {v['cpu_seconds']:.1f} \\\\")
        rows.append(((dgp, int(n), -float(ms), cell.startswith("ij"), int(trees), order[method]), text))
    return [text for _, text in sorted(rows)]


def _times_n(trees: int, n: int) -> str:
    """T as a multiple of n for the text: ``2n``, ``2.5n``, ``n/2`` (math mode)."""
    if trees < n and n % trees == 0:
        return f"n/{n // trees}"
    return f"{trees / n:g}n"


def _setting_macros(summary: dict, ij_cells) -> dict:
    r"""The design quoted in the text, from the cells rendered and the study's own definitions.

    Per IJ cell tag: ``\ForestIJTrees<tag>`` (T), ``\ForestIJN<tag>`` (n), ``\ForestIJTreesPerRow<tag>`` (T as a
    multiple of n, math mode);
    ``\ForestIJSampleDiv<D|F>`` (n / m of the ``max_samples`` cells); the refit bootstrap's ``\ForestIJBootB`` (as
    archived) and ``\ForestIJBootTrees``; the grid (``\ForestIJGridPoints``, ``Low``, ``High``), the correlated
    variant's ``\ForestIJRho``, the forest's ``\ForestIJMaxFeatures`` and ``\ForestIJLeaf``, the noise SD.
    """
    macros = {}
    for tag, scen, trees in ij_cells:
        n = int(scen.rsplit("_n", 1)[1])
        macros.update({f"ForestIJTrees{tag}": str(trees), f"ForestIJN{tag}": str(n),
                       f"ForestIJTreesPerRow{tag}": _times_n(trees, n)})
    for tag, fraction in _SUBSAMPLE_CELLS:
        macros[f"ForestIJSampleDiv{tag}"] = f"{1 / fraction:g}"
    boot = summary.get(f"friedman1_n500 {_BOOT_CELL} normal", {})
    macros["ForestIJBootB"] = str(boot.get("B", "--"))  # as archived (the number of resample curves stored)
    macros["ForestIJBootTrees"] = str(BOOT_TREES)
    forest = _forest(1, None)
    defaults = inspect.signature(make_correlated_friedman1).parameters
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    macros["ForestIJFeatureCount"] = words.get(len(FEATURES), str(len(FEATURES)))
    macros.update({"ForestIJGridPoints": str(GRID.size), "ForestIJGridLow": f"{GRID[0]:g}",
                   "ForestIJGridHigh": f"{GRID[-1]:g}", "ForestIJRho": f"{defaults['rho'].default:g}",
                   "ForestIJMaxFeatures": f"{forest.max_features:g}", "ForestIJLeaf": str(forest.min_samples_leaf),
                   "ForestIJNoiseSD": f"{inspect.signature(make_friedman1).parameters['noise'].default:g}"})
    return macros


def render(ctx) -> dict:
    """``tables/forest_ij.tex`` and ``generated/forest_ij.tex`` from the study folder (else the archive)."""
    folder = ctx.study_dir(STUDY)
    source = folder if any(folder.rglob("rep*.npz")) else ARCHIVE_DIR
    summary = summarise(source) if any(Path(source).rglob("rep*.npz")) else {}
    lines = [r"\begin{tabular}{llrlllrllrr}", r"\toprule",
             r"DGP & $n$ & $T$ & $m/n$ & method & $R$ & pointwise cov. & simultaneous cov. & SE/SD & $V<0$ & CPU s \\",
             r"\midrule", *_tex_rows(summary), r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "forest_ij.tex"), "\n".join(lines))
    macros = {}

    def put(name, key, field, digits=3):
        v = summary.get(key, {}).get(field, float("nan"))
        macros[name] = C.fmt(v, digits)

    ij_cells = (("A", "friedman1_n500", 1000), ("B", "friedman1_n500", 5000), ("C", "friedman1_n500", 200),
                ("E", "friedman1_n2000", 1000), ("G", "friedman1_n2000", 5000), ("H", "friedman1_n2000", 200),
                ("K", "friedman1_corr_n500", 1000), ("L", "friedman1_corr_n500", 200),
                ("M", "friedman1_corr_n500", 5000))
    boot_cells = (("", "friedman1_n500"), ("Large", "friedman1_n2000"), ("Corr", "friedman1_corr_n500"))
    rows = [(tag, f"{scen} ij_T{T} IJ-U") for tag, scen, T in ij_cells]
    rows += [(tag, f"friedman1_n500 ij_T1000_ms{fraction:g} IJ-U") for tag, fraction in _SUBSAMPLE_CELLS]
    for tag, scen in boot_cells:
        rows += [(f"Boot{tag}", f"{scen} {_BOOT_CELL} normal"), (f"BootSupt{tag}", f"{scen} {_BOOT_CELL} sup-t"),
                 (f"BootPerc{tag}", f"{scen} {_BOOT_CELL} percentile")]
    for tag, key in rows:
        put(f"ForestIJCov{tag}", key, "pointwise")
        put(f"ForestIJCovSE{tag}", key, "pointwise_se")
        put(f"ForestIJSim{tag}", key, "simultaneous")
        put(f"ForestIJSimSE{tag}", key, "simultaneous_se")
        put(f"ForestIJRatio{tag}", key, "se_ratio_median", 2)
        macros[f"ForestIJR{tag}"] = str(summary.get(key, {}).get("R", "--"))
    ratio = summary.get(f"friedman1_n500 {_BOOT_CELL} normal", {}).get("compute_ratio", {}).get("IJ T1000", {})
    macros["ForestIJProjectedRatio"] = C.fmt(ratio.get("projected_boot_same_T", float("nan")), 0)
    macros["ForestIJMeasuredRatio"] = C.fmt(ratio.get("measured_boot_T100", float("nan")), 1)
    macros["ForestIJSeconds"] = C.fmt(ratio.get("ij_cpu", float("nan")), 1)
    ratio = summary.get(f"friedman1_n500 {_BOOT_CELL} normal", {}).get("compute_ratio", {}).get("IJ T5000", {})
    macros["ForestIJProjectedRatioB"] = C.fmt(ratio.get("projected_boot_same_T", float("nan")), 0)
    macros["ForestIJSecondsB"] = C.fmt(ratio.get("ij_cpu", float("nan")), 1)
    for tag, scen in (("Large", "friedman1_n2000"), ("Corr", "friedman1_corr_n500")):
        ratio = summary.get(f"{scen} {_BOOT_CELL} normal", {}).get("compute_ratio", {}).get("IJ T1000", {})
        macros[f"ForestIJProjectedRatio{tag}"] = C.fmt(ratio.get("projected_boot_same_T", float("nan")), 0)
        macros[f"ForestIJSeconds{tag}"] = C.fmt(ratio.get("ij_cpu", float("nan")), 1)
    macros["ForestIJMinTrees"] = str(jk.MIN_TREES)
    for tag, key, n in (("", "friedman1_n500 ij_T1000 IJ-U", 500), ("Large", "friedman1_n2000 ij_T1000 IJ-U", 2000),
                        ("Corr", "friedman1_corr_n500 ij_T1000 IJ-U", 500)):
        # the trees that bring the noise share s (measured at T trees) to 1/2: T * s / (1 - s) (noise ~ 1/T)
        share = summary.get(key, {}).get("noise_share_median", float("nan"))
        macros[f"ForestIJNeededTimesN{tag}"] = C.fmt(1000 * share / (1 - share) / n, 1)
    paired = summary.get("paired", {})
    for tag, scen, T in ij_cells:
        v = paired.get(f"{scen} ij_T{T} IJ-U - {_BOOT_CELL}", {})
        for name, field, digits in (("Diff", "pointwise_diff", 3), ("DiffSE", "pointwise_diff_se", 3),
                                    ("SimDiff", "simultaneous_diff", 3), ("SimDiffSE", "simultaneous_diff_se", 3)):
            macros[f"ForestIJ{name}{tag}"] = C.fmt(v.get(field, float("nan")), digits)
        macros[f"ForestIJPairedR{tag}"] = str(v.get("R_common", "--"))
    for tag, key in (("", "friedman1_n500 ij_T1000 IJ-U"), ("Large", "friedman1_n2000 ij_T1000 IJ-U")):
        row = summary.get(key, {})  # per-tree PD time: IJ CPU minus the fit, per tree and feature
        per_tree = (row.get("cpu_seconds", np.nan) - row.get("fit_seconds", np.nan)) / (1000 * len(FEATURES))
        macros[f"ForestIJTreeMs{tag}"] = C.fmt(1000 * per_tree, 2)
    for tag, key in rows:
        if " ij_" not in key:
            continue
        put(f"ForestIJNoise{tag}", key, "noise_share_median", 2)
        # the same band with each data set's SE replaced by the mean SE over data sets: no SE noise
        put(f"ForestIJMeanSECov{tag}", key.replace("IJ-U", "IJ-U mean SE"), "pointwise")
        put(f"ForestIJMeanSESim{tag}", key.replace("IJ-U", "IJ-U mean SE"), "simultaneous")
        put(f"ForestIJNeg{tag}", key, "negative_share", 2)
    macros.update(_setting_macros(summary, ij_cells))
    C.write_macros(ctx.out("generated", "forest_ij.tex"), macros, "experiments/forest_ij.py")
    return summary


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.forest_ij", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="smoke run: n=200, T in {50, 200}, 4 reps, B=10")
    mode.add_argument("--full", action="store_true", help="the cells of the paper's run (default)")
    mode.add_argument("--focus", action="store_true", help="the session-4 cells (see _plan_focus)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--results-dir", type=Path, default=None)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--archive", type=Path, default=None, help="copy compact results and summary here")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    mode = "quick" if args.quick else "focus" if args.focus else "full"
    cells = _plan_quick() if args.quick else _plan_focus() if args.focus else _plan_full()
    if args.results_dir is None:
        args.results_dir = Path(__file__).parent / "results" / mode / "forest_ij"
    if not args.render_only:
        _warm_up()
        start = time.perf_counter()
        compute_cells(cells, args.results_dir, args.n_jobs)
        print(f"compute: {time.perf_counter() - start:.0f} s wall")
    if args.render_only and not args.results_dir.exists() and ARCHIVE_DIR.exists():
        print(f"(no results in {args.results_dir}: rendering the archived run {ARCHIVE_DIR})")
        args.results_dir = ARCHIVE_DIR
    summary = summarise(args.results_dir)
    text = render_markdown(summary)
    print(text)
    if args.results_dir != ARCHIVE_DIR:
        (args.results_dir / "summary.json").write_text(json.dumps(summary, indent=1))
        (args.results_dir / "summary.md").write_text(text + "\n")
    if args.archive:
        archive(args.results_dir, args.archive)  # plain copy; the runner's --archive adds a MANIFEST
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
