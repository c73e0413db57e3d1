"""Exact partial dependence and ICE for tree models, without brute force.

Supported: scikit-learn trees, forests and (histogram) gradient boosting, XGBoost,
LightGBM and CatBoost (symmetric trees, numeric features), read from their own
model dumps (:mod:`._xgboost`, :mod:`._lightgbm`, :mod:`._catboost`).

The result equals scikit-learn's brute-force PD/ICE (set the feature(s) of interest
to each grid value for every background row, predict, average) up to floating-point
rounding, but each row is pushed through each tree once instead of once per grid point.

Method.  A leaf ``L`` of a tree is a box:
a range ``box_S(L)`` of the features of interest S times a range of the complement
features C.  For a background row ``x_C`` and grid point ``z``, ``(z, x_C)`` reaches
the unique leaf with ``x_C`` in its C-box and ``z`` in its S-box, so

    ICE_i(z) = offset + sum over leaves L with x_C^(i) in box_C(L) of value_L * 1[z in box_S(L)]
    PD(z)    = offset + sum over leaves L of value_L * w_L * 1[z in box_S(L)],
    w_L      = sum_i w_i 1[x_C^(i) in box_C(L)] / sum_i w_i.

Walks.  With numba installed (``pip install pdpboot[fast]``; :func:`kernel_available`)
every feature set uses the compiled walk (:mod:`._tree_kernel`) - numeric features
with an interval per node and grid axis, categorical (HGB native) and one-hot
(Pipeline) features and grids holding NaN with a bit mask over at most 62 grid
points: tree by tree, the set of background rows meeting the complement splits
travels as a segment of one index array (partitioned in place at complement splits,
handed to every child whose grid box is not empty at splits on the features of
interest), so the work is the number of (row, node) incidences of the pruned trees -
linear in the rows - and each leaf adds its value times the summed row
weights (or, for ICE, its value per row) at its grid box corners.  Several feature
sets of one model (a bootstrap refit's curves and surfaces) share one walk per tree
when only their averages of a response linear in the tree outputs are needed
(:meth:`PreparedTrees.partial_dependence_many`): each row segment carries the set of
feature sets it belongs to, so a row's own path is walked once for all of them (used
when the trees hold at least 8 background rows per leaf on average: 1.8-1.9x faster
for HGB; fully grown forests are faster with one walk per set).  Otherwise (numba
missing, a categorical / one-hot / NaN grid of more than 62 points) the NumPy walks
below are used, and ``method="auto"`` compares whichever walk applies with brute force
through :class:`TreePlan`'s cost estimates.

All trees of the ensemble are walked at once, level by level, on one concatenated
node table (:mod:`._tree_walk`): background rows travel as bitsets, split at the
C-splits and copied to both children at the S-splits; the grid boxes are propagated
over the node table once.  Each leaf's box is added to a difference array (interval
end points in 1-D, rectangle corners in 2-D; arbitrary subsets for categorical
features) and one cumulative sum per grid axis gives PD or the per-row ICE.  When the
response is not linear in the tree outputs (probabilities of gradient boosting, HGB
regressors with a log link) the raw outputs are formed per row and grid point (the
ICE form), the estimator's own link is applied, and then the rows are averaged.

Cost.  Average: about (nodes reached) x rows / 64 word operations per block, plus one
prefix table per complement feature (rows + thresholds); the grid only enters through
the leaves' boxes (leaves x corners).  ICE and non-linear responses: additionally
about (row, reachable leaf) pairs x box corners scatter-adds and a cumulative sum over
the rows x grid output.  Brute force costs rows x grid points x trees x depth.

Memory bound.  Rows are processed in blocks of at most 4096 rows.  Per block, the
largest arrays are the row bitsets of one level of nodes (all trees) and, for ICE,
of the reached leaves (reached nodes x block rows bits); the prefix tables (at most
one bitset per distinct threshold: C-split nodes x block rows bits); the (row, leaf,
corner) entries of one chunk, capped at ``_PAIR_BUDGET`` (2**21) entries; and, on the
per-row paths, the block's raw ICE, at most about 64 MiB (the block shrinks to fit).
No array exceeds rows x reachable leaves, except the ICE output when it is asked for.

Exact scikit-learn semantics: inputs validated to float32 (float64 for
HistGradientBoosting, after its own categorical encoding) and compared with
``x <= threshold``; NaN follows ``missing_go_to_left``; grid values are converted the
same way as inputs; categorical HGB splits use the node bitsets, unknown categories
going the missing way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import NotFittedError

from ._tree_check import tree_probe
from ._tree_model import (
    TreeModel,
    UnsupportedModel,
    check_supported,
    convert_quietly,
    external_reader,
    is_catboost,
    is_external,
    model_grid,
    read_model,
    to_array,
)
from ._tree_route import RowRouter, routable
from ._tree_walk import (
    GridBoxes,
    complement_split_nodes,
    decode_boxes,
    finish_external,
    grid_boxes,
    grid_goes_left,
    node_levels,
    popcount,
    row_counter,
    set_members,
    walk_rows,
)

__all__ = [
    "PreparedTrees",
    "TreePlan",
    "kernel_available",
    "per_tree_partial_dependence",
    "prepare",
    "supports",
    "supports_estimator",
    "tree_partial_dependence",
]

_MAX_BLOCK = 4096  # rows per block
_ICE_BLOCK_BYTES = 2**26  # raw ICE of one block on the per-row paths
_PAIR_BUDGET = 2**21  # (row, leaf, box corner) entries handled at once
_UNPACK_BUDGET = 2**24  # bits of row sets turned into (row, leaf) pairs at once
_ROUTE_BLOCK = 8192  # rows per block when routing
_ROUTE_MIN_ROWS = 2048  # at most this many rows: always the bitset walk
_KERNEL_ICE_BYTES = 2**24  # per-row difference arrays of one row block of the compiled walk
_KERNEL_ROW_BLOCK = 16384  # background rows per compiled walk call (cache-sized)
_KERNEL_SAMPLE_TREES = 8  # trees whose pruned walk is simulated for the cost estimate
_NUMBA_ENV = "PDPBOOT_NUMBA"  # set to 0 to disable the compiled kernel (the NumPy walks are used)
_KERNEL = None  # the kernel module once imported, False when numba is missing or disabled


def kernel_available() -> bool:
    """Whether the compiled walk of the exact tree engine can be used (numba installed).

    The compiled walk (``pip install pdpboot[fast]``, which installs numba) is the
    fastest exact engine for deep trees; without numba the engine uses its NumPy walks
    (same results, slower for deep forests) and ``method="auto"`` weighs those against
    brute force.  Setting the environment variable ``PDPBOOT_NUMBA=0`` before the first
    call disables the kernel.  The first call imports numba (about 1 s); compiled code is
    cached on disk after the first use.

    Returns
    -------
    bool
        True when numba imports and the kernel is not disabled.

    Examples
    --------
    >>> from pdpboot.engine.tree import kernel_available
    >>> isinstance(kernel_available(), bool)
    True
    """
    return _kernel() is not None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        import os

        _KERNEL = False
        if os.environ.get(_NUMBA_ENV, "1").strip().lower() not in ("0", "false", "no", "off"):
            try:
                from . import _tree_kernel

                _KERNEL = _tree_kernel
            except ImportError:
                pass
    return _KERNEL or None


def _external_read_dominates(estimator, n_rows: int, n_grid: int) -> bool:
    """Whether reading an XGBoost / LightGBM / CatBoost dump costs more than brute force would.

    Reading goes through the library's JSON dump (measured about 30 us per node for
    XGBoost, 90 us for LightGBM's ``dump_model``); one brute-force descent of one tree
    costs about 30 ns.  Both scale with the number of trees, so the rule compares
    rows x grid points x 30 ns with the nodes per tree x the read cost per node.
    """
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    if is_catboost(estimator):
        # JSON export through a file: about 15 ms plus 1.1-2.2 us per node (depth 4-8, 100 trees);
        # CatBoost's own predict: about 5.3 ns per row and tree (measured, CatBoost 1.2.10)
        n_trees = int(getattr(estimator, "tree_count_", None) or params.get("iterations") or 1000)
        nodes = 2 ** (int(params.get("depth") or params.get("max_depth") or 6) + 1) - 1
        return n_rows * n_grid * n_trees * _COST["brute_tree_catboost"] < 0.015 + n_trees * nodes * 1.5e-6
    if type(estimator).__module__.startswith("lightgbm"):
        nodes, per_node = 2 * int(params.get("num_leaves") or 31) - 1, 9e-5
    else:
        depth = params.get("max_depth") or 6
        leaves = params.get("max_leaves") or 0
        nodes = 2 * min(2 ** int(depth), int(leaves) or 2 ** int(depth)) - 1
        per_node = 3e-5
    return n_rows * n_grid * 3e-8 < nodes * per_node


def prepare(estimator, X, response_method: str, n_grid: int | None = None) -> PreparedTrees | None:
    """:class:`PreparedTrees` for a supported estimator / input / response, else None.

    Parameters
    ----------
    estimator, X, response_method
        As for :func:`tree_partial_dependence`.
    n_grid : int, optional
        Largest number of grid points of the feature sets to come; when given, models
        whose reading alone would cost more than brute force are declined.

    Returns
    -------
    PreparedTrees or None
        None when the exact tree engine does not handle the case (use brute force).
    """
    if is_external(estimator):  # reading the model is the check (read it once)
        if n_grid is not None and _external_read_dominates(estimator, len(X), n_grid):
            return None
        try:
            return PreparedTrees(estimator, X, response_method)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, NotFittedError):
            return None
    try:  # the checks of ``supports``, keeping the converted rows (converting twice costs ~10 % of a walk)
        check_supported(estimator, response_method)
        xa = convert_quietly(estimator, X)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    if not (isinstance(xa, np.ndarray) and xa.ndim == 2 and xa.dtype.kind == "f"):
        return None
    return PreparedTrees(estimator, X, response_method, converted=xa)


def supports_estimator(estimator, response_method: str) -> bool:
    """Whether the estimator / response pair is one the tree engine handles (input not checked)."""
    try:
        check_supported(estimator, response_method)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return False
    return True


def supports(estimator, X, response_method: str) -> bool:
    """Whether :func:`tree_partial_dependence` handles this estimator, input and response.

    Parameters
    ----------
    estimator : object
        A fitted estimator.
    X : array-like of shape (n_rows, n_features)
        Background rows in the estimator's input space.
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.

    Returns
    -------
    bool
        True for fitted ``DecisionTree*``, ``RandomForest*``, ``ExtraTrees*``,
        ``GradientBoosting*`` (constant init) and ``HistGradientBoosting*`` models
        with a response they define (regressors: ``"predict"``; classifiers:
        ``"predict_proba"``, and ``"decision_function"`` for the boosting ones), single
        output for classifiers, and an ``X`` the estimator itself accepts (dense; NaN
        only where the estimator supports missing values).  False otherwise
        (pipelines, other models, class labels as response, ...).
    """
    try:
        check_supported(estimator, response_method)
        if is_external(estimator):
            return external_reader(estimator, response_method).to_array(X).ndim == 2
        xa = convert_quietly(estimator, X)
    except (UnsupportedModel, NotFittedError, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return False
    return isinstance(xa, np.ndarray) and xa.ndim == 2 and xa.dtype.kind == "f"


def tree_partial_dependence(
    estimator,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    weights: np.ndarray | None = None,
    average: bool = True,
    individual: bool = False,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Exact brute-force-equivalent PD and ICE of a scikit-learn tree model.

    Parameters
    ----------
    estimator : fitted tree model
        One for which :func:`supports` is True.
    X : array-like of shape (n_rows, n_features)
        Background rows (ndarray or DataFrame) in the estimator's input space; may
        contain NaN where the estimator supports missing values.
    feature_idx : tuple of int
        One or two column positions of the features of interest.
    grid_values : list of 1-D arrays
        One grid per feature, in the column's value space (for a categorical
        HistGradientBoosting feature: the category values as they appear in ``X``).
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.
    weights : array-like of shape (n_rows,), optional
        Non-negative row weights for the average.
    average, individual : bool
        Which results to compute.

    Returns
    -------
    avg : ndarray of shape (n_outputs, *grid_shape) or None
        ``sum_i w_i f_i(z) / sum_i w_i`` for each response column (dims ``output``,
        then one per feature, grid order as given).  None unless ``average``.
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        The response of every row at every grid point (dims ``instance``,
        ``output``, features).  None unless ``individual``.

    Raises
    ------
    ValueError
        Unsupported estimator/response, bad feature indices, grids or weights.
    """
    if not (average or individual):
        raise ValueError("Nothing to compute: set average=True and/or individual=True.")
    prepared = PreparedTrees(estimator, X, response_method)
    plan = prepared.plan(feature_idx, grid_values)
    return prepared.partial_dependence(plan, weights=weights, average=average, individual=individual)


def per_tree_partial_dependence(
    forest,
    X,
    feature_idx: Sequence[int],
    grid_values: Sequence[np.ndarray],
    *,
    response_method: str,
    weights: np.ndarray | None = None,
    individual: bool = False,
    oob: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """PD of every tree of a forest (and the forest's ICE) from one compiled walk.

    Equivalent to calling brute-force PD on each tree ``forest.estimators_[b]`` in turn
    (the quantity the forest infinitesimal jackknife needs), at the cost of one exact
    tree-engine walk over the whole forest.  Needs the compiled walk
    (:func:`kernel_available`; ``pip install pdpboot[fast]``).

    Parameters
    ----------
    forest : fitted RandomForest* / ExtraTrees*
        A scikit-learn forest the tree engine supports.
    X : array-like of shape (n_rows, n_features)
        Background rows.
    feature_idx : tuple of int
        One or two column positions.
    grid_values : list of 1-D arrays
        One grid per feature (categorical features and grids with NaN: at most 62 points).
    response_method : {"predict", "predict_proba"}
        Resolved response (regressors: ``"predict"``, classifiers: ``"predict_proba"``).
    weights : array-like of shape (n_rows,), optional
        Non-negative row weights of each tree's average.
    individual : bool, default False
        Also return the forest's ICE (the mean of the trees' ICE).
    oob : bool array of shape (n_trees, n_rows), optional
        With ``individual``: also return, per row, the sum of the ICE of the trees with
        ``oob[b, i]`` True (e.g. ``inbag_counts == 0`` for the jackknife-after-bootstrap).

    Returns
    -------
    tree_pd : ndarray of shape (n_trees, n_outputs, *grid_shape)
        ``sum_i w_i f_b(z, x_C^(i)) / sum_i w_i`` for each tree ``b`` (dims ``tree``,
        ``output``, then one per feature).
    ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        The forest's ICE (dims ``instance``, ``output``, features); None unless ``individual``.
    oob_ice : ndarray of shape (n_rows, n_outputs, *grid_shape) or None
        ``sum_{b: oob[b, i]} f_b(z, x_C^(i))``; None unless ``individual`` and ``oob`` given.

    Raises
    ------
    ValueError
        Not a supported forest / response, numba missing, a categorical or NaN grid
        of more than 62 points, bad ``oob`` or ``weights``.

    See Also
    --------
    tree_partial_dependence : the forest's PD and ICE.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from pdpboot.engine.tree import kernel_available, per_tree_partial_dependence
    >>> X = np.random.default_rng(0).random((40, 3)); y = X[:, 0]
    >>> rf = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    >>> if kernel_available():
    ...     tree_pd, _, _ = per_tree_partial_dependence(rf, X, (0,), [np.array([0.2, 0.8])],
    ...                                                 response_method="predict")
    ...     print(tree_pd.shape)
    ... else:
    ...     print((4, 1, 2))
    (4, 1, 2)
    """
    from ._tree_model import FOREST_TYPES

    if not isinstance(forest, FOREST_TYPES):
        raise ValueError(f"forest must be a fitted RandomForest*/ExtraTrees* model, got {type(forest).__name__}.")
    if not kernel_available():
        raise ValueError("per_tree_partial_dependence needs numba (pip install pdpboot[fast]).")
    prepared = PreparedTrees(forest, X, response_method)
    plan = prepared.plan(feature_idx, grid_values)
    if plan.walk != "kernel":
        raise ValueError("per_tree_partial_dependence handles categorical grids and grids with NaN of at most "
                         f"{_MASK_MAX} points.")
    model, table, xt = prepared.model, plan.boxes, prepared.xt
    n_rows, n_trees = xt.shape[1], len(model.roots)
    w = _check_weights(weights, n_rows)
    weights_ = np.ones(n_rows) if w is None else w
    if oob is not None:
        oob = np.asarray(oob)
        if oob.shape != (n_trees, n_rows) or oob.dtype.kind not in "bui":
            raise ValueError(f"oob must be a boolean array of shape ({n_trees}, {n_rows}), got {oob.shape}.")
        oob = oob.astype(bool)
    n_raw, size = model.value.shape[1], table.size
    tree_values = model.value * n_trees  # each tree's own prediction (the forest averages them)
    acc = np.zeros((n_trees, n_raw, size))
    rows = np.arange(n_rows, dtype=np.int64) if w is None else np.flatnonzero(w > 0).astype(np.int64)
    no_ice = np.zeros((0, 0, 0))
    _kernel_walk(model, table, xt, rows, weights_, acc, no_ice, value=tree_values,
                 slot=np.arange(n_trees, dtype=np.int64))
    tree_pd = decode_boxes(acc, table) / weights_.sum() + _expand(model.offset, len(table.shape))
    ice = oob_ice = None
    if individual:
        block = int(max(1, min(n_rows, _KERNEL_ICE_BYTES // (size * n_raw * 8 * (1 if oob is None else 2)))))
        ice = np.empty((n_rows, n_raw) + table.shape)
        oob_ice = None if oob is None else np.empty_like(ice)
        for blk in _blocks(n_rows, block):
            b = blk.stop - blk.start
            enc = np.zeros((b, n_raw, size))
            enc_oob = None if oob is None else np.zeros_like(enc)
            _kernel_walk(model, table, xt[:, blk], np.arange(b, dtype=np.int64), weights_[blk], no_ice, enc,
                         oob=None if oob is None else oob[:, blk], ice_oob=enc_oob)
            ice[blk] = decode_boxes(enc, table) + _expand(model.offset, len(table.shape))
            if oob is not None:
                oob_ice[blk] = decode_boxes(enc_oob, table) * n_trees
    return tree_pd, ice, oob_ice


@dataclass(frozen=True)
class TreePlan:
    """One feature set of a :class:`PreparedTrees`: model columns, grid boxes and costs.

    ``tree_cost`` and ``brute_cost`` are rough CPU-second estimates of the exact tree
    engine and of brute force (the model's own predict on rows x grid points) for
    the average; ``ice_cost`` is added to both when ICE or a non-linear response
    needs per-row values.
    """

    feature_idx: tuple[int, ...]
    s_cols: list
    boxes: GridBoxes
    walk: str
    tree_cost: float
    brute_cost: float
    ice_cost: float

    def prefers_tree(self, individual: bool = False) -> bool:
        """Whether the tree engine is estimated to be no slower than brute force."""
        extra = self.ice_cost if individual else 0.0
        return self.tree_cost + extra <= self.brute_cost + extra


class PreparedTrees:
    """A supported tree model read once, with background rows in its input space.

    Parameters
    ----------
    estimator : fitted tree model
        One for which :func:`supports` is True.
    X : array-like of shape (n_rows, n_features)
        Background rows.
    response_method : {"predict", "predict_proba", "decision_function"}
        The resolved response.
    converted : ndarray, optional
        ``X`` already converted by the estimator's own validation (scikit-learn models;
        saves converting it again).

    Raises
    ------
    ValueError
        When the exact tree engine does not support the estimator / response.
    """

    def __init__(self, estimator, X, response_method: str, *, converted: np.ndarray | None = None):
        try:
            self.model = read_model(estimator, response_method)
        except UnsupportedModel as exc:
            raise ValueError(
                f"The exact tree engine does not support this case ({exc}); use the brute engine."
            ) from None
        if self.model.source is not None:  # XGBoost / LightGBM
            self.xa = np.ascontiguousarray(self.model.source.to_array(X))
            self.model = finish_external(self.model, X, self.xa)
        else:  # ``converted``: X already through the estimator's own validation (see ``prepare``)
            self.xa = np.ascontiguousarray(to_array(estimator, X) if converted is None else converted)
        self.n_features = self.xa.shape[1]
        self._levels = None
        self._xt = None
        self._depth = None
        self._kernel_base = None

    @property
    def levels(self) -> list[np.ndarray]:
        """Node ids by depth (computed on first use: the compiled walk does not need them)."""
        if self._levels is None:
            self._levels = node_levels(self.model)
        return self._levels

    @property
    def xt(self) -> np.ndarray:
        """The background rows column-major as float64 (n_features, n_rows), for the compiled walk
        (float32 inputs are compared after promotion to float64 anyway: one compiled version)."""
        if self._xt is None:
            self._xt = np.ascontiguousarray(self.xa.T, dtype=np.float64)
        return self._xt

    def probe(self, rows: np.ndarray, subs: dict) -> np.ndarray:
        """Background rows ``rows`` in the trees' space, input column ``j`` set to ``subs[j]`` (one value
        per row) as grids are set; for the self-check (:func:`._tree_check.check_reading`)."""
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
        if _kernel_handles(model, s_cols, grids):
            if self._depth is None:
                self._depth = _expected_depth(model)
                self._kernel_base = _kernel_base(model)
            table = _kernel_table(model, self._kernel_base, s_cols, grids)
            tree_cost, brute_cost = _kernel_costs(model, table, len(self.xa), self._depth)
            ice_cost = len(self.xa) * table.size * model.value.shape[1] * _COST["ice_cell"]
            return TreePlan(tuple(feature_idx), list(s_cols), table, "kernel", tree_cost, brute_cost, ice_cost)
        boxes = grid_boxes(model, s_cols, grids, self.levels)
        flat = [int(c) for col in s_cols for c in np.atleast_1d(col)]
        walk, tree_cost, brute_cost = _costs(model, self.levels, flat, boxes, len(self.xa))
        n_grid = int(np.prod(boxes.shape))
        ice_cost = len(self.xa) * n_grid * model.value.shape[1] * _COST["ice_cell"]
        return TreePlan(tuple(feature_idx), flat, boxes, walk, tree_cost, brute_cost, ice_cost)

    def partial_dependence(self, plan: TreePlan, *, weights=None, average: bool = True,
                           individual: bool = False) -> tuple[np.ndarray | None, np.ndarray | None]:
        """PD (n_outputs, *grid_shape) and/or ICE (n_rows, n_outputs, *grid_shape) of one plan."""
        if not (average or individual):
            raise ValueError("Nothing to compute: set average=True and/or individual=True.")
        model, xa, boxes = self.model, self.xa, plan.boxes
        w = _check_weights(weights, len(xa))
        if plan.walk == "kernel":
            return _kernel_pd(model, self.xt, boxes, w, average, individual)
        if plan.walk == "route":
            walk = _RouteWalk(model, plan.s_cols, boxes, xa.shape[1])
        else:
            walk = _BitsetWalk(model, plan.s_cols, boxes)
        if model.link is None and not individual:
            return _average_linear(model, xa, walk, boxes, w), None
        return _per_row(model, xa, walk, boxes, w, average, individual)


    def partial_dependence_many(self, plans: Sequence[TreePlan], *, weights=None, average: bool = True,
                                individual: bool = False) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
        """:meth:`partial_dependence` of several plans; the compiled walk's average-only plans of a
        response linear in the tree outputs share one walk per tree (see :func:`._tree_kernel.walk_many`)."""
        if not (average or individual):
            raise ValueError("Nothing to compute: set average=True and/or individual=True.")
        w = _check_weights(weights, len(self.xa))
        out: list = [None] * len(plans)
        shared = [k for k, p in enumerate(plans) if p.walk == "kernel"]
        if self.model.link is not None or individual or len(shared) < 2 or not _share_pays(
                self.model, len(self.xa) if w is None else int(np.count_nonzero(w))):
            shared = []
        for start in range(0, len(shared), _MAX_SHARED_SETS):
            part = shared[start:start + _MAX_SHARED_SETS]
            avgs = _kernel_pd_many(self.model, self.xt, [plans[k].boxes for k in part], w)
            for k, avg in zip(part, avgs):
                out[k] = (avg, None)
        for k, plan in enumerate(plans):
            if out[k] is None:
                out[k] = self.partial_dependence(plan, weights=weights, average=average, individual=individual)
        return out


# Rough per-operation CPU costs in seconds (measured on the development machine, one
# core; only their ratios matter for the choices).
_COST = {
    "pair": 1.6e-7,  # route one (row, start) pair (gather, compiled descent, bookkeeping)
    "live_node": 4e-7,  # per live node and feature set: router assembly, grid boxes
    "word": 2e-8,  # one bitset word operation (64 rows at one node)
    # brute force with row-major stacking (measured: RF(100) fully grown, n = 10k, 50 points:
    # 3.6 s, about half of the point-major stacking these constants were first fitted to)
    "brute_node": 4e-9,  # one node of a compiled descent in the model's predict
    "brute_tree": 1e-8,  # per tree and stacked row in predict
    "brute_row": 3e-8,  # per stacked row (building the block, reducing the predictions)
    "brute_tree_catboost": 5.3e-9,  # per tree and stacked row in CatBoost's predict (depth 4-8, 1 thread)
    "ice_cell": 5e-9,  # per row x grid point x raw output on the per-row paths
    "kernel_visit": 6e-9,  # one (row, node) incidence of the compiled walk
    "kernel_node": 3e-8,  # one visited node of the compiled walk
    "kernel_table": 1e-8,  # per node and feature set: the compiled walk's node table
}


def _costs(model: TreeModel, levels, s_cols, boxes: GridBoxes, n_rows: int) -> tuple[str, float, float]:
    """(walk, tree cost, brute cost) from expected path statistics under the training cover.

    Bottom-up over the node table: ``depth[v]`` is the expected number of splits a row
    meets below ``v`` (brute force descents), ``starts[v]`` the expected number of
    (row, start node) pairs the router creates below ``v``: a row takes one branch of a
    complement split (with the training proportions) and both live branches of an
    S-split, each starting a new pair.
    """
    feat, left, right, alive = model.feature, model.left, model.right, boxes.alive
    n_nodes = len(feat)
    cover = model.cover if model.cover is not None else np.ones(n_nodes)
    depth = np.zeros(n_nodes)
    starts = np.zeros(n_nodes)
    is_s = np.isin(feat, s_cols)
    for nodes in reversed(levels):
        inner = nodes[feat[nodes] >= 0]
        if not inner.size:
            continue
        lc, rc = left[inner], right[inner]
        cl, cr = cover[lc], cover[rc]
        tot = cl + cr
        fl = np.where(tot > 0, cl / np.where(tot > 0, tot, 1), 0.5)
        depth[inner] = 1 + fl * depth[lc] + (1 - fl) * depth[rc]
        al, ar = alive[lc], alive[rc]
        c_val = fl * np.where(al, starts[lc], 0) + (1 - fl) * np.where(ar, starts[rc], 0)
        s_val = np.where(al, 1 + starts[lc], 0) + np.where(ar, 1 + starts[rc], 0)
        starts[inner] = np.where(is_s[inner], s_val, c_val)
    roots = model.roots
    n_grid = int(np.prod(boxes.shape))
    if _is_catboost(model):
        brute = n_rows * n_grid * (_COST["brute_row"] + len(roots) * _COST["brute_tree_catboost"])
    else:
        brute = n_rows * n_grid * (_COST["brute_row"] + len(roots) * _COST["brute_tree"]
                                  + depth[roots].sum() * _COST["brute_node"])
    live = int(alive.sum())
    fixed = live * _COST["live_node"]
    # per pair, the compiled descent slows down as the node table outgrows the caches
    cache = 1.0 + live / 2**22
    route = fixed + n_rows * (len(roots) + starts[roots[alive[roots]]].sum()) * _COST["pair"] * cache
    block = min(n_rows, _MAX_BLOCK)
    bitset = fixed + -(-n_rows // block) * live * (-(-block // 64)) * _COST["word"]
    if routable(model) and n_rows > _ROUTE_MIN_ROWS and route < bitset:
        return "route", route, brute
    return "bitset", bitset, brute


@dataclass(frozen=True)
class _KernelTable:
    """One feature set for the compiled walk (:mod:`._tree_kernel`).

    ``nodes`` (n_nodes, 4) int32 and ``thr``: the model's node table (shared by all
    feature sets); ``axis_of`` (model columns,) the grid axis of each model column (-1:
    complement); ``mask_axes`` (2,) 1 for a *mask axis* (a categorical or one-hot
    feature, or a grid with NaN: boxes are bit masks over the grid in the caller's
    order), ``left_mask`` (n_nodes,; empty without mask axes) the grid points each split on a mask axis sends
    left; ``grids`` the sorted grids of interval axes as float64 (a mask axis: zeros of
    the grid's length; an empty second grid for 1-D); ``shape`` and ``order`` (the
    sorting permutation of each grid) as in :class:`._tree_walk._Boxes`.
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
    """Compiled walk available, and every mask axis (categorical / one-hot / NaN grid) at most 62 points."""
    if _kernel() is None:
        return False
    for col, g in zip(s_cols, grids):
        if (np.ndim(g) != 1 and not np.ndim(col)) or len(g) == 0:
            return False
        if _is_mask_axis(model, col, g) and len(g) > _MASK_MAX:
            return False
    return True


def _mask_goes_left(model: TreeModel, col, g, nodes: np.ndarray) -> np.ndarray:
    """(len(nodes), len(g)) bool: the grid points each split node (on the axis' columns) sends left."""
    if not np.ndim(col):
        return grid_goes_left(model, nodes, np.asarray(g, dtype=np.float64), bool(model.categorical[col]))
    pos = {int(c): k for k, c in enumerate(col)}
    which = np.array([pos[c] for c in model.feature[nodes].tolist()], dtype=np.intp)
    vals = np.asarray(g, dtype=np.float64)[:, which].T  # (nodes, n_grid)
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


def _expected_depth(model: TreeModel) -> float:
    """Expected number of splits a row meets, summed over the trees (training cover as distribution)."""
    cover = model.cover
    if cover is None:
        return float(len(node_levels(model))) * len(model.roots) / 2
    per_tree = np.add.reduceat(np.where(model.feature >= 0, cover, 0.0), model.roots)
    root = cover[model.roots]
    return float(np.sum(per_tree / np.where(root > 0, root, 1)))


def _kernel_costs(model: TreeModel, table: _KernelTable, n_rows: int, depth: float) -> tuple[float, float]:
    """(compiled walk, brute force) cost estimates; the walk is simulated on a few trees."""
    kern = _kernel()
    roots = model.roots
    pick = np.unique(np.linspace(0, len(roots) - 1, min(len(roots), _KERNEL_SAMPLE_TREES)).round().astype(int))
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


def _kernel_walk(model: TreeModel, table: _KernelTable, xt, rows, w, acc, ice, oob=None, ice_oob=None,
                 value=None, slot=None) -> None:
    kern = _kernel()
    value = model.value if value is None else value
    slot = np.zeros(len(model.roots), dtype=np.int64) if slot is None else slot
    if oob is None:
        oob, ice_oob = np.zeros((0, 0), dtype=np.bool_), np.zeros((0, 0, 0))
    c = np.ascontiguousarray
    args = (c(model.cat_left, dtype=np.bool_), c(value, dtype=np.float64), c(model.roots, dtype=np.int64),
            c(slot, dtype=np.int64), *table.args, c(xt, dtype=np.float64))
    rows, w, oob = c(rows, dtype=np.int64), c(w, dtype=np.float64), c(oob, dtype=np.bool_)
    # Rows in blocks: a block's index segments and its part of each feature column stay in cache
    # (measured, RF fully grown, 1-D: 1.4-1.6x faster at n = 30k and 100k than one block of all rows).
    n_blocks = max(1, round(len(rows) / _KERNEL_ROW_BLOCK))
    for part in np.array_split(rows, n_blocks):
        kern.walk(table.nodes, table.thr, *args, part, w, acc, ice, oob, ice_oob)


_SHARED_WALK = True  # False: one walk per feature set (for A/B benchmarks)
_SHARE_ROWS_PER_LEAF = 8
_MAX_SHARED_SETS = 62  # feature sets of one shared walk (bits of one int64 per row)


def _share_pays(model: TreeModel, n_rows: int) -> bool:
    """Whether one shared walk (:func:`_kernel_pd_many`) is expected to beat one walk per feature set.

    Measured (A/B, one process, Friedman #1, three 1-D sets and one 25 x 25 surface): HGB
    (100 x 31 leaves) 1.8-1.9x faster at 1.3k and 12.6k background rows; RF with
    ``min_samples_leaf=20`` 1.3x; ``min_samples_leaf=5`` 1.0x; fully grown forests 0.8x
    (one or two rows per leaf: the walk's per-node bookkeeping dominates, and the surface's
    walk already holds every node the curves reach).  Shared when the background rows per
    leaf, averaged over the trees, are at least ``_SHARE_ROWS_PER_LEAF``.
    """
    if not _SHARED_WALK:
        return False
    n_leaves = int(np.count_nonzero(model.feature < 0))
    return n_rows * len(model.roots) >= _SHARE_ROWS_PER_LEAF * n_leaves


def _kernel_pd_many(model: TreeModel, xt, tables: list, w) -> list[np.ndarray]:
    """PD of several kernel plans of a model whose response is linear in the tree outputs, from
    one shared walk per tree (:func:`._tree_kernel.walk_many`); same values as :func:`_kernel_pd`."""
    kern = _kernel()
    n_rows = xt.shape[1]
    weights = np.ones(n_rows) if w is None else w
    total = float(n_rows) if w is None else float(w.sum())
    rows = np.arange(n_rows, dtype=np.int64) if w is None else np.flatnonzero(w > 0).astype(np.int64)
    n_raw, n_sets = model.value.shape[1], len(tables)
    n_cols = max(len(t.axis_of) for t in tables)
    axis_of = np.full((n_sets, n_cols), -1, dtype=np.int64)
    sets_of = np.zeros(n_cols, dtype=np.int64)
    g_max = max(max(len(t.grids[0]), len(t.grids[1])) for t in tables)
    grids = np.zeros((n_sets, 2, g_max))
    glen = np.zeros((n_sets, 2), dtype=np.int64)
    for k, t in enumerate(tables):
        axis_of[k, :len(t.axis_of)] = t.axis_of
        sets_of[np.flatnonzero(axis_of[k] >= 0)] |= np.int64(1) << k
        for d in range(2):
            glen[k, d] = len(t.grids[d])
            grids[k, d, :glen[k, d]] = t.grids[d]
    mask_axes = np.stack([t.mask_axes for t in tables]).astype(np.int64)
    n_mask = max(len(t.left_mask) for t in tables)  # 0 unless some set has a mask axis
    left_mask = np.zeros((n_sets, n_mask), dtype=np.int64)
    for k, t in enumerate(tables):
        left_mask[k, :len(t.left_mask)] = t.left_mask
    off = np.concatenate([[0], np.cumsum([t.size for t in tables])]).astype(np.int64)
    acc = np.zeros((n_raw, int(off[-1])))
    c = np.ascontiguousarray
    args = (c(model.cat_left, dtype=np.bool_), c(model.value, dtype=np.float64), c(model.roots, dtype=np.int64),
            sets_of, axis_of, mask_axes, left_mask, grids, glen, off, c(xt, dtype=np.float64))
    base = tables[0]
    n_blocks = max(1, round(len(rows) / _KERNEL_ROW_BLOCK))
    for part in np.array_split(rows, n_blocks):
        kern.walk_many(base.nodes, base.thr, *args, part, c(weights, dtype=np.float64), acc)
    out = []
    for k, t in enumerate(tables):
        enc = np.ascontiguousarray(acc[:, off[k]:off[k + 1]])
        out.append(decode_boxes(enc, t) / total + _expand(model.offset, len(t.shape)))
    return out


def _kernel_pd(model: TreeModel, xt, table: _KernelTable, w, average: bool, individual: bool):
    """PD and/or ICE of a kernel plan (see :class:`PreparedTrees.partial_dependence`)."""
    n_rows = xt.shape[1]
    n_raw, size = model.value.shape[1], table.size
    weights = np.ones(n_rows) if w is None else w
    total = float(n_rows) if w is None else float(w.sum())
    no_ice = np.zeros((0, 0, 0))
    if model.link is None and not individual:
        acc = np.zeros((1, n_raw, size))
        rows = np.arange(n_rows, dtype=np.int64) if w is None else np.flatnonzero(w > 0).astype(np.int64)
        _kernel_walk(model, table, xt, rows, weights, acc, no_ice)
        return decode_boxes(acc[0], table) / total + _expand(model.offset, len(table.shape)), None
    n_axes = len(table.shape)
    block = int(max(1, min(n_rows, _KERNEL_ICE_BYTES // (size * max(n_raw, model.n_out) * 8))))
    ice = np.empty((n_rows, model.n_out) + table.shape) if individual else None
    acc = np.zeros((model.n_out,) + table.shape) if average else None
    for rows in _blocks(n_rows, block):
        b = rows.stop - rows.start
        enc = np.zeros((b, n_raw, size))
        _kernel_walk(model, table, xt[:, rows], np.arange(b, dtype=np.int64), weights[rows], no_ice, enc)
        raw = decode_boxes(enc, table) + _expand(model.offset, n_axes)  # (b, n_raw, *grid)
        resp = _respond(model, np.moveaxis(raw, 1, 0))  # (b, n_out, *grid)
        if individual:
            ice[rows] = resp
        if average:
            acc += np.einsum("r,r...->...", weights[rows], resp)  # no BLAS: one sum order
    return (acc / total if average else None), ice


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
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},), got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    return w


def _blocks(n_rows: int, size: int):
    for start in range(0, n_rows, size):
        yield slice(start, min(start + size, n_rows))


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


def _expand(offset: np.ndarray, n_axes: int) -> np.ndarray:
    return offset.reshape((-1,) + (1,) * n_axes)


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


def _respond(model: TreeModel, raw: np.ndarray) -> np.ndarray:
    """(n_raw, b, *grid) raw outputs -> (b, n_out, *grid) response."""
    per_row = np.moveaxis(raw, 0, -1)  # (b, *grid, n_raw)
    if model.link is not None:
        flat = per_row.reshape(-1, per_row.shape[-1])
        per_row = np.asarray(model.link(flat), dtype=np.float64).reshape(per_row.shape[:-1] + (-1,))
    return np.moveaxis(per_row, -1, 1)


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
