"""LightGBM models for the exact tree engine, read from ``Booster.model_to_string()``.

Conventions (LightGBM 4):

* inputs are float64; a numeric node sends ``x`` left when ``x <= threshold`` (17 digits: exact).
  ``decision_type`` bits: 0 categorical, 1 default left, 2-3 the missing type (NaN: default left;
  None: NaN read as 0.0; Zero: not supported);
* a categorical node's bitset (``cat_boundaries`` / ``cat_threshold``) lists the categories going
  left; pandas categories are coded with those stored at training time (``pandas_categorical``);
* the raw score is the sum of the leaves (the dump's offset is 0); in random-forest mode
  (``average_output``) leaves and margin are divided by the number of iterations;
* the dump holds exactly the trees ``predict`` sums (also after early stopping);
* links: identity (``reg_sqrt``: ``sign(s) s**2``), ``exp`` (poisson, gamma, tweedie), sigmoid with its
  ``sigmoid:`` scale (binary, cross-entropy), softmax (multiclass).
"""

from __future__ import annotations

import json

import numpy as np

from .inputs import reader_array
from .response import booster_link, one_thread

_IDENTITY = {"regression", "regression_l1", "huber", "fair", "quantile", "mape"}
_EXP = {"poisson", "gamma", "tweedie"}


def is_lightgbm(estimator) -> bool:
    return type(estimator).__module__.split(".")[0] == "lightgbm" and hasattr(estimator, "booster_")


#: keys every ``Tree=`` block of a LightGBM 4 dump has (a dump without one is not read)
TREE_KEYS = ("num_leaves", "num_cat", "split_feature", "threshold", "decision_type", "left_child",
             "right_child", "leaf_value", "leaf_count", "internal_count")


def parse_model_string(text: str) -> tuple[dict, dict[str, list[str]], list]:
    """Header, per-key tree lines and pandas categories of ``Booster.model_to_string()``.

    ``header`` maps the keys before the first tree to their value strings (a bare key to ``""``);
    ``fields`` maps each key of the ``Tree=`` blocks to its value strings in tree order (a key only some
    trees write lists those trees' values); ``fields["Tree"]`` holds the trees' indices.
    """
    body, _, tail = text.partition("end of trees")
    start = body.find("\nTree=")
    head, trees = (body, "") if start < 0 else (body[:start], body[start + 1:])
    header = dict((line.split("=", 1) + [""])[:2] for line in head.splitlines() if line)
    fields: dict[str, list[str]] = {}
    for line in trees.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields.setdefault(key, []).append(value)
    pandas_categories: list = []
    for line in tail.splitlines():
        if line.startswith("pandas_categorical:"):
            pandas_categories = json.loads(line.split(":", 1)[1]) or []
    return header, fields, pandas_categories


def _ranges(counts: np.ndarray) -> np.ndarray:
    """``0..c-1`` for each count ``c``, concatenated."""
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - counts, counts)


def parse_numbers(text: str, dtype) -> np.ndarray:
    """The numbers of a line of a dump (single spaces between them), parsed in C with correct rounding;
    anything that is not a number raises ``ValueError``."""
    if not text.strip():
        return np.zeros(0, dtype=dtype)
    out = np.fromstring(text, dtype=dtype, sep=" ")
    if len(out) != text.strip().count(" ") + 1:
        raise ValueError(f"{text.strip().count(' ') + 1} numbers expected, {len(out)} read")
    return out


class LightGBMReader:
    """Node table, link and input conversion of a fitted LightGBM scikit-learn estimator."""

    dtype = np.float64

    def __init__(self, estimator, response_method: str, unsupported):
        from sklearn.base import is_classifier

        self.estimator = estimator
        self.header, self.fields, self._pandas_cats = parse_model_string(estimator.booster_.model_to_string())
        self.n_trees = len(self.fields.get("Tree", ()))
        if any(len(self.fields.get(key, ())) != self.n_trees for key in TREE_KEYS):
            raise unsupported("a LightGBM model text without every tree's " + ", ".join(TREE_KEYS))
        objective = self.header.get("objective", "").split()
        name = objective[0] if objective else ""
        opts = dict(o.split(":", 1) for o in objective[1:] if ":" in o)
        self.n_raw = int(self.header.get("num_tree_per_iteration", 1))
        classifier = is_classifier(estimator)
        if classifier:
            kind = ("binary" if name in ("binary", "cross_entropy") and self.n_raw == 1
                    else "multiclass" if name == "multiclass" else None)
        else:
            kind = "identity" if name in _IDENTITY else "exp" if name in _EXP else None
            if kind == "identity" and "sqrt" in objective[1:]:  # reg_sqrt=True: fitted on sqrt(y)
                kind = "signed_square"
        self.link = booster_link("LightGBM", name, kind, classifier=classifier, response_method=response_method,
                                 unsupported=unsupported, sigmoid_scale=float(opts.get("sigmoid", 1.0)))
        if any(flag.strip() != "0" for flag in self.fields.get("is_linear", ())):
            raise unsupported("LightGBM linear trees")
        self.n_features = int(self.header["max_feature_idx"]) + 1
        self.categories: list = [None] * self.n_features
        self.cat_columns: list[int] = []
        self.unsupported = unsupported
        self.n_iter = max(1, self.n_trees // self.n_raw)
        # Random-forest mode averages the trees; its raw score (predict(raw_score=True)) is their sum.
        self.tree_scale = 1.0 / self.n_iter if "average_output" in self.header else 1.0

    def _categories_left(self, boundaries: str, thresholds: str, missing_code: int) -> list[np.ndarray]:
        """Per categorical split of a tree, the categories it sends left (decoded from the tree's
        ``cat_boundaries`` and ``cat_threshold`` bitsets)."""
        bounds = parse_numbers(boundaries, np.int64)
        words = parse_numbers(thresholds, np.uint32)
        rows = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            bits = np.unpackbits(words[a:b].astype("<u4").view(np.uint8), bitorder="little")
            listed = np.flatnonzero(bits)
            if listed.size and listed[-1] >= missing_code:
                raise self.unsupported("LightGBM category codes above 255")
            row = np.zeros(missing_code + 1, dtype=bool)
            row[listed] = True
            rows.append(row)
        return rows

    def _joined(self, key: str, dtype) -> np.ndarray:
        """One array of ``key``'s numbers over all trees, in tree order (one parse)."""
        return parse_numbers(" ".join(v for v in map(str.strip, self.fields.get(key, ())) if v), dtype)

    def _counts(self, key: str) -> np.ndarray:
        """``key``'s numbers as float64: row counts, written as integers (parsed several times faster
        than decimals), or decimals if a version writes them so."""
        try:
            return self._joined(key, np.int64).astype(np.float64)
        except ValueError:
            return self._joined(key, np.float64)

    def table(self, table_fn, missing_code: int):
        """Node table: per tree, the internal nodes in LightGBM's order, then its leaves."""
        n_leaves = parse_numbers(" ".join(self.fields["num_leaves"]), np.intp)
        n_internal = n_leaves - 1
        sizes = n_internal + n_leaves
        base = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        internal_at = np.repeat(base, n_internal) + _ranges(n_internal)  # global slot of each internal node
        leaf_at = np.repeat(base + n_internal, n_leaves) + _ranges(n_leaves)
        total = int(sizes.sum())

        value = np.zeros((total, self.n_raw))
        tree_of_leaf = np.repeat(np.arange(self.n_trees), n_leaves)
        value[leaf_at, tree_of_leaf % self.n_raw] = self._joined("leaf_value", np.float64) * self.tree_scale
        cover = np.ones(total)
        cover[leaf_at] = self._counts("leaf_count")
        cover[internal_at] = self._counts("internal_count")

        decision = self._joined("decision_type", np.int64)
        categorical = (decision & 1).astype(bool)
        missing_type = (decision >> 2) & 3  # 0 None, 1 Zero, 2 NaN
        if np.any(missing_type[~categorical] == 1):
            raise self.unsupported("LightGBM split with zero as missing")
        own_internal = np.repeat(n_internal, n_internal)
        feat = np.full(total, -1, dtype=np.intp)
        feat[internal_at] = self._joined("split_feature", np.intp)
        left = np.full(total, -1, dtype=np.intp)
        right = np.full(total, -1, dtype=np.intp)
        for out, key in ((left, "left_child"), (right, "right_child")):  # local ids; leaf l is stored as ~l
            child = self._joined(key, np.intp)
            out[internal_at] = np.where(child < 0, own_internal + ~child, child)
        raw_threshold = self._joined("threshold", np.float64)
        thr = np.zeros(total)
        thr[internal_at] = np.where(categorical, 0.0, raw_threshold)
        # NaN follows default left when the missing type is NaN; with None it is read as 0.0
        missing_left = np.where(missing_type == 2, (decision & 2).astype(bool), 0.0 <= thr[internal_at])
        mleft = np.zeros(total, dtype=bool)
        mleft[internal_at] = missing_left & ~categorical

        cat_row = np.full(total, -1, dtype=np.intp)
        cat_tables: list[np.ndarray] = []
        first_internal = np.concatenate([[0], np.cumsum(n_internal)[:-1]])
        with_cats = np.flatnonzero(parse_numbers(" ".join(self.fields["num_cat"]), np.intp))
        bitsets = self.fields.get("cat_boundaries", []), self.fields.get("cat_threshold", [])
        if not len(with_cats) == len(bitsets[0]) == len(bitsets[1]):
            raise ValueError(f"{len(with_cats)} trees with categorical splits, {len(bitsets[0])} cat_boundaries "
                             f"and {len(bitsets[1])} cat_threshold lines")
        for t, boundaries, thresholds in zip(with_cats, *bitsets):
            nodes = first_internal[t] + np.flatnonzero(categorical[first_internal[t]:first_internal[t] + n_internal[t]])
            cat_row[internal_at[nodes]] = len(cat_tables) + raw_threshold[nodes].astype(np.intp)
            cat_tables.extend(self._categories_left(boundaries, thresholds, missing_code))
        table = table_fn(feat, thr, left, right, mleft, sizes, value, cat_row, cover=cover,
                         cat_left=np.stack(cat_tables) if cat_tables else None)
        self.cat_columns = sorted({int(f) for f in feat[cat_row >= 0]})
        return table

    def categorical(self) -> np.ndarray:
        out = np.zeros(self.n_features, dtype=bool)
        out[self.cat_columns] = True
        return out

    def to_array(self, X) -> np.ndarray:
        """Rows as float64; pandas categories coded with the training categories (NaN if unknown)."""
        cats = iter(self._pandas_cats)

        def categories_for(j: int, col) -> list:
            known = next(cats, None)
            if known is None:
                raise ValueError("categorical column the LightGBM model was not trained with")
            self.categories[j] = list(known)
            return known

        return reader_array(X, self.n_features, np.float64, categories_for)

    def dump_offset(self) -> np.ndarray:
        """(n_raw,) the constant the raw score adds to the leaves, as the dump defines it: zero."""
        return np.zeros(self.n_raw)

    def margin(self, X) -> np.ndarray:
        # one thread: the margin of a few rows (each row's value does not depend on the threads)
        raw = np.asarray(self.estimator.predict(X, raw_score=True, **one_thread("lightgbm")), dtype=np.float64)
        raw = raw.reshape(len(X), -1)
        return raw * self.tree_scale
