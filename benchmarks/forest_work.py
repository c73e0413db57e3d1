"""The work of the exact tree walk on fully grown forests, counted row by row (issue 30, item 1).

For every background row, tree and feature ``j`` of a scikit-learn forest, one depth-first walk of
the row with ``x_j`` replaced by every grid value at once (as the compiled walk does it: a split on
``j`` sends the row to each child whose grid box is not empty, any other split by the row's own
value) counts

``own``       nodes on the row's own path (the part one pass shares between all features);
``dev``       nodes reached only by grid values whose path has left the row's own path (a split on
              ``j`` sent them the other way): the work that belongs to feature ``j`` alone;
``pieces``    leaves among those (the extra pieces of the row's ICE curve in this tree);
``pure``      ``dev`` nodes that are splits whose whole subtree splits on ``j`` only: the visits that
              carrying counts instead of rows below such a node would save;

and, per tree, the background rows per occupied leaf (what grouping rows by their own leaf could
save at most).  Averages are per row and tree.  The compiled walk's cost is these incidences (plus
one step per visited node); a walk that evaluates each row must at least reach each piece, so
``(own + sum_j pieces_j) / (own + pieces_0)`` bounds all-features / one-feature from below for any
row-by-row method, and ``(own + sum_j dev_j) / (own + dev_0)`` is the walk's own ratio.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _count(feat, thr, left, right, pure, xs, j, grid, order, starts, out):
    """Add own, dev, pieces, pure (``out[0:4]``) of every group of rows ``order[starts[g]:starts[g + 1]]``.

    A group moves as one while no split separates it (a split that separates it divides it into parts):
    every incidence is counted once per part.  Groups of one row (``order = arange(n)``,
    ``starts = arange(n + 1)``) count row by row; groups of the rows of one own leaf count the deviated
    incidences if routing by leaf carried them together (the ideal of routing by leaf: no cost for
    deciding that a group stays whole).  ``xs`` is float64 of the float32 input.
    """
    st = np.empty((256, 6), dtype=np.int64)  # node, grid lo, hi, deviated, part start, end
    seg = order.copy()
    tmp = np.empty(order.shape[0], dtype=np.int64)
    for g in range(starts.shape[0] - 1):
        st[0, 0] = 0
        st[0, 1] = 0
        st[0, 2] = grid.shape[0]
        st[0, 3] = 0
        st[0, 4] = starts[g]
        st[0, 5] = starts[g + 1]
        top = 1
        while top > 0:
            top -= 1
            v, lo, hi, dev, s, e = st[top, 0], st[top, 1], st[top, 2], st[top, 3], st[top, 4], st[top, 5]
            while True:
                f = feat[v]
                out[1 if dev else 0] += 1
                if f < 0:
                    if dev:
                        out[2] += 1
                    break
                if dev and pure[v]:
                    out[3] += 1
                if f != j:  # rows of one own leaf agree on the own path; deviated parts may split
                    nl = 0
                    nr = 0
                    for k in range(s, e):
                        r = seg[k]
                        if xs[r, f] <= thr[v]:
                            seg[s + nl] = r
                            nl += 1
                        else:
                            tmp[nr] = r
                            nr += 1
                    for k in range(nr):
                        seg[s + nl + k] = tmp[k]
                    if nl == 0:
                        v = right[v]
                    elif nr == 0:
                        v = left[v]
                    else:
                        st[top, 0] = right[v]
                        st[top, 1] = lo
                        st[top, 2] = hi
                        st[top, 3] = dev
                        st[top, 4] = s + nl
                        st[top, 5] = e
                        top += 1
                        v = left[v]
                        e = s + nl
                    continue
                # a split on j: the other child, with its grid box, is a deviation; the own child keeps the state
                sp = np.searchsorted(grid, thr[v], "right")
                own_left = xs[seg[s], j] <= thr[v]
                o_lo, o_hi = (max(lo, sp), hi) if own_left else (lo, min(hi, sp))
                if o_lo < o_hi:
                    st[top, 0] = right[v] if own_left else left[v]
                    st[top, 1] = o_lo
                    st[top, 2] = o_hi
                    st[top, 3] = 1
                    st[top, 4] = s
                    st[top, 5] = e
                    top += 1
                v = left[v] if own_left else right[v]
                lo, hi = (lo, min(hi, sp)) if own_left else (max(lo, sp), hi)
                if dev and lo >= hi:
                    break


@njit(cache=True)
def _leaf_of(feat, thr, left, right, xs):
    out = np.empty(xs.shape[0], dtype=np.int64)
    for i in range(xs.shape[0]):
        v = 0
        while feat[v] >= 0:
            v = left[v] if xs[i, feat[v]] <= thr[v] else right[v]
        out[i] = v
    return out


def _pure(tree, j: int) -> np.ndarray:
    """Splits whose subtree splits on ``j`` only (leaves excluded)."""
    feat, left, right = tree.feature, tree.children_left, tree.children_right
    only = np.zeros(len(feat), dtype=np.bool_)
    for v in range(len(feat) - 1, -1, -1):  # children come after their parent (depth-first ids)
        only[v] = feat[v] < 0 or (feat[v] == j and only[left[v]] and only[right[v]])
    return only & (feat >= 0)


def count_work(est, X: np.ndarray, grids: list, trees: int = 5, grouped: bool = True) -> dict:
    """Per row and tree averages of own / dev / pieces / pure per feature for the first ``trees`` trees.

    Returns a dict with ``own`` (float), ``dev``, ``pieces``, ``pure`` (lists, one per feature of
    ``grids``), ``rows_per_leaf`` (background rows per occupied leaf, averaged over the trees) and,
    with ``grouped``, ``dev_grouped`` (per feature: the deviated incidences if the rows of one own leaf
    moved as one group while no split separates them, :func:`_count` of the leaves' groups).
    """
    xs = np.ascontiguousarray(np.asarray(X, dtype=np.float32), dtype=np.float64)
    p = len(grids)
    tot = np.zeros((p, 5))
    per_leaf = []
    rows = np.arange(len(xs), dtype=np.int64)
    for est_t in est.estimators_[:trees]:
        tr = est_t.tree_
        feat = tr.feature.astype(np.int64)
        args = (feat, tr.threshold, tr.children_left.astype(np.int64), tr.children_right.astype(np.int64))
        leaf = _leaf_of(*args, xs)
        per_leaf.append(len(xs) / len(np.unique(leaf)))
        order = np.argsort(leaf, kind="stable").astype(np.int64)
        starts = np.flatnonzero(np.r_[True, np.diff(leaf[order]) != 0, True]).astype(np.int64)
        for j in range(p):
            grid = np.asarray(grids[j], dtype=np.float64)
            pure = _pure(tr, j)
            out = np.zeros(4)
            _count(*args, pure, xs, j, grid, rows, np.arange(len(xs) + 1, dtype=np.int64), out)
            tot[j, :4] += out
            if grouped:
                out = np.zeros(4)
                _count(*args, pure, xs, j, grid, order, starts, out)
                tot[j, 4] += out[1]
    tot /= trees * len(xs)
    return {"own": float(tot[0, 0]), "dev": tot[:, 1].tolist(), "pieces": tot[:, 2].tolist(),
            "pure": tot[:, 3].tolist(), "rows_per_leaf": float(np.mean(per_leaf)),
            **({"dev_grouped": tot[:, 4].tolist()} if grouped else {})}
