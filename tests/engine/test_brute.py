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


def test_two_features_with_weights_equal_the_models_predictions():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(3)
    X = rng.random((37, 3))
    est = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, X[:, 0] + X[:, 1] ** 2)
    grids = [np.linspace(0, 1, 4), np.linspace(0.2, 0.8, 3)]
    w = rng.integers(0, 3, 37).astype(float)
    ref = np.stack([[est.predict(np.column_stack([np.full(37, a), np.full(37, b), X[:, 2]]))
                     for b in grids[1]] for a in grids[0]])  # (4, 3, rows)
    avg, ice = brute_partial_dependence(lambda Z: est.predict(Z)[:, None], X, [0, 1], grids, weights=w,
                                        individual=True, memory_limit=2000)
    np.testing.assert_allclose(ice[:, 0], np.moveaxis(ref, -1, 0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(avg[0], ref @ w / w.sum(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("limit", [300, 3_000, 10**6])
@pytest.mark.parametrize("expected_outputs", [1, 2, 5])
def test_whole_row_blocks(limit, expected_outputs):
    """Blocks of whole rows (and the partial blocks when the first block was sized
    for another output count) against the one-call-per-grid-point loop, with ICE and weights."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(23, 4))
    grids = [np.linspace(-1, 1, 6), np.linspace(0, 2, 3)]
    w = rng.uniform(0, 2, size=23)
    rec = _Recorder()
    avg, ice = brute_partial_dependence(rec, X, (1, 3), grids, weights=w, individual=True, memory_limit=limit,
                                        n_outputs=expected_outputs)
    ref_avg, ref_ice = _loop_reference(X, (1, 3), grids, weights=w)
    np.testing.assert_allclose(avg, ref_avg, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ice, ref_ice, rtol=0, atol=1e-12)
    assert sum(rec.block_sizes) == 23 * 18


def test_same_blocks_same_bits():
    """Determinism: the same call twice gives bit-identical results."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(301, 3))
    grids = [np.linspace(-2, 2, 17)]
    runs = [brute_partial_dependence(_model, X, (2,), grids, memory_limit=20_000, individual=True) for _ in range(2)]
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def _pipeline_cases():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

    rng = np.random.default_rng(6)
    X = np.column_stack([rng.normal(size=120), rng.uniform(size=120), rng.integers(0, 3, 120).astype(float),
                         rng.normal(size=120)])
    y = X[:, 0] ** 2 + X[:, 1] + (X[:, 2] == 1) + rng.normal(scale=0.1, size=120)
    ct = ColumnTransformer([("num", StandardScaler(), [0, 1, 3]), ("cat", OneHotEncoder(), [2])])
    return X, [
        (make_pipeline(StandardScaler(), MLPRegressor(hidden_layer_sizes=(8,), max_iter=50, random_state=0)).fit(X, y),
         "predict"),
        (make_pipeline(ct, MinMaxScaler(), Ridge()).fit(X, y), "predict"),
        (make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y > 1), "predict_proba"),
    ]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.parametrize("features", [(0,), (1, 3), (2,)])
def test_column_wise_pipeline_split_equals_sklearn_brute(case, features):
    """Column-wise preprocessing applied once (brute.split_pipeline) equals scikit-learn's brute
    force on the whole pipeline; a one-hot feature of interest takes the whole-pipeline path."""
    from sklearn.inspection import partial_dependence

    from pdpboot.engine import compute_pd
    from pdpboot.engine.brute import split_pipeline

    X, models = _pipeline_cases()
    est, method = models[case]
    split = split_pipeline(est, X)
    assert split is not None
    assert (split.columns(features) is None) == (case == 1 and 2 in features)
    grids = [np.unique(X[:, j]) if j == 2 else np.quantile(X[:, j], np.linspace(0.1, 0.9, 7)) for j in features]
    avg, ice = compute_pd(est, X, features, grids, response_method=method, method="brute", individual=True)
    ref = partial_dependence(est, X, list(features), method="brute", kind="both",
                             custom_values=dict(zip(features, grids)),
                             response_method="auto" if method == "predict" else method)
    k = 1 if method == "predict_proba" else 0
    np.testing.assert_allclose(avg[k], ref["average"][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.moveaxis(ice[:, k], 0, 0), ref["individual"][0], rtol=0, atol=1e-12)


def test_split_pipeline_declines():
    import pandas as pd
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from pdpboot.engine.brute import split_pipeline

    X = np.random.default_rng(7).normal(size=(30, 3))
    y = X.sum(axis=1)
    assert split_pipeline(Ridge().fit(X, y), X) is None  # not a pipeline
    assert split_pipeline(make_pipeline(PolynomialFeatures(2), Ridge()).fit(X, y), X) is None  # mixes columns
    frame = pd.DataFrame(X, columns=list("abc"))
    assert split_pipeline(make_pipeline(StandardScaler(), Ridge()).fit(frame, y), frame) is None  # DataFrame


def test_block_plan_by_family():
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from pdpboot.engine.brute import FAMILY_BLOCK_BYTES, block_plan

    assert block_plan(RandomForestRegressor()) == FAMILY_BLOCK_BYTES["forest"]
    assert block_plan(HistGradientBoostingRegressor()) == FAMILY_BLOCK_BYTES["hgb"]
    assert block_plan(make_pipeline(StandardScaler(), MLPRegressor())) == FAMILY_BLOCK_BYTES["other"]
    assert block_plan(RandomForestRegressor(), memory_limit=1000) == 1000  # the caller's bound wins


def test_block_plan_external_boosters():
    from pdpboot.engine.brute import FAMILY_BLOCK_BYTES, block_plan

    for module, cls, family in (("xgboost", "XGBRegressor", "xgboost"), ("lightgbm", "LGBMRegressor", "lightgbm"),
                                ("catboost", "CatBoostRegressor", "catboost")):
        lib = pytest.importorskip(module)
        assert block_plan(getattr(lib, cls)()) == (FAMILY_BLOCK_BYTES[family])
