"""The exact tree engine checks its own reading of a model against the model's predictions.

Private helper of :mod:`pdpboot.engine` (used by the tree engine's registry entry and by
:mod:`.hstats`).  A reader that parses a model dump can be wrong in ways no test of
known options foresees (a ``missing=`` sentinel, a back-transform, early stopping,
the next library version).  Before the tree engine is trusted for a fitted model,
:func:`check_reading` evaluates the parsed node table - one plain descent per row and
tree, the offset and the link, i.e. the engine's reading, not its walks - on a probe
and compares it with the model's own response (``predict`` / ``predict_proba`` /
``decision_function``, the one the PD averages):

* up to :data:`PROBE_ROWS` background rows, evenly spaced;
* the same rows with the features of interest set to their grid values (cycled over the
  rows, each feature with its own phase), converted exactly as the engine converts grids;
* the same rows with those features missing: NaN, and the reader's ``missing=`` sentinel
  where it has one (skipped when the model's own predict refuses missing values: then the
  engine never sees them either).

Tolerance: XGBoost, LightGBM, CatBoost (float32 predictions or thresholds)
``2e-5 (1 + max |response|)`` plus ``1e-7`` per tree times the largest leaf value;
scikit-learn's trees (float64 leaf values and sums) ``1e-9 (1 + max |response|)``.
A disagreement returns a one-line reason; the caller falls back to brute force
(``method="auto"``) or raises (``method="tree"``).

The verdict is cached per fitted model (a weak reference, so no model is kept alive)
and per parse (a CRC of the node table, so a model refit in place is checked again):
a bootstrap pays one check per refit, however many feature sets and engine calls it
makes; columns not yet probed on a cached model are probed on their own.
"""

from __future__ import annotations

import weakref
import zlib

import numpy as np

from ._table import _Table
from ._tree_compiled import _kernel, _kernel_base
from ._tree_model import TreeModel, model_grid
from ._tree_walk import _raw_outputs
from .response import response_function

#: background rows of the probe
PROBE_ROWS = 64
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def probe_rows(n_rows: int, k: int = PROBE_ROWS) -> np.ndarray:
    """``min(k, n_rows)`` evenly spaced row positions (deterministic)."""
    return np.unique(np.linspace(0, n_rows - 1, min(k, n_rows)).round().astype(np.intp))


def _fingerprint(model: TreeModel) -> int:
    crc = 0
    for arr in (model.feature, model.threshold, model.value, model.left, model.right, model.missing_left,
                model.cat_row, model.cat_left, model.roots):
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


def _missing_values(model: TreeModel, k: int, phase: int) -> np.ndarray:
    """NaN, alternating with the reader's ``missing=`` sentinel when it has one."""
    sentinel = getattr(model.source, "missing_value", None)
    out = np.full(k, np.nan)
    if sentinel is not None:
        out[(np.arange(k) + phase) % 2 == 1] = float(sentinel)
    return out


def _tolerance(model: TreeModel, ref: np.ndarray) -> float:
    scale = 1.0 + float(np.nanmax(np.abs(ref), initial=0.0))
    if model.source is None:  # scikit-learn trees: float64 leaf values and sums (float32 inputs or not)
        return 1e-9 * scale
    leaf = float(np.abs(model.value).max(initial=0.0))
    return 2e-5 * scale + 1e-7 * len(model.roots) * leaf


def _tree_response(model: TreeModel, xt: np.ndarray) -> np.ndarray:
    kern = _kernel()
    if kern is None:
        raw = _raw_outputs(model, xt)
    else:
        nodes, thr = _kernel_base(model)
        raw = kern.descend(nodes, thr, np.ascontiguousarray(model.cat_left, dtype=np.bool_),
                           np.ascontiguousarray(model.value, dtype=np.float64),
                           np.ascontiguousarray(model.roots, dtype=np.int64), np.ascontiguousarray(xt))
    raw = raw + model.offset[None, :]
    if model.link is None:
        return raw
    return np.asarray(model.link(raw), dtype=np.float64).reshape(len(raw), -1)


def check_reading(prepared, estimator, X, response_method: str, grids: dict) -> str | None:
    """Compare the engine's reading of ``estimator`` with its own response on a probe.

    Parameters
    ----------
    prepared : PreparedTrees or PreparedPipeline
        The read model; ``prepared.probe(rows, substitutions)`` gives the probe in tree space.
    estimator : fitted estimator
        The model whose response the PD averages (the whole pipeline for a pipeline).
    X : array-like of shape (n_rows, n_features)
        Background rows (input space).
    response_method : str
        The resolved response.
    grids : dict of int to 1-D array
        Input column -> its grid values (the features of interest).

    Returns
    -------
    str or None
        None when the reading reproduces the response on the probe, else the reason.
    """
    model = prepared.model
    try:
        entry = _CACHE.setdefault(estimator, {})
    except TypeError:  # not weak-referenceable or unhashable: no cache
        entry = {}
    key = (response_method, _fingerprint(model))
    state = entry.get(key)
    if state is not None and state["reason"] is not None:
        return state["reason"]
    done = set() if state is None else state["columns"]
    todo = {j: g for j, g in grids.items() if (j, _values_key(g)) not in done}
    if state is not None and not todo:
        return None
    reason = _probe(prepared, estimator, X, response_method, todo, background=state is None)
    entry[key] = {"reason": reason, "columns": done | {(j, _values_key(g)) for j, g in todo.items()}}
    return reason


def _probe(prepared, estimator, X, response_method: str, grids: dict, background: bool) -> str | None:
    """The check itself: all probe variants stacked, one call of the model's response, one descent."""
    model = prepared.model
    rows = probe_rows(X.shape[0])
    k = len(rows)
    Xp = X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]
    cols = sorted(grids)
    variants = [("background rows", {})] if background else []
    if cols:
        variants.append(("grid values", {j: _cycle(grids[j], k, 7 * p) for p, j in enumerate(cols)}))
        variants.append(("missing values", {j: _missing_values(model, k, p) for p, j in enumerate(cols)}))
    if not variants:
        return None
    name = type(estimator).__name__
    ref = own = None
    for n_var in (len(variants), len(variants) - 1):  # without the missing values if the model refuses them
        try:
            ref = response_function(estimator, response_method)(_stack([_inputs(Xp, subs) for _, subs in
                                                                           variants[:n_var]]))
            own = _tree_response(model, np.concatenate([prepared.probe(rows, subs) for _, subs in
                                                        variants[:n_var]]))
            break
        except (ValueError, TypeError, IndexError) as exc:
            if variants[n_var - 1][0] != "missing values" or n_var < len(variants):
                return f"{name}.{response_method} or the tree reading failed on the probe ({exc})"
    if ref is None:
        return None
    if own.shape != ref.shape:
        return f"the tree reading gives {own.shape[1]} outputs, {name}.{response_method} {ref.shape[1]}"
    err = np.where(np.isnan(own) & np.isnan(ref), 0.0, np.abs(own - ref))
    err = np.where(np.isnan(err), np.inf, err).max(axis=1)
    tol = _tolerance(model, ref)
    for v, (what, _) in enumerate(variants[:len(ref) // k]):
        worst = float(err[v * k:(v + 1) * k].max(initial=0.0))
        if not worst <= tol:
            return (f"on {k} probe rows with {what}, the tree reading differs from {name}.{response_method} "
                    f"by up to {worst:.3g} (tolerance {tol:.2g})")
    return None


def _inputs(Xp, subs: dict):
    """The probe rows in the model's input space with column ``j`` set to ``subs[j]`` (as brute force sets it)."""
    k = Xp.shape[0]
    return _Table(Xp, list(subs), [subs[j] for j in subs]).block(np.arange(k), np.arange(k))


def _stack(parts: list):
    if hasattr(parts[0], "iloc"):
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    return np.concatenate([np.asarray(p, dtype=np.result_type(*[np.asarray(q).dtype for q in parts]))
                           for p in parts])


def tree_probe(prepared, rows: np.ndarray, subs: dict) -> np.ndarray:
    """Probe rows in the trees' space: converted background rows, features set as the engine sets grids."""
    model = prepared.model
    xt = np.array(prepared.xa[rows], dtype=np.float64)
    for j, values in subs.items():
        xt[:, model.columns[j]] = model_grid(model, j, values)
    return xt
