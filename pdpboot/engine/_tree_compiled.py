"""The drivers of the compiled walk (:mod:`._tree_kernel`): node tables, one walk per feature set,
the bitset walk for small trees and the curves walk for the 1-D curves of the others."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._tree_model import MISSING_CODE, TreeModel
from .inputs import average_rows

_KERNEL_ICE_BYTES = 2**24  # per-row difference arrays of one row block of the compiled walk
_KERNEL_ROW_BLOCK = 2**20  # background rows per compiled walk call of the average walks (see _kernel_walk)
_LOCALITY_MIN_ROWS = 4096  # from this many background rows the average walks read them in leaf order
_KERNEL = None  # the kernel module once imported, False when numba is missing

NEEDS_NUMBA = "the exact tree engine needs numba, which is not installed (pip install numba)"


def kernel_available() -> bool:
    """Whether numba, which compiles the exact tree engine's walk, imports (else ``method="auto"`` is brute force)."""
    return _kernel() is not None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = False
        try:
            from . import _tree_kernel

            _KERNEL = _tree_kernel
        except ImportError:
            pass
    return _KERNEL or None


def _expand(offset: np.ndarray, n_axes: int) -> np.ndarray:
    return offset.reshape((-1,) + (1,) * n_axes)


def _respond(model: TreeModel, raw: np.ndarray) -> np.ndarray:
    """(n_raw, b, *grid) raw outputs -> (b, n_out, *grid) response."""
    per_row = np.moveaxis(raw, 0, -1)  # (b, *grid, n_raw)
    if model.link is not None:
        flat = per_row.reshape(-1, per_row.shape[-1])
        per_row = np.asarray(model.link(flat), dtype=np.float64).reshape(per_row.shape[:-1] + (-1,))
    return np.moveaxis(per_row, -1, 1)


def decode_boxes(enc: np.ndarray, table) -> np.ndarray:
    """Cumulative sums along the grid axes (the last ones; overwrites ``enc``), in the caller's grid order."""
    lead = enc.shape[:-1]
    out = enc.reshape(lead + table.shape)
    for d, order in enumerate(table.order):
        axis = len(lead) + d
        np.cumsum(out, axis=axis, out=out)
        if np.any(order != np.arange(len(order))):
            out = np.take(out, np.argsort(order), axis=axis)
    return out


def _category_codes(values: np.ndarray) -> np.ndarray:
    """Float category codes -> int column of ``cat_left`` (missing/out of range -> 256)."""
    ok = ~np.isnan(values) & (values >= 0) & (values < MISSING_CODE)
    return np.where(ok, np.where(ok, values, 0).astype(np.intp), MISSING_CODE)


@dataclass(frozen=True)
class _KernelTable:
    """One feature set for the compiled walk: the arguments of :func:`._tree_kernel.walk`.

    ``nodes`` and ``thr``: the model's node table (shared by all feature sets); a *mask axis* (a
    categorical or one-hot feature, or a grid with NaN) has boxes that are bit masks over the grid in
    the caller's order and zeros as its grid; ``shape`` and ``order`` (the sorting permutation of
    each grid) are read by :func:`decode_boxes`.
    """

    nodes: np.ndarray
    thr: np.ndarray
    axis_of: np.ndarray
    mask_axes: np.ndarray
    left_mask: np.ndarray
    grids: tuple[np.ndarray, np.ndarray]
    shape: tuple[int, ...]
    order: list[np.ndarray]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def args(self) -> tuple:
        """The walk's feature-set arguments (``axis_of`` ... ``grid1``)."""
        return (self.axis_of, self.mask_axes, self.left_mask) + self.grids

_MASK_MAX = 62  # grid points of a mask axis (bits of one int64)

def _is_mask_axis(model: TreeModel, col, g) -> bool:
    """Categorical or one-hot feature of interest, or a numeric grid with NaN."""
    if np.ndim(col) or model.categorical[col]:
        return True
    return bool(np.isnan(np.asarray(g, dtype=np.float64)).any())

def _kernel_handles(model: TreeModel, s_cols: list, grids: list) -> bool:
    """Whether every mask axis (categorical / one-hot / NaN grid) has at most ``_MASK_MAX`` points."""
    for col, g in zip(s_cols, grids):
        if (np.ndim(g) != 1 and not np.ndim(col)) or len(g) == 0:
            return False
        if _is_mask_axis(model, col, g) and len(g) > _MASK_MAX:
            return False
    return True

def _mask_goes_left(model: TreeModel, col, g, nodes: np.ndarray) -> np.ndarray:
    """(len(nodes), len(g)) bool: the grid points each split node (on the axis' columns) sends left."""
    g = np.asarray(g, dtype=np.float64)
    if np.ndim(col):  # one feature over several columns: a grid point holds a value per column
        pos = {int(c): k for k, c in enumerate(col)}
        vals = g[:, np.array([pos[c] for c in model.feature[nodes].tolist()], dtype=np.intp)].T
    elif model.categorical[col]:
        return model.cat_left[model.cat_row[nodes][:, None], _category_codes(g)[None, :]]
    else:
        vals = g[None, :]
    with np.errstate(invalid="ignore"):
        le = vals <= model.threshold[nodes][:, None]
    return le | (np.isnan(vals) & model.missing_left[nodes][:, None])

def _kernel_base(model: TreeModel) -> tuple[np.ndarray, np.ndarray]:
    """The compiled walk's node table of a model: (n_nodes, 4) int32 and float64 thresholds."""
    kern = _kernel()
    if len(model.feature) >= 2**31:
        raise ValueError("the compiled tree walk handles at most 2**31 - 1 nodes")
    feat = model.feature
    nodes = np.empty((len(feat), 4), dtype=np.int32)
    nodes[:, 0] = np.where(feat >= 0, feat, kern.LEAF)
    nodes[:, 1] = model.left
    nodes[:, 2] = model.right
    nodes[:, 3] = np.where(model.cat_row >= 0, model.cat_row, np.where(model.missing_left, -2, -1))
    return nodes, np.ascontiguousarray(model.threshold, dtype=np.float64)

def _kernel_table(model: TreeModel, base, s_cols: list, grids: list) -> _KernelTable:
    nodes = base[0]
    cols = [tuple(int(c) for c in np.atleast_1d(col)) for col in s_cols]
    n_cols = max([int(nodes[:, 0].max(initial=-1)) + 1] + [max(c) + 1 for c in cols])
    axis_of = np.full(n_cols, -1, dtype=np.int64)
    mask_axes = np.zeros(2, dtype=np.int64)
    any_mask = any(_is_mask_axis(model, col, g) for col, g in zip(s_cols, grids))
    left_mask = np.zeros(len(nodes) if any_mask else 0, dtype=np.int64)  # read on mask axes only
    values, orders = [], []
    for d, (col, g) in enumerate(zip(s_cols, grids)):
        axis_of[list(cols[d])] = d
        if _is_mask_axis(model, col, g):
            mask_axes[d] = 1
            on = np.flatnonzero(np.isin(model.feature, cols[d]))
            bits = np.left_shift(np.int64(1), np.arange(len(g), dtype=np.int64))
            left_mask[on] = _mask_goes_left(model, col, g, on).astype(np.int64) @ bits
            values.append(np.zeros(len(g)))
            orders.append(np.arange(len(g)))
        else:
            order = np.argsort(g, kind="stable")
            values.append(np.ascontiguousarray(np.asarray(g, dtype=np.float64)[order]))
            orders.append(order)
    values.append(np.zeros(0))
    return _KernelTable(nodes, base[1], axis_of, mask_axes, left_mask, (values[0], values[1]),
                        tuple(len(g) for g in grids), orders)

def _kernel_walk(model: TreeModel, table: _KernelTable, xt, rows, w, acc, ice) -> None:
    kern = _kernel()
    c = np.ascontiguousarray
    args = (c(model.cat_left, dtype=np.bool_), c(model.value, dtype=np.float64), c(model.roots, dtype=np.int64),
            *table.args, c(xt, dtype=np.float64))
    rows, w = c(rows, dtype=np.int64), c(w, dtype=np.float64)
    # Few large blocks: every block pays each visited node again; cache locality comes from the
    # rows' order (locality_order).
    n_blocks = max(1, round(len(rows) / _KERNEL_ROW_BLOCK))
    for part in np.array_split(rows, n_blocks):
        kern.walk(table.nodes, table.thr, *args, part, w, acc, ice)

def locality_order(model: TreeModel, base, xt: np.ndarray) -> np.ndarray | None:
    """An order of the background rows that keeps rows of one region of the feature space together.

    The rows sorted by the depth-first position of the leaf they reach in the first tree (a
    k-d-tree-like order of the space): the walks' row segments then read nearby memory.  None below
    ``_LOCALITY_MIN_ROWS`` rows.  Only the summation order of the averages changes.
    """
    if xt.shape[1] < _LOCALITY_MIN_ROWS:
        return None
    kern = _kernel()
    roots = model.roots
    end = int(roots[1]) if len(roots) > 1 else len(base[0])
    keys = kern.leaf_rank(base[0], base[1], np.ascontiguousarray(model.cat_left, dtype=np.bool_), int(roots[0]),
                          end, np.ascontiguousarray(xt, dtype=np.float64))
    return np.argsort(keys, kind="stable")

def _stacked_tables(tables: list) -> tuple:
    """The per-set arguments of :func:`._tree_kernel.walk_bits`: ``axis_of, mask_axes, left_mask, grids,
    glen, off``."""
    n_sets = len(tables)
    n_cols = max(len(t.axis_of) for t in tables)
    axis_of = np.full((n_sets, n_cols), -1, dtype=np.int64)
    g_max = max(max(len(t.grids[0]), len(t.grids[1])) for t in tables)
    grids = np.zeros((n_sets, 2, g_max))
    glen = np.zeros((n_sets, 2), dtype=np.int64)
    n_mask = max(len(t.left_mask) for t in tables)  # 0 unless some set has a mask axis
    left_mask = np.zeros((n_sets, n_mask), dtype=np.int64)
    for k, t in enumerate(tables):
        axis_of[k, :len(t.axis_of)] = t.axis_of
        left_mask[k, :len(t.left_mask)] = t.left_mask
        for d in range(2):
            glen[k, d] = len(t.grids[d])
            grids[k, d, :glen[k, d]] = t.grids[d]
    mask_axes = np.stack([t.mask_axes for t in tables]).astype(np.int64)
    off = np.concatenate([[0], np.cumsum([t.size for t in tables])]).astype(np.int64)
    return axis_of, mask_axes, left_mask, grids, glen, off


def _decoded(model: TreeModel, tables: list, acc: np.ndarray, off: np.ndarray, total: float) -> list[np.ndarray]:
    out = []
    for k, t in enumerate(tables):
        enc = np.ascontiguousarray(acc[:, off[k]:off[k + 1]])
        out.append(decode_boxes(enc, t) / total + _expand(model.offset, len(t.shape)))
    return out


_BITS_MAX_LEAVES = 512  # mean leaves per tree up to which the bitset walk is taken (see _bits_pay)
_BITS_ROWS_PER_LEAF = 8  # fewer background rows per leaf: the curves walk
_BITS_MAX_PLANES = 16  # integer weights below 2**16 (bootstrap multiplicities): exact bit planes
_BITS_BYTES = 2**25  # largest table of split-condition bitsets (internal nodes x words x 8 bytes)


def _weight_planes(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Positive integer weights below ``2**_BITS_MAX_PLANES`` as bit planes (``planes[b]``: the rows whose
    weight has bit ``b``, packed in uint64 words) and ``scale[b] = 2**b``; else None."""
    top = float(weights.max(initial=0.0))
    if top >= 2.0**_BITS_MAX_PLANES or not np.array_equal(weights, np.floor(weights)):
        return None
    n_planes = max(1, int(top).bit_length())
    n_words = max(1, -(-len(weights) // 64))
    ints = weights.astype(np.int64)
    padded = np.zeros((n_planes, n_words * 64), dtype=bool)
    for b in range(n_planes):
        padded[b, :len(ints)] = (ints >> b) & 1
    planes = np.packbits(padded, axis=1, bitorder="little").view(np.uint64)
    return np.ascontiguousarray(planes), 2.0 ** np.arange(n_planes)


def _split_entries(base) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct split conditions of a node table: ``(node_entry, ent_feat, ent_thr, ent_aux)``,
    numeric ones sorted by column and threshold (one entry per distinct pair), then one per
    categorical node (:func:`._tree_kernel.left_bits`)."""
    nodes, thr = base
    feat, aux = nodes[:, 0].astype(np.int64), nodes[:, 3].astype(np.int64)
    internal = feat >= 0
    num = np.flatnonzero(internal & (aux < 0))
    cat = np.flatnonzero(internal & (aux >= 0))
    order = num[np.lexsort((thr[num], feat[num]))]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (feat[order][1:] != feat[order][:-1]) | (thr[order][1:] != thr[order][:-1])
    first = order[new]
    node_entry = np.full(len(feat), -1, dtype=np.int64)
    node_entry[order] = np.cumsum(new) - 1
    node_entry[cat] = len(first) + np.arange(len(cat))
    ent_feat = np.concatenate([feat[first], feat[cat]])
    ent_thr = np.concatenate([thr[first], np.zeros(len(cat))])
    ent_aux = np.concatenate([np.full(len(first), -1, dtype=np.int64), aux[cat]])
    return node_entry, ent_feat, ent_thr, ent_aux


def _bits_pay(model: TreeModel, n_rows: int) -> bool:
    """Whether the bitset walk (:func:`_kernel_pd_bits`) is taken for a shared average (thresholds below)."""
    n_leaves = int(np.count_nonzero(model.feature < 0))
    n_internal = len(model.feature) - n_leaves
    words = -(-n_rows // 64)
    return (n_rows * len(model.roots) >= _BITS_ROWS_PER_LEAF * n_leaves
            and n_leaves <= _BITS_MAX_LEAVES * len(model.roots) and n_internal * words * 8 <= _BITS_BYTES)


def _kernel_pd_bits(model: TreeModel, xt, tables: list, w) -> list[np.ndarray] | None:
    """PD of several kernel plans from :func:`._tree_kernel.walk_bits`; None when the weights are not
    small integers (bootstrap multiplicities and equal weights are)."""
    kern = _kernel()
    weights, total, rows = average_rows(w, xt.shape[1])
    bits_of = _weight_planes(weights[rows])
    if bits_of is None:
        return None
    planes, scale = bits_of
    base = tables[0]
    node_entry, ent_feat, ent_thr, ent_aux = _split_entries((base.nodes, base.thr))
    xc = np.ascontiguousarray(xt[:, rows], dtype=np.float64)
    cat_left = np.ascontiguousarray(model.cat_left, dtype=np.bool_)
    bits, nan_bits = kern.left_bits(xc, cat_left, ent_feat, ent_thr, ent_aux, planes.shape[1])
    axis_of, mask_axes, left_mask, grids, glen, off = _stacked_tables(tables)
    acc = np.zeros((model.value.shape[1], int(off[-1])))
    kern.walk_bits(base.nodes, np.ascontiguousarray(model.value, dtype=np.float64),
                   np.ascontiguousarray(model.roots, dtype=np.int64), node_entry, bits, nan_bits, axis_of, mask_axes,
                   left_mask, grids, glen, off, base.thr, planes, scale, acc)
    return _decoded(model, tables, acc, off, total)

def curves_walkable(tables: list) -> bool:
    """Whether kernel plans can share :func:`._tree_kernel.walk_curves`: 1-D numeric interval axes
    on distinct model columns, at least two of them."""
    if len(tables) < 2:
        return False
    cols = []
    for t in tables:
        if len(t.shape) != 1 or t.mask_axes[0] or len(t.grids[1]):
            return False
        cols.append(int(np.flatnonzero(t.axis_of == 0)[0]) if np.count_nonzero(t.axis_of == 0) == 1 else -1)
    return min(cols) >= 0 and len(set(cols)) == len(cols)

def _kernel_pd_curves(model: TreeModel, xt, tables: list, w) -> list[np.ndarray]:
    """PD of several 1-D kernel plans (:func:`curves_walkable`) of a response linear in the tree outputs,
    from :func:`._tree_kernel.walk_curves`; ``xt`` and ``w`` may be in any row order."""
    kern = _kernel()
    weights, total, rows = average_rows(w, xt.shape[1])
    n_raw, n_sets = model.value.shape[1], len(tables)
    n_cols = max(len(t.axis_of) for t in tables)
    set_of = np.full(n_cols, -1, dtype=np.int64)
    glen = np.array([len(t.grids[0]) for t in tables], dtype=np.int64)
    grids = np.zeros((n_sets, 1, int(glen.max())))
    for k, t in enumerate(tables):
        set_of[np.flatnonzero(t.axis_of == 0)] = k
        grids[k, 0, :glen[k]] = t.grids[0]
    off = np.concatenate([[0], np.cumsum(glen)]).astype(np.int64)
    acc = np.zeros((n_raw, int(off[-1])))
    roots = np.ascontiguousarray(model.roots, dtype=np.int64)
    max_tree = int(np.diff(np.append(roots, len(model.feature))).max())
    c = np.ascontiguousarray
    base = tables[0]
    kern.walk_curves(base.nodes, base.thr, c(model.cat_left, dtype=np.bool_), c(model.value, dtype=np.float64), roots,
                     set_of, grids, glen, off, max_tree, c(xt, dtype=np.float64), rows, c(weights, dtype=np.float64),
                     acc)
    return _decoded(model, tables, acc, off, total)

def _kernel_pd(model: TreeModel, xt, table: _KernelTable, w, average: bool, individual: bool, local=None):
    """PD and/or ICE of a kernel plan (see :class:`PreparedTrees.partial_dependence`); ``local``:
    (order, ``xt[:, order]``) of :func:`locality_order`, used by the average-only walk."""
    n_rows = xt.shape[1]
    n_raw, size = model.value.shape[1], table.size
    weights = np.ones(n_rows) if w is None else w
    total = float(n_rows) if w is None else float(w.sum())
    if model.link is None and not individual:
        acc = np.zeros((n_raw, size))
        if local is not None:
            xt, weights = local[1], weights[local[0]]
            w = None if w is None else weights
        rows = np.arange(n_rows, dtype=np.int64) if w is None else np.flatnonzero(w > 0).astype(np.int64)
        _kernel_walk(model, table, xt, rows, weights, acc, np.zeros((0, 0, 0)))
        return decode_boxes(acc, table) / total + _expand(model.offset, len(table.shape)), None
    n_axes = len(table.shape)
    block = int(max(1, min(n_rows, _KERNEL_ICE_BYTES // (size * max(n_raw, model.n_out) * 8))))
    ice = np.empty((n_rows, model.n_out) + table.shape) if individual else None
    acc = np.zeros((model.n_out,) + table.shape) if average else None
    for start in range(0, n_rows, block):
        rows = slice(start, min(start + block, n_rows))
        b = rows.stop - rows.start
        enc = np.zeros((b, n_raw, size))
        _kernel_walk(model, table, xt[:, rows], np.arange(b, dtype=np.int64), weights[rows], np.zeros((0, 0)),
                     enc)
        raw = decode_boxes(enc, table) + _expand(model.offset, n_axes)  # (b, n_raw, *grid)
        resp = _respond(model, np.moveaxis(raw, 1, 0))  # (b, n_out, *grid)
        if individual:
            ice[rows] = resp
        if average:
            acc += np.einsum("r,r...->...", weights[rows], resp)  # no BLAS: one sum order
    return (acc / total if average else None), ice
