"""The option objects every resampling entry point shares: :class:`Resampling` (what is resampled) and
:class:`Execution` (how the resamples run), frozen and validated when made."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._validate import (
    check_choice,
    check_n_resamples,
    check_optional_positive_int,
    check_path,
    check_positive_int,
    check_subsample_fraction,
)
from .caveats import auto_scheme_reason
from .engine import METHODS, resample
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.resample import Scheme

BACKGROUNDS = ("resample", "original", "out-of-bag")
ON_ERROR = ("raise", "skip")
#: the scales a PD's bands are formed on: as computed, or (a probability PD) on the logit scale
BAND_SCALES = ("identity", "logit")


def check_fit_params(fit_params: Mapping | None) -> dict:
    """``fit_params`` checked: a dict of fit keywords, without ``sample_weight``."""
    if fit_params is None:
        return {}
    if not isinstance(fit_params, Mapping) or not all(isinstance(k, str) for k in fit_params):
        raise TypeError(f"fit_params must be a dict of fit keyword arguments, got {type(fit_params).__name__}.")
    if "sample_weight" in fit_params:
        raise ValueError("Pass sample weights as sample_weight=..., not in fit_params: they also weight the PD.")
    return dict(fit_params)


@dataclass(frozen=True, eq=False)
class Resampling:
    """What is resampled, and which rows each resample's effect is averaged over.

    Parameters
    ----------
    scheme : {"auto", "bootstrap", "stratified", "subsample", "group"}
        ``auto``: ``subsample`` with logit-scale bands for a classifier's
        predicted probabilities, ``bootstrap`` otherwise.  ``bootstrap``: n
        rows with replacement.  ``stratified``: each class keeps its count.
        ``subsample``: a share of the rows without replacement (deviations
        rescaled by ``sqrt(m / (n - m))``).  ``group``: whole groups with
        replacement.  See the validation page of the documentation.
    n_resamples : int
        Number of resamples B.
    groups : array-like of shape (n_rows,), optional
        Group labels of ``scheme="group"``.
    subsample_fraction : float
        Share of the rows each ``subsample`` resample draws, in (0, 1).
    background : {"resample", "original", "out-of-bag"}
        Rows each resample's effect is averaged over: its own (with their
        multiplicities), the full data's, or those it did not draw.
    max_background : int, optional
        Average over a random subsample of at most this many of those rows.
    fit_params : dict, optional
        Keyword arguments of every ``fit``; per-row arrays are resampled with the rows.

    Examples
    --------
    >>> scheme = Resampling("subsample", subsample_fraction=0.5).scheme_for(101, None, classifier=False)
    >>> scheme.size(101), round(scheme.rescale(101), 3)
    (50, 0.99)
    """

    scheme: str = "auto"
    n_resamples: int = 200
    groups: Any = None
    subsample_fraction: float = 0.632
    background: str = "resample"
    max_background: int | None = None
    fit_params: Mapping | None = None

    def __post_init__(self):
        check_choice(self.scheme, "resampling", ("auto", *resample.SCHEMES))  # the live registry
        check_choice(self.background, "background", BACKGROUNDS)
        set_ = object.__setattr__
        set_(self, "fit_params", check_fit_params(self.fit_params))
        set_(self, "n_resamples", check_n_resamples(self.n_resamples))
        set_(self, "max_background", check_optional_positive_int(self.max_background, "max_background"))
        may_subsample = "subsample" if self.scheme == "auto" else self.scheme  # against n rows: scheme_for
        set_(self, "subsample_fraction", check_subsample_fraction(self.subsample_fraction, 2**62, may_subsample))
        if self.scheme == "group" and self.groups is None:
            raise ValueError("resampling='group' needs groups (one label per row of X).")
        set_(self, "groups", np.asarray(self.groups) if self.scheme == "group" else None)
        if self.groups is not None:
            if self.groups.ndim != 1:
                raise ValueError("groups must hold one label per row of X (a 1-D array), got shape "
                                 f"{self.groups.shape}.")
            if pd.isna(self.groups).any():
                raise ValueError(f"groups holds {int(pd.isna(self.groups).sum())} missing label(s); give every row "
                                 "a group (e.g. its own label).")
            resample.Group(self.groups).check_varies(len(self.groups))

    def resolve(self, *, probabilities: bool, output: str = "predictions") -> tuple[Resampling, SchemeChoice]:
        """The scheme that draws rows, and why: ``"auto"`` resolved from whether the effect averages
        ``probabilities`` (``output``: what is averaged, for the reason); any other scheme is kept.

        Examples
        --------
        >>> scheme, choice = Resampling().resolve(probabilities=True)
        >>> scheme.scheme, choice.band_scale
        ('subsample', 'logit')
        >>> Resampling().resolve(probabilities=False)[0].scheme
        'bootstrap'
        """
        if self.scheme != "auto":
            return self, SchemeChoice(self.scheme, self.scheme, "identity", output)
        scheme = "subsample" if probabilities else "bootstrap"
        resolved = dataclasses.replace(self, scheme=scheme)
        return resolved, SchemeChoice("auto", scheme, "logit" if probabilities else "identity", output,
                                      resolved.subsample_fraction)

    def scheme_for(self, n_rows: int, y, *, classifier: bool) -> Scheme:
        """The scheme that draws the jobs, bound to the data and checked against it (before any fit)."""
        if self.scheme == "auto":
            raise ValueError("resampling='auto' is resolved before binding (Resampling.resolve); this is a bug.")
        check_subsample_fraction(self.subsample_fraction, n_rows, self.scheme)
        scheme = resample.SCHEMES[self.scheme].bind(self, y, n_rows=n_rows, classifier=classifier)
        scheme.check_varies(n_rows)
        return scheme

    @property
    def settings(self) -> dict:
        """JSON-able record (provenance and checkpoint fingerprint)."""
        return {"resampling": self.scheme, "subsample_fraction": self.subsample_fraction,
                "background": self.background, "max_background": self.max_background,
                "groups": self.groups is not None}


@dataclass(frozen=True)
class SchemeChoice:
    """How a run's scheme was chosen: the one ``requested``, the ``scheme`` that draws rows, the
    ``band_scale`` of the PD's bands and the ``output`` averaged (recorded in the root attrs)."""

    requested: str
    scheme: str
    band_scale: str
    output: str = "predictions"
    subsample_fraction: float = 0.632

    @property
    def reason(self) -> str:
        """One sentence on why ``"auto"`` chose ``scheme`` and ``band_scale`` (empty when the user chose)."""
        if self.requested != "auto":
            return ""
        return auto_scheme_reason(self.band_scale == "logit", self.output, self.subsample_fraction)


@dataclass(frozen=True)
class Execution:
    """How the resamples run: where, with how many threads, what is kept and what a failure does.

    Parameters
    ----------
    n_jobs : int, optional
        Parallel resamples (joblib); results are identical for any value.
    threads_per_job : int, optional
        Native threads per fit (None: the libraries' default when sequential, 1 when parallel).
    progress : bool, "auto" or callable
        A tqdm bar ("auto": on a terminal, for B >= 20), or ``progress(done, total)``.
    checkpoint : path, optional
        Directory of finished resamples; the same call again resumes (or
        extends, with a larger ``n_resamples``).
    on_error : {"raise", "skip"}
        A failing resample stops the run, or is recorded as NaN (root attr ``failed_resamples``).
    max_failure_share : float
        With ``on_error="skip"``, stop once more than this share has failed.
    method : {"auto", "brute", "tree"}
        The PD engine: the exact tree engine where it applies (``auto``) or always, or brute force.
    memory_limit : int
        Bytes allowed for one stacked prediction block (brute force, ALE, H statistics).

    Examples
    --------
    >>> Execution(n_jobs=2, on_error="skip").threads, Execution().threads
    (1, None)
    """

    n_jobs: int | None = None
    threads_per_job: int | None = None
    progress: bool | str | Callable[[int, int], None] = "auto"
    checkpoint: str | os.PathLike | None = None
    on_error: str = "raise"
    max_failure_share: float = 0.1
    method: str = "auto"
    memory_limit: int = DEFAULT_MEMORY_LIMIT

    def __post_init__(self):
        if self.n_jobs is not None and (isinstance(self.n_jobs, (bool, np.bool_))
                                        or not isinstance(self.n_jobs, (int, np.integer)) or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be a number of parallel jobs (1, 2, ...; -1 for every core, -2 for all "
                             f"but one) or None, got {self.n_jobs!r:.40}.")
        if not (self.progress in (True, False, "auto") or callable(self.progress)):
            raise ValueError(f"progress must be True, False, 'auto' or a function progress(done, total), got "
                             f"{self.progress!r:.40}.")
        if self.checkpoint is not None:
            check_path(self.checkpoint, "checkpoint", folder=True)
        check_choice(self.on_error, "on_error", ON_ERROR)
        check_choice(self.method, "method", METHODS)
        if isinstance(self.memory_limit, bool) or not (isinstance(self.memory_limit, (int, np.integer))
                                                       and self.memory_limit > 0):
            raise ValueError(f"memory_limit must be a positive number of bytes, got {self.memory_limit!r}.")
        if (isinstance(self.max_failure_share, (bool, np.bool_)) or not isinstance(self.max_failure_share, (int, float))
                or not 0 <= self.max_failure_share < 1):
            raise ValueError(f"max_failure_share must be in [0, 1), got {self.max_failure_share!r}.")
        if self.threads_per_job is not None:
            object.__setattr__(self, "threads_per_job", check_positive_int(self.threads_per_job, "threads_per_job", 1))
        object.__setattr__(self, "max_failure_share", float(self.max_failure_share))
        object.__setattr__(self, "memory_limit", int(self.memory_limit))

    @property
    def threads(self) -> int | None:
        """Native threads per fit: ``threads_per_job``, else None when sequential, 1 when parallel."""
        if self.threads_per_job is not None:
            return self.threads_per_job
        from joblib import effective_n_jobs

        return None if effective_n_jobs(self.n_jobs) == 1 else 1

    def check_used(self, function: str, used: Iterable[str]) -> None:
        """Refuse fields ``function`` does not use, instead of ignoring them silently."""
        defaults = Execution()
        unused = [f.name for f in dataclasses.fields(self) if f.name not in used
                  and not _same(getattr(self, f.name), getattr(defaults, f.name))]
        if unused:
            raise ValueError(f"Execution({unused[0]}=...) does not apply to {function}, which uses only "
                             f"{', '.join(used)}; leave it at its default.")


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def resolve_resampling(resampling: str | Resampling | None = "auto", *, n_resamples: int = 200) -> Resampling:
    """A :class:`Resampling` from the object or a scheme name, with the ``n_resamples`` shortcut filled in
    where the object leaves it at its default (a contradiction is refused)."""
    if resampling is None or isinstance(resampling, str):
        return Resampling(*(() if resampling is None else (resampling,)), n_resamples=n_resamples)
    if not isinstance(resampling, Resampling):
        raise TypeError(f"resampling must be a pdpboot.Resampling (or a scheme name), got {type(resampling).__name__}.")
    default, given = Resampling.n_resamples, resampling.n_resamples
    if _same(n_resamples, default):
        return resampling
    if not _same(given, default) and not _same(given, n_resamples):
        raise TypeError(f"n_resamples={n_resamples!r} contradicts resampling=Resampling(n_resamples={given!r}); "
                        "give it in one place.")
    return dataclasses.replace(resampling, n_resamples=n_resamples)


def resolve_execution(execution: Execution | None = None) -> Execution:
    """``execution``, or the default :class:`Execution`."""
    if execution is None:
        return Execution()
    if not isinstance(execution, Execution):
        raise TypeError(f"execution must be a pdpboot.Execution, got {type(execution).__name__}.")
    return execution


def resolve_run_options(resampling: str | Resampling | None, execution: Execution | None, *,
                        n_resamples: int) -> tuple[Resampling, Execution]:
    """A public function's :class:`Resampling` and :class:`Execution`, from the objects and the shortcut."""
    return resolve_resampling(resampling, n_resamples=n_resamples), resolve_execution(execution)
