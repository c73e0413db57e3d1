"""Every ```python block of README.md runs as written, in order, in one namespace.

Nothing is monkeypatched: the examples themselves are cheap enough for CI.  Plots use matplotlib's
Agg backend; files are written to a temporary working directory.  Any warning fails the test,
except a ``pdpboot.CoverageWarning`` the README itself announces.  The longer examples are the
documentation's gallery (docs/examples), executed by ``make docs``.
"""

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, code) of every fenced ```python block, in order."""
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def test_blocks_are_found():
    text = "intro\n```python\na = 1\n```\n\n```bash\nls\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n"), (10, "b = a + 1\n")]
    assert len(python_blocks(README.read_text(encoding="utf-8"))) >= 1


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import pdpboot

    monkeypatch.chdir(tmp_path)
    text = README.read_text(encoding="utf-8")
    namespace: dict = {"__name__": "__readme__"}
    announced = []
    try:
        for line, code in python_blocks(text):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("error")
                warnings.simplefilter("always", pdpboot.CoverageWarning)
                try:
                    exec(compile(code, f"README.md:{line}", "exec"), namespace)  # noqa: S102 - our own README
                except Exception as exc:
                    raise AssertionError(f"the README's python block at line {line} fails: "
                                         f"{type(exc).__name__}: {exc}") from exc
            announced += [w for w in caught if issubclass(w.category, pdpboot.CoverageWarning)]
    finally:
        plt.close("all")
    if announced:
        assert "CoverageWarning" in text, "a README example warns without the README saying so"
