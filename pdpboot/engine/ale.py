"""Accumulated local effects (Apley & Zhu 2020, JRSS-B) of one fitted model on plain arrays.

A numeric feature is cut at its distinct ``k/K`` quantiles (:func:`quantile_edges`); a feature
with levels uses its ordered levels (:func:`order_levels`).  Local effects (differences of the
prediction across a bin, or second differences across a 2-D cell) are averaged over the bin's rows,
accumulated from zero and centred with the bin counts, as R's ``ALEPlot`` does; the 2-D surface is
the pure second-order effect.  An empty bin borrows the rows of the nearest non-empty bin(s), so
the curve never breaks.  Predictions are stacked into blocks of ``memory_limit`` bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .brute import DEFAULT_MEMORY_LIMIT, block_rows
from .inputs import column, row_weights

KINDS = ("numeric", "levels")


def quantile_edges(values, n_bins: int) -> np.ndarray:
    """Bin edges of a numeric feature: the distinct ``k / n_bins`` quantiles (inverse ECDF) of its non-missing values.

    Fewer than ``n_bins`` bins when quantiles coincide; sorted, from the minimum to the maximum.

    Examples
    --------
    >>> quantile_edges([0.0, 1.0, 2.0, 3.0, 4.0], 2).tolist()
    [0.0, 2.0, 4.0]
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise ValueError("The feature has only missing values; ALE bin edges cannot be computed.")
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    probs = np.linspace(0.0, 1.0, int(n_bins) + 1)
    return np.unique(np.quantile(x, probs, method="inverted_cdf"))


def _ks_distances(col: np.ndarray, codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Kolmogorov-Smirnov distance between the level-wise ECDFs of a numeric column."""
    col = np.asarray(col, dtype=float)
    ok = ~np.isnan(col)
    points = np.quantile(col[ok], np.linspace(0, 1, 100)) if ok.any() else np.zeros(1)
    ecdf = np.zeros((n_levels, points.size))
    for k in range(n_levels):
        vals = np.sort(col[ok & (codes == k)])
        if vals.size:
            ecdf[k] = np.searchsorted(vals, points, side="right") / vals.size
    return np.abs(ecdf[:, None, :] - ecdf[None, :, :]).max(axis=2)


def _frequency_distances(col: np.ndarray, codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Half the L1 distance between the level-wise relative frequencies of a discrete column."""
    # factorize, not a sort: a text column with missing values mixes str and float (pandas 3 keeps NaN
    # through astype(str)), and missing is a value of its own here
    values, _ = pd.factorize(pd.Series(col, dtype=object), use_na_sentinel=False)
    table = np.zeros((n_levels, values.max() + 1))
    np.add.at(table, (codes, values), 1.0)
    totals = table.sum(axis=1, keepdims=True)
    props = np.divide(table, totals, out=np.zeros_like(table), where=totals > 0)
    return np.abs(props[:, None, :] - props[None, :, :]).sum(axis=2) / 2


def order_levels(X, feature: int, levels: Sequence, *, discrete: Sequence[bool]) -> np.ndarray:
    """Order the levels of a categorical feature by the similarity of the other features.

    Apley & Zhu's rule (Sec. 5.2): level distances summed over the other columns (Kolmogorov-Smirnov
    for numeric, half the L1 distance of frequencies for discrete ones), ordered by a 1-D
    multidimensional scaling.  ``levels`` come in their natural order (which ties keep); ``discrete[j]``:
    column ``j`` is compared by frequencies rather than ECDFs.  Returns the levels in ALE order.
    """
    levels = np.asarray(levels, dtype=object)
    n_levels = levels.size
    if n_levels <= 2:
        return np.asarray(levels)
    codes = pd.Index(levels).get_indexer(column(X, feature))
    keep = codes >= 0
    codes = codes[keep]
    dist = np.zeros((n_levels, n_levels))
    for j in range(X.shape[1]):
        if j == feature:
            continue
        col = column(X, j)[keep]
        dist += (_frequency_distances if discrete[j] else _ks_distances)(col, codes, n_levels)
    centre = np.eye(n_levels) - 1.0 / n_levels
    gram = -0.5 * centre @ (dist**2) @ centre
    eigval, eigvec = np.linalg.eigh(gram)
    coord = eigvec[:, -1] * np.sqrt(max(eigval[-1], 0.0))
    if np.dot(coord, np.arange(n_levels) - (n_levels - 1) / 2) < 0:
        coord = -coord
    order = np.argsort(np.round(coord, 12), kind="stable")
    return np.asarray(levels)[order]


def _nearest(occupied: np.ndarray, centres: np.ndarray) -> list[np.ndarray]:
    """For every bin: itself if occupied, else all occupied bins at the smallest distance."""
    full = np.flatnonzero(occupied)
    if full.size == 0:
        raise ValueError("No row with positive weight falls inside the ALE grid; check X, weights and the edges.")
    out = [np.array([s]) for s in range(occupied.size)]
    empty = np.flatnonzero(~occupied)
    for start in range(0, empty.size, 256):
        part = empty[start:start + 256]
        d = np.sqrt(((centres[part][:, None, :] - centres[full][None, :, :]) ** 2).sum(axis=2))
        close = d <= d.min(axis=1, keepdims=True) + 1e-12
        for i, s in enumerate(part):
            out[s] = full[close[i]]
    return out


class _Feature:
    """Where each row sits on one feature's grid and which steps (bins) it belongs to."""

    def __init__(self, values: np.ndarray, grid: np.ndarray, kind: str):
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r} is not one of {list(KINDS)}.")
        self.kind = kind
        self.grid = np.asarray(grid)
        if kind == "numeric":
            edges = np.asarray(grid, dtype=float)
            if edges.ndim != 1 or np.any(np.diff(edges) <= 0):
                raise ValueError("ALE bin edges must be a strictly increasing 1-D array.")
            x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
            inside = (x >= edges[0]) & (x <= edges[-1])
            self.position = np.where(inside, np.clip(np.searchsorted(edges, x, "left") - 1, 0, None), -1)
            self.n_steps = edges.size - 1
        else:
            self.position = pd.Index(list(self.grid)).get_indexer(pd.Series(values).tolist())
            self.n_steps = self.grid.size - 1
        self.position = np.asarray(self.position, dtype=int)

    def memberships(self) -> tuple[np.ndarray, np.ndarray]:
        """(row, step) pairs: a numeric row is in its bin; a level row in the steps on both sides."""
        rows = np.flatnonzero(self.position >= 0)
        pos = self.position[rows]
        if self.kind == "numeric":
            return rows, pos
        down = pos >= 1
        up = pos <= self.n_steps - 1
        return np.concatenate([rows[down], rows[up]]), np.concatenate([pos[down] - 1, pos[up]])

    def point_weights(self, weights: np.ndarray) -> np.ndarray:
        """Weight of each grid point (levels) or bin (numeric) for the centring."""
        size = self.n_steps if self.kind == "numeric" else self.grid.size
        ok = self.position >= 0
        return np.bincount(self.position[ok], weights=weights[ok], minlength=size)

    def centre(self, g: np.ndarray, point_w: np.ndarray) -> np.ndarray:
        """Subtract the data-weighted mean along axis 0 (bin midpoints or levels)."""
        if self.kind == "numeric":
            mid = (g[:-1] + g[1:]) / 2
            return g - np.tensordot(point_w, mid, axes=(0, 0)) / point_w.sum()
        return g - np.tensordot(point_w, g, axes=(0, 0)) / point_w.sum()


def _design(X, rows: np.ndarray, feature_idx: Sequence[int], new_columns: Sequence[np.ndarray]):
    """Rows of X with the feature columns replaced (keeps DataFrame dtypes where possible)."""
    if isinstance(X, pd.DataFrame):
        block = X.iloc[rows].reset_index(drop=True)
        for j, values in zip(feature_idx, new_columns):
            dtype = X.dtypes.iloc[j]
            if isinstance(dtype, pd.CategoricalDtype):
                values = pd.Categorical(values, dtype=dtype)
            elif isinstance(dtype, pd.api.extensions.ExtensionDtype):
                values = pd.array(values, dtype=dtype)
            elif dtype.kind in "iu" and np.asarray(values).dtype.kind == "f":
                values = np.asarray(values, dtype=float)  # keep float edges; an int column would round them
            block.isetitem(j, values)
        return block
    X = np.asarray(X)
    block = X[rows]
    if block.dtype.kind in "iub" and any(np.asarray(v).dtype.kind == "f" for v in new_columns):
        block = block.astype(float)
    for j, values in zip(feature_idx, new_columns):
        block[:, j] = values
    return block


def ale_arrays(
    predict: Callable[[object], np.ndarray],
    X,
    feature_idx: Sequence[int],
    grids: Sequence[np.ndarray],
    *,
    kinds: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_outputs: int = 1,
) -> np.ndarray:
    """Centred ALE of one fitted model: 1-D (numeric or levels) or 2-D (numeric pair).

    Parameters
    ----------
    predict : callable
        ``predict(X_block) -> ndarray (m, n_outputs)``.
    grids : sequence of 1-D arrays
        Per feature of ``feature_idx``: bin edges (strictly increasing) or ordered levels.
    kinds : sequence of {"numeric", "levels"}, optional
        Per feature; default all numeric.  2-D needs two numeric features.
    weights, memory_limit, n_outputs
        As for :func:`.brute.brute_partial_dependence` (zero-weight rows are left out).

    Returns
    -------
    ndarray of shape (n_outputs, *grid_shape)
        The centred ALE at the grid points (edges or levels).
    """
    feature_idx = [int(j) for j in feature_idx]
    kinds = ["numeric"] * len(feature_idx) if kinds is None else list(kinds)
    if len(feature_idx) not in (1, 2) or len(grids) != len(feature_idx) or len(kinds) != len(feature_idx):
        raise ValueError("ale_arrays takes one or two features, with one grid and one kind each.")
    if len(feature_idx) == 2 and kinds != ["numeric", "numeric"]:
        raise ValueError("2-D ALE is defined for two numeric features; a categorical feature can only be 1-D.")
    n_rows = X.shape[0]
    w = row_weights(weights, n_rows, positive_sum=False)
    feats = [_Feature(column(X, j), g, k) for j, g, k in zip(feature_idx, grids, kinds)]
    for f in feats:
        f.position[w <= 0] = -1
    grid_shape = tuple(f.grid.size for f in feats)
    if any(f.n_steps == 0 for f in feats):
        return np.zeros((n_outputs, *grid_shape))  # a single edge or level: nothing to accumulate
    if len(feats) == 1:
        return _ale_1d(predict, X, feature_idx[0], feats[0], w, memory_limit, n_outputs)
    return _ale_2d(predict, X, feature_idx, feats, w, memory_limit, n_outputs)


def _step_effects(predict, X, feature_idx, corner_values, signs, pair_row, pair_step, pair_w,
                  n_steps, memory_limit, n_outputs) -> np.ndarray:
    """Weighted mean over each step's (row, step) pairs of the signed sum over corners: (n_outputs, n_steps)."""
    n_pairs = pair_row.size
    n_corners = len(signs)
    total = n_pairs * n_corners
    table_like = X.iloc[:1] if isinstance(X, pd.DataFrame) else np.asarray(X)[:1]
    chunk = block_rows(table_like, n_outputs, memory_limit)
    contrib = None
    start = 0
    while start < total:
        stop = min(total, start + chunk)
        corner, pair = np.divmod(np.arange(start, stop), n_pairs)
        steps = pair_step[pair]
        columns = [np.empty(stop - start, dtype=np.asarray(v).dtype) for v in corner_values[0]]
        for c in np.unique(corner):
            sel = corner == c
            for d, values in enumerate(corner_values[c]):
                columns[d][sel] = np.asarray(values)[steps[sel]]
        pred = np.asarray(predict(_design(X, pair_row[pair], feature_idx, columns)), dtype=float)
        pred = pred.reshape(pred.shape[0], -1)
        if contrib is None:
            contrib = np.zeros((n_pairs, pred.shape[1]))
            chunk = block_rows(table_like, pred.shape[1], memory_limit)
        for c in np.unique(corner):  # within one corner every pair appears at most once
            sel = corner == c
            contrib[pair[sel]] += signs[c] * pred[sel]
        start = stop
    sums = np.stack([np.bincount(pair_step, weights=pair_w * contrib[:, k], minlength=n_steps)
                     for k in range(contrib.shape[1])])
    totals = np.bincount(pair_step, weights=pair_w, minlength=n_steps)
    return sums / totals


def _borrowed_pairs(rows, steps, w, occupied, centres):
    """(row, step, weight) pairs where each empty step takes the pairs of its nearest occupied steps."""
    nearest = _nearest(occupied, centres)
    by_step = {}
    order = np.argsort(steps, kind="stable")
    bounds = np.searchsorted(steps[order], np.arange(occupied.size + 1))
    for s in np.flatnonzero(occupied):
        by_step[s] = order[bounds[s]:bounds[s + 1]]
    out_rows, out_steps, out_w = [rows], [steps], [w]
    for s in np.flatnonzero(~occupied):
        members = np.concatenate([by_step[t] for t in nearest[s]])
        out_rows.append(rows[members])
        out_steps.append(np.full(members.size, s))
        out_w.append(w[members])
    return np.concatenate(out_rows), np.concatenate(out_steps), np.concatenate(out_w)


def _ale_1d(predict, X, j, feat: _Feature, w, memory_limit, n_outputs) -> np.ndarray:
    rows, steps = feat.memberships()
    pw = w[rows]
    occupied = np.bincount(steps, weights=pw, minlength=feat.n_steps) > 0
    centres = np.arange(feat.n_steps, dtype=float)[:, None]
    rows, steps, pw = _borrowed_pairs(rows, steps, pw, occupied, centres)
    grid = feat.grid
    corners = [[grid[:-1]], [grid[1:]]]
    effects = _step_effects(predict, X, [j], corners, [-1.0, 1.0], rows, steps, pw, feat.n_steps,
                            memory_limit, n_outputs)
    g = np.concatenate([np.zeros((effects.shape[0], 1)), np.cumsum(effects, axis=1)], axis=1)
    return feat.centre(g.T, feat.point_weights(w)).T


def _spread_weights(counts: np.ndarray) -> np.ndarray:
    """Cell counts per bin of the first axis; an empty bin takes its nearest non-empty bins' counts."""
    occupied = counts.sum(axis=1) > 0
    nearest = _nearest(occupied, np.arange(counts.shape[0], dtype=float)[:, None])
    return np.stack([counts[idx].sum(axis=0) for idx in nearest])


def _ale_2d(predict, X, feature_idx, feats, w, memory_limit, n_outputs) -> np.ndarray:
    f1, f2 = feats
    k1, k2 = f1.n_steps, f2.n_steps
    rows = np.flatnonzero((f1.position >= 0) & (f2.position >= 0))
    steps = f1.position[rows] * k2 + f2.position[rows]
    pw = w[rows]
    counts = np.bincount(steps, weights=pw, minlength=k1 * k2)
    a, b = np.divmod(np.arange(k1 * k2), k2)
    centres = np.column_stack([(a + 0.5) / k1, (b + 0.5) / k2])
    rows, steps, pw = _borrowed_pairs(rows, steps, pw, counts > 0, centres)
    e1, e2 = f1.grid, f2.grid
    corners, signs = [], []
    for da in (0, 1):
        for db in (0, 1):
            corners.append([e1[a + da], e2[b + db]])
            signs.append(1.0 if da == db else -1.0)
    effects = _step_effects(predict, X, feature_idx, corners, signs, rows, steps, pw, k1 * k2,
                            memory_limit, n_outputs)
    n_out = effects.shape[0]
    delta = effects.reshape(n_out, k1, k2)
    G = np.zeros((n_out, k1 + 1, k2 + 1))
    G[:, 1:, 1:] = np.cumsum(np.cumsum(delta, axis=1), axis=2)
    n = counts.reshape(k1, k2)
    # 1-D effects of the accumulated surface (differences averaged over each cell's two edges)
    n1 = _spread_weights(n)
    n2 = _spread_weights(n.T).T
    d1 = G[:, 1:, :] - G[:, :-1, :]
    avg1 = ((d1[:, :, :-1] + d1[:, :, 1:]) / 2 * n1).sum(axis=2) / n1.sum(axis=1)
    d2 = G[:, :, 1:] - G[:, :, :-1]
    avg2 = ((d2[:, :-1, :] + d2[:, 1:, :]) / 2 * n2).sum(axis=1) / n2.sum(axis=0)
    main1 = np.concatenate([np.zeros((n_out, 1)), np.cumsum(avg1, axis=1)], axis=1)
    main2 = np.concatenate([np.zeros((n_out, 1)), np.cumsum(avg2, axis=1)], axis=1)
    G = G - main1[:, :, None] - main2[:, None, :]
    cell_mean = (G[:, :-1, :-1] + G[:, 1:, :-1] + G[:, :-1, 1:] + G[:, 1:, 1:]) / 4
    return G - ((cell_mean * n).sum(axis=(1, 2)) / n.sum())[:, None, None]
