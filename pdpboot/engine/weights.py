"""Row weights of the NumPy layer: the one check every engine function applies to ``weights``.

The public functions validate the user's ``sample_weight`` first
(:func:`pdpboot._validate.check_sample_weight`); the engine's functions take bootstrap
multiplicities times those weights, and check them here so that each engine refuses the same inputs
with the same message.
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_weights"]


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
