"""NumPy layer: heterogeneity statistics of ICE curves (the loop keeps only these, not the curves),
the PD-based importance of a curve (:func:`pd_flatness`), and regional effects: a shallow partition of the
other features minimising the within-region heterogeneity of the mean-centred ICE curves (:func:`find_partition`).

With row weights ``w_i`` summing to one: ``ice_sd(z)`` is the weighted SD (``ddof=0``) of the ICE
values ``f_i(z)``; ``cice_sd`` the same for centred ICE ``f_i(z) - f_i(z_1)``; ``dice_sd`` for
derivative ICE (:func:`derivative_ice`; 0 for a model additive in the feature, Goldstein et al.
2015); ``heterogeneity_index`` the grid mean of ``sum_i w_i (c_i - c)**2`` for the mean-centred ICE
curves ``c_i`` and PD ``c`` (0 iff all ICE curves are parallel).
"""

from __future__ import annotations

from dataclasses import dataclass

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


# Regional effects

#: categorical splitting features with at most this many levels are searched over every level subset
MAX_EXHAUSTIVE_LEVELS = 10


@dataclass(frozen=True)
class Split:
    """Node ``node`` (heap order: root 0, children 1 and 2) sends ``x <= threshold`` (numeric) or ``x in
    levels`` (categorical) left; ``drop``: the heterogeneity it removes, as a share of the total."""

    node: int
    feature: int
    threshold: float
    levels: tuple
    drop: float

    def left(self, x: np.ndarray) -> np.ndarray:
        return np.isin(x, list(self.levels)) if self.levels else np.asarray(x, dtype=float) <= self.threshold

    def describe(self, name: str, left: bool) -> str:
        if self.levels:
            return f"{name} {'in' if left else 'not in'} {{{', '.join(map(str, self.levels))}}}"
        return f"{name} {'<=' if left else '>'} {self.threshold:.4g}"


def centred_curves(ice: np.ndarray) -> np.ndarray:
    """ICE of shape (rows, outputs, grid) as mean-centred curves, outputs side by side: (rows, outputs * grid)."""
    ice = np.asarray(ice, dtype=float)
    return (ice - ice.mean(axis=-1, keepdims=True)).reshape(ice.shape[0], -1)


def heterogeneity(C: np.ndarray, w: np.ndarray) -> float:
    """Weighted sum of squared distances of the rows of ``C`` from their weighted mean."""
    s = w @ C
    return float(w @ np.einsum("ij,ij->i", C, C) - s @ s / w.sum())


def _loss(W, S, Q, total):
    """Within-region heterogeneity of every left set (aggregates ``W``, ``S``, ``Q``) and its complement."""
    WR, SR, QR = total[0] - W, total[1] - S, total[2] - Q
    with np.errstate(divide="ignore", invalid="ignore"):
        return Q - np.einsum("kg,kg->k", S, S) / W + QR - np.einsum("kg,kg->k", SR, SR) / WR, W, WR


def best_split(C: np.ndarray, w: np.ndarray, columns: dict, min_size: float) -> tuple | None:
    """The split of the rows (curves ``C``, weights ``w``) over ``columns`` (position -> (values,
    categorical)) with the least within-region heterogeneity, both sides of weight >= ``min_size``:
    ``(loss, position, threshold, levels)``, or None."""
    q = np.einsum("ij,ij->i", C, C)
    best = None
    for pos, (x, categorical) in columns.items():
        levels, codes = np.unique(x, return_inverse=True)
        W = np.bincount(codes, w, levels.size)
        S = np.zeros((levels.size, C.shape[1]))
        np.add.at(S, codes, w[:, None] * C)
        Q = np.bincount(codes, w * q, levels.size)
        total = (W.sum(), S.sum(0), Q.sum())
        if categorical and levels.size <= MAX_EXHAUSTIVE_LEVELS:  # every subset without the last level
            member = (np.arange(1, 2 ** (levels.size - 1))[:, None] >> np.arange(levels.size)) & 1
            sets = [tuple(levels[m.astype(bool)].tolist()) for m in member]
            loss, WL, WR = _loss(member @ W, member @ S, member @ Q, total)
        else:
            order = np.arange(levels.size)
            if categorical:  # levels ordered along the first principal direction of their mean curves
                means = S / W[:, None] - total[1] / total[0]
                order = np.argsort(means @ np.linalg.svd(np.sqrt(W)[:, None] * means)[2][0], kind="stable")
            W, S, Q = W[order], S[order], Q[order]
            loss, WL, WR = _loss(np.cumsum(W)[:-1], np.cumsum(S, 0)[:-1], np.cumsum(Q)[:-1], total)
            sets = ([tuple(levels[order[: k + 1]].tolist()) for k in range(levels.size - 1)] if categorical else
                    [()] * (levels.size - 1))
        loss = np.where((WL >= min_size) & (WR >= min_size), loss, np.inf)
        k = int(np.argmin(loss)) if loss.size else 0
        if loss.size and np.isfinite(loss[k]) and (best is None or loss[k] < best[0] - 1e-12 * abs(best[0])):
            threshold = np.nan if categorical else float((levels[k] + levels[k + 1]) / 2)
            best = (float(loss[k]), pos, threshold, sets[k])
    return best


@dataclass(frozen=True)
class Partition:
    """The splits of a shallow tree and its leaves (the regions), each a list of ``(split, left)``."""

    splits: tuple[Split, ...]
    regions: tuple[tuple[tuple[Split, bool], ...], ...]
    total: float  # heterogeneity of all rows

    def assign(self, columns: dict) -> np.ndarray:
        """Region index of every row (``columns``: position -> (values of the rows, categorical))."""
        n = len(next(iter(columns.values()))[0])
        out = np.full(n, -1)
        for r, path in enumerate(self.regions):
            inside = np.ones(n, dtype=bool)
            for split, left in path:
                inside &= split.left(columns[split.feature][0]) == left
            out[inside] = r
        return out

    def labels(self, names: list[str]) -> list[str]:
        return [" & ".join(s.describe(names[s.feature], left) for s, left in path) or "all" for path in self.regions]


def find_partition(C: np.ndarray, w: np.ndarray, columns: dict, *, max_depth: int, min_size: float,
                   min_drop: float) -> Partition:
    """Grow a tree of depth <= ``max_depth`` greedily; a node is split when its best split removes at least
    ``min_drop`` of the node's heterogeneity."""
    total = heterogeneity(C, w)
    splits, regions = [], []

    def grow(rows: np.ndarray, node: int, depth: int, path: tuple):
        found = None
        parent = heterogeneity(C[rows], w[rows])
        if depth < max_depth and parent > 1e-10 * total:
            found = best_split(C[rows], w[rows], {p: (x[rows], c) for p, (x, c) in columns.items()}, min_size)
        if found is None or parent - found[0] < min_drop * parent:
            regions.append(path)
            return
        loss, pos, threshold, levels = found
        split = Split(node, pos, threshold, levels, (parent - loss) / total)
        splits.append(split)
        left = split.left(columns[pos][0][rows])
        grow(rows[left], 2 * node + 1, depth + 1, (*path, (split, True)))
        grow(rows[~left], 2 * node + 2, depth + 1, (*path, (split, False)))

    grow(np.arange(C.shape[0]), 0, 0, ())
    return Partition(tuple(splits), tuple(regions), total)


def regional_means(ice: np.ndarray, w: np.ndarray, region: np.ndarray, n_regions: int) -> np.ndarray:
    """Weighted mean of ``ice`` (rows, ...) within each region: (n_regions, ...); NaN for an empty region."""
    member = (region[None, :] == np.arange(n_regions)[:, None]) * w
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.tensordot(member, ice, axes=1) / member.sum(1).reshape(-1, *[1] * (ice.ndim - 1))
