"""Property test (issue 13): hostile names, dtypes and shapes never lose or silently change a result.

Every generated table either gets a clear ``ValueError``/``TypeError`` before any model is
fitted, or a result that has a node for every requested feature set and survives
``confidence_bands`` and a ``save``/``load`` round trip (netCDF and Zarr) unchanged.
"""

import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeRegressor

import pdpboot
from pdpboot import Grid

FITS = [0]


class CountingTree(DecisionTreeRegressor):
    """A depth-2 tree that counts its fits (an error must come before the first)."""

    def fit(self, X, y, sample_weight=None, check_input=True):
        FITS[0] += 1
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


def _code(value) -> float:
    """A number for any cell: numbers as themselves, anything else by a stable hash of its text."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA or value is pd.NaT:
        return -1.0
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        return float(value)
    return float(zlib.crc32(str(value).encode("utf-8", "surrogatepass")) % 997)


def to_numbers(X):
    """Encode every column of a table as floats (the same value always gets the same code)."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
    return np.column_stack([[_code(v) for v in frame.iloc[:, j].tolist()] for j in range(frame.shape[1])])


class Encoder(FunctionTransformer):
    """``to_numbers`` as a pipeline step that accepts missing values (it codes them as -1)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _model():
    return make_pipeline(Encoder(to_numbers), CountingTree(max_depth=2, random_state=0))


HOSTILE_NAMES = [
    "", " ", "a__b", "a", "b", "__", "_", "%", "%5F", "..", ".", "/", "a/b", "x\x00y", "\x00", "tab\t",
    "new\nline", "\x1b[31mred", "é", "名前", "😀", "=1+1", "L" * 300, "pd", "output", "resample", "-", "0",
]


@st.composite
def names(draw, n):
    pool = st.one_of(st.sampled_from(HOSTILE_NAMES), st.text(min_size=0, max_size=8))
    return draw(st.lists(pool, min_size=n, max_size=n, unique_by=str))


def _column(draw, kind, n):
    if kind == "float":
        return draw(st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n))
    if kind == "constant":
        return [1.5] * n
    if kind == "int":
        return np.asarray(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.int64)
    if kind == "Int64":
        values = draw(st.lists(st.one_of(st.integers(-3, 3), st.none()), min_size=n, max_size=n))
        return pd.array(values, dtype="Int64")
    if kind == "boolean":
        values = draw(st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n))
        return pd.array(values, dtype="boolean")
    if kind == "string":
        values = draw(st.lists(st.one_of(st.sampled_from(["p", "q", "", "x\x00", "é"]), st.none()),
                               min_size=n, max_size=n))
        return pd.array(values, dtype="string")
    if kind == "category":
        values = draw(st.lists(st.sampled_from(["u", "v"]), min_size=n, max_size=n))
        return pd.Categorical(values, categories=["u", "v", "unused"])
    if kind == "mixed":
        return pd.Series(draw(st.lists(st.sampled_from([1, "one", 2.5, "two"]), min_size=n, max_size=n)),
                         dtype=object)
    if kind == "datetime":
        start = draw(st.integers(0, 10**6))
        return pd.to_datetime(np.arange(n) * 86400 + start, unit="s")
    raise AssertionError(kind)


KINDS = ["float", "constant", "int", "Int64", "boolean", "string", "category", "mixed", "datetime"]


@st.composite
def problems(draw):
    n_rows = draw(st.integers(1, 3))
    n_cols = draw(st.integers(1, 3))
    columns = draw(names(n_cols))
    data = {}
    for j in range(n_cols):
        data[j] = _column(draw, draw(st.sampled_from(KINDS)), n_rows)
    X = pd.DataFrame(data)
    X.columns = columns
    y = np.asarray(draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=n_rows, max_size=n_rows)))
    features = [columns[0]]
    if n_cols > 1:
        features.append((columns[0], columns[-1]))
    if n_cols > 2:
        features.append(columns[1])
    return X, y, features, draw(st.booleans())


def _wanted(feature_set):
    return [str(f) for f in (feature_set if isinstance(feature_set, tuple) else [feature_set])]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(problem=problems())
def test_hostile_tables_clear_error_or_lossless_result(problem, tmp_path_factory):
    X, y, features, ice = problem
    FITS[0] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant features, one-row tables and tiny fits warn by design
        try:
            res = pdpboot.bootstrap_partial_dependence(_model(), X, y, features, n_resamples=3, grid=Grid(3),
                                                       rng=0, execution=pdpboot.Execution(progress=False),
                                                       statistics={"ice": ice})
        except (ValueError, TypeError) as exc:
            assert FITS[0] == 0, f"error after {FITS[0]} fit(s): {exc!r}"
            assert len(str(exc)) > 20
            return
        bands = pdpboot.confidence_bands(res)
    assert len(res.children) == len(features)
    for fs in features:
        node = pdpboot.get_node(bands, fs)
        assert node.attrs["features"] == _wanted(fs)
        assert node.ds["pd_band"].dims == ("ci_bound", "output", *_wanted(fs))
    folder = tmp_path_factory.mktemp("hostile")
    for suffix in (".nc", ".zarr") if ice else (".nc",):  # Zarr on about half the cases, to stay fast
        loaded = pdpboot.load(pdpboot.save(bands, folder / f"r{suffix}"))
        xr.testing.assert_identical(bands, loaded)
        for fs in features:
            assert pdpboot.get_node(loaded, fs).attrs["features"] == _wanted(fs)


@pytest.mark.parametrize("kind", KINDS)
def test_every_dtype_once(kind, tmp_path):
    """Each generated dtype, deterministically: supported dtypes give a lossless result."""
    rng = np.random.default_rng(0)
    n = 12
    X = pd.DataFrame({"other": rng.normal(size=n)})
    X["f"] = _column_fixed(kind, n)
    y = rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call = lambda: pdpboot.bootstrap_partial_dependence(  # noqa: E731
            _model(), X, y, ["f", ("f", "other")], n_resamples=3, grid=Grid(3), rng=0,
            execution=pdpboot.Execution(progress=False), statistics={"ice": 2})
        if kind in ("mixed", "datetime"):
            FITS[0] = 0
            with pytest.raises(ValueError, match="Column 'f' mixes|Feature 'f' has dtype"):
                call()
            assert FITS[0] == 0
            return
        res = pdpboot.confidence_bands(call())
    xr.testing.assert_identical(res, pdpboot.load(pdpboot.save(res, tmp_path / "r.nc")))


def _column_fixed(kind, n):
    values = {
        "float": np.linspace(0, 1, n), "constant": np.full(n, 1.5), "int": np.arange(n) % 3,
        "Int64": pd.array([*(np.arange(n - 1) % 3), None], dtype="Int64"),
        "boolean": pd.array([True, False, None] * (n // 3), dtype="boolean"),
        "string": pd.array(["p", "q", None, "x\x00"] * (n // 4), dtype="string"),
        "category": pd.Categorical(["u", "v"] * (n // 2), categories=["u", "v", "unused"]),
        "mixed": pd.Series([1, "one", 2.5] * (n // 3), dtype=object),
        "datetime": pd.date_range("2020", periods=n),
    }
    return values[kind]


def _small_result(features=("a",)):
    from sklearn.linear_model import LinearRegression

    X = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) % 3})
    return pdpboot.partial_dependence(LinearRegression().fit(X, X.a + X.b), X, list(features)), X


def test_a_save_path_under_a_file_is_one_line(tmp_path):
    result, _ = _small_result()
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(ValueError, match=r"save path .* lies under .*notes.txt.*, which is a file, not a folder"):
        pdpboot.save(result, file / "r.nc")
    with pytest.raises(ValueError, match=r"lies under .*notes.txt"):
        pdpboot.save(result, file / "deeper" / "r.nc")
    (tmp_path / "d.nc").mkdir()
    with pytest.raises(ValueError, match=r"is a folder; give a file path ending in .nc"):
        pdpboot.save(result, tmp_path / "d.nc")


def test_ice_heterogeneity_without_single_features_or_pd_names_the_fix():
    from sklearn.linear_model import LinearRegression

    pairs, X = _small_result([("a", "b")])
    with pytest.raises(ValueError, match=r"only feature pairs.*compute it with single features too"):
        pdpboot.ice_heterogeneity(pairs)
    ale = pdpboot.bootstrap_ale(LinearRegression(), X, X.a + X.b, ["a"], n_resamples=3, rng=0)
    with pytest.raises(ValueError, match=r"holds the ALE effect, not partial dependence.*statistics='heterogeneity'"):
        pdpboot.ice_heterogeneity(ale)
