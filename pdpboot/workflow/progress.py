"""Progress of the bootstrap as plain lines (run.log, nohup, CI), from tqdm's bar.

:func:`bootstrap_progress` turns the bar's counts into a line every few seconds (``Bootstrap: 12/30
resamples (40 %), 2.3 fits/s, about 8 s left``); the rate is measured from the first finished
resample on, so one-time start-up work does not inflate the time left.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import time
from collections.abc import Callable

_COUNT = re.compile(r"resamples:.*?(\d+)/(\d+)")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressLines(io.TextIOBase):
    """A text stream standing in for stderr: reads tqdm's counts, emits periodic lines."""

    def __init__(self, emit: Callable[[str], None], *, show_bar_on=None, min_gap: float = 5.0,
                 max_gap: float = 60.0):
        self.emit, self.bar, self.min_gap, self.max_gap = emit, show_bar_on, min_gap, max_gap
        self.start = self.last = time.perf_counter()
        self.done = self.first = self.total = None
        self.warm = None  # (time, count) at the first finished resample: the rate is measured from here
        self.last_tenth = -1

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.bar is not None:
            self.bar.write(text)
        for part in re.split(r"[\r\n]", text):
            found = _COUNT.search(part)
            if found:
                self._update(int(found[1]), int(found[2]))
            elif part.strip() and self.bar is None:
                sys.__stderr__.write(part + "\n")
        return len(text)

    def flush(self) -> None:
        if self.bar is not None:
            self.bar.flush()

    def _update(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first, self.total = done, total  # resumed resamples count as done before the start
        if self.done is not None and done <= self.done:
            return
        self.done = done
        if self.warm is None and done > self.first:
            self.warm = (now, done)
        tenth = int(10 * done / max(total, 1))
        due = now - self.last >= self.max_gap or (tenth > self.last_tenth and now - self.last >= self.min_gap)
        if due or done == total:
            self.last, self.last_tenth = now, tenth
            self.emit(self.line(now))

    def line(self, now: float | None = None) -> str:
        now = time.perf_counter() if now is None else now
        text = f"Bootstrap: {self.done}/{self.total} resamples ({100 * self.done / max(self.total, 1):.0f} %)"
        if self.warm is None:
            return text
        since, count = self.warm
        fitted = self.done - count
        if fitted > 0 and now > since:
            rate = fitted / (now - since)
            text += f", {rate:.3g} fits/s"
            if self.done < self.total:
                text += f", about {_duration((self.total - self.done) / rate)} left"
        elif self.done < self.total:
            text += " (time left: after the next resamples; the first ones include start-up)"
        return text


def bootstrap_progress(call: Callable[[], object], *, emit: Callable[[str], None], n_resamples: int,
                       terminal: bool):
    """Run ``call`` (which must draw its tqdm bar on ``sys.stderr``) with progress lines.

    Returns
    -------
    object
        What ``call`` returned.  A last line says that all ``n_resamples`` are done.
    """
    sink = ProgressLines(emit, show_bar_on=sys.stderr if terminal else None)
    with contextlib.redirect_stderr(sink):
        out = call()
    elapsed = time.perf_counter() - sink.start
    # the closing line is emitted outside the redirection, so it reaches the caller's stderr too
    emit(f"Bootstrap: {n_resamples}/{n_resamples} resamples (100 %) in {_duration(elapsed)}")
    return out
