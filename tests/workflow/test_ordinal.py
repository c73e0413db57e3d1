"""Levels that look ordered: ordered categoricals are respected; text scales get a --level-order suggestion."""

import re

import numpy as np
import pandas as pd
import pytest

from pdpboot.workflow.data import prepare, read_table
from pdpboot.workflow.options import merge, read_config_file
from pdpboot.workflow.ordinal import ordinal_order

from .helpers import FAST, only_run_folder, run_cli


def _table(column, n=90, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "grade": np.resize(column, n), "y": rng.normal(size=n)})


def _notes(table, config_file=None, **options):
    return prepare(merge({"target": "y", **options}, config_file or {}), table)


@pytest.mark.parametrize(("levels", "order"), [
    (["Some", "None", "Marked"], ["None", "Some", "Marked"]),
    (["High", "Low", "Medium"], ["Low", "Medium", "High"]),
    (["large", "small", "medium"], ["small", "medium", "large"]),
    (["Agree", "Strongly disagree", "Neutral", "Disagree", "Strongly agree"],
     ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]),
    (["XL", "S", "M", "L"], ["S", "M", "L", "XL"]),
    (["often", "never", "sometimes"], ["never", "sometimes", "often"]),
    (["red", "green", "blue"], None),
    (["Low", "High"], None),  # two levels: no order worth suggesting
    (["low", "LOW", "high"], None),  # ambiguous
])
def test_which_levels_look_ordered(levels, order):
    assert ordinal_order(levels) == order


def test_text_scale_gets_a_level_order_suggestion_that_works():
    table = _table(["Some", "None", "Marked"])
    problem = _notes(table)
    assert problem.custom_values["grade"].tolist() == ["Marked", "None", "Some"]  # alphabetical, as before
    (note,) = [n for n in problem.notes if "look ordered" in n]
    assert "None < Some < Marked" in note
    flag = re.search(r"--level-order '([^']+)'", note).group(1)
    assert flag == "grade=None,Some,Marked"
    assert '[level_order] grade = ["None", "Some", "Marked"]' in note
    again = _notes(table, level_order=[flag])  # the suggested option gives the order, without a note
    assert again.custom_values["grade"].tolist() == ["None", "Some", "Marked"]
    assert not [n for n in again.notes if "look ordered" in n]


def test_suggested_config_file_key_works(tmp_path):
    table = _table(["High", "Low", "Medium"])
    (note,) = [n for n in _notes(table).notes if "look ordered" in n]
    toml = re.search(r"config file: (\[level_order\]) (.+)\)\.$", note)
    path = tmp_path / "run.toml"
    path.write_text(f"{toml.group(1)}\n{toml.group(2)}\n")
    problem = _notes(table, config_file=read_config_file(path))
    assert problem.custom_values["grade"].tolist() == ["Low", "Medium", "High"]


def test_ordered_categoricals_from_parquet_and_xlsx_are_respected(tmp_path):
    table = _table(["high", "low", "medium"])
    table["grade"] = pd.Categorical(table["grade"], categories=["low", "medium", "high"], ordered=True)
    path = tmp_path / "t.parquet"
    table.to_parquet(path)
    read = read_table(path)
    assert read["grade"].cat.ordered
    problem = _notes(read)
    assert "grade" not in problem.custom_values  # the grid keeps the category order: low, medium, high
    assert not [n for n in problem.notes if "look ordered" in n]
    # an unordered category whose categories are alphabetical gets the suggestion
    table["grade"] = pd.Categorical(np.resize(["high", "low", "medium"], len(table)))
    assert [n for n in _notes(table).notes if "look ordered" in n and "the category's order" in n]
    # Excel holds no categories: text levels, suggested like a CSV's
    pytest.importorskip("openpyxl")
    xlsx = tmp_path / "t.xlsx"
    table.assign(grade=table["grade"].astype(str)).to_excel(xlsx, index=False)
    assert [n for n in _notes(read_table(xlsx)).notes if "low < medium < high" in n]


def test_summary_suggests_the_level_order(tmp_path, capsys):
    _table(["Marked", "None", "Some"], n=80).to_csv(tmp_path / "t.csv", index=False)
    code, _ = run_cli(["run", tmp_path / "t.csv", "--target", "y", "--no-workbook", "--out", tmp_path / "o", *FAST],
                      capsys)
    assert code == 0
    summary = (only_run_folder(tmp_path / "o") / "summary.md").read_text()
    done = summary.split("## What was done to the data", 1)[1]
    assert "--level-order 'grade=None,Some,Marked'" in done
