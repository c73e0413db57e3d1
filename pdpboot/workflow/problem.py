"""Check target and features against the table and decide the task: the run's :class:`Problem`."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.inputs import is_categorical_column as _is_categorical
from ..schema import RESERVED_NAMES
from . import InputError
from .data import SHEET_NOTE, looks_decimal_comma, read_table
from .options import shorten

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
_ID_NAME = re.compile(r"(^|[_\W])(id|ids|uuid|guid|key|index|idx|rownum|row_?id)$|^unnamed: ?0$|[a-z]ID$", re.I)
_ISO_DATE = re.compile(r"^\s*\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?\s*$")
_SLASH_DATE = re.compile(r"^\s*\d{4}/\d{1,2}/\d{1,2}\s*$")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

#: Ordered scales of words (compared case-insensitively, ``_``/``-`` as spaces).  A column whose levels
#: (at least 3) all belong to one scale looks ordered, in the scale's order.
SCALES: tuple[tuple[str, ...], ...] = (
    ("none", "some", "marked"),
    ("none", "slight", "moderate", "marked", "severe"),
    ("none", "minimal", "mild", "moderate", "severe", "very severe", "extreme"),
    ("very low", "low", "medium", "high", "very high"),
    ("very low", "low", "moderate", "high", "very high"),
    ("lowest", "lower", "low", "middle", "high", "higher", "highest"),
    ("xxs", "xs", "s", "m", "l", "xl", "xxl", "xxxl"),
    ("extra small", "small", "medium", "large", "extra large"),
    ("tiny", "very small", "small", "medium", "large", "very large", "huge"),
    ("strongly disagree", "disagree", "somewhat disagree", "neither agree nor disagree", "somewhat agree", "agree",
     "strongly agree"),
    ("strongly disagree", "disagree", "neutral", "agree", "strongly agree"),
    ("never", "rarely", "sometimes", "often", "always"),
    ("never", "seldom", "occasionally", "frequently", "always"),
    ("very poor", "poor", "fair", "average", "good", "very good", "excellent"),
    ("very dissatisfied", "dissatisfied", "neutral", "satisfied", "very satisfied"),
    ("very unlikely", "unlikely", "neutral", "likely", "very likely"),
    ("very unhappy", "unhappy", "neutral", "happy", "very happy"),
    ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"),
)
_SPACES = re.compile(r"[\s_\-]+")


def _norm(value) -> str:
    return _SPACES.sub(" ", str(value).strip().casefold())


def ordinal_order(levels: list) -> list | None:
    """The levels in the order of the scale they all belong to, or None (fewer than 3, or no one scale).

    >>> ordinal_order(["Marked", "None", "Some"])
    ['None', 'Some', 'Marked']
    >>> ordinal_order(["high", "Low", "medium"])
    ['Low', 'medium', 'high']
    >>> ordinal_order(["red", "green", "blue"]) is None
    True
    """
    if len(levels) < 3:
        return None
    words = [_norm(v) for v in levels]
    if len(set(words)) != len(words):
        return None
    for scale in SCALES:
        if all(w in scale for w in words):
            return [v for _, v in sorted(zip(words, levels), key=lambda pair: scale.index(pair[0]))]
    return None


def level_order_note(column: str, levels: list, shown: str) -> str | None:
    """A note suggesting ``--level-order`` when ``levels`` (in the order the run uses) look ordered otherwise."""
    order = ordinal_order(levels)
    if order is None or [str(v) for v in order] == [str(v) for v in levels]:
        return None
    texts = [str(v) for v in order]
    toml = ", ".join('"' + t.replace('"', '\\"') + '"' for t in texts)
    key = column if re.fullmatch(r"[A-Za-z0-9_-]+", column) else '"' + column.replace('"', '\\"') + '"'
    return (f"Levels of {column!r} look ordered ({' < '.join(texts)}) but are shown in {shown} order "
            f"({', '.join(map(str, levels))}); to show them in their order, rerun with "
            f"--level-order '{column}={','.join(texts)}' (config file: [level_order] {key} = [{toml}]).")


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
    """A name netCDF and the result schema can store (``name`` itself when it already is)."""
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
            continue
        chosen.append(name)
        if col.dtype.kind in "iu" and col.nunique() == len(col) >= MIN_ID_ROWS:
            notes.append(f"Column {name!r} has a different integer in every row and is used as a feature; if it "
                         f"names the rows, leave it out (--exclude {name}).")
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
    unit word after them ("78.0 mmHg"), None if not."""
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
    """Why ``col`` looks like a row identifier (None when it does not)."""
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
    if np.all(steps > 0) and numbers[-1] - numbers[0] < 2 * len(numbers):  # R's rownames after dropped rows
        return "numbers the rows (increasing integers in row order, nearly consecutive)"
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
    """Check target, features and pairs against the table and decide the task."""
    notes: list[str] = []
    columns = list(table.columns)
    target = _need_column(str(config.target), columns, "target")
    if len(table) < MIN_ROWS:  # before the features: in a tiny table every column looks constant
        raise InputError(f"Only {len(table)} row(s) in the table; pdpboot run needs at least {MIN_ROWS} rows with a "
                         "target value.")
    features, skipped = _choose_features(config, table, target, notes)
    pd_features, pairs, forced = _requested(config, columns, features, skipped)
    keep, y, task, classes, positive = _target(config, table[target], target, notes)
    X, display, rename = _model_inputs(table.loc[keep, features], forced, notes)
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
    points = _integer_grids(X, [c for c in used if c not in categorical], config.grid_resolution, custom, display,
                            notes)
    groups = None
    if config.groups is not None:
        groups = table.loc[keep, config.groups]
        if groups.isna().any():
            raise InputError(f"--groups column {shorten(config.groups)} has missing values; fill or drop them.")
        if groups.nunique() < 2:
            raise InputError(f"--groups column {shorten(config.groups)} needs at least two clusters.")
    return Problem(X=X, y=y.rename(target), target=target, features=list(X.columns),
                   pd_features=[rename[c] for c in pd_features], pairs=[(rename[a], rename[b]) for a, b in pairs],
                   categorical=categorical, custom_values=custom, task=task, classes=classes or None,
                   positive=positive, display=display, notes=notes, points=points, groups=groups)


def _requested(config, columns: list, features: list, skipped: dict) -> tuple[list, list, list]:
    """``--pd-features``, ``--pairs`` and ``--categorical``, checked against the features."""

    def need_feature(option: str, name: str) -> None:
        _need_column(name, columns, option)
        if name not in features:
            why = f" (left out: {skipped[name]})" if name in skipped else ""
            raise InputError(f"{option} names {shorten(name)}, which is not a model feature{why}.")

    pd_features = features if config.pd_features is None else list(config.pd_features)
    for name in pd_features:
        need_feature("--pd-features", name)
    if not pd_features and not config.pairs:
        raise InputError("Nothing to compute: --pd-features is empty and no --pairs are given.")
    pairs = []
    for a, b in config.pairs:
        need_feature("--pairs", a)
        need_feature("--pairs", b)
        if a == b:
            raise InputError(f"Pair {a}:{b} names the same column twice.")
        if (a, b) in pairs or (b, a) in pairs:
            raise InputError(f"Pair {a}:{b} is requested twice.")
        pairs.append((a, b))
    forced = [_need_column(c, columns, "--categorical") for c in config.categorical]
    for option in ("labels", "units"):  # a misspelt column would otherwise be ignored without a word
        for name in getattr(config, option):
            _need_column(name, columns, f"--{option}")
    return pd_features, pairs, forced


def _target(config, y: pd.Series, target: str, notes: list[str]) -> tuple:
    """(rows with a target value, target, task, classes, positive class) of the checked target."""
    if y.isna().all():
        raise InputError(f"Target {shorten(target)} has only missing values.")
    keep = y.notna().to_numpy()
    if not keep.all():
        notes.append(f"{int((~keep).sum())} row(s) with a missing target value were dropped (empty cells and texts "
                     "such as 'NA' or 'N/A' are read as missing).")
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
    counted = (config.task == "auto" and task == "classification" and pd.api.types.is_numeric_dtype(y.dtype)
               and y.nunique() > 2)
    if counted:  # an integer target of few values: classes, unless the user says it is a quantity
        notes.append(f"Target {target!r} holds {y.nunique()} integer values ({y.min()} to {y.max()}), so it was "
                     "treated as classes (--task auto); for a count or a score give --task regression.")
    try:
        classes = _check_target(y, task, target, config.test_size)
    except InputError as exc:
        if counted:
            raise InputError(f"{exc} If {shorten(target)} is a count or a score, give --task regression.") from None
        raise
    positive = None
    if task == "classification":
        positive = _resolve_positive(classes, config.positive_class, target)
    elif config.positive_class is not None:
        raise InputError("--positive-class applies to classification only; this target is a regression target.")
    return keep, y, task, classes, positive


def _model_inputs(X: pd.DataFrame, forced: list, notes: list[str]) -> tuple[pd.DataFrame, dict, dict]:
    """The features under names a result can hold, dates as decimal years: (X, display names, renames)."""
    taken = set(X.columns)
    display, rename = {}, {}
    for name in X.columns:
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
    return X, display, rename


def _integer_grids(X: pd.DataFrame, numeric: list, resolution: int, custom: dict, display: dict,
                   notes: list[str]) -> list[str]:
    """Integer features with few values get their PD at each value (in ``custom``); binary ones are returned."""
    points = []
    for name in dict.fromkeys(numeric):
        uniques = np.unique(X[name].dropna().to_numpy(dtype=float))
        if not np.all(np.mod(uniques, 1) == 0):
            continue
        if len(uniques) == 2:
            points.append(name)
        elif resolution < len(uniques) <= MAX_INTEGER_GRID:
            custom[name] = uniques.astype(np.int64) if X[name].dtype.kind in "iu" else uniques
            notes.append(f"Column {display[name]!r} has {len(uniques)} integer values: its PD is computed at each "
                         "of them (not on an interpolated grid).")
    return points


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
    order ("None < Some < Marked", :func:`ordinal_order`) get a note suggesting
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
