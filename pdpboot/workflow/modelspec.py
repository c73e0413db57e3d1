"""Models from the user: ``--model-spec "module.Class(arg=literal, ...)"`` and ``--model-file FILE``.

A spec is parsed with :mod:`ast`, never evaluated: a public dotted name from a library on
:data:`ALLOWED_LIBRARIES`, with literal keyword arguments.  A model file is un-pickled with joblib
(only for files you trust) and must hold a scikit-learn-compatible estimator.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from . import InputError
from .options import shorten

#: Top-level packages a ``--model-spec`` may name.
ALLOWED_LIBRARIES = ("sklearn", "xgboost", "lightgbm", "catboost")
MAX_SPEC = 2000


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise InputError("--model-spec must be a dotted class name such as 'xgboost.XGBRegressor(max_depth=4)'.")


def parse_model_spec(spec: str) -> tuple[str, str, dict]:
    """Split a spec into (module, class name, keyword arguments) without running any of it.

    Returns
    -------
    module : str
    name : str
    kwargs : dict
        Literal keyword arguments.
    """
    if not isinstance(spec, str) or not spec.strip() or len(spec) > MAX_SPEC:
        raise InputError(f"--model-spec must be a non-empty text of at most {MAX_SPEC} characters.")
    try:
        tree = ast.parse(spec.strip(), mode="eval")
    except SyntaxError as exc:
        raise InputError(f"--model-spec {shorten(spec)} is not of the form module.Class(arg=value): {exc.msg}.") \
            from None
    node = tree.body
    call = node if isinstance(node, ast.Call) else None
    dotted = _dotted(call.func if call is not None else node)
    module, _, name = dotted.rpartition(".")
    if not module:
        raise InputError(f"--model-spec {shorten(dotted)} needs its module, e.g. 'sklearn.svm.SVR'.")
    if module.split(".")[0] not in ALLOWED_LIBRARIES:
        raise InputError(f"--model-spec may name classes of {', '.join(ALLOWED_LIBRARIES)} only; got "
                         f"{shorten(dotted)}.")
    if any(part.startswith("_") for part in dotted.split(".")):
        raise InputError(f"--model-spec {shorten(dotted)} names a private module or class.")
    kwargs = {}
    if call is not None:
        if call.args:
            raise InputError("--model-spec takes keyword arguments only, e.g. 'xgboost.XGBRegressor(max_depth=4)'.")
        for keyword in call.keywords:
            if keyword.arg is None:
                raise InputError("--model-spec does not take **arguments; write each argument as name=value.")
            try:
                kwargs[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise InputError(f"--model-spec argument {keyword.arg!r} must be a literal (number, text, True, "
                                 "None, list, dict), not an expression.") from None
    return module, name, kwargs


def _check_estimator(model, what: str):
    if inspect.isclass(model) or not (hasattr(model, "fit") and hasattr(model, "get_params")):
        raise InputError(f"{what} is not a scikit-learn-compatible estimator (it needs fit and get_params).")
    if not (hasattr(model, "predict") or hasattr(model, "predict_proba")):
        raise InputError(f"{what} cannot predict (no predict or predict_proba method).")
    return model


def estimator_from_spec(spec: str):
    """The unfitted estimator a ``--model-spec`` describes (its library is imported, nothing else runs)."""
    module_name, name, kwargs = parse_model_spec(spec)
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        root = module_name.split(".")[0]
        raise InputError(f"--model-spec needs {module_name!r}, which is not installed (pip install "
                         f"{'scikit-learn' if root == 'sklearn' else root}).") from None
    cls = getattr(module, name, None)
    if not inspect.isclass(cls):
        raise InputError(f"--model-spec: {module_name!r} has no class {shorten(name)}.")
    try:
        model = cls(**kwargs)
    except TypeError as exc:
        raise InputError(f"--model-spec: {name}({', '.join(kwargs)}) was refused: {exc}.") from None
    return _check_estimator(model, f"--model-spec {shorten(spec)}")


def estimator_from_file(path: str | Path):
    """The estimator stored in a joblib/pickle file (un-pickling runs code: trusted files only)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"--model-file {shorten(path)} does not exist.")
    import joblib

    try:
        model = joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - any un-pickling error is a bad file for the user
        raise InputError(f"--model-file {shorten(path.name)} could not be loaded: {type(exc).__name__}: "
                         f"{str(exc)[:200]}") from None
    return _check_estimator(model, f"The object in --model-file {shorten(path.name)}")
