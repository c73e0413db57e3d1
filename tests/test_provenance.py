"""The paper's provenance table: every study's compute time ("not recorded" when none) and code version."""

from __future__ import annotations

import json
import math
import re

import pytest

from experiments import STUDIES, provenance
from experiments import _common as C


def _archive(tmp_path, manifests: dict) -> object:
    for study, manifest in manifests.items():
        (tmp_path / study).mkdir(parents=True)
        (tmp_path / study / "MANIFEST.json").write_text(json.dumps({"study": study, "files": {}, **manifest}))
    return tmp_path


def test_studies_without_a_recorded_time_are_listed_not_guessed(tmp_path):
    first, second, *rest = STUDIES
    results = _archive(tmp_path, {first: {"timing": {"wall_seconds": 600.0, "n_jobs": 1, "load_average_1min": 2.4}},
                                  second: {}})
    timings = C.archived_timings(results)
    rows = provenance.records(results, timings, provenance={})
    by_study = {r["study"]: r for r in rows}
    assert [r["study"] for r in rows] == list(STUDIES)
    assert by_study[first]["minutes"] == 10.0  # 600 s
    assert all(math.isnan(by_study[s]["minutes"]) for s in [second, *rest])
    macros = provenance.macros(rows)
    assert macros["ComputeMinutesRecorded"] == "10"
    assert macros["ComputeHoursRecorded"] == "0.2"  # 10 / 60 = 0.1667
    assert macros["ComputeStudiesRecorded"] == "1"
    assert macros["ComputeStudies"] == str(len(STUDIES))
    assert macros["ComputeStudiesMissing"].split(", ")[0] == second.replace("_", r"\_")
    body = provenance.table(rows, {})
    assert body.count("not recorded") == len(STUDIES) - 1
    assert re.search(rf"\\code{{{first}}} & text & 10 & 1 & 2 &", body)


def test_no_recorded_time_at_all_reads_dashes():
    rows = [{"study": s, "minutes": math.nan, "n_jobs": None, "load": math.nan, "code": "x", "note": ""}
            for s in STUDIES]
    assert provenance.macros(rows)["ComputeMinutesRecorded"] == "--"
    assert provenance.macros(rows)["ComputeStudiesRecorded"] == "0"


def test_code_version_of_the_manifest_wins_over_the_provenance_file(tmp_path):
    first, second, third, *_ = STUDIES
    results = _archive(tmp_path, {first: {"code": "aaaaaaa", "timing": {"wall_seconds": 60.0, "code": "bbbbbbb"}},
                                  second: {"code": "ccccccc"}})
    known = {first: {"code": "ddddddd"}, second: {"code": "eeeeeee", "note": "mixed runs"},
             third: {"code": "fffffff"}}
    rows = {r["study"]: r for r in provenance.records(results, C.archived_timings(results), provenance=known)}
    assert rows[first]["code"] == "bbbbbbb"  # the commit when the computation finished
    assert rows[second]["code"] == "ccccccc" and rows[second]["note"] == "mixed runs"
    assert rows[third]["code"] == "fffffff"  # no manifest: the curated history
    assert all(rows[s]["code"] == "unknown" for s in list(STUDIES)[3:])


def test_committed_archive_names_a_commit_for_every_study():
    rows = provenance.records(C.ARCHIVE, C.archived_timings(C.ARCHIVE))
    assert [r["study"] for r in rows if not re.fullmatch(r"[0-9a-f]{7}(\+modified)?", r["code"])] == []


def test_float_labels_map_generated_files_to_their_floats(tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text(
        "\\begin{table}\\caption{x}\\label{tab:a}\\input{tables/a}\\end{table}\n"
        "% \\begin{figure}\\includegraphics{figures/old}\\label{fig:old}\\end{figure}\n"
        "\\input{sections/s}\n")
    (tmp_path / "sections" / "s.tex").write_text(
        "\\begin{figure}[t]\\includegraphics[width=1in]{figures/b.pdf}\\caption{y}\\label{fig:b}\\end{figure}")
    assert provenance.float_labels(tmp_path) == {"tables/a": ("table", "tab:a"), "figures/b": ("figure", "fig:b")}


def test_code_version_outside_git_is_unknown(tmp_path):
    assert C.code_version(tmp_path) == "unknown"
    assert re.fullmatch(r"[0-9a-f]{7}(\+modified)?", C.code_version())


def test_quick_run_record_only_from_a_complete_record(tmp_path):
    from experiments.run import quick_run_record

    full = {study: {"wall_seconds": 6.0} for study in STUDIES} | {"_run": {"wall_seconds": 323.0, "cpu_count": 2}}
    assert quick_run_record(full) == {"wall_seconds": 323.0, "cpu_count": 2}
    assert quick_run_record({"coverage": {"wall_seconds": 1.0}, "_run": {"wall_seconds": 9.0}}) == {}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(full))
    assert quick_run_record(paths=(tmp_path / "none.json", path))["wall_seconds"] == pytest.approx(323.0)
