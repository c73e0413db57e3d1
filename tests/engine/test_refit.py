"""Fresh seeded copies of an estimator for a loop of refits (``engine.refit.UnfittedCopies``)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pdpboot.engine.refit import UnfittedCopies, seed_estimator


def _flat(estimator) -> dict:
    """``get_params(deep=True)`` as reprs (distinct objects with the same parameters compare equal)."""
    return {k: repr(v) for k, v in estimator.get_params(deep=True).items()}


@pytest.mark.parametrize("only_if_unset", [False, True])
@pytest.mark.parametrize("make", [
    lambda: make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3, random_state=None)),
    lambda: HistGradientBoostingRegressor(max_iter=5, random_state=7),
    lambda: make_pipeline(StandardScaler(), LinearRegression()),
])
def test_copies_are_what_clone_and_seed_estimator_make(make, only_if_unset):
    estimator = make()
    copies = UnfittedCopies(estimator)
    for seed in range(3):
        ours = copies.seeded(np.random.default_rng(seed), only_if_unset=only_if_unset)
        theirs = seed_estimator(clone(estimator), np.random.default_rng(seed), only_if_unset=only_if_unset)
        assert _flat(ours) == _flat(theirs)
        assert ours is not copies.template and ours is not estimator


def test_a_copy_is_independent_of_the_template_and_of_other_copies():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    copies = UnfittedCopies(make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3)))
    first = copies.seeded(np.random.default_rng(1)).fit(X, y)
    second = copies.seeded(np.random.default_rng(2))
    assert not hasattr(copies.template[-1], "estimators_")
    assert not hasattr(second[-1], "estimators_")
    assert first[-1].random_state != second[-1].random_state
    # the same seed gives the same fitted model as a clone seeded the same way
    again = seed_estimator(clone(copies.template), np.random.default_rng(1)).fit(X, y)
    np.testing.assert_array_equal(first.predict(X), again.predict(X))


def test_an_estimator_with_its_own_clone_is_cloned_as_clone_would():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    copies = UnfittedCopies(frozen)
    assert copies.seeded(np.random.default_rng(0)) is clone(frozen) is frozen
