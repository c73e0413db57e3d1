"""Checkpoints: persist every finished resample so a long run can be resumed.

A checkpoint is a directory::

    manifest.json          fingerprint of the run (data, estimator, grid, seed, settings)
    estimate.npz           the full-data fit's variables
    resample_000042.npz    one file per finished resample
    resample_000007.failed.json   a resample that raised (with on_error="skip")

Every file is written under a temporary name and renamed, so a crash never
leaves a corrupt entry.  Arrays are stored with ``numpy.savez`` and read with
``allow_pickle=False``.  A checkpoint made with different arguments is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

PerNode = dict[str, dict[str, tuple[tuple[str, ...], np.ndarray]]]


def _hash_table(X) -> str:
    digest = hashlib.sha256()
    if isinstance(X, (pd.DataFrame, pd.Series)):
        digest.update(pd.util.hash_pandas_object(X, index=True).to_numpy().tobytes())
        names = X.columns if isinstance(X, pd.DataFrame) else [X.name]
        digest.update(json.dumps([str(c) for c in names]).encode())
        dtypes = X.dtypes if isinstance(X, pd.DataFrame) else [X.dtype]
        digest.update(json.dumps([str(d) for d in dtypes]).encode())
    else:
        arr = np.asarray(X)
        digest.update(str((arr.shape, arr.dtype.str)).encode())
        digest.update(arr.tobytes() if arr.dtype.kind != "O" else repr(arr.tolist()).encode())
    return digest.hexdigest()


def fingerprint(*, X, y, groups, estimator_params: str, grids: dict, seed: dict, settings: dict) -> dict:
    """The parts of a run that must match for a checkpoint to be reused.

    Returns
    -------
    dict
        ``data``, ``estimator``, ``grid``, ``seed`` and ``settings`` digests/values.
    """
    grid_digest = hashlib.sha256()
    for name, values in grids.items():
        grid_digest.update(name.encode())
        grid_digest.update(repr(np.asarray(values).tolist()).encode())
    data = _hash_table(X) + _hash_table(y) + ("" if groups is None else _hash_table(np.asarray(groups)))
    return {
        "data": hashlib.sha256(data.encode()).hexdigest(),
        "estimator": estimator_params,
        "grid": grid_digest.hexdigest(),
        "seed": seed,
        "settings": json.loads(json.dumps(settings, default=repr)),
    }


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _write_arrays(path: Path, per_node: PerNode) -> None:
    index, arrays = [], {}
    for node, variables in per_node.items():
        for var, (dims, arr) in variables.items():
            key = f"a{len(index)}"
            index.append([node, var, list(dims)])
            arrays[key] = np.asarray(arr)
    arrays["__index__"] = np.asarray(json.dumps(index))
    _atomic_write(path, lambda handle: np.savez(handle, **arrays))


def _read_arrays(path: Path) -> PerNode:
    with np.load(path, allow_pickle=False) as data:
        index = json.loads(str(data["__index__"]))
        out: PerNode = {}
        for k, (node, var, dims) in enumerate(index):
            out.setdefault(node, {})[var] = (tuple(dims), data[f"a{k}"])
    return out


class Checkpoint:
    """A checkpoint directory bound to one run's fingerprint."""

    def __init__(self, path: str | os.PathLike, print_: dict):
        self.path = Path(path)
        self.fingerprint = print_

    @staticmethod
    def stored_seed(path: str | os.PathLike) -> dict | None:
        """The seed recorded by an existing checkpoint (to resume a run started with ``rng=None``)."""
        manifest = Path(path) / "manifest.json"
        if not manifest.exists():
            return None
        return json.loads(manifest.read_text())["fingerprint"]["seed"]

    def open(self, extra: dict) -> dict:
        """Create the checkpoint, or check that an existing one belongs to this run.

        Returns
        -------
        dict
            The manifest's ``extra`` entries (e.g. creation time and outputs of the first run).
        """
        manifest = self.path / "manifest.json"
        if manifest.exists():
            stored = json.loads(manifest.read_text())
            differing = [k for k, v in self.fingerprint.items() if stored["fingerprint"].get(k) != v]
            if differing:
                raise ValueError(
                    f"The checkpoint at {str(self.path)!r} was made with different arguments "
                    f"(they differ in: {', '.join(differing)}); it cannot be resumed with these. "
                    "Use a new checkpoint path, or delete this one to start over."
                )
            return stored["extra"]
        if self.path.exists() and any(self.path.iterdir()):
            raise ValueError(
                f"{str(self.path)!r} exists, is not empty and is not a pdpboot checkpoint; choose another path."
            )
        self.path.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"fingerprint": self.fingerprint, "extra": extra}, indent=1, default=repr)
        _atomic_write(manifest, lambda handle: handle.write(text.encode()))
        return extra

    def save_estimate(self, per_node: PerNode, meta: dict) -> None:
        """Persist the full-data fit's variables and what the loop needs to resume without refitting it."""
        self.save(None, per_node)
        text = json.dumps(meta, default=lambda v: v.item() if hasattr(v, "item") else repr(v))
        _atomic_write(self.path / "estimate.json", lambda handle: handle.write(text.encode()))

    def load_estimate(self) -> tuple[PerNode, dict] | None:
        meta = self.path / "estimate.json"
        if not (meta.exists() and self._file(None).exists()):
            return None
        return _read_arrays(self._file(None)), json.loads(meta.read_text())

    def _file(self, b: int | None, failed: bool = False) -> Path:
        if b is None:
            return self.path / "estimate.npz"
        return self.path / (f"resample_{b:06d}.failed.json" if failed else f"resample_{b:06d}.npz")

    def save(self, b: int | None, per_node: PerNode) -> None:
        """Persist the estimate (``b=None``) or resample ``b``."""
        _write_arrays(self._file(b), per_node)

    def save_failure(self, b: int, message: str) -> None:
        text = json.dumps({"resample": b, "error": message})
        _atomic_write(self._file(b, failed=True), lambda handle: handle.write(text.encode()))

    def load(self, b: int | None) -> PerNode | str | None:
        """The stored variables, the error message of a failed resample, or None if not done."""
        if self._file(b).exists():
            return _read_arrays(self._file(b))
        if b is not None and self._file(b, failed=True).exists():
            return json.loads(self._file(b, failed=True).read_text())["error"]
        return None
