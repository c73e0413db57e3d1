"""Reading tables and deciding the task (no fitting)."""


import numpy as np
import pandas as pd
import pytest

from .helpers import (
    regression_table,
)

# ----------------------------------------------------------------------------- reading and task rules (no fitting)


def test_read_table_formats_agree(tmp_path):
    from pdpboot.workflow.data import read_table

    table = regression_table(n=30)
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
