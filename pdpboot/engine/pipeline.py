"""Pipelines into the exact tree engine: column-wise preprocessing, then a tree model.

A step is column-wise when each output column depends on one input column.  Known column-wise steps:
scalers, ``SimpleImputer`` (indicator columns too), ``OrdinalEncoder``, ``OneHotEncoder`` (infrequent
levels grouped too), ``ColumnTransformer`` and nested Pipelines of those, and ``FunctionTransformer``
with ``func`` None, a NumPy ufunc or ``pdpboot_elementwise = True``.  A step of another type with as
many outputs as inputs (``get_feature_names_out``, else the width the next step reads) is read as
one-in-one-out when, on rows of the background, no output changes with the other input columns.
Grids are pushed through their own columns' transforms and the tree engine runs on the transformed
columns, giving brute force's result (and its self-check compares the reading with the pipeline's own
response).  Otherwise :func:`prepare_pipeline` returns None.  Pipeline subclasses count as Pipelines
unless they redefine a response method, ``transform`` or slicing.

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
from ._tree_check import check_reading, probe_rows
from ._tree_compiled import NEEDS_NUMBA
from ._tree_model import model_grid
from .inputs import rows_with
from .registry import Engine, register
from .tree import PreparedTrees, TreePlan, supports, supports_estimator

__all__ = ["PreparedPipeline", "column_map", "plain_pipeline", "prepare_pipeline"]

_ONE_TO_ONE = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, OrdinalEncoder)
#: Rows of the check that a step read as one-in-one-out by its shape is column-wise on the data.
VERIFY_ROWS = 64
_RESPONSES = ("predict", "predict_proba", "decision_function")


class _NotColumnwise(Exception):
    pass


def _identity(n: int) -> list[list[int]]:
    return [[j] for j in range(n)]


def _n_out(step, hint: int | None) -> int | None:
    """Output columns of a fitted step of unknown type: ``get_feature_names_out``, else ``hint``."""
    try:
        return len(step.get_feature_names_out())
    except Exception:  # noqa: BLE001 - any third-party transformer
        return hint


def _onehot_widths(step: OneHotEncoder) -> list[int]:
    """Output columns of each input column of a fitted ``OneHotEncoder`` (infrequent levels grouped, one
    level dropped)."""
    infrequent = getattr(step, "infrequent_categories_", None) if getattr(step, "_infrequent_enabled", False) else None
    drop = step.drop_idx_
    widths = []
    for i, cats in enumerate(step.categories_):
        rare = None if infrequent is None else infrequent[i]
        width = len(cats) if rare is None else len(cats) - len(rare) + 1
        widths.append(width - (0 if drop is None or drop[i] is None else 1))
    return widths


def _step_map(step, n_in: int, guessed: list | None, hint: int | None = None) -> list[list[int]]:
    """Output positions of each input column of one fitted step.

    ``guessed`` None: only steps known to be column-wise.  A list: a step of another type with as many
    outputs as inputs is read as one-in-one-out and its name appended (to be verified on data).
    """
    if isinstance(step, (ColumnTransformer, Pipeline)):
        return _map(step, n_in, guessed, hint)
    if isinstance(step, str):
        if step == "passthrough":
            return _identity(n_in)
        if step == "drop":
            return [[] for _ in range(n_in)]
        raise _NotColumnwise(step)
    if step is None or isinstance(step, _ONE_TO_ONE):
        return _identity(n_in)
    if isinstance(step, SimpleImputer):
        kept = np.ones(n_in, dtype=bool) if step.keep_empty_features else ~pd.isna(
            np.asarray(step.statistics_, dtype=object)).astype(bool)
        out = [[] for _ in range(n_in)]
        for pos, j in enumerate(np.flatnonzero(kept)):
            out[j].append(pos)
        if step.add_indicator:
            for k, j in enumerate(step.indicator_.features_):
                out[int(j)].append(int(kept.sum()) + k)
        return out
    if isinstance(step, OneHotEncoder):
        starts = np.concatenate([[0], np.cumsum(_onehot_widths(step))]).astype(int)
        return [list(range(starts[j], starts[j + 1])) for j in range(n_in)]
    if isinstance(step, FunctionTransformer):
        func = step.func
        if func is None or isinstance(func, np.ufunc) or getattr(step, "pdpboot_elementwise", False) is True:
            return _identity(n_in)
    if guessed is not None and _n_out(step, hint) == n_in:
        guessed.append(type(step).__name__)
        return _identity(n_in)
    raise _NotColumnwise(type(step).__name__)


def _map(pre, n_in: int, guessed: list | None, hint: int | None = None) -> list[list[int]]:
    if isinstance(pre, ColumnTransformer):
        return _ct_map(pre, n_in, guessed)
    if isinstance(pre, Pipeline):
        maps = _identity(n_in)
        steps = [step for _, step in pre.steps]
        for i, step in enumerate(steps):
            nxt = getattr(steps[i + 1], "n_features_in_", None) if i + 1 < len(steps) else hint
            inner = _step_map(step, sum(len(m) for m in maps), guessed, nxt)
            maps = [[c for m in cols for c in inner[m]] for cols in maps]
        return maps
    return _step_map(pre, n_in, guessed, hint)


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
        return _map(pre, n_in, None)
    except _NotColumnwise as exc:
        raise ValueError(f"not column-wise: {exc}") from None


def _ct_map(ct: ColumnTransformer, n_in: int, guessed: list | None) -> list[list[int]]:
    inputs = getattr(ct, "_transformer_to_input_indices", None)
    if inputs is None or not hasattr(ct, "output_indices_"):
        raise _NotColumnwise("ColumnTransformer internals (scikit-learn version)")
    out: list[list[int]] = [[] for _ in range(n_in)]
    for name, trans, _ in ct.transformers_:
        cols = list(inputs.get(name, []))
        span = ct.output_indices_[name]
        if not cols:
            continue
        sub = _step_map(trans, len(cols), guessed, span.stop - span.start)
        if sorted(c for s in sub for c in s) != list(range(span.stop - span.start)):
            raise _NotColumnwise(f"unexpected output width of {name!r}")
        for k, j in enumerate(cols):
            out[j].extend(span.start + c for c in sub[k])
    return out


def _columns(a) -> list[np.ndarray]:
    """The columns of a transform's output, each in its own dtype (category codes read by the model)."""
    if sp.issparse(a):
        a = a.toarray()
    if isinstance(a, pd.DataFrame):
        return [a.iloc[:, c].to_numpy() for c in range(a.shape[1])]
    a = np.asarray(a)
    return [a[:, c] for c in range(a.shape[1])]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    missing_a, missing_b = pd.isna(a), pd.isna(b)
    if not np.array_equal(missing_a, missing_b):
        return False
    return bool(np.all(a[~missing_a] == b[~missing_b]))


def _columnwise_on(pre, X, maps: list[list[int]]) -> str | None:
    """Check on rows of ``X`` that the outputs ``maps[j]`` depend on input column ``j`` only: with every
    other input column taken from another row, they must not change.  None, else the reason."""
    n = X.shape[0]
    rows = probe_rows(n, min(VERIFY_ROWS, n))
    other = np.roll(rows, 1)
    blocks = [rows_with(X, rows, {})]
    for j in range(X.shape[1]):
        values = X.iloc[:, j].to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)[:, j]
        blocks.append(rows_with(X, other, {j: values[rows]}))
    stacked = pd.concat(blocks, ignore_index=True) if isinstance(X, pd.DataFrame) else np.concatenate(blocks)
    try:
        cols = _columns(pre.transform(stacked))
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        return f"the preprocessing failed on shuffled rows ({exc})"
    m = len(rows)
    for j, outs in enumerate(maps):
        for c in outs:
            if not _same(cols[c][:m], cols[c][(j + 1) * m:(j + 2) * m]):
                return f"output column {c} of the preprocessing depends on more than input column {j}"
    return None


def _model_input(a):
    """Transformed rows as the final model sees them (DataFrames kept: feature names)."""
    return a.toarray() if sp.issparse(a) else a


def plain_pipeline(estimator, response_method: str) -> bool:
    """Whether ``estimator`` is a scikit-learn Pipeline (or a subclass that does not redefine how it
    responds or is sliced) with a preprocessing part and a final step."""
    if not isinstance(estimator, Pipeline) or len(estimator.steps) < 2:
        return False
    for cls in type(estimator).__mro__:
        if cls is Pipeline:
            return True
        if any(name in vars(cls) for name in (response_method, *_RESPONSES, "__getitem__", "transform")):
            return False
    return False


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

    def _tree_grid(self, j: int, values) -> np.ndarray:
        """(n_grid, len(maps[j])) grid values of input column ``j`` as the trees see them: the background's
        first row with column ``j`` set to each value (as brute force sets it) through the pipeline's
        transforms, then converted as the final model's reader converts its own inputs (its dtype, a
        ``missing=`` sentinel read as missing, category codes)."""
        values = np.asarray(values).reshape(-1)
        out = _columns(self.pre.transform(rows_with(self.X, np.zeros(len(values), dtype=np.intp), {j: values})))
        return np.column_stack([model_grid(self.model, int(c), out[c]) for c in self.maps[j]])

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
    A step of unknown type with as many outputs as inputs counts as column-wise when, on rows of ``X``,
    each of its outputs keeps its value with every other input column changed (the engine's self-check
    then compares the reading with the pipeline's own response).
    """
    if not plain_pipeline(estimator, response_method):
        return None
    final = estimator.steps[-1][1]
    if not supports_estimator(final, response_method):
        return None
    pre = estimator[:-1]
    guessed: list = []
    try:
        maps = _map(pre if len(pre.steps) > 1 else pre.steps[0][1], X.shape[1], guessed,
                    getattr(final, "n_features_in_", None))
        xt = _model_input(pre.transform(X))
    except (_NotColumnwise, ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None
    if sum(len(m) for m in maps) != xt.shape[1] or len({c for m in maps for c in m}) != xt.shape[1]:
        return None
    if guessed and _columnwise_on(pre, X, maps) is not None:
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
