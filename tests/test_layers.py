"""The house's import rules hold by themselves (ARCHITECTURE.md)."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pdpboot"
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
#: modules that work on plain arrays and must import without xarray
NUMPY_LAYER = sorted(
    [f"pdpboot.engine.{p.stem}" for p in (PACKAGE / "engine").glob("*.py") if p.stem != "__init__"]
    + ["pdpboot.engine", "pdpboot._plan", "pdpboot._evaluate", "pdpboot._loop", "pdpboot._validate",
       "pdpboot.grid", "pdpboot.checkpoint", "pdpboot.schema", "pdpboot.header", "pdpboot.options",
       "pdpboot._version", "pdpboot.caveats", "pdpboot.datasets"]
)
#: layer of each top-level module or package: a module may import only its own layer or lower ones
LAYERS = {
    "_version": 0, "schema": 0, "header": 0, "caveats": 0, "engine": 1, "_validate": 1, "grid": 1,
    "datasets": 1, "options": 2, "_plan": 2, "_evaluate": 2, "checkpoint": 2, "_loop": 3,
    "io": 4, "bootstrap": 5, "bands": 5, "ale": 5,
    "debiased": 6, "heterogeneity": 6, "interaction": 6, "regional": 6,
    "plotting": 7, "__init__": 8, "report": 9, "workflow": 10, "cli": 11, "__main__": 11,
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


def _top_level_modules() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir()
                                                     if p.is_dir() and (p / "__init__.py").is_file()}


def test_every_module_has_a_layer():
    assert set(LAYERS) == _top_level_modules(), (
        f"add to LAYERS (and ARCHITECTURE.md): {sorted(_top_level_modules() - set(LAYERS))}; "
        f"gone: {sorted(set(LAYERS) - _top_level_modules())}")


def _strip_parentheses(text: str) -> str:
    while True:
        stripped = re.sub(r"\([^()]*\)", "", text)
        if stripped == text:
            return text
        text = stripped


def documented_layers(markdown: str) -> dict[str, int]:
    """Module -> layer of ARCHITECTURE.md's layer table: each row ``| <layer> <title> | modules | ...``,
    whose modules are the backticked names outside parentheses of its second column."""
    section = markdown.split("## Layers", 1)[1].split("\n## ", 1)[0]
    out: dict[str, int] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.match(r"(\d+)\b", cells[0]) if len(cells) >= 2 else None
        if match:
            for name in re.findall(r"`([^`]+)`", _strip_parentheses(cells[1])):
                assert name not in out, f"{name} is in two rows of ARCHITECTURE.md's layer table"
                out[name.rstrip("/")] = int(match.group(1))
    return out


def test_documented_layers_parse():
    table = """## Layers\n| layer | modules |\n|---|---|\n| 0 names | `a` (`Not`: (nested `x`)), `b` |\n
| 3 loop | `c/` (package) |\n\n## Next\n| 4 x | `d` |"""
    assert documented_layers(table) == {"a": 0, "b": 0, "c": 3}


def test_architecture_md_and_the_layer_test_agree_on_every_module():
    documented = documented_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert documented == LAYERS, {
        "in LAYERS, not in ARCHITECTURE.md": sorted(set(LAYERS) - set(documented)),
        "in ARCHITECTURE.md, not in LAYERS": sorted(set(documented) - set(LAYERS)),
        "different layers": sorted((m, documented[m], LAYERS[m]) for m in set(LAYERS) & set(documented)
                                   if documented[m] != LAYERS[m]),
    }


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (relative imports, anywhere in the file, lazy ones too)."""
    modules = {_module_name(p) for p in _sources()}
    graph = {}
    for path in _sources():
        edges = set()
        for target, names in _imports(path):
            base = ".".join(target)
            for name in names:
                edges.add(f"{base}.{name}" if f"{base}.{name}" in modules else base)
        graph[_module_name(path)] = {m for m in edges if m in modules} - {_module_name(path)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (module -> imported modules) as [a, b, ..., a], or [] if none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_find_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    graph = _import_graph()
    assert "pdpboot.engine.pipeline" in graph["pdpboot.engine"]  # the graph sees package-internal imports
    assert find_cycle(graph) == []
