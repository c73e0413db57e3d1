"""Checkpoint/resume, failures inside resamples."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression

import pdpboot
import pdpboot.bootstrap as bootstrap_module


REPO = Path(__file__).resolve().parents[1]


def _child_env():
    """Environment for a child Python that imports this checkout's pdpboot (not an installed one)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X[:, 0] - X[:, 1] + rng.normal(size=n)
    return X, y


def _identical_but_created(a, b):
    """Two separate computations differ only in their creation time."""
    a, b = a.copy(), b.copy()
    a.attrs.pop("created"), b.attrs.pop("created")
    xr.testing.assert_identical(a, b)


KW = dict(features=[0, (0, 1)], grid_resolution=4, ice=3, rng=5, progress=False)


def test_resume_loads_everything_without_refitting(tmp_path, monkeypatch):
    X, y = _data()
    first = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=5,
                                                 checkpoint=tmp_path / "ck", **KW)
    files = sorted(p.name for p in (tmp_path / "ck").iterdir())
    assert files == ["estimate.json", "estimate.npz", "manifest.json"] + [f"resample_{b:06d}.npz" for b in range(5)]

    def no_refit(*args, **kwargs):
        raise AssertionError("a finished resample was recomputed")

    monkeypatch.setattr(bootstrap_module, "_evaluate_resample", no_refit)
    monkeypatch.setattr(LinearRegression, "fit", no_refit)
    again = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=5,
                                                 checkpoint=tmp_path / "ck", n_jobs=1, **KW)
    xr.testing.assert_identical(first, again)  # creation time is kept from the first run


def test_extend_run_equals_uninterrupted(tmp_path):
    X, y = _data()
    pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=3, checkpoint=tmp_path / "ck", **KW)
    extended = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=6,
                                                    checkpoint=tmp_path / "ck", **KW)
    plain = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=6, **KW)
    _identical_but_created(extended, plain)


@pytest.mark.parametrize("change", ["seed", "data", "estimator", "grid", "settings"])
def test_checkpoint_of_other_arguments_refused(tmp_path, change):
    X, y = _data()
    pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2, checkpoint=tmp_path / "ck", **KW)
    kw = dict(KW, n_resamples=2, checkpoint=tmp_path / "ck")
    est = LinearRegression()
    if change == "seed":
        kw["rng"] = 6
    elif change == "data":
        X = X.copy()
        X[0, 0] += 1e-9
    elif change == "estimator":
        est = LinearRegression(fit_intercept=False)
    elif change == "grid":
        kw["grid_resolution"] = 5
    else:
        kw["background"] = "original"
    with pytest.raises(ValueError, match=f"different arguments.*{change}"):
        pdpboot.bootstrap_partial_dependence(est, X, y, **kw)


def test_rng_none_resumes_the_checkpoint_seed(tmp_path):
    X, y = _data()
    kw = dict(KW, rng=None)
    first = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2,
                                                 checkpoint=tmp_path / "ck", **kw)
    second = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=3,
                                                  checkpoint=tmp_path / "ck", **kw)
    np.testing.assert_array_equal(first["x0"].ds.pd_resamples, second["x0"].ds.pd_resamples[:2])
    assert first.attrs["rng_entropy"] == second.attrs["rng_entropy"]


def test_non_checkpoint_folder_refused(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "notes.txt").write_text("mine")
    X, y = _data()
    with pytest.raises(ValueError, match="not a pdpboot checkpoint"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2,
                                             checkpoint=tmp_path / "ck", **KW)


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from sklearn.linear_model import LinearRegression
    import pdpboot

    class SlowRegression(LinearRegression):
        def fit(self, X, y):
            time.sleep(0.3)
            return super().fit(X, y)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] - X[:, 1] + rng.normal(size=80)
    pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], n_resamples=40, grid_resolution=4,
                                         rng=5, n_jobs=1, progress=False, checkpoint=sys.argv[1])
""")


class SlowRegression(LinearRegression):
    """Same name and parameters as in the killed subprocess, so the fingerprint matches."""


def test_killed_run_resumes_to_identical_result(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT)
    ck = tmp_path / "ck"
    proc = subprocess.Popen([sys.executable, str(script), str(ck)], env=_child_env())
    deadline = time.time() + 120
    while time.time() < deadline and len(list(ck.glob("resample_*.npz"))) < 3:
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list(ck.glob("resample_*.npz")))
    assert 3 <= finished < 40, "the run must be killed part-way"
    # a write cut by the kill can only leave a hidden temporary file, which resuming ignores
    assert all(p.name.startswith(".") or p.suffix in (".npz", ".json") for p in ck.iterdir())
    X, y = _data()
    kw = dict(n_resamples=40, grid_resolution=4, rng=5, n_jobs=1, progress=False)
    resumed = pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], checkpoint=ck, **kw)
    plain = pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], **kw)
    _identical_but_created(resumed, plain)


class SentinelRegression(LinearRegression):
    """Fails to fit when the sentinel row (x0 == 999) was not drawn."""

    def fit(self, X, y):
        if not np.any(np.asarray(X)[:, 0] == 999):
            raise ValueError("sentinel row missing")
        return super().fit(X, y)


def _sentinel_data():
    X, y = _data(60)
    X[0, 0] = 999
    return X, y


def test_skip_records_failures_and_warns(tmp_path):
    X, y = _sentinel_data()
    with pytest.warns(RuntimeWarning, match=r"of 30 resamples failed and were skipped.*sentinel row missing"):
        res = pdpboot.bootstrap_partial_dependence(
            SentinelRegression(), X, y, [1], n_resamples=30, grid_resolution=3, rng=0, on_error="skip",
            max_failure_share=0.8, checkpoint=tmp_path / "ck")
    failed = json.loads(res.attrs["failed_resamples"])
    assert res.attrs["n_failed_resamples"] == len(failed) > 0
    assert all(f["error"] == "ValueError: sentinel row missing" for f in failed)
    pdr = res["x1"].ds["pd_resamples"]
    bad = [f["resample"] for f in failed]
    assert np.isnan(pdr.values[bad]).all()
    assert not np.isnan(np.delete(pdr.values, bad, axis=0)).any()
    bands = pdpboot.confidence_bands(res)
    assert bands["x1"].ds["pd_band"].attrs["n_resamples"] == 30 - len(bad)
    assert len(list((tmp_path / "ck").glob("*.failed.json"))) == len(bad)


def test_too_many_failures_stop_the_run():
    X, y = _sentinel_data()
    with pytest.raises(RuntimeError, match=r"more than max_failure_share=0.1.*ValueError: sentinel row missing"):
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], n_resamples=30, grid_resolution=3,
                                             rng=0, on_error="skip")


def test_raise_propagates_original_error():
    X, y = _sentinel_data()
    with pytest.raises(ValueError, match="sentinel row missing"):
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], n_resamples=30, grid_resolution=3,
                                             rng=0)
