"""Regional partial dependence: where a feature's ICE curves disagree, and one PD per subgroup with bands.

A shallow tree on the other features (:func:`pdpboot.engine.ice_stats.find_partition`) splits the rows where the
focal feature's mean-centred ICE curves differ most; each region gets its PD.  The partition is
chosen on the full-data fit; every refit gives the PD of those regions on its own rows (so the
bands are conditional on the chosen partition) and also re-runs the search, whose choices are kept
(``refit_split_*``, ``split_frequency``) to show how stable the partition is.

A split is kept when it removes ``min_drop`` of its node's heterogeneity, a rule that also splits
data without any interaction; :func:`regional_split_test` tests the first split against no
interaction of the feature with any other, calibrated as :func:`pdpboot.h_statistic_test` is.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ._evaluate import Evaluation, NodeArrays, align_outputs, model_outputs, resolve_outputs
from ._loop import N_FIXED_SEEDS, fit_clone, fixed_background, root_generator, row_weights, run
from ._plan import PDSpec, make_plan, make_spec
from ._validate import check_enough_rows, check_rng, is_fitted
from .bootstrap import run_bootstrap
from .engine import compute_pd_many
from .engine.brute import brute_partial_dependence
from .engine.hstats import gaussian_process_fit, subsample_rows
from .engine.ice_stats import Partition, centred_curves, find_partition, heterogeneity, regional_means
from .engine.response import resolve_response_method
from .grid import PD_RESOLUTION, Grid, check_grid, make_grids
from .header import ResultHeader
from .interaction import SMOOTH_BACKGROUND_ROWS, NullReplicates, rescaled_noise
from .options import Execution, Resampling, resolve_execution, resolve_run_options
from .schema import node_name

_SPLIT_VARIABLES = ("split_feature", "split_threshold", "split_drop")
SELECTION = ("partition chosen on the full-data fit; every refit's regional PD on those regions "
             "(bands conditional on the partition); each refit's own search in refit_split_*")


def candidate_columns(spec: PDSpec, categorical_features=None) -> dict[int, tuple[np.ndarray, bool]]:
    """Column position -> (values, categorical) of every column without missing values."""
    positions = range(len(spec.names))
    flags = make_grids(spec.X, spec.names, positions, grid_resolution=2, percentiles=(0.0, 1.0),
                       categorical_features=categorical_features)
    out = {}
    for p in positions:
        col = spec.X.iloc[:, p] if isinstance(spec.X, pd.DataFrame) else pd.Series(np.asarray(spec.X)[:, p])
        if not col.isna().any():
            out[p] = (col.to_numpy(dtype=object if flags[p].categorical else float), flags[p].categorical)
    return out


@dataclass(frozen=True)
class RegionalEffect:
    """The PD of a 1-D feature in each region of its partition (``partitions``: one per feature set,
    None: each model's own), and each model's own partition search."""

    spec: PDSpec
    columns: dict
    max_depth: int = 2
    min_size: float = 20.0
    min_drop: float = 0.05
    partitions: tuple[Partition, ...] | None = None
    name: str = "regional_pd"

    def fixed_rows(self, background: np.ndarray, seeds) -> dict:
        return {}

    def search(self, fitted, evaluation: Evaluation) -> tuple[Partition, ...]:
        return tuple(own for own, _, _ in self._curves(fitted, evaluation))

    def _curves(self, fitted, ev: Evaluation):
        """Per feature set: the model's own partition, its ICE (rows, outputs, grid), and the other columns."""
        own = model_outputs(fitted, ev.response_method, ev.outputs)
        sets, spec = self.spec.feature_sets, self.spec
        arrays = compute_pd_many(fitted, spec.rows(ev.background), sets, [spec.grid_values(fs) for fs in sets],
                                 response_method=ev.response_method, method=spec.method, average=False,
                                 individual=True, memory_limit=spec.memory_limit, n_outputs=len(own))
        w = np.ones(ev.background.size) if ev.weights is None else np.asarray(ev.weights, dtype=float)
        for fs, (_, ice) in zip(sets, arrays):
            ice = align_outputs(ice, own, ev.outputs, 1, 0.0 if ev.response_method == "predict_proba" else np.nan)
            columns = {p: (x[ev.background], c) for p, (x, c) in self.columns.items() if p != fs[0]}
            yield find_partition(centred_curves(ice), w, columns, max_depth=self.max_depth, min_size=self.min_size,
                                 min_drop=self.min_drop), ice, (columns, w)

    def evaluate(self, fitted, evaluation: Evaluation) -> NodeArrays:
        """Each model's own splits (``split_*``, heap order); with fixed ``partitions`` also the PD, share of
        the rows and explained heterogeneity of their regions."""
        out = {}
        for k, (own, ice, (columns, w)) in enumerate(self._curves(fitted, evaluation)):
            slots = {s.node: s for s in own.splits}
            split = [slots.get(i) for i in range(2**self.max_depth - 1)]
            name = self.spec.dims(self.spec.feature_sets[k])
            out[node_name(name)] = variables = {
                "split_feature": (("split",), np.array([-1 if s is None else s.feature for s in split])),
                "split_threshold": (("split",), np.array([0.0 if s is None or s.levels else s.threshold
                                                          for s in split])),
                "split_drop": (("split",), np.array([0.0 if s is None else s.drop for s in split])),
                "ice_heterogeneity": ((), np.asarray(own.total / w.sum()))}
            if self.partitions is not None:
                fixed = self.partitions[k]
                region, n_regions, C = fixed.assign(columns), len(fixed.regions), centred_curves(ice)
                within = sum(heterogeneity(C[region == r], w[region == r]) for r in range(n_regions))
                variables.update({
                    "pd": (("output", "region", *name), regional_means(ice, w, region, n_regions).transpose(1, 0, 2)),
                    "region_share": (("region",), np.bincount(region, w, n_regions) / w.sum()),
                    "heterogeneity_explained": ((), np.asarray(1 - within / own.total if own.total > 0 else 0.0))})
        return out

    @property
    def settings(self) -> dict:
        return {"max_depth": self.max_depth, "min_size": self.min_size, "min_drop": self.min_drop,
                "partitions": json.dumps([self._splits(p) for p in self.partitions or ()])}

    def _splits(self, partition: Partition) -> list[dict]:
        return [{"node": s.node, "feature": self.spec.names[s.feature], "threshold": None if s.levels else s.threshold,
                 "levels": list(map(str, s.levels)), "drop": s.drop} for s in partition.splits]

    def supports(self, response_method: str) -> dict[str, tuple[float | None, float | None]]:
        out: dict = {"region_share": (0.0, 1.0), "heterogeneity_explained": (None, 1.0),
                     "ice_heterogeneity": (0.0, None)}
        return dict(out, pd=(0.0, 1.0)) if response_method == "predict_proba" else out

    def node_attrs(self) -> dict[str, dict]:
        out = {}
        for fs, partition in zip(self.spec.feature_sets, self.partitions or ()):
            out[node_name(self.spec.dims(fs))] = {
                "effect": "regional_pd", "regions": partition.labels(self.spec.names),
                "splits": json.dumps(self._splits(partition)), "selection": SELECTION,
                "split_test": "none here: splits kept by min_drop; see regional_split_test"}
        return out


def regional_partial_dependence(
    estimator,
    X,
    y,
    features,
    *,
    grid: Grid | None = None,
    resampling: str | Resampling = "auto",
    execution: Execution | None = None,
    max_depth: int = 2,
    min_size: int | None = None,
    min_drop: float = 0.05,
    response_method: str = "auto",
    rng=None,
) -> xr.DataTree:
    """Partial dependence of each feature within the regions of a shallow partition of the other features,
    with the refits' bands and split frequencies.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator (or Pipeline)
    X, y, features, grid, resampling, execution, response_method, rng
        As in :func:`pdpboot.bootstrap_partial_dependence` (1-D features only).
    max_depth : int
        Depth of the partition (1 or 2 levels of splits).
    min_size : int, optional
        Fewest rows in a region; default ``max(20, 10 % of the rows)``.
    min_drop : float
        A node is split when its best split removes this share of its heterogeneity.

    Returns
    -------
    xarray.DataTree
        One node per feature with ``pd`` (``output``, ``region``, feature), ``region_share``,
        ``heterogeneity_explained`` and their ``_resamples``; ``split_feature``, ``split_threshold``,
        ``split_drop`` (``split``: heap order) of the full-data search, ``refit_split_*``
        (``resample``, ``split``) of every refit's and ``split_frequency`` (``split``, ``candidate``).
        Node attrs ``regions`` (definitions), ``splits`` (JSON), ``selection``.  A simultaneous band of
        :func:`pdpboot.confidence_bands` covers every region's curve at once.

    Examples
    --------
    >>> import numpy as np, pdpboot
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
    >>> y = X[:, 0] * (X[:, 2] > 0) + X[:, 1]
    >>> res = regional_partial_dependence(DecisionTreeRegressor(max_depth=6), X, y, ["x0"], max_depth=1,
    ...                                   resampling=pdpboot.Resampling("bootstrap", n_resamples=5), rng=0)
    >>> res["x0"].attrs["regions"][0].startswith("x2 <=")
    True
    """
    if is_fitted(estimator):
        raise ValueError(f"{type(estimator).__name__} is already fitted, but regional_partial_dependence fits "
                         "clones itself; pass the unfitted estimator (e.g. sklearn.base.clone(estimator)).")
    if max_depth not in (1, 2):
        raise ValueError(f"max_depth must be 1 or 2, got {max_depth!r}.")
    if not 0 <= min_drop < 1:
        raise ValueError(f"min_drop must be in [0, 1), got {min_drop!r}.")
    resampling, execution = resolve_run_options(resampling, execution, n_resamples=200)
    check_enough_rows(X)
    grid = check_grid(grid, PD_RESOLUTION)
    spec = make_spec(X, features, grid, method=execution.method, memory_limit=execution.memory_limit)
    if any(len(fs) != 1 for fs in spec.feature_sets):
        raise ValueError("regional_partial_dependence takes single features; pass a list of names, not pairs.")
    size = max(20.0, 0.1 * spec.n_rows) if min_size is None else float(min_size)
    # one root seed, copied: the plan's loop and the full-data fit below draw the same streams
    seq = root_generator(check_rng(rng), execution.checkpoint).bit_generator.seed_seq

    def copy():
        return np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key, n_children_spawned=seq.n_children_spawned)

    effect = RegionalEffect(spec, candidate_columns(spec, grid.categorical_features), max_depth, size, float(min_drop))
    plan = make_plan(estimator, y, effect, resampling=resampling, execution=execution,
                     response_method=response_method, rng=copy())
    # the loop has no step between the full-data fit and the refits: fit it as the loop will, to fix the partition
    full_seed, background_seed, _ = np.random.default_rng(copy()).spawn(N_FIXED_SEEDS)
    model = fit_clone(plan, None, full_seed, only_if_unset=True)
    resolved = resolve_response_method(model, response_method)
    background = fixed_background(plan, background_seed)
    evaluation = Evaluation(resolved, resolve_outputs(model, resolved, y=plan.y), background,
                            row_weights(plan, background))
    plan = dataclasses.replace(plan, effect=dataclasses.replace(effect, partitions=effect.search(model, evaluation)))
    tree = run_bootstrap(plan, stacklevel=3)
    for fs, partition in zip(spec.feature_sets, plan.effect.partitions):
        tree[node_name(spec.dims(fs))] = xr.DataTree(_with_frequencies(
            tree[node_name(spec.dims(fs))].to_dataset(), partition, spec, fs[0]))
    return tree


def _with_frequencies(ds: xr.Dataset, partition: Partition, spec: PDSpec, focal: int) -> xr.Dataset:
    """Each refit's own splits as ``refit_split_*`` (no band) and how often each feature was chosen per node."""
    ds = ds.rename({f"{v}_resamples": f"refit_{v}" for v in _SPLIT_VARIABLES})
    candidates = [p for p in range(len(spec.names)) if p != focal]
    chosen = ds["refit_split_feature"].values
    valid = ~np.isnan(ds["refit_split_drop"].values).any(1)
    frequency = np.stack([(chosen[valid] == p).mean(0) for p in [*candidates, -1]], axis=1)
    ds["split_frequency"] = (("split", "candidate"), frequency)
    names = [*(spec.names[p] for p in candidates), "(none)"]
    return ds.assign_coords(region=partition.labels(spec.names), split=np.arange(ds.sizes["split"]), candidate=names)


@dataclass(frozen=True, eq=False)
class AdditiveNull(NullReplicates):
    """Refits on null data ``y* = f0(X) + e*`` whose ``f0`` has no interaction of feature ``focal`` with the others."""

    focal: int = 0

    def prepare(self, X, y, weights, seed: np.random.Generator) -> AdditiveNull:
        background_seed, gp_seed = seed.spawn(2)
        background, _ = subsample_rows(X.shape[0], SMOOTH_BACKGROUND_ROWS, background_seed)
        predict, noise_sd = gaussian_process_fit(X, y, gp_seed)
        w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        Z, others = np.asarray(X, dtype=float), [p for p in range(X.shape[1]) if p != self.focal]
        fitted = predict(Z)[:, 0]
        mean = np.sum(w * fitted) / w.sum()
        for part in ([self.focal], others):  # f0 = mean + PD_j + PD_-j, each centred
            values = brute_partial_dependence(predict, Z[background], part, [Z[:, p] for p in part], points=True,
                                              weights=w[background])[0][0]
            mean = mean + values - np.sum(w * values) / w.sum()
        return AdditiveNull(mean=mean, noise=rescaled_noise(y - fitted, w, noise_sd), noise_sd=float(noise_sd),
                            focal=self.focal)


def regional_split_test(estimator, X, y, feature, *, n_resamples: int = 99, grid: Grid | None = None,
                        min_size: int | None = None, rng=None, execution: Execution | None = None) -> xr.DataTree:
    """Refit-based test of "the feature interacts with no other", through the first split of its partition (regression).

    The statistic ``T`` is the ICE heterogeneity (per row) the best first split removes; it is compared
    with refits on null data ``y* = f0(X) + e*`` (``f0``: a Gaussian-process fit of ``y`` without any
    interaction of the feature, ``e*``: its residuals resampled); p-value ``(1 + #{T*_b >= T}) / (1 + B)``.

    Parameters
    ----------
    estimator : unfitted scikit-learn regressor (or Pipeline)
    X : DataFrame or array of shape (n_rows, n_columns)
        Numeric, finite features.
    y : array-like of shape (n_rows,)
    feature : str or int
    n_resamples : int
        Number of null refits B.
    grid, min_size, rng, execution
        As in :func:`regional_partial_dependence`.

    Returns
    -------
    xarray.DataTree
        Root attrs ``statistic``, ``pvalue``, ``split_feature``, ``drop_share`` (the share of the
        heterogeneity the split removes), ``noise_sd``; one node with ``removed`` and ``removed_null``.
    """
    execution = resolve_execution(execution)
    grid = check_grid(grid, PD_RESOLUTION)
    spec = make_spec(X, [feature], grid, method=execution.method, memory_limit=execution.memory_limit)
    try:
        numeric = bool(np.all(np.isfinite(np.asarray(spec.X, dtype=float))))
    except (TypeError, ValueError):
        numeric = False
    if not numeric or len(spec.feature_sets) != 1:
        raise ValueError("regional_split_test needs one feature and numeric, finite columns (its null model is a "
                         "Gaussian-process fit of y on X); encode categorical columns as numbers.")
    focal = spec.feature_sets[0][0]
    size = max(20.0, 0.1 * spec.n_rows) if min_size is None else float(min_size)
    effect = RegionalEffect(spec, candidate_columns(spec, grid.categorical_features), 1, size, 0.0)
    plan = make_plan(estimator, np.asarray(y, dtype=float), effect, resampling=Resampling(
        "bootstrap", n_resamples=n_resamples), execution=execution, response_method="predict", rng=rng,
        scheme=AdditiveNull(focal=focal))
    out = run(plan, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    node = node_name(spec.dims(spec.feature_sets[0]))
    stacked = out.stacked()[node]  # the heterogeneity the first split removes, per row
    observed = out.estimate[node]["split_drop"][1][0] * out.estimate[node]["ice_heterogeneity"][1]
    null = stacked["split_drop_resamples"][1][:, 0] * stacked["ice_heterogeneity_resamples"][1]
    valid = ~np.isnan(null)
    pvalue = (1 + np.sum(null[valid] >= observed)) / (1 + valid.sum())
    chosen = int(out.estimate[node]["split_feature"][1][0])
    header = ResultHeader.describe(
        estimator, dict(plan.settings, resampling="null", n_resamples=plan.n_resamples), response="predict",
        outputs=out.evaluation.outputs, n_rows=spec.n_rows, effect="regional_pd", target="learner",
        uncertainty="null-refits", n_resamples=plan.n_resamples, created=out.created,
        rng_entropy=out.seed["entropy"], statistic=float(observed), statistic_name="removed",
        drop_share=float(out.estimate[node]["split_drop"][1][0]),
        pvalue=float(pvalue), split_feature=spec.names[chosen] if chosen >= 0 else "", null_model="smooth-additive",
        noise_sd=out.scheme.noise_sd, n_failed_resamples=int((~valid).sum()))
    ds = xr.Dataset({"removed": ((), observed), "removed_null": (("resample",), null)},
                    coords={"resample": np.arange(plan.n_resamples)}, attrs={"features": list(spec.dims((focal,)))})
    tree = xr.DataTree(children={node: xr.DataTree(ds)})
    tree.attrs = header.to_attrs()
    return tree
