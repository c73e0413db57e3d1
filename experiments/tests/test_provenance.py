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


# --------------------------------------------------------------------------- estimated compute times (issue 31)


def _fingerprint_by_hand(files: dict) -> str:
    import hashlib

    text = json.dumps({k: v["sha256"] for k, v in sorted(files.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _minutes_column(body: str) -> dict[str, str]:
    """First cell -> third cell (Minutes) of every row of the table."""
    out = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        if len(cells) == 7:
            out[cells[0]] = cells[2]
    return out


def _whole(cell: str) -> int:
    return int(cell.replace(r"$\approx$", "").replace("(est.)", "").strip())


def test_estimates_are_marked_and_the_total_is_the_sum_of_the_rows(tmp_path):
    from experiments import time_estimate

    first, second, third, *rest = STUDIES
    files = {"a.json": {"bytes": 1, "sha256": "0" * 64}}
    results = _archive(tmp_path, {first: {"timing": {"wall_seconds": 627.0, "n_jobs": 1, "load_average_1min": 2.0}},
                                  second: {"files": files}, third: {"files": files}})
    good = _fingerprint_by_hand(files)
    assert time_estimate.fingerprint(results / second) == good  # the writer's fingerprint is the reader's
    estimates = {second: {"cpu_minutes": 12.05, "archive_fingerprint": good},
                 third: {"cpu_minutes": 99.0, "archive_fingerprint": "stale"},  # of another archive: not used
                 first: {"cpu_minutes": 500.0, "archive_fingerprint": _fingerprint_by_hand({})}}  # recorded wins
    rows = provenance.records(results, C.archived_timings(results), provenance={}, estimates=estimates)
    body = provenance.table(rows, {})
    minutes = _minutes_column(body)
    assert minutes[rf"\code{{{first}}}"] == "10"  # 627 s = 10.45 min, recorded: no mark
    assert minutes[rf"\code{{{second}}}"] == r"$\approx$ 13 (est.)"  # an estimate is rounded up
    assert minutes[rf"\code{{{third}}}"] == "not recorded"
    assert r"(est.): the archive records no time" in body  # the note says how the estimates were made
    # the column adds up: 10 + 13 = 23 (the unrounded 10.45 + 12.05 = 22.5 would print 22)
    assert _whole(minutes["Recorded"]) == 10 and _whole(minutes["Estimated"]) == 13
    assert _whole(minutes["Total"]) == 23 == sum(_whole(v) for k, v in minutes.items()
                                                 if k.startswith(r"\code") and v != "not recorded")
    assert minutes["Total"].startswith(r"$\approx$")  # a total with an estimate in it is approximate
    macros = provenance.macros(rows)
    assert (macros["ComputeMinutesRecorded"], macros["ComputeMinutesEstimated"], macros["ComputeMinutesTotal"]) == \
        ("10", "13", "23")
    assert macros["ComputeHoursTotal"] == "0.4"  # 23 / 60 = 0.383
    assert (macros["ComputeStudiesRecorded"], macros["ComputeStudiesEstimated"]) == ("1", "1")
    assert macros["ComputeStudiesEstimatedList"] == second.replace("_", r"\_")
    assert macros["ComputeStudiesMissing"].split(", ")[0] == third.replace("_", r"\_")
    assert len(macros["ComputeStudiesMissing"].split(", ")) == 1 + len(rest)


def test_without_estimates_the_table_has_no_estimate_note(tmp_path):
    first, *_ = STUDIES
    results = _archive(tmp_path, {first: {"timing": {"wall_seconds": 600.0, "n_jobs": 1}}})
    rows = provenance.records(results, C.archived_timings(results), provenance={}, estimates={})
    body = provenance.table(rows, {})
    assert "(est.)" not in body and "approx" not in body
    assert _whole(_minutes_column(body)["Total"]) == 10


def test_committed_compute_table_marks_every_estimate_and_adds_up():
    """The committed table: a row is marked "(est.)" exactly when the committed estimates cover the study and its
    archive records no time, and its Total row is the sum of its rows."""
    estimates = json.loads(provenance.ESTIMATES.read_text())
    timed = C.archived_timings(C.ARCHIVE)
    body = (C.PAPER / "tables" / "compute.tex").read_text()
    minutes = _minutes_column(body)
    marked = {k for k, v in minutes.items() if "(est.)" in v and k.startswith(r"\code")}
    current = {s for s in estimates if s in STUDIES and s not in timed
               and estimates[s]["archive_fingerprint"] == provenance._fingerprint(C.ARCHIVE / s)}  # stale: unused
    expected = {rf"\code{{{s.replace('_', chr(92) + '_')}}}" for s in current}
    assert marked == expected
    rows = [v for k, v in minutes.items() if k.startswith(r"\code") and v != "not recorded"]
    assert _whole(minutes["Total"]) == sum(_whole(v) for v in rows)
    assert _whole(minutes["Total"]) == _whole(minutes["Recorded"]) + _whole(minutes["Estimated"])


def test_time_estimate_part_arithmetic():
    """measure(): mean CPU per timed unit x units in the archive (/ units per call), plus what is recorded."""
    from experiments.time_estimate import Part, measure

    calls = []

    def run(i):
        calls.append(i)
        return {"unrecorded_seconds": [3.0, 5.0][i]}

    out = measure(Part("p", 10, "repetition", run, sample=2, recorded_seconds=7.0))
    assert calls == [0, 1]
    assert out["cpu_seconds_per_unit"] == 4.0 and out["cpu_seconds"] == 4.0 * 10 + 7.0
    assert out["units_timed"] == 2 and out["units_in_archive"] == 10
    out = measure(Part("q", 60, "data set", lambda i: {"unrecorded_seconds": 6.0}, sample=1, scale=2))
    assert out["cpu_seconds"] == 3.0 * 60 and out["units_timed"] == 2
    out = measure(Part("r", 5, "repetition", None, sample=0, recorded_seconds=12.5))
    assert out["cpu_seconds"] == 12.5 and out["units_timed"] == 0 and out["cpu_seconds_per_unit"] is None


def test_time_estimate_counts_repetitions_from_the_archive():
    """The units of every part come from the archive: they match the R the rendered tables print."""
    from experiments import time_estimate

    parts = {p.name.split(" ")[0]: p.count for p in time_estimate.PARTS["classification"](
        C.ARCHIVE / "classification", 2) if "repetitions" in p.name}
    generated = (C.PAPER / "generated" / "classification.tex").read_text()
    for name, key in (("logistic", "Logistic"), ("gbm", "Gbm")):
        assert rf"\newcommand{{\ClassR{key}}}{{{parts[name]}}}" in generated
    ale = time_estimate.PARTS["ale"](C.ARCHIVE / "ale", 2)
    table = (C.PAPER / "tables" / "ale_coverage.tex").read_text()
    for part in ale[:-1]:
        rho, B = re.search(r"rho = ([0-9.]+) \(n = \d+, B = (\d+)\)", part.name).groups()
        assert re.search(rf"& {re.escape(rho)} & {part.count} & {B} &", table), part.name
