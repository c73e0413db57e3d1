"""The UBJSON decoder of XGBoost's binary model (``engine/_xgboost.ubjson_loads``)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from pdpboot.engine._xgboost import ubjson_loads


def _key(name: str) -> bytes:
    return b"L" + struct.pack(">q", len(name)) + name.encode()


def test_hand_encoded_values():
    """Every marker, written by hand (big-endian), decodes to the value it encodes."""
    data = (b"{" + _key("i") + b"i\xff" + _key("U") + b"U\xff" + _key("I") + b"I\x01\x00"
            + _key("l") + b"l\xff\xff\xff\xfe" + _key("L") + b"L" + struct.pack(">q", 2**40)
            + _key("d") + b"d" + struct.pack(">f", 0.1) + _key("D") + b"D" + struct.pack(">d", 0.1)
            + _key("s") + b"Si\x03abc" + _key("c") + b"Cx" + _key("flags") + b"[TFZ]"
            + _key("noop") + b"NNi\x05" + _key("typed") + b"[$l#i\x03" + struct.pack(">3i", 1, -2, 3)
            + _key("float32") + b"[$d#i\x02" + struct.pack(">2f", 1.5, -0.1)
            + _key("counted") + b"[#i\x02i\x01Si\x01z" + _key("empty") + b"[#L" + struct.pack(">q", 0)
            + _key("inner") + b"{#i\x01i\x01ai\x07" + b"}")
    out = ubjson_loads(data)
    assert out["i"] == -1 and out["U"] == 255 and out["I"] == 256 and out["l"] == -2 and out["L"] == 2**40
    assert out["d"] == float(np.float32(0.1)) and out["D"] == 0.1
    assert out["s"] == "abc" and out["c"] == "x" and out["flags"] == [True, False, None] and out["noop"] == 5
    assert out["typed"].dtype == np.int32 and out["typed"].tolist() == [1, -2, 3]
    assert out["float32"].dtype == np.float32 and out["float32"].tolist() == [1.5, float(np.float32(-0.1))]
    assert out["counted"] == [1, "z"] and out["empty"] == [] and out["inner"] == {"a": 7}


@pytest.mark.parametrize("data", [b"{" + _key("a") + b"i", b"[$l#i\x02\x00\x00\x00\x01", b"{}\x00", b"Q",
                                  b"[$l]", b"Si\x05ab"])
def test_malformed_input_is_refused(data):
    with pytest.raises(ValueError, match="UBJSON"):
        ubjson_loads(data)


@pytest.mark.parametrize("kind", ["regressor", "multiclass", "early_stopping"])
def test_xgboost_binary_model_equals_its_json(kind):
    """save_raw('ubj') decodes to what json.loads gives for save_raw('json') (floats at float32)."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X[rng.random(300) < 0.1, 1] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1]) ** 2
    if kind == "multiclass":
        est = xgb.XGBClassifier(n_estimators=6, max_depth=3, n_jobs=1).fit(X, np.digitize(y, [-0.5, 1.0]))
    elif kind == "early_stopping":
        est = xgb.XGBRegressor(n_estimators=50, max_depth=3, n_jobs=1, early_stopping_rounds=2)
        est.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])], verbose=False)
    else:
        est = xgb.XGBRegressor(n_estimators=8, max_depth=4, n_jobs=1, missing=-999.0).fit(X, y)
    booster = est.get_booster()

    def same(a, b, path):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(np.asarray(a, dtype=b.dtype), b, err_msg=path)
        elif isinstance(a, dict):
            assert a.keys() == b.keys(), path
            for k in a:
                same(a[k], b[k], f"{path}/{k}")
        elif isinstance(a, list):
            assert len(a) == len(b), path
            for i, (u, v) in enumerate(zip(a, b)):
                same(u, v, f"{path}[{i}]")
        elif isinstance(a, float):
            assert np.float32(a) == np.float32(b), path
        else:
            assert a == b, path

    same(json.loads(bytes(booster.save_raw("json"))), ubjson_loads(booster.save_raw("ubj")), "")
