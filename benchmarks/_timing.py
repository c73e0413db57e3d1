"""Shared timing helper for the benchmark scripts: medians of repeated runs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeats: int = 3) -> float:
    """Median wall time of ``repeats`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_cpu(contenders: dict[str, Callable[[], object]], repeats: int) -> tuple[dict[str, list[float]], dict]:
    """CPU seconds of every contender, run in turn ``repeats`` times (interleaved, so load drifts hit all alike).

    Returns the list of times per contender and each contender's last output.
    """
    times: dict[str, list[float]] = {key: [] for key in contenders}
    outputs: dict = {}
    for _ in range(repeats):
        for key, fn in contenders.items():
            start = time.process_time()
            outputs[key] = fn()
            times[key].append(time.process_time() - start)
    return times, outputs
