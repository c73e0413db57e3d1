"""Per-grid-point diagnosis of the debiased study's cached repetitions (issue 28, round 5).

For one setting and one cache folder (``v3`` the current estimator, ``v2`` round 4), per feature and
grid point: pointwise coverage of the DGP's PD, bias / SD and SE / SD of the estimate (SD over the
repetitions), the share of repetitions in which the point is flagged, the effective sample size,
the share of the Epanechnikov window ``[a - h, a + h]`` (kernel mass) outside the observed range of
the feature, and the *smoothing* bias / SD: the robust-bias-corrected smoother of the repetition
(its cached bandwidth, its re-drawn design) applied to the true PD at the observed values,
``sum_i l_i(a) theta(A_i) - theta(a)``.  The total bias minus the smoothing bias is the part due
to the nuisances (learner and density ratio).  Nothing is refitted: the data sets are re-drawn from
the repetitions' seeds.  Whole-curve coverage is per curve (feature), averaged over the features, as in
the study's table.

``python -m experiments.debiased_diagnosis H_skew_gbm_n1000 [--version v4]`` (a fixed ratio model's
variant: ``E_exp_rf_n1000__spline``);
``--ess`` prints the pointwise coverage by effective-sample-size bin for every cached setting.
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr

from pdpboot.engine import debiased as eng

from . import _common as C
from . import debiased_coverage as D

ESS_BINS = (0, 20, 30, 50, 75, 100, 150, np.inf)


def load(ctx: C.Context, name: str, version: str) -> xr.Dataset:
    """Every cached repetition of a setting in ``<results>/debiased/<version>/<name>``."""
    chunks = D._chunk_files(ctx.study_dir(D.STUDY) / version / name)
    if not chunks:
        raise FileNotFoundError(f"No cached repetitions of {name} in {version}; run experiments.debiased_coverage.")
    return xr.concat([C.load_dataset(p) for p in chunks], dim="rep").sortby("rep")


def window_outside_share(a: np.ndarray, grid: np.ndarray, h: float) -> np.ndarray:
    """Epanechnikov kernel mass of ``[g - h, g + h]`` outside ``[min a, max a]``, per grid point."""
    t = np.linspace(-1, 1, 2001)
    k = eng.epanechnikov(t)
    pts = grid[:, None] + h * t[None, :]
    outside = (pts < a.min()) | (pts > a.max())
    return (k * outside).sum(axis=1) / k.sum()


def diagnose(ctx: C.Context, name: str, version: str) -> dict:
    """Per-feature arrays over the grid (see the module docstring)."""
    ds = load(ctx, name, version)
    base = name.split("__")[0]   # a variant's folder, <setting>__<ratio model>: the setting's data sets
    setting = D.SETTINGS[base]
    truth = D._truth(setting, ds)
    reps = ds["rep"].values
    seeds = C.seed_sequence(D.SEED, base).spawn(int(reps.max()) + 1)
    est, se = ds["pd"].values, ds["pd_se"].values
    sd = est.std(axis=0, ddof=1)
    ok = ds["overlap"].values.astype(bool)
    lo, hi = (ds["pd_band"].sel(ci_bound=b).values for b in ("lower", "upper"))
    slo, shi = (ds["pd_band_simultaneous"].sel(ci_bound=b).values for b in ("lower", "upper"))
    inside = np.where(ok, (lo <= truth) & (truth <= hi), True)
    whole = np.where(ok, (slo <= truth) & (truth <= shi), True)
    out = {"R": int(reps.size), "pointwise": float(inside.mean()), "whole": float(whole.all(axis=2).mean()),
           "flagged": float(1 - ok.mean()), "features": {}}
    categorical = setting.get("categorical", [])
    for fi, f in enumerate(setting["features"]):
        grid = D.grid_of(setting, f)
        smooth, outside = [], []
        if f not in categorical:
            for k, r in enumerate(reps):
                X, _ = D.simulate(setting, setting["n"], seeds[int(r)].spawn(2)[0])
                a, h = X[:, f], float(ds["bandwidth"].values[k, fi])
                weights, _ = eng.rbc_weights(a, grid, h)
                smooth.append(weights @ D.dgp_pd(setting, f, a) - truth[fi])
                outside.append(window_outside_share(a, grid, h))
        out["features"][f"x{f + 1}"] = {
            "bandwidth": float(np.nanmean(ds["bandwidth"].values[:, fi])) if f not in categorical else np.nan,
            "whole": float(whole[:, fi].all(axis=1).mean()),
            "coverage": inside[:, fi].mean(axis=0), "bias_sd": (est[:, fi].mean(axis=0) - truth[fi]) / sd[fi],
            "smoothing_bias_sd": np.mean(smooth, axis=0) / sd[fi] if smooth else np.full(grid.size, np.nan),
            "se_sd": se[:, fi].mean(axis=0) / sd[fi], "flagged": 1 - ok[:, fi].mean(axis=0),
            "ess": ds["effective_sample_size"].values[:, fi].mean(axis=0),
            "window_outside": np.mean(outside, axis=0) if outside else np.full(grid.size, np.nan)}
    return out


def coverage_by_ess(ctx: C.Context, name: str, version: str) -> list[tuple[float, float, float, int]]:
    """Pointwise coverage of the unflagged grid points by effective-sample-size bin: (low, high, coverage, count)."""
    ds = load(ctx, name, version)
    truth = D._truth(D.SETTINGS[name.split("__")[0]], ds)
    lo, hi = (ds["pd_band"].sel(ci_bound=b).values for b in ("lower", "upper"))
    inside = (lo <= truth) & (truth <= hi)
    ok, ess = ds["overlap"].values.astype(bool), ds["effective_sample_size"].values
    rows = []
    for b0, b1 in zip(ESS_BINS[:-1], ESS_BINS[1:]):
        m = ok & (ess >= b0) & (ess < b1)
        rows.append((b0, b1, float(inside[m].mean()) if m.any() else np.nan, int(m.sum())))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("setting", nargs="?", default="H_skew_gbm_n1000")
    parser.add_argument("--version", default=D.CHUNKS, help="cache folder: v4 (current), v3 (round 5), v2 (round 4)")
    parser.add_argument("--ess", action="store_true", help="coverage by ESS bin for every cached setting")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    ctx = C.default_context(False, results_dir=args.results_dir, n_jobs=1)
    np.set_printoptions(precision=2, suppress=True, linewidth=200)
    if args.ess:
        for name in D.SETTINGS:
            try:
                rows = coverage_by_ess(ctx, name, args.version)
            except FileNotFoundError:
                continue
            print(name, " | ".join(f"[{a:g}, {b:g}): {c:.2f} ({m})" for a, b, c, m in rows if m))
        return
    out = diagnose(ctx, args.setting, args.version)
    print(f"{args.setting} ({args.version}), R = {out['R']}: pointwise {out['pointwise']:.3f}, whole "
          f"{out['whole']:.3f}, flagged {out['flagged']:.3f}")
    for feature, d in out["features"].items():
        print(f" {feature}: bandwidth {d['bandwidth']:.3f}, whole {d['whole']:.3f}")
        for key in ("coverage", "bias_sd", "smoothing_bias_sd", "se_sd", "flagged", "ess", "window_outside"):
            print(f"  {key:18s}", np.asarray(d[key]))


if __name__ == "__main__":
    main()
