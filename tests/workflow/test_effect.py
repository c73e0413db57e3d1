"""``--effect pd|ale|both``: ALE results, summary ranking, workbook sheets, plots and repro."""

import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import pdpboot
from pdpboot.cli import main
from pdpboot.schema import get_node
from pdpboot.workflow import InputError
from pdpboot.workflow.options import RunConfig

from .helpers import FAST, HAS_OPENPYXL, REPO, only_run_folder, regression_table, same, sheet_frame


def _run(tmp_path_factory, effect: str, *extra: str):
    base = tmp_path_factory.mktemp(f"effect_{effect}")
    data = base / "table.csv"
    regression_table().to_csv(data, index=False)
    out = base / "runs"
    code = main(["run", str(data), "--target", "y", "--pairs", "x1:count,x1:colour", "--effect", effect,
                 "--out", str(out), *FAST, *extra])
    assert code == 0
    return only_run_folder(out)


@pytest.fixture(scope="module")
def both_run(tmp_path_factory):
    return _run(tmp_path_factory, "both")


@pytest.fixture(scope="module")
def ale_run(tmp_path_factory):
    return _run(tmp_path_factory, "ale")


def test_effect_option_defaults_to_pd_and_is_checked():
    assert RunConfig.from_dict({"target": "y"}).effect == "pd"
    assert RunConfig.from_dict({"target": "y", "effect": "both"}).effect == "both"
    with pytest.raises(InputError, match="effect"):
        RunConfig.from_dict({"target": "y", "effect": "shap"})
    with pytest.raises(InputError, match="--effect pd"):  # the debiased bands are PD bands only
        RunConfig.from_dict({"target": "y", "effect": "ale", "uncertainty": "debiased"})


def test_both_writes_pd_and_ale_from_the_same_resamples(both_run):
    pd_res = pdpboot.load(both_run / "results.nc")
    ale = pdpboot.load(both_run / "ale.nc")
    assert ale.attrs["effect"] == "ale"
    # every feature, and only the numeric pair (2-D ALE needs ordered features)
    assert sorted(ale.children) == ["colour", "count", "x1", "x1__count"]
    for name in ale.children:
        node = ale[name]
        assert {"ale", "ale_resamples", "ale_band", "ale_se", "ale_bias"} <= set(node.ds.data_vars)
        assert node.attrs["effect"] == "ale"
    # same rng and resampling: the ALE refits used the same rows as the PD refits
    np.testing.assert_array_equal(ale["resample_absent"].values, pd_res["resample_absent"].values)
    assert ale.attrs["n_resamples"] == pd_res.attrs["n_resamples"] == 5
    pngs = {p.name for p in (both_run / "plots").glob("*.png")}
    assert {"ale_x1.png", "ale_count.png", "ale_colour.png", "ale2_x1__count.png", "overview_ale.png",
            "pd_x1.png", "overview.png"} <= pngs
    assert "ale2_x1__colour.png" not in pngs


def test_summary_ranks_features_by_ale_range(both_run):
    text = (both_run / "summary.md").read_text()
    assert "## Features ranked by the range of their PD curve" in text
    section = text.split("## Features ranked by the range of their ALE curve")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d) \| (\w+) \| ([-\d.e]+) \|", section, flags=re.M)
    ale = pdpboot.load(both_run / "ale.nc")
    ranges = {f: float(np.ptp(get_node(ale, f)["ale"].values)) for f in ("x1", "count", "colour")}
    assert [name for _, name, _ in rows] == sorted(ranges, key=ranges.get, reverse=True)
    for _, name, value in rows:
        assert float(value) == pytest.approx(ranges[name], rel=5e-3)
    assert "no 2-D ALE for 'x1' x 'colour'" in text
    assert "`ale.nc`" in text


@pytest.mark.skipif(not HAS_OPENPYXL, reason="needs openpyxl")
def test_workbook_ale_sheets_match_ale_nc(both_run):
    import openpyxl

    wb = openpyxl.load_workbook(both_run / "workbook.xlsx", read_only=True)
    assert {"ALE x1", "ALE count", "ALE colour", "ALE2 x1 x count", "PD x1"} <= set(wb.sheetnames)
    ale = pdpboot.load(both_run / "ale.nc")
    rows = list(wb["ALE x1"].iter_rows(values_only=True))  # the first edge's empty bin_count may be cut off
    x1 = pd.DataFrame([tuple(r) + (None,) * (len(rows[0]) - len(r)) for r in rows[1:]], columns=rows[0])
    # one writer for every effect: the same column names as the PD sheets (pd, pd_lower, ...)
    assert list(x1.columns) == ["x1 (bin edge)", "ale", "ale_lower", "ale_upper", "ale_se", "bin_count"]
    node = ale["x1"]
    same(x1["x1 (bin edge)"], node["x1"].values)
    same(x1["ale"], node["ale"].values[0])
    same(x1["ale_lower"], node["ale_band"].sel(ci_bound="lower").values[0])
    same(x1["ale_upper"], node["ale_band"].sel(ci_bound="upper").values[0])
    same(x1["ale_se"], node["ale_se"].values[0])
    # rows per bin: on each bin's upper edge; the training rows with x1 (NaN rows have no bin)
    assert x1["bin_count"].isna().iloc[0]
    assert list(x1["bin_count"].iloc[1:].astype(int)) == list(np.asarray(node.attrs["bin_counts"]))
    colour = sheet_frame(wb["ALE colour"])
    assert list(colour.columns)[0] == "colour (level)"
    assert list(colour["colour (level)"]) == list(ale["colour"]["colour"].values)
    pair = sheet_frame(wb["ALE2 x1 x count"])
    surface = ale["x1__count"]["ale"].sel(output="y").transpose("x1", "count").values
    same(pair["ale"], surface.ravel())


def test_ale_only_run_and_its_repro_script(ale_run, tmp_path):
    assert (ale_run / "ale.nc").is_file() and not (ale_run / "results.nc").exists()
    pngs = sorted(p.name for p in (ale_run / "plots").glob("*.png"))
    assert pngs == ["ale2_x1__count.png", "ale_colour.png", "ale_count.png", "ale_x1.png", "overview_ale.png"]
    text = (ale_run / "summary.md").read_text()
    assert "range of their ALE curve" in text and "range of their PD curve" not in text
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "repro.py"], cwd=ale_run, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ale.nc reproduced" in proc.stdout and "results.nc" not in proc.stdout


def test_ale_crash_after_pd_keeps_pd_files_and_names_the_effect(tmp_path, capsys, monkeypatch):
    """Issue 26 B.8: PD's files are written (and load verified) before ALE starts; when ALE then fails, the
    run keeps every PD file, says which effect failed and why, and exits 1."""
    import pdpboot.workflow.effect_ale as effect_ale

    data = tmp_path / "table.csv"
    regression_table().to_csv(data, index=False)
    out = tmp_path / "runs"
    seen_before_ale = []

    def broken(*args, **kwargs):
        partial = [p for p in out.glob("pdpboot_*_incomplete/results.nc")]
        seen_before_ale.extend(partial)
        pdpboot.load(partial[0])  # complete and verified before the next effect starts
        raise TypeError("'<' not supported between instances of 'str' and 'float'")

    monkeypatch.setattr(effect_ale, "bootstrap_ale", broken)
    code = main(["run", str(data), "--target", "y", "--pairs", "x1:count", "--effect", "both", "--out", str(out),
                 *FAST])
    captured = capsys.readouterr()
    assert code == 1 and len(seen_before_ale) == 1
    errors = [line for line in captured.err.splitlines() if line.startswith("pdpboot: error:")]
    assert len(errors) == 1 and "ALE failed" in errors[0] and "TypeError" in errors[0] and "'<' not" in errors[0]
    folder = only_run_folder(out)
    res = pdpboot.load(folder / "results.nc")
    assert "pd_band" in res["x1"].ds
    assert not (folder / "ale.nc").exists()
    assert {"pd_x1.png", "pd2_x1__count.png", "overview.png"} <= {p.name for p in (folder / "plots").iterdir()}
    assert not list((folder / "plots").glob("ale*"))
    summary = (folder / "summary.md").read_text()
    problems = summary.split("## Problems", 1)[1]
    assert "ALE failed" in problems and "TypeError" in problems
    assert "## Features ranked by the range of their PD curve" in summary
    assert "about the learner's PD" in summary  # the band's target of inference, from the result's attrs
    if HAS_OPENPYXL:
        import openpyxl

        names = openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True).sheetnames
        assert "PD x1" in names and not [n for n in names if n.startswith("ALE")]
    assert "ALE failed" in (folder / "run.log").read_text()


def test_a_new_effect_is_its_report_plus_one_registration(tmp_path, monkeypatch):
    """Issue 25 item 5: the run, summary.md, the workbook, the plots and the file list follow the registry;
    nothing else names an effect."""
    from pdpboot.workflow import effect_pd, options, strategy
    from pdpboot.workflow.effect import EffectReport
    from pdpboot.workflow.run import run_workflow

    toy = EffectReport(
        name="toy", label="TOY", file="toy.nc", variable="pd", describe="the toy effect.",
        feature_sets=lambda problem: ([*problem.pd_features], ["toy note"]),
        compute={"bootstrap": effect_pd.REPORT.compute["bootstrap"]},
        summary=lambda ctx, tree: ["", f"## Toy section ({len(tree.children)} nodes)"],
        plots=effect_pd.plots, sheet_prefixes=("TOY ", "TOY2 "), sheet_variables=("pd",))
    monkeypatch.setitem(strategy.EFFECTS, "toy", toy)  # the one registration line (--effect reads the registry)
    data = tmp_path / "t.csv"
    regression_table().to_csv(data, index=False)
    config = options.merge({"target": "y", "effect": "toy", "n_resamples": 5, "n_estimators": 5,
                            "grid_resolution": 5, "ice_samples": 0, "n_jobs": 1, "out": str(tmp_path / "o"),
                            "workbook": HAS_OPENPYXL, "data": str(data)}, {})
    record = run_workflow(config, quiet=True)
    folder = record.folder
    assert set(pdpboot.load(folder / "toy.nc").children) == {"x1", "count", "colour"}
    assert not (folder / "results.nc").exists()
    summary = (folder / "summary.md").read_text()
    assert "## Toy section (3 nodes)" in summary and "- `toy.nc`: the toy effect." in summary
    assert "TOY: toy note" in summary
    assert (folder / "plots" / "pd_x1.png").is_file()
    if HAS_OPENPYXL:
        import openpyxl

        assert {"TOY x1", "TOY count", "TOY colour"} <= set(
            openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True).sheetnames)


def test_interrupt_during_ale_keeps_the_finished_pd_files(tmp_path, capsys, monkeypatch):
    """Ctrl-C (or any BaseException) after PD finished: results.nc stays, in pdpboot_<stamp>_incomplete."""
    import pdpboot.workflow.effect_ale as effect_ale

    data = tmp_path / "table.csv"
    regression_table().to_csv(data, index=False)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(effect_ale, "bootstrap_ale", interrupted)
    code = main(["run", str(data), "--target", "y", "--effect", "both", "--out", str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err
    assert code == 130 and "results.nc" in err and "_incomplete" in err
    (folder,) = list((tmp_path / "o").iterdir())
    assert folder.name.endswith("_incomplete") and "KeyboardInterrupt" in (folder / "INCOMPLETE.txt").read_text()
    assert "pd_band" in pdpboot.load(folder / "results.nc")["x1"].ds
    assert (folder / "plots" / "pd_x1.png").is_file() and not (folder / "ale.nc").exists()


def test_report_holds_pd_and_ale(both_run):
    page = (both_run / "report.html").read_text(encoding="utf-8")
    assert "<h3>PD</h3>" in page and "<h3>ALE</h3>" in page
    assert page.count('data-key="x1"') == 2  # one PD and one ALE figure, both shown by the picker's "x1"
    assert "ALE estimate of x1" in page
    # pd_*/pd2_*/ale_*/ale2_* figures are drawn, not embedded; every other plot (overviews, ...) is
    drawn = ("pd_", "pd2_", "ale_", "ale2_")
    others = [p for p in (both_run / "plots").glob("*.png") if not p.name.startswith(drawn)]
    assert {"overview.png", "overview_ale.png"} <= {p.name for p in others}
    assert page.count("data:image/png") == len(others)
