"""Refitting clones of an estimator: seeds and row selection shared by every resampling loop."""

from __future__ import annotations

import numpy as np


def seed_estimator(estimator, rng: np.random.Generator, *, only_if_unset: bool = False):
    """Set every ``random_state`` parameter of ``estimator`` (pipelines included) from ``rng``.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Changed in place (and returned).
    rng : numpy.random.Generator
        One integer is drawn per ``random_state`` parameter, in sorted key
        order, whether or not it is set, so the stream does not depend on the
        estimator's current values.
    only_if_unset : bool
        Keep ``random_state`` values that are already set (not None).

    Returns
    -------
    estimator
    """
    params = estimator.get_params(deep=True)
    keys = sorted(k for k in params if k == "random_state" or k.endswith("__random_state"))
    new = {}
    for key in keys:
        value = int(rng.integers(0, 2**31 - 1))
        if not (only_if_unset and params[key] is not None):
            new[key] = value
    if new:
        estimator.set_params(**new)
    return estimator


def rows_of(values, rows: np.ndarray):
    """Select rows (positions) of an array, Series or DataFrame."""
    return values.iloc[rows] if hasattr(values, "iloc") else values[rows]
