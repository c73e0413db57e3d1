"""Text levels that look ordered ("None < Some < Marked", "Low/Medium/High", Likert scales).

A run never reorders such levels by itself (the words could mean something else in a given table);
it suggests ``--level-order`` (and the config file's ``[level_order]`` table) in the summary's notes.
"""

from __future__ import annotations

import re

#: Ordered scales of words (compared case-insensitively, ``_``/``-`` as spaces).  A column whose levels
#: (at least 3) all belong to one scale looks ordered, in the scale's order.
SCALES: tuple[tuple[str, ...], ...] = (
    ("none", "some", "marked"),
    ("none", "slight", "moderate", "marked", "severe"),
    ("none", "minimal", "mild", "moderate", "severe", "very severe", "extreme"),
    ("very low", "low", "medium", "high", "very high"),
    ("very low", "low", "moderate", "high", "very high"),
    ("lowest", "lower", "low", "middle", "high", "higher", "highest"),
    ("xxs", "xs", "s", "m", "l", "xl", "xxl", "xxxl"),
    ("extra small", "small", "medium", "large", "extra large"),
    ("tiny", "very small", "small", "medium", "large", "very large", "huge"),
    ("strongly disagree", "disagree", "somewhat disagree", "neither agree nor disagree", "somewhat agree", "agree",
     "strongly agree"),
    ("strongly disagree", "disagree", "neutral", "agree", "strongly agree"),
    ("never", "rarely", "sometimes", "often", "always"),
    ("never", "seldom", "occasionally", "frequently", "always"),
    ("very poor", "poor", "fair", "average", "good", "very good", "excellent"),
    ("very dissatisfied", "dissatisfied", "neutral", "satisfied", "very satisfied"),
    ("very unlikely", "unlikely", "neutral", "likely", "very likely"),
    ("very unhappy", "unhappy", "neutral", "happy", "very happy"),
    ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"),
)
_SPACES = re.compile(r"[\s_\-]+")


def _norm(value) -> str:
    return _SPACES.sub(" ", str(value).strip().casefold())


def ordinal_order(levels: list) -> list | None:
    """The levels in the order of the scale they all belong to, or None (fewer than 3, or no one scale).

    >>> ordinal_order(["Marked", "None", "Some"])
    ['None', 'Some', 'Marked']
    >>> ordinal_order(["high", "Low", "medium"])
    ['Low', 'medium', 'high']
    >>> ordinal_order(["red", "green", "blue"]) is None
    True
    """
    if len(levels) < 3:
        return None
    words = [_norm(v) for v in levels]
    if len(set(words)) != len(words):
        return None
    for scale in SCALES:
        if all(w in scale for w in words):
            return [v for _, v in sorted(zip(words, levels), key=lambda pair: scale.index(pair[0]))]
    return None


def level_order_note(column: str, levels: list, shown: str) -> str | None:
    """A note suggesting ``--level-order`` when ``levels`` (in the order the run uses) look ordered otherwise.

    ``shown`` says how the run orders them ("alphabetical", "pandas' category").
    """
    order = ordinal_order(levels)
    if order is None or [str(v) for v in order] == [str(v) for v in levels]:
        return None
    texts = [str(v) for v in order]
    toml = ", ".join('"' + t.replace('"', '\\"') + '"' for t in texts)
    key = column if re.fullmatch(r"[A-Za-z0-9_-]+", column) else '"' + column.replace('"', '\\"') + '"'
    return (f"Levels of {column!r} look ordered ({' < '.join(texts)}) but are shown in {shown} order "
            f"({', '.join(map(str, levels))}); to show them in their order, rerun with "
            f"--level-order '{column}={','.join(texts)}' (config file: [level_order] {key} = [{toml}]).")


__all__ = ["SCALES", "level_order_note", "ordinal_order"]
