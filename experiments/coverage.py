"""Study 2: coverage of bootstrap PD bands on known-truth data.

Scenarios (settings in :mod:`experiments.config`):

A. ``y = x1 + x2 + x1 x2 + e``, N(0, 1) features, OLS with the interaction, n = 200 and 1000;
B. Friedman #1 (10 features, noise sd 1), random forest, gradient boosting and a small neural
   network, n = 500 and 2000 (PD of x1, x3, x4);
C. ``y = x1 - x2 + e``, U(0, 1) features, OLS, n = 1000, noise sd 1 and 0.1 (the additive case in which
   averaging over fixed rows freezes a level error that is large against the noise);
D. model A with correlated features (Gaussian, rho = 0.5): OLS with the interaction, and boosting;
E. binary classification, ``logit P(y = 1) = 0.5 + 1.5 x1 - x2``, N(0, 1) features: logistic
   regression and a boosting classifier; PD of the probability of y = 1.

Each repetition draws a fresh data set, runs :func:`pdpboot.bootstrap_partial_dependence`
(``resampling="bootstrap"``) on a fixed 15-point grid (once per background; the same seed, so the
same refits) and Molnar et al.'s corrected t-interval (:mod:`experiments.molnar`) for each training
fraction of ``molnar_fractions``.  The cache keeps the full-data estimate and every resample curve,
so bands of any method (and any smaller B, by taking the first resamples) are formed at render time
with :func:`pdpboot.bands.band_arrays`, the NumPy layer of :func:`pdpboot.confidence_bands`.

Truths: the PD of the DGP (closed form, or Gauss-Hermite quadrature in E), and the learner's expected
PD -- exact where it has a closed form (least squares is unbiased, so in A, C and D-OLS it equals the
DGP's PD, at any training size), else simulated: the mean over ``truth_fits`` fits on fresh data sets
of size n (and of each Molnar training size), each averaged over its own fresh sample of
``truth_background`` rows, stored with its Monte Carlo SE.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from scipy.special import expit

import pdpboot
from pdpboot import Grid
from pdpboot.bands import band_arrays
from pdpboot.datasets import make_additive_uniform, make_friedman1, make_interaction

from . import _common as C
from .config import config
from .learners import LEARNER_LABELS, make_learner, reseed
from .molnar import corrected_t_interval
from .truth import true_pd

STUDY = "coverage"
#: Band methods: (band_arrays method, simultaneous, simultaneous_method).  "supt" is the package's default
#: simultaneous band (``confidence_bands(simultaneous=True)``: sup-t about the estimate, widened where the
#: percentile band sticks out); "percsim" the calibrated percentile band.
METHODS = {"percentile": ("percentile", False, "sup-t"), "basic": ("basic", False, "sup-t"),
           "percsim": ("percentile", True, "calibrated"), "supt": ("percentile", True, "sup-t")}
LOGIT_COEF = (0.5, 1.5, -1.0)


def _make_interaction_correlated(n: int, *, rng, rho: float = 0.5, noise: float = 1.0):
    gen = np.random.default_rng(rng)
    X = gen.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n)
    y = X[:, 0] + X[:, 1] + X[:, 0] * X[:, 1] + noise * gen.standard_normal(n)
    return X, y


def _make_logistic(n: int, *, rng):
    gen = np.random.default_rng(rng)
    X = gen.standard_normal((n, 2))
    b0, b1, b2 = LOGIT_COEF
    y = (gen.uniform(size=n) < expit(b0 + b1 * X[:, 0] + b2 * X[:, 1])).astype(int)
    return X, y


def simulate(sc: dict, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    dgp = sc["dgp"]
    if dgp == "interaction_correlated":
        return _make_interaction_correlated(n, rng=seed, rho=sc["rho"])
    if dgp == "logistic":
        return _make_logistic(n, rng=seed)
    makers = {"interaction": make_interaction, "friedman1": make_friedman1, "additive_uniform": make_additive_uniform}
    maker = makers[dgp]
    kwargs = {"noise": sc["noise"]} if "noise" in sc else {}
    X, y = maker(n, rng=np.random.default_rng(seed), **kwargs)
    return X.to_numpy(dtype=float), y.to_numpy(dtype=float)


def dgp_pd(sc: dict, feature: int, grid: np.ndarray) -> np.ndarray:
    """PD of the DGP on the grid (closed form; 80-point Gauss-Hermite quadrature for the logistic DGP)."""
    grid = np.asarray(grid, dtype=float)
    if sc["dgp"] == "interaction_correlated":  # E[x_other] = 0, so PD(a) = a as without correlation
        return grid.copy()
    if sc["dgp"] == "logistic":
        nodes, weights = np.polynomial.hermite_e.hermegauss(80)
        weights = weights / weights.sum()
        b0, b1, b2 = LOGIT_COEF
        own, other = (b1, b2) if feature == 0 else (b2, b1)
        return (expit(b0 + own * grid[:, None] + other * nodes[None, :]) * weights).sum(axis=1)
    return true_pd(sc["dgp"], f"x{feature + 1}", grid)


def _curves(result: xr.DataTree, features: list[int], var: str) -> np.ndarray:
    """Stack a variable of the 1-D nodes: (..., feature, grid); the last output (target or class 1)."""
    arrays = []
    for f in features:
        da = pdpboot.get_node(result, f"x{f}").ds[var]
        arrays.append(da.isel(output=-1).values)
    return np.stack(arrays, axis=-2)


def _molnar_n1(n: int, fraction: float) -> int:
    return int(round(fraction * n))


# --------------------------------------------------------------------------- compute


def _one_repetition(sc: dict, quick: bool, seed: np.random.SeedSequence, cfg: dict) -> dict:
    data_seed, boot_seed, molnar_seed = seed.spawn(3)
    X, y = simulate(sc, sc["n"], data_seed)
    boot_int = int(boot_seed.generate_state(1)[0])  # same refits for every background
    custom = {f: np.asarray(sc["grid"]) for f in sc["features"]}
    out: dict = {"resamples": []}
    for background in sc["backgrounds"]:
        res = pdpboot.bootstrap_partial_dependence(
            make_learner(sc["learner"], quick), X, y, sc["features"], n_resamples=sc["B"],
            grid=Grid(custom_values=custom), rng=boot_int,
            resampling=pdpboot.Resampling("bootstrap", background=background),
            execution=pdpboot.Execution(n_jobs=1, progress=False))
        out["estimate"] = _curves(res, sc["features"], "pd")
        out["resamples"].append(_curves(res, sc["features"], "pd_resamples").astype(np.float32))
    molnar = [corrected_t_interval(make_learner(sc["learner"], quick), X, y, sc["features"],
                                   [np.asarray(sc["grid"])] * len(sc["features"]), n_refits=cfg["molnar_refits"],
                                   train_fraction=fraction, rng=s)
              for fraction, s in zip(cfg["molnar_fractions"], molnar_seed.spawn(len(cfg["molnar_fractions"])))]
    out.update({f"molnar_{k}": np.stack([m[k] for m in molnar]) for k in ("estimate", "lower", "upper")})
    return out


def _chunk_dataset(sc: dict, cfg: dict, reps: list[dict], first: int) -> xr.Dataset:
    dims_fg = ("feature", "grid")
    ds = xr.Dataset(
        {
            "estimate": (("rep", *dims_fg), np.stack([r["estimate"] for r in reps])),
            "resamples": (("rep", "background", "resample", *dims_fg), np.stack([np.stack(r["resamples"])
                                                                              for r in reps])),
            **{f"molnar_{k}": (("rep", "split", *dims_fg), np.stack([r[f"molnar_{k}"] for r in reps]))
               for k in ("estimate", "lower", "upper")},
        },
        coords={"rep": np.arange(first, first + len(reps)), "background": sc["backgrounds"],
                "split": cfg["molnar_fractions"], "feature": [f"x{f + 1}" for f in sc["features"]],
                "grid": np.arange(len(sc["grid"]))},
    )
    return ds


def _truth_fit(sc: dict, quick: bool, n: int, seed: np.random.SeedSequence, n_background: int) -> np.ndarray:
    """PD of one fit on a fresh data set of size n, averaged over its own fresh sample of X."""
    data_seed, fit_seed, background_seed = seed.spawn(3)
    X, y = simulate(sc, n, data_seed)
    X_background, _ = simulate(sc, n_background, background_seed)
    model = reseed(make_learner(sc["learner"], quick), np.random.default_rng(fit_seed)).fit(X, y)
    custom = {f: np.asarray(sc["grid"]) for f in sc["features"]}
    result = pdpboot.partial_dependence(model, X_background, sc["features"], grid=Grid(custom_values=custom))
    return _curves(result, sc["features"], "pd")


def _truth_sizes(sc: dict, cfg: dict) -> list[int]:
    """Training sizes of the learner truth: n, then each Molnar training size."""
    return [sc["n"]] + [_molnar_n1(sc["n"], fr) for fr in cfg["molnar_fractions"]]


def _truth_from_fits(sc: dict, cfg: dict, fits: np.ndarray | None) -> xr.Dataset:
    """DGP PD, and the learner PD at n and at each Molnar training size (with Monte Carlo SEs).

    ``fits``: (size, fit, feature, grid) PDs of single fits (simulated truths), or None (exact truth:
    the learner PD equals the DGP's PD at every training size).
    """
    grid = np.asarray(sc["grid"])
    dgp = np.stack([dgp_pd(sc, f, grid) for f in sc["features"]])
    n_sizes = len(_truth_sizes(sc, cfg))
    if fits is None:
        means, mcses, achieved = [dgp] * n_sizes, [np.zeros_like(dgp)] * n_sizes, 0
    else:
        achieved = fits.shape[1]
        means = list(fits.mean(axis=1))
        mcses = list(fits.std(axis=1, ddof=1) / np.sqrt(achieved)) if achieved > 1 else [dgp * np.nan] * n_sizes
    fg = ("feature", "grid")
    return xr.Dataset(
        {"learner_pd": (fg, means[0]), "learner_pd_mcse": (fg, mcses[0]),
         "learner_pd_split": (("split", *fg), np.stack(means[1:])),
         "learner_pd_split_mcse": (("split", *fg), np.stack(mcses[1:])),
         "dgp_pd": (fg, dgp), "grid_value": (("grid",), grid)},
        coords={"feature": [f"x{f + 1}" for f in sc["features"]], "grid": np.arange(len(grid)),
                "split": cfg["molnar_fractions"]},
        attrs={"truth": sc["truth"], "truth_fits": int(achieved), "truth_fits_planned": int(sc.get("truth_fits", 0))})


def _truth_fit_chunk(sc: dict, ctx: C.Context, cfg: dict, name: str, first: int, last: int) -> xr.Dataset:
    """Single-fit PDs number ``first`` .. ``last - 1`` at every training size (seeds per fit index).

    Simulated truths use a fresh background per fit, which makes their mean unbiased for
    E_D E_X f_D(z, X_C); one fixed background sample would add the same error to every fit.
    """
    sizes = _truth_sizes(sc, cfg)
    out = []
    for n, seeds in zip(sizes, C.seed_sequence(cfg["seed"], name, "truth").spawn(len(sizes))):
        chosen = seeds.spawn(sc["truth_fits"])[first:last]
        out.append(np.stack(Parallel(n_jobs=ctx.n_jobs)(
            delayed(_truth_fit)(sc, ctx.quick, n, s, cfg["truth_background"]) for s in chosen)))
    return xr.Dataset({"fits": (("size", "fit", "feature", "grid"), np.stack(out))},
                      coords={"size": sizes, "fit": np.arange(first, last)})


def _chunk_files(folder: Path, pattern: str) -> list[Path]:
    """Saved chunk files, without the temporary file of a chunk being written (``*.tmp.nc``)."""
    return sorted(p for p in Path(folder).glob(pattern) if not p.name.endswith(".tmp.nc"))


def _done_indices(folder: Path, pattern: str, dim: str) -> dict[int, Path]:
    """Index -> chunk file, over the cached chunk files matching ``pattern`` (reads their ``dim`` only)."""
    done: dict[int, Path] = {}
    for path in _chunk_files(folder, pattern):
        with xr.open_dataset(path) as ds:
            done.update({int(i): path for i in ds[dim].values})
    return done


def _next_chunk(done, total: int, size: int) -> tuple[int, int] | None:
    """The first missing index and the end of a chunk of at most ``size`` missing indices (None: all done)."""
    first = next((i for i in range(total) if i not in done), None)
    if first is None:
        return None
    last = first + 1
    while last < min(first + size, total) and last not in done:
        last += 1
    return first, last


def _concat_chunks(folder: Path, pattern: str, dim: str) -> xr.Dataset | None:
    """Every cached chunk along ``dim``, sorted, each index once (None: no chunk)."""
    chunks = _chunk_files(folder, pattern)
    if not chunks:
        return None
    ds = xr.concat([C.load_dataset(p) for p in chunks], dim=dim).sortby(dim)
    _, keep = np.unique(ds[dim].values, return_index=True)
    return ds.isel({dim: keep})


def _timed_chunk(ctx: C.Context, path: Path, work) -> None:
    """Compute and save one chunk, adding its wall time to ``timings.json`` (a stopped run keeps its time)."""
    ctx.needs(path)  # counts it as computed
    with C.timed() as t:
        C.save_dataset(work(), path)
    C.record_timing(ctx, STUDY, t["wall"], resumed=True)


def _scenario_work(ctx: C.Context, cfg: dict, name: str):
    """Generator: each ``next`` computes one chunk of repetitions and one chunk of truth fits of ``name``.

    Repetition i always uses the i-th child of the scenario's seed sequence, and truth fit j the j-th
    child of its size's sequence, so chunks of any size, computed in any order, add up to the same study.
    """
    sc = cfg["scenarios"][name]
    folder = ctx.study_dir(STUDY)
    truth_file = folder / f"{name}_truth.nc"
    if sc["truth"] == "exact":
        C.cached(truth_file, ctx, lambda: _truth_from_fits(sc, cfg, None))
    seeds = C.seed_sequence(cfg["seed"], name).spawn(sc["R"])
    size = sc.get("chunk", cfg["chunk"])
    done = {} if ctx.force else _done_indices(folder / name, "chunk_*.nc", "rep")
    ctx.reused += len(set(done.values()))
    truth_dir = folder / f"{name}_truth"
    truth_done = {} if ctx.force or sc["truth"] == "exact" else _done_indices(truth_dir, "fits_*.nc", "fit")
    truth_total = 0 if sc["truth"] == "exact" else sc["truth_fits"]
    truth_size = sc.get("truth_chunk", max(1, truth_total // 10))
    while True:
        worked = False
        step = _next_chunk(done, sc["R"], size)
        if step is not None:
            first, last = step

            def reps(first=first, last=last):
                out = [_one_repetition(sc, ctx.quick, s, cfg) for s in seeds[first:last]] if ctx.n_jobs == 1 else \
                    Parallel(n_jobs=ctx.n_jobs)(delayed(_one_repetition)(sc, ctx.quick, s, cfg)
                                                for s in seeds[first:last])
                return _chunk_dataset(sc, cfg, out, first)

            _timed_chunk(ctx, folder / name / f"chunk_{first:05d}.nc", reps)
            done.update(dict.fromkeys(range(first, last), folder / name / f"chunk_{first:05d}.nc"))
            print(f"  coverage {name}: {len(done)}/{sc['R']} repetitions", file=sys.stderr, flush=True)
            worked = True
        step = _next_chunk(truth_done, truth_total, truth_size)
        if step is not None:
            first, last = step
            path = truth_dir / f"fits_{first:05d}.nc"
            _timed_chunk(ctx, path, lambda first=first, last=last: _truth_fit_chunk(sc, ctx, cfg, name, first, last))
            truth_done.update(dict.fromkeys(range(first, last), path))
            print(f"  coverage {name}: truth {len(truth_done)}/{truth_total} fits", file=sys.stderr, flush=True)
            worked = True
        if sc["truth"] != "exact" and truth_done and (worked or not truth_file.exists()):
            # The truth file always reflects the fits done so far.
            fits = _concat_chunks(truth_dir, "fits_*.nc", "fit")
            C.save_dataset(_truth_from_fits(sc, cfg, fits["fits"].values), truth_file)
        if not worked:
            return
        yield


def _molnar_repetition(seed: np.random.SeedSequence, sc: dict, fractions: list[float], refits: int,
                       grid: np.ndarray) -> np.ndarray:
    """Scenario C: Molnar et al.'s interval for several training fractions on one data set -> (fraction, 2, G)."""
    data_seed, *interval_seeds = seed.spawn(1 + len(fractions))
    X, y = simulate(sc, sc["n"], data_seed)
    out = []
    for fraction, s in zip(fractions, interval_seeds):
        r = corrected_t_interval(make_learner("ols"), X, y, [0], [grid], n_refits=refits, train_fraction=fraction,
                                 rng=s)
        out.append(np.stack([r["lower"][0], r["upper"][0]]))
    return np.stack(out)


def _sensitivity_work(ctx: C.Context, cfg: dict):
    """Generator: each ``next`` adds one chunk of Molnar et al.'s interval in scenario C for every fraction."""
    sens = cfg["molnar_sensitivity"]
    sc = cfg["scenarios"]["C_n1000"]
    grid = np.asarray(sc["grid"])
    folder = ctx.study_dir(STUDY) / "molnar_sensitivity"
    seeds = C.seed_sequence(cfg["seed"], "molnar-sensitivity").spawn(sens["R"])
    done = {} if ctx.force else _done_indices(folder, "chunk_*.nc", "rep")
    ctx.reused += len(set(done.values()))
    while (step := _next_chunk(done, sens["R"], sens["chunk"])) is not None:
        first, last = step

        def work(first=first, last=last):
            bounds = [_molnar_repetition(s, sc, sens["fractions"], cfg["molnar_refits"], grid)
                      for s in seeds[first:last]]
            return xr.Dataset({"bounds": (("rep", "fraction", "ci_bound", "grid"), np.stack(bounds))},
                              coords={"rep": np.arange(first, last), "fraction": sens["fractions"],
                                      "ci_bound": ["lower", "upper"]},
                              attrs={"n": sc["n"], "refits": cfg["molnar_refits"]})

        _timed_chunk(ctx, folder / f"chunk_{first:05d}.nc", work)
        done.update(dict.fromkeys(range(first, last), folder / f"chunk_{first:05d}.nc"))
        print(f"  coverage molnar_sensitivity: {len(done)}/{sens['R']} repetitions", file=sys.stderr, flush=True)
        yield


#: Records its own compute time chunk by chunk (a run stopped early keeps the time it spent).
RECORDS_OWN_TIMING = True


def compute(ctx: C.Context) -> None:
    """Fill the caches round-robin: one chunk of every unfinished scenario in turn.

    A run stopped at any time therefore leaves repetitions of every scenario (each chunk is saved as it
    is done, with its time); a later run continues where it stopped.  Chunk sizes: ``chunk`` of a
    scenario (small for the flexible learners, whose repetitions cost about 230 refits), else the
    study's ``chunk``.
    """
    cfg = config(STUDY, ctx.quick)
    work = [_scenario_work(ctx, cfg, name) for name in _ordered(cfg)] + [_sensitivity_work(ctx, cfg)]
    while work:
        work = [w for w in work if next(w, StopIteration) is not StopIteration]


# --------------------------------------------------------------------------- summarise


def load_scenario(ctx: C.Context, name: str) -> tuple[xr.Dataset, xr.Dataset]:
    """The cached repetitions of a scenario (every chunk so far, sorted by repetition) and its truth."""
    folder = ctx.study_dir(STUDY)
    reps = _concat_chunks(folder / name, "chunk_*.nc", "rep")
    if reps is None:
        raise FileNotFoundError(f"No cached repetitions for scenario {name} in {folder / name}; run compute.")
    return reps, C.load_dataset(folder / f"{name}_truth.nc")


def bands(estimate: np.ndarray, resamples: np.ndarray, method: str, level: float) -> tuple[np.ndarray, ...]:
    """Bands of every repetition: estimate (R, F, G), resamples (R, B, F, G) -> lower, upper, se."""
    band_method, simultaneous, simultaneous_method = METHODS[method]
    lower = np.empty_like(estimate)
    upper = np.empty_like(estimate)
    se = np.empty_like(estimate)
    for r in range(estimate.shape[0]):
        lo, hi, sd, _, _ = band_arrays(estimate[r], resamples[r].astype(float), level=level, method=band_method,
                                       simultaneous=simultaneous, simultaneous_method=simultaneous_method)
        lower[r], upper[r], se[r] = lo, hi, sd
    return lower, upper, se


def matched_width(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray, level: float) -> tuple[float, float]:
    """Mean width after scaling every band about its midpoint until its pointwise coverage is ``level``.

    Returns (matched mean width, scale factor).  Widths of methods with different coverage are then
    compared at the same coverage of their own targets.
    """
    half = (upper - lower) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(truth - (upper + lower) / 2) / half
    ratio = np.where(half > 0, ratio, np.where(np.isclose(truth, (upper + lower) / 2), 0.0, np.inf))
    scale = float(np.quantile(ratio, level))
    return scale * float((upper - lower).mean()), scale


def _indicators(lower, upper, truth) -> dict[str, np.ndarray]:
    """Per-repetition coverage of bands (R, F, G) for a truth (F, G), and coverage by grid point."""
    inside = (lower <= truth) & (truth <= upper)
    return {"pointwise": inside.mean(axis=(1, 2)), "edge": inside[:, :, [0, -1]].mean(axis=(1, 2)),
            "simultaneous": inside.all(axis=2).mean(axis=1), "by_grid": inside.mean(axis=(0, 1))}


def _summarize_scenario(ctx: C.Context, cfg: dict, name: str) -> xr.Dataset:
    """Compact summary of one scenario: per-repetition coverage indicators and widths of every band.

    Bands (``band``): every (background, method, B) of the bootstrap and every Molnar split.  Per
    repetition: the share of (feature, grid) points covered (``pointwise``), the same at the first and
    last grid points (``edge``), the share of features whose whole curve is covered
    (``simultaneous``), each for the learner's and the DGP's PD (``truth``), and the mean width.
    Matched widths need every band and are computed here.
    """
    sc = cfg["scenarios"][name]
    level = cfg["level"]
    reps, truth = load_scenario(ctx, name)
    est = reps["estimate"].values
    sd_est = est.std(axis=0, ddof=1)
    truths = {"learner": truth["learner_pd"].values, "dgp": truth["dgp_pd"].values}
    b_values = [sc["B"]] + ([cfg["small_B"]] if sc["B"] > cfg["small_B"] else [])
    rows: list[dict] = []  # one per band: labels, per-rep indicators, scalars

    def add(label: dict, lower, upper, own_truth, se=None, truth_mcse=float("nan")):
        row = dict(label, width=(upper - lower).mean(axis=(1, 2)), truth_mcse=truth_mcse,
                   se_ratio=float(np.mean(se.mean(axis=0) / sd_est)) if se is not None else float("nan"),
                   se_ratio_edge=(float(np.mean(se.mean(axis=0)[:, [0, -1]] / sd_est[:, [0, -1]]))
                                  if se is not None else float("nan")))
        row["matched_width"], row["matched_scale"] = matched_width(lower, upper, own_truth, level)
        for key, t in {"learner": own_truth, "dgp": truths["dgp"]}.items():
            row[key] = _indicators(lower, upper, t)
        rows.append(row)

    for background in sc["backgrounds"]:
        res_all = reps["resamples"].sel(background=background).values
        for b in b_values:
            for method in METHODS:
                lower, upper, se = bands(est, res_all[:, :b], method, level)
                add({"background": background, "method": method, "B": b, "split": float("nan")}, lower, upper,
                    truths["learner"], se, float(truth["learner_pd_mcse"].max()))
    for split in cfg["molnar_fractions"]:
        add({"background": "holdout", "method": "molnar", "B": cfg["molnar_refits"], "split": float(split)},
            reps["molnar_lower"].sel(split=split).values, reps["molnar_upper"].sel(split=split).values,
            truth["learner_pd_split"].sel(split=split).values,
            truth_mcse=float(truth["learner_pd_split_mcse"].sel(split=split).max()))
    per_rep = ("band", "truth", "rep")
    data = {stat: (per_rep, np.stack([[row[t][stat] for t in ("learner", "dgp")] for row in rows]).astype(np.float32))
            for stat in ("pointwise", "edge", "simultaneous")}
    data["by_grid"] = (("band", "truth", "grid"), np.stack([[row[t]["by_grid"] for t in ("learner", "dgp")]
                                                            for row in rows]))
    data["width"] = (("band", "rep"), np.stack([row["width"] for row in rows]).astype(np.float32))
    for key in ("matched_width", "matched_scale", "se_ratio", "se_ratio_edge", "truth_mcse", "B", "split"):
        data[key] = (("band",), np.array([row[key] for row in rows]))
    for key in ("background", "method"):
        data[key] = (("band",), np.array([row[key] for row in rows], dtype=str))
    attrs = {"scenario": name, "truth_kind": sc["truth"], "R": int(est.shape[0]),
             "truth_fits": int(truth.attrs.get("truth_fits", 0)),
             **{f"bias_over_se_{k}": float(np.mean(np.abs(est.mean(axis=0) - t) / sd_est)) for k, t in truths.items()}}
    if sc["label"] == "B":
        attrs["shrinkage_slope"], attrs["shrinkage_slope_se"] = _shrinkage_slope(reps, truth)
    return xr.Dataset(data, coords={"truth": ["learner", "dgp"], "rep": reps["rep"].values}, attrs=attrs)


def _summarize_example(ctx: C.Context, cfg: dict) -> xr.Dataset:
    """Repetition 0 of scenario B (forest, n = 500): estimate, pointwise and simultaneous bands, truths."""
    reps, truth = load_scenario(ctx, EXAMPLE)
    est = reps["estimate"].values[:1]
    res = reps["resamples"].sel(background="resample").values[:1]
    out = {"estimate": (("feature", "grid"), est[0])}
    for method in ("percentile", "supt"):
        lower, upper, _ = bands(est, res, method, cfg["level"])
        out[f"{method}_band"] = (("ci_bound", "feature", "grid"), np.stack([lower[0], upper[0]]))
    return xr.Dataset(out, coords={"ci_bound": ["lower", "upper"], "feature": truth["feature"].values}).merge(
        truth[["learner_pd", "dgp_pd", "grid_value"]])


def _summarize_sensitivity(ctx: C.Context, cfg: dict) -> xr.Dataset:
    """Per-repetition share of grid points at which Molnar et al.'s interval covers (scenario C)."""
    ds = _concat_chunks(ctx.study_dir(STUDY) / "molnar_sensitivity", "chunk_*.nc", "rep")
    sc = cfg["scenarios"]["C_n1000"]
    truth = dgp_pd(sc, 0, np.asarray(sc["grid"]))
    inside = (ds["bounds"].sel(ci_bound="lower") <= truth) & (truth <= ds["bounds"].sel(ci_bound="upper"))
    return xr.Dataset({"pointwise": inside.mean("grid").astype(np.float32).transpose("fraction", "rep")},
                      attrs=ds.attrs)


#: Scenario of the example figure.
EXAMPLE = "B_rf_n500"
#: Compact files ``render`` reads (written by :func:`summarize` from the caches of every resample).
ARCHIVE = ("summary/*.nc",)


def _newer_caches(ctx: C.Context, name: str, summary: Path) -> bool:
    """Whether the summary of scenario ``name`` is missing or older than one of its caches."""
    if ctx.force or not summary.exists():
        return True
    folder = ctx.study_dir(STUDY)
    caches = [*folder.glob(f"{name}/chunk_*.nc"), *folder.glob(f"{name}_truth.nc"), *folder.glob(f"{name}_truth/*.nc")]
    return any(p.stat().st_mtime > summary.stat().st_mtime for p in caches)


def summaries_stale(ctx: C.Context) -> bool:
    """Whether a scenario has no summary, or a cache (repetitions, truths) is newer than the oldest
    summary (a run went on since).  Delete a summary to have it redone (e.g. after a band rule changed)."""
    folder = ctx.study_dir(STUDY)
    summaries = list((folder / "summary").glob("*.nc"))
    names = {p.stem for p in summaries}
    if summaries and any(name not in names for name in config(STUDY, ctx.quick)["scenarios"]):
        return True
    caches = [p for pattern in ("*/chunk_*.nc", "*_truth.nc", "*_truth/fits_*.nc") for p in folder.glob(pattern)]
    if not summaries or not caches:
        return False
    return max(p.stat().st_mtime for p in caches) > min(p.stat().st_mtime for p in summaries)


def summarize(ctx: C.Context) -> None:
    """Write ``summary/<scenario>.nc``, ``summary/example.nc`` and ``summary/molnar_sensitivity.nc``."""
    cfg = config(STUDY, ctx.quick)
    folder = ctx.study_dir(STUDY) / "summary"
    for name in cfg["scenarios"]:
        if not _newer_caches(ctx, name, folder / f"{name}.nc"):
            continue  # its summary is up to date
        C.save_dataset(_summarize_scenario(ctx, cfg, name), folder / f"{name}.nc", compress=True)
    C.save_dataset(_summarize_example(ctx, cfg), folder / "example.nc", compress=True)
    C.save_dataset(_summarize_sensitivity(ctx, cfg), folder / "molnar_sensitivity.nc", compress=True)


def _records(ctx: C.Context, cfg: dict) -> list[dict]:
    """One record per (scenario, background, method, B) and per Molnar split, from the compact summaries."""
    records = []
    for name, sc in cfg["scenarios"].items():
        ds = C.load_dataset(ctx.study_dir(STUDY) / "summary" / f"{name}.nc")
        n_rep = ds.sizes["rep"]
        base = {"scenario": name, "label": sc["label"], "dgp": sc["dgp"], "learner": sc["learner"], "n": sc["n"],
                "R": int(n_rep), "truth_kind": sc["truth"],
                "truth_fits": int(ds.attrs.get("truth_fits", 0)),
                **{k: v for k, v in ds.attrs.items() if k.startswith(("bias_over_se", "shrinkage"))}}
        for i in range(ds.sizes["band"]):
            band = ds.isel(band=i)
            rec = dict(base, background=str(band["background"].values), method=str(band["method"].values),
                       B=int(band["B"]), width=float(band["width"].mean()),
                       **{k: float(band[k]) for k in ("matched_width", "matched_scale", "se_ratio", "truth_mcse")},
                       se_ratio_edge=float(band["se_ratio_edge"]) if "se_ratio_edge" in band else float("nan"))
            if rec["method"] == "molnar":
                rec["split"] = float(band["split"])
            for key in ("learner", "dgp"):
                for stat in ("pointwise", "edge", "simultaneous"):
                    v = band[stat].sel(truth=key).values.astype(float)
                    rec[f"{key}_{stat}"] = float(v.mean())
                    rec[f"{key}_{stat}_mcse"] = float(v.std(ddof=1) / np.sqrt(n_rep)) if n_rep > 1 else float("nan")
                rec[f"{key}_by_grid"] = band["by_grid"].sel(truth=key).values
            records.append(rec)
    return records


# --------------------------------------------------------------------------- render

_SCENARIO_ORDER = ["A_n200", "A_n1000", "C_n1000", "C_n1000_lownoise", "D_ols_n1000", "D_gbm_n1000",
                   "B_rf_n500", "B_rf_n2000", "B_gbm_n500", "B_gbm_n2000", "B_mlp_n500", "B_mlp_n2000",
                   "E_logit_n1000", "E_gbc_n1000"]


#: Macro key of each scenario (``\CovReps<key>``: repetitions achieved).
_SCENARIO_KEYS = {"A_n200": "ASmall", "A_n1000": "A", "C_n1000": "C", "C_n1000_lownoise": "CLow",
                  "D_ols_n1000": "DOLS", "D_gbm_n1000": "DGBM", "B_rf_n500": "RFSmall", "B_rf_n2000": "RFLarge",
                  "B_gbm_n500": "GBMSmall", "B_gbm_n2000": "GBMLarge", "B_mlp_n500": "MLPSmall",
                  "B_mlp_n2000": "MLPLarge", "E_logit_n1000": "ELogit", "E_gbc_n1000": "EGBC"}


def _find(records, **keys) -> dict:
    for rec in records:
        if all(rec.get(k) == v for k, v in keys.items()):
            return rec
    raise KeyError(keys)


def _setting(sc: dict) -> str:
    text = f"{sc['label']}: {LEARNER_LABELS[sc['learner']]}"
    if sc.get("noise", 1.0) != 1.0:
        text += rf", $\sigma = {sc['noise']:g}$"
    return text


def _ordered(cfg: dict) -> list[str]:
    return [s for s in _SCENARIO_ORDER if s in cfg["scenarios"]]


def _nanmax(values) -> float:
    """Largest value, NaNs ignored (NaN if there is none: a Monte Carlo SE needs two repetitions)."""
    values = [float(v) for v in values if not np.isnan(v)]
    return max(values) if values else float("nan")


#: Settings with fewer repetitions than this are not evidence: their rows go to the appendix's table
#: ``tables/coverage_small_r`` instead of the main coverage table (issue 31, point 7).
SMALL_R = 20


def _table_coverage(ctx: C.Context, records: list[dict], cfg: dict) -> dict:
    """Main coverage table (settings with R >= SMALL_R) and the appendix's table of the others.

    Returns the largest Monte Carlo SE of the entries per scenario label.
    """
    head = [r"\begin{tabular}{@{}llrr rrrrr rrrr r@{}}", r"\toprule",
             r" & & & & \multicolumn{5}{c}{vs.\ learner PD} & \multicolumn{4}{c}{vs.\ DGP PD} & MC \\",
             r"\cmidrule(lr){5-9}\cmidrule(lr){10-13}",
             r"Setting & Rows & $n$ & $R$ & Perc. & Basic & Edges & Sim. & Sup-$t$ & Perc. & Edges & Sim. "
             r"& Sup-$t$ & SE \\",
             r"\midrule"]
    worst: dict[str, float] = {}
    tables: dict[bool, list[str]] = {True: [], False: []}  # small R -> body lines
    previous: dict[bool, str | None] = {True: None, False: None}
    for name in _ordered(cfg):
        sc = cfg["scenarios"][name]
        small = _find(records, scenario=name, background=sc["backgrounds"][0], method="percentile",
                      B=sc["B"])["R"] < SMALL_R
        lines = tables[small]
        if previous[small] is not None and previous[small] != sc["label"]:
            lines.append(r"\addlinespace")
        previous[small] = sc["label"]
        for i, background in enumerate(sc["backgrounds"]):
            perc, basic, psim, supt = (_find(records, scenario=name, background=background, method=m, B=sc["B"])
                                       for m in ("percentile", "basic", "percsim", "supt"))
            row_se = _nanmax(rec[f"{k}_mcse"] for rec, keys in (
                (perc, ("learner_pointwise", "learner_edge", "dgp_pointwise", "dgp_edge")),
                (basic, ("learner_pointwise",)), (psim, ("learner_simultaneous", "dgp_simultaneous")),
                (supt, ("learner_simultaneous", "dgp_simultaneous"))) for k in keys)
            worst[sc["label"]] = _nanmax([worst.get(sc["label"], float("nan")), row_se])
            cells = [perc["learner_pointwise"], basic["learner_pointwise"], perc["learner_edge"],
                     psim["learner_simultaneous"], supt["learner_simultaneous"], perc["dgp_pointwise"],
                     perc["dgp_edge"], psim["dgp_simultaneous"], supt["dgp_simultaneous"]]
            lines.append(" & ".join([_setting(sc) if i == 0 else "", background, str(sc["n"]) if i == 0 else "",
                                     str(perc["R"]), *map(C.fmt, cells), C.fmt(row_se, 3)]) + r" \\")
    if not tables[True]:
        tables[True].append(rf"\multicolumn{{14}}{{c}}{{every setting reached $R \geq {SMALL_R}$}} \\")
    for small, name in ((False, "coverage.tex"), (True, "coverage_small_r.tex")):
        body = head + tables[small] + [r"\bottomrule", r"\end{tabular}", ""]
        C.write_table(ctx.out("tables", name), "\n".join(body))
    return worst


#: Fewest repetitions with which |bias|/SE is shown (the SE is the SD of the estimate over repetitions).
BIAS_MIN_REPS = 10


def _table_width(ctx: C.Context, records: list[dict], cfg: dict) -> None:
    def bias(rec, truth):
        return rec[f"bias_over_se_{truth}"] if rec["R"] >= BIAS_MIN_REPS else float("nan")

    lines = [r"\begin{tabular}{@{}llr rrr rr rr r@{}}", r"\toprule",
             r" & & & \multicolumn{3}{c}{Mean width} & \multicolumn{2}{c}{$B = " + str(cfg["small_B"]) +
             r"$} & \multicolumn{2}{c}{$|\text{bias}|/\text{SE}$} & Truth \\",
             r"\cmidrule(lr){4-6}\cmidrule(lr){7-8}\cmidrule(lr){9-10}",
             r"Setting & Rows & $n$ & Perc. & Sim. & Sup-$t$ & Perc. & Sup-$t$ & Learner & DGP & MC SE \\",
             r"\midrule"]
    previous = None
    for name in _ordered(cfg):
        sc = cfg["scenarios"][name]
        if previous is not None and previous != sc["label"]:
            lines.append(r"\addlinespace")
        previous = sc["label"]
        for i, background in enumerate(sc["backgrounds"]):
            get = lambda m, b=sc["B"], bg=background, nm=name: _find(  # noqa: E731
                records, scenario=nm, background=bg, method=m, B=b)
            perc, psim, supt = get("percentile"), get("percsim"), get("supt")
            small = ["", ""]
            if sc["B"] > cfg["small_B"]:
                small = [C.fmt(get("percentile", cfg["small_B"])["learner_pointwise"]),
                         C.fmt(get("supt", cfg["small_B"])["learner_simultaneous"])]
            truth_cell = "exact" if sc["truth"] == "exact" else C.fmt(perc["truth_mcse"], 4)
            lines.append(" & ".join([
                _setting(sc) if i == 0 else "", background, str(sc["n"]) if i == 0 else "",
                C.fmt(perc["width"], 3), C.fmt(psim["width"], 3), C.fmt(supt["width"], 3), *small,
                C.fmt(bias(perc, "learner")) if i == 0 else "",
                C.fmt(bias(perc, "dgp")) if i == 0 else "", truth_cell if i == 0 else "",
            ]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "coverage_width.tex"), "\n".join(lines))


def _table_molnar(ctx: C.Context, records: list[dict], cfg: dict) -> None:
    """Bootstrap percentile band vs Molnar et al.'s interval: coverage of each one's own target, widths."""
    splits = cfg["molnar_fractions"]
    head = " & ".join(rf"\multicolumn{{3}}{{c}}{{M23, $n_1/n = {f:g}$}}" for f in splits)
    rules = "".join(rf"\cmidrule(l){{{7 + 3 * i}-{9 + 3 * i}}}" for i in range(len(splits)))
    lines = [r"\begin{tabular}{@{}lrr rrr " + " ".join("rrr" for _ in splits) + r" r@{}}", r"\toprule",
             r" & & & \multicolumn{3}{c}{Bootstrap percentile} & " + head + r" & MC \\",
             r"\cmidrule(lr){4-6}" + rules,
             r"Setting & $n$ & $R$ & Cov. & Width & Matched" + " & Cov. & Width & Matched" * len(splits)
             + r" & SE \\",
             r"\midrule"]
    previous = None
    for name in _ordered(cfg):
        sc = cfg["scenarios"][name]
        if previous is not None and previous != sc["label"]:
            lines.append(r"\addlinespace")
        previous = sc["label"]
        perc = _find(records, scenario=name, background="resample", method="percentile", B=sc["B"])
        cells = [perc["learner_pointwise"], perc["width"], perc["matched_width"]]
        row_se = [perc["learner_pointwise_mcse"]]
        for f in splits:
            m = _find(records, scenario=name, method="molnar", split=float(f))
            cells += [m["learner_pointwise"], m["width"], m["matched_width"]]
            row_se.append(m["learner_pointwise_mcse"])
        lines.append(" & ".join([_setting(sc), str(sc["n"]), str(perc["R"])]
                                + [C.fmt(v, 2 if j % 3 == 0 else 3) for j, v in enumerate(cells)]
                                + [C.fmt(_nanmax(row_se), 3)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    C.write_table(ctx.out("tables", "coverage_molnar.tex"), "\n".join(lines))


#: One marker shape per method of the coverage-by-grid figure as well as a colour (readable without colour
#: vision and in grey print; the fixed-rows line is dashed with crosses).
METHOD_MARKERS = {"percentile": "o", "basic": "s", "molnar": "^"}


def _figure_by_grid(ctx: C.Context, records: list[dict], cfg: dict) -> None:
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    panels = [("A_n1000", "A: OLS + inter."), ("C_n1000_lownoise", r"C: OLS, $\sigma$ = 0.1"),
              ("D_gbm_n1000", "D: boosting"), ("B_rf_n500", "B: forest, $n$ = 500"),
              ("E_gbc_n1000", "E: boosting clf.")]
    panels = [p for p in panels if p[0] in cfg["scenarios"]]
    colors = {"percentile": OKABE_ITO["blue"], "basic": OKABE_ITO["orange"], "molnar": OKABE_ITO["green"]}
    labels = {"percentile": "percentile", "basic": "basic", "molnar": r"M23 $t$, $n_1 = n/2$"}
    with paper_style():
        fig, axes = plt.subplots(2, len(panels), figsize=(C.FULL_WIDTH, 3.4), sharey=True, sharex=True,
                                 layout="constrained")
        for j, (name, title) in enumerate(panels):
            sc = cfg["scenarios"][name]
            for i, truth in enumerate(("learner", "dgp")):
                ax = axes[i, j]
                ax.axhline(cfg["level"], color="0.5", lw=0.8, ls=":")
                for method in ("percentile", "basic", "molnar"):
                    if method == "molnar":
                        rec = _find(records, scenario=name, method="molnar", split=0.5)
                    else:
                        rec = _find(records, scenario=name, background="resample", method=method, B=sc["B"])
                    ax.plot(np.linspace(0, 1, len(rec[f"{truth}_by_grid"])), rec[f"{truth}_by_grid"],
                            color=colors[method], marker=METHOD_MARKERS[method], ms=2.5, lw=1, label=labels[method])
                if "original" in sc["backgrounds"]:
                    rec = _find(records, scenario=name, background="original", method="percentile", B=sc["B"])
                    ax.plot(np.linspace(0, 1, len(rec[f"{truth}_by_grid"])), rec[f"{truth}_by_grid"],
                            color=OKABE_ITO["vermillion"], ls="--", marker="x", ms=2.5, lw=1,
                            label="percentile, original rows")
                ax.set_ylim(0, 1.02)
                ax.set_xticks([0, 0.5, 1], ["5", "50", "95"])  # short labels: "95 %" ran into "5 %" next door
                ax.set_xlim(-0.06, 1.06)
                if i == 0:
                    ax.set_title(title, fontsize=6.5)
                if j == 0:
                    ax.set_ylabel(f"coverage of\n{'learner' if truth == 'learner' else 'DGP'} PD")
                if i == 1:
                    ax.set_xlabel("grid quantile (%)")
        handles, labels_seen = [], []
        for ax in axes.ravel():
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels_seen:
                    handles.append(h)
                    labels_seen.append(lab)
        fig.legend(handles, labels_seen, loc="outside upper center", ncols=4, frameon=False)
        C.savefig(fig, ctx, "coverage_by_grid")


def _figure_example(ctx: C.Context, cfg: dict) -> None:
    """One repetition of scenario B (random forest, n = 500): band, learner PD and DGP PD."""
    import matplotlib.pyplot as plt

    from pdpboot.plotting import OKABE_ITO, paper_style

    sc = cfg["scenarios"][EXAMPLE]
    truth = C.load_dataset(ctx.study_dir(STUDY) / "summary" / "example.nc")
    est = truth["estimate"].values[None]
    lower, upper = truth["percentile_band"].values[:, None]
    s_lower, s_upper = truth["supt_band"].values[:, None]
    x = truth["grid_value"].values
    with paper_style():
        fig, axes = plt.subplots(1, len(sc["features"]), figsize=(C.FULL_WIDTH, 2.1), layout="constrained")
        for j, ax in enumerate(axes):
            ax.fill_between(x, s_lower[0, j], s_upper[0, j], color=OKABE_ITO["blue"], alpha=0.15, lw=0,
                            label="95 % simultaneous band")
            ax.fill_between(x, lower[0, j], upper[0, j], color=OKABE_ITO["blue"], alpha=0.35, lw=0,
                            label="95 % pointwise band")
            ax.plot(x, est[0, j], color=OKABE_ITO["blue"], label="PD estimate")
            ax.plot(x, truth["learner_pd"].values[j], color="k", ls="--", lw=1, label="learner PD")
            ax.plot(x, truth["dgp_pd"].values[j], color=OKABE_ITO["vermillion"], lw=1, label="DGP PD")
            ax.set_xlabel(str(truth["feature"].values[j]))
        axes[0].set_ylabel("PD of $y$")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=5, frameon=False)
        C.savefig(fig, ctx, "coverage_example")


def render(ctx: C.Context) -> None:
    cfg = config(STUDY, ctx.quick)
    records = _records(ctx, cfg)
    worst = _table_coverage(ctx, records, cfg)
    _table_width(ctx, records, cfg)
    _table_molnar(ctx, records, cfg)
    _figure_by_grid(ctx, records, cfg)
    _figure_example(ctx, cfg)
    sc = cfg["scenarios"]

    def get(name, bg, m, key, b=None):
        return _find(records, scenario=name, background=bg, method=m, B=b or sc[name]["B"])[key]

    def molnar(name, split, key="learner_pointwise"):
        return _find(records, scenario=name, method="molnar", split=split)[key]

    macros: dict[str, str] = {}

    def cover(macro, name, bg, m, key, b=None):
        """A coverage and its Monte Carlo SE (``<macro>MCSE``; "--" with fewer than two repetitions)."""
        macros[macro] = C.fmt(get(name, bg, m, key, b))
        macros[f"{macro}MCSE"] = C.fmt(get(name, bg, m, f"{key}_mcse", b), 3)

    def span(values) -> str:
        """One number, or the range ``lo--hi`` of several."""
        lo, hi = min(values), max(values)
        return str(lo) if lo == hi else f"{lo}--{hi}"

    # The learner PD at n (last column of the width table), not the Molnar targets at n1.
    simulated = [r for r in records if r["truth_kind"] == "simulated" and r["method"] != "molnar"]
    flexible = [name for name in sc if sc[name]["truth"] == "simulated" and name != "E_logit_n1000"]
    least_squares = [name for name in sc if sc[name]["learner"].startswith("ols")]
    achieved = {r["scenario"]: r for r in records}
    macros.update({
        # Repetitions achieved (a run stopped early renders what it has; the tables give R per row).
        **{f"CovReps{key}": str(achieved[name]["R"]) for name, key in _SCENARIO_KEYS.items() if name in sc},
        "CovRepsOLSRange": span([achieved[n]["R"] for n in least_squares]),
        "CovRepsCDRange": span([achieved[n]["R"] for n in least_squares if sc[n]["label"] in "CD"]),
        "CovRepsFlexRange": span([achieved[n]["R"] for n in flexible]),
        "CovRepsPlannedOLS": str(sc["A_n1000"]["R"]), "CovRepsPlannedFlex": str(sc["B_rf_n500"]["R"]),
        "CovTruthFitsFlexPlanned": str(sc["B_rf_n500"]["truth_fits"]),
        "CovBiasMinReps": str(BIAS_MIN_REPS),
        "CovRefitsPerRep": str(sc["B_rf_n500"]["B"] + len(cfg["molnar_fractions"]) * cfg["molnar_refits"]),
        "CovReps": str(min(r["R"] for r in records if r["label"] in "AC")),
        "CovRepsFlex": str(min(r["R"] for r in records if r["label"] == "B")),
        "CovRepsFlexMax": str(max(r["R"] for r in records if r["label"] == "B")),
        "CovB": str(sc["A_n1000"]["B"]), "CovBFlex": str(sc["B_rf_n500"]["B"]), "CovSmallB": str(cfg["small_B"]),
        "CovSmallRLimit": str(SMALL_R),
        "CovTruthFitsFlex": span([achieved[n]["truth_fits"] for n in flexible]),
        "CovTruthFitsLogit": str(achieved["E_logit_n1000"]["truth_fits"]),
        "CovTruthRows": str(cfg["truth_background"]), "CovMolnarRefits": str(cfg["molnar_refits"]),
        "CovTruthMCSEMax": C.fmt(max(r["truth_mcse"] for r in simulated), 4),
        # How many truth MC SEs wide the narrowest flexible learner's pointwise band is (percentile, B).
        "CovWidthOverTruthMCSEMin": C.fmt(min(r["width"] / r["truth_mcse"] for r in simulated
                                              if r["scenario"] in flexible and r["method"] == "percentile"
                                              and r["B"] == sc[r["scenario"]]["B"]), 0),
        "CovMaxMCSEAC": C.fmt(max(worst["A"], worst["C"]), 3), "CovMaxMCSEB": C.fmt(worst["B"], 3),
        "CovMaxMCSEDE": C.fmt(max(worst["D"], worst["E"]), 3),
        "CovDRho": C.fmt(sc["D_ols_n1000"]["rho"], 1),
        "CovCLowNoise": f"{sc['C_n1000_lownoise']['noise']:g}",
    })
    for name, key in (("A_n1000", "A"), ("A_n200", "ASmall"), ("C_n1000", "C"), ("C_n1000_lownoise", "CLow"),
                      ("D_ols_n1000", "DOLS")):
        for bg, word in (("resample", "Res"), ("original", "Orig")):
            cover(f"Cov{key}{word}Perc", name, bg, "percentile", "learner_pointwise")
            cover(f"Cov{key}{word}Sim", name, bg, "percsim", "learner_simultaneous")
            cover(f"Cov{key}{word}Supt", name, bg, "supt", "learner_simultaneous")
            macros[f"Cov{key}{word}Width"] = C.fmt(get(name, bg, "percentile", "width"), 3)
    for name, key in (("D_gbm_n1000", "DGBM"), ("E_logit_n1000", "ELogit"), ("E_gbc_n1000", "EGBC")):
        cover(f"Cov{key}Perc", name, "resample", "percentile", "learner_pointwise")
        cover(f"Cov{key}Sim", name, "resample", "percsim", "learner_simultaneous")
        cover(f"Cov{key}Supt", name, "resample", "supt", "learner_simultaneous")
        cover(f"Cov{key}PercDGP", name, "resample", "percentile", "dgp_pointwise")
        # Bootstrap SE over the SD of the estimate across data sets: all grid points, and the two ends.
        macros[f"Cov{key}SERatio"] = C.fmt(get(name, "resample", "percentile", "se_ratio"))
        macros[f"Cov{key}SERatioEdge"] = C.fmt(get(name, "resample", "percentile", "se_ratio_edge"))
    small_b = min(cfg["small_B"], sc["A_n1000"]["B"])
    cover("CovAResPercSmallB", "A_n1000", "resample", "percentile", "learner_pointwise", small_b)
    cover("CovAResSuptSmallB", "A_n1000", "resample", "supt", "learner_simultaneous", small_b)
    # Molnar et al.: coverage of its own target and width at matched coverage, relative to the bootstrap band.
    # The flexible learners at n = 500, where the run reached the most repetitions.
    for name, key in (("A_n1000", "A"), ("C_n1000", "C"), ("B_rf_n500", "RF"), ("B_gbm_n500", "GBM"),
                      ("B_mlp_n500", "MLP")):
        boot = _find(records, scenario=name, background="resample", method="percentile", B=sc[name]["B"])
        for split, word in ((0.5, "Even"), (0.7, "Seventy")):
            macros[f"CovMolnar{key}{word}"] = C.fmt(molnar(name, split))
            macros[f"CovMolnar{key}{word}MCSE"] = C.fmt(molnar(name, split, "learner_pointwise_mcse"), 3)
            macros[f"CovMolnar{key}{word}Matched"] = C.fmt(molnar(name, split, "matched_width")
                                                           / boot["matched_width"])
    for learner, word in (("rf", "RF"), ("gbm", "GBM"), ("mlp", "MLP")):
        for n, size in ((500, "Small"), (2000, "Large")):
            name = f"B_{learner}_n{n}"
            cover(f"Cov{word}{size}Perc", name, "resample", "percentile", "learner_pointwise")
            cover(f"Cov{word}{size}Sim", name, "resample", "percsim", "learner_simultaneous")
            cover(f"Cov{word}{size}Supt", name, "resample", "supt", "learner_simultaneous")
            cover(f"Cov{word}{size}PercDGP", name, "resample", "percentile", "dgp_pointwise")
            macros[f"Cov{word}{size}BiasDGP"] = C.fmt(get(name, "resample", "percentile", "bias_over_se_dgp"))
            cover(f"Cov{word}{size}Basic", name, "resample", "basic", "learner_pointwise")
            cover(f"Cov{word}{size}EdgeDGP", name, "resample", "percentile", "dgp_edge")
            cover(f"Cov{word}{size}SuptDGP", name, "resample", "supt", "dgp_simultaneous")
            macros[f"Cov{word}{size}Shrink"] = C.fmt(get(name, "resample", "percentile", "shrinkage_slope"))
            macros[f"Cov{word}{size}ShrinkSE"] = C.fmt(get(name, "resample", "percentile", "shrinkage_slope_se"))
    macros.update(_setting_macros(ctx, cfg))
    macros.update(_molnar_sensitivity_macros(ctx, cfg))
    C.write_macros(ctx.out("generated", "coverage.tex"), macros, f"mode: {ctx.mode}")


def _shrinkage_slope(reps: xr.Dataset, truth: xr.Dataset) -> tuple[float, float]:
    """Slope of (mean of the refits - estimate) on (estimate - learner PD), pooled over grid points.

    Negative: the mean of the refits (a bagged estimate) is pulled back towards the learner's PD.
    Returns the slope and its jackknife standard error over the repetitions (NaN below three).
    """
    est = reps["estimate"].values
    shift = reps["resamples"].sel(background="resample").values.astype(float).mean(axis=1) - est
    error = est - truth["learner_pd"].values

    def slope(keep) -> float:
        s, e = shift[keep] - shift[keep].mean(axis=0), error[keep] - error[keep].mean(axis=0)
        return float((s * e).sum() / (e * e).sum())

    n_rep = est.shape[0]
    full = slope(np.ones(n_rep, dtype=bool))
    if n_rep < 3:
        return full, float("nan")
    leave_one_out = np.array([slope(np.arange(n_rep) != r) for r in range(n_rep)])
    return full, float(np.sqrt((n_rep - 1) / n_rep * ((leave_one_out - leave_one_out.mean()) ** 2).sum()))


_FRACTION_WORDS = {0.5: "Fifty", 0.632: "SixtyThree", 0.7: "Seventy", 0.8: "Eighty"}


def _molnar_sensitivity_macros(ctx: C.Context, cfg: dict) -> dict:
    """Pointwise coverage of the corrected t-interval in scenario C for each training fraction.

    The truth is the DGP's PD, which equals the learner's PD at any training size for unbiased OLS.
    """
    ds = C.load_dataset(ctx.study_dir(STUDY) / "summary" / "molnar_sensitivity.nc")
    macros = {"CovMolnarSensReps": str(ds.sizes["rep"])}
    for fraction in ds["fraction"].values:
        word = _FRACTION_WORDS[round(float(fraction), 3)]
        share = ds["pointwise"].sel(fraction=fraction).values.astype(float)
        macros[f"CovMolnar{word}"] = C.fmt(float(share.mean()))
        macros[f"CovMolnar{word}MCSE"] = C.fmt(float(share.std(ddof=1) / np.sqrt(len(share))), 3)
        macros[f"CovMolnarFrac{word}"] = f"{float(fraction):g}"
    return macros


def _setting_macros(ctx: C.Context, cfg: dict) -> dict:
    """The settings quoted in the text: sample sizes, grid, learners."""
    sc = cfg["scenarios"]
    rf, gbm, mlp = (make_learner(k, ctx.quick) for k in ("rf", "gbm", "mlp"))
    return {
        "CovANsmall": str(sc["A_n200"]["n"]), "CovANlarge": str(sc["A_n1000"]["n"]), "CovCN": str(sc["C_n1000"]["n"]),
        "CovBNsmall": str(sc["B_rf_n500"]["n"]), "CovBNlarge": str(sc["B_rf_n2000"]["n"]),
        "CovDN": str(sc["D_ols_n1000"]["n"]), "CovEN": str(sc["E_logit_n1000"]["n"]),
        "CovGridPoints": str(len(sc["A_n1000"]["grid"])),
        "CovRFTrees": str(rf.n_estimators), "CovRFLeaf": str(rf.min_samples_leaf), "CovGBMRounds": str(gbm.max_iter),
        "CovMLPUnits": str(mlp[-1].hidden_layer_sizes[0]),
    }
