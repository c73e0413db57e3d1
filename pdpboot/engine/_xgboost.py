"""XGBoost models for the exact tree engine, read from the booster's model (binary UBJSON; JSON for categories).

Conventions (XGBoost >= 2, ``gbtree`` booster):

* inputs are float32; a numeric node sends ``x`` left when ``x < split_condition`` (float32), i.e.
  ``x <= nextafter(split_condition, -inf)``; NaN, and values equal to a ``missing=`` sentinel,
  follow ``default_left``;
* a categorical node (``split_type == 1``) sends the categories listed for it *right*, every other
  valid code left; pandas categories are coded with the categories stored at training time;
* a leaf holds its value in ``split_conditions``; ``tree_info`` names the output group; the base
  margin is read back from ``predict(output_margin=True)`` by the caller;
* after early stopping ``predict`` sums the iterations ``0..best_iteration``: the reader keeps those trees;
* links: identity, ``exp`` (Poisson, gamma, Tweedie), sigmoid (logistic), softmax (``multi:*``).
"""

from __future__ import annotations

import json
import struct

import numpy as np

from .inputs import reader_array
from .response import booster_link

_IDENTITY = {"reg:squarederror", "reg:linear", "reg:absoluteerror", "reg:pseudohubererror"}
_EXP = {"count:poisson", "reg:gamma", "reg:tweedie"}
_LOGISTIC = {"binary:logistic", "reg:logistic"}
_SOFTMAX = {"multi:softprob", "multi:softmax"}


def is_xgboost(estimator) -> bool:
    """An XGBoost estimator, or a subclass that keeps XGBoost's response (a classifier's ``predict_proba``)."""
    cls = type(estimator)
    base = next((c for c in cls.__mro__ if c.__module__.split(".")[0] == "xgboost"), None)
    if base is None or not hasattr(estimator, "get_booster"):
        return False
    names = ("predict_proba",) if hasattr(base, "predict_proba") else ("predict",)
    return all(getattr(cls, name, None) is getattr(base, name, None) for name in names)


def read_booster(booster) -> dict:
    """The model of an XGBoost ``Booster`` as JSON would give it: from its binary UBJSON (node arrays as
    NumPy arrays), else (categorical features, an unread UBJSON) from the JSON text."""
    try:
        model = ubjson_loads(booster.save_raw("ubj"))
        if "c" not in (model["learner"].get("feature_types") or []):
            return model
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return json.loads(bytes(booster.save_raw("json")))


def _decode_categories(enc: dict) -> list | None:
    values, offsets = enc.get("values", []), enc.get("offsets", [])
    if not offsets:
        return list(values) if values else None
    return ["".join(chr(c) for c in values[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]


def _trees_predict_uses(estimator, gb: dict) -> int:
    """Number of leading trees ``predict`` sums: those of iterations ``0..best_iteration`` after early stopping."""
    try:
        best = estimator.best_iteration  # AttributeError when no early stopping recorded one
    except AttributeError:
        return len(gb["trees"])
    indptr = gb.get("iteration_indptr")
    if indptr is None or best + 1 >= len(indptr):
        raise ValueError("XGBoost model with early stopping but no iteration table")
    return int(indptr[best + 1])


class XGBoostReader:
    """Node table, link and input conversion of a fitted XGBoost scikit-learn estimator."""

    dtype = np.float32

    def __init__(self, estimator, response_method: str, unsupported):
        from sklearn.base import is_classifier

        self.estimator = estimator
        model = read_booster(estimator.get_booster())
        learner = model["learner"]
        booster = learner["gradient_booster"]
        if booster.get("name") != "gbtree":
            raise unsupported(f"XGBoost booster {booster.get('name')!r} (only 'gbtree')")
        params = learner["learner_model_param"]
        if int(params.get("num_target", "1")) != 1:
            raise unsupported("multi-target XGBoost model")
        objective = learner["objective"]["name"]
        num_class = int(params.get("num_class", "0"))
        classifier = is_classifier(estimator)
        self.n_raw = max(num_class, 1)
        if classifier:
            kind = ("binary" if objective in _LOGISTIC and self.n_raw == 1
                    else "multiclass" if objective in _SOFTMAX else None)
        else:
            kind = ("identity" if objective in _IDENTITY else "exp" if objective in _EXP
                    else "logistic" if objective in _LOGISTIC else None)
        self.link = booster_link("XGBoost", objective, kind, classifier=classifier,
                                 response_method=response_method, unsupported=unsupported)
        gb = booster["model"]
        n_used = _trees_predict_uses(estimator, gb)
        self.trees = gb["trees"][:n_used]
        self.group = np.asarray(gb["tree_info"][:n_used], dtype=np.intp)
        # ``missing=`` other than NaN: entries equal to it are missing (XGBoost compares the float32 values)
        missing = getattr(estimator, "missing", np.nan)  # the parameter (get_params() reads the attribute)
        self.missing_value = None if missing is None or np.isnan(missing) else np.float32(missing)
        self.feature_types = learner.get("feature_types") or []
        self.n_features = int(params["num_feature"])
        cats = gb.get("cats", {}).get("enc", [])
        self.categories: list = [None] * self.n_features
        for j, kind in enumerate(self.feature_types):
            if kind == "c":
                self.categories[j] = _decode_categories(cats[j]) if j < len(cats) else None

    def table(self, table_fn, missing_code: int):
        parts, cat_tables, n_cat = [], [], 0
        for t, tree in enumerate(self.trees):
            left = np.asarray(tree["left_children"], dtype=np.intp)
            right = np.asarray(tree["right_children"], dtype=np.intp)
            cond = np.asarray(tree["split_conditions"], dtype=np.float32)
            n = len(left)
            leaf = left < 0
            thr = np.nextafter(cond, np.float32(-np.inf)).astype(np.float64)
            value = np.zeros((n, self.n_raw))
            value[leaf, self.group[t] if self.n_raw > 1 else 0] = cond[leaf].astype(np.float64)
            cat_row = np.full(n, -1, dtype=np.intp)
            kinds = np.asarray(tree.get("split_type", [0] * n), dtype=np.intp)
            cat_nodes = np.flatnonzero((kinds == 1) & ~leaf)
            if cat_nodes.size:
                table = np.ones((len(cat_nodes), missing_code + 1), dtype=bool)
                where = {int(v): k for k, v in enumerate(tree["categories_nodes"])}
                seg, size = tree["categories_segments"], tree["categories_sizes"]
                for r, v in enumerate(cat_nodes):
                    k = where.get(int(v))
                    listed = [] if k is None else tree["categories"][seg[k]: seg[k] + size[k]]
                    if any(c >= missing_code for c in listed):
                        raise ValueError("more than 256 categories")
                    table[r, listed] = False  # listed categories go right
                table[:, missing_code] = np.asarray(tree["default_left"], dtype=bool)[cat_nodes]
                cat_row[cat_nodes] = n_cat + np.arange(len(cat_nodes))
                n_cat += len(cat_nodes)
                cat_tables.append(table)
            parts.append((np.asarray(tree["split_indices"], dtype=np.intp), thr, left, right,
                          np.asarray(tree["default_left"], dtype=bool), value, cat_row,
                          np.asarray(tree["sum_hessian"], dtype=np.float64)))
        feat, thr, left, right, miss, value, cat_row, cover = (np.concatenate(a) for a in zip(*parts))
        return table_fn(feat, thr, left, right, miss, [len(p[2]) for p in parts], value, cat_row, cover=cover,
                        cat_left=np.concatenate(cat_tables) if cat_tables else None)

    def categorical(self) -> np.ndarray:
        return np.array([k == "c" for k in self.feature_types] or [False] * self.n_features, dtype=bool)

    def to_array(self, X) -> np.ndarray:
        """Rows as float32, pandas categories as the model's category codes (NaN if unknown)."""
        return reader_array(X, self.n_features, np.float32, self._categories_for, self.as_missing)

    def _categories_for(self, j: int, col) -> list:
        return self.categories[j] if self.categories[j] is not None else list(col.cat.categories)

    def as_missing(self, values: np.ndarray) -> np.ndarray:
        """Float32 ``values`` with the ``missing=`` sentinel replaced by NaN (as XGBoost reads them)."""
        if self.missing_value is None:
            return values
        return np.where(values == self.missing_value, np.float32(np.nan), values)

    def margin(self, X) -> np.ndarray:
        return np.asarray(self.estimator.predict(X, output_margin=True), dtype=np.float64).reshape(len(X), -1)


# UBJSON (Draft 12, big-endian) decoder for XGBoost's binary model (``Booster.save_raw("ubj")``): a
# strongly typed array decodes as one ``np.frombuffer``; other values as JSON would; anything else raises.
#: marker -> (NumPy big-endian dtype, struct format) of the numeric types
_NUMBERS = {
    ord("i"): (">i1", ">b"), ord("U"): (">u1", ">B"), ord("I"): (">i2", ">h"), ord("l"): (">i4", ">i"),
    ord("L"): (">i8", ">q"), ord("d"): (">f4", ">f"), ord("D"): (">f8", ">d"),
}
_SCALAR = {marker: struct.Struct(fmt) for marker, (_, fmt) in _NUMBERS.items()}
_DTYPES = {marker: np.dtype(dtype) for marker, (dtype, _) in _NUMBERS.items()}
_INTEGERS = {ord(c) for c in "iUIlL"}
_CONSTANTS = {ord("Z"): None, ord("T"): True, ord("F"): False}
_INT64 = ord("L")
_LONG = _SCALAR[_INT64]
_NOOP, _STR, _HIGH, _CHAR, _ARR, _ARR_END, _OBJ, _OBJ_END, _TYPE, _COUNT = (ord(c) for c in "NSHC[]{}$#")


def ubjson_loads(data: bytes):
    """Decode the one UBJSON value ``data`` holds (typed numeric arrays as NumPy arrays); else ``ValueError``."""
    data = bytes(data)
    try:
        value, end = _value(data, 0)
    except (IndexError, struct.error, UnicodeDecodeError):
        raise ValueError("UBJSON: truncated or malformed") from None
    if end != len(data):
        raise ValueError(f"UBJSON: {len(data) - end} bytes after the value")
    return value


def _marker(data: bytes, at: int) -> tuple[int, int]:
    marker = data[at]
    while marker == _NOOP:
        at += 1
        marker = data[at]
    return marker, at + 1


def _length(data: bytes, at: int) -> tuple[int, int]:
    marker, at = _marker(data, at)
    if marker not in _INTEGERS:
        raise ValueError(f"UBJSON: a length of type {chr(marker)!r}")
    fmt = _SCALAR[marker]
    n = fmt.unpack_from(data, at)[0]
    if n < 0:
        raise ValueError("UBJSON: negative length")
    return n, at + fmt.size


def _string(data: bytes, at: int) -> tuple[str, int]:
    n, at = _length(data, at)
    if at + n > len(data):
        raise IndexError
    return data[at:at + n].decode("utf-8"), at + n


def _value(data: bytes, at: int):
    marker, at = _marker(data, at)
    return _typed(data, marker, at)


def _typed(data: bytes, marker: int, at: int):
    fmt = _SCALAR.get(marker)
    if fmt is not None:
        return fmt.unpack_from(data, at)[0], at + fmt.size
    if marker == _OBJ:
        return _object(data, at)
    if marker == _ARR:
        return _array(data, at)
    if marker == _STR or marker == _HIGH:
        return _string(data, at)
    if marker in _CONSTANTS:
        return _CONSTANTS[marker], at
    if marker == _CHAR:
        return chr(data[at]), at + 1
    raise ValueError(f"UBJSON: unknown marker {chr(marker)!r}")


def _header(data: bytes, at: int) -> tuple[int | None, int | None, int]:
    """(element type or None, count or None, position) after ``[`` or ``{``."""
    kind = count = None
    if data[at] == _TYPE:
        kind, at = data[at + 1], at + 2
        if data[at] != _COUNT:
            raise ValueError("UBJSON: a typed container without a count")
    if data[at] == _COUNT:
        if data[at + 1] == _INT64:
            count, at = _LONG.unpack_from(data, at + 2)[0], at + 10
            if count < 0:
                raise ValueError("UBJSON: negative length")
        else:
            count, at = _length(data, at + 1)
    return kind, count, at


def _array(data: bytes, at: int):
    kind, count, at = _header(data, at)
    dtype = _DTYPES.get(kind)
    if dtype is not None:  # a strongly typed numeric array: one read
        end = at + count * dtype.itemsize
        if end > len(data):
            raise IndexError
        return np.frombuffer(data, dtype=dtype, count=count, offset=at).astype(dtype.newbyteorder("=")), end
    out = []
    if count is not None:
        for _ in range(count):
            if kind is None:
                item, at = _value(data, at)
            else:
                item, at = _typed(data, kind, at)
            out.append(item)
        return out, at
    while True:
        marker, at = _marker(data, at)
        if marker == _ARR_END:
            return out, at
        item, at = _typed(data, marker, at)
        out.append(item)


def _object(data: bytes, at: int):
    kind, count, at = _header(data, at)
    out = {}
    n = 0
    while count is None or n < count:
        if count is None:
            while data[at] == _NOOP:
                at += 1
            if data[at] == _OBJ_END:
                return out, at + 1
        if data[at] == _INT64:  # XGBoost writes every length as int64: read it here (most of the tokens are keys)
            size = _LONG.unpack_from(data, at + 1)[0]
            at += 9
            if size < 0 or at + size > len(data):
                raise ValueError("UBJSON: bad key length")
            key = data[at:at + size].decode("utf-8")
            at += size
        else:
            key, at = _string(data, at)
        marker = data[at]
        if kind is not None:
            out[key], at = _typed(data, kind, at)
        elif marker == _ARR:
            out[key], at = _array(data, at + 1)
        else:
            out[key], at = _value(data, at)
        n += 1
    return out, at
