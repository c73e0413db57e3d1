"""The two option objects every resampling entry point shares: :class:`Resampling` and :class:`Execution`.

``Resampling`` says *what* is resampled (scheme, number of resamples, groups,
subsample size, the rows each resample's effect is averaged over);
``Execution`` says *how* the resamples run (parallel jobs, native threads,
checkpoint, failures, progress).  Both are frozen and validated once, when
they are made; the data-dependent checks (one group label per row, a
classifier for ``stratified``) run once more in :meth:`Resampling.bind`, before
any fit.  The public functions accept them (``resampling=Resampling(...)``,
``execution=Execution(...)``) and keep the keyword shortcuts users of
scikit-learn and SciPy expect (``n_resamples=``); :func:`resolve_run_options`
is the one place a public function's shortcuts and objects become a
``Resampling`` and an ``Execution``.  Nothing here fits a model or imports
xarray.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import (
    check_choice,
    check_n_resamples,
    check_optional_positive_int,
    check_positive_int,
    check_subsample_fraction,
)
from .caveats import auto_scheme_reason
from .engine import METHODS, resample
from .engine.brute import DEFAULT_MEMORY_LIMIT
from .engine.resample import RESAMPLING, Scheme

__all__ = ["BACKGROUNDS", "BAND_SCALES", "ON_ERROR", "SCHEMES", "Execution", "Resampling", "SchemeChoice",
           "check_fit_params", "resolve_execution", "resolve_resampling", "resolve_run_options"]

BACKGROUNDS = ("resample", "original", "out-of-bag")
ON_ERROR = ("raise", "skip")
#: Every ``resampling=`` a user may give: ``"auto"`` and the schemes that draw rows.
SCHEMES = ("auto", *RESAMPLING)
#: The scales a PD's bands are formed on: as computed, or (a probability PD) on the logit scale, mapped back.
BAND_SCALES = ("identity", "logit")


def check_fit_params(fit_params: Mapping | None) -> dict:
    """Keyword arguments routed to every ``fit`` (arrays with one entry per row are sliced)."""
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
        ``auto`` (default): chosen by :meth:`resolve` before the first fit,
        from what the PD averages: for a classifier's predicted probabilities
        ``subsample`` (``subsample_fraction`` of the rows, 0.632 by default)
        with the PD's bands formed on the logit scale and mapped back; for
        everything else (regressors, decision functions) ``bootstrap``.  The
        result records the scheme, the band scale and why (root attrs
        ``resampling``, ``band_scale``, ``resampling_reason``).
        ``bootstrap``: n rows drawn with replacement.  ``stratified``: each
        class keeps its count (right only when the design fixes the class
        counts, e.g. case-control sampling).  ``subsample``: ``subsample_size``
        rows without replacement (bands rescale the deviations by
        ``sqrt(m / (n - m))``; see :func:`pdpboot.bootstrap_partial_dependence`
        for what was measured).  ``group``: whole groups drawn with
        replacement (a cluster bootstrap; needs ``groups``).
    n_resamples : int
        Number of resamples B.
    groups : array-like of shape (n_rows,), optional
        Group labels of ``scheme="group"``.
    subsample_fraction : float
        Share of the rows each ``subsample`` resample draws, in (0, 1).
    background : {"resample", "original", "out-of-bag"}
        Rows each resample's effect is averaged over: its own rows with their
        multiplicities (default), the full data's rows, or the rows it did not
        draw.
    max_background : int, optional
        Average over at most this many rows (a fixed random subsample of the
        full data for the estimate and ``original``; a random subsample of each
        resample's rows otherwise).
    fit_params : dict, optional
        Keyword arguments of every ``fit``; arrays with one entry per row are
        resampled with the rows (as ``groups`` are; as
        ``sklearn.model_selection.cross_validate`` slices its ``params``),
        anything else is passed unchanged.  Sample weights go in
        ``sample_weight=`` (they also weight the effect's average).

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
        check_choice(self.scheme, "resampling", SCHEMES)
        object.__setattr__(self, "fit_params", check_fit_params(self.fit_params))
        check_choice(self.background, "background", BACKGROUNDS)
        set_ = object.__setattr__
        set_(self, "n_resamples", check_n_resamples(self.n_resamples))
        set_(self, "max_background", check_optional_positive_int(self.max_background, "max_background"))
        # the type and range of the share here; that it leaves every subsample enough rows, in bind()
        may_subsample = "subsample" if self.scheme == "auto" else self.scheme  # "auto" may become "subsample"
        set_(self, "subsample_fraction", check_subsample_fraction(self.subsample_fraction, 2**62, may_subsample))
        if self.scheme == "group" and self.groups is None:
            raise ValueError("resampling='group' needs groups (one label per row of X).")
        set_(self, "groups", np.asarray(self.groups) if self.scheme == "group" else None)

    def resolve(self, *, probabilities: bool, output: str = "predictions") -> tuple[Resampling, SchemeChoice]:
        """The scheme that draws rows, and why: ``"auto"`` resolved (any other scheme is kept as given).

        Parameters
        ----------
        probabilities : bool
            Whether the effect averages a classifier's predicted probabilities
            (``response_method`` ``"predict_proba"``, or ``"auto"`` for a classifier that has it).
        output : str
            What the model's averaged output is, in a few words (for the reason sentence).

        Returns
        -------
        resampling : Resampling
            With a scheme of :data:`pdpboot.engine.resample.RESAMPLING`.
        choice : SchemeChoice
            The requested and resolved scheme, the scale of the PD's bands and the reason.

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
        return resample.SCHEMES[self.scheme].bind(self, y, n_rows=n_rows, classifier=classifier)

    @property
    def settings(self) -> dict:
        """JSON-able record (provenance and checkpoint fingerprint)."""
        return {"resampling": self.scheme, "subsample_fraction": self.subsample_fraction,
                "background": self.background, "max_background": self.max_background,
                "groups": self.groups is not None}


@dataclass(frozen=True)
class SchemeChoice:
    """How a run's resampling scheme was chosen (recorded in the result's root attrs).

    Attributes
    ----------
    requested : str
        The scheme the user gave (``"auto"``, or a scheme that draws rows).
    scheme : str
        The scheme that draws the rows.
    band_scale : {"identity", "logit"}
        The scale :func:`pdpboot.confidence_bands` forms the PD's bands on (``"logit"``: a probability PD's
        bands formed on the logit scale and mapped back).
    output : str
        What the PD averages, in a few words (``"a classifier's predicted probabilities"``).
    subsample_fraction : float
        Of the subsample ``"auto"`` chose (for the reason).
    """

    requested: str
    scheme: str
    band_scale: str
    output: str = "predictions"
    subsample_fraction: float = 0.632

    @property
    def reason(self) -> str:
        """One sentence on why ``"auto"`` chose ``scheme`` and ``band_scale`` (empty when the user chose).

        A property, not a field: the sentence is not part of a checkpoint's fingerprint.
        """
        if self.requested != "auto":
            return ""
        return auto_scheme_reason(self.band_scale == "logit", self.output, self.subsample_fraction)


def _check_threads(threads_per_job) -> int:
    """Native (OpenMP/BLAS) threads per fit: 1 unless the user asks for more.

    One thread per job keeps results bit-identical for every ``n_jobs`` and
    backend (multi-threaded BLAS may sum in another order), never lets jobs
    times threads exceed the cores, and avoids OpenMP threads spin-waiting for
    busy cores (measured: one HistGradientBoosting fit took 1.6-2.7 s with one
    thread and 69 s with two, load 22 on 2 cores).  The parallelism of a
    resampling run is ``n_jobs``, over resamples.
    """
    return 1 if threads_per_job is None else check_positive_int(threads_per_job, "threads_per_job", 1)


@dataclass(frozen=True)
class Execution:
    """How the resamples run: where, with how many threads, what is kept and what a failure does.

    Parameters
    ----------
    n_jobs : int, optional
        Parallel resamples (joblib); results are identical for any value.
    threads_per_job : int
        Native (OpenMP/BLAS) threads each fit and evaluation may use
        (threadpoolctl; None means 1): results are then bit-identical for every
        ``n_jobs`` and backend.
    progress : bool, "auto" or callable
        A tqdm bar ("auto": on a terminal, for B >= 20), or
        ``progress(done, total)`` called after every finished resample.
    checkpoint : path, optional
        Directory where the estimate and every finished resample are saved as
        they complete; calling again with the same arguments resumes.
    on_error : {"raise", "skip"}
        A resample whose fit or evaluation raises stops the run, or is
        recorded (NaN resample, root attr ``failed_resamples``).
    max_failure_share : float
        With ``on_error="skip"``, stop as soon as more than this share of the
        resamples has failed.
    method : {"auto", "brute", "tree"}
        The engine that computes each fitted model's PD: ``auto`` the fastest
        exact engine that supports the model (else brute force), ``tree``
        the exact tree engine (an error where it does not apply), ``brute``
        brute force.  The numbers agree to rounding.
    memory_limit : int
        Bytes allowed for one stacked prediction block (brute force, ALE, H statistics).

    Examples
    --------
    >>> Execution(n_jobs=2, on_error="skip").threads_per_job
    1
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
        check_choice(self.on_error, "on_error", ON_ERROR)
        check_choice(self.method, "method", METHODS)
        if isinstance(self.memory_limit, bool) or not (isinstance(self.memory_limit, (int, np.integer))
                                                       and self.memory_limit > 0):
            raise ValueError(f"memory_limit must be a positive number of bytes, got {self.memory_limit!r}.")
        if not 0 <= self.max_failure_share < 1:
            raise ValueError(f"max_failure_share must be in [0, 1), got {self.max_failure_share!r}.")
        object.__setattr__(self, "threads_per_job", _check_threads(self.threads_per_job))
        object.__setattr__(self, "max_failure_share", float(self.max_failure_share))
        object.__setattr__(self, "memory_limit", int(self.memory_limit))

    def check_used(self, function: str, used: Iterable[str]) -> None:
        """Refuse fields ``function`` does not use, instead of ignoring them silently."""
        defaults = Execution()
        unused = [f.name for f in dataclasses.fields(self) if f.name not in used
                  and not _same(getattr(self, f.name), getattr(defaults, f.name))]
        if unused:
            raise ValueError(f"Execution({unused[0]}=...) does not apply to {function}, which uses only "
                             f"{', '.join(used)}; leave it at its default.")


def _resolve(kind: type, given, shortcuts: dict, name: str):
    """``given`` (an instance of ``kind``) with the shortcuts it leaves at their defaults, or ``kind(**shortcuts)``.

    A shortcut that contradicts a field the object sets (``n_resamples=50`` next to
    ``Resampling(n_resamples=100)``) is refused.
    """
    if given is None:
        return kind(**shortcuts)
    if not isinstance(given, kind):
        raise TypeError(f"{name} must be a pdpboot.{kind.__name__} (or a scheme name), got {type(given).__name__}.")
    defaults = {f.name: f.default for f in dataclasses.fields(kind)}
    changed = {k: v for k, v in shortcuts.items() if v is not defaults[k] and not _same(v, defaults[k])}
    clash = [k for k, v in changed.items() if not _same(getattr(given, k), defaults[k])
             and not _same(getattr(given, k), v)]
    if clash:
        raise TypeError(f"{clash[0]}={changed[clash[0]]!r} contradicts {name}={kind.__name__}({clash[0]}="
                        f"{getattr(given, clash[0])!r}); give it in one place.")
    return dataclasses.replace(given, **changed) if changed else given


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def resolve_resampling(resampling: str | Resampling | None = "auto", **shortcuts) -> Resampling:
    """A :class:`Resampling` from the object, or from a scheme name and keyword shortcuts."""
    if isinstance(resampling, str):
        return Resampling(scheme=resampling, **shortcuts)
    return _resolve(Resampling, resampling, shortcuts, "resampling")


def resolve_execution(execution: Execution | None = None, **shortcuts) -> Execution:
    """An :class:`Execution` from the object, or from keyword shortcuts (``n_jobs=``, ``checkpoint=``, ...)."""
    return _resolve(Execution, execution, shortcuts, "execution")


def resolve_run_options(resampling: str | Resampling | None, execution: Execution | None, *,
                        n_resamples: int) -> tuple[Resampling, Execution]:
    """A public function's :class:`Resampling` and :class:`Execution`, from the objects and the shortcuts."""
    return resolve_resampling(resampling, n_resamples=n_resamples), resolve_execution(execution)
