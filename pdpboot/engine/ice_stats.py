"""NumPy layer: heterogeneity statistics of ICE curves (the loop keeps only these, not the curves)
and the PD-based importance of a curve (:func:`pd_flatness`).

With row weights ``w_i`` summing to one: ``ice_sd(z)`` is the weighted SD (``ddof=0``) of the ICE
values ``f_i(z)``; ``cice_sd`` the same for centred ICE ``f_i(z) - f_i(z_1)``; ``dice_sd`` for
derivative ICE (:func:`derivative_ice`; 0 for a model additive in the feature, Goldstein et al.
2015); ``heterogeneity_index`` the grid mean of ``sum_i w_i (c_i - c)**2`` for the mean-centred ICE
curves ``c_i`` and PD ``c`` (0 iff all ICE curves are parallel).
"""

from __future__ import annotations

import numpy as np

from .inputs import normalised_weights

STATISTICS = ("ice_sd", "cice_sd", "dice_sd", "heterogeneity_index")


def _weighted_mean(values: np.ndarray, w: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    moved = np.moveaxis(values, axis, -1)
    mean = moved @ w
    return np.expand_dims(mean, axis) if keepdims else mean


def weighted_sd(values, weights=None, *, axis: int = 0) -> np.ndarray:
    """Weighted population standard deviation (``ddof=0``) along ``axis``; NaN where a value is NaN.

    >>> float(weighted_sd([0.0, 2.0]))
    1.0
    """
    values = np.asarray(values, dtype=float)
    axis = axis % values.ndim
    w = normalised_weights(weights, values.shape[axis], what="instance")
    mean = _weighted_mean(values, w, axis, keepdims=True)
    return np.sqrt(_weighted_mean((values - mean) ** 2, w, axis))


def centered_ice(ice, *, grid_axis: int = -1) -> np.ndarray:
    """Centred ICE (c-ICE): each curve minus its value at the first grid value."""
    ice = np.asarray(ice, dtype=float)
    anchor = np.take(ice, [0], axis=grid_axis)
    return ice - anchor


def _check_grid(grid, size: int, categorical: bool) -> np.ndarray | None:
    grid = np.asarray(grid)
    if grid.ndim != 1 or grid.size != size:
        raise ValueError(f"grid must be 1-D with one value per grid point ({size}), got shape {grid.shape}.")
    if categorical:
        return None
    if grid.dtype.kind not in "iuf":
        raise TypeError(
            f"A numeric feature needs a numeric grid, got dtype {grid.dtype}; "
            "pass categorical=True for category levels."
        )
    grid = grid.astype(float)
    if size > 1 and not np.all(np.diff(grid) > 0):
        raise ValueError("The grid of a numeric feature must be strictly increasing for finite differences.")
    return grid


def derivative_ice(ice, grid, *, grid_axis: int = -1, categorical: bool = False) -> np.ndarray:
    """Derivative ICE (d-ICE) on the grid (axis ``grid_axis``) of the ICE curves, shape of ``ice``.

    Numeric: ``numpy.gradient`` with the grid as coordinate (central differences inside, one-sided
    at the ends).  ``categorical`` levels: the step from the previous level, 0 at the first.
    """
    ice = np.asarray(ice, dtype=float)
    axis = grid_axis % ice.ndim
    size = ice.shape[axis]
    coordinate = _check_grid(grid, size, categorical)
    if categorical:
        out = np.zeros_like(ice)
        steps = np.diff(ice, axis=axis)
        index = [slice(None)] * ice.ndim
        index[axis] = slice(1, None)
        out[tuple(index)] = steps
        return out
    if size < 2:
        return np.zeros_like(ice)
    return np.gradient(ice, coordinate, axis=axis, edge_order=1)


def heterogeneity_index(ice, weights=None, *, instance_axis: int = 0, grid_axis: int = -1) -> np.ndarray:
    """Grid mean of the weighted mean squared distance of mean-centred ICE to mean-centred PD."""
    ice = np.asarray(ice, dtype=float)
    instance_axis = instance_axis % ice.ndim
    grid_axis = grid_axis % ice.ndim
    if instance_axis == grid_axis:
        raise ValueError("instance_axis and grid_axis must differ.")
    w = normalised_weights(weights, ice.shape[instance_axis], what="instance")
    centred = ice - ice.mean(axis=grid_axis, keepdims=True)
    pd_centred = _weighted_mean(centred, w, instance_axis, keepdims=True)
    spread = _weighted_mean((centred - pd_centred) ** 2, w, instance_axis, keepdims=True)
    return np.squeeze(spread.mean(axis=grid_axis, keepdims=True), axis=(instance_axis, grid_axis))


def ice_statistics(
    ice,
    grid,
    *,
    weights=None,
    categorical: bool = False,
    instance_axis: int = 0,
    grid_axis: int = -1,
) -> dict[str, np.ndarray]:
    """All heterogeneity statistics of the ICE curves of one feature (e.g. (n_instances, n_outputs, n_grid)).

    Returns ``ice_sd``, ``cice_sd``, ``dice_sd`` (``ice.shape`` without ``instance_axis``) and
    ``heterogeneity_index`` (without the instance and grid axes); ``weights`` default to uniform.
    """
    ice = np.asarray(ice, dtype=float)
    if ice.ndim < 2:
        raise ValueError(f"ice needs an instance axis and a grid axis, got shape {ice.shape}.")
    d_ice = derivative_ice(ice, grid, grid_axis=grid_axis, categorical=categorical)
    return {
        "ice_sd": weighted_sd(ice, weights, axis=instance_axis),
        "cice_sd": weighted_sd(centered_ice(ice, grid_axis=grid_axis), weights, axis=instance_axis),
        "dice_sd": weighted_sd(d_ice, weights, axis=instance_axis),
        "heterogeneity_index": heterogeneity_index(
            ice, weights, instance_axis=instance_axis, grid_axis=grid_axis
        ),
    }


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
