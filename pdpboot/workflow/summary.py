"""``summary.md``: metrics, features ranked with intervals and a noise reference, contrasts, files, notes.

Only reads the result (and the extra statistics of :mod:`~pdpboot.workflow.effects`); never refits.
"""

from __future__ import annotations

import xarray as xr

from ..heterogeneity import ice_heterogeneity
from ..interaction import h_statistic, pd_variance_statistic
from ..schema import get_node, node_name
from . import effects, forest_ij
from .report import panel_outputs
from .text import file_sections, md, num


def _pair_table(result, problem, config) -> dict[tuple, xr.Dataset]:
    if not problem.pairs:
        return {}
    nodes = {}
    for a, b in problem.pairs:
        node = get_node(result, (a, b))
        ds = node.to_dataset()
        categorical = tuple(bool(c) for c in node.attrs["categorical"])
        nodes[node_name([a, b])] = xr.Dataset(
            {"pdvi": pd_variance_statistic(ds["pd"], categorical),
             "pdvi_resamples": pd_variance_statistic(ds["pd_resamples"], categorical)},
            attrs=node.attrs)
    banded = effects.band_tree(result, nodes, config, "pdvi")
    out = {}
    for a, b in problem.pairs:
        ds = get_node(result, (a, b)).to_dataset()
        extra = banded[node_name([a, b])].to_dataset()
        width = (ds["pd_band"].sel(ci_bound="upper") - ds["pd_band"].sel(ci_bound="lower")).mean([a, b])
        out[(a, b)] = xr.Dataset({"range": ds["pd"].max([a, b]) - ds["pd"].min([a, b]), "width": width,
                                  "pdvi": extra["pdvi"], "pdvi_band": extra["pdvi_band"]})
    return out


def _outside(ranges, het, pairs, hstats) -> bool:
    """Whether any reported estimate lies outside its own interval."""
    checks = [(ds, "pd_range") for ds in ranges.values()]
    checks += [(child.to_dataset(), "heterogeneity_index") for child in het.children.values()]
    checks += [(ds, "pdvi") for ds in pairs.values()]
    if hstats is not None:
        checks += [(child.to_dataset(), v) for child in hstats.children.values() for v in ("h2", "h2_overall")
                   if f"{v}_band" in child.ds]
    for ds, var in checks:
        band = ds[f"{var}_band"]
        if bool(((ds[var] < band.sel(ci_bound="lower")) | (ds[var] > band.sel(ci_bound="upper"))).any()):
            return True
    return False


_METHOD_TEXT = {"percentile": "percentiles of the refits", "bc": "bias-corrected percentiles",
                "bca": "bias-corrected and accelerated percentiles", "basic": "reflected percentiles",
                "normal": "estimate ± z × bootstrap SE"}


def _interval(ds: xr.Dataset, var: str, output, scale: float | None = None) -> str:
    band = ds[f"{var}_band"].sel(output=output)
    return f"[{num(band.sel(ci_bound='lower'), scale)}, {num(band.sel(ci_bound='upper'), scale)}]"


# ----------------------------------------------------------------------------- summary.md


def _ale_section(ale, ale_pairs, problem, config, scale) -> list[str]:
    """Features ranked by the range of their ALE curve (with intervals and the flat-line check), 2-D ALE."""
    level = f"{config.confidence_level:.0%}"
    features = list(problem.pd_features)
    method = effects.interval_method("ale_range", config)
    ranges = effects.ranges(ale, features, config, "ale")
    flat = effects.flat_within_noise(ale, features, config, "ale")
    lines = ["", "## Features ranked by the range of their ALE curve", "",
             "Accumulated local effects (Apley & Zhu) add up the model's prediction differences across small "
             "bins of the feature, each averaged over the rows inside the bin only, so unlike PD they never "
             "evaluate the model at combinations of correlated features that do not occur. ALE range = max - "
             f"min of the centred ALE curve over the bin edges (or levels). Interval: {level} bootstrap {method} "
             f"interval ({_METHOD_TEXT.get(method, method)}); *beyond noise* as for PD, from the ALE's "
             "simultaneous band. Where PD and ALE rank features differently, correlated features are the usual "
             "reason: trust ALE there."]
    if features and not flat:
        lines += ["", f"(*beyond noise* needs more resamples for a {level} simultaneous band.)"]
    for output in (panel_outputs(problem) if problem.task == "classification" else problem.outputs_first
                   ) if features else []:
        order = sorted(features, key=lambda f: -float(ranges[f]["ale_range"].sel(output=output)))
        lines += ["", f"Response: {_response(problem, output)}.", "",
                  "| rank | feature | ALE range | interval | beyond noise | bins or levels |",
                  "|---|---|---|---|---|---|"]
        for rank, f in enumerate(order, 1):
            node = get_node(ale, f)
            kind = (node.attrs.get("ale_kind") or ["numeric"])[0]
            size = node.sizes[f] - 1 if kind == "numeric" else node.sizes[f]
            noise = "–" if f not in flat else "no" if bool(flat[f].sel(output=output)) else "yes"
            value = num(ranges[f]["ale_range"].sel(output=output), scale)
            lines.append(f"| {rank} | {md(problem.display[f])} | {value}"
                         f" | {_interval(ranges[f], 'ale_range', output, scale)} | {noise} | {size} "
                         f"{'bins' if kind == 'numeric' else 'levels'} |")
    if ale_pairs:
        output = problem.outputs_first[0]
        lines += ["", "2-D ALE (the pure interaction of a pair, its 1-D effects removed; 0 = no interaction): "
                  "range of the surface and mean width of its band"
                  + (f" (response: {_response(problem, output)})" if problem.task == "classification" else "")
                  + ".", "", "| pair | 2-D ALE range | mean band width |", "|---|---|---|"]
        for a, b in ale_pairs:
            ds = get_node(ale, (a, b)).to_dataset()
            surface = ds["ale"].sel(output=output)
            band = ds["ale_band"].sel(output=output)
            width = (band.sel(ci_bound="upper") - band.sel(ci_bound="lower")).mean([a, b])
            lines.append(f"| {md(problem.display[a])} x {md(problem.display[b])} | "
                         f"{num(surface.max() - surface.min(), scale)} | {num(width, scale)} |")
    return lines


def _response(problem, output) -> str:
    if problem.task == "classification":
        return f"P(class = {md(output)})"
    return f"predicted {md(problem.y.name)}"


def summary_markdown(*, result, problem, config, outcome, files, failures, data_name, table_shape,
                     sheets, seconds) -> str:
    """The text of ``summary.md``."""
    if result is not None and forest_ij.is_ij(result):  # one-fit bands: no resamples, none of their statistics
        return forest_ij.summary_markdown(
            result=result, problem=problem, config=config, outcome=outcome, files=files, failures=failures,
            data_name=data_name, table_shape=table_shape, sheets=sheets, seconds=seconds, response=_response,
            outputs=panel_outputs(problem) if problem.task == "classification" else problem.outputs_first)
    level = f"{config.confidence_level:.0%}"
    band = f"{level} {config.band} {'simultaneous' if config.simultaneous else 'pointwise'}"
    has_pd = result is not None
    pd_features = problem.pd_features if has_pd else []
    ranges = effects.ranges(result, pd_features, config)
    flat = effects.flat_within_noise(result, pd_features, config)
    levelled = [f for f in pd_features if f in problem.categorical or f in problem.points]
    contrasts = effects.contrasts(result, levelled, config)
    het = ice_heterogeneity(result, pd_features, confidence_level=config.confidence_level,
                            method=effects.interval_method("heterogeneity_index", config)) \
        if pd_features else xr.DataTree()
    hstats = h_statistic(result, confidence_level=config.confidence_level,
                         method=effects.interval_method("h2", config)) if config.interactions > 0 and has_pd else None
    pairs = _pair_table(result, problem, config) if has_pd else {}
    scale = effects.response_scale(problem.y) if problem.task == "regression" else 1.0
    range_method = effects.interval_method("pd_range", config)
    n_train = len(outcome.X_train)
    n_used = len(problem.X)
    lines = [f"# pdpboot run: {md(problem.y.name)}", ""]
    if problem.task == "classification":
        classes = ", ".join(md(c) + (" (positive)" if c == problem.positive and len(problem.classes) == 2 else "")
                            for c in problem.outputs_first)
        task = f"classification of `{md(problem.y.name)}`; classes {classes}; PD = predicted class probability"
    else:
        task = f"regression of `{md(problem.y.name)}`; PD in the units of the target"
    model = type(outcome.estimator).__name__
    if hasattr(outcome.estimator, "steps"):
        model = f"Pipeline (encoding, then {type(outcome.estimator.steps[-1][1]).__name__})"
    source = (f"`--model-spec {md(config.model_spec)}`" if config.model_spec else
              f"`--model-file {md(config.model_file)}`" if config.model_file else f"`--model {config.model}`")
    lines += [
        "| | |", "|---|---|",
        f"| Data | {md(data_name)}: {table_shape[0]} rows x {table_shape[1]} columns; {n_used} rows used, "
        f"{n_train} for training, {n_used - n_train} for testing |",
        f"| Task | {task} |",
        f"| Model | {md(model)} ({source}), {len(problem.features)} features; fitted model in `model.joblib` |",
        f"| Bootstrap | B = {config.n_resamples} refits on resamples of the training rows "
        f"({(result if has_pd else outcome.ale).attrs.get('resampling')}); each "
        f"{' and '.join(e for e, on in (('PD', has_pd), ('ALE', outcome.ale is not None)) if on)} averaged over "
        "its resample's rows |",
        f"| Bands | {band} |",
        f"| Seed | `--random-state {config.random_state}` (same seed and data: same numbers) |",
        f"| Run time | fit {seconds.get('fit', 0):.1f} s"
        + (f", bootstrap {seconds['bootstrap']:.1f} s" if "bootstrap" in seconds else "")
        + (f", ALE bootstrap {seconds['bootstrap_ale']:.1f} s" if "bootstrap_ale" in seconds else "") + " |",
        "",
        "## Test metrics", "", "| metric | value | meaning |", "|---|---|---|",
    ]
    lines += [f"| {md(m)} | {num(v)} | {md(d, limit=2000)} |" for m, v, d in outcome.metrics]
    lines += (["", "## Features ranked by the range of their PD curve", "",
              "PD range = max - min of the partial dependence over the feature's grid: how far the average "
              f"prediction moves with the feature. Interval: {level} bootstrap {range_method} interval "
              f"({_METHOD_TEXT.get(range_method, range_method)}). "
              "A range is positive even for a feature without effect (noise wiggles every refitted curve), so "
              "its interval never contains 0; the column *beyond noise* answers that question instead: *no* "
              f"when the {level} simultaneous band of the mean-centred PD contains a flat line (0) at every grid "
              "value, i.e. the curve's shape is within what refitting on resamples produces. "
              "Heterogeneity index = mean squared distance between the mean-centred ICE curves and the "
              "mean-centred PD (squared response units; 0 when every row's curve is parallel to the PD, i.e. "
              "no interaction of the feature with the others). Values below 1e-9 of the response's scale are "
              "round-off and shown as 0."] if has_pd else [])
    if pd_features and not flat:
        lines += ["", f"(*beyond noise* needs more resamples for a {level} simultaneous band: rerun with "
                  "`--n-resamples 100` or more.)"]
    for output in (panel_outputs(problem) if problem.task == "classification" else problem.outputs_first
                   ) if pd_features else []:
        order = sorted(pd_features, key=lambda f: -float(ranges[f]["pd_range"].sel(output=output)))
        header = "| rank | feature | PD range | interval | beyond noise | heterogeneity index | interval |"
        rule = "|---|---|---|---|---|---|---|"
        if hstats is not None:
            header += " H² overall | interval |"
            rule += "---|---|"
        lines += ["", f"Response: {_response(problem, output)}.", "", header, rule]
        for rank, f in enumerate(order, 1):
            h = het[node_name([f])].to_dataset()
            noise = "–" if f not in flat else "no" if bool(flat[f].sel(output=output)) else "yes"
            row = (f"| {rank} | {md(problem.display[f])} | {num(ranges[f]['pd_range'].sel(output=output), scale)} | "
                   f"{_interval(ranges[f], 'pd_range', output, scale)} | {noise} | "
                   f"{num(h['heterogeneity_index'].sel(output=output), scale ** 2)} | "
                   f"{_interval(h, 'heterogeneity_index', output, scale ** 2)} |")
            if hstats is not None:
                hs = hstats[node_name([f])].to_dataset()
                row += f" {num(hs['h2_overall'].sel(output=output))} | {_interval(hs, 'h2_overall', output)} |"
            lines.append(row)
    if contrasts:
        output = problem.outputs_first[0]
        lines += ["", "## Differences between levels", "",
                  f"PD at each level minus the PD at the feature's first level, with {level} bootstrap "
                  f"{effects.interval_method('contrast', config)} intervals (pointwise: each row on its own). "
                  f"Response: {_response(problem, output)}.", "",
                  "| feature | contrast | difference | interval |", "|---|---|---|---|"]
        for f, ds in contrasts.items():
            ref = ds.attrs["reference"]
            for lev in ds["level"].values:
                one = ds.sel(level=lev)
                lines.append(f"| {md(problem.display[f])} | {md(lev)} − {md(ref)} | "
                             f"{num(one['contrast'].sel(output=output), scale)} | "
                             f"{_interval(one, 'contrast', output, scale)} |")
            if len(ds["level"]) == effects.MAX_CONTRASTS:
                lines.append(f"| {md(problem.display[f])} | (more levels in results.nc) | | |")
    if pairs:
        lines += ["", "## 2-D surfaces", "",
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
            row = (f"| {md(problem.display[a])} x {md(problem.display[b])} | {num(ds['range'].sel(output=output))} |"
                   f" {num(ds['width'].sel(output=output))} | {num(ds['pdvi'].sel(output=output))} | "
                   f"{_interval(ds, 'pdvi', output)} |")
            if hstats is not None:
                hs = hstats[node_name([a, b])].to_dataset()
                row += f" {num(hs['h2'].sel(output=output))} | {_interval(hs, 'h2', output)} |"
            lines.append(row)
        if problem.task == "classification":
            lines += ["", f"(Response: {_response(problem, output)}.)"]
    if hstats is not None:
        lines += ["", "H² is biased upwards (noise adds to it), so an interval away from 0 is not evidence of an "
                  "interaction; test one pair with `pdpboot.h_statistic_test` in Python."]
    if outcome.ale is not None:
        lines += _ale_section(outcome.ale, outcome.ale_pairs, problem, config, scale)
    if _outside(ranges, het, pairs, hstats):
        lines += ["", "Where an estimate lies outside its interval, the resampled values are biased: noise in a "
                  "refitted model inflates the range of its curve and the spread of its ICE curves, so such a "
                  "statistic's resampled values sit above the estimate. Read those intervals as rough upper "
                  "ranges; reflected (`basic`) intervals are not a fix for these non-negative statistics (they "
                  "can fall below 0)."]
    result_lines = [
        *(["- `results.nc`: everything computed for PD (PD, resamples, bands, ICE, heterogeneity "
           "statistics); open with `pdpboot.load(\"results.nc\")`."] if has_pd else []),
        *(["- `ale.nc`: accumulated local effects (ALE, resamples, bands; node attrs `bin_counts`, "
           "`ale_kind`); open with `pdpboot.load(\"ale.nc\")`."] if outcome.ale is not None else [])]
    lines += file_sections(result_lines, "- `repro.py`: `python repro.py` recomputes the result files from "
                           "`repro_inputs/` and checks they reproduce (identical, or equal within 1e-12 of each "
                           "statistic's scale).",
                           sheets=sheets, files=files, notes=outcome.notes, failures=failures)
    lines += ["", "## Precision", "",
              f"The bands come from B = {config.n_resamples} refits. Their bounds are themselves estimated: "
              "for final figures rerun with more resamples, e.g. `--n-resamples 500` (run time grows in "
              "proportion; `--n-jobs` sets how many cores work on it).", ""]
    return "\n".join(lines)
