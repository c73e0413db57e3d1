"""Accumulated local effects of a run (``--effect ale``): ``ale.nc``, its summary section, sheets and plots."""

from __future__ import annotations

import dataclasses

import xarray as xr

from .. import Grid, accumulated_local_effects, bootstrap_ale, get_node
from . import report
from .effect import EffectReport, FitContext, SummaryContext
from .options import md, num
from .report import METHOD_TEXT, feature_jobs


def feature_sets(problem) -> tuple[list, list[str]]:
    """Every ``--pd-features`` feature and the numeric pairs (2-D ALE needs two ordered features)."""
    pairs = [tuple(p) for p in problem.pairs if not any(f in problem.categorical for f in p)]
    notes = [f"no 2-D ALE for {problem.display[a]!r} x {problem.display[b]!r}: 2-D ALE needs two numeric "
             "features" for a, b in problem.pairs if (a, b) not in pairs]
    return [*problem.pd_features, *pairs], notes


def _ordered_levels(ctx: FitContext, sets: list) -> dict | None:
    """A user's --level-order is kept; other categorical levels get ALE's own order (by similarity)."""
    problem = ctx.problem
    ordered = {f: v for f, v in problem.custom_values.items()
               if problem.display.get(f) in ctx.config.level_order and f in problem.categorical}
    return ctx.training_levels(ordered, sets)


def _grid(ctx: FitContext, sets: list) -> Grid:
    return Grid(ctx.config.grid_resolution, custom_values=_ordered_levels(ctx, sets),
                categorical_features=ctx.categorical_in(sets))


def _bootstrap(ctx: FitContext, sets: list, common: dict) -> xr.DataTree:
    resampling = common["resampling"]
    if resampling.scheme == "auto":  # --resampling auto: ALE keeps the bootstrap its bands were studied with
        common = dict(common, resampling=dataclasses.replace(resampling, scheme="bootstrap"))
    return bootstrap_ale(ctx.estimator, ctx.X_train, ctx.y_train, sets, grid=_grid(ctx, sets), **common)


def _one_fit(ctx: FitContext, sets: list, common: dict) -> xr.DataTree:
    return accumulated_local_effects(ctx.fitted, ctx.X_train, sets, grid=_grid(ctx, sets), **common)


def summary(ctx: SummaryContext, ale: xr.DataTree) -> list[str]:
    """Features ranked by the range of their ALE curve (with intervals and the flat-line check), 2-D ALE."""
    problem, config, scale, cells = ctx.problem, ctx.config, ctx.scale, ctx.cells
    level = f"{config.confidence_level:.0%}"
    features = list(problem.pd_features)
    refits = ctx.strategy.refits
    method = report.interval_method("ale_range", config)
    ranges = report.ranges(ale, features, config, "ale") if refits else {}
    flat = report.flat_within_noise(ale, features, config, "ale") if refits else {}
    lines = ["", "## Features ranked by the range of their ALE curve", "",
             "Accumulated local effects (Apley & Zhu) add up the model's prediction differences across small "
             "bins of the feature, each averaged over the rows inside the bin only, so unlike PD they never "
             "evaluate the model at combinations of correlated features that do not occur. ALE range = max - "
             "min of the centred ALE curve over the bin edges (or levels). "
             + (f"Interval: {level} bootstrap {method} interval ({METHOD_TEXT.get(method, method)}); *beyond "
                "noise* as for PD, from the ALE's simultaneous band. " if refits else
                "Intervals need refits: rerun with `--uncertainty bootstrap`. ")
             + "Where PD and ALE rank features differently, correlated features are the usual reason: trust ALE "
             "there."]
    if refits and features and not flat:
        lines += ["", f"(*beyond noise* needs more resamples for a {level} simultaneous band.)"]

    def spread(f, output):
        curve = get_node(ale, f)["ale"].sel(output=output)
        return float(curve.max() - curve.min())

    for output in ctx.outputs if features else []:
        order = sorted(features, key=lambda f: -spread(f, output))
        lines += ["", f"Response: {ctx.response(output)}.", "",
                  "| rank | feature | ALE range |" + (" interval | beyond noise |" if refits else "")
                  + " bins or levels |", "|---|---|---|" + ("---|---|" if refits else "") + "---|"]
        for rank, f in enumerate(order, 1):
            node = get_node(ale, f)
            kind = (node.attrs.get("ale_kind") or ["numeric"])[0]
            size = node.sizes[f] - 1 if kind == "numeric" else node.sizes[f]
            row = f"| {rank} | {md(problem.display[f])} | {num(spread(f, output), scale)} |"
            if refits:
                noise = "–" if f not in flat else "no" if bool(flat[f].sel(output=output)) else "yes"
                what = f"ALE range of {problem.display[f]}"
                row += f" {cells.cell(ranges[f], 'ale_range', output, scale, what=what)} | {noise} |"
            lines.append(row + f" {size} {'bins' if kind == 'numeric' else 'levels'} |")
        lines += cells.notes()
    pairs = [tuple(node.attrs["features"]) for node in ale.children.values() if len(node.attrs["features"]) == 2]
    if pairs:
        output = problem.outputs_first[0]
        bands = "ale_band" in get_node(ale, pairs[0]).ds
        lines += ["", "2-D ALE (the pure interaction of a pair, its 1-D effects removed; 0 = no interaction): "
                  "range of the surface" + (" and mean width of its band" if bands else "")
                  + (f" (response: {ctx.response(output)})" if problem.task == "classification" else "")
                  + ".", "", "| pair | 2-D ALE range |" + (" mean band width |" if bands else ""),
                  "|---|---|" + ("---|" if bands else "")]
        for a, b in pairs:
            ds = get_node(ale, (a, b)).to_dataset()
            surface = ds["ale"].sel(output=output)
            row = (f"| {md(problem.display[a])} x {md(problem.display[b])} | "
                   f"{num(surface.max() - surface.min(), scale)} |")
            if bands:
                band = ds["ale_band"].sel(output=output)
                row += f" {num((band.sel(ci_bound='upper') - band.sel(ci_bound='lower')).mean([a, b]), scale)} |"
            lines.append(row)
    return lines


def plots(tree, problem, config, outputs, shown, taken) -> list:
    """ALE figure per feature (curve, bands, rug of deciles; levels as points), per numeric pair, an overview."""
    from .effect import pairs_of

    return feature_jobs(tree, problem, config, outputs, shown, taken, variable="ale", pairs=pairs_of(tree))


REPORT = EffectReport(
    name="ale", label="ALE", file="ale.nc", variable="ale",
    describe="accumulated local effects (ALE, resamples, bands; node attrs `bin_counts`, `ale_kind`); open with "
             "`pdpboot.load(\"ale.nc\")`.",
    feature_sets=feature_sets,
    compute={"bootstrap": _bootstrap, "none": _one_fit},
    summary=summary, plots=plots,
    sheet_prefixes=("ALE ", "ALE2 "), sheet_variables=("ale",), grid="{n} quantile bins",
)
