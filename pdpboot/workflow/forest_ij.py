"""``--uncertainty ij``: one-fit (infinitesimal-jackknife) bands for a bagged forest in the workflow.

Instead of refitting the model B times, the forest fitted on the training rows is reused:
:func:`pdpboot.forest_partial_dependence` recovers each tree's bootstrap counts and estimates the
sampling variance of the PD from the covariance between counts and per-tree PDs.  What needs
resamples (ICE heterogeneity, H statistics, intervals of PD ranges and level contrasts) is not
available: ``options.check_ranges`` refuses it before anything is read, and :func:`check_estimator`
refuses a model the IJ cannot read (not a forest, nor a Pipeline ending in one) before any fit.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable

import numpy as np

from ..caveats import CoverageWarning
from ..forest import MIN_TREES, forest_partial_dependence
from ..schema import get_node
from . import InputError, effects
from .outcome import Outcome
from .text import file_sections, md, num


def check_estimator(estimator) -> None:
    """Refuse, before any fit, a model the IJ cannot read: anything but a forest or a Pipeline ending in one.

    The run's Pipelines (categorical columns one-hot encoded, missing values imputed) are fine: the trees
    are evaluated on the transformed rows and the fitted preprocessing is held fixed, as in the forest's fit.
    """
    from sklearn.pipeline import Pipeline

    from ..engine.jackknife import FOREST_TYPES

    final = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    if not isinstance(final, FOREST_TYPES):
        raise InputError(
            f"--uncertainty ij needs a random forest or extra-trees model, but this run's model is "
            f"{type(final).__name__}. Use --uncertainty bootstrap.")


def ij_outcome(config, problem, *, estimator, fitted, metrics, predictions, X_train, y_train, notes: list[str],
               seconds: dict, sets: list, custom_values: dict | None, say: Callable[[str], None]):
    """The IJ counterpart of the bootstrap part of :func:`pdpboot.workflow.compute.compute`.

    Returns
    -------
    Outcome
        ``result`` holds per node ``pd``, ``pd_se``, ``pd_band`` (``ci_bound``, ``output``,
        *features; normal, ``simultaneous`` per ``--simultaneous`` with ``pd_band_pointwise`` then)
        and, in 1-D nodes, ``pd_centered`` with its SE and band; no resamples, no ICE.
    """
    used = {f for fs in sets for f in (fs if isinstance(fs, tuple) else (fs,))}
    n_trees = len((fitted.steps[-1][1] if hasattr(fitted, "steps") else fitted).estimators_)
    say(f"Infinitesimal jackknife: one fit, {n_trees} trees; PD of {len(problem.pd_features)} feature(s) and "
        f"{len(problem.pairs)} pair(s) on a {config.grid_resolution}-point grid, averaged over all "
        f"{len(X_train)} training rows ...")
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = forest_partial_dependence(
            fitted, X_train, y_train, sets,
            confidence_level=config.confidence_level, simultaneous=config.simultaneous,
            grid_resolution=config.grid_resolution,
            custom_values=custom_values,
            categorical_features=[c for c in [*problem.categorical, *problem.points] if c in used] or None,
            response_method="predict_proba" if problem.task == "classification" else "predict",
            n_jobs=config.n_jobs, rng=config.random_state)
    for w in caught:
        if issubclass(w.category, CoverageWarning) or (issubclass(w.category, UserWarning)
                                                       and "unreliable" in str(w.message)):
            say(f"WARNING: {w.message}")
            notes = [*notes, str(w.message)]
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    seconds["bootstrap"] = time.perf_counter() - start
    if config.band != "normal":
        notes = [*notes, f"--band {config.band} does not apply to --uncertainty ij: its bands are normal "
                         "(estimate ± z × IJ standard error)."]
    result.attrs.update(
        created=config.created,
        cli_config=json.dumps(config.to_dict(), sort_keys=True),
        cli_metrics=json.dumps([[m, v.item() if isinstance(v, np.generic) else v, d] for m, v, d in metrics]),
        cli_notes=json.dumps([*problem.notes, *notes]),
        cli_display_names=json.dumps(problem.display, sort_keys=True),
    )
    return Outcome(result=result, estimator=estimator, fitted=fitted, metrics=metrics, predictions=predictions,
                   X_train=X_train, y_train=y_train, notes=[*problem.notes, *notes], seconds=seconds)


def is_ij(result) -> bool:
    """Whether a run's result carries infinitesimal-jackknife (not bootstrap) bands."""
    return result.attrs.get("uncertainty") in ("infinitesimal-jackknife", "jackknife-after-bootstrap")


def uncertainty_text(result) -> str:
    """'infinitesimal jackknife (one fit, T trees)'."""
    return f"infinitesimal jackknife (one fit, {int(result.attrs['n_estimators'])} trees)"


def summary_markdown(*, result, problem, config, outcome, files, failures, data_name, table_shape, sheets,
                     seconds, response, outputs) -> str:
    """``summary.md`` of an IJ run: like the bootstrap's, without the statistics that need refits.

    ``response(problem, output)`` and ``outputs`` come from
    :mod:`pdpboot.workflow.summary` (the same wording as a bootstrap run).
    """
    level = f"{config.confidence_level:.0%}"
    band = f"{level} normal {'simultaneous (sup-t, Gaussian multiplier)' if config.simultaneous else 'pointwise'}"
    n_train = len(outcome.X_train)
    n_used = len(problem.X)
    trees = int(result.attrs["n_estimators"])
    model = type(outcome.estimator).__name__
    scale = effects.response_scale(problem.y) if problem.task == "regression" else 1.0
    lines = [f"# pdpboot run: {md(problem.y.name)}", "", "| | |", "|---|---|",
             f"| Data | {md(data_name)}: {table_shape[0]} rows x {table_shape[1]} columns; {n_used} rows used, "
             f"{n_train} for training, {n_used - n_train} for testing |",
             f"| Task | {problem.task} of `{md(problem.y.name)}` |",
             f"| Model | {md(model)} (`--model {config.model}`), {len(problem.features)} features, {trees} trees; "
             "fitted model in `model.joblib` |",
             f"| Uncertainty | {uncertainty_text(result)}: the sampling variance of each PD value is estimated "
             "from the covariance between the trees' bootstrap counts of each training row and the trees' PDs "
             "(Wager, Hastie & Efron 2014, with their finite-tree bias correction); each PD averaged over all "
             "training rows |",
             f"| Bands | {band} |",
             f"| Seed | `--random-state {config.random_state}` (same seed and data: same numbers) |",
             f"| Run time | fit {seconds.get('fit', 0):.1f} s, jackknife {seconds.get('bootstrap', 0):.1f} s |",
             "", "## Test metrics", "", "| metric | value | meaning |", "|---|---|---|"]
    lines += [f"| {md(m)} | {num(v)} | {md(d, limit=2000)} |" for m, v, d in outcome.metrics]
    if problem.pd_features:
        lines += ["", "## Features ranked by the range of their PD curve", "",
                  "PD range = max - min of the partial dependence over the feature's grid. Mean band width: the "
                  f"average width of the {band} band over the grid. Intervals for the range, the *beyond noise* "
                  "check, ICE heterogeneity and H² need refits: rerun with `--uncertainty bootstrap`."]
        for output in outputs:
            ranked = sorted(problem.pd_features, key=lambda f: -float(
                np.ptp(get_node(result, f)["pd"].sel(output=output).values)))
            lines += ["", f"Response: {response(problem, output)}.", "",
                      "| rank | feature | PD range | mean band width | largest SE |", "|---|---|---|---|---|"]
            for rank, f in enumerate(ranked, 1):
                ds = get_node(result, f).to_dataset()
                pd = ds["pd"].sel(output=output)
                bd = ds["pd_band"].sel(output=output)
                width = float((bd.sel(ci_bound="upper") - bd.sel(ci_bound="lower")).mean())
                lines.append(f"| {rank} | {md(problem.display[f])} | {num(float(pd.max() - pd.min()), scale)} | "
                             f"{num(width, scale)} | {num(float(ds['pd_se'].sel(output=output).max()), scale)} |")
    if problem.pairs:
        output = outputs[0]
        lines += ["", "## 2-D surfaces", "", "| pair | surface range | mean band width |", "|---|---|---|"]
        for a, b in problem.pairs:
            ds = get_node(result, (a, b)).to_dataset()
            pd = ds["pd"].sel(output=output)
            bd = ds["pd_band"].sel(output=output)
            lines.append(f"| {md(problem.display[a])} x {md(problem.display[b])} | {num(float(pd.max() - pd.min()))} "
                         f"| {num(float((bd.sel(ci_bound='upper') - bd.sel(ci_bound='lower')).mean()))} |")
    noise = float(result.attrs.get("mc_noise_share", np.nan))
    lines += file_sections(["- `results.nc`: PD, standard errors and bands; open with `pdpboot.load(\"results.nc\")`."],
                           "- `repro.py`: `python repro.py` recomputes `results.nc` from `repro_inputs/` and checks "
                           "it is identical.", sheets=sheets, files=files, notes=outcome.notes, failures=failures)
    lines += ["", "## Precision", "",
              f"The jackknife's finite-tree correction removed {noise:.0%} of the raw variance (median over the grid "
              f"of the noisiest node): the standard errors themselves are estimated from {trees} trees and get "
              f"more precise with more trees (the noise falls like rows / trees). Below {MIN_TREES} trees, or when "
              "that share exceeds 50 %, the bands are unreliable (a warning above says so); the refit bootstrap "
              "(`--uncertainty bootstrap`) is the check for final figures.", ""]
    return "\n".join(lines)


__all__ = ["check_estimator", "ij_outcome", "is_ij", "summary_markdown", "uncertainty_text"]
