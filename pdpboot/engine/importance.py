"""PD-based feature importance of one curve (Greenwell, Boehmke & McCarthy 2018), on plain arrays."""

from __future__ import annotations

import numpy as np


def pd_flatness(curves, *, categorical: bool, axis: int = -1) -> np.ndarray:
    """How much a partial dependence curve varies: Greenwell et al.'s PD-based importance.

    Greenwell, Boehmke & McCarthy (2018), "A simple and effective model-based variable importance
    measure" (arXiv:1805.04755), as R's ``vip::vi_firm``: the sample standard deviation of the PD over
    the grid (``ddof=1``) for a numeric feature, the range divided by 4 for a categorical one (about the
    SD of a normal variable with that range, so both are on one scale).  A flat PD gives 0.

    Parameters
    ----------
    curves : array_like
        PD values; ``axis`` runs over the grid (any other axes: resamples, outputs).
    categorical : bool
        Whether the grid holds category levels (range / 4) or numbers (SD).
    axis : int, default -1
        The grid axis.

    Returns
    -------
    ndarray
        ``curves.shape`` without ``axis``; NaN where a curve has NaN (a failed resample).

    Examples
    --------
    >>> pd_flatness([[1.0, 2.0, 3.0]], categorical=False)
    array([1.])
    >>> pd_flatness([[1.0, 2.0, 3.0]], categorical=True)
    array([0.5])
    """
    curves = np.asarray(curves, dtype=float)
    if curves.shape[axis] < 2:
        return np.asarray(np.zeros(np.delete(curves.shape, axis % curves.ndim)))
    if categorical:
        return np.asarray(np.ptp(curves, axis=axis) / 4.0)
    return np.asarray(np.std(curves, axis=axis, ddof=1))
