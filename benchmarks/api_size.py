"""Size of the public API and of the modules, before and after a change.

``python benchmarks/api_size.py OUT.json`` (with ``PYTHONPATH`` pointing at the code to measure) records,
for every public callable in ``pdpboot.__all__``, its parameters (all of ``inspect.signature``, and the
named ones: without a ``**deprecated`` channel) and the lines of its body (without the docstring), and
the line count of every module; ``python benchmarks/api_size.py BEFORE.json AFTER.json`` prints both as
Markdown tables.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
from pathlib import Path


def _body_lines(obj) -> int | None:
    """Lines of a function's body (or a class's ``__init__``/fields) without its docstring."""
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if not body:
        return 0
    return body[-1].end_lineno - body[0].lineno + 1


def measure() -> dict:
    import pdpboot

    public = {}
    for name in pdpboot.__all__:
        obj = getattr(pdpboot, name)
        if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
            continue
        params = inspect.signature(obj).parameters.values()
        public[name] = {"parameters": len(params),
                        "named": sum(p.kind != p.VAR_KEYWORD for p in params),
                        "body_lines": _body_lines(obj)}
    root = Path(pdpboot.__file__).parent
    modules = {str(p.relative_to(root)): len(p.read_text().splitlines()) for p in sorted(root.rglob("*.py"))}
    return {"public": public, "modules": modules}


def table(before: dict, after: dict) -> str:
    lines = ["| public callable | parameters before | parameters after | body lines before | body lines after |",
             "|---|---:|---:|---:|---:|"]
    for name in sorted(set(before["public"]) | set(after["public"])):
        b, a = before["public"].get(name, {}), after["public"].get(name, {})

        def params(d):
            if not d:
                return "-"
            return str(d["named"]) + (" (+ **kwargs)" if d["parameters"] != d["named"] else "")

        body = f"{b.get('body_lines', '-')} | {a.get('body_lines', '-')}"
        lines.append(f"| {name} | {params(b)} | {params(a)} | {body} |")
    lines += ["", "| module | lines before | lines after |", "|---|---:|---:|"]
    for name in sorted(set(before["modules"]) | set(after["modules"])):
        b, a = before["modules"].get(name, "-"), after["modules"].get(name, "-")
        if b != a:
            lines.append(f"| {name} | {b} | {a} |")
    total_b, total_a = sum(before["modules"].values()), sum(after["modules"].values())
    lines.append(f"| (all {len(after['modules'])} modules) | {total_b} | {total_a} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        Path(sys.argv[1]).write_text(json.dumps(measure(), indent=1))
    else:
        print(table(json.loads(Path(sys.argv[1]).read_text()), json.loads(Path(sys.argv[2]).read_text())))
