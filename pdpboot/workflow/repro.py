"""``repro.py`` and ``repro_inputs/``: re-run a run and check it reproduces ``results.nc``.

``repro_inputs/`` holds a byte copy of the input table and ``config.json``, the exact
configuration (column names are data in that file, never code).  ``repro.py`` contains no
name from the data: it calls :func:`reproduce` on its own folder.
"""

from __future__ import annotations

import hashlib
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


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def data_copy_name(path: Path) -> str:
    """Name of the data copy in ``repro_inputs/``: ``data`` plus the input's (lower-case) format suffix."""
    return "data" + path.suffix.lower()


def write_inputs(folder: Path, config: dict, data_path: Path) -> None:
    """Copy the data, write ``config.json`` and ``repro.py``."""
    inputs = folder / INPUTS
    inputs.mkdir()
    shutil.copyfile(data_path, inputs / config["data_copy"])
    (inputs / CONFIG_NAME).write_text(json.dumps(config, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    (folder / "repro.py").write_text(SCRIPT, encoding="utf-8")


def recompute(folder: Path) -> tuple[xr.DataTree, list[str]]:
    """Recompute ``results.nc`` of a run folder from its ``repro_inputs/``.

    Returns
    -------
    result : xarray.DataTree
    warnings : list of str
        Differences of environment (library versions) that may change the numbers.
    """
    inputs = Path(folder) / INPUTS
    config_path = inputs / CONFIG_NAME
    if not config_path.is_file():
        raise InputError(f"{str(folder)!r} is not a pdpboot run folder: {INPUTS}/{CONFIG_NAME} is missing.")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    data_path = inputs / config["data_copy"]
    if not data_path.is_file():
        raise InputError(f"The data copy {str(data_path)!r} is missing.")
    if sha256(data_path) != config["data_sha256"]:
        raise InputError(f"{str(data_path)!r} was modified since the run (SHA-256 differs).")
    from .run import versions

    notes = [f"{name} {was} was used for the run; this is {now}: the numbers may differ."
             for name, was in config["versions"].items() if (now := versions().get(name)) != was]
    with warnings.catch_warnings():  # the run's warnings are in its run.log
        warnings.simplefilter("ignore")
        _, problem = load_problem(config, data_path)
        outcome = compute(config, problem, say=lambda message: None, progress=False)
    return outcome.result, notes


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
        result, notes = recompute(folder)
    except InputError as exc:
        print(f"repro: error: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"repro: warning: {note}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.output) if args.output else Path(tmp) / "results.nc"
        save(result, path)
        original = folder / "results.nc"
        same_bytes = sha256(path) == sha256(original)
        new, old = load(path), load(original)
        try:
            xr.testing.assert_identical(new, old)
        except AssertionError:
            shown = "\n  ".join(differences(new, old)[:20]) or "(see xarray.testing.assert_identical)"
            print(f"repro: results.nc NOT reproduced; differences:\n  {shown}", file=sys.stderr)
            return 1
    print(f"repro: results.nc reproduced: identical values, coordinates and attributes"
          f"{' (byte-identical file)' if same_bytes else ''}.")
    if args.output:
        print(f"repro: recomputed result kept at {args.output}")
    return 0
