"""experiments.classifier_se (issue 27): its PD is the package's, its quick run resumes and reports every scheme."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy.special import expit
from sklearn.ensemble import HistGradientBoostingClassifier

import pdpboot
from experiments import _common as C
from experiments import classifier_se as S
from pdpboot import Grid


def test_pd_of_fit_is_the_package_pd():
    X, y = S.make_data("skewcorr", 120, np.random.default_rng(0))
    grid = S.grid_of("skewcorr")
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    ours = S.pd_of_fit(model, X, grid)
    for f, j in enumerate(S.FEATURES):
        ref = pdpboot.partial_dependence(model, X, [j], grid=Grid(custom_values={j: grid[f]}),
                                         response_method="predict_proba", method="brute")
        ds = ref[f"x{j}"].ds
        np.testing.assert_allclose(ours[f], ds["pd"].sel(output=1).values, rtol=1e-10)


def test_rep_seeds_do_not_depend_on_count():
    root = C.seed_sequence(S.SEED, "x").spawn(2)[1]
    a, b = S._rep_seeds(root, 3), S._rep_seeds(root, 5)
    assert [s.generate_state(2).tolist() for s in a] == [s.generate_state(2).tolist() for s in b[:3]]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # two data sets: spreads over 1 degree of freedom
def test_quick_run_extends_and_reports(tmp_path):
    ctx = C.default_context(True, tmp_path / "r", tmp_path / "p", 1)
    S.compute(ctx, ["skewcorr:hgb_clf"])
    S.compute(ctx, ["skewcorr:hgb_clf"], R=3, schemes=["plain", "sub632"])  # reuses data sets 0-1, adds 2
    assert ctx.reused == 3 and ctx.computed == 4
    recs = {r["scheme"]: r for r in S.render(ctx)}
    assert recs["plain"]["R"] == 3 and recs["sub632"]["R"] == 3 and recs["iterated"]["R"] == 2
    assert {"logit", "param_oof", "param_oracle", "sub_rate"} <= set(recs)
    for rec in recs.values():
        assert 0 <= rec["pointwise_pkg"] <= 1 and rec["se_ratio_median"] > 0
    assert abs(S._sub632_scale(400) - np.sqrt(253 / 147)) < 1e-12


def test_the_study_measured_the_bands_the_default_makes():
    """experiments/classifier_default.py's 'sub632_logit' coverage (``classifier_se._package_bands``) equals the
    coverage of confidence_bands' default bands of a resampling='auto' result holding the same draws."""
    from experiments import classifier_se as cs

    rng = np.random.default_rng(5)
    n, m = 400, round(0.632 * 400)  # the study's subsample size (the package's floor(0.632 n) is 252)
    est = expit(rng.normal(-1.5, 1.0, size=(2, 12)))
    draws = expit(np.log(est / (1 - est)) + rng.normal(0, 0.3, size=(100, 2, 12)) / np.sqrt(m / (n - m)))
    ds = xr.Dataset({"pd": (("output", "x"), est), "pd_resamples": (("resample", "output", "x"), draws)},
                    coords={"output": ["a", "b"], "x": np.arange(12.0)}, attrs={"features": ["x"]})
    tree = xr.DataTree(children={"x": xr.DataTree(ds)})
    tree.attrs = {"response": "predict_proba", "resampling": "subsample", "band_scale": "logit", "n_rows": n,
                  "subsample_size": m, "estimator": "LogisticRegression()"}
    bands = pdpboot.confidence_bands(tree, simultaneous=True)["x"].ds
    seen = set()
    for shift in (0.0, 0.3, 0.5, 0.55, 0.6, 0.7):  # truths in, at the edge of and beyond the bands
        truth = expit(np.log(est / (1 - est)) + shift * rng.choice([-1.0, 1.0], size=est.shape))
        point, whole, _ = cs._package_bands(est, None, draws, truth, "sub632_logit", n, np.ones_like(est))
        seen.add((point, whole))
        lo, hi = bands["pd_band_pointwise"].values
        slo, shi = bands["pd_band"].values
        assert point == pytest.approx(np.mean((lo <= truth) & (truth <= hi)), abs=1e-12)
        assert whole == pytest.approx(np.mean(np.all((slo <= truth) & (truth <= shi), axis=1)), abs=1e-12)
    assert len(seen) >= 4 and min(p for p, _ in seen) < 0.6  # the truths tell bands apart
