"""The "beyond noise" verdict (``report.flat_within_noise``) agrees with the intervals printed beside it."""

from types import SimpleNamespace

import numpy as np
import xarray as xr

from pdpboot.workflow import report

CONFIG = SimpleNamespace(confidence_level=0.95, band="percentile")


def _result(values, est, res) -> xr.DataTree:
    f = "f"
    node = xr.Dataset({"pd": (("output", f), np.asarray(est, float)[None]),
                       "pd_resamples": (("resample", "output", f), np.asarray(res, float)[:, None])},
                      coords={"output": ["y"], f: values, "resample": np.arange(len(res))}, attrs={"features": [f]})
    tree = xr.DataTree(children={f: xr.DataTree(node)})
    tree.attrs = {"n_rows": 100, "response": "predict", "task": "regression", "resampling": "bootstrap",
                  "band_scale": "identity"}
    return tree


def test_two_level_verdict_is_the_contrast_interval_even_with_skewed_refits():
    # Every refit's contrast is positive, two far out: the sup-t band of the centred curve reaches 0 (the old
    # verdict said "flat"), the contrast's percentile interval does not; the verdict follows the interval.
    contrast = np.r_[np.linspace(0.8, 1.2, 38), 8.0, 9.0]
    result = _result([0.0, 1.0], [0.0, 1.0], np.column_stack([np.zeros(40), contrast]))
    band = report.contrasts(result, ["f"], CONFIG)["f"]["contrast_band"]
    assert float(band.sel(ci_bound="lower").squeeze()) > 0
    assert not bool(report.flat_within_noise(result, ["f"], CONFIG)["f"].squeeze())
    inside = np.r_[np.linspace(-0.2, 1.2, 38), 8.0, 9.0]  # now the interval holds 0: flat
    result = _result([0.0, 1.0], [0.0, 1.0], np.column_stack([np.zeros(40), inside]))
    assert bool(report.flat_within_noise(result, ["f"], CONFIG)["f"].squeeze())


def test_no_verdict_below_the_refits_that_resolve_the_level():
    # At 95 % a two-sided interval's ends are the extreme refits below 39 refits: no verdict then.
    gen = np.random.default_rng(0)
    for b, offered in ((38, False), (39, True)):
        for values in ([0.0, 1.0], np.linspace(0, 1, 5)):
            res = gen.normal(size=(b, len(values)))
            result = _result(values, np.zeros(len(values)), res)
            assert ("f" in report.flat_within_noise(result, ["f"], CONFIG)) is offered
