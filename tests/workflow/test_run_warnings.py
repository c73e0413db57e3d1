"""What a run tells the user about its model and its PD: a model worse than the mean, a PD feature the
others determine, the PD's background sample; choices in any case."""

from __future__ import annotations

import numpy as np
import pandas as pd

import pdpboot

from .helpers import FAST, run_cli


def test_weak_model_determined_feature_and_background_are_said(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 120
    a, b = rng.uniform(0, 10, n), rng.uniform(0, 10, n)
    table = pd.DataFrame({"a": a, "b": b, "age": a + b + 6 + rng.normal(0, 0.01, n), "y": rng.normal(size=n)})
    table.to_csv(data := tmp_path / "t.csv", index=False)
    loud = [x for x in FAST if x != "--quiet"]
    code, out = run_cli(["run", data, "--target", "y", "--out", tmp_path / "o", "--max-background", "50",
                         "--model", "Linear", "--task", "REGRESSION", *loud], capsys)
    assert code == 0
    (folder,) = (tmp_path / "o").iterdir()
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    report = (folder / "report.html").read_text(encoding="utf-8")
    for text in (out.err, summary):
        assert "worse than the training mean" in text
        assert "'age' is nearly determined by" in text and "--effect ale" in text
    assert "worse than the training mean" in report and "nearly determined" in report
    assert "at most 50 random rows of its resample" in summary and "at most 50 random rows" in report
    assert "at most 50 random rows" in pdpboot.load(folder / "results.nc").attrs["background_rows"]


def test_an_integer_target_treated_as_classes_says_how_to_choose_regression():
    from pdpboot.workflow import InputError
    from pdpboot.workflow.options import merge
    from pdpboot.workflow.problem import prepare

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": rng.normal(size=200), "visits": np.r_[rng.integers(0, 9, 199), 9]})
    try:
        prepare(merge({"target": "visits"}, {}), table)
    except InputError as exc:  # class 9 has one row: the split cannot stratify
        assert "give --task regression" in str(exc)
    else:
        raise AssertionError("a one-row class must be refused")
    table.loc[0, "visits"] = 9
    problem = prepare(merge({"target": "visits"}, {}), table)
    assert problem.task == "classification" and "give --task regression" in " ".join(problem.notes)
