"""Read the user's table, check target and features, decide the task.

Every problem found here is an :class:`~pdpboot.workflow.InputError` (one line,
exit status 2) raised before anything is written to disk.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.dtypes import is_categorical_column as _is_categorical
from ..schema import RESERVED_NAMES
from . import InputError
from .options import shorten
from .ordinal import level_order_note

CSV_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
MIN_ROWS = 20  # rows with a target value
MIN_TRAIN_ROWS = 10
AUTO_MAX_CLASSES = 10  # an integer target with at most this many values is a class label (task=auto)
MAX_INTEGER_CLASSES = 30  # more integer values than this under --task classification: not labels
MAX_CLASSES = 100
MAX_LEVELS = 30  # categorical features with more levels: PD on the most frequent ones
MAX_INTEGER_GRID = 30
_FLOAT32_MAX = float(np.finfo(np.float32).max)  # integer features with at most this many values: PD at each value
MIN_ID_ROWS = 20  # identifier detection needs at least this many rows
NEAR_ID_SHARE = 0.5  # text with more than MAX_LEVELS values, at least this share of its rows distinct: names rows
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?(\d{1,3}(\.\d{3})+|\d+),\d+([eE][+-]?\d+)?\s*$")
_GROUPED_INTEGER = re.compile(r"[+-]?\d{1,3}(\.\d{3})+")  # 1.234 / 12.500.000
_COMMA_NUMBER = re.compile(r"[+-]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?([eE][+-]?\d+)?")  # 3,14 / 4.184,81 / 7,9e-05
_DOT_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|Inf|INF|infinity|Infinity)")
#: Text pandas reads as missing by default (``pandas.read_csv``'s list, plus a blank field): pdpboot reads only
#: empty fields as missing, and these only where a column's other values are numbers (see ``_read_tokens``).
PANDAS_NA_TOKENS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                              "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_ID_NAME = re.compile(r"(^|[_\W])(id|ids|uuid|guid|key|index|idx|rownum|row_?id)$|^unnamed: ?0$|[a-z]ID$", re.I)
_ISO_DATE = re.compile(r"^\s*\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?\s*$")
_SLASH_DATE = re.compile(r"^\s*\d{4}/\d{1,2}/\d{1,2}\s*$")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


# ----------------------------------------------------------------------------- reading


def _sniff_separator(sample: str) -> str:
    lines = [line for line in sample.splitlines()[:50] if line.strip()][:-1] or sample.splitlines()[:1]
    for sep in (";", "\t", "|"):  # a separator found the same number of times on every line wins over ','
        counts = {line.count(sep) for line in lines}
        if len(counts) == 1 and counts.pop() >= 1:
            return sep
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def looks_decimal_comma(values) -> bool:
    """Whether most (>= 90 %) of the non-missing text values are numbers written with a decimal comma."""
    text = pd.Series(values).dropna().astype(str)
    text = text[~text.str.strip().isin(PANDAS_NA_TOKENS)]
    if text.empty:
        return False
    return bool(text.str.match(_DECIMAL_COMMA).mean() >= 0.9)


def _shown(names, limit: int = 5) -> str:
    names = list(names)
    return ", ".join(shorten(n, 40) for n in names[:limit]) + (", ..." if len(names) > limit else "")


def _refuse_duplicate_header(header: list, file_name: str) -> None:
    """Refuse a header naming a column twice (pandas would silently rename the second ``a.1``)."""
    names = [str(n) for n in header if not (n is None or (isinstance(n, float) and np.isnan(n)) or str(n) == "")]
    duplicated = list(dict.fromkeys(n for n in names if names.count(n) > 1))
    if duplicated:
        raise InputError(f"{shorten(file_name)} names column(s) {_shown(duplicated)} more than once in its header; "
                         "rename them so that every column name is unique.")


def _dot_numbers(text: pd.Series) -> pd.Series | None:
    """``text`` as floats when every value is a number written with a decimal point, else None."""
    if not text.str.fullmatch(_DOT_NUMBER).all():
        return None
    return text.astype(float)


def _comma_numbers(text: pd.Series, name: str, *, require_comma: bool = True,
                   rows: np.ndarray | None = None) -> pd.Series | None:
    """``text`` as floats when it holds numbers written with a decimal comma (``3,14``, ``4.184,81``).

    Only unambiguous patterns are read: a dot is a thousands separator only in groups of three digits,
    and a number without a comma but with such a dot (``4.184``) only when another value of the column
    shows both marks (``4.184,81``).  A column that mostly (>= 90 % of its rows; ``rows`` counts the
    rows of each distinct ``text``) holds such numbers but also other text is refused, naming a value,
    rather than read as text.
    """
    matched = text.str.fullmatch(_COMMA_NUMBER)
    has_comma = text.str.contains(",", regex=False)
    if (require_comma and not (has_comma & matched).any()) or _share(matched, rows) < 0.9:
        return None
    grouped_only = matched & ~has_comma & text.str.contains(".", regex=False)
    if (require_comma and grouped_only.any()
            and not (matched & has_comma & text.str.contains(".", regex=False)).any()):
        matched = matched & ~grouped_only
    if not matched.all():
        example = text[~matched].iloc[0]
        raise InputError(
            f"Column {shorten(name)} holds numbers with a decimal comma, but {shorten(example, 40)} is not one "
            "(or is ambiguous); correct that value, or give --decimal . to read the column as text."
        )
    return text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False).astype(float)


def _share(mask: pd.Series, rows: np.ndarray | None) -> float:
    """Share of rows where ``mask`` holds (``rows``: rows per entry of ``mask``; None: one each)."""
    flags = mask.to_numpy(dtype=bool)
    weights = np.ones(flags.size) if rows is None else np.asarray(rows, dtype=float)
    return float(weights[flags].sum() / weights.sum()) if weights.sum() else 0.0


def _missing_marker(text: pd.Series, rows: np.ndarray | None = None) -> str | None:
    """The one non-number of a column that is otherwise (>= 90 % of rows) numbers (``?``, ``-``), else None."""
    numbers = text.str.fullmatch(_DOT_NUMBER) | text.str.fullmatch(_COMMA_NUMBER)
    others = text[~numbers].unique()
    return str(others[0]) if len(others) == 1 and _share(numbers, rows) >= 0.9 else None


#: spellings of one missing-value mark (a column written by one program uses one of them)
_MARK_FAMILY = {"none": "none", "null": "null"}


def _one_missing_mark(tokens: pd.Series) -> bool:
    """Whether pandas' missing-value tokens in a column are spellings of one mark (``NA``/``NaN``/``n/a``...,
    or ``None``, or ``NULL``): then a column of nothing else is missing throughout; tokens of several marks
    (``None``, ``NA``, ``null``) are the levels of a text column."""
    return len({_MARK_FAMILY.get(str(t).lower(), "na") for t in tokens}) == 1


def _read_tokens(table: pd.DataFrame, notes: list[str], *, comma: bool | str,
                 infer: bool) -> tuple[pd.DataFrame, list[str]]:
    """Decide what the text cells of ``table`` are; only empty fields were read as missing.

    A text column whose values other than pandas' missing-value tokens (``NA``, ``None``, ``NULL``,
    ``n/a``, ...) are all numbers is numeric, those tokens missing (R's ``write.csv`` writes ``NA`` for
    a missing number); a column holding only such tokens, all spellings of one mark, is missing throughout
    (tokens of several marks, ``None``/``NA``/``null``, are levels).  Otherwise the tokens
    are levels (the Arthritis table's ``Improved = "None"``), and a note says so.  With ``comma``,
    numbers written with a decimal comma (and thousands dots) are read as numbers
    (:func:`_comma_numbers`).  ``infer=False`` (Parquet: typed columns) only writes the notes.
    Returns the table and the columns read with a decimal comma.
    """
    kept: dict[str, list[str]] = {}
    as_missing: list[str] = []
    commas: list[str] = []
    blanks: list[str] = []
    spaced: list[str] = []
    cased: list[str] = []
    for name in table.columns:
        col = table[name]
        if not (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
            continue
        present = col.notna().to_numpy()
        if not present.any():
            continue
        # each distinct cell is decided once (text columns repeat their values), then mapped to the rows
        codes, distinct = pd.factorize(col.to_numpy(dtype=object)[present])
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in distinct):
            continue
        text = pd.Series([str(v).strip() for v in distinct], dtype=object)
        counts = np.bincount(codes, minlength=len(distinct))
        blank = (text == "").to_numpy()
        if blank.any():  # an empty field, whatever spaces it holds (or a Parquet/Excel empty string)
            rows = np.zeros(len(col), dtype=bool)
            rows[np.flatnonzero(present)[blank[codes]]] = True
            col = col.mask(rows)
            table[name] = col
            blanks.append(name)
        is_token = text.isin(PANDAS_NA_TOKENS).to_numpy() & ~blank
        is_rest = ~blank & ~is_token
        rest = text[is_rest]
        numbers = None
        if infer and is_rest.any():
            # numbers pandas left as text only because of a token or a blank (huge integers stay text: IDs)
            if comma != "only" and (is_token.any() or blank.any()):
                numbers = _dot_numbers(rest)
            if numbers is None and comma:
                numbers = _comma_numbers(rest, name, require_comma=comma != "only", rows=counts[is_rest])
                if numbers is not None:
                    commas.append(name)
        only_marks = infer and not is_rest.any() and is_token.any() and _one_missing_mark(text[is_token])
        if numbers is not None or only_marks:
            values = np.full(len(distinct), np.nan)
            if numbers is not None:
                values[is_rest] = numbers.to_numpy(dtype=float)
            column = np.full(len(col), np.nan)
            column[present] = values[codes]
            table[name] = pd.Series(column, index=col.index, name=name)
            tokens = ", ".join(repr(t) for t in sorted(set(text[is_token])))
            if numbers is None:
                notes.append(f"Column {name!r} holds only missing-value marks ({tokens}): read as missing.")
            elif is_token.any():
                as_missing.append(f"{name!r} ({tokens}, {int(counts[is_token].sum())} row(s))")
        else:
            for token in sorted({str(v) for v in distinct[is_token]}):
                kept.setdefault(token, []).append(name)
            _strip_levels(table, name, distinct, text, codes, present, ~blank, spaced, cased)
            marker = _missing_marker(rest, counts[is_rest]) if infer and is_rest.any() else None
            if marker is not None:
                n_marked = int(counts[is_rest][(rest == marker).to_numpy()].sum())
                notes.append(f"Column {name!r} holds numbers and the text {marker!r} ({n_marked} row(s)), so it is "
                             f"read as text (categories); if {marker!r} marks a missing value, give --na-values "
                             f"{shorten(marker, 30)}.")
    if blanks:
        notes.append(f"Blank cells (empty text or only spaces) in column(s) {_shown(blanks)} were read as missing "
                     "values, as empty fields are.")
    if spaced:
        notes.append(f"Spaces before or after the text were removed in column(s) {', '.join(spaced[:5])}"
                     f"{', ...' if len(spaced) > 5 else ''}: they would have made separate levels of one value.")
    for note in cased:
        notes.append(note)
    if as_missing:
        notes.append(f"Column(s) {', '.join(as_missing[:5])}{', ...' if len(as_missing) > 5 else ''} hold numbers "
                     "and a missing-value mark: read as numbers, those rows missing.")
    for token, columns in kept.items():
        notes.append(f"The text {token!r} in column(s) {_shown(columns)} is kept as a level, not read as a missing "
                     f"value (only empty fields are missing; give --na-values {shorten(token, 30)} to read it as "
                     "missing).")
    if commas and comma is True:
        notes.append(f"Numbers with a decimal comma (e.g. in {_shown(commas)}) were read as numbers "
                     "(--decimal , ; give --decimal . to read them as text).")
    return table, commas


def _strip_levels(table: pd.DataFrame, name: str, distinct: np.ndarray, text: pd.Series, codes: np.ndarray,
                  present: np.ndarray, filled: np.ndarray, spaced: list[str], cased: list[str]) -> None:
    """Text levels without surrounding spaces (``" Male"`` and ``"Male "`` are ``"Male"``), and a note on levels
    that differ only in upper/lower case (kept apart: the case may carry meaning, but usually it does not).

    ``distinct`` are the column's distinct present cells, ``text`` their stripped text, ``codes`` the
    present rows' indices into them, ``filled`` the distinct cells that are not blank.
    """
    stripped = text.to_numpy(dtype=object)
    changed = np.array([isinstance(v, str) and v != t for v, t in zip(distinct, stripped)], dtype=bool) & filled
    if changed.any():
        values = np.where(changed, stripped, distinct)
        col = table[name].astype(object)
        col.iloc[np.flatnonzero(present)] = values[codes]
        table[name] = col if table[name].dtype == object else col.astype(table[name].dtype)
        first = int(np.flatnonzero(changed)[0])
        spaced.append(f"{name!r} ({int(np.isin(codes, np.flatnonzero(changed)).sum())} row(s), e.g. "
                      f"{shorten(str(distinct[first]), 30)} became {shorten(str(stripped[first]), 30)})")
    levels = sorted({t for t, ok in zip(stripped, filled) if ok and isinstance(t, str)})
    groups: dict[str, list[str]] = {}
    for level in levels:
        groups.setdefault(level.casefold(), []).append(level)
    alike = [group for group in groups.values() if len(group) > 1]
    if alike:
        shown = "; ".join(", ".join(shorten(v, 20) for v in group) for group in alike[:3])
        cased.append(f"Column {name!r} has levels that differ only in upper/lower case ({shown}"
                     f"{'; ...' if len(alike) > 3 else ''}): kept as separate levels; if they mean the same, write "
                     "them alike in the data file.")


def _refuse_ambiguous_dots(text: str, sep: str, table: pd.DataFrame, commas: list[str], file_name: str) -> None:
    """Refuse a column of ``1.234``-like numbers in a file whose other columns use decimal commas.

    pandas reads ``1.234`` as 1.234, but next to ``4.184,81`` the dot is a thousands separator (1234):
    which one the column means cannot be told, and either guess can be a silently wrong number.
    """
    raw = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[""])
    for name in table.columns:
        if name in commas or table[name].dtype.kind != "f" or name not in raw.columns:
            continue
        values = raw[name].dropna().str.strip()
        values = values[~values.isin(PANDAS_NA_TOKENS)]
        if len(values) and values.str.fullmatch(_GROUPED_INTEGER).all():
            raise InputError(
                f"Column {shorten(name)} of {shorten(file_name)} holds numbers such as {shorten(values.iloc[0], 30)}, "
                f"which are thousands with a dot separator next to the decimal commas of {_shown(commas, 2)} but "
                "decimals otherwise; give --decimal , (dots separate thousands) or --decimal . (dots are decimals)."
            )


def _read_csv(path: Path, notes: list[str], sep: str | None = None, decimal: str = "auto",
              na_values: tuple[str, ...] = ()) -> pd.DataFrame:
    raw = path.read_bytes()
    if b"\x00" in raw[:4096]:
        raise InputError(f"Cannot read {shorten(path.name)} as CSV: it looks like a binary file.")
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    if encoding == "latin-1":
        notes.append("The data file is not valid UTF-8; it was read as Latin-1.")
    if not text.strip():
        raise InputError(f"Cannot read {shorten(path.name)}: the file is empty.")
    if sep in ("\\t", "tab"):
        sep = "\t"
    if sep is None:
        sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else _sniff_separator(text[:65536])
    try:
        header = pd.read_csv(io.StringIO(text), sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
        _refuse_duplicate_header(header.iloc[0].tolist() if len(header) else [], path.name)
        table = pd.read_csv(io.StringIO(text), sep=sep, decimal="," if decimal == "," else ".",
                            keep_default_na=False, na_values=["", *na_values])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"Cannot read {shorten(path.name)} as CSV: {first}") from None
    # decimal ",": pandas has read "3,14"; ours reads "4.184,81". auto: commas unless ',' separates fields
    comma = "only" if decimal == "," else (decimal == "auto" and sep != ",")
    table, commas = _read_tokens(table, notes, comma=comma, infer=True)
    if commas and comma is True:
        _refuse_ambiguous_dots(text, sep, table, commas, path.name)
    return table


def _read_parquet(path: Path, notes: list[str], na_values: tuple[str, ...] = ()) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError(
            f"Reading Parquet ({shorten(path.name)}) needs pyarrow: pip install \"pdpboot[parquet]\"."
        ) from None
    try:
        table = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
        raise InputError(f"Cannot read {shorten(path.name)} as Parquet: {str(exc).splitlines()[0]}") from None
    if na_values:
        numbers = [float(t) for t in na_values if _DOT_NUMBER.fullmatch(t.strip())]
        for name in table.columns:
            col = table[name]
            if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
                table[name] = col.where(~col.astype(str).str.strip().isin(na_values) | col.isna())
            elif numbers and pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
                hit = col.isin(numbers)
                if hit.any():
                    table[name] = col.astype("float64").where(~hit)
    return _read_tokens(table, notes, comma=False, infer=False)[0]


def _read_excel(path: Path, notes: list[str], na_values: tuple[str, ...] = ()) -> pd.DataFrame:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise InputError(
            f"Reading Excel ({shorten(path.name)}) needs openpyxl: pip install \"pdpboot[excel]\"."
        ) from None
    try:
        with pd.ExcelFile(path, engine="openpyxl") as book:  # the workbook opened once for all three reads
            header = pd.read_excel(book, sheet_name=0, header=None, nrows=2)
            _refuse_title_rows(header, path.name)
            _refuse_duplicate_header(header.iloc[0].tolist() if len(header) else [], path.name)
            table = pd.read_excel(book, sheet_name=0, keep_default_na=False, na_values=["", *na_values])
            sheets = book.sheet_names
        if table.isna().to_numpy().any():
            _refuse_uncached_formulas(path)
        if table.shape[0] == 0 and len(sheets) > 1:
            raise InputError(f"The first sheet {shorten(sheets[0])} of {shorten(path.name)} holds no data rows; "
                             f"pdpboot reads the first sheet (this workbook has {', '.join(map(shorten, sheets))}"
                             "): move the table to the first sheet, or save it as CSV.")
        if len(sheets) > 1:
            notes.append(f"{SHEET_NOTE} {shorten(sheets[0])} of {shorten(path.name)} (its sheets: "
                         f"{', '.join(map(shorten, sheets[:6]))}{', ...' if len(sheets) > 6 else ''}).")
    except (zipfile.BadZipFile, ValueError, KeyError, OSError) as exc:
        raise InputError(f"Cannot read {shorten(path.name)} as an Excel workbook: {str(exc).splitlines()[0]}") from None
    return _read_tokens(table, notes, comma=False, infer=True)[0]


#: The start of the note saying which sheet of a workbook of several was read.
SHEET_NOTE = "Read the first sheet"


def _refuse_title_rows(top: pd.DataFrame, file_name: str) -> None:
    """Refuse a sheet whose first row is a title (merged cells: mostly empty) above the real header row."""
    if len(top) < 2 or top.shape[1] < 2:
        return
    first, second = top.iloc[0], top.iloc[1]
    empty = first.isna().mean()
    if empty >= 0.5 and second.notna().all() and all(isinstance(v, str) for v in second):
        title = next((str(v) for v in first if pd.notna(v)), "")
        shown = f" (a title: {shorten(title, 40)})" if title else ""
        raise InputError(f"The first row of {shorten(file_name)} is mostly empty cells{shown} above "
                         "a full row of names: the header seems to be in row 2 (merged title cells?). Delete the rows "
                         "above the header, or save the table as CSV.")


def _refuse_uncached_formulas(path: Path) -> None:
    """Refuse formula cells of the first sheet that carry no saved result (read as missing values).

    Excel and LibreOffice save each formula's last result; a workbook written by a program (openpyxl,
    ``DataFrame.to_excel`` with formulas) and never opened holds the formula only, which pandas reads as
    an empty cell.  Runs only when the table has missing values.
    """
    try:
        import openpyxl
    except ImportError as exc:  # the caller read the workbook with openpyxl already; kept for a clear message
        raise InputError(f"Reading Excel ({shorten(path.name)}) needs openpyxl: "
                         "pip install \"pdpboot[excel]\".") from exc

    formulas = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        sheet = formulas.worksheets[0]
        header = [c.value for c in next(sheet.iter_rows(max_row=1), ())]
        cells = {(i, j) for i, row in enumerate(sheet.iter_rows(min_row=2)) for j, c in enumerate(row)
                 if getattr(c, "data_type", None) == "f" or (isinstance(c.value, str) and c.value.startswith("="))}
    finally:
        formulas.close()
    if not cells:
        return
    values = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        empty = [j for i, row in enumerate(values.worksheets[0].iter_rows(min_row=2)) for j, c in enumerate(row)
                 if (i, j) in cells and c.value is None]
    finally:
        values.close()
    if empty:
        columns = sorted({str(header[j]) if j < len(header) else f"#{j + 1}" for j in empty})
        raise InputError(f"{shorten(path.name)}: column(s) {', '.join(map(shorten, columns))} hold {len(empty)} "
                         "formula cell(s) without a saved result (the workbook was written by a program and never "
                         "recalculated), which would be read as missing values; open and save it in Excel or "
                         "LibreOffice, or export it as CSV, first.")


def read_table(path: str | Path, notes: list[str] | None = None, *, sep: str | None = None,
               decimal: str = "auto", na_values=()) -> pd.DataFrame:
    """Read a CSV, Parquet or Excel (.xlsx, first sheet) table.

    Only empty fields (and the tokens in ``na_values``) are missing: text such as ``None``, ``NA`` or
    ``NULL``, which pandas reads as missing by default, stays a level of a text column (with a note),
    and is missing only in a column whose other values are all numbers (see :func:`_read_tokens`).
    CSV: the separator is detected unless ``sep`` is given; ``decimal="auto"`` reads numbers
    written with a decimal comma (``3,14``, ``4.184,81``) as numbers when the separator is not a comma.
    A header that names a column twice is refused (CSV, Excel).

    Parameters
    ----------
    path : str or Path
        The table.
    notes : list of str, optional
        Receives one line per decision taken while reading ("What was done to the data").
    sep : str, optional
        CSV field separator (detected when None).
    decimal : {"auto", ".", ","}
        CSV decimal mark.
    na_values : sequence of str
        Further text that marks a missing value (``--na-values``).

    Returns
    -------
    pandas.DataFrame
        Columns named by strings, rows in file order with a fresh RangeIndex.
    """
    notes = notes if notes is not None else []
    na_values = tuple(str(t) for t in (na_values or ()))
    path = Path(path)
    if not path.exists():
        raise InputError(f"Data file {shorten(str(path))} does not exist.")
    if not path.is_file():
        raise InputError(f"{shorten(str(path))} is not a file; give the path of a CSV, Parquet or Excel table.")
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        table = _read_csv(path, notes, sep=sep, decimal=decimal, na_values=na_values)
    elif suffix in PARQUET_SUFFIXES:
        table = _read_parquet(path, notes, na_values)
    elif suffix in EXCEL_SUFFIXES:
        table = _read_excel(path, notes, na_values)
    elif suffix == ".xls":
        raise InputError(f"{shorten(path.name)} is in the old .xls format; save it as .xlsx or .csv first.")
    else:
        raise InputError(
            f"Cannot read {shorten(path.name)}: unsupported format {suffix or '(no extension)'!r}; "
            "use CSV (.csv, .tsv, .txt), Parquet (.parquet) or Excel (.xlsx)."
        )
    if table.shape[1] == 0 or table.shape[0] == 0:
        raise InputError(f"{shorten(path.name)} holds no data rows (shape {table.shape}).")
    table.columns = [str(c) for c in table.columns]
    duplicated = sorted({c for c in table.columns if list(table.columns).count(c) > 1})
    if duplicated:
        raise InputError(f"{shorten(path.name)} has duplicate column names {duplicated}; rename them.")
    return table.reset_index(drop=True)


def load_problem(config: dict, path: str | Path) -> tuple[pd.DataFrame, Problem]:
    """Read the table at ``path`` and check it against ``config`` (the reading notes come first)."""
    notes: list[str] = []
    table = read_table(path, notes, sep=config.sep, decimal=config.decimal, na_values=config.na_values)
    try:
        problem = prepare(config, table)
    except InputError as exc:  # a column not found on the sheet read: say which sheet that was
        sheet = next((n for n in notes if n.startswith(SHEET_NOTE)), None)
        if sheet is None or not str(exc).startswith("Unknown"):
            raise
        raise InputError(f"{exc} ({sheet[:-1]}: pdpboot reads the first sheet; move the table there, or save it "
                         "as CSV.)") from None
    problem.notes[:0] = notes
    return table, problem


# ----------------------------------------------------------------------------- names


def result_name(name: str, taken: set[str]) -> str:
    """A name netCDF and the result schema can store (``name`` itself when it already is).

    netCDF names cannot contain ``/`` or control characters, start with anything but a
    letter, digit, ``_`` or a non-ASCII character, or end in white space; pdpboot reserves
    its dim and variable names (``output``, ``pd``, ...).
    """
    safe = name.replace("/", "\u2215")
    safe = "".join(ch if ch >= " " and ch != "\x7f" else "_" for ch in safe)
    if safe != safe.rstrip():
        safe = safe.rstrip() + "_"
    if not safe or not (safe[0] == "_" or (safe[0].isascii() and safe[0].isalnum()) or ord(safe[0]) > 127):
        safe = "_" + safe
    if safe in RESERVED_NAMES:
        safe += "_"
    candidate, k = safe, 2
    while candidate != name and candidate in taken:
        candidate, k = f"{safe}_{k}", k + 1
    return candidate


def _closest(name: str, names: list[str]) -> str:
    same_case = [n for n in names if n.casefold() == str(name).casefold()]
    close = same_case or difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    hint = f" Did you mean {shorten(close[0])}?" if close else ""
    shown = [shorten(n, 40) for n in names[:40]] + (["..."] if len(names) > 40 else [])
    return f"{hint} Available columns: {', '.join(shown)}."


def _need_column(name: str, columns: list[str], role: str) -> str:
    if name not in columns:
        raise InputError(f"Unknown {role} column {shorten(name)}.{_closest(name, columns)}")
    return name


# ----------------------------------------------------------------------------- the problem


@dataclass
class Problem:
    """The checked analysis: model inputs, target, PD features and task, with safe names."""

    X: pd.DataFrame  # model input columns, renamed to result names; index = row in the input table
    y: pd.Series  # name = the original target name
    target: str
    features: list[str]  # result names of the model inputs
    pd_features: list[str]
    pairs: list[tuple[str, str]]
    categorical: list[str]  # result names of the categorical model inputs
    custom_values: dict[str, np.ndarray]
    task: str
    classes: list | None = None
    positive: object = None
    display: dict[str, str] = field(default_factory=dict)  # result name -> original column name
    notes: list[str] = field(default_factory=list)
    points: list[str] = field(default_factory=list)  # numeric (binary) features whose PD is drawn as points
    groups: pd.Series | None = None  # cluster labels of the rows (--groups), aligned with X

    @property
    def outputs_first(self) -> list:
        """Outputs in report order: the positive class first for binary classification."""
        if self.task != "classification":
            return [str(self.y.name)]
        return [self.positive, *[c for c in self.classes if c != self.positive]]


def _normalise_column(col: pd.Series) -> pd.Series:
    """Nullable numeric extension dtypes -> NumPy float/int; nullable booleans -> object."""
    if isinstance(col.dtype, pd.api.extensions.ExtensionDtype) and not _is_categorical(col):
        if pd.api.types.is_numeric_dtype(col.dtype):
            return col.astype("float64") if col.isna().any() else col.astype(col.dtype.numpy_dtype)
    if pd.api.types.is_bool_dtype(col.dtype) and isinstance(col.dtype, pd.api.extensions.ExtensionDtype):
        return col.astype(object).where(col.notna(), np.nan)
    return col


def _describe(value) -> str:
    return repr(value.item() if hasattr(value, "item") else value)


def _decide_task(y: pd.Series, requested: str, name: str) -> tuple[str, pd.Series]:
    numeric = pd.api.types.is_numeric_dtype(y.dtype) and not pd.api.types.is_bool_dtype(y.dtype)
    values = y.to_numpy()
    integer_like = numeric and (y.dtype.kind in "iu" or bool(np.all(np.mod(values.astype(float), 1) == 0)))
    n_levels = y.nunique()
    comma = not numeric and looks_decimal_comma(y)
    if comma:
        raise InputError(
            f"Target {shorten(name)} holds numbers written with a decimal comma (e.g. {_describe(y.iloc[0])}), read "
            "as text. Pass --decimal , (and --sep ';' if the fields are separated by semicolons)."
        )
    if requested == "regression":
        if not numeric:
            example = _describe(y.iloc[0])
            raise InputError(
                f"Target {shorten(name)} is not numeric (e.g. {example}); regression needs numbers. "
                "Use --task classification (or auto)."
            )
        return "regression", y.astype(float)
    if requested == "auto":
        task = "classification" if (not numeric or (integer_like and n_levels <= AUTO_MAX_CLASSES)) else "regression"
        if task == "regression":
            return task, y.astype(float)
    else:
        task = "classification"
        if numeric and not integer_like:
            raise InputError(
                f"Target {shorten(name)} has non-integer numbers ({n_levels} distinct values); it is not a class "
                "label. Use --task regression."
            )
        if numeric and n_levels > MAX_INTEGER_CLASSES:
            raise InputError(
                f"Target {shorten(name)} is integer-coded with {n_levels} distinct values; that looks like a "
                f"quantity, not classes (at most {MAX_INTEGER_CLASSES} integer classes). Use --task regression."
            )
    if n_levels > MAX_CLASSES:
        raise InputError(f"Target {shorten(name)} has {n_levels} classes; pdpboot run handles at most {MAX_CLASSES}.")
    if integer_like and y.dtype.kind == "f":
        y = y.astype(np.int64)
    return task, y


def _resolve_positive(classes: list, wanted, name: str):
    if wanted is None:
        return classes[-1] if len(classes) == 2 else classes[0]
    for c in classes:
        if str(c) == str(wanted):
            return c
    raise InputError(
        f"--positive-class {shorten(wanted)} is not a class of target {shorten(name)}; classes: "
        f"{', '.join(shorten(c, 30) for c in classes[:20])}{', ...' if len(classes) > 20 else ''}."
    )


def _check_target(y: pd.Series, task: str, name: str, test_size: float) -> list:
    if task == "regression":
        if not np.isfinite(y.to_numpy()).all():
            raise InputError(f"Target {shorten(name)} contains infinite values; replace or drop those rows.")
        if y.nunique() < 2:
            raise InputError(f"Target {shorten(name)} is constant (every value is {_describe(y.iloc[0])}); "
                             "there is nothing to model.")
        return []
    counts = y.value_counts()
    if len(counts) < 2:
        raise InputError(f"Target {shorten(name)} has a single class ({_describe(counts.index[0])}); "
                         "classification needs at least two.")
    rare = counts[counts < 2]
    if len(rare) and test_size > 0:
        raise InputError(
            f"Class(es) {', '.join(map(_describe, rare.index))} of target {shorten(name)} have a single row; the "
            "stratified train/test split needs at least 2 per class. Drop or merge those rows, or use --test-size 0."
        )
    try:
        return sorted(counts.index.tolist())
    except TypeError:
        return sorted(counts.index.tolist(), key=str)


def _choose_features(config: dict, table: pd.DataFrame, target: str, notes: list[str]) -> tuple[list, dict]:
    columns = list(table.columns)
    exclude = [_need_column(c, columns, "--exclude") for c in config.exclude]
    explicit = config.features is not None
    if explicit:
        features = [_need_column(c, columns, "feature") for c in config.features]
        if target in features:
            raise InputError(f"The target {shorten(target)} cannot also be a feature; remove it from --features.")
        duplicated = sorted({f for f in features if features.count(f) > 1})
        if duplicated:
            raise InputError(f"--features names {duplicated} more than once.")
    else:
        features = [c for c in columns if c != target and c not in exclude]
    keep = [_need_column(c, columns, "--keep") for c in config.keep]
    if config.groups is not None:
        _need_column(config.groups, columns, "--groups")
        if config.groups == target or config.groups in (config.features or []):
            raise InputError(f"--groups {shorten(config.groups)} cannot also be the target or a feature.")
        features = [c for c in features if c != config.groups]
    chosen, skipped = [], {}  # skipped: name -> why (for a later --pd-features / --pairs message)
    for name in features:
        col = table[name]
        reason = None
        if col.isna().all():
            reason = "has only missing values"
        elif pd.api.types.is_timedelta64_dtype(col.dtype):
            reason = "holds time spans (convert them to numbers to use them)"
        elif col.nunique(dropna=True) < 2:
            reason = f"is constant ({_describe(col.dropna().iloc[0])})"
        elif name not in keep:
            reason = unit_number_reason(col) or text_date_reason(col)
        if reason and explicit:
            raise InputError(f"Feature {shorten(name)} {reason}; it cannot be used.")
        if not reason and not explicit and name not in keep and as_dates(col) is None:
            why = identifier_reason(col, name)
            if why:
                skipped[name] = f"it {why} (--keep {name} uses it anyway)"
                notes.append(f"Column {name!r} not used: it {why}, so it identifies rows rather than describing "
                             "them (--keep " + name + " uses it anyway).")
                continue
        if reason:
            skipped[name] = f"it {reason}"
            notes.append(f"Column {name!r} not used: it {reason}.")
        else:
            chosen.append(name)
    if not chosen:
        why = "; ".join(f"{shorten(name)}: {reason}" for name, reason in list(skipped.items())[:3])
        raise InputError("No usable feature columns are left" + (f" ({why})" if why else "")
                         + "; check --features / --exclude.")
    return chosen, skipped


#: A number with a currency or percent sign ("$1,234.50", "12 %", "€ 3.5"): text a model cannot use as a number.
_UNIT_NUMBER = r"\s*[$€£¥]?\s*[-+]?[$€£¥]?\s*\d[\d,.\s']*\s*(%|[$€£¥])?\s*"


#: A number followed by one unit word ("78.0 mmHg", "12 kg", "3.5 km/h"); group 1 is the unit.
_WORD_UNIT_NUMBER = r"^\s*[-+]?\d[\d,.]*\s+([A-Za-zµ°][A-Za-zµ°/²³]*\.?)\s*$"
_PLAIN_NUMBER = r"\s*[-+]?\d[\d,.]*\s*"


def unit_number_reason(col: pd.Series) -> str | None:
    """Why ``col`` cannot be used as it is: numbers written as text with a currency or percent sign, or with one
    unit word after them ("78.0 mmHg"), None if not.

    Only text with more than ``MAX_LEVELS`` distinct values (a few such levels are usable categories).
    """
    values = col.dropna()
    if not _is_categorical(col) or pd.api.types.is_bool_dtype(col.dtype) or values.nunique() <= MAX_LEVELS:
        return None
    text = values.astype(str)
    unit = text.str.extract(_WORD_UNIT_NUMBER)[0]
    if unit.notna().mean() >= 0.5 and (unit.notna() | text.str.fullmatch(_PLAIN_NUMBER)).mean() >= 0.95 \
            and unit.dropna().str.casefold().nunique() == 1:  # one unit word after (almost) every number
        return (f"holds numbers written as text with the unit {shorten(unit.dropna().iloc[0], 20)} (e.g. "
                f"{shorten(str(values[unit.notna()].iloc[0]))}); remove the unit to use it as a number")
    if text.str.fullmatch(_UNIT_NUMBER).mean() < 0.95 or text.str.contains("[$€£¥%]").mean() < 0.95:
        return None  # plain digits (ZIP codes, codes with leading zeros) are not numbers with a sign
    return (f"holds numbers written as text with a currency or percent sign (e.g. {shorten(str(values.iloc[0]))}); "
            "remove the signs and thousands separators to use it as a number")


_DAY_MONTH_DATE = r"\s*\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}(\s+\d{1,2}:\d{2}(:\d{2})?)?\s*"


def text_date_reason(col: pd.Series) -> str | None:
    """Why ``col`` is not used: dates written day and month first (``03/04/2020``: 3 April or 4 March?),
    which :func:`as_dates` does not guess (None when the column is something else)."""
    if not (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
        return None
    text = col.dropna().astype(str)
    if text.empty or text.str.fullmatch(_DAY_MONTH_DATE).mean() < 0.95:
        return None
    return (f"holds dates written with the day and month first (e.g. {shorten(str(text.iloc[0]), 30)}), which "
            "may be read either way; write them as year-month-day (2020-04-03) to use them as dates")


def identifier_reason(col: pd.Series, name: str) -> str | None:
    """Why ``col`` looks like a row identifier (None when it does not).

    Text with a different value in every row, or with more than ``MAX_LEVELS`` distinct values that
    are at least ``NEAR_ID_SHARE`` of its rows (names of cars, people, places); integer columns of
    consecutive integers in row order (a row counter: steps of exactly +1 or -1, so a monotone
    measurement such as a population series is kept) or with a different value in every row and an
    ID-like name (``id``, ``CustomerID``, ``ride_id``, ``Unnamed: 0``, ...).  Needs at least
    ``MIN_ID_ROWS`` non-missing values.
    """
    values = col.dropna()
    if len(values) < MIN_ID_ROWS:
        return None
    distinct = values.nunique()
    text = _is_categorical(col) and not pd.api.types.is_bool_dtype(col.dtype)
    if text and distinct > MAX_LEVELS and distinct >= NEAR_ID_SHARE * len(values) and distinct != len(values):
        return (f"has {distinct} distinct values in {len(values)} rows (nearly one per row; a model can only "
                "memorise them)")
    if distinct != len(values):
        return None
    if text:
        return "has a different value in every row"
    if col.dtype.kind not in "iu":  # integer dtype only: integer-valued floats are measurements
        return None
    numbers = values.to_numpy(dtype=float)
    steps = np.diff(numbers)
    if np.all(steps == 1) or np.all(steps == -1):  # a monotone measurement (population by month) is data
        return "counts the rows (consecutive integers in row order)"
    if _ID_NAME.search(str(name)):
        return "has a different integer in every row and an ID-like name"
    return None


def as_dates(col: pd.Series) -> pd.Series | None:
    """``col`` as datetimes if it holds dates (datetime dtype, or ISO ``2011-01-31[ 12:00]`` /
    ``2011/01/31`` text in at least 95 % of its non-missing values), else None."""
    if pd.api.types.is_datetime64_any_dtype(col.dtype):
        return col.dt.tz_convert(None) if getattr(col.dt, "tz", None) is not None else col
    if not (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)):
        return None
    text = col.dropna().astype(str)
    if text.empty:
        return None
    sample = text.iloc[:: max(1, len(text) // 500)]
    if not (sample.str.match(_ISO_DATE).mean() >= 0.95 or sample.str.match(_SLASH_DATE).mean() >= 0.95):
        return None
    parsed = pd.to_datetime(col.where(col.notna(), None).astype(object), errors="coerce", format="mixed",
                            utc=True).dt.tz_convert(None)
    if parsed.notna().sum() < 0.95 * col.notna().sum():
        return None
    return parsed


def decimal_year(dates: pd.Series) -> pd.Series:
    """Datetimes as decimal years (2011.0 = 1 January 2011, 00:00), missing stays missing."""
    year = dates.dt.year
    start = pd.to_datetime(year.astype("Int64").astype(str) + "-01-01", errors="coerce")
    length = np.where(dates.dt.is_leap_year, 366.0, 365.0) * 86400.0
    seconds = (dates - start).dt.total_seconds()
    return (year + seconds / length).astype(float)


def natural_key(value) -> tuple:
    """Sort key comparing the numbers inside labels as numbers (``"2. b" < "10. a"``), case-insensitively."""
    parts = _NUMBER.split(str(value).casefold())
    return tuple(float(p) if i % 2 else p for i, p in enumerate(parts))


def _calendar_order(levels: list) -> list | None:
    """Month or weekday names (full or three-letter, any case) in calendar order; None otherwise."""
    texts = [str(v).strip().casefold() for v in levels]
    for names in (_MONTHS, _WEEKDAYS):
        if texts and all(t[:3] in names and (len(t) == 3 or t.rstrip(".") in _full_names(names)) for t in texts):
            return sorted(levels, key=lambda v: names.index(str(v).strip().casefold()[:3]))
    return None


def _full_names(names) -> set:
    import calendar

    full = calendar.month_name[1:] if names is _MONTHS else calendar.day_name[:]
    return {n.casefold() for n in full} | set(names)


def order_levels(levels: list, column: str, wanted: list | None, notes: list[str]) -> list:
    """Levels in the order asked with ``--level-order`` (unlisted ones after it), else in calendar
    order for month/weekday names, else in natural order."""
    if wanted:
        by_text = {str(v): v for v in levels}
        unknown = [w for w in wanted if w not in by_text]
        if unknown:
            shown = ", ".join(shorten(u, 40) for u in unknown[:5])
            raise InputError(f"--level-order for column {shorten(column)} names level(s) {shown} that the column "
                             f"does not have; its levels: {', '.join(shorten(v, 30) for v in levels[:20])}.")
        rest = sorted((v for v in levels if str(v) not in set(wanted)), key=natural_key)
        if rest:
            notes.append(f"Levels of {column!r} not listed in --level-order follow the listed ones: "
                         f"{', '.join(map(str, rest[:10]))}{', ...' if len(rest) > 10 else ''}.")
        return [by_text[w] for w in wanted] + rest
    calendar_order = _calendar_order(levels)
    if calendar_order is not None:
        return calendar_order
    try:
        return sorted(levels, key=natural_key)
    except TypeError:
        return sorted(levels, key=lambda v: natural_key(str(v)))


def prepare(config: dict, table: pd.DataFrame) -> Problem:
    """Check target, features and pairs against the table and decide the task.

    Returns
    -------
    Problem
        Model inputs renamed to names the result can hold (logged in ``notes``).
    """
    notes: list[str] = []
    columns = list(table.columns)
    target = _need_column(str(config.target), columns, "target")
    if len(table) < MIN_ROWS:  # before the features: in a tiny table every column looks constant
        raise InputError(f"Only {len(table)} row(s) in the table; pdpboot run needs at least {MIN_ROWS} rows with a "
                         "target value.")
    features, skipped = _choose_features(config, table, target, notes)

    def not_a_feature(option: str, name: str) -> InputError:
        why = f" (left out: {skipped[name]})" if name in skipped else ""
        return InputError(f"{option} names {shorten(name)}, which is not a model feature{why}.")

    pd_features = features if config.pd_features is None else [
        _need_column(c, columns, "--pd-features") for c in config.pd_features
    ]
    for name in pd_features:
        if name not in features:
            raise not_a_feature("--pd-features", name)
    if not pd_features and not config.pairs:
        raise InputError("Nothing to compute: --pd-features is empty and no --pairs are given.")
    pairs = []
    for a, b in config.pairs:
        for name in (a, b):
            _need_column(name, columns, "--pairs")
            if name not in features:
                raise not_a_feature("--pairs", name)
        if a == b:
            raise InputError(f"Pair {a}:{b} names the same column twice.")
        if (a, b) in pairs or (b, a) in pairs:
            raise InputError(f"Pair {a}:{b} is requested twice.")
        pairs.append((a, b))
    forced = [_need_column(c, columns, "--categorical") for c in config.categorical]
    for option in ("labels", "units"):  # a misspelt column would otherwise be ignored without a word
        for name in getattr(config, option):
            _need_column(name, columns, f"--{option}")

    y = table[target]
    if y.isna().all():
        raise InputError(f"Target {shorten(target)} has only missing values.")
    keep = y.notna().to_numpy()
    if not keep.all():
        notes.append(f"{int((~keep).sum())} row(s) with a missing target value were dropped.")
    y = _normalise_column(y[keep])
    n = int(keep.sum())
    if n < MIN_ROWS:
        raise InputError(f"Only {n} row(s) have a target value; pdpboot run needs at least {MIN_ROWS}.")
    n_train = n - int(np.ceil(config.test_size * n))
    if n_train < MIN_TRAIN_ROWS:
        raise InputError(f"With --test-size {config.test_size} only {n_train} of {n} rows are left for "
                         f"training; at least {MIN_TRAIN_ROWS} are needed.")
    if y.nunique() < 2 and config.task != "classification":
        raise InputError(f"Target {shorten(target)} is constant (every value is {_describe(y.iloc[0])}); "
                         "there is nothing to model.")
    task, y = _decide_task(y, config.task, target)
    classes = _check_target(y, task, target, config.test_size)
    positive = None
    if task == "classification":
        positive = _resolve_positive(classes, config.positive_class, target)
    elif config.positive_class is not None:
        raise InputError("--positive-class applies to classification only; this target is a regression target.")

    X = table.loc[keep, features].copy()
    taken = set(features)
    display, rename = {}, {}
    for name in features:
        safe = result_name(name, taken - {name})
        taken.add(safe)
        rename[name] = safe
        display[safe] = name
        if safe != name:
            why = ("pdpboot reserves the name for a dimension or variable" if name in RESERVED_NAMES
                   else "netCDF cannot store the name as it is")
            notes.append(f"Column {name!r} is stored as {safe!r} in results.nc ({why}); the plots, workbook and "
                         "summary show the original name.")
    X = X.rename(columns=rename)
    for name in X.columns:
        dates = as_dates(X[name]) if display[name] not in forced else None
        if dates is not None:
            X[name] = decimal_year(dates)
            notes.append(f"Column {display[name]!r} holds dates: converted to decimal years (2011.5 = 2 July 2011) "
                         "so the model and the PD see time as a number.")
        X[name] = _normalise_column(X[name])
    categorical = [rename[c] for c in features if _is_categorical(X[rename[c]]) or c in forced]
    _check_numeric(X, [c for c in X.columns if c not in categorical], display)
    for column in config.level_order:
        if column not in rename:
            raise InputError(f"--level-order names column {shorten(column)}, which is not a model feature.")
        if rename[column] not in categorical:
            raise InputError(f"--level-order names column {shorten(column)}, which is numeric; add it to "
                             "--categorical to treat its values as levels.")
    used = [rename[c] for c in pd_features] + [rename[c] for p in pairs for c in p]
    custom = _category_grids(X, categorical, used, display, notes, config.level_order)
    points = []
    for name in dict.fromkeys(c for c in used if c not in categorical):
        values = X[name].dropna().to_numpy(dtype=float)
        uniques = np.unique(values)
        if not np.all(np.mod(uniques, 1) == 0):
            continue
        if len(uniques) == 2:
            points.append(name)
        elif config.grid_resolution < len(uniques) <= MAX_INTEGER_GRID:
            custom[name] = uniques.astype(np.int64) if X[name].dtype.kind in "iu" else uniques
            notes.append(f"Column {display[name]!r} has {len(uniques)} integer values: its PD is computed at each "
                         "of them (not on an interpolated grid).")
    groups = None
    if config.groups is not None:
        groups = table.loc[keep, config.groups]
        if groups.isna().any():
            raise InputError(f"--groups column {shorten(config.groups)} has missing values; fill or drop them.")
        if groups.nunique() < 2:
            raise InputError(f"--groups column {shorten(config.groups)} needs at least two clusters.")
    y = y.rename(target)
    return Problem(X=X, y=y, target=target, features=list(X.columns), pd_features=[rename[c] for c in pd_features],
                   pairs=[(rename[a], rename[b]) for a, b in pairs], categorical=categorical,
                   custom_values=custom, task=task, classes=classes or None, positive=positive,
                   display=display, notes=notes, points=points, groups=groups)


def _check_numeric(X: pd.DataFrame, numeric: list[str], display: dict) -> None:
    for name in numeric:
        values = X[name].to_numpy(dtype=float, na_value=np.nan)
        if np.isinf(values).any():
            raise InputError(f"Feature {shorten(display[name])} contains {int(np.isinf(values).sum())} infinite "
                             "value(s); replace them (e.g. by a missing value) or drop those rows.")
        finite = values[np.isfinite(values)]
        if finite.size and np.abs(finite).max() > _FLOAT32_MAX:  # tree models compare values in float32
            raise InputError(f"Feature {shorten(display[name])} holds values up to {np.abs(finite).max():.3g}, beyond "
                             "the float32 range (3.4e38) the models compute in; rescale it (e.g. divide by a power "
                             "of ten) or take its logarithm.")
        if np.unique(finite).size > 1 and np.unique(finite.astype(np.float32)).size == 1:
            raise InputError(f"Feature {shorten(display[name])} varies only below float32 precision (largest "
                             f"|value| {np.abs(finite).max():.3g}): the models would see one value. Rescale it "
                             "(e.g. multiply by a power of ten).")


def _category_grids(X, categorical, used, display, notes, level_order) -> dict[str, np.ndarray]:
    """Grid levels of categorical columns: ``--level-order``, else pandas' order for category columns,
    else calendar order (month/weekday names), else natural order (numbers inside labels compared
    as numbers); at most the ``MAX_LEVELS`` most frequent.  Text levels that look ordered in another
    order ("None < Some < Marked", :mod:`~pdpboot.workflow.ordinal`) get a note suggesting
    ``--level-order``.  Numeric and boolean columns keep the
    grid's own (sorted) order unless ``--level-order`` names them."""
    custom = {}
    for name in dict.fromkeys(c for c in used if c in categorical):
        col = X[name]
        wanted = level_order.get(display[name])
        values = col.dropna()
        if isinstance(col.dtype, pd.CategoricalDtype):
            if not wanted:  # pandas' order (ordered or not) is kept by the grid
                present = set(values.tolist())
                note = None if col.cat.ordered else level_order_note(
                    display[name], [c for c in col.cat.categories.tolist() if c in present], "the category's")
                if note:
                    notes.append(note)
                continue
            present = set(values.tolist())
            levels = order_levels([c for c in col.cat.categories.tolist() if c in present], display[name], wanted,
                                  notes)
        elif wanted or ((col.dtype.kind in "OSU" or pd.api.types.is_string_dtype(col.dtype))
                        and values.map(type).nunique() == 1):  # mixed types keep the default order
            levels = order_levels(list(pd.unique(values)), display[name], wanted, notes)
            note = None if wanted else level_order_note(display[name], levels, "alphabetical")
            if note:
                notes.append(note)
        else:
            continue
        if len(levels) > MAX_LEVELS:
            counts = values.value_counts(sort=False)
            frequent = set(sorted(levels, key=lambda v: (-counts[v], str(v)))[:MAX_LEVELS])
            notes.append(f"Column {display[name]!r} has {len(levels)} distinct values: the model one-hot "
                         f"encodes the {MAX_LEVELS} most frequent and groups the rest; PD is reported on those "
                         f"{MAX_LEVELS} levels.")
            levels = [v for v in levels if v in frequent]
        all_text = all(isinstance(v, str) for v in levels)
        custom[name] = np.asarray(levels, dtype=str if all_text else object)
    return custom
