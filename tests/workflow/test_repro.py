"""Reproduction across environments (issue 26 B.11): what is recorded, and what "reproduced" means.

After installing the test extra (numba), the demo's ``repro.py`` printed "results.nc NOT
reproduced": the compiled tree walk sums in another order (differences of about 1e-14).
"""

import json

import numpy as np
import pytest
import xarray as xr

import pdpboot
import pdpboot.engine._tree_compiled as compiled_mod  # holds the compiled-walk switch
import pdpboot.engine.tree as tree_module
from pdpboot.workflow import repro
from pdpboot.workflow.repro import REPRO_RTOL, compare

from .helpers import FAST, only_run_folder, regression_table, run_cli


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    base = tmp_path_factory.mktemp("repro")
    regression_table().to_csv(base / "table.csv", index=False)
    code, _ = run_cli(["run", base / "table.csv", "--target", "y", "--out", base / "runs", *FAST])
    assert code == 0
    return only_run_folder(base / "runs")


def _scaled_copy(folder, tmp_path, factor):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(folder, copy)
    res = pdpboot.load(copy / "results.nc")
    res["x1"].dataset = res["x1"].to_dataset().assign(pd_resamples=res["x1"]["pd_resamples"] * factor)
    pdpboot.save(res, copy / "results.nc")
    return copy


def test_versions_record_every_library_that_changes_numbers(monkeypatch):
    recorded = repro.versions()
    for name in ("numpy", "scipy", "scikit-learn", "numba", "xgboost", "lightgbm", "catboost", "tree walk"):
        assert name in recorded, name
    assert recorded["tree walk"] == ("compiled (numba)" if tree_module.kernel_available() else "brute force (no numba)")
    monkeypatch.setattr(repro, "_version", lambda name: None if name == "numba" else "1.0")
    assert repro.versions()["numba"] == "not installed"  # installing it later is a difference


def test_last_bit_differences_are_reproduced_within_the_stated_tolerance(run_folder, tmp_path, capsys):
    copy = _scaled_copy(run_folder, tmp_path, 1 + 4e-15)
    code, out = run_cli(["reproduce", copy], capsys)
    assert code == 0, out.err
    line = next(x for x in out.out.splitlines() if "results.nc" in x)
    assert "reproduced within the stated tolerance, not identically" in line
    assert "node 'x1', variable 'pd_resamples'" in line and f"{REPRO_RTOL:g}" in line
    assert "NOT" not in out.out + out.err


def test_larger_differences_are_not_reproduced_and_their_size_is_given(run_folder, tmp_path, capsys):
    copy = _scaled_copy(run_folder, tmp_path, 1 + 1e-9)
    code, out = run_cli(["reproduce", copy], capsys)
    assert code == 1
    assert "results.nc NOT reproduced" in out.err and "node 'x1', variable 'pd_resamples': differs by up to" in out.err


def test_other_tree_walk_is_reported_and_still_reproduces(run_folder, tmp_path, capsys, monkeypatch):
    """The environment of the report: the run without the compiled walk, the reproduction with it (or back)."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_folder, copy)
    config = json.loads((copy / "repro_inputs" / "config.json").read_text())
    walked = config["versions"]["tree walk"]
    other = "brute force (no numba)" if walked != "brute force (no numba)" else "compiled (numba)"
    if other == "compiled (numba)" and not tree_module.kernel_available():
        pytest.skip("numba is not installed: only brute force is available")
    monkeypatch.setattr(compiled_mod, "_KERNEL", False if other == "brute force (no numba)" else compiled_mod._KERNEL)
    code, out = run_cli(["reproduce", copy], capsys)
    assert f"tree walk {walked} was used for the run; this is {other}" in out.err
    assert code == 0, out.err
    assert "results.nc reproduced" in out.out


def _tree(values, attrs=None):
    return xr.DataTree.from_dict({
        "/": xr.Dataset(attrs=dict(attrs or {"n_rows": 10, "estimator": "Ridge()"})),
        "/x": xr.Dataset({"pd": (("output", "x"), np.asarray(values)[None, :]),
                          "pd_se": (("output", "x"), np.full((1, len(values)), 1e-3))},
                         coords={"x": np.arange(len(values)), "output": ["y"]}),
    })


def test_compare_identical_within_tolerance_and_not():
    base = _tree([1.0, 2.0, 1000.0])
    assert compare(_tree([1.0, 2.0, 1000.0]), base).identical
    # relative to the statistic's scale (1000): an error of 1e-11 on a value near 1 is reproduced
    near = compare(_tree([1.0 + 1e-11, 2.0, 1000.0]), base)
    assert near.reproduced and not near.identical
    assert near.largest[2] == "node 'x', variable 'pd'" and near.largest[1] == pytest.approx(1e-11, rel=1e-3)
    assert not compare(_tree([1.0 + 1e-6, 2.0, 1000.0]), base).reproduced
    assert not compare(_tree([np.nan, 2.0, 1000.0]), base).reproduced  # missing values must match
    text = compare(_tree([1.0, 2.0, 1000.0], {"n_rows": 10, "estimator": "Lasso()"}), base)
    assert text.problems == ["root attribute 'estimator' differs"]
    extra = _tree([1.0, 2.0, 1000.0])
    extra["y"] = xr.DataTree(xr.Dataset({"pd": ("k", [1.0])}))
    assert compare(extra, base).problems == ["node 'y' exists in only one result"]


def test_engine_attr_differing_with_the_environment_is_reported_not_a_failure():
    base = _tree([1.0, 2.0, 1000.0], {"n_rows": 10, "engine": "tree: exact, checked against the model's predictions"})
    other = _tree([1.0, 2.0, 1000.0 + 1e-11], {"n_rows": 10, "engine": "brute: cheaper by the cost model"})
    result = compare(other, base)
    assert result.reproduced and not result.identical
    assert result.notes == ["root attribute 'engine': \"tree: exact, checked against the model's predictions\" -> "
                            "'brute: cheaper by the cost model'"]
    from pdpboot.workflow.repro import verdict

    assert "Computed differently here: root attribute 'engine'" in verdict("results.nc", result, False)
