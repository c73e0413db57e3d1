"""``repro.py`` and ``repro_inputs/``: re-run a run and check it reproduces ``results.nc``."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import numbers
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from .. import __version__, load, save
from . import InputError
from .options import RunConfig, shorten
from .problem import load_problem
from .strategy import compute

#: Largest difference, relative to the scale of its statistic, that still counts as reproduced.
REPRO_RTOL = 1e-12
#: Attributes that describe how the numbers were computed in this environment (the engine chosen by
#: the cost model depends on whether numba is installed): a difference is reported, not a failure.
ENVIRONMENT_ATTRS = frozenset({"engine"})
_FAMILY_SUFFIXES = ("_resamples", "_band_pointwise", "_band", "_se", "_bias")

CONFIG_NAME = "config.json"
INPUTS = "repro_inputs"
SCRIPT = '''#!/usr/bin/env python
"""Re-run the pdpboot analysis in this folder and check that it reproduces results.nc.

    python repro.py                  recompute, compare with results.nc, keep nothing
    python repro.py --output new.nc also keep the recomputed result

The data (a byte copy of the input table) and the exact configuration are read from
repro_inputs/; nothing in this script depends on them.  Exit status 0 when the recomputed
result is identical to results.nc or equal within the stated tolerance (1e-12 of each
statistic's scale; the message says which).  Same as: pdpboot reproduce <this folder>.
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
    """The checked configuration of a run folder and the path of its data copy (not yet read)."""
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


def check_one_run(folder: Path, files: list[Path], results: list[xr.DataTree]) -> None:
    """Refuse a run folder whose result files were not all written by the run of its ``config.json``."""
    stored_path = Path(folder) / INPUTS / CONFIG_NAME
    stored = None
    if stored_path.is_file():
        try:
            stored = json.loads(stored_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{INPUTS}/{CONFIG_NAME} is not valid JSON: {exc}") from None
    reference, source = stored, f"{INPUTS}/{CONFIG_NAME}"
    for path, result in zip(files, results):
        recorded = result.attrs.get("cli_config")
        try:
            config = json.loads(recorded) if isinstance(recorded, str) else None
        except json.JSONDecodeError:
            config = None
        if reference is None and config is not None:
            reference, source = config, path.name
            continue
        if config is None or config != reference:
            what = ("was not written by pdpboot run" if config is None else
                    f"was written by another run (created {config.get('created')}, data {config.get('data')!r})")
            raise InputError(f"{path.name} in {shorten(str(folder))} {what}, not by the run of {source}: one "
                             "run folder holds the files of one run; move it out, or rerun to recreate it.")


def _say(message: str) -> None:
    print(f"repro: {message}", file=sys.stderr, flush=True)


def result_files(outcome) -> dict[str, xr.DataTree]:
    """The result files a run writes: ``results.nc`` (PD) and/or ``ale.nc`` (ALE), by ``--effect``."""
    files = {"results.nc": outcome.result, "ale.nc": outcome.ale}
    return {name: tree for name, tree in files.items() if tree is not None}


def recompute(folder: Path, say=_say) -> tuple[dict[str, xr.DataTree], list[str]]:
    """Recompute ``results.nc`` (and ``ale.nc``) of a run folder from its ``repro_inputs/``."""
    config, data_path = read_config(folder)
    if not data_path.is_file():
        raise InputError(f"The data copy {str(data_path)!r} is missing.")
    if sha256(data_path) != config.data_sha256:
        raise InputError(f"{str(data_path)!r} was modified since the run (SHA-256 differs).")
    here = versions()
    notes = [f"{name} {was} was used for the run; this is {here.get(name, 'not recorded')}: the numbers may differ "
             "in the last bits." for name, was in config.versions.items() if here.get(name) != was]
    with warnings.catch_warnings():  # the run's warnings are in its run.log
        warnings.simplefilter("ignore")
        _, problem = load_problem(config, data_path)
        outcome = compute(config, problem, say=say, log=say, progress=say)
    return result_files(outcome), notes


@dataclass
class Comparison:
    """How a recomputed result compares with the saved one (see :func:`compare`)."""

    identical: bool
    #: differences beyond the tolerance, or of structure/text, each with its size
    problems: list[str] = field(default_factory=list)
    #: the largest numeric difference: (relative to its scale, absolute, where); 0 when identical
    largest: tuple[float, float, str] = (0.0, 0.0, "")
    #: differences of :data:`ENVIRONMENT_ATTRS` (reported with the verdict, not failures)
    notes: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        """Identical, or equal within :data:`REPRO_RTOL`."""
        return not self.problems


def _family(name: str) -> str:
    for suffix in _FAMILY_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _finite_max(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


class _Comparer:
    def __init__(self, rtol: float):
        self.rtol = rtol
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.largest = (0.0, 0.0, "")

    def numbers(self, new, old, scale: float | None, where: str) -> None:
        a, b = np.asarray(new), np.asarray(old)
        if a.shape != b.shape:
            self.problems.append(f"{where}: shape {b.shape} -> {a.shape}")
            return
        if not (a.dtype.kind in "iufc" and b.dtype.kind in "iufc" and "c" not in (a.dtype.kind + b.dtype.kind)):
            if not _same(new, old):
                self.problems.append(f"{where} differs")
            return
        a, b = a.astype(float), b.astype(float)
        if not np.array_equal(np.isnan(a), np.isnan(b)) or not np.array_equal(a[np.isinf(a)], b[np.isinf(b)]):
            self.problems.append(f"{where}: missing or infinite values at other positions")
            return
        finite = np.isfinite(a)
        diff = float(np.abs(a[finite] - b[finite]).max()) if finite.any() else 0.0
        if diff == 0.0:
            return
        scale = _finite_max(b) if scale is None else scale
        relative = diff / scale if scale > 0 else np.inf
        if relative > self.largest[0]:
            self.largest = (relative, diff, where)
        if relative > self.rtol:
            self.problems.append(f"{where}: differs by up to {diff:.3g} ({relative:.3g} of its scale {scale:.3g})")

    def attrs(self, new: dict, old: dict, where: str) -> None:
        for key in sorted(set(new) | set(old), key=str):
            if key not in new or key not in old:
                self.problems.append(f"{where} attribute {key!r} exists in only one result")
            elif _is_numeric(new[key]) and _is_numeric(old[key]):
                self.numbers(new[key], old[key], None, f"{where} attribute {key!r}")
            elif not _same(new[key], old[key]):
                if key in ENVIRONMENT_ATTRS:
                    self.notes.append(f"{where} attribute {key!r}: {str(old[key])[:150]!r} -> {str(new[key])[:150]!r}")
                else:
                    self.problems.append(f"{where} attribute {key!r} differs")

    def node(self, a: xr.Dataset, b: xr.Dataset, where: str) -> None:
        names = sorted(set(a.variables) | set(b.variables), key=str)
        scales: dict[str, float] = {}
        for name in b.data_vars:
            if np.asarray(b[name].values).dtype.kind in "iuf":
                family = _family(str(name))
                scales[family] = max(scales.get(family, 0.0), _finite_max(np.asarray(b[name].values, dtype=float)))
        for name in names:
            here = f"{where}variable {name!r}"
            if name not in a.variables or name not in b.variables:
                self.problems.append(f"{here} exists in only one result")
                continue
            if a.variables[name].dims != b.variables[name].dims:
                self.problems.append(f"{here}: dims {b.variables[name].dims} -> {a.variables[name].dims}")
                continue
            scale = scales.get(_family(str(name))) if name in b.data_vars else None
            self.numbers(a.variables[name].values, b.variables[name].values, scale, here)
            self.attrs(dict(a.variables[name].attrs), dict(b.variables[name].attrs), here)
        self.attrs(dict(a.attrs), dict(b.attrs), f"{where}node" if where else "root")


def _is_numeric(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (numbers.Number, np.number)):
        return True
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) > 0:
        arr = np.asarray(value)
        return arr.dtype.kind in "iuf"
    return False


def compare(new: xr.DataTree, old: xr.DataTree, rtol: float = REPRO_RTOL) -> Comparison:
    """Compare a recomputed result with the saved one: identical, within ``rtol`` of each statistic's scale,
    or not reproduced (each difference with its size; the largest with where it is)."""
    try:
        xr.testing.assert_identical(new, old)
        return Comparison(identical=True)
    except AssertionError:
        pass
    check = _Comparer(rtol)
    new_nodes = {n.relative_to(new): n for n in new.subtree}
    old_nodes = {n.relative_to(old): n for n in old.subtree}
    for path in sorted(set(new_nodes) | set(old_nodes)):
        where = f"node {path!r}, " if path != "." else ""
        if path not in new_nodes or path not in old_nodes:
            check.problems.append(f"node {path!r} exists in only one result")
            continue
        check.node(new_nodes[path].to_dataset(inherit=False), old_nodes[path].to_dataset(inherit=False), where)
    return Comparison(identical=False, problems=check.problems, largest=check.largest, notes=check.notes)


def _same(x, y) -> bool:
    try:
        return bool(xr.DataArray(x).identical(xr.DataArray(y)))
    except (ValueError, TypeError):
        return x == y


def verdict(name: str, comparison: Comparison, same_bytes: bool) -> str:
    """The line ``repro`` prints for one file."""
    if comparison.identical:
        return (f"{name} reproduced: identical values, coordinates and attributes"
                f"{' (byte-identical file)' if same_bytes else ''}.")
    relative, absolute, where = comparison.largest
    notes = f" Computed differently here: {'; '.join(comparison.notes)}." if comparison.notes else ""
    if comparison.reproduced:
        largest = (f"the largest difference is {absolute:.2g} ({relative:.2g} of its scale) in {where}"
                   if absolute > 0 else "no number differs")
        return (f"{name} reproduced within the stated tolerance, not identically: every number equal within "
                f"{REPRO_RTOL:g} of its statistic's scale; {largest}.{notes}")
    shown = "\n  ".join(comparison.problems[:20])
    more = f"\n  ... and {len(comparison.problems) - 20} more" if len(comparison.problems) > 20 else ""
    return (f"{name} NOT reproduced (tolerance {REPRO_RTOL:g} of each statistic's scale); differences:\n  {shown}"
            f"{more}{notes}")


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
            comparison = compare(load(path), load(original))
            if not comparison.reproduced:
                print(f"repro: {verdict(name, comparison, same_bytes)}", file=sys.stderr)
                return 1
        print(f"repro: {verdict(name, comparison, same_bytes)}")
        if args.output:
            print(f"repro: recomputed {name} kept at {path}")
    return 0


#: Libraries whose versions are recorded because they can change the numbers; the optional ones
#: (numba: the compiled tree walk; the boosting libraries) are recorded as "not installed" when
#: missing, so that installing one later is reported as a difference of environment.
LIBRARIES = ("numpy", "pandas", "scipy", "scikit-learn", "xarray", "numba", "xgboost", "lightgbm", "catboost")
#: Optional model libraries recorded with a saved model (the libraries to load it with).
MODEL_LIBRARIES = ("xgboost", "lightgbm", "joblib", "threadpoolctl")
#: Distributions that provide an import name under another distribution name.
_ALIASES = {"xgboost": ("xgboost", "xgboost-cpu")}
NOT_INSTALLED = "not installed"
#: Key of the exact tree engine's walk in :func:`versions` ("compiled (numba)", or "brute force (no numba)").
TREE_WALK = "tree walk"


def _version(distribution: str) -> str | None:
    for name in _ALIASES.get(distribution, (distribution,)):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def tree_walk() -> str:
    """How the exact tree engine walks trees here: ``"compiled (numba)"``, or ``"brute force (no numba)"``."""
    from ..engine.tree import kernel_available

    return "compiled (numba)" if kernel_available() else "brute force (no numba)"


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Versions of pdpboot, Python, every library that can change the numbers (``"not installed"`` when
    missing) and ``extra`` distributions that are installed; :data:`TREE_WALK` says whether the exact tree
    engine walks trees in compiled code."""
    out = {"pdpboot": __version__}
    for name in LIBRARIES:
        out[name] = _version(name) or NOT_INSTALLED
    for name in extra:
        found = _version(name)
        if found is not None:
            out[name] = found
    out["python"] = ".".join(map(str, sys.version_info[:3]))
    out[TREE_WALK] = tree_walk()
    return out


def sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
