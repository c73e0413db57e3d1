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
    outputs = panel_outputs(problem)
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
