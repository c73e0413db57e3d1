"""``resampling="auto"`` (issue 27 item 1): the 0.632 subsample with logit-scale bands for a classifier's
probabilities, the plain bootstrap, bit for bit, for everything else."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

import pdpboot
from pdpboot import Grid

QUIET = pdpboot.Execution(progress=False)
#: attrs that say how the scheme was chosen (and when): the only ones "auto" and "bootstrap" may differ in
CHOICE_ATTRS = ("created", "resampling_requested", "resampling_reason")


def _classification(n: int = 100, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (rng.uniform(size=n) < expit(1.5 * X[:, 0] - 0.5 * X[:, 1])).astype(int)
    return X, y


def _regression(n: int = 60, targets: int = 1):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = X @ rng.normal(size=(2, targets)) + rng.normal(size=(n, targets))
    return X, (y[:, 0] if targets == 1 else y)


CASES = {
    "regressor": (LinearRegression, lambda: _regression(), {}),
    "multi-output regressor": (Ridge, lambda: _regression(targets=2), {}),
    "decision function (log-odds)": (LogisticRegression, lambda: _classification(), {"response_method":
                                                                                     "decision_function"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_auto_is_the_bootstrap_bit_for_bit_for_outputs_that_are_not_probabilities(case):
    make, data, kw = CASES[case]
    X, y = data()
    common = dict(n_resamples=20, grid=Grid(4), rng=3, execution=QUIET, **kw)
    auto = pdpboot.bootstrap_partial_dependence(make(), X, y, [0, (0, 1)], **common)
    plain = pdpboot.bootstrap_partial_dependence(make(), X, y, [0, (0, 1)], resampling="bootstrap", **common)
    assert auto.attrs["resampling"] == "bootstrap" and auto.attrs["band_scale"] == "identity"
    assert auto.attrs["resampling_requested"] == "auto" and "chose the bootstrap" in auto.attrs["resampling_reason"]
    for one in (auto, plain):
        for name in CHOICE_ATTRS:
            one.attrs.pop(name)
    xr.testing.assert_identical(auto, plain)
    for simultaneous in (False, True):
        xr.testing.assert_identical(pdpboot.confidence_bands(auto, simultaneous=simultaneous),
                                    pdpboot.confidence_bands(plain, simultaneous=simultaneous))


def test_auto_for_probabilities_is_the_0632_subsample_with_logit_bands_by_hand():
    X, y = _classification()
    B = 39  # (B + 1) 0.025 = 1 and (B + 1) 0.975 = 39: the 95 % percentile band is the min and max resample
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=B, grid=Grid(4),
                                               rng=0, execution=QUIET)
    attrs = res.attrs
    assert (attrs["resampling"], attrs["resampling_requested"], attrs["band_scale"]) == ("subsample", "auto", "logit")
    assert attrs["subsample_size"] == 63 and "resample_absent" not in res  # floor(0.632 x 100), no row repeated
    assert "logit scale" in attrs["resampling_reason"]
    node = res["x0"].ds
    # the estimate is the full-data fit's PD (scikit-learn's brute force on the same grid)
    full = clone(LogisticRegression()).fit(X, y)
    ref = sk_partial_dependence(full, X, [0], custom_values={0: node["x0"].values}, method="brute",
                                response_method="predict_proba")["average"][0]
    np.testing.assert_allclose(node["pd"].sel(output=1).values, ref, rtol=1e-10)
    # the band: logit, deviations rescaled by sqrt(m / (n - m)), min and max, mapped back
    le, lr = logit(node["pd"].values), logit(node["pd_resamples"].values)
    z = le + (lr - le) * np.sqrt(63 / 37)
    band = pdpboot.confidence_bands(res)["x0"].ds["pd_band"]
    np.testing.assert_allclose(band.sel(ci_bound="lower").values, expit(z.min(axis=0)), rtol=1e-12)
    np.testing.assert_allclose(band.sel(ci_bound="upper").values, expit(z.max(axis=0)), rtol=1e-12)
    assert band.attrs["scale"] == "logit"
    # scale="logit" is what "auto" chose; scale="identity" turns the logit off
    xr.testing.assert_identical(pdpboot.confidence_bands(res, simultaneous=True, scale="logit"),
                                pdpboot.confidence_bands(res, simultaneous=True))
    flat = pdpboot.confidence_bands(res, scale="identity")["x0"].ds["pd_band"]
    p = node["pd"].values + (node["pd_resamples"].values - node["pd"].values) * np.sqrt(63 / 37)
    np.testing.assert_allclose(flat.sel(ci_bound="lower").values, np.clip(p.min(axis=0), 0, 1), rtol=1e-12)
    assert "scale" not in flat.attrs


def test_logit_scale_survives_save_and_load(tmp_path):
    X, y = _classification()
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=20, grid=Grid(3),
                                               rng=0, execution=QUIET)
    pdpboot.save(res, tmp_path / "r.nc")
    back = pdpboot.load(tmp_path / "r.nc")
    band = pdpboot.confidence_bands(back)["x0"].ds["pd_band"]
    assert band.attrs["scale"] == "logit"
    xr.testing.assert_identical(band, pdpboot.confidence_bands(res)["x0"].ds["pd_band"])


def test_explicit_bootstrap_of_a_boosting_classifier_warns_the_default_does_not():
    X, y = _classification(80)
    common = dict(n_resamples=20, grid=Grid(3), rng=0, execution=QUIET)
    model = HistGradientBoostingClassifier(max_iter=5)
    plain = pdpboot.bootstrap_partial_dependence(model, X, y, [0], resampling="bootstrap", **common)
    with pytest.warns(pdpboot.CoverageWarning, match="resampling='bootstrap'; use resampling='auto'"):
        pdpboot.confidence_bands(plain, simultaneous=True)
    auto = pdpboot.bootstrap_partial_dependence(model, X, y, [0], **common)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pdpboot.confidence_bands(auto, simultaneous=True)


class _NoScores(ClassifierMixin, BaseEstimator):
    """A classifier with neither predict_proba nor decision_function, whose fit must never run."""

    def fit(self, X, y):
        raise AssertionError("fit ran before the arguments were checked")

    def predict(self, X):
        return np.zeros(len(X))


def test_auto_is_resolved_and_checked_before_any_fit():
    X, y = _classification(50)
    with pytest.raises(ValueError, match="neither predict_proba nor decision_function"):
        pdpboot.bootstrap_partial_dependence(_NoScores(), X, y, [0], n_resamples=3, execution=QUIET)
    with pytest.raises(ValueError, match="subsample_fraction=0.01 draws"):
        pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=3, execution=QUIET,
                                             resampling=pdpboot.Resampling(subsample_fraction=0.01))


def _probability_tree(pd: np.ndarray, resamples: np.ndarray) -> xr.DataTree:
    ds = xr.Dataset({"pd": (("output", "x"), pd), "pd_resamples": (("resample", "output", "x"), resamples)},
                    coords={"output": [1], "x": np.arange(pd.shape[1], dtype=float)}, attrs={"features": ["x"]})
    tree = xr.DataTree(children={"x": xr.DataTree(ds)})
    tree.attrs = {"response": "predict_proba", "resampling": "subsample", "band_scale": "logit", "n_rows": 100,
                  "subsample_size": 63, "estimator": "LogisticRegression()"}
    return tree


def test_a_pd_every_fit_puts_at_0_or_1_keeps_a_band_that_contains_it():
    # before: the logit's clip at 1e-6 came back as a band [1e-6, 1e-6] that excluded the estimate 0
    rng = np.random.default_rng(0)
    resamples = np.concatenate([np.zeros((30, 1, 1)), rng.uniform(0.3, 0.5, (30, 1, 1)), np.ones((30, 1, 1))], 2)
    tree = _probability_tree(np.array([[0.0, 0.4, 1.0]]), resamples)
    for simultaneous in (False, True):
        bands = pdpboot.confidence_bands(tree, simultaneous=simultaneous, scale="logit")
        band = bands["x"].ds["pd_band"].sel(output=1).values
        np.testing.assert_array_equal(band[:, 0], [0.0, 0.0])
        np.testing.assert_array_equal(band[:, 2], [1.0, 1.0])
        assert 0 < band[0, 1] < 0.4 < band[1, 1] < 1


def test_scale_is_checked():
    X, y = _regression()
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=20, grid=Grid(3),
                                               rng=0, execution=QUIET)
    with pytest.raises(ValueError, match="scale='logit' needs a probability PD.*scale='identity'"):
        pdpboot.confidence_bands(res, scale="logit")
    with pytest.raises(ValueError, match=r"scale='log' is not one of \['auto', 'identity', 'logit'\]"):
        pdpboot.confidence_bands(res, scale="log")


def test_ale_resolves_auto_as_the_pd_does():
    """One "auto" rule: with the same rng, the ALE run's PD equals the PD run's (same scheme, same rows)."""
    X, y = _classification(60)
    common = dict(n_resamples=3, rng=0, execution=QUIET)
    ale = pdpboot.bootstrap_ale(LogisticRegression(), X, y, [0], grid=Grid(3), with_pd=True, **common)
    edges = ale["x0"].ds["x0"].values
    pd_run = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], grid=Grid(custom_values={0: edges}),
                                                  **common)
    for name in ("resampling", "band_scale", "resampling_requested", "subsample_size"):
        assert ale.attrs[name] == pd_run.attrs[name], name
    assert ale.attrs["resampling"] == "subsample"
    np.testing.assert_allclose(ale["x0"].ds["pd_resamples"].values, pd_run["x0"].ds["pd_resamples"].values,
                               rtol=1e-12)


def test_auto_run_extends_from_its_checkpoint(tmp_path):
    X, y = _classification(60)
    common = dict(grid=Grid(3), rng=0)
    ckpt = pdpboot.Execution(progress=False, checkpoint=tmp_path / "ck")
    pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=3, execution=ckpt, **common)
    resumed = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=6, execution=ckpt,
                                                   **common)
    fresh = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=6, execution=QUIET,
                                                 **common)
    assert resumed.attrs["resampling"] == "subsample" and resumed.attrs["band_scale"] == "logit"
    xr.testing.assert_identical(resumed["x0"].to_dataset(), fresh["x0"].to_dataset())


def test_the_plot_legend_says_the_band_was_formed_on_the_logit_scale():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = _classification(60)
    res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, [0], n_resamples=20, grid=Grid(3),
                                               rng=0, execution=QUIET)
    for scale, shown in (("auto", True), ("identity", False)):
        ax = pdpboot.plot_pd(pdpboot.confidence_bands(res, scale=scale), "x0")
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("percentile band (logit scale), B = 20" in t for t in labels) is shown, labels
        plt.close(ax.figure)
