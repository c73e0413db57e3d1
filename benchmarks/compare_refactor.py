"""Results of the public computations before and after a refactor, side by side.

``python benchmarks/compare_refactor.py OUT.npz`` writes every variable of a tree-model
bootstrap (forest, exact tree engine, ICE, heterogeneity, H statistics), a Pipeline bootstrap
(brute engine, fixed background), an ALE bootstrap (with PD, a categorical column), the one-fit
PD/ALE/H functions, the forest jackknife and two H^2 tests; ``python benchmarks/compare_refactor.py
A.npz B.npz`` prints the largest absolute difference per case.  Run the first form with the code
before the change (``PYTHONPATH`` pointing to a copy of it) and with the code after it.
"""

from __future__ import annotations

import sys

import numpy as np

from pdpboot import Grid


def _tree_arrays(prefix: str, tree, out: dict) -> None:
    for node in tree.subtree:
        for var in node.ds.data_vars:
            values = node.ds[var].values
            if values.dtype.kind in "fiub":
                out[f"{prefix}|{node.path}|{var}"] = values


def arrays() -> dict:
    """Every numeric variable of the compared cases, keyed ``case|node|variable``."""
    import pandas as pd
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.linear_model import LinearRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    import pdpboot
    from pdpboot.datasets import make_electricity_prices, make_friedman1

    out: dict = {}
    X, y = make_friedman1(160, rng=0)
    res = pdpboot.bootstrap_partial_dependence(
        RandomForestRegressor(n_estimators=15, min_samples_leaf=5), X, y, ["x1", ("x1", "x2")], n_resamples=6,
        grid=Grid(6), rng=1,
        execution=pdpboot.Execution(progress=False),
        statistics={"ice": 4, "heterogeneity": True, "interactions": True})
    _tree_arrays("tree", res, out)
    _tree_arrays("tree_bands", pdpboot.confidence_bands(res, simultaneous=False, method="bca"), out)
    Xe, ye = make_electricity_prices(200, rng=0)
    res = pdpboot.bootstrap_partial_dependence(
        make_pipeline(StandardScaler(), Ridge()), Xe, ye, ["Temperature", ("Temperature", "Hour")], n_resamples=5,
        grid=Grid(5), rng=2,
        resampling=pdpboot.Resampling(background="original", max_background=60),
        execution=pdpboot.Execution(progress=False))
    _tree_arrays("pipeline", res, out)
    Xc = X.copy()
    Xc["level"] = pd.Categorical(np.where(X["x3"] > 0.5, "high", "low"))
    Xc["x5"] = (Xc["x5"] * 10).round().astype(int)
    est = make_pipeline(PolynomialFeatures(1), LinearRegression())
    Xn = Xc.assign(level=(Xc["level"] == "high").astype(int))
    res = pdpboot.bootstrap_ale(est, Xn, y, ["x1", "x5", ("x1", "x2")], n_resamples=5, grid=Grid(6),
                                with_pd=True, rng=3, execution=pdpboot.Execution(progress=False))
    _tree_arrays("ale", res, out)
    gbr = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    _tree_arrays("pd_one_fit", pdpboot.partial_dependence(gbr, X, ["x1", ("x1", "x2")], grid=Grid(6),
                                                          kind="both", max_ice_instances=5, rng=0), out)
    _tree_arrays("ale_one_fit", pdpboot.accumulated_local_effects(gbr, X, ["x1", ("x1", "x2")],
                                                                  grid=Grid(6)), out)
    _tree_arrays("h_one_fit", pdpboot.h_statistic_of_model(gbr, X, ["x1", ("x1", "x2")], n_max=50, rng=0), out)
    poly = make_pipeline(PolynomialFeatures(2, interaction_only=True), LinearRegression())
    test = pdpboot.h_statistic_test(poly, X.iloc[:80, :3], y[:80], ("x1", "x2"), n_resamples=9, n_max=40, rng=0)
    out["htest_smooth|statistic"] = np.array([test.attrs[k] for k in ("statistic", "pvalue", "noise_sd")])
    out["htest_smooth|null"] = test["x1__x2"].ds["h2_null"].values[:, 0]
    _more_arrays(out)
    return out


def _more_arrays(out: dict) -> None:
    """The demo's forest with ICE and sup-t bands, a boosting classifier under ``resampling="auto"``, the
    debiased estimator."""
    import warnings

    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    import pdpboot
    from pdpboot.datasets import make_electricity_prices, make_friedman1

    quiet = pdpboot.Execution(progress=False)
    X, y = make_electricity_prices(300, rng=0)
    res = pdpboot.bootstrap_partial_dependence(
        RandomForestRegressor(n_estimators=20, min_samples_leaf=5), X, y,
        ["Temperature", "Hour", ("Temperature", "Hour")], n_resamples=20, grid=Grid(8), rng=0,
        execution=quiet, statistics={"ice": 10})
    _tree_arrays("demo", res, out)
    _tree_arrays("demo_bands", pdpboot.confidence_bands(res, simultaneous=True), out)
    Xf, yf = make_friedman1(200, rng=0)
    yb = (yf > np.median(yf)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pdpboot.bootstrap_partial_dependence(HistGradientBoostingClassifier(max_iter=20), Xf, yb, ["x1", "x2"],
                                                   n_resamples=20, grid=Grid(6), rng=0, execution=quiet)
        _tree_arrays("clf_auto", res, out)
        _tree_arrays("clf_auto_bands", pdpboot.confidence_bands(res, simultaneous=True), out)
        deb = pdpboot.debiased_partial_dependence(LinearRegression(), Xf, yf, ["x1", "x2"], grid=Grid(6), rng=0)
        _tree_arrays("debiased", deb, out)


def compare(before: dict, after: dict) -> None:
    """Print the largest absolute difference of each case (NaN where equal NaNs)."""
    cases = sorted({k.split("|")[0] for k in before} | {k.split("|")[0] for k in after})
    for case in cases:
        keys = sorted(k for k in before if k.startswith(case + "|"))
        missing = [k for k in keys if k not in after]
        extra = [k for k in after if k.startswith(case + "|") and k not in before]
        worst, where = 0.0, ""
        for k in keys:
            if k in after and np.shape(after[k]) == np.shape(before[k]):
                a, b = np.asarray(after[k], float), np.asarray(before[k], float)
                if not np.array_equal(np.isnan(a), np.isnan(b)):
                    worst, where = np.inf, k
                    continue
                diff = float(np.nanmax(np.abs(a - b), initial=0.0))
                if diff > worst:
                    worst, where = diff, k
            elif k in after:
                worst, where = np.inf, f"{k} shape {np.shape(after[k])} vs {np.shape(before[k])}"
        print(f"{case:14s} {len(keys):4d} arrays  max |diff| = {worst:.3g}  {where}"
              + (f"  missing {missing}" if missing else "") + (f"  new {extra}" if extra else ""))


if __name__ == "__main__":
    if len(sys.argv) == 2:
        np.savez(sys.argv[1], **arrays())
    else:
        compare(dict(np.load(sys.argv[1])), dict(np.load(sys.argv[2])))
