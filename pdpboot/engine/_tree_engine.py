"""Registration of the exact tree engine (:mod:`.tree`, :mod:`.pipeline`) in :mod:`.registry`.

Supports: scikit-learn trees, forests and (histogram) gradient boosting, XGBoost, LightGBM,
CatBoost (symmetric trees, numeric features) and column-wise Pipelines into them.  Cost:
each feature set's :class:`.tree.TreePlan` (the walk's estimate against brute force's, per
row and grid point when ICE or a non-linear link needs per-row values).  Check:
:func:`._tree_check.check_reading` (the parsed ensemble against the model's own response).
"""

from __future__ import annotations

from . import tree
from ._tree_check import check_reading
from ._tree_compiled import NEEDS_NUMBA
from .pipeline import prepare_pipeline
from .registry import Engine, register


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
