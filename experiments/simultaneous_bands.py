"""Study (stats): whole-curve coverage of simultaneous bands (sup-t vs calibrated percentile), regression.

DGP (held out from the paper's other studies): ``y = sin(pi x1) + x2 + 0.5 x1 x2 + eps`` with
``x1, x2 ~ U(-1, 1)`` and ``eps ~ N(0, 0.5^2)``, ``n`` rows.  Learner: a smooth one, cubic
B-splines (6 knots) of each feature plus their product term ``x1 x2``, ridge with a small
penalty.  Target: the learner's expected PD of ``x1`` on a 15-point grid (the mean over
``truth_fits`` fits on fresh data of the PD averaged over each fit's own rows), so coverage
measures the bands, not the learner's bias.

Per repetition B bootstrap resamples (rows drawn with replacement, the learner refitted, the
PD averaged over the resample's own rows: ``bootstrap_partial_dependence``'s default, computed
here on precomputed spline designs for speed, see :class:`FastSplineRidge`; a test checks it
against the package); bands are formed at render time for B and for its first B/2 resamples.  Reported per band:
whole-curve coverage (share of repetitions whose band contains the target everywhere), the
mean pointwise coverage and the Monte Carlo SE ``sqrt(p (1 - p) / R)``.

    python -m experiments.simultaneous_bands [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import xarray as xr
from scipy.special import ndtri
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.preprocessing import SplineTransformer

from pdpboot.engine.intervals import band_arrays, pointwise_interval

from . import _common as C
from .learners import METHOD_LABELS

STUDY = "bands"
SETTINGS = {
    "full": {"seed": 61, "n": 300, "B": 200, "R": 1000, "truth_fits": 2000, "grid": 15},
    "quick": {"seed": 61, "n": 150, "B": 40, "R": 4, "truth_fits": 10, "grid": 8},
}
CONSTRUCTIONS = {  # label: (pointwise method, simultaneous method)
    "sup-t": ("percentile", "sup-t"),
    "calibrated percentile": ("percentile", "calibrated"),
    "normal sup-t (pure)": ("normal", "sup-t"),
}


class SplineRidge(RegressorMixin, BaseEstimator):
    """Cubic B-splines of every feature, plus the product of the first two, then ridge."""

    def __init__(self, n_knots: int = 6, alpha: float = 1e-3):
        self.n_knots = n_knots
        self.alpha = alpha

    def _design(self, X):
        X = np.asarray(X, dtype=float)
        return np.column_stack([self.splines_.transform(X), X[:, 0] * X[:, 1]])

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        knots = np.repeat(np.linspace(-1, 1, self.n_knots)[:, None], X.shape[1], axis=1)
        self.splines_ = SplineTransformer(degree=3, knots=knots, extrapolation="linear").fit(X)
        self.ridge_ = Ridge(alpha=self.alpha).fit(self._design(X), y)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return self.ridge_.predict(self._design(X))


#: noise SD of the DGP (quoted in the paper as ``\BandsNoiseSD``)
NOISE_SD = 0.5


def make_data(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.sin(np.pi * X[:, 0]) + X[:, 1] + 0.5 * X[:, 0] * X[:, 1] + rng.normal(scale=NOISE_SD, size=n)
    return X, y


def _grid(cfg: dict) -> np.ndarray:
    return np.linspace(-0.9, 0.9, cfg["grid"])


class FastSplineRidge:
    """``SplineRidge`` on precomputed design rows: fit on row counts, PD over the same rows.

    The knots are fixed on [-1, 1], so the design of every row and of every grid point is
    computed once per data set; a resample is then a weighted ridge fit (weights = how often
    each row was drawn) and its PD ``mean_i f(g, x2_i)`` over the resample's rows (with
    multiplicities, ``background="resample"``) is a few dot products.
    """

    def __init__(self, X: np.ndarray, grid: np.ndarray, alpha: float = 1e-3):
        self.model = SplineRidge(alpha=alpha).fit(X, np.zeros(len(X)))
        splines = self.model.splines_
        self.design = self.model._design(X)  # (n, p)
        k1 = splines.transform(np.column_stack([grid, np.zeros_like(grid)]))
        n_basis = k1.shape[1] // 2
        self.basis_grid = k1[:, :n_basis]  # x1 block at the grid values
        self.n_basis = n_basis
        self.X = X
        self.grid = grid
        self.alpha = alpha

    def pd(self, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
        w = counts.astype(float)
        D = self.design
        # Ridge(alpha) with an unpenalised intercept: centre by the weighted means
        mean_d = w @ D / w.sum()
        mean_y = w @ y / w.sum()
        Dc = D - mean_d
        weighted = (Dc * w[:, None]).T
        beta = np.linalg.solve(weighted @ Dc + self.alpha * np.eye(D.shape[1]), weighted @ (y - mean_y))
        intercept = mean_y - mean_d @ beta
        nb = self.n_basis
        # f(g, x2_i) = intercept + B1(g) b1 + B2(x2_i) b2 + g x2_i b3; average over rows with weights w
        part_x2 = (D[:, nb:2 * nb] @ beta[nb:2 * nb]) @ w / w.sum()
        mean_x2 = self.X[:, 1] @ w / w.sum()
        return intercept + self.basis_grid @ beta[:nb] + part_x2 + self.grid * mean_x2 * beta[-1]


def _truth_fit(cfg: dict, seed) -> np.ndarray:
    X, y = make_data(cfg["n"], np.random.default_rng(seed))
    return FastSplineRidge(X, _grid(cfg)).pd(y, np.ones(len(y)))


def _repetition(cfg: dict, seed) -> tuple[np.ndarray, np.ndarray]:
    data_seed, boot_seed = seed.spawn(2)
    X, y = make_data(cfg["n"], np.random.default_rng(data_seed))
    learner = FastSplineRidge(X, _grid(cfg))
    rng = np.random.default_rng(boot_seed)
    n = len(y)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=cfg["B"])
    return learner.pd(y, np.ones(n)), np.array([learner.pd(y, c) for c in counts])


def compute(ctx: C.Context) -> None:
    cfg = SETTINGS[ctx.mode]
    folder = ctx.study_dir(STUDY)
    root = C.seed_sequence(cfg["seed"], STUDY)
    truth_seed, rep_seed = root.spawn(2)

    def truth():
        curves = np.array([_truth_fit(cfg, s) for s in truth_seed.spawn(cfg["truth_fits"])])
        return xr.Dataset({"truth": ("x", curves.mean(axis=0)),
                           "truth_mcse": ("x", curves.std(axis=0, ddof=1) / np.sqrt(len(curves)))},
                          coords={"x": _grid(cfg)})

    def reps():
        out = [_repetition(cfg, s) for s in rep_seed.spawn(cfg["R"])]
        est, res = map(np.array, zip(*out))
        return xr.Dataset({"estimate": (("rep", "x"), est), "resamples": (("rep", "resample", "x"), res)},
                          coords={"x": _grid(cfg)}, attrs={"n": cfg["n"], "B": cfg["B"]})

    C.cached(folder / "truth.nc", ctx, truth)
    C.cached(folder / "repetitions.nc", ctx, reps)


def _load_repetitions(ctx: C.Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached truth (x), estimates (rep, x) and resamples (rep, resample, x)."""
    folder = ctx.study_dir(STUDY)
    truth = C.load_dataset(folder / "truth.nc")["truth"].values
    data = C.load_dataset(folder / "repetitions.nc")
    return truth, data["estimate"].values, data["resamples"].values


def _records(ctx: C.Context, level: float = 0.95) -> list[dict]:
    truth, est, res = _load_repetitions(ctx)
    n_rep, n_b = est.shape[0], res.shape[1]
    records = []
    for b in (n_b // 2, n_b):
        for label, (method, sim) in CONSTRUCTIONS.items():
            whole, pointwise, levels, crit = [], [], [], []
            for r in range(n_rep):
                lo, hi, _, _, info = band_arrays(est[r][None], res[r, :b, None, :], level=level, method=method,
                                                 simultaneous=True, simultaneous_method=sim)
                inside = (lo[0] <= truth) & (truth <= hi[0])
                whole.append(inside.all())
                levels += info.get("calibrated_level", [])
                crit += info.get("critical_value", [])
            for r in range(n_rep):
                lo, hi, *_ = band_arrays(est[r][None], res[r, :b, None, :], level=level, method=method,
                                         simultaneous=False)
                pointwise.append(np.mean((lo[0] <= truth) & (truth <= hi[0])))
            p = float(np.mean(whole))
            records.append({"B": b, "band": label, "R": n_rep, "whole_curve": p,
                            "whole_curve_mcse": float(np.sqrt(p * (1 - p) / n_rep)),
                            "pointwise": float(np.mean(pointwise)),
                            "pointwise_mcse": float(np.std(pointwise, ddof=1) / np.sqrt(n_rep)) if n_rep > 1 else 0.0,
                            "mean_calibrated_level": float(np.mean(levels)) if levels else float("nan"),
                            "mean_critical_value": float(np.mean(crit)) if crit else float("nan")})
    return records


def _records_order_statistic(ctx: C.Context, level: float = 0.95) -> list[dict]:
    """Sup-t with the critical value at the order statistic ``k = ceil(level (B + 1))`` of the B maxima (the
    package's rule since session 5), beside the interpolated quantile (``h = (B - 1) level``, NumPy's default and
    the package's earlier rule), at B/2 on both halves of the resamples and at B.

    If the data's maximum were exchangeable with the B bootstrap maxima, it would lie below the k-th smallest
    of them with probability ``k / (B + 1) >= level`` (Davison & Hinkley 1997, sec. 2.4); the interpolated
    quantile sits about one order statistic lower at B = 100.  Bands as in :func:`band_arrays` (sup-t widened
    to contain the percentile band), computed here directly on the cached resamples, so both rules stay
    comparable whatever the package's default.
    """
    truth, est, res_all = _load_repetitions(ctx)
    n_rep, n_b = est.shape[0], res_all.shape[1]
    records = []
    for b, first, label in ((n_b // 2, 0, "first half"), (n_b // 2, n_b // 2, "second half"), (n_b, 0, "all")):
        res = res_all[:, first:first + b]
        se = res.std(axis=1, ddof=1)
        t_max = np.sort(np.max(np.abs(res - est[:, None]) / se[:, None], axis=2), axis=1)
        p_lo, p_hi = np.quantile(res, (1 - level) / 2, axis=1), np.quantile(res, (1 + level) / 2, axis=1)
        k = int(np.ceil(level * (b + 1)))
        for rule, crit in (("interpolated", np.quantile(t_max, level, axis=1)), ("order statistic", t_max[:, k - 1])):
            crit = np.maximum(crit, ndtri(0.5 + level / 2))
            lo = np.fmin(est - crit[:, None] * se, p_lo)
            hi = np.fmax(est + crit[:, None] * se, p_hi)
            p = float(np.mean(((lo <= truth) & (truth <= hi)).all(axis=1)))
            records.append({"B": b, "resamples": label, "rule": rule, "R": n_rep, "k": k if rule != "interpolated"
                            else None, "whole_curve": p, "whole_curve_mcse": float(np.sqrt(p * (1 - p) / n_rep)),
                            "mean_critical_value": float(np.mean(crit))})
    return records


def _records_pointwise(ctx: C.Context, level: float = 0.95) -> list[dict]:
    """Mean pointwise coverage of the learner's expected PD per pointwise method (percentile, basic, normal, bc)."""
    folder = ctx.study_dir(STUDY)
    truth = C.load_dataset(folder / "truth.nc")["truth"].values
    data = C.load_dataset(folder / "repetitions.nc")
    est, res = data["estimate"].values, data["resamples"].values
    records = []
    for b in (res.shape[1] // 2, res.shape[1]):
        for method in ("percentile", "basic", "normal", "bc"):
            lo, hi = pointwise_interval(est, res[:, :b], level=level, method=method, axis=1)
            cover = np.mean((lo <= truth) & (truth <= hi), axis=1)
            records.append({"B": b, "method": method, "R": int(est.shape[0]), "pointwise": float(cover.mean()),
                            "pointwise_mcse": float(cover.std(ddof=1) / np.sqrt(cover.size)),
                            "mean_width": float(np.mean(hi - lo))})
    return records


#: Compact files (``python -m experiments bands --archive``): the records of the table and the text.
ARCHIVE = ("summary.json", "summary_pointwise.json", "summary_order_statistic.json")


def summarize(ctx: C.Context) -> None:
    """Write the compact files (``summary.json``, ``summary_pointwise.json``) from the per-repetition caches."""
    folder = ctx.study_dir(STUDY)
    (folder / "summary.json").write_text(json.dumps(_records(ctx), indent=1))
    (folder / "summary_pointwise.json").write_text(json.dumps(_records_pointwise(ctx), indent=1))
    (folder / "summary_order_statistic.json").write_text(json.dumps(_records_order_statistic(ctx), indent=1))


_BAND_NAMES = {"sup-t": "Supt", "calibrated percentile": "Calibrated", "normal sup-t (pure)": "SuptPure"}


def _macros(records: list[dict], pointwise: list[dict], order: list[dict] | None = None) -> dict:
    r"""``\Bands<Band>B<B>`` whole-curve coverage (and ``SE``), ``\BandsPointwise<Method>B<B>``, R; sup-t by
    critical-value rule ``\BandsSupt<Interp|Order><First|Second|All>`` (and ``SE``), ``\BandsOrderK<...>``."""
    words = {100: "Hundred", 200: "TwoHundred", 50: "Fifty"}
    macros = {}
    for rec in records:
        key = f"{_BAND_NAMES.get(rec['band'], 'Other')}B{words.get(rec['B'], 'X')}"
        macros[f"Bands{key}"] = C.fmt(rec["whole_curve"], 3)
        macros[f"BandsSE{key}"] = C.fmt(rec["whole_curve_mcse"], 3)
        if rec["band"] == "sup-t":
            macros[f"BandsCrit{key}"] = C.fmt(rec["mean_critical_value"], 2)
        macros["BandsR"] = str(rec["R"])
    for rec in pointwise:
        macros[f"BandsPointwise{rec['method'].capitalize()}B{words.get(rec['B'], 'X')}"] = C.fmt(rec["pointwise"], 3)
    halves = {"first half": "First", "second half": "Second", "all": "All"}
    for half in halves.values():
        for rule in ("Interp", "Order"):
            macros[f"BandsSupt{rule}{half}"] = macros[f"BandsSESupt{rule}{half}"] = "--"
        macros[f"BandsOrderK{half}"] = "--"
    for rec in order or []:
        key = ("Order" if rec["rule"] == "order statistic" else "Interp") + halves[rec["resamples"]]
        macros[f"BandsSupt{key}"] = C.fmt(rec["whole_curve"], 3)
        macros[f"BandsSESupt{key}"] = C.fmt(rec["whole_curve_mcse"], 3)
        if rec["k"] is not None:
            macros[f"BandsOrderK{halves[rec['resamples']]}"] = str(rec["k"])
    return macros


def _setting_macros(cfg: dict, records: list[dict]) -> dict:
    r"""The design quoted in the text: ``\BandsN``, ``\BandsGridPoints``, ``\BandsNoiseSD``; the two numbers of
    resamples of the archived records, ``\BandsBHalf`` and ``\BandsBFull``, and ``\BandsInterpRank``, the
    1-based rank nearest the interpolated 95 % quantile of ``\BandsBHalf`` maxima (position ``0.95 (B - 1)``)."""
    sizes = sorted({int(rec["B"]) for rec in records})
    half = sizes[0] if sizes else None
    return {"BandsN": str(cfg["n"]), "BandsGridPoints": str(cfg["grid"]), "BandsNoiseSD": f"{NOISE_SD:g}",
            "BandsBHalf": str(half) if half else "--", "BandsBFull": str(sizes[-1]) if sizes else "--",
            "BandsInterpRank": str(int(round(0.95 * (half - 1))) + 1) if half else "--"}


def calibrated_level_cell(level: float) -> str:
    """The mean calibrated level for the table; a level that rounds to 1 is the ceiling and is marked so.

    At level 1 the calibrated band is the envelope of the resamples: the calibration wanted a more extreme
    quantile than ``B`` resamples resolve (the table's caption explains the dagger).
    """
    text = C.fmt(level, 4)
    return text + r"$^{\dagger}$" if text == "1.0000" else text


def render(ctx: C.Context) -> list[dict]:
    folder = ctx.study_dir(STUDY)
    if not (folder / "summary.json").exists():
        summarize(ctx)
    records = json.loads((folder / "summary.json").read_text())
    pointwise = json.loads((folder / "summary_pointwise.json").read_text())
    order_file = folder / "summary_order_statistic.json"
    order = json.loads(order_file.read_text()) if order_file.exists() else []
    lines = [r"\begin{tabular}{rlrrr}", r"\toprule",
             r"$B$ & simultaneous band & whole-curve cov. & pointwise cov. & calibrated level \\", r"\midrule"]
    for rec in records:
        cov = f"{C.fmt(rec['whole_curve'], 3)} ({C.fmt(rec['whole_curve_mcse'], 3)})"
        band = rec["band"].replace("sup-t", METHOD_LABELS["sup-t"])
        lines.append(f"{rec['B']} & {band} & {cov} & {C.fmt(rec['pointwise'], 3)} & "
                     f"{calibrated_level_cell(rec['mean_calibrated_level'])} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "simultaneous_bands.tex"), "\n".join(lines))
    macros = {**_macros(records, pointwise, order), **_setting_macros(SETTINGS[ctx.mode], records)}
    C.write_macros(ctx.out("generated", "bands.tex"), macros,
                   "simultaneous_bands: whole-curve coverage of simultaneous bands")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.simultaneous_bands", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--results-dir")
    args = parser.parse_args(argv)
    ctx = C.default_context(args.quick, args.results_dir, None, args.n_jobs)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        compute(ctx)
        summarize(ctx)
        records = render(ctx)
    for rec in records:
        print(json.dumps(rec), file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
