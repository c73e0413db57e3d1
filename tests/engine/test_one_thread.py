"""One home for the boosting libraries' one-thread keyword (``response.ONE_THREAD_KEYWORD``)."""

from __future__ import annotations

import numpy as np
import pytest

from pdpboot.engine.response import ONE_THREAD_KEYWORD, one_thread


def test_one_thread_keywords():
    assert one_thread("lightgbm") == {"num_threads": 1} and one_thread("catboost") == {"thread_count": 1}
    assert one_thread("xgboost") == {} and one_thread("sklearn") == {}


def test_the_self_check_uses_the_same_keywords():
    from pdpboot.engine import _tree_check

    # before and after _tree_check imports the shared table (its own copy, if any, must agree)
    assert getattr(_tree_check, "_THREAD_KEYWORD", ONE_THREAD_KEYWORD) == ONE_THREAD_KEYWORD


@pytest.mark.parametrize("library", ["lightgbm", "catboost"])
def test_reader_margins_ask_for_one_thread(library, monkeypatch):
    """Each reader's ``margin`` calls the library's own predict with the keyword of ``ONE_THREAD_KEYWORD``."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + rng.normal(size=80) * 0.1
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        from pdpboot.engine._lightgbm import LightGBMReader as Reader

        est = lgb.LGBMRegressor(n_estimators=3, verbose=-1, n_jobs=1).fit(X, y)
    else:
        cb = pytest.importorskip("catboost")
        from pdpboot.engine._catboost import CatBoostReader as Reader

        est = cb.CatBoostRegressor(iterations=3, depth=2, verbose=0, allow_writing_files=False,
                                   thread_count=1).fit(X, y)
    calls = []
    real = est.predict

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    reader = Reader(est, "predict", None)
    monkeypatch.setattr(est, "predict", spy)
    margin = reader.margin(X[:5])
    assert calls and calls[-1][ONE_THREAD_KEYWORD[library]] == 1
    assert margin.shape[0] == 5
