"""The partial dependence of a run (``--effect pd``): ``results.nc``, its summary section, sheets and plots."""

from __future__ import annotations

import dataclasses

import numpy as np
import xarray as xr

from .. import (
    Grid,
    bootstrap_partial_dependence,
    get_node,
    h_statistic,
    ice_heterogeneity,
    partial_dependence,
    pd_importance,
    pd_variance_statistic,
)
from . import report
from .effect import EffectReport, FitContext, SummaryContext
from .options import md, num
from .report import METHOD_TEXT, feature_jobs, importance_job, interaction_job, target_jobs


def feature_sets(problem) -> tuple[list, list[str]]:
    """Every ``--pd-features`` feature and every ``--pairs`` pair."""
    return [*problem.pd_features, *[tuple(p) for p in problem.pairs]], []


def _bootstrap(ctx: FitContext, sets: list, common: dict) -> xr.DataTree:
    config = ctx.config
    options = dict(common, resampling=dataclasses.replace(common["resampling"],
                                                          max_background=config.max_background or None))
    return bootstrap_partial_dependence(
        ctx.estimator, ctx.X_train, ctx.y_train, sets,
        grid=Grid(config.grid_resolution, custom_values=ctx.training_levels(ctx.problem.custom_values, sets),
                  categorical_features=ctx.categorical_in(sets)),
        statistics={"ice": config.ice_samples if config.ice_samples > 0 else False, "heterogeneity": True,
                    "interactions": config.interactions if config.interactions > 0 else False},
        **options)


def _one_fit(ctx: FitContext, sets: list, common: dict) -> xr.DataTree:
    ice = ctx.config.ice_samples
    return partial_dependence(
        ctx.fitted, ctx.X_train, sets,
        grid=Grid(ctx.config.grid_resolution, custom_values=ctx.training_levels(ctx.problem.custom_values, sets),
                  categorical_features=ctx.categorical_in(sets)),
        kind="both" if ice > 0 else "average", max_ice_instances=ice if ice > 0 else None,
        rng=ctx.config.random_state, **common)


def _drop_pair_ice_resamples(tree: xr.DataTree, problem) -> xr.DataTree:
    """Resampled ICE surfaces of pairs: B x N x grid^2 numbers nothing reads."""
    for a, b in problem.pairs:
        node = get_node(tree, (a, b))
        if "ice_resamples" in node.ds:
            node.dataset = node.to_dataset().drop_vars("ice_resamples")
    return tree


# ----------------------------------------------------------------------------- summary.md


def _pair_table(result, problem, config) -> dict[tuple, xr.Dataset]:
    nodes = {}
    for a, b in problem.pairs:
        node = get_node(result, (a, b))
        ds = node.to_dataset()
        categorical = tuple(bool(c) for c in node.attrs["categorical"])
        nodes[node.name] = xr.Dataset(
            {"pdvi": pd_variance_statistic(ds["pd"], categorical),
             "pdvi_resamples": pd_variance_statistic(ds["pd_resamples"], categorical)},
            attrs=node.attrs)
    banded = report.band_tree(result, nodes, config, "pdvi") if nodes else {}
    out = {}
    for a, b in problem.pairs:
        ds = get_node(result, (a, b)).to_dataset()
        extra = banded[get_node(result, (a, b)).name].to_dataset()
        width = (ds["pd_band"].sel(ci_bound="upper") - ds["pd_band"].sel(ci_bound="lower")).mean([a, b])
        out[(a, b)] = xr.Dataset({"range": ds["pd"].max([a, b]) - ds["pd"].min([a, b]), "width": width,
                                  "pdvi": extra["pdvi"], "pdvi_resamples": extra["pdvi_resamples"],
                                  "pdvi_band": extra["pdvi_band"]})
    return out


def _without_refits(ctx: SummaryContext, result: xr.DataTree) -> list[str]:
    """PD ranges (with band widths and SEs when the strategy made bands): no refits, no report."""
    problem, scale = ctx.problem, ctx.scale
    bands = ctx.strategy.bands
    lines = ["", "## Features ranked by the range of their PD curve", "",
             "PD range = max - min of the partial dependence over the feature's grid."
             + (" Mean band width and largest SE: over the grid values that have a band (a debiased band leaves"
                " out grid values with thin overlap)." if bands else "")
             + " Intervals for the range, the *beyond noise* check, ICE heterogeneity and H² need refits: rerun "
             "with `--uncertainty bootstrap`."]
    for output in ctx.outputs:
        ranked = sorted(problem.pd_features, key=lambda f: -float(
            np.ptp(get_node(result, f)["pd"].sel(output=output).values)))
        header = "| rank | feature | PD range |" + (" mean band width | largest SE |" if bands else "")
        lines += ["", f"Response: {ctx.response(output)}.", "", header,
                  "|---|---|---|" + ("---|---|" if bands else "")]
        for rank, f in enumerate(ranked, 1):
            ds = get_node(result, f).to_dataset()
            pd = ds["pd"].sel(output=output)
            row = f"| {rank} | {md(problem.display[f])} | {num(float(pd.max() - pd.min()), scale)} |"
            if bands:
                row += _band_cells(ds, output, scale)
            lines.append(row)
    if problem.pairs:
        output = ctx.outputs[0]
        lines += ["", "## 2-D surfaces", "", "| pair | surface range |" + (" mean band width |" if bands else ""),
                  "|---|---|" + ("---|" if bands else "")]
        for a, b in problem.pairs:
            ds = get_node(result, (a, b)).to_dataset()
            pd = ds["pd"].sel(output=output)
            row = f"| {md(problem.display[a])} x {md(problem.display[b])} | {num(float(pd.max() - pd.min()))} |"
            if bands:
                bd = ds["pd_band"].sel(output=output)
                row += f" {num(float((bd.sel(ci_bound='upper') - bd.sel(ci_bound='lower')).mean()))} |"
            lines.append(row)
    return lines


def _band_cells(ds: xr.Dataset, output, scale) -> str:
    """The mean band width and largest SE of one curve, over the grid values that have a band."""
    band = ds["pd_band"].sel(output=output)
    width = (band.sel(ci_bound="upper") - band.sel(ci_bound="lower")).values
    has_band = np.isfinite(width)
    if not has_band.any():
        return " no band (thin overlap everywhere) | - |"
    se = ds["pd_se"].sel(output=output).values[has_band]
    return f" {num(float(width[has_band].mean()), scale)} | {num(float(np.nanmax(se)), scale)} |"


def importance_table(result: xr.DataTree, config):
    """:func:`pdpboot.pd_importance` of the 1-D nodes with the summary's level and interval method
    (``config`` None: 95 % percentile intervals)."""
    if not any(len(node.attrs["features"]) == 1 for node in result.children.values()):
        return None
    if config is None:
        return pd_importance(result)
    method = report.interval_method("pd_range", config)
    return pd_importance(result, confidence_level=config.confidence_level,
                         method=method if method in ("percentile", "basic", "normal", "bc") else "percentile")


def _importance_section(ctx: SummaryContext, result: xr.DataTree) -> list[str]:
    """PD-based importance (Greenwell et al. 2018) per feature, with its interval when there are refits."""
    table = importance_table(result, ctx.config)
    if table is None:
        return []
    refits = bool(table["n_resamples"].max() > 0)
    flagged = False
    level = f"{ctx.config.confidence_level:.0%}"
    lines = ["", "## PD-based feature importance", "",
             "Greenwell, Boehmke & McCarthy (2018): the standard deviation of the PD curve over the grid (for "
             "categorical features its range / 4, on the same scale), in the response's units; a feature the model "
             "ignores has 0." + (f" Interval: {level} bootstrap {table['method'].dropna().iloc[0]} interval of the "
                                 "importance of the refits' curves (like the PD range, an importance is never "
                                 "negative, so its interval stays above 0 even without an effect)."
                                 if refits else " No interval without refits (`--uncertainty bootstrap`).")]
    for output in ctx.outputs:
        rows = table[table["output"].astype(str) == str(output)]
        lines += ["", f"Response: {ctx.response(output)}.", "",
                  "| feature | importance | interval | measure |" if refits else "| feature | importance | measure |",
                  "|---|---|---|---|" if refits else "|---|---|---|"]
        for row in rows.itertuples(index=False):
            name = md(ctx.problem.display.get(row.feature, row.feature))
            cells = [name, num(row.importance, ctx.scale)]
            if refits:
                outside = report.excludes(row.importance, row.lower, row.upper, ctx.scale)
                flagged = flagged or outside
                cells.append(f"[{num(row.lower, ctx.scale)}, {num(row.upper, ctx.scale)}]" + (" †" if outside else ""))
            cells.append("SD" if row.measure == "sd" else "range / 4")
            lines.append("| " + " | ".join(cells) + " |")
    if flagged:
        lines += ["", "† The interval does not contain the estimate: the refits' curves are noisier (or flatter) than "
                  "the full-data fit's, so their importances sit to one side of it; the interval shows where the "
                  "refits' values lie, not bounds around the estimate."]
    return lines


_RANKING = (
    "PD range = max - min of the partial dependence over the feature's grid: how far the average prediction moves "
    "with the feature. Intervals of ranges, indices and H²: {level} bootstrap {method} intervals ({text}). "
    "A range is positive even for a feature without effect (noise wiggles every refitted curve), so its interval "
    "never contains 0; the column *beyond noise* answers that question instead: *no* when the {level} simultaneous "
    "band of the mean-centred PD contains a flat line (0) at every grid value, i.e. the curve's shape is within "
    "what refitting on resamples produces (two-valued features: *no* when the level contrast's interval contains 0; "
    "no verdict below 39 resamples at 95 %). Heterogeneity index = mean squared distance between the mean-centred "
    "ICE curves and the mean-centred PD (squared response units; 0 when every row's curve is parallel to the PD, "
    "i.e. no interaction of the feature with the others). Values below 1e-9 of the response's scale are "
    "round-off and shown as 0.")


def summary(ctx: SummaryContext, result: xr.DataTree) -> list[str]:
    """The PD sections of ``summary.md``: ranked features, importance, level contrasts, 2-D surfaces."""
    if not ctx.strategy.refits:
        lines = _without_refits(ctx, result)
        cut = next((i for i, line in enumerate(lines) if line == "## 2-D surfaces"), len(lines))
        cut = cut - 1 if cut < len(lines) else cut  # before the blank line of the next section
        return lines[:cut] + _importance_section(ctx, result) + lines[cut:]
    problem, config, scale, cells = ctx.problem, ctx.config, ctx.scale, ctx.cells
    level = f"{config.confidence_level:.0%}"
    features = list(problem.pd_features)
    ranges = report.ranges(result, features, config)
    flat = report.flat_within_noise(result, features, config)
    levelled = [f for f in features if f in problem.categorical or f in problem.points]
    contrasts = report.contrasts(result, levelled, config)
    het = ice_heterogeneity(result, features, confidence_level=config.confidence_level,
                            method=report.interval_method("heterogeneity_index", config)) \
        if features else xr.DataTree()
    hstats = h_statistic(result, confidence_level=config.confidence_level,
                         method=report.interval_method("h2", config)) if config.interactions > 0 else None
    pairs = _pair_table(result, problem, config)
    range_method = report.interval_method("pd_range", config)
    lines = ["", "## Features ranked by the range of their PD curve", "", _RANKING.format(
        level=level, method=range_method, text=METHOD_TEXT.get(range_method, range_method))] if features else []
    if features and not flat:
        lines += ["", f"(*beyond noise* needs more resamples for a {level} simultaneous band: rerun with "
                  "`--n-resamples 100` or more.)"]
    for output in ctx.outputs if features else []:
        order = sorted(features, key=lambda f: -float(ranges[f]["pd_range"].sel(output=output)))
        header = "| rank | feature | PD range | interval | beyond noise | heterogeneity index | interval |"
        rule = "|---|---|---|---|---|---|---|"
        if hstats is not None:
            header += " H² overall | interval |"
            rule += "---|---|"
        lines += ["", f"Response: {ctx.response(output)}.", "", header, rule]
        for rank, f in enumerate(order, 1):
            h = get_node(het, f).to_dataset()
            name = problem.display[f]
            noise = "–" if f not in flat else "no" if bool(flat[f].sel(output=output)) else "yes"
            row = (f"| {rank} | {md(name)} | {num(ranges[f]['pd_range'].sel(output=output), scale)} | "
                   f"{cells.cell(ranges[f], 'pd_range', output, scale, what=f'PD range of {name}')} | {noise} | "
                   f"{num(h['heterogeneity_index'].sel(output=output), scale ** 2)} | "
                   f"{cells.cell(h, 'heterogeneity_index', output, scale ** 2, what=f'ICE heterogeneity of {name}')} |")
            if hstats is not None:
                hs = get_node(hstats, f).to_dataset()
                row += (f" {num(hs['h2_overall'].sel(output=output))} | "
                        f"{cells.cell(hs, 'h2_overall', output, what=f'H² overall of {name}')} |")
            lines.append(row)
        lines += cells.notes()
    lines += _importance_section(ctx, result)
    if contrasts:
        lines += _contrast_section(ctx, contrasts)
    if pairs:
        lines += _pair_section(ctx, pairs, hstats)
    if hstats is not None:
        lines += ["", "H² is biased upwards (noise adds to it), so an interval away from 0 is not evidence of an "
                  "interaction; test one pair with `pdpboot.h_statistic_test` in Python."]
    return lines


def _contrast_section(ctx: SummaryContext, contrasts: dict) -> list[str]:
    problem, config, scale, cells = ctx.problem, ctx.config, ctx.scale, ctx.cells
    output = problem.outputs_first[0]
    lines = ["", "## Differences between levels", "",
             f"PD at each level minus the PD at the feature's first level, with {config.confidence_level:.0%} "
             f"bootstrap {report.interval_method('contrast', config)} intervals (pointwise: each row on its "
             f"own). Response: {ctx.response(output)}.", "",
             "| feature | contrast | difference | interval |", "|---|---|---|---|"]
    X = ctx.outcome.X_train
    for f, ds in contrasts.items():
        ref = ds.attrs["reference"]
        counts = {str(k): int(v) for k, v in X[f].value_counts().items()} if f in X else {}
        name = problem.display[f]
        for lev in ds["level"].values:
            one = ds.sel(level=lev)
            what = f"{name}: {lev} − {ref}"
            lines.append(f"| {md(name)} | {md(lev)} − {md(ref)} | {num(one['contrast'].sel(output=output), scale)} | "
                         f"{cells.cell(one, 'contrast', output, scale, what=what, signed=True)}"
                         f"{cells.few_rows(counts, [str(ref), str(lev)], name)} |")
        if len(ds["level"]) == report.MAX_CONTRASTS:
            lines.append(f"| {md(name)} | (more levels in results.nc) | | |")
    return lines + cells.notes()


def _pair_section(ctx: SummaryContext, pairs: dict, hstats) -> list[str]:
    problem, cells = ctx.problem, ctx.cells
    lines = ["", "## 2-D surfaces", "",
             "Range of the PD surface, mean width of its band, and Greenwell's PD-variance interaction "
             "index (0 = the surface is additive on the grid)" + (", Friedman's H² (share of the pair's "
                                                                  "PD variance due to the interaction)"
                                                                  if hstats is not None else "") + ".", ""]
    output = problem.outputs_first[0]
    header = "| pair | surface range | mean band width | PD-variance interaction | interval |"
    rule = "|---|---|---|---|---|"
    if hstats is not None:
        header += " H² | interval |"
        rule += "---|---|"
    lines += [header, rule]
    for (a, b), ds in pairs.items():
        name = f"{problem.display[a]} x {problem.display[b]}"
        row = (f"| {md(name)} | {num(ds['range'].sel(output=output))} |"
               f" {num(ds['width'].sel(output=output))} | {num(ds['pdvi'].sel(output=output))} | "
               f"{cells.cell(ds, 'pdvi', output, what=f'PD-variance interaction of {name}')} |")
        if hstats is not None:
            hs = get_node(hstats, (a, b)).to_dataset()
            row += f" {num(hs['h2'].sel(output=output))} | {cells.cell(hs, 'h2', output, what=f'H² of {name}')} |"
        lines.append(row)
    if problem.task == "classification":
        lines += ["", f"(Response: {ctx.response(output)}.)"]
    return lines + cells.notes()


# ----------------------------------------------------------------------------- plots


def plots(tree, problem, config, outputs, shown, taken) -> list:
    """PD/ICE figure per feature, contour figure per pair, an overview per output, H² (``--interactions``),
    a target plot per feature (PD, observed outcome and rows per bin) and the PD-based importance."""
    jobs = feature_jobs(tree, problem, config, outputs, shown, taken, variable="pd", pairs=list(problem.pairs))
    jobs += target_jobs(tree, problem, config, outputs, shown, taken)
    table = importance_table(tree, config)
    if table is not None:
        jobs.append(importance_job(table, problem, outputs))
    if config.interactions > 0 and "h2_overall" in next(iter(tree.children.values())).ds:
        jobs.append(interaction_job(tree, problem, outputs[0]))
    return jobs


def _importance_sheet(tree, problem, config):
    table = importance_table(tree, config)
    if table is None:
        return None
    return table.assign(feature=table["feature"].map(lambda f: problem.display.get(f, f)))


REPORT = EffectReport(
    name="pd", label="PD", file="results.nc", variable="pd",
    describe="everything computed for PD (PD, resamples, bands, ICE, heterogeneity statistics); open with "
             "`pdpboot.load(\"results.nc\")`.",
    feature_sets=feature_sets,
    compute={"bootstrap": _bootstrap, "none": _one_fit},
    summary=summary, plots=plots,
    sheet_prefixes=("PD ", "PD2 "), sheet_variables=("pd", "ice_sd"),
    tidy=_drop_pair_ice_resamples,
    table_sheets=("PD importance",),
    tables=lambda tree, problem, config: [_importance_sheet(tree, problem, config)],
)
