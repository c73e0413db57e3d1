"""The exact tree engine checks its own reading of a model against the model's predictions.

:func:`check_reading` evaluates the parsed node table (a plain descent, the offset and the link) on
a probe - background rows in which each feature of interest takes each of its grid values and
:data:`MISSING_SLOTS` missing values in turn - and compares it with the model's own response, within
``1e-9 (1 + max |response|)`` for scikit-learn and ``2e-5 (1 + max |response|)`` plus ``1e-7`` per
tree times the largest leaf value for the float32 boosters.  A disagreement is a one-line reason
(the caller falls back to brute force or raises); the verdict is cached per fitted model and parse.
"""

from __future__ import annotations

import weakref
import zlib

import numpy as np
import pandas as pd

from ._tree_compiled import _kernel
from ._tree_model import TreeModel, model_grid
from .inputs import rows_with
from .response import one_thread, response_function

PROBE_ROWS = 64  #: rows of a probe without features of interest
MIN_PROBE_ROWS = 32  #: fewest rows of a probe
MAX_PROBE_ROWS = 256  #: most rows of a probe (longer grids are thinned evenly, missing values kept)
MISSING_SLOTS = 4  #: missing values per probed column: NaN, alternating with a ``missing=`` sentinel
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def probe_rows(n_rows: int, k: int = PROBE_ROWS) -> np.ndarray:
    """``k`` evenly spaced row positions, first and last included (repeated when there are fewer rows)."""
    if k <= 1:
        return np.zeros(k, dtype=np.intp)
    return ((np.arange(k, dtype=np.intp) * (2 * (n_rows - 1)) + (k - 1)) // (2 * (k - 1))).astype(np.intp)


def _fingerprint(prepared) -> int:
    """A CRC of the reading: node table, leaf values, category masks, roots (and a parsed offset)."""
    model = prepared.model
    nodes, thr = prepared.kernel_base()
    crc = 0
    for arr in (nodes, thr, model.value, model.cat_left, model.roots):
        crc = zlib.crc32(np.ascontiguousarray(arr).view(np.uint8), crc)
    if model.source is None:  # an external reader's offset is measured on rows: derived, not parsed
        crc = zlib.crc32(np.ascontiguousarray(model.offset).view(np.uint8), crc)
    return crc


def _values_key(values) -> tuple:
    arr = np.asarray(values)
    return (arr.dtype.str, arr.tobytes()) if arr.dtype.kind in "biuf" else tuple(map(repr, arr.tolist()))


def _cycle(values, k: int, phase: int) -> np.ndarray:
    values = np.asarray(values).reshape(-1)
    return values[(np.arange(k) + phase) % len(values)]


def _tolerance(model: TreeModel, ref: np.ndarray) -> float:
    scale = 1.0 + float(np.nanmax(np.abs(ref), initial=0.0))
    if model.source is None:  # scikit-learn trees: float64 leaf values and sums (float32 inputs or not)
        return 1e-9 * scale
    leaf = float(np.abs(model.value).max(initial=0.0))
    return 2e-5 * scale + 1e-7 * len(model.roots) * leaf


def leaf_sums(model: TreeModel, kernel_base, xt: np.ndarray) -> np.ndarray:
    """(n_rows, n_raw) sum over the trees of the leaf value each row of ``xt`` (trees' space) reaches, no offset."""
    kern = _kernel()
    nodes, thr = kernel_base()
    return kern.descend(nodes, thr, np.ascontiguousarray(model.cat_left, dtype=np.bool_),
                        np.ascontiguousarray(model.value, dtype=np.float64),
                        np.ascontiguousarray(model.roots, dtype=np.int64), np.ascontiguousarray(xt, dtype=np.float64))


def _tree_response(prepared, xt: np.ndarray) -> np.ndarray:
    """The reading's response on rows ``xt`` (trees' space): a plain descent, the offset, the link."""
    model = prepared.model
    raw = leaf_sums(model, prepared.kernel_base, xt) + model.offset[None, :]
    if model.link is None:
        return raw
    return np.asarray(model.link(raw), dtype=np.float64).reshape(len(raw), -1)


def check_reading(prepared, estimator, X, response_method: str, grids: dict) -> str | None:
    """None when the reading ``prepared`` reproduces ``estimator``'s response on a probe, else the reason.

    ``prepared.probe(rows, substitutions)`` gives the probe in tree space; ``X`` are the background
    rows (input space) and ``grids`` maps each input column of interest to its grid values.
    """
    try:
        entry = _CACHE.setdefault(estimator, {})
    except TypeError:  # not weak-referenceable or unhashable: no cache
        entry = {}
    key = (response_method, _fingerprint(prepared))
    state = entry.get(key)
    if state is not None and state["reason"] is not None:
        return state["reason"]
    done = set() if state is None else state["columns"]
    todo = {j: g for j, g in grids.items() if (j, _values_key(g)) not in done}
    if state is not None and not todo:
        return None
    reason = _probe(prepared, estimator, X, response_method, todo)
    entry[key] = {"reason": reason, "columns": done | {(j, _values_key(g)) for j, g in todo.items()}}
    return reason


def _probe(prepared, estimator, X, response_method: str, grids: dict) -> str | None:
    """The check itself: one block of probe rows, one call of the model's response, one descent."""
    model = prepared.model
    sentinel = getattr(model.source, "missing_value", None)
    cols = sorted(grids)
    name = type(estimator).__name__
    nan_ok = _holds_nan(X, cols)
    respond = response_function(estimator, response_method, **_one_thread(model, estimator, response_method))
    for with_nan in (True, False):  # without the added NaN if the model's own response refuses it
        lists = {j: _probe_values(grids[j], sentinel, with_nan and nan_ok[j]) for j in cols}
        k = min(max([MIN_PROBE_ROWS] + [len(v) for v in lists.values()]), MAX_PROBE_ROWS) if cols else PROBE_ROWS
        rows = probe_rows(X.shape[0], k)
        subs = {j: _cycle(_spread(lists[j], k, sentinel, with_nan and nan_ok[j]), k, 7 * p)
                for p, j in enumerate(cols)}
        try:
            ref = respond(rows_with(X, rows, subs))
            break
        except (ValueError, TypeError, IndexError) as exc:
            if not with_nan or not cols:
                return f"{name}.{response_method} failed on the probe ({exc})"
    try:
        own = _tree_response(prepared, prepared.probe(rows, subs))
    except (ValueError, TypeError, IndexError) as exc:
        return f"the tree reading failed on the probe ({exc})"
    ref = np.asarray(ref, dtype=np.float64).reshape(len(rows), -1)
    if own.shape != ref.shape:
        return f"the tree reading gives {own.shape[1]} outputs, {name}.{response_method} {ref.shape[1]}"
    tol = _tolerance(model, ref)
    with np.errstate(invalid="ignore"):
        if np.all((np.abs(own - ref) <= tol) | (np.isnan(own) & np.isnan(ref))):
            return None
    err = np.where(np.isnan(own) & np.isnan(ref), 0.0, np.abs(own - ref))
    err = np.where(np.isnan(err), np.inf, err).max(axis=1)
    worst = int(np.argmax(err))
    at = ", ".join(f"column {j} = {_show(subs[j][worst])}" for j in cols)
    what = "background rows"
    if cols:
        what += (", the features at their grid values, NaN" if with_nan else ", the features at their grid values")
        what += f" and the missing= sentinel {float(sentinel):g}" if sentinel is not None else ""
    return (f"on {len(rows)} probe rows ({what}), the tree reading differs from {name}.{response_method} "
            f"by up to {err[worst]:.3g} (tolerance {tol:.2g})" + (f" at a row with {at}" if at else ""))


def _one_thread(model: TreeModel, estimator, response_method: str) -> dict:
    """:func:`.response.one_thread` when ``estimator`` is the booster read and ``response_method`` its library's own."""
    module = getattr(getattr(type(estimator), response_method, None), "__module__", None) or ""
    if getattr(model.source, "estimator", None) is not estimator:
        return {}
    return one_thread(module.split(".")[0])


def _show(value) -> str:
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return repr(value)


def _holds_nan(X, cols: list) -> dict:
    """Column -> whether column ``j`` of ``X`` can be set to NaN (not a NumPy bool column of a DataFrame)."""
    dtypes = list(X.dtypes) if hasattr(X, "dtypes") and not isinstance(X, np.ndarray) else None
    return {j: not (dtypes is not None and getattr(dtypes[j], "kind", "") == "b") for j in cols}


def _probe_values(grid, sentinel, with_nan: bool) -> np.ndarray:
    """A column's distinct grid values, then its missing tokens (:data:`MISSING_SLOTS` of NaN / sentinel)."""
    grid = np.asarray(grid).reshape(-1)
    if grid.dtype.kind in "biuf":  # (NaNs merged either way); a grid is usually sorted already
        values = grid if len(grid) < 2 or bool(np.all(grid[1:] > grid[:-1])) else np.unique(grid)
    else:
        values = pd.unique(grid)
    return np.concatenate([np.asarray(values, dtype=values.dtype if values.dtype.kind in "biuf" else object),
                           _tokens(values, sentinel, with_nan)])


def _tokens(values: np.ndarray, sentinel, with_nan: bool) -> np.ndarray:
    """:data:`MISSING_SLOTS` missing tokens: NaN (``with_nan``) alternating with the ``missing=`` sentinel."""
    pool = ([np.nan] if with_nan else []) + ([float(sentinel)] if sentinel is not None else [])
    dtype = np.float64 if values.dtype.kind in "biuf" else object
    return np.array([pool[i % len(pool)] for i in range(MISSING_SLOTS)] if pool else [], dtype=dtype)


def _spread(values: np.ndarray, k: int, sentinel, with_nan: bool) -> np.ndarray:
    """``values`` (grid values, then missing tokens) cut to ``k``: the tokens kept, the grid values evenly thinned."""
    if len(values) <= k:
        return values
    n_tok = MISSING_SLOTS if (with_nan or sentinel is not None) else 0
    grid, tok = values[:len(values) - n_tok], values[len(values) - n_tok:]
    keep = np.unique(np.linspace(0, len(grid) - 1, k - n_tok).round().astype(np.intp))
    return np.concatenate([grid[keep], tok])


def tree_probe(prepared, rows: np.ndarray, subs: dict) -> np.ndarray:
    """Probe rows in the trees' space: converted background rows, features set as the engine sets grids."""
    model = prepared.model
    xt = np.array(prepared.xa[rows], dtype=np.float64)
    for j, values in subs.items():
        xt[:, model.columns[j]] = model_grid(model, j, values)
    return xt
