"""One fitted model -> every variable of every node (plain arrays): the PD and H effects."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._plan import PDSpec, names_of_target
from ._validate import check_target_names
from .engine import compute_pd_many
from .engine.hstats import interaction_statistics, subsample_rows
from .engine.ice_stats import ice_statistics
from .engine.response import output_labels, response_function
from .schema import node_name

DEFAULT_N_MAX = 500
#: node name -> variable name -> (dims, array)
NodeArrays = dict[str, dict[str, tuple[tuple[str, ...], np.ndarray]]]


class MissingClassError(ValueError):
    """A refit saw fewer classes than the full-data fit and its scores are not comparable."""


@dataclass(frozen=True)
class Evaluation:
    """What one fitted model is evaluated on: the loop's part, and the effect's own fixed rows."""

    response_method: str  # resolved
    outputs: list  # output labels of the full-data model
    background: np.ndarray  # row positions the effect is averaged over
    weights: np.ndarray | None = None  # weights of those rows
    #: the effect's own fixed rows (from its ``fixed_rows``), by name; the loop passes them on unread
    fixed: Mapping[str, np.ndarray | None] = field(default_factory=dict)


def model_outputs(fitted, response_method: str, outputs: list) -> list:
    """Output labels of ``fitted``; decision scores of a refit that missed one of ``outputs`` raise
    :class:`MissingClassError`."""
    own = output_labels(fitted, response_method, outputs if response_method == "predict" else None, len(outputs))
    if response_method == "decision_function" and own != list(outputs):
        missing = [label for label in outputs if label not in own]
        raise MissingClassError(
            f"the refit saw no rows of class(es) {missing}, so its decision scores are not comparable "
            "with the full-data model's"
        )
    return own


def resolve_outputs(fitted, response_method: str, *, y=None, target_names=None, rows=None) -> list:
    """The one rule for ``output`` labels: a classifier's classes (a binary decision score: the second);
    a regressor's ``target_names``, else :func:`names_of_target` of ``y`` (without ``y``: counted on ``rows``)."""
    if response_method != "predict":
        return output_labels(fitted, response_method, None, 1)
    if y is not None:
        n_targets = 1 if np.ndim(y) == 1 else np.shape(y)[1]
        names = names_of_target(y) if target_names is None else check_target_names(target_names, n_targets)
    else:
        # a scikit-learn model that records its number of outputs needs no (slow) predict call
        n_targets = getattr(fitted, "n_outputs_", None)
        if not isinstance(n_targets, (int, np.integer)) or isinstance(n_targets, bool) or n_targets < 1:
            n_targets = np.asarray(fitted.predict(rows)).reshape(rows.shape[0], -1).shape[1]
        names = check_target_names(target_names, int(n_targets))
    return output_labels(fitted, "predict", names, n_targets)


def align_outputs(arr: np.ndarray | None, own: list, wanted: list, axis: int, fill: float) -> np.ndarray | None:
    """A model's output columns in the order of ``wanted`` (``fill`` where absent)."""
    if arr is None or own == wanted:
        return arr
    shape = list(arr.shape)
    shape[axis] = len(wanted)
    out = np.full(shape, fill)
    index = {label: k for k, label in enumerate(own)}
    for k, label in enumerate(wanted):
        if label in index:
            np.moveaxis(out, axis, 0)[k] = np.moveaxis(arr, axis, 0)[index[label]]
    return out


def evaluate_fit(fitted, spec: PDSpec, evaluation: Evaluation, *, heterogeneity: bool = False,
                 interactions: bool = False) -> NodeArrays:
    """PD (and ICE on ``evaluation.fixed["ice"]``, ICE heterogeneity of 1-D sets, H statistics) of one
    fitted model for every feature set, one engine call per kind of pass."""
    ev = evaluation
    ice_rows = ev.fixed.get("ice")
    own = model_outputs(fitted, ev.response_method, ev.outputs)
    fill = 0.0 if ev.response_method == "predict_proba" else np.nan
    same_rows = ice_rows is not None and ev.weights is None and np.array_equal(ice_rows, ev.background)
    X_bg = spec.rows(ev.background)
    X_ice = None if ice_rows is None or same_rows else spec.rows(ice_rows)
    common = dict(response_method=ev.response_method, method=spec.method, memory_limit=spec.memory_limit,
                  n_outputs=len(own))
    # one engine call per kind of pass, so the model is read once for all its feature sets
    keep_ice = {fs: same_rows or (heterogeneity and len(fs) == 1) for fs in spec.feature_sets}
    passes: dict[tuple[int, ...], tuple] = {}
    readings: dict = {}  # the engines' readings of this model on X_bg: read once for both passes
    for individual in (False, True):
        sets = [fs for fs in spec.feature_sets if keep_ice[fs] == individual]
        if sets:
            arrays = compute_pd_many(fitted, X_bg, sets, [spec.grid_values(fs) for fs in sets],
                                     weights=ev.weights, individual=individual, prepared=readings, **common)
            passes.update(zip(sets, arrays))
    ice_passes = {}
    if X_ice is not None:
        sets = spec.feature_sets
        arrays = compute_pd_many(fitted, X_ice, sets, [spec.grid_values(fs) for fs in sets], average=False,
                                 individual=True, **common)
        ice_passes = {fs: ice for fs, (_, ice) in zip(sets, arrays)}
    out: NodeArrays = {}
    for fs in spec.feature_sets:
        dims = spec.dims(fs)
        with_stats = heterogeneity and len(fs) == 1
        avg, ice_bg = passes[fs]
        variables = {"pd": (("output", *dims), align_outputs(avg, own, ev.outputs, 0, fill))}
        ice = ice_bg if same_rows else ice_passes.get(fs)
        if ice is not None:
            variables["ice"] = (("instance", "output", *dims), align_outputs(ice, own, ev.outputs, 1, fill))
        if with_stats:
            grid = spec.grids[fs[0]]
            stats = ice_statistics(align_outputs(ice_bg, own, ev.outputs, 1, fill), grid.values,
                                   weights=ev.weights, categorical=grid.categorical)
            for name in ("ice_sd", "cice_sd", "dice_sd"):
                variables[name] = (("output", grid.name), stats[name])
            variables["heterogeneity_index"] = (("output",), stats["heterogeneity_index"])
        out[node_name(dims)] = variables
    if interactions:
        for name, variables in h_statistics(fitted, spec, ev, own).items():
            out[name].update(variables)
    return out


def h_statistics(fitted, spec: PDSpec, evaluation: Evaluation, own: list) -> NodeArrays:
    """``h2_overall`` of 1-D and ``h2``, ``h_unnormalized`` of 2-D feature sets, on the background rows
    among ``evaluation.fixed["h"]``."""
    ev, h_rows = evaluation, evaluation.fixed.get("h")
    fill = 0.0 if ev.response_method == "predict_proba" else np.nan
    keep = slice(None) if h_rows is None else np.isin(ev.background, h_rows)
    X_h = spec.rows(ev.background[keep])
    stats = interaction_statistics(
        response_function(fitted, ev.response_method), X_h, singles=[fs[0] for fs in spec.feature_sets
                                                                     if len(fs) == 1],
        pairs=[fs for fs in spec.feature_sets if len(fs) == 2], n_max=max(X_h.shape[0], 2),
        weights=None if ev.weights is None else ev.weights[keep], memory_limit=spec.memory_limit,
        n_outputs=len(own),
    )
    return {node_name(spec.dims(fs)): {name: (("output",), align_outputs(arr, own, ev.outputs, 0, fill))
                                       for name, arr in values.items()} for fs, values in stats.items()}


def nan_like(arrays: NodeArrays) -> NodeArrays:
    """NaN variables of the same dims and shapes, standing in for a failed resample."""
    return {name: {var: (dims, np.full(np.shape(arr), np.nan)) for var, (dims, arr) in variables.items()}
            for name, variables in arrays.items()}


def check_interactions(interactions) -> int | None:
    """The H-statistic row cap ``n_max`` (``True`` -> 500), or None when off."""
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


#: what ``statistics=`` may ask a PD run to keep besides the PD (the options of :meth:`PDEffect.from_options`)
STATISTICS = ("ice", "heterogeneity", "interactions")


def check_statistics(statistics) -> dict:
    """``statistics=`` (a name, names, or a dict name -> option) as keywords of :meth:`PDEffect.from_options`.

    Examples
    --------
    >>> check_statistics(["ice", "interactions"])
    {'ice': True, 'interactions': True}
    >>> check_statistics({"ice": 20})
    {'ice': 20}
    """
    if statistics is None:
        options = {}
    elif isinstance(statistics, Mapping):
        options = dict(statistics)
    else:
        names = [statistics] if isinstance(statistics, str) else list(statistics)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"statistics must be a name, a list of names or a dict name -> option, got "
                            f"{statistics!r}; e.g. statistics=['ice', 'interactions'] or statistics={{'ice': 50}}.")
        options = dict.fromkeys(names, True)
    unknown = [name for name in options if name not in STATISTICS]
    if unknown:
        raise ValueError(f"statistics names {unknown[0]!r}, which is not one of {list(STATISTICS)}.")
    return options


#: statistics of a PD result that are >= 0 by definition (their band bounds are clipped at 0): ICE spreads,
#: H statistics and the PD-variance index (:mod:`pdpboot.interaction`), and the range of a curve
NON_NEGATIVE_STATISTICS = ("ice_sd", "cice_sd", "dice_sd", "heterogeneity_index", "h2", "h2_overall",
                           "h_unnormalized", "pd_variance_interaction", "pd_range")


@dataclass(frozen=True)
class PDEffect:
    """Partial dependence, with ICE (``ice``: all background rows, or that many random ones), ICE
    heterogeneity and H statistics (on at most ``n_max`` rows) on request."""

    spec: PDSpec
    ice: bool | int = False
    heterogeneity: bool = False
    n_max: int | None = None
    name: str = "pd"

    @classmethod
    def from_options(cls, spec: PDSpec, *, ice=False, heterogeneity=False, interactions=False) -> PDEffect:
        """Validate the PD options (``interactions``: False, True (500 rows) or a row cap >= 2)."""
        from ._validate import check_ice

        return cls(spec, check_ice(ice), bool(heterogeneity), check_interactions(interactions))

    def fixed_rows(self, background: np.ndarray, seeds: Sequence[np.random.Generator]) -> dict:
        """The ICE instances (drawn with ``seeds[0]``) and H-statistic rows (``seeds[1]``) among ``background``."""
        h_rows = None if self.n_max is None else background[subsample_rows(background.size, self.n_max, seeds[1])[0]]
        ice = self.ice
        if ice is False:
            ice_rows = None
        elif ice is True or ice >= background.size:
            ice_rows = background
        else:
            ice_rows = np.sort(seeds[0].choice(background, size=ice, replace=False))
        return {"ice": ice_rows, "h": h_rows}

    def evaluate(self, fitted, evaluation: Evaluation) -> NodeArrays:
        return evaluate_fit(fitted, self.spec, evaluation, heterogeneity=self.heterogeneity,
                            interactions=self.n_max is not None)

    @property
    def settings(self) -> dict:
        return {"ice": self.ice, "heterogeneity": self.heterogeneity,
                "interactions": 0 if self.n_max is None else self.n_max}

    def supports(self, response_method: str) -> dict[str, tuple[float | None, float | None]]:
        out: dict[str, tuple[float | None, float | None]] = {s: (0.0, None) for s in NON_NEGATIVE_STATISTICS}
        if response_method == "predict_proba":
            out.update(pd=(0.0, 1.0), ice=(0.0, 1.0), pd_centered=(-1.0, 1.0))
        return out

    def node_attrs(self) -> dict[str, dict]:
        return {}


@dataclass(frozen=True)
class HEffect(PDEffect):
    """The H statistics of every feature set alone, on a fixed subsample of at most ``n_max`` rows."""

    n_max: int | None = 500
    name: str = "h"

    def evaluate(self, fitted, evaluation: Evaluation) -> NodeArrays:
        own = model_outputs(fitted, evaluation.response_method, evaluation.outputs)
        return h_statistics(fitted, self.spec, evaluation, own)

    @property
    def settings(self) -> dict:
        return {"interactions": self.n_max}
