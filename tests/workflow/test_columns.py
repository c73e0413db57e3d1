"""Columns understood as a researcher means them (issue 18, items 1-3, 7, 11): level order, IDs and dates,
integer and binary features, decimal commas, column-name hints."""

import numpy as np
import pandas as pd
import pytest

import pdpboot
from pdpboot.schema import get_node
from pdpboot.workflow import InputError
from pdpboot.workflow.data import natural_key, prepare, read_table
from pdpboot.workflow.options import merge

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
    pd1 = pdpboot.partial_dependence(fitted, X, ["size"], categorical_features=["size"])
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
