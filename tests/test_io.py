"""save/load round trips lose nothing."""

import os

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import pdpboot
from pdpboot import Grid


@pytest.fixture(scope="module")
def classifier_result():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"num": rng.normal(size=90),
                      "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=90))})
    y = np.where(X["num"] + (X["colour"] == "red") > 0.3, "yes", "no")
    est = make_pipeline(make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
                        LogisticRegression())
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["num", "colour", ("num", "colour")], n_resamples=20,
                                               grid=Grid(4), rng=0, statistics={"ice": 3})
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
                                               grid=Grid(3), rng=0)
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
                                               n_resamples=20, grid=Grid(3), rng=0)
    res = pdpboot.confidence_bands(res)
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / f"odd{suffix}"))
    xr.testing.assert_identical(res, loaded)
    assert pdpboot.get_node(loaded, (names[1], names[2])).attrs["features"] == [names[1], names[2]]


# --- issue 13: hostile names, checksums, foreign files ---------------------------------------------

HOSTILE = ["a__b", "a", "b", "", "nul\x00in", "L" * 300, "é ü", "%", "..", "_", "tab\tx", "esc\x1b[31m", "_x_"]


@pytest.fixture(scope="module")
def hostile_result():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20, len(HOSTILE))), columns=HOSTILE)
    X["lvl"] = pd.Categorical(rng.choice(["p\x00q", "r"], size=20))
    y = X["a"] + rng.normal(size=20)
    features = ["a__b", ("a", "b"), "", "nul\x00in", ("L" * 300, "é ü"), "%", "..", "_", ("tab\tx", "esc\x1b[31m"),
                ("_x_", "a"), ("a", "_x_"), "lvl"]
    est = make_pipeline(make_column_transformer((OneHotEncoder(), ["lvl"]), remainder="passthrough"),
                        LinearRegression())
    res = pdpboot.bootstrap_partial_dependence(est, X, y, features, n_resamples=3, grid=Grid(3), rng=0,
                                               statistics={"ice": 2})
    return pdpboot.confidence_bands(res), features


def test_every_feature_set_gets_its_own_node(hostile_result):
    res, features = hostile_result
    assert len(res.children) == len(features)
    for f in features:
        wanted = [f] if isinstance(f, str) else list(f)
        assert pdpboot.get_node(res, f).attrs["features"] == wanted


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_hostile_names_round_trip(hostile_result, tmp_path, suffix):
    res, features = hostile_result
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / f"h{suffix}"))
    xr.testing.assert_identical(res, loaded)
    for f in features:
        node = pdpboot.get_node(loaded, f)
        assert node.attrs["features"] == ([f] if isinstance(f, str) else list(f))
    assert list(pdpboot.get_node(loaded, "lvl").ds["lvl"].values) == ["p\x00q", "r"]


def _small_result():
    X = np.random.default_rng(1).normal(size=(30, 2))
    return pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0], [0, (0, 1)], n_resamples=3,
                                                grid=Grid(4), rng=0)


def _load_outcome(path, expected) -> int:
    """Exit code of a forked child that loads ``path``: 0 identical, 3 refused, 4 silently different."""
    try:
        loaded = pdpboot.load(path)
    except ValueError:
        return 3
    try:
        xr.testing.assert_identical(expected, loaded)
    except AssertionError:
        return 4
    return 0


def test_bit_flips_are_detected(tmp_path):
    # Each load runs in a forked child with a time limit: a flip in HDF5's own metadata can make the
    # netCDF library loop (seen once in 40 flips); that is a hang of the C library, not a wrong result.
    import multiprocessing

    res = _small_result()
    path = pdpboot.save(res, tmp_path / "r.nc")
    raw = path.read_bytes()
    outcomes = {"identical": 0, "refused": 0, "different": 0, "hung": 0}
    context = multiprocessing.get_context("fork")
    for k, pos in enumerate(np.linspace(0, len(raw) - 1, 40).astype(int)):
        flipped = bytearray(raw)
        flipped[pos] ^= 1 << (k % 8)
        bad = tmp_path / f"flip{k}.nc"
        bad.write_bytes(bytes(flipped))
        child = context.Process(target=lambda b=bad: os._exit(_load_outcome(b, res)))
        child.start()
        child.join(20)
        if child.is_alive():
            child.kill()
            child.join()
            outcomes["hung"] += 1
            continue
        outcomes[{0: "identical", 3: "refused", 4: "different"}.get(child.exitcode, "different")] += 1
    assert outcomes["different"] == 0, outcomes  # never silently different values
    assert outcomes["refused"] > 0
    assert outcomes["hung"] <= 2, outcomes


def test_flipped_value_names_the_variable(tmp_path):
    res = _small_result()
    path = pdpboot.save(res, tmp_path / "r.nc")
    raw = bytearray(path.read_bytes())
    value = np.float64(res["x0"].ds["pd_resamples"].values.ravel()[5]).tobytes()
    pos = raw.find(value)
    assert pos > 0
    raw[pos] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"node 'x0'.*checksums.*pd_resamples"):
        pdpboot.load(path)
    pdpboot.load(path, verify=False)  # the escape hatch reads it anyway


def test_missing_zarr_chunk_is_detected(tmp_path):
    res = _small_result()
    path = pdpboot.save(res, tmp_path / "r.zarr")
    chunks = [p for p in (path / "x0" / "pd_resamples").iterdir() if not p.name.startswith(".")]
    for chunk in chunks:
        chunk.unlink()
    with pytest.raises(ValueError, match=r"node 'x0'.*pd_resamples"):
        pdpboot.load(path)


def test_foreign_netcdf_is_refused(tmp_path):
    xr.Dataset({"t": ("time", [1.0, 2.0])}).to_netcdf(tmp_path / "other.nc", engine="netcdf4")
    with pytest.raises(ValueError, match="not a pdpboot result"):
        pdpboot.load(tmp_path / "other.nc")
    (tmp_path / "junk.nc").write_bytes(b"\x89HDF\r\n garbage")
    with pytest.raises(ValueError, match="could not be read"):
        pdpboot.load(tmp_path / "junk.nc")


def test_schema_version_recorded_and_removed_on_load(tmp_path):
    res = _small_result()
    path = pdpboot.save(res, tmp_path / "r.nc")
    with xr.open_datatree(path, engine="netcdf4") as raw:
        assert int(raw.attrs["pdpboot_schema_version"]) == pdpboot.io.SCHEMA_VERSION
        assert "pdpboot_checksums" in raw["x0"].attrs
    loaded = pdpboot.load(path)
    assert "pdpboot_schema_version" not in loaded.attrs


def test_a_result_whose_schema_version_was_removed_is_refused(tmp_path):
    """Deleting pdpboot_schema_version from a pdpboot file used to load it unverified (with a warning), so an
    edit plus that deletion passed; a pdpboot result without the attribute is now refused."""
    netCDF4 = pytest.importorskip("netCDF4")
    path = pdpboot.save(_small_result(), tmp_path / "r.nc")
    with netCDF4.Dataset(path, "a") as raw:
        raw.delncattr("pdpboot_schema_version")
    with pytest.raises(ValueError, match="has no pdpboot_schema_version attribute"):
        pdpboot.load(path)


@pytest.mark.parametrize("recorded", ["abc", "1.5", "", "0", "-1"])
def test_a_schema_version_no_pdpboot_writes_is_refused_in_one_line(tmp_path, recorded):
    """An edited pdpboot_schema_version: "abc", "1.5" and "" raised "invalid literal for int()"; 0 and -1
    loaded as if valid.  Now one line naming the attribute and the fix; the versions written (1, 2) load."""
    import shutil

    netCDF4 = pytest.importorskip("netCDF4")
    path = pdpboot.save(_small_result(), tmp_path / "r.nc")
    edited = tmp_path / "edited.nc"
    shutil.copy(path, edited)
    with netCDF4.Dataset(edited, "a") as raw:
        raw.setncattr("pdpboot_schema_version", recorded)
    with pytest.raises(ValueError, match=r"records pdpboot_schema_version = .*which no pdpboot writes") as info:
        pdpboot.load(edited)
    assert "\n" not in str(info.value)
    with netCDF4.Dataset(edited, "a") as raw:
        raw.setncattr("pdpboot_schema_version", "2")
    xr.testing.assert_identical(pdpboot.load(edited)["x0"].to_dataset(), pdpboot.load(path)["x0"].to_dataset())

# --- issue 26 A.3: the root's node manifest; B.9: checksums over exactly what is written --------------

def _small_result(seed=0, features=(0, 1)):
    X = np.random.default_rng(seed).normal(size=(30, 2))
    return pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0] + seed, list(features),
                                                n_resamples=2, grid=Grid(3), rng=0,
                                                execution=pdpboot.Execution(progress=False))


def _raw(path):
    """The tree exactly as stored (pdpboot's bookkeeping attrs included), read without pdpboot."""
    with xr.open_datatree(path, engine="netcdf4" if path.suffix == ".nc" else "zarr") as tree:
        return tree.load()


def _rewrite(raw: xr.DataTree, path):
    """Write an edited raw tree back to ``path`` (its own bookkeeping attrs kept as they are)."""
    nodes = {node.path: node.to_dataset(inherit=False) for node in raw.subtree}
    tree = xr.DataTree.from_dict(nodes)
    if path.suffix == ".nc":
        tree.to_netcdf(path, engine="netcdf4")
    else:
        tree.to_zarr(path, mode="w", zarr_format=2, consolidated=True)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_deleted_node_is_refused(tmp_path, suffix):
    saved = pdpboot.save(_small_result(), tmp_path / f"run{suffix}")
    raw = _raw(saved)
    edited = tmp_path / f"edited{suffix}"
    _rewrite(xr.DataTree.from_dict({n.path: n.to_dataset(inherit=False) for n in raw.subtree if n.name != "x1"}),
             edited)
    assert pdpboot.load(edited, verify=False).children.keys() == {"x0"}  # what the old load returned silently
    with pytest.raises(ValueError, match="missing node\\(s\\) 'x1'"):
        pdpboot.load(edited)


def test_deleted_zarr_group_and_its_metadata_entry_is_refused(tmp_path):
    import json
    import shutil

    saved = pdpboot.save(_small_result(), tmp_path / "run.zarr")
    shutil.rmtree(saved / "x1")
    meta = json.loads((saved / ".zmetadata").read_text())
    meta["metadata"] = {k: v for k, v in meta["metadata"].items() if not k.startswith("x1/")}
    (saved / ".zmetadata").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="missing node\\(s\\) 'x1'"):
        pdpboot.load(saved)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
@pytest.mark.parametrize("surgery", ["added", "replaced", "added nested"])
def test_foreign_node_with_its_own_valid_checksums_is_refused(tmp_path, suffix, surgery):
    saved = pdpboot.save(_small_result(features=(0,)), tmp_path / f"run{suffix}")
    other = _raw(pdpboot.save(_small_result(seed=1, features=(0, 1)), tmp_path / f"other{suffix}"))
    nodes = {n.path: n.to_dataset(inherit=False) for n in _raw(saved).subtree}
    if surgery == "added":
        nodes["/x1"] = other["x1"].to_dataset(inherit=False)
    elif surgery == "replaced":
        nodes["/x0"] = other["x0"].to_dataset(inherit=False)
    else:
        nodes["/extra/x1"] = other["x1"].to_dataset(inherit=False)
    edited = tmp_path / f"edited{suffix}"
    _rewrite(xr.DataTree.from_dict(nodes), edited)
    expected = {"added": "'x1' that were not saved", "replaced": "'x0' replaced by other content",
                "added nested": "'extra', 'extra/x1' that were not saved"}[surgery]
    with pytest.raises(ValueError, match=expected):
        pdpboot.load(edited)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_nested_nodes_round_trip(tmp_path, suffix):
    """Every node at any depth is saved (save used to drop grandchildren silently)."""
    tree = xr.DataTree.from_dict({
        "/": xr.Dataset(attrs={"creation_library": "pdpboot"}),
        "/x0": xr.Dataset({"pd": ("x0", [1.0, 2.0])}),
        "/x0/deeper": xr.Dataset({"v": ("k", [3.0])}),
        "/.odd/child": xr.Dataset({"w": ("k", [4.0])}),
    })
    loaded = pdpboot.load(pdpboot.save(tree, tmp_path / f"r{suffix}"))
    xr.testing.assert_identical(loaded, tree)


OBJECT_VALUES = {
    "0/1 integers": np.array([0, 1], dtype=object),
    "bools": np.array([True, False], dtype=object),
    "floats with NaN": np.array([0.5, np.nan], dtype=object),
    "ints and floats": np.array([1, 2.5], dtype=object),
    "text": np.array(["a", "b"], dtype=object),
    "text with NaN": np.array(["a", np.nan], dtype=object),
    "timestamps": np.array([pd.Timestamp("2020-01-01"), pd.Timestamp("2021-06-01")], dtype=object),
    "mixed": np.array([1, "a"], dtype=object),
    "big ints": np.array([2**70, 1], dtype=object),
}


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
@pytest.mark.parametrize("kind", sorted(OBJECT_VALUES))
def test_object_coordinates_load_verified_with_their_values(tmp_path, suffix, kind):
    """Issue 26 B.9: an ALE level coordinate of 0/1 ints (object dtype) failed its own checksum on load."""
    values = OBJECT_VALUES[kind]
    tree = xr.DataTree.from_dict({
        "/": xr.Dataset(attrs={"creation_library": "pdpboot"}),
        "/vs": xr.Dataset({"ale": ("vs", [0.0, 1.0]), "levels": ("k", values)}, coords={"vs": values}),
    })
    loaded = pdpboot.load(pdpboot.save(tree, tmp_path / f"r{suffix}"))  # verify=True
    xr.testing.assert_identical(loaded, tree)
    want = values.astype("datetime64[ns]").tolist() if kind == "timestamps" else values.tolist()
    for name in ("vs", "levels"):  # the same Python values (NaN stays NaN, 2**70 stays an int)
        assert [repr(v) for v in loaded["vs"].ds[name].values.tolist()] == [repr(v) for v in want]


def test_unstorable_object_refused_in_one_line_and_nothing_written(tmp_path):
    tree = xr.DataTree.from_dict({"/x": xr.Dataset({"v": ("k", np.array([{"a": 1}, 2], dtype=object))})})
    with pytest.raises(ValueError, match="holds a dict .* cannot store losslessly"):
        pdpboot.save(tree, tmp_path / "r.nc")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_save_never_leaves_a_file_that_fails_its_own_checksums(tmp_path, monkeypatch, suffix):
    """The class guard: save reads the written file back and verifies it before moving it into place."""
    import pdpboot.io as io

    monkeypatch.setattr(io, "_native_values", lambda values: values)  # the old, unconverted dtypes
    tree = xr.DataTree.from_dict({"/vs": xr.Dataset({"ale": ("vs", [0.0, 1.0])},
                                                    coords={"vs": np.array([0, 1], dtype=object)})})
    with pytest.raises(ValueError, match="could not write .* faithfully, so nothing was written"):
        pdpboot.save(tree, tmp_path / f"r{suffix}")
    assert list(tmp_path.iterdir()) == []


def test_result_saved_before_the_manifest_loads_with_a_warning():
    """Files of result schema 1 (the committed experiments archive) carry checksums but no node manifest."""
    from pathlib import Path

    old = Path(__file__).resolve().parents[1] / "experiments" / "archive" / "electricity" / "bands_resample.nc"
    if not old.exists():
        pytest.skip("the experiments archive is not in this checkout")
    with pytest.warns(UserWarning, match="without a node manifest: a missing or added node cannot be detected"):
        tree = pdpboot.load(old)
    assert "pdpboot_manifest" not in tree.attrs and tree.children


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_list_attrs_of_any_writer_round_trip(tmp_path, suffix):
    """io restores every list attr it wrote, not a fixed list of other modules' names: an ALE result's
    one-element ``ale_kind`` and its ``bin_counts`` came back from netCDF as a string and an array."""
    X = np.random.default_rng(0).normal(size=(60, 2))
    res = pdpboot.bootstrap_ale(LinearRegression(), X, X[:, 0], ["x0", ("x0", "x1")], n_resamples=3,
                                grid=Grid(4), rng=0)
    res["x0"].attrs["a_new_writers_list"] = [7]
    res["x0"]["ale"].attrs["levels_seen"] = ["only"]
    res.attrs["root_list"] = [1.5, 2.5]
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / f"r{suffix}"))
    xr.testing.assert_identical(loaded, res)
    assert loaded["x0"].attrs["ale_kind"] == ["numeric"] and isinstance(loaded["x0"].attrs["bin_counts"], list)
    assert loaded["x0"].attrs["a_new_writers_list"] == [7] and loaded["x0"]["ale"].attrs["levels_seen"] == ["only"]


def test_result_saved_before_list_attrs_were_recorded_gets_its_lists_back():
    from pathlib import Path

    old = Path(__file__).resolve().parents[1] / "experiments" / "archive" / "electricity" / "bands_resample.nc"
    if not old.exists():
        pytest.skip("the experiments archive is not in this checkout")
    with pytest.warns(UserWarning, match="without a node manifest"):
        tree = pdpboot.load(old)
    node = next(n for n in tree.children.values() if len(n.attrs["features"]) == 1)
    assert node.attrs["features"] == [node.name] and isinstance(node.attrs["categorical"], list)


def test_zarr_without_the_extra_names_it(tmp_path, monkeypatch):
    """Zarr is an optional extra: saving or loading a .zarr without it says so (not xarray's traceback, and
    on load not "damaged")."""
    import sys

    path = pdpboot.save(_small_result(), tmp_path / "r.zarr")
    monkeypatch.setitem(sys.modules, "zarr", None)  # as if zarr were not installed
    with pytest.raises(ImportError, match=r'pip install "pdpboot\[zarr\]"'):
        pdpboot.save(_small_result(), tmp_path / "s.zarr")
    assert not (tmp_path / "s.zarr").exists()
    with pytest.raises(ImportError, match=r'pip install "pdpboot\[zarr\]"'):
        pdpboot.load(path)
    monkeypatch.undo()
    assert "x0" in pdpboot.load(path).children  # with zarr back, the store reads


@pytest.mark.filterwarnings("ignore::pdpboot.caveats.CoverageWarning")
@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_rows_not_drawn_round_trip_and_give_the_same_bca_band(tmp_path, suffix):
    X = np.random.default_rng(2).normal(size=(61, 2))
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, X[:, 0] ** 2, [0], n_resamples=25,
                                               grid=pdpboot.Grid(3), rng=3)
    loaded = pdpboot.load(pdpboot.save(res, tmp_path / f"r{suffix}"))
    stored = loaded["resample_absent"]
    assert stored.dtype == np.uint8 and stored.dims == ("resample", "packed_row") and stored.attrs["n_rows"] == 61
    np.testing.assert_array_equal(stored.values, res["resample_absent"].values)
    np.testing.assert_array_equal(pdpboot.confidence_bands(loaded, method="bca")["x0"]["pd_band"].values,
                                  pdpboot.confidence_bands(res, method="bca")["x0"]["pd_band"].values)
