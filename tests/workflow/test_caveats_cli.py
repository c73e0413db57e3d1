"""A band the user chooses that under-covers warns where it is chosen.

Command line: ``--help`` says so for ``--band basic``; a run with ``--band basic``, or
with simultaneous bands of a boosting classifier, says the CoverageWarning on the console and keeps it in
summary.md's notes.  A run that chooses nothing of the kind says no such warning.
"""

from __future__ import annotations

import pytest

from pdpboot.caveats import boosting_classifier_message, interval_method_message
from pdpboot.cli import main

from .helpers import FAST, classification_table, only_run_folder, regression_table, run_cli


def test_help_names_the_under_covering_choices(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "basic (under-covers PD curves and warns)" in text


def _run(tmp_path, table, target, *extra):
    data = tmp_path / "t.csv"
    table.to_csv(data, index=False)
    loud = [a for a in FAST if a != "--quiet"]  # progress lines and warnings on stderr
    code, _ = run_cli(["run", data, "--target", target, "--out", tmp_path / "out", *loud, *extra])
    assert code == 0
    folder = only_run_folder(tmp_path / "out")
    return folder, (folder / "summary.md").read_text(encoding="utf-8")


def test_band_basic_warns_on_console_and_in_summary(tmp_path, capsys):
    folder, summary = _run(tmp_path, regression_table(), "y", "--model", "linear", "--band", "basic")
    console = capsys.readouterr()
    first = interval_method_message("basic")
    assert first in summary
    assert "WARNING: method='basic'" in console.out + console.err
    assert first in (folder / "run.log").read_text(encoding="utf-8")


def test_boosting_classifier_simultaneous_warns_in_summary_with_the_bootstrap(tmp_path, capsys):
    _, summary = _run(tmp_path, classification_table(), "label", "--model", "hist-gradient-boosting",
                      "--simultaneous", "--n-resamples", "20", "--resampling", "bootstrap")
    assert boosting_classifier_message("bootstrap") in summary
    assert "(bootstrap: rows drawn with replacement)" in summary
    assert "PD bands formed on the logit scale" not in summary and "Why this resampling" not in summary
    console = capsys.readouterr()
    assert "WARNING: Simultaneous bands of a gradient-boosting classifier" in console.out + console.err


def test_boosting_classifier_default_is_the_subsample_on_the_logit_scale_and_says_why(tmp_path, capsys):
    """A classifier's default run resamples 0.632 of the rows with logit-scale PD bands, says so and why in
    summary.md, and draws no coverage warning."""
    folder, summary = _run(tmp_path, classification_table(), "label", "--model", "hist-gradient-boosting",
                           "--simultaneous", "--n-resamples", "20")
    assert "gradient-boosting classifier's PD under-cover" not in summary
    assert "rows without replacement, deviations from the estimate rescaled by sqrt(m / (n - m))" in summary
    assert "PD bands formed on the logit scale and mapped back" in summary
    assert "Why this resampling" in summary and "because the PD averages" in summary
    console = capsys.readouterr()
    assert "WARNING" not in console.out + console.err


def test_percentile_run_says_no_coverage_warning(tmp_path, capsys):
    _, summary = _run(tmp_path, regression_table(), "y", "--model", "linear")
    assert "under-cover" not in summary
    console = capsys.readouterr()
    assert "WARNING" not in console.out + console.err and "Done." in console.err
