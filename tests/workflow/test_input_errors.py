"""Bad input: one clear line, exit status 2, nothing left on disk; names and cells are data."""

import json
import sys

import numpy as np
import pandas as pd
import pytest

import pdpboot
from pdpboot.schema import get_node

from .helpers import (
    FAST,
    bad,
    only_run_folder,
    regression_table,
    run_cli,
)

# ----------------------------------------------------------------------------- bad input



@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    regression_table().to_csv(path, index=False)
    return path


def test_missing_file(tmp_path, capsys):
    err = bad(["run", tmp_path / "nope.csv", "--target", "y"], capsys, tmp_path / "o")
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
    err = bad(["run", tmp_path / name, "--target", "y"], capsys, tmp_path / "o")
    assert expected in err


def test_unknown_target_lists_columns_and_suggests(table_csv, tmp_path, capsys):
    err = bad(["run", table_csv, "--target", "colur"], capsys, tmp_path / "o")
    assert "Unknown target column 'colur'" in err and "Did you mean 'colour'?" in err
    assert "'x1', 'count', 'colour', 'y'" in err


def test_unknown_feature_and_pair(table_csv, tmp_path, capsys):
    err = bad(["run", table_csv, "--target", "y", "--features", "x1,cont"], capsys, tmp_path / "o")
    assert "'cont'" in err and "Did you mean 'count'?" in err
    err = bad(["run", table_csv, "--target", "y", "--pairs", "x1:x2"], capsys, tmp_path / "o")
    assert "'x2'" in err and "Available columns" in err


def test_simultaneous_with_too_few_resamples_is_refused_before_any_fit(table_csv, tmp_path, capsys):
    """Hostile round 2: ``--simultaneous --n-resamples 3`` fitted the model and the refits, then exited 1 with
    "PD failed: ... needs at least 20 resamples" (engel table, 68 s lost)."""
    err = bad(["run", table_csv, "--target", "y", "--simultaneous", "--n-resamples", "3"], capsys, tmp_path / "o")
    assert "--simultaneous at --confidence-level 0.95 needs --n-resamples 20 or more (got 3)" in err
    err = bad(["run", table_csv, "--target", "y", "--simultaneous", "--n-resamples", "19", "--confidence-level",
               "0.95"], capsys, tmp_path / "o")
    assert "(got 19)" in err
    err = bad(["run", table_csv, "--target", "y", "--simultaneous", "--n-resamples", "10", "--confidence-level",
               "0.99"], capsys, tmp_path / "o")
    assert "needs --n-resamples 100 or more" in err


@pytest.mark.parametrize("option", ["--labels", "--units"])
def test_labels_and_units_of_unknown_columns_are_refused(table_csv, tmp_path, capsys, option):
    """Hostile round 2: ``--labels 'colur=Colour'`` (a typo) was ignored without a word, the plots kept 'colour'."""
    err = bad(["run", table_csv, "--target", "y", option, "colur=Colour"], capsys, tmp_path / "o")
    assert f"Unknown {option} column 'colur'" in err and "Did you mean 'colour'?" in err


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
    err = bad(["run", tmp_path / "t.csv", "--target", column, "--features", "x", "--task", task],
               capsys, tmp_path / "o")
    assert expected in err and repr(column) in err


def test_too_few_rows(tmp_path, capsys):
    regression_table(n=12).to_csv(tmp_path / "t.csv", index=False)
    err = bad(["run", tmp_path / "t.csv", "--target", "y"], capsys, tmp_path / "o")
    assert "only 12 row(s)" in err.lower() and "at least 20" in err  # (the table's count, before any fit)


def test_bad_option_values(table_csv, tmp_path, capsys):
    err = bad(["run", table_csv, "--target", "y", "--confidence-level", "1.5"], capsys, tmp_path / "o")
    assert "--confidence-level" in err
    (tmp_path / "c.toml").write_text("n_resample = 5\n")
    err = bad(["run", table_csv, "--target", "y", "--config", tmp_path / "c.toml"], capsys, tmp_path / "o")
    assert "unknown option 'n_resample'" in err and "n_resamples" in err


def test_missing_pyarrow_names_the_extra(tmp_path, capsys, monkeypatch):
    regression_table().to_parquet(tmp_path / "t.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    err = bad(["run", tmp_path / "t.parquet", "--target", "y"], capsys, tmp_path / "o")
    assert 'pip install "pdpboot[parquet]"' in err


def test_missing_openpyxl_names_the_extra(table_csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    err = bad(["run", table_csv, "--target", "y"], capsys, tmp_path / "o")
    assert 'pip install "pdpboot[excel]"' in err


def test_failure_before_any_result_leaves_nothing(table_csv, tmp_path, capsys, monkeypatch):
    import pdpboot.workflow.run as run_module

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(run_module, "write_model", broken)
    code, captured = run_cli(["run", table_csv, "--target", "y", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 1 and "disk full" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "o").exists()


def test_failure_after_a_finished_effect_keeps_its_files(table_csv, tmp_path, capsys, monkeypatch):
    """A crash after results.nc was written (here: the workbook) keeps the finished files, in a folder named
    ``..._incomplete`` that says what it holds; nothing is left half-written."""
    import pdpboot.workflow.run as run_module

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(run_module, "write_workbook", broken)
    code, captured = run_cli(["run", table_csv, "--target", "y", "--out", tmp_path / "o", *FAST], capsys)
    err = captured.err.strip()
    assert code == 1 and "disk full" in err and "results.nc" in err and "Traceback" not in err
    assert err.count("\n") == 0
    (folder,) = list((tmp_path / "o").iterdir())  # no hidden partial folder either
    assert folder.name.startswith("pdpboot_") and folder.name.endswith("_incomplete")
    assert "results.nc" in (folder / "INCOMPLETE.txt").read_text()
    pdpboot.load(folder / "results.nc")  # complete: its checksums verify
    assert not (folder / "workbook.xlsx").exists() and not (folder / "summary.md").exists()


# ----------------------------------------------------------------------------- names and cells are data


INJECTED = '"); import os; os.system("x") #'


def test_column_names_and_cells_are_data(tmp_path, capsys):
    openpyxl = pytest.importorskip("openpyxl")
    rng = np.random.default_rng(3)
    n = 80
    table = pd.DataFrame({
        "=1+1": rng.normal(size=n),
        INJECTED: rng.normal(size=n),
        "../../evil/name": rng.choice(["=HYPERLINK(\"http://x\")", "@SUM(A1)", "+1", "-2"], n),
        "target": rng.normal(size=n),
    })
    table.to_csv(tmp_path / "t.csv", index=False)
    code, _ = run_cli(["run", tmp_path / "t.csv", "--target", "target", "--pairs", f"=1+1:{INJECTED}",
                    "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()
    for png in (folder / "plots").iterdir():
        assert png.parent == folder / "plots" and ".." not in png.name and png.suffix == ".png"
    assert len(list((folder / "plots").iterdir())) == 9  # 3 PD, 1 surface, overview, 3 target, importance
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


