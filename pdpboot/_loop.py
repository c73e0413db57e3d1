"""The resample loop: seeds, one job per resample, checkpointed results, failures.

Every random draw flows from one seed: the root generator spawns a fixed set
of children for the full-data fit and the fixed subsamples, then one child per
resample, all before anything is dispatched to joblib.  Resample ``b`` depends
only on its own child, so results do not depend on ``n_jobs``, the joblib
backend, or ``n_resamples`` (a larger B extends a run with the same first
resamples).  Nothing here imports xarray.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.base import clone
from threadpoolctl import ThreadpoolController

from ._evaluate import Evaluation, MissingClassError, NodeArrays, evaluate_fit
from ._plan import BootstrapPlan, fit_kwargs
from ._validate import check_predictions_finite
from .checkpoint import Checkpoint
from .engine.refit import rows_of, seed_estimator
from .engine.resample import draw_rows, multiplicities

N_FIXED_SEEDS = 3  # full-data fit, fixed background subsample, ICE instances


def root_generator(rng, checkpoint) -> np.random.Generator:
    """``default_rng(rng)``, except that ``rng=None`` resumes the seed of an existing checkpoint."""
    if rng is None and checkpoint is not None:
        stored = Checkpoint.stored_seed(checkpoint)
        if stored is not None:
            rng = np.random.SeedSequence(int(stored["entropy"]), spawn_key=tuple(stored["spawn_key"]),
                                         n_children_spawned=stored["n_children_spawned"])
    return np.random.default_rng(rng)


def seed_record(generator: np.random.Generator) -> dict:
    """The root seed, JSON-able (provenance and checkpoint fingerprint)."""
    seq = generator.bit_generator.seed_seq
    return {"entropy": str(seq.entropy), "spawn_key": [int(k) for k in seq.spawn_key],
            "n_children_spawned": int(seq.n_children_spawned)}


def fit_clone(plan: BootstrapPlan, rows: np.ndarray | None, rng: np.random.Generator,
              *, only_if_unset: bool = False):
    """A clone of the plan's estimator seeded from ``rng`` and fitted on ``rows`` (None: all rows)."""
    model = seed_estimator(clone(plan.estimator), rng, only_if_unset=only_if_unset)
    kwargs = fit_kwargs(plan.estimator, plan.fit_params, plan.sample_weight, rows, plan.spec.n_rows)
    if rows is None:
        return model.fit(plan.spec.X, plan.y, **kwargs)
    return model.fit(plan.spec.rows(rows), rows_of(plan.y, rows), **kwargs)


def row_weights(plan: BootstrapPlan, rows: np.ndarray, multiplicity: np.ndarray | None = None):
    """Weights of background ``rows``: multiplicities times the user's sample weights (None if all 1)."""
    if plan.sample_weight is None:
        return multiplicity
    base = plan.sample_weight[rows]
    return base if multiplicity is None else multiplicity * base


def resample_background(plan: BootstrapPlan, fixed: np.ndarray, rows: np.ndarray,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """Background rows (and weights) that one resample's PD is averaged over."""
    n_rows, cap = plan.spec.n_rows, plan.max_background
    if plan.background == "original":
        return fixed, row_weights(plan, fixed)
    if plan.background == "out-of-bag":
        candidates = np.setdiff1d(np.arange(n_rows), rows)
        if candidates.size == 0:
            raise ValueError("This resample has no out-of-bag rows; use background='resample'.")
        if cap is not None and candidates.size > cap:
            candidates = np.sort(rng.choice(candidates, size=cap, replace=False))
        return candidates, row_weights(plan, candidates)
    if cap is not None and rows.size > cap:
        rows = np.sort(rng.choice(rows, size=cap, replace=False))
    distinct, counts = multiplicities(rows, n_rows)
    return distinct, row_weights(plan, distinct, counts.astype(float))


_CONTROLLER: dict[int, ThreadpoolController] = {}


def _thread_controller() -> ThreadpoolController:
    """threadpoolctl's view of the native thread pools loaded in this process, found once.

    Finding them scans every loaded library (about 6 ms, more than some refits' PD); a new
    native library comes with a new Python module, so the scan is redone when ``sys.modules``
    has grown.
    """
    key = len(sys.modules)
    if key not in _CONTROLLER:
        _CONTROLLER.clear()
        _CONTROLLER[key] = ThreadpoolController()
    return _CONTROLLER[key]


@contextmanager
def fit_context(threads: int):
    """Where every fit and evaluation runs: ``threads`` native threads, one joblib job by default.

    The joblib default matters under a parallel backend (e.g. Dask): scikit-learn's
    forests would otherwise sum their trees' predictions in several threads, in an
    order that changes from run to run.  Estimators that set ``n_jobs`` keep it.
    """
    with _thread_controller().limit(limits=threads), parallel_config(n_jobs=1):
        yield


def _child(seed: np.random.Generator, k: int) -> np.random.Generator:
    """Child ``k`` of ``seed`` as ``seed.spawn`` makes it on a fresh copy (whatever was spawned since)."""
    seq = seed.bit_generator.seed_seq
    return np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, k),
                                                        pool_size=seq.pool_size))


def resample_rows(plan: BootstrapPlan, seed: np.random.Generator) -> np.ndarray:
    """The row positions resample ``seed`` draws (its first child's stream)."""
    return draw_rows(plan.resampling, plan.spec.n_rows, _child(seed, 0), strata=plan.strata, groups=plan.groups,
                     subsample_fraction=plan.subsample_fraction)


def resample_counts(plan: BootstrapPlan, seeds: list) -> np.ndarray:
    """How often each row is drawn into each resample: (resample, row), uint8 (uint16 if needed).

    Recomputed from the seeds (no fit), for the jackknife-after-bootstrap acceleration of BCa bands.
    """
    counts = np.stack([np.bincount(resample_rows(plan, seed), minlength=plan.spec.n_rows) for seed in seeds])
    return counts.astype(np.uint8 if counts.max(initial=0) < 256 else np.uint16)


def evaluate_model(plan: BootstrapPlan, model, evaluation: Evaluation, rng: np.random.Generator) -> NodeArrays:
    """The plan's effect (PD/ICE unless ``plan.evaluate`` says otherwise) of one fitted model."""
    return (plan.evaluate or evaluate_fit)(model, plan.spec, evaluation, rng=rng)


def evaluate_resample(plan: BootstrapPlan, base: Evaluation, seed: np.random.Generator) -> NodeArrays:
    """Draw, fit and evaluate one resample (runs in a joblib worker)."""
    rows = resample_rows(plan, seed)
    _, fit_rng, bg_rng = (_child(seed, k) for k in range(3))
    with fit_context(plan.threads_per_job):
        model = fit_clone(plan, rows, fit_rng)
        background, weights = resample_background(plan, base.background, rows, bg_rng)
        evaluation = replace(base, background=background, weights=weights)
        arrays = evaluate_model(plan, model, evaluation, _child(seed, 3))  # the 4th child
    check_predictions_finite(arrays, what="this resample's refit")  # NaN output: a failure, never silent NaN
    return arrays


def resample_job(plan: BootstrapPlan, base: Evaluation, seed: np.random.Generator) -> NodeArrays | str:
    """One resample; a failure the plan allows to skip comes back as its message."""
    try:
        return evaluate_resample(plan, base, seed)
    except MissingClassError as exc:  # never mixes scales, whatever on_error says
        return f"MissingClassError: {exc}"
    except Exception as exc:  # noqa: BLE001 - recorded, counted and reported by the caller
        if plan.on_error == "raise":
            raise
        return f"{type(exc).__name__}: {exc}"


def progress_bar(iterable, total: int, progress, initial: int = 0):
    """Report progress over ``iterable``: a tqdm bar, or calls ``progress(done, total)`` after each item.

    ``progress`` is True, False, "auto" (a bar on a terminal, for B >= 20) or a
    callable (e.g. a logger's progress line when output is not a terminal).
    """
    if callable(progress):
        return _reporting(iterable, total, progress, initial)
    show = progress is True or (progress == "auto" and total >= 20 and sys.stderr.isatty())
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, initial=initial, desc="resamples", unit="fit")


def _reporting(iterable, total: int, report, done: int):
    for item in iterable:
        done += 1
        report(done, total)
        yield item


def run_resamples(plan: BootstrapPlan, base: Evaluation, seeds: list, ckpt: Checkpoint | None,
                  done: dict[int, NodeArrays | str]) -> tuple[dict[int, NodeArrays], dict[int, str]]:
    """Run the resamples not in ``done``, persisting each result; stop early on too many failures.

    Returns
    -------
    results : dict
        Resample index -> arrays, for the successful resamples.
    failures : dict
        Resample index -> error message.
    """
    n = plan.n_resamples
    results = {b: r for b, r in done.items() if not isinstance(r, str)}
    failures = {b: r for b, r in done.items() if isinstance(r, str)}
    todo = [b for b in range(n) if b not in done]
    allowed = int(np.floor(plan.max_failure_share * n))
    jobs = (delayed(resample_job)(plan, base, seeds[b]) for b in todo)
    stream = Parallel(n_jobs=plan.n_jobs, return_as="generator")(jobs)
    for out, b in zip(progress_bar(stream, n, plan.progress, initial=n - len(todo)), todo):  # bar first: it ends
        if isinstance(out, str):
            failures[b] = out
            if ckpt is not None:
                ckpt.save_failure(b, out)
            if len(failures) > allowed:
                first = min(failures)
                advice = (" (a decision_function refit that misses a class cannot be compared; use "
                          "response_method='predict_proba' or resampling='stratified')"
                          if failures[first].startswith("MissingClassError") else "")
                raise RuntimeError(
                    f"{len(failures)} resamples failed, more than max_failure_share={plan.max_failure_share} of "
                    f"{n}; the first, resample {first}, raised {failures[first]}{advice}"
                )
        else:
            results[b] = out
            if ckpt is not None:
                ckpt.save(b, out)
    return results, failures
