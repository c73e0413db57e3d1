"""``summary.md``: the run, its test metrics, one section per registered effect, files, notes, precision.

Only reads the results; every interval is printed (and flagged) by
:class:`~pdpboot.workflow.intervals.IntervalCells`.
"""

from __future__ import annotations

from . import intervals
from .effect import SummaryContext
from .registry import EFFECTS
from .report import panel_outputs
from .strategy import strategy_for
from .text import file_sections, md, num


def _header(problem, config, outcome, strategy, data_name, table_shape, seconds) -> list[str]:
    n_train = len(outcome.X_train)
    n_used = len(problem.X)
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
    split = (f"{n_used} rows used, {n_train} for training, {n_used - n_train} for testing" if n_train < n_used
             else f"{n_used} rows used, no test set")
    times = [f"fit {seconds.get('fit', 0):.1f} s"]
    times += [f"{EFFECTS[name].label} {seconds[name]:.1f} s" for name in outcome.results if name in seconds]
    lines = ["| | |", "|---|---|",
             f"| Data | {md(data_name)}: {table_shape[0]} rows x {table_shape[1]} columns; {split} |",
             f"| Task | {task} |",
             f"| Model | {md(model)} ({source}), {len(problem.features)} features; fitted model in `model.joblib` |"]
    lines += [f"| {title} | {text} |" for title, text in strategy.header(config, outcome.results)]
    lines += [f"| Seed | `--random-state {config.random_state}` (same seed and data: same numbers) |",
              f"| Run time | {', '.join(times)} |"]
    return lines


def _missing_class_notes(outcome) -> list[str]:
    """A note when some refits drew no training row of a class (their probability of it is 0)."""
    for tree in outcome.results.values():
        missing = int(tree.attrs.get("n_missing_class_resamples", 0) or 0)
        if missing:
            total = int(tree.attrs.get("n_resamples", 0) or 0)
            return [f"{missing} of {total} refits drew no training row of some class (a rare class): those refits "
                    "give it probability 0, so its bands reach down towards 0; more rows of that class narrow them."]
    return []


def summary_markdown(*, problem, config, outcome, files, failures, data_name, table_shape, sheets,
                     seconds) -> str:
    """The text of ``summary.md`` (every effect in ``outcome.results``, in registration order)."""
    strategy = strategy_for(config)
    ctx = SummaryContext(
        problem=problem, config=config, outcome=outcome, strategy=strategy,
        scale=intervals.response_scale(problem.y) if problem.task == "regression" else 1.0,
        outputs=panel_outputs(problem) if problem.task == "classification" else list(problem.outputs_first),
        cells=intervals.IntervalCells())
    lines = [f"# pdpboot run: {md(problem.y.name)}", ""]
    lines += _header(problem, config, outcome, strategy, data_name, table_shape, seconds)
    lines += ["", "## Test metrics", "", "| metric | value | meaning |", "|---|---|---|"]
    lines += [f"| {md(m)} | {num(v)} | {md(d, limit=2000)} |" for m, v, d in outcome.metrics]
    for name, tree in outcome.results.items():
        lines += EFFECTS[name].summary(ctx, tree)
    result_lines = [f"- `{EFFECTS[name].file}`: {EFFECTS[name].describe}" for name in outcome.results]
    problems = [f"{EFFECTS[name].label} failed, so `{EFFECTS[name].file}` and its plots and sheets are missing: "
                f"{reason}" for name, reason in outcome.failures.items()]
    lines += file_sections(result_lines, "- `repro.py`: `python repro.py` recomputes the result files from "
                           "`repro_inputs/` and checks they reproduce (identical, or equal within 1e-12 of each "
                           "statistic's scale).",
                           sheets=sheets, files=files, notes=[*outcome.notes, *_missing_class_notes(outcome)],
                           failures=[*problems, *failures])
    lines += ["", "## Precision", "", strategy.precision(config, outcome.results), ""]
    return "\n".join(lines)
