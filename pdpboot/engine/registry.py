"""The registered PD engines, the choice among them, and the record of what was chosen and why.

An engine registers an :class:`Engine`: its ``name`` (a ``method=`` value), ``prepare``
(the *supports* test and the one reading of a fitted model: returns a prepared object,
or None when the engine does not handle the model / input / response), ``faster`` (the
cost model: whether its estimated cost for one feature set is not above brute force's),
``check`` (the self-check of its reading against the model's own response; a reason
string on disagreement) and the compute function (the prepared object's
``partial_dependence_many``).  Brute force (:mod:`.brute`) handles every model and
is what :func:`pdpboot.engine.compute_pd_many` falls back to; it is not registered.

``method="auto"`` tries the registered engines in order of registration: a feature set
goes to the first engine that supports the model, is estimated faster than brute force
and passes its self-check; the rest go to brute force.  ``method="<name>"`` uses that
engine for every feature set and raises (never falls back) when it does not support the
model or fails its self-check.

Every choice is recorded as an :class:`EngineChoice` (engine and reason); collect them
with :func:`record_engine_choices` (or ``compute_pd_many(..., choices=[])``) to put them
in result attrs.  A self-check failure is also logged (logger ``pdpboot.engine``).
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
    """Which engine computed one feature set, and why.

    ``fallback`` is True when an exact engine was tried and refused after reading the
    model (its self-check disagreed with the model's own predictions).
    """

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
    """Register (or replace) an exact engine under ``engine.name``.

    Raises
    ------
    ValueError
        For the reserved names ``"auto"`` and ``"brute"``.
    """
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
