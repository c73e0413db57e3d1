"""Tests of pdpboot.datasets: generators, their noise-free response, bundled real data.

The noise-free regression functions below are written here from the published formulas,
independently of the module (the true PDs are tested in experiments/tests/test_truth.py).
"""

from __future__ import annotations

import hashlib
import math
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pdpboot import datasets as ds

ROOT = Path(__file__).resolve().parents[1]
#: The bundled CSV files: package data of pdpboot (committed once, in pdpboot/data/).
DATA_DIR = Path(str(resources.files("pdpboot") / "data"))
#: Their provenance (licences, sources, checksums): the repository's data/README.md.
README = ROOT / "data" / "README.md"
BUNDLED = ("bike_sharing.csv", "anes96.csv")


# --------------------------------------------------------------------------- reference functions


def f_electricity(d):
    t, h, day = d["Temperature"], d["Hour"], d["Day"]
    price = 0.1 * (t - 20) ** 2 + 7 * np.sin(h * np.pi / 24) + 5 * (np.asarray(day) == 0)
    price = price + np.where((7 <= h) & (h <= 10), 5 * np.sin((h - 7) * np.pi / 6), 0)
    price = price + np.where((18 <= h) & (h <= 22), 5 * np.sin((h - 18) * np.pi / 4), 0)
    price = price - np.where((10 <= h) & (h <= 17), 5 * np.sin((h - 10) * np.pi / 7), 0)
    return price


def f_friedman1(d):
    return (10 * np.sin(np.pi * d["x1"] * d["x2"]) + 20 * (d["x3"] - 0.5) ** 2
            + 10 * d["x4"] + 5 * d["x5"])


def f_interaction(d):
    return d["x1"] + d["x2"] + d["x1"] * d["x2"]


def f_goldstein(d):
    return 0.2 * d["x1"] - 5 * d["x2"] + 10 * d["x2"] * (np.asarray(d["x3"]) >= 0)


def f_additive(d):
    return d["x1"] - d["x2"]


FUNCTIONS = {
    "electricity": f_electricity, "friedman1": f_friedman1, "interaction": f_interaction,
    "goldstein": f_goldstein, "additive_uniform": f_additive,
}
MC_N = 200_000


# --------------------------------------------------------------------------- generators

GENERATORS = [
    (ds.make_electricity_prices, {}, ["Temperature", "Hour", "Day"], "Price"),
    (ds.make_friedman1, {}, [f"x{k}" for k in range(1, 11)], "y"),
    (ds.make_friedman1, {"n_features": 6}, [f"x{k}" for k in range(1, 7)], "y"),
    (ds.make_interaction, {}, ["x1", "x2"], "y"),
    (ds.make_goldstein, {}, ["x1", "x2", "x3"], "y"),
    (ds.make_additive_uniform, {}, ["x1", "x2"], "y"),
]


@pytest.mark.parametrize(("make", "kwargs", "columns", "y_name"), GENERATORS)
def test_generator_shapes_dtypes_and_seeding(make, kwargs, columns, y_name):
    X, y = make(57, rng=3, **kwargs)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert list(X.columns) == columns and X.shape == (57, len(columns))
    assert y.name == y_name and y.shape == (57,) and y.dtype == np.float64
    assert X.index.equals(y.index) and X.index.equals(pd.RangeIndex(57))
    for c in columns:
        assert X[c].dtype == (np.int64 if c == "Day" else np.float64)
    X2, y2 = make(57, rng=3, **kwargs)
    pd.testing.assert_frame_equal(X, X2)
    pd.testing.assert_series_equal(y, y2)
    X3, y3 = make(57, rng=np.random.default_rng(3), **kwargs)
    pd.testing.assert_frame_equal(X, X3)
    pd.testing.assert_series_equal(y, y3)
    X4, y4 = make(57, rng=4, **kwargs)
    assert not np.allclose(X.to_numpy(float), X4.to_numpy(float))
    assert not np.allclose(y, y4)
    X5, _ = make(57, rng=None, **kwargs)
    X6, _ = make(57, rng=None, **kwargs)
    assert not np.allclose(X5.to_numpy(float), X6.to_numpy(float))


def test_generator_uses_rng_state():
    gen = np.random.default_rng(0)
    X1, _ = ds.make_interaction(10, rng=gen)
    X2, _ = ds.make_interaction(10, rng=gen)
    assert not np.allclose(X1, X2)


@pytest.mark.parametrize(("name", "make"), [
    ("friedman1", lambda noise, rng: ds.make_friedman1(5000, noise=noise, rng=rng)),
    ("interaction", lambda noise, rng: ds.make_interaction(5000, noise=noise, rng=rng)),
    ("goldstein", lambda noise, rng: ds.make_goldstein(5000, noise=noise, rng=rng)),
    ("additive_uniform", lambda noise, rng: ds.make_additive_uniform(5000, noise=noise, rng=rng)),
])
def test_generator_response_is_formula_plus_noise(name, make):
    X, y = make(0.0, 1)
    data = {c: X[c].to_numpy() for c in X.columns}
    np.testing.assert_allclose(y.to_numpy(), FUNCTIONS[name](data), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ds.true_function(name, X), FUNCTIONS[name](data), rtol=1e-12, atol=1e-12)
    X, y = make(2.5, 2)
    resid = y.to_numpy() - FUNCTIONS[name]({c: X[c].to_numpy() for c in X.columns})
    assert abs(resid.mean()) < 4.5 * 2.5 / math.sqrt(5000)
    assert resid.std() == pytest.approx(2.5, abs=4.5 * 2.5 / math.sqrt(2 * 5000))


def test_electricity_response_and_feature_distribution():
    X, y = ds.make_electricity_prices(MC_N, rng=11)
    data = {c: X[c].to_numpy() for c in X.columns}
    resid = y.to_numpy() - f_electricity(data)
    assert abs(resid.mean()) < 4.5 * 4 / math.sqrt(MC_N)
    assert resid.std() == pytest.approx(4.0, abs=4.5 * 4 / math.sqrt(2 * MC_N))
    np.testing.assert_allclose(ds.true_function("electricity", X), f_electricity(data), rtol=1e-12)
    assert 0 <= X["Temperature"].min() and X["Temperature"].max() < 40
    assert 0 <= X["Hour"].min() and X["Hour"].max() < 24
    counts = X["Day"].value_counts().sort_index()
    assert list(counts.index) == list(range(7))
    np.testing.assert_allclose(counts / MC_N, 1 / 7, atol=4.5 * math.sqrt(1 / 7 * 6 / 7 / MC_N))


def test_friedman_inert_features_have_no_effect():
    X, y = ds.make_friedman1(200, n_features=8, noise=0.0, rng=5)
    X2 = X.copy()
    X2[["x6", "x7", "x8"]] = 0.123
    np.testing.assert_allclose(ds.true_function("friedman1", X2), y)


# --------------------------------------------------------------------------- input validation


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: ds.make_friedman1(0), ValueError, "n_samples"),
    (lambda: ds.make_friedman1(2.5), TypeError, "n_samples"),
    (lambda: ds.make_electricity_prices(True), TypeError, "n_samples"),
    (lambda: ds.make_friedman1(10, n_features=4), ValueError, "n_features"),
    (lambda: ds.make_interaction(10, noise=-1), ValueError, "noise"),
    (lambda: ds.make_goldstein(10, noise=float("nan")), ValueError, "noise"),
    (lambda: ds.make_additive_uniform(10, noise="big"), TypeError, "noise"),
    (lambda: ds.true_function("goldstein", pd.DataFrame({"x1": [0.0]})), ValueError, "x2"),
    (lambda: ds.true_function("goldstein", np.zeros((2, 3))), TypeError, "DataFrame"),
])
def test_bad_input_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------- bundled real data


def test_load_bike_sharing():
    X, y = ds.load_bike_sharing()
    assert X.shape == (8645, 12) and y.shape == (8645,)
    assert y.name == "bikers" and y.dtype == np.int64 and (y >= 1).all()
    assert list(X.columns) == ["season", "mnth", "day", "hr", "holiday", "weekday", "workingday",
                               "weathersit", "temp", "atemp", "hum", "windspeed"]
    for c in ("season", "mnth", "weathersit"):
        assert isinstance(X[c].dtype, pd.CategoricalDtype) and X[c].notna().all()
    assert list(X["mnth"].cat.categories)[:3] == ["Jan", "Feb", "March"]
    assert list(X["season"].cat.categories) == ["winter", "spring", "summer", "fall"]
    for c in ("day", "hr", "holiday", "weekday", "workingday"):
        assert X[c].dtype == np.int64
    for c in ("temp", "atemp", "hum", "windspeed"):
        assert X[c].dtype == np.float64 and X[c].between(0, 1).all()
    assert X["hr"].between(0, 23).all() and X["day"].between(1, 365).all()
    # internal consistency of the real calendar: working day = weekday and not a holiday
    weekend = X["weekday"].isin([0, 6])
    assert ((X["workingday"] == 1) == (~weekend & (X["holiday"] == 0))).all()
    # 2011-01-01 was a Saturday (weekday 6), and January is in winter
    assert X.loc[X["day"] == 1, "weekday"].eq(6).all()
    assert (X.loc[X["mnth"] == "Jan", "season"] == "winter").all()


def test_load_anes96():
    X, y = ds.load_anes96()
    assert X.shape == (944, 9) and y.shape == (944,)
    assert y.name == "vote" and set(y) == {"Clinton", "Dole"}
    assert isinstance(X["PID"].dtype, pd.CategoricalDtype) and len(X["PID"].cat.categories) == 7
    assert X["PID"].notna().all()
    assert all(X[c].dtype == np.int64 for c in X.columns if c != "PID")
    assert X[["selfLR", "ClinLR", "DoleLR"]].stack().between(1, 7).all()
    # strong Republicans expected to vote Dole far more often than strong Democrats
    dole = (y == "Dole").groupby(X["PID"], observed=True).mean()
    assert dole["strong Republican"] > 0.8 > 0.2 > dole["strong Democrat"]


@pytest.mark.parametrize(("loader", "filename"), [
    (ds.load_bike_sharing, "bike_sharing.csv"), (ds.load_anes96, "anes96.csv"),
])
def test_loader_checksum_and_missing_file(tmp_path, loader, filename):
    shutil.copy(DATA_DIR / filename, tmp_path / filename)
    X, y = loader(data_dir=tmp_path)
    X0, y0 = loader()
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    raw = bytearray((tmp_path / filename).read_bytes())
    pos = raw.rindex(b"1")
    raw[pos:pos + 1] = b"2"  # one changed digit, file still a valid CSV
    (tmp_path / filename).write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="SHA-256"):
        loader(data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="data_dir"):
        loader(data_dir=tmp_path / "empty")


def test_data_readme_lists_checksums():
    readme = README.read_text(encoding="utf-8")
    for filename in BUNDLED:
        digest = hashlib.sha256((DATA_DIR / filename).read_bytes()).hexdigest()
        assert f"| `{filename}` |" in readme and digest in readme
    assert "pdpboot/data/" in readme  # it says where the tables live


def test_bundled_files_live_inside_the_package():
    """The real-data files are package data (pdpboot/data/*.csv), found with importlib.resources, so a wheel
    carries them and the loaders read them from any install (editable or not)."""
    import tomllib

    data = resources.files("pdpboot") / "data"
    for name in BUNDLED:
        assert data.joinpath(name).is_file(), name
        assert hashlib.sha256(data.joinpath(name).read_bytes()).hexdigest() in README.read_text(encoding="utf-8")
    pyproject = ROOT / "pyproject.toml"
    if pyproject.is_file():  # a source checkout: the wheel's package data names them
        config = tomllib.loads(pyproject.read_text())
        assert "data/*.csv" in config["tool"]["setuptools"]["package-data"]["pdpboot"]


def _committed_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_no_csv_committed_twice():
    """Each data table is committed once: no two committed CSV files (links followed) have the same content,
    and data/ holds provenance only (the tables are pdpboot/data/*.csv)."""
    csvs = [p for p in _committed_files() if p.suffix.lower() == ".csv" and p.is_file()]
    assert {p.name for p in csvs} >= set(BUNDLED)
    by_hash: dict[str, list[str]] = {}
    for path in csvs:
        by_hash.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(str(path.relative_to(ROOT)))
    assert [names for names in by_hash.values() if len(names) > 1] == []
    assert not list((ROOT / "data").glob("*.csv"))


@pytest.mark.slow
def test_wheel_carries_the_data(tmp_path):
    """Build the wheel (needs network for build isolation) and look inside it."""
    import subprocess
    import sys
    import zipfile

    import pdpboot

    source = Path(pdpboot.__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True)
    (wheel,) = tmp_path.glob("pdpboot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pdpboot/data/bike_sharing.csv" in names and "pdpboot/data/anes96.csv" in names
