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

from ..schema import get_node
from . import InputError

EXCEL_MAX_ROWS = 1_048_576
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SHEET_ILLEGAL = re.compile(r"[\[\]:*?/\\\x00-\x1f]")


def require_openpyxl() -> None:
    """Fail early (before any computing) when the workbook cannot be written."""
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise InputError(
            "Writing workbook.xlsx needs openpyxl: pip install \"pdpboot[excel]\" (or pass --no-workbook)."
        ) from None


class _Sheet:
    """A write-only sheet whose ``row`` method turns Python/NumPy values into safe cells."""

    def __init__(self, workbook, title: str):
        from openpyxl.cell import WriteOnlyCell

        self._cell = WriteOnlyCell
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


def _feature_columns(ds: xr.Dataset, feature: str, outputs: list) -> list[tuple[str, np.ndarray]]:
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        cols.append((f"pd{s}", ds["pd"].sel(output=o).values))
        cols += [(name + s, v.values) for name, v in _band_columns(ds, "pd", o, "pd")]
        if "ice_sd" in ds:
            cols.append((f"ice_sd{s}", ds["ice_sd"].sel(output=o).values))
            cols += [(name + s, v.values) for name, v in _band_columns(ds, "ice_sd", o, "ice_sd")]
    if "ice" in ds:
        ice = ds["ice"].transpose("instance", "output", feature)
        for o in outputs:
            s = _suffix(o, len(outputs))
            block = ice.sel(output=o).values
            for k, row in enumerate(ds["instance"].values.tolist()):
                cols.append((f"ice row {row}{s}", block[k]))
    return cols


def _write_feature(sheet: _Sheet, ds: xr.Dataset, feature: str, display: str, outputs: list) -> None:
    cols = _feature_columns(ds, feature, outputs)
    sheet.row([display, *[name for name, _ in cols]])
    grid = _cells(ds[feature].values)
    for i, value in enumerate(grid):
        sheet.row([value, *[float(v[i]) for _, v in cols]])


def _write_pair(sheet: _Sheet, ds: xr.Dataset, pair: tuple[str, str], display: tuple[str, str],
                outputs: list) -> None:
    a, b = pair
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        pd_o = ds["pd"].sel(output=o).transpose(a, b).values
        cols.append((f"pd{s}", pd_o))
        for name, v in _band_columns(ds, "pd", o, "pd"):
            cols.append((name + s, v.transpose(a, b).values))
    sheet.row([display[0], display[1], *[name for name, _ in cols]])
    ga, gb = _cells(ds[a].values), _cells(ds[b].values)
    for i, va in enumerate(ga):
        for j, vb in enumerate(gb):
            sheet.row([va, vb, *[float(v[i, j]) for _, v in cols]])


def _write_ale_feature(sheet: _Sheet, ds: xr.Dataset, feature: str, display: str, outputs: list) -> None:
    """Columns: bin edge (numeric) or level, then per output ale, lower, upper (pointwise ones with a
    simultaneous band), se; last ``bin_count``: full-data (training) rows in the bin that ends at this
    edge (empty on the first edge) or at this level."""
    kind = (ds.attrs.get("ale_kind") or ["numeric"])[0]
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        cols.append((f"ale{s}", ds["ale"].sel(output=o).values))
        cols += [(name.removeprefix("ale_") + s, v.values) for name, v in _band_columns(ds, "ale", o, "ale")]
    grid = _cells(ds[feature].values)
    counts = list(ds.attrs.get("bin_counts", []))
    if kind == "numeric" and len(counts) == len(grid) - 1:
        counts = [None, *counts]
    counts = counts if len(counts) == len(grid) else [None] * len(grid)
    sheet.row([f"{display} ({'bin edge' if kind == 'numeric' else 'level'})", *[name for name, _ in cols],
               "bin_count"])
    for i, value in enumerate(grid):
        sheet.row([value, *[float(v[i]) for _, v in cols], counts[i]])


def _write_ale_pair(sheet: _Sheet, ds: xr.Dataset, pair: tuple[str, str], display: tuple[str, str],
                    outputs: list) -> None:
    a, b = pair
    cols = []
    for o in outputs:
        s = _suffix(o, len(outputs))
        cols.append((f"ale{s}", ds["ale"].sel(output=o).transpose(a, b).values))
        cols += [(name.removeprefix("ale_") + s, v.transpose(a, b).values)
                 for name, v in _band_columns(ds, "ale", o, "ale")]
    sheet.row([f"{display[0]} (bin edge)", f"{display[1]} (bin edge)", *[name for name, _ in cols]])
    for i, va in enumerate(_cells(ds[a].values)):
        for j, vb in enumerate(_cells(ds[b].values)):
            sheet.row([va, vb, *[float(v[i, j]) for _, v in cols]])


def plan_sheets(problem, *, pd: bool = True, ale_pairs=None) -> list[tuple[str, object, str]]:
    """Sheet title of every feature and pair: [(title, feature or (a, b), effect)], result names.

    ``pd``: PD sheets ("PD ", "PD2 "); ``ale_pairs`` (None: no ALE): ALE sheets ("ALE ", "ALE2 ")
    of every feature and of these pairs.
    """
    taken: set[str] = {"data", "testpredictions", "parameters", "metrics"}
    plan = []
    if pd:
        plan += [(sheet_title("PD ", problem.display[f], taken), f, "pd") for f in problem.pd_features]
        plan += [(sheet_title("PD2 ", f"{problem.display[a]} x {problem.display[b]}", taken), (a, b), "pd")
                 for a, b in problem.pairs]
    if ale_pairs is not None:
        plan += [(sheet_title("ALE ", problem.display[f], taken), f, "ale") for f in problem.pd_features]
        plan += [(sheet_title("ALE2 ", f"{problem.display[a]} x {problem.display[b]}", taken), (a, b), "ale")
                 for a, b in ale_pairs]
    return plan


def write_workbook(path: Path, *, table: pd.DataFrame, outcome, problem, parameters: list[tuple[str, object]]
                   ) -> list[tuple[str, object]]:
    """Write the workbook.

    Parameters
    ----------
    table : DataFrame
        The input table as read (all rows and columns).
    outcome : pdpboot.workflow.outcome.Outcome
    problem : pdpboot.workflow.data.Problem
    parameters : list of (name, value)
        Rows of the Parameters sheet (the sheet list is appended).

    Returns
    -------
    list of (str, str or tuple)
        Sheet title and its feature or pair (result names), as from :func:`plan_sheets`.
    """
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    outputs = problem.outputs_first
    plan = plan_sheets(problem, pd=outcome.result is not None,
                       ale_pairs=outcome.ale_pairs if outcome.ale is not None else None)

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
        params.row([f"sheet {title}", f"{effect.upper()} of {shown}"])

    met = _Sheet(wb, "Metrics")
    met.row(["metric", "value", "description"])
    for name, value, description in outcome.metrics:
        met.row([name, value, description])

    for title, fs, effect in plan:
        node = get_node(outcome.result if effect == "pd" else outcome.ale, fs)
        ds = node.to_dataset()
        ds.attrs = dict(node.attrs)
        write_one, write_two = (_write_feature, _write_pair) if effect == "pd" else (_write_ale_feature,
                                                                                     _write_ale_pair)
        if isinstance(fs, str):
            write_one(_Sheet(wb, title), ds, fs, problem.display[fs], outputs)
        else:
            write_two(_Sheet(wb, title), ds, fs, (problem.display[fs[0]], problem.display[fs[1]]), outputs)
    wb.save(path)
    return [(title, fs) for title, fs, _ in plan]
