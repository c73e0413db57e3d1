"""A small UBJSON decoder for XGBoost's binary model (``Booster.save_raw("ubj")``).

UBJSON (Draft 12, big-endian) is faster to write and read than XGBoost's JSON: a strongly typed
array (the node arrays of every tree) decodes as one ``np.frombuffer`` in its own dtype.  Other
values decode as JSON would.  Anything outside the format raises ``ValueError``.
"""

from __future__ import annotations

import struct

import numpy as np

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


def loads(data: bytes):
    """Decode one UBJSON value (the whole of ``data``).

    ``data`` is e.g. ``bytes(booster.save_raw("ubj"))``; returns a dict, list, NumPy array (typed
    numeric arrays), str, int, float, bool or None; raises ``ValueError`` when ``data`` is not one
    complete UBJSON value.
    """
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
