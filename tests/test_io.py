"""save/load round trips lose nothing."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import pdpboot


@pytest.fixture(scope="module")
def classifier_result():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"num": rng.normal(size=90),
                      "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=90))})
    y = np.where(X["num"] + (X["colour"] == "red") > 0.3, "yes", "no")
    est = make_pipeline(make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
                        LogisticRegression())
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["num", "colour", ("num", "colour")], n_resamples=20,
                                               grid_resolution=4, ice=3, rng=0)
    return pdpboot.confidence_bands(res, simultaneous=True)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_round_trip_identical(classifier_result, tmp_path, suffix):
    path = pdpboot.save(classifier_result, tmp_path / f"run{suffix}")
    loaded = pdpboot.load(path)
    xr.testing.assert_identical(classifier_result, loaded)
    assert loaded["num"].attrs["features"] == ["num"]
    assert list(loaded["colour"].ds.colour.values) == ["blue", "green", "red"]


def test_overwrite_and_no_temporary_left(tmp_path):
    X = np.random.default_rng(1).normal(size=(30, 2))
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0], n_resamples=2,
                                               grid_resolution=3, rng=0)
    for _ in range(2):
        pdpboot.save(res, tmp_path / "a.nc")
        pdpboot.save(res, tmp_path / "a.zarr")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.nc", "a.zarr"]
    xr.testing.assert_identical(pdpboot.load(tmp_path / "a.zarr"), res)


def test_bad_paths(tmp_path, classifier_result):
    with pytest.raises(ValueError, match=".nc"):
        pdpboot.save(classifier_result, tmp_path / "run.csv")
    with pytest.raises(FileNotFoundError):
        pdpboot.save(classifier_result, tmp_path / "missing" / "run.nc")
    with pytest.raises(FileNotFoundError):
        pdpboot.load(tmp_path / "nothing.nc")
    with pytest.raises(TypeError):
        pdpboot.save(classifier_result["num"].to_dataset(), tmp_path / "x.nc")


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_names_netcdf_cannot_store_round_trip(tmp_path, suffix):
    rng = np.random.default_rng(3)
    names = ["=1+1", '"); import os; os.system("x") #', "-neg", "trailing ", ".dot", "plain"]
    X = pd.DataFrame(rng.normal(size=(40, len(names))), columns=names)
    y = pd.Series(X.iloc[:, 0] + rng.normal(size=40), name="@target")
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [names[0], (names[1], names[2]), names[3],
                                                                          names[4], names[5]],
                                               n_resamples=20, grid_resolution=3, rng=0)
    res = pdpboot.confidence_bands(res)
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / f"odd{suffix}"))
    xr.testing.assert_identical(res, loaded)
    assert pdpboot.get_node(loaded, (names[1], names[2])).attrs["features"] == [names[1], names[2]]
