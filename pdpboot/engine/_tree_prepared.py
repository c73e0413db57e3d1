"""A tree model read once (:class:`PreparedTrees`) and one planned feature set (:class:`TreePlan`).

Private helper of :mod:`pdpboot.engine.tree` (which re-exports both names): reading the model
(:mod:`._tree_model`), converting the background rows, planning a feature set (grid table and
cost: the cost model below) and computing PD / ICE with the compiled walk (:mod:`._tree_compiled`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ._catboost import is_catboost
from ._tree_check import leaf_sums, tree_probe
from ._tree_compiled import (
    _MASK_MAX,
    NEEDS_NUMBA,
    _bits_pay,
    _kernel,
    _kernel_base,
    _kernel_handles,
    _kernel_pd,
    _kernel_pd_bits,
    _kernel_pd_curves,
    _kernel_table,
    _KernelTable,
    curves_walkable,
    kernel_available,
    locality_order,
)
from ._tree_model import TreeModel, UnsupportedModel, model_grid, read_model, to_array
from .inputs import row_weights


@dataclass(frozen=True)
class TreePlan:
    """One feature set of a :class:`PreparedTrees`: model columns, grid table and costs.

    ``tree_cost`` and ``brute_cost`` are rough CPU-second estimates of the average by the tree engine
    and by brute force; ``ice_cost`` is added to both when per-row values are needed.  ``boxes`` is
    None (``tree_cost`` infinite) for a mask-axis grid of more than 62 points (brute force computes it).
    """

    feature_idx: tuple[int, ...]
    s_cols: list
    boxes: _KernelTable | None
    tree_cost: float
    brute_cost: float
    ice_cost: float

    def prefers_tree(self, individual: bool = False) -> bool:
        """Whether the tree engine is estimated to be no slower than brute force."""
        extra = self.ice_cost if individual else 0.0
        return self.tree_cost + extra <= self.brute_cost + extra

class PreparedTrees:
    """A supported tree model read once, with background rows ``X`` in its input space.

    ``converted`` is ``X`` already through a scikit-learn estimator's own validation.  Raises
    ``ValueError`` when the exact tree engine does not support the estimator / response.
    """

    def __init__(self, estimator, X, response_method: str, *, converted: np.ndarray | None = None):
        if not kernel_available():
            raise ValueError(f"{NEEDS_NUMBA[0].upper()}{NEEDS_NUMBA[1:]}; use the brute engine.")
        try:
            self.model = read_model(estimator, response_method)
        except UnsupportedModel as exc:
            raise ValueError(
                f"The exact tree engine does not support this case ({exc}); use the brute engine."
            ) from None
        self._kernel_base = None  # built on first use; for XGBoost / LightGBM by the offset's descent below
        if self.model.source is not None:  # XGBoost / LightGBM
            self.xa = np.ascontiguousarray(self.model.source.to_array(X))
            model = self.model
            self.model = _finish_external(model, X, self.xa, lambda xt: leaf_sums(model, self.kernel_base, xt))
        else:  # ``converted``: X already through the estimator's own validation (see ``prepare``)
            self.xa = np.ascontiguousarray(to_array(estimator, X) if converted is None else converted)
        self.n_features = self.xa.shape[1]
        self._xt = None
        self._depth = None
        self._local = False

    @property
    def xt(self) -> np.ndarray:
        """The background rows column-major as float64 (n_features, n_rows), for the compiled walk."""
        if self._xt is None:
            self._xt = np.ascontiguousarray(self.xa.T, dtype=np.float64)
        return self._xt

    def kernel_base(self) -> tuple[np.ndarray, np.ndarray]:
        """The compiled walk's node table and thresholds (built on first use, shared by all walks)."""
        if self._kernel_base is None:
            self._kernel_base = _kernel_base(self.model)
        return self._kernel_base

    @property
    def local(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(order, ``xt[:, order]``) of :func:`._tree_compiled.locality_order` (first use; None for few rows)."""
        if self._local is False:
            order = locality_order(self.model, self.kernel_base(), self.xt)
            self._local = None if order is None else (order, np.ascontiguousarray(self.xt[:, order]))
        return self._local

    def probe(self, rows: np.ndarray, subs: dict) -> np.ndarray:
        """The self-check's probe rows in the trees' space (:func:`._tree_check.tree_probe`)."""
        return tree_probe(self, rows, subs)

    def plan(self, feature_idx, grid_values) -> TreePlan:
        """Validate one feature set and its grids; propagate the grid boxes; estimate costs."""
        feature_idx, grids = _check_features(feature_idx, grid_values, self.n_features)
        model = self.model
        s_cols = [int(model.columns[j]) for j in feature_idx]
        grids = [model_grid(model, j, g) for j, g in zip(feature_idx, grids)]
        return self.plan_columns(feature_idx, s_cols, grids)

    def plan_columns(self, feature_idx, s_cols: list, grids: list) -> TreePlan:
        """Plan on model columns: ``s_cols[d]`` an int with a 1-D grid, or a tuple of columns
        with a grid of shape (n_grid, len(columns)) (one feature spread over several columns)."""
        model = self.model
        if not _kernel_handles(model, s_cols, grids):
            return TreePlan(tuple(feature_idx), list(s_cols), None, np.inf, 0.0, 0.0)
        if self._depth is None:
            self._depth = _expected_depth(model)
        table = _kernel_table(model, self.kernel_base(), s_cols, grids)
        tree_cost, brute_cost = _kernel_costs(model, table, len(self.xa), self._depth)
        ice_cost = len(self.xa) * table.size * model.value.shape[1] * _COST["ice_cell"]
        return TreePlan(tuple(feature_idx), list(s_cols), table, tree_cost, brute_cost, ice_cost)

    def partial_dependence(self, plan: TreePlan, *, weights=None, average: bool = True,
                           individual: bool = False) -> tuple[np.ndarray | None, np.ndarray | None]:
        """PD (n_outputs, *grid_shape) and/or ICE (n_rows, n_outputs, *grid_shape) of one plan."""
        if not (average or individual):
            raise ValueError("Nothing to compute: set average=True and/or individual=True.")
        if plan.boxes is None:
            raise ValueError(f"The exact tree engine takes categorical, one-hot and NaN-holding grids of at most "
                             f"{_MASK_MAX} points; use the brute engine for feature set {plan.feature_idx}.")
        model = self.model
        w = _check_weights(weights, len(self.xa))
        local = self.local if model.link is None and not individual else None
        return _kernel_pd(model, self.xt, plan.boxes, w, average, individual, local)

    def partial_dependence_many(self, plans: Sequence[TreePlan], *, weights=None, average: bool = True,
                                individual: bool = False) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
        """:meth:`partial_dependence` of several plans; average-only plans of a response linear in the tree
        outputs share walks (the bitset walk for small trees, the curves walk for 1-D curves)."""
        if not (average or individual):
            raise ValueError("Nothing to compute: set average=True and/or individual=True.")
        w = _check_weights(weights, len(self.xa))
        out: list = [None] * len(plans)
        shared = [k for k, p in enumerate(plans) if p.boxes is not None]
        if self.model.link is not None or individual or len(shared) < 2:
            shared = []
        if shared and _bits_pay(self.model, len(self.xa) if w is None else int(np.count_nonzero(w))):
            avgs = _kernel_pd_bits(self.model, self.xt, [plans[k].boxes for k in shared], w)
            for k, avg in zip(shared, avgs or ()):
                out[k] = (avg, None)
        curves = [k for k in shared if out[k] is None and len(plans[k].boxes.shape) == 1]
        if curves_walkable([plans[k].boxes for k in curves]):
            local = self.local
            xt, wl = (self.xt, w) if local is None else (local[1], None if w is None else w[local[0]])
            for k, avg in zip(curves, _kernel_pd_curves(self.model, xt, [plans[k].boxes for k in curves], wl)):
                out[k] = (avg, None)
        for k, plan in enumerate(plans):
            if out[k] is None:
                out[k] = self.partial_dependence(plan, weights=weights, average=average, individual=individual)
        return out

def _check_features(feature_idx, grid_values, n_features: int):
    idx = tuple(int(j) for j in np.atleast_1d(feature_idx))
    if len(idx) not in (1, 2):
        raise ValueError(f"feature_idx must hold 1 or 2 column positions, got {feature_idx!r}.")
    if len(set(idx)) != len(idx):
        raise ValueError(f"feature_idx must not repeat a column, got {feature_idx!r}.")
    if any(j < 0 or j >= n_features for j in idx):
        raise ValueError(f"feature_idx {feature_idx!r} out of range for {n_features} features.")
    if len(grid_values) != len(idx):
        raise ValueError(f"Need one grid per feature: {len(idx)} features, {len(grid_values)} grids.")
    grids = [np.asarray(g).reshape(-1) if np.ndim(g) else np.asarray([g]) for g in grid_values]
    if any(len(g) == 0 for g in grids):
        raise ValueError("Every grid must hold at least one value.")
    return idx, grids

def _check_weights(weights, n_rows: int) -> np.ndarray | None:
    return None if weights is None else row_weights(weights, n_rows)


def _finish_external(model: TreeModel, X, xa: np.ndarray, sums) -> TreeModel:
    """Categories of the input columns and the constant raw offset (base score / init score).

    The offset is the dump's where the reader knows it (``dump_offset``), else the model's own margin
    minus the leaf sums (``sums(rows)``) on a few background rows; the self-check tests either.
    """
    reader = model.source
    categories = reader.categories if any(c is not None for c in reader.categories) else None
    if hasattr(reader, "dump_offset"):
        return replace(model, categories=categories, offset=np.asarray(reader.dump_offset(), dtype=np.float64))
    k = min(len(xa), 16)
    probe = X.iloc[:k] if hasattr(X, "iloc") else np.asarray(X)[:k]
    offset = np.median(reader.margin(probe) - sums(xa[:k]), axis=0)
    return replace(model, categories=categories, offset=offset)


# Cost model: rough per-operation CPU seconds on one core (only their ratios matter); the compiled
# walk is simulated on at most _KERNEL_SAMPLE_TREES trees of at most about _KERNEL_SAMPLE_NODES nodes.
_KERNEL_SAMPLE_TREES = 8
_KERNEL_SAMPLE_NODES = 2**18
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
    """Whether reading an XGBoost / LightGBM / CatBoost dump (:data:`_READ_FIXED` seconds plus
    :data:`_READ_PER_NODE` per node) costs more than brute force would."""
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


_READ_FIXED = 5e-3  #: seconds of reading an XGBoost / LightGBM dump (dump call, offset probe, self-check)
_READ_PER_NODE = 4e-6  #: and seconds per node

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
    """(compiled walk, brute force) cost estimates; the walk simulated on a few evenly spaced trees."""
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
