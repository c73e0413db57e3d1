"""Row routing of the exact tree engine, linear in the number of rows (deep trees).

Private helper of :mod:`pdpboot.engine.tree`.  It produces the same (leaf, row)
incidences as the bitset walk of :mod:`._tree_walk` - row ``i`` meets leaf ``L`` when
``x_C^(i)`` lies in the complement box of ``L`` - but without a per-node row set, whose
cost grows as nodes x rows (fully grown trees have about as many nodes as rows).

Each background row is routed down each tree once by compiled code, exactly as in
prediction, and stops at a leaf or at the first split on a feature of interest ("S").
From an S-split the row continues from *both* children (the grid box, not the row,
decides which side a grid point takes), again until the next S-split or a leaf.  The
work is the number of (row, reachable leaf or S-split) pairs times the path length
between them - the interventional "both ways at S-splits" traversal of the classic
partial-dependence recursion (Friedman 2001, Sec. 8.2, with background rows in place of
training fractions; see also the leaf-weight view of FastPD, Liu, Steensgaard, Wright,
Pfister & Hiabu, ICML 2025) - instead of rows x grid points x depth for brute force.

The compiled router is a :class:`sklearn.tree._tree.Tree` assembled from the node
table: the model's C-split nodes keep their feature and threshold, S-splits and leaves
become leaves of the router, and a balanced search tree on one extra input column (the
"start key") sends every (row, start node) pair to its start node, so one ``apply``
call routes all pairs of a stage.  Node indices may be shared (a DAG); ``apply`` only
follows child pointers.  Inputs are compared as float32 by ``Tree.apply``; models whose
inputs are float64 (HistGradientBoosting, LightGBM) are routed on threshold ranks (per
feature, the number of distinct thresholds strictly below the value - an integer,
exact in float32), which preserves every ``x <= threshold`` comparison.  Categorical
splits are not routed here (the caller uses the bitset walk for such models).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.tree._tree import Tree

from ._tree_model import TreeModel

_NODE_DTYPE = None
_MAX_ROUTER_NODES = 2**22  # model nodes per router (trees are grouped up to this size)
_PAIR_CHUNK = 2**20  # (row, start) pairs routed per apply call


def _node_dtype() -> np.dtype:
    global _NODE_DTYPE
    if _NODE_DTYPE is None:
        probe = Tree(1, np.array([1], dtype=np.intp), 1)
        _NODE_DTYPE = probe.__getstate__()["nodes"].dtype
    return _NODE_DTYPE


def routable(model: TreeModel) -> bool:
    """Whether the router handles the model (numeric splits only)."""
    return not (model.cat_row >= 0).any()


@dataclass(frozen=True)
class _Router:
    tree: Tree
    offset: int  # router node id = model node id + offset (within [lo, hi))
    lo: int
    hi: int
    key: np.ndarray  # (hi - lo,) start key of each model node (-1 when not a start)


def _search_tree(nodes, targets: np.ndarray, key_col: int) -> None:
    """Fill ``nodes[:P-1]`` with a complete binary search over keys 0..K-1 leading to ``targets``."""
    k = len(targets)
    depth = max(1, int(np.ceil(np.log2(max(k, 2)))))
    p = 2**depth
    ids = np.arange(p - 1)
    level = np.floor(np.log2(ids + 1)).astype(np.intp)
    size = p >> level
    lo = (ids + 1 - (1 << level)) * size
    mid = lo + size // 2
    last = level == depth - 1
    nodes["feature"][: p - 1] = key_col
    nodes["threshold"][: p - 1] = mid - 0.5
    nodes["left_child"][: p - 1] = np.where(last, targets[np.minimum(lo, k - 1)], 2 * ids + 1)
    nodes["right_child"][: p - 1] = np.where(last, targets[np.minimum(mid, k - 1)], 2 * ids + 2)


def _build(model: TreeModel, thresholds: np.ndarray, stop: np.ndarray, starts: np.ndarray,
           lo: int, hi: int, key_col: int) -> _Router:
    """Router for the model nodes [lo, hi) (whole trees), starting at ``starts`` (model ids)."""
    k = len(starts)
    n_search = 2 ** max(1, int(np.ceil(np.log2(max(k, 2))))) - 1
    offset = n_search - lo
    n = n_search + (hi - lo)
    nodes = np.zeros(n, dtype=_node_dtype())
    part = slice(n_search, n)
    feat = model.feature[lo:hi]
    inner = (feat >= 0) & ~stop[lo:hi]
    nodes["left_child"][part] = np.where(inner, model.left[lo:hi] + offset, -1)
    nodes["right_child"][part] = np.where(inner, model.right[lo:hi] + offset, -1)
    nodes["feature"][part] = np.where(inner, feat, -2)
    nodes["threshold"][part] = np.where(inner, thresholds[lo:hi], -2.0)
    nodes["missing_go_to_left"][part] = model.missing_left[lo:hi]
    _search_tree(nodes, starts + offset, key_col)
    nodes["n_node_samples"] = 1
    nodes["weighted_n_node_samples"] = 1.0
    tree = Tree(key_col + 1, np.array([1], dtype=np.intp), 1)
    tree.__setstate__({"max_depth": 64, "node_count": n, "nodes": nodes, "values": np.zeros((n, 1, 1))})
    key = np.full(hi - lo, -1, dtype=np.intp)
    key[starts - lo] = np.arange(k)
    return _Router(tree, offset, lo, hi, key)


def _rank_encode(model: TreeModel):
    """Threshold ranks: per node its threshold's rank, and a function encoding input columns."""
    feat = model.feature
    inner = np.flatnonzero(feat >= 0)
    thr = np.zeros(len(feat))
    tables = {}
    for f in np.unique(feat[inner]).tolist():
        nodes = inner[feat[inner] == f]
        uniq, inv = np.unique(model.threshold[nodes], return_inverse=True)
        thr[nodes] = inv
        tables[f] = uniq

    def encode(xa: np.ndarray) -> np.ndarray:
        out = np.zeros(xa.shape, dtype=np.float32)
        for f, uniq in tables.items():
            x = xa[:, f].astype(np.float64)
            out[:, f] = np.where(np.isnan(x), np.nan, np.searchsorted(uniq, x, side="left"))
        return out

    return thr, encode


class RowRouter:
    """Routes background rows through the ensemble with the S-features left open.

    Build once per (model, features of interest, live nodes); call :meth:`pairs` per block
    of rows.
    """

    def __init__(self, model: TreeModel, s_cols, alive: np.ndarray, n_features: int):
        self.model = model
        self.alive = alive
        stop = np.isin(model.feature, list(s_cols)) & (model.feature >= 0)
        self.n_features = n_features
        if model.dtype == np.float32:
            thresholds, self.encode = model.threshold, None
        else:
            thresholds, self.encode = _rank_encode(model)
        s_live = np.flatnonzero(stop & alive)
        starts = np.concatenate([model.roots, model.left[s_live], model.right[s_live]])
        starts = np.unique(starts[alive[starts]])
        # group whole trees into routers of bounded size
        ends = np.append(model.roots[1:], len(model.feature))
        self.routers = []
        lo = 0
        while lo < len(model.feature):
            first = int(np.searchsorted(model.roots, lo))
            last = int(np.searchsorted(ends, lo + _MAX_ROUTER_NODES, side="right"))
            hi = int(ends[max(last - 1, first)])
            mine = starts[(starts >= lo) & (starts < hi)]
            if len(mine):
                self.routers.append(_build(model, thresholds, stop, mine, lo, hi, n_features))
            lo = hi

    def pairs(self, xb: np.ndarray):
        """Yield ``(leaf node ids, rows)`` for a block ``xb`` of rows (model input space)."""
        model, alive = self.model, self.alive
        b, p = xb.shape
        xe = np.zeros((b, p + 1), dtype=np.float32)
        xe[:, :p] = xb if self.encode is None else self.encode(xb)
        roots = model.roots[alive[model.roots]]
        for r in self.routers:
            mine = roots[(roots >= r.lo) & (roots < r.hi)]
            node = np.repeat(mine, b)
            row = np.tile(np.arange(b), len(mine))
            while node.size:
                for start in range(0, len(node), _PAIR_CHUNK):
                    nd, rw = node[start:start + _PAIR_CHUNK], row[start:start + _PAIR_CHUNK]
                    block = xe.take(rw, axis=0)
                    block[:, p] = r.key[nd - r.lo]
                    end = r.tree.apply(block) - r.offset
                    leaf = model.feature[end] < 0
                    yield end[leaf], rw[leaf]
                    stops, srow = end[~leaf], rw[~leaf]
                    child = np.concatenate([model.left[stops], model.right[stops]])
                    crow = np.concatenate([srow, srow])
                    keep = alive[child]
                    if start == 0:
                        next_node, next_row = [child[keep]], [crow[keep]]
                    else:
                        next_node.append(child[keep])
                        next_row.append(crow[keep])
                node, row = np.concatenate(next_node), np.concatenate(next_row)
