"""The size and shape of the package, measured: the target table of the house's third step.

Prints, for the source tree under ``--root`` (a checkout holding ``pdpboot/``, or the ``pdpboot/`` folder
itself; default this checkout), one Markdown table: lines of ``pdpboot/`` and of the library without the
command-line program (``workflow/``, ``cli.py``, ``report/``, ``__main__.py``), the library's docstring share,
modules, public callables and their largest signature, the longest function body, the largest module,
``**deprecated`` channels and the words the package should not carry ("round N", "issue N", "audit",
"session").  Static counts read the files with :mod:`ast`; the public API is imported from ``--root`` in a
child process (``PYTHONPATH=<root>``), so two trees can be measured side by side::

    python benchmarks/house_metrics.py                     # this checkout
    python benchmarks/house_metrics.py --root /work/main   # another tree
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: The command-line program inside ``pdpboot/`` (paths relative to it); the rest is the library.
CLIENT = ("workflow/", "report/", "cli.py", "__main__.py")
#: Words that belong to the project's history, not to the package (case-insensitive).
HISTORY_WORDS = {"round N": r"\bround \d", "issue N": r"\bissue \d", "audit": r"\baudit", "session": r"\bsession"}
#: Parameters of more than this many (``self`` excluded) exceed the target's cap.
SIGNATURE_CAP = 12


@dataclass(frozen=True)
class Module:
    """One ``.py`` file of the package: its path relative to ``pdpboot/`` and its parsed text."""

    rel: str
    text: str
    tree: ast.Module

    @property
    def lines(self) -> int:
        """Physical lines, as ``wc -l`` counts them."""
        return self.text.count("\n") + (not self.text.endswith("\n") and bool(self.text))

    @property
    def is_client(self) -> bool:
        """Whether the file belongs to the command-line program."""
        return self.rel.startswith(CLIENT[:2]) or self.rel in CLIENT[2:]


def read_package(package: Path) -> list[Module]:
    """Every ``.py`` file under ``package``, parsed."""
    out = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append(Module(path.relative_to(package).as_posix(), text, ast.parse(text)))
    return out


def docstring_lines(tree: ast.Module) -> int:
    """Lines taken by the module's, classes' and functions' docstrings."""
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                total += first.end_lineno - first.lineno + 1
    return total


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body without its docstring (from the first statement after it to the end)."""
    body = node.body
    if (len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]
    return node.end_lineno - body[0].lineno + 1


def functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of a module with its qualified name (``Class.method``, ``outer.inner``)."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def deprecated_channels(modules: list[Module]) -> list[str]:
    """Functions taking a ``**kwargs`` whose name says it collects deprecated or removed keywords."""
    return [f"{m.rel}:{name}(**{node.args.kwarg.arg})" for m in modules for name, node in functions(m.tree)
            if node.args.kwarg is not None and re.search(r"deprecat|removed|legacy|old", node.args.kwarg.arg)]


#: Run in a child process with the tree on ``PYTHONPATH``: every public callable reachable from
#: ``pdpboot.__all__`` (functions, classes and their public methods, public modules' ``__all__``), with its
#: parameters (``self``/``cls`` excluded; for each, whether it is a ``*args``/``**kwargs``) and, where its
#: source is in the package, its file and first line.
_PUBLIC_API = r"""
import importlib, inspect, json, sys, types
import pdpboot
root = sys.argv[1]
assert pdpboot.__file__.startswith(root), f"imported {pdpboot.__file__}, not the tree under {root}"
seen, out = set(), []

def params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()
            if p.name not in ("self", "cls")]

def where(obj):
    obj = inspect.unwrap(obj)
    code = getattr(obj, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else (None, None)

def visit(name, obj):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, types.ModuleType):
        for sub in getattr(obj, "__all__", []):
            visit(f"{name}.{sub}", getattr(obj, sub))
    elif inspect.isclass(obj):
        out.append({"name": name, "kind": "class", "params": params(obj), "file": None, "line": None})
        for attr, member in vars(obj).items():
            if not attr.startswith("_") and inspect.isfunction(member):
                f, line = where(member)
                out.append({"name": f"{name}.{attr}", "kind": "method", "params": params(member),
                            "file": f, "line": line})
    elif callable(obj):
        f, line = where(obj)
        out.append({"name": name, "kind": "function", "params": params(obj), "file": f, "line": line})

for name in pdpboot.__all__:
    if not name.startswith("_"):
        visit(f"pdpboot.{name}", getattr(pdpboot, name))
print(json.dumps(out))
"""


def public_api(root: Path) -> list[dict]:
    """The public callables of the package under ``root`` (see ``_PUBLIC_API``), imported in a child process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    proc = subprocess.run([sys.executable, "-c", _PUBLIC_API, str(root)], env=env, cwd=root, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"importing pdpboot from {root} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def public_body_lines(api: list[dict], modules: list[Module], package: Path) -> list[tuple[int, str]]:
    """(body lines, name) of every public function and method whose definition is in the package."""
    by_file = {str((package / m.rel).resolve()): m for m in modules}
    out = []
    for entry in api:
        module = by_file.get(str(Path(entry["file"]).resolve())) if entry["file"] else None
        if module is None:
            continue
        for _, node in functions(module.tree):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if first == entry["line"] or node.lineno == entry["line"]:
                out.append((body_lines(node), entry["name"]))
                break
    return out


def measure(root: Path) -> list[tuple[str, str, str]]:
    """The table's rows: (quantity, value, target)."""
    package = root / "pdpboot" if (root / "pdpboot").is_dir() else root
    root = package.parent
    modules = read_package(package)
    library = [m for m in modules if not m.is_client]
    lib_lines = sum(m.lines for m in library)
    doc_share = sum(docstring_lines(m.tree) for m in library) / lib_lines
    doc_share_all = sum(docstring_lines(m.tree) for m in modules) / sum(m.lines for m in modules)
    api = public_api(root)
    callables = [e for e in api if e["kind"] in ("function", "class")]
    sizes = [(len(e["params"]), e["name"]) for e in api if e["params"] is not None]
    named = [(len(e["params"]) - sum(e["params"]), e["name"]) for e in api if e["params"] is not None]
    named_max = max(n for n, _ in named)
    at_named_max = sorted(name for n, name in named if n == named_max)
    largest = max(sizes)
    at_largest = sorted(name for n, name in sizes if n == largest[0])
    over_cap = sorted(f"{name} ({n})" for n, name in sizes if n > SIGNATURE_CAP)
    bodies = public_body_lines(api, modules, package)
    longest_public = max(bodies) if bodies else (0, "-")
    any_body = max((body_lines(node), f"{m.rel}:{name}") for m in modules for name, node in functions(m.tree))
    biggest = max((m.lines, m.rel) for m in modules)
    channels = deprecated_channels(modules)
    words = {label: sum(len(re.findall(rx, m.text, flags=re.IGNORECASE)) for m in modules)
             for label, rx in HISTORY_WORDS.items()}
    tests = sum(p.read_text(encoding="utf-8").count("\n") for p in (root / "tests").rglob("*.py")) \
        if (root / "tests").is_dir() else 0
    return [
        ("`pdpboot/` lines (library + command-line program)", f"{sum(m.lines for m in modules):,}", "≤ 19,000"),
        ("library without `workflow/`, `cli.py`, `report/`, `__main__.py`", f"{lib_lines:,}", "≤ 13,000"),
        ("docstring share of the library (of all `pdpboot/`)", f"{doc_share:.1%} ({doc_share_all:.1%})", "≤ 25 %"),
        ("modules (`.py` files of `pdpboot/`; of the library)", f"{len(modules)}; {len(library)}", "≤ 65"),
        ("public functions / classes (from `pdpboot.__all__`)",
         f"{sum(e['kind'] == 'function' for e in callables)} / {sum(e['kind'] == 'class' for e in callables)}", ""),
        ("largest public signature (parameters, `self` excluded, a `**kwargs` counts one)",
         f"{largest[0]} ({len(at_largest)} at it: {', '.join(at_largest)})", f"≤ {SIGNATURE_CAP}"),
        ("largest public signature without `*args`/`**kwargs`",
         f"{named_max} ({len(at_named_max)} at it: {', '.join(at_named_max)})", f"≤ {SIGNATURE_CAP}"),
        (f"public callables above {SIGNATURE_CAP} parameters", f"{len(over_cap)}: {', '.join(over_cap) or '-'}", "0"),
        ("longest public function body (lines, docstring excluded)", f"{longest_public[0]} ({longest_public[1]})",
         "≤ 60"),
        ("longest function body anywhere in `pdpboot/`", f"{any_body[0]} ({any_body[1]})", ""),
        ("largest module (lines)", f"{biggest[0]:,} ({biggest[1]})", "≤ 800"),
        ("`**deprecated` channels", f"{len(channels)}: {', '.join(channels) or '-'}", "0"),
        ("'round N' / 'issue N' / 'audit' / 'session' in `pdpboot/`",
         " / ".join(str(v) for v in words.values()) + f" (total {sum(words.values())})", "0"),
        ("`tests/` lines", f"{tests:,}", ""),
    ]


def main(argv: list[str] | None = None) -> None:
    """Print the table for ``--root`` as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="a checkout holding pdpboot/ (or the pdpboot/ folder); default this checkout")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    rows = measure(root)
    print(f"House metrics of {root}\n")
    print("| | measured | target |\n|---|---|---:|")
    for quantity, value, target in rows:
        print(f"| {quantity} | {value} | {target} |")


if __name__ == "__main__":
    main()
