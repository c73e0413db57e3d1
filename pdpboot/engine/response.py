"""Which function of a fitted model the PD averages: ``predict``, ``predict_proba`` or ``decision_function``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from sklearn.base import is_classifier

RESPONSE_METHODS = ("auto", "predict", "predict_proba", "decision_function")

#: the keyword of a boosting library's ``predict`` that sets its threads for one call (for a few rows;
#: the values do not depend on it)
ONE_THREAD_KEYWORD = {"lightgbm": "num_threads", "catboost": "thread_count"}


def one_thread(library: str) -> dict:
    """``{keyword: 1}`` for a library of :data:`ONE_THREAD_KEYWORD`, else ``{}``.

    >>> one_thread("lightgbm"), one_thread("xgboost")
    ({'num_threads': 1}, {})
    """
    keyword = ONE_THREAD_KEYWORD.get(library)
    return {keyword: 1} if keyword else {}


def sigmoid(z):
    """Logistic function ``1 / (1 + exp(-z))``, elementwise."""
    return 1.0 / (1.0 + np.exp(-z))


def softmax(z):
    """Row-wise softmax of raw scores ``(rows, classes)``."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def signed_square(z):
    """``sign(z) * z**2``, elementwise: LightGBM's ``reg_sqrt`` back-transform of a raw score."""
    return np.sign(z) * z * z


def binary_probabilities(score, scale: float = 1.0) -> np.ndarray:
    """``[1 - p, p]`` with ``p = sigmoid(scale * score[:, 0])``: a binary booster's raw score to
    ``predict_proba``'s two columns."""
    p = sigmoid(scale * score[:, 0])
    return np.column_stack([1.0 - p, p])


#: Links from a booster's raw score to its response, by kind of objective: classifiers (to
#: ``predict_proba``) and regressors (to ``predict``); ``None`` is the identity.
_CLASSIFIER_LINKS = {"binary": binary_probabilities, "multiclass": softmax}
_REGRESSOR_LINKS = {"identity": None, "exp": np.exp, "logistic": sigmoid, "signed_square": signed_square}


def booster_link(library: str, objective: str, kind: str | None, *, classifier: bool, response_method: str,
                 unsupported, sigmoid_scale: float = 1.0):
    """Link of a booster read by the exact tree engine for ``kind`` of objective; ``unsupported(reason)`` else."""
    expected, what, links = (("predict_proba", "classifier", _CLASSIFIER_LINKS) if classifier
                             else ("predict", "regressor", _REGRESSOR_LINKS))
    if response_method != expected:
        raise unsupported(f"response_method={response_method!r} for a {library} {what}")
    if kind not in links:
        raise unsupported(f"{library} {what} objective {objective!r}")
    if kind == "binary" and sigmoid_scale != 1.0:
        return partial(binary_probabilities, scale=sigmoid_scale)
    return links[kind]


def resolve_response_method(estimator, response_method: str) -> str:
    """Resolve ``"auto"`` and check the estimator offers the method; returns the method's name."""
    if response_method not in RESPONSE_METHODS:
        raise ValueError(
            f"response_method={response_method!r} is not one of {RESPONSE_METHODS}."
        )
    classifier = is_classifier(estimator)
    if response_method == "auto":
        if not classifier:
            return "predict"
        for method in ("predict_proba", "decision_function"):
            if hasattr(estimator, method):
                return method
        raise ValueError(
            f"{type(estimator).__name__} is a classifier with neither predict_proba nor "
            "decision_function; partial dependence of predicted labels is not supported. "
            "Use a classifier that provides class probabilities or scores."
        )
    if classifier and response_method == "predict":
        raise ValueError(
            "response_method='predict' on a classifier would average predicted labels, which "
            "is not a partial dependence. Use 'predict_proba' or 'decision_function'."
        )
    if not classifier and response_method != "predict":
        raise ValueError(
            f"response_method={response_method!r} is only for classifiers; "
            f"{type(estimator).__name__} is not a classifier. Use 'predict' or 'auto'."
        )
    if not hasattr(estimator, response_method):
        raise ValueError(
            f"{type(estimator).__name__} has no {response_method}; choose another "
            "response_method (for example 'decision_function' or 'auto')."
        )
    return response_method


def output_labels(estimator, method: str, target_names: Sequence[str] | None, n_targets: int) -> list:
    """Labels of the ``output`` dim for a fitted estimator and resolved method."""
    if method == "predict":
        if target_names is not None:
            return list(target_names)
        return ["y"] if n_targets == 1 else [f"y{k}" for k in range(n_targets)]
    classes = list(estimator.classes_)
    if method == "decision_function" and len(classes) == 2:
        return [classes[1]]
    return classes


def response_function(estimator, method: str, **params) -> Callable[[object], np.ndarray]:
    """``f(X) -> ndarray (n_rows, n_outputs)``: the resolved response ``method`` of a fitted estimator.

    ``params`` are passed to every call (e.g. a library's thread count).
    """
    bound = partial(getattr(estimator, method), **params) if params else getattr(estimator, method)

    def respond(X):
        out = np.asarray(bound(X), dtype=float)
        if out.ndim == 0 or out.shape[0] != X.shape[0]:
            raise ValueError(
                f"{type(estimator).__name__}.{method} returned {out.shape[0] if out.ndim else 'a scalar'} "
                f"value(s) for {X.shape[0]} rows; it must return one row of outputs per input row."
            )
        return out.reshape(out.shape[0], -1)

    return respond

