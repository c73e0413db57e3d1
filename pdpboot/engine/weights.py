"""Row weights of the NumPy layer: the one check every engine function applies to ``weights``.

The public functions validate the user's ``sample_weight`` first
(:func:`pdpboot._validate.check_sample_weight`); the engine's functions take bootstrap
multiplicities times those weights, and check them here so that each engine refuses the same inputs
with the same message.
"""

from __future__ import annotations

import numpy as np

__all__ = ["average_rows", "row_weights"]


def row_weights(weights, n_rows: int, *, what: str = "row", positive_sum: bool = True) -> np.ndarray:
    """``weights`` as float64 after checking them (all ones when None).

    Parameters
    ----------
    weights : array-like of shape (n_rows,) or None
    n_rows : int
    what : str
        What one weight belongs to, for the message (``"row"``, ``"background row"``, ``"instance"``).
    positive_sum : bool
        Also refuse weights that are all zero (every average divides by their sum).

    Returns
    -------
    ndarray of shape (n_rows,)

    Raises
    ------
    ValueError
        Wrong shape; a NaN, infinite or negative weight; a zero sum when ``positive_sum``.

    Examples
    --------
    >>> row_weights(None, 3)
    array([1., 1., 1.])
    >>> row_weights([0.0, 2.0], 2)
    array([0., 2.])
    """
    w = np.ones(n_rows) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},), one per {what}, got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or (positive_sum and w.sum() <= 0):
        raise ValueError("weights must be finite and non-negative" + (", with a positive sum." if positive_sum
                                                                       else "."))
    return w


def average_rows(weights: np.ndarray | None, n_rows: int) -> tuple[np.ndarray, float, np.ndarray]:
    """What a walk averaging over ``n_rows`` rows needs from their (checked) weights.

    Parameters
    ----------
    weights : ndarray of shape (n_rows,) or None
        Checked weights (:func:`row_weights`); None for equal weights.
    n_rows : int

    Returns
    -------
    weights : ndarray of shape (n_rows,)
        The weights as given, or all ones.
    total : float
        The divisor of the average: ``n_rows``, or the sum of the weights.
    rows : ndarray of int64
        The rows the walk visits: all of them, or those of positive weight (in order).

    Examples
    --------
    >>> average_rows(None, 3)
    (array([1., 1., 1.]), 3.0, array([0, 1, 2]))
    >>> average_rows(np.array([2.0, 0.0, 1.0]), 3)
    (array([2., 0., 1.]), 3.0, array([0, 2]))
    """
    if weights is None:
        return np.ones(n_rows), float(n_rows), np.arange(n_rows, dtype=np.int64)
    return weights, float(weights.sum()), np.flatnonzero(weights > 0).astype(np.int64)
