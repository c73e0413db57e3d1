"""``pdpboot run --uncertainty debiased``: bands for the data's PD through the workflow's strategy registration."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import pdpboot
from pdpboot.schema import get_node
from pdpboot.workflow import InputError
from pdpboot.workflow.options import merge
from pdpboot.workflow.repro import main as repro_main

from .helpers import HAS_OPENPYXL, only_run_folder, run_cli
from .test_saved_files import KINDS, _check_run, _table, zarr_copies  # noqa: F401 - the fixture

DEBIASED = ["--uncertainty", "debiased", "--n-estimators", "20", "--grid-resolution", "6", "--quiet"]


def test_demo_end_to_end_every_file_reloads_and_reproduces(tmp_path, zarr_copies, capsys):  # noqa: F811
    code, out = run_cli(["demo", "--out", tmp_path / "out", *DEBIASED,
                         *([] if HAS_OPENPYXL else ["--no-workbook"])], capsys)
    assert code == 0, out.err
    folder = _check_run(tmp_path / "out", zarr_copies, ("pd",))
    res = pdpboot.load(folder / "results.nc")
    assert res.attrs["target"] == "dgp" and res.attrs["uncertainty"] == "debiased-crossfit"
    assert set(res.children) == {"Temperature", "Hour", "Day"}  # the demo's pair is dropped (1-D only)
    node = get_node(res, "Temperature").to_dataset()
    assert {"pd", "pd_se", "pd_band", "pd_plugin", "overlap", "effective_sample_size"} <= set(node)
    assert node["pd_band"].attrs["target"] == "dgp" and node["pd_band"].attrs["simultaneous"] == 0
    assert "ice" not in node and "pd_resamples" not in node
    summary = (folder / "summary.md").read_text()
    assert "about the data's PD" in summary and "no unmeasured confounding" in summary
    assert "Response: the data's Price." in summary and "predicted Price" not in summary
    assert "overview.png" in {p.name for p in (folder / "plots").iterdir()}
    assert repro_main(folder, []) == 0  # recomputed from repro_inputs/: the same file


def test_simultaneous_band_is_the_drawn_one_and_the_pointwise_is_kept(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _table(200).to_csv(data, index=False)
    code, out = run_cli(["run", data, "--target", "y", "--features", "x,grade", "--simultaneous", "--test-size", 0,
                         "--no-workbook", "--out", tmp_path / "out", *DEBIASED], capsys)
    assert code == 0, out.err
    node = get_node(pdpboot.load(only_run_folder(tmp_path / "out") / "results.nc"), "x").to_dataset()
    assert node["pd_band"].attrs["simultaneous"] == 1 and node["pd_band_pointwise"].attrs["simultaneous"] == 0
    band, point = node["pd_band"].values, node["pd_band_pointwise"].values
    ok = np.isfinite(band[0])
    assert ok.any() and (band[1][ok] - band[0][ok] > point[1][ok] - point[0][ok]).all()


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_feature_writes_files_that_load_verified(tmp_path, zarr_copies, capsys, kind):  # noqa: F811
    column, fmt = KINDS[kind]
    table = _table(200)
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        table["grade"] = pd.Categorical(table["grade"], categories=["low", "mid", "high"], ordered=True)
        data = tmp_path / "table.parquet"
        table.to_parquet(data)
    else:
        data = tmp_path / "table.csv"
        table.to_csv(data, index=False)
    features = ",".join(dict.fromkeys([column, "x"]))
    code, out = run_cli(["run", data, "--target", "y", "--features", features, "--no-workbook",
                         "--out", tmp_path / "out", *DEBIASED], capsys)
    assert code == 0, out.err
    folder = _check_run(tmp_path / "out", zarr_copies, ("pd",))
    result = pdpboot.load(folder / "results.nc")
    assert column in result.children and result.attrs["target"] == "dgp"
    xr.testing.assert_identical(pdpboot.load(folder / "results.nc"), result)


@pytest.mark.parametrize("extra,match", [
    (("effect", "ale"), "computes PD only"),
    (("interactions", "30"), "no H statistics"),
    (("ice_samples", "10"), "no ICE curves"),
    (("pairs", "a:b"), "1-D curves only"),
    (("groups", "c"), "cluster bootstrap"),
    (("model_file", "m.joblib"), "not a fitted --model-file"),
])
def test_what_debiased_cannot_do_is_refused_before_reading_anything(extra, match):
    with pytest.raises(InputError, match=match):
        merge({"target": "y", "uncertainty": "debiased", extra[0]: extra[1]}, {})


def test_debiased_defaults():
    config = merge({"target": "y", "uncertainty": "debiased"}, {})
    assert config.ice_samples == 0 and config.pairs == []
    with pytest.raises(InputError, match="uncertainty"):
        merge({"target": "y", "uncertainty": "debiassed"}, {})


def test_summary_reports_no_band_where_thin_overlap_leaves_none(tmp_path, capsys):
    """x is (nearly) a copy of z: no grid value of x has overlap, so the summary must not print a width or a
    largest SE for it (it printed the SE of grid values without a band); z keeps its numbers."""
    gen = np.random.default_rng(0)
    z = gen.normal(size=300)
    table = pd.DataFrame({"x": z + 1e-3 * gen.normal(size=300), "z": z, "w": gen.normal(size=300)})
    table["y"] = table["x"] + table["w"] + gen.normal(size=300)
    data = tmp_path / "t.csv"
    table.to_csv(data, index=False)
    code, out = run_cli(["run", data, "--target", "y", "--features", "x,z,w", "--test-size", 0, "--no-workbook",
                         "--out", tmp_path / "out", *DEBIASED], capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "out")
    node = get_node(pdpboot.load(folder / "results.nc"), "x").to_dataset()
    assert not np.isfinite(node["pd_band"].values).any()  # the premise: x has no band anywhere
    rows = {line.split("|")[2].strip(): line for line in (folder / "summary.md").read_text().splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert "no band (thin overlap everywhere)" in rows["x"]
    assert "no band" not in rows["w"] and rows["w"].count("|") == 6


def test_numeric_feature_with_missing_values_is_refused_before_any_fit(tmp_path, capsys, monkeypatch):
    """Hostile round 3: a parquet with an Int64 feature holding NA fitted the model five times, then exited 1
    ("PD failed: ... has missing values"); now exit 2 before any fit, naming the feature and the fixes."""
    import pdpboot.workflow.strategy as compute

    from .helpers import FAST, bad, regression_table

    def no_split(*args, **kwargs):
        raise AssertionError("the run went on to split and fit")

    monkeypatch.setattr(compute, "split", no_split)
    path = tmp_path / "t.parquet"
    regression_table().to_parquet(path)  # x1 has 8 missing values
    fast = [a for i, a in enumerate(FAST) if "--ice-samples" not in (a, FAST[i - 1])]
    err = bad(["run", path, "--target", "y", "--uncertainty", "debiased", "--features", "x1,count", "--ice-samples",
               "0", *fast], capsys, tmp_path / "o")
    assert "'x1' has 8 missing value(s)" in err and "--uncertainty bootstrap" in err, err
