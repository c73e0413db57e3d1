"""``pdpboot run --uncertainty ij``: one-fit infinitesimal-jackknife bands of the run's forest."""

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.inspection import partial_dependence as sk_partial_dependence

import pdpboot
from pdpboot.engine import jackknife as jk
from pdpboot.schema import get_node
from pdpboot.workflow import InputError
from pdpboot.workflow.options import merge

from .helpers import HAS_OPENPYXL, only_run_folder, regression_table, run_cli

#: The IJ warns that it is experimental (pdpboot.caveats); the run records it as a note (checked below).
pytestmark = pytest.mark.filterwarnings("ignore::pdpboot.caveats.CoverageWarning")

IJ = ["--uncertainty", "ij", "--grid-resolution", "5", "--n-jobs", "1", "--quiet",
      *([] if HAS_OPENPYXL else ["--no-workbook"])]


def _numeric_table(n=120, seed=0, classes=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = 4 * X[:, 0] + np.sin(6 * X[:, 1]) + rng.normal(0, 0.3, n)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["y"] = np.where(y > np.median(y), "high", "low") if classes else y
    return frame


def test_ij_run_end_to_end(tmp_path, model="extra-trees", classes=True):
    """One small run (extra trees, binary classes, a pair, simultaneous bands): every output is written,
    the forest is the run's own (bootstrap=True, fitted on the table's rows), its PD is scikit-learn's."""
    data = tmp_path / "t.csv"
    _numeric_table(classes=classes).to_csv(data, index=False)
    code, _ = run_cli(["run", data, "--target", "y", "--model", model, "--n-estimators", 40, "--pairs", "a:b",
                       "--simultaneous", "--test-size", 0, "--out", tmp_path / "out", *IJ])
    assert code == 0
    folder = only_run_folder(tmp_path / "out")
    res = pdpboot.load(folder / "results.nc")
    assert res.attrs["uncertainty"] == "infinitesimal-jackknife" and res.attrs["n_estimators"] == 40
    forest = joblib.load(folder / "model.joblib")["estimator"]
    assert forest.bootstrap  # extra trees were built with bootstrap=True for the IJ
    X = pd.read_csv(data)[["a", "b", "c"]]
    jk.check_training_rows(forest, X.to_numpy(np.float32), jk.inbag_counts(forest, len(X)))  # the same rows
    node = get_node(res, "a").to_dataset()
    assert {"pd", "pd_se", "pd_band", "pd_band_pointwise"} <= set(node) and "pd_resamples" not in node
    assert node["pd_band"].attrs["simultaneous"] == 1
    grid = node["a"].values
    ref = sk_partial_dependence(forest, X, ["a"], custom_values={"a": grid}, method="brute")["average"]
    np.testing.assert_allclose(node["pd"].values[-1 if classes else 0], ref[-1], rtol=1e-10)  # the forest's PD
    summary = (folder / "summary.md").read_text()
    assert "infinitesimal jackknife (one fit, 40 trees)" in summary
    assert "may be unreliable: the forest has 40 trees (fewer than 1000)" in summary  # the warning is reported
    assert "infinitesimal jackknife is experimental" in summary  # and so is its measured under-coverage
    assert sorted(p.name for p in (folder / "plots").iterdir())[:2] == ["importance.png", "overview.png"]


@pytest.mark.parametrize("extra,match", [
    (("model", "linear"), "needs --model random-forest or extra-trees"),
    (("model_spec", "sklearn.ensemble.RandomForestRegressor()"), "not --model-spec"),
    (("ice_samples", "10"), "no ICE curves"),
    (("interactions", "30"), "no H statistics"),
    (("groups", "c"), "cluster bootstrap"),
])
def test_what_ij_cannot_do_is_refused_before_reading_anything(extra, match):
    with pytest.raises(InputError, match=match):
        merge({"target": "y", "uncertainty": "ij", extra[0]: extra[1]}, {})


def test_ij_defaults_and_categorical_columns(tmp_path, capsys):
    config = merge({"target": "y", "uncertainty": "ij"}, {})
    assert config.ice_samples == 0 and config.n_estimators == 1000  # its own defaults
    assert config.n_estimators == pdpboot.forest.MIN_TREES  # the default draws no tree-count warning
    assert merge({"target": "y"}, {}).uncertainty == "bootstrap"
    data = tmp_path / "t.csv"
    regression_table().to_csv(data, index=False)  # a text column (one-hot encoded) and missing values (imputed)
    code, out = run_cli(["run", data, "--target", "y", "--n-estimators", 10, "--test-size", 0,
                         "--out", tmp_path / "out", *IJ], capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "out")
    model = joblib.load(folder / "model.joblib")["estimator"]
    assert hasattr(model, "steps")  # the run's Pipeline, read through its transform
    node = get_node(pdpboot.load(folder / "results.nc"), "colour").to_dataset()
    table = pd.read_csv(data).drop(columns="y")
    for level in node["colour"].values:  # the PD of the categorical column is the Pipeline's brute-force PD
        rows = table.copy()
        rows["colour"] = level
        np.testing.assert_allclose(node["pd"].sel(colour=level).values[0], model.predict(rows).mean(), rtol=1e-9)
    assert (node["pd_se"].values > 0).all()
