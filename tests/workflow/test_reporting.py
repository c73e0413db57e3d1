"""What a run reports (issue 18 items 4-6, issue 13 item 8): cite-able summary, readable figures in the
asked format, inert Markdown, and a reproduce that re-validates its inputs."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from pdpboot.cli import main
from pdpboot.workflow import InputError
from pdpboot.workflow.options import md, num, safe_filename
from pdpboot.workflow.repro import read_config

from .helpers import FAST, only_run_folder, run_cli

HOSTILE = "[x](http://evil.example) \x1b[31m<b>*bold*</b>\x07"


def test_markdown_from_data_is_inert():
    text = md(HOSTILE)
    for active in ("http://", "\x1b", "\x07", "<b>", "*bold*"):
        assert active not in text
    assert not re.search(r"(?<!\\)\]\(", text)  # no unescaped link
    assert "\\[x\\]" in text and "\\<b\\>" in text and "&lt;" not in text and "\n" not in md("a\nb")
    assert len(md("x" * 10_000)) <= 120


def test_round_off_prints_as_zero():
    assert num(1.8e-27, scale=12.0) == "0" and num(0.0) == "0"
    assert num(3e-6, scale=1.0) == "3e-06" and num(float("nan")) == "–"


def test_unicode_file_names_keep_letters():
    taken = set()
    assert safe_filename("année", taken) == "annee"
    assert safe_filename("温度", taken) == "温度"
    assert safe_filename("Annee", taken) == "Annee-2"  # unique ignoring case


@pytest.fixture(scope="module")
def linear_run(tmp_path_factory):
    """A linear model on a table with an effect, pure noise and a two-level text column (a contrast)."""
    tmp = tmp_path_factory.mktemp("linear")
    rng = np.random.default_rng(4)
    n = 200
    table = pd.DataFrame({"signal": rng.uniform(0, 10, n), "noise": rng.uniform(0, 10, n),
                          HOSTILE: rng.choice(["No", "Yes"], n)})
    table["y"] = 3 * table["signal"] + 4 * (table[HOSTILE] == "Yes") + rng.normal(0, 1, n)
    path = tmp / "lin.csv"
    table.to_csv(path, index=False)
    args = ["run", path, "--target", "y", "--model", "linear", "--out", tmp / "o", "--format", "svg",
            "--top", "2", "--labels", "signal=Signal strength", "--units", "signal=dB",
            *[a if a != "5" else "40" for a in FAST]]  # 40 resamples: enough for a verdict (39 at 95 %)
    assert main([str(a) for a in args]) == 0
    return only_run_folder(tmp / "o")


def test_summary_is_citable(linear_run):
    summary = (linear_run / "summary.md").read_text()
    rows = {line.split("|")[2].strip(): line for line in summary.splitlines() if line.startswith("| ")}
    signal, noise = rows["signal"].split("|"), rows["noise"].split("|")
    assert signal[5].strip() == "yes" and noise[5].strip() == "no"  # beyond noise?
    assert signal[6].strip() == "0" and noise[6].strip() == "0"  # linear: no heterogeneity, printed as 0
    assert "Differences between levels" in summary and "Yes − No" in summary
    contrast = next(line for line in summary.splitlines() if "Yes − No" in line).split("|")
    low, high = (float(v) for v in contrast[4].strip(" []").split(","))
    assert low < 4 < high  # the true difference of a linear model is covered
    assert "--band basic` corrects" not in summary
    for active in ("http://", "\x1b", "<b>", "\x07"):
        assert active not in summary
    assert not re.search(r"(?<!\\)\]\(", summary)


def test_figures_in_the_asked_format_top_k_and_labels(linear_run):
    plots = sorted(p.name for p in (linear_run / "plots").iterdir())
    assert all(p.endswith(".svg") for p in plots)
    assert len([p for p in plots if p.startswith("pd_")]) == 2  # --top 2 of 3 features
    svg = (linear_run / "plots" / "pd_signal.svg").read_text()
    assert "Signal strength (dB)" in svg  # text kept as text in SVG: labels and units from the options


def test_reproduce_revalidates_config_and_refuses_outside_data(linear_run, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(linear_run, folder)
    config_path = folder / "repro_inputs" / "config.json"
    good = json.loads(config_path.read_text())
    config, data = read_config(folder)
    assert data == folder / "repro_inputs" / "data.csv" and config.model == "linear"
    for change, message in [({"model": "nonsense"}, "must be one of"),
                            ({"n_resamples": "many"}, "must be an integer"),
                            ({"data_copy": "../../../etc/passwd"}, "not a file in repro_inputs"),
                            ({"data_copy": "/etc/passwd"}, "not a file in repro_inputs")]:
        config_path.write_text(json.dumps({**good, **change}))
        with pytest.raises(InputError, match=message):
            read_config(folder)
        code, out = run_cli(["reproduce", folder], capsys)
        assert code == 2 and "Traceback" not in out.err
    (folder / "outside.csv").write_text("x\n1\n")
    (folder / "repro_inputs" / "link.csv").symlink_to(folder / "outside.csv")
    config_path.write_text(json.dumps({**good, "data_copy": "link.csv"}))
    with pytest.raises(InputError, match="outside"):
        read_config(folder)


# ----------------------------------------------------------------------------- issue 26 D and A.7


def _leaky_table(n=160, seed=0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.where(x + rng.normal(0, 1, n) > 0, "yes", "no")
    return pd.DataFrame({"patient_id": np.arange(5000, 5000 + n), "x": x,
                         "outcome_code": (y == "yes") * 2.0 + rng.normal(0, 0.01, n), "y": y})


@pytest.mark.parametrize("uncertainty", ["bootstrap", "none"])
def test_id_note_and_leakage_warning_are_in_the_summary(tmp_path, capsys, uncertainty):
    from .helpers import FAST, only_run_folder, run_cli

    data = tmp_path / "t.csv"
    _leaky_table().to_csv(data, index=False)
    code, out = run_cli(["run", data, "--target", "y", "--out", tmp_path / "o", *FAST, "--uncertainty",
                         uncertainty, "--ice-samples", "0"], capsys)
    assert code == 0, out.err
    summary = (only_run_folder(tmp_path / "o") / "summary.md").read_text()
    done = summary.split("## What was done to the data", 1)[1]
    assert "Column 'patient\\_id' not used" in done  # the ID note, not only in run.log
    assert "perfect test score" in done and "leans on 'outcome\\_code'" in done


def test_no_leakage_warning_below_a_perfect_score():
    import numpy as np

    from pdpboot.workflow.model import leakage_notes

    metrics = [("accuracy", 0.97, ""), ("ROC_AUC", 0.999, "")]
    assert leakage_notes(None, type("P", (), {"task": "classification"})(), metrics, np.zeros((3, 1)), None) == []


def test_printed_intervals_are_percentile_and_flagged_when_they_exclude_the_estimate():
    import numpy as np
    import xarray as xr

    from pdpboot.workflow.report import IntervalCells, interval_method

    config = type("C", (), {"band": "basic"})()
    for statistic in ("pd_range", "ale_range", "heterogeneity_index", "pdvi", "h2"):
        assert interval_method(statistic, config) == "percentile"  # bounded: never bc (degenerate) or basic
    assert interval_method("contrast", config) == "basic"  # signed: the run's --band
    # the demo's heterogeneity index: 3.435 with every refit above it
    refits = np.linspace(3.6, 5.5, 50)[:, None]
    ds = xr.Dataset({"s": ("output", [3.435]), "s_resamples": (("resample", "output"), refits),
                     "s_band": (("ci_bound", "output"), [[3.64], [5.47]])},
                    coords={"output": ["y"], "ci_bound": ["lower", "upper"]})
    cells = IntervalCells()
    assert cells.cell(ds, "s", "y", what="heterogeneity index of Temperature") == "[3.64, 5.47] †"
    (note,) = cells.notes()[1:]
    assert "Temperature" in note and "50 of 50 refits" in note and "above" in note
    assert cells.cell(ds, "s", "y", what="Chiroptera − Afrosoricida", signed=True).endswith(" †")
    (note,) = cells.notes()[1:]
    assert "differ systematically" in note and "inflates" not in note  # a contrast is not a range
    inside = ds.assign(s_band=(("ci_bound", "output"), [[3.0], [5.47]]))
    assert cells.cell(inside, "s", "y", what="x") == "[3, 5.47]" and cells.notes() == []
    assert cells.few_rows({"Chiroptera": 2, "Afrosoricida": 3, "Rodentia": 22}, ["Chiroptera", "Rodentia"], "c") \
        == " ‡"
    assert cells.few_rows({"Afrosoricida": 3, "Rodentia": 22}, ["Afrosoricida", "Rodentia"], "c") == " ‡"
    (note,) = cells.notes()[1:]  # one note per feature, every small level named once
    assert "Chiroptera has 2 rows, Afrosoricida has 3 rows" in note


def test_level_contrasts_with_few_rows_are_flagged_in_the_summary(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    from .helpers import FAST, only_run_folder, run_cli

    rng = np.random.default_rng(1)
    orders = ["Afrosoricida"] * 3 + ["Chiroptera"] * 2 + ["Rodentia"] * 40 + ["Primates"] * 25
    table = pd.DataFrame({"order": orders, "bodywt": rng.lognormal(0, 2, len(orders))})
    table["sleep"] = 10 + 5 * (table.order == "Chiroptera") + rng.normal(0, 2, len(orders))
    table.to_csv(tmp_path / "t.csv", index=False)
    code, out = run_cli(["run", tmp_path / "t.csv", "--target", "sleep", "--test-size", "0", "--out", tmp_path / "o",
                         *FAST], capsys)
    assert code == 0, out.err
    text = (only_run_folder(tmp_path / "o") / "summary.md").read_text().split("## Differences between levels")[1]
    rows = [line for line in text.splitlines() if line.startswith("| order |")]
    assert len(rows) == 3 and all(line.endswith("‡ |") for line in rows)  # the reference has 3 rows
    assert "Afrosoricida has 3 rows, Chiroptera has 2 rows" in text


def test_round_off_statistics_are_not_flagged_and_low_refits_are_explained_as_low():
    """Hostile round 2: an additive model's heterogeneity index (1e-31, refits 8e-32) printed "0 [0, 0] †" with
    the note "lies below it ... refits sit above the full-data fit": a flag nobody could see, explained backwards."""
    import numpy as np
    import xarray as xr

    from pdpboot.workflow.report import IntervalCells, excludes

    def stat(estimate, lower, upper, refits):
        return xr.Dataset({"s": ("output", [estimate]), "s_resamples": (("resample", "output"), np.c_[refits]),
                           "s_band": (("ci_bound", "output"), [[lower], [upper]])},
                          coords={"output": ["y"], "ci_bound": ["lower", "upper"]})

    cells = IntervalCells()
    # values from the dtypes table's linear model (summary.md of a run with --model linear)
    assert cells.cell(stat(2.658e-31, 8.08e-32, 1.349e-31, [7.9e-32, 1.36e-31]), "s", "y", 1.0, what="i64") == "[0, 0]"
    assert cells.notes() == []
    # a real gap is still flagged, and refits below a range are not explained as inflated upward
    assert cells.cell(stat(1.059, 0.8313, 1.011, [0.83, 1.01]), "s", "y", 1.0, what="PD range of cat").endswith("†")
    (note,) = cells.notes()[1:]
    assert "lies below it" in note and "sit above" not in note and "flatter" in note
    assert excludes(1.0, 1.1, 1.2) and not excludes(1.0, np.nan, 1.2) and excludes(0.0, 1e-6, 2e-6, scale=1.0)


def test_band_target_names_the_runs_effect():
    """Hostile round 2: an ALE-only run's summary said its bands were 'about the learner's PD'."""
    import xarray as xr

    from pdpboot.workflow import strategy

    learner = xr.DataTree()
    learner.attrs["target"] = "learner"
    assert "about the learner's ALE (the ALE this model" in strategy._target({"ale": learner})
    assert "about the learner's PD and ALE" in strategy._target({"pd": learner, "ale": learner})
    assert "learner's PD (the PD this model" in strategy._target({"pd": learner})
