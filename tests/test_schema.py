"""``schema.feature_nodes``: a node whose feature dimension was renamed is refused in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot import Grid


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    y = X.a - X.b + X.a * X.b
    return pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, ["a", ("a", "b")], n_resamples=6, grid=Grid(4), rng=0,
        statistics={"ice": 5, "interactions": True}, execution=pdpboot.Execution(n_jobs=1, progress=False))


def _renamed(result, node, old, new):
    out = result.copy()
    attrs = dict(out[node].attrs)
    out[node] = xr.DataTree(out[node].to_dataset(inherit=False).rename({old: new}))
    out[node].attrs.update(attrs)
    return out


def test_a_renamed_feature_dimension_is_refused_by_every_reader(result):
    """Renaming ``b`` to ``B`` in node ``a__b`` gave "tuple.index(x): x not in tuple" (h_statistic),
    "Dimensions {'b'} do not exist" (confidence_bands) and a KeyError (plots)."""
    moved = _renamed(result, "a__b", "b", "B")
    calls = [pdpboot.confidence_bands, pdpboot.h_statistic, pdpboot.ice_heterogeneity,
             lambda r: pdpboot.plot_pd_contour(r, ("a", "b"))]
    for call in calls:
        with pytest.raises(ValueError, match=r"node 'a__b' records the features \['a', 'b'\] but has no dimension "
                                             r"'b'.*rename 'B' back to 'b'") as info:
            call(moved)
        assert "\n" not in str(info.value)


def test_statistics_without_feature_dimensions_still_pass(result):
    """H² and other reduced statistics keep the node's features but not its dims: not a renaming."""
    h = pdpboot.h_statistic(result)
    assert "a" not in h["a__b"].to_dataset(inherit=False).dims
    again = pdpboot.confidence_bands(h)
    assert "h2_band" in again["a__b"].to_dataset()
    # a renamed output dim is not a feature dim: its bands are the same numbers
    moved = _renamed(result, "a", "output", "target")
    band = pdpboot.confidence_bands(moved)["a"]["pd_band"]
    np.testing.assert_array_equal(band.values, pdpboot.confidence_bands(result)["a"]["pd_band"].values)


def test_a_numeric_grid_out_of_order_is_refused(result):
    """A result whose numeric grid was reversed (``isel(a=slice(None, None, -1))``) gave bands whose centred PD
    was anchored at the largest grid value (5.2 off the unmoved result's) and an ice_heterogeneity refusal
    without the fix; now every reader refuses in one line naming the sort.  Sorted back: the same numbers."""
    moved = result.copy()
    attrs = dict(moved["a"].attrs)
    moved["a"] = xr.DataTree(moved["a"].to_dataset(inherit=False).isel(a=slice(None, None, -1)))
    moved["a"].attrs.update(attrs)
    for call in (pdpboot.confidence_bands, pdpboot.ice_heterogeneity, lambda r: pdpboot.plot_pd(r, "a")):
        with pytest.raises(ValueError, match=r"numeric grid of 'a' is not in increasing order.*sortby\('a'\)"):
            call(moved)
    back = moved.copy()
    back["a"] = xr.DataTree(moved["a"].to_dataset(inherit=False).sortby("a"))
    back["a"].attrs.update(attrs)
    np.testing.assert_array_equal(pdpboot.confidence_bands(back)["a"]["pd_centered"].values,
                                  pdpboot.confidence_bands(result)["a"]["pd_centered"].values)


def test_derived_tables_with_relabelled_dims_pass(result):
    """Level contrasts (the command line's ``contrast`` nodes: the feature dim relabelled ``level``) keep the
    node's features: not a renaming of an effect on the grid, so bands are computed (a run with a text
    feature stopped here after writing results.nc)."""
    ds = result["a"].to_dataset(inherit=False)
    first = ds["pd"].isel(a=0, drop=True)
    contrast = (ds["pd"].isel(a=slice(1, None)) - first).rename({"a": "level"})
    contrast_res = (ds["pd_resamples"].isel(a=slice(1, None)) - ds["pd_resamples"].isel(a=0, drop=True)).rename(
        {"a": "level"})
    tree = xr.DataTree.from_dict({"/": xr.Dataset(attrs=dict(result.attrs)), "a": xr.Dataset(
        {"contrast": contrast, "contrast_resamples": contrast_res}, attrs={"features": ["a"]})})
    banded = pdpboot.confidence_bands(tree)
    assert banded["a"]["contrast_band"].dims[0] == "ci_bound"
