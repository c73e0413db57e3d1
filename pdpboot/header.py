"""The root attrs of every result, in one place: :class:`ResultHeader` (standard library only).

Every computation describes its result with :meth:`ResultHeader.describe` (which also decides
``task``, ``target_name`` and ``learner_family``) and writes it with :meth:`ResultHeader.to_attrs`;
readers get it back with :meth:`ResultHeader.from_attrs`.  The attrs are netCDF-safe.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from ._version import __version__

__all__ = ["TARGETS", "ResultHeader", "jsonable", "learner_family", "target_name", "task_name"]

#: what a band is about: the PD of the learner fitted to data of this size (``learner``), or the PD of
#: the data-generating process (``dgp``, e.g. a debiased estimator's)
TARGETS = ("learner", "dgp")


def jsonable(value):
    """``value`` if JSON can store it, else its ``repr``."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def task_name(response_method: str) -> str:
    """``"regression"`` for ``predict``, ``"classification"`` otherwise."""
    return "regression" if response_method == "predict" else "classification"


def target_name(response_method: str, outputs) -> str:
    """The name of what was averaged: the (first) regression target, or ``"class"``."""
    return str(list(outputs)[0]) if response_method == "predict" else "class"


#: (top-level module, class name) of the gradient-boosting learners of other libraries, found in a class's MRO
_BOOSTING_CLASSES = {("xgboost", "XGBModel"), ("lightgbm", "LGBMModel"), ("catboost", "CatBoostClassifier"),
                     ("catboost", "CatBoostRegressor")}


def learner_family(estimator) -> str | None:
    """``"gradient boosting"`` for a gradient-boosting learner (a Pipeline's final step), else ``None``.

    Decided from classes: scikit-learn's (Hist)GradientBoosting estimators by ``isinstance``; XGBoost, LightGBM
    and CatBoost by the module and name of a class in the estimator's MRO, without importing them.

    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> learner_family(make_pipeline(StandardScaler(), HistGradientBoostingClassifier()))
    'gradient boosting'
    >>> learner_family(StandardScaler()) is None
    True
    """
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.pipeline import Pipeline

    while isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    sklearn = (GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingClassifier,
               HistGradientBoostingRegressor)
    if isinstance(estimator, sklearn) or any(
            (c.__module__.split(".")[0], c.__name__) in _BOOSTING_CLASSES for c in type(estimator).__mro__):
        return "gradient boosting"
    return None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class ResultHeader:
    """Provenance and meaning of a result (its root attrs).

    Attributes
    ----------
    estimator, estimator_params, settings : str
        ``repr`` of the estimator, its parameters (JSON) and every call setting (JSON).
    response : str
        ``predict``, ``predict_proba`` or ``decision_function`` (``task`` follows from it).
    target_name : str
        The regression target's name or ``"class"``.
    n_rows : int
        Rows of the data the estimate was computed on.
    learner_family : str, optional
        ``"gradient boosting"`` for such learners (:func:`learner_family`); not written otherwise.
    effect : str
        ``"pd"`` or ``"ale"``.
    target : {"learner", "dgp"}
        Which PD the uncertainty is about.
    uncertainty : str
        ``"none"`` (one fit), ``"bootstrap"``, ...
    n_resamples : int
        Number of resamples.
    rng_entropy : str, optional
        Entropy of the root seed.
    supports : str
        JSON: statistic -> ``[lower, upper]``, the range bands are clipped into.
    created, creation_library_version : str
        Creation time and version.
    extra : dict
        Further attrs of one method (``resampling``, ``subsample_size``, ...).
    """

    #: written by :meth:`to_attrs` as ``creation_library``
    creation_library: ClassVar[str] = "pdpboot"
    #: attrs that :meth:`to_attrs` derives (not fields): read back, they are recomputed
    DERIVED: ClassVar[tuple[str, ...]] = ("task", "creation_library")

    estimator: str
    estimator_params: str
    settings: str
    response: str
    target_name: str
    n_rows: int
    learner_family: str | None = None
    effect: str = "pd"
    target: str = "learner"
    uncertainty: str = "none"
    n_resamples: int = 0
    rng_entropy: str | None = None
    supports: str = "{}"
    created: str = field(default_factory=_now)
    creation_library_version: str = __version__
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"target={self.target!r} is not one of {list(TARGETS)}.")

    @classmethod
    def describe(cls, estimator, settings: Mapping, *, response: str, outputs, n_rows: int,
                 **fields) -> ResultHeader:
        """The header of a result computed with ``estimator`` and ``settings`` (unknown ``fields`` go to ``extra``)."""
        params = {k: jsonable(v) for k, v in estimator.get_params(deep=False).items()}
        if not isinstance(fields.get("supports", ""), str):
            fields["supports"] = json.dumps({k: list(v) for k, v in sorted(fields["supports"].items())})
        known = {f.name for f in dataclasses.fields(cls)}
        extra = dict(fields.pop("extra", {}), **{k: fields.pop(k) for k in list(fields) if k not in known})
        return cls(
            estimator=repr(estimator), estimator_params=json.dumps(params, sort_keys=True),
            settings=json.dumps({k: jsonable(v) for k, v in settings.items()}, sort_keys=True),
            response=response, target_name=target_name(response, outputs),
            n_rows=int(n_rows), learner_family=learner_family(estimator), extra=extra, **fields,
        )

    @property
    def task(self) -> str:
        """``"regression"`` or ``"classification"`` (from ``response``)."""
        return task_name(self.response)

    def support(self, statistic: str) -> tuple[float | None, float | None]:
        """The ``(lower, upper)`` bounds of ``statistic`` (``(None, None)``: unbounded or unknown)."""
        bounds = json.loads(self.supports or "{}").get(statistic)
        if bounds is None:
            return (None, None)
        return tuple(None if b is None else float(b) for b in bounds)

    def replace(self, **changes) -> ResultHeader:
        """A copy with ``changes`` (unknown names go to ``extra``)."""
        known = {f.name for f in dataclasses.fields(self)}
        extra = dict(self.extra, **{k: changes.pop(k) for k in list(changes) if k not in known})
        return dataclasses.replace(self, extra=extra, **changes)

    def to_attrs(self) -> dict:
        """The root attrs (netCDF-safe; ``None`` values left out)."""
        attrs = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        attrs.update(task=self.task, creation_library=self.creation_library)
        attrs.update(self.extra)
        return {k: v for k, v in attrs.items() if v is not None}

    @classmethod
    def from_attrs(cls, attrs: Mapping) -> ResultHeader:
        """The header of a result's root attrs (results written before a field existed get its default)."""
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        values = {k: attrs[k] for k in known if k in attrs}
        for name in ("estimator", "estimator_params", "settings", "response", "target_name"):
            values.setdefault(name, "")
        values.setdefault("n_rows", 0)
        return cls(extra={k: v for k, v in attrs.items() if k not in known and k not in cls.DERIVED}, **values)
