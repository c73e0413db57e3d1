"""Every result file the CLI writes loads with verification on, for every kind of feature (issue 26 B.9).

``pdpboot run mtcars.csv --target mpg --features vs,wt --effect ale`` (``vs`` a 0/1 integer) wrote an
``ale.nc`` that ``pdpboot.load`` refused as damaged: the ALE levels were an object array of ints,
checksummed as text and read back as int64.  Here each kind of feature goes through PD and ALE, and
every tree the CLI saves is also written to Zarr and loaded verified.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import pdpboot
import pdpboot.workflow.run as run_module
from pdpboot.workflow.repro import main as repro_main

from .helpers import only_run_folder, run_cli

QUICK = ["--n-resamples", "3", "--n-estimators", "5", "--grid-resolution", "5", "--ice-samples", "5",
         "--n-jobs", "1", "--quiet", "--no-workbook"]


def _table(n=120, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    vs = rng.integers(0, 2, n)
    flag = rng.random(n) < 0.4
    grade = rng.choice(["low", "mid", "high"], n)
    note = rng.choice(["alpha", "beta", "gamma"], n).astype(object)
    note[rng.choice(n, 10, replace=False)] = None
    day = pd.date_range("2020-01-01", periods=n, freq="3D")[rng.permutation(n)]
    x = rng.normal(size=n)
    y = 2 * vs + flag + 1.5 * (grade == "high") + (note == "beta") + x + rng.normal(0, 0.5, n)
    return pd.DataFrame({"vs": vs, "flag": flag, "grade": grade, "note": note, "day": day, "x": x, "y": y})


@pytest.fixture
def zarr_copies(monkeypatch, tmp_path):
    """Every tree the CLI saves is also saved as Zarr (the CLI itself writes netCDF)."""
    written = []

    def save_both(tree, path):
        out = pdpboot.save(tree, path)
        written.append((tree, pdpboot.save(tree, tmp_path / f"zarr_{len(written)}_{Path(path).stem}.zarr")))
        return out

    monkeypatch.setattr(run_module, "save", save_both)
    return written


def _check_run(out: Path, written, effects: tuple[str, ...]) -> Path:
    folder = only_run_folder(out)
    names = {"pd": "results.nc", "ale": "ale.nc"}
    assert sorted(p.name for p in folder.glob("*.nc")) == sorted(names[e] for e in effects)
    for path in folder.glob("*.nc"):
        pdpboot.load(path)  # verify=True: refuses a file that fails its own checksums
    assert len(written) == len(effects)
    for tree, zarr_path in written:
        loaded = pdpboot.load(zarr_path)
        xr.testing.assert_identical(loaded, tree)
    return folder


KINDS = {  # feature kind -> (column, file format)
    "0/1 integer": ("vs", "csv"),
    "bool": ("flag", "csv"),
    "text": ("grade", "csv"),
    "category (parquet)": ("grade", "parquet"),
    "text with NaN": ("note", "csv"),
    "date (text)": ("day", "csv"),
    "date (parquet datetime)": ("day", "parquet"),
    "float": ("x", "csv"),
}


@pytest.mark.parametrize("effect", ["pd", "ale"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_written_file_loads_verified(tmp_path, zarr_copies, capsys, kind, effect):
    column, fmt = KINDS[kind]
    table = _table()
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        table["grade"] = pd.Categorical(table["grade"], categories=["low", "mid", "high"], ordered=True)
        data = tmp_path / "table.parquet"
        table.to_parquet(data)
    else:
        data = tmp_path / "table.csv"
        table.to_csv(data, index=False)
    out = tmp_path / "out"
    features = ",".join(dict.fromkeys([column, "x"]))
    code, captured = run_cli(["run", data, "--target", "y", "--features", features, "--effect", effect,
                              "--out", out, *QUICK], capsys)
    assert code == 0, captured.err
    folder = _check_run(out, zarr_copies, (effect,))
    result = pdpboot.load(folder / ("results.nc" if effect == "pd" else "ale.nc"))
    assert column in result.children


def test_mtcars_like_vs_ale_reproduces(tmp_path, zarr_copies, capsys):
    """The reported case: a 0/1 integer with --effect ale; repro.py then loads and compares its ale.nc."""
    table = _table()[["vs", "x", "y"]].rename(columns={"x": "wt", "y": "mpg"})
    table.to_csv(tmp_path / "mtcars.csv", index=False)
    code, _ = run_cli(["run", tmp_path / "mtcars.csv", "--target", "mpg", "--features", "vs,wt", "--effect", "both",
                       "--out", tmp_path / "out", *QUICK])
    assert code == 0
    folder = _check_run(tmp_path / "out", zarr_copies, ("pd", "ale"))
    capsys.readouterr()
    assert repro_main(folder, []) == 0
    printed = capsys.readouterr().out
    assert "ale.nc reproduced" in printed and "results.nc reproduced" in printed


def test_all_kinds_together_both_effects(tmp_path, zarr_copies, capsys):
    """Every kind in one table, PD and ALE from one run (ALE's level order uses the other columns too)."""
    _table().to_csv(tmp_path / "table.csv", index=False)
    code, captured = run_cli(["run", tmp_path / "table.csv", "--target", "y", "--features", "vs,flag,grade,note,day,x",
                              "--effect", "both", "--out", tmp_path / "out", *QUICK], capsys)
    assert code == 0, captured.err
    folder = _check_run(tmp_path / "out", zarr_copies, ("pd", "ale"))
    for name in ("results.nc", "ale.nc"):
        assert set(pdpboot.load(folder / name).children) == {"vs", "flag", "grade", "note", "day", "x"}
