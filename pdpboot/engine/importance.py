"""PD-based feature importance of one curve (Greenwell, Boehmke & McCarthy 2018), on plain arrays."""

from __future__ import annotations

import numpy as np


def pd_flatness(curves, *, categorical: bool, axis: int = -1) -> np.ndarray:
    """How much a PD curve varies (Greenwell, Boehmke & McCarthy 2018, as R's ``vip::vi_firm``).

    The SD (``ddof=1``) over the grid for a numeric feature, the range / 4 for a categorical one;
    ``curves.shape`` without ``axis``, NaN where a curve has NaN.

    >>> pd_flatness([[1.0, 2.0, 3.0]], categorical=False), pd_flatness([[1.0, 2.0, 3.0]], categorical=True)
    (array([1.]), array([0.5]))
    """
    curves = np.asarray(curves, dtype=float)
    if curves.shape[axis] < 2:
        return np.asarray(np.zeros(np.delete(curves.shape, axis % curves.ndim)))
    if categorical:
        return np.asarray(np.ptp(curves, axis=axis) / 4.0)
    return np.asarray(np.std(curves, axis=axis, ddof=1))
