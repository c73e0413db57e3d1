"""``--uncertainty debiased``: bands for the *data's* partial dependence in the workflow.

Every other strategy's band is about the learner (how this model's PD would vary with other
training rows).  This one targets the PD of the data-generating process,
``theta(a) = E_C[E(Y | x_s = a, X_C)]``: :func:`pdpboot.debiased_partial_dependence` cross-fits the
run's model on K folds, models how each feature depends on the others (density ratio, or the
propensity of a categorical feature's levels), and removes the learner's bias with reweighted
held-out residuals.  The model is fitted K times (no B refits); what needs refits (ICE
heterogeneity, H statistics, intervals of ranges and contrasts) and 2-D surfaces are not available:
:func:`check_config` refuses them before anything is read.  The whole strategy is this module
plus its row in :data:`pdpboot.workflow.strategy.STRATEGIES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import InputError

if TYPE_CHECKING:
    import xarray as xr

#: Cross-fitting folds of the command line.
N_FOLDS = 5
START = "--uncertainty debiased (bands for the data's PD, cross-fitted) "


def defaults(config: dict, given: set) -> None:
    """The debiased strategy's defaults: no ICE (it needs refits), 1-D curves only (the demo's pair dropped)."""
    if "ice_samples" not in given:
        config["ice_samples"] = 0
    if "pairs" not in given:
        config["pairs"] = []


def check_data(problem, sets: list) -> None:
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


def check_config(config: dict) -> None:
    """Refuse, before anything is read, what the debiased strategy cannot compute (each message names the fix).

    ``config`` is the checked option mapping of :func:`pdpboot.workflow.options.check_ranges`.
    """
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
    """The data's PD of every ``--pd-features`` feature with pointwise and whole-curve bands.

    Returns
    -------
    xarray.DataTree
        Per 1-D node ``pd``, ``pd_se``, ``pd_band`` (pointwise, or the sup-t band with
        ``--simultaneous``, the pointwise one then in ``pd_band_pointwise``), ``pd_plugin``,
        ``effective_sample_size``, ``weight_mass``, ``overlap``; root attr ``target = "dgp"``.
        No ICE, no resamples.
    """
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


def header(config, results: dict) -> list[tuple[str, str]]:
    """The summary's first rows: what the band is about and on what it rests."""
    band = "whole-curve (sup-t, Gaussian multiplier)" if config.simultaneous else "pointwise"
    return [("Uncertainty", f"debiased, cross-fitted (K = {N_FOLDS} folds; the model fitted {N_FOLDS} times, no "
                            "refits): the learner's bias is estimated from held-out residuals reweighted by a model "
                            "of how each feature depends on the others, and removed"),
            ("Bands", f"{config.confidence_level:.0%} normal {band}, about the data's PD (the PD of the "
                      "data-generating process: the expected target at feature = a, averaged over the other "
                      "features' rows), not about this model's PD")]


def precision(config, results: dict) -> str:
    """The summary's closing paragraph: what the band means and where its guarantee ends."""
    return ("These bands are about the data's PD, not this model's: they cover the PD of the process that made "
            "the data, including what the model gets wrong, when (i) every value of a feature occurs with every "
            "combination of the others that is common in the data (overlap; grid points where it fails have no "
            "band, see `overlap` and `effective_sample_size` in results.nc), (ii) the model or the feature "
            "model is accurate enough (their errors enter as a product) and (iii) the curve is smooth at the "
            "scale of the kernel. Reading the curve as the causal effect of setting a feature additionally "
            "needs no unmeasured confounding; as the data's PD it needs nothing more. The guarantee is "
            "asymptotic (see the validation page of the documentation).")


__all__ = ["check_config", "debiased_pd", "header", "precision"]
