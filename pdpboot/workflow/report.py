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
    from ..plotting import plot_pd

    for ax, output in zip(axes.ravel(), outputs):
        plot_pd(result, feature, ax=ax, ice=config.ice_samples > 0 and variable == "pd", output=output, legend=False,
                centered=config.centered == "yes" and variable == "pd", variable=variable)
        ax.set_xlabel(axis_label(feature, problem, config))
        _response_label(ax, problem, config)
        if n > 1:
            ax.set_title(f"class {output}")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    _outside_legend(fig, axes.ravel()[0], ncols=2 if n == 1 else 4)
    return fig


def _pair_figure(plt, result, pair, problem, config, outputs, variable="pd"):
    from ..plotting import plot_pd_contour

    fig, axes = plt.subplots(len(outputs), 2, figsize=(10, 3.8 * len(outputs)), squeeze=False,
                             layout="constrained")
    estimate = "PD estimate" if variable == "pd" else "2-D ALE estimate (pure interaction)"
    for row, output in zip(axes, outputs):
        plot_pd_contour(result, pair, ax=row[0], what="estimate", output=output, variable=variable)
        plot_pd_contour(result, pair, ax=row[1], what="width", output=output, variable=variable)
        for ax, title in zip(row, (estimate, "width of the band")):
            ax.set_xlabel(axis_label(pair[0], problem, config))
            ax.set_ylabel(axis_label(pair[1], problem, config))
            ax.set_title(title + (f", class {output}" if len(outputs) > 1 else ""))
    return fig


def top_features(result: xr.DataTree, problem, config, variable: str = "pd") -> list[str]:
    """The features that get plots: all, or the ``--top`` K with the largest PD (or ALE) range (first output)."""
    if not config.top or config.top >= len(problem.pd_features):
        return list(problem.pd_features)
    from ..schema import get_node

    output = panel_outputs(problem)[0]

    def spread(f):
        pd = get_node(result, f)[variable].sel(output=output)
        return float(pd.max() - pd.min())

    ranked = sorted(problem.pd_features, key=spread, reverse=True)[: config.top]
    return [f for f in problem.pd_features if f in ranked]


def draw_plots(folder: Path, result: xr.DataTree | None, problem, config,
               say: Callable[[str], None], *, ale: xr.DataTree | None = None,
               ale_pairs=()) -> tuple[list[tuple[str, str]], list[str]]:
    """One figure per feature (ICE under PD under band), per pair (contour + band width), an overview.

    Files are written in ``config.format`` (png, pdf or svg); with ``--top K`` only the K features
    with the largest PD range get figures.  The overview is centred unless ``--centered no``.
    With an ALE result (``--effect ale|both``): ``ale_<feature>`` (ALE curve, pointwise and
    simultaneous bands, rug of deciles; levels as points with intervals), ``ale2_<a>__<b>`` (the
    2-D ALE surface on a diverging colour map centred at 0, and its band width) and
    ``overview_ale``.

    Returns
    -------
    files : list of (relative path, what it shows)
    failures : list of str
        Figures that could not be drawn (logged; the run goes on).
    """
    import matplotlib

    plt = _pyplot()
    from ..plotting import plot_h_statistic, plot_pd_panels, tidy_ticks

    folder.mkdir()
    taken: set[str] = set()
    files, failures = [], []
    outputs = panel_outputs(problem)
    shown = top_features(result, problem, config) if result is not None else \
        top_features(ale, problem, config, "ale")
    jobs = [] if result is not None else _ale_jobs(plt, ale, ale_pairs, problem, config, outputs, shown, set())
    for f in shown if result is not None else ():
        stem = "pd_" + safe_filename(problem.display[f], taken)
        jobs.append((stem, f"PD, band and ICE of {problem.display[f]!r}",
                     lambda f=f: _feature_figure(plt, result, f, problem, config, outputs)))
    for a, b in problem.pairs if result is not None else ():
        stem = "pd2_" + safe_filename(f"{problem.display[a]}__{problem.display[b]}", taken)
        jobs.append((stem, f"2-D PD surface and band width of {problem.display[a]!r} x {problem.display[b]!r}",
                     lambda a=a, b=b: _pair_figure(plt, result, (a, b), problem, config, outputs)))
    centred = config.centered != "no"
    for output in outputs if result is not None else ():
        stem = "overview" if len(outputs) == 1 else "overview_" + safe_filename(f"class_{output}", taken)
        what = ("all " + ("centred " if centred else "") + "PD curves and surfaces in one figure"
                + (f" (class {output})" if len(outputs) > 1 else ""))
        jobs.append((stem, what, lambda output=output: _overview(result, output, problem, config, shown,
                                                                 plot_pd_panels)))
    if result is not None and ale is not None:
        jobs += _ale_jobs(plt, ale, ale_pairs, problem, config, outputs, shown, set())  # own names: ale_<feature>
    if config.interactions > 0 and result is not None:
        jobs.append(("interactions", "H-squared interaction statistics with intervals",
                     lambda: _interaction_figure(plt, result, problem, outputs[0], plot_h_statistic)))
    suffix = config.format
    with matplotlib.rc_context({"text.parse_math": False, "svg.fonttype": "none", "pdf.fonttype": 42}):
        for k, (stem, what, make) in enumerate(jobs, 1):
            say(f"Plot {k}/{len(jobs)}: plots/{stem}.{suffix}")
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


def _ale_jobs(plt, ale, ale_pairs, problem, config, outputs, shown, taken) -> list:
    """(stem, what, make) of the ALE figures: one per feature and numeric pair, and an overview per output."""
    from ..plotting import plot_pd_panels

    jobs = []
    for f in shown:
        stem = "ale_" + safe_filename(problem.display[f], taken)
        jobs.append((stem, f"ALE and its bands of {problem.display[f]!r}",
                     lambda f=f: _feature_figure(plt, ale, f, problem, config, outputs, "ale")))
    for a, b in ale_pairs:
        stem = "ale2_" + safe_filename(f"{problem.display[a]}__{problem.display[b]}", taken)
        jobs.append((stem, f"2-D ALE (pure interaction) and band width of {problem.display[a]!r} x "
                           f"{problem.display[b]!r}",
                     lambda a=a, b=b: _pair_figure(plt, ale, (a, b), problem, config, outputs, "ale")))
    for output in outputs:
        stem = safe_filename("overview_ale" if len(outputs) == 1 else f"overview_ale_class_{output}", taken)
        what = "all ALE curves and surfaces in one figure" + (f" (class {output})" if len(outputs) > 1 else "")
        jobs.append((stem, what, lambda output=output: _overview(ale, output, problem, config, shown,
                                                                 plot_pd_panels, "ale", ale_pairs)))
    return jobs


def _overview(result, output, problem, config, shown, plot_pd_panels, variable="pd", pairs=None):
    centred = config.centered != "no" and variable == "pd"
    sets = [*shown, *(problem.pairs if pairs is None else pairs)]
    fig, axes = plot_pd_panels(result, sets, output=output, centered=centred, variable=variable)
    for ax in axes.ravel():  # axis labels: the original column names (or --labels)
        for get, put in ((ax.get_xlabel, ax.set_xlabel), (ax.get_ylabel, ax.set_ylabel)):
            name = get()
            if name in problem.display:
                put(axis_label(name, problem, config))
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
