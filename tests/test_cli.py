"""End-to-end tests of the ``pdpboot`` command (pdpboot.cli and pdpboot.workflow).

Small tables, B = 5, few trees, 5-point grids: every run takes a few seconds.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.metrics import accuracy_score, f1_score, mean_absolute_error, r2_score, roc_auc_score

import pdpboot
from pdpboot.cli import main
from pdpboot.schema import get_node

openpyxl = pytest.importorskip("openpyxl")

FAST = ["--n-resamples", "5", "--n-estimators", "5", "--grid-resolution", "5", "--ice-samples", "10",
        "--n-jobs", "1", "--quiet"]
REPO = Path(pdpboot.__file__).resolve().parent.parent


def _regression_table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x1[rng.choice(n, 8, replace=False)] = np.nan
    count = rng.integers(0, 5, n)
    colour = rng.choice(["red", "green", "blue"], n).astype(object)
    colour[rng.choice(n, 5, replace=False)] = None
    y = np.nan_to_num(x1, nan=5.0) + 2 * count + 3 * (colour == "red") + rng.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "count": count, "colour": colour, "y": y})


def _classification_table(n=150, seed=1):
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x1[rng.choice(n, 6, replace=False)] = np.nan
    colour = rng.choice(["red", "green", "blue"], n)
    z = np.nan_to_num(x1, nan=5.0) - 5 + 2 * (colour == "red")
    label = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), "yes", "no")
    return pd.DataFrame({"x1": x1, "colour": colour, "size": rng.normal(size=n), "label": label})


def _run(args, capsys=None):
    code = main([str(a) for a in args])
    out = capsys.readouterr() if capsys is not None else None
    return code, out


def _only_run_folder(out: Path) -> Path:
    entries = list(out.iterdir())
    assert len(entries) == 1, entries
    assert entries[0].name.startswith("pdpboot_")
    return entries[0]


def _same(cells, values):
    """Workbook numbers equal the result's up to Excel's precision (openpyxl writes 16 digits)."""
    np.testing.assert_allclose(np.asarray(cells, dtype=float), values, rtol=1e-14, atol=0)


def _sheet_frame(ws) -> pd.DataFrame:
    rows = list(ws.iter_rows(values_only=True))
    return pd.DataFrame(rows[1:], columns=rows[0])


# ----------------------------------------------------------------------------- regression, end to end


@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("regression")
    data = base / "table.csv"
    _regression_table().to_csv(data, index=False)
    out = base / "runs"
    code = main(["run", str(data), "--target", "y", "--pairs", "x1:colour", "--out", str(out), *FAST])
    assert code == 0
    return data, _only_run_folder(out)


def test_regression_run_writes_every_output(regression_run):
    data, folder = regression_run
    for name in ("results.nc", "workbook.xlsx", "summary.md", "repro.py", "run.log",
                 "repro_inputs/config.json", "repro_inputs/data.csv"):
        assert (folder / name).is_file(), name
    assert (folder / "repro_inputs" / "data.csv").read_bytes() == data.read_bytes()
    pngs = sorted(p.name for p in (folder / "plots").glob("*.png"))
    assert pngs == ["overview.png", "pd2_x1__colour.png", "pd_colour.png", "pd_count.png", "pd_x1.png"]
    import matplotlib.image

    for png in pngs:
        assert matplotlib.image.imread(folder / "plots" / png).shape[0] > 100
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no partial folder left


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
    _, folder = regression_run
    res = pdpboot.load(folder / "results.nc")
    wb = openpyxl.load_workbook(folder / "workbook.xlsx")
    assert wb.sheetnames == ["Data", "TestPredictions", "Parameters", "Metrics",
                             "PD x1", "PD count", "PD colour", "PD2 x1 x colour"]
    data = _sheet_frame(wb["Data"])
    assert list(data.columns) == ["row", "x1", "count", "colour", "y"] and len(data) == 120
    sheet = _sheet_frame(wb["PD x1"])
    ds = get_node(res, "x1").to_dataset().sel(output="y")
    _same(sheet["x1"], ds["x1"].values)
    _same(sheet["pd"], ds["pd"].values)
    _same(sheet["pd_lower"], ds["pd_band"].sel(ci_bound="lower").values)
    _same(sheet["pd_upper"], ds["pd_band"].sel(ci_bound="upper").values)
    first = int(ds["instance"].values[0])
    _same(sheet[f"ice row {first}"], ds["ice"].sel(instance=first).values)
    pair = _sheet_frame(wb["PD2 x1 x colour"])
    surface = get_node(res, ("x1", "colour")).to_dataset().sel(output="y")
    assert len(pair) == 5 * 3
    for _, row in pair.iloc[[0, 7, 14]].iterrows():
        x1 = surface["x1"].values[np.argmin(np.abs(surface["x1"].values - row["x1"]))]
        assert row["pd"] == pytest.approx(surface["pd"].sel(x1=x1, colour=row["colour"]).item(), rel=1e-14)
    preds = _sheet_frame(wb["TestPredictions"])
    metrics = dict(_sheet_frame(wb["Metrics"])[["metric", "value"]].itertuples(index=False))
    assert len(preds) == 30 == metrics["n_test"] and metrics["n_train"] == 90
    assert metrics["MAE"] == pytest.approx(mean_absolute_error(preds["actual"], preds["predicted"]))
    assert metrics["R2"] == pytest.approx(r2_score(preds["actual"], preds["predicted"]))
    rmse = np.sqrt(np.mean((preds["actual"] - preds["predicted"]) ** 2))
    assert metrics["RMSE"] == pytest.approx(rmse)
    params = dict(_sheet_frame(wb["Parameters"]).itertuples(index=False))
    assert params["n_resamples"] == 5 and params["target"] == "y" and params["pairs"] == "x1:colour"
    assert len(params) == len(_sheet_frame(wb["Parameters"]))  # every parameter once


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
    code, out = _run(["reproduce", copy], capsys)
    assert code == 1 and "node 'x1', variable 'pd'" in out.err
    with open(copy / "repro_inputs" / "data.csv", "a") as fh:
        fh.write("1,2,red,3\n")
    code, out = _run(["reproduce", copy], capsys)
    assert code == 2 and "modified" in out.err


# ----------------------------------------------------------------------------- classification


@pytest.fixture(scope="module")
def classification_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("classification")
    data = base / "labels.csv"
    _classification_table().to_csv(data, index=False)
    out = base / "runs"
    code = main(["run", str(data), "--target", "label", "--pairs", "x1:colour", "--model", "linear",
                 "--out", str(out), *FAST])
    assert code == 0
    return _only_run_folder(out)


def test_classification_reports_probabilities_of_every_class(classification_run):
    folder = classification_run
    res = pdpboot.load(folder / "results.nc")
    assert res.attrs["task"] == "classification" and res.attrs["response"] == "predict_proba"
    ds = get_node(res, "x1").to_dataset()
    assert list(ds["output"].values) == ["no", "yes"]
    np.testing.assert_allclose(ds["pd"].sum("output"), 1.0)  # class probabilities, not averaged labels
    assert ((ds["pd"] > 0) & (ds["pd"] < 1)).all()
    assert float(ds["pd"].sel(output="yes").isel(x1=-1)) > float(ds["pd"].sel(output="yes").isel(x1=0))
    wb = openpyxl.load_workbook(folder / "workbook.xlsx")
    sheet = _sheet_frame(wb["PD x1"])
    assert list(sheet.columns[:4]) == ["x1", "pd [yes]", "pd_lower [yes]", "pd_upper [yes]"]  # positive first
    _same(sheet["pd [no]"], ds["pd"].sel(output="no").values)


def test_classification_metrics(classification_run):
    wb = openpyxl.load_workbook(classification_run / "workbook.xlsx")
    preds = _sheet_frame(wb["TestPredictions"])
    metrics = dict(_sheet_frame(wb["Metrics"])[["metric", "value"]].itertuples(index=False))
    assert list(preds.columns) == ["row", "actual", "predicted", "P(yes)", "P(no)"]
    assert metrics["accuracy"] == pytest.approx(accuracy_score(preds["actual"], preds["predicted"]))
    assert metrics["F1_macro"] == pytest.approx(f1_score(preds["actual"], preds["predicted"], average="macro"))
    assert metrics["F1_weighted"] == pytest.approx(f1_score(preds["actual"], preds["predicted"],
                                                            average="weighted"))
    assert metrics["ROC_AUC"] == pytest.approx(roc_auc_score(preds["actual"] == "yes", preds["P(yes)"]))
    # the stratified split keeps the class shares
    table = _classification_table()
    assert (preds["actual"] == "yes").sum() == round(0.25 * (table["label"] == "yes").sum()) or abs(
        (preds["actual"] == "yes").mean() - (table["label"] == "yes").mean()) < 0.03
    log = (classification_run / "run.log").read_text()
    assert "imputed with the training median" in log


def test_multiclass_plots_one_panel_per_class(tmp_path, capsys):
    table = _classification_table()
    table["label"] = np.where(table["x1"] > 6, 2, np.where(table["x1"] > 3, 1, 0))  # integer-coded classes
    table.loc[table["x1"].isna(), "label"] = 1
    table.to_csv(tmp_path / "three.csv", index=False)
    code, _ = _run(["run", tmp_path / "three.csv", "--target", "label", "--features", "x1,size",
                    "--no-workbook", "--ice-samples", "0", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0
    folder = _only_run_folder(tmp_path / "o")
    assert not (folder / "workbook.xlsx").exists()
    names = sorted(p.name for p in (folder / "plots").glob("*.png"))
    assert names == ["overview_class_0.png", "overview_class_1.png", "overview_class_2.png",
                     "pd_size.png", "pd_x1.png"]
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
    code, _ = _run(["run", tmp_path / "t.csv", "--target", "y", "--no-workbook", "--out", tmp_path / "o",
                    *FAST], capsys)
    assert code == 0
    folder = _only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    assert list(get_node(res, "month")["month"].values) == months  # not alphabetical
    levels = list(get_node(res, "id")["id"].values)
    assert 20 <= len(levels) <= 30 and "id000" in levels  # 30 most frequent, minus those only in test rows
    assert "191 distinct values" in (folder / "run.log").read_text()


# ----------------------------------------------------------------------------- options, config, demo


def test_config_file_and_command_line_precedence(tmp_path, capsys, monkeypatch):
    _regression_table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "c.toml").write_text(
        'data = "t.csv"\ntarget = "y"\nn-resamples = 9\ngrid_resolution = 4\nfeatures = ["x1", "count"]\n'
        'n_estimators = 5\nice_samples = 0\nworkbook = false\n')
    monkeypatch.chdir(tmp_path)
    code, _ = _run(["run", "--config", "c.toml", "--n-resamples", "3", "--out", "o", "--quiet"], capsys)
    assert code == 0
    res = pdpboot.load(_only_run_folder(tmp_path / "o") / "results.nc")
    assert res.attrs["n_resamples"] == 3  # the command line wins
    assert get_node(res, "x1").to_dataset().sizes["x1"] == 4  # from the file
    assert [n.attrs["features"] for n in res.children.values()] == [["x1"], ["count"]]


def test_demo_runs_and_says_where(tmp_path, capsys):
    code, out = _run(["demo", "--out", tmp_path, "--n-resamples", "3", "--n-estimators", "5",
                      "--grid-resolution", "5", "--ice-samples", "5", "--n-jobs", "1"], capsys)
    assert code == 0
    folder = _only_run_folder(tmp_path)
    assert str(folder) in out.out and "--n-resamples" in out.out
    res = pdpboot.load(folder / "results.nc")
    assert [tuple(n.attrs["features"]) for n in res.children.values()] == [
        ("Temperature",), ("Hour",), ("Day",), ("Temperature", "Hour")]
    assert "Fitting" in out.err and "Plot" in out.err  # progress on stderr


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--target", "--pairs", "--n-resamples", "--config", "--model", "examples:"):
        assert flag in text
    with pytest.raises(SystemExit):
        main(["--version"])
    assert pdpboot.__version__ in capsys.readouterr().out


def test_two_runs_never_share_a_folder(tmp_path, capsys):
    _regression_table().to_csv(tmp_path / "t.csv", index=False)
    args = ["run", tmp_path / "t.csv", "--target", "y", "--features", "x1", "--no-workbook", "--out",
            tmp_path / "o", *FAST]
    assert _run(args, capsys)[0] == 0
    assert _run(args, capsys)[0] == 0
    assert len(list((tmp_path / "o").iterdir())) == 2


# ----------------------------------------------------------------------------- bad input


def _bad(args, capsys, out: Path):
    code, captured = _run([*args, "--out", out, "--quiet"], capsys)
    assert code == 2
    err = captured.err.strip()
    assert err.startswith("pdpboot: error: ") and "\n" not in err and "Traceback" not in err
    assert not out.exists()  # nothing left on disk
    return err


@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    _regression_table().to_csv(path, index=False)
    return path


def test_missing_file(tmp_path, capsys):
    err = _bad(["run", tmp_path / "nope.csv", "--target", "y"], capsys, tmp_path / "o")
    assert "does not exist" in err and "nope.csv" in err


@pytest.mark.parametrize("name, content, expected", [
    ("table.json", b'{"a": 1}', "unsupported format '.json'"),
    ("table.csv", b"\x00\x01\x02binary\xff" * 20, "binary"),
    ("table.xlsx", b"not a zip file", "Excel"),
    ("table.parquet", b"not parquet", "Parquet"),
    ("table.csv", b"", "empty"),
    ("table.xls", b"old", ".xlsx"),
])
def test_unreadable_formats(tmp_path, capsys, name, content, expected):
    (tmp_path / name).write_bytes(content)
    err = _bad(["run", tmp_path / name, "--target", "y"], capsys, tmp_path / "o")
    assert expected in err


def test_unknown_target_lists_columns_and_suggests(table_csv, tmp_path, capsys):
    err = _bad(["run", table_csv, "--target", "colur"], capsys, tmp_path / "o")
    assert "Unknown target column 'colur'" in err and "Did you mean 'colour'?" in err
    assert "'x1', 'count', 'colour', 'y'" in err


def test_unknown_feature_and_pair(table_csv, tmp_path, capsys):
    err = _bad(["run", table_csv, "--target", "y", "--features", "x1,cont"], capsys, tmp_path / "o")
    assert "'cont'" in err and "Did you mean 'count'?" in err
    err = _bad(["run", table_csv, "--target", "y", "--pairs", "x1:x2"], capsys, tmp_path / "o")
    assert "'x2'" in err and "Available columns" in err


@pytest.mark.parametrize("column, task, expected", [
    ("constant", "auto", "is constant"),
    ("empty", "auto", "only missing values"),
    ("one_class", "classification", "single class"),
    ("integer_code", "classification", "integer-coded with 100 distinct values"),
    ("text", "regression", "not numeric"),
])
def test_bad_targets(tmp_path, capsys, column, task, expected):
    n = 100
    table = pd.DataFrame({"x": np.arange(n, dtype=float), "constant": 5.0, "empty": np.nan,
                          "one_class": "a", "integer_code": np.arange(n), "text": ["w"] * (n - 1) + ["v"]})
    table.to_csv(tmp_path / "t.csv", index=False)
    err = _bad(["run", tmp_path / "t.csv", "--target", column, "--features", "x", "--task", task],
               capsys, tmp_path / "o")
    assert expected in err and repr(column) in err


def test_too_few_rows(tmp_path, capsys):
    _regression_table(n=12).to_csv(tmp_path / "t.csv", index=False)
    err = _bad(["run", tmp_path / "t.csv", "--target", "y"], capsys, tmp_path / "o")
    assert "Only 12 row(s)" in err and "at least 20" in err


def test_bad_option_values(table_csv, tmp_path, capsys):
    err = _bad(["run", table_csv, "--target", "y", "--confidence-level", "1.5"], capsys, tmp_path / "o")
    assert "--confidence-level" in err
    (tmp_path / "c.toml").write_text("n_resample = 5\n")
    err = _bad(["run", table_csv, "--target", "y", "--config", tmp_path / "c.toml"], capsys, tmp_path / "o")
    assert "unknown option 'n_resample'" in err and "n_resamples" in err


def test_missing_pyarrow_names_the_extra(tmp_path, capsys, monkeypatch):
    _regression_table().to_parquet(tmp_path / "t.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    err = _bad(["run", tmp_path / "t.parquet", "--target", "y"], capsys, tmp_path / "o")
    assert 'pip install "pdpboot[parquet]"' in err


def test_missing_openpyxl_names_the_extra(table_csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    err = _bad(["run", table_csv, "--target", "y"], capsys, tmp_path / "o")
    assert 'pip install "pdpboot[excel]"' in err


def test_failure_midway_leaves_nothing(table_csv, tmp_path, capsys, monkeypatch):
    import pdpboot.workflow.run as run_module

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(run_module, "write_workbook", broken)
    code, captured = _run(["run", table_csv, "--target", "y", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 1 and "disk full" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- names and cells are data


INJECTED = '"); import os; os.system("x") #'


def test_column_names_and_cells_are_data(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 80
    table = pd.DataFrame({
        "=1+1": rng.normal(size=n),
        INJECTED: rng.normal(size=n),
        "../../evil/name": rng.choice(["=HYPERLINK(\"http://x\")", "@SUM(A1)", "+1", "-2"], n),
        "target": rng.normal(size=n),
    })
    table.to_csv(tmp_path / "t.csv", index=False)
    code, _ = _run(["run", tmp_path / "t.csv", "--target", "target", "--pairs", f"=1+1:{INJECTED}",
                    "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0
    folder = _only_run_folder(tmp_path / "o")
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()
    for png in (folder / "plots").iterdir():
        assert png.parent == folder / "plots" and ".." not in png.name and png.suffix == ".png"
    assert len(list((folder / "plots").iterdir())) == 5
    script = (folder / "repro.py").read_text()
    assert "=1+1" not in script and "os.system" not in script
    config = json.loads((folder / "repro_inputs" / "config.json").read_text())
    assert config["pairs"] == [["=1+1", INJECTED]]

    wb = openpyxl.load_workbook(folder / "workbook.xlsx")
    header = {c.value: c for c in wb["Data"][1]}
    for name in ("=1+1", INJECTED, "../../evil/name"):
        assert header[name].data_type == "s"
    assert header["=1+1"].quotePrefix
    values = {c.value: c for c in (row[3] for row in wb["Data"].iter_rows(min_row=2))}
    for text in ("=HYPERLINK(\"http://x\")", "@SUM(A1)", "+1", "-2"):
        assert values[text].data_type == "s" and values[text].quotePrefix  # text, not a formula or a number
    level_sheet = next(ws for ws in wb.worksheets if ws.title.startswith("PD ..")
                       or "evil" in ws.title)
    assert all(c.data_type == "s" for c in (row[0] for row in level_sheet.iter_rows(min_row=2)))
    assert all(c.data_type != "f" for ws in wb.worksheets for row in ws.iter_rows() for c in row)

    res = pdpboot.load(folder / "results.nc")
    names = json.loads(res.attrs["cli_display_names"])
    assert set(names.values()) == {"=1+1", INJECTED, "../../evil/name"}
    assert get_node(res, "_=1+1")["pd"].size == 5
    text = (folder / "summary.md").read_text()
    assert "=1+1" in text


# ----------------------------------------------------------------------------- reading and task rules (no fitting)


def test_read_table_formats_agree(tmp_path):
    from pdpboot.workflow.data import read_table

    table = _regression_table(n=30)
    table.to_csv(tmp_path / "a.csv", index=False)
    table.to_csv(tmp_path / "b.csv", index=False, sep=";")
    table.to_csv(tmp_path / "c.tsv", index=False, sep="\t")
    table.to_excel(tmp_path / "d.xlsx", index=False)
    table.to_parquet(tmp_path / "e.parquet")
    reference = read_table(tmp_path / "a.csv")
    for name in ("b.csv", "c.tsv", "d.xlsx", "e.parquet"):
        other = read_table(tmp_path / name)
        assert list(other.columns) == list(reference.columns), name
        np.testing.assert_allclose(other["x1"].astype(float), reference["x1"].astype(float))
        assert other["colour"].isna().sum() == 5 and set(other["colour"].dropna()) == {"red", "green", "blue"}


@pytest.mark.parametrize("values, task, expected", [
    (np.tile([0, 1], 50), "auto", ("classification", [0, 1])),
    (np.tile(["no", "yes"], 50), "auto", ("classification", ["no", "yes"])),
    (np.tile([1.0, 2.0, 3.0], 34)[:100], "auto", ("classification", [1, 2, 3])),
    (np.arange(100) % 40, "auto", ("regression", None)),
    (np.linspace(0, 1, 100), "auto", ("regression", None)),
    (np.arange(100) % 25, "classification", ("classification", list(range(25)))),
    (np.tile([0, 1], 50), "regression", ("regression", None)),
])
def test_task_rules(values, task, expected):
    from pdpboot.workflow.data import prepare
    from pdpboot.workflow.options import merge

    table = pd.DataFrame({"x": np.arange(100.0), "y": values})
    problem = prepare(merge({"target": "y", "task": task}, {}), table)
    assert (problem.task, problem.classes) == expected


def test_positive_class_goes_first():
    from pdpboot.workflow.data import prepare
    from pdpboot.workflow.options import merge

    table = pd.DataFrame({"x": np.arange(100.0), "y": np.tile(["no", "yes"], 50)})
    assert prepare(merge({"target": "y"}, {}), table).outputs_first == ["yes", "no"]
    assert prepare(merge({"target": "y", "positive_class": "no"}, {}), table).outputs_first == ["no", "yes"]
    from pdpboot.workflow import InputError

    with pytest.raises(InputError, match="'maybe' is not a class"):
        prepare(merge({"target": "y", "positive_class": "maybe"}, {}), table)


def test_result_names_are_storable():
    from pdpboot.workflow.data import result_name

    assert result_name("temp", set()) == "temp"
    assert result_name("=1+1", set()) == "_=1+1"
    assert result_name("a/b", set()) == "a\u2215b"
    assert result_name("output", set()) == "output_"  # reserved by the result schema
    assert result_name("trailing ", set()) == "trailing_"
    assert result_name("=x", {"_=x"}) == "_=x_2"
