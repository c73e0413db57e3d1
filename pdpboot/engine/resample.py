"""Row indices of one resample, drawn from that resample's own generator."""

from __future__ import annotations

import numpy as np

RESAMPLING = ("bootstrap", "stratified", "subsample", "group")


def draw_rows(
    scheme: str,
    n_rows: int,
    rng: np.random.Generator,
    *,
    strata: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    subsample_fraction: float = 0.632,
) -> np.ndarray:
    """Draw the training rows of one resample (sorted positions, repeated when drawn more than once).

    ``bootstrap``: n rows with replacement; ``stratified``: within each class (``strata``), class counts
    kept; ``subsample``: ``floor(subsample_fraction * n)`` rows without replacement; ``group``: whole
    groups (``groups``) with replacement.
    """
    if scheme == "bootstrap":
        rows = rng.integers(0, n_rows, size=n_rows)
    elif scheme == "stratified":
        _, codes = np.unique(strata, return_inverse=True)
        rows = np.concatenate(
            [members[rng.integers(0, members.size, size=members.size)]
             for members in (np.flatnonzero(codes == k) for k in range(codes.max() + 1))]
        )
    elif scheme == "subsample":
        size = int(np.floor(subsample_fraction * n_rows))
        rows = rng.choice(n_rows, size=size, replace=False)
    elif scheme == "group":
        _, codes = np.unique(groups, return_inverse=True)
        members = [np.flatnonzero(codes == k) for k in range(codes.max() + 1)]
        picked = rng.integers(0, len(members), size=len(members))
        rows = np.concatenate([members[k] for k in picked])
    else:
        raise ValueError(f"resampling={scheme!r} is not one of {list(RESAMPLING)}.")
    return np.sort(rows)


def multiplicities(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct rows of a resample and how often each was drawn."""
    counts = np.bincount(rows, minlength=n_rows)
    distinct = np.flatnonzero(counts)
    return distinct, counts[distinct]
