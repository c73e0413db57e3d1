"""The HTML report without a browser: self-contained, every node drawn, numbers as stored, data inert."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot import Grid
from pdpboot.cli import main
from pdpboot.report import report_html
from pdpboot.report.figures import nice_ticks
from pdpboot.report.page import sections, to_html


def _attributes(page: str, name: str) -> list[str]:
    return re.findall(rf'\b{name}="([^"]*)"', page)


def test_report_is_self_contained(regression_result):
    page = report_html(regression_result)
    assert not re.search(r"<link\b|<script[^>]+src=|<iframe|@import|url\((?!#)", page)
    # every address in the page is inside it: an anchor, a clip path or inline data
    for name in ("src", "href"):
        assert all(v.startswith(("#", "data:")) for v in _attributes(page, name)), name
    assert "<script>" in page and "<style>" in page


def test_report_draws_every_node_with_its_numbers(regression_result):
    res = regression_result
    page = report_html(res)
    assert _attributes(page, "data-key") == ["temp", "day", "temp__hour"]
    assert page.count('<svg class="chart curve"') == 2 and page.count('<svg class="chart surface"') == 2
    hovers = [json.loads(h.replace("&quot;", '"').replace("&amp;", "&")) for h in _attributes(page, "data-hover")]
    temp = res["temp"].ds.isel(output=0)
    assert hovers[0]["x"] == [f"{v:.4g}" for v in temp["temp"].values]
    assert hovers[0]["est"] == [f"{v:.4g}" for v in temp["pd"].values]
    lower = temp["pd_band_pointwise"].sel(ci_bound="lower").values
    assert hovers[0]["lo"] == [f"{v:.4g}" for v in lower]
    assert hovers[1]["x"] == ["0", "1", "2"]  # levels as they are
    pair = res["temp__hour"].ds.isel(output=0)
    assert hovers[2]["est"][3][5] == f"{float(pair['pd'].isel(temp=3, hour=5)):.4g}"
    # the numbers a paper cites, under each curve: every grid value with its interval
    table = re.search(r"<details class=\"numbers\">.*?</details>", page, re.S).group(0)
    assert table.count("<tr>") == 1 + temp.sizes["temp"]
    assert f"[{lower[0]:.4g}, " in table


def test_bootstrap_result_without_bands_gets_the_default_band(multiclass_result):
    assert "pd_band" not in multiclass_result["temp"].ds
    page = report_html(multiclass_result)
    assert "computed for this report" in page
    assert page.count('<polygon class="band"') == 2 * 3  # two features, three classes


def test_names_from_the_data_are_inert():
    X = pd.DataFrame({"<img src=x onerror=alert(1)>": np.arange(12.0), "b&c": np.arange(12.0) % 4})
    res = pdpboot.partial_dependence(LinearRegression().fit(X, X.iloc[:, 0] * 2), X, list(X.columns),
                                     grid=Grid(4))
    page = report_html(res)
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "no band (one fit)" in page


def test_markdown_subset():
    text = ("# Title\n\n| a | b |\n|---|---|\n| `x<1` | *it* \\| pipe |\n\n- one\n- **two**\n\n"
            "Text with <script>alert(1)</script> and \\*stars\\* and &lt;tag&gt;.")
    html = to_html(text)
    assert "<h1>Title</h1>" in html
    assert "<td><code>x&lt;1</code></td><td><em>it</em> | pipe</td>" in html
    assert "<ul><li>one</li><li><strong>two</strong></li></ul>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&#42;stars&#42;" in html and "<em>stars</em>" not in html
    assert "&lt;tag&gt;" in html
    assert sections("intro\n## A\nx\n## B\ny") == [("", "intro"), ("A", "x"), ("B", "y")]


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (0, 40, [0, 10, 20, 30, 40]),
    (2.64, 37.64, [10, 20, 30]),
    (0.001, 0.0034, [0.001, 0.0015, 0.002, 0.0025, 0.003]),
    (-3, 3, [-2, 0, 2]),
])
def test_nice_ticks(lo, hi, expected):
    assert nice_ticks(lo, hi) == pytest.approx(expected)


def test_cli_report_of_result_files(regression_result, multiclass_result, tmp_path, capsys):
    a, b = tmp_path / "a.nc", tmp_path / "b.nc"
    pdpboot.save(regression_result, a)
    pdpboot.save(multiclass_result, b)
    out = tmp_path / "both.html"
    assert main(["report", str(a), str(b), "-o", str(out), "--title", "Two results"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<title>Two results</title>" in page
    assert page.count("data-key=") == 3 + 2
    assert "Wrote" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "missing.nc")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_run_folder_report_refuses_a_result_file_of_another_run(regression_result, multiclass_result, tmp_path,
                                                                 capsys):
    """Hostile round 2: ale.nc copied from another run folder was reported beside this run's summary and PD."""
    folder = tmp_path / "pdpboot_20260101-120000"
    (folder / "repro_inputs").mkdir(parents=True)
    this = {"created": "2026-01-01T12:00:00+00:00", "data": "prices.csv", "data_sha256": "a" * 64}
    other = {**this, "created": "2026-01-02T09:00:00+00:00", "data": "grunfeld.csv"}
    (folder / "repro_inputs" / "config.json").write_text(json.dumps(this))

    def stamped(result, config):
        result = result.copy()
        result.attrs["cli_config"] = json.dumps(config)
        return result

    pdpboot.save(stamped(regression_result, this), folder / "results.nc")
    pdpboot.save(stamped(multiclass_result, other), folder / "ale.nc")
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "ale.nc" in err and "another run" in err and "grunfeld.csv" in err and "\n" not in err.strip()
    assert not (folder / "report.html").exists()
    pdpboot.save(multiclass_result, folder / "ale.nc")  # saved by pdpboot.save, not by this run
    assert main(["report", str(folder)]) == 2
    assert "not written by pdpboot run" in capsys.readouterr().err
    (folder / "ale.nc").unlink()  # this run's own files alone: reported
    (folder / "repro_inputs" / "config.json").unlink()
    assert main(["report", str(folder)]) == 0 and (folder / "report.html").is_file()


def test_report_carries_the_numbers_as_csv(regression_result):
    import base64
    import io

    page = report_html(regression_result)
    data = re.search(r'download="pdpboot_pd.csv" href="data:text/csv;base64,([^"]+)"', page).group(1)
    frame = pd.read_csv(io.StringIO(base64.b64decode(data).decode("utf-8")))
    temp = frame[(frame.feature == "temp") & frame.feature_2.isna()]
    ds = regression_result["temp"].ds.isel(output=0)
    np.testing.assert_allclose(temp["estimate"], ds["pd"].values, rtol=1e-5)
    np.testing.assert_allclose(temp["upper"], ds["pd_band"].sel(ci_bound="upper").values, rtol=1e-5)
    assert len(frame) == 8 + 3 + 8 * 8


def test_cli_report_refuses_result_files_of_two_runs(regression_result, multiclass_result, tmp_path, capsys):
    """Issue 26, third round, item 2: ``pdpboot report a.nc b.nc`` naming files of two runs was not checked."""
    this = {"created": "2026-01-01T12:00:00+00:00", "data": "prices.csv", "data_sha256": "a" * 64}
    other = {**this, "created": "2026-01-02T09:00:00+00:00", "data": "grunfeld.csv"}

    def stamped(result, config, name):
        result = result.copy()
        result.attrs["cli_config"] = json.dumps(config)
        pdpboot.save(result, tmp_path / name)
        return str(tmp_path / name)

    a, b = stamped(regression_result, this, "results.nc"), stamped(multiclass_result, other, "ale.nc")
    out = tmp_path / "r.html"
    assert main(["report", a, b, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not files of one run" in err and "grunfeld.csv" in err and "prices.csv" in err and "\n" not in err
    assert not out.exists()
    pdpboot.save(multiclass_result, tmp_path / "py.nc")  # a run's file with one saved from Python
    assert main(["report", a, str(tmp_path / "py.nc"), "-o", str(out)]) == 2
    assert "Python call" in capsys.readouterr().err and not out.exists()
    c = stamped(multiclass_result, this, "ale.nc")  # both files of one run: reported
    assert main(["report", a, c, "-o", str(out)]) == 0 and out.is_file()


def test_report_of_separate_calls_names_each_result(regression_result, multiclass_result, tmp_path, capsys):
    """Results saved from Python by separate calls are reported together, each labelled with its file and call."""
    a, b = tmp_path / "first.nc", tmp_path / "second.nc"
    pdpboot.save(regression_result, a)
    pdpboot.save(multiclass_result, b)
    out = tmp_path / "r.html"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    assert "separate Python calls" in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert "come from 2 separate runs or calls" in page
    for name, result in (("first.nc", regression_result), ("second.nc", multiclass_result)):
        assert f"PD of &#x27;{name}&#x27;: Python call created {result.attrs['created']}" in page
    one = report_html([regression_result, regression_result])  # one call twice: no labels, no warning
    assert "separate runs or calls" not in one
    assert "PD of result 2" in report_html([regression_result, multiclass_result])
