"""The command-line program and the report are clients of the library: they import only its public names.

A client module (``workflow/``, ``report/``, ``cli.py``, ``__main__.py``) may import other client modules,
``pdpboot``'s names in ``pdpboot.__all__``, and the names in ``__all__`` of the public submodules
(``PUBLIC_SUBMODULES``, their modules without a leading underscore).  The import statements are read with
``ast``: which names a module imports is the behaviour under test here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import pdpboot

PACKAGE = Path(pdpboot.__file__).resolve().parent
#: the library's public submodules besides ``pdpboot`` itself: simulated data, plotting helpers
#: (``tidy_ticks``), the written result schema (node names, reserved names), the measured-coverage notes
#: that go with ``CoverageWarning``, the NumPy layer
PUBLIC_SUBMODULES = ("datasets", "plotting", "schema", "caveats", "engine")
CLIENTS = ("workflow", "report", "cli", "__main__")


def _is_client(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "pdpboot" and len(parts) > 1 and parts[1] in CLIENTS


def _client_sources() -> list[Path]:
    return sorted([*(PACKAGE / "workflow").rglob("*.py"), *(PACKAGE / "report").rglob("*.py"),
                   PACKAGE / "cli.py", PACKAGE / "__main__.py"])


def imports_of(source: str, module: str) -> list[tuple[str, list[str]]]:
    """(absolute module, names imported from it) of every pdpboot import in ``source``, the code of the
    package module ``module`` (dotted, e.g. ``pdpboot.workflow.run``; a package's ``__init__`` included)."""
    package = module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pdpboot":
                    out.append((alias.name, []))
            continue
        else:
            continue
        if target.split(".")[0] == "pdpboot":
            out.append((target, names))
    return out


def _public_names(module: str) -> set[str]:
    mod = importlib.import_module(module)
    return set(getattr(mod, "__all__", ()))


def _is_public_module(module: str) -> bool:
    parts = module.split(".")
    return (module == "pdpboot" or (len(parts) > 1 and parts[1] in PUBLIC_SUBMODULES
                                    and not any(p.startswith("_") for p in parts[1:])))


def private_imports(source: str, module: str) -> list[str]:
    """Every pdpboot import of ``source`` (module ``module``) that is not a client's or a public name."""
    found = []
    for target, names in imports_of(source, module):
        if _is_client(target):
            continue
        if not _is_public_module(target):
            found.append(f"{target} ({', '.join(names) or 'module'})")
            continue
        public = _public_names(target)
        for name in names:
            if name not in public and not _is_public_module(f"{target}.{name}"):
                found.append(f"{target}.{name}")
    return found


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts)


@pytest.mark.parametrize("path", _client_sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_clients_import_only_public_names(path):
    assert private_imports(path.read_text(encoding="utf-8"), _module_of(path)) == []


def test_the_clients_do_import_the_library():
    """The check above sees the clients' imports (relative ones too): they use the library through it."""
    seen = {t for p in _client_sources() for t, _ in imports_of(p.read_text(encoding="utf-8"), _module_of(p))
            if not _is_client(t)}
    assert {"pdpboot", "pdpboot.plotting", "pdpboot.datasets"} <= seen


@pytest.mark.parametrize("line, found", [
    ("from pdpboot._loop import run", ["pdpboot._loop (run)"]),
    ("from .._loop import run", ["pdpboot._loop (run)"]),
    ("from ..bands import confidence_bands", ["pdpboot.bands (confidence_bands)"]),
    ("from .. import _PUBLIC", ["pdpboot._PUBLIC"]),
    ("from pdpboot.engine._tree_model import FOREST_TYPES", ["pdpboot.engine._tree_model (FOREST_TYPES)"]),
    ("from pdpboot.plotting import _style", ["pdpboot.plotting._style"]),
    ("import pdpboot._plan", ["pdpboot._plan (module)"]),
    ("from .. import confidence_bands, get_node", []),
    ("from pdpboot.engine.tree import kernel_available", []),
    ("from ..report import write_report", []),
    ("from .text import md", []),
])
def test_a_private_import_in_a_client_is_found(line, found):
    assert private_imports(line, "pdpboot.workflow.run") == found


def test_the_library_imports_without_its_clients():
    """``import pdpboot`` and a public name of the library import no client (and no xarray)."""
    import subprocess
    import sys

    code = ("import sys, pdpboot\n"
            "pdpboot.Execution\n"
            "print(sorted(m for m in sys.modules if m == 'xarray' or m.split('.')[:2] in (['pdpboot', c] for c in "
            f"{CLIENTS!r})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
