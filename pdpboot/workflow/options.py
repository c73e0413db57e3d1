"""Every option of ``pdpboot run`` in one table: command line, config file and defaults."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib.util
import json
import math
import numbers
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import InputError

try:  # Python >= 3.11
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    tomllib = None

MODELS = ("random-forest", "extra-trees", "gradient-boosting", "hist-gradient-boosting", "linear",
          "xgboost", "lightgbm")
TASKS = ("auto", "regression", "classification")
BANDS = ("percentile", "basic", "normal")
FORMATS = ("png", "pdf", "svg")
DECIMALS = ("auto", ".", ",")
CENTERED = ("auto", "yes", "no")
MAX_RESAMPLES = 100_000
#: The longest name (column, level, file) echoed back in a message.
MAX_ECHO = 80


def shorten(text, limit: int = MAX_ECHO) -> str:
    """``repr`` of a user-given name, cut to ``limit`` characters (messages stay one readable line)."""
    shown = repr(str(text))
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


@dataclass(frozen=True)
class Option:
    """One option: its config key, type, default and help."""

    key: str
    kind: str  # str, int, float, bool, list, pairs, choice, path, mapping (COL=value), levels (COL=a,b,c)
    default: Any
    help: str
    #: the allowed values (after a registry's names, when ``registry`` names one)
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    group: str = "model"
    #: the key of :data:`REGISTRIES` whose names are allowed too (read when a value is checked)
    registry: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    @property
    def parser_choices(self) -> tuple[str, ...] | None:
        """``choices`` for argparse; None for a registry's (``--help`` must not import the registered modules,
        and every value is checked against :attr:`allowed` when the configuration is merged)."""
        return None if self.registry else (self.choices or None)

    @property
    def allowed(self) -> tuple[str, ...]:
        """The allowed values of a ``choice`` option (from its registry, for ``--effect`` and ``--uncertainty``)."""
        return (*registered(self.registry), *self.choices) if self.registry else self.choices


#: option key -> the live registry whose names are its choices (``effect``: :data:`pdpboot.workflow.strategy.EFFECTS`,
#: ``uncertainty``: :data:`pdpboot.workflow.strategy.STRATEGIES`). The registering modules hand their mapping over
#: with :func:`register_choices` when they are imported; this module imports neither (they import it).
REGISTRIES: dict[str, Mapping[str, object]] = {}


def register_choices(key: str, registry: Mapping[str, object]) -> None:
    """Make ``registry``'s names (read whenever a value is checked) the choices of option ``key``."""
    REGISTRIES[key] = registry


def registered(key: str) -> tuple[str, ...]:
    """The names registered for option ``key`` (a registry module not yet imported is imported by the caller)."""
    if key not in REGISTRIES:
        raise RuntimeError(f"--{key.replace('_', '-')}'s choices are registered by pdpboot.workflow.strategy and "
                           "pdpboot.workflow.strategy; import them before checking a configuration.")
    return tuple(REGISTRIES[key])


def registered_entry(key: str, name: str) -> object | None:
    """The object registered under ``name`` for option ``key`` (None for a name not registered)."""
    registered(key)  # refuses an unloaded registry
    return REGISTRIES[key].get(name)


OPTIONS: tuple[Option, ...] = (
    # what to analyse
    Option("target", "str", None, "Column to predict (required).", metavar="COL", group="data"),
    Option("features", "list", None,
           "Columns the model uses, comma-separated (default: all columns but the target and "
           "--exclude). Names containing commas: use a config file.", metavar="A,B,C", group="data"),
    Option("exclude", "list", [], "Columns to leave out of the default feature list (e.g. IDs, or "
           "columns that leak the target).", metavar="A,B", group="data"),
    Option("pd_features", "list", None,
           "Features that get a 1-D PD/ICE curve (default: every model feature).",
           metavar="A,B", group="data"),
    Option("pairs", "pairs", [], "Feature pairs that get a 2-D PD surface, e.g. temp:hum,hr:temp.",
           metavar="A:B,C:D", group="data"),
    Option("categorical", "list", [],
           "Numeric columns to treat as categories (text, boolean and category columns always are).",
           metavar="A,B", group="data"),
    Option("keep", "list", [], "Columns to use although they look like row IDs or counters (which are left out "
           "with a note otherwise).", metavar="A,B", group="data"),
    Option("level_order", "levels", {}, "Order of a categorical column's levels in plots, workbook and summary, "
           "e.g. --level-order 'size=small,medium,large' (default: pandas' order for ordered categoricals, "
           "else natural sort: numbers inside labels compare as numbers).", metavar="COL=a,b,c", group="data"),
    Option("groups", "str", None, "Column of cluster labels: the bootstrap resamples whole clusters (rows of one "
           "patient, school, ...); the column is not a feature.", metavar="COL", group="data"),
    Option("sep", "str", None, "CSV field separator (default: detected).", metavar="CHAR", group="data"),
    Option("decimal", "choice", "auto", "CSV decimal mark (auto: ',' when the numbers use decimal commas).",
           choices=DECIMALS, group="data"),
    Option("na_values", "list", [], "Text that marks a missing value besides an empty field, e.g. NA,-999 "
           "(default: only empty fields; text such as None or NA stays a level of a text column, and is missing "
           "only in a column whose other values are numbers).", metavar="A,B", group="data"),
    Option("task", "choice", "auto",
           "auto: a non-numeric target, or an integer target with at most 10 values, is classification.",
           choices=TASKS, group="data"),
    Option("positive_class", "str", None,
           "Binary classification: the class reported first (default: the larger label, as scikit-learn).",
           metavar="LABEL", group="data"),
    # the model
    Option("model", "choice", "random-forest", "The model trained on the training rows (xgboost and lightgbm "
           "when installed).", choices=MODELS),
    Option("model_spec", "str", None, "Any estimator as module.Class(arguments), e.g. "
           "'xgboost.XGBRegressor(max_depth=4)' (arguments are literals; modules: sklearn, xgboost, "
           "lightgbm, catboost). Replaces --model.", metavar="SPEC"),
    Option("model_file", "path", None, "An unfitted or fitted scikit-learn-compatible estimator saved with "
           "joblib/pickle (load only files you trust). Replaces --model. A Pipeline, or a model fitted on a "
           "DataFrame, is used as it is: cloned whole for each refit and fed the columns it was fitted on "
           "(feature_names_in_). With --uncertainty none a fitted model is not refitted at all.",
           metavar="FILE"),
    Option("n_estimators", "int", 100, "Trees (random forest, extra trees) or boosting iterations.",
           metavar="N"),
    Option("max_depth", "int", None, "Maximum tree depth; 0 = unlimited (default: the model's own default).",
           metavar="D"),
    Option("random_state", "int", 0, "Seed of the split, the model and every resample (same seed, same "
           "numbers).", metavar="SEED"),
    Option("test_size", "float", 0.25, "Share of rows held out for test metrics (stratified for "
           "classification); 0 = no test set.", metavar="F"),
    # the bootstrap
    Option("n_resamples", "int", 100, "Bootstrap resamples B (model refits). More = smoother bands, "
           "proportionally slower. 0 = no refits (same as --uncertainty none).", metavar="B", group="bootstrap"),
    Option("uncertainty", "choice", "bootstrap", "bootstrap: refit the model on B resamples (any model). none: one "
           "fit, no refits, no bands: PD/ICE/ALE of the model (a fitted --model-file as it is, on all rows), "
           "as R's pdp and iml draw them. debiased: bands "
           "for the data's PD (the PD of the process that made the data), not the model's: the model is "
           "cross-fitted 5 times and its bias removed with reweighted held-out residuals (1-D PD only; no ICE, "
           "pairs or H statistics).",
           choices=(), registry="uncertainty", metavar="METHOD", group="bootstrap"),
    Option("resampling", "choice", "auto", "How the bootstrap draws the training rows. auto (default): for a "
           "classifier's probabilities the 0.632 subsample (rows without replacement) with PD bands formed on the "
           "logit scale, for regression the bootstrap (see the validation page of the documentation). bootstrap: "
           "rows drawn with replacement for every model. With --groups whole groups are drawn either way.",
           choices=("auto", "bootstrap"), group="bootstrap"),
    Option("confidence_level", "float", 0.95, "Level of the bands and intervals.", metavar="L",
           group="bootstrap"),
    Option("band", "choice", "percentile", "Band method: percentile (default), basic (under-covers PD "
           "curves and warns) or normal; see the validation page of the documentation.", choices=BANDS,
           group="bootstrap"),
    Option("simultaneous", "bool", False, "Simultaneous bands covering each whole curve/surface at once "
           "(pointwise bands are kept too).", group="bootstrap"),
    Option("ice_samples", "int", 100, "ICE curves of this many random training rows (0 = none).",
           metavar="N", group="bootstrap"),
    Option("grid_resolution", "int", 20, "Grid points per numeric feature (ALE: quantile bins).", metavar="N",
           group="bootstrap"),
    Option("effect", "choice", "pd", "Effect to compute with bands: pd (partial dependence, with ICE), ale "
           "(accumulated local effects: no extrapolation when features are correlated; saved as ale.nc) or both "
           "(from the same resamples' seeds).", choices=("both",), registry="effect", metavar="EFFECT",
           group="bootstrap"),
    Option("interactions", "int", 0, "Friedman's H-squared interaction statistics on at most N rows per "
           "model (0 = off; costs about N*N predictions per feature and resample).", metavar="N",
           group="bootstrap"),
    Option("max_background", "int", 1000, "Average each PD over at most N random rows of its resample (0 = "
           "all rows; the cost of PD and ICE statistics grows with N).", metavar="N", group="bootstrap"),
    Option("n_jobs", "int", -1, "Resamples fitted in parallel (-1 = all cores, 1 = serial); the numbers do "
           "not depend on it.", metavar="N", group="bootstrap"),
    Option("threads_per_job", "int", None, "Native (OpenMP/BLAS) threads per refit (default: the libraries' own "
           "in a serial run, 1 per job in a parallel one); the numbers do not depend on it.", metavar="T",
           group="bootstrap"),
    # outputs
    Option("out", "path", ".", "Folder in which the run folder pdpboot_<timestamp>/ is created.",
           metavar="DIR", group="output"),
    Option("workbook", "bool", True, "Write workbook.xlsx (needs openpyxl).", group="output"),
    Option("format", "choice", "png", "File format of the plots.", choices=FORMATS, group="output"),
    Option("top", "int", 0, "Plot only the K features with the largest PD range (0 = all; every feature is "
           "still computed and in the summary).", metavar="K", group="output"),
    Option("centered", "choice", "auto", "Centred curves (PD minus its value at the first grid value, with "
           "the band of that change): auto = centred in the overview, where effects are compared, and "
           "uncentred in the per-feature plots, where the level is read.", choices=CENTERED, group="output"),
    Option("labels", "mapping", {}, "Display names, e.g. --labels 'temp=Temperature' (repeatable; or a "
           "[labels] table in the config file).", metavar="COL=NAME", group="output"),
    Option("units", "mapping", {}, "Units shown after display names, e.g. --units 'temp=°C'.",
           metavar="COL=UNIT", group="output"),
)
BY_KEY = {o.key: o for o in OPTIONS}
#: Keys that may appear in a config file besides the options.
EXTRA_KEYS = ("data",)
#: Fields a run adds to its configuration (recorded in ``repro_inputs/config.json``), with their types.
RUN_FIELDS = (("data", str), ("data_copy", str), ("data_sha256", str), ("created", str), ("versions", dict))


def _copy(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def defaults() -> dict:
    """The built-in value of every option."""
    return {o.key: _copy(o.default) for o in OPTIONS}


def field_type(option: Option) -> type:
    """The Python type of an option's value in :class:`RunConfig` (what :func:`_convert` returns)."""
    return {"int": int, "float": float, "bool": bool, "list": list, "pairs": list, "mapping": dict,
            "levels": dict}.get(option.kind, str)


@dataclass(frozen=True, eq=True, kw_only=True)
class RunConfig:
    """The checked configuration of one run: one field per option of :data:`OPTIONS` (same key, in the
    same order) and the run fields of :data:`RUN_FIELDS`."""

    __hash__ = None  # lists and dicts inside: not hashable

    target: str | None = None  # --target
    features: list | None = None  # --features
    exclude: list  # --exclude
    pd_features: list | None = None  # --pd-features
    pairs: list  # --pairs
    categorical: list  # --categorical
    keep: list  # --keep
    level_order: dict  # --level-order
    groups: str | None = None  # --groups
    sep: str | None = None  # --sep
    decimal: str  # --decimal
    na_values: list  # --na-values
    task: str  # --task
    positive_class: str | None = None  # --positive-class
    model: str  # --model
    model_spec: str | None = None  # --model-spec
    model_file: str | None = None  # --model-file
    n_estimators: int  # --n-estimators
    max_depth: int | None = None  # --max-depth
    random_state: int  # --random-state
    test_size: float  # --test-size
    n_resamples: int  # --n-resamples
    uncertainty: str  # --uncertainty
    resampling: str  # --resampling
    confidence_level: float  # --confidence-level
    band: str  # --band
    simultaneous: bool  # --simultaneous
    ice_samples: int  # --ice-samples
    grid_resolution: int  # --grid-resolution
    effect: str  # --effect
    interactions: int  # --interactions
    max_background: int  # --max-background
    n_jobs: int  # --n-jobs
    threads_per_job: int | None = None  # --threads-per-job
    out: str  # --out
    workbook: bool  # --workbook
    format: str  # --format
    top: int  # --top
    centered: str  # --centered
    labels: dict  # --labels
    units: dict  # --units
    data: str | None = None
    data_copy: str | None = None
    data_sha256: str | None = None
    created: str | None = None
    versions: dict | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict of every field (as written to ``repro_inputs/config.json``)."""
        return {f.name: _copy(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def replace(self, **changes) -> RunConfig:
        """A copy with some fields changed (checked like the original)."""
        return RunConfig.from_dict({**self.to_dict(), **changes}, source="run")

    @classmethod
    def from_dict(cls, raw: dict, *, source: str = "config.json") -> RunConfig:
        """Build and check a configuration from a dict (e.g. a stored ``config.json``)."""
        if not isinstance(raw, dict):
            raise InputError(f"The {source} must hold a table of options, got {type(raw).__name__}.")
        known = [*BY_KEY, *(name for name, _ in RUN_FIELDS)]
        values = defaults()
        for key, value in raw.items():
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise InputError(f"The {source} has an unknown option {shorten(key)}.{hint}")
            if key in BY_KEY:
                values[key] = _convert(BY_KEY[key], value, source)
            elif value is not None:
                kind = dict(RUN_FIELDS)[key]
                if not isinstance(value, kind) or (kind is dict and not all(
                        isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
                    raise InputError(f"The {source} field {shorten(key)} must be a {kind.__name__}, got "
                                     f"{shorten(value)}.")
                values[key] = value
        check_ranges(values)
        return cls(**values)


def add_arguments(parser: argparse.ArgumentParser, *, overrides: dict | None = None) -> None:
    """Add every option to ``parser`` (values left unset stay ``None``: defaults merge later)."""
    overrides = overrides or {}
    titles = {"data": "what to analyse", "model": "model", "bootstrap": "bootstrap and bands",
              "output": "output"}
    groups = {name: parser.add_argument_group(title) for name, title in titles.items()}
    for option in OPTIONS:
        group = groups[option.group]
        default = overrides.get(option.key, option.default)
        shown = "" if default in (None, [], "", {}) else f" [default: {_show(default)}]"
        if option.kind == "bool":
            group.add_argument(option.flag, dest=option.key, action=argparse.BooleanOptionalAction,
                               default=None, help=option.help + shown)
        elif option.kind in ("list", "pairs", "mapping", "levels"):
            group.add_argument(option.flag, dest=option.key, action="append", default=None,
                               metavar=option.metavar, help=option.help + shown)
        else:
            group.add_argument(option.flag, dest=option.key, default=None, metavar=option.metavar,
                               choices=option.parser_choices, help=option.help + shown,
                               type=str.lower if option.kind == "choice" else None)


def equivalent_command(config: RunConfig) -> str:
    """A ``pdpboot run`` command line that gives this configuration: the data file and every option that
    differs from its default (``--out`` left out: it names a folder of the machine, not an analysis).

    >>> from pdpboot.workflow.options import RunConfig, equivalent_command
    >>> equivalent_command(RunConfig.from_dict({"data": "my data.csv", "target": "y", "pairs": [["a", "b"]],
    ...                                         "workbook": False}))
    "pdpboot run 'my data.csv' --target y --pairs a:b --no-workbook"
    """
    import shlex

    words = ["pdpboot", "run"] + ([config.data] if config.data else [])
    for option in OPTIONS:
        value = getattr(config, option.key)
        if option.key == "out" or value == option.default or value in (None, [], {}):
            continue
        if option.kind == "bool":
            words.append(option.flag if value else "--no-" + option.flag[2:])
        elif option.kind == "pairs":
            words += [option.flag, ",".join(":".join(map(str, pair)) for pair in value)]
        elif option.kind == "list":
            words += [option.flag, ",".join(map(str, value))]
        elif option.kind in ("mapping", "levels"):
            for key, item in value.items():
                shown = ",".join(map(str, item)) if isinstance(item, list) else str(item)
                words += [option.flag, f"{key}={shown}"]
        else:
            words += [option.flag, str(value)]
    return shlex.join(words)


def _show(value) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _normalise_key(key: str) -> str:
    return str(key).strip().replace("-", "_")


def read_config_file(path: str | Path) -> dict:
    """Options from a TOML or JSON file (keys checked, values as written)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"Config file {shorten(str(path))} does not exist.")
    is_json = path.suffix.lower() == ".json"
    if not is_json and tomllib is None:
        raise InputError("Reading TOML needs Python 3.11 or later; write the config as JSON (FILE.json) instead.")
    toml_error = tomllib.TOMLDecodeError if tomllib is not None else ValueError
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if is_json else tomllib.loads(path.read_text("utf-8"))
    except (toml_error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise InputError(f"Config file {shorten(str(path))} is not valid {kind}: {exc}") from None
    if not isinstance(raw, dict):
        raise InputError(f"Config file {shorten(str(path))} must hold a table of options.")
    known = [*BY_KEY, *EXTRA_KEYS]
    out = {}
    for key, value in raw.items():
        name = _normalise_key(key)
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InputError(f"Config file {shorten(str(path))}: unknown option {shorten(key)}.{hint}")
        out[name] = value
    return out


def _split_list(value, key: str) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str):
            out.extend(part.strip() for part in item.split(",") if part.strip())
        elif isinstance(item, (numbers.Number,)) and not isinstance(item, bool):
            out.append(str(item))
        else:
            raise InputError(f"Option {shorten(key)} must be column names, got {shorten(item)}.")
    return out


def _split_pairs(value, key: str) -> list[list[str]]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str):
            for part in (p.strip() for p in item.split(",")):
                if not part:
                    continue
                names = [n.strip() for n in part.split(":")]
                if len(names) != 2 or not all(names):
                    raise InputError(f"Pair {shorten(part)} of option {shorten(key)} must look like a:b (two "
                                     "column names).")
                out.append(names)
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            out.append([str(item[0]), str(item[1])])
        else:
            raise InputError(f"Option {shorten(key)} takes pairs like a:b or [\"a\", \"b\"], got {shorten(item)}.")
    return out


def _split_mapping(value, key: str, *, levels: bool) -> dict:
    """``COL=value`` strings (command line) or a table (config file) -> dict (values: lists for levels)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = []
        for item in (value if isinstance(value, list) else [value]):
            if not isinstance(item, str) or "=" not in item:
                raise InputError(f"Option {shorten(key)} takes COL=VALUE, got {shorten(item)}.")
            name, _, rest = item.partition("=")
            items.append((name.strip(), rest))
    out = {}
    for name, rest in items:
        if not isinstance(name, str) or not name:
            raise InputError(f"Option {shorten(key)} needs a column name before '=', got {shorten(name)}.")
        if levels:
            parts = rest if isinstance(rest, list) else [p.strip() for p in str(rest).split(",")]
            parts = [str(p) for p in parts if str(p) != ""]
            if not parts or len(set(parts)) != len(parts):
                raise InputError(f"Option {shorten(key)} for column {shorten(name)} needs distinct levels, got "
                                 f"{shorten(rest)}.")
            out[name] = parts
        else:
            if not isinstance(rest, (str, numbers.Number)) or isinstance(rest, bool):
                raise InputError(f"Option {shorten(key)} for column {shorten(name)} must be text, got {shorten(rest)}.")
            out[name] = str(rest).strip()
    return out


def _convert(option: Option, value, source: str):
    """Coerce one value (string from the command line, or a TOML/JSON value)."""
    what = f"{option.flag} ({source})"
    if value is None:
        return None
    if option.kind in ("mapping", "levels"):
        return _split_mapping(value, option.key, levels=option.kind == "levels")
    if option.kind == "list":
        return _split_list(value, option.key)
    if option.kind == "pairs":
        return _split_pairs(value, option.key)
    if option.kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.lower() in ("true", "yes", "1")
        raise InputError(f"{what} must be true or false, got {shorten(value)}.")
    if option.kind == "int":
        if isinstance(value, bool):
            raise InputError(f"{what} must be an integer, got {shorten(value)}.")
        try:
            number = float(value) if isinstance(value, str) else value
            if not float(number).is_integer():
                raise ValueError
            return int(number)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be an integer, got {shorten(value)}.") from None
    if option.kind == "float":
        if isinstance(value, bool):
            raise InputError(f"{what} must be a number, got {shorten(value)}.")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be a number, got {shorten(value)}.") from None
    if option.kind == "choice":
        allowed = option.allowed
        value = {a.lower(): a for a in allowed}.get(str(value).lower(), str(value))  # --effect ALE is ale
        if value not in allowed:
            close = difflib.get_close_matches(value, allowed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{what} must be one of {', '.join(allowed)}; got {shorten(value)}.{hint}")
        return value
    if isinstance(value, (list, dict)):
        raise InputError(f"{what} must be a single value, got {shorten(value)}.")
    return str(value)


def merge(command_line: dict, config_file: dict, base: dict | None = None) -> RunConfig:
    """Defaults < config file < command line; every value converted and range-checked."""
    config = dict(base if base is not None else defaults())
    for source, values in (("config file", config_file), ("command line", command_line)):
        for key, value in values.items():
            if value is None:
                continue
            if key in EXTRA_KEYS:
                config[key] = str(value)
                continue
            converted = _convert(BY_KEY[key], value, source)
            if BY_KEY[key].kind in ("mapping", "levels"):
                converted = {**(config.get(key) or {}), **converted}
            config[key] = converted
    given = {k for values in (config_file, command_line) for k, v in values.items() if v is not None}
    if config.get("n_resamples") == 0 and "uncertainty" not in given:  # --n-resamples 0: no refits
        config["uncertainty"] = "none"
    strategy = registered_entry("uncertainty", config.get("uncertainty", "bootstrap"))
    if getattr(strategy, "defaults", None) is not None:  # the strategy's own defaults (debiased: no ICE)
        strategy.defaults(config, given)
    check_ranges(config)
    return RunConfig(**config)


def check_ranges(config: dict) -> None:
    """Reject values outside their meaningful range, naming the option and the fix."""
    def need(ok: bool, message: str) -> None:
        if not ok:
            raise InputError(message)

    need(config.get("target") not in (None, ""), "No target column: give --target COL (the column to predict).")
    need(config["n_resamples"] >= 2 or (config["n_resamples"] == 0 and config.get("uncertainty") == "none"),
         f"--n-resamples must be at least 2 (or 0 for no refits), got {config['n_resamples']}.")
    need(0 < config["confidence_level"] < 1,
         f"--confidence-level must be between 0 and 1 (e.g. 0.95), got {config['confidence_level']}.")
    need(0 <= config["test_size"] < 0.9, f"--test-size must be in [0, 0.9), got {config['test_size']}.")
    need(config["grid_resolution"] >= 2, f"--grid-resolution must be at least 2, got {config['grid_resolution']}.")
    need(config["ice_samples"] >= 0, f"--ice-samples must be 0 (no ICE) or more, got {config['ice_samples']}.")
    need(config["n_estimators"] >= 1, f"--n-estimators must be at least 1, got {config['n_estimators']}.")
    need(config["max_depth"] is None or config["max_depth"] >= 0,
         f"--max-depth must be 0 (unlimited) or more, got {config['max_depth']}.")
    need(config["interactions"] == 0 or config["interactions"] >= 2,
         f"--interactions must be 0 (off) or at least 2 rows, got {config['interactions']}.")
    need(config["max_background"] >= 0, f"--max-background must be 0 (all rows) or more, got "
         f"{config['max_background']}.")
    need(config["n_jobs"] != 0, "--n-jobs must not be 0 (1 = serial, -1 = all cores).")
    need(config["random_state"] >= 0, f"--random-state must be a non-negative integer, got "
         f"{config['random_state']}.")
    need(config["n_resamples"] <= MAX_RESAMPLES, f"--n-resamples must be at most {MAX_RESAMPLES}, got "
         f"{config['n_resamples']}.")
    need(config["top"] >= 0, f"--top must be 0 (all features) or more, got {config['top']}.")
    need(config["threads_per_job"] is None or config["threads_per_job"] >= 1,
         f"--threads-per-job must be at least 1, got {config['threads_per_job']}.")
    need(not (config["model_spec"] and config["model_file"]), "Give --model-spec or --model-file, not both.")
    strategy = registered_entry("uncertainty", config.get("uncertainty", "bootstrap"))
    from ..engine.intervals import min_simultaneous_resamples  # the bands' own rule (lazily: --help is fast)

    fewest = min_simultaneous_resamples(config["confidence_level"])
    need(not (config.get("simultaneous") and getattr(strategy, "refits", False) and config["n_resamples"] < fewest),
         f"--simultaneous at --confidence-level {config['confidence_level']} needs --n-resamples {fewest} or more "
         f"(got {config['n_resamples']}); raise it, or drop --simultaneous.")
    if getattr(strategy, "check_config", None) is not None:  # what the chosen strategy cannot do
        strategy.check_config(config)
    need(config["sep"] is None or len(config["sep"]) == 1 or config["sep"] in ("\\t", "tab"),
         f"--sep must be one character (or 'tab'), got {shorten(config['sep'])}.")


def safe_filename(label: str, taken: set[str], *, limit: int = 60) -> str:
    """A unique file-name stem from a feature name: letters, digits, ``_`` and ``-`` only."""
    decomposed = unicodedata.normalize("NFKD", str(label))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    plain = unicodedata.normalize("NFC", plain)
    stem = re.sub(r"[^\w-]+", "_", plain).strip("_-")[:limit] or "feature"
    name, k = stem, 2
    while name.lower() in taken:
        name, k = f"{stem}-{k}", k + 1
    taken.add(name.lower())
    return name


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_MARKUP = re.compile(r"([\\`*_\[\]#|~<>&])")
MAX_NAME = 120  # longest data text shown in summary.md


def md(text, limit: int = MAX_NAME) -> str:
    """Data as inert Markdown text: never markup, links, HTML or terminal escapes."""
    text = re.sub(r"[\r\n\t]+", " ", str(text))
    text = _CONTROL.sub("", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _MARKUP.sub(r"\\\1", text)  # backslash escapes: inert, and readable as plain text
    text = text.replace("://", r":\/\/")
    return re.sub(r"(?i)\b(www)\.", r"\1\\.", text)


def num(value, scale: float | None = None) -> str:
    """A number with 4 significant digits; 0 when it is within 1e-9 of ``scale`` of zero (round-off)."""
    value = float(value)
    if math.isnan(value):
        return "–"
    if value == 0 or (scale is not None and abs(value) <= 1e-9 * abs(scale)):
        return "0"
    return f"{value:.4g}"


def workbook_line(sheets) -> str:
    """The summary's line on ``workbook.xlsx`` (``sheets`` None: no workbook was written)."""
    if sheets is None:
        if importlib.util.find_spec("openpyxl") is None:
            return ('- no workbook: it needs openpyxl, which is not installed (`pip install "pdpboot[excel]"`).')
        return "- no workbook (`--no-workbook`)."
    names = ["Data", "TestPredictions", "Parameters", "Metrics", *[md(title) for title, _ in sheets]]
    return (f"- `workbook.xlsx`: sheets {', '.join(names)}. Column `row` of Data and TestPredictions and the "
            "`ice row N` columns number the rows of the input table from 0.")


def file_sections(result_lines: list[str], repro_line: str, *, sheets, files, notes, failures) -> list[str]:
    """The summary's "Files", "What was done to the data" and (if any) "Problems" sections."""
    lines = ["", "## Files", "",
             "- `report.html`: this summary with every figure, interactive (hover for the numbers), and the "
             "provenance, in one file that opens in any browser without a network.",
             *result_lines, workbook_line(sheets),
             *[f"- `{path}`: {md(what, limit=2000)}" for path, what in files],
             repro_line, "- `run.log`: every step, with what was done to the data."]
    lines += ["", "## What was done to the data", ""]
    lines += [f"- {md(n, limit=2000)}" for n in notes] or ["- nothing: all columns numeric, no missing values."]
    if failures:
        lines += ["", "## Problems", ""] + [f"- {md(f, limit=2000)}" for f in failures]
    return lines
