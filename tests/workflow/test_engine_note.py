"""A tree reader that fails its self-check is named in the run's "What was done" notes (issue 26 A.1)."""

import dataclasses

import pdpboot
from pdpboot.engine import _tree_prepared as prepared_mod
from pdpboot.workflow.strategy import engine_notes

from .helpers import FAST, only_run_folder, regression_table, run_cli


def _corrupt_every_reading(monkeypatch):
    real = prepared_mod.read_model

    def corrupted(estimator, response_method):
        model = real(estimator, response_method)
        return dataclasses.replace(model, value=model.value + 0.5)  # every node 0.5 too high

    monkeypatch.setattr(prepared_mod, "read_model", corrupted)


def test_engine_notes_name_only_failed_self_checks():
    assert engine_notes("tree: exact, checked against the model's predictions") == []
    assert engine_notes("brute: no exact engine requested") == []
    (note,) = engine_notes("tree: exact, checked; brute: tree engine failed its self-check: off by 0.5")
    assert note == "computed by brute force (exact, slower): tree engine failed its self-check: off by 0.5"


def test_a_failed_self_check_reaches_the_summary(tmp_path, monkeypatch):
    _corrupt_every_reading(monkeypatch)
    data = tmp_path / "t.csv"
    regression_table(n=400).drop(columns=["colour"]).to_csv(data, index=False)
    code, _ = run_cli(["run", data, "--target", "y", "--model", "random-forest", "--out", tmp_path / "o", *FAST])
    assert code == 0
    folder = only_run_folder(tmp_path / "o")
    summary = (folder / "summary.md").read_text()
    assert "computed by brute force (exact, slower): tree engine failed its self-check" in summary
    result = pdpboot.load(folder / "results.nc")
    assert "self-check" in result.attrs["engine"]


def test_a_table_with_a_text_column_gets_the_exact_engine(tmp_path):
    """The command line's own pipeline (text columns as text, one-hot encoded; numeric columns imputed with
    indicators for gradient boosting) is read by the exact tree engine (brute force only where its cost model
    says faster)."""
    data = tmp_path / "t.csv"
    regression_table(n=300).to_csv(data, index=False)
    for model in ("hist-gradient-boosting", "gradient-boosting"):
        out = tmp_path / model
        code, _ = run_cli(["run", data, "--target", "y", "--model", model, "--out", out, *FAST])
        assert code == 0
        engine = pdpboot.load(only_run_folder(out) / "results.nc").attrs["engine"]
        assert engine.startswith("tree: exact") and "does not support" not in engine, (model, engine)
