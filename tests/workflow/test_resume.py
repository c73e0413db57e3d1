"""Ctrl-C never loses a run: the stopped run keeps what is finished, and ``--resume`` finishes it with the
numbers of an uninterrupted run."""

from __future__ import annotations

import numpy as np

import pdpboot
import pdpboot.workflow.strategy as strategy

from .helpers import FAST, regression_table, run_cli

ARGS = [*FAST, "--n-resamples", "8", "--ice-samples", "0"]  # the last value of an option wins


def _arrays(path):
    tree = pdpboot.load(path)
    return {f"{node.path}/{name}": np.asarray(var) for node in tree.subtree for name, var in node.ds.data_vars.items()}


def test_interrupted_run_resumes_bit_identical(tmp_path, capsys, monkeypatch):
    data = tmp_path / "table.csv"
    regression_table().to_csv(data, index=False)
    code, _ = run_cli(["run", data, "--target", "y", "--out", tmp_path / "whole", *ARGS], capsys)
    assert code == 0
    (whole,) = (tmp_path / "whole").iterdir()

    calls = []
    original = strategy.Progress.__call__

    def interrupt_after_three(self, done, total):  # Ctrl-C while the 4th refit's result comes in
        calls.append(done)
        if done == 4:
            raise KeyboardInterrupt
        original(self, done, total)

    monkeypatch.setattr(strategy.Progress, "__call__", interrupt_after_three)
    code, out = run_cli(["run", data, "--target", "y", "--out", tmp_path / "o", *ARGS], capsys)
    (stopped,) = (tmp_path / "o").iterdir()
    assert code == 130 and stopped.name.endswith("_incomplete")
    assert "model.joblib" in out.err and f"pdpboot run --resume {stopped}" in out.err
    assert (stopped / "model.joblib").is_file() and "--resume" in (stopped / "INCOMPLETE.txt").read_text()
    assert any((stopped / "checkpoint").rglob("*"))

    calls.clear()
    monkeypatch.setattr(strategy.Progress, "__call__", original)
    code, _ = run_cli(["run", "--resume", stopped, "--quiet"], capsys)
    assert code == 0
    (final,) = (tmp_path / "o").iterdir()
    assert final.name == stopped.name.removesuffix("_incomplete") and not (final / "checkpoint").exists()
    assert not (final / "INCOMPLETE.txt").exists() and "refits were finished before" in (final / "run.log").read_text()
    a, b = _arrays(whole / "results.nc"), _arrays(final / "results.nc")
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_resume_refuses_a_finished_folder(tmp_path, capsys):
    data = tmp_path / "table.csv"
    regression_table().to_csv(data, index=False)
    code, out = run_cli(["run", "--resume", tmp_path, "--quiet"], capsys)
    assert code == 2 and "not the folder of a stopped run" in out.err
    code, out = run_cli(["run", data, "--resume", tmp_path, "--quiet"], capsys)
    assert code == 2 and "leave out" in out.err


def test_progress_estimates_the_time_without_the_start_up(monkeypatch):
    times = {"now": 0.0}
    monkeypatch.setattr(strategy.time, "perf_counter", lambda: times["now"])
    lines = []
    progress = strategy.Progress(lines.append, min_gap=0.0)
    for t, done in [(20.0, 1), (20.4, 2), (20.8, 3), (21.2, 4)]:  # 20 s start-up, then 2.5 fits/s
        times["now"] = t
        progress(done, 50)
    estimate = [line for line in lines if line.startswith("Estimated")]
    assert estimate == ["Estimated time of the 50 refits: about 20 s (2.5 fits/s; about 18 s left)."]
