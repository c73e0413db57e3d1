"""Compiled walks of the exact tree engine (numba).

A depth-first walk per tree carries the rows meeting the complement ("C") splits above the node
(a segment of one index array, partitioned in place at C-splits) and the node's *grid box*,
narrowed at splits on a feature of interest ("S"); a child with an empty box is not visited.  At a
leaf with box ``[lo, hi)`` and value ``v`` it adds ``v`` times the summed row weights (ICE: per
row) at the box corners of a difference array, which the caller sums along each grid axis.
Comparisons follow :mod:`._tree_model`.  On a *mask axis* (categorical, one-hot or NaN grids of
at most 62 points) the box is a bit mask of grid points.
"""

from __future__ import annotations

import numpy as np
from numba import njit

LEAF = -1  # feature code of a leaf in the kernel's node table
MISSING_CODE = 256
# Node table: int32 (n_nodes, 4) - split column (LEAF at leaves), left child, right child, aux -
# plus float64 thresholds.  aux: -1 (NaN goes right) or -2 (NaN left) at numeric splits, the row
# of ``cat_left`` at categorical splits.


@njit(cache=True, nogil=True)
def _n_below(grid, t):
    """Number of values of the sorted ``grid`` that are <= t (``searchsorted(grid, t, "right")``)."""
    lo = 0
    hi = grid.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if grid[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _n_below_of(grids, k, a, n, t):
    """:func:`_n_below` of ``grids[k, a, :n]`` (no slice: no reference counting in the hot loop)."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if grids[k, a, mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _grow_rows(a):
    out = np.empty((2 * a.shape[0], a.shape[1]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _grow(a):
    out = np.empty(2 * a.shape[0], dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True, inline="always")
def _push(st, top, v, s, e, lo0, hi0, lo1, hi1):
    """Put a pending node (segment ``s:e`` of the row array, grid box) at ``top`` of :func:`walk`'s stack
    (grown when full); returns the stack."""
    if top == st.shape[0]:
        st = _grow_rows(st)
    st[top, 0] = v
    st[top, 1] = s
    st[top, 2] = e
    st[top, 3] = lo0
    st[top, 4] = hi0
    st[top, 5] = lo1
    st[top, 6] = hi1
    return st


@njit(cache=True, nogil=True, inline="always")
def _push_state(st, top, v, s, e, state):
    """Put a pending node (segment ``s:e``, state) at ``top`` of :func:`walk_curves`' stack (grown when full)."""
    if top == st.shape[0]:
        st = _grow_rows(st)
    st[top, 0] = v
    st[top, 1] = s
    st[top, 2] = e
    st[top, 3] = state
    return st


@njit(cache=True, nogil=True)
def _category_code(xv):
    """Column of ``cat_left`` for value ``xv``: its integer code, or ``MISSING_CODE`` (NaN, negative, too large)."""
    if xv == xv and xv >= 0 and xv < MISSING_CODE:
        return int(xv)
    return MISSING_CODE


@njit(cache=True, nogil=True)
def _goes_left(xv, thr, aux, cat_left):
    """Whether a row with value ``xv`` goes left at a split node (``aux`` >= 0: its ``cat_left`` row; -2: NaN left)."""
    if aux >= 0:
        return cat_left[aux, _category_code(xv)]
    return (xv <= thr) | ((xv != xv) & (aux == -2))


@njit(cache=True, nogil=True)
def _partition(rows, tmp, s, e, xt, f, thr, aux, cat_left):
    """Stable in-place partition of ``rows[s:e]`` by split column ``f`` of ``xt``: rows going left
    first; returns their count (no array views: they cost reference counting at every node)."""
    nl = 0
    nr = 0
    if aux >= 0:
        for k in range(s, e):
            r = rows[k]
            go = np.int64(cat_left[aux, _category_code(xt[f, r])])
            rows[s + nl] = r
            tmp[nr] = r
            nl += go
            nr += 1 - go
    else:
        miss_left = aux == -2
        for k in range(s, e):
            r = rows[k]
            xv = xt[f, r]
            go = np.int64((xv <= thr) | ((xv != xv) & miss_left))
            rows[s + nl] = r
            tmp[nr] = r
            nl += go
            nr += 1 - go
    for k in range(nr):
        rows[s + nl + k] = tmp[k]
    return nl


@njit(cache=True, nogil=True)
def _add_box(out, k, b, lo0, hi0, lo1, hi1, g0, g1, val):
    """Add ``val`` at the signed corners of box [lo0, hi0) x [lo1, hi1) of ``out[k, b:]`` (g1 = 0: 1-D)."""
    if g1 == 0:
        out[k, b + lo0] += val
        if hi0 < g0:
            out[k, b + hi0] -= val
        return
    out[k, b + lo0 * g1 + lo1] += val
    if hi0 < g0:
        out[k, b + hi0 * g1 + lo1] -= val
        if hi1 < g1:
            out[k, b + hi0 * g1 + hi1] += val
    if hi1 < g1:
        out[k, b + lo0 * g1 + hi1] -= val


@njit(cache=True, nogil=True)
def _step(i, lo, hi, g, is_mask):
    """Difference-array sign at grid position ``i`` of an axis box: ``[lo, hi)`` or a bit mask ``lo``."""
    if is_mask:
        cur = (lo >> i) & 1
        prev = (lo >> (i - 1)) & 1 if i > 0 else 0
        return cur - prev
    return np.int64(i == lo) - np.int64(i == hi)


@njit(cache=True, nogil=True)
def _add_leaf(out, k, b, lo0, hi0, lo1, hi1, g0, g1, m0, m1, val):
    """:func:`_add_box` for boxes whose axes may be bit masks (``m0``/``m1``: axis is a mask axis)."""
    if not (m0 or m1):
        _add_box(out, k, b, lo0, hi0, lo1, hi1, g0, g1, val)
        return
    for i in range(g0):
        si = _step(i, lo0, hi0, g0, m0)
        if si == 0:
            continue
        if g1 == 0:
            out[k, b + i] += si * val
            continue
        for j in range(g1):
            sj = _step(j, lo1, hi1, g1, m1)
            if sj != 0:
                out[k, b + i * g1 + j] += si * sj * val


@njit(cache=True, nogil=True)
def walk(nodes, thr, cat_left, value, roots, axis_of, mask_axes, left_mask, grid0, grid1, xt, rows, w, acc, ice):
    """Walk trees ``roots`` with the rows ``rows`` (see the module docstring).

    ``value`` (n_nodes, n_raw) leaf values; ``axis_of[c]`` the grid axis (0 or 1) of model column
    ``c``, -1 for a complement column; ``grid0``, ``grid1`` the sorted grids (``grid1`` empty: 1-D).
    On a *mask axis* (``mask_axes[d]``; at most 62 points) the box is a bit mask of grid points and
    ``left_mask[v]`` the points split ``v`` sends left.  ``xt`` (n_features, n_rows); ``w`` row
    weights; ``acc`` (n_raw, g0 * max(g1, 1)) and ``ice`` (n_rows, n_raw, size) difference arrays
    (empty: skipped).
    """
    n_raw = value.shape[1]
    g0 = grid0.shape[0]
    g1 = grid1.shape[0]
    m0 = mask_axes[0] != 0
    m1 = mask_axes[1] != 0
    do_avg = acc.shape[0] > 0
    do_ice = ice.shape[0] > 0
    m = rows.shape[0]
    seg = np.empty(m, dtype=np.int64)
    tmp = np.empty(m, dtype=np.int64)
    st = np.empty((4, 7), dtype=np.int64)  # pending: node, segment start/end, box; grows as needed
    if m == 0:
        return
    # a 2-D view made once (a view per leaf costs reference counting): row ``r * n_raw + k``
    ice2 = ice.reshape(ice.shape[0] * ice.shape[1], ice.shape[2])
    full0 = (np.int64(1) << g0) - 1 if m0 else 0  # the whole grid: all points of a mask axis, else [0, g)
    full1 = (np.int64(1) << g1) - 1 if m1 else 0
    for t in range(roots.shape[0]):
        for k in range(m):
            seg[k] = rows[k]
        st = _push(st, 0, roots[t], 0, m, full0, g0, full1, g1)
        top = 1
        while top > 0:
            top -= 1
            v, s, e = st[top, 0], st[top, 1], st[top, 2]
            lo0, hi0, lo1, hi1 = st[top, 3], st[top, 4], st[top, 5], st[top, 6]
            while True:  # follow one child in place, push the other (if any)
                f = nodes[v, 0]
                aux = nodes[v, 3]
                if f >= 0 and axis_of[f] < 0:
                    if e - s == 1:  # a single row: plain descent
                        go = _goes_left(xt[f, seg[s]], thr[v], aux, cat_left)
                        v = nodes[v, 1] if go else nodes[v, 2]
                        continue
                    nl = _partition(seg, tmp, s, e, xt, f, thr[v], aux, cat_left)
                    if nl == 0:
                        v = nodes[v, 2]
                    elif nl == e - s:
                        v = nodes[v, 1]
                    else:
                        st = _push(st, top, nodes[v, 2], s + nl, e, lo0, hi0, lo1, hi1)
                        top += 1
                        v = nodes[v, 1]
                        e = s + nl
                    continue
                if f == LEAF:
                    if do_avg:
                        total = 0.0
                        for k in range(s, e):
                            total += w[seg[k]]
                        for k in range(n_raw):
                            _add_leaf(acc, k, 0, lo0, hi0, lo1, hi1, g0, g1, m0, m1, value[v, k] * total)
                    if do_ice:
                        for q in range(s, e):
                            r = seg[q]
                            for k in range(n_raw):
                                _add_leaf(ice2, r * n_raw + k, 0, lo0, hi0, lo1, hi1, g0, g1, m0, m1, value[v, k])
                    break
                # S-split: each child keeps its side of the grid box; a child with an empty box is cut
                a0 = axis_of[f] == 0
                if (m0 and a0) or (m1 and not a0):
                    cur = lo0 if a0 else lo1
                    l_lo, l_hi = cur & left_mask[v], g0 if a0 else g1
                    r_lo, r_hi = cur & ~left_mask[v], l_hi
                    go_l = l_lo != 0
                    go_r = r_lo != 0
                else:
                    if a0:
                        sp = _n_below(grid0, thr[v])
                        r_lo, r_hi, l_lo, l_hi = max(lo0, sp), hi0, lo0, min(hi0, sp)
                    else:
                        sp = _n_below(grid1, thr[v])
                        r_lo, r_hi, l_lo, l_hi = max(lo1, sp), hi1, lo1, min(hi1, sp)
                    go_l = l_lo < l_hi
                    go_r = r_lo < r_hi
                f = 0 if a0 else 1  # the axis from here on
                if go_r and go_l:
                    st = _push(st, top, nodes[v, 2], s, e, r_lo if f == 0 else lo0, hi0, lo1 if f == 0 else r_lo, hi1)
                    top += 1
                if go_l:
                    v = nodes[v, 1]
                    lo, hi = l_lo, l_hi
                else:
                    v = nodes[v, 2]
                    lo, hi = r_lo, r_hi
                if f == 0:
                    lo0, hi0 = lo, hi
                else:
                    lo1, hi1 = lo, hi


@njit(cache=True, nogil=True)
def plan_stats(nodes, thr, cover, roots, axis_of, mask_axes, left_mask, grid0, grid1, n_rows):
    """Expected work of :func:`walk` for ``n_rows`` rows distributed like the training cover.

    Returns ``(visits, visited)``: expected (row, node) incidences per row and expected visited
    nodes holding a row.  A row takes a C-split's branches with the training proportions and every
    live branch of an S-split; branches under 0.001 expected rows are cut.  Arguments as for :func:`walk`.
    """
    g0 = grid0.shape[0]
    g1 = grid1.shape[0]
    m0 = mask_axes[0] != 0
    m1 = mask_axes[1] != 0
    visits = 0.0
    visited = 0.0
    st = np.empty((4, 2))  # node, share of rows; grows as needed
    bx = np.empty((4, 4), dtype=np.int64)  # its box lo0, hi0, lo1, hi1 (mask axes: the mask in lo)
    for t in range(roots.shape[0]):
        st[0, 0] = roots[t]
        st[0, 1] = 1.0
        bx[0, 0] = (np.int64(1) << g0) - 1 if m0 else 0
        bx[0, 1] = g0
        bx[0, 2] = (np.int64(1) << g1) - 1 if m1 else 0
        bx[0, 3] = g1
        top = 1
        while top > 0:
            if top + 2 >= st.shape[0]:
                st = _grow_rows(st)
                bx = _grow_rows(bx)
            top -= 1
            v = int(st[top, 0])
            mass = st[top, 1]
            visits += mass
            visited += min(1.0, n_rows * mass)
            f = nodes[v, 0]
            if f == LEAF:
                continue
            box0, box1, box2, box3 = bx[top, 0], bx[top, 1], bx[top, 2], bx[top, 3]
            lc = nodes[v, 1]
            rc = nodes[v, 2]
            axis = axis_of[f]
            for side in range(2):
                child = lc if side == 0 else rc
                share = mass
                lo0, hi0, lo1, hi1 = box0, box1, box2, box3
                if axis < 0:
                    tot = cover[lc] + cover[rc]
                    share = mass * (cover[child] / tot if tot > 0 else 0.5)
                    if n_rows * share < 1e-3:
                        continue
                else:  # the child's side of the box on the split's axis; an empty side is cut
                    lo, hi = (lo0, hi0) if axis == 0 else (lo1, hi1)
                    if (axis == 0 and m0) or (axis == 1 and m1):
                        lo = lo & (left_mask[v] if side == 0 else ~left_mask[v])
                        if lo == 0:
                            continue
                    else:
                        sp = _n_below(grid0 if axis == 0 else grid1, thr[v])
                        if side == 0:
                            hi = min(hi, sp)
                        else:
                            lo = max(lo, sp)
                        if lo >= hi:
                            continue
                    if axis == 0:
                        lo0, hi0 = lo, hi
                    else:
                        lo1, hi1 = lo, hi
                st[top, 0] = child
                st[top, 1] = share
                bx[top, 0] = lo0
                bx[top, 1] = hi0
                bx[top, 2] = lo1
                bx[top, 3] = hi1
                top += 1
    return visits, visited


DESCEND_LANES = 8  # rows a descent carries in lock step (their node loads overlap)


@njit(cache=True, nogil=True)
def descend(nodes, thr, cat_left, value, roots, xa):
    """(n_rows, n_raw) sum over the trees ``roots`` of the leaf value each row of ``xa`` (n_rows,
    n_features) reaches (the reading's own prediction, for the engine's self-check); tree by tree,
    :data:`DESCEND_LANES` rows one level per step, the child picked by index, not by a branch."""
    n_rows = xa.shape[0]
    n_raw = value.shape[1]
    out = np.zeros((n_rows, n_raw))
    at = np.empty(DESCEND_LANES, dtype=np.int64)
    for t in range(roots.shape[0]):
        root = roots[t]
        for i0 in range(0, n_rows, DESCEND_LANES):
            m = min(DESCEND_LANES, n_rows - i0)
            for a in range(m):
                at[a] = root
            active = m
            while active > 0:
                active = 0
                for a in range(m):
                    v = at[a]
                    f = nodes[v, 0]
                    if f != LEAF:
                        go = _goes_left(xa[i0 + a, f], thr[v], nodes[v, 3], cat_left)
                        at[a] = nodes[v, 2 - np.int64(go)]
                        active += 1
            for a in range(m):
                for k in range(n_raw):
                    out[i0 + a, k] += value[at[a], k]
    return out


@njit(cache=True, nogil=True)
def leaf_rank(nodes, thr, cat_left, root, end, xt):
    """(n_rows,) the preorder position of the leaf each row of ``xt`` (n_features, n_rows) reaches in
    the tree of nodes ``root .. end - 1`` (:func:`._tree_compiled.locality_order`)."""
    n = end - root
    rank = np.zeros(n, dtype=np.int64)
    st = np.empty(64, dtype=np.int64)
    st[0] = root
    top = 1
    k = 0
    while top > 0:
        top -= 1
        v = st[top]
        rank[v - root] = k
        k += 1
        if nodes[v, 0] != LEAF:
            if top + 2 > st.shape[0]:
                st = _grow(st)
            st[top] = nodes[v, 2]
            st[top + 1] = nodes[v, 1]
            top += 2
    out = np.empty(xt.shape[1], dtype=np.int64)
    for i in range(xt.shape[1]):
        v = root
        while nodes[v, 0] != LEAF:
            if _goes_left(xt[nodes[v, 0], i], thr[v], nodes[v, 3], cat_left):
                v = nodes[v, 1]
            else:
                v = nodes[v, 2]
        out[i] = rank[v - root]
    return out


@njit(cache=True, nogil=True)
def _curve_boxes(nodes, thr, root, end, set_of, grids, glen, bx):
    """Grid box ``[bx[v - root, k, 0], bx[v - root, k, 1])`` of every node of one tree for every 1-D set ``k``."""
    n_sets = glen.shape[0]
    for k in range(n_sets):
        bx[0, k, 0] = 0
        bx[0, k, 1] = glen[k]
    st = np.empty(64, dtype=np.int64)
    st[0] = root
    top = 1
    while top > 0:
        top -= 1
        v = st[top]
        f = nodes[v, 0]
        if f == LEAF:
            continue
        a = v - root
        lc = nodes[v, 1]
        rc = nodes[v, 2]
        for k in range(n_sets):
            bx[lc - root, k, 0] = bx[a, k, 0]
            bx[lc - root, k, 1] = bx[a, k, 1]
            bx[rc - root, k, 0] = bx[a, k, 0]
            bx[rc - root, k, 1] = bx[a, k, 1]
        k = set_of[f]
        if k >= 0:
            sp = _n_below_of(grids, k, 0, glen[k], thr[v])
            bx[lc - root, k, 1] = min(bx[a, k, 1], sp)
            bx[rc - root, k, 0] = max(bx[a, k, 0], sp)
        if top + 2 > st.shape[0]:
            st = _grow(st)
        st[top] = rc
        st[top + 1] = lc
        top += 2


@njit(cache=True, nogil=True)
def walk_curves(nodes, thr, cat_left, value, roots, set_of, grids, glen, off, max_tree, xt, rows, w, acc):
    """The weighted averages of :func:`walk` for ``K`` 1-D feature sets on distinct numeric columns at
    once, for deep trees (few rows per leaf).

    Rows of state -1 follow their *own path*, once for all sets; at a split on the feature of set
    ``k`` they also cross to the other child with state ``k`` (counted for set ``k`` only), and rows
    of state ``k`` go to both children there.  ``set_of[c]``: the set whose feature is column ``c``
    (-1: none); ``grids[k, 0, :glen[k]]`` sorted grids; ``acc`` (n_raw, off[K]); ``max_tree`` the
    largest tree's node count.  Others as for :func:`walk`.
    """
    n_raw = value.shape[1]
    n_sets = glen.shape[0]
    m = rows.shape[0]
    if m == 0:
        return
    seg = np.empty(m, dtype=np.int64)
    tmp = np.empty(m, dtype=np.int64)
    bx = np.empty((max_tree, n_sets, 2), dtype=np.int32)  # grid box of every node and set: lo, hi
    st = np.empty((64, 4), dtype=np.int64)  # pending: node, segment start, end, state
    n_nodes = nodes.shape[0]
    for t in range(roots.shape[0]):
        root = roots[t]
        end = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        _curve_boxes(nodes, thr, root, end, set_of, grids, glen, bx)
        for k in range(m):
            seg[k] = rows[k]
        st = _push_state(st, 0, root, 0, m, -1)
        top = 1
        while top > 0:
            top -= 1
            v, s, e, state = st[top, 0], st[top, 1], st[top, 2], st[top, 3]
            while True:
                f = nodes[v, 0]
                if f == LEAF:
                    total = 0.0
                    for q in range(s, e):
                        total += w[seg[q]]
                    a = v - root
                    for k in range(n_sets):
                        if (state == -1 or state == k) and bx[a, k, 0] < bx[a, k, 1]:
                            for j in range(n_raw):
                                val = value[v, j] * total
                                acc[j, off[k] + bx[a, k, 0]] += val
                                if bx[a, k, 1] < glen[k]:
                                    acc[j, off[k] + bx[a, k, 1]] -= val
                    break
                kf = set_of[f]
                lc = nodes[v, 1]
                rc = nodes[v, 2]
                if state >= 0 and kf == state:  # the set's own feature: both children with a grid point
                    go_l = bx[lc - root, kf, 0] < bx[lc - root, kf, 1]
                    go_r = bx[rc - root, kf, 0] < bx[rc - root, kf, 1]
                    if go_l and go_r:
                        st = _push_state(st, top, rc, s, e, state)
                        top += 1
                    v = lc if go_l else rc
                    continue
                aux = nodes[v, 3]
                if e - s == 1 and (state >= 0 or kf < 0):  # one row, its own side only: plain descent
                    v = lc if _goes_left(xt[f, seg[s]], thr[v], aux, cat_left) else rc
                    continue
                nl = _partition(seg, tmp, s, e, xt, f, thr[v], aux, cat_left)
                if state == -1 and kf >= 0:  # each part also crosses to the other child for set kf
                    if nl > 0 and bx[rc - root, kf, 0] < bx[rc - root, kf, 1]:
                        st = _push_state(st, top, rc, s, s + nl, kf)
                        top += 1
                    if nl < e - s and bx[lc - root, kf, 0] < bx[lc - root, kf, 1]:
                        st = _push_state(st, top, lc, s + nl, e, kf)
                        top += 1
                if nl == 0:
                    v = rc
                elif nl == e - s:
                    v = lc
                else:
                    st = _push_state(st, top, rc, s + nl, e, state)
                    top += 1
                    v = lc
                    e = s + nl


# --------------------------------------------------------------------------- row bitsets (small trees, many rows)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    """Set bits of a uint64 (the SWAR count; LLVM turns it into one ``popcnt``)."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return (x * _H01) >> np.uint64(56)


@njit(cache=True, nogil=True)
def left_bits(xc, cat_left, ent_feat, ent_thr, ent_aux, n_words):
    """Row bitsets of the split conditions of a model: ``bits[e]`` the rows of ``xc`` (n_features, m)
    that entry ``e`` sends left, and ``nan_bits[c]`` the rows with NaN in column ``c``.

    An entry is ``x <= ent_thr[e]`` on column ``ent_feat[e]`` (``ent_aux[e] < 0``; entries sorted by
    column, then threshold) or categorical (``ent_aux[e]``: its row of ``cat_left``)."""
    n_ent = ent_feat.shape[0]
    m = xc.shape[1]
    bits = np.zeros((n_ent, n_words), dtype=np.uint64)
    nan_bits = np.zeros((xc.shape[0], n_words), dtype=np.uint64)
    nan_done = np.zeros(xc.shape[0], dtype=np.bool_)
    one = np.uint64(1)
    e = 0
    while e < n_ent:
        f = ent_feat[e]
        if ent_aux[e] >= 0:  # categorical: its own bitset
            for i in range(m):
                if cat_left[ent_aux[e], _category_code(xc[f, i])]:
                    bits[e, i >> 6] |= one << np.uint64(i & 63)
            e += 1
            continue
        a = e
        while e < n_ent and ent_feat[e] == f and ent_aux[e] < 0:
            e += 1
        k = e - a
        for i in range(m):
            x = xc[f, i]
            if x != x:
                if not nan_done[f]:
                    nan_bits[f, i >> 6] |= one << np.uint64(i & 63)
                continue
            lo = 0
            hi = k
            while lo < hi:  # thresholds below x
                mid = (lo + hi) // 2
                if ent_thr[a + mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < k:
                bits[a + lo, i >> 6] |= one << np.uint64(i & 63)
        nan_done[f] = True
        for j in range(a + 1, e):
            for q in range(n_words):
                bits[j, q] |= bits[j - 1, q]
    return bits, nan_bits


@njit(cache=True, nogil=True, inline="always")
def _pop_bits(st, sb, top, cur, n_words):
    """Pop :func:`walk_bits`' stack into ``cur``; returns the new top, the node and its box."""
    top -= 1
    for q in range(n_words):
        cur[q] = sb[top, q]
    return top, st[top, 0], st[top, 1], st[top, 2], st[top, 3], st[top, 4]


@njit(cache=True, nogil=True)
def walk_bits(nodes, value, roots, node_entry, bits, nan_bits, axis_of, mask_axes, left_mask, grids, glen, off,
              thr, planes, scale, acc):
    """The weighted averages of :func:`walk` for ``K`` feature sets, the rows of a node held as one bitset.

    For small trees with many rows per leaf: a complement split ANDs the node's bitset with the rows
    its condition sends left (``bits[node_entry[v]]``, plus ``nan_bits`` where NaN goes left) or with
    their complement; at a leaf the summed weights are ``sum_b scale[b] * popcount(rows & planes[b])``
    (integer weights in bit planes: exact).  ``axis_of``, ``mask_axes``, ``left_mask`` as for
    :func:`walk`, per set; ``grids[k, d, :glen[k, d]]`` the sorted grid of axis ``d`` of set ``k``;
    set ``k`` in ``acc[:, off[k]:off[k + 1]]``.
    """
    n_raw = value.shape[1]
    n_sets = axis_of.shape[0]
    n_words = planes.shape[1]
    n_planes = planes.shape[0]
    rows = np.zeros(n_words, dtype=np.uint64)
    for b in range(n_planes):
        for q in range(n_words):
            rows[q] |= planes[b, q]
    cur = np.empty(n_words, dtype=np.uint64)
    sb = np.empty((16, n_words), dtype=np.uint64)  # pending nodes: their bitsets
    st = np.empty((16, 5), dtype=np.int64)  # and node, box lo0, hi0, lo1, hi1
    for t in range(roots.shape[0]):
        for k in range(n_sets):
            m0 = mask_axes[k, 0] != 0
            m1 = mask_axes[k, 1] != 0
            g0 = glen[k, 0]
            g1 = glen[k, 1]
            for q in range(n_words):
                cur[q] = rows[q]
            v = roots[t]
            lo0 = (np.int64(1) << g0) - 1 if m0 else 0
            hi0 = g0
            lo1 = (np.int64(1) << g1) - 1 if m1 else 0
            hi1 = g1
            top = 0
            while True:
                f = nodes[v, 0]
                if f == LEAF:
                    total = 0.0
                    for b in range(n_planes):
                        cnt = np.uint64(0)
                        for q in range(n_words):
                            cnt += _popcount(cur[q] & planes[b, q])
                        total += scale[b] * np.float64(cnt)
                    if total != 0.0:
                        for j in range(n_raw):
                            _add_leaf(acc, j, off[k], lo0, hi0, lo1, hi1, g0, g1, m0, m1, value[v, j] * total)
                    if top == 0:
                        break
                    top, v, lo0, hi0, lo1, hi1 = _pop_bits(st, sb, top, cur, n_words)
                    continue
                if top == st.shape[0]:
                    st = _grow_rows(st)
                    sb = _grow_rows(sb)
                a = axis_of[k, f]
                if a < 0:  # complement split: left rows stay in ``cur``, right rows go to the stack
                    e = node_entry[v]
                    nan_left = nodes[v, 3] == -2
                    any_l = np.uint64(0)
                    any_r = np.uint64(0)
                    for q in range(n_words):
                        go = bits[e, q]
                        if nan_left:
                            go |= nan_bits[f, q]
                        c = cur[q]
                        lw = c & go
                        rw = c & ~go
                        cur[q] = lw
                        sb[top, q] = rw
                        any_l |= lw
                        any_r |= rw
                    if any_r != 0:
                        if any_l != 0:
                            st[top, 0] = nodes[v, 2]
                            st[top, 1] = lo0
                            st[top, 2] = hi0
                            st[top, 3] = lo1
                            st[top, 4] = hi1
                            top += 1
                            v = nodes[v, 1]
                        else:
                            for q in range(n_words):
                                cur[q] = sb[top, q]
                            v = nodes[v, 2]
                    elif any_l != 0:
                        v = nodes[v, 1]
                    else:  # no rows (cannot happen below a non-empty node, kept for safety)
                        if top == 0:
                            break
                        top, v, lo0, hi0, lo1, hi1 = _pop_bits(st, sb, top, cur, n_words)
                    continue
                # split on a feature of interest: each child keeps its side of the grid box
                if (a == 0 and m0) or (a == 1 and m1):
                    c = lo0 if a == 0 else lo1
                    l_lo, l_hi = c & left_mask[k, v], g0 if a == 0 else g1
                    r_lo, r_hi = c & ~left_mask[k, v], l_hi
                    go_l = l_lo != 0
                    go_r = r_lo != 0
                else:
                    sp = _n_below_of(grids, k, a, glen[k, a], thr[v])
                    lo = lo0 if a == 0 else lo1
                    hi = hi0 if a == 0 else hi1
                    r_lo, r_hi, l_lo, l_hi = max(lo, sp), hi, lo, min(hi, sp)
                    go_l = l_lo < l_hi
                    go_r = r_lo < r_hi
                if go_l and go_r:
                    st[top, 0] = nodes[v, 2]
                    st[top, 1] = r_lo if a == 0 else lo0
                    st[top, 2] = r_hi if a == 0 else hi0
                    st[top, 3] = lo1 if a == 0 else r_lo
                    st[top, 4] = hi1 if a == 0 else r_hi
                    for q in range(n_words):
                        sb[top, q] = cur[q]
                    top += 1
                if go_l:
                    v = nodes[v, 1]
                    lo, hi = l_lo, l_hi
                else:
                    v = nodes[v, 2]
                    lo, hi = r_lo, r_hi
                if a == 0:
                    lo0, hi0 = lo, hi
                else:
                    lo1, hi1 = lo, hi
