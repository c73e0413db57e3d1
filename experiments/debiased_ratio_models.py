"""Which density-ratio model the debiased estimator uses: the evidence (issue 28, round 6).

Reads the debiased study's cached repetitions (``experiments/results/full/debiased/<version>/<folder>``;
nothing is refitted) of the same data sets (repetition i has the same seed in every folder) under
different density-ratio models, and prints, per setting and model, on the repetitions all of that
setting's folders share: pointwise and whole-curve coverage of the DGP's PD (unflagged points, MC SE),
the flagged share, mean and largest |bias| / SD over the grid points, mean SE / SD, the mean
pointwise band width, the clipped-weight share and the mean CPU seconds of a repetition (``time.process_time`` of
the study's one process, single-threaded, under the machine's load at the time).  Per feature and grid point
``--by-grid`` adds bias / SD and SE / SD.

Folders (see :mod:`experiments.debiased_coverage`, ``--ratio-model``): ``v3/<setting>`` the round-5
estimator (polynomial basis on normal scores), ``v4/<setting>__polynomial`` the same (copied, bit-identical),
``v4/<setting>__spline`` and ``v4/<setting>__boosting`` a fixed model, run before the spline basis took the
polynomial terms in (round 6, first version: spline terms only), ``v4/<setting>`` the default estimator;
``v4/B_<learner>_n500__spline`` the spline basis on scenario B's nine other columns, run before the default fell
back to the polynomial basis when a fold has fewer than 10 training rows per spline column (the default there is
then the round-5 estimator, whose cache ``v4/B_<learner>_n500`` is a bit-identical copy of ``v3``).

``--ratio-error N``: on the first N data sets of DGP E, each model cross-fitted as in the estimator (K = 5,
two permuted copies, the default logistic / boosting classifier), against x1's true ratio
``w = p(x2) / p(x2 | x1)`` (``p(x2)`` by Gauss-Laguerre quadrature): per decile of x1, the mean over the data
sets of the tilt of ``log w_hat - log w`` along x2 (its least-squares slope on standardised x2 within the decile;
x2 enters y through ``x1 x2``, so at fixed x1 a learner's error varies along x2, and the ratio's error along x2 is
what the product of the two errors picks up; its mean over data sets is the ratio model's *systematic* part)
and its root mean square (systematic plus random), and how often the held-out log loss
and the RMSE of ``log w_hat`` pick each model.

``python -m experiments.debiased_ratio_models [--by-grid] [--write] [--ratio-error N]``; ``--write`` stores the
tables in ``experiments/summaries/debiased_ratio_models/summary.{json,txt}`` (and ``ratio_error.{json,txt}``).
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
    **{f"B_{learner}_n500": (("spline basis (p = 9: 195 cols)", f"v4/B_{learner}_n500__spline"),
                             ("default: polynomial (rows/col)", f"v4/B_{learner}_n500"))
       for learner in ("rf", "gbm", "mlp")},
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
        row["cpu_mean"], row["cpu_median"] = float(ds["cpu"].mean()), float(ds["cpu"].median())
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
             f"{'|bias|/SD':>10s} {'max':>5s} {'SE/SD':>6s} {'width':>6s} {'clipped':>8s} {'CPU s':>6s}"]
    for r in rows:
        clipped = "--" if r["clipped_share"] is None else f"{r['clipped_share']:.4f}"
        lines.append(f"{r['setting']:24s} {r['model']:30s} {r['R']:4d} {r['pointwise']:.3f} ({r['pointwise_mcse']:.3f})"
                     f"   {r['whole']:.3f} ({r['whole_mcse']:.3f}) {r['flagged']:8.3f} {r['mean_abs_bias_sd']:10.2f} "
                     f"{r['max_abs_bias_sd']:5.2f} {r['se_over_sd']:6.2f} {r['width']:6.3f} {clipped:>8s} "
                     f"{r['cpu_mean']:6.2f}")
        if by_grid:
            for f, (b, s) in enumerate(zip(r["bias_sd"], r["se_sd"])):
                lines.append(f"    x{f + 1} bias/SD {np.asarray(b)}")
                lines.append(f"    x{f + 1} SE/SD   {np.asarray(s)}")
    return "\n".join(lines) + "\n"


def _exponential_true_ratio(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``p(x2) / p(x2 | x1)`` of DGP E (x2 given x1: normal, mean ``0.6 tanh(x1 - 1)``, sd 0.8)."""
    nodes, weights = np.polynomial.laguerre.laggauss(80)
    density = lambda x, m: np.exp(-(x - m) ** 2 / (2 * 0.64))  # noqa: E731
    marginal = (weights[None, :] * density(c[:, None], D.EXP_SHIFT * np.tanh(nodes[None, :] - 1))).sum(axis=1)
    return marginal / density(c, D.EXP_SHIFT * np.tanh(a - 1))


def ratio_error(n_sets: int) -> tuple[list[dict], str]:
    """The ratio models' error in ``log w`` of x1 on DGP E's data sets, by decile of x1 (see the module docstring)."""
    from pdpboot import DebiasedOptions
    from pdpboot.engine import debiased as eng
    from pdpboot.engine.resample import fold_labels

    name = "E_exp_rf_n1000"
    setting = D.SETTINGS[name]
    seeds = C.seed_sequence(D.SEED, name).spawn(n_sets)
    models = {"polynomial": (eng.ratio_design, "logistic"), "spline": (eng.spline_ratio_design, "logistic"),
              "boosting": (raw_ratio_design, "boosting")}
    errors = {m: [] for m in models}
    picks = {"loss": {m: 0 for m in models}, "rmse": {m: 0 for m in models}}
    opts = DebiasedOptions()
    deciles = np.linspace(0, 1, 11)
    for i in range(n_sets):
        X, _ = D.simulate(setting, setting["n"], seeds[i].spawn(2)[0])
        a, c = X[:, 0], X[:, 1:]
        true = _exponential_true_ratio(a, X[:, 1])
        scores = np.column_stack([eng.normal_scores(col) for col in c.T])
        standard = (c - c.mean(axis=0)) / c.std(axis=0)
        folds = fold_labels(a.size, opts.n_folds, np.random.default_rng(i))
        bins = np.clip(np.searchsorted(np.quantile(a, deciles[1:-1]), a, side="right"), 0, 9)
        losses, rmse = {}, {}
        for m, (design, kind) in models.items():
            gen = np.random.default_rng(10_000 + i)
            w, loss = np.empty(a.size), 0.0
            for k in range(opts.n_folds):
                train, test = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
                a_in, c_in = (a, standard) if kind == "boosting" else (eng.normal_scores(a), scores)
                out = eng.fit_density_ratio(_fitter(kind, int(gen.integers(2**31 - 1))), a_in[train], c_in[train],
                                            a_in[test], c_in[test], design=design, rng=gen,
                                            score_rng=np.random.default_rng([i, k]), max_weight=opts.max_weight)
                w[test], loss = out["weights"], loss + out["holdout_loss"] * test.size / a.size
            for k in range(opts.n_folds):  # normalised per held-out fold, as in the estimator
                w[folds == k] /= w[folds == k].mean()
            err = np.log(w / true)
            z = (X[:, 1] - X[:, 1].mean()) / X[:, 1].std()
            tilt = [float(np.polyfit(z[bins == b], err[bins == b], 1)[0]) for b in range(10)]
            errors[m].append(tilt + [float(np.sqrt(np.mean(err**2)))])
            losses[m], rmse[m] = loss, float(np.sqrt(np.mean(err**2)))
        picks["loss"][min(losses, key=losses.get)] += 1
        picks["rmse"][min(rmse, key=rmse.get)] += 1
    rows, lines = [], [f"DGP E, x1's density ratio, {n_sets} data sets of the study (n = 1000, K = 5): tilt of "
                       "log w_hat - log w along x2 (least-squares slope on standardised x2) per decile of x1 (lowest "
                       "first); mean over the data sets (systematic) and root mean square over them (systematic and "
                       "random)"]
    for m, e in errors.items():
        e = np.asarray(e)
        row = {"model": m, "mean_error": e[:, :10].mean(axis=0).round(3).tolist(),
               "rms_error": np.sqrt((e[:, :10] ** 2).mean(axis=0)).round(3).tolist(),
               "rmse_log_w": float(e[:, 10].mean()), "picked_by_loss": picks["loss"][m],
               "picked_by_rmse": picks["rmse"][m]}
        rows.append(row)
        lines += [f"{m:10s} mean  {np.asarray(row['mean_error'])}",
                  f"{'':10s} rms   {np.asarray(row['rms_error'])}",
                  f"{'':10s} RMSE of log w over all rows {row['rmse_log_w']:.3f}; smallest held-out loss in "
                  f"{row['picked_by_loss']} / {n_sets} data sets, smallest RMSE in {row['picked_by_rmse']} / {n_sets}"]
    return rows, "\n".join(lines) + "\n"


def raw_ratio_design(a: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The feature and the other columns as they are: the boosting ratio model's inputs (trees are invariant to
    monotone maps).  The package's estimator no longer offers this model; it lives here with its comparison."""
    return np.column_stack([np.asarray(a, dtype=float), np.asarray(C, dtype=float).reshape(np.size(a), -1)])


def default_boosting_classifier():
    """The boosting ratio model's classifier: shallow, early-stopped gradient boosting (as the estimator had it)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_leaf_nodes=8, learning_rate=0.1, max_iter=300, min_samples_leaf=40,
                                          l2_regularization=1.0, early_stopping=True, validation_fraction=0.2,
                                          n_iter_no_change=10)


def _fitter(kind: str, seed: int):
    """``fit(features, labels) -> predict_p1`` with the estimator's default classifier of that kind."""
    from pdpboot.debiased import default_weight_classifier

    def fit(features, labels):
        model = (default_boosting_classifier().set_params(random_state=seed) if kind == "boosting"
                 else default_weight_classifier()).fit(features, labels)
        return lambda new: model.predict_proba(new)[:, 1]
    return fit


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-grid", action="store_true", help="bias / SD and SE / SD per feature and grid point")
    parser.add_argument("--write", action="store_true", help="write experiments/summaries/debiased_ratio_models")
    parser.add_argument("--ratio-error", type=int, default=0, metavar="N",
                        help="the models' error in x1's log ratio on the first N data sets of DGP E")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    if args.ratio_error:
        rows, text = ratio_error(args.ratio_error)
        print(text, end="")
        if args.write:
            C.write_summary(C.ROOT / "experiments" / "summaries" / "debiased_ratio_models", rows, text, "ratio_error")
        return
    ctx = C.default_context(False, results_dir=args.results_dir, n_jobs=1)
    np.set_printoptions(precision=2, suppress=True, linewidth=200)
    rows = [row for name, models in COMPARISONS.items() for row in compare(ctx, name, models)]
    text = text_of(rows, args.by_grid)
    print(text, end="")
    if args.write:
        C.write_summary(C.ROOT / "experiments" / "summaries" / "debiased_ratio_models", rows, text_of(rows, True))


if __name__ == "__main__":
    main()
