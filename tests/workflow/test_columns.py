"""Columns understood as a researcher means them (issue 18, items 1-3, 7, 11): level order, IDs and dates,
integer and binary features, decimal commas, column-name hints."""

import re

import numpy as np
import pandas as pd
import pytest

import pdpboot
from pdpboot import Grid
from pdpboot.schema import get_node
from pdpboot.workflow import InputError
from pdpboot.workflow.data import read_table
from pdpboot.workflow.options import merge
from pdpboot.workflow.problem import natural_key, prepare

from .helpers import FAST, bad, only_run_folder, run_cli

EDUCATION = ["1. < HS Grad", "2. HS Grad", "3. Some College", "4. College Grad", "5. Advanced Degree"]


def wage_like(n=120, seed=0):
    """A Wage/Bikeshare-like table: numbered levels in scrambled first appearance, an ID, a row counter,
    a date, an hour (24 integer values), a 0/1 flag, and a noise column."""
    rng = np.random.default_rng(seed)
    education = rng.choice(EDUCATION, n)
    education[:5] = [EDUCATION[i] for i in (0, 3, 2, 1, 4)]  # first appearance: 1, 4, 3, 2, 5
    hr = rng.integers(0, 24, n)
    holiday = rng.integers(0, 2, n)
    age = rng.uniform(18, 80, n).round(1)
    high = pd.Series(education).str[0].isin(["4", "5"]).to_numpy()
    wage = 50 + 10 * high + 2 * np.sin(hr / 4) + 5 * holiday + 0.3 * age + rng.normal(0, 3, n)
    dates = pd.date_range("2011-01-01", periods=n, freq="3D").strftime("%Y-%m-%d")
    return pd.DataFrame({"ride_id": rng.permutation(np.arange(10_000, 10_000 + n)).astype(str),
                         "ID": np.arange(1, n + 1), "date": dates, "education": education, "hr": hr,
                         "holiday": holiday, "age": age, "wage": wage.round(2)})


def _prepare(table, **options):
    return prepare(merge({"target": "wage", **options}, {}), table)


def test_natural_key_compares_numbers_inside_labels():
    assert sorted(["10. x", "2. y", "1. z"], key=natural_key) == ["1. z", "2. y", "10. x"]
    assert sorted(["b2", "B10", "a"], key=natural_key) == ["a", "b2", "B10"]


def test_levels_in_natural_calendar_or_given_order():
    table = wage_like()
    problem = _prepare(table)
    assert problem.custom_values["education"].tolist() == EDUCATION  # not first appearance (1, 4, 3, 2, 5)
    table["month"] = np.resize(["Mar", "Jan", "Feb", "Dec"], len(table))
    assert _prepare(table).custom_values["month"].tolist() == ["Jan", "Feb", "Mar", "Dec"]
    order = ["5. Advanced Degree", "1. < HS Grad"]
    problem = _prepare(table, level_order=[f"education={','.join(order)}"])
    assert problem.custom_values["education"].tolist() == [*order, *EDUCATION[1:4]]
    with pytest.raises(InputError, match="names level"):
        _prepare(table, level_order=["education=6. PhD"])
    with pytest.raises(InputError, match="numeric"):
        _prepare(table, level_order=["age=1,2"])


def test_ordered_categorical_keeps_pandas_order():
    table = wage_like()
    levels = ["low", "mid", "high"]
    table["size"] = pd.Categorical(np.resize(["high", "low", "mid"], len(table)), categories=levels, ordered=True)
    problem = _prepare(table)  # a category column keeps its categories' order in the grid
    assert "size" in problem.categorical and "size" not in problem.custom_values
    from sklearn.dummy import DummyRegressor

    X = problem.X[["size", "age"]]
    fitted = DummyRegressor().fit(X, problem.y)
    pd1 = pdpboot.partial_dependence(fitted, X, ["size"], grid=Grid(categorical_features=["size"]))
    assert get_node(pd1, "size")["size"].values.tolist() == levels


def test_ids_and_row_counters_left_out_dates_converted():
    problem = _prepare(wage_like())
    assert "ride_id" not in problem.features and "ID" not in problem.features
    notes = " ".join(problem.notes)
    assert "'ride_id' not used" in notes and "'ID' not used" in notes and "--keep" in notes
    assert "decimal years" in notes
    date = problem.X["date"]
    assert date.dtype == float and date.iloc[0] == 2011.0
    assert date.iloc[1] == pytest.approx(2011 + 3 / 365)
    kept = _prepare(wage_like(), keep=["ID"])
    assert "ID" in kept.features
    explicit = _prepare(wage_like(), features=["ID", "age"])  # named explicitly: the user's choice
    assert explicit.features == ["ID", "age"]


def test_integer_features_get_their_values_and_binary_ones_points():
    problem = _prepare(wage_like(), grid_resolution=10)
    assert problem.custom_values["hr"].tolist() == list(range(24))
    assert problem.points == ["holiday"] and "holiday" not in problem.categorical
    assert "age" not in problem.custom_values


def test_decimal_comma_csv_is_read_as_numbers(tmp_path):
    table = wage_like()[["age", "hr", "wage"]]
    path = tmp_path / "eu.csv"
    table.to_csv(path, sep=";", decimal=",", index=False)
    notes = []
    read = read_table(path, notes)
    assert read["wage"].dtype == float and "decimal comma" in notes[0]
    np.testing.assert_allclose(read["wage"], table["wage"])
    # told to read decimal points: the target is text, and the advice is --decimal, never --task
    for task in ("auto", "regression"):
        with pytest.raises(InputError, match="--decimal ,") as exc:
            prepare(merge({"target": "wage", "task": task}, {}), read_table(path, decimal="."))
        assert "--task" not in str(exc.value)
    again = read_table(path, sep=";", decimal=",")
    np.testing.assert_allclose(again["age"], table["age"])


def test_target_hint_ignores_case(tmp_path, capsys):
    path = tmp_path / "t.csv"
    wage_like().rename(columns={"wage": "mpg"}).to_csv(path, index=False)
    err = bad(["run", path, "--target", "MPG"], capsys, tmp_path / "o")
    assert "Did you mean 'mpg'?" in err
    err = bad(["run", path, "--target", "x" * 5000], capsys, tmp_path / "o")
    assert len(err) < 1500  # the name is cut, not echoed whole


def test_cli_on_a_wage_like_semicolon_table(tmp_path, capsys):
    path = tmp_path / "wage.csv"
    wage_like().to_csv(path, sep=";", decimal=",", index=False)
    code, _ = run_cli(["run", path, "--target", "wage", "--out", tmp_path / "o", "--pd-features",
                       "education,hr,holiday,date", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    assert get_node(res, "education")["education"].values.tolist() == EDUCATION
    hr = get_node(res, "hr")["hr"].values
    assert len(hr) > 5 and np.all(np.mod(hr, 1) == 0)  # every hour seen in training, not a 5-point grid
    holiday = get_node(res, "holiday")
    assert holiday["holiday"].values.tolist() == [0, 1] and bool(holiday.attrs["categorical"][0])
    summary = (folder / "summary.md").read_text()
    assert "ride\\_id" in summary and "decimal years" in summary and "decimal comma" in summary


# ----------------------------------------------------------------------------- issue 26 D: column heuristics


def economics_like(n=120, seed=4):
    """ggplot2's economics: monthly rows, a population that grows every month (a measurement, not a counter)."""
    rng = np.random.default_rng(seed)
    pop = (198_712 + np.cumsum(rng.integers(150, 260, n))).astype(np.int64)
    psavert = rng.uniform(2, 15, n).round(1)
    unemploy = (2_900 + 0.02 * (pop - pop[0]) + 150 * psavert + rng.normal(0, 200, n)).round().astype(int)
    dates = pd.date_range("1967-07-01", periods=n, freq="MS").strftime("%Y-%m-%d")
    return pd.DataFrame({"date": dates, "pop": pop, "psavert": psavert, "unemploy": unemploy})


def test_a_monotone_measurement_is_not_a_row_counter():
    table = economics_like()
    problem = prepare(merge({"target": "unemploy"}, {}), table)
    assert "pop" in problem.features  # used, and said so: a column unique in every row is never used silently
    assert "Column 'pop' has a different integer in every row and is used" in " ".join(problem.notes)
    table["row"] = np.arange(len(table)) + 1  # consecutive integers in row order: a counter
    table["countdown"] = np.arange(len(table))[::-1]
    problem = prepare(merge({"target": "unemploy"}, {}), table)
    assert "row" not in problem.features and "countdown" not in problem.features and "pop" in problem.features
    assert "'row' not used: it counts the rows (consecutive integers" in " ".join(problem.notes)


def test_row_names_with_gaps_are_left_out_with_a_note():
    """Rdatasets' ``rownames``: unique increasing integers, not strictly consecutive (rows were dropped)."""
    table = economics_like()
    table.insert(0, "rownames", np.delete(np.arange(1, len(table) + 4), [5, 50, 77]))
    problem = prepare(merge({"target": "unemploy"}, {}), table)
    assert "rownames" not in problem.features and "pop" in problem.features
    assert "'rownames' not used: it numbers the rows" in " ".join(problem.notes)


def cars_like(n=406, seed=5):
    """vega's cars: a Name column with 304 distinct values in 406 rows, plus real features."""
    rng = np.random.default_rng(seed)
    names = np.array([f"car model {k}" for k in range(304)])
    name = np.concatenate([names, rng.choice(names, n - 304)])
    horsepower = rng.uniform(45, 230, n).round()
    origin = rng.choice(["USA", "Europe", "Japan"], n)
    mpg = 45 - 0.12 * horsepower + 3 * (origin == "Japan") + rng.normal(0, 2, n)
    return pd.DataFrame({"Name": name, "Horsepower": horsepower, "Origin": origin, "Miles_per_Gallon": mpg})


def test_a_near_id_text_column_is_left_out_with_a_note():
    table = cars_like()
    problem = prepare(merge({"target": "Miles_per_Gallon"}, {}), table)
    assert problem.features == ["Horsepower", "Origin"]
    said = " ".join(problem.notes)
    assert "'Name' not used: it has 304 distinct values in 406 rows" in said and "--keep Name" in said
    assert "Name" in prepare(merge({"target": "Miles_per_Gallon", "keep": ["Name"]}, {}), table).features
    with pytest.raises(InputError, match=r"--pd-features names 'Name', which is not a model feature \(left out: it "
                                         r"has 304 distinct values.*--keep Name uses it anyway\)"):
        prepare(merge({"target": "Miles_per_Gallon", "pd_features": ["Name"]}, {}), table)
    explicit = prepare(merge({"target": "Miles_per_Gallon", "features": ["Name", "Horsepower"]}, {}), table)
    assert explicit.features == ["Name", "Horsepower"]
    # a text column with many levels that repeat (a manufacturer) is a feature
    table["maker"] = np.resize([f"maker {k}" for k in range(40)], len(table))
    assert "maker" in prepare(merge({"target": "Miles_per_Gallon"}, {}), table).features


def test_cli_cars_like_summary_names_the_excluded_column(tmp_path, capsys):
    path = tmp_path / "cars.csv"
    cars_like().to_csv(path, index=False)
    code, _ = run_cli(["run", path, "--target", "Miles_per_Gallon", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    assert "Name" not in res.children
    assert "'Name' not used" in (folder / "summary.md").read_text()


# ----------------------------------------------------------------------------- issue 26 C: clear refusals (CLI)


def test_infinite_feature_value_exits_2_naming_the_column(tmp_path, capsys):
    table = wage_like()
    table.loc[3, "age"] = np.inf
    path = tmp_path / "inf.csv"
    table.to_csv(path, index=False)
    err = bad(["run", path, "--target", "wage", *FAST], capsys, tmp_path / "o")
    assert "Feature 'age' contains 1 infinite value(s)" in err
    path.write_text(path.read_text().replace("inf", "-Infinity"))
    err = bad(["run", path, "--target", "wage", *FAST], capsys, tmp_path / "o")
    assert "Feature 'age' contains 1 infinite value(s)" in err


@pytest.mark.parametrize(("scale", "message"), [
    (1e300, "Feature 'age' holds values up to .* beyond the float32 range"),
    (1e-300, "Feature 'age' varies only below float32 precision"),
])
def test_a_feature_beyond_float32_exits_2_naming_the_column(tmp_path, capsys, scale, message):
    """Values beyond float32 (the trees compare in float32) failed with scikit-learn's 'Input X contains infinity
    or a value too large' (exit 1); values below float32 precision became one value (0) without a word."""
    table = wage_like()
    table["age"] = table["age"] * scale
    path = tmp_path / "scaled.csv"
    table.to_csv(path, index=False)
    err = bad(["run", path, "--target", "wage", *FAST], capsys, tmp_path / "o")
    assert re.search(message, err), err


@pytest.mark.parametrize("rows", [1, 5])
def test_a_tiny_table_says_too_few_rows(tmp_path, capsys, rows):
    path = tmp_path / "tiny.csv"
    wage_like().head(rows).to_csv(path, index=False)
    for extra in ([], ["--features", "age"]):
        err = bad(["run", path, "--target", "wage", *extra], capsys, tmp_path / "o")
        assert f"Only {rows} row(s) in the table" in err and "constant" not in err
