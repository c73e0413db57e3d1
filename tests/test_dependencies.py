"""pyproject's core dependencies against what pdpboot imports (issue 25).

Every core dependency is imported somewhere in ``pdpboot/`` (or, for netCDF4, named as the xarray engine
that reads and writes results), and every third-party import in ``pdpboot/`` is a core dependency or an
optional extra imported under ``try: ... except ImportError`` (directly, or in a private module that is
only ever imported that way), so a missing extra gives a clear error instead of a traceback.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from pdpboot import Grid

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pdpboot"
PYPROJECT = ROOT / "pyproject.toml"
#: Core dependencies that serve without an import statement (netCDF4: xarray's engine for saved results,
#: test_saved_results_are_netcdf4_files).
USED_BY_NAME = {"netcdf4"}

pytestmark = pytest.mark.skipif(not PYPROJECT.is_file(), reason="needs the source checkout's pyproject.toml")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normalize(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0))


def _project():
    return tomllib.loads(PYPROJECT.read_text())["project"]


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                                       for n in names)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, guarded by try/except ImportError) of every import statement in ``path``;
    relative imports as ``pdpboot.<package>.<module>``."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = []

    def visit(node, guarded):
        for child in ast.iter_child_nodes(node):
            inner = guarded or (isinstance(child, ast.Try) and any(_catches_import_error(h) for h in child.handlers))
            if isinstance(child, ast.Try):  # only the try body is guarded, not its handlers or else/finally
                for stmt in child.body:
                    visit_stmt(stmt, inner)
                for part in (*child.handlers, *child.orelse, *child.finalbody):
                    visit_stmt(part, guarded)
            else:
                visit_stmt(child, guarded)

    def visit_stmt(stmt, guarded):
        if isinstance(stmt, ast.Import):
            out.extend((alias.name, guarded) for alias in stmt.names)
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level == 0:
                out.append((stmt.module, guarded))
            else:
                base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
                module = ".".join(base + ([stmt.module] if stmt.module else []))
                out.extend((f"{module}.{a.name}" if not stmt.module else module, guarded) for a in stmt.names)
        visit(stmt, guarded)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _all_imports() -> dict[str, list[tuple[str, bool]]]:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _third_party(module: str) -> str | None:
    top = module.split(".")[0]
    return None if top in sys.stdlib_module_names or top in ("pdpboot", "__future__") else top


def test_every_core_dependency_is_imported_where_it_serves():
    to_dist = packages_distributions()
    imported = {_normalize(d) for mods in _all_imports().values() for m, _ in mods if _third_party(m)
                for d in to_dist.get(_third_party(m), [_third_party(m)])}
    unused = []
    for requirement in _project()["dependencies"]:
        name = _requirement_name(requirement)
        if name not in imported and name not in USED_BY_NAME:
            unused.append(name)
    assert unused == [], f"core dependencies pdpboot never imports (drop them or move them to an extra): {unused}"


def test_every_third_party_import_is_a_core_dependency_or_a_guarded_extra():
    to_dist = packages_distributions()
    core = {_requirement_name(r) for r in _project()["dependencies"]}
    imports = _all_imports()
    # private modules every importer guards (e.g. engine._tree_kernel, numba's compiled walk)
    importers: dict[str, list[bool]] = {}
    for mods in imports.values():
        for module, guarded in mods:
            importers.setdefault(module, []).append(guarded)
    guarded_modules = {m for m, flags in importers.items() if flags and all(flags)}
    bad = []
    for module, mods in imports.items():
        for imported, guarded in mods:
            top = _third_party(imported)
            if top is None:
                continue
            dists = {_normalize(d) for d in to_dist.get(top, [top])}
            if dists & core or guarded or module in guarded_modules:
                continue
            bad.append(f"{module}: import {imported}")
    assert bad == [], ("third-party imports that are neither core dependencies nor guarded by "
                       f"try/except ImportError with a message naming the extra: {bad}")


def test_the_scan_sees_imports_and_guards():
    """The helpers above on known code (so the two tests cannot pass by seeing nothing)."""
    mods = dict(_imports(PACKAGE / "engine" / "_tree_compiled.py"))
    assert mods.get("pdpboot.engine._tree_kernel") is True  # imported under try/except ImportError
    assert ("numba", False) in _imports(PACKAGE / "engine" / "_tree_kernel.py")
    assert ("xarray", False) in _imports(PACKAGE / "bands.py")
    assert ("seaborn", False) in _imports(PACKAGE / "plotting" / "tidy.py")  # plot_facets, lazily
    assert "seaborn" in {_requirement_name(r) for r in _project()["dependencies"]}


def test_saved_results_are_netcdf4_files(tmp_path):
    """``save`` writes ``.nc`` results through netCDF4 (HDF5 files, not scipy's netCDF 3)."""
    import numpy as np
    from sklearn.linear_model import LinearRegression

    import pdpboot

    X = np.random.default_rng(0).normal(size=(30, 2))
    result = pdpboot.partial_dependence(LinearRegression().fit(X, X[:, 0]), X, [0], grid=Grid(3))
    path = pdpboot.save(result, tmp_path / "result.nc")
    assert path.read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"
