"""experiments.classifier_se (issue 27): its PD is the package's, its quick run resumes and reports every scheme."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

import pdpboot
from experiments import _common as C
from experiments import classifier_se as S


def test_pd_of_fit_is_the_package_pd():
    X, y = S.make_data("skewcorr", 120, np.random.default_rng(0))
    grid = S.grid_of("skewcorr")
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    ours = S.pd_of_fit(model, X, grid)
    for f, j in enumerate(S.FEATURES):
        ref = pdpboot.partial_dependence(model, X, [j], custom_values={j: grid[f]}, response_method="predict_proba",
                                         method="brute")
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
