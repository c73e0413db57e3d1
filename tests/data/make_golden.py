"""Golden results: ``python tests/data/make_golden.py OUT.npz``.

``golden_pre_refactor.npz`` was written with the code of commit 5a4e794 (before the issue-11
refactor); ``tests/test_golden.py`` recomputes the same cases with today's code and compares.
"""

import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import pdpboot
from pdpboot import Grid
from pdpboot.datasets import make_electricity_prices


def cases():
    X, y = make_electricity_prices(300, rng=0)
    yield ("electricity_rf", RandomForestRegressor(n_estimators=10, min_samples_leaf=5), X, y,
           ["Temperature", "Hour", "Day", ("Temperature", "Hour")],
           dict(statistics={"heterogeneity": True, "interactions": 40, "ice": 5}))
    yield "electricity_hgb", HistGradientBoostingRegressor(max_iter=20), X, y, ["Temperature", ("Hour", "Day")], {}
    yield ("electricity_pipeline", make_pipeline(StandardScaler(), Ridge()), X, y,
           ["Temperature", "Hour", ("Temperature", "Day")], dict(resampling=pdpboot.Resampling(background="original")))


def golden_arrays() -> dict:
    out = {}
    for name, est, X, y, feats, kw in cases():
        res = pdpboot.bootstrap_partial_dependence(est, X, y, feats, n_resamples=4, grid=Grid(7), rng=123,
                                                   **kw, execution=pdpboot.Execution(progress=False))
        for fs in feats:
            node = pdpboot.get_node(res, fs)
            key = fs if isinstance(fs, str) else "+".join(fs)
            for var in node.ds.data_vars:
                out[f"{name}|{key}|{var}"] = node.ds[var].values
    return out


if __name__ == "__main__":
    np.savez_compressed(sys.argv[1], **golden_arrays())
