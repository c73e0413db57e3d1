"""Row weights of the NumPy layer: the one check every engine function applies to ``weights``."""

from __future__ import annotations

import numpy as np

__all__ = ["average_rows", "row_weights"]


def row_weights(weights, n_rows: int, *, what: str = "row", positive_sum: bool = True) -> np.ndarray:
    """``weights`` as float64 after checking them (all ones when None).

    Parameters
    ----------
    weights : array-like of shape (n_rows,) or None
        The weights.
    n_rows : int
        Rows expected.
    what : str
        What one weight belongs to, for the message.
    positive_sum : bool
        Also refuse weights that are all zero.

    Returns
    -------
    ndarray of shape (n_rows,)
        The checked weights.

    Examples
    --------
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
    """(weights or all ones, divisor of the average, rows of positive weight) for a walk over ``n_rows`` rows.

    >>> average_rows(np.array([2.0, 0.0, 1.0]), 3)
    (array([2., 0., 1.]), 3.0, array([0, 2]))
    """
    if weights is None:
        return np.ones(n_rows), float(n_rows), np.arange(n_rows, dtype=np.int64)
    return weights, float(weights.sum()), np.flatnonzero(weights > 0).astype(np.int64)
