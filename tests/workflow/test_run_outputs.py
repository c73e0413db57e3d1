"""A whole run end to end: every output file, the result schema, workbook, summary and repro."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.metrics import accuracy_score, f1_score, mean_absolute_error, r2_score, roc_auc_score

import pdpboot
from pdpboot.cli import main
from pdpboot.schema import get_node

from .helpers import (
    FAST,
    HAS_OPENPYXL,
    REPO,
    classification_table,
    only_run_folder,
    regression_table,
    run_cli,
    same,
    sheet_frame,
)

# ----------------------------------------------------------------------------- regression, end to end


@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("regression")
    data = base / "table.csv"
    regression_table().to_csv(data, index=False)
    out = base / "runs"
    code = main(["run", str(data), "--target", "y", "--pairs", "x1:colour", "--out", str(out), *FAST])
    assert code == 0
    return data, only_run_folder(out)


def test_regression_run_writes_every_output(regression_run):
    data, folder = regression_run
    for name in ("results.nc", *(["workbook.xlsx"] if HAS_OPENPYXL else []), "summary.md", "repro.py", "run.log",
                 "repro_inputs/config.json", "repro_inputs/data.csv"):
        assert (folder / name).is_file(), name
    assert (folder / "repro_inputs" / "data.csv").read_bytes() == data.read_bytes()
    pngs = sorted(p.name for p in (folder / "plots").glob("*.png"))
    assert pngs == ["importance.png", "overview.png", "pd2_x1__colour.png", "pd_colour.png", "pd_count.png",
                    "pd_x1.png", "target_colour.png", "target_count.png", "target_x1.png"]
    import matplotlib.image

    for png in pngs:
        assert matplotlib.image.imread(folder / "plots" / png).shape[0] > 100
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no unfinished folder left
    assert not (folder / "checkpoint").exists() and not (folder / "INCOMPLETE.txt").exists()


def test_regression_results_follow_the_schema(regression_run):
    _, folder = regression_run
    res = pdpboot.load(folder / "results.nc")
    assert [tuple(n.attrs["features"]) for n in res.children.values()] == [
        ("x1",), ("count",), ("colour",), ("x1", "colour")]
    assert res.attrs["n_resamples"] == 5 and res.attrs["task"] == "regression"
    colour = get_node(res, "colour").to_dataset()
    assert list(colour["colour"].values) == ["blue", "green", "red"]  # original levels, in order of appearance
    assert colour["pd"].sel(output="y", colour="red") > colour["pd"].sel(output="y", colour="blue")
    x1 = get_node(res, "x1").to_dataset()
    for var in ("pd_band", "pd_resamples", "ice", "ice_sd_band", "heterogeneity_index_band"):
        assert var in x1, var
    assert x1.sizes["instance"] == 10 and x1.sizes["x1"] == 5
    assert list(get_node(res, "count").to_dataset()["count"].values) == [0, 1, 2, 3, 4]
    config = json.loads((folder / "repro_inputs" / "config.json").read_text())
    assert res.attrs["created"] == config["created"]
    assert json.loads(res.attrs["cli_config"]) == config


def test_regression_workbook_matches_results(regression_run):
    openpyxl = pytest.importorskip("openpyxl")
    _, folder = regression_run
    res = pdpboot.load(folder / "results.nc")
    wb = openpyxl.load_workbook(folder / "workbook.xlsx")
    assert wb.sheetnames == ["Data", "TestPredictions", "Parameters", "Metrics", "PD importance",
                             "PD x1", "PD count", "PD colour", "PD2 x1 x colour"]
    data = sheet_frame(wb["Data"])
    assert list(data.columns) == ["row", "x1", "count", "colour", "y"] and len(data) == 120
    sheet = sheet_frame(wb["PD x1"])
    ds = get_node(res, "x1").to_dataset().sel(output="y")
    same(sheet["x1"], ds["x1"].values)
    same(sheet["pd"], ds["pd"].values)
    same(sheet["pd_lower"], ds["pd_band"].sel(ci_bound="lower").values)
    same(sheet["pd_upper"], ds["pd_band"].sel(ci_bound="upper").values)
    first = int(ds["instance"].values[0])
    same(sheet[f"ice row {first}"], ds["ice"].sel(instance=first).values)
    pair = sheet_frame(wb["PD2 x1 x colour"])
    surface = get_node(res, ("x1", "colour")).to_dataset().sel(output="y")
    assert len(pair) == 5 * 3
    for _, row in pair.iloc[[0, 7, 14]].iterrows():
        x1 = surface["x1"].values[np.argmin(np.abs(surface["x1"].values - row["x1"]))]
        assert row["pd"] == pytest.approx(surface["pd"].sel(x1=x1, colour=row["colour"]).item(), rel=1e-14)
    preds = sheet_frame(wb["TestPredictions"])
    metrics = dict(sheet_frame(wb["Metrics"])[["metric", "value"]].itertuples(index=False))
    assert len(preds) == 30 == metrics["n_test"] and metrics["n_train"] == 90
    assert metrics["MAE"] == pytest.approx(mean_absolute_error(preds["actual"], preds["predicted"]))
    assert metrics["R2"] == pytest.approx(r2_score(preds["actual"], preds["predicted"]))
    rmse = np.sqrt(np.mean((preds["actual"] - preds["predicted"]) ** 2))
    assert metrics["RMSE"] == pytest.approx(rmse)
    params = dict(sheet_frame(wb["Parameters"]).itertuples(index=False))
    assert params["n_resamples"] == 5 and params["target"] == "y" and params["pairs"] == "x1:colour"
    assert len(params) == len(sheet_frame(wb["Parameters"]))  # every parameter once


def test_regression_summary_and_log(regression_run):
    _, folder = regression_run
    res = pdpboot.load(folder / "results.nc")
    text = (folder / "summary.md").read_text()
    ranges = {f: float(get_node(res, f)["pd"].max() - get_node(res, f)["pd"].min()) for f in ("x1", "count", "colour")}
    expected = sorted(ranges, key=lambda f: -ranges[f])
    rows = [line for line in text.splitlines() if line.startswith("| 1 |") or line.startswith("| 2 |")
            or line.startswith("| 3 |")]
    assert [r.split("|")[2].strip() for r in rows] == expected
    assert f"{ranges[expected[0]]:.4g}" in rows[0]
    assert "RMSE" in text and "heterogeneity index" in text.lower() and "--n-resamples" in text
    log = (folder / "run.log").read_text()
    assert "one-hot encoded" in log and "handles them natively" in log  # what was done to the data


def test_repro_script_reproduces_results_identically(regression_run, tmp_path):
    _, folder = regression_run
    script = (folder / "repro.py").read_text()
    assert "x1" not in script and "colour" not in script  # names are data, in repro_inputs/config.json
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    new = tmp_path / "again.nc"
    proc = subprocess.run([sys.executable, "repro.py", "--output", str(new)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "byte-identical" in proc.stdout
    xr.testing.assert_identical(pdpboot.load(new), pdpboot.load(folder / "results.nc"))
    assert new.read_bytes() == (folder / "results.nc").read_bytes()


def test_reproduce_detects_changes(regression_run, tmp_path, capsys):
    import shutil

    _, folder = regression_run
    copy = tmp_path / "run"
    shutil.copytree(folder, copy)
    res = pdpboot.load(copy / "results.nc")
    res["x1"].dataset = res["x1"].to_dataset().assign(pd=res["x1"]["pd"] + 1e-9)
    pdpboot.save(res, copy / "results.nc")
    code, out = run_cli(["reproduce", copy], capsys)
    assert code == 1 and "node 'x1', variable 'pd'" in out.err
    with open(copy / "repro_inputs" / "data.csv", "a") as fh:
        fh.write("1,2,red,3\n")
    code, out = run_cli(["reproduce", copy], capsys)
    assert code == 2 and "modified" in out.err


# ----------------------------------------------------------------------------- classification


@pytest.fixture(scope="module")
def classification_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("classification")
    data = base / "labels.csv"
    classification_table().to_csv(data, index=False)
    out = base / "runs"
    code = main(["run", str(data), "--target", "label", "--pairs", "x1:colour", "--model", "linear",
                 "--out", str(out), *FAST])
    assert code == 0
    return only_run_folder(out)


def test_classification_reports_probabilities_of_every_class(classification_run):
    openpyxl = pytest.importorskip("openpyxl")
    folder = classification_run
    res = pdpboot.load(folder / "results.nc")
    assert res.attrs["task"] == "classification" and res.attrs["response"] == "predict_proba"
    ds = get_node(res, "x1").to_dataset()
    assert list(ds["output"].values) == ["no", "yes"]
    np.testing.assert_allclose(ds["pd"].sum("output"), 1.0)  # class probabilities, not averaged labels
    assert ((ds["pd"] > 0) & (ds["pd"] < 1)).all()
    assert float(ds["pd"].sel(output="yes").isel(x1=-1)) > float(ds["pd"].sel(output="yes").isel(x1=0))
    wb = openpyxl.load_workbook(folder / "workbook.xlsx")
    sheet = sheet_frame(wb["PD x1"])
    assert list(sheet.columns[:4]) == ["x1", "pd [yes]", "pd_lower [yes]", "pd_upper [yes]"]  # positive first
    same(sheet["pd [no]"], ds["pd"].sel(output="no").values)


def test_classification_keeps_the_target_name(classification_run):
    """results.nc and the report's title name the target, not "class"."""
    assert pdpboot.load(classification_run / "results.nc").attrs["target_name"] == "label"
    assert "<title>pdpboot report: label</title>" in (classification_run / "report.html").read_text(encoding="utf-8")


def test_classification_metrics(classification_run):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.load_workbook(classification_run / "workbook.xlsx")
    preds = sheet_frame(wb["TestPredictions"])
    metrics = dict(sheet_frame(wb["Metrics"])[["metric", "value"]].itertuples(index=False))
    assert list(preds.columns) == ["row", "actual", "predicted", "P(yes)", "P(no)"]
    assert metrics["accuracy"] == pytest.approx(accuracy_score(preds["actual"], preds["predicted"]))
    assert metrics["F1_macro"] == pytest.approx(f1_score(preds["actual"], preds["predicted"], average="macro"))
    assert metrics["F1_weighted"] == pytest.approx(f1_score(preds["actual"], preds["predicted"],
                                                            average="weighted"))
    assert metrics["ROC_AUC"] == pytest.approx(roc_auc_score(preds["actual"] == "yes", preds["P(yes)"]))
    # the stratified split keeps the class shares
    table = classification_table()
    assert (preds["actual"] == "yes").sum() == round(0.25 * (table["label"] == "yes").sum()) or abs(
        (preds["actual"] == "yes").mean() - (table["label"] == "yes").mean()) < 0.03
    log = (classification_run / "run.log").read_text()
    assert "imputed with the training median" in log


def test_multiclass_plots_one_panel_per_class(tmp_path, capsys):
    table = classification_table()
    table["label"] = np.where(table["x1"] > 6, 2, np.where(table["x1"] > 3, 1, 0))  # integer-coded classes
    table.loc[table["x1"].isna(), "label"] = 1
    table.to_csv(tmp_path / "three.csv", index=False)
    code, _ = run_cli(["run", tmp_path / "three.csv", "--target", "label", "--features", "x1,size",
                    "--no-workbook", "--ice-samples", "0", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    assert not (folder / "workbook.xlsx").exists()
    names = sorted(p.name for p in (folder / "plots").glob("*.png"))
    assert names == ["importance.png", "overview_class_0.png", "overview_class_1.png", "overview_class_2.png",
                     "pd_size.png", "pd_x1.png", "target_size.png", "target_x1.png"]
    res = pdpboot.load(folder / "results.nc")
    assert list(get_node(res, "x1")["output"].values) == [0, 1, 2]
    text = (folder / "summary.md").read_text()
    assert "accuracy" in text and "ROC\\_AUC" in text and "P(class = 2)" in text


def test_text_levels_in_order_of_appearance_and_rare_levels_grouped(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 200
    months = ["Jan", "Feb", "Mar", "Apr"]
    ids = [f"id{k:03d}" for k in range(n)]  # 200 distinct values: PD on the 30 most frequent
    table = pd.DataFrame({"month": np.repeat(months, n // 4), "id": ids, "y": rng.normal(size=n)})
    table.loc[:9, "id"] = "id000"  # the most frequent level
    table.to_csv(tmp_path / "t.csv", index=False)
    # 191 distinct values in 200 rows names rows (left out by default, issue 26 D): --keep uses it
    code, _ = run_cli(["run", tmp_path / "t.csv", "--target", "y", "--no-workbook", "--out", tmp_path / "o",
                       "--keep", "id", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    assert list(get_node(res, "month")["month"].values) == months  # not alphabetical
    levels = list(get_node(res, "id")["id"].values)
    assert 20 <= len(levels) <= 30 and "id000" in levels  # 30 most frequent, minus those only in test rows
    assert "191 distinct values" in (folder / "run.log").read_text()




def test_importance_in_summary_and_workbook(regression_run):
    _, folder = regression_run
    res = pdpboot.load(folder / "results.nc")
    text = (folder / "summary.md").read_text()
    section = text.split("## PD-based feature importance", 1)[1].split("\n## ")[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0] == [" feature ", " importance ", " interval ", " measure "]
    by_hand = {}
    for f in ("x1", "count", "colour"):  # Greenwell et al.: SD over the grid; range / 4 for levels
        curve = get_node(res, f)["pd"].isel(output=0).values
        by_hand[f] = np.ptp(curve) / 4 if f == "colour" else np.std(curve, ddof=1)
    assert [r[0].strip() for r in rows[1:]] == sorted(by_hand, key=lambda f: -by_hand[f])
    for r in rows[1:]:
        assert float(r[1]) == pytest.approx(by_hand[r[0].strip()], rel=1e-3)
    assert rows[1 + sorted(by_hand, key=lambda f: -by_hand[f]).index("colour")][3].strip() == "range / 4"
    if HAS_OPENPYXL:
        import openpyxl

        sheet = sheet_frame(openpyxl.load_workbook(folder / "workbook.xlsx")["PD importance"])
        for feature, value in zip(sheet["feature"], sheet["importance"]):
            assert value == pytest.approx(by_hand[feature], rel=1e-12)
        assert (sheet["lower"] <= sheet["upper"]).all()


def test_regression_run_writes_a_self_contained_report(regression_run, tmp_path):
    import base64
    import re

    _, folder = regression_run
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert sorted(re.findall(r'data-key="([^"]*)"', page)) == ["colour", "count", "x1", "x1__colour"]
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert "`report.html`" in summary  # listed among the files
    for heading in ("Test metrics", "Features ranked by the range of their PD curve", "What was done to the data",
                    "Precision", "Provenance"):
        assert f">{heading}</h2>" in page, heading
    # the overview is not redrawn: embedded as the run's own PNG, byte for byte
    embedded = re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1)
    assert base64.b64decode(embedded) == (folder / "plots" / "overview.png").read_bytes()
    # per-feature and per-pair PNGs are drawn interactive instead; every other plot is embedded
    others = [p for p in (folder / "plots").glob("*.png") if not p.name.startswith(("pd_", "pd2_"))]
    assert page.count("data:image/png") == len(others) >= 1
    assert "pdpboot run table.csv --target y --pairs x1:colour" in page
    # `pdpboot report FOLDER -o` writes the same report again
    again = tmp_path / "again.html"
    assert main(["report", str(folder), "-o", str(again)]) == 0
    strip = re.compile(r"Made by pdpboot [^ ]+ on [^.]+\.")
    assert strip.sub("", again.read_text(encoding="utf-8")) == strip.sub("", page)
