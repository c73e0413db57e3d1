"""Heterogeneity and interaction statistics of one fitted model, for the resample loop.

The bootstrap loop calls :func:`model_statistics` on the full-data fit and on
every refit, right after :func:`pdpboot._pd.evaluate_model`, so resamples keep
only these statistics and never the ICE tensors or prediction matrices they
are computed from.  Every variable added here gets ``_resamples`` (and, via
:func:`pdpboot.confidence_bands`, bands) exactly like ``pd``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._pd import PDSpec, _align_outputs
from .engine import compute_pd
from .engine.hstats import interaction_statistics
from .engine.ice_stats import ice_statistics
from .engine.response import output_labels, response_function
from .schema import node_name

DEFAULT_N_MAX = 500


def check_interactions(interactions) -> int | None:
    """Validate the ``interactions`` flag of the bootstrap.

    Returns
    -------
    int or None
        The H-statistic row cap ``n_max`` (``True`` -> 500), or None when off.
    """
    if interactions is False or interactions is None:
        return None
    if interactions is True:
        return DEFAULT_N_MAX
    if isinstance(interactions, numbers.Integral) and interactions >= 2:
        return int(interactions)
    raise ValueError(
        f"interactions must be True/False or an integer >= 2 (the at most n_max rows the H "
        f"statistics use), got {interactions!r}."
    )


def model_statistics(
    fitted,
    spec: PDSpec,
    per_node: dict,
    *,
    response_method: str,
    outputs: list,
    background: np.ndarray,
    weights: np.ndarray | None,
    heterogeneity: bool,
    n_max: int | None,
    rng: np.random.Generator,
) -> dict:
    """Add heterogeneity and/or H statistics of one fitted model to its per-node variables.

    Parameters
    ----------
    per_node : dict
        Output of :func:`pdpboot._pd.evaluate_model` for the same model; updated in place.
    background, weights
        The rows (positions) and weights the model's PD was averaged over.
    heterogeneity : bool
        Add ``ice_sd``, ``cice_sd``, ``dice_sd`` (``output``, feature) and
        ``heterogeneity_index`` (``output``) to every 1-D node, from the ICE
        curves of all background rows (weighted).
    n_max : int or None
        When set, add ``h2_overall`` (``output``) to every 1-D node and ``h2``,
        ``h_unnormalized`` (``output``) to every 2-D node, computed on at most
        ``n_max`` background rows drawn with ``rng``.

    Returns
    -------
    dict
        ``per_node``.
    """
    if not heterogeneity and n_max is None:
        return per_node
    own = output_labels(fitted, response_method, outputs if response_method == "predict" else None,
                        len(outputs))
    fill = 0.0 if response_method == "predict_proba" else np.nan
    X_bg = spec.rows(background)
    singles = [fs for fs in spec.feature_sets if len(fs) == 1]
    if heterogeneity:
        for fs in singles:
            grid = spec.grids[fs[0]]
            _, ice = compute_pd(fitted, X_bg, fs, spec.grid_values(fs), response_method=response_method,
                                method=spec.method, average=False, individual=True,
                                memory_limit=spec.memory_limit, n_outputs=len(own))
            ice = _align_outputs(ice, own, outputs, 1, fill)
            stats = ice_statistics(ice, grid.values, weights=weights, categorical=grid.categorical)
            variables = per_node[spec_node(spec, fs)]
            for name in ("ice_sd", "cice_sd", "dice_sd"):
                variables[name] = (("output", grid.name), stats[name])
            variables["heterogeneity_index"] = (("output",), stats["heterogeneity_index"])
    if n_max is not None:
        pairs = [fs for fs in spec.feature_sets if len(fs) == 2]
        stats = interaction_statistics(
            response_function(fitted, response_method), X_bg, singles=[fs[0] for fs in singles],
            pairs=pairs, weights=weights, n_max=n_max, rng=rng, memory_limit=spec.memory_limit,
            n_outputs=len(own),
        )
        for fs, values in stats.items():
            variables = per_node[spec_node(spec, fs)]
            for name, arr in values.items():
                variables[name] = (("output",), _align_outputs(arr, own, outputs, 0, fill))
    return per_node


def spec_node(spec: PDSpec, feature_set: tuple[int, ...]) -> str:
    """Node name of a feature set of ``spec``."""
    return node_name(spec.dims(feature_set))
