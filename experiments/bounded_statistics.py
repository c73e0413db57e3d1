"""Study (stats): intervals for biased, bounded statistics (H2 and the SD of derivative ICE), per band method.

Settings (``x ~ N(0, 1)`` or U(-1, 1) independent, ``eps ~ N(0, 1)``):

``h2_linear``
    ``y = x1 + x2 + x1 x2 + eps`` (:func:`pdpboot.datasets.make_interaction`), Gaussian
    features: population ``H2_12 = b3^2 s1^2 s2^2 / (b1^2 s1^2 + b2^2 s2^2 + b3^2 s1^2 s2^2)
    = 1/3``.  Statistic: Friedman-Popescu ``H2_12`` on at most ``n_max`` rows.
``dice_goldstein``
    Goldstein et al.'s ``0.2 x1 - 5 x2 + 10 x2 1[x3 >= 0] + eps``: the d-ICE of ``x2`` is
    ``-5`` or ``+5`` with probability 1/2 each, so the population SD of d-ICE is 5.
    Statistic: ``dice_sd`` of ``x2`` averaged over its grid.

Learners: well specified (OLS with the ``x1 x2`` column; OLS on ``x1, x2, x2 1[x3 >= 0]``) and
flexible (histogram gradient boosting).  Per repetition: the statistic of the fit on all rows
and of B bootstrap refits, each computed over the resample's own rows with their
multiplicities (``bootstrap_partial_dependence``'s default), and the row counts of every
resample (for the BCa acceleration, jackknife-after-bootstrap).  Targets: the learner's
expected statistic (the mean over ``truth_fits`` fits on fresh data of the same statistic) and
the population value.  Bands: percentile, basic, normal, bc, bca (bounds clipped at 0), level
0.95; coverage with Monte Carlo SE ``sqrt(p (1 - p) / R)``.

    python -m experiments.bounded_statistics [--quick] [--settings h2_linear:ols ...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

import numpy as np
import xarray as xr
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import HistGradientBoostingRegressor

from pdpboot.datasets import make_goldstein, make_interaction
from pdpboot.engine.brute import brute_partial_dependence
from pdpboot.engine.hstats import interaction_statistics
from pdpboot.engine.ice_stats import ice_statistics
from pdpboot.engine.intervals import band_arrays
from pdpboot.engine.resample import multiplicities

from . import _common as C
from .learners import LEARNER_LABELS, METHOD_LABELS, LeastSquares

STUDY = "bounded"
METHODS = ("percentile", "basic", "normal", "bc", "bca")
POPULATION = {"h2_linear": 1.0 / 3.0, "dice_goldstein": 5.0}
SETTINGS = {
    "full": {"seed": 81, "n": 300, "n_max": 100, "grid": 11, "chunk": 25,
             "runs": {"h2_linear:ols": {"R": 400, "B": 200, "T": 1000},
                      "dice_goldstein:ols": {"R": 400, "B": 200, "T": 1000},
                      "h2_linear:gbm": {"R": 100, "B": 100, "T": 200},
                      "dice_goldstein:gbm": {"R": 100, "B": 100, "T": 200}}},
    "quick": {"seed": 81, "n": 120, "n_max": 40, "grid": 5, "chunk": 3,
              "runs": {"h2_linear:ols": {"R": 3, "B": 30, "T": 5},
                       "dice_goldstein:ols": {"R": 3, "B": 30, "T": 5},
                       "h2_linear:gbm": {"R": 2, "B": 20, "T": 2},
                       "dice_goldstein:gbm": {"R": 2, "B": 20, "T": 2}}},
}


class GoldsteinBasis(RegressorMixin, BaseEstimator):
    """OLS on ``(1, x1, x2, x2 1[x3 >= 0])``: the well-specified learner of Goldstein's DGP."""

    def _design(self, X):
        X = np.asarray(X, dtype=float)
        return np.column_stack([np.ones(len(X)), X[:, 0], X[:, 1], X[:, 1] * (X[:, 2] >= 0)])

    def fit(self, X, y):
        self.coef_ = np.linalg.lstsq(self._design(X), np.asarray(y, dtype=float), rcond=None)[0]
        return self

    def predict(self, X):
        return self._design(X) @ self.coef_


def _data(dgp: str, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    maker = make_interaction if dgp == "h2_linear" else make_goldstein
    X, y = maker(n, rng=rng)
    return X.to_numpy(), np.asarray(y, dtype=float)


def _learner(dgp: str, name: str, quick: bool):
    if name == "ols":
        return LeastSquares(interaction=True) if dgp == "h2_linear" else GoldsteinBasis()
    return HistGradientBoostingRegressor(max_iter=20 if quick else 60, max_depth=3, early_stopping=False)


def _statistic(dgp: str, model, X: np.ndarray, counts: np.ndarray, cfg: dict, rng) -> float:
    """The statistic of a fitted model over the rows with ``counts > 0``, weighted by the counts."""
    distinct, weights = multiplicities(np.repeat(np.arange(len(counts)), counts), len(counts))
    rows = X[distinct]

    def predict(Z):
        return np.asarray(model.predict(np.asarray(Z, dtype=float)), dtype=float).reshape(-1, 1)

    if dgp == "h2_linear":
        out = interaction_statistics(predict, rows, pairs=[(0, 1)], weights=weights.astype(float),
                                     n_max=cfg["n_max"], rng=rng)
        return float(out[(0, 1)]["h2"][0])
    grid = np.linspace(-0.9, 0.9, cfg["grid"])  # inside the U(-1, 1) support of x2
    _, ice = brute_partial_dependence(predict, rows, [1], [grid], average=False, individual=True)
    return float(ice_statistics(ice, grid, weights=weights.astype(float))["dice_sd"][0].mean())


def _repetition(dgp: str, learner: str, cfg: dict, run: dict, quick: bool, seed) -> tuple:
    data_seed, boot_seed, stat_seed = seed.spawn(3)
    X, y = _data(dgp, cfg["n"], np.random.default_rng(data_seed))
    n = len(y)
    base = _learner(dgp, learner, quick)
    stat_rng = np.random.default_rng(stat_seed)
    estimate = _statistic(dgp, clone(base).fit(X, y), X, np.ones(n, dtype=int), cfg, stat_rng)
    rng = np.random.default_rng(boot_seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=run["B"])
    resamples = []
    for c in counts:
        rows = np.repeat(np.arange(n), c)
        model = clone(base).fit(X[rows], y[rows])
        resamples.append(_statistic(dgp, model, X, c, cfg, stat_rng))
    return estimate, np.array(resamples), counts.astype(np.uint8)


def _truth_fit(dgp: str, learner: str, cfg: dict, quick: bool, seed) -> float:
    data_seed, stat_seed = seed.spawn(2)
    X, y = _data(dgp, cfg["n"], np.random.default_rng(data_seed))
    model = _learner(dgp, learner, quick).fit(X, y)
    return _statistic(dgp, model, X, np.ones(len(y), dtype=int), cfg, np.random.default_rng(stat_seed))


def compute(ctx: C.Context, runs=None, max_reps: int | None = None, chunk_size: int | None = None) -> None:
    """Fill the caches in chunks; ``max_reps`` caps the repetitions per setting (a reduced run) and ``chunk_size``
    sets the repetitions per cache file (smaller chunks lose less work when a run is stopped)."""
    cfg = dict(SETTINGS[ctx.mode])
    cfg["chunk"] = chunk_size or cfg["chunk"]
    folder = ctx.study_dir(STUDY)
    for key in runs or cfg["runs"]:
        run = cfg["runs"][key]
        dgp, learner = key.split(":")
        root = C.seed_sequence(cfg["seed"], key)
        truth_seed, rep_seed = root.spawn(2)

        def truth(dgp=dgp, learner=learner, run=run, truth_seed=truth_seed):
            values = np.array([_truth_fit(dgp, learner, cfg, ctx.quick, s) for s in truth_seed.spawn(run["T"])])
            return xr.Dataset({"values": ("fit", values)})

        C.cached(folder / f"{dgp}_{learner}_truth.nc", ctx, truth)
        seeds = rep_seed.spawn(run["R"])
        for first in range(0, run["R"] if max_reps is None else min(run["R"], max_reps), cfg["chunk"]):
            def chunk(first=first, dgp=dgp, learner=learner, run=run, seeds=seeds):
                start = time.perf_counter()
                out = [_repetition(dgp, learner, cfg, run, ctx.quick, s) for s in seeds[first:first + cfg["chunk"]]]
                est, res, counts = map(np.array, zip(*out))
                print(f"[{time.strftime('%H:%M:%S')}] bounded {dgp}:{learner} reps {first}..{first + len(out)} "
                      f"took {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
                return xr.Dataset({"estimate": ("rep", est), "resamples": (("rep", "resample"), res),
                                   "counts": (("rep", "resample", "row"), counts)},
                                  coords={"rep": np.arange(first, first + len(out))})

            C.cached(folder / f"{dgp}_{learner}_{first:05d}.nc", ctx, chunk)


def _records(ctx: C.Context, level: float = 0.95) -> list[dict]:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    records = []
    for key in cfg["runs"]:
        dgp, learner = key.split(":")
        files = sorted(f for f in folder.glob(f"{dgp}_{learner}_0*.nc"))
        truth_file = folder / f"{dgp}_{learner}_truth.nc"
        if not files or not truth_file.exists():
            continue
        truth_values = C.load_dataset(truth_file)["values"].values
        expected = float(truth_values.mean())
        data = xr.concat([C.load_dataset(f) for f in files], dim="rep")
        est, res, counts = data["estimate"].values, data["resamples"].values, data["counts"].values
        n_rep = est.size
        for method in METHODS:
            cover_exp, cover_pop, widths, lowers = [], [], [], []
            for r in range(n_rep):
                lo, hi, *_ = band_arrays(est[r].reshape(1, 1), res[r].reshape(-1, 1, 1), level=level, method=method,
                                         simultaneous=False, absent=C.absent_rows(counts[r]), support=(0.0, None))
                lo, hi = float(lo[0, 0]), float(hi[0, 0])
                cover_exp.append(lo <= expected <= hi)
                cover_pop.append(lo <= POPULATION[dgp] <= hi)
                widths.append(hi - lo)
                lowers.append(lo)
            p_exp, p_pop = float(np.mean(cover_exp)), float(np.mean(cover_pop))
            records.append({
                "dgp": dgp, "learner": learner, "method": method, "R": int(n_rep), "B": int(res.shape[1]),
                "expected": expected, "expected_mcse": float(truth_values.std(ddof=1) / np.sqrt(truth_values.size)),
                "population": POPULATION[dgp], "mean_estimate": float(est.mean()),
                "coverage_expected": p_exp, "coverage_expected_mcse": float(np.sqrt(p_exp * (1 - p_exp) / n_rep)),
                "coverage_population": p_pop,
                "coverage_population_mcse": float(np.sqrt(p_pop * (1 - p_pop) / n_rep)),
                "mean_width": float(np.mean(widths)), "share_lower_at_zero": float(np.mean(np.array(lowers) == 0.0)),
            })
    return records


#: Compact file (``python -m experiments bounded --archive``): the records of the table and the text.
ARCHIVE = ("summary.json",)


def summarize(ctx: C.Context) -> None:
    """Write the compact file ``summary.json`` from the per-repetition caches."""
    (ctx.study_dir(STUDY) / "summary.json").write_text(json.dumps(_records(ctx), indent=1))


def _setting_macros(ctx: C.Context, records: list[dict]) -> dict:
    r"""The design quoted in the text: ``\BoundedN`` rows, ``\BoundedNMax`` (rows of each H statistic), the
    boosting learner's ``\BoundedGbmRounds`` and ``\BoundedGbmDepth``, and the population d-ICE SD of Goldstein's
    example as archived (``\BoundedPopValueDice``)."""
    cfg = SETTINGS[ctx.mode]
    gbm = _learner("h2_linear", "gbm", ctx.quick)
    dice = [rec["population"] for rec in records if rec["dgp"] == "dice_goldstein"]
    return {"BoundedN": str(cfg["n"]), "BoundedNMax": str(cfg["n_max"]), "BoundedGbmRounds": str(gbm.max_iter),
            "BoundedGbmDepth": str(gbm.max_depth), "BoundedPopValueDice": f"{dice[0]:g}" if dice else "--"}


def render(ctx: C.Context) -> list[dict]:
    folder = ctx.study_dir(STUDY)
    if not (folder / "summary.json").exists():
        summarize(ctx)
    records = json.loads((folder / "summary.json").read_text())
    lines = [r"\begin{tabular}{lllrrrrr}", r"\toprule",
             r"statistic & learner & method & $R$ & $B$ & cov.\ of learner's expectation & cov.\ of population & "
             r"width \\", r"\midrule"]
    for rec in records:
        dgp = {"h2_linear": r"$H^2_{12}$, linear", "dice_goldstein": r"d-ICE SD, Goldstein",
               "h2_friedman": r"$H^2_{12}$, Friedman \#1"}.get(rec["dgp"], rec["dgp"].replace("_", r"\_"))
        lines.append(f"{dgp} & {LEARNER_LABELS[rec['learner']]} & {METHOD_LABELS[rec['method']]} & "
                     f"{rec['R']} & {rec['B']} & "
                     f"{C.fmt(rec['coverage_expected'], 3)} ({C.fmt(rec['coverage_expected_mcse'], 3)}) & "
                     f"{C.fmt(rec['coverage_population'], 3)} ({C.fmt(rec['coverage_population_mcse'], 3)}) & "
                     f"{C.fmt(rec['mean_width'], 3)} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "bounded_statistics.tex"), "\n".join(lines))
    macros = {}
    for rec in records:
        key = re.sub("[^A-Za-z]", "", "".join(w.capitalize() for w in f"{rec['dgp']}_{rec['learner']}_{rec['method']}"
                                              .split("_")))
        macros[f"Bounded{key}"] = C.fmt(rec["coverage_expected"], 3)
        macros[f"BoundedSE{key}"] = C.fmt(rec["coverage_expected_mcse"], 3)
        macros[f"BoundedPop{key}"] = C.fmt(rec["coverage_population"], 3)
        setting = re.sub("[^A-Za-z]", "", "".join(w.capitalize() for w in f"{rec['dgp']}_{rec['learner']}".split("_")))
        macros[f"BoundedR{setting}"] = str(rec["R"])
        macros[f"BoundedB{setting}"] = str(rec["B"])
        macros[f"BoundedExp{setting}"] = C.fmt(rec["expected"], 2)  # the learner's expected statistic
    macros.update(_setting_macros(ctx, records))
    if records:
        macros["BoundedB"] = str(records[0]["B"])  # the well-specified (first) rows' B; per setting: BoundedB<Setting>
    C.write_macros(ctx.out("generated", "bounded.tex"), macros,
                   "bounded_statistics: coverage of intervals for H2 and the d-ICE SD")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bounded_statistics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--settings", nargs="*", help="subset of the runs, e.g. h2_linear:ols")
    parser.add_argument("--max-reps", type=int, help="cap on repetitions per setting")
    parser.add_argument("--chunk", type=int, help="repetitions per cache file (default from SETTINGS)")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, 1)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        compute(ctx, args.settings, args.max_reps, args.chunk)
        summarize(ctx)
        records = render(ctx)
    for rec in records:
        print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
