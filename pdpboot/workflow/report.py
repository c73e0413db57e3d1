"""Plots (``plots/*.png``) and ``summary.md`` of a run.  Only reads the result; never refits."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xarray as xr

from ..bands import confidence_bands
from ..heterogeneity import ice_heterogeneity
from ..interaction import h_statistic, pd_variance_statistic
from ..schema import get_node, node_name

_DPI = 110


# ----------------------------------------------------------------------------- names


def safe_filename(label: str, taken: set[str], *, limit: int = 60) -> str:
    """A file-name stem from a feature name: ASCII letters, digits, ``_`` and ``-`` only, unique."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", label).strip("_-")[:limit] or "feature"
    name, k = stem, 2
    while name.lower() in taken:
        name, k = f"{stem}-{k}", k + 1
    taken.add(name.lower())
    return name


def md(text) -> str:
    """Escape a name for a Markdown table cell (data, never markup)."""
    text = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    text = text.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("_", "\\_")
    return re.sub(r"[\r\n\t]+", " ", text)


def _num(value) -> str:
    value = float(value)
    if np.isnan(value):
        return "–"
    return f"{value:.4g}"


# ----------------------------------------------------------------------------- plots


def _pyplot():
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:  # the command line: no display needed
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panel_outputs(problem) -> list:
    """Outputs that get their own panel: the only/positive one, or every class of a multiclass task."""
    if problem.task == "classification" and len(problem.classes) > 2:
        return list(problem.classes)
    return [problem.outputs_first[0]]


def _feature_figure(plt, result, feature, display, outputs, ice_samples):
    n = len(outputs)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 3.6 * rows), squeeze=False, layout="constrained")
    for ax, output in zip(axes.ravel(), outputs):
        from ..plotting import plot_pd

        plot_pd(result, feature, ax=ax, ice=ice_samples > 0, output=output)
        ax.set_xlabel(display)
        if n > 1:
            ax.set_title(f"class {output}")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig


def _pair_figure(plt, result, pair, display, outputs):
    from ..plotting import plot_pd_contour

    fig, axes = plt.subplots(len(outputs), 2, figsize=(10, 3.8 * len(outputs)), squeeze=False,
                             layout="constrained")
    for row, output in zip(axes, outputs):
        plot_pd_contour(result, pair, ax=row[0], what="estimate", output=output)
        plot_pd_contour(result, pair, ax=row[1], what="width", output=output)
        for ax, title in zip(row, ("PD estimate", "width of the band")):
            ax.set_xlabel(display[0])
            ax.set_ylabel(display[1])
            ax.set_title(title + (f", class {output}" if len(outputs) > 1 else ""))
    return fig


def draw_plots(folder: Path, result: xr.DataTree, problem, config: dict,
               say: Callable[[str], None]) -> tuple[list[tuple[str, str]], list[str]]:
    """One PNG per feature (ICE under PD under band), per pair (contour + band width), an overview.

    Returns
    -------
    files : list of (relative path, what it shows)
    failures : list of str
        Figures that could not be drawn (logged; the run goes on).
    """
    import matplotlib

    plt = _pyplot()
    from ..plotting import plot_h_statistic, plot_pd_panels

    folder.mkdir()
    taken: set[str] = set()
    files, failures = [], []
    outputs = _panel_outputs(problem)
    jobs = []
    for f in problem.pd_features:
        stem = "pd_" + safe_filename(problem.display[f], taken)
        jobs.append((stem, f"PD, band and ICE of {problem.display[f]!r}",
                     lambda f=f: _feature_figure(plt, result, f, problem.display[f], outputs, config.ice_samples)))
    for a, b in problem.pairs:
        stem = "pd2_" + safe_filename(f"{problem.display[a]}__{problem.display[b]}", taken)
        jobs.append((stem, f"2-D PD surface and band width of {problem.display[a]!r} x {problem.display[b]!r}",
                     lambda a=a, b=b: _pair_figure(plt, result, (a, b), (problem.display[a], problem.display[b]),
                                                   outputs)))
    for output in outputs:
        stem = "overview" if len(outputs) == 1 else "overview_" + safe_filename(f"class_{output}", taken)
        jobs.append((stem, "all PD curves and surfaces in one panel" + (f" (class {output})" if len(outputs) > 1
                                                                         else ""),
                     lambda output=output: _overview(result, output, problem.display, plot_pd_panels)))
    if config.interactions > 0:
        jobs.append(("interactions", "H-squared interaction statistics with intervals",
                     lambda: _interaction_figure(plt, result, problem, outputs[0], plot_h_statistic)))
    with matplotlib.rc_context({"text.parse_math": False}):
        for k, (stem, what, make) in enumerate(jobs, 1):
            say(f"Plot {k}/{len(jobs)}: plots/{stem}.png")
            fig = None
            try:
                fig = make()
                fig.savefig(folder / f"{stem}.png", dpi=_DPI)
                files.append((f"plots/{stem}.png", what))
            except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the run
                failures.append(f"plots/{stem}.png could not be drawn: {type(exc).__name__}: {exc}")
            finally:
                if fig is not None:
                    plt.close(fig)
    return files, failures


def _overview(result, output, display: dict, plot_pd_panels):
    fig, axes = plot_pd_panels(result, output=output)
    for ax in axes.ravel():  # axis labels: the original column names
        ax.set_xlabel(display.get(ax.get_xlabel(), ax.get_xlabel()))
        ax.set_ylabel(display.get(ax.get_ylabel(), ax.get_ylabel()))
    return fig


def _interaction_figure(plt, result, problem, output, plot_h_statistic):
    stats = [s for s, has in (("h2_overall", problem.pd_features), ("h2", problem.pairs)) if has]
    fig, axes = plt.subplots(1, len(stats), figsize=(5 * len(stats), 0.5 + 0.4 * max(
        len(problem.pd_features), len(problem.pairs), 3)), squeeze=False, layout="constrained")
    for ax, stat in zip(axes.ravel(), stats):
        plot_h_statistic(result, stat=stat, ax=ax, output=output)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        ax.set_yticks(ax.get_yticks(), [" × ".join(problem.display.get(p, p) for p in label.split(" × "))
                                        for label in labels])
    return fig


# ----------------------------------------------------------------------------- statistics for the summary


def _band_tree(result: xr.DataTree, per_node: dict[str, xr.Dataset], config: dict) -> xr.DataTree:
    tree = xr.DataTree(children={name: xr.DataTree(ds) for name, ds in per_node.items()})
    tree.attrs = dict(result.attrs)
    return confidence_bands(tree, confidence_level=config.confidence_level, method=config.band)


def _range_table(result, problem, config) -> dict[str, xr.Dataset]:
    nodes = {}
    for f in problem.pd_features:
        ds = get_node(result, f).to_dataset()
        est = ds["pd"].max(f) - ds["pd"].min(f)
        res = ds["pd_resamples"].max(f) - ds["pd_resamples"].min(f)
        nodes[node_name([f])] = xr.Dataset({"pd_range": est, "pd_range_resamples": res},
                                           attrs=get_node(result, f).attrs)
    if not nodes:
        return {}
    banded = _band_tree(result, nodes, config)
    return {f: banded[node_name([f])].to_dataset() for f in problem.pd_features}


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
    banded = _band_tree(result, nodes, config)
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


def _interval(ds: xr.Dataset, var: str, output) -> str:
    band = ds[f"{var}_band"].sel(output=output)
    return f"[{_num(band.sel(ci_bound='lower'))}, {_num(band.sel(ci_bound='upper'))}]"


# ----------------------------------------------------------------------------- summary.md


def _response(problem, output) -> str:
    if problem.task == "classification":
        return f"P(class = {md(output)})"
    return f"predicted {md(problem.y.name)}"


def _workbook_line(sheets) -> str:
    if sheets is None:
        import importlib.util

        if importlib.util.find_spec("openpyxl") is None:
            return ('- no workbook: it needs openpyxl, which is not installed (`pip install "pdpboot[excel]"`).')
        return "- no workbook (`--no-workbook`)."
    names = ["Data", "TestPredictions", "Parameters", "Metrics", *[md(title) for title, _ in sheets]]
    return (f"- `workbook.xlsx`: sheets {', '.join(names)}. Column `row` of Data and TestPredictions and the "
            "`ice row N` columns number the rows of the input table from 0.")


def summary_markdown(*, result, problem, config, outcome, files, failures, data_name, table_shape,
                     sheets, seconds) -> str:
    """The text of ``summary.md``."""
    level = f"{config.confidence_level:.0%}"
    band = f"{level} {config.band} {'simultaneous' if config.simultaneous else 'pointwise'}"
    ranges = _range_table(result, problem, config)
    het = ice_heterogeneity(result, problem.pd_features, confidence_level=config.confidence_level,
                            method=config.band) if problem.pd_features else xr.DataTree()
    hstats = h_statistic(result, confidence_level=config.confidence_level, method=config.band) \
        if config.interactions > 0 else None
    pairs = _pair_table(result, problem, config)
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
    lines += [
        "| | |", "|---|---|",
        f"| Data | {md(data_name)}: {table_shape[0]} rows x {table_shape[1]} columns; {n_used} rows used, "
        f"{n_train} for training, {n_used - n_train} for testing |",
        f"| Task | {task} |",
        f"| Model | {md(model)} (`--model {config.model}`), {len(problem.features)} features |",
        f"| Bootstrap | B = {config.n_resamples} refits on resamples of the training rows "
        f"({result.attrs.get('resampling')}); each PD averaged over its resample's rows |",
        f"| Bands | {band} |",
        f"| Seed | `--random-state {config.random_state}` (same seed and data: same numbers) |",
        f"| Run time | fit {seconds.get('fit', 0):.1f} s, bootstrap {seconds.get('bootstrap', 0):.1f} s |",
        "",
        "## Test metrics", "", "| metric | value | meaning |", "|---|---|---|",
    ]
    lines += [f"| {md(m)} | {_num(v)} | {md(d)} |" for m, v, d in outcome.metrics]
    lines += ["", "## Features ranked by the range of their PD curve", "",
              "PD range = max - min of the partial dependence over the feature's grid: how far the average "
              f"prediction moves with the feature. Interval: {level} bootstrap {config.band} interval. "
              "Heterogeneity index = mean squared distance between the mean-centred ICE curves and the "
              "mean-centred PD (squared response units; 0 when every row's curve is parallel to the PD, i.e. "
              "no interaction of the feature with the others)."]
    for output in (_panel_outputs(problem) if problem.task == "classification" else problem.outputs_first
                   ) if problem.pd_features else []:
        order = sorted(problem.pd_features, key=lambda f: -float(ranges[f]["pd_range"].sel(output=output)))
        header = "| rank | feature | PD range | interval | heterogeneity index | interval |"
        rule = "|---|---|---|---|---|---|"
        if hstats is not None:
            header += " H² overall | interval |"
            rule += "---|---|"
        lines += ["", f"Response: {_response(problem, output)}.", "", header, rule]
        for rank, f in enumerate(order, 1):
            h = het[node_name([f])].to_dataset()
            row = (f"| {rank} | {md(problem.display[f])} | {_num(ranges[f]['pd_range'].sel(output=output))} | "
                   f"{_interval(ranges[f], 'pd_range', output)} | "
                   f"{_num(h['heterogeneity_index'].sel(output=output))} | "
                   f"{_interval(h, 'heterogeneity_index', output)} |")
            if hstats is not None:
                hs = hstats[node_name([f])].to_dataset()
                row += f" {_num(hs['h2_overall'].sel(output=output))} | {_interval(hs, 'h2_overall', output)} |"
            lines.append(row)
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
            row = (f"| {md(problem.display[a])} x {md(problem.display[b])} | {_num(ds['range'].sel(output=output))} |"
                   f" {_num(ds['width'].sel(output=output))} | {_num(ds['pdvi'].sel(output=output))} | "
                   f"{_interval(ds, 'pdvi', output)} |")
            if hstats is not None:
                hs = hstats[node_name([a, b])].to_dataset()
                row += f" {_num(hs['h2'].sel(output=output))} | {_interval(hs, 'h2', output)} |"
            lines.append(row)
        if problem.task == "classification":
            lines += ["", f"(Response: {_response(problem, output)}.)"]
    if hstats is not None:
        lines += ["", "H² is biased upwards (noise adds to it), so an interval away from 0 is not evidence of an "
                  "interaction; test one pair with `pdpboot.h_statistic_test` in Python."]
    if _outside(ranges, het, pairs, hstats):
        lines += ["", "Where an estimate lies outside its interval, the resampled values are biased: noise in a "
                  "refitted model inflates the range of its curve and the spread of its ICE curves. Read such "
                  "intervals as rough; `--band basic` corrects for this bias (its intervals are reflected "
                  "around the estimate)."]
    lines += ["", "## Files", "",
              "- `results.nc`: everything computed (PD, resamples, bands, ICE, heterogeneity statistics); "
              "open with `pdpboot.load(\"results.nc\")`.",
              _workbook_line(sheets),
              *[f"- `{path}`: {md(what)}" for path, what in files],
              "- `repro.py`: `python repro.py` recomputes `results.nc` from `repro_inputs/` and checks it is "
              "identical.",
              "- `run.log`: every step, with what was done to the data."]
    lines += ["", "## What was done to the data", ""]
    lines += [f"- {md(n)}" for n in outcome.notes] or ["- nothing: all columns numeric, no missing values."]
    if failures:
        lines += ["", "## Problems", ""] + [f"- {md(f)}" for f in failures]
    lines += ["", "## Precision", "",
              f"The bands come from B = {config.n_resamples} refits. Their bounds are themselves estimated: "
              "for final figures rerun with more resamples, e.g. `--n-resamples 500` (run time grows in "
              "proportion; `--n-jobs` sets how many cores work on it).", ""]
    return "\n".join(lines)
