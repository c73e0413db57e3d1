"""The ALE engine: closed forms, hand formulas, empty bins, weights, stacking, level ordering."""

import numpy as np
import pandas as pd
import pytest

from pdpboot.engine.ale import ale_arrays, order_levels, quantile_edges

B1, B2, B3 = 1.0, 2.0, 3.0


def _f(Z):
    Z = np.asarray(Z, dtype=float)
    return (B1 * Z[:, 0] + B2 * Z[:, 1] + B3 * Z[:, 0] * Z[:, 1])[:, None]


def _binormal(n, rho, seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rho * x1 + np.sqrt(1 - rho**2) * rng.normal(size=n)
    return np.column_stack([x1, x2])


def _bin_of(x, edges):
    return np.clip(np.searchsorted(edges, x, "left") - 1, 0, edges.size - 2)


def test_quantile_edges_are_r_type_1():
    # R: quantile(1:10, seq(0, 1, 0.25), type = 1) = 1 3 5 8 10
    np.testing.assert_array_equal(quantile_edges(np.arange(1, 11), 4), [1, 3, 5, 8, 10])
    # ties collapse, missing values are ignored
    np.testing.assert_array_equal(quantile_edges([0, 0, 0, 0, 1, np.nan], 4), [0, 1])


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_closed_form_bivariate_normal(rho):
    """f = b1 x1 + b2 x2 + b3 x1 x2, (x1, x2) standard binormal: ALE(x1) = b1 x1 + b3 rho x1^2 / 2 + const.

    The local effect of a bin is b1 dz + b3 dz mean(x2 | bin) and E[x2 | x1] = rho x1, so the
    accumulated differences between interior edges estimate the closed form with Monte Carlo
    standard error b3 sqrt(1 - rho^2) sqrt(sum dz_k^2 / n_k).
    """
    n, K = 20_000, 40
    X = _binormal(n, rho)
    edges = quantile_edges(X[:, 0], K)
    ale = ale_arrays(_f, X, [0], [edges])[0]
    truth = B1 * edges + B3 * rho * edges**2 / 2
    inner = slice(4, -4)  # the first and last bins reach the sample extremes and are wide
    counts = np.bincount(_bin_of(X[:, 0], edges), minlength=edges.size - 1)
    dz = np.diff(edges)[inner.start: edges.size - 1 + inner.stop]
    se = B3 * np.sqrt(1 - rho**2) * np.sqrt(np.sum(dz**2 / counts[inner.start: edges.size - 1 + inner.stop]))
    diff_est = ale[inner] - ale[inner][0]
    diff_true = truth[inner] - truth[inner][0]
    assert np.max(np.abs(diff_est - diff_true)) < 4 * se + 1e-9
    # and the same from an independent draw is not identical (the check is not vacuous)
    other = ale_arrays(_f, _binormal(n, rho, seed=1), [0], [edges])[0]
    assert not np.allclose(other, ale)


def test_centring_is_the_bin_midpoint_weighted_mean():
    X = _binormal(500, 0.5)
    w = np.random.default_rng(3).integers(0, 4, size=500).astype(float)
    edges = quantile_edges(X[:, 0], 10)
    ale = ale_arrays(_f, X, [0], [edges], weights=w)[0]
    inside = w > 0
    n_k = np.bincount(_bin_of(X[inside, 0], edges), weights=w[inside], minlength=edges.size - 1)
    assert abs(np.sum(n_k * (ale[:-1] + ale[1:]) / 2)) < 1e-9 * n_k.sum()


def test_uncentred_differences_by_hand():
    """Small data: every bin's local effect written out by hand."""
    X = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, -1.0], [3.0, 0.5], [4.0, 1.0]])
    edges = np.array([0.0, 2.0, 4.0])
    ale = ale_arrays(_f, X, [0], [edges])[0]
    # bin 1 = [0, 2]: rows 0, 1, 2; bin 2 = (2, 4]: rows 3, 4; f(2,x2) - f(0,x2) = 2 b1 + 2 b3 x2
    eff1 = np.mean([2 * B1 + 2 * B3 * x2 for x2 in (1.0, 2.0, -1.0)])
    eff2 = np.mean([2 * B1 + 2 * B3 * x2 for x2 in (0.5, 1.0)])
    g = np.array([0.0, eff1, eff1 + eff2])
    g -= (3 * (g[0] + g[1]) / 2 + 2 * (g[1] + g[2]) / 2) / 5
    np.testing.assert_allclose(ale, g, atol=1e-12)


def test_weights_equal_repeated_rows():
    X = _binormal(300, 0.7, seed=4)
    w = np.random.default_rng(5).integers(0, 4, size=300)
    edges = quantile_edges(X[:, 0], 8)
    e2 = quantile_edges(X[:, 1], 6)
    for fs, grids in (([0], [edges]), ([0, 1], [edges, e2])):
        weighted = ale_arrays(_f, X, fs, grids, weights=w.astype(float))
        repeated = ale_arrays(_f, np.repeat(X, w, axis=0), fs, grids)
        np.testing.assert_allclose(weighted, repeated, atol=1e-10)


def test_empty_bin_linear_model_is_exact():
    """An empty bin borrows its neighbours' rows; for a model linear in the feature that is exact."""
    X = _binormal(400, 0.8, seed=6)
    edges = quantile_edges(X[:, 0], 10)
    bins = _bin_of(X[:, 0], edges)
    w = np.where(np.isin(bins, [0, 4, 5, 9]), 0.0, 1.0)  # empty bins at both ends and two in the middle

    def linear(Z):
        return (2.5 * Z[:, 0] - Z[:, 1])[:, None]

    ale = ale_arrays(linear, X, [0], [edges], weights=w)[0]
    assert np.isfinite(ale).all()
    np.testing.assert_allclose(np.diff(ale), 2.5 * np.diff(edges), atol=1e-10)


def test_empty_bin_borrows_both_nearest_bins():
    X = _binormal(600, 0.5, seed=7)
    edges = quantile_edges(X[:, 0], 6)
    bins = _bin_of(X[:, 0], edges)
    w = np.where(bins == 2, 0.0, 1.0)

    def curved(Z):
        return (Z[:, 0] ** 2 * Z[:, 1])[:, None]

    ale = ale_arrays(curved, X, [0], [edges], weights=w)[0]
    # hand: bin 2's effect = mean over the rows of bins 1 and 3 of (z3^2 - z2^2) x2
    donors = np.isin(bins, [1, 3])
    eff = np.array([np.mean((edges[k + 1] ** 2 - edges[k] ** 2) * X[bins == k, 1]) for k in range(6)])
    eff[2] = np.mean((edges[3] ** 2 - edges[2] ** 2) * X[donors, 1])
    g = np.concatenate([[0.0], np.cumsum(eff)])
    n_k = np.bincount(bins, weights=w, minlength=6)
    g -= np.sum(n_k * (g[:-1] + g[1:]) / 2) / n_k.sum()
    np.testing.assert_allclose(ale, g, atol=1e-10)


def test_levels_both_directions_by_hand():
    """Level pairs use the rows at either level (ALEPlot / iml / PyALE rule), centred by level counts."""
    X = np.array([[0, 1.0], [0, 2.0], [1, 0.0], [2, 3.0], [2, -1.0], [2, 1.0]], dtype=float)

    def model(Z):
        return (Z[:, 0] ** 2 * Z[:, 1] + Z[:, 0])[:, None]

    levels = np.array([0.0, 1.0, 2.0])
    ale = ale_arrays(model, X, [0], [levels], kinds=["levels"])[0]

    def step(lo, hi, x2):
        return np.mean([(hi**2 * v + hi) - (lo**2 * v + lo) for v in x2])

    e01 = step(0, 1, [1.0, 2.0, 0.0])  # rows at levels 0 and 1
    e12 = step(1, 2, [0.0, 3.0, -1.0, 1.0])  # rows at levels 1 and 2
    g = np.array([0.0, e01, e01 + e12])
    g -= (2 * g[0] + 1 * g[1] + 3 * g[2]) / 6
    np.testing.assert_allclose(ale, g, atol=1e-12)
    # an empty pair (levels 1 and 2 have no weight) borrows the nearest pair's rows
    w = np.array([1, 1, 0, 0, 0, 0], dtype=float)
    lv = np.array([0.0, 1.0, 2.0, 3.0])
    got = ale_arrays(model, np.vstack([X, [[3.0, 5.0]]]), [0], [lv], kinds=["levels"],
                     weights=np.append(w, 1.0))[0]
    e = [step(0, 1, [1.0, 2.0]), None, step(2, 3, [5.0])]
    e[1] = step(1, 2, [1.0, 2.0, 5.0])  # pairs 0 and 2 are equally near
    g = np.concatenate([[0.0], np.cumsum(e)])
    g -= (2 * g[0] + g[3]) / 3
    np.testing.assert_allclose(got, g, atol=1e-12)


def test_additive_model_has_zero_second_order_ale():
    X = _binormal(3000, 0.9, seed=8)  # strongly correlated: many empty cells

    def additive(Z):
        return np.column_stack([np.sin(3 * Z[:, 0]) + Z[:, 1] ** 3, Z[:, 0] - 2 * Z[:, 1]])

    grids = [quantile_edges(X[:, 0], 15), quantile_edges(X[:, 1], 12)]
    ale = ale_arrays(additive, X, [0, 1], grids, n_outputs=2)
    assert ale.shape == (2, grids[0].size, grids[1].size)
    np.testing.assert_allclose(ale, 0.0, atol=1e-10)


def test_product_second_order_ale_independent_uniforms():
    """f = x1 x2, independent: the pure interaction is (x1 - mu1)(x2 - mu2) up to Monte Carlo error."""
    rng = np.random.default_rng(9)
    X = rng.uniform(size=(40_000, 2))
    grids = [quantile_edges(X[:, 0], 10), quantile_edges(X[:, 1], 10)]
    ale = ale_arrays(lambda Z: (Z[:, 0] * Z[:, 1])[:, None], X, [0, 1], grids)[0]
    truth = np.outer(grids[0] - X[:, 0].mean(), grids[1] - X[:, 1].mean())
    assert np.max(np.abs(ale - truth)) < 0.01
    # the second differences of the estimate are exactly the cell areas (bilinear model)
    second = np.diff(np.diff(ale, axis=0), axis=1)
    np.testing.assert_allclose(second, np.outer(np.diff(grids[0]), np.diff(grids[1])), atol=1e-12)


def test_second_order_surface_by_hand_formula():
    """2-D ALE of a small table against eq. (13) written out with loops (ALEPlot's removal of 1-D effects)."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(200, 3))
    X[:, 1] += X[:, 0]

    def model(Z):
        return (np.sin(Z[:, 0]) * Z[:, 1] ** 2 + Z[:, 2] * Z[:, 0])[:, None]

    e1, e2 = quantile_edges(X[:, 0], 4), quantile_edges(X[:, 1], 3)
    ale = ale_arrays(model, X, [0, 1], [e1, e2])[0]
    K1, K2 = e1.size - 1, e2.size - 1
    b1, b2 = _bin_of(X[:, 0], e1), _bin_of(X[:, 1], e2)
    delta = np.full((K1, K2), np.nan)
    n = np.zeros((K1, K2))
    for k in range(K1):
        for m in range(K2):
            rows = X[(b1 == k) & (b2 == m)]
            n[k, m] = len(rows)
            if len(rows):
                vals = []
                for r in rows:
                    def at(a, b, r=r):
                        z = r.copy()
                        z[0], z[1] = a, b
                        return model(z[None])[0, 0]
                    vals.append(at(e1[k + 1], e2[m + 1]) - at(e1[k], e2[m + 1])
                                - at(e1[k + 1], e2[m]) + at(e1[k], e2[m]))
                delta[k, m] = np.mean(vals)
    assert (n > 0).all()  # this table has no empty cell, so no borrowing is involved
    G = np.zeros((K1 + 1, K2 + 1))
    for k in range(1, K1 + 1):
        for m in range(1, K2 + 1):
            G[k, m] = delta[:k, :m].sum()
    f1 = np.zeros(K1 + 1)
    for k in range(K1):
        f1[k + 1] = f1[k] + sum(n[k, m] * ((G[k + 1, m] - G[k, m]) + (G[k + 1, m + 1] - G[k, m + 1])) / 2
                                for m in range(K2)) / n[k].sum()
    f2 = np.zeros(K2 + 1)
    for m in range(K2):
        f2[m + 1] = f2[m] + sum(n[k, m] * ((G[k, m + 1] - G[k, m]) + (G[k + 1, m + 1] - G[k + 1, m])) / 2
                                for k in range(K1)) / n[:, m].sum()
    H = G - f1[:, None] - f2[None, :]
    c = sum(n[k, m] * (H[k, m] + H[k + 1, m] + H[k, m + 1] + H[k + 1, m + 1]) / 4
            for k in range(K1) for m in range(K2)) / n.sum()
    np.testing.assert_allclose(ale, H - c, atol=1e-10)


class _Recorder:
    def __init__(self):
        self.sizes = []

    def __call__(self, X):
        self.sizes.append(X.shape[0])
        return _f(X)


@pytest.mark.parametrize("limit", [1, 2_000, 10**9])
def test_stacked_blocks_respect_memory_limit(limit):
    X = _binormal(150, 0.3, seed=11)
    grids = [quantile_edges(X[:, 0], 5), quantile_edges(X[:, 1], 4)]
    rec = _Recorder()
    one = ale_arrays(rec, X, [0], grids[:1], memory_limit=limit)
    two = ale_arrays(rec, X, [0, 1], grids, memory_limit=limit)
    np.testing.assert_allclose(one, ale_arrays(_f, X, [0], grids[:1]), atol=1e-12)
    np.testing.assert_allclose(two, ale_arrays(_f, X, [0, 1], grids), atol=1e-12)
    per_row = 2 * 8 + 8 + 24
    assert max(rec.sizes) * per_row <= max(limit, per_row)
    if limit == 10**9:
        assert rec.sizes == [2 * 150, 4 * 150]  # one predict call per ALE


def test_dataframe_with_categorical_and_integer_columns():
    rng = np.random.default_rng(12)
    df = pd.DataFrame({"x": rng.normal(size=50), "k": rng.integers(0, 3, 50),
                       "c": pd.Categorical(rng.choice(["u", "v", "w"], 50))})

    def model(D):
        assert isinstance(D, pd.DataFrame) and isinstance(D["c"].dtype, pd.CategoricalDtype)
        return (D["x"].to_numpy() + 2 * D["k"].to_numpy() + (D["c"] == "w").to_numpy())[:, None]

    ale_k = ale_arrays(model, df, [1], [np.array([0, 1, 2])], kinds=["levels"])[0]
    np.testing.assert_allclose(np.diff(ale_k), [2.0, 2.0])
    ale_c = ale_arrays(model, df, [2], [np.array(["u", "w", "v"], dtype=object)], kinds=["levels"])[0]
    np.testing.assert_allclose(np.diff(ale_c), [1.0, -1.0])
    edges = np.linspace(df["x"].min(), df["x"].max(), 4)
    np.testing.assert_allclose(np.diff(ale_arrays(model, df, [0], [edges])[0]), np.diff(edges))


def test_order_levels_follows_the_other_features():
    rng = np.random.default_rng(13)
    means = {"a": 0.0, "b": 3.0, "c": 1.0, "d": 2.0}
    lev = rng.choice(list(means), size=800)
    df = pd.DataFrame({"g": lev, "z": [rng.normal(means[v], 0.3) for v in lev]})
    got = order_levels(df, 0, ["a", "b", "c", "d"], discrete=[True, False])
    assert list(got) == ["a", "c", "d", "b"]
    # a discrete other column: frequencies tell the levels apart
    other = np.where(np.isin(lev, ["a", "c"]), rng.choice(["p", "q"], 800, p=[0.9, 0.1]),
                     rng.choice(["p", "q"], 800, p=[0.1, 0.9]))
    df2 = pd.DataFrame({"g": lev, "o": other})
    got2 = list(order_levels(df2, 0, ["a", "b", "c", "d"], discrete=[True, True]))
    assert {frozenset(got2[:2]), frozenset(got2[2:])} == {frozenset("ac"), frozenset("bd")}


def test_bad_input():
    X = _binormal(20, 0.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        ale_arrays(_f, X, [0], [np.array([1.0, 0.0])])
    with pytest.raises(ValueError, match="2-D ALE"):
        ale_arrays(_f, X, [0, 1], [np.array([0.0, 1.0]), np.array([0.0, 1.0])], kinds=["levels", "numeric"])
    with pytest.raises(ValueError, match="weights"):
        ale_arrays(_f, X, [0], [np.array([-1.0, 1.0])], weights=-np.ones(20))
    with pytest.raises(ValueError, match="No row"):
        ale_arrays(_f, X, [0], [np.array([10.0, 11.0])])
