"""The NumPy walks of the exact tree engine: per-leaf weights (average) and per-row raw outputs (ICE form).

Private helper of :mod:`pdpboot.engine.tree`.  :class:`_BitsetWalk` (row bitsets per node,
:mod:`._tree_walk`) and :class:`_RouteWalk` (compiled row routing, :mod:`._tree_route`) find the
(leaf, row) incidences; :func:`_average_linear` turns them into one weight per leaf (a response
linear in the tree outputs), :func:`_per_row` into raw outputs per row and grid point, then the
link and the average.  Memory: rows in blocks (``_MAX_BLOCK``, ``_ROUTE_BLOCK``), at most
``_PAIR_BUDGET`` (row, leaf, corner) entries and ``_ICE_BLOCK_BYTES`` of raw ICE at once.
"""

from __future__ import annotations

import numpy as np

from ._tree_model import TreeModel
from ._tree_route import RowRouter
from ._tree_walk import (
    GridBoxes,
    complement_split_nodes,
    decode_boxes,
    popcount,
    row_counter,
    set_members,
    walk_rows,
)

_MAX_BLOCK = 4096  # rows per block

_ICE_BLOCK_BYTES = 2**26  # raw ICE of one block on the per-row paths

_PAIR_BUDGET = 2**21  # (row, leaf, box corner) entries handled at once

_UNPACK_BUDGET = 2**24  # bits of row sets turned into (row, leaf) pairs at once

_ROUTE_BLOCK = 8192  # rows per block when routing


def _blocks(n_rows: int, size: int):
    for start in range(0, n_rows, size):
        yield slice(start, min(start + size, n_rows))

def _expand(offset: np.ndarray, n_axes: int) -> np.ndarray:
    return offset.reshape((-1,) + (1,) * n_axes)

def _respond(model: TreeModel, raw: np.ndarray) -> np.ndarray:
    """(n_raw, b, *grid) raw outputs -> (b, n_out, *grid) response."""
    per_row = np.moveaxis(raw, 0, -1)  # (b, *grid, n_raw)
    if model.link is not None:
        flat = per_row.reshape(-1, per_row.shape[-1])
        per_row = np.asarray(model.link(flat), dtype=np.float64).reshape(per_row.shape[:-1] + (-1,))
    return np.moveaxis(per_row, -1, 1)

class _BitsetWalk:
    """(leaf, row) incidences from per-node row bitsets (:mod:`._tree_walk`)."""

    block = _MAX_BLOCK

    def __init__(self, model: TreeModel, s_cols, boxes: GridBoxes):
        self.model, self.s_cols, self.alive = model, s_cols, boxes.alive
        self.c_nodes = complement_split_nodes(model, s_cols, boxes.alive)

    def leaf_weights(self, xb, wb, local, n_leaves: int) -> np.ndarray:
        count = row_counter(wb, (xb.shape[0] + 63) // 64)
        out = np.zeros(n_leaves)
        for leaves, sets in walk_rows(self.model, xb, self.s_cols, self.alive, self.c_nodes):
            out[local[leaves]] += count(sets)
        return out

    def add(self, enc, xb, boxes: GridBoxes, leaf_vals) -> None:
        walked = list(walk_rows(self.model, xb, self.s_cols, self.alive, self.c_nodes))
        if walked:
            leaves = np.concatenate([lv for lv, _ in walked])
            sets = np.concatenate([st for _, st in walked])
            _add_pairs(enc, boxes.local[leaves], sets, len(xb), boxes, leaf_vals)

class _RouteWalk:
    """(leaf, row) incidences from compiled row routing (:mod:`._tree_route`)."""

    block = _ROUTE_BLOCK

    def __init__(self, model: TreeModel, s_cols, boxes: GridBoxes, n_features: int):
        self.router = RowRouter(model, s_cols, boxes.alive, n_features)
        self.slots = None

    def leaf_weights(self, xb, wb, local, n_leaves: int) -> np.ndarray:
        out = np.zeros(n_leaves)
        for leaves, rows in self.router.pairs(xb):
            out += np.bincount(local[leaves], None if wb is None else wb[rows], minlength=n_leaves)
        return out

    def add(self, enc, xb, boxes: GridBoxes, leaf_vals) -> None:
        if self.slots is None:
            self.slots = _slot_tables(boxes)
        for leaves, rows in self.router.pairs(xb):
            _add_row_pairs(enc, boxes.local[leaves], rows, len(xb), self.slots, leaf_vals)

def _average_linear(model: TreeModel, xa, walk, boxes: GridBoxes, w) -> np.ndarray:
    """PD of a response linear in the tree outputs, from one weight per leaf."""
    leaf_w = np.zeros(len(boxes.leaves))
    for rows in _blocks(len(xa), walk.block):
        leaf_w += walk.leaf_weights(xa[rows], None if w is None else w[rows], boxes.local, len(leaf_w))
    total = len(xa) if w is None else w.sum()
    owner = np.repeat(np.arange(len(boxes.leaves)), np.diff(boxes.ptr))
    vals = model.value[boxes.leaves][owner] * (leaf_w[owner] * boxes.coef)[:, None]
    size = int(np.prod(boxes.shape))
    enc = np.stack([np.bincount(boxes.pos, vals[:, k], minlength=size) for k in range(vals.shape[1])])
    return decode_boxes(enc, boxes) / total + _expand(model.offset, len(boxes.shape))

def _per_row(model: TreeModel, xa, walk, boxes: GridBoxes, w, average: bool, individual: bool):
    """Raw outputs per row and grid point (the ICE form), then link and average."""
    n_rows = len(xa)
    n_raw = model.value.shape[1]
    size = int(np.prod(boxes.shape))
    per_row_bytes = size * (n_raw + model.n_out) * 8 * 2
    block = int(min(walk.block, max(64, _ICE_BLOCK_BYTES // per_row_bytes)))
    ice = np.empty((n_rows, model.n_out) + boxes.shape) if individual else None
    acc = np.zeros((model.n_out,) + boxes.shape) if average else None
    leaf_vals = model.value[boxes.leaves]
    for rows in _blocks(n_rows, block):
        b = rows.stop - rows.start
        enc = np.zeros((n_raw, b * size))
        walk.add(enc, xa[rows], boxes, leaf_vals)
        raw = decode_boxes(enc.reshape(n_raw, b, size), boxes) + _expand(model.offset, len(boxes.shape) + 1)
        resp = _respond(model, raw)  # (b, n_out, *grid)
        if individual:
            ice[rows] = resp
        if average:
            acc += np.einsum("r,r...->...", np.ones(b) if w is None else w[rows], resp)  # no BLAS: one sum order
    avg = acc / (n_rows if w is None else w.sum()) if average else None
    return avg, ice

def _add_pairs(enc, local, sets, n_rows: int, boxes: GridBoxes, leaf_vals) -> None:
    """Add every (row, leaf) pair's box corners, times the leaf value, to ``enc``.

    Pairs come ordered by leaf, so per-leaf data reach the pairs by ``np.repeat``.
    A leaf's corners sit in ``n_slots`` slots (weight 0 where a leaf has fewer).
    """
    size = enc.shape[1] // n_rows
    n_corner = boxes.ptr[local + 1] - boxes.ptr[local]
    n_slots = int(n_corner.max(initial=0))
    slot = np.arange(n_slots)
    has = slot[None, :] < n_corner[:, None]  # (leaves, slots)
    corner = np.where(has, boxes.ptr[local][:, None] + slot[None, :], 0)
    pos = np.where(has, boxes.pos[corner], 0)
    coef = np.where(has, boxes.coef[corner], 0.0)
    count = popcount(sets)
    bounds = _chunks(count, _PAIR_BUDGET // max(n_slots, 1), max(1, _UNPACK_BUDGET // (sets.shape[1] * 64)))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        row = set_members(sets[start:stop])
        reps = count[start:stop]
        flat = (row * size)[:, None] + np.repeat(pos[start:stop], reps, axis=0)
        for k in range(enc.shape[0]):
            val = coef[start:stop] * leaf_vals[local[start:stop], k][:, None]
            if val.any():
                weight = np.repeat(val, reps, axis=0).ravel()
                enc[k] += np.bincount(flat.ravel(), weight, minlength=enc.shape[1])

def _slot_tables(boxes: GridBoxes):
    """Per live leaf: its box corners' flat positions and signs, padded to a common count."""
    n_corner = np.diff(boxes.ptr)
    n_slots = int(n_corner.max(initial=0))
    slot = np.arange(n_slots)
    has = slot[None, :] < n_corner[:, None]
    corner = np.where(has, boxes.ptr[:-1][:, None] + slot[None, :], 0)
    pos = np.where(has, boxes.pos[corner] if len(boxes.pos) else 0, 0)
    coef = np.where(has, boxes.coef[corner] if len(boxes.coef) else 0.0, 0.0)
    return pos, coef

def _add_row_pairs(enc, local, rows, n_rows: int, slots, leaf_vals) -> None:
    """Add the box corners of leaf ``local[t]``, times its value, to row ``rows[t]`` of ``enc``."""
    pos, coef = slots
    size = enc.shape[1] // n_rows
    step = max(1, _PAIR_BUDGET // max(pos.shape[1], 1))
    for start in range(0, len(local), step):
        lc, rw = local[start:start + step], rows[start:start + step]
        flat = (rw * size)[:, None] + pos[lc]
        for k in range(enc.shape[0]):
            val = coef[lc] * leaf_vals[lc, k][:, None]
            enc[k] += np.bincount(flat.ravel(), val.ravel(), minlength=enc.shape[1])

def _chunks(count: np.ndarray, budget: int, max_items: int) -> list[int]:
    """Boundaries of consecutive chunks with total ``count`` <= budget (at least one item) and
    at most ``max_items`` items each."""
    csum = np.concatenate([[0], np.cumsum(count)])
    bounds = [0]
    while bounds[-1] < len(count):
        start = bounds[-1]
        stop = int(np.searchsorted(csum, csum[start] + budget, side="right")) - 1
        bounds.append(min(max(stop, start + 1), start + max_items, len(count)))
    return bounds
