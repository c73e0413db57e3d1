"""Which run or call made a result: the reader of the configuration a ``pdpboot run`` records (``cli_config``)."""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["describe_origin", "run_config", "run_identity"]


def run_config(attrs: Mapping) -> dict:
    """The configuration a ``pdpboot run`` recorded in a result's root attrs (``cli_config``), parsed once.

    ``{}`` for a result made in Python (no ``cli_config``); a recorded text that is not JSON comes back
    as ``{"unparsed": text}`` (still one run's, still told apart from another run's).  The one reader
    of ``cli_config`` behind :func:`run_identity` and :func:`describe_origin`.

    >>> run_config({"cli_config": '{"data": "a.csv"}'})
    {'data': 'a.csv'}
    >>> run_config({"created": "t"}), run_config({"cli_config": "{oops"})
    ({}, {'unparsed': '{oops'})
    """
    config = attrs.get("cli_config")
    if not isinstance(config, str) or not config:
        return {}
    try:
        parsed = json.loads(config)
    except json.JSONDecodeError:
        return {"unparsed": config}
    return parsed if isinstance(parsed, dict) else {"unparsed": config}


def run_identity(attrs: Mapping) -> str:
    """What the result files of one computation share, from a result's root attrs.

    A ``pdpboot run`` writes its configuration (``cli_config``: options, the data's SHA-256, the
    creation time) into every file it writes, so its ``results.nc`` and ``ale.nc`` share it and no other
    run's files do.  A result made in Python is one call: its creation time, estimator, seed and rows.

    >>> run_identity({"cli_config": '{"created": "t"}'}) == run_identity({"cli_config": '{"created": "t"}'})
    True
    >>> run_identity({"created": "t1", "estimator": "m"}) == run_identity({"created": "t2", "estimator": "m"})
    False
    """
    config = run_config(attrs)
    if config:
        return "run " + json.dumps(config, sort_keys=True)
    return "call " + json.dumps([str(attrs.get(k, "")) for k in ("created", "estimator", "rng_entropy", "n_rows")])


def describe_origin(attrs: Mapping) -> str:
    """Which run or call made a result, in a few words (creation time, data file or model).

    >>> describe_origin({"cli_config": '{"created": "2026-01-01T00:00:00", "data": "a.csv"}'})
    "pdpboot run of 'a.csv' created 2026-01-01T00:00:00"
    >>> describe_origin({"created": "2026-01-02", "estimator": "Ridge(alpha=2)"})
    'Python call created 2026-01-02 (Ridge)'
    """
    config = run_config(attrs)
    if config:
        return f"pdpboot run of {config.get('data')!r} created {config.get('created', attrs.get('created'))}"
    model = str(attrs.get("estimator", "")).split("(")[0] or "unknown model"
    return f"Python call created {attrs.get('created', 'at an unrecorded time')} ({model})"
