"""``workbook.xlsx``: the data, test predictions, parameters, metrics and one sheet per feature/pair and effect.

Cells are data, never code: every string is written as a text cell (never a formula), and
strings starting with ``=``, ``+``, ``-`` or ``@`` also get Excel's quote prefix, so editing
the cell keeps it text.  Characters XML cannot hold are replaced by ``?``.
"""

from __future__ import annotations

import datetime
import math
import numbers
import re
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .. import get_node
from . import InputError

EXCEL_MAX_ROWS = 1_048_576
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SHEET_ILLEGAL = re.compile(r"[\[\]:*?/\\\x00-\x1f]")


def require_openpyxl():
    """The ``openpyxl`` module (an optional extra); a clear error when it is missing.

    Called early (before any computing) by the run and again by :func:`write_workbook`: the one place
    this module imports openpyxl.
    """
    try:
        import openpyxl
    except ImportError:
        raise InputError(
            "Writing workbook.xlsx needs openpyxl: pip install \"pdpboot[excel]\" (or pass --no-workbook)."
        ) from None
    return openpyxl


class _Sheet:
    """A write-only sheet whose ``row`` method turns Python/NumPy values into safe cells."""

    def __init__(self, workbook, title: str):
        self._cell = require_openpyxl().cell.WriteOnlyCell
        self.ws = workbook.create_sheet(title)

    def _value(self, value):
        if value is None or value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Number) and not isinstance(value, complex):
            value = value.item() if isinstance(value, np.generic) else value
            if isinstance(value, float) and not math.isfinite(value):
                return None if math.isnan(value) else self._text("inf" if value > 0 else "-inf")
            return value
        if isinstance(value, (pd.Timestamp, datetime.datetime, datetime.date)):
            if isinstance(value, pd.Timestamp):
                value = value.to_pydatetime()
            if getattr(value, "tzinfo", None) is not None:
                return self._text(value.isoformat())
            return value
        return self._text(str(value))

    def _text(self, text: str):
        cell = self._cell(self.ws, value=None)
        cell.value = _ILLEGAL.sub("?", text)
        cell.data_type = "s"
        if text.startswith(_FORMULA_START):
            cell.quotePrefix = True
        return cell

    def row(self, values) -> None:
        self.ws.append([self._value(v) for v in values])


def sheet_title(prefix: str, label: str, taken: set[str]) -> str:
    """A unique, legal sheet name (<= 31 characters, no ``[]:*?/\\``)."""
    base = (prefix + _SHEET_ILLEGAL.sub("_", label)).strip("'")[:31] or prefix.strip()
    title, k = base, 2
    while title.lower() in taken:
        suffix = f"~{k}"
        title, k = base[: 31 - len(suffix)] + suffix, k + 1
    taken.add(title.lower())
    return title


def _cells(values: np.ndarray) -> list:
    return list(values.tolist()) if isinstance(values, np.ndarray) else list(values)


def _suffix(output, n_outputs: int) -> str:
    return "" if n_outputs == 1 else f" [{output}]"


def _band_columns(ds: xr.Dataset, var: str, output, label: str) -> list[tuple[str, xr.DataArray]]:
    """Bounds (and SE) of ``var`` for one output, as DataArrays over the feature dims."""
    cols = []
    for band, prefix in ((f"{var}_band", label), (f"{var}_band_pointwise", f"{label}_pointwise")):
        if band in ds:
            da = ds[band].sel(output=output)
            cols += [(f"{prefix}_lower", da.sel(ci_bound="lower")), (f"{prefix}_upper", da.sel(ci_bound="upper"))]
    if f"{var}_se" in ds:
        cols.append((f"{label}_se", ds[f"{var}_se"].sel(output=output)))
    return cols


def _grid_header(ds: xr.Dataset, display: str, two_d: bool) -> str:
    """A grid column's title: the feature, and ``(bin edge)``/``(level)`` for ALE's grids."""
    kinds = ds.attrs.get("ale_kind")
    if not kinds:
        return display
    kind = kinds[0] if not two_d else "numeric"
    return f"{display} ({'bin edge' if kind == 'numeric' else 'level'})"


def _node_columns(ds: xr.Dataset, fs: tuple, variables, outputs: list) -> list[tuple[str, np.ndarray]]:
    """Per output: each variable with its band bounds and SE; then ICE rows (1-D nodes with ICE)."""
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        for var in variables:
            if var in ds:
                cols.append((f"{var}{s}", ds[var].sel(output=o).transpose(*fs).values))
                cols += [(name + s, v.transpose(*fs).values) for name, v in _band_columns(ds, var, o, var)]
    if "ice" in ds and len(fs) == 1:
        ice = ds["ice"].transpose("instance", "output", *fs)
        for o in outputs:
            s = _suffix(o, len(outputs))
            block = ice.sel(output=o).values
            for k, row in enumerate(ds["instance"].values.tolist()):
                cols.append((f"ice row {row}{s}", block[k]))
    return cols


def write_node(sheet: _Sheet, ds: xr.Dataset, fs: tuple, display: tuple, variables, outputs: list) -> None:
    """One sheet of any effect's node: a row per grid value (pairs: per grid cell) with the variables'
    estimates, bounds and SEs per output, ICE rows of 1-D nodes and, when the node records them
    (ALE), ``bin_count``: training rows in the bin that ends at this edge (empty on the first edge) or at
    this level."""
    cols = _node_columns(ds, fs, variables, outputs)
    grids = [_cells(ds[f].values) for f in fs]
    counts = list(ds.attrs.get("bin_counts", [])) if len(fs) == 1 else []
    if counts and len(counts) == len(grids[0]) - 1:
        counts = [None, *counts]
    with_counts = bool(counts) and len(counts) == len(grids[0])
    sheet.row([*[_grid_header(ds, d, len(fs) == 2) for d in display], *[name for name, _ in cols],
               *(["bin_count"] if with_counts else [])])
    if len(fs) == 1:
        for i, value in enumerate(grids[0]):
            sheet.row([value, *[float(v[i]) for _, v in cols], *([counts[i]] if with_counts else [])])
        return
    for i, va in enumerate(grids[0]):
        for j, vb in enumerate(grids[1]):
            sheet.row([va, vb, *[float(v[i, j]) for _, v in cols]])


def plan_sheets(problem, results: dict, effects: dict) -> list[tuple[str, object, str]]:
    """Sheet title of every node of every effect's result: [(title, feature or (a, b), effect name)].

    ``results``: effect name -> DataTree; ``effects``: effect name -> EffectReport (its sheet prefixes).
    """
    taken: set[str] = {"data", "testpredictions", "parameters", "metrics",
                       *(t.lower() for name in results for t in effects[name].table_sheets)}
    plan = []
    for name, tree in results.items():
        one, two = effects[name].sheet_prefixes
        for node in tree.children.values():
            fs = list(node.attrs["features"])
            if len(fs) == 1:
                plan.append((sheet_title(one, problem.display[fs[0]], taken), fs[0], name))
            else:
                plan.append((sheet_title(two, f"{problem.display[fs[0]]} x {problem.display[fs[1]]}", taken),
                             tuple(fs), name))
    return plan


def write_workbook(path: Path, *, table: pd.DataFrame, outcome, problem, parameters: list[tuple[str, object]],
                   effects: dict, config=None) -> list[tuple[str, object]]:
    """Write the workbook: ``table`` as read, ``outcome``'s metrics and predictions, ``parameters`` (rows of
    the Parameters sheet) and a sheet per node of each result (``effects``: name -> EffectReport); returns
    the (sheet title, feature or pair) list of :func:`plan_sheets`."""
    wb = require_openpyxl().Workbook(write_only=True)
    try:
        plan = _fill(wb, table=table, outcome=outcome, problem=problem, parameters=parameters, effects=effects,
                     config=config)
        wb.save(path)
    except BaseException:
        for sheet in wb.worksheets:  # a half-written write-only sheet would complain when collected
            try:
                sheet.close()
            except Exception:  # noqa: BLE001, S110 - closing is best effort; the first error is raised
                pass
        raise
    return [(title, fs) for title, fs, _ in plan]


def _fill(wb, *, table, outcome, problem, parameters, effects, config=None) -> list:
    """Every sheet of :func:`write_workbook` (returns the sheet plan)."""
    outputs = problem.outputs_first
    plan = plan_sheets(problem, outcome.results, effects)

    data = _Sheet(wb, "Data")
    data.row(["row", *table.columns])
    limit = EXCEL_MAX_ROWS - 1
    for label, values in zip(table.index[:limit].tolist(), table.iloc[:limit].itertuples(index=False, name=None)):
        data.row([label, *values])

    preds = _Sheet(wb, "TestPredictions")
    if outcome.predictions is None:
        preds.row(["No test set (--test-size 0): no test predictions."])
    else:
        frame = outcome.predictions
        preds.row(["row", *frame.columns])
        for label, values in zip(frame.index.tolist(), frame.itertuples(index=False, name=None)):
            preds.row([label, *values])

    params = _Sheet(wb, "Parameters")
    params.row(["parameter", "value"])
    for name, value in parameters:
        params.row([name, value])
    if len(table) > limit:
        params.row(["note", f"The Data sheet holds the first {limit} of {len(table)} rows (Excel's limit)."])
    for title, fs, effect in plan:
        shown = problem.display[fs] if isinstance(fs, str) else " x ".join(problem.display[f] for f in fs)
        params.row([f"sheet {title}", f"{effects[effect].label} of {shown}"])

    met = _Sheet(wb, "Metrics")
    met.row(["metric", "value", "description"])
    for name, value, description in outcome.metrics:
        met.row([name, value, description])

    for name, tree in outcome.results.items():  # statistics over features (e.g. the PD-based importance)
        frames = effects[name].tables(tree, problem, config) if effects[name].tables is not None else []
        for title, frame in zip(effects[name].table_sheets, frames):
            if frame is None:
                continue
            sheet = _Sheet(wb, title)
            sheet.row(list(frame.columns))
            for values in frame.itertuples(index=False, name=None):
                sheet.row(list(values))

    for title, fs, effect in plan:
        node = get_node(outcome.results[effect], fs)
        ds = node.to_dataset()
        ds.attrs = dict(node.attrs)
        features = (fs,) if isinstance(fs, str) else tuple(fs)
        write_node(_Sheet(wb, title), ds, features, tuple(problem.display[f] for f in features),
                   effects[effect].sheet_variables, outputs)
    return plan
