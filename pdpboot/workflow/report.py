"""Plots (``plots/*`` in the run's ``--format``) of a run.  Only reads the result; never refits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import xarray as xr

from .text import safe_filename

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
    """Draw the figures of one effect (its ``EffectReport.plots``) into ``folder`` in ``config.format``.

    With ``--top K`` only the K features with the largest range get figures.  File stems start with the
    effect's variable (``pd_``, ``ale2_``, ``overview_ale``), so effects never share a file name.

    Returns
    -------
    files : list of (relative path, what it shows)
    failures : list of str
        Figures that could not be drawn (logged; the run goes on).
    """
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
