"""The ``pdpboot`` command: PD/ICE with bootstrap bands for a table, without writing Python."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import traceback
from pathlib import Path

from . import __version__

EPILOG_RUN = """examples:
  pdpboot run prices.csv --target Price
  pdpboot run bikes.csv --target bikers --exclude casual,registered --pairs temp:hr --n-resamples 200
  pdpboot run survey.xlsx --target vote --task classification --positive-class Dole
  pdpboot run data.parquet --config analysis.toml --n-jobs -1
  pdpboot run wage.csv --target wage --level-order 'education=HS,College,PhD' --format pdf --top 6
  pdpboot run eu.csv --target Preis --sep ';' --decimal , --model-spec "lightgbm.LGBMRegressor(max_depth=4)"
  pdpboot run table.csv --target y --model-file fitted_pipeline.joblib --n-resamples 0   # your model, one fit

Every option can also be set in a TOML file given with --config (keys as the long option
names, e.g. n_resamples = 200, pairs = ["temp:hr"]); the command line wins.
"""
EPILOG_DEMO = """The demo data (1000 rows: Temperature, Hour, Day -> Price) is simulated with a known
partial dependence; see pdpboot.datasets.make_electricity_prices.  For smoother bands:
  pdpboot demo --n-resamples 200
"""
DEMO_DEFAULTS = {
    "target": "Price",
    "pairs": [["Temperature", "Hour"]],
    "n_resamples": 50,
    "n_estimators": 50,
    "grid_resolution": 20,
}
DEMO_ROWS = 1000
DEMO_SEED = 0


def _parser() -> argparse.ArgumentParser:
    from .workflow.options import add_arguments

    parser = argparse.ArgumentParser(
        prog="pdpboot",
        description="Partial dependence (PD) and ICE curves with bootstrap confidence bands, from a table.",
        epilog="Start with 'pdpboot demo', then 'pdpboot run YOUR_TABLE.csv --target COLUMN'. "
               "Help on a command: pdpboot run --help.",
    )
    parser.add_argument("--version", action="version", version=f"pdpboot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p):
        p.add_argument("--config", metavar="FILE.toml", help="Read options from a TOML (or JSON) file.")
        p.add_argument("--quiet", "-q", action="store_true", help="No progress messages.")
        p.add_argument("--debug", action="store_true", help="Show Python tracebacks of errors.")

    run = sub.add_parser(
        "run", help="Train a model on a table and compute PD/ICE with bootstrap bands.",
        description="Train a model on DATA, report test metrics, compute PD/ICE curves with bootstrap "
                    "confidence bands, and write everything to DIR/pdpboot_<timestamp>/.",
        epilog=EPILOG_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("data", nargs="?", metavar="DATA",
                     help="The table: .csv/.tsv/.txt, .parquet or .xlsx (first sheet).")
    run.add_argument("--resume", metavar="FOLDER", help="Finish a stopped run (a pdpboot_<timestamp>_incomplete "
                     "folder) with its own options; its finished refits are read back, so the numbers are "
                     "those of an uninterrupted run.")
    common(run)
    add_arguments(run)

    demo = sub.add_parser(
        "demo", help="Run the whole workflow on simulated electricity prices (50 refits; minutes).",
        description="Run 'pdpboot run' on simulated electricity prices (Temperature, Hour, Day -> Price) "
                    "with a random forest and B = 50 resamples, and say where the results are.",
        epilog=EPILOG_DEMO, formatter_class=argparse.RawDescriptionHelpFormatter)
    common(demo)
    add_arguments(demo, overrides=DEMO_DEFAULTS)

    rep = sub.add_parser(
        "reproduce", help="Recompute a run's results.nc and check it is identical.",
        description="Recompute results.nc of a run folder from its repro_inputs/ (same as running its "
                    "repro.py) and compare with the stored one.")
    rep.add_argument("folder", metavar="FOLDER", help="A pdpboot_<timestamp> run folder.")
    rep.add_argument("--output", metavar="PATH.nc", help="Also keep the recomputed result here.")

    html = sub.add_parser(
        "report", help="Write one self-contained HTML report of saved results or of a run folder.",
        description="Write one HTML file with every figure (interactive: hover for the numbers), the numbers "
                    "with their intervals and the provenance of pdpboot results saved with pdpboot.save (.nc or "
                    ".zarr), or of a run folder (its summary, results and plots). The file loads nothing from "
                    "the network: it opens from a disk, a shared folder or an e-mail.",
        epilog="examples:\n  pdpboot report results.nc -o report.html\n  pdpboot report pd.nc ale.nc -o both.html"
               "\n  pdpboot report pdpboot_20260101-120000   # rewrites the run folder's report.html",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    html.add_argument("results", nargs="+", metavar="RESULT", help="Result files (.nc, .zarr) or one run folder.")
    html.add_argument("-o", "--output", metavar="PATH.html",
                      help="Where to write (default: report.html here; for a run folder, its report.html).")
    html.add_argument("--title", help="The report's title (default: from the target's name).")
    html.add_argument("--debug", action="store_true", help="Show Python tracebacks of errors.")
    return parser


def _config(args: argparse.Namespace, base: dict):
    from .workflow import strategy  # noqa: F401  (it registers --effect's and --uncertainty's choices)
    from .workflow.options import BY_KEY, merge, read_config_file

    command_line = {key: getattr(args, key) for key in BY_KEY if getattr(args, key, None) is not None}
    if getattr(args, "data", None) is not None:
        command_line["data"] = args.data
    from_file = read_config_file(args.config) if args.config else {}
    return merge(command_line, from_file, base)


def _report(record, quiet: bool) -> int:
    """Print where the results are (and which effect failed); the exit status of the run."""
    from .workflow.strategy import requested, strategy_for

    folder = record.folder
    plots = record.files
    effects = requested(record.config)
    failed = {label for label, _ in record.effect_failures}
    strategy = strategy_for(record.config)
    ranked = " and ".join(e.label for e in effects) + " range"
    intervals = {"bootstrap": " (with intervals)", "none": " (one fit: no intervals)"}.get(strategy.name, "")
    lines = [f"Results in {folder}{'/' if not str(folder).endswith('/') else ''}",
             "  report.html     everything in one file: open it in a browser (figures, numbers, provenance)",
             f"  summary.md      metrics, features ranked by {ranked}{intervals}"]
    if record.workbook:
        lines.append("  workbook.xlsx   data, test predictions, parameters, metrics, one sheet per feature/pair")
    lines.append(f"  plots/          {len(plots)} {record.config.format.upper()} figures (start with overview*)")
    for effect in effects:
        if effect.label not in failed:
            lines.append(f"  {effect.file:<15} {effect.label} results; in Python: pdpboot.load(\"{effect.file}\")")
    lines += ["  repro.py        python repro.py recomputes the result files and checks they reproduce (1e-12)",
              "  run.log         what was done, step by step"]
    print("\n".join(lines))
    for label, reason in record.effect_failures:
        print(f"pdpboot: error: {label} failed ({' '.join(reason.split())}); the other results above are complete.",
              file=sys.stderr)
    return 1 if record.effect_failures else 0


def _run(args: argparse.Namespace) -> int:
    from .workflow import InputError
    from .workflow.options import defaults
    from .workflow.run import run_workflow

    if args.resume:
        from .workflow.options import BY_KEY

        given = [BY_KEY[k].flag for k in BY_KEY if getattr(args, k, None) is not None]
        if args.data or args.config or given:
            extra = args.data or args.config or given[0]
            raise InputError(f"--resume finishes a run with its own options; leave out {extra}.")
        return _report(run_workflow(None, quiet=args.quiet, resume=Path(args.resume)), args.quiet)
    config = _config(args, defaults())
    if not config.data:
        raise InputError("No data file: give it as 'pdpboot run DATA --target COL' (or data = \"...\" in --config).")
    record = run_workflow(config, quiet=args.quiet)
    return _report(record, args.quiet)


def _demo(args: argparse.Namespace) -> int:
    from .datasets import make_electricity_prices
    from .workflow.options import defaults
    from .workflow.run import run_workflow

    base = defaults()
    base.update({k: (list(v) if isinstance(v, list) else v) for k, v in DEMO_DEFAULTS.items()})
    config = _config(args, base)
    if config.workbook and importlib.util.find_spec("openpyxl") is None:
        config = config.replace(workbook=False)  # the demo runs on a core install; the workbook is an extra
        if not args.quiet:
            print('(workbook.xlsx skipped: it needs openpyxl - pip install "pdpboot[excel]")')
    X, y = make_electricity_prices(DEMO_ROWS, rng=DEMO_SEED)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "electricity_prices.csv"
        X.assign(**{str(y.name): y}).to_csv(path, index=False)
        record = run_workflow(config.replace(data=str(path)), quiet=args.quiet)
    status = _report(record, args.quiet)
    if not args.quiet:
        bands = {"none": "\nNo bands: one fit (--uncertainty none).",
                 "debiased": "\nThe bands are about the data's PD (the process that made the data), not the "
                             "model's: 5 cross-fitted fits, the model's bias removed (see summary.md)."}.get(
            config.uncertainty, f"\nThe bands use B = {config.n_resamples} resamples; for smoother bands run "
                                "'pdpboot demo --n-resamples 200' (about 4x longer).")
        print(bands + "\nOn your own table: pdpboot run TABLE.csv --target COLUMN (see pdpboot run --help).")
    return status


def _reproduce(args: argparse.Namespace) -> int:
    from .workflow.repro import main as repro_main

    return repro_main(Path(args.folder), ["--output", args.output] if args.output else [])


def _one_run(paths: list[Path], results: list) -> None:
    """Refuse result files of different ``pdpboot run``s (or a run's file with one saved from Python)."""
    from .report.figures import describe_origin, run_identity
    from .workflow import InputError
    from .workflow.options import shorten

    identities = [run_identity(r.attrs) for r in results]
    if len(set(identities)) == 1:
        return
    first = next(k for k, i in enumerate(identities) if i != identities[0])
    if any(i.startswith("run ") for i in identities):
        a, b = paths[0].name, paths[first].name
        raise InputError(f"{shorten(a)} ({describe_origin(results[0].attrs)}) and {shorten(b)} "
                         f"({describe_origin(results[first].attrs)}) are not files of one run: one report shows "
                         "one run; give the files of one run (or its folder: pdpboot report FOLDER), or write one "
                         "report per run.")
    print(f"Note: these {len(paths)} files come from {len(set(identities))} separate Python calls; the report "
          "labels every figure, table and provenance entry with its file and call.", file=sys.stderr)


def _html_report(args: argparse.Namespace) -> int:
    import json

    from . import load
    from .report import folder_images, write_report
    from .workflow import InputError
    from .workflow.options import RunConfig, equivalent_command
    from .workflow.repro import check_one_run

    paths = [Path(p) for p in args.results]
    for path in paths:
        if not path.exists():
            raise InputError(f"{str(path)!r} does not exist: give result files saved with pdpboot.save (.nc, .zarr) "
                             "or a run folder.")
    folders = [p for p in paths if p.is_dir() and p.suffix != ".zarr"]
    summary, images, command = None, [], None
    if folders:
        if len(paths) > 1:
            raise InputError("Give one run folder, or result files (not both).")
        folder = folders[0]
        files = [p for name in ("results.nc", "ale.nc") if (p := folder / name).is_file()]
        files += sorted(p for p in folder.glob("*.nc") if p not in files)
        if not files:
            raise InputError(f"{str(folder)!r} holds no result files (*.nc): is it a pdpboot run folder?")
        summary_file = folder / "summary.md"
        summary = summary_file.read_text(encoding="utf-8") if summary_file.is_file() else None
        results = [load(p) for p in files]
        check_one_run(folder, files, results)
        variables = [str(r.attrs.get("effect", "pd")) for r in results]
        images = folder_images(folder, variables, summary)
        stored = folder / "repro_inputs" / "config.json"
        if stored.is_file():
            command = equivalent_command(RunConfig.from_dict(json.loads(stored.read_text(encoding="utf-8"))))
        output = Path(args.output) if args.output else folder / "report.html"
    else:
        results = [load(p) for p in paths]
        _one_run(paths, results)
        output = Path(args.output or "report.html")
        recorded = results[0].attrs.get("cli_config")  # a run's result file knows its configuration
        if isinstance(recorded, str):
            try:
                command = equivalent_command(RunConfig.from_dict(json.loads(recorded)))
            except (InputError, ValueError):
                command = None
    written = write_report(results, output, summary=summary, images=images, command=command, title=args.title,
                           sources=[p.name for p in paths] if not folders else None)
    print(f"Wrote {written} ({written.stat().st_size / 1024:.0f} KB; open it in any browser).")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pdpboot`` command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from .workflow import InputError
    from .workflow.run import IncompleteRun

    debug = getattr(args, "debug", False)
    try:
        return {"run": _run, "demo": _demo, "reproduce": _reproduce, "report": _html_report}[args.command](args)
    except InputError as exc:
        print(f"pdpboot: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pdpboot: interrupted before anything was finished; nothing was kept.", file=sys.stderr)
        return 130
    except IncompleteRun as exc:
        print(f"pdpboot: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 130 if isinstance(exc.__cause__, KeyboardInterrupt) else 1
    except Exception as exc:  # noqa: BLE001 - one line for the user, the traceback with --debug
        if debug:
            traceback.print_exc()
        else:
            first = " ".join(str(exc).split()) or type(exc).__name__
            print(f"pdpboot: error: {first} ({type(exc).__name__}; rerun with --debug for the traceback)",
                  file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
