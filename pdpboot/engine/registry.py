"""The registered PD engines, the choice among them, and the record of what was chosen and why.

An :class:`Engine` has a ``name`` (a ``method=`` value), ``prepare`` (reads a fitted model, or
None when unsupported), ``faster`` (its cost model against brute force), ``check`` (a self-check
against the model's own response) and a compute function.  ``method="auto"`` gives each feature set
to the first registered engine that supports the model, is estimated faster and passes its
self-check, else to brute force; ``method="<name>"`` never falls back.  Choices are recorded as
:class:`EngineChoice` (:func:`record_engine_choices`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Engine", "EngineChoice", "describe_choices", "record_engine_choices", "register", "registered"]

logger = logging.getLogger("pdpboot.engine")


@dataclass(frozen=True)
class EngineChoice:
    """Which engine computed one feature set, and why (``fallback``: an exact engine failed its self-check)."""

    feature_set: tuple[int, ...]
    engine: str
    reason: str
    fallback: bool = False


@dataclass(frozen=True)
class Engine:
    """A registered exact engine (see the module docstring)."""

    name: str
    prepare: Callable  # (estimator, X, response_method, n_grid) -> prepared or None
    faster: Callable  # (prepared, plan, individual) -> bool
    check: Callable  # (prepared, estimator, X, response_method, {column: grid}) -> reason or None
    supported: str  # what the engine handles, for the error of an explicit method=name


_ENGINES: dict[str, Engine] = {}
_RECORD: contextvars.ContextVar[list | None] = contextvars.ContextVar("pdpboot_engine_record", default=None)


def register(engine: Engine) -> Engine:
    """Register (or replace) an exact engine under ``engine.name`` (``"auto"`` and ``"brute"`` are reserved)."""
    if engine.name in ("auto", "brute"):
        raise ValueError(f"engine name {engine.name!r} is reserved.")
    _ENGINES[engine.name] = engine
    return engine


def registered() -> tuple[Engine, ...]:
    """The registered exact engines, in the order ``method="auto"`` tries them."""
    return tuple(_ENGINES.values())


@contextlib.contextmanager
def record_engine_choices() -> Iterator[list[EngineChoice]]:
    """Collect the :class:`EngineChoice` of every engine call made inside the block (this thread/task).

    Examples
    --------
    >>> from pdpboot.engine import record_engine_choices
    >>> with record_engine_choices() as choices:
    ...     pass
    >>> choices
    []
    """
    out: list[EngineChoice] = []
    token = _RECORD.set(out)
    try:
        yield out
    finally:
        _RECORD.reset(token)


def note(choices: list | None, record: list[EngineChoice]) -> None:
    """Add ``record`` to the caller's list and to an active :func:`record_engine_choices` block."""
    if choices is not None:
        choices.extend(record)
    active = _RECORD.get()
    if active is not None:
        active.extend(record)
    for choice in record:
        if choice.fallback:
            logger.warning("feature set %s: brute force instead of the %s engine: %s",
                           list(choice.feature_set), "exact", choice.reason)


def describe_choices(choices: list[EngineChoice]) -> str:
    """One line per distinct (engine, reason), e.g. for a result's attrs or a run summary."""
    seen: dict[tuple[str, str], list] = {}
    for c in choices:
        seen.setdefault((c.engine, c.reason), []).append(list(c.feature_set))
    return "; ".join(f"{engine}: {reason}" for engine, reason in seen)
