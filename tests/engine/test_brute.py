"""The brute engine: stacked blocks, the memory bound, points mode, weights."""

import numpy as np
import pandas as pd
import pytest

from pdpboot.engine.brute import block_rows, brute_partial_dependence


def _model(X):
    X = np.asarray(X, dtype=float)
    return np.column_stack([X[:, 0] * X[:, 1] + np.sin(X[:, 2]), X.sum(axis=1)])


def _loop_reference(X, feature_idx, grids, weights=None):
    """One prediction call per grid point: the notebook's loop."""
    shape = tuple(len(g) for g in grids)
    avg = np.empty((2, *shape))
    ice = np.empty((X.shape[0], 2, *shape))
    for idx in np.ndindex(*shape):
        Xg = X.copy()
        for j, g, i in zip(feature_idx, grids, idx):
            Xg[:, j] = g[i]
        pred = _model(Xg)
        ice[(slice(None), slice(None), *idx)] = pred
        avg[(slice(None), *idx)] = np.average(pred, axis=0, weights=weights)
    return avg, ice


class _Recorder:
    def __init__(self):
        self.block_sizes = []

    def __call__(self, X):
        self.block_sizes.append(np.asarray(X).shape[0])
        return _model(X)


@pytest.mark.parametrize("limit", [1, 200, 5_000, 10**9])
@pytest.mark.parametrize("feature_idx", [(0,), (1, 2)])
def test_matches_loop_and_respects_memory_limit(limit, feature_idx):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(37, 4))
    grids = [np.linspace(-1, 1, 7), np.linspace(0, 2, 5)][: len(feature_idx)]
    w = rng.uniform(0.5, 2, size=37)
    rec = _Recorder()
    avg, ice = brute_partial_dependence(rec, X, feature_idx, grids, weights=w, individual=True,
                                        memory_limit=limit, n_outputs=2)
    ref_avg, ref_ice = _loop_reference(X, feature_idx, grids, weights=w)
    np.testing.assert_allclose(avg, ref_avg, atol=1e-12)
    np.testing.assert_allclose(ice, ref_ice, atol=1e-12)
    bytes_per_row = X.shape[1] * 8 + 2 * 8 + 24  # design row, predictions, indices
    assert max(rec.block_sizes) * bytes_per_row <= max(limit, bytes_per_row)
    assert sum(rec.block_sizes) == X.shape[0] * np.prod([len(g) for g in grids])
    if limit >= 10**9:
        assert len(rec.block_sizes) == 1  # everything stacked into one call


def test_block_rows_bound():
    X = np.zeros((10, 5))
    assert block_rows(X, 3, (5 * 8 + 3 * 8 + 24) * 11) == 11
    assert block_rows(X, 3, (5 * 8 + 3 * 8 + 24) * 11 - 1) == 10
    assert block_rows(X, 3, 1) == 1
    with pytest.raises(ValueError, match="memory_limit"):
        block_rows(X, 1, 0)


def test_points_mode():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    a, b = rng.normal(size=6), rng.normal(size=6)
    avg, ice = brute_partial_dependence(_model, X, (0, 1), [a, b], points=True, individual=True)
    for p in range(6):
        Xg = X.copy()
        Xg[:, 0], Xg[:, 1] = a[p], b[p]
        np.testing.assert_allclose(avg[:, p], _model(Xg).mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(ice[:, :, p], _model(Xg), atol=1e-12)


def test_dataframe_with_categorical_column():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": pd.Categorical(["u", "v", "u"], categories=["u", "v"])})

    def predict(block):
        assert isinstance(block["c"].dtype, pd.CategoricalDtype)
        return (block["a"].to_numpy() + (block["c"] == "v").to_numpy() * 10.0)[:, None]

    avg, _ = brute_partial_dependence(predict, df, (1,), [np.array(["u", "v"], dtype=object)])
    np.testing.assert_allclose(avg, [[2.0, 12.0]])


def test_no_ice_kept_for_average():
    X = np.random.default_rng(2).normal(size=(15, 3))
    avg, ice = brute_partial_dependence(_model, X, (0,), [np.arange(4.0)], average=True, individual=False)
    assert ice is None and avg.shape == (2, 4)


def test_bad_weights():
    X = np.zeros((3, 3))
    with pytest.raises(ValueError, match="weights"):
        brute_partial_dependence(_model, X, (0,), [np.arange(2.0)], weights=np.array([1.0, -1.0, 1.0]))


@pytest.mark.parametrize("order", ["row", "point"])
def test_stacking_order_gives_the_same_result(order):
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(3)
    X = rng.random((37, 3))
    est = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, X[:, 0] + X[:, 1] ** 2)
    grids = [np.linspace(0, 1, 4), np.linspace(0.2, 0.8, 3)]
    w = rng.integers(0, 3, 37).astype(float)
    ref = np.stack([[est.predict(np.column_stack([np.full(37, a), np.full(37, b), X[:, 2]]))
                     for b in grids[1]] for a in grids[0]])  # (4, 3, rows)
    avg, ice = brute_partial_dependence(lambda Z: est.predict(Z)[:, None], X, [0, 1], grids, weights=w,
                                        individual=True, order=order, memory_limit=2000)
    np.testing.assert_allclose(ice[:, 0], np.moveaxis(ref, -1, 0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(avg[0], ref @ w / w.sum(), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="order"):
        brute_partial_dependence(lambda Z: est.predict(Z)[:, None], X, [0], grids[:1], order="col")
