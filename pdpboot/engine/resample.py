"""Resampling schemes: the jobs of a resampling run, and how their results become a band.

A scheme is bound to the data (:meth:`pdpboot.Resampling.scheme_for`) and
turns job ``b``'s own generator into a :class:`Job`: the rows its model is
fitted on (drawn once, from the generator's first child), and optionally a
replaced target or the rows its effect is evaluated on.  It also says how its
resamples' spread becomes a band (:meth:`Scheme.rescale`).  Adding a scheme
is a subclass here and one :func:`register` line.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone


def child(seed: np.random.Generator, k: int) -> np.random.Generator:
    """Child ``k`` of ``seed`` as ``seed.spawn`` makes it on a fresh copy (whatever was spawned since)."""
    seq = seed.bit_generator.seed_seq
    return np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, k),
                                                        pool_size=seq.pool_size))


@dataclass(frozen=True, eq=False)
class Job:
    """One refit of a resampling run.

    Attributes
    ----------
    index : int
        Its position ``b`` among the run's jobs.
    seed : numpy.random.Generator
        Its own generator: child 0 drew its rows, child 1 seeds the fit, child 2 the effect's own draws.
    rows : ndarray of int, optional
        Sorted positions of the rows it is fitted on (repeated when drawn more than once); None: all rows.
    y : ndarray, optional
        A target replacing the data's (e.g. null data); None: the data's.
    eval_rows : ndarray of int, optional
        Rows its effect is evaluated on (e.g. a held-out fold); None: the run's background rule.
    """

    index: int
    seed: np.random.Generator
    rows: np.ndarray | None = None
    y: np.ndarray | None = None
    eval_rows: np.ndarray | None = None


SCHEMES: dict[str, type[Scheme]] = {}


def register(cls: type[Scheme]) -> type[Scheme]:
    """Make ``cls`` a scheme users can name (``resampling=cls.name``)."""
    SCHEMES[cls.name] = cls
    return cls


@dataclass(frozen=True, eq=False)
class Scheme:
    """A way of drawing the jobs of a resampling run (a subclass per scheme, bound to the data)."""

    #: the name users give (``resampling="bootstrap"``)
    name: ClassVar[str] = ""
    #: whether the rows each job did not draw are kept for BCa bands (``resample_absent``)
    keeps_absent: ClassVar[bool] = True
    #: whether the jobs resample around a fit on all rows (the estimate, made first; each job's ``random_state``
    #: drawn from its seed); False for cross-fitting, whose jobs are the only fits and keep the estimator's own
    resamples: ClassVar[bool] = True

    @classmethod
    def bind(cls, options, y, *, n_rows: int, classifier: bool) -> Scheme:
        """The scheme of ``options`` (a :class:`pdpboot.Resampling`) for the data, checked against it."""
        return cls()

    def prepare(self, X, y, weights: np.ndarray | None, seed: np.random.Generator) -> Scheme:
        """The scheme ready to draw jobs, from the data and a seed fixed by the run's (default: itself)."""
        return self

    def draw(self, n_rows: int, rng: np.random.Generator) -> np.ndarray:
        """The sorted row positions one job is fitted on."""
        raise NotImplementedError

    def job(self, index: int, seed: np.random.Generator, n_rows: int) -> Job:
        """Job ``index``, its rows drawn from its seed's first child: the one draw of them."""
        return Job(index, seed, rows=self.draw(n_rows, child(seed, 0)))

    def check_varies(self, n_rows: int) -> None:
        """Raise ValueError, naming the fix, when the resamples could not differ from the data (their band
        would be zero-width); checked before any fit."""
        if n_rows < 2:
            raise ValueError(f"resampling={self.name!r} on {n_rows} row: every resample is that row; give at least "
                             "2 rows.")

    def size(self, n_rows: int) -> int:
        """Rows each job draws."""
        return int(n_rows)

    def rescale(self, n_rows: int) -> float:
        """Factor on the deviations of the resamples from their centre before they form a band."""
        return 1.0


@register
@dataclass(frozen=True, eq=False)
class Bootstrap(Scheme):
    """n rows drawn with replacement."""

    name: ClassVar[str] = "bootstrap"

    def draw(self, n_rows, rng):
        rows = rng.integers(0, n_rows, size=n_rows)
        rows.sort()  # in place: one array of n rows at a time
        return rows


@register
@dataclass(frozen=True, eq=False)
class Stratified(Scheme):
    """Within each class, as many rows as it has, with replacement (class counts kept)."""

    name: ClassVar[str] = "stratified"
    strata: Any = None

    @classmethod
    def bind(cls, options, y, *, n_rows, classifier):
        if not classifier:
            raise ValueError("resampling='stratified' keeps class counts and needs a classifier; use 'bootstrap'.")
        return cls(np.asarray(y))

    def check_varies(self, n_rows):
        super().check_varies(n_rows)
        if np.unique(self.strata, return_counts=True)[1].max() < 2:
            raise ValueError("resampling='stratified' redraws each class's rows, and every class has one row here: "
                             "every resample would be the data; use resampling='bootstrap'.")

    def draw(self, n_rows, rng):
        _, codes = np.unique(self.strata, return_inverse=True)
        return np.sort(np.concatenate([members[rng.integers(0, members.size, size=members.size)]
                                       for members in (np.flatnonzero(codes == k) for k in range(codes.max() + 1))]))


@register
@dataclass(frozen=True, eq=False)
class Subsample(Scheme):
    """``floor(fraction * n)`` rows without replacement; deviations rescaled by ``sqrt(m / (n - m))``."""

    name: ClassVar[str] = "subsample"
    keeps_absent: ClassVar[bool] = False
    fraction: float = 0.632

    @classmethod
    def bind(cls, options, y, *, n_rows, classifier):
        return cls(options.subsample_fraction)

    def size(self, n_rows):
        return int(np.floor(self.fraction * n_rows))

    def draw(self, n_rows, rng):
        return np.sort(rng.choice(n_rows, size=self.size(n_rows), replace=False))

    def rescale(self, n_rows):
        m = self.size(n_rows)
        return float(np.sqrt(m / (n_rows - m)))


@register
@dataclass(frozen=True, eq=False)
class Group(Scheme):
    """As many groups as there are, with replacement, each contributing all its rows (a cluster bootstrap)."""

    name: ClassVar[str] = "group"
    groups: Any = None

    @classmethod
    def bind(cls, options, y, *, n_rows, classifier):
        if len(options.groups) != n_rows:
            raise ValueError(f"resampling='group' needs groups with one label per row of X ({n_rows}); "
                             f"got {len(options.groups)}.")
        return cls(options.groups)

    def check_varies(self, n_rows):
        super().check_varies(n_rows)
        if len(np.unique(self.groups)) < 2:
            raise ValueError("resampling='group' needs at least 2 groups, got 1: every resample would be the data "
                             "(a zero-width band); pass one label per cluster, or use resampling='bootstrap'.")

    def draw(self, n_rows, rng):
        _, codes = np.unique(self.groups, return_inverse=True)
        members = [np.flatnonzero(codes == k) for k in range(codes.max() + 1)]
        picked = rng.integers(0, len(members), size=len(members))
        return np.sort(np.concatenate([members[k] for k in picked]))


#: the schemes users may name, in registration order
RESAMPLING = tuple(SCHEMES)


def fold_labels(n_rows: int, n_folds: int, rng) -> np.ndarray:
    """Balanced random fold labels ``0 .. n_folds - 1`` of ``n_rows`` rows (a permutation of ``arange(n) % K``)."""
    if not 2 <= n_folds <= n_rows:
        raise ValueError(f"n_folds must be between 2 and the number of rows ({n_rows}), got {n_folds}.")
    return np.random.default_rng(rng).permutation(np.arange(n_rows) % n_folds)


@dataclass(frozen=True, eq=False)
class CrossFit(Scheme):
    """K-fold cross-fitting: job ``k`` fits on the rows outside fold ``k`` and is evaluated on fold ``k``.

    Not a resampling users name (no :func:`register` line): the debiased estimator's scheme.  There is
    no fit on all rows; each row's prediction comes from the one job that held it out.
    """

    name: ClassVar[str] = "crossfit"
    keeps_absent: ClassVar[bool] = False
    resamples: ClassVar[bool] = False
    folds: Any = None

    @classmethod
    def from_seed(cls, n_rows: int, n_folds: int, seed: np.random.Generator) -> CrossFit:
        """``n_folds`` balanced folds drawn with ``seed`` (:func:`fold_labels`)."""
        return cls(fold_labels(n_rows, n_folds, seed))

    @property
    def n_folds(self) -> int:
        return int(self.folds.max()) + 1

    def job(self, index: int, seed: np.random.Generator, n_rows: int) -> Job:
        return Job(index, seed, rows=np.flatnonzero(self.folds != index), eval_rows=np.flatnonzero(self.folds == index))


def multiplicities(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct rows of a resample and how often each was drawn."""
    counts = np.bincount(rows, minlength=n_rows)
    distinct = np.flatnonzero(counts)
    return distinct, counts[distinct]


@dataclass(frozen=True)
class AbsentRows:
    """Which rows each resample did not draw, one bit per row: what BCa's acceleration needs of the draws.

    Attributes
    ----------
    bits : ndarray of uint8, shape (n_resamples, ceil(n_rows / 8))
        Row ``b``: ``np.packbits`` of resample ``b``'s mask of rows it did not draw (1: not drawn).
    n_rows : int
    """

    bits: np.ndarray
    n_rows: int

    @staticmethod
    def pack(rows: np.ndarray | None, n_rows: int) -> np.ndarray:
        """One resample's packed mask of the rows it did not draw (``rows=None``: all rows drawn)."""
        absent = np.ones(n_rows, dtype=bool)
        absent[slice(None) if rows is None else rows] = False
        return np.packbits(absent)

    def blocks(self, n_bytes: int):
        """``(start, mask)`` per block of ``8 * n_bytes`` rows: ``mask`` (n_resamples, rows) is True where not drawn."""
        for lo in range(0, self.bits.shape[1], n_bytes):
            count = min(8 * n_bytes, self.n_rows - 8 * lo)
            yield 8 * lo, np.unpackbits(self.bits[:, lo:lo + n_bytes], axis=1, count=count).view(bool)


def _seed_keys(params: dict) -> list[str]:
    """The ``random_state`` parameters among ``get_params(deep=True)``'s, in sorted key order."""
    return sorted(k for k in params if k == "random_state" or k.endswith("__random_state"))


def seed_estimator(estimator, rng: np.random.Generator, *, only_if_unset: bool = False):
    """Set every ``random_state`` parameter of ``estimator`` (pipelines included) from ``rng``, in place.

    One integer is drawn per ``random_state`` parameter, in sorted key order, whether or not it is set
    (``only_if_unset`` keeps set values), so the stream does not depend on the current values.
    """
    params = estimator.get_params(deep=True)
    return _set_seeds(estimator, rng, {key: params[key] is not None for key in _seed_keys(params)}, only_if_unset)


def _set_seeds(estimator, rng: np.random.Generator, is_set: dict[str, bool], only_if_unset: bool):
    """Draw one integer per key of ``is_set`` (in its order) and set those not kept."""
    new = {}
    for key, already in is_set.items():
        value = int(rng.integers(0, 2**31 - 1))
        if not (only_if_unset and already):
            new[key] = value
    if new:
        estimator.set_params(**new)
    return estimator


class UnfittedCopies:
    """Fresh unfitted, seeded copies of one estimator, for a loop of refits.

    The estimator is cloned once and each copy deep-copies that clone (what ``clone`` makes of it, at a
    fraction of the cost); an estimator with its own ``__sklearn_clone__`` is cloned each time.
    """

    def __init__(self, estimator):
        self.template = clone(estimator)
        params = self.template.get_params(deep=True)
        self._is_set = {key: params[key] is not None for key in _seed_keys(params)}
        own_clone = getattr(type(self.template), "__sklearn_clone__", None)
        self._copy = own_clone is None or own_clone is BaseEstimator.__sklearn_clone__

    def seeded(self, rng: np.random.Generator, *, only_if_unset: bool = False):
        """A fresh copy whose ``random_state`` parameters are drawn from ``rng`` as
        :func:`seed_estimator` draws them (the same integers, in the same order)."""
        model = copy.deepcopy(self.template) if self._copy else clone(self.template)
        return _set_seeds(model, rng, self._is_set, only_if_unset)


def rows_of(values, rows: np.ndarray):
    """Select rows (positions) of an array, Series or DataFrame."""
    return values.iloc[rows] if hasattr(values, "iloc") else values[rows]
