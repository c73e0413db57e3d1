"""Every engine function checks ``weights`` with engine.inputs.row_weights: same refusals, same message."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from pdpboot.engine.ale import ale_arrays
from pdpboot.engine.brute import brute_partial_dependence
from pdpboot.engine.hstats import pd_at_points, subsample_rows
from pdpboot.engine.ice_stats import weighted_sd
from pdpboot.engine.inputs import row_weights
from pdpboot.engine.tree import tree_partial_dependence

N = 6
X = np.column_stack([np.arange(N, dtype=float), np.linspace(0, 1, N)])
TREE = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0] + X[:, 1])
GRID = [np.array([0.5, 2.5])]


def _calls():
    predict = TREE.predict
    return {
        "brute": lambda w: brute_partial_dependence(lambda Z: predict(Z)[:, None], X, (0,), GRID, weights=w),
        "tree": lambda w: tree_partial_dependence(TREE, X, (0,), GRID, response_method="predict", weights=w),
        "h rows": lambda w: subsample_rows(N, 4, np.random.default_rng(0), weights=w),
        "h pd": lambda w: pd_at_points(np.ones((N, 1, N)), weights=w),
        "ice sd": lambda w: weighted_sd(np.ones((N, 3)), w),
        "ale": lambda w: ale_arrays(lambda Z: predict(Z)[:, None], X, (0,), [np.array([0.0, 2.5, 5.0])], weights=w),
    }


@pytest.mark.parametrize("name", list(_calls()))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_every_engine_refuses_non_finite_or_negative_weights(name, bad):
    w = np.ones(N)
    w[2] = bad
    with pytest.raises(ValueError, match="weights must be finite and non-negative"):
        _calls()[name](w)


@pytest.mark.parametrize("name", list(_calls()))
def test_every_engine_refuses_weights_of_the_wrong_length(name):
    with pytest.raises(ValueError, match=rf"weights must have shape \({N},\)"):
        _calls()[name](np.ones(N + 1))


def test_row_weights():
    np.testing.assert_array_equal(row_weights(None, 2), [1.0, 1.0])
    assert row_weights([1, 2], 2).dtype == np.float64
    np.testing.assert_array_equal(row_weights([0, 0], 2, positive_sum=False), [0.0, 0.0])  # ALE: empty resample
    with pytest.raises(ValueError, match="positive sum"):
        row_weights([0, 0], 2)
    with pytest.raises(ValueError, match="one per instance"):
        row_weights([1.0], 2, what="instance")


def test_average_rows_gives_the_weights_divisor_and_visited_rows():
    from pdpboot.engine.inputs import average_rows

    weights, total, rows = average_rows(None, 4)
    np.testing.assert_array_equal(weights, np.ones(4))
    assert total == 4.0 and rows.dtype == np.int64
    np.testing.assert_array_equal(rows, [0, 1, 2, 3])
    w = np.array([0.5, 0.0, 2.0, 0.0, 1.5])
    weights, total, rows = average_rows(w, 5)
    assert weights is w and total == 4.0
    np.testing.assert_array_equal(rows, [0, 2, 4])
