"""Uncertainty strategies of a run (``--uncertainty``), chosen once by :func:`strategy_for`.

``bootstrap``  refit the model on B resamples; bands, SEs and every interval of the summary
``none``       one fit (or the user's fitted ``--model-file`` as it is): the effects without bands
``debiased``   K cross-fitted fits: bands for the *data's* PD (:mod:`~pdpboot.workflow.debiased_dgp`)

A strategy runs any registered effect that lists it in ``EffectReport.compute`` and says, for the
summary, how the bands were made.  Nothing else in the workflow tests ``config.uncertainty``.
Adding one: a :class:`Strategy` in :data:`STRATEGIES` (``--uncertainty`` offers every name there,
:func:`pdpboot.workflow.options.register_choices`) and its entry in the effects' ``compute``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import xarray as xr

from .. import Execution, Resampling, confidence_bands
from . import InputError, debiased_dgp
from .effect import EffectReport, FitContext
from .options import register_choices
from .progress import bootstrap_progress


@dataclass(frozen=True)
class Strategy:
    """How a run's effects get their uncertainty.

    ``run(effect, ctx, sets)`` returns the effect's DataTree (with bands when ``bands``); ``header`` and
    ``precision`` give the summary's first rows and closing paragraph; ``check_data(problem, sets)`` and
    ``check_config(config)`` refuse, before any fit, what the strategy cannot do; ``target`` says what the
    bands are about (``learner``: this model's PD; ``dgp``: the data's).
    """

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
    common = dict(
        response_method=ctx.response_method, rng=config.random_state, resampling=resampling,
        execution=Execution(n_jobs=config.n_jobs, threads_per_job=config.threads_per_job,
                            progress=True if ctx.progress_lines is not None else ctx.progress),
    )

    def call():
        run = lambda: STRATEGIES["bootstrap"].compute_for(effect)(ctx, sets, common)  # noqa: E731 - maybe in the reader
        if ctx.progress_lines is None:
            return run()
        return bootstrap_progress(run, emit=ctx.progress_lines, n_resamples=config.n_resamples,
                                  terminal=ctx.progress)

    tree = _timed(effect, ctx, call)
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
                          f"({_scheme_text(attrs)}); each {labels} averaged over its resample's rows"),
            ("Bands", f"{config.confidence_level:.0%} {config.band} "
                      f"{'simultaneous' if config.simultaneous else 'pointwise'}"
                      f"{', PD bands formed on the logit scale and mapped back' if logit else ''}{_target(results)}")]
    if attrs.get("resampling_requested") == "auto" and attrs.get("resampling_reason"):
        rows.insert(1, ("Why this resampling", str(attrs["resampling_reason"])))
    elif attrs.get("resampling") == "group":
        rows.insert(1, ("Why this resampling", "--groups: rows of one group are not independent, so whole groups "
                                               "are drawn."))
    return rows


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


STRATEGIES = {
    "bootstrap": Strategy("bootstrap", True, True, _bootstrap_run, _bootstrap_header, _bootstrap_precision,
                          "Bootstrap: {config.n_resamples} refits"),
    "none": Strategy("none", False, False, _one_fit_run, _none_header, _none_precision,
                     "One fit, no refits", check_config=_none_check_config),
    "debiased": Strategy("debiased", False, True, _one_fit_run, debiased_dgp.header,
                         debiased_dgp.precision, "Debiased, cross-fitted: the model fitted 5 times", target="dgp",
                         compute={"pd": debiased_dgp.debiased_pd}, defaults=debiased_dgp.defaults,
                         check_config=debiased_dgp.check_config, check_data=debiased_dgp.check_data),
}
register_choices("uncertainty", STRATEGIES)  # --uncertainty offers these names


def strategy_for(config) -> Strategy:
    """The run's uncertainty strategy (``--uncertainty``)."""
    return STRATEGIES[config.uncertainty]


__all__ = ["STRATEGIES", "Strategy", "strategy_for"]
