"""The two walks of the exact tree engine: grid boxes of the leaves, and row sets of the nodes.

Private helper of :mod:`pdpboot.engine.tree`; all functions take a
:class:`pdpboot.engine._tree_model.TreeModel` (one node table for the whole ensemble).

Grid side (:func:`grid_boxes`): top-down over the node table, each node gets the set
of grid points of the features of interest ("S") that can reach it.  A numeric
S-feature without NaN grid values uses the sorted grid, where that set is an interval
``[lo, hi)``; a categorical S-feature (or a grid holding NaN) keeps a boolean mask.
Each leaf's set is written as a few signed "transitions" (``+1`` at ``lo``, ``-1``
at ``hi``; for a mask, its changes), so that a cumulative sum along each grid axis
turns a sum of transitions back into the sum of the leaves' indicator boxes.

Row side (:func:`walk_rows`): the background rows are packed as bits (row ``i`` of
a block is bit ``i % 64`` of word ``i // 64``).  Level by level, over all trees at
once, each visited node holds the set of rows satisfying the complement ("C") splits
on its path.  At an S-split both children inherit the parent's set (only the grid box
narrows); at a C-split the set is AND-ed with the node's "goes left" row set, which is
read from a prefix table (rows sorted by the feature; the rows with ``x <= t`` are a
prefix of that order) built by one cumulative OR per feature, or, for a categorical
node, from the node's category table.  Nodes with an empty row set or an empty grid
box are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ._tree_model import MISSING_CODE, TreeModel

_U64 = np.dtype("<u8")


# --------------------------------------------------------------------------- grid side
@dataclass(frozen=True)
class GridBoxes:
    """Grid boxes of the leaves, as transitions in the encoded grid.

    ``alive`` (n_nodes,) marks nodes whose box meets the grid.  Leaf ``leaves[j]`` has
    transitions ``pos[ptr[j]:ptr[j+1]]`` (flat index into the grid of shape ``shape``,
    in the sorted order of each axis) with signs ``coef``.  ``local`` maps a node id
    to ``j`` (-1 if not a live leaf).  ``order[d]`` sorts axis ``d``.
    """

    alive: np.ndarray
    leaves: np.ndarray
    local: np.ndarray
    ptr: np.ndarray
    pos: np.ndarray
    coef: np.ndarray
    shape: tuple[int, ...]
    order: list[np.ndarray]


def node_levels(model: TreeModel) -> list[np.ndarray]:
    """Node ids by depth (all trees at once)."""
    levels, nodes = [], model.roots
    while nodes.size:
        levels.append(nodes)
        inner = nodes[model.feature[nodes] >= 0]
        nodes = np.concatenate([model.left[inner], model.right[inner]])
    return levels


def _category_codes(values: np.ndarray) -> np.ndarray:
    """Float category codes -> int column of ``cat_left`` (missing/out of range -> 256)."""
    ok = ~np.isnan(values) & (values >= 0) & (values < MISSING_CODE)
    return np.where(ok, np.where(ok, values, 0).astype(np.intp), MISSING_CODE)


def grid_goes_left(model: TreeModel, nodes: np.ndarray, g: np.ndarray, categorical: bool) -> np.ndarray:
    """(len(nodes), len(g)) bool: which grid values each split node sends left."""
    if categorical:
        return model.cat_left[model.cat_row[nodes][:, None], _category_codes(g)[None, :]]
    g64 = g.astype(np.float64)
    with np.errstate(invalid="ignore"):
        le = g64[None, :] <= model.threshold[nodes][:, None]
    return le | (np.isnan(g64)[None, :] & model.missing_left[nodes][:, None])


@dataclass
class _Axis:
    """Grid state of one feature of interest during the top-down pass.

    ``interval`` axes keep ``lo``/``hi`` (n_nodes,) into the sorted grid ``values``;
    mask axes keep ``mask`` (n_nodes, n_grid) over the grid in the caller's order.
    ``order`` maps the axis' positions to the caller's grid indices.  A feature spread
    over several model columns (one-hot) is a mask axis whose ``values`` has one
    column per model column in ``cols``.
    """

    cols: tuple
    values: np.ndarray
    order: np.ndarray
    categorical: bool = False
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    mask: np.ndarray | None = None

    def nonempty(self) -> np.ndarray:
        return self.lo < self.hi if self.mask is None else self.mask.any(axis=1)


def _axis(model: TreeModel, col, g: np.ndarray) -> _Axis:
    n_nodes = len(model.feature)
    if np.ndim(col):  # several model columns: grid points are rows of g (n_grid, len(col))
        cols = tuple(int(c) for c in col)
        mask = np.zeros((n_nodes, len(g)), dtype=bool)
        mask[model.roots] = True
        return _Axis(cols, np.asarray(g, dtype=np.float64), np.arange(len(g)), False, mask=mask)
    categorical = bool(model.categorical[col])
    if categorical or np.isnan(g).any():
        mask = np.zeros((n_nodes, len(g)), dtype=bool)
        mask[model.roots] = True
        return _Axis((col,), g, np.arange(len(g)), categorical, mask=mask)
    order = np.argsort(g, kind="stable")
    lo, hi = np.zeros(n_nodes, dtype=np.intp), np.full(n_nodes, len(g), dtype=np.intp)
    return _Axis((col,), g[order].astype(np.float64), order, lo=lo, hi=hi)


def _axis_goes_left(model: TreeModel, ax: _Axis, nodes: np.ndarray) -> np.ndarray:
    if ax.values.ndim == 1:
        return grid_goes_left(model, nodes, ax.values, ax.categorical)
    pos = {c: k for k, c in enumerate(ax.cols)}
    which = np.array([pos[c] for c in model.feature[nodes].tolist()], dtype=np.intp)
    g = ax.values[:, which].T  # (nodes, n_grid)
    with np.errstate(invalid="ignore"):
        le = g <= model.threshold[nodes][:, None]
    return le | (np.isnan(g) & model.missing_left[nodes][:, None])


def grid_boxes(model: TreeModel, s_cols: list, grids: list[np.ndarray], levels) -> GridBoxes:
    """Propagate the S-grid boxes top-down and encode the leaves' boxes as transitions.

    ``s_cols[d]`` is a model column, or a tuple of model columns whose grid ``grids[d]``
    has shape (n_grid, len(columns)).
    """
    axes = [_axis(model, col, g) for col, g in zip(s_cols, grids)]
    for nodes in levels:
        inner = nodes[model.feature[nodes] >= 0]
        left, right = model.left[inner], model.right[inner]
        for ax in axes:
            on = np.isin(model.feature[inner], ax.cols)
            split_node = inner[on]
            if ax.mask is None:
                for bound in (ax.lo, ax.hi):
                    bound[left] = bound[inner]
                    bound[right] = bound[inner]
                split = np.searchsorted(ax.values, model.threshold[split_node], side="right")
                ax.hi[left[on]] = np.minimum(ax.hi[split_node], split)
                ax.lo[right[on]] = np.maximum(ax.lo[split_node], split)
            else:
                ax.mask[left] = ax.mask[inner]
                ax.mask[right] = ax.mask[inner]
                goes_left = _axis_goes_left(model, ax, split_node)
                ax.mask[left[on]] &= goes_left
                ax.mask[right[on]] &= ~goes_left
    alive = np.logical_and.reduce([ax.nonempty() for ax in axes])
    leaves = np.flatnonzero(alive & (model.feature < 0))
    shape = tuple(len(ax.values) for ax in axes)
    ptr, pos, coef = _combine([_transitions(ax, leaves) for ax in axes], shape, len(leaves))
    local = np.full(len(model.feature), -1, dtype=np.intp)
    local[leaves] = np.arange(len(leaves))
    return GridBoxes(alive, leaves, local, ptr, pos, coef, shape, [ax.order for ax in axes])


def _transitions(ax: _Axis, leaves: np.ndarray):
    """(leaf index, position, sign) of the transitions of each leaf along one axis."""
    if ax.mask is None:
        lo, hi = ax.lo[leaves], ax.hi[leaves]
        closed = np.flatnonzero(hi < len(ax.values))
        idx = np.concatenate([np.arange(len(leaves)), closed])
        pos = np.concatenate([lo, hi[closed]])
        coef = np.concatenate([np.ones(len(leaves)), -np.ones(len(closed))])
    else:
        step = np.diff(ax.mask[leaves].astype(np.int8), axis=1, prepend=0)
        idx, pos = np.nonzero(step)
        coef = step[idx, pos].astype(np.float64)
    order = np.argsort(idx, kind="stable")
    return idx[order], pos[order], coef[order]


def _combine(per_dim, shape: tuple[int, ...], n_leaves: int):
    """Outer product of the per-axis transitions of each leaf, as a CSR over leaves."""
    idx, pos, coef = per_dim[0]
    if len(per_dim) == 2:
        idx2, pos2, coef2 = per_dim[1]
        ptr2 = np.concatenate([[0], np.cumsum(np.bincount(idx2, minlength=n_leaves))])
        reps = (ptr2[idx + 1] - ptr2[idx]).astype(np.intp)
        first = np.repeat(np.arange(len(idx)), reps)
        second = np.repeat(ptr2[idx], reps) + _ranges(reps)
        idx = idx[first]
        pos = pos[first] * shape[1] + pos2[second]
        coef = coef[first] * coef2[second]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=n_leaves))]).astype(np.intp)
    return ptr, pos.astype(np.intp), coef


def _ranges(counts: np.ndarray) -> np.ndarray:
    """concatenate([arange(c) for c in counts])."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


def decode_boxes(enc: np.ndarray, boxes: GridBoxes) -> np.ndarray:
    """Cumulative sums along the grid axes (the last ones; overwrites ``enc``), in the caller's grid order."""
    lead = enc.shape[:-1]
    out = enc.reshape(lead + boxes.shape)
    for d, order in enumerate(boxes.order):
        axis = len(lead) + d
        np.cumsum(out, axis=axis, out=out)
        if np.any(order != np.arange(len(order))):
            out = np.take(out, np.argsort(order), axis=axis)
    return out


def _raw_outputs(model: TreeModel, xa: np.ndarray) -> np.ndarray:
    """(n_rows, n_raw) sum of the leaf values each row reaches (no offset); plain descent."""
    n_rows = len(xa)
    node = np.repeat(model.roots[None, :], n_rows, axis=0).ravel()
    row = np.repeat(np.arange(n_rows), len(model.roots))
    while True:
        inner = model.feature[node] >= 0
        if not inner.any():
            break
        nd, rw = node[inner], row[inner]
        f = model.feature[nd]
        x = xa[rw, f].astype(np.float64)
        cat = model.cat_row[nd] >= 0
        with np.errstate(invalid="ignore"):
            left = np.where(np.isnan(x), model.missing_left[nd], x <= model.threshold[nd])
        if cat.any():
            left[cat] = model.cat_left[model.cat_row[nd[cat]], _category_codes(x[cat])]
        node[inner] = np.where(left, model.left[nd], model.right[nd])
    out = np.zeros((n_rows, model.value.shape[1]))
    np.add.at(out, row, model.value[node])
    return out


def finish_external(model: TreeModel, X, xa: np.ndarray, sums=None) -> TreeModel:
    """Categories of the input columns and the constant raw offset (base score / init score).

    The offset is the one the model's dump defines where the reader knows it (LightGBM:
    ``reader.dump_offset()``), else the model's own margin minus the sum of the leaves the engine
    finds (``sums(rows)``, by default the NumPy descent :func:`_raw_outputs`), on a few background
    rows (every base-score convention is thereby matched).  Either way the self-check
    (:mod:`._tree_check`) compares the whole reading, offset included, with the model's response.
    """
    reader = model.source
    categories = reader.categories if any(c is not None for c in reader.categories) else None
    if hasattr(reader, "dump_offset"):
        return replace(model, categories=categories, offset=np.asarray(reader.dump_offset(), dtype=np.float64))
    k = min(len(xa), 16)
    probe = X.iloc[:k] if hasattr(X, "iloc") else np.asarray(X)[:k]
    margin = reader.margin(probe)
    own = _raw_outputs(model, xa[:k]) if sums is None else sums(xa[:k])
    offset = np.median(margin - own, axis=0)
    return replace(model, categories=categories, offset=offset)


# --------------------------------------------------------------------------- row side
def _pack(mask: np.ndarray, n_words: int) -> np.ndarray:
    """(m, B) bool -> (m, n_words) little-endian uint64 bitsets."""
    m, b = mask.shape
    padded = np.zeros((m, n_words * 64), dtype=bool)
    padded[:, :b] = mask
    return np.packbits(padded, axis=1, bitorder="little").view(_U64)


def _go_left_table(model: TreeModel, xb: np.ndarray, c_nodes: dict, n_words: int):
    """Row sets each C-split node sends left, for one block of rows.

    Returns ``(table, row)``: node ``v`` sends the rows in ``table[row[v]]`` left.
    Numeric nodes read a prefix table of the rows sorted by the node's feature; a NaN
    row goes the node's missing way; categorical nodes read their category table.
    """
    b = xb.shape[0]
    row = np.full(len(model.feature), -1, dtype=np.intp)
    tables, base = [], 0
    for f, nodes in c_nodes["numeric"].items():
        x = xb[:, f]
        nan = np.isnan(x)
        order = np.argsort(x, kind="stable")[: b - int(nan.sum())]
        rank = np.searchsorted(x[order].astype(np.float64), model.threshold[nodes], side="right")
        ranks, rank_row = np.unique(rank, return_inverse=True)
        # prefix[k] = rows at sorted positions < ranks[k]: OR the rows into their segment, accumulate
        seg = np.searchsorted(ranks, np.arange(len(order)), side="right")
        used = seg < len(ranks)
        prefix = np.zeros((len(ranks), n_words), dtype=_U64)
        rows = order[used]
        bits = np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64))
        np.bitwise_or.at(prefix, (seg[used], rows >> 6), bits)
        prefix = np.bitwise_or.accumulate(prefix, axis=0)
        if nan.any():  # NaN rows go left at nodes whose missing values go left
            key = rank_row.reshape(-1) * 2 + model.missing_left[nodes]
            uniq, inv = np.unique(key, return_inverse=True)
            prefix = prefix[uniq >> 1]
            prefix[(uniq & 1) == 1] |= _pack(nan[None, :], n_words)[0]
            rank_row = inv
        tables.append(prefix)
        row[nodes] = base + rank_row.reshape(-1)
        base += len(prefix)
    cat_nodes = c_nodes["categorical"]
    if cat_nodes.size:
        codes = _category_codes(xb[:, model.feature[cat_nodes]].T.astype(np.float64))
        goes = model.cat_left[model.cat_row[cat_nodes][:, None], codes]
        tables.append(_pack(goes, n_words))
        row[cat_nodes] = base + np.arange(len(cat_nodes))
    table = np.concatenate(tables) if tables else np.zeros((0, n_words), dtype=_U64)
    return table, row


def complement_split_nodes(model: TreeModel, s_cols: list[int], alive: np.ndarray) -> dict:
    """Live internal nodes splitting on a complement feature, grouped for the prefix tables."""
    f = model.feature
    c = alive & (f >= 0) & ~np.isin(f, s_cols)
    cat = c & (model.cat_row >= 0)
    num = np.flatnonzero(c & ~cat)
    order = np.argsort(f[num], kind="stable")
    num = num[order]
    feats, starts = np.unique(f[num], return_index=True)
    groups = np.split(num, starts[1:])
    return {"numeric": dict(zip(feats.tolist(), groups)), "categorical": np.flatnonzero(cat)}


def walk_rows(model: TreeModel, xb: np.ndarray, s_cols: list[int], alive: np.ndarray, c_nodes: dict):
    """Yield ``(leaf node ids, row bitsets)`` level by level for one block of rows.

    A child's row set is its parent's AND one row of ``masks``: the node's "goes left"
    set for a left child, its complement for a right child, all rows below an S-split.
    """
    b = xb.shape[0]
    n_words = (b + 63) // 64
    table, row = _go_left_table(model, xb, c_nodes, n_words)
    full = _pack(np.ones((1, b), dtype=bool), n_words)
    masks = np.concatenate([table, table ^ full, full])
    s_node = np.isin(model.feature, s_cols)
    mask_left = np.where(s_node, len(masks) - 1, row)
    mask_right = np.where(s_node, len(masks) - 1, row + len(table))
    nodes = model.roots[alive[model.roots]]
    sets = np.repeat(full, len(nodes), axis=0)
    while nodes.size:
        leaf = model.feature[nodes] < 0
        if leaf.any():
            yield nodes[leaf], sets[leaf]
        parent = np.flatnonzero(~leaf)
        inner = nodes[parent]
        children = np.concatenate([model.left[inner], model.right[inner]])
        which = np.concatenate([mask_left[inner], mask_right[inner]])
        parent = np.concatenate([parent, parent])
        keep = alive[children]
        if not keep.all():
            children, which, parent = children[keep], which[keep], parent[keep]
        sets = sets[parent]
        sets &= masks[which]
        nonempty = sets.any(axis=1)
        nodes = children
        if not nonempty.all():
            nodes, sets = nodes[nonempty], sets[nonempty]


# --------------------------------------------------------------------------- row weights
_BYTE_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)


def popcount(sets: np.ndarray) -> np.ndarray:
    """Number of rows in each (m, n_words) bitset, as int64 (m,)."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(sets).sum(axis=1, dtype=np.int64)
    return _BYTE_POPCOUNT[sets.view(np.uint8)].sum(axis=1, dtype=np.int64)


def row_counter(weights: np.ndarray | None, n_words: int):
    """Function mapping (m, n_words) row bitsets to the (weighted) number of rows in each set.

    Integer weights (e.g. bootstrap multiplicities) are split into bit planes and counted
    with popcounts; other weights use a table of the weight sum of every byte value.
    """
    if weights is None:
        return lambda sets: popcount(sets).astype(np.float64)
    if np.all(weights == np.round(weights)) and weights.max() < 2**16:
        whole = weights.astype(np.int64)
        shifts = np.arange(int(whole.max()).bit_length())[:, None]
        planes = _pack(((whole[None, :] >> shifts) & 1) == 1, n_words)  # row sets of each weight bit

        def count_integer(sets):
            total = np.zeros(len(sets), dtype=np.int64)
            for p, plane in enumerate(planes):
                total += popcount(sets & plane) << p
            return total.astype(np.float64)

        return count_integer
    padded = np.zeros(n_words * 64)
    padded[: len(weights)] = weights
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    byte_table = padded.reshape(-1, 8) @ bits.T.astype(np.float64)  # (n_bytes, 256)
    cols = np.arange(byte_table.shape[0])

    def count(sets):
        return byte_table[cols, sets.view(np.uint8)].sum(axis=1)

    return count


def set_members(sets: np.ndarray) -> np.ndarray:
    """Rows of every set bit, set after set (the i-th set contributes its popcount rows).

    Only the nonzero bytes are unpacked.
    """
    octets = sets.view(np.uint8).ravel()
    nonzero = np.flatnonzero(octets != 0)
    bits = np.flatnonzero(np.unpackbits(octets[nonzero][:, None], axis=1, bitorder="little").view(bool))
    return (nonzero[bits >> 3] * 8 + (bits & 7)) % (sets.shape[1] * 64)
