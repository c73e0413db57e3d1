"""Checkpoints: persist every finished resample so a long run can be resumed.

A checkpoint is a directory::

    manifest.json          fingerprint of the run (data, estimator, grid, seed, settings) and its id
    estimate.npz           the full-data fit's variables
    estimate.json          what the loop needs to resume without refitting the estimate
    resample_000042.npz    one file per finished resample
    resample_000007.failed.json   a resample that raised (with on_error="skip")

Every file is written under a temporary name and renamed, with the permissions of an
ordinary file, and carries the run id and a checksum; arrays are read with
``allow_pickle=False``.  A damaged entry is reported, renamed ``*.damaged`` and recomputed;
an entry or a checkpoint of another run (:func:`plan_fingerprint`) is refused.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import threading
import types
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

PerNode = dict[str, dict[str, tuple[tuple[str, ...], np.ndarray]]]
FORMAT_VERSION = 3  # 3: one fingerprint entry per part of the plan, by content
_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


# --- a fingerprint that is the same in every process -----------------------------------------------

def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_token(code: types.CodeType) -> list:
    consts = [_code_token(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return [code.co_name, _digest(code.co_code), consts, list(code.co_names)]


def _global_values(value, code: types.CodeType, depth: int) -> dict:
    """The module-level values a function's code reads (``SCALE`` in ``lambda x: x * SCALE``).

    Modules, classes and callables are identified by name only (their own code is not followed),
    so a change of a constant the function uses changes the fingerprint.
    """
    namespace = getattr(value, "__globals__", None) or {}
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    out = {}
    for name in sorted(names):
        if name not in namespace:
            continue
        found = namespace[name]
        if isinstance(found, types.ModuleType):
            out[name] = {"module": found.__name__}
        elif isinstance(found, type) or callable(found):
            out[name] = {"name": f"{getattr(found, '__module__', None)}."
                                 f"{getattr(found, '__qualname__', type(found).__qualname__)}"}
        else:
            out[name] = _stable(found, depth + 1)
    return out


def _callable_token(value, depth: int):
    name = f"{getattr(value, '__module__', None)}.{getattr(value, '__qualname__', type(value).__qualname__)}"
    token: dict = {"callable": name}
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType):
        token["code"] = _code_token(code)
        defaults = getattr(value, "__defaults__", None)
        if defaults:
            token["defaults"] = _stable(list(defaults), depth + 1)
        kwdefaults = getattr(value, "__kwdefaults__", None)
        if kwdefaults:
            token["kwdefaults"] = _stable(dict(kwdefaults), depth + 1)
        closure = getattr(value, "__closure__", None)
        if closure:  # the values a closure captured (``lambda x: x * k`` with another ``k``)
            token["closure"] = [_stable(_cell_value(cell), depth + 1) for cell in closure]
        token["globals"] = _global_values(value, code, depth)
    owner = getattr(value, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        token["self"] = _stable(owner, depth + 1)
    return token


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name assigned after the closure was made)
        return "<empty cell>"


def _stable(value, depth: int = 0):
    """A JSON-able description of ``value`` that does not depend on the process (no addresses)."""
    if depth > 30:
        return _ADDRESS.sub("", repr(value))
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, np.generic):
        return _stable(value.item(), depth + 1)
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.dtype.kind != "O" else json.dumps(
            [_stable(v, depth + 1) for v in value.ravel().tolist()], sort_keys=True).encode()
        return {"ndarray": [value.dtype.str, list(value.shape), _digest(data)]}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [_stable(v, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [json.dumps(_stable(v, depth + 1), sort_keys=True) for v in value]
        return {"set": sorted(items)}
    if isinstance(value, Mapping):
        return {"dict": sorted([str(k), _stable(v, depth + 1)] for k, v in value.items())}
    if isinstance(value, np.random.RandomState):
        kind, keys, pos, has_gauss, cached = value.get_state(legacy=True)
        return {"RandomState": [kind, _digest(np.asarray(keys).tobytes()), int(pos), int(has_gauss), repr(cached)]}
    if isinstance(value, np.random.Generator):
        return {"Generator": json.dumps(value.bit_generator.state, sort_keys=True, default=str)}
    if isinstance(value, np.random.SeedSequence):
        return {"SeedSequence": [str(value.entropy), list(value.spawn_key), value.n_children_spawned]}
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return {"pandas": _hash_table(value if not isinstance(value, pd.Index) else value.to_series())}
    if isinstance(value, functools.partial):
        return {"partial": [_callable_token(value.func, depth + 1), _stable(list(value.args), depth + 1),
                            _stable(dict(value.keywords), depth + 1)]}
    if isinstance(value, type):
        return {"class": f"{value.__module__}.{value.__qualname__}"}
    if dataclasses.is_dataclass(value):
        cls = type(value)
        return {"dataclass": f"{cls.__module__}.{cls.__qualname__}",
                "fields": {f.name: _stable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}}
    get_params = getattr(value, "get_params", None)
    if callable(get_params) and not isinstance(value, type):
        try:
            params = get_params(deep=False)
        except TypeError:
            params = None
        if isinstance(params, Mapping):
            cls = type(value)
            return {"estimator": f"{cls.__module__}.{cls.__qualname__}", "params": _stable(dict(params), depth + 1)}
    if callable(value) and hasattr(value, "__qualname__"):
        return _callable_token(value, depth)
    try:
        import joblib

        return {"object": f"{type(value).__module__}.{type(value).__qualname__}", "joblib": joblib.hash(value)}
    except Exception:  # noqa: BLE001 - anything joblib cannot pickle falls back to its address-free repr
        return {"object": f"{type(value).__module__}.{type(value).__qualname__}",
                "repr": _ADDRESS.sub("", repr(value))}


def stable_fingerprint(estimator) -> str:
    """A digest of an estimator's class and parameters that is the same in every process.

    Callables are identified by qualified name and bytecode, a ``RandomState`` by its state,
    nested estimators by their parameters, other objects by ``joblib.hash``.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> stable_fingerprint(Ridge(alpha=1.0)) == stable_fingerprint(Ridge(alpha=1.0))
    True
    >>> stable_fingerprint(Ridge(alpha=1.0)) == stable_fingerprint(Ridge(alpha=2.0))
    False
    """
    text = json.dumps(_stable(estimator), sort_keys=True)
    return f"{type(estimator).__qualname__}:{_digest(text.encode())}"


def _hash_table(X) -> str:
    digest = hashlib.sha256()
    if isinstance(X, (pd.DataFrame, pd.Series)):
        digest.update(pd.util.hash_pandas_object(X, index=True).to_numpy().tobytes())
        names = X.columns if isinstance(X, pd.DataFrame) else [X.name]
        digest.update(json.dumps([str(c) for c in names]).encode())
        dtypes = X.dtypes if isinstance(X, pd.DataFrame) else [X.dtype]
        # repr: a categorical's levels and their order, not only the word "category"
        digest.update(json.dumps([repr(d) if isinstance(d, pd.CategoricalDtype) else str(d) for d in dtypes]).encode())
    else:
        arr = np.asarray(X)
        digest.update(str((arr.shape, arr.dtype.str)).encode())
        digest.update(arr.tobytes() if arr.dtype.kind != "O" else repr(arr.tolist()).encode())
    return digest.hexdigest()


#: Fields of a plan that say how a run is executed, not what it computes: a checkpoint is resumed
#: whatever their values (``n_resamples`` may grow; the seed is its own entry).  Every other field,
#: including any added later, is part of the fingerprint by content.
EXECUTION_FIELDS = frozenset({"execution", "n_resamples", "rng", "n_jobs", "threads_per_job", "progress",
                              "checkpoint", "on_error", "max_failure_share"})
#: Fields holding the run's data (named ``data: <field>`` in the fingerprint and its messages).
DATA_FIELDS = frozenset({"X", "y", "strata", "groups", "sample_weight", "weights", "fit_params"})
_SHOWN = 120  # a part whose description is at most this long is stored as text (shown when it differs)


def _part(value) -> str | dict | list | int | float | bool | None:
    """One fingerprint entry: the content description itself when short, else its digest."""
    text = json.dumps(_stable(value), sort_keys=True)
    return json.loads(text) if len(text) <= _SHOWN else {"sha256": _digest(text.encode())}


def _label(name: str) -> str:
    if name in DATA_FIELDS:
        return f"data: {name}"
    if name == "grids":
        return "grid"
    return "estimator" if name == "estimator" else f"settings: {name}"


def _estimator_parts(estimator) -> dict:
    """``estimator`` (class) and one ``estimator: <param>`` entry per parameter, by content."""
    try:
        params = estimator.get_params(deep=False)
    except (AttributeError, TypeError):
        params = None
    if not isinstance(params, Mapping):
        return {"estimator": stable_fingerprint(estimator)}
    cls = type(estimator)
    return {"estimator": f"{cls.__module__}.{cls.__qualname__}",
            **{f"estimator: {k}": _part(v) for k, v in params.items()}}


def _add_parts(obj, parts: dict) -> None:
    """Add every field of dataclass ``obj`` to ``parts`` by content, descending into nested dataclasses."""
    for field in dataclasses.fields(obj):
        if field.name in EXECUTION_FIELDS:
            continue
        value = getattr(obj, field.name)
        if field.name == "estimator":
            parts.update(_estimator_parts(value))
        elif field.name == "settings" and isinstance(value, Mapping):
            parts.update({f"settings: {k}": _part(v) for k, v in value.items()})
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            _add_parts(value, parts)  # the effect, its spec, the resampling options
        else:
            parts[_label(field.name)] = _part(value)


def plan_fingerprint(plan, seed: dict) -> dict:
    """What must match for a checkpoint to be reused: every part of a plan, by content.

    Every field of the plan and of the dataclasses it holds enters by content (array bytes,
    estimator parameters by :func:`stable_fingerprint`), except the :data:`EXECUTION_FIELDS`.
    Returns entry name (``"data: X"``, ``"estimator"``, ``"seed"``, ...) -> a JSON-able digest.
    """
    parts: dict = {}
    _add_parts(plan, parts)
    parts["seed"] = seed
    return parts


# --- files -------------------------------------------------------------------------------------------

def _atomic_write(path: Path, write, *, exclusive: bool = False) -> bool:
    """Write under a temporary name (mode ``0o666`` minus the umask), then rename (or, ``exclusive``,
    link: False if ``path`` exists)."""
    for attempt in range(100):
        tmp = path.parent / f".{path.name}.{os.getpid()}.{threading.get_ident()}.{attempt}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"cannot create a temporary file beside {str(path)!r}; remove its stale *.tmp files.")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
        else:
            os.replace(tmp, path)
        return True
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _arrays_checksum(index: list, arrays: dict) -> str:
    digest = hashlib.sha256(json.dumps(index).encode())
    for k in range(len(index)):
        arr = np.ascontiguousarray(arrays[f"a{k}"])
        digest.update(f"{arr.dtype.str}{arr.shape}".encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


def _difference(name: str, old, new) -> str:
    """``settings: background ('resample' -> 'original')`` when both are short, else the name."""
    shown = [json.dumps(v) for v in (old, new)]
    if all(len(t) <= 40 and "sha256" not in t and "ndarray" not in t and "pandas" not in t for t in shown):
        return f"{name} ({shown[0]} -> {shown[1]})"
    return name


class DamagedEntry(Exception):
    """A checkpoint entry that cannot be read or does not match its checksum."""


class MemoryStore:
    """A run's store without a checkpoint: nothing is stored before, nothing is written."""

    created: str

    def __init__(self, created: str):
        self.created = created

    def load_estimate(self) -> tuple[PerNode, dict] | None:
        return None

    def save_estimate(self, per_node: PerNode, meta: dict) -> None:
        pass

    def stored(self, n: int) -> dict[int, PerNode | str]:
        """The results stored before, by index: arrays, or the text of a failure."""
        return {}

    def save_result(self, b: int, result) -> None:
        """Persist job ``b``'s arrays, or (anything else) the text of its failure."""


class Checkpoint(MemoryStore):
    """A run's store in a checkpoint directory, bound to one run's fingerprint (:meth:`open` it first).

    Parameters
    ----------
    path : path
        The directory.
    print_ : dict
        The run's :func:`fingerprint`.
    on_error : {"skip", "raise"}
        With ``"raise"``, a resample stored as failed makes :meth:`load` raise.
    """

    def __init__(self, path: str | os.PathLike, print_: dict, *, on_error: str = "skip"):
        self.path = Path(path)
        self.fingerprint = print_
        self.on_error = on_error
        self.run = _digest(json.dumps(print_, sort_keys=True, default=repr).encode())

    @staticmethod
    def _read_manifest(manifest: Path) -> dict:
        try:
            stored = json.loads(manifest.read_text())
            if not isinstance(stored, dict) or not isinstance(stored.get("fingerprint"), dict):
                raise ValueError("no fingerprint")
            return stored
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(
                f"The checkpoint manifest {str(manifest)!r} is damaged ({type(exc).__name__}: {str(exc)[:100]}); "
                "delete that checkpoint folder to start over, or use another checkpoint path."
            ) from None

    @staticmethod
    def stored_seed(path: str | os.PathLike) -> dict | None:
        """The seed recorded by an existing checkpoint (to resume a run started with ``rng=None``)."""
        manifest = Path(path) / "manifest.json"
        if not manifest.exists():
            return None
        return Checkpoint._read_manifest(manifest)["fingerprint"].get("seed")

    def open(self, extra: dict) -> dict:
        """Create the checkpoint, or check that an existing one belongs to this run; returns the manifest's
        ``extra`` entries (e.g. the creation time of the first run)."""
        manifest = self.path / "manifest.json"
        if not manifest.exists():
            others = [p for p in self.path.iterdir() if not (p.name.startswith(".") and p.name.endswith(".tmp"))] \
                if self.path.exists() else []
            if others:
                raise ValueError(
                    f"{str(self.path)!r} exists, is not empty and is not a pdpboot checkpoint (no manifest.json); "
                    "choose another path."
                )
            self.path.mkdir(parents=True, exist_ok=True)
            text = json.dumps({"format": FORMAT_VERSION, "run": self.run, "fingerprint": self.fingerprint,
                               "extra": extra}, indent=1, default=repr)
            if _atomic_write(manifest, lambda handle: handle.write(text.encode()), exclusive=True):
                return extra
            # another process created it meanwhile: fall through and compare
        stored = self._read_manifest(manifest)
        if stored.get("format", 1) != FORMAT_VERSION:
            raise ValueError(
                f"The checkpoint at {str(self.path)!r} was written by another pdpboot (checkpoint format "
                f"{stored.get('format', 1)}, this one writes {FORMAT_VERSION}); delete it to start over."
            )
        old = json.loads(json.dumps(stored["fingerprint"]))
        new = json.loads(json.dumps(self.fingerprint, default=repr))
        differing = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        if differing:
            raise ValueError(
                f"The checkpoint at {str(self.path)!r} was made with different arguments "
                f"(they differ in: {'; '.join(_difference(k, old.get(k), new.get(k)) for k in differing)[:600]}); "
                "it cannot be resumed with these. Use a new checkpoint path, or delete this one to start over."
            )
        if stored.get("run") != self.run:  # same fingerprint, but entries of another layout
            raise ValueError(
                f"The checkpoint at {str(self.path)!r} was written by an older pdpboot (format "
                f"{stored.get('format', 1)}); delete it to start over."
            )
        return stored["extra"]

    def _file(self, b: int | None, failed: bool = False) -> Path:
        if b is None:
            return self.path / "estimate.npz"
        return self.path / (f"resample_{b:06d}.failed.json" if failed else f"resample_{b:06d}.npz")

    # writing

    def save(self, b: int | None, per_node: PerNode) -> None:
        """Persist the estimate (``b=None``) or resample ``b``."""
        index, arrays = [], {}
        for node, variables in per_node.items():
            for var, (dims, arr) in variables.items():
                arrays[f"a{len(index)}"] = np.asarray(arr)
                index.append([node, var, list(dims)])
        arrays["__index__"] = np.asarray(json.dumps(index))
        arrays["__run__"] = np.asarray(self.run)
        arrays["__checksum__"] = np.asarray(_arrays_checksum(index, arrays))
        _atomic_write(self._file(b), lambda handle: np.savez(handle, **arrays))

    def _save_json(self, path: Path, payload: dict) -> None:
        plain = json.loads(json.dumps(payload, default=lambda v: v.item() if hasattr(v, "item") else repr(v)))
        body = {"run": self.run, "payload": plain}
        text = json.dumps({**body, "checksum": _digest(json.dumps(body, sort_keys=True).encode())})
        _atomic_write(path, lambda handle: handle.write(text.encode()))

    def save_estimate(self, per_node: PerNode, meta: dict) -> None:
        """Persist the full-data fit's variables and what the loop needs to resume without refitting it."""
        self.save(None, per_node)
        self._save_json(self.path / "estimate.json", meta)

    def save_failure(self, b: int, message: str) -> None:
        """Record that resample ``b`` raised ``message`` (with ``on_error="skip"``)."""
        self._save_json(self._file(b, failed=True), {"resample": b, "error": message})

    # reading

    def _foreign(self, path: Path, run) -> ValueError:
        return ValueError(
            f"The checkpoint entry {str(path)!r} belongs to another run (run id {str(run)[:12]}, this run "
            f"{self.run[:12]}): it was copied or written here by a run with other arguments. Remove it (or the "
            "whole checkpoint folder) and run again."
        )

    def _damaged(self, path: Path, reason: str) -> None:
        warnings.warn(
            f"The checkpoint entry {str(path)!r} is damaged ({reason}); it is moved to "
            f"{path.name}.damaged and recomputed.",
            RuntimeWarning, stacklevel=3,
        )
        os.replace(path, path.with_name(path.name + ".damaged"))

    def _read_arrays(self, path: Path) -> PerNode:
        try:
            with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:
                run = str(data["__run__"])
                index = json.loads(str(data["__index__"]))
                arrays = {f"a{k}": data[f"a{k}"] for k in range(len(index))}
                checksum = str(data["__checksum__"])
        except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
            raise DamagedEntry(f"{type(exc).__name__}: {str(exc)[:100]}") from None
        if run != self.run:
            raise self._foreign(path, run)
        if _arrays_checksum(index, arrays) != checksum:
            raise DamagedEntry("its content does not match its checksum")
        out: PerNode = {}
        for k, (node, var, dims) in enumerate(index):
            out.setdefault(node, {})[var] = (tuple(dims), arrays[f"a{k}"])
        return out

    def _read_json(self, path: Path) -> dict:
        try:
            body = json.loads(path.read_text())
            payload, run, checksum = body["payload"], body["run"], body["checksum"]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise DamagedEntry(f"{type(exc).__name__}: {str(exc)[:100]}") from None
        if run != self.run:
            raise self._foreign(path, run)
        if _digest(json.dumps({"run": run, "payload": payload}, sort_keys=True).encode()) != checksum:
            raise DamagedEntry("its content does not match its checksum")
        return payload

    def load_estimate(self) -> tuple[PerNode, dict] | None:
        """The stored estimate and its meta data, or None (not stored yet, or damaged: recompute)."""
        meta_path, arrays_path = self.path / "estimate.json", self._file(None)
        if not (meta_path.exists() and arrays_path.exists()):
            return None
        try:
            meta = self._read_json(meta_path)
        except DamagedEntry as exc:
            self._damaged(meta_path, str(exc))
            return None
        try:
            return self._read_arrays(arrays_path), meta
        except DamagedEntry as exc:
            self._damaged(arrays_path, str(exc))
            return None

    def load(self, b: int | None) -> PerNode | str | None:
        """The stored variables, the error message of a failed resample, or None (not done, or damaged).

        Raises ``ValueError`` for an entry of another run, ``RuntimeError`` for a resample stored as failed
        when this run's policy is ``on_error="raise"``.
        """
        path = self._file(b)
        if path.exists():
            try:
                return self._read_arrays(path)
            except DamagedEntry as exc:
                self._damaged(path, str(exc))
                return None
        failed = self._file(b, failed=True) if b is not None else None
        if failed is not None and failed.exists():
            try:
                message = self._read_json(failed)["error"]
            except DamagedEntry as exc:
                self._damaged(failed, str(exc))
                return None
            if self.on_error == "raise":
                raise RuntimeError(
                    f"Resample {b} failed in an earlier run of this checkpoint (stored with on_error='skip' in "
                    f"{str(failed)!r}): {message[:300]}. With on_error='raise' the run stops; resume with "
                    "on_error='skip', or delete that file to retry the resample."
                )
            return message
        return None

    def stored(self, n):
        found = {b: self.load(b) for b in range(n)}
        return {b: r for b, r in found.items() if r is not None}

    def save_result(self, b, result):
        if isinstance(result, dict):
            self.save(b, result)
        else:
            self.save_failure(b, str(result))


def open_store(path: str | os.PathLike | None, plan, seed: dict, *, created: str, on_error: str) -> MemoryStore:
    """The one place a run enters its checkpoint: a :class:`Checkpoint` at ``path``, else a memory store.

    ``plan`` (a dataclass) and ``seed`` make the checkpoint's fingerprint (:func:`plan_fingerprint`).
    """
    if path is None:
        return MemoryStore(created)
    store = Checkpoint(path, plan_fingerprint(plan, seed), on_error=on_error)
    store.created = store.open({"created": created})["created"]
    return store
