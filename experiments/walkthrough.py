"""Run the code listings of the paper's API walkthrough (Section "Using pdpboot").

The listings are the ``lstlisting`` environments of ``paper/main.tex`` between the markers
``% walkthrough:begin`` and ``% walkthrough:end``.  They are executed in order, in one namespace,
in a scratch folder, so the code printed in the paper cannot rot: ``experiments/tests/test_experiments.py``
runs them with ``fast=True``, which only shrinks the sizes (the ``SHRINK`` table) before running.

    python -m experiments.walkthrough            # the paper's sizes (B = 200, a few minutes)
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from ._common import PAPER

#: Size arguments rewritten for the fast test run: (pattern in the listing, replacement).
SHRINK = [("make_electricity_prices(1000", "make_electricity_prices(300"), ("n_resamples=200", "n_resamples=20"),
          ("n_resamples=99", "n_resamples=3"), ("n_estimators=100", "n_estimators=5"), ("n_max=200", "n_max=50"),
          ("n_jobs=2", "n_jobs=1")]

_BLOCK = re.compile(r"\\begin\{lstlisting\}(?:\[[^\]]*\])?\n(.*?)\\end\{lstlisting\}", re.S)


def listings(tex: str | None = None) -> list[str]:
    """The code blocks of the walkthrough section of ``main.tex``, in order."""
    tex = (PAPER / "main.tex").read_text() if tex is None else tex
    begin, end = tex.index("% walkthrough:begin"), tex.index("% walkthrough:end")
    blocks = _BLOCK.findall(tex[begin:end])
    if not blocks:
        raise ValueError("No lstlisting blocks between the walkthrough markers of main.tex.")
    return blocks


def shrink(code: str) -> str:
    """The listing with the sizes of ``SHRINK`` made small (each pattern must occur somewhere)."""
    for old, new in SHRINK:
        code = code.replace(old, new)
    return code


def run(*, fast: bool = False, folder: str | os.PathLike | None = None) -> dict:
    """Execute the listings in order in one namespace inside ``folder`` (default: a scratch folder).

    Returns the namespace, so a caller can check what the code computed.
    """
    import matplotlib

    import pdpboot  # imported here, before the chdir, so that this checkout's package is the one used

    matplotlib.use("Agg")
    assert pdpboot.__file__  # noqa: S101 - keeps the import
    code = "\n".join(listings())
    if fast:
        missing = [old for old, _ in SHRINK if old not in code]
        if missing:
            raise ValueError(f"SHRINK patterns not found in the listings: {missing}; update SHRINK.")
        code = shrink(code)
    namespace: dict = {"__name__": "__walkthrough__"}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(folder or scratch)
        try:
            exec(compile(code, "main.tex listings", "exec"), namespace)  # noqa: S102 - our own paper's code
        finally:
            os.chdir(cwd)
    return namespace


if __name__ == "__main__":
    run(fast="--fast" in sys.argv, folder=Path.cwd())
