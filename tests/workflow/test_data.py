"""Reading tables: formats, separators, decimal commas, missing-value marks (no fitting)."""


import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    from pdpboot.workflow.data import read_table
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import prepare

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
    path.write_text("x,y,only\n1,2,NA\n3,4,nan\n")  # spellings of one mark (several marks: levels, see below)
    notes = []
    assert read_table(path, notes)["only"].isna().all()
    assert "Column 'only' holds only missing-value marks ('NA', 'nan'): read as missing." in notes
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


def test_a_column_of_several_missing_marks_is_text(tmp_path):
    """A target whose classes are the words 'None', 'NA' and 'null' was read as missing throughout ("Target has
    only missing values"): tokens of several marks are levels (said in a note); one mark alone stays missing."""
    from pdpboot.workflow.data import read_table

    path = tmp_path / "t.csv"
    path.write_text("x,cls,empty\n" + "".join(f"{k},{['None', 'NA', 'null'][k % 3]},{['NA', 'NaN'][k % 2]}\n"
                                                for k in range(30)))
    notes = []
    read = read_table(path, notes)
    assert read["cls"].tolist() == [["None", "NA", "null"][k % 3] for k in range(30)]
    assert read["empty"].isna().all()  # NA and NaN: spellings of one mark, missing throughout
    assert any("'None' in column(s) 'cls' is kept as a level" in n for n in notes)


def test_decimal_comma_numbers_in_exponent_notation(tmp_path):
    """``pandas.to_csv(sep=";", decimal=",")`` (and Excel) write tiny values as ``7,9e-05``: numbers, not a
    refusal ("'7,913883691088233e-05' is not one")."""
    from pdpboot.workflow.data import read_table

    values = np.array([7.913883691088233e-05, -0.04, 1.5e12, 2.25, -3.0e-7])
    path = tmp_path / "eu.csv"
    pd.DataFrame({"a": values, "y": np.arange(5.0)}).to_csv(path, sep=";", decimal=",", index=False)
    assert "7,913883691088233e-05" in path.read_text()
    np.testing.assert_array_equal(read_table(path)["a"].to_numpy(), values)


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
    assert read_table(path, decimal=",")["a"].iloc[-1] == 4184.0  # told: the dot separates thousands
    # a whole column of 1.234-like numbers next to decimal commas: 1.234 or 1234? refused, naming both fixes
    path.write_text("Preis;Menge\n" + "".join(f"{p};{m}\n" for p, m in [("3,5", "1.250"), ("4,25", "2.000"),
                                                                          ("7,0", "12.500")] * 4))
    with pytest.raises(InputError, match="'Menge'.*'1.250'.*--decimal , .dots separate thousands. or --decimal ."):
        read_table(path)
    assert read_table(path, decimal=",")["Menge"].tolist()[:3] == [1250.0, 2000.0, 12500.0]
    assert read_table(path, decimal=".")["Menge"].tolist()[:3] == [1.25, 2.0, 12.5]


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


def test_a_numeric_column_with_an_unknown_marker_is_named(tmp_path):
    """UCI tables write '?' for a missing number: the column is text, and the note names the fix."""
    from pdpboot.workflow.data import read_table

    path = tmp_path / "uci.csv"
    path.write_text("horsepower,mpg\n" + "".join(f"{v},{k}\n" for k, v in enumerate([*range(100, 119), "?"] * 3)))
    notes = []
    assert read_table(path, notes)["horsepower"].dtype != float
    assert any("'horsepower' holds numbers and the text '?' (3 row(s))" in n and "--na-values '?'" in n
               for n in notes)
    assert read_table(path, na_values=["?"])["horsepower"].isna().sum() == 3


def test_na_values_from_the_config_file_and_huge_integers_stay_text(tmp_path):
    from pdpboot.workflow.data import read_table
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import load_problem

    path = tmp_path / "arthritis.csv"
    arthritis_like().to_csv(path, index=False)
    config = merge({}, {"target": "Improved", "na_values": ["None"]})  # the TOML key na_values
    _, problem = load_problem(config, path)
    assert set(problem.classes) == {"Some", "Marked"} and "row(s) with a missing target value were dropped" in \
        " ".join(problem.notes)
    path.write_text("id,y\n" + "".join(f"{123456789012345678901234 + k},{k}\n" for k in range(30)))
    value = read_table(path)["id"].iloc[3]
    assert value == 123456789012345678901237 and not isinstance(value, float)  # no float that lost its digits


# ----------------------------------------------------------------------------- the class: no cell silently lost

_TOKENS = sorted({"NA", "None", "NULL", "n/a", "N/A", "nan", "NaN", "null", "#N/A", "<NA>", "-nan", "1.#IND"})


@st.composite
def _csv_columns(draw):
    """Columns of cells mixing numbers, words, missing-value tokens and empty fields."""
    word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=6).filter(
        lambda w: w not in ("nan", "inf", "null", "none", "true", "false", "na"))
    number = st.one_of(st.integers(-10**6, 10**6).map(str),
                       st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(repr))
    kinds = st.lists(st.sampled_from(["number", "word", "token", "empty"]), min_size=1, max_size=3, unique=True)
    n_rows = draw(st.integers(2, 12))
    columns = []
    for _ in range(draw(st.integers(1, 4))):
        allowed = draw(kinds)
        cell = st.one_of(*[{"number": number, "word": word, "token": st.sampled_from(_TOKENS),
                            "empty": st.just("")}[k] for k in allowed])
        columns.append(draw(st.lists(cell, min_size=n_rows, max_size=n_rows)))
    return columns


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(columns=_csv_columns())
def test_every_cell_is_read_as_written_or_as_missing_only_when_it_marks_one(tmp_path, columns):
    """Text stays text; a token is missing only in a column whose other cells are all numbers; numbers exact."""
    import csv

    from pdpboot.workflow.data import read_table

    path = tmp_path / "cells.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([f"c{j}" for j in range(len(columns))])
        writer.writerows(zip(*columns))
    read = read_table(path)
    for j, cells in enumerate(columns):
        col = read[f"c{j}"]
        numeric = col.dtype.kind == "f"
        if numeric:
            assert all(c == "" or c in _TOKENS or _is_number(c) for c in cells)
        for cell, value in zip(cells, col.tolist()):
            if cell == "":
                assert pd.isna(value)
            elif numeric:
                assert (np.isnan(value) if cell in _TOKENS else value == float(cell)), (cell, value)
            elif cell in _TOKENS or not _is_number(cell):
                assert value == cell, (cell, value)  # a word or a token kept exactly as written
            else:
                assert float(value) == float(cell)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text not in _TOKENS


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx"])
def test_blank_cells_are_missing_in_every_format(tmp_path, suffix):
    from pdpboot.workflow.data import read_table

    frame = pd.DataFrame({"s": ["a", " ", "b", ""], "x": ["1.5", "  ", "2", "3"]})
    path = tmp_path / f"t{suffix}"
    {".csv": lambda: frame.to_csv(path, index=False), ".xlsx": lambda: frame.to_excel(path, index=False),
     ".parquet": lambda: frame.to_parquet(path)}[suffix]()
    notes = []
    read = read_table(path, notes)
    assert read["s"].isna().tolist() == [False, True, False, True] and read["s"][2] == "b"
    if suffix != ".parquet":  # typed text in Parquet stays text; its blanks are missing all the same
        assert read["x"].dtype == float and np.isnan(read["x"][1])
    assert any("Blank cells" in n and "'s'" in n for n in notes)


@st.composite
def _hostile_tables(draw):
    """CSV text with hostile cells: tokens, blanks, inf, decimal commas, dates, duplicate or odd names."""
    sep = draw(st.sampled_from([",", ";", "\t"]))
    cell = st.one_of(
        st.sampled_from(["", " ", "NA", "None", "inf", "-Infinity", "?", "1.234", "4.184,81", "3,5", "2011-01-31",
                         "True", "x", "é", "0", "1", "-1", "1e308", "1e-320", '"a;b"', "nan"]),
        st.integers(-5, 5).map(str), st.floats(-1e3, 1e3, allow_nan=False).map(repr),
        st.text(alphabet="ab ;,\t\"'\\", max_size=4))
    n_cols = draw(st.integers(1, 4))
    names = draw(st.lists(st.sampled_from(["y", "a", "b", "a.1", "output", "", " x", "id", "pd"]),
                          min_size=n_cols, max_size=n_cols, unique=draw(st.integers(0, 4)) > 0))
    n_rows = draw(st.one_of(st.integers(0, 3), st.integers(20, 40)))
    rows = [[draw(cell) for _ in range(n_cols)] for _ in range(n_rows)]
    target = draw(st.sampled_from([*names, "y"]))
    return sep, names, rows, target


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(table=_hostile_tables())
def test_hostile_csv_is_read_or_refused_in_one_line(tmp_path, table):
    """Reading and checking a table (no fitting) ends in a Problem or an InputError - never anything else."""
    import csv

    from pdpboot.workflow import InputError
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import load_problem

    sep, names, rows, target = table
    path = tmp_path / "hostile.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=sep)
        writer.writerow(names)
        writer.writerows(rows)
    try:
        load_problem(merge({"target": target, "test_size": 0}, {}), path)
    except InputError as exc:
        message = str(exc)
        assert message and "\n" not in message and "Traceback" not in message


def test_excel_formulas_without_a_saved_result_are_refused(tmp_path):
    """Hostile round 2: a workbook written by a program (openpyxl) and never recalculated holds formulas without
    results; pandas read them as empty cells, and the run imputed 20 of 30 values of the column as 'missing'."""
    import openpyxl

    from pdpboot.workflow import InputError
    from pdpboot.workflow.data import read_table

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["x", "twice", "y"])
    for i in range(30):
        sheet.append([i, f"=A{i + 2}*2" if i % 3 else i * 2, i % 7])
    book.save(tmp_path / "f.xlsx")
    with pytest.raises(InputError, match=r"column\(s\) 'twice' hold 20 formula cell\(s\) without a saved result"):
        read_table(tmp_path / "f.xlsx")
    # missing cells that are not formulas are read as before
    for i in range(30):
        sheet.cell(row=i + 2, column=2).value = None if i % 3 == 1 else i * 2
    book.save(tmp_path / "g.xlsx")
    assert read_table(tmp_path / "g.xlsx")["twice"].isna().sum() == 10


def test_excel_with_an_empty_first_sheet_names_the_sheets(tmp_path):
    import openpyxl

    from pdpboot.workflow import InputError
    from pdpboot.workflow.data import read_table

    book = openpyxl.Workbook()
    book.active.title = "notes"
    book.active["A1"] = "read me"
    data = book.create_sheet("data")
    data.append(["a", "y"])
    for i in range(30):
        data.append([i, 2 * i])
    book.save(tmp_path / "two.xlsx")
    with pytest.raises(InputError, match=r"first sheet 'notes' of 'two.xlsx' holds no data rows.*'notes', 'data'"):
        read_table(tmp_path / "two.xlsx")


def test_spaces_around_text_levels_are_removed_and_case_variants_named(tmp_path):
    """Hostile round 3: ' Male', 'Male ' and 'Male' were three levels of one value (their PDs differed),
    silently; a target's ' yes' a class of its own.  Spaces are removed with a note; levels differing only in
    case are kept (the case may matter) and named in a note."""
    from pdpboot.workflow.data import read_table

    path = tmp_path / "t.csv"
    path.write_text("sex,smoker,y\n Male,yes,1\nMale ,Yes,2\nMale,yes,3\nfemale,no,4\n female ,no,5\n",
                    encoding="utf-8")
    notes = []
    table = read_table(path, notes)
    assert sorted(table["sex"].unique()) == ["Male", "female"]
    assert list(table["sex"]) == ["Male", "Male", "Male", "female", "female"]
    assert any("Spaces before or after" in n and "'sex'" in n and "3 row(s)" in n for n in notes), notes
    assert any("differ only in upper/lower case" in n and "'Yes', 'yes'" in n for n in notes), notes
    assert sorted(table["smoker"].unique()) == ["Yes", "no", "yes"]  # case variants kept apart
    pq = tmp_path / "t.parquet"
    pd.DataFrame({"c": pd.array([" a", "a", "b ", None], dtype="string"), "y": [1.0, 2, 3, 4]}).to_parquet(pq)
    assert sorted(read_table(pq, [])["c"].dropna().unique()) == ["a", "b"]


def test_workbook_of_several_sheets_and_merged_title_rows(tmp_path):
    """Hostile round 3: a workbook whose first sheet is a README said only "Unknown target column" (the data
    sheet unnamed); a sheet with a merged title row above the header was read with the names as a data row."""
    openpyxl = pytest.importorskip("openpyxl")
    from pdpboot.workflow import InputError
    from pdpboot.workflow.data import read_table
    from pdpboot.workflow.options import RunConfig
    from pdpboot.workflow.problem import load_problem

    table = pd.DataFrame({"radius": np.arange(40) * 0.5, "texture": np.arange(40) % 7,
                          "diagnosis": np.where(np.arange(40) % 3 == 0, "malignant", "benign")})
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame({"About": ["Breast cancer", "scikit-learn"]}).to_excel(writer, sheet_name="README", index=False)
        table.to_excel(writer, sheet_name="data", index=False)
    with pytest.raises(InputError, match=r"Unknown target column 'diagnosis'.*first sheet 'README'.*'README', "
                                         r"'data'.*move the table there"):
        load_problem(RunConfig.from_dict({"data": "book.xlsx", "target": "diagnosis"}), path)
    titled = tmp_path / "titled.xlsx"
    with pd.ExcelWriter(titled, engine="openpyxl") as writer:
        table.to_excel(writer, sheet_name="data", index=False, startrow=1)
        sheet = writer.sheets["data"]
        sheet.cell(row=1, column=1, value="Measurements")
        sheet.merge_cells(start_row=1, start_column=1, end_row=1, end_column=2)
    with pytest.raises(InputError, match=r"first row of 'titled.xlsx' is mostly empty cells \(a title: "
                                         r"'Measurements'\).*header seems to be in row 2"):
        read_table(titled)
    assert openpyxl is not None
