"""LightGBM models for the exact tree engine, read from ``Booster.dump_model()``.

Private helper of :mod:`pdpboot.engine._tree_model` (used only for estimators from
``lightgbm``).  Conventions (LightGBM 4):

* inputs are float64; a numeric node (``decision_type "<="``) sends ``x`` left when
  ``x <= threshold`` (float64).  ``missing_type "NaN"``: NaN follows ``default_left``;
  ``"None"``: NaN is treated as 0.0 (so it goes left when ``0 <= threshold``);
  ``"Zero"`` (zero as missing) is not supported (brute force is used);
* a categorical node (``"=="``) sends the listed categories (``"1||4||7"``) left and
  everything else - other categories, negative codes, NaN - right; pandas categories
  are coded with the categories stored at training time (``pandas_categorical``),
  exactly as LightGBM does;
* the raw score is the sum of the leaf values (``average_output`` - random forest mode
  - divides by the number of iterations); any constant left over (init score) is read
  back from ``predict(raw_score=True)`` by the caller;
* links: identity (regression objectives), ``exp`` (poisson, gamma, tweedie), sigmoid
  with its ``sigmoid:`` scale (binary, cross-entropy), softmax (multiclass).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from .response import binary_probabilities, softmax

_IDENTITY = {"regression", "regression_l1", "huber", "fair", "quantile", "mape"}
_EXP = {"poisson", "gamma", "tweedie"}


def is_lightgbm(estimator) -> bool:
    return type(estimator).__module__.split(".")[0] == "lightgbm" and hasattr(estimator, "booster_")


class LightGBMReader:
    """Node table, link and input conversion of a fitted LightGBM scikit-learn estimator."""

    dtype = np.float64

    def __init__(self, estimator, response_method: str, unsupported):
        from sklearn.base import is_classifier

        self.estimator = estimator
        booster = estimator.booster_
        self.dump = booster.dump_model()
        objective = str(self.dump.get("objective", "")).split()
        name = objective[0] if objective else ""
        opts = dict(o.split(":", 1) for o in objective[1:] if ":" in o)
        self.n_raw = int(self.dump.get("num_tree_per_iteration", 1))
        classifier = is_classifier(estimator)
        if classifier:
            if response_method != "predict_proba":
                raise unsupported(f"response_method={response_method!r} for a LightGBM classifier")
            if name in ("binary", "cross_entropy") and self.n_raw == 1:
                self.link = partial(binary_probabilities, scale=float(opts.get("sigmoid", 1.0)))
            elif name == "multiclass":
                self.link = softmax
            else:
                raise unsupported(f"LightGBM classifier objective {name!r}")
        else:
            if response_method != "predict":
                raise unsupported(f"response_method={response_method!r} for a LightGBM regressor")
            if name in _IDENTITY:
                self.link = None
            elif name in _EXP:
                self.link = np.exp
            else:
                raise unsupported(f"LightGBM objective {name!r}")
        self.n_features = int(self.dump["max_feature_idx"]) + 1
        pandas_cats = self.dump.get("pandas_categorical") or []
        self.categorical_features = [j for j, info in enumerate(self.dump.get("feature_infos", {}).values())
                                     if isinstance(info, dict) and info.get("values") is not None]
        self.categories: list = [None] * self.n_features
        self.cat_columns: list[int] = []
        self.unsupported = unsupported
        self._pandas_cats = pandas_cats
        self.n_iter = max(1, len(self.dump["tree_info"]) // self.n_raw)

    def table(self, table_fn, missing_code: int):
        feats, thrs, lefts, rights, miss, sizes, covers, vals, cat_rows = [], [], [], [], [], [], [], [], []
        cat_tables = []
        cat_features = set()
        scale = 1.0 / self.n_iter if self.dump.get("average_output") else 1.0
        for t, info in enumerate(self.dump["tree_info"]):
            nodes = []  # preorder: (dict, parent slot)
            stack = [info["tree_structure"]]
            while stack:
                nd = stack.pop()
                nodes.append(nd)
                if "split_index" in nd:
                    stack.append(nd["right_child"])
                    stack.append(nd["left_child"])
            ident = {id(nd): k for k, nd in enumerate(nodes)}
            n = len(nodes)
            feat = np.full(n, -1, dtype=np.intp)
            thr = np.zeros(n)
            left = np.full(n, -1, dtype=np.intp)
            right = np.full(n, -1, dtype=np.intp)
            mleft = np.zeros(n, dtype=bool)
            cover = np.zeros(n)
            value = np.zeros((n, self.n_raw))
            cat_row = np.full(n, -1, dtype=np.intp)
            col = t % self.n_raw
            for k, nd in enumerate(nodes):
                if "split_index" not in nd:
                    value[k, col] = float(nd["leaf_value"]) * scale
                    cover[k] = float(nd.get("leaf_count", 1))
                    continue
                f = int(nd["split_feature"])
                feat[k] = f
                left[k], right[k] = ident[id(nd["left_child"])], ident[id(nd["right_child"])]
                cover[k] = float(nd.get("internal_count", 1))
                missing = nd.get("missing_type", "None")
                if nd["decision_type"] == "==":
                    listed = [int(c) for c in str(nd["threshold"]).split("||")]
                    if any(c < 0 or c >= missing_code for c in listed):
                        raise self.unsupported("LightGBM category codes above 255")
                    row = np.zeros(missing_code + 1, dtype=bool)
                    row[listed] = True
                    cat_row[k] = -2  # filled below
                    cat_tables.append(row)
                    cat_features.add(f)
                    continue
                if nd["decision_type"] != "<=" or missing == "Zero":
                    raise self.unsupported(f"LightGBM split {nd['decision_type']!r} / missing {missing!r}")
                thr[k] = float(nd["threshold"])
                mleft[k] = bool(nd["default_left"]) if missing == "NaN" else (0.0 <= thr[k])
            feats.append(feat)
            thrs.append(thr)
            lefts.append(left)
            rights.append(right)
            miss.append(mleft)
            sizes.append(n)
            covers.append(cover)
            vals.append(value)
            cat_rows.append(cat_row)
        cat_row = np.concatenate(cat_rows)
        marked = np.flatnonzero(cat_row == -2)
        cat_row[marked] = np.arange(len(marked))
        table = table_fn(
            np.concatenate(feats), np.concatenate(thrs), np.concatenate(lefts), np.concatenate(rights),
            np.concatenate(miss), sizes, np.concatenate(vals), cat_row, cover=np.concatenate(covers),
        )
        table["cat_left"] = (np.stack(cat_tables) if cat_tables
                             else np.zeros((0, missing_code + 1), dtype=bool))
        self.cat_columns = sorted(cat_features)
        return table

    def categorical(self) -> np.ndarray:
        out = np.zeros(self.n_features, dtype=bool)
        out[self.cat_columns] = True
        return out

    def to_array(self, X) -> np.ndarray:
        """Rows as float64; pandas categories coded with the training categories (NaN if unknown)."""
        if isinstance(X, pd.DataFrame):
            if X.shape[1] != self.n_features:
                raise ValueError(f"X has {X.shape[1]} columns, the model {self.n_features}.")
            out = np.empty(X.shape, dtype=np.float64)
            cats = iter(self._pandas_cats)
            for j in range(X.shape[1]):
                col = X.iloc[:, j]
                if isinstance(col.dtype, pd.CategoricalDtype):
                    known = next(cats, None)
                    if known is None:
                        raise ValueError("categorical column the LightGBM model was not trained with")
                    self.categories[j] = list(known)
                    codes = pd.Categorical(col, categories=known).codes.astype(np.float64)
                    out[:, j] = np.where(codes < 0, np.nan, codes)
                else:
                    out[:, j] = np.asarray(col, dtype=np.float64)
            return out
        xa = np.asarray(X, dtype=np.float64)
        if xa.ndim != 2 or xa.shape[1] != self.n_features:
            raise ValueError(f"X must be 2-D with {self.n_features} columns.")
        return xa

    def margin(self, X) -> np.ndarray:
        return np.asarray(self.estimator.predict(X, raw_score=True), dtype=np.float64).reshape(len(X), -1)
