"""The run's problem: task rules, result names, feature choice, and levels that look ordered (--level-order)."""

import re

import numpy as np
import pandas as pd
import pytest

from pdpboot.workflow.data import read_table
from pdpboot.workflow.options import merge, read_config_file
from pdpboot.workflow.problem import ordinal_order, prepare

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
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import prepare

    table = pd.DataFrame({"x": np.arange(100.0), "y": values})
    problem = prepare(merge({"target": "y", "task": task}, {}), table)
    assert (problem.task, problem.classes) == expected



def test_positive_class_goes_first():
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import prepare

    table = pd.DataFrame({"x": np.arange(100.0), "y": np.tile(["no", "yes"], 50)})
    assert prepare(merge({"target": "y"}, {}), table).outputs_first == ["yes", "no"]
    assert prepare(merge({"target": "y", "positive_class": "no"}, {}), table).outputs_first == ["no", "yes"]
    from pdpboot.workflow import InputError

    with pytest.raises(InputError, match="'maybe' is not a class"):
        prepare(merge({"target": "y", "positive_class": "maybe"}, {}), table)



def test_result_names_are_storable():
    from pdpboot.workflow.problem import result_name

    assert result_name("temp", set()) == "temp"
    assert result_name("=1+1", set()) == "_=1+1"
    assert result_name("a/b", set()) == "a\u2215b"
    assert result_name("output", set()) == "output_"  # reserved by the result schema
    assert result_name("trailing ", set()) == "trailing_"
    assert result_name("=x", {"_=x"}) == "_=x_2"



def test_numbers_with_currency_or_percent_signs_are_named_not_called_ids():
    """Hostile round 2: '$1,234.50' and '40%' columns were left out as row identifiers ("a model can only memorise
    them"), and a table of only such columns said "No usable feature columns are left" without a reason."""
    from pdpboot.workflow import InputError
    from pdpboot.workflow.options import RunConfig
    from pdpboot.workflow.problem import prepare

    rng = np.random.default_rng(0)
    n = 60
    table = pd.DataFrame({"price": [f"${p:,.2f}" for p in rng.uniform(100, 5000, n)],
                          "share": [f"{v:.1f}%" for v in rng.uniform(0, 100, n)],
                          "zip": [f"{z:05d}" for z in rng.permutation(99999)[:n]],
                          "x": np.arange(n) * 0.5 + 1, "y": rng.normal(size=n)})
    problem = prepare(RunConfig.from_dict({"data": "t.csv", "target": "y"}), table)
    assert problem.features == ["x"]
    notes = " ".join(problem.notes)
    assert "'price' not used: it holds numbers written as text with a currency or percent sign" in notes
    assert "'share' not used: it holds numbers written as text" in notes and "memorise" not in notes.split("'zip'")[0]
    assert "'zip' not used: it has a different value in every row" in notes  # plain digits: still an ID
    with pytest.raises(InputError, match=r"No usable feature columns are left \('price': it holds numbers"):
        prepare(RunConfig.from_dict({"data": "t.csv", "target": "y"}), table[["price", "share", "y"]])
    with pytest.raises(InputError, match=r"Feature 'price' holds numbers written as text"):
        prepare(RunConfig.from_dict({"data": "t.csv", "target": "y", "features": ["price", "x"]}), table)



def test_numbers_with_a_unit_word_are_named_not_used_as_levels():
    """Hostile round 3: blood pressure written '78.0 mmHg' (a few rows without the unit) became a categorical
    feature of 100 levels, 30 of them encoded, its PD drawn per level; now named like '$1,234' columns."""
    from pdpboot.workflow import InputError
    from pdpboot.workflow.options import RunConfig
    from pdpboot.workflow.problem import prepare

    rng = np.random.default_rng(1)
    n = 80
    bp = rng.uniform(60, 120, n)
    table = pd.DataFrame({"bp": [f"{v:.1f} mmHg" if k % 40 else f"{v:.1f}" for k, v in enumerate(bp)],
                          "room": [f"{k} {'AB'[k % 2]}" for k in range(n)],  # two different words: codes
                          "x": rng.normal(size=n), "y": rng.normal(size=n)})
    problem = prepare(RunConfig.from_dict({"data": "t.csv", "target": "y"}), table)
    assert "bp" not in problem.features
    assert "'bp' not used: it holds numbers written as text with the unit 'mmHg'" in " ".join(problem.notes)
    with pytest.raises(InputError, match=r"Feature 'bp' holds numbers written as text with the unit 'mmHg'"):
        prepare(RunConfig.from_dict({"data": "t.csv", "target": "y", "features": ["bp", "x"]}), table)



def test_day_month_dates_as_text_are_named_not_called_row_ids():
    """Hostile round 3: visit dates written '04/03/2020' were left out as a column that "identifies rows"."""
    from pdpboot.workflow.options import RunConfig
    from pdpboot.workflow.problem import prepare

    n = 60
    table = pd.DataFrame({"visit": pd.date_range("2020-01-01", periods=n, freq="3D").strftime("%d/%m/%Y"),
                          "x": np.arange(n) % 7, "y": np.arange(n) * 0.5})
    problem = prepare(RunConfig.from_dict({"data": "t.csv", "target": "y"}), table)
    assert problem.features == ["x"]
    notes = " ".join(problem.notes)
    assert "'visit' not used: it holds dates written with the day and month first (e.g. '01/01/2020')" in notes
    assert "identifies rows" not in notes

