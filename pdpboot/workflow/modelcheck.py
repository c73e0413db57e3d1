"""Every parameter of the run's model checked before the first fit (``--model``, ``--model-spec``, ``--model-file``).

First the constraints scikit-learn declares, on the model and every estimator nested in it; then, for
libraries that check parameters only when fitting (XGBoost, LightGBM, CatBoost, some scikit-learn
combinations), a trial fit on at most :data:`PROBE_ROWS` rows: a failure naming a parameter, or a
parameter the booster ignores, is refused in one line naming the option, the parameter and the fix.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from . import InputError

#: Rows of the table a trial fit uses (each class of a classification target at least once).
PROBE_ROWS = 64
#: Libraries whose parameters are checked only when fitting: their models always get a trial fit.
LATE_CHECKING = ("xgboost", "lightgbm", "catboost")
_IGNORED = re.compile(r'Parameters: \{\s*(.*?)\s*\} (?:are|is) not used', re.S)  # XGBoost's warning


def _estimators(model) -> list:
    """The model and every estimator nested in its parameters (each once)."""
    found, todo, seen = [], [model], set()
    while todo:
        est = todo.pop()
        if id(est) in seen or not hasattr(est, "get_params") or isinstance(est, type):
            continue
        seen.add(id(est))
        found.append(est)
        try:
            params = est.get_params(deep=False)
        except Exception:  # noqa: BLE001 - a third-party object whose get_params fails is checked by its fit
            continue
        for value in params.values():
            if hasattr(value, "get_params") and not isinstance(value, type):
                todo.append(value)
            elif isinstance(value, (list, tuple)):  # Pipeline steps, ColumnTransformer/Voting parts
                for item in value:
                    parts = item if isinstance(item, (list, tuple)) else (item,)
                    todo.extend(p for p in parts if hasattr(p, "get_params") and not isinstance(p, type))
    return found


def _library(est) -> str:
    return type(est).__module__.split(".")[0]


def _parameter_names(model) -> list[str]:
    names = set()
    for est in _estimators(model):
        try:
            names.update(est.get_params(deep=False))
        except Exception:  # noqa: BLE001 - see _estimators
            continue
    return sorted(names, key=len, reverse=True)


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_constraints(model, what: str) -> None:
    """Refuse a parameter outside scikit-learn's declared constraints, on the model or any estimator in it."""
    for est in _estimators(model):
        validate = getattr(est, "_validate_params", None)
        if validate is None or not getattr(type(est), "_parameter_constraints", None):
            continue
        try:
            validate()
        except (ValueError, TypeError) as exc:
            name = re.search(r"The '([^']+)' parameter", str(exc))
            fix = f"Change {name.group(1)} in {what}" if name else f"Change the parameter in {what}"
            raise InputError(f"{what}: {_one_line(exc)} {fix} (nothing was fitted).") from None


#: Parameters of the boosters that must be positive numbers; their libraries do not all check them (CatBoost
#: trains with ``learning_rate=-1`` until a value overflows, then fails writing JSON).
POSITIVE = ("learning_rate", "eta", "shrinkage_rate")


def check_booster_rates(model, what: str) -> None:
    """Refuse a non-positive learning rate of an XGBoost/LightGBM/CatBoost model."""
    for est in _estimators(model):
        if _library(est) not in LATE_CHECKING:
            continue
        for name, value in est.get_params(deep=False).items():
            if name in POSITIVE and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and not value > 0:
                raise InputError(f"{what}: {name}={value!r} of {type(est).__name__} must be a positive number; "
                                 f"Change {name} in {what} (nothing was fitted).")


def probe_rows(X: pd.DataFrame, y: pd.Series, classification: bool) -> tuple[pd.DataFrame, pd.Series]:
    """At most :data:`PROBE_ROWS` rows of the table: the first ones, plus each class's first row."""
    take = list(range(min(len(X), PROBE_ROWS)))
    if classification:
        codes = pd.factorize(y)[0]
        firsts = [int(np.flatnonzero(codes == k)[0]) for k in range(codes.max() + 1)]
        take = sorted(set(firsts) | set(take[:max(PROBE_ROWS - len(firsts), 0)]))
    return X.iloc[take], y.iloc[take]


def needs_trial_fit(model, custom: bool) -> bool:
    """A user's model (any library), or a model of a library that checks its parameters when fitting."""
    return custom or any(_library(est) in LATE_CHECKING for est in _estimators(model))


@contextlib.contextmanager
def _native_output_hidden():
    """Hide what native libraries print on file descriptors 1 and 2 (LightGBM's ``[Fatal]`` line before its
    exception): a refusal is one line."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no such descriptors (an embedded interpreter): nothing to hide
        yield
        return
    with tempfile.TemporaryFile() as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _finite_response(model, X: pd.DataFrame) -> bool:
    method = getattr(model, "predict_proba", None) or model.predict
    try:
        return bool(np.all(np.isfinite(np.asarray(method(X), dtype=float))))
    except Exception:  # noqa: BLE001 - a model that cannot predict here is left to the run
        return True


def trial_fit(model, X: pd.DataFrame, y: pd.Series, what: str) -> None:
    """Fit a clone on a few rows; refuse a failure naming a parameter, and parameters the library ignores."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trial = clone(model)
        for est in _estimators(trial):  # CatBoost writes catboost_info/ into the working folder unless told not to
            if _library(est) == "catboost" and est.get_params(deep=False).get("allow_writing_files") is None:
                est.set_params(allow_writing_files=False)
        try:
            with _native_output_hidden():
                trial.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - a library's own refusal, translated below when it names one
            text = _one_line(exc).rstrip(" .") + "."
            named = next((p for p in _parameter_names(model)
                          if re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", text)), None)
            if named is not None:
                raise InputError(f"{what}: a trial fit on {len(X)} rows before the run was refused by "
                                 f"{type(exc).__name__}: {text} Change {named} in {what} (nothing else was "
                                 "fitted).") from None
            return
        finite = _finite_response(trial, X)
    if not finite:
        raise InputError(f"{what}: a trial fit on {len(X)} rows before the run predicts infinite or missing values: a "
                         f"parameter makes the model diverge (a negative or huge learning rate?); check its "
                         f"parameters in {what}.")
    ignored = [name for warning in caught if (match := _IGNORED.search(str(warning.message)))
               for name in re.findall(r"[\w.]+", match.group(1))]
    ignored += [name for est in _estimators(model) if _library(est) == "lightgbm" for name in _lightgbm_unknown(est)]
    if ignored:
        raise InputError(f"{what}: the model's library does not know the parameter(s) "
                         f"{', '.join(dict.fromkeys(ignored))} and would silently ignore them; correct or remove "
                         f"them in {what}.")


def _lightgbm_unknown(est) -> list[str]:
    """Keyword arguments of a LightGBM model that are neither its own nor LightGBM parameters (or aliases).

    LightGBM only prints "Unknown parameter" (nothing a program can catch); its parameter names and
    aliases come from the library itself (``LGBM_DumpParamAliases``, read by ``lightgbm.basic``).
    """
    try:  # the model is LightGBM's, so its library is loaded already
        table = sys.modules["lightgbm"].basic._ConfigAliases  # noqa: SLF001 - see the docstring
        table.get("verbosity")  # loads the table of every parameter and its aliases
        known = {name for main, aliases in (table.aliases or {}).items() for name in (main, *aliases)}
    except Exception:  # noqa: BLE001 - another LightGBM version: no check rather than a false refusal
        return []
    if not known:
        return []
    for cls in type(est).__mro__:
        init = cls.__dict__.get("__init__")
        if init is not None:
            known.update(inspect.signature(init).parameters)
    return [name for name in est.get_params(deep=False) if name not in known]


def check_model_parameters(model, X: pd.DataFrame, y: pd.Series, *, what: str, custom: bool,
                           classification: bool) -> None:
    """Both checks of the module docstring, before the run's first fit."""
    check_constraints(model, what)
    check_booster_rates(model, what)
    if needs_trial_fit(model, custom):
        rows, target = probe_rows(X, y, classification)
        trial_fit(model, rows, target, what)
