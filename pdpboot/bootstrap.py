"""The resample loop: clone, fit, evaluate PD on the shared grid, assemble the DataTree.

Every random draw flows from one seed: the root generator spawns a fixed set
of children for the full-data fit and the fixed subsamples, then one child per
resample, all before anything is dispatched to joblib.  Resample ``b`` depends
only on its own child, so results do not depend on ``n_jobs``, the joblib
backend, or ``n_resamples`` (a larger B extends a run with the same first
resamples).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier

from ._loop_stats import check_interactions, model_statistics
from ._pd import PDSpec, _jsonable, _task, build_tree, evaluate_model, make_spec, provenance
from ._validate import check_choice, check_missing_supported, check_positive_int, check_target, is_fitted
from .checkpoint import Checkpoint, fingerprint
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.refit import rows_of, seed_estimator
from .engine.resample import RESAMPLING, draw_rows, multiplicities
from .engine.response import output_labels, resolve_response_method

BACKGROUNDS = ("resample", "original", "out-of-bag")
ON_ERROR = ("raise", "skip")
_N_FIXED_SEEDS = 3  # full-data fit, fixed background subsample, ICE instances


def _resample_background(
    background: str, rows: np.ndarray, n_rows: int, fixed: np.ndarray,
    max_background: int | None, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Background rows (and weights) that resample's PD is averaged over."""
    if background == "original":
        return fixed, None
    if background == "out-of-bag":
        candidates = np.setdiff1d(np.arange(n_rows), rows)
        if candidates.size == 0:
            raise ValueError("This resample has no out-of-bag rows; use background='resample'.")
        if max_background is not None and candidates.size > max_background:
            candidates = np.sort(rng.choice(candidates, size=max_background, replace=False))
        return candidates, None
    if max_background is not None and rows.size > max_background:
        rows = np.sort(rng.choice(rows, size=max_background, replace=False))
    distinct, counts = multiplicities(rows, n_rows)
    return distinct, counts.astype(float)


def _evaluate_resample(
    estimator, spec: PDSpec, y, seed: np.random.Generator, *, scheme: str, strata, groups,
    subsample_fraction: float, background: str, fixed_background: np.ndarray,
    max_background: int | None, ice_rows: np.ndarray | None, response_method: str, outputs: list,
    heterogeneity: bool = False, n_max: int | None = None,
) -> dict:
    """Draw, fit and evaluate one resample (runs in a joblib worker)."""
    n_rows = spec.X.shape[0]
    draw_rng, fit_rng, bg_rng = seed.spawn(3)
    rows = draw_rows(scheme, n_rows, draw_rng, strata=strata, groups=groups,
                     subsample_fraction=subsample_fraction)
    model = seed_estimator(clone(estimator), fit_rng)
    model.fit(spec.rows(rows), rows_of(y, rows))
    bg_rows, weights = _resample_background(background, rows, n_rows, fixed_background,
                                            max_background, bg_rng)
    per_node = evaluate_model(model, spec, response_method=response_method, outputs=outputs,
                              background=bg_rows, weights=weights, ice_rows=None)
    model_statistics(model, spec, per_node, response_method=response_method, outputs=outputs,
                     background=bg_rows, weights=weights, heterogeneity=heterogeneity, n_max=n_max,
                     rng=seed.spawn(1)[0])  # 4th child: the three streams above are unchanged
    if ice_rows is not None:
        ice_nodes = evaluate_model(model, spec, response_method=response_method, outputs=outputs,
                                   background=ice_rows, ice_rows=ice_rows)
        for name, variables in ice_nodes.items():
            per_node[name]["ice"] = variables["ice"]
    return per_node


def _resample_job(*args, on_error: str, **kwargs) -> dict | str:
    """One resample; with ``on_error="skip"`` an exception comes back as its message."""
    try:
        return _evaluate_resample(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - recorded, counted and reported by the caller
        if on_error == "raise":
            raise
        return f"{type(exc).__name__}: {exc}"


def _progress_bar(iterable, total: int, progress, initial: int = 0):
    show = progress is True or (progress == "auto" and total >= 20 and sys.stderr.isatty())
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, initial=initial, desc="resamples", unit="fit")


def _failed_like(estimate: dict) -> dict:
    """NaN variables standing in for a failed resample."""
    return {name: {var: (dims, np.full(np.shape(arr), np.nan)) for var, (dims, arr) in variables.items()}
            for name, variables in estimate.items()}


def _seed_record(generator: np.random.Generator) -> dict:
    seq = generator.bit_generator.seed_seq
    return {"entropy": str(seq.entropy), "spawn_key": [int(k) for k in seq.spawn_key],
            "n_children_spawned": int(seq.n_children_spawned)}


def _root_generator(rng, checkpoint) -> np.random.Generator:
    """``default_rng(rng)``, except that ``rng=None`` resumes the seed of an existing checkpoint."""
    if rng is None and checkpoint is not None:
        stored = Checkpoint.stored_seed(checkpoint)
        if stored is not None:
            rng = np.random.SeedSequence(int(stored["entropy"]), spawn_key=tuple(stored["spawn_key"]),
                                         n_children_spawned=stored["n_children_spawned"])
    return np.random.default_rng(rng)


def _run_resamples(todo, jobs, *, n_resamples, done, on_error, max_failure_share, ckpt, progress, n_jobs):
    """Run the resample jobs, persisting each result; count failures and stop early on too many."""
    failures = {b: r for b, r in done.items() if isinstance(r, str)}
    allowed = int(np.floor(max_failure_share * n_resamples))
    stream = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    for b, out in zip(todo, _progress_bar(stream, n_resamples, progress, initial=n_resamples - len(todo))):
        if isinstance(out, str):
            failures[b] = out
            if ckpt is not None:
                ckpt.save_failure(b, out)
            if len(failures) > allowed:
                first = min(failures)
                raise RuntimeError(
                    f"{len(failures)} resamples failed, more than max_failure_share={max_failure_share} of "
                    f"{n_resamples}; the first, resample {first}, raised {failures[first]}"
                )
        else:
            done[b] = out
            if ckpt is not None:
                ckpt.save(b, out)
    return failures


def _stack(estimate: dict, resamples: list[dict]) -> dict:
    """Per node: each variable ``s`` of the estimate plus ``s_resamples`` (resample first)."""
    merged = {}
    for name, variables in estimate.items():
        merged[name] = dict(variables)
        for var, (dims, _) in variables.items():
            stacked = np.stack([r[name][var][1] for r in resamples])
            merged[name][f"{var}_resamples"] = (("resample", *dims), stacked)
    return merged


def bootstrap_partial_dependence(
    estimator,
    X,
    y,
    features,
    *,
    n_resamples: int = 200,
    resampling: str = "auto",
    subsample_fraction: float = 0.632,
    groups=None,
    background: str = "resample",
    max_background: int | None = None,
    ice: bool | int = False,
    heterogeneity: bool = False,
    interactions: bool | int = False,
    grid_resolution: int = 50,
    percentiles: tuple[float, float] = (0.05, 0.95),
    custom_values: Mapping | None = None,
    categorical_features=None,
    response_method: str = "auto",
    method: str = "auto",
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    n_jobs: int | None = None,
    rng=None,
    progress: bool | str = "auto",
    checkpoint: str | os.PathLike | None = None,
    on_error: str = "raise",
    max_failure_share: float = 0.1,
) -> xr.DataTree:
    """Refit an estimator on resamples and compute PD curves/surfaces on one fixed grid.

    Parameters
    ----------
    estimator : unfitted scikit-learn estimator (or Pipeline)
        Cloned and fitted on the full data (the estimate) and on every resample.
    X : DataFrame or array of shape (n_rows, n_columns)
    y : array-like of shape (n_rows,) or (n_rows, n_targets)
    features : list
        Column names or indices; a tuple of two gives a 2-D surface.
    n_resamples : int
        Number of resamples B.
    resampling : {"auto", "bootstrap", "stratified", "subsample", "group"}
        ``auto``: ``stratified`` for classifiers, else ``bootstrap``.
        ``group`` needs ``groups`` (a cluster bootstrap).
    subsample_fraction : float
        Share of rows drawn without replacement by ``subsample``.
    background : {"resample", "original", "out-of-bag"}
        Rows each resample's PD is averaged over: its own rows with their
        multiplicities (default), the full data's rows (fixed), or the rows
        it did not draw.
    max_background : int, optional
        Average over at most this many rows (a fixed random subsample of the
        full data for the estimate and ``original``; a random subsample of
        each resample's rows otherwise).
    ice : bool or int
        Keep ICE curves: ``True`` for all background rows of the estimate,
        an int for that many randomly chosen rows.  Each resample's model is
        evaluated on the same instances (``ice_resamples``).
    heterogeneity : bool
        Also compute ICE heterogeneity statistics of every 1-D feature on every
        model, from the ICE curves of its background rows (weighted by their
        multiplicities), keeping only the statistics: ``ice_sd``, ``cice_sd``,
        ``dice_sd`` (``output``, feature) and ``heterogeneity_index``
        (``output``), each with ``_resamples``.  See
        :func:`pdpboot.ice_heterogeneity`.
    interactions : bool or int
        Also compute Friedman-Popescu H statistics on every model: ``h2_overall``
        (``output``) in 1-D nodes, ``h2`` and ``h_unnormalized`` (``output``) in
        2-D nodes, each with ``_resamples``, on a random subsample of at most
        500 background rows (an int sets that maximum).  Costs about
        ``n_max**2`` predictions per 1-D node and ``3 * n_max**2`` per 2-D node
        and model.  See :func:`pdpboot.h_statistic`.
    grid_resolution, percentiles, custom_values, categorical_features, response_method, method,
    memory_limit
        As in :func:`pdpboot.partial_dependence`.
    n_jobs : int, optional
        Parallel resamples (joblib); results are identical for any value.
    rng : None, int or numpy.random.Generator
        The one seed every random draw flows from (None: fresh entropy).
    progress : bool or "auto"
        tqdm progress bar ("auto": on a terminal, for B >= 20).
    checkpoint : path, optional
        A directory where the estimate and every finished resample are saved
        as they complete (atomically).  Calling again with the same arguments
        resumes: finished resamples are loaded, not recomputed, and the result
        equals an uninterrupted run.  ``n_resamples`` may be raised to extend a
        run; with ``rng=None`` the checkpoint's own seed is reused.  A
        checkpoint made with other data, estimator, grid, seed or settings is
        refused.
    on_error : {"raise", "skip"}
        What a resample whose fit or evaluation raises does: stop the run
        (with the original exception), or be recorded (root attr
        ``failed_resamples``, NaN in every ``*_resamples``) while the run goes
        on; bands then use the successful resamples and a warning says how
        many failed.
    max_failure_share : float
        With ``on_error="skip"``, stop with an error quoting the first failure
        as soon as more than this share of the resamples has failed.

    Returns
    -------
    xarray.DataTree
        One child per feature set with ``pd`` (``output``, *features),
        ``pd_resamples`` (``resample``, ``output``, *features) and, with
        ``ice``, ``ice`` (``instance``, ``output``, *features) and
        ``ice_resamples``; with ``heterogeneity``/``interactions``, the
        statistics above.  Root attrs hold the provenance.
    """
    if is_fitted(estimator):
        raise ValueError(
            f"{type(estimator).__name__} is already fitted, but bootstrap_partial_dependence fits "
            "clones itself; pass the unfitted estimator (e.g. sklearn.base.clone(estimator)). "
            "For the PD of a fitted model without resampling use pdpboot.partial_dependence."
        )
    n_resamples = check_positive_int(n_resamples, "n_resamples", 2)
    check_choice(resampling, "resampling", ("auto", *RESAMPLING))
    check_choice(background, "background", BACKGROUNDS)
    spec = make_spec(X, features, grid_resolution=grid_resolution, percentiles=percentiles,
                     custom_values=custom_values, categorical_features=categorical_features,
                     method=method, memory_limit=memory_limit)
    n_rows = spec.X.shape[0]
    y = check_target(y, n_rows, estimator)
    if resampling == "auto":
        resampling = "stratified" if is_classifier(estimator) else "bootstrap"
    strata = np.asarray(y) if resampling == "stratified" else None
    if resampling == "stratified" and not is_classifier(estimator):
        raise ValueError("resampling='stratified' keeps class counts and needs a classifier; use 'bootstrap'.")
    if resampling == "group":
        if groups is None or len(groups) != n_rows:
            raise ValueError(
                f"resampling='group' needs groups with one label per row of X ({n_rows}); "
                f"got {'none' if groups is None else len(groups)}."
            )
        groups = np.asarray(groups)
    if resampling == "subsample" and not 0 < subsample_fraction < 1:
        raise ValueError(f"subsample_fraction must be in (0, 1), got {subsample_fraction}.")
    if max_background is not None:
        max_background = check_positive_int(max_background, "max_background", 1)
    n_max = check_interactions(interactions)
    heterogeneity = bool(heterogeneity)

    check_choice(on_error, "on_error", ON_ERROR)
    if not 0 <= max_failure_share < 1:
        raise ValueError(f"max_failure_share must be in [0, 1), got {max_failure_share!r}.")
    check_missing_supported(estimator, spec.X, spec.names)
    if response_method != "auto":
        resolve_response_method(estimator, response_method)  # fail before any fit

    generator = _root_generator(rng, checkpoint)
    seed_record = _seed_record(generator)
    full_seed, background_seed, ice_seed = generator.spawn(_N_FIXED_SEEDS)
    resample_seeds = generator.spawn(n_resamples)
    settings = dict(spec.settings, resampling=resampling, subsample_fraction=subsample_fraction,
                    background=background, max_background=max_background,
                    ice=ice if isinstance(ice, bool) else int(ice), heterogeneity=heterogeneity,
                    interactions=0 if n_max is None else n_max, response_method=response_method,
                    groups=groups is not None)
    attrs = provenance(estimator, dict(settings, n_resamples=n_resamples))
    ckpt, created = None, attrs["created"]
    if checkpoint is not None:
        params = {k: _jsonable(v) for k, v in estimator.get_params(deep=True).items()}
        ckpt = Checkpoint(checkpoint, fingerprint(
            X=spec.X, y=y, groups=groups,
            estimator_params=type(estimator).__qualname__ + json.dumps(params, sort_keys=True, default=repr),
            grids={g.name: g.values for g in spec.grids.values()}, seed=seed_record, settings=settings))
        created = ckpt.open({"created": created})["created"]

    fixed_background = np.arange(n_rows)
    if max_background is not None and max_background < n_rows:
        fixed_background = np.sort(background_seed.choice(n_rows, size=max_background, replace=False))
    ice_rows = None
    if ice is not False and ice is not None:
        ice_rows = fixed_background
        if not isinstance(ice, bool):
            count = check_positive_int(ice, "ice", 1)
            if count < fixed_background.size:
                ice_rows = np.sort(ice_seed.choice(fixed_background, size=count, replace=False))

    stored = ckpt.load_estimate() if ckpt is not None else None
    if stored is not None:
        estimate, meta = stored
        resolved, outputs = meta["response"], meta["outputs"]
    else:
        model = seed_estimator(clone(estimator), full_seed, only_if_unset=True)
        model.fit(spec.X, y)
        resolved = resolve_response_method(model, response_method)
        target_names = None
        if resolved == "predict":
            target_names = list(y.columns) if hasattr(y, "columns") else [str(getattr(y, "name", None) or "y")]
        n_targets = 1 if np.ndim(y) == 1 else np.shape(y)[1]
        outputs = output_labels(model, resolved, target_names, n_targets)
        estimate = evaluate_model(model, spec, response_method=resolved, outputs=outputs,
                                  background=fixed_background, ice_rows=None)
        model_statistics(model, spec, estimate, response_method=resolved, outputs=outputs,
                         background=fixed_background, weights=None, heterogeneity=heterogeneity, n_max=n_max,
                         rng=full_seed.spawn(1)[0])
        if ice_rows is not None:
            for name, variables in evaluate_model(model, spec, response_method=resolved, outputs=outputs,
                                                  background=ice_rows, ice_rows=ice_rows).items():
                estimate[name]["ice"] = variables["ice"]
        if ckpt is not None:
            ckpt.save_estimate(estimate, {"response": resolved, "outputs": list(outputs)})

    done = {}
    if ckpt is not None:
        done = {b: r for b in range(n_resamples) if (r := ckpt.load(b)) is not None}
    todo = [b for b in range(n_resamples) if b not in done]
    common = dict(scheme=resampling, strata=strata, groups=groups, subsample_fraction=subsample_fraction,
                  background=background, fixed_background=fixed_background, max_background=max_background,
                  ice_rows=ice_rows, response_method=resolved, outputs=outputs,
                  heterogeneity=heterogeneity, n_max=n_max, on_error=on_error)
    jobs = (delayed(_resample_job)(estimator, spec, y, resample_seeds[b], **common) for b in todo)
    failures = _run_resamples(todo, jobs, n_resamples=n_resamples, done=done, on_error=on_error,
                              max_failure_share=max_failure_share, ckpt=ckpt, progress=progress, n_jobs=n_jobs)
    if failures:
        first = min(failures)
        warnings.warn(
            f"{len(failures)} of {n_resamples} resamples failed and were skipped (the first, resample {first}, "
            f"raised {failures[first]}); bands use the {n_resamples - len(failures)} successful ones.",
            RuntimeWarning, stacklevel=2,
        )
    results = [_failed_like(estimate) if b in failures else done[b] for b in range(n_resamples)]

    attrs.update(
        created=created, task=_task(resolved), response=resolved,
        target_name=str(outputs[0]) if resolved == "predict" else "class",
        n_rows=n_rows, n_resamples=n_resamples, n_failed_resamples=len(failures),
        failed_resamples=json.dumps([{"resample": b, "error": failures[b]} for b in sorted(failures)]),
        resampling=resampling, background=background,
        subsample_size=int(np.floor(subsample_fraction * n_rows)) if resampling == "subsample" else n_rows,
        rng_entropy=seed_record["entropy"],
    )
    return build_tree(spec, _stack(estimate, results), outputs=outputs, ice_rows=ice_rows,
                      root_attrs=attrs, extra_coords={"resample": np.arange(n_resamples)})
