"""The notebook card and the ``res.pdpboot`` accessor; the tidy table's columns."""

import re

import pytest
import xarray as xr

import pdpboot
from pdpboot.report import ResultCard, display, report_html


def test_card_is_small_and_shows_every_node(regression_result):
    html = display(regression_result)._repr_html_()
    assert len(html.encode()) < 20_000
    assert html.count("<svg") == 3  # a sparkline per curve, a thumbnail per surface
    for name in ("temp", "day", "temp × hour"):
        assert f"<b>{name}</b>" in html
    assert "refit bootstrap, B = 20" in html and "95% percentile band (pointwise)" in html
    assert "<script" not in html  # a notebook trusts it or not: it needs no script


def test_card_range_is_the_estimates(regression_result):
    html = display(regression_result)._repr_html_()
    pd_temp = regression_result["temp"].ds["pd"]
    assert f"{float(pd_temp.min()):.4g} to {float(pd_temp.max()):.4g}" in html


def test_card_warns_about_a_missing_band(multiclass_result):
    html = multiclass_result.pdpboot._repr_html_()
    assert "no band yet" in html
    assert re.search(r"showing|cold: ", html)  # one line per class


def test_accessor_is_the_card_the_table_and_the_report(regression_result, tmp_path):
    res = regression_result
    assert isinstance(res.pdpboot.card(), ResultCard)
    assert res.pdpboot._repr_html_() == display(res)._repr_html_()
    assert repr(res.pdpboot) == "<pdpboot result: PD of temp, day, temp × hour>"
    frame = res.pdpboot.to_dataframe()
    assert frame.equals(pdpboot.tidy(res))
    assert res.pdpboot.report(tmp_path / "r.html").stat().st_size > 10_000
    assert type(res) is xr.DataTree  # the result itself is unchanged


def test_display_refuses_other_trees():
    with pytest.raises(ValueError, match="not a pdpboot result"):
        display(xr.DataTree.from_dict({"/a": xr.Dataset({"x": ("t", [1.0])})}))


def test_tidy_has_the_columns_seaborn_users_expect(regression_result):
    frame = pdpboot.tidy(regression_result)
    for column in ("effect", "feature", "feature_2", "value", "value_2", "output", "estimate", "lower", "upper",
                   "se", "method"):
        assert column in frame.columns
    pair = frame[(frame.effect == "pd") & (frame.feature_2 == "hour")]
    assert len(pair) == regression_result["temp__hour"].ds["pd"].size


def test_importing_the_report_registers_the_accessor():
    """``import pdpboot.report`` registers ``res.pdpboot`` for every result; results stay plain DataTrees."""
    import subprocess
    import sys

    code = ("import numpy as np, pandas as pd, pdpboot, pdpboot.report\n"
            "from sklearn.linear_model import LinearRegression\n"
            "X = pd.DataFrame({'a': np.arange(10.0), 'b': np.arange(10.0) % 3})\n"
            "res = pdpboot.partial_dependence(LinearRegression().fit(X, X.a), X, ['a'], grid=pdpboot.Grid(3))\n"
            "print(repr(res.pdpboot), type(res).__module__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["<pdpboot", "result:", "PD", "of", "a>", "xarray.core.datatree"]


def test_the_library_does_not_expose_the_report_client():
    namespace = {"display": print}
    exec("from pdpboot import *", namespace)
    assert namespace["display"] is print
    for name in ("display", "report_html", "write_report"):
        assert not hasattr(pdpboot, name)


def test_measured_caveats_reach_the_card_and_the_report(regression_result):
    basic = pdpboot.confidence_bands(regression_result, method="normal")
    assert "under-covered" not in display(basic)._repr_html_()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pdpboot.CoverageWarning)
        basic = pdpboot.confidence_bands(regression_result, method="basic")
    assert "basic bands under-cover PD curves" in display(basic)._repr_html_()
    page = report_html(basic)
    assert '<details class="warn"><summary>basic bands under-cover' in page
    assert "See the validation page of the documentation." in page  # the full warning
