"""Exactness of the tree engine against brute force (scikit-learn's own predictions)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_friedman1
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.inspection import partial_dependence
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from threadpoolctl import threadpool_limits

from pdpboot.engine.tree import supports, tree_partial_dependence

TOL = 1e-9
N = 160


@pytest.fixture(autouse=True)
def _one_thread():
    """HistGradientBoosting predicts with OpenMP; many tiny predicts are slow on a busy machine."""
    with threadpool_limits(limits=1):
        yield


# --------------------------------------------------------------------------- references
def _set_column(X, j, value):
    if isinstance(X, pd.DataFrame):
        col = X.columns[j]
        if isinstance(X[col].dtype, pd.CategoricalDtype):
            X[col] = pd.Categorical([value] * len(X), dtype=X[col].dtype)
        else:
            X[col] = value
    else:
        X[:, j] = value


def brute_ice(est, X, idx, grids, method):
    """(n_rows, n_outputs, *grid) by setting the columns and calling the response method."""
    shape = tuple(len(g) for g in grids)
    out = []
    for point in itertools.product(*grids):
        Xc = X.copy()
        for j, v in zip(idx, point):
            _set_column(Xc, j, v)
        r = np.asarray(getattr(est, method)(Xc), dtype=np.float64)
        out.append(r.reshape(len(r), -1))
    return np.stack(out, axis=-1).reshape((len(out[0]), out[0].shape[1]) + shape)


def check_exact(est, X, idx, grids, method, weights=None):
    """Tree engine == brute for the average (alone and with ICE) and for ICE."""
    assert supports(est, X, method)
    ref = brute_ice(est, X, idx, grids, method)
    w = np.ones(ref.shape[0]) if weights is None else weights
    ref_avg = np.tensordot(w, ref, axes=1) / w.sum()
    avg, ice = tree_partial_dependence(est, X, idx, grids, response_method=method, weights=weights)
    assert ice is None
    assert avg.shape == ref_avg.shape
    np.testing.assert_allclose(avg, ref_avg, rtol=0, atol=TOL)
    avg2, ice = tree_partial_dependence(
        est, X, idx, grids, response_method=method, weights=weights, individual=True
    )
    assert ice.shape == ref.shape
    np.testing.assert_allclose(ice, ref, rtol=0, atol=TOL)
    np.testing.assert_allclose(avg2, ref_avg, rtol=0, atol=TOL)


def _thresholds(est, j):
    """Some split thresholds of feature j (to put grid points exactly on them)."""
    if hasattr(est, "_predictors"):
        nodes = est._predictors[0][0].nodes
        t = nodes["num_threshold"][(nodes["feature_idx"] == j) & (nodes["is_leaf"] == 0)]
    else:
        first = est
        if hasattr(est, "estimators_"):
            first = np.ravel(est.estimators_)[0]
        tree = first.tree_
        t = tree.threshold[tree.feature == j]
    return np.sort(t)[:3]


def _grid(est, X, j, n=5):
    col = np.asarray(X, dtype=np.float64)[:, j]
    q = np.nanquantile(col, np.linspace(0.05, 0.95, n))
    t = _thresholds(est, j)
    # values on a threshold, just above it in float64 but equal to it in float32, and just above in float32
    extra = np.concatenate([t, t + np.abs(t) * 1e-12, np.nextafter(t.astype(np.float32), np.float32(np.inf))])
    return np.concatenate([q, extra[:4]])


def _data(n=N, p=5, seed=0, nan=False, classes=None):
    X, y = make_friedman1(n_samples=n, n_features=p, noise=1.0, random_state=seed)
    X[:, 2] = np.round(X[:, 2] * 4)  # an integer feature
    if classes is not None:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1]))
    if nan:
        rng = np.random.default_rng(seed)
        X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


# --------------------------------------------------------------------------- regression
REGRESSORS = [
    DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
    RandomForestRegressor(n_estimators=4, min_samples_leaf=3, random_state=0),
    ExtraTreesRegressor(n_estimators=4, min_samples_leaf=3, random_state=0),
    GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0),
    HistGradientBoostingRegressor(max_iter=8, max_leaf_nodes=15, min_samples_leaf=5, random_state=0),
]


@pytest.mark.parametrize("est", REGRESSORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("idx", [(0,), (2,), (0, 1), (3, 2)])
def test_regressors_exact(est, idx):
    X, y = _data()
    est.fit(X, y)
    grids = [_grid(est, X, j) for j in idx]
    check_exact(est, X, idx, grids, "predict")


@pytest.mark.parametrize(
    "est",
    [
        DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
        RandomForestRegressor(n_estimators=3, min_samples_leaf=3, random_state=0),
        ExtraTreesRegressor(n_estimators=3, min_samples_leaf=3, random_state=0),
        HistGradientBoostingRegressor(max_iter=6, random_state=0),
        HistGradientBoostingClassifier(max_iter=6, random_state=0),
        RandomForestClassifier(n_estimators=3, min_samples_leaf=3, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("idx", [(0,), (1, 3)])
def test_nan_in_background(est, idx):
    classifier = "Classifier" in type(est).__name__
    X, y = _data(nan=True, classes=3 if classifier else None)
    est.fit(X, y)
    grids = [_grid(est, X, j, n=4) for j in idx]
    method = "predict_proba" if classifier else "predict"
    check_exact(est, X, idx, grids, method)
    grids[0] = np.append(grids[0], np.nan)  # a missing value on the grid follows the missing way
    check_exact(est, X, idx, grids, method)


def test_hgb_nonlinear_link_and_weights():
    X, y = _data()
    est = HistGradientBoostingRegressor(loss="poisson", max_iter=8, random_state=0).fit(X, np.exp(y / 10))
    w = np.random.default_rng(1).integers(0, 4, len(X)).astype(float)
    check_exact(est, X, (0,), [_grid(est, X, 0)], "predict", weights=w)
    check_exact(est, X, (0, 4), [_grid(est, X, 0), _grid(est, X, 4, n=3)], "predict", weights=w)


@pytest.mark.parametrize(
    "est",
    [
        DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
        RandomForestRegressor(n_estimators=3, min_samples_leaf=3, random_state=0),
        ExtraTreesRegressor(n_estimators=3, min_samples_leaf=3, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_multioutput_regressors(est):
    X, y = _data()
    est.fit(X, np.column_stack([y, X[:, 1] * y, -y]))
    check_exact(est, X, (1,), [_grid(est, X, 1)], "predict")
    check_exact(est, X, (1, 0), [_grid(est, X, 1, 3), _grid(est, X, 0, 3)], "predict")


def test_weights():
    X, y = _data(n=200)
    est = RandomForestRegressor(n_estimators=3, min_samples_leaf=2, random_state=0).fit(X, y)
    rng = np.random.default_rng(0)
    for w in [rng.random(len(X)), rng.integers(0, 6, len(X)).astype(float)]:  # float; integer (bit planes)
        check_exact(est, X, (0,), [_grid(est, X, 0)], "predict", weights=w)
        check_exact(est, X, (0, 3), [_grid(est, X, 0, 3), _grid(est, X, 3, 3)], "predict", weights=w)


# --------------------------------------------------------------------------- classification
CLASSIFIERS = [
    (DecisionTreeClassifier(min_samples_leaf=3, random_state=0), ["predict_proba"]),
    (RandomForestClassifier(n_estimators=4, min_samples_leaf=3, random_state=0), ["predict_proba"]),
    (ExtraTreesClassifier(n_estimators=4, min_samples_leaf=3, random_state=0), ["predict_proba"]),
    (
        GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0),
        ["predict_proba", "decision_function"],
    ),
    (
        HistGradientBoostingClassifier(max_iter=6, max_leaf_nodes=15, random_state=0),
        ["predict_proba", "decision_function"],
    ),
]


@pytest.mark.parametrize("est,methods", CLASSIFIERS, ids=[type(e).__name__ for e, _ in CLASSIFIERS])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("idx", [(0,), (0, 2)])
def test_classifiers_exact(est, methods, n_classes, idx):
    X, y = _data(classes=n_classes)
    est.fit(X, y)
    grids = [_grid(est, X, j, n=4) for j in idx]
    for method in methods:
        check_exact(est, X, idx, grids, method)


def test_gradient_boosting_exponential_loss_and_zero_init():
    X, y = _data(classes=2)
    for est in [
        GradientBoostingClassifier(loss="exponential", n_estimators=5, random_state=0),
        GradientBoostingClassifier(init="zero", n_estimators=5, random_state=0),
    ]:
        est.fit(X, y)
        check_exact(est, X, (1,), [_grid(est, X, 1)], "predict_proba")
        check_exact(est, X, (1,), [_grid(est, X, 1)], "decision_function")


def test_output_columns_convention():
    X, y = _data(classes=2)
    gb = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
    g = [_grid(gb, X, 0)]
    n_grid = len(g[0])

    def shape(est, method):
        return tree_partial_dependence(est, X, (0,), g, response_method=method)[0].shape

    assert shape(gb, "predict_proba") == (2, n_grid)
    assert shape(gb, "decision_function") == (1, n_grid)
    rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    assert shape(rf, "predict_proba") == (2, n_grid)


# --------------------------------------------------------------------------- categorical HGB
def test_hgb_categorical_numpy_codes_unknown_and_nan():
    rng = np.random.default_rng(0)
    X, y = _data()
    cats = np.array([3.0, 7.0, 11.0, 20.0, 31.0])
    X[:, 4] = rng.choice(cats, len(X))
    X[rng.random(len(X)) < 0.15, 4] = np.nan
    y = y + 3 * np.isin(X[:, 4], [7.0, 20.0]) - 4 * np.isnan(X[:, 4])
    est = HistGradientBoostingRegressor(max_iter=6, categorical_features=[4], random_state=0).fit(X, y)
    grid_cat = np.array([20.0, 3.0, 7.0, 11.0, 31.0, 99.0, np.nan])  # unordered, unknown 99, missing
    check_exact(est, X, (4,), [grid_cat], "predict")
    check_exact(est, X, (0, 4), [_grid(est, X, 0, 3), grid_cat], "predict")
    check_exact(est, X, (4, 0), [grid_cat, _grid(est, X, 0, 3)], "predict")
    check_exact(est, X, (1,), [_grid(est, X, 1)], "predict")  # categorical feature in the complement


def test_hgb_category_unknown_to_the_binner_goes_missing_way(monkeypatch):
    """A category the bin mapper does not know goes the missing way (sklearn's predict does too)."""
    rng = np.random.default_rng(0)
    X, y = _data()
    X[:, 3] = rng.choice([0.0, 1.0, 2.0, 3.0, np.nan], len(X))
    y = y + 2 * (X[:, 3] == 2.0) - (X[:, 3] == 1.0) - 4 * np.isnan(X[:, 3])
    est = HistGradientBoostingRegressor(max_iter=6, categorical_features=[3], random_state=0).fit(X, y)
    known, f_idx_map = est._bin_mapper.make_known_categories_bitsets()
    known = known.copy()
    known[0, 0] &= ~np.uint32(1 << 2)  # forget category code 2
    monkeypatch.setattr(est._bin_mapper, "make_known_categories_bitsets", lambda: (known, f_idx_map))
    check_exact(est, X, (3,), [np.array([0.0, 1.0, 2.0, 3.0])], "predict")
    check_exact(est, X, (0,), [_grid(est, X, 0)], "predict")


def test_hgb_categorical_pandas_classifier():
    rng = np.random.default_rng(2)
    X, _ = _data()
    frame = pd.DataFrame(X, columns=list("abcde"))
    colour = rng.choice(["red", "green", "blue", "grey"], len(frame))
    frame.insert(2, "colour", pd.Categorical(colour))
    frame.loc[rng.random(len(frame)) < 0.1, "colour"] = np.nan
    frame["size"] = pd.Categorical(rng.choice(["S", "M", "L"], len(frame)), categories=["S", "M", "L"])
    y = (frame["a"] + (frame["colour"] == "green") + rng.normal(0, 0.3, len(frame)) > 1.0).astype(int)
    y[(frame["b"] > 0.7) & (frame["size"] != "M")] = 2
    est = HistGradientBoostingClassifier(max_iter=6, random_state=0).fit(frame, y)
    assert est.is_categorical_[2] and est.is_categorical_[6]
    levels = np.array(["blue", "green", "grey", "red"], dtype=object)
    sizes = np.array(["L", "S", "M"], dtype=object)
    for method in ["predict_proba", "decision_function"]:
        check_exact(est, frame, (2,), [levels], method)
        check_exact(est, frame, (0, 2), [_grid(est, X, 0, 3), levels], method)
        check_exact(est, frame, (2, 4), [levels, _grid(est, X, 3, 3)], method)
        check_exact(est, frame, (6, 2), [sizes, levels], method)


# --------------------------------------------------------------------------- against sklearn's brute
def test_matches_sklearn_partial_dependence_brute():
    X, y = _data()
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    g0, g1 = np.linspace(0.1, 0.9, 6), np.linspace(0.2, 0.8, 4)
    w = np.random.default_rng(3).random(len(X))
    sk = partial_dependence(rf, X, [0, 1], method="brute", kind="both", custom_values={0: g0, 1: g1})
    avg, ice = tree_partial_dependence(rf, X, (0, 1), [g0, g1], response_method="predict", individual=True)
    np.testing.assert_allclose(avg, sk["average"], rtol=0, atol=TOL)
    np.testing.assert_allclose(ice[:, 0], sk["individual"][0], rtol=0, atol=TOL)
    sk = partial_dependence(rf, X, [1], method="brute", sample_weight=w, custom_values={1: g1})
    avg, _ = tree_partial_dependence(rf, X, (1,), [g1], response_method="predict", weights=w)
    np.testing.assert_allclose(avg, sk["average"], rtol=0, atol=TOL)

    Xc, yc = _data(classes=2)
    hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(Xc, yc)
    for method in ["predict_proba", "decision_function"]:
        sk = partial_dependence(
            hgb, Xc, [0], method="brute", kind="average", custom_values={0: g0}, response_method=method
        )
        avg, _ = tree_partial_dependence(hgb, Xc, (0,), [g0], response_method=method)
        positive = avg[1] if method == "predict_proba" else avg[0]
        np.testing.assert_allclose(positive, sk["average"][0], rtol=0, atol=TOL)


def test_dataframe_input_and_unsorted_grid():
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    est = ExtraTreesRegressor(n_estimators=3, random_state=0).fit(frame, y)
    grid = np.array([0.9, 0.1, 0.5, 0.5, 0.3])
    check_exact(est, frame, (0,), [grid], "predict")
    check_exact(est, frame, (1, 0), [grid[::-1], grid], "predict")


def test_single_leaf_tree_and_feature_not_used():
    X, y = _data()
    stump = DecisionTreeRegressor(max_depth=1, random_state=0).fit(X, y)
    unused = next(j for j in range(X.shape[1]) if j != stump.tree_.feature[0])
    check_exact(stump, X, (unused,), [np.linspace(0, 1, 4)], "predict")
    const = DecisionTreeRegressor().fit(X, np.full(len(X), 2.5))
    avg, ice = tree_partial_dependence(const, X, (0,), [np.linspace(0, 1, 3)], response_method="predict",
                                       individual=True)
    np.testing.assert_array_equal(avg, np.full((1, 3), 2.5))
    np.testing.assert_array_equal(ice, np.full((len(X), 1, 3), 2.5))


@settings(max_examples=20, deadline=None, database=None)
@given(
    seed=st.integers(0, 2**16),
    n_rows=st.integers(1, 60),
    two=st.booleans(),
    depth=st.integers(1, 8),
    kind=st.sampled_from(["forest", "hgb", "gb"]),
)
def test_random_models_match_brute(seed, n_rows, two, depth, kind):
    """Random small models, backgrounds (possibly a single row, with ties) and grids."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, (80, 4)).astype(float) + rng.random((80, 4)) * rng.integers(0, 2, 4)
    y = X[:, 0] * X[:, 1] + rng.normal(size=80)
    if kind == "forest":
        est = RandomForestRegressor(n_estimators=3, max_depth=depth, random_state=seed)
    elif kind == "hgb":
        est = HistGradientBoostingRegressor(
            max_iter=3, max_depth=depth + 1, min_samples_leaf=2, random_state=seed
        )
    else:
        est = GradientBoostingRegressor(n_estimators=3, max_depth=depth, random_state=seed)
    est.fit(X, y)
    background = X[rng.integers(0, len(X), n_rows)]
    idx = tuple(rng.choice(4, 2 if two else 1, replace=False))
    grids = [np.round(rng.uniform(-1, 6, rng.integers(1, 6)), 1) for _ in idx]  # ties with x.5 thresholds
    weights = rng.integers(1, 4, n_rows).astype(float) if seed % 2 else None
    check_exact(est, background, idx, grids, "predict", weights=weights)


# --------------------------------------------------------------------------- support and errors
def test_unsupported_cases():
    X, y = _data()
    Xc, yc = _data(classes=3)
    rf = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    assert supports(rf, X, "predict")
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=2)).fit(X, y)
    assert not supports(pipe, X, "predict")
    assert not supports(LinearRegression().fit(X, y), X, "predict")
    assert not supports(RandomForestRegressor(), X, "predict")  # not fitted
    assert not supports(rf, sp.csr_matrix(X), "predict")
    assert not supports(rf, X[:, :3], "predict")  # wrong number of columns
    rfc = RandomForestClassifier(n_estimators=2, random_state=0).fit(Xc, yc)
    assert supports(rfc, Xc, "predict_proba")
    assert not supports(rfc, Xc, "predict")  # class labels
    assert not supports(rfc, Xc, "decision_function")
    multi = DecisionTreeClassifier().fit(Xc, np.column_stack([yc, yc]))
    assert not supports(multi, Xc, "predict_proba")
    custom_init = GradientBoostingRegressor(init=LinearRegression(), n_estimators=2).fit(X, y)
    assert not supports(custom_init, X, "predict")
    gb = GradientBoostingRegressor(n_estimators=2).fit(X, y)
    X_nan = X.copy()
    X_nan[0, 1] = np.nan
    assert not supports(gb, X_nan, "predict")  # GB rejects NaN
    assert supports(rf, X_nan, "predict")
    frame = pd.DataFrame({"a": X[:, 0], "s": pd.Categorical(np.where(X[:, 1] > 0.5, "u", "v"))})
    assert not supports(DecisionTreeRegressor().fit(X[:, :2], y), frame, "predict")
    with pytest.raises(ValueError, match="brute"):
        tree_partial_dependence(rfc, Xc, (0,), [np.arange(3.0)], response_method="predict")

    class Clipped(RandomForestRegressor):  # a subclass whose predictions are not the trees' any more
        def predict(self, X):
            return np.clip(super().predict(X), 5, 20)

    assert not supports(Clipped(n_estimators=2, random_state=0).fit(X, y), X, "predict")


def test_bad_arguments():
    X, y = _data()
    est = DecisionTreeRegressor(random_state=0).fit(X, y)
    g = [np.linspace(0, 1, 3)]
    with pytest.raises(ValueError, match="1 or 2"):
        tree_partial_dependence(est, X, (0, 1, 2), g * 3, response_method="predict")
    with pytest.raises(ValueError, match="repeat"):
        tree_partial_dependence(est, X, (1, 1), g * 2, response_method="predict")
    with pytest.raises(ValueError, match="out of range"):
        tree_partial_dependence(est, X, (9,), g, response_method="predict")
    with pytest.raises(ValueError, match="one grid per feature"):
        tree_partial_dependence(est, X, (0, 1), g, response_method="predict")
    with pytest.raises(ValueError, match="weights"):
        tree_partial_dependence(est, X, (0,), g, response_method="predict", weights=-np.ones(len(X)))
    with pytest.raises(ValueError, match="weights must have shape"):
        tree_partial_dependence(est, X, (0,), g, response_method="predict", weights=np.ones(3))
    with pytest.raises(ValueError, match="non-numeric"):
        tree_partial_dependence(est, X, (0,), [np.array(["a", "b"])], response_method="predict")
    with pytest.raises(ValueError, match="Nothing to compute"):
        tree_partial_dependence(est, X, (0,), g, response_method="predict", average=False)
