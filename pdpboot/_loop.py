"""The resample loop: seeds, fixed rows, the full-data fit, one job per resample, checkpoints, failures.

Every draw flows from one root seed, spawned before anything is dispatched, so results do not
depend on ``n_jobs`` and a larger B extends a run with the same first resamples.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.base import clone, is_classifier
from threadpoolctl import ThreadpoolController

from ._evaluate import Evaluation, MissingClassError, NodeArrays, nan_like, resolve_outputs
from ._plan import BootstrapPlan, fit_kwargs
from ._validate import check_predictions_finite
from .checkpoint import Checkpoint, MemoryStore, open_store
from .engine import describe_choices, record_engine_choices
from .engine.resample import AbsentRows, Job, Scheme, UnfittedCopies, child, multiplicities, rows_of, seed_estimator
from .engine.response import resolve_response_method
from .options import Execution

N_FIXED_SEEDS = 3  # full-data fit, fixed background subsample, ICE instances


@dataclass(frozen=True)
class Failure:
    """A resample whose fit or evaluation raised: the exception's type name and text."""

    error: str
    message: str

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        return cls(type(exc).__name__, str(exc))

    @classmethod
    def from_text(cls, text: str) -> Failure:
        error, _, message = text.partition(": ")
        return cls(error, message)

    @property
    def missing_class(self) -> bool:
        return self.error == MissingClassError.__name__

    def __str__(self) -> str:
        return f"{self.error}: {self.message}"


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` returns: the estimate's arrays, each resample's arrays or :class:`Failure`, the
    evaluation, the rows each resample did not draw (None unless kept), which resamples miss a class,
    the root seed, creation time, engine choices and the prepared scheme."""

    estimate: NodeArrays
    resamples: list
    evaluation: Evaluation
    absent: AbsentRows | None
    missing_class: np.ndarray
    seed: dict
    created: str
    engine: str = ""
    scheme: Scheme | None = None

    @property
    def failures(self) -> dict[int, Failure]:
        return {b: r for b, r in enumerate(self.resamples) if isinstance(r, Failure)}

    def stacked(self) -> NodeArrays:
        """Per node: each variable ``s`` plus ``s_resamples`` (NaN for failed resamples)."""
        nan = nan_like(self.estimate)
        merged = {}
        for name, variables in self.estimate.items():
            merged[name] = dict(variables)
            for var, (dims, _) in variables.items():
                stacked = np.stack([(nan if isinstance(r, Failure) else r)[name][var][1] for r in self.resamples])
                merged[name][f"{var}_resamples"] = (("resample", *dims), stacked)
        return merged


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


def fit_seeded(estimator, X, y, rng: np.random.Generator, *, sample_weight: np.ndarray | None = None,
               fit_params: dict | None = None, rows: np.ndarray | None = None, only_if_unset: bool = False):
    """A clone of ``estimator``, every ``random_state`` drawn from ``rng`` (kept where set, with
    ``only_if_unset``), fitted on ``rows`` of ``X``, ``y`` (None: all): the one refit of every run."""
    if isinstance(estimator, UnfittedCopies):
        model, estimator = estimator.seeded(rng, only_if_unset=only_if_unset), estimator.template
    else:
        model = seed_estimator(clone(estimator), rng, only_if_unset=only_if_unset)
    kwargs = fit_kwargs(estimator, fit_params or {}, sample_weight, rows, len(X))
    if rows is None:
        return model.fit(X, y, **kwargs)
    return model.fit(rows_of(X, rows), rows_of(y, rows), **kwargs)


def fit_clone(plan: BootstrapPlan, rows: np.ndarray | None, rng: np.random.Generator,
              *, y=None, only_if_unset: bool = False):
    """:func:`fit_seeded` on the plan's estimator, table, target (or ``y``), weights and fit parameters."""
    return fit_seeded(plan.copies, plan.spec.X, plan.y if y is None else y, rng, sample_weight=plan.sample_weight,
                      fit_params=plan.fit_params, rows=rows, only_if_unset=only_if_unset)


def row_weights(plan: BootstrapPlan, rows: np.ndarray, multiplicity: np.ndarray | None = None):
    """Weights of background ``rows``: multiplicities times the user's sample weights (None if all 1)."""
    if plan.sample_weight is None:
        return multiplicity
    base = plan.sample_weight[rows]
    return base if multiplicity is None else multiplicity * base


def background_rows(plan: BootstrapPlan, fixed: np.ndarray, rows: np.ndarray | None,
                    rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows (and weights) one model's effect is averaged over: ``fixed`` for the full-data fit
    (``rows=None``), else by ``plan.resampling.background``."""
    n_rows, cap = plan.spec.n_rows, plan.resampling.max_background
    if rows is None or plan.resampling.background == "original":
        return fixed, row_weights(plan, fixed)
    if plan.resampling.background == "out-of-bag":
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


def fixed_background(plan: BootstrapPlan, seed: np.random.Generator) -> np.ndarray:
    """The estimate's background rows: all rows, or a fixed subsample of ``max_background`` drawn with ``seed``."""
    n_rows, cap = plan.spec.n_rows, plan.resampling.max_background
    if cap is not None and cap < n_rows:
        return np.sort(seed.choice(n_rows, size=cap, replace=False))
    return np.arange(n_rows)


_CONTROLLER: dict[int, ThreadpoolController] = {}


def _thread_controller() -> ThreadpoolController:
    """threadpoolctl's controller, rescanned only when ``sys.modules`` has grown (the scan is slow)."""
    key = len(sys.modules)
    if key not in _CONTROLLER:
        _CONTROLLER.clear()
        _CONTROLLER[key] = ThreadpoolController()
    return _CONTROLLER[key]


@contextmanager
def fit_context(threads: int | None):
    """The one thread limit: ``threads`` native threads (None: no limit) and one joblib job by default
    (a fixed order of forests' sums); estimators that set ``n_jobs`` keep it."""
    with parallel_config(n_jobs=1):
        if threads is None:
            yield
        else:
            with _thread_controller().limit(limits=threads):
                yield


def _warm_worker(_: int) -> int:
    """In a worker: load what every resample job needs (the engine, the compiled walk's on-disk cache)."""
    from sklearn.ensemble import RandomForestRegressor

    from .engine import compute_pd_many

    X = np.linspace(0.0, 1.0, 64).reshape(32, 2)
    est = RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0, n_jobs=1).fit(X, X[:, 0])
    with fit_context(1):
        for method in ("tree", "brute"):
            compute_pd_many(est, X, [(0,), (0, 1)], [[X[:3, 0]], [X[:3, 0], X[:3, 1]]],
                            response_method="predict", method=method)
    return os.getpid()


def start_workers(n_jobs: int | None = -1, *, rounds: int = 4) -> int:
    """Start joblib's worker processes and load the engine in each, so a first parallel run does not pay it.

    ``n_jobs`` as in :class:`pdpboot.Execution`; sends up to ``rounds`` batches of warm-up tasks.
    Returns the number of distinct workers that ran one.  Results do not depend on it.
    """
    from joblib import effective_n_jobs

    n = effective_n_jobs(n_jobs)
    seen: set[int] = set()
    for _ in range(rounds):
        seen.update(Parallel(n_jobs=n_jobs)(delayed(_warm_worker)(k) for k in range(2 * n)))
        if len(seen) >= n:
            break
    return len(seen)


def evaluate_resample(plan: BootstrapPlan, base: Evaluation, job: Job) -> NodeArrays:
    """Fit and evaluate one job on its rows and target (runs in a joblib worker)."""
    with fit_context(plan.execution.threads):
        model = fit_clone(plan, job.rows, child(job.seed, 1), y=job.y, only_if_unset=not plan.scheme.resamples)
        if job.eval_rows is not None:
            background, weights = job.eval_rows, row_weights(plan, job.eval_rows)
        else:
            background, weights = background_rows(plan, base.background, job.rows, child(job.seed, 2))
        arrays = plan.effect.evaluate(model, replace(base, background=background, weights=weights))
    check_predictions_finite(arrays, what="this resample's refit")  # NaN output: a failure, never silent NaN
    return arrays


def resample_job(plan: BootstrapPlan, base: Evaluation, job: Job) -> NodeArrays | Failure:
    """One resample's arrays, or the :class:`Failure` it raised with ``on_error="skip"`` (a missed class: always)."""
    try:
        return evaluate_resample(plan, base, job)
    except MissingClassError as exc:  # never mixes scales, whatever on_error says
        return Failure.of(exc)
    except Exception as exc:  # noqa: BLE001 - recorded, counted and reported by dispatch
        if plan.execution.on_error == "skip":
            return Failure.of(exc)
        classes, codes = class_codes(plan)
        drawn = None if codes is None or job.rows is None else np.bincount(codes[job.rows], minlength=classes.size)
        if drawn is None or drawn.min() > 0:
            raise
        missing, in_data = np.flatnonzero(drawn == 0)[:5], np.bincount(codes)
        counts = ", ".join(f"{classes[k]!r}: {in_data[k]}" for k in missing)
        message = " ".join(str(exc).split())[:80]
        raise ValueError(
            f"A refit failed on a resample that drew no row of class {', '.join(repr(classes[k]) for k in missing)} "
            f"(rows in the data: {counts}): {type(exc).__name__}: {message}; use resampling='stratified' or "
            "execution=Execution(on_error='skip').") from exc


def class_codes(plan: BootstrapPlan) -> tuple[np.ndarray | None, np.ndarray | None]:
    """A classifier's classes and each row's class code (None, None for regressors, multi-output targets
    and ``stratified``)."""
    labels = np.asarray(plan.y)
    if plan.scheme.name == "stratified" or not is_classifier(plan.estimator) or labels.ndim != 1:
        return None, None
    return np.unique(labels, return_inverse=True)


def progress_bar(iterable, total: int, progress, initial: int = 0):
    """``iterable`` with progress: a tqdm bar (True; "auto": on a terminal, for B >= 20) or
    ``progress(done, total)`` after each item (a callable)."""
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


def draw_bookkeeping(plan: BootstrapPlan, scheme: Scheme, seeds: list, n_rows: int
                     ) -> tuple[AbsentRows | None, np.ndarray]:
    """Before any fit, each job's rows: the rows it did not draw (None unless the scheme keeps them) and
    whether they miss a class of a classifier's data; refuses jobs of only ``sample_weight`` 0 rows.
    Nothing is drawn when nothing needs it."""
    missing = np.zeros(len(seeds), dtype=bool)
    codes = class_codes(plan)[1]
    w = plan.sample_weight
    zero = None if w is None or np.all(w > 0) else w <= 0
    if not scheme.keeps_absent and codes is None and zero is None:
        return None, missing
    bits = np.zeros((len(seeds), (n_rows + 7) // 8), dtype=np.uint8)
    empty = []
    for b, seed in enumerate(seeds):
        rows = scheme.job(b, seed, n_rows).rows
        bits[b] = AbsentRows.pack(rows, n_rows)
        if rows is not None and codes is not None:
            missing[b] = np.bincount(codes[rows], minlength=codes.max() + 1).min() == 0
        if rows is not None and zero is not None and np.all(zero[rows]):
            empty.append(b)
    if empty:
        shown = ", ".join(map(str, empty[:5])) + (", ..." if len(empty) > 5 else "")
        raise ValueError(
            f"Resamples {shown} draw only rows of sample_weight 0 (positive on {int(np.sum(w > 0))} of {len(w)} "
            "rows): nothing to fit; drop the rows of weight 0 or give more rows a positive weight.")
    return (AbsentRows(bits, n_rows) if scheme.keeps_absent else None), missing


def dispatch(execution: Execution, n: int, jobs, store: MemoryStore, done: dict) -> list:
    """Run ``jobs`` (``(index, joblib-delayed call)`` pairs) in parallel, saving each result in ``store``
    and stopping once more than ``max_failure_share`` of the ``n`` failed; the ``n`` results in order."""
    allowed = int(np.floor(execution.max_failure_share * n))
    n_failed = sum(isinstance(r, Failure) for r in done.values())
    todo: list[int] = []

    def calls():
        for b, call in jobs:
            todo.append(b)
            yield call

    stream = Parallel(n_jobs=execution.n_jobs, return_as="generator")(calls())
    for k, out in enumerate(progress_bar(stream, n, execution.progress, initial=len(done))):  # bar first: it ends
        b = todo[k]
        done[b] = out
        store.save_result(b, out)
        n_failed += isinstance(out, Failure)
        if isinstance(out, Failure) and n_failed > allowed:
            first = min(i for i, r in done.items() if isinstance(r, Failure))
            advice = (" (a decision_function refit that misses a class cannot be compared; use "
                      "response_method='predict_proba' or resampling='stratified')" if done[first].missing_class
                      else "")
            raise RuntimeError(
                f"{n_failed} resamples failed, more than max_failure_share={execution.max_failure_share} of "
                f"{n}; the first, resample {first}, raised {done[first]}{advice}"
            )
    return [done[b] for b in range(n)]


def _estimate(plan: BootstrapPlan, store: MemoryStore, full_seed, base: Evaluation
              ) -> tuple[NodeArrays, Evaluation, str]:
    """The full-data fit's arrays and the evaluation every resample repeats (from the store if there)."""
    stored = store.load_estimate()
    if stored is not None:
        estimate, meta = stored
        return (estimate, replace(base, response_method=meta["response"], outputs=meta["outputs"]),
                meta.get("engine", ""))
    with fit_context(plan.execution.threads):
        model = fit_clone(plan, None, full_seed, only_if_unset=True)
        resolved = resolve_response_method(model, plan.response_method)
        outputs = resolve_outputs(model, resolved, y=plan.y)
        base = replace(base, response_method=resolved, outputs=outputs)
        with record_engine_choices() as choices:  # which engine computed each feature set, and why
            estimate = plan.effect.evaluate(model, base)
    check_predictions_finite(estimate)
    engine = describe_choices(choices)
    store.save_estimate(estimate, {"response": resolved, "outputs": list(outputs), "engine": engine})
    return estimate, base, engine


def run(plan: BootstrapPlan, created: str) -> RunResult:
    """Run a validated plan (:func:`pdpboot._plan.make_plan`); ``created``: creation time (a resumed
    checkpoint keeps its own)."""
    generator = root_generator(plan.rng, plan.execution.checkpoint)
    seeds = seed_record(generator)
    full_seed, background_seed, ice_seed = generator.spawn(N_FIXED_SEEDS)
    n_rows = plan.spec.n_rows
    scheme = plan.scheme.prepare(plan.spec.X, plan.y, plan.sample_weight, child(background_seed, 0))
    job_seeds = generator.spawn(plan.n_resamples)
    absent, missing = draw_bookkeeping(plan, scheme, job_seeds, n_rows)
    store = open_store(plan.execution.checkpoint, plan, seeds, created=created, on_error=plan.execution.on_error)
    background = fixed_background(plan, background_seed)
    fixed = plan.effect.fixed_rows(background, (ice_seed, full_seed.spawn(1)[0]))
    base = Evaluation("", [], background, row_weights(plan, background), fixed)
    if scheme.resamples:
        estimate, base, engine = _estimate(plan, store, full_seed, base)
    else:  # cross-fitting: no fit on all rows, every model is a job's
        estimate, engine = {}, ""
        base = replace(base, response_method=resolve_response_method(plan.estimator, plan.response_method))
    order = np.argsort(~missing, kind="stable").tolist()  # a class missed: fail after the full-data fit alone
    done = {b: Failure.from_text(r) if isinstance(r, str) else r for b, r in store.stored(plan.n_resamples).items()}
    jobs = ((b, delayed(resample_job)(plan, base, scheme.job(b, job_seeds[b], n_rows))) for b in order if b not in done)
    resamples = dispatch(plan.execution, plan.n_resamples, jobs, store, done)  # jobs made only as dispatched
    return RunResult(estimate, resamples, base, absent, missing, seeds, store.created, engine, scheme)
