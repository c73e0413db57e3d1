"""``--uncertainty ij``: one-fit (infinitesimal-jackknife) bands for a bagged forest in the workflow.

Instead of refitting the model B times, the forest fitted on the training rows is reused:
:func:`pdpboot.forest_partial_dependence` recovers each tree's bootstrap counts and estimates the
sampling variance of the PD from the covariance between counts and per-tree PDs.  What needs
resamples (ICE heterogeneity, H statistics, intervals of PD ranges and level contrasts) is not
available: ``options.check_ranges`` refuses it before anything is read, and :func:`check_estimator`
refuses a model the IJ cannot read (not a forest, nor a Pipeline ending in one) before any fit.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..caveats import CoverageWarning
from ..forest import MIN_TREES, forest_partial_dependence
from ..options import Execution
from . import InputError


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


def jackknife_pd(ctx, sets: list, common: dict):
    """PD of the forest fitted on the training rows, with infinitesimal-jackknife bands (one fit).

    Returns
    -------
    xarray.DataTree
        Per node ``pd``, ``pd_se``, ``pd_band`` (``ci_bound``, ``output``, *features; normal,
        ``simultaneous`` per ``--simultaneous`` with ``pd_band_pointwise`` then) and, in 1-D nodes,
        ``pd_centered`` with its SE and band; no resamples, no ICE.  A warning that the bands are
        unreliable (too few trees) is said and kept in the run's notes (``ctx.notes``).
    """
    config = ctx.config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = forest_partial_dependence(
            ctx.fitted, ctx.X_train, ctx.y_train, sets,
            confidence_level=config.confidence_level, simultaneous=config.simultaneous,
            custom_values=ctx.training_levels(ctx.problem.custom_values, sets),
            categorical_features=ctx.categorical_in(sets), execution=Execution(n_jobs=config.n_jobs),
            rng=config.random_state,
            **common)
    for w in caught:
        if issubclass(w.category, CoverageWarning) or (issubclass(w.category, UserWarning)
                                                       and "unreliable" in str(w.message)):
            ctx.say(f"WARNING: {w.message}")
            ctx.notes.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if config.band != "normal":
        ctx.notes.append(f"--band {config.band} does not apply to --uncertainty ij: its bands are normal "
                         "(estimate ± z × IJ standard error).")
    return result


def uncertainty_text(result) -> str:
    """'infinitesimal jackknife (one fit, T trees)'."""
    return f"infinitesimal jackknife (one fit, {int(result.attrs['n_estimators'])} trees)"


def precision_text(result) -> str:
    """The summary's paragraph on the precision of IJ bands."""
    noise = float(result.attrs.get("mc_noise_share", np.nan))
    trees = int(result.attrs["n_estimators"])
    return (f"The jackknife's finite-tree correction removed {noise:.0%} of the raw variance (median over the grid "
            f"of the noisiest node): the standard errors themselves are estimated from {trees} trees and get "
            f"more precise with more trees (the noise falls like rows / trees). Below {MIN_TREES} trees, or when "
            "that share exceeds 50 %, the bands are unreliable (a warning above says so); the refit bootstrap "
            "(`--uncertainty bootstrap`) is the check for final figures.")


__all__ = ["check_estimator", "jackknife_pd", "precision_text", "uncertainty_text"]
