"""Cost model of the exact tree engine: whether it beats brute force.

Rough CPU-second estimates from per-operation costs (``_COST``; only their ratios matter): the
compiled walk by simulating it on a few trees, brute force as rows x grid points x descents, and
reading an XGBoost / LightGBM / CatBoost dump.
"""

from __future__ import annotations

import numpy as np

from ._tree_compiled import _kernel, _KernelTable
from ._tree_model import TreeModel, is_catboost

_KERNEL_SAMPLE_TREES = 8  # trees whose pruned walk is simulated for the cost estimate

# ... and at most about this many nodes in them (at least one tree): planning stays cheap for fully grown
# forests on many rows.
_KERNEL_SAMPLE_NODES = 2**18


# Rough per-operation CPU costs in seconds on one core (only their ratios matter for the choices).
_COST = {
    "brute_node": 4e-9,  # one node of a compiled descent in the model's predict
    "brute_tree": 1e-8,  # per tree and stacked row in predict
    "brute_row": 3e-8,  # per stacked row (building the block, reducing the predictions)
    "brute_tree_catboost": 5.3e-9,  # per tree and stacked row in CatBoost's predict (depth 4-8, 1 thread)
    "ice_cell": 5e-9,  # per row x grid point x raw output on the per-row paths
    "kernel_visit": 6e-9,  # one (row, node) incidence of the compiled walk
    "kernel_node": 3e-8,  # one visited node of the compiled walk
    "kernel_table": 1e-8,  # per node and feature set: the compiled walk's node table
}

def _external_read_dominates(estimator, n_rows: int, n_grid: int) -> bool:
    """Whether reading an XGBoost / LightGBM / CatBoost dump costs more than brute force would.

    Reading (the dump, the offset probe and the self-check) costs a fixed :data:`_READ_FIXED`
    seconds plus :data:`_READ_PER_NODE` per node, set so that small models on few rows stay with
    brute force.
    """
    if is_catboost(estimator):
        params = estimator.get_params() if hasattr(estimator, "get_params") else {}
        # JSON export through a file: a fixed cost plus a cost per node
        n_trees = int(getattr(estimator, "tree_count_", None) or params.get("iterations") or 1000)
        nodes = 2 ** (int(params.get("depth") or params.get("max_depth") or 6) + 1) - 1
        return n_rows * n_grid * n_trees * _COST["brute_tree_catboost"] < 0.015 + n_trees * nodes * 1.5e-6
    # the wrappers of XGBoost and LightGBM keep every parameter as an attribute (get_params is slow)
    n_trees = int(getattr(estimator, "n_estimators", None) or 100)
    if type(estimator).__module__.startswith("lightgbm"):
        nodes = 2 * int(getattr(estimator, "num_leaves", None) or 31) - 1
    else:
        depth = getattr(estimator, "max_depth", None) or 6
        leaves = getattr(estimator, "max_leaves", None) or 0
        nodes = 2 * min(2 ** int(depth), int(leaves) or 2 ** int(depth)) - 1
    return n_trees * n_rows * n_grid * 3e-8 < _READ_FIXED + n_trees * nodes * _READ_PER_NODE


#: Reading an XGBoost / LightGBM dump: fixed seconds (dump call, offset probe, self-check) ...
_READ_FIXED = 5e-3
#: ... and seconds per node (see :func:`_external_read_dominates`).
_READ_PER_NODE = 4e-6

def _expected_depth(model: TreeModel) -> float:
    """Expected number of splits a row meets, summed over the trees (training cover as distribution)."""
    cover = model.cover
    if cover is None:
        return float(_n_levels(model)) * len(model.roots) / 2
    per_tree = np.add.reduceat(np.where(model.feature >= 0, cover, 0.0), model.roots)
    root = cover[model.roots]
    return float(np.sum(per_tree / np.where(root > 0, root, 1)))

def _n_levels(model: TreeModel) -> int:
    """Depth of the deepest tree plus one (all trees at once)."""
    n, nodes = 0, model.roots
    while nodes.size:
        n += 1
        inner = nodes[model.feature[nodes] >= 0]
        nodes = np.concatenate([model.left[inner], model.right[inner]])
    return n

def _kernel_costs(model: TreeModel, table: _KernelTable, n_rows: int, depth: float) -> tuple[float, float]:
    """(compiled walk, brute force) cost estimates; the walk is simulated on a few evenly spaced trees
    (at most ``_KERNEL_SAMPLE_TREES``, holding at most about ``_KERNEL_SAMPLE_NODES`` nodes)."""
    kern = _kernel()
    roots = model.roots
    per_tree = len(model.feature) / len(roots)
    n_pick = min(len(roots), _KERNEL_SAMPLE_TREES, max(1, int(_KERNEL_SAMPLE_NODES // per_tree)))
    pick = np.unique(np.linspace(0, len(roots) - 1, n_pick).round().astype(int))
    cover = model.cover if model.cover is not None else np.ones(len(model.feature))
    visits, nodes = kern.plan_stats(table.nodes, table.thr, np.ascontiguousarray(cover, dtype=np.float64),
                                    np.ascontiguousarray(roots[pick], dtype=np.int64), *table.args, float(n_rows))
    scale = len(roots) / len(pick)
    tree = n_rows * visits * scale * _COST["kernel_visit"] + nodes * scale * _COST["kernel_node"]
    tree += len(model.feature) * _COST["kernel_table"]
    if _is_catboost(model):  # oblivious trees: CatBoost's predict is one table lookup per tree
        brute = n_rows * table.size * (_COST["brute_row"] + len(roots) * _COST["brute_tree_catboost"])
    else:
        brute = n_rows * table.size * (_COST["brute_row"] + len(roots) * _COST["brute_tree"]
                                       + depth * _COST["brute_node"])
    return tree, brute

def _is_catboost(model: TreeModel) -> bool:
    return model.source is not None and type(model.source).__name__ == "CatBoostReader"
