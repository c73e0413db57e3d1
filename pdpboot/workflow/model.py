"""The scikit-learn model of a run: preprocessing Pipeline, train/test split, test metrics."""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import ensemble, linear_model, metrics
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from . import InputError
from .options import shorten
from .problem import MAX_LEVELS, Problem

MISSING_LEVEL = "(missing)"
_TREES = {
    "random-forest": (ensemble.RandomForestRegressor, ensemble.RandomForestClassifier),
    "extra-trees": (ensemble.ExtraTreesRegressor, ensemble.ExtraTreesClassifier),
    "gradient-boosting": (ensemble.GradientBoostingRegressor, ensemble.GradientBoostingClassifier),
    "hist-gradient-boosting": (ensemble.HistGradientBoostingRegressor, ensemble.HistGradientBoostingClassifier),
}
_ACCEPTS_MISSING = ("random-forest", "extra-trees", "hist-gradient-boosting")


class WorkflowPipeline(Pipeline):
    """A Pipeline tagged as accepting missing values, as every pipeline :func:`build_estimator` makes does."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class AsText(TransformerMixin, BaseEstimator):
    """Categorical columns as strings (missing -> ``"(missing)"``), so every level type encodes alike."""

    def fit(self, X, y=None):
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
        self.n_features_in_ = frame.shape[1]
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        return self

    def transform(self, X):
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X)
        out = np.empty(frame.shape, dtype=object)
        for j in range(frame.shape[1]):
            col = frame.iloc[:, j]
            text = col.to_numpy(dtype=object).astype(str).astype(object)
            text[col.isna().to_numpy()] = MISSING_LEVEL
            out[:, j] = text
        return out

    def get_feature_names_out(self, input_features=None):
        if input_features is not None:
            return np.asarray(input_features, dtype=object)
        names = getattr(self, "feature_names_in_", None)
        return names if names is not None else np.asarray([f"x{j}" for j in range(self.n_features_in_)], dtype=object)


def _boosting_library(name: str, classification: bool, config):
    """XGBoost / LightGBM models by name (when installed), one thread each (resamples run in parallel)."""
    module = {"xgboost": "xgboost", "lightgbm": "lightgbm"}[name]
    try:
        library = __import__(module)
    except ImportError:
        raise InputError(f"--model {name} needs the {module} package: pip install {module}.") from None
    params = {"n_estimators": config.n_estimators, "random_state": config.random_state, "n_jobs": 1}
    if config.max_depth is not None:
        params["max_depth"] = -1 if (config.max_depth == 0 and name == "lightgbm") else config.max_depth
    if name == "lightgbm":
        params["verbose"] = -1
        return (library.LGBMClassifier if classification else library.LGBMRegressor)(**params)
    if classification:  # XGBoost takes only the labels 0..K-1: this classifier codes the table's labels
        from .xgb_labels import LabelledXGBClassifier

        return LabelledXGBClassifier(**params)
    return library.XGBRegressor(**params)


def _user_estimator(config, classification: bool):
    if config.model_spec:
        model, what = estimator_from_spec(config.model_spec), "--model-spec"
    else:
        model, what = clone(estimator_from_file(config.model_file)), "--model-file"
    if classification and type(model).__module__.split(".")[0] == "xgboost" and type(model).__name__ == "XGBClassifier":
        from .xgb_labels import LabelledXGBClassifier

        model = LabelledXGBClassifier(**model.get_params())
    if classification and is_regressor(model):
        raise InputError(f"{what} gives a regressor ({type(model).__name__}) but the task is classification; "
                         "give a classifier or --task regression.")
    if not classification and is_classifier(model):
        raise InputError(f"{what} gives a classifier ({type(model).__name__}) but the task is regression; "
                         "give a regressor or --task classification.")
    return model


def model_option(config) -> str:
    """The option that chose the run's model, as a refusal names it."""
    if config.model_spec:
        return f"--model-spec {shorten(config.model_spec)}"
    if config.model_file:
        return f"--model-file {shorten(str(config.model_file))}"
    return f"--model {config.model} (--n-estimators/--max-depth)"


def uses_model_as_given(model) -> bool:
    """Whether a user's model is used as it is, without the run's encoding Pipeline around it."""
    return hasattr(model, "steps") or getattr(model, "feature_names_in_", None) is not None


def model_file_features(config) -> list[str] | None:
    """The input columns a fitted ``--model-file`` model was fitted on (``feature_names_in_``), or None."""
    if not config.model_file:
        return None

    names = getattr(estimator_from_file(config.model_file), "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else None


def given_fitted_model(config):
    """The fitted model of ``--model-file`` as it is (for ``--uncertainty none``), or None when it is unfitted
    or not from a file."""
    if not config.model_file:
        return None
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted


    model = estimator_from_file(config.model_file)
    try:
        check_is_fitted(model)
    except (NotFittedError, TypeError, ValueError):
        return None
    return model


def _label_key(value) -> tuple:
    """A class label compared across dtypes: 1 == 1.0 (numbers), "a" (text), True (bools apart)."""
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return ("number", float(value))
    return ("text", str(value))


def check_given_model(model, problem: Problem) -> None:
    """Refuse, before any prediction, a fitted ``--model-file`` model used as it is that cannot take this
    table: fitted on an array (``n_features_in_``, no names) of another number of columns or of numbers
    only while the run's features hold text; a classifier that never predicts some of the target's labels
    (``classes_``: metrics and PD outputs would mix label types or drop a class)."""
    names = getattr(model, "feature_names_in_", None)
    n_in = getattr(model, "n_features_in_", None)
    features = list(problem.X.columns)
    shown = ", ".join(map(shorten, features[:8])) + (", ..." if len(features) > 8 else "")
    if names is None and isinstance(n_in, (int, np.integer)):
        if int(n_in) != len(features):
            raise InputError(
                f"--model-file holds a model fitted on {int(n_in)} unnamed columns (an array), but the run has "
                f"{len(features)} features ({shown}); give the {int(n_in)} columns it was fitted on, in that order, "
                "with --features.")
        text = [f for f in features if not pd.api.types.is_numeric_dtype(problem.X[f].dtype)
                or pd.api.types.is_bool_dtype(problem.X[f].dtype)]
        if text:
            raise InputError(
                f"--model-file holds a model fitted on an array of numbers, but the feature(s) "
                f"{', '.join(map(shorten, text[:5]))} are not numeric; refit it on a DataFrame (or a Pipeline "
                "with its own encoding), or give only numeric --features.")
    classes = getattr(model, "classes_", None)
    if problem.task == "classification" and classes is not None and np.ndim(classes) == 1:
        known = {_label_key(c) for c in classes}
        unknown = [v for v in problem.classes or [] if _label_key(v) not in known]
        if unknown:
            given = [c.item() if hasattr(c, "item") else c for c in classes][:10]
            raise InputError(
                f"--model-file holds a classifier of the classes {given}, but the target "
                f"{shorten(str(problem.y.name))} holds {unknown[:5]}, which it never predicts; give the target "
                "the model was fitted on, with its labels as the model knows them.")


def _final_estimator(config, task: str):
    classification = task == "classification"
    if config.model_spec or config.model_file:
        return _user_estimator(config, classification)
    seed = config.random_state
    name = config.model
    if name in ("xgboost", "lightgbm"):
        return _boosting_library(name, classification, config)
    if name == "linear":
        if classification:
            return linear_model.LogisticRegression(max_iter=2000, random_state=seed)
        return linear_model.LinearRegression()
    cls = _TREES[name][int(classification)]
    depth = config.max_depth
    params = {"random_state": seed}
    if name == "hist-gradient-boosting":
        params["max_iter"] = config.n_estimators
    else:
        params["n_estimators"] = config.n_estimators
    if depth is not None:
        params["max_depth"] = None if depth == 0 else depth
    if name in ("random-forest", "extra-trees"):
        params["n_jobs"] = 1  # resamples run in parallel instead; one thread keeps sums bit-identical
    return cls(**params)


def build_estimator(config: dict, problem: Problem) -> tuple[object, list[str]]:
    """The unfitted model: a bare estimator for numeric tables, else a Pipeline encoding categories."""
    notes = []
    model = _final_estimator(config, problem.task)
    numeric = [c for c in problem.features if c not in problem.categorical]
    categorical = [c for c in problem.features if c in problem.categorical]
    missing = [c for c in numeric if problem.X[c].isna().any()]
    custom = bool(config.model_spec or config.model_file)
    linear = config.model == "linear" and not custom
    if custom and uses_model_as_given(model):
        columns = getattr(model, "feature_names_in_", None)
        shown = ", ".join(repr(problem.display[c]) for c in problem.features)
        source = "--model-spec" if config.model_spec else "--model-file"
        notes.append(f"Model: your {type(model).__name__} from {source}, used as it is (its own preprocessing; "
                     "cloned whole for each refit), fed the DataFrame "
                     f"columns {shown}" + (" it was fitted on." if columns is not None else "."))
        return model, notes
    if custom:
        from sklearn.utils import get_tags

        try:
            accepts_missing = bool(get_tags(model).input_tags.allow_nan)
        except Exception:  # noqa: BLE001 - third-party estimators without tags
            accepts_missing = False
        notes.append(f"Model: {' '.join(repr(model).split())} (from "
                     f"{'--model-spec' if config.model_spec else '--model-file'}).")
    else:
        accepts_missing = config.model in (*_ACCEPTS_MISSING, "xgboost", "lightgbm")
    impute = bool(missing) and not accepts_missing
    if missing:
        shown = ", ".join(repr(problem.display[c]) for c in missing)
        if impute:
            notes.append(f"Missing values in numeric column(s) {shown}: imputed with the training median, plus "
                         "a 0/1 missing-value indicator column each.")
        else:
            notes.append(f"Missing values in numeric column(s) {shown}: passed to {type(model).__name__}, "
                         "which handles them natively.")
    if not categorical and not impute and not linear:
        notes.append(f"All features numeric: the model is a bare {type(model).__name__} (exact tree PD engine).")
        return model, notes
    encode = ColumnTransformer(_encoder_steps(problem, numeric, categorical, impute, linear, bool(missing), notes),
                               remainder="drop", verbose_feature_names_out=False)
    return WorkflowPipeline([("encode", encode), ("model", model)]), notes


def _encoder_steps(problem: Problem, numeric: list, categorical: list, impute: bool, linear: bool, missing: bool,
                   notes: list[str]) -> list:
    """The ColumnTransformer's steps: numeric columns imputed and/or scaled, categorical ones one-hot encoded."""
    steps = []
    if numeric:
        numeric_steps = []
        if impute or (linear and missing):
            numeric_steps.append(("impute", SimpleImputer(strategy="median", add_indicator=True,
                                                          keep_empty_features=True)))
        if linear:
            numeric_steps.append(("scale", StandardScaler()))
        steps.append(("numeric", Pipeline(numeric_steps) if numeric_steps else "passthrough", numeric))
    if categorical:
        encoder = Pipeline([
            ("as_text", AsText()),
            ("one_hot", OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_LEVELS,
                                      sparse_output=False)),
        ])
        steps.append(("categorical", encoder, categorical))
        shown = ", ".join(repr(problem.display[c]) for c in categorical)
        notes.append(f"Categorical column(s) {shown}: one-hot encoded inside the model Pipeline (missing values "
                     f"as their own level {MISSING_LEVEL!r}; at most {MAX_LEVELS} levels per column, rarer ones "
                     "grouped); PD is reported on the original levels.")
    if linear:
        notes.append("Numeric columns standardised for the linear model.")
    return steps


def split(config: dict, problem: Problem):
    """Train/test split (stratified for classification); no test set when ``test_size`` is 0."""
    if config.test_size == 0:
        return problem.X, None, problem.y, None
    if problem.groups is not None:  # whole clusters go to either side
        from sklearn.model_selection import GroupShuffleSplit

        splitter = GroupShuffleSplit(n_splits=1, test_size=config.test_size, random_state=config.random_state)
        train, test = next(splitter.split(problem.X, problem.y, groups=problem.groups))
        return problem.X.iloc[train], problem.X.iloc[test], problem.y.iloc[train], problem.y.iloc[test]
    stratify = problem.y if problem.task == "classification" else None
    try:
        return train_test_split(problem.X, problem.y, test_size=config.test_size,
                                random_state=config.random_state, stratify=stratify)
    except ValueError as exc:
        raise InputError(f"Cannot split the rows into training and test sets: {exc} Change --test-size, or use "
                         "--test-size 0 for no test set.") from None


def _safe(score, *args, **kwargs) -> float:
    try:
        return float(score(*args, **kwargs))
    except ValueError:
        return float("nan")


def evaluate(fitted, problem: Problem, X_train, y_train, X_test, y_test, *, fitted_elsewhere: bool = False
             ) -> tuple[list, pd.DataFrame | None]:
    """Test metrics and the test-set predictions."""
    if X_test is None:
        return [("n_train", len(X_train), "training rows (no test set: --test-size 0)")], None
    rows = [("n_train", len(X_train), "training rows"), ("n_test", len(X_test), "test rows")]
    where = "test rows"
    if fitted_elsewhere:
        rows = [("n_rows", len(X_test), "rows of the table (the given model was fitted elsewhere, possibly on "
                                          "them: not a held-out score)")]
        where = "all rows, not held out"
    if problem.task == "regression":
        pred = fitted.predict(X_test)
        baseline = np.full(len(y_test), float(np.mean(y_train)))
        rows += [
            ("RMSE", float(np.sqrt(metrics.mean_squared_error(y_test, pred))), f"root mean squared error, {where}"),
            ("MAE", float(metrics.mean_absolute_error(y_test, pred)), f"mean absolute error, {where}"),
            ("R2", _safe(metrics.r2_score, y_test, pred), f"coefficient of determination R², {where}"),
            ("RMSE_baseline", float(np.sqrt(metrics.mean_squared_error(y_test, baseline))),
             "RMSE of predicting the training mean (for comparison)"),
        ]
        frame = pd.DataFrame({"actual": y_test.to_numpy(), "predicted": pred,
                              "residual": y_test.to_numpy() - pred}, index=y_test.index)
        return rows, frame
    proba = fitted.predict_proba(X_test)
    classes = list(fitted.classes_)
    label = np.asarray(fitted.classes_)[np.argmax(proba, axis=1)]
    y_true = y_test.to_numpy()
    majority = pd.Series(y_train).value_counts().idxmax()
    majority = majority.item() if isinstance(majority, np.generic) else majority
    rows += [
        ("accuracy", float(metrics.accuracy_score(y_true, label)), f"share of {where} classified correctly"),
        ("F1_weighted", float(metrics.f1_score(y_true, label, average="weighted", zero_division=0)),
         "F1 averaged over classes, weighted by class size"),
        ("F1_macro", float(metrics.f1_score(y_true, label, average="macro", zero_division=0)),
         "F1 averaged over classes, unweighted"),
    ]
    if len(classes) == 2:
        positive = classes.index(problem.positive)
        auc = _safe(metrics.roc_auc_score, y_true == problem.positive, proba[:, positive])
        rows.append(("ROC_AUC", auc, f"area under the ROC curve, positive class {problem.positive!r}"))
    else:
        auc = _safe(metrics.roc_auc_score, y_true, proba, multi_class="ovr", average="macro", labels=classes)
        rows.append(("ROC_AUC", auc, "area under the ROC curve, one-vs-rest, macro average"))
    rows.append(("accuracy_baseline", float(np.mean(y_true == majority)),
                 f"accuracy of always predicting the most frequent training class {majority!r}"))
    frame = pd.DataFrame({"actual": y_true, "predicted": label}, index=y_test.index)
    for cls in problem.outputs_first:
        frame[f"P({cls})"] = proba[:, classes.index(cls)]
    return rows, frame


#: Test scores at or above this are "perfect": a leakage warning names the dominant feature.
PERFECT = 1.0 - 1e-12


def weak_model_notes(metrics: list) -> list[str]:
    """A warning when the model predicts the test rows worse than the training mean (or majority class)."""
    value = {name: v for name, v, _ in metrics}
    if value.get("R2", 0) < 0:
        return [f"WARNING: the model predicts the test rows worse than the training mean (test R² = "
                f"{value['R2']:.3g}): its PD describes a model that has not learnt the target."]
    if value.get("accuracy", 1) < value.get("accuracy_baseline", 0):
        return [f"WARNING: the model classifies the test rows worse than always predicting the majority class "
                f"(accuracy {value['accuracy']:.3g} < {value['accuracy_baseline']:.3g}): its PD describes a model that "
                "has not learnt the target."]
    return []


#: R² of a feature on the others above which its PD averages the model over rows that do not occur.
DETERMINED_R2 = 0.95


def determined_notes(problem: Problem, features) -> list[str]:
    """A warning for each numeric PD feature that the other features nearly determine (linear R² > 0.95)."""
    from sklearn.linear_model import LinearRegression

    numeric = [f for f in problem.features if f not in problem.categorical
               and pd.api.types.is_numeric_dtype(problem.X[f].dtype)]
    X = problem.X[numeric].astype(float)
    X = X.fillna(X.mean())
    out = []
    for f in (f for f in features if f in numeric and len(numeric) > 1):
        others = [o for o in numeric if o != f]
        fit = LinearRegression().fit(X[others], X[f])
        r2 = fit.score(X[others], X[f])
        if r2 > DETERMINED_R2:
            weight = np.abs(fit.coef_) * X[others].std().to_numpy()
            named = ", ".join(repr(problem.display[others[k]]) for k in np.argsort(-weight)[:3])
            out.append(f"WARNING: {problem.display[f]!r} is nearly determined by {named} (linear R² = {r2:.3f}): its "
                       "PD averages the model over combinations that do not occur in the data; --effect ale does "
                       "not extrapolate.")
    return out


def leakage_notes(fitted, problem: Problem, metrics: list, X, y) -> list[str]:
    """A warning when test accuracy or ROC AUC is perfect (1.0), naming the feature the model leans on."""
    if problem.task != "classification" or X is None or len(X) < 2:
        return []
    perfect = [name for name, value, _ in metrics if name in ("accuracy", "ROC_AUC")
               and isinstance(value, float) and value >= PERFECT]
    if not perfect:
        return []
    from sklearn.inspection import permutation_importance

    try:
        importance = permutation_importance(fitted, X, y, n_repeats=3, random_state=0, scoring="accuracy")
        drops = importance.importances_mean
    except Exception:  # noqa: BLE001 - the warning must not cost the run
        drops = None
    text = (f"WARNING: perfect test score ({' and '.join(perfect)} = 1): a model this good usually means that a "
            "feature leaks the target (recorded after the outcome, or computed from it).")
    if drops is not None and len(drops) == X.shape[1]:
        order = np.argsort(-drops)
        top = X.columns[order[0]]
        text += (f" The model leans on {problem.display.get(top, top)!r}: shuffling it lowers the test accuracy by "
                 f"{drops[order[0]]:.2f}")
        if len(order) > 1:
            nxt = X.columns[order[1]]
            text += f" (next: {problem.display.get(nxt, nxt)!r}, {drops[order[1]]:.2f})"
        text += ". Check that column, and leave it out with --exclude if it leaks."
    return [text]


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
    """Split a spec into (module, class name, keyword arguments) without running any of it."""
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
    """Keyword arguments of a LightGBM model that are neither its own nor LightGBM parameters (or aliases)."""
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
