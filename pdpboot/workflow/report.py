"""Plots (``plots/*`` in the run's ``--format``) of a run.  Only reads the result; never refits."""

from __future__ import annotations

import datetime
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .. import confidence_bands, get_node
from ..engine.intervals import POINTWISE_METHODS
from . import InputError
from .options import md, num, safe_filename

_DPI = 110


# ----------------------------------------------------------------------------- plots


def _pyplot():
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:  # the command line: no display needed
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def panel_outputs(problem) -> list:
    """Outputs that get their own panel: the only/positive one, or every class of a multiclass task."""
    if problem.task == "classification" and len(problem.classes) > 2:
        return list(problem.classes)
    return [problem.outputs_first[0]]


def axis_label(name: str, problem, config) -> str:
    """The label of a feature (by result name) or of the target: ``--labels`` name, ``--units`` unit."""
    original = problem.display.get(name, name)
    shown = config.labels.get(original, original)
    unit = config.units.get(original)
    return f"{shown} ({unit})" if unit else shown


def relabel(drawn: str, name: str, problem, config) -> str:
    """A feature's axis label (:func:`axis_label`), keeping the plot's note of a quantile-spaced axis."""
    from ..plotting import QUANTILE_NOTE

    note = f" {QUANTILE_NOTE}" if drawn.endswith(QUANTILE_NOTE) else ""
    return axis_label(name, problem, config) + note


def _response_label(ax, problem, config) -> None:
    """Rename the target in a y label (``--labels``) and add its unit (``--units``)."""
    target = str(problem.y.name)
    text = ax.get_ylabel()
    if problem.task == "regression" and target in text:
        unit = config.units.get(target)
        text = text.replace(target, config.labels.get(target, target) + (f" ({unit})" if unit else ""))
        ax.set_ylabel(text.replace(" (centred)", "\n(centred)"))


def _outside_legend(fig, ax, ncols: int = 2) -> None:
    """One legend for the figure, above the panels (never over a panel or its title)."""
    handles, labels = ax.get_legend_handles_labels()
    first = [i for i, label in enumerate(labels) if "estimate" in label]
    order = first + [i for i in range(len(labels)) if i not in first]
    if handles:
        fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside upper center",
                   ncols=min(len(handles), ncols), fontsize="small", frameon=False)


def _feature_figure(plt, result, feature, problem, config, outputs, variable="pd"):
    n = len(outputs)
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 3.4 * rows + 0.5), squeeze=False,
                             layout="constrained")
    from .. import get_node, plot_pd

    centred = config.centered == "yes" and variable == "pd" and "pd_centered" in get_node(result, feature).ds
    for ax, output in zip(axes.ravel(), outputs):
        plot_pd(result, feature, ax=ax, ice=config.ice_samples > 0 and variable == "pd", output=output, legend=False,
                centered=centred, variable=variable)
        ax.set_xlabel(relabel(ax.get_xlabel(), feature, problem, config))
        _response_label(ax, problem, config)
        if n > 1:
            ax.set_title(f"class {output}")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    _outside_legend(fig, axes.ravel()[0], ncols=2 if n == 1 else 4)
    return fig


def _pair_figure(plt, result, pair, problem, config, outputs, variable="pd"):
    from .. import get_node, plot_pd_contour

    banded = f"{variable}_band" in get_node(result, pair).ds  # --uncertainty none: the estimate only
    panels = ("estimate", "width") if banded else ("estimate",)
    fig, axes = plt.subplots(len(outputs), len(panels), figsize=(5 * len(panels), 3.8 * len(outputs)),
                             squeeze=False, layout="constrained")
    estimate = "PD estimate" if variable == "pd" else "2-D ALE estimate (pure interaction)"
    for row, output in zip(axes, outputs):
        for ax, what in zip(row, panels):
            plot_pd_contour(result, pair, ax=ax, what=what, output=output, variable=variable)
        for ax, title in zip(row, (estimate, "width of the band")):
            ax.set_xlabel(relabel(ax.get_xlabel(), pair[0], problem, config))
            ax.set_ylabel(relabel(ax.get_ylabel(), pair[1], problem, config))
            ax.set_title(title + (f", class {output}" if len(outputs) > 1 else ""))
    return fig


def top_features(result: xr.DataTree, problem, config, variable: str = "pd") -> list[str]:
    """The features that get plots: all, or the ``--top`` K with the largest PD (or ALE) range (first output)."""
    if not config.top or config.top >= len(problem.pd_features):
        return list(problem.pd_features)
    from .. import get_node

    output = panel_outputs(problem)[0]

    def spread(f):
        pd = get_node(result, f)[variable].sel(output=output)
        return float(pd.max() - pd.min())

    ranked = sorted(problem.pd_features, key=spread, reverse=True)[: config.top]
    return [f for f in problem.pd_features if f in ranked]


def feature_jobs(tree: xr.DataTree, problem, config, outputs, shown, taken, *, variable: str, pairs) -> list:
    """(stem, what, make) of an effect's figures: one per shown feature (``<variable>_<feature>``), one per
    pair (``<variable>2_<a>__<b>``) and an overview per output (``overview`` for PD, ``overview_<variable>``)."""
    plt = _pyplot()
    from .. import plot_pd_panels

    label = variable.upper()
    has_ice = variable == "pd" and config.ice_samples > 0
    jobs = []
    for f in shown:
        stem = f"{variable}_" + safe_filename(problem.display[f], taken)
        what = f"{label}, band and ICE of {problem.display[f]!r}" if has_ice else \
            f"{label} and its bands of {problem.display[f]!r}"
        jobs.append((stem, what, lambda f=f: _feature_figure(plt, tree, f, problem, config, outputs, variable)))
    for a, b in pairs:
        stem = f"{variable}2_" + safe_filename(f"{problem.display[a]}__{problem.display[b]}", taken)
        kind = "2-D PD surface" if variable == "pd" else f"2-D {label} (pure interaction)"
        jobs.append((stem, f"{kind} and band width of {problem.display[a]!r} x {problem.display[b]!r}",
                     lambda a=a, b=b: _pair_figure(plt, tree, (a, b), problem, config, outputs, variable)))
    base = "overview" if variable == "pd" else f"overview_{variable}"
    centred = config.centered != "no" and variable == "pd"
    for output in outputs:
        stem = safe_filename(base if len(outputs) == 1 else f"{base}_class_{output}", taken)
        what = (f"all {'centred ' if centred else ''}{label} curves and surfaces in one figure"
                + (f" (class {output})" if len(outputs) > 1 else ""))
        jobs.append((stem, what, lambda output=output: _overview(tree, output, problem, config, shown,
                                                                 plot_pd_panels, variable, pairs)))
    return jobs


def target_jobs(tree: xr.DataTree, problem, config, outputs, shown, taken) -> list:
    """(stem, what, make) of a target plot per shown feature (``target_<feature>``): the PD with its band,
    the observed outcome and the number of rows per grid bin (all rows of the table with a target)."""
    plt = _pyplot()
    what = "share of each class" if problem.task == "classification" else "mean outcome"
    return [(safe_filename(f"target_{problem.display[f]}", taken),
             f"PD with its band beside the observed {what} and the rows per grid bin of {problem.display[f]!r}",
             lambda f=f: _target_figure(plt, tree, f, problem, config, outputs)) for f in shown]


def _target_figure(plt, result, feature, problem, config, outputs):
    from .. import plot_target

    n = len(outputs)
    cols = min(n, 3)
    blocks = -(-n // cols)
    fig = plt.figure(figsize=(4.8 * cols, 4.4 * blocks + 0.4), layout="constrained")
    grid = fig.add_gridspec(2 * blocks, cols, height_ratios=[3, 1] * blocks)
    for k, output in enumerate(outputs):
        r, c = divmod(k, cols)
        top = fig.add_subplot(grid[2 * r, c])
        bottom = fig.add_subplot(grid[2 * r + 1, c], sharex=top)
        plot_target(result, problem.X, problem.y, feature, ax=(top, bottom), output=output, legend=k == 0)
        bottom.set_xlabel(relabel(bottom.get_xlabel(), feature, problem, config))
        _response_label(top, problem, config)
        if n > 1:
            top.set_title(f"class {output}")
    if n > 1 and fig.axes[0].get_legend() is not None:  # one legend above all panels
        fig.axes[0].get_legend().remove()
        for line in fig.axes[0].lines:
            if line.get_label().startswith("observed share of class"):
                line.set_label("observed share of the panel's class per bin")
        _outside_legend(fig, fig.axes[0], ncols=3)
    return fig


def importance_job(table, problem, outputs) -> tuple:
    """(stem, what, make) of the PD-based importance figure (``importance``)."""
    from .. import plot_importance

    def make():
        plt = _pyplot()
        n = len(outputs)
        height = 1.7 + 0.38 * max(table["feature"].nunique(), 3)
        cols = min(n, 3)
        fig, axes = plt.subplots(-(-n // cols), cols, figsize=(5 * cols, height * -(-n // cols)), squeeze=False,
                                 layout="constrained")
        shown = table.assign(feature=table["feature"].map(lambda f: problem.display.get(f, f)))
        for ax, output in zip(axes.ravel(), outputs):
            plot_importance(shown, output=output, ax=ax, legend=n == 1)
            if n > 1:
                ax.set_title(f"class {output}")
                ax.set_xlabel("PD-based importance\n(SD of the PD curve; range / 4 for levels)")
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        if n > 1:
            _outside_legend(fig, axes.ravel()[0])
        return fig

    return ("importance", "PD-based feature importance (SD of each PD curve) with intervals", make)


def interaction_job(tree: xr.DataTree, problem, output) -> tuple:
    """(stem, what, make) of the H² figure (``--interactions``)."""
    from .. import plot_h_statistic

    return ("interactions", "H-squared interaction statistics with intervals",
            lambda: _interaction_figure(_pyplot(), tree, problem, output, plot_h_statistic))


def draw_plots(folder: Path, effect, tree: xr.DataTree, problem, config, say: Callable[[str], None]
               ) -> tuple[list[tuple[str, str]], list[str]]:
    """Draw the figures of one effect (its ``EffectReport.plots``) into ``folder`` in ``config.format``."""
    import matplotlib

    plt = _pyplot()
    from ..plotting import tidy_ticks

    folder.mkdir(exist_ok=True)
    files, failures = [], []
    outputs = panel_outputs(problem)
    shown = top_features(tree, problem, config, effect.variable)
    jobs = effect.plots(tree, problem, config, outputs, shown, set())
    suffix = config.format
    with matplotlib.rc_context({"text.parse_math": False, "svg.fonttype": "none", "pdf.fonttype": 42}):
        for k, (stem, what, make) in enumerate(jobs, 1):
            say(f"Plot {k}/{len(jobs)} ({effect.label}): plots/{stem}.{suffix}")
            fig = None
            try:
                fig = make()
                tidy_ticks(fig)
                fig.savefig(folder / f"{stem}.{suffix}", **({"dpi": _DPI} if suffix == "png" else {}))
                files.append((f"plots/{stem}.{suffix}", what))
            except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the run
                failures.append(f"plots/{stem}.{suffix} could not be drawn: {type(exc).__name__}: {exc}")
            finally:
                if fig is not None:
                    plt.close(fig)
    return files, failures


def _overview(result, output, problem, config, shown, plot_pd_panels, variable, pairs):
    centred = config.centered != "no" and variable == "pd" and "pd_centered" in next(iter(result.children.values())).ds
    sets = [*shown, *[tuple(p) for p in pairs]]
    fig, axes = plot_pd_panels(result, sets, output=output, centered=centred, variable=variable)
    for ax in axes.ravel():  # axis labels: the original column names (or --labels)
        for get, put in ((ax.get_xlabel, ax.set_xlabel), (ax.get_ylabel, ax.set_ylabel)):
            name = get()
            base = name.removesuffix(" (quantile-spaced axis)")
            if base in problem.display:
                put(relabel(name, base, problem, config))
        _response_label(ax, problem, config)
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


#: Interval methods per statistic, best first; the first one confidence_bands offers is used.  Bounded
#: statistics (ranges, variance indices, H²) get the percentile interval ("basic" would reflect them below 0;
#: see the validation page of the documentation); signed ones use the run's --band.
PREFERRED = {
    "pd_range": ("percentile",),
    "ale_range": ("percentile",),
    "heterogeneity_index": ("percentile",),
    "pdvi": ("percentile",),
    "h2": ("percentile",),
    "contrast": (None,),  # None: the run's --band
    "flat": (None,),
}
#: Most level contrasts listed per feature in summary.md.
MAX_CONTRASTS = 12
#: Level contrasts whose levels have fewer training rows than this are flagged: the refits rarely hold
#: such a level, so its PD barely varies between them and the interval is too narrow or off-centre.
MIN_LEVEL_ROWS = 5
METHOD_TEXT = {"percentile": "percentiles of the refits", "bc": "bias-corrected percentiles",
               "bca": "bias-corrected and accelerated percentiles", "basic": "reflected percentiles",
               "normal": "estimate ± z × bootstrap SE"}


def excludes(estimate: float, lower: float, upper: float, scale: float | None = None) -> bool:
    """Whether ``[lower, upper]`` leaves out ``estimate`` by more than round-off.

    Round-off is what :func:`pdpboot.workflow.options.num` prints as 0: 1e-9 of ``scale`` (a statistic printed
    ``0 [0, 0]`` is not flagged).  A NaN bound excludes nothing.

    >>> excludes(1.0, 1.1, 1.2)
    True
    >>> excludes(2.7e-31, 8.1e-32, 1.3e-31, scale=1.0)
    False
    """
    if np.isnan(lower) or np.isnan(upper) or np.isnan(estimate):
        return False
    slack = 1e-9 * abs(scale) if scale is not None and np.isfinite(scale) else 0.0
    return not lower - slack <= estimate <= upper + slack


@dataclass
class IntervalCells:
    """Prints intervals for one summary and keeps the flags to explain under its tables."""

    flags: list[str] = field(default_factory=list)
    small: dict = field(default_factory=dict)  # feature -> {level: training rows} of levels below MIN_LEVEL_ROWS

    def cell(self, ds: xr.Dataset, var: str, output, scale: float | None = None, *, what: str,
             signed: bool = False) -> str:
        """``[lower, upper]`` of ``<var>_band``, flagged ``†`` when it does not contain the estimate."""
        band = ds[f"{var}_band"].sel(output=output)
        lower, upper = float(band.sel(ci_bound="lower")), float(band.sel(ci_bound="upper"))
        estimate = float(ds[var].sel(output=output))
        text = f"[{num(lower, scale)}, {num(upper, scale)}]"
        if not excludes(estimate, lower, upper, scale):
            return text
        side = "above" if lower > estimate else "below"
        reason = ""
        if f"{var}_resamples" in ds:
            values = ds[f"{var}_resamples"].sel(output=output).values
            values = values[np.isfinite(values)]
            beyond = int((values > estimate).sum() if side == "above" else (values < estimate).sum())
            reason = f" {beyond} of {values.size} refits gave a value {side} the estimate"
        if signed:
            why = ("the refitted models differ systematically from the full-data fit here (a level the refits rarely "
                   "hold, or a model that changes much between refits)")
        elif side == "above":
            why = ("noise in a refitted model inflates ranges and spreads, so this statistic's refits sit above the "
                   "full-data fit")
        else:
            why = ("the refitted models are flatter (or less spread) here than the full-data fit, so this "
                   "statistic's refits sit below it")
        self.flags.append(
            f"† {md(what)}: estimate {num(estimate, scale)}, interval {text} lies {side} it.{reason}: {why}; the "
            "interval shows where the refits' values lie, not bounds around the estimate.")
        return text + " †"

    def few_rows(self, counts: dict, levels: list[str], feature: str) -> str:
        """`` ‡`` when one of ``levels`` has fewer than :data:`MIN_LEVEL_ROWS` training rows (explained once
        per feature under the table)."""
        small = {lev: counts.get(lev, 0) for lev in levels if counts.get(lev, 0) < MIN_LEVEL_ROWS}
        if not small:
            return ""
        self.small.setdefault(feature, {}).update(small)
        return " ‡"

    def notes(self) -> list[str]:
        """The flags raised so far as Markdown paragraphs (and forget them)."""
        for feature, small in self.small.items():
            shown = ", ".join(f"{md(lev)} has {n} row{'s' if n != 1 else ''}" for lev, n in small.items())
            self.flags.append(f"‡ {md(feature)}: {shown} (fewer than {MIN_LEVEL_ROWS} training rows): most refits "
                              "hold such a level a few times or not at all, so the intervals of its contrasts are "
                              "unreliable.")
        out = [line for flag in self.flags for line in ("", flag)]
        self.flags, self.small = [], {}
        return out


def interval_method(statistic: str, config) -> str:
    """The interval method summary.md uses for ``statistic`` (see :data:`PREFERRED`)."""
    for method in PREFERRED.get(statistic, (None,)):
        if method is None:
            return config.band
        if method in POINTWISE_METHODS:
            return method
    return config.band


def band_tree(result: xr.DataTree, per_node: dict[str, xr.Dataset], config, statistic: str, *,
              simultaneous: bool = False) -> xr.DataTree:
    """Bands of extra statistics (``<s>`` / ``<s>_resamples`` per node) with the summary's method."""
    tree = xr.DataTree(children={name: xr.DataTree(ds) for name, ds in per_node.items()})
    tree.attrs = dict(result.attrs)
    return confidence_bands(tree, confidence_level=config.confidence_level,
                            method=interval_method(statistic, config), simultaneous=simultaneous)


def ranges(result: xr.DataTree, features: list[str], config, variable: str = "pd") -> dict[str, xr.Dataset]:
    """PD (or ALE, ``variable="ale"``) range (max - min over the grid) per feature, with its interval."""
    nodes = {}
    name = f"{variable}_range"
    for f in features:
        ds = get_node(result, f).to_dataset()
        nodes[get_node(result, f).name] = xr.Dataset(
            {name: ds[variable].max(f) - ds[variable].min(f),
             f"{name}_resamples": ds[f"{variable}_resamples"].max(f) - ds[f"{variable}_resamples"].min(f)},
            attrs=get_node(result, f).attrs)
    if not nodes:
        return {}
    banded = band_tree(result, nodes, config, name)
    return {f: banded[get_node(result, f).name].to_dataset() for f in features}


def flat_within_noise(result: xr.DataTree, features: list[str], config, variable: str = "pd"
                      ) -> dict[str, xr.DataArray]:
    """Whether each feature's PD (or ALE) is indistinguishable from a flat line (a null reference for ranking).

    The PD minus its own mean over the grid is zero everywhere for a feature without effect.  With
    two grid values that centred curve is plus and minus half the contrast of the two values, so the
    verdict is the contrast's own interval (the run's pointwise method): flat when it contains 0.
    With more grid values, flat when the simultaneous band of the centred curve (sup-t, at the run's
    level, from the same refits) contains 0 at every grid value.  A feature gets no verdict when its
    refits cannot resolve the level: fewer than ``2 / (1 - level) - 1`` (39 at 95 %), below which a
    two-sided interval's ends are the extreme refits and contain 0 less often than the level says.

    Returns
    -------
    dict
        feature -> boolean DataArray (``output``): True = indistinguishable from flat; features
        without a verdict are left out.
    """
    fewest = math.ceil(2 / (1 - config.confidence_level) - 1e-9) - 1
    pairs, curves = {}, {}
    for f in features:
        node = get_node(result, f)
        ds = node.to_dataset()
        est, res = ds[variable], ds[f"{variable}_resamples"]
        if int(res.notnull().all([d for d in res.dims if d != "resample"]).sum()) < fewest:
            continue
        if ds.sizes[f] == 2:  # the contrast of the two values, as printed beside the verdict
            est, res = est.isel({f: 1}) - est.isel({f: 0}), res.isel({f: 1}) - res.isel({f: 0})
            pairs[node.name] = xr.Dataset({"flat": est, "flat_resamples": res}, attrs=node.attrs)
        else:
            curves[node.name] = xr.Dataset({"flat": est - est.mean(f), "flat_resamples": res - res.mean(f)},
                                           attrs=node.attrs)
    banded = {}
    for nodes, simultaneous in ((pairs, False), (curves, True)):
        if nodes:
            tree = band_tree(result, nodes, config, "flat", simultaneous=simultaneous)
            banded.update({name: tree[name].to_dataset()["flat_band"] for name in nodes})
    out = {}
    for f in features:
        band = banded.get(get_node(result, f).name)
        if band is None:
            continue
        lower, upper = band.sel(ci_bound="lower"), band.sel(ci_bound="upper")
        inside = ((lower <= 0) & (upper >= 0)) | (lower.isnull() | upper.isnull())
        out[f] = inside.all([d for d in inside.dims if d != "output"])
    return out


def contrasts(result: xr.DataTree, features: list[str], config) -> dict[str, xr.Dataset]:
    """Differences of the PD between each level and the first level, with intervals."""
    nodes, refs = {}, {}
    for f in features:
        node = get_node(result, f)
        ds = node.to_dataset()
        levels = ds[f].values
        if len(levels) < 2:
            continue
        first = ds.isel({f: 0}, drop=True)
        others = ds.isel({f: slice(1, 1 + MAX_CONTRASTS)}).drop_vars(f)
        labels = [str(v) for v in levels[1:1 + MAX_CONTRASTS]]
        est = (others["pd"] - first["pd"]).rename({f: "level"}).assign_coords(level=labels)
        res = (others["pd_resamples"] - first["pd_resamples"]).rename({f: "level"}).assign_coords(level=labels)
        nodes[get_node(result, f).name] = xr.Dataset({"contrast": est, "contrast_resamples": res},
                                                     attrs={"features": [f]})
        refs[f] = str(levels[0])
    if not nodes:
        return {}
    banded = band_tree(result, nodes, config, "contrast")
    out = {}
    for f in refs:
        ds = banded[get_node(result, f).name].to_dataset()
        ds.attrs["reference"] = refs[f]
        out[f] = ds
    return out


def response_scale(y) -> float:
    """A scale of the response (its standard deviation, 1 for class probabilities): round-off below
    1e-9 of it (or of its square, for squared statistics) is printed as 0."""
    values = np.asarray(y)
    if values.dtype.kind not in "fiu":
        return 1.0
    sd = float(np.nanstd(values.astype(float)))
    return sd if sd > 0 else 1.0


EXCEL_MAX_ROWS = 1_048_576
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SHEET_ILLEGAL = re.compile(r"[\[\]:*?/\\\x00-\x1f]")


def require_openpyxl():
    """The ``openpyxl`` module (an optional extra); a clear error when it is missing."""
    try:
        import openpyxl
    except ImportError:
        raise InputError(
            "Writing workbook.xlsx needs openpyxl: pip install \"pdpboot[excel]\" (or pass --no-workbook)."
        ) from None
    return openpyxl


class _Sheet:
    """A write-only sheet whose ``row`` method turns Python/NumPy values into safe cells."""

    def __init__(self, workbook, title: str):
        self._cell = require_openpyxl().cell.WriteOnlyCell
        self.ws = workbook.create_sheet(title)

    def _value(self, value):
        if value is None or value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Number) and not isinstance(value, complex):
            value = value.item() if isinstance(value, np.generic) else value
            if isinstance(value, float) and not math.isfinite(value):
                return None if math.isnan(value) else self._text("inf" if value > 0 else "-inf")
            return value
        if isinstance(value, (pd.Timestamp, datetime.datetime, datetime.date)):
            if isinstance(value, pd.Timestamp):
                value = value.to_pydatetime()
            if getattr(value, "tzinfo", None) is not None:
                return self._text(value.isoformat())
            return value
        return self._text(str(value))

    def _text(self, text: str):
        cell = self._cell(self.ws, value=None)
        cell.value = _ILLEGAL.sub("?", text)
        cell.data_type = "s"
        if text.startswith(_FORMULA_START):
            cell.quotePrefix = True
        return cell

    def row(self, values) -> None:
        self.ws.append([self._value(v) for v in values])


def sheet_title(prefix: str, label: str, taken: set[str]) -> str:
    """A unique, legal sheet name (<= 31 characters, no ``[]:*?/\\``)."""
    base = (prefix + _SHEET_ILLEGAL.sub("_", label)).strip("'")[:31] or prefix.strip()
    title, k = base, 2
    while title.lower() in taken:
        suffix = f"~{k}"
        title, k = base[: 31 - len(suffix)] + suffix, k + 1
    taken.add(title.lower())
    return title


def _cells(values: np.ndarray) -> list:
    return list(values.tolist()) if isinstance(values, np.ndarray) else list(values)


def _suffix(output, n_outputs: int) -> str:
    return "" if n_outputs == 1 else f" [{output}]"


def _band_columns(ds: xr.Dataset, var: str, output, label: str) -> list[tuple[str, xr.DataArray]]:
    """Bounds (and SE) of ``var`` for one output, as DataArrays over the feature dims."""
    cols = []
    for band, prefix in ((f"{var}_band", label), (f"{var}_band_pointwise", f"{label}_pointwise")):
        if band in ds:
            da = ds[band].sel(output=output)
            cols += [(f"{prefix}_lower", da.sel(ci_bound="lower")), (f"{prefix}_upper", da.sel(ci_bound="upper"))]
    if f"{var}_se" in ds:
        cols.append((f"{label}_se", ds[f"{var}_se"].sel(output=output)))
    return cols


def _grid_header(ds: xr.Dataset, display: str, two_d: bool) -> str:
    """A grid column's title: the feature, and ``(bin edge)``/``(level)`` for ALE's grids."""
    kinds = ds.attrs.get("ale_kind")
    if not kinds:
        return display
    kind = kinds[0] if not two_d else "numeric"
    return f"{display} ({'bin edge' if kind == 'numeric' else 'level'})"


def _node_columns(ds: xr.Dataset, fs: tuple, variables, outputs: list) -> list[tuple[str, np.ndarray]]:
    """Per output: each variable with its band bounds and SE; then ICE rows (1-D nodes with ICE)."""
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        for var in variables:
            if var in ds:
                cols.append((f"{var}{s}", ds[var].sel(output=o).transpose(*fs).values))
                cols += [(name + s, v.transpose(*fs).values) for name, v in _band_columns(ds, var, o, var)]
    if "ice" in ds and len(fs) == 1:
        ice = ds["ice"].transpose("instance", "output", *fs)
        for o in outputs:
            s = _suffix(o, len(outputs))
            block = ice.sel(output=o).values
            for k, row in enumerate(ds["instance"].values.tolist()):
                cols.append((f"ice row {row}{s}", block[k]))
    return cols


def write_node(sheet: _Sheet, ds: xr.Dataset, fs: tuple, display: tuple, variables, outputs: list) -> None:
    """One sheet of any effect's node: a row per grid value (pairs: per grid cell) with the variables'
    estimates, bounds and SEs per output, ICE rows of 1-D nodes and, when the node records them
    (ALE), ``bin_count``: training rows in the bin that ends at this edge (empty on the first edge) or at
    this level."""
    cols = _node_columns(ds, fs, variables, outputs)
    grids = [_cells(ds[f].values) for f in fs]
    counts = list(ds.attrs.get("bin_counts", [])) if len(fs) == 1 else []
    if counts and len(counts) == len(grids[0]) - 1:
        counts = [None, *counts]
    with_counts = bool(counts) and len(counts) == len(grids[0])
    sheet.row([*[_grid_header(ds, d, len(fs) == 2) for d in display], *[name for name, _ in cols],
               *(["bin_count"] if with_counts else [])])
    if len(fs) == 1:
        for i, value in enumerate(grids[0]):
            sheet.row([value, *[float(v[i]) for _, v in cols], *([counts[i]] if with_counts else [])])
        return
    for i, va in enumerate(grids[0]):
        for j, vb in enumerate(grids[1]):
            sheet.row([va, vb, *[float(v[i, j]) for _, v in cols]])


def plan_sheets(problem, results: dict, effects: dict) -> list[tuple[str, object, str]]:
    """Sheet title of every node of every effect's result: [(title, feature or (a, b), effect name)]."""
    taken: set[str] = {"data", "testpredictions", "parameters", "metrics",
                       *(t.lower() for name in results for t in effects[name].table_sheets)}
    plan = []
    for name, tree in results.items():
        one, two = effects[name].sheet_prefixes
        for node in tree.children.values():
            fs = list(node.attrs["features"])
            if len(fs) == 1:
                plan.append((sheet_title(one, problem.display[fs[0]], taken), fs[0], name))
            else:
                plan.append((sheet_title(two, f"{problem.display[fs[0]]} x {problem.display[fs[1]]}", taken),
                             tuple(fs), name))
    return plan


def write_workbook(path: Path, *, table: pd.DataFrame, outcome, problem, parameters: list[tuple[str, object]],
                   effects: dict, config=None) -> list[tuple[str, object]]:
    """Write the workbook: ``table`` as read, ``outcome``'s metrics and predictions, ``parameters`` (rows of
    the Parameters sheet) and a sheet per node of each result (``effects``: name -> EffectReport); returns
    the (sheet title, feature or pair) list of :func:`plan_sheets`."""
    wb = require_openpyxl().Workbook(write_only=True)
    try:
        plan = _fill(wb, table=table, outcome=outcome, problem=problem, parameters=parameters, effects=effects,
                     config=config)
        wb.save(path)
    except BaseException:
        for sheet in wb.worksheets:  # a half-written write-only sheet would complain when collected
            try:
                sheet.close()
            except Exception:  # noqa: BLE001, S110 - closing is best effort; the first error is raised
                pass
        raise
    return [(title, fs) for title, fs, _ in plan]


def _fill(wb, *, table, outcome, problem, parameters, effects, config=None) -> list:
    """Every sheet of :func:`write_workbook` (returns the sheet plan)."""
    outputs = problem.outputs_first
    plan = plan_sheets(problem, outcome.results, effects)

    data = _Sheet(wb, "Data")
    data.row(["row", *table.columns])
    limit = EXCEL_MAX_ROWS - 1
    for label, values in zip(table.index[:limit].tolist(), table.iloc[:limit].itertuples(index=False, name=None)):
        data.row([label, *values])

    preds = _Sheet(wb, "TestPredictions")
    if outcome.predictions is None:
        preds.row(["No test set (--test-size 0): no test predictions."])
    else:
        frame = outcome.predictions
        preds.row(["row", *frame.columns])
        for label, values in zip(frame.index.tolist(), frame.itertuples(index=False, name=None)):
            preds.row([label, *values])

    params = _Sheet(wb, "Parameters")
    params.row(["parameter", "value"])
    for name, value in parameters:
        params.row([name, value])
    if len(table) > limit:
        params.row(["note", f"The Data sheet holds the first {limit} of {len(table)} rows (Excel's limit)."])
    for title, fs, effect in plan:
        shown = problem.display[fs] if isinstance(fs, str) else " x ".join(problem.display[f] for f in fs)
        params.row([f"sheet {title}", f"{effects[effect].label} of {shown}"])

    met = _Sheet(wb, "Metrics")
    met.row(["metric", "value", "description"])
    for name, value, description in outcome.metrics:
        met.row([name, value, description])

    for name, tree in outcome.results.items():  # statistics over features (e.g. the PD-based importance)
        frames = effects[name].tables(tree, problem, config) if effects[name].tables is not None else []
        for title, frame in zip(effects[name].table_sheets, frames):
            if frame is None:
                continue
            sheet = _Sheet(wb, title)
            sheet.row(list(frame.columns))
            for values in frame.itertuples(index=False, name=None):
                sheet.row(list(values))

    for title, fs, effect in plan:
        node = get_node(outcome.results[effect], fs)
        ds = node.to_dataset()
        ds.attrs = dict(node.attrs)
        features = (fs,) if isinstance(fs, str) else tuple(fs)
        write_node(_Sheet(wb, title), ds, features, tuple(problem.display[f] for f in features),
                   effects[effect].sheet_variables, outputs)
    return plan
