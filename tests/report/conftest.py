"""Small results every report test reads (one bootstrap each, made once per session)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import pdpboot
from pdpboot import Grid


def _table(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"temp": rng.uniform(0, 30, n), "hour": rng.uniform(0, 24, n),
                         "day": pd.Categorical(rng.choice(["Mon", "Tue", "Wed"], n))})


@pytest.fixture(scope="session")
def regression_result():
    """PD of two numeric features, one categorical and a pair; ICE; pointwise and simultaneous bands."""
    X = _table()
    codes = X["day"].cat.codes.to_numpy()
    y = (X["temp"] - 15) ** 2 / 10 + np.sin(X["hour"] / 4) * 3 + codes + np.random.default_rng(1).normal(0, 1, len(X))
    Xn = X.assign(day=codes)
    res = pdpboot.bootstrap_partial_dependence(
        DecisionTreeRegressor(max_depth=4, random_state=0), Xn, pd.Series(y, name="load"),
        ["temp", "day", ("temp", "hour")], n_resamples=20, grid=Grid(8, categorical_features=["day"]),
        statistics={"ice": 15}, rng=0, execution=pdpboot.Execution(progress=False))
    return pdpboot.confidence_bands(res, simultaneous=True)


@pytest.fixture(scope="session")
def multiclass_result():
    """PD of a three-class classifier (one output per class)."""
    X = _table(seed=2)[["temp", "hour"]]
    y = np.where(X["temp"] > 20, "hot", np.where(X["temp"] < 10, "cold", "mild"))
    return pdpboot.bootstrap_partial_dependence(
        DecisionTreeClassifier(max_depth=3, random_state=0), X, pd.Series(y, name="feel"), ["temp", "hour"],
        n_resamples=8, grid=Grid(6), rng=0, execution=pdpboot.Execution(progress=False))
