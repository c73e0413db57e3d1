"""Refitting clones of an estimator: seeds and row selection shared by every resampling loop."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, clone


def _seed_keys(params: dict) -> list[str]:
    """The ``random_state`` parameters among ``get_params(deep=True)``'s, in sorted key order."""
    return sorted(k for k in params if k == "random_state" or k.endswith("__random_state"))


def seed_estimator(estimator, rng: np.random.Generator, *, only_if_unset: bool = False):
    """Set every ``random_state`` parameter of ``estimator`` (pipelines included) from ``rng``, in place.

    One integer is drawn per ``random_state`` parameter, in sorted key order, whether or not it is set
    (``only_if_unset`` keeps set values), so the stream does not depend on the current values.
    """
    params = estimator.get_params(deep=True)
    return _set_seeds(estimator, rng, {key: params[key] is not None for key in _seed_keys(params)}, only_if_unset)


def _set_seeds(estimator, rng: np.random.Generator, is_set: dict[str, bool], only_if_unset: bool):
    """Draw one integer per key of ``is_set`` (in its order) and set those not kept."""
    new = {}
    for key, already in is_set.items():
        value = int(rng.integers(0, 2**31 - 1))
        if not (only_if_unset and already):
            new[key] = value
    if new:
        estimator.set_params(**new)
    return estimator


class UnfittedCopies:
    """Fresh unfitted, seeded copies of one estimator, for a loop of refits.

    The estimator is cloned once and each copy deep-copies that clone (what ``clone`` makes of it, at a
    fraction of the cost); an estimator with its own ``__sklearn_clone__`` is cloned each time.
    """

    def __init__(self, estimator):
        self.template = clone(estimator)
        params = self.template.get_params(deep=True)
        self._is_set = {key: params[key] is not None for key in _seed_keys(params)}
        own_clone = getattr(type(self.template), "__sklearn_clone__", None)
        self._copy = own_clone is None or own_clone is BaseEstimator.__sklearn_clone__

    def seeded(self, rng: np.random.Generator, *, only_if_unset: bool = False):
        """A fresh copy whose ``random_state`` parameters are drawn from ``rng`` as
        :func:`seed_estimator` draws them (the same integers, in the same order)."""
        model = copy.deepcopy(self.template) if self._copy else clone(self.template)
        return _set_seeds(model, rng, self._is_set, only_if_unset)


def rows_of(values, rows: np.ndarray):
    """Select rows (positions) of an array, Series or DataFrame."""
    return values.iloc[rows] if hasattr(values, "iloc") else values[rows]
