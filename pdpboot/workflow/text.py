"""Data shown as text: inert Markdown, numbers that print round-off as 0, safe file names."""

from __future__ import annotations

import importlib.util
import re
import unicodedata

import numpy as np


def safe_filename(label: str, taken: set[str], *, limit: int = 60) -> str:
    """A unique file-name stem from a feature name: letters, digits, ``_`` and ``-`` only.

    Accented Latin letters lose their accents (NFKD: ``année`` -> ``annee``); other letters
    (Greek, CJK, ...) are kept as they are; anything else becomes ``_``.  Unique case-insensitively.
    """
    decomposed = unicodedata.normalize("NFKD", str(label))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    plain = unicodedata.normalize("NFC", plain)
    stem = re.sub(r"[^\w-]+", "_", plain).strip("_-")[:limit] or "feature"
    name, k = stem, 2
    while name.lower() in taken:
        name, k = f"{stem}-{k}", k + 1
    taken.add(name.lower())
    return name


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_MARKUP = re.compile(r"([\\`*_\[\]#|~])")
MAX_NAME = 120  # longest data text shown in summary.md


def md(text, limit: int = MAX_NAME) -> str:
    """Data as inert Markdown text: never markup, links, HTML or terminal escapes.

    Control characters (terminal escapes included) and bidirectional overrides are removed,
    line breaks become spaces, Markdown punctuation is backslash-escaped, ``<``/``>``/``&`` become
    entities and ``://`` / ``www.`` are broken so no autolink forms; cut to ``limit`` characters.
    """
    text = re.sub(r"[\r\n\t]+", " ", str(text))
    text = _CONTROL.sub("", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKUP.sub(r"\\\1", text)
    text = re.sub(r":(?=//)", "&#58;", text)
    return re.sub(r"(?i)\bwww\.", "www&#46;", text)


def num(value, scale: float | None = None) -> str:
    """A number with 4 significant digits; 0 when it is within 1e-9 of ``scale`` of zero (round-off)."""
    value = float(value)
    if np.isnan(value):
        return "–"
    if value == 0 or (scale is not None and abs(value) <= 1e-9 * abs(scale)):
        return "0"
    return f"{value:.4g}"


def workbook_line(sheets) -> str:
    """The summary's line on ``workbook.xlsx`` (``sheets`` None: no workbook was written)."""
    if sheets is None:
        if importlib.util.find_spec("openpyxl") is None:
            return ('- no workbook: it needs openpyxl, which is not installed (`pip install "pdpboot[excel]"`).')
        return "- no workbook (`--no-workbook`)."
    names = ["Data", "TestPredictions", "Parameters", "Metrics", *[md(title) for title, _ in sheets]]
    return (f"- `workbook.xlsx`: sheets {', '.join(names)}. Column `row` of Data and TestPredictions and the "
            "`ice row N` columns number the rows of the input table from 0.")


def file_sections(result_lines: list[str], repro_line: str, *, sheets, files, notes, failures) -> list[str]:
    """The summary's "Files", "What was done to the data" and (if any) "Problems" sections."""
    lines = ["", "## Files", "",
             "- `report.html`: this summary with every figure, interactive (hover for the numbers), and the "
             "provenance, in one file that opens in any browser without a network.",
             *result_lines, workbook_line(sheets),
             *[f"- `{path}`: {md(what, limit=2000)}" for path, what in files],
             repro_line, "- `run.log`: every step, with what was done to the data."]
    lines += ["", "## What was done to the data", ""]
    lines += [f"- {md(n, limit=2000)}" for n in notes] or ["- nothing: all columns numeric, no missing values."]
    if failures:
        lines += ["", "## Problems", ""] + [f"- {md(f, limit=2000)}" for f in failures]
    return lines
