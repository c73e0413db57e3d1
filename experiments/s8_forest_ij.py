"""Study 8: one-fit infinitesimal-jackknife (IJ) PD bands for random forests vs the refit bootstrap.

For each data set (Monte Carlo repetition) of a scenario, a random forest with T trees is fitted
once and the IJ (``V_IJ-U``), the raw IJ (no finite-B correction) and the jackknife-after-bootstrap
(``V_J-U``) variances of its PD are computed from its trees (:mod:`pdpboot.engine.jackknife`, the
path of :func:`pdpboot.forest_partial_dependence`); at the bootstrap's T the refit bootstrap
(:func:`pdpboot.bootstrap_partial_dependence`, ``background="resample"``) runs on the same data.

Truth: the learner's expected PD, estimated by the mean over the *other* repetitions' forest PDs
(every T: the expectation does not depend on T).  Reported per scenario, T and method: pointwise
coverage (mean over grid points and features) and simultaneous coverage (whole curve) of 95 %
bands with Monte Carlo SE (SD of the per-repetition coverage / sqrt(R)), mean width, the ratio of
the mean SE to the Monte Carlo SD of the PD across repetitions, the share of the raw IJ variance
removed by the bias correction, and CPU seconds per repetition (fit + PD + variance).

Scenarios: ``friedman1`` (the paper's scenario B: Friedman #1, 10 U(0, 1) features, noise sd 1,
PD of x1, x3, x4 on 15 points) and ``friedman1_corr`` (the same function of Gaussian-copula
features, x1..x5 equicorrelated 0.6).  Forest: max_features 0.33, min_samples_leaf 5 (the study
learner ``rf``).

    python -m experiments.s8_forest_ij --quick                       # smoke run (a minute)
    python -m experiments.s8_forest_ij --n 500 --trees 200 1000 --reps 50 --boot-trees 200 --boot-B 100
    python -m experiments.s8_forest_ij --full                        # n in {500, 2000}, T in {200, 1000, 5000}
    python -m experiments.s8_forest_ij --render-only [same options]

Each repetition is cached (``<results-dir>/forest_ij/<scenario>/rep<r>.npz``), so an interrupted
run resumes and ``--render-only`` summarises whatever has finished.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy.special import ndtri
from scipy.stats import norm
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

import pdpboot
from pdpboot.bands import band_arrays
from pdpboot.datasets import make_friedman1
from pdpboot.engine import jackknife as jk

GRID = np.linspace(0.05, 0.95, 15)
FEATURES = [0, 2, 3]
LEVEL = 0.95
SEED = 20261130


def make_correlated_friedman1(n: int, rng: np.random.Generator, rho: float = 0.6):
    """Friedman #1 response on features whose first five are Gaussian-copula equicorrelated ``rho``."""
    cov = np.full((5, 5), rho) + (1 - rho) * np.eye(5)
    z = rng.multivariate_normal(np.zeros(5), cov, size=n)
    X = np.column_stack([norm.cdf(z), rng.uniform(size=(n, 5))])
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
         + rng.standard_normal(n))
    return X, y


def _data(dgp: str, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if dgp == "friedman1":
        X, y = make_friedman1(n, rng=rng)
        return X.to_numpy(float), y.to_numpy(float)
    if dgp == "friedman1_corr":
        return make_correlated_friedman1(n, rng)
    raise ValueError(f"unknown dgp {dgp!r}")


def _forest(n_trees: int, seed: int) -> RandomForestRegressor:
    return RandomForestRegressor(n_estimators=n_trees, max_features=0.33, min_samples_leaf=5, random_state=seed,
                                 n_jobs=1)


def _ij_run(X, y, n_trees: int, seed: np.random.SeedSequence) -> dict:
    """Fit once; IJ, raw IJ and jackknife variances of the PD of every feature (arrays (F, G))."""
    fit_seed, mult_seed = seed.spawn(2)
    start = time.process_time()
    forest = _forest(n_trees, int(fit_seed.generate_state(1)[0] % 2**31)).fit(X, y)
    fit_time = time.process_time() - start
    xa = X.astype(np.float32)
    n = len(X)
    counts = jk.inbag_counts(forest, n)
    out = {k: [] for k in ("pd", "v_ij", "v_raw", "v_j", "crit", "noise_share")}
    for f, s in zip(FEATURES, mult_seed.spawn(len(FEATURES))):
        ev = jk.evaluate_trees(forest, xa, (f,), [GRID], response_method="predict", counts=counts, method="brute")
        t, ice, oob = ev.tree_pd[:, 0], ev.ice[:, 0], ev.oob_ice[:, 0]
        u = jk.ij_influence(counts, t, ice)
        raw = (u**2).sum(axis=0)
        noise = jk.mc_noise(t, n)
        out["pd"].append(t.mean(axis=0))
        out["v_raw"].append(raw)
        out["v_ij"].append(raw - noise)
        out["v_j"].append(jk.jackknife_variance(counts, t, oob))
        out["crit"].append(jk.supt_critical_value(u[:, None, :], level=LEVEL, rng=np.random.default_rng(s))[0])
        out["noise_share"].append(noise / raw)
    result = {k: np.asarray(v) for k, v in out.items()}
    result["time"] = np.asarray(time.process_time() - start)
    result["fit_time"] = np.asarray(fit_time)
    return result


def _boot_run(X, y, n_trees: int, n_resamples: int, seed: np.random.SeedSequence) -> dict:
    start = time.process_time()
    res = pdpboot.bootstrap_partial_dependence(
        _forest(n_trees, 0).set_params(random_state=None), X, y, FEATURES, n_resamples=n_resamples,
        custom_values={f: GRID for f in FEATURES}, background="resample", n_jobs=1,
        rng=np.random.default_rng(seed), progress=False)
    elapsed = time.process_time() - start
    nodes = [pdpboot.get_node(res, f"x{f}") for f in FEATURES]
    return {"boot_pd": np.stack([nd.ds["pd"].values[0] for nd in nodes]),
            "boot_res": np.stack([nd.ds["pd_resamples"].values[:, 0] for nd in nodes], axis=1),
            "boot_time": np.asarray(elapsed)}


def _repetition(path: Path, dgp: str, n: int, trees: list[int], boot_trees: int | None, boot_b: int,
                seed: np.random.SeedSequence) -> None:
    if path.exists():
        return
    data_seed, ij_seed, boot_seed = seed.spawn(3)
    X, y = _data(dgp, n, data_seed)
    arrays = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for T, s in zip(trees, ij_seed.spawn(len(trees))):
            for k, v in _ij_run(X, y, T, s).items():
                arrays[f"T{T}_{k}"] = v
        if boot_trees:
            for k, v in _boot_run(X, y, boot_trees, boot_b, boot_seed).items():
                arrays[f"T{boot_trees}_{k}"] = v
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def _scenarios(args) -> list[dict]:
    return [{"name": f"{dgp}_n{n}", "dgp": dgp, "n": n} for dgp in args.dgps for n in args.n]


def compute(args) -> None:
    """Run (or resume) every repetition, repetition-major so that an interrupted run covers all scenarios."""
    scenarios = _scenarios(args)
    seeds = {sc["name"]: np.random.SeedSequence([SEED, sc["n"], sum(map(ord, sc["dgp"]))]).spawn(args.reps)
             for sc in scenarios}
    jobs = [delayed(_repetition)(args.results_dir / sc["name"] / f"rep{r:04d}.npz", sc["dgp"], sc["n"], args.trees,
                                 args.boot_trees, args.boot_B, seeds[sc["name"]][r])
            for r in range(args.reps) for sc in scenarios]
    Parallel(n_jobs=args.n_jobs, verbose=0)(jobs)


def _load(directory: Path, keys_needed: list[str]) -> dict[int, dict]:
    """Finished repetitions of a scenario: {repetition index: arrays}."""
    reps = {}
    for p in sorted(directory.glob("rep*.npz")):
        if p.name.endswith(".tmp.npz"):
            continue
        with np.load(p) as z:
            if all(k in z for k in keys_needed):
                reps[int(p.stem[3:])] = {k: z[k] for k in z.files}
    return reps


def _truth(name: str, dirs: list[Path], indices: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out learner's expected PD for each repetition, and the sampling SD of the PD.

    Truth for repetition r: the mean forest PD (any T, any of ``dirs``) over the data sets of the
    *other* repetitions (the same index is the same data set in every dir).  SD: across data sets of
    the per-data-set mean PD (the forest's Monte Carlo variance over trees is negligible here).
    """
    pool: dict[int, list[np.ndarray]] = {}
    for d in dirs:
        for r, rep in _load(d / name, []).items():
            pool.setdefault(r, []).extend(rep[k] for k in rep if k.endswith("_pd") and "boot" not in k)
    truth = np.stack([np.mean([a for q, arrays in pool.items() if q != r for a in arrays], axis=0)
                      for r in indices])
    sd = np.std([np.mean(arrays, axis=0) for arrays in pool.values()], axis=0, ddof=1)
    return truth, sd, len(pool)


def _coverage(inside_point: np.ndarray, inside_curve: np.ndarray) -> dict:
    """inside_point (R, F, G) bools, inside_curve (R, F) bools -> coverage with MC SE."""
    per_rep_p = inside_point.mean(axis=(1, 2))
    per_rep_s = inside_curve.mean(axis=1)
    r = len(per_rep_p)
    return {"pointwise": float(per_rep_p.mean()), "pointwise_se": float(per_rep_p.std(ddof=1) / np.sqrt(r)),
            "simultaneous": float(per_rep_s.mean()), "simultaneous_se": float(per_rep_s.std(ddof=1) / np.sqrt(r))}


def summarise(args) -> dict:
    z = ndtri(0.5 + LEVEL / 2)
    summary = {}
    for sc in _scenarios(args):
        loaded = _load(args.results_dir / sc["name"], [f"T{T}_pd" for T in args.trees])
        R = len(loaded)
        if R < 3:
            continue
        truth, sd, n_pool = _truth(sc["name"], [args.results_dir, *args.truth_dirs], sorted(loaded))
        reps = [loaded[r] for r in sorted(loaded)]
        rows = {}
        for T in args.trees:
            pd_hat = np.stack([rep[f"T{T}_pd"] for rep in reps])
            err = np.abs(pd_hat - truth)
            for label, key in (("IJ-U", "v_ij"), ("IJ raw", "v_raw"), ("J-U", "v_j")):
                se = np.sqrt(np.clip(np.stack([rep[f"T{T}_{key}"] for rep in reps]), 0, None))
                crit = np.stack([rep[f"T{T}_crit"] for rep in reps])[:, :, None]
                cov = _coverage(err <= z * se, (err <= crit * se).all(axis=2))
                ratio = se.mean(axis=0) / sd
                rows[f"T{T} {label}"] = dict(
                    cov, width=float(2 * z * se.mean()), se_ratio_median=float(np.median(ratio)),
                    se_ratio_min=float(ratio.min()), se_ratio_max=float(ratio.max()),
                    negative_share=float((np.stack([rep[f"T{T}_{key}"] for rep in reps]) < 0).mean()),
                    noise_share_median=float(np.median(np.stack([rep[f"T{T}_noise_share"] for rep in reps]))),
                    cpu_seconds=float(np.mean([rep[f"T{T}_time"] for rep in reps])),
                    fit_seconds=float(np.mean([rep[f"T{T}_fit_time"] for rep in reps])), R=R)
            if f"T{T}_boot_pd" in reps[0]:
                est = np.stack([rep[f"T{T}_boot_pd"] for rep in reps])
                res = np.stack([rep[f"T{T}_boot_res"] for rep in reps])  # (R, B, F, G)
                for label, (meth, sim) in (("boot percentile", ("percentile", False)),
                                           ("boot sup-t", ("normal", True)), ("boot normal", ("normal", False))):
                    inside_p, inside_c, widths, ses = [], [], [], []
                    for r in range(R):
                        lo, hi, se, *_ = band_arrays(est[r], res[r], level=LEVEL, method=meth, simultaneous=sim)
                        ok = (lo <= truth[r]) & (truth[r] <= hi)
                        inside_p.append(ok)
                        inside_c.append(ok.all(axis=1))
                        widths.append((hi - lo).mean())
                        ses.append(se)
                    cov = _coverage(np.array(inside_p), np.array(inside_c))
                    ratio = np.mean(ses, axis=0) / sd
                    rows[f"T{T} {label}"] = dict(
                        cov, width=float(np.mean(widths)), se_ratio_median=float(np.median(ratio)),
                        se_ratio_min=float(ratio.min()), se_ratio_max=float(ratio.max()),
                        cpu_seconds=float(np.mean([rep[f"T{T}_boot_time"] for rep in reps])),
                        B=int(res.shape[1]), R=R)
                ij_time = rows[f"T{T} IJ-U"]["cpu_seconds"]
                rows[f"T{T} boot percentile"]["compute_ratio_vs_ij"] = rows[f"T{T} boot percentile"]["cpu_seconds"] \
                    / ij_time
        summary[sc["name"]] = {"n_datasets_truth_sd": n_pool, "rows": rows}
    return summary


def render(summary: dict) -> str:
    lines = []
    for name, entry in summary.items():
        rows = entry["rows"]
        lines.append(f"\n### {name} (truth and true SD from {entry['n_datasets_truth_sd']} data sets)\n")
        lines.append("| T, method | R | pointwise cov (MC SE) | simultaneous cov (MC SE) | mean width | "
                     "SE / true SD: median [min, max] | noise share (median) | CPU s / rep |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for key, v in rows.items():
            noise = f"{v['noise_share_median']:.2f}" if "noise_share_median" in v and "IJ" in key else ""
            lines.append(
                f"| {key}{' (B=' + str(v['B']) + ')' if 'B' in v else ''} | {v['R']} | "
                f"{v['pointwise']:.3f} ({v['pointwise_se']:.3f}) | {v['simultaneous']:.3f} "
                f"({v['simultaneous_se']:.3f}) | {v['width']:.3f} | {v['se_ratio_median']:.2f} "
                f"[{v['se_ratio_min']:.2f}, {v['se_ratio_max']:.2f}] | {noise} | {v['cpu_seconds']:.1f} |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.s8_forest_ij", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smoke run: n=200, T in {50, 200}, 4 reps, B=10")
    parser.add_argument("--full", action="store_true", help="n in {500, 2000}, T in {200, 1000, 5000}, 200 reps")
    parser.add_argument("--n", type=int, nargs="+", default=[500])
    parser.add_argument("--trees", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--boot-trees", type=int, default=200, help="T of the refit-bootstrap comparator (0: none)")
    parser.add_argument("--boot-B", type=int, default=100, help="refits of the bootstrap comparator")
    parser.add_argument("--dgps", nargs="+", default=["friedman1", "friedman1_corr"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--results-dir", type=Path, default=None)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--truth-dirs", type=Path, nargs="*", default=[],
                        help="other results dirs of the same scenarios (same seeds) whose forest PDs join the truth")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.quick:
        args.n, args.trees, args.reps, args.boot_trees, args.boot_B = [200], [50, 200], 4, 50, 10
    elif args.full:
        args.n, args.trees, args.reps = [500, 2000], [200, 1000, 5000], 200
    mode = "quick" if args.quick else "full"
    if args.results_dir is None:
        args.results_dir = Path(__file__).parent / "results" / mode / "forest_ij"
    args.boot_trees = args.boot_trees or None
    if not args.render_only:
        start = time.perf_counter()
        compute(args)
        print(f"compute: {time.perf_counter() - start:.0f} s wall")
    summary = summarise(args)
    text = render(summary)
    print(text)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    (args.results_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    (args.results_dir / "summary.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
