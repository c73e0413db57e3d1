"""Pipelines into the exact tree engine: column-wise preprocessing, then a tree model.

When every step before the tree model is provably column-wise (each output column depends on one
input column: scalers, ``SimpleImputer`` without indicator, ``OrdinalEncoder``, ``OneHotEncoder``
without infrequent grouping, ``ColumnTransformer`` and nested Pipelines of those, and
``FunctionTransformer`` with ``func`` None, a NumPy ufunc or ``pdpboot_elementwise = True``), grids are
pushed through their own columns' transforms and the tree engine runs on the transformed columns,
giving brute force's result.  Otherwise :func:`prepare_pipeline` returns None.

Also registers the exact tree engine (trees and such pipelines) in :mod:`.registry` as ``"tree"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)

from . import tree
from ._tree_check import check_reading
from ._tree_compiled import NEEDS_NUMBA
from ._tree_model import model_grid
from .registry import Engine, register
from .tree import PreparedTrees, TreePlan, supports, supports_estimator

__all__ = ["PreparedPipeline", "column_map", "prepare_pipeline"]

_ONE_TO_ONE = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, OrdinalEncoder)


class _NotColumnwise(Exception):
    pass


def _widths(step, n_in: int) -> list[int]:
    """Number of output columns of each input column (in order) for a column-wise step."""
    if isinstance(step, str):
        if step == "passthrough":
            return [1] * n_in
        if step == "drop":
            return [0] * n_in
        raise _NotColumnwise(step)
    if step is None:
        return [1] * n_in
    if isinstance(step, _ONE_TO_ONE):
        return [1] * n_in
    if isinstance(step, SimpleImputer):
        if step.add_indicator or (not step.keep_empty_features and pd.isna(
                np.asarray(step.statistics_, dtype=object)).any()):
            raise _NotColumnwise("SimpleImputer with indicator or dropped columns")
        return [1] * n_in
    if isinstance(step, OneHotEncoder):
        if getattr(step, "_infrequent_enabled", False):
            raise _NotColumnwise("OneHotEncoder with infrequent categories")
        drop = step.drop_idx_
        return [len(c) - (0 if drop is None or drop[i] is None else 1) for i, c in enumerate(step.categories_)]
    if isinstance(step, FunctionTransformer):
        func = step.func
        if func is None or isinstance(func, np.ufunc) or getattr(step, "pdpboot_elementwise", False) is True:
            return [1] * n_in
        raise _NotColumnwise("FunctionTransformer not marked elementwise")
    raise _NotColumnwise(type(step).__name__)


def column_map(pre, n_in: int) -> list[list[int]]:
    """Output column positions of each input column of a column-wise preprocessing step.

    Parameters
    ----------
    pre : fitted transformer
        A ``ColumnTransformer``, ``Pipeline`` of column-wise steps, or one column-wise step.
    n_in : int
        Number of input columns.

    Returns
    -------
    list of lists of int
        ``out[j]`` lists the output columns computed from input column ``j`` only.

    Raises
    ------
    ValueError
        When a step is not provably column-wise.
    """
    try:
        if isinstance(pre, ColumnTransformer):
            return _ct_map(pre, n_in)
        if isinstance(pre, Pipeline):
            maps = [[j] for j in range(n_in)]
            for _, step in pre.steps:
                inner = column_map(step, sum(len(m) for m in maps))
                maps = [[c for m in cols for c in inner[m]] for cols in maps]
            return maps
        widths = _widths(pre, n_in)
    except _NotColumnwise as exc:
        raise ValueError(f"not column-wise: {exc}") from None
    starts = np.concatenate([[0], np.cumsum(widths)]).astype(int)
    return [list(range(starts[j], starts[j + 1])) for j in range(n_in)]


def _ct_map(ct: ColumnTransformer, n_in: int) -> list[list[int]]:
    inputs = getattr(ct, "_transformer_to_input_indices", None)
    if inputs is None or not hasattr(ct, "output_indices_"):
        raise _NotColumnwise("ColumnTransformer internals (scikit-learn version)")
    out: list[list[int]] = [[] for _ in range(n_in)]
    for name, trans, _ in ct.transformers_:
        cols = list(inputs.get(name, []))
        span = ct.output_indices_[name]
        if not cols:
            continue
        if isinstance(trans, (Pipeline, ColumnTransformer)):
            sub = column_map(trans, len(cols))
        else:
            widths = _widths(trans, len(cols))
            starts = np.concatenate([[0], np.cumsum(widths)]).astype(int)
            sub = [list(range(starts[k], starts[k + 1])) for k in range(len(cols))]
        if sum(len(s) for s in sub) != span.stop - span.start:
            raise _NotColumnwise(f"unexpected output width of {name!r}")
        for k, j in enumerate(cols):
            out[j].extend(span.start + c for c in sub[k])
    return out


def _dense(a) -> np.ndarray:
    if sp.issparse(a):
        a = a.toarray()
    if isinstance(a, pd.DataFrame):
        a = a.to_numpy()
    return np.asarray(a, dtype=np.float64)


def _model_input(a):
    """Transformed rows as the final model sees them (DataFrames kept: feature names)."""
    return a.toarray() if sp.issparse(a) else a


class PreparedPipeline:
    """A column-wise pipeline ending in a supported tree model, read once.

    Use :func:`prepare_pipeline` (returns None for unsupported pipelines).
    """

    def __init__(self, estimator, X, response_method: str, pre, final, maps):
        self.pre, self.maps = pre, maps
        self.X = X
        self.n_features = X.shape[1]
        self.trees = PreparedTrees(final, _model_input(pre.transform(X)), response_method)
        self.model = self.trees.model
        self.xa = self.trees.xa

    def _transformed_grid(self, j: int, values) -> np.ndarray:
        """(n_grid, len(maps[j])) transformed values of input column ``j`` at each grid value."""
        values = np.asarray(values).reshape(-1)
        g = len(values)
        if isinstance(self.X, pd.DataFrame):
            base = self.X.iloc[np.zeros(g, dtype=int)].reset_index(drop=True)
            col = base.columns[j]
            dtype = self.X[col].dtype
            base[col] = pd.array(values, dtype=dtype) if isinstance(
                dtype, pd.api.extensions.ExtensionDtype) else values
        else:
            base = np.repeat(np.asarray(self.X)[:1], g, axis=0)
            if base.dtype.kind in "iub" and values.dtype.kind == "f":
                base = base.astype(float)
            base[:, j] = values
        return _dense(self.pre.transform(base))[:, self.maps[j]]

    def _tree_grid(self, j: int, values) -> np.ndarray:
        """(n_grid, len(maps[j])) grid values of input column ``j`` as the trees see them: through the
        pipeline's transforms, then converted as the final model's reader converts its own inputs
        (its dtype, a ``missing=`` sentinel read as missing, category codes)."""
        tg = self._transformed_grid(j, values)
        return np.column_stack([model_grid(self.model, int(c), tg[:, i]) for i, c in enumerate(self.maps[j])])

    def kernel_base(self) -> tuple[np.ndarray, np.ndarray]:
        """The tree model's compiled node table (see :meth:`PreparedTrees.kernel_base`)."""
        return self.trees.kernel_base()

    def probe(self, rows: np.ndarray, subs: dict) -> np.ndarray:
        """Rows ``rows`` in the trees' space, input column ``j`` set to ``subs[j]`` through its own
        transforms (as :meth:`plan` sets grids); for the engine's self-check."""
        xt = np.array(self.xa[rows], dtype=np.float64)
        for j, values in subs.items():
            cols = [int(self.model.columns[c]) for c in self.maps[j]]
            xt[:, cols] = self._tree_grid(j, values)
        return xt

    def plan(self, feature_idx, grid_values) -> TreePlan:
        """Feature set of input columns -> plan on the transformed columns."""
        idx = tuple(int(j) for j in np.atleast_1d(feature_idx))
        if len(idx) not in (1, 2) or len(set(idx)) != len(idx) or len(grid_values) != len(idx):
            raise ValueError(f"feature_idx must hold 1 or 2 distinct columns with one grid each, got {idx}.")
        if any(j < 0 or j >= self.n_features for j in idx):
            raise ValueError(f"feature_idx {idx!r} out of range for {self.n_features} features.")
        s_cols, grids = [], []
        for j, values in zip(idx, grid_values):
            cols = [int(self.model.columns[c]) for c in self.maps[j]]
            if not cols:
                raise ValueError(f"input column {j} is dropped by the preprocessing")
            tg = self._tree_grid(j, values)
            if len(cols) == 1:
                s_cols.append(cols[0])
                grids.append(tg[:, 0])
            else:
                s_cols.append(tuple(cols))
                grids.append(tg.astype(np.float64))
        return self.trees.plan_columns(idx, s_cols, grids)

    def partial_dependence(self, plan: TreePlan, **kwargs):
        """As :meth:`pdpboot.engine.tree.PreparedTrees.partial_dependence`."""
        return self.trees.partial_dependence(plan, **kwargs)

    def partial_dependence_many(self, plans, **kwargs):
        """As :meth:`pdpboot.engine.tree.PreparedTrees.partial_dependence_many`."""
        return self.trees.partial_dependence_many(plans, **kwargs)


def prepare_pipeline(estimator, X, response_method: str) -> PreparedPipeline | None:
    """:class:`PreparedPipeline` for a column-wise pipeline into a supported tree model, else None.

    ``X`` holds the background rows in the pipeline's input space; ``response_method`` is resolved.
    """
    if type(estimator) is not Pipeline or len(estimator.steps) < 2:  # subclasses may change predict
        return None
    final = estimator.steps[-1][1]
    if not supports_estimator(final, response_method):
        return None
    pre = estimator[:-1]
    try:
        maps = column_map(pre if len(pre.steps) > 1 else pre.steps[0][1], X.shape[1])
        xt = _model_input(pre.transform(X))
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    if sum(len(m) for m in maps) != xt.shape[1] or len({c for m in maps for c in m}) != xt.shape[1]:
        return None
    if not supports(final, xt, response_method):
        return None
    return PreparedPipeline(estimator, X, response_method, pre, final, maps)


def _prepare(estimator, X, response_method: str, n_grid: int | None):
    if not tree.kernel_available():
        if n_grid is None:  # method="tree"
            raise ValueError(f"method='tree': {NEEDS_NUMBA}. Use method='auto' or 'brute'.")
        return None
    prepared = tree.prepare(estimator, X, response_method, n_grid=n_grid)
    return prepared if prepared is not None else prepare_pipeline(estimator, X, response_method)


def _faster(prepared, plan, individual: bool) -> bool:
    return plan.prefers_tree(individual or prepared.model.link is not None)


TREE_ENGINE = register(Engine(
    name="tree", prepare=_prepare, faster=_faster, check=check_reading,
    supported="scikit-learn >= 1.6 decision trees, random forests, extra trees, gradient boosting and "
              "histogram gradient boosting (HGB with pandas categoricals too), XGBoost, LightGBM, CatBoost "
              "(symmetric trees, numeric features), and Pipelines of column-wise preprocessing into them, "
              "see pdpboot.engine.pipeline",
))
