"""The house's import rules hold by themselves (ARCHITECTURE.md)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pdpboot"
#: modules that work on plain arrays and must import without xarray
NUMPY_LAYER = sorted(
    [f"pdpboot.engine.{p.stem}" for p in (PACKAGE / "engine").glob("*.py") if p.stem != "__init__"]
    + ["pdpboot.engine", "pdpboot._plan", "pdpboot._evaluate", "pdpboot._loop", "pdpboot._validate",
       "pdpboot.grid", "pdpboot.checkpoint", "pdpboot.schema", "pdpboot.header", "pdpboot.options",
       "pdpboot._version"]
)
#: layer of each top-level module or package: a module may import only its own layer or lower ones
LAYERS = {
    "_version": 0, "schema": 0, "header": 0, "caveats": 0, "engine": 1, "_validate": 1, "grid": 1,
    "datasets": 1, "options": 2, "_plan": 2, "_evaluate": 2, "checkpoint": 2, "_loop": 3,
    "_assemble": 4, "io": 4, "_pd": 5, "bootstrap": 5, "bands": 5, "ale": 5,
    "forest": 6, "debiased": 6, "heterogeneity": 6, "interaction": 6, "strategies": 6, "logit_scale": 6,
    "plotting": 7, "report": 8, "workflow": 9, "cli": 10, "__main__": 10, "__init__": 11,
}


def test_numpy_layer_imports_without_xarray():
    code = (
        "import importlib, sys\n"
        "sys.modules['xarray'] = None\n"
        f"for name in {NUMPY_LAYER!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        print(name, exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "", f"NumPy-layer modules that need xarray:\n{done.stdout}"


def _imports(path: Path):
    """(module imported, names imported) for every relative import inside the package."""
    tree = ast.parse(path.read_text())
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(parts[: len(parts) - node.level])
            target = base + (node.module.split(".") if node.module else [])
            yield target, [a.name for a in node.names]


def _sources():
    return sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_underscore_names_and_no_upward_imports(path):
    own = path.relative_to(PACKAGE).parts
    own_top = own[0].removesuffix(".py")
    for target, names in _imports(path):
        assert target[0] == "pdpboot"
        top = target[1] if len(target) > 1 else "__init__"
        if top == own_top:  # inside one package (engine, plotting, workflow): free, except engine privates
            continue
        private = [n for n in names if n.startswith("_") and n != "__version__"]
        assert not private, f"{path.name} imports underscore names {private} from {'.'.join(target)}"
        assert not any(part.startswith("_") and part != "__init__" for part in target[2:]), (
            f"{path.name} imports the private module {'.'.join(target)}"
        )
        assert LAYERS[top] <= LAYERS[own_top], f"{path.name} (layer {own_top}) imports upward from {top}"
