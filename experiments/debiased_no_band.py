"""Why the debiased PD of scikit-learn's diabetes table has no band at most of ``bmi``'s grid and none for ``s5``.

The command line's ``--uncertainty debiased`` on ``load_diabetes`` (n = 442, raw units), the default model (a
random forest of 100 trees), the package's defaults (K = 5, 50-point grid): per grid value the effective sample
size, the weight mass and the overlap flag, the warnings raised, and two facts about the table: how well the
other columns predict each feature (R^2 of a linear model), and the Friedewald identity
LDL = TC - HDL - TG / 5, i.e. ``s5`` (log triglycerides) = log(5 (s1 - s2 - s3)).

    nice -n 19 python -m experiments.debiased_no_band

Writes ``experiments/summaries/debiased_no_band/diabetes.json`` and ``README.md``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

from . import _common as C

SUMMARIES = C.ROOT / "experiments" / "summaries" / "debiased_no_band"


def main() -> None:
    import pdpboot

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    out = {"n": len(X), "model": "RandomForestRegressor(n_estimators=100, random_state=0)", "features": {}}
    s5_identity = np.log(5 * (X.s1 - X.s2 - X.s3))
    out["friedewald_corr_s5_log5(s1-s2-s3)"] = float(np.corrcoef(s5_identity, X.s5)[0, 1])
    out["friedewald_max_abs_diff"] = float(np.abs(s5_identity - X.s5).max())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = pdpboot.debiased_partial_dependence(RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=1),
                                                     X, y, ["bmi", "s5"], rng=0)
    out["warnings"] = [str(w.message) for w in caught if "No band" in str(w.message)]
    for f in ("bmi", "s5"):
        ds = result[f].to_dataset()
        others = X.drop(columns=[f])
        ok = ds["overlap"].values[0].astype(bool)
        out["features"][f] = {
            "r2_on_other_columns": float(LinearRegression().fit(others, X[f]).score(others, X[f])),
            "quantiles_5_25_50_75_95": np.quantile(X[f], [0.05, 0.25, 0.5, 0.75, 0.95]).round(3).tolist(),
            "bandwidth": float(ds.attrs["bandwidth"][0]), "ratio_model": ds.attrs.get("ratio_model"),
            "banded_share": float(ok.mean()),
            "banded_range": [float(ds[f].values[ok].min()), float(ds[f].values[ok].max())] if ok.any() else None,
            "grid": ds[f].values.round(3).tolist(),
            "effective_sample_size": ds["effective_sample_size"].values[0].round(2).tolist(),
            "weight_mass": ds["weight_mass"].values[0].round(3).tolist(), "overlap": ok.astype(int).tolist()}
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    (SUMMARIES / "diabetes.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({k: v for k, v in out.items() if k != "features"}, indent=1))
    for f, d in out["features"].items():
        print(f, {k: v for k, v in d.items() if k not in ("grid", "effective_sample_size", "weight_mass", "overlap")})


if __name__ == "__main__":
    main()
