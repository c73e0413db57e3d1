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


# ----------------------------------------------------------------------------- issue 26: text read as missing (A.4)


def arthritis_like(n=84, seed=3):
    """The vcd Arthritis table's shape: Improved in {None, Some, Marked} (None is a level, not missing)."""
    rng = np.random.default_rng(seed)
    treatment = rng.choice(["Placebo", "Treated"], n)
    age = rng.integers(23, 75, n)
    score = (treatment == "Treated") * 1.2 + (age - 50) / 20 + rng.normal(0, 1, n)
    improved = np.where(score < 0.3, "None", np.where(score < 1.0, "Some", "Marked"))
    return pd.DataFrame({"Treatment": treatment, "Sex": rng.choice(["Female", "Male"], n), "Age": age,
                         "Improved": improved})


@pytest.mark.parametrize("suffix", [".csv", ".xlsx", ".parquet"])
def test_none_is_a_level_not_a_missing_value(tmp_path, suffix):
    from pdpboot.workflow.data import prepare, read_table
    from pdpboot.workflow.options import merge

    table = arthritis_like()
    table["AirBags"] = np.resize(["None", "Driver only", "Driver & Passenger", "NULL", "n/a"], len(table))
    path = tmp_path / f"arthritis{suffix}"
    {".csv": lambda: table.to_csv(path, index=False), ".xlsx": lambda: table.to_excel(path, index=False),
     ".parquet": lambda: table.to_parquet(path)}[suffix]()
    notes = []
    read = read_table(path, notes)
    assert read["Improved"].notna().all() and set(read["Improved"]) == {"None", "Some", "Marked"}
    assert set(read["AirBags"]) == {"None", "Driver only", "Driver & Passenger", "NULL", "n/a"}
    problem = prepare(merge({"target": "Improved"}, {}), read)
    assert len(problem.y) == 84 and problem.classes == ["Marked", "None", "Some"]  # 3 classes, no row lost
    if suffix != ".parquet":  # pandas' own reader would have turned these into missing values: say so
        said = " ".join(notes)
        assert "'None' in column(s) 'Improved', 'AirBags' is kept as a level" in said and "--na-values" in said
    # asked for: the user's tokens are missing values (command line and TOML key alike)
    dropped = read_table(path, na_values=["None"])
    assert dropped["Improved"].isna().sum() == (table["Improved"] == "None").sum()


def test_r_style_na_in_a_numeric_column_is_missing(tmp_path):
    """R's write.csv writes NA for a missing number: the column is numeric with missing values."""
    from pdpboot.workflow.data import read_table

    path = tmp_path / "r.csv"
    path.write_text('"Ozone","Solar.R","Month","label"\n41,190,5,"NA"\nNA,118,5,"None"\n12,NA,6,"a"\n'
                    '18,313,6,"NA"\n')
    notes = []
    read = read_table(path, notes)
    assert read["Ozone"].dtype == float and read["Ozone"].isna().tolist() == [False, True, False, False]
    assert read["Solar.R"].dtype == float and np.isnan(read["Solar.R"][2]) and read["Solar.R"][3] == 313
    assert read["label"].tolist() == ["NA", "None", "a", "NA"]  # text: the tokens are levels
    said = " ".join(notes)
    assert "'Ozone' ('NA', 1 row(s))" in said and "read as numbers, those rows missing" in said
    assert "'NA' in column(s) 'label' is kept as a level" in said
    # xlsx and parquet: the same column with NA-like text cells
    frame = pd.DataFrame({"x": [1.5, "NA", 2.5, "None"], "y": [1, 2, 3, 4]})
    frame.to_excel(tmp_path / "r.xlsx", index=False)
    again = read_table(tmp_path / "r.xlsx")
    assert again["x"].dtype == float and again["x"].isna().tolist() == [False, True, False, True]


def test_numeric_na_values_option_on_parquet(tmp_path):
    from pdpboot.workflow.data import read_table

    pd.DataFrame({"x": [1.0, -999.0, 3.0], "s": ["a", "missing", "b"]}).to_parquet(tmp_path / "t.parquet")
    read = read_table(tmp_path / "t.parquet", na_values=["-999", "missing"])
    assert read["x"].isna().tolist() == [False, True, False] and read["s"].isna().tolist() == [False, True, False]


def test_pandas_missing_tokens_are_all_known():
    """The tokens pdpboot keeps as text are pandas' own list (a pandas release adding one is caught here)."""
    from pandas.io.parsers.readers import STR_NA_VALUES

    from pdpboot.workflow.data import PANDAS_NA_TOKENS

    assert set(STR_NA_VALUES) <= PANDAS_NA_TOKENS


def test_cli_arthritis_keeps_three_classes(tmp_path, capsys):
    from .helpers import FAST, only_run_folder, run_cli

    path = tmp_path / "Arthritis.csv"
    arthritis_like().to_csv(path, index=False)
    code, _ = run_cli(["run", path, "--target", "Improved", "--out", tmp_path / "o", "--test-size", "0",
                       "--pd-features", "Age", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    import pdpboot
    from pdpboot.schema import get_node

    outputs = get_node(pdpboot.load(folder / "results.nc"), "Age")["output"].values.tolist()
    assert sorted(outputs) == ["Marked", "None", "Some"]
    summary = (folder / "summary.md").read_text()
    assert "kept as a level" in summary and "dropped" not in summary


# ----------------------------------------------------------------------------- decimal comma, duplicate headers


def test_decimal_comma_with_thousands_dots(tmp_path):
    """``4.184,81`` in a ';' CSV is 4184.81 (it was text, then dropped as an identifier)."""
    from pdpboot.workflow import InputError
    from pdpboot.workflow.data import read_table

    path = tmp_path / "eu.csv"
    path.write_text("Einkommen;Alter;Punkte\n4.184,81;34;1,5\n912,50;41;2\n12.034,00;29;NA\n1.000;52;3,25\n")
    notes = []
    read = read_table(path, notes)
    assert read["Einkommen"].tolist() == [4184.81, 912.5, 12034.0, 1000.0]
    assert read["Punkte"].iloc[[0, 1, 3]].tolist() == [1.5, 2.0, 3.25] and np.isnan(read["Punkte"][2])
    assert any("decimal comma" in n and "Einkommen" in n for n in notes)
    told = read_table(path, decimal=",")
    assert told["Einkommen"].tolist() == [4184.81, 912.5, 12034.0, 1000.0]
    # a dot that is not a thousands group (or a lone 4.184 without any 1.234,5 to show the convention): refused
    for bad_value in ("1.5", "12.34,5"):
        path.write_text("a;y\n" + "".join(f"{v};1\n" for v in ["3,5", "4,25", "7,0"] * 4 + [bad_value]))
        with pytest.raises(InputError, match=f"'{bad_value}' is not one"):
            read_table(path)
    path.write_text("a;y\n" + "".join(f"{v};1\n" for v in ["3,5", "4,25", "7,0"] * 4 + ["4.184"]))
    with pytest.raises(InputError, match="'4.184' is not one .or is ambiguous"):
        read_table(path)


@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_duplicate_headers_are_refused(tmp_path, suffix, capsys):
    from .helpers import bad

    path = tmp_path / f"dup{suffix}"
    if suffix == ".csv":
        path.write_text("a,a,y,b,b\n" + "1,2,3,4,5\n" * 30)
    else:
        frame = pd.DataFrame(np.ones((30, 5)), columns=["a", "a2", "y", "b", "b2"])
        frame.columns = ["a", "a", "y", "b", "b"]
        frame.to_excel(path, index=False)
    err = bad(["run", path, "--target", "y"], capsys, tmp_path / "o")
    assert "names column(s) 'a', 'b' more than once" in err


def test_a_header_with_a_dot_one_is_not_a_duplicate(tmp_path):
    from pdpboot.workflow.data import read_table

    path = tmp_path / "t.csv"
    path.write_text("a,a.1,y\n1,2,3\n")
    assert list(read_table(path).columns) == ["a", "a.1", "y"]
