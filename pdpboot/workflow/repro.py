"""``repro.py`` and ``repro_inputs/``: re-run a run and check it reproduces ``results.nc``.

``repro_inputs/`` holds a byte copy of the input table and ``config.json``, the exact
configuration (column names are data in that file, never code).  ``repro.py`` contains no
name from the data: it calls :func:`reproduce` on its own folder.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import xarray as xr

from ..io import load, save
from . import InputError
from .compute import compute
from .data import load_problem
from .options import RunConfig, shorten
from .provenance import sha256, versions

CONFIG_NAME = "config.json"
INPUTS = "repro_inputs"
SCRIPT = '''#!/usr/bin/env python
"""Re-run the pdpboot analysis in this folder and check that it reproduces results.nc.

    python repro.py                  recompute, compare with results.nc, keep nothing
    python repro.py --output new.nc also keep the recomputed result

The data (a byte copy of the input table) and the exact configuration are read from
repro_inputs/; nothing in this script depends on them.  Exit status 0 when the recomputed
result is identical to results.nc.  Same as: pdpboot reproduce <this folder>.
"""

import sys
from pathlib import Path

from pdpboot.workflow.repro import main

if __name__ == "__main__":
    sys.exit(main(Path(__file__).resolve().parent, sys.argv[1:]))
'''


def data_copy_name(path: Path) -> str:
    """Name of the data copy in ``repro_inputs/``: ``data`` plus the input's (lower-case) format suffix."""
    return "data" + path.suffix.lower()


def write_inputs(folder: Path, config: RunConfig, data_path: Path) -> None:
    """Copy the data, write ``config.json`` and ``repro.py``."""
    inputs = folder / INPUTS
    inputs.mkdir()
    shutil.copyfile(data_path, inputs / config.data_copy)
    (inputs / CONFIG_NAME).write_text(
        json.dumps(config.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "repro.py").write_text(SCRIPT, encoding="utf-8")


def read_config(folder: Path) -> tuple[RunConfig, Path]:
    """The checked configuration of a run folder and the path of its data copy (not yet read).

    ``config.json`` is validated like the options of ``pdpboot run``; a data copy named by a
    path (anything but a plain file name inside ``repro_inputs/``) is refused before it is read.
    """
    inputs = Path(folder) / INPUTS
    config_path = inputs / CONFIG_NAME
    if not config_path.is_file():
        raise InputError(f"{shorten(folder)} is not a pdpboot run folder: {INPUTS}/{CONFIG_NAME} is missing.")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{INPUTS}/{CONFIG_NAME} is not valid JSON: {exc}") from None
    config = RunConfig.from_dict(raw, source=f"{INPUTS}/{CONFIG_NAME}")
    for key in ("data_copy", "data_sha256", "versions"):
        if getattr(config, key) is None:
            raise InputError(f"{INPUTS}/{CONFIG_NAME} lacks {key!r}; it was not written by pdpboot run.")
    name = config.data_copy
    if (name in ("", ".", "..") or Path(name).name != name or "/" in name or "\\" in name
            or Path(name).is_absolute()):
        raise InputError(f"{INPUTS}/{CONFIG_NAME} names the data copy {shorten(name)}, which is not a file in "
                         f"{INPUTS}/; refusing to read it.")
    data_path = inputs / name
    if data_path.is_symlink() or not data_path.resolve().is_relative_to(inputs.resolve()):
        raise InputError(f"The data copy {shorten(name)} points outside {INPUTS}/; refusing to read it.")
    return config, data_path


def _say(message: str) -> None:
    print(f"repro: {message}", file=sys.stderr, flush=True)


def result_files(outcome) -> dict[str, xr.DataTree]:
    """The result files a run writes: ``results.nc`` (PD) and/or ``ale.nc`` (ALE), by ``--effect``."""
    files = {"results.nc": outcome.result, "ale.nc": outcome.ale}
    return {name: tree for name, tree in files.items() if tree is not None}


def recompute(folder: Path, say=_say) -> tuple[dict[str, xr.DataTree], list[str]]:
    """Recompute ``results.nc`` (and ``ale.nc``) of a run folder from its ``repro_inputs/``.

    Returns
    -------
    results : dict
        File name (``results.nc``, ``ale.nc``) -> recomputed xarray.DataTree.
    warnings : list of str
        Differences of environment (library versions) that may change the numbers.
    """
    config, data_path = read_config(folder)
    if not data_path.is_file():
        raise InputError(f"The data copy {str(data_path)!r} is missing.")
    if sha256(data_path) != config.data_sha256:
        raise InputError(f"{str(data_path)!r} was modified since the run (SHA-256 differs).")
    notes = [f"{name} {was} was used for the run; this is {now}: the numbers may differ."
             for name, was in config.versions.items() if (now := versions().get(name)) != was]
    with warnings.catch_warnings():  # the run's warnings are in its run.log
        warnings.simplefilter("ignore")
        _, problem = load_problem(config, data_path)
        outcome = compute(config, problem, say=say, log=say, progress=False, progress_lines=say)
    return result_files(outcome), notes


def differences(new: xr.DataTree, old: xr.DataTree) -> list[str]:
    """Which attrs, nodes and variables of two results differ (for the message of a failed check)."""
    out = []
    for key in sorted(set(new.attrs) | set(old.attrs)):
        if not _same(new.attrs.get(key), old.attrs.get(key)):
            out.append(f"root attribute {key!r}")
    for name in sorted(set(new.children) | set(old.children)):
        if name not in new.children or name not in old.children:
            out.append(f"node {name!r} exists in only one result")
            continue
        a, b = new[name].to_dataset(), old[name].to_dataset()
        for var in sorted(set(a.variables) | set(b.variables)):
            if var not in a.variables or var not in b.variables or not a[var].identical(b[var]):
                out.append(f"node {name!r}, variable {var!r}")
        if not all(_same(a.attrs.get(k), b.attrs.get(k)) for k in set(a.attrs) | set(b.attrs)):
            out.append(f"node {name!r} attributes")
    return out


def _same(x, y) -> bool:
    try:
        return bool(xr.DataArray(x).identical(xr.DataArray(y)))
    except (ValueError, TypeError):
        return x == y


def main(folder: Path, argv: list[str] | None = None) -> int:
    """Command-line entry of ``repro.py`` and ``pdpboot reproduce``."""
    import argparse

    parser = argparse.ArgumentParser(prog="repro.py", description="Recompute results.nc and compare.")
    parser.add_argument("--output", help="Also keep the recomputed result at this .nc path.")
    args = parser.parse_args(argv)
    folder = Path(folder)
    try:
        results, notes = recompute(folder)
    except InputError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"repro: warning: {note}", file=sys.stderr)
    for name, result in results.items():
        with tempfile.TemporaryDirectory() as tmp:
            keep = args.output and (name == "results.nc" or len(results) == 1)
            path = Path(args.output) if keep else (
                Path(args.output).with_name(Path(args.output).stem + "_" + name) if args.output else Path(tmp) / name)
            save(result, path)
            original = folder / name
            if not original.is_file():
                print(f"repro: {name} is missing from the run folder.", file=sys.stderr)
                return 1
            same_bytes = sha256(path) == sha256(original)
            new, old = load(path), load(original)
            try:
                xr.testing.assert_identical(new, old)
            except AssertionError:
                shown = "\n  ".join(differences(new, old)[:20]) or "(see xarray.testing.assert_identical)"
                print(f"repro: {name} NOT reproduced; differences:\n  {shown}", file=sys.stderr)
                return 1
        print(f"repro: {name} reproduced: identical values, coordinates and attributes"
              f"{' (byte-identical file)' if same_bytes else ''}.")
        if args.output:
            print(f"repro: recomputed {name} kept at {path}")
    return 0
