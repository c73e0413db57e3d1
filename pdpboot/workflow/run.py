"""A whole run: check inputs, compute, write every output into its run folder."""

from __future__ import annotations

import datetime
import json
import os
import shlex
import shutil
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .. import CoverageWarning, save
from . import InputError, report
from .effect import SummaryContext
from .model import model_file_features
from .options import OPTIONS, RunConfig, equivalent_command, file_sections, md, num, shorten
from .problem import load_problem
from .report import draw_plots, panel_outputs, require_openpyxl, write_workbook
from .repro import MODEL_LIBRARIES, data_copy_name, read_config, sha256, versions, write_inputs
from .strategy import EFFECTS, compute, strategy_for


@dataclass(frozen=True)
class RunRecord:
    """What a finished run produced (returned by :func:`run_workflow`)."""

    folder: Path  # the finished run folder <out>/pdpboot_<timestamp>
    config: RunConfig  # the configuration as recorded in repro_inputs/config.json
    files: tuple[tuple[str, str], ...]  # (path relative to folder, what it shows) of every plot
    failures: tuple[str, ...]  # figures that could not be drawn
    metrics: tuple[tuple[str, float, str], ...]  # (name, value, description) of the test metrics
    notes: tuple[str, ...]  # what was done to the data and the model
    workbook: bool  # whether workbook.xlsx was written
    seconds: dict  # wall time of the fit and of each effect
    effect_failures: tuple[tuple[str, str], ...] = ()  # (effect label, reason) of effects that failed


class Reporter:
    """Progress lines on stderr (unless quiet) and in ``run.log``."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.start = time.perf_counter()
        self.lines: list[str] = []

    def __call__(self, message: str) -> None:
        line = f"[{time.perf_counter() - self.start:7.1f}s] {message}"
        self.lines.append(line)
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)

    def log(self, message: str) -> None:
        """Only in run.log."""
        self.lines.append(f"[{time.perf_counter() - self.start:7.1f}s] {message}")


def write_model(path: Path, outcome, problem) -> None:
    """``model.joblib``: the model fitted on the training rows (the estimate's model) with what it needs."""
    import joblib

    bundle = {"estimator": outcome.fitted, "features": list(problem.features),
              "display_names": [problem.display[f] for f in problem.features],
              "target": str(problem.y.name), "task": problem.task, "classes": problem.classes,
              "versions": versions(MODEL_LIBRARIES)}
    joblib.dump(bundle, path)


def adopt_model_columns(config: RunConfig) -> RunConfig:
    """A ``--model-file`` model fitted on a DataFrame gets exactly the columns it was fitted on."""
    names = model_file_features(config)
    if names is None:
        return config
    if config.features is not None and list(config.features) != names:
        raise InputError(f"--model-file holds a model fitted on the columns {', '.join(map(shorten, names))}; "
                         f"--features gives {', '.join(map(shorten, config.features))}. Leave --features out.")
    return config.replace(features=names)


#: the note in the folder of a run that has not finished (removed when it finishes)
UNFINISHED = "INCOMPLETE.txt"
#: the refits' checkpoints inside a run folder (removed when the run finishes)
CHECKPOINT = "checkpoint"


def _unfinished_note(folder: Path, why: str) -> str:
    """Write the note of a run that has not finished; returns what it keeps."""
    kept = (", ".join(p.name for p in sorted(folder.iterdir()) if p.suffix in (".nc", ".joblib"))
            or "model.joblib and the result files, once written")
    (folder / UNFINISHED).write_text(
        f"This run has not finished ({why}).\nFinished and kept: {kept} (and {CHECKPOINT}/, the finished refits).\n"
        f"To finish it: pdpboot run --resume {shlex.quote(str(folder))}\n", encoding="utf-8")
    return kept


class IncompleteRun(Exception):
    """A run stopped: its folder ``pdpboot_<stamp>_incomplete`` keeps what is finished and can be resumed."""


def _shown(value):
    if value is None:
        return "(default)"
    if isinstance(value, list):
        return ", ".join(":".join(p) if isinstance(p, list) else str(p) for p in value) or "(none)"
    return value


def _parameters(config: dict, problem, outcome, table_shape) -> list[tuple[str, object]]:
    rows = [(o.key, _shown(getattr(config, o.key))) for o in OPTIONS]
    rows += [("data", config.data), ("data_sha256", config.data_sha256),
             ("data_shape", f"{table_shape[0]} rows x {table_shape[1]} columns"),
             ("created", config.created), ("task_used", problem.task), ("rows_used", len(problem.X)),
             ("features_used", ", ".join(problem.display[f] for f in problem.features)),
             ("categorical_features", ", ".join(problem.display[f] for f in problem.categorical))]
    if problem.task == "classification":
        rows += [("classes", ", ".join(map(str, problem.classes))), ("reported_first", problem.outputs_first[0])]
    rows.append(("estimator", " ".join(repr(outcome.estimator).split())))
    rows += [(f"version {name}", value) for name, value in config.versions.items()]
    rows += [(f"note {k}", note) for k, note in enumerate(outcome.notes, 1)]
    return rows


def write_html_report(folder: Path, outcome, config: RunConfig, summary: str) -> str | None:
    """``report.html``: the summary, every figure (drawn interactive, or embedded from ``plots/``) and the
    provenance in one self-contained file.  Returns why it could not be written (the run goes on), or None."""
    from ..report import folder_images, write_report

    if not outcome.results:
        return None
    variables = [EFFECTS[name].variable for name in outcome.results]
    try:
        write_report(list(outcome.results.values()), folder / "report.html", summary=summary,
                     images=folder_images(folder, variables, summary), command=equivalent_command(config))
    except Exception as exc:  # noqa: BLE001 - the report must not lose the run's other files
        return f"report.html could not be written: {type(exc).__name__}: {exc}"
    return None


def run_workflow(config: RunConfig | None, *, quiet: bool = False, resume: Path | None = None) -> RunRecord:
    """Run the whole workflow described by ``config`` (see :mod:`pdpboot.workflow.options`), or finish
    the stopped run in folder ``resume`` (its refits read back from its checkpoint: the same numbers)."""
    say = Reporter(quiet)
    if resume is not None:
        folder = Path(resume)
        if not (folder / UNFINISHED).is_file():
            raise InputError(f"{shorten(str(folder))} is not the folder of a stopped run (no {UNFINISHED}): "
                             "--resume takes a pdpboot_<timestamp>_incomplete folder.")
        config, data_path = read_config(folder)
        say(f"Resuming {folder.name} ...")
        table, problem = load_problem(config, data_path)
    else:
        data_path = Path(config.data)
        config = adopt_model_columns(config)
        say(f"Reading {data_path.name} ...")
        table, problem = load_problem(config, data_path)
    say(f"{table.shape[0]} rows x {table.shape[1]} columns; target {problem.y.name!r} ({problem.task}), "
        f"{len(problem.features)} features.")
    for note in problem.notes:
        say(f"Note: {note}")
    if config.workbook:
        require_openpyxl()
    if resume is None:
        out = Path(config.out)
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {str(out)!r} exists and is not a folder.")
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        config = config.replace(data=data_path.name, data_copy=data_copy_name(data_path),
                                data_sha256=sha256(data_path), created=now.isoformat(), versions=versions())
        made_out = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            folder = claim(out, f"pdpboot_{_stamp(config)}_incomplete")
        except OSError as exc:
            raise InputError(f"Cannot write to --out {str(out)!r}: {exc.strerror or exc}.") from None
        _unfinished_note(folder, "it is running, or it was stopped")
        write_inputs(folder, config, data_path)
    try:
        record = _run_into(folder, config, table, problem, say)
    except BaseException as exc:
        finished = (folder / "model.joblib").exists() or any(folder.glob("*.nc"))
        if isinstance(exc, InputError) or not finished:  # nothing worth keeping
            if resume is None:
                shutil.rmtree(folder, ignore_errors=True)
                if made_out and not any(out.iterdir()):
                    out.rmdir()
            raise
        reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")
        say(f"STOPPED: {reason}")
        (folder / "run.log").write_text("\n".join(say.lines) + "\n", encoding="utf-8")
        kept = _unfinished_note(folder, f"stopped by {reason}")
        raise IncompleteRun(f"stopped by {reason}. What is finished ({kept}) is kept in {folder}/; to finish the "
                            f"run: pdpboot run --resume {shlex.quote(str(folder))}") from exc
    shutil.rmtree(folder / CHECKPOINT, ignore_errors=True)
    (folder / UNFINISHED).unlink()
    final = claim(folder.parent, f"pdpboot_{_stamp(config)}")
    os.replace(folder, final)  # POSIX: replaces the empty folder just claimed
    return RunRecord(folder=final, **record)


def _stamp(config: RunConfig) -> str:
    return datetime.datetime.fromisoformat(config.created).astimezone().strftime("%Y%m%d-%H%M%S")


def _run_into(folder: Path, config: RunConfig, table, problem, say: Reporter) -> dict:
    """Compute and write every file into ``folder``; each effect's files as soon as it is finished."""
    say.log(f"task: {problem.task}; target {problem.y.name!r}; {len(problem.X)} rows used")
    files: list[tuple[str, str]] = []
    failures: list[str] = []

    def on_fit(outcome) -> None:
        say("Writing model.joblib ...")
        write_model(folder / "model.joblib", outcome, problem)
        for name, value, description in outcome.metrics:
            say.log(f"metric {name} = {value} ({description})")

    def on_effect(effect, tree, outcome) -> None:  # before the next effect starts
        say(f"Writing {effect.file} ...")
        save(tree, folder / effect.file)
        drawn, failed = draw_plots(folder / "plots", effect, tree, problem, config, say)
        files.extend(drawn)
        failures.extend(failed)
        for failure in failed:
            say(f"WARNING: {failure}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = compute(config, problem, say=say, log=say.log, progress=say, checkpoint=folder / CHECKPOINT,
                          on_fit=on_fit, on_effect=on_effect, keep_going=True)
        # a band known to under-cover (CoverageWarning): on the console and in summary.md, not only in run.log
        for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, CoverageWarning)):
            say(f"WARNING: {message}")
            outcome.notes.append(message)
        sheets = _write_outputs(folder, config, table, problem, outcome, files, failures, say)
    counts = Counter(f"{w.category.__name__}: {w.message}" for w in caught)
    for message, n in counts.items():
        say.log(f"warning ({n}x): {message}")
    say("Done." if not outcome.failures else "Done, with errors: " + "; ".join(
        f"{EFFECTS[name].label} failed ({reason})" for name, reason in outcome.failures.items()))
    log = [f"pdpboot {config.versions['pdpboot']} run, created {config.created}",
           f"versions: {config.versions}", f"configuration: {json.dumps(config.to_dict(), sort_keys=True)}",
           *say.lines]
    (folder / "run.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    return {"config": config, "files": tuple(files), "failures": tuple(failures),
            "metrics": tuple(tuple(m) for m in outcome.metrics), "notes": tuple(outcome.notes),
            "workbook": sheets is not None, "seconds": dict(outcome.seconds),
            "effect_failures": tuple((EFFECTS[name].label, reason) for name, reason in outcome.failures.items())}


def _write_outputs(folder: Path, config: RunConfig, table, problem, outcome, files: list, failures: list,
                   say: Reporter) -> list | None:
    """``workbook.xlsx``, ``summary.md`` and ``report.html`` of a computed run; returns the workbook's sheets."""
    sheets = None
    if config.workbook:
        say("Writing workbook.xlsx ...")
        sheets = write_workbook(folder / "workbook.xlsx", table=table, outcome=outcome, problem=problem,
                                parameters=_parameters(config, problem, outcome, table.shape), effects=EFFECTS,
                                config=config)
    say("Writing summary.md ...")
    text = summary_markdown(problem=problem, config=config, outcome=outcome, files=files, failures=failures,
                            data_name=config.data, table_shape=table.shape, sheets=sheets, seconds=outcome.seconds)
    (folder / "summary.md").write_text(text, encoding="utf-8")
    say("Writing report.html ...")
    failure = write_html_report(folder, outcome, config, text)
    if failure:
        failures.append(failure)
        say(f"WARNING: {failure}")
    return sheets


def claim(out: Path, name: str) -> Path:
    """Create the empty folder ``out/name`` (``name_2``, ... when taken): an existing run is never touched."""
    k = 1
    while True:
        final = out / (name if k == 1 else f"{name}_{k}")
        try:
            final.mkdir()
            return final
        except FileExistsError:
            k += 1


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
        scale=report.response_scale(problem.y) if problem.task == "regression" else 1.0,
        outputs=panel_outputs(problem) if problem.task == "classification" else list(problem.outputs_first),
        cells=report.IntervalCells())
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
