"""Which density-ratio model the debiased estimator uses: the evidence (issue 28, round 6).

Reads the debiased study's cached repetitions (``experiments/results/full/debiased/<version>/<folder>``;
nothing is refitted) of the same data sets (repetition i has the same seed in every folder) under
different density-ratio models, and prints, per setting and model, on the repetitions all of that
setting's folders share: pointwise and whole-curve coverage of the DGP's PD (unflagged points, MC SE),
the flagged share, mean and largest |bias| / SD over the grid points, mean SE / SD, the mean
pointwise band width and the clipped-weight share.  Per feature and grid point ``--by-grid`` adds bias / SD
and SE / SD.

Folders (see :mod:`experiments.debiased_coverage`, ``--ratio-model``): ``v3/<setting>`` the round-5
estimator (polynomial basis on normal scores), ``v4/<setting>__polynomial`` the same (copied, bit-identical),
``v4/<setting>__spline`` and ``v4/<setting>__boosting`` a fixed model, run before the spline basis took the
polynomial terms in (round 6, first version: spline terms only), ``v4/<setting>`` the default estimator.

``python -m experiments.debiased_ratio_models [--by-grid] [--write]``; ``--write`` stores the table in
``experiments/summaries/debiased_ratio_models/summary.{json,txt}``.
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr

from . import _common as C
from . import debiased_coverage as D

#: Setting -> (label, folder under the study's results) of the compared estimators.
COMPARISONS = {
    "E_exp_rf_n1000": (("polynomial (round 5)", "v3/E_exp_rf_n1000"),
                       ("spline terms only", "v4/E_exp_rf_n1000__spline"),
                       ("boosting", "v4/E_exp_rf_n1000__boosting"),
                       ("default: polynomial + spline", "v4/E_exp_rf_n1000")),
    "H_skew_gbm_n1000": (("polynomial (round 5)", "v3/H_skew_gbm_n1000"),
                         ("default: polynomial + spline", "v4/H_skew_gbm_n1000")),
    "V_halfnormal_gbm_n1000": (("polynomial (round 5)", "v4/V_halfnormal_gbm_n1000__polynomial"),
                               ("default: polynomial + spline", "v4/V_halfnormal_gbm_n1000")),
    "G_corr_gbm_n1000": (("polynomial (round 5)", "v3/G_corr_gbm_n1000"),
                         ("default: polynomial + spline", "v4/G_corr_gbm_n1000")),
    "L_logit_gbc_n1000": (("polynomial (round 5)", "v3/L_logit_gbc_n1000"),
                          ("default: polynomial + spline", "v4/L_logit_gbc_n1000")),
}


def _load(ctx: C.Context, folder: str) -> xr.Dataset | None:
    chunks = D._chunk_files(ctx.study_dir(D.STUDY) / folder)
    return xr.concat([C.load_dataset(p) for p in chunks], dim="rep").sortby("rep") if chunks else None


def compare(ctx: C.Context, name: str, models) -> list[dict]:
    """One row per model of a setting, on the repetitions every loaded folder of the setting holds."""
    loaded = {label: ds for label, folder in models if (ds := _load(ctx, folder)) is not None}
    if len(loaded) < 2:
        return []
    reps = sorted(set.intersection(*(set(ds["rep"].values.tolist()) for ds in loaded.values())))
    rows = []
    for label, ds in loaded.items():
        ds = ds.sel(rep=reps)
        truth = D._truth(D.SETTINGS[name], ds)
        ok = ds["overlap"].values.astype(bool)
        row = {"setting": name, "model": label, "R": len(reps), "flagged": float(1 - ok.mean())}
        for kind, var in (("pointwise", "pd_band"), ("whole", "pd_band_simultaneous")):
            lo, hi = (ds[var].sel(ci_bound=b).values for b in ("lower", "upper"))
            inside = np.where(ok, (lo <= truth) & (truth <= hi), True)
            per_rep = inside.mean(axis=(1, 2)) if kind == "pointwise" else inside.all(axis=2).mean(axis=1)
            row[kind] = float(per_rep.mean())
            row[f"{kind}_mcse"] = float(per_rep.std(ddof=1) / np.sqrt(per_rep.size))
            if kind == "pointwise":
                row["width"] = float(np.nanmean(np.where(ok, hi - lo, np.nan)))
        est = ds["pd"].values
        sd = est.std(axis=0, ddof=1)
        bias = (est.mean(axis=0) - truth) / sd
        se_sd = ds["pd_se"].values.mean(axis=0) / sd
        row.update(mean_abs_bias_sd=float(np.abs(bias).mean()), max_abs_bias_sd=float(np.abs(bias).max()),
                   se_over_sd=float(se_sd.mean()), bias_sd=bias.round(2).tolist(), se_sd=se_sd.round(2).tolist(),
                   clipped_share=float(np.nanmean(ds["clipped_share"].values)) if "clipped_share" in ds else None)
        rows.append(row)
    return rows


def text_of(rows: list[dict], by_grid: bool = False) -> str:
    lines = ["Density-ratio models of the debiased estimator on the same data sets (R: the repetitions all of the "
             "setting's runs hold); coverage of the DGP's PD at unflagged grid points (MC SE); |bias| / SD and SE / SD "
             "over the grid points of all features; width: mean pointwise band width.",
             f"{'setting':24s} {'model':30s} {'R':>4s} {'pointwise':>15s} {'whole curve':>15s} {'flagged':>8s} "
             f"{'|bias|/SD':>10s} {'max':>5s} {'SE/SD':>6s} {'width':>6s} {'clipped':>8s}"]
    for r in rows:
        clipped = "--" if r["clipped_share"] is None else f"{r['clipped_share']:.4f}"
        lines.append(f"{r['setting']:24s} {r['model']:30s} {r['R']:4d} {r['pointwise']:.3f} ({r['pointwise_mcse']:.3f})"
                     f"   {r['whole']:.3f} ({r['whole_mcse']:.3f}) {r['flagged']:8.3f} {r['mean_abs_bias_sd']:10.2f} "
                     f"{r['max_abs_bias_sd']:5.2f} {r['se_over_sd']:6.2f} {r['width']:6.3f} {clipped:>8s}")
        if by_grid:
            for f, (b, s) in enumerate(zip(r["bias_sd"], r["se_sd"])):
                lines.append(f"    x{f + 1} bias/SD {np.asarray(b)}")
                lines.append(f"    x{f + 1} SE/SD   {np.asarray(s)}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-grid", action="store_true", help="bias / SD and SE / SD per feature and grid point")
    parser.add_argument("--write", action="store_true", help="write experiments/summaries/debiased_ratio_models")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    ctx = C.default_context(False, results_dir=args.results_dir, n_jobs=1)
    np.set_printoptions(precision=2, suppress=True, linewidth=200)
    rows = [row for name, models in COMPARISONS.items() for row in compare(ctx, name, models)]
    text = text_of(rows, args.by_grid)
    print(text, end="")
    if args.write:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "debiased_ratio_models", rows, text_of(rows, True))


if __name__ == "__main__":
    main()
