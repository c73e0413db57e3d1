"""Read the user's table (CSV, Parquet, Excel): separators, decimal commas, missing-value marks."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import InputError
from .options import shorten

CSV_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?(\d{1,3}(\.\d{3})+|\d+),\d+([eE][+-]?\d+)?\s*$")
_GROUPED_INTEGER = re.compile(r"[+-]?\d{1,3}(\.\d{3})+")  # 1.234 / 12.500.000
_COMMA_NUMBER = re.compile(r"[+-]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?([eE][+-]?\d+)?")  # 3,14 / 4.184,81 / 7,9e-05
_DOT_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|Inf|INF|infinity|Infinity)")
#: Text pandas reads as missing by default (``pandas.read_csv``'s list, plus a blank field): pdpboot reads only
#: empty fields as missing, and these only where a column's other values are numbers (see ``_read_tokens``).
PANDAS_NA_TOKENS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                              "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


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
    """``text`` as floats when it holds numbers written with a decimal comma (``3,14``, ``4.184,81``)."""
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
    """Decide what the text cells of ``table`` are; only empty fields were read as missing."""
    kept: dict[str, list[str]] = {}  # missing-value token -> the text columns that keep it as a level
    as_missing, commas, blanks, spaced, cased = [], [], [], [], []  # columns (or notes) of each kind
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
    notes += _token_notes(blanks, spaced, cased, as_missing, kept, commas if comma is True else [])
    return table, commas


def _token_notes(blanks: list, spaced: list, cased: list, as_missing: list, kept: dict, commas: list) -> list[str]:
    """The reading notes on blank cells, stripped spaces, case variants, missing-value marks and decimal commas."""
    out: list[str] = []
    if blanks:
        out.append(f"Blank cells (empty text or only spaces) in column(s) {_shown(blanks)} were read as missing "
                     "values, as empty fields are.")
    if spaced:
        out.append(f"Spaces before or after the text were removed in column(s) {', '.join(spaced[:5])}"
                     f"{', ...' if len(spaced) > 5 else ''}: they would have made separate levels of one value.")
    out += cased
    if as_missing:
        out.append(f"Column(s) {', '.join(as_missing[:5])}{', ...' if len(as_missing) > 5 else ''} hold numbers "
                     "and a missing-value mark: read as numbers, those rows missing.")
    for token, columns in kept.items():
        out.append(f"The text {token!r} in column(s) {_shown(columns)} is kept as a level, not read as a missing "
                     f"value (only empty fields are missing; give --na-values {shorten(token, 30)} to read it as "
                     "missing).")
    if commas:
        out.append(f"Numbers with a decimal comma (e.g. in {_shown(commas)}) were read as numbers "
                     "(--decimal , ; give --decimal . to read them as text).")
    return out


def _strip_levels(table: pd.DataFrame, name: str, distinct: np.ndarray, text: pd.Series, codes: np.ndarray,
                  present: np.ndarray, filled: np.ndarray, spaced: list[str], cased: list[str]) -> None:
    """Text levels without surrounding spaces (``" Male"`` and ``"Male "`` are ``"Male"``), and a note on levels
    that differ only in upper/lower case (kept apart: the case may carry meaning, but usually it does not)."""
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
    """Refuse a column of ``1.234``-like numbers in a file whose other columns use decimal commas."""
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
    """Refuse formula cells of the first sheet that carry no saved result (read as missing values)."""
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
    """Read a CSV, Parquet or Excel (.xlsx, first sheet) table."""
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
