"""Uncertainty strategies of a run (``--uncertainty``), chosen once by :func:`strategy_for`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr
from sklearn.base import clone

from .. import Execution, Resampling, confidence_bands
from . import InputError, effect_ale, effect_pd
from .effect import EffectReport, FitContext, Outcome, used_features
from .model import (
    build_estimator,
    check_given_model,
    check_model_parameters,
    determined_notes,
    evaluate,
    given_fitted_model,
    leakage_notes,
    model_option,
    split,
    weak_model_notes,
)
from .options import RunConfig, register_choices
from .problem import Problem


@dataclass(frozen=True)
class Strategy:
    """How a run's effects get their uncertainty."""

    name: str  # the --uncertainty choice
    refits: bool  # resamples exist (intervals, beyond noise, contrasts)
    bands: bool
    run: Callable[[EffectReport, FitContext, list], xr.DataTree]
    header: Callable[[object, dict], list[tuple[str, str]]]
    precision: Callable[[object, dict], str]
    announce: str  # the progress line's start, formatted with the configuration
    target: str = "learner"
    compute: Mapping[str, Callable[[FitContext, list, dict], xr.DataTree]] = field(default_factory=dict)
    defaults: Callable[[dict, set], None] | None = None
    check_config: Callable[[dict], None] | None = None
    check_data: Callable[[object, list], None] | None = None

    def compute_for(self, effect: EffectReport) -> Callable[[FitContext, list, dict], xr.DataTree] | None:
        """How this strategy computes ``effect``: its own entry, else the effect's entry for the strategy."""
        return self.compute.get(effect.name) or effect.compute.get(self.name)

    def check(self, effect: EffectReport) -> None:
        """Refuse, before any fit, an effect this strategy cannot compute."""
        if self.compute_for(effect) is None:
            raise InputError(f"--uncertainty {self.name} cannot compute {effect.label}: use --uncertainty "
                             f"{' or '.join(effect.compute)} for --effect {effect.name}.")


def _timed(effect: EffectReport, ctx: FitContext, call: Callable[[], xr.DataTree]) -> xr.DataTree:
    start = time.perf_counter()
    out = call()
    ctx.seconds[effect.name] = time.perf_counter() - start
    return out


def _bootstrap_run(effect: EffectReport, ctx: FitContext, sets: list) -> xr.DataTree:
    config, problem = ctx.config, ctx.problem
    if problem.groups is None:  # --resampling auto: resolved from the model's output before the first fit
        resampling = Resampling(config.resampling, n_resamples=config.n_resamples)
    else:
        resampling = Resampling("group", n_resamples=config.n_resamples,
                                groups=problem.groups.loc[ctx.X_train.index].to_numpy())
    checkpoint = ctx.checkpoint / effect.name if ctx.checkpoint is not None else None
    progress = Progress(ctx.progress) if ctx.progress is not None else False
    common = dict(response_method=ctx.response_method, rng=config.random_state, resampling=resampling,
                  execution=Execution(n_jobs=config.n_jobs, threads_per_job=config.threads_per_job,
                                      progress=progress, checkpoint=checkpoint))
    tree = _timed(effect, ctx, lambda: STRATEGIES["bootstrap"].compute_for(effect)(ctx, sets, common))
    return confidence_bands(tree, confidence_level=config.confidence_level, method=config.band,
                            simultaneous=config.simultaneous)


def _one_fit_run(effect: EffectReport, ctx: FitContext, sets: list) -> xr.DataTree:
    """A one-fit strategy's run: the chosen strategy's computation of ``effect`` (no refits, no bootstrap)."""
    chosen = STRATEGIES[ctx.config.uncertainty]
    common = dict(response_method=ctx.response_method)
    if not chosen.bands and ctx.problem.task == "regression":  # outputs named like the bootstrap's: the target
        common["target_names"] = [str(ctx.y_train.name)]
    return _timed(effect, ctx, lambda: chosen.compute_for(effect)(ctx, sets, common))


#: What a band is about, by the result's ``target`` attr (the target of inference the core records).
#: ``{effect}``: the run's effects (PD, ALE, "PD and ALE"), so an ALE-only run does not speak of a PD.
TARGETS = {"learner": "about the learner's {effect} (the {effect} this model would have if fitted on other samples "
                      "like the training rows)",
           "dgp": "about the data's {effect} (the {effect} of the data-generating process)"}


def _target(results: dict) -> str:
    tree = next(iter(results.values()), None)
    text = TARGETS.get(tree.attrs.get("target")) if tree is not None else None
    effect = " and ".join(str(name).upper() for name in results) or "PD"
    return f"; {text.format(effect=effect)}" if text else ""


def _scheme_text(attrs) -> str:
    """How a result's resamples drew the training rows, in words."""
    scheme = attrs.get("resampling", "bootstrap")
    if scheme == "subsample":
        return (f"subsample: {attrs.get('subsample_size')} of the {attrs.get('n_rows')} rows without replacement, "
                "deviations from the estimate rescaled by sqrt(m / (n - m))")
    return {"bootstrap": "bootstrap: rows drawn with replacement",
            "group": "group: whole groups drawn with replacement (a cluster bootstrap)",
            "stratified": "stratified: rows drawn with replacement within each class"}.get(scheme, str(scheme))


def _bootstrap_header(config, results: dict) -> list[tuple[str, str]]:
    tree = next(iter(results.values()), None)
    attrs = tree.attrs if tree is not None else {}
    labels = " and ".join(name.upper() for name in results) or "each effect"
    logit = attrs.get("band_scale") == "logit"
    rows = [("Bootstrap", f"B = {config.n_resamples} refits on resamples of the training rows "
                          f"({_scheme_text(attrs)}); " + (BACKGROUND.format(n=config.max_background)
                                                            if "pd" in results and config.max_background else
                                                            f"each {labels} averaged over its resample's rows")),
            ("Bands", f"{config.confidence_level:.0%} {config.band} "
                      f"{'simultaneous' if config.simultaneous else 'pointwise'}"
                      f"{', PD bands formed on the logit scale and mapped back' if logit else ''}{_target(results)}")]
    if attrs.get("resampling_requested") == "auto" and attrs.get("resampling_reason"):
        rows.insert(1, ("Why this resampling", str(attrs["resampling_reason"])))
    elif attrs.get("resampling") == "group":
        rows.insert(1, ("Why this resampling", "--groups: rows of one group are not independent, so whole groups "
                                               "are drawn."))
    return rows


#: What ``--max-background`` does (in the summary, the report and results.nc's ``background_rows``).
BACKGROUND = ("each PD averaged over at most {n} random rows of its resample (`--max-background {n}`; 0 = all rows), "
              "so it differs from a PD over all rows by sampling noise")


def _bootstrap_precision(config, results: dict) -> str:
    return (f"The bands come from B = {config.n_resamples} refits. Their bounds are themselves estimated: "
            "for final figures rerun with more resamples, e.g. `--n-resamples 500` (run time grows in "
            "proportion; `--n-jobs` sets how many cores work on it).")


def _none_header(config, results: dict) -> list[tuple[str, str]]:
    return [("Uncertainty", "none (`--uncertainty none`): the effects of one fitted model, no refits, so no "
                            "bands or intervals")]


def _none_precision(config, results: dict) -> str:
    return ("These curves are those of one fitted model: how much they would change with other training rows "
            "is not measured. Rerun with `--uncertainty bootstrap` (B refits) for bands and intervals.")


def _none_check_config(config: dict) -> None:
    """What ``--uncertainty none`` (one fit, no refits) cannot do."""
    if config["interactions"] != 0:
        raise InputError("--uncertainty none (one fit, no refits) has no H statistics: drop --interactions, or "
                         "use --uncertainty bootstrap.")


#: Cross-fitting folds of the command line.
N_FOLDS = 5
START = "--uncertainty debiased (bands for the data's PD, cross-fitted) "


def _debiased_defaults(config: dict, given: set) -> None:
    """The debiased strategy's defaults: no ICE (it needs refits), 1-D curves only (the demo's pair dropped)."""
    if "ice_samples" not in given:
        config["ice_samples"] = 0
    if "pairs" not in given:
        config["pairs"] = []


def _debiased_check_data(problem, sets: list) -> None:
    """Refuse, before any fit, a numeric feature with missing values (the estimator needs every row's value)."""
    for fs in sets:
        for name in (fs if isinstance(fs, tuple) else (fs,)):
            if name in problem.categorical:
                continue
            n_missing = int(problem.X[name].isna().sum())
            if n_missing:
                shown = problem.display.get(name, name)
                raise InputError(f"--uncertainty debiased needs the observed value of every row, but feature "
                                 f"{shown!r:.100} has {n_missing} missing value(s): impute them in the data file, "
                                 "leave the feature out (--features), or use --uncertainty bootstrap.")


def _debiased_check_config(config: dict) -> None:
    """Refuse, before anything is read, what the debiased strategy cannot compute (each message names the fix)."""
    if config.get("uncertainty") != "debiased":
        return

    def need(ok: bool, message: str) -> None:
        if not ok:
            raise InputError(START + message)

    need(config.get("effect", "pd") == "pd", "computes PD only: give --effect pd, or use --uncertainty bootstrap "
         "for ALE.")
    need(config["interactions"] == 0, "has no H statistics (they need refits): drop --interactions, or use "
         "--uncertainty bootstrap.")
    need(config["ice_samples"] == 0, "has no ICE curves or ICE heterogeneity (they need refits): give "
         "--ice-samples 0, or use --uncertainty bootstrap.")
    need(not config.get("pairs"), "computes 1-D curves only: drop --pairs, or use --uncertainty bootstrap for 2-D "
         "surfaces.")
    need(not config["groups"], "treats rows as independent; with --groups use --uncertainty bootstrap (the "
         "cluster bootstrap).")
    need(not config["model_file"], "refits the model on K folds: give --model or --model-spec, not a fitted "
         "--model-file.")


def debiased_pd(ctx, sets: list, common: dict) -> xr.DataTree:
    """The data's PD of every ``--pd-features`` feature with pointwise and whole-curve bands."""
    from .. import DebiasedOptions, Grid, debiased_partial_dependence

    config = ctx.config
    result = debiased_partial_dependence(
        ctx.estimator, ctx.X_train, ctx.y_train, [fs for fs in sets if not isinstance(fs, tuple)],
        options=DebiasedOptions(n_folds=N_FOLDS), confidence_level=config.confidence_level,
        grid=Grid(config.grid_resolution, custom_values=ctx.training_levels(ctx.problem.custom_values, sets),
                  categorical_features=ctx.categorical_in(sets)),
        response_method=common["response_method"], rng=config.random_state)
    for node in result.children.values():
        ds = node.to_dataset()
        if config.simultaneous:  # the band the plots draw is the one asked for; the other is kept
            ds = ds.rename({"pd_band": "pd_band_pointwise"}).rename({"pd_band_simultaneous": "pd_band"})
        else:
            ds = ds.drop_vars("pd_band_simultaneous")
        node.dataset = ds
    flagged = {name: int((node.ds["overlap"] == 0).sum()) for name, node in result.children.items()}
    if any(flagged.values()):
        where = ", ".join(f"{name} ({k} grid point{'s' if k > 1 else ''})" for name, k in flagged.items() if k)
        ctx.notes.append(f"Thin overlap: no band at {where}; there the rows with that value cannot represent the "
                         "other features' distribution (effective sample size or weight mass in "
                         "results.nc), so the data say little about the PD there.")
    if config.band != "percentile":
        ctx.notes.append(f"--band {config.band} does not apply to --uncertainty debiased: its bands are normal "
                         "(estimate ± z × influence-function standard error; sup-t with --simultaneous).")
    return result


def _debiased_header(config, results: dict) -> list[tuple[str, str]]:
    """The summary's first rows: what the band is about and on what it rests."""
    band = "whole-curve (sup-t, Gaussian multiplier)" if config.simultaneous else "pointwise"
    return [("Uncertainty", f"debiased, cross-fitted (K = {N_FOLDS} folds; the model fitted {N_FOLDS} times, no "
                            "refits): the learner's bias is estimated from held-out residuals reweighted by a model "
                            "of how each feature depends on the others, and removed"),
            ("Bands", f"{config.confidence_level:.0%} normal {band}, about the data's PD (the PD of the "
                      "data-generating process: the expected target at feature = a, averaged over the other "
                      "features' rows), not about this model's PD")]


def _debiased_precision(config, results: dict) -> str:
    """The summary's closing paragraph: what the band means and where its guarantee ends."""
    return ("These bands are about the data's PD, not this model's: they cover the PD of the process that made "
            "the data, including what the model gets wrong, when (i) every value of a feature occurs with every "
            "combination of the others that is common in the data (overlap; grid points where it fails have no "
            "band, see `overlap` and `effective_sample_size` in results.nc), (ii) the model or the feature "
            "model is accurate enough (their errors enter as a product) and (iii) the curve is smooth at the "
            "scale of the kernel. Reading the curve as the causal effect of setting a feature additionally "
            "needs no unmeasured confounding; as the data's PD it needs nothing more. The guarantee is "
            "asymptotic (see the validation page of the documentation).")


STRATEGIES = {
    "bootstrap": Strategy("bootstrap", True, True, _bootstrap_run, _bootstrap_header, _bootstrap_precision,
                          "Bootstrap: {config.n_resamples} refits"),
    "none": Strategy("none", False, False, _one_fit_run, _none_header, _none_precision,
                     "One fit, no refits", check_config=_none_check_config),
    "debiased": Strategy("debiased", False, True, _one_fit_run, _debiased_header,
                         _debiased_precision, "Debiased, cross-fitted: the model fitted 5 times", target="dgp",
                         compute={"pd": debiased_pd}, defaults=_debiased_defaults,
                         check_config=_debiased_check_config, check_data=_debiased_check_data),
}
register_choices("uncertainty", STRATEGIES)  # --uncertainty offers these names


def strategy_for(config) -> Strategy:
    """The run's uncertainty strategy (``--uncertainty``)."""
    return STRATEGIES[config.uncertainty]


EFFECTS: dict[str, EffectReport] = {report.name: report for report in (
    effect_pd.REPORT,
    effect_ale.REPORT,
)}
register_choices("effect", EFFECTS)  # --effect offers these names (and both)


def requested(config) -> list[EffectReport]:
    """The effects ``--effect`` asks for, in registration order."""
    wanted = {"both": ("pd", "ale")}.get(config.effect, (config.effect,))
    return [report for name, report in EFFECTS.items() if name in wanted]


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """``Execution.progress`` of a run: lines on the refits, with an estimate of the time left."""

    def __init__(self, emit: Callable[[str], None], min_gap: float = 5.0):
        self.emit, self.min_gap = emit, min_gap
        self.start = self.last = time.perf_counter()
        self.warm = None  # (time, count) at the first call: the rate is measured from here
        self.estimated = False
        self.last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.warm is None:
            self.warm = (now, done)
            if done > 1:
                self.emit(f"Resuming: {done - 1} of {total} refits were finished before (checkpoint).")
        since, count = self.warm
        rate = (done - count) / (now - since) if done > count and now > since else None
        if rate and not self.estimated and (done - count >= 3 or done == total):
            self.estimated = True
            self.emit(f"Estimated time of the {total} refits: about {_duration(total / rate)} "
                      f"({rate:.3g} fits/s; about {_duration((total - done) / rate)} left).")
        tenth = int(10 * done / max(total, 1))
        if done == total or (tenth > self.last_tenth and now - self.last >= self.min_gap):
            self.last, self.last_tenth = now, tenth
            text = f"Bootstrap: {done}/{total} resamples ({100 * done / max(total, 1):.0f} %)"
            if done == total:
                text += f" in {_duration(now - self.start)}"
            elif rate:
                text += f", {rate:.3g} fits/s, about {_duration((total - done) / rate)} left"
            self.emit(text)


def engine_notes(engine: str) -> list[str]:
    """What a user must know about how the PD was computed: an exact engine whose reading of the model
    failed its self-check against the model's own predictions (the numbers then come from brute force).

    ``engine`` is the result's ``engine`` attr (:func:`pdpboot.engine.describe_choices`).

    >>> engine_notes("tree: exact, checked against the model's predictions")
    []
    >>> engine_notes("brute: tree engine failed its self-check: differs by up to 0.1")
    ['computed by brute force (exact, slower): tree engine failed its self-check: differs by up to 0.1']
    """
    return [f"computed by brute force (exact, slower): {part.split(': ', 1)[1]}"
            for part in engine.split("; ") if part.startswith("brute: ") and "self-check" in part]


def feature_sets(problem: Problem) -> list:
    """Features and pairs in the order of the PD result's nodes."""
    return [*problem.pd_features, *[tuple(p) for p in problem.pairs]]


def _jsonable(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def _model_name(estimator) -> str:
    if hasattr(estimator, "steps"):
        return f"Pipeline(... {type(estimator.steps[-1][1]).__name__})"
    return type(estimator).__name__


def compute(config: RunConfig, problem: Problem, *, say: Callable[[str], None] = print,
            log: Callable[[str], None] | None = None, progress: Callable[[str], None] | None = None,
            checkpoint: Path | None = None,
            on_fit: Callable[[Outcome], None] | None = None,
            on_effect: Callable[[EffectReport, xr.DataTree, Outcome], None] | None = None,
            keep_going: bool = False) -> Outcome:
    """Split, fit, evaluate, then compute every requested effect (with its uncertainty) in turn."""
    log = log or say
    strategy = strategy_for(config)
    effects = requested(config)
    specs = {}
    notes_of_effects = []
    for effect in effects:  # every effect's refusal and feature sets before any fit
        strategy.check(effect)
        sets, effect_notes = effect.feature_sets(problem)
        if strategy.check_data is not None:
            strategy.check_data(problem, sets)
        specs[effect.name] = sets
        notes_of_effects += [f"{effect.label}: {note}" for note in effect_notes]
    estimator, notes = build_estimator(config, problem)
    for note in [*(f"model: {note}" for note in notes), *notes_of_effects]:
        log(note)
    outcome = _fit(config, problem, estimator, given_fitted_model(config) if not strategy.bands else None, say)
    outcome.notes[:0] = [*problem.notes, *notes]
    outcome.notes += notes_of_effects
    if "pd" in specs:  # a PD of a feature the others determine averages the model over rows that do not occur
        for warning in determined_notes(problem, used_features(specs["pd"])):
            say(warning)
            outcome.notes.append(warning)
    outcome.strategy = strategy.name
    if on_fit is not None:
        on_fit(outcome)
    ctx = FitContext(config=config, problem=problem, estimator=estimator, fitted=outcome.fitted,
                     X_train=outcome.X_train, y_train=outcome.y_train, say=say, log=log, progress=progress,
                     checkpoint=checkpoint, seconds=outcome.seconds, notes=outcome.notes)
    run_attrs = dict(created=config.created, target_name=str(problem.y.name),
                     cli_config=json.dumps(config.to_dict(), sort_keys=True),
                     cli_metrics=json.dumps([[m, _jsonable(v), d] for m, v, d in outcome.metrics]),
                     cli_display_names=json.dumps(problem.display, sort_keys=True))
    first_error = None
    for effect in effects:
        sets = specs[effect.name]
        n_pairs = sum(isinstance(fs, tuple) for fs in sets)
        say(f"{strategy.announce.format(config=config)}, {effect.label} of {len(sets) - n_pairs} feature(s) and "
            f"{n_pairs} pair(s) on {effect.grid.format(n=config.grid_resolution)} ...")
        try:
            tree = strategy.run(effect, ctx, sets)
            if effect.tidy is not None:
                tree = effect.tidy(tree, problem)
            for note in engine_notes(tree.attrs.get("engine", "")):
                say(f"NOTE: {effect.label}: {note}")
                outcome.notes.append(f"{effect.label}: {note}")
        except Exception as exc:
            if not keep_going:
                raise
            first_error = first_error or exc
            reason = " ".join(str(exc).split()) or type(exc).__name__
            outcome.failures[effect.name] = f"{type(exc).__name__}: {reason}"
            say(f"ERROR: {effect.label} failed: {type(exc).__name__}: {reason}")
            continue
        attrs = {**tree.attrs, **run_attrs, "cli_notes": json.dumps(outcome.notes)}
        if effect.name == "pd" and strategy.refits and config.max_background:
            attrs["background_rows"] = BACKGROUND.format(n=config.max_background).replace("`", "")
        tree.attrs = {k: v for k, v in attrs.items() if v is not None}  # netCDF stores no None
        outcome.results[effect.name] = tree
        if on_effect is not None:
            on_effect(effect, tree, outcome)
    if first_error is not None and not outcome.results:  # nothing finished: the run fails as a whole
        if isinstance(first_error, InputError):
            raise first_error
        name = next(iter(outcome.failures))
        raise RuntimeError(f"{EFFECTS[name].label} failed: {outcome.failures[name]}") from first_error
    return outcome


def _fit(config: RunConfig, problem: Problem, estimator, given, say: Callable[[str], None]) -> Outcome:
    """The model fitted on the training rows (or the user's fitted ``given`` as it is), with test metrics."""
    if given is not None:  # the user's fitted model, used as it is: no split, no fit
        check_given_model(given, problem)  # before any prediction
        X_train, y_train = problem.X, problem.y
        say(f"Using the fitted {_model_name(given)} from --model-file as it is (no refit) on all "
            f"{len(X_train)} rows ...")
        start = time.perf_counter()
        fitted = given
        metrics, predictions = evaluate(fitted, problem, X_train, y_train, X_train, y_train, fitted_elsewhere=True)
        leaks = []
    else:
        check_model_parameters(estimator, problem.X, problem.y, what=model_option(config),  # before the first fit
                               custom=bool(config.model_spec or config.model_file),
                               classification=problem.task == "classification")
        X_train, X_test, y_train, y_test = split(config, problem)
        test = "no test set" if X_test is None else f"{len(X_test)} test rows"
        say(f"Fitting {_model_name(estimator)} on {len(X_train)} training rows ({test}) ...")
        start = time.perf_counter()
        fitted = clone(estimator).fit(X_train, y_train)
        metrics, predictions = evaluate(fitted, problem, X_train, y_train, X_test, y_test)
        # a perfect score means leakage only on held-out rows (a given model may have been fitted on these)
        leaks = leakage_notes(fitted, problem, metrics, X_test, y_test) + weak_model_notes(metrics)
    seconds = {"fit": time.perf_counter() - start}
    for leak in leaks:
        say(leak)
    return Outcome(estimator=estimator, fitted=fitted, metrics=metrics, predictions=predictions, X_train=X_train,
                   y_train=y_train, notes=leaks, seconds=seconds)


__all__ = ["STRATEGIES", "Strategy", "strategy_for", "EFFECTS", "requested", "debiased_pd"]
