"""Partial dependence and ICE of one fitted model, without resampling."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._evaluate import Evaluation, PDEffect, resolve_outputs
from ._plan import make_spec
from ._validate import (
    check_choice,
    check_fitted_columns,
    check_missing_supported,
    check_optional_positive_int,
    check_predictions_finite,
    check_rng,
    check_sample_weight,
    is_fitted,
)
from .engine import describe_choices, record_engine_choices
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.response import resolve_response_method
from .grid import Grid
from .header import ResultHeader
from .io import build_tree
from .options import Execution

KINDS = ("average", "individual", "both")


def partial_dependence(
    estimator,
    X,
    features,
    *,
    grid: Grid | None = None,
    response_method: str = "auto",
    kind: str = "average",
    sample_weight=None,
    max_ice_instances: int | None = None,
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    target_names=None,
    rng=None,
) -> xr.DataTree:
    """Partial dependence (and ICE) of a fitted estimator, without resampling.

    Parameters
    ----------
    estimator : fitted scikit-learn estimator (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Background data: the PD averages the model over these rows.
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    grid : Grid, optional
        Where the PD is evaluated (:class:`pdpboot.Grid`; None: ``Grid()``, scikit-learn's rule: 50
        points between the 5 % and 95 % percentiles of a numeric feature, the levels of a categorical one).
    response_method : {"auto", "predict_proba", "decision_function", "predict"}
    kind : {"average", "individual", "both"}
        ``individual``/``both`` also store ICE curves (``pd`` is always stored).
    sample_weight : array of shape (n_rows,), optional
        Weights of the average (ICE curves are unweighted).
    max_ice_instances : int, optional
        Keep ICE for a random subset of this many rows (drawn with ``rng``).
    method : {"auto", "brute", "tree"}
    memory_limit : int
        Bytes allowed for one stacked prediction block (brute engine).
    target_names : list of str, optional
        Names of the regression targets (``output`` coordinate).

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, *features) and, for
        ICE kinds, ``ice`` (``instance``, ``output``, *features).

    See Also
    --------
    pdpboot.bootstrap_partial_dependence : The same on refits of resamples, with bands.
    sklearn.inspection.partial_dependence : The reference this equals (``method="brute"``).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from pdpboot import Grid
    >>> from pdpboot.datasets import make_electricity_prices
    >>> X, y = make_electricity_prices(200, rng=0)
    >>> pd1 = partial_dependence(LinearRegression().fit(X, y), X, ["Hour"], grid=Grid(5))
    >>> pd1["Hour"]["pd"].dims
    ('output', 'Hour')
    """
    if not is_fitted(estimator):
        raise ValueError(
            f"{type(estimator).__name__} is not fitted; fit it first, or use "
            "pdpboot.bootstrap_partial_dependence, which fits clones itself."
        )
    check_fitted_columns(estimator, X)
    check_choice(kind, "kind", KINDS)
    engine = Execution(method=method, memory_limit=memory_limit)  # validated where a run's are
    spec = make_spec(X, features, grid, method=engine.method, memory_limit=engine.memory_limit)
    check_missing_supported(estimator, spec.X, spec.names, spec.grids)
    max_ice_instances = check_optional_positive_int(max_ice_instances, "max_ice_instances")
    generator = np.random.default_rng(check_rng(rng))
    ice_rows = None
    if kind != "average":
        ice_rows = np.arange(spec.n_rows)
        if max_ice_instances is not None and max_ice_instances < spec.n_rows:
            ice_rows = np.sort(generator.choice(spec.n_rows, size=int(max_ice_instances), replace=False))
    settings = dict(response_method=response_method, kind=kind, max_ice_instances=max_ice_instances,
                    sample_weight=sample_weight is not None)
    return one_fit_tree(estimator, PDEffect(spec), settings, response_method=response_method,
                        sample_weight=sample_weight, target_names=target_names, ice_rows=ice_rows,
                        rng_entropy=str(generator.bit_generator.seed_seq.entropy))


def one_fit_tree(estimator, effect, settings: dict, *, response_method: str, sample_weight=None,
                 target_names=None, ice_rows=None, h_rows=None, rng_entropy: str | None = None) -> xr.DataTree:
    """The result tree of one evaluation of a fitted model: the one-fit path of every effect, with
    the engine choices recorded and one :class:`~pdpboot.header.ResultHeader`."""
    spec = effect.spec
    weights = check_sample_weight(sample_weight, spec.n_rows)
    resolved = resolve_response_method(estimator, response_method)
    outputs = resolve_outputs(estimator, resolved, target_names=target_names, rows=spec.rows(np.arange(1)))
    evaluation = Evaluation(resolved, outputs, np.arange(spec.n_rows), weights, {"ice": ice_rows, "h": h_rows})
    with record_engine_choices() as choices:  # which engine computed each feature set, and why
        per_node = effect.evaluate(estimator, evaluation)
    check_predictions_finite(per_node, what=f"{type(estimator).__name__}")
    header = ResultHeader.describe(estimator, dict(spec.settings, **settings), response=resolved, outputs=outputs,
                                   n_rows=spec.n_rows, rng_entropy=rng_entropy, supports=effect.supports(resolved),
                                   engine=describe_choices(choices), effect=effect.name)
    return build_tree(spec, per_node, outputs=outputs, ice_rows=ice_rows, header=header,
                      node_attrs=effect.node_attrs())
