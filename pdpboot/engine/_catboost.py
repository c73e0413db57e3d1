"""CatBoost models for the exact tree engine, read from the model's JSON export.

Conventions (CatBoost 1.2, ``save_model(format="json")``):

* *oblivious* trees of depth ``d`` (one split per level, ``2**d`` leaves) are expanded into binary
  trees; split ``l`` of ``splits`` decides bit ``l`` of the leaf index;
* inputs and borders are float32; a row goes left when ``x <= border``; NaN goes right only for
  ``nan_value_treatment == "AsTrue"`` (``nan_mode="Max"``);
* the raw value is ``scale * (sum of the leaves) + bias``: the scale is folded into the leaves, the
  bias read back from ``predict(prediction_type="RawFormulaVal")`` by the caller;
* links: identity (regression losses), sigmoid (``Logloss``, ``CrossEntropy``), softmax (``MultiClass``);
* categorical (CTR), text and embedding features and non-symmetric trees are refused (brute force).
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pandas as pd

from .response import booster_link, one_thread

_IDENTITY = {"RMSE", "MAE", "Quantile", "MAPE", "Huber", "Expectile", "LogCosh", "Lq"}
_LOGISTIC = {"Logloss", "CrossEntropy"}
_SOFTMAX = {"MultiClass"}


def is_catboost(estimator) -> bool:
    """A CatBoost estimator (or a subclass that keeps CatBoost's predict methods)."""
    return from_catboost(estimator) and hasattr(estimator, "save_model")


def from_catboost(estimator) -> bool:
    """Whether the estimator's class is CatBoost's, or derives from one without overriding its predictions."""
    cls = type(estimator)
    base = next((c for c in cls.__mro__ if c.__module__.split(".")[0] == "catboost"), None)
    if base is None:
        return False
    return all(getattr(cls, name, None) is getattr(base, name, None) for name in ("predict", "predict_proba"))


def _model_json(estimator) -> dict:
    """The model's JSON export (CatBoost writes it to a file only)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.json")
        estimator.save_model(path, format="json")
        with open(path) as fh:
            return json.load(fh)


class CatBoostReader:
    """Node table, link and input conversion of a fitted CatBoost scikit-learn estimator."""

    dtype = np.float32

    def __init__(self, estimator, response_method: str, unsupported):
        from sklearn.base import is_classifier

        if not estimator.is_fitted():
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("the CatBoost model is not fitted")
        self.estimator = estimator
        params = estimator.get_all_params()
        loss = str(params.get("loss_function", "")).split(":")[0]
        classifier = is_classifier(estimator) or type(estimator).__name__ == "CatBoostClassifier"
        if classifier:
            kind = "binary" if loss in _LOGISTIC else "multiclass" if loss in _SOFTMAX else None
        else:
            kind = "identity" if loss in _IDENTITY else None
        self.link = booster_link("CatBoost", loss, kind, classifier=classifier, response_method=response_method,
                                 unsupported=unsupported)
        model = _model_json(estimator)
        info = model.get("features_info", {})
        for kind in ("categorical_features", "text_features", "embedding_features"):
            if info.get(kind):
                raise unsupported(f"CatBoost model with {kind.replace('_', ' ')} (not column-wise: use brute force)")
        if "oblivious_trees" not in model:
            raise unsupported("CatBoost model with non-symmetric trees (grow_policy other than 'SymmetricTree')")
        self.trees = model["oblivious_trees"]
        self.float_features = info.get("float_features", [])
        self.n_features = len(estimator.feature_names_)
        scale, bias = model.get("scale_and_bias", [1.0, [0.0]])
        self.scale = float(scale)
        self.n_raw = max(1, len(np.atleast_1d(bias)))
        self.categories: list = [None] * self.n_features

    def table(self, table_fn, missing_code: int):
        """Node table of the expanded trees, built a depth at once (tree order does not change the sum)."""
        n_cols = 1 + max([int(f["feature_index"]) for f in self.float_features], default=0)
        column = np.zeros(n_cols, dtype=np.intp)
        nan_left = np.ones(n_cols, dtype=bool)
        for f in self.float_features:
            column[int(f["feature_index"])] = int(f["flat_feature_index"])
            nan_left[int(f["feature_index"])] = f.get("nan_value_treatment", "AsFalse") != "AsTrue"
        depth = np.array([len(tree.get("splits", [])) for tree in self.trees], dtype=np.intp)
        parts = []
        for d in np.unique(depth):
            parts.append(self._trees_of_depth(int(d), [self.trees[t] for t in np.flatnonzero(depth == d)],
                                              column, nan_left))
        feat, thr, left, right, miss, value, cover = (np.concatenate([p[k].ravel() if k != 5 else
                                                                      p[k].reshape(-1, self.n_raw)
                                                                      for p in parts]) for k in range(7))
        sizes = np.concatenate([np.full(p[0].shape[0], p[0].shape[1]) for p in parts])
        return table_fn(feat, thr, left, right, miss, sizes, value, None, cover=cover)

    def _trees_of_depth(self, d: int, trees: list, column, nan_left):
        """(T, n) node arrays (value: (T, n, n_raw)) of T oblivious trees of depth d, breadth-first:
        node v at depth l splits by splits[l]; its children are 2v + 1 (left) and 2v + 2."""
        if any(s.get("split_type") != "FloatFeature" for tree in trees for s in tree.get("splits", [])):
            raise ValueError("CatBoost split on a non-float feature")
        n_trees, n_inner = len(trees), 2**d - 1
        n = 2 * n_inner + 1
        level = np.repeat(np.arange(d + 1), 2 ** np.arange(d + 1))[:n_inner]
        f_idx = np.array([[int(s["float_feature_index"]) for s in tree["splits"]] for tree in trees],
                         dtype=np.intp).reshape(n_trees, d)
        borders = np.array([[s["border"] for s in tree["splits"]] for tree in trees],
                           dtype=np.float32).reshape(n_trees, d).astype(np.float64)
        feat = np.full((n_trees, n), -1, dtype=np.intp)
        thr = np.zeros((n_trees, n))
        miss = np.zeros((n_trees, n), dtype=bool)
        feat[:, :n_inner] = column[f_idx[:, level]]
        thr[:, :n_inner] = borders[:, level]
        miss[:, :n_inner] = nan_left[f_idx[:, level]]
        left = np.full((n_trees, n), -1, dtype=np.intp)
        right = np.full((n_trees, n), -1, dtype=np.intp)
        left[:, :n_inner] = 2 * np.arange(n_inner) + 1
        right[:, :n_inner] = 2 * np.arange(n_inner) + 2
        # leaf i (left to right) took the branches given by the bits of i, depth 0 the highest;
        # CatBoost's leaf index has split l's outcome (1 = right) as bit l
        i = np.arange(2**d)
        bits = (i[:, None] >> (d - 1 - np.arange(d))[None, :]) & 1
        leaf_index = (bits << np.arange(d)[None, :]).sum(axis=1).astype(np.intp)
        leaf_values = np.array([tree["leaf_values"] for tree in trees], dtype=np.float64)
        leaf_values = leaf_values.reshape(n_trees, 2**d, self.n_raw)
        weights = np.array([tree.get("leaf_weights") or np.ones(2**d) for tree in trees], dtype=np.float64)
        value = np.zeros((n_trees, n, self.n_raw))
        value[:, n_inner:] = leaf_values[:, leaf_index] * self.scale
        cover = np.zeros((n_trees, n))
        cover[:, n_inner:] = weights.reshape(n_trees, 2**d)[:, leaf_index]
        for lv in range(d - 1, -1, -1):
            v = np.arange(2**lv - 1, 2 ** (lv + 1) - 1)
            cover[:, v] = cover[:, 2 * v + 1] + cover[:, 2 * v + 2]
        return feat, thr, left, right, miss, value, cover

    def categorical(self) -> np.ndarray:
        return np.zeros(self.n_features, dtype=bool)

    def to_array(self, X) -> np.ndarray:
        """Rows as float32 (numeric columns only)."""
        if isinstance(X, pd.DataFrame):
            if X.shape[1] != self.n_features:
                raise ValueError(f"X has {X.shape[1]} columns, the model {self.n_features}.")
            if any(isinstance(t, pd.CategoricalDtype) or t.kind == "O" for t in X.dtypes):
                raise ValueError("non-numeric columns")
            return X.to_numpy(dtype=np.float32)
        xa = np.asarray(X, dtype=np.float32)
        if xa.ndim != 2 or xa.shape[1] != self.n_features:
            raise ValueError(f"X must be 2-D with {self.n_features} columns.")
        return xa

    def margin(self, X) -> np.ndarray:
        raw = self.estimator.predict(X, prediction_type="RawFormulaVal", **one_thread("catboost"))  # a few rows
        return np.asarray(raw, dtype=np.float64).reshape(len(X), -1)
