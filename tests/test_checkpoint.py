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
import pdpboot._loop as loop_module
from pdpboot import Grid

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


KW = dict(features=[0, (0, 1)], grid=Grid(4), statistics={"ice": 3}, rng=5)


def test_resume_loads_everything_without_refitting(tmp_path, monkeypatch):
    X, y = _data()
    first = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=5,
                                                 **KW,
                                                 execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    files = sorted(p.name for p in (tmp_path / "ck").iterdir())
    assert files == ["estimate.json", "estimate.npz", "manifest.json"] + [f"resample_{b:06d}.npz" for b in range(5)]

    def no_refit(*args, **kwargs):
        raise AssertionError("a finished resample was recomputed")

    monkeypatch.setattr(loop_module, "evaluate_resample", no_refit)
    monkeypatch.setattr(LinearRegression, "fit", no_refit)
    again = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=5,
                                                 **KW,
                                                 execution=pdpboot.Execution(checkpoint=tmp_path / "ck", n_jobs=1))
    xr.testing.assert_identical(first, again)  # creation time is kept from the first run


def test_extend_run_equals_uninterrupted(tmp_path):
    X, y = _data()
    pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=3, **KW,
                                         execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    extended = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=6,
                                                    **KW,
                                                    execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    plain = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=6, **KW)
    _identical_but_created(extended, plain)


@pytest.mark.parametrize("change", ["seed", "data", "estimator", "grid", "settings"])
def test_checkpoint_of_other_arguments_refused(tmp_path, change):
    X, y = _data()
    pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2, **KW,
                                         execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    kw = dict(KW, n_resamples=2, execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    est = LinearRegression()
    if change == "seed":
        kw["rng"] = 6
    elif change == "data":
        X = X.copy()
        X[0, 0] += 1e-9
    elif change == "estimator":
        est = LinearRegression(fit_intercept=False)
    elif change == "grid":
        kw["grid"] = Grid(5)
    else:
        kw["resampling"] = pdpboot.Resampling(background="original")
    with pytest.raises(ValueError, match=f"different arguments.*{change}"):
        pdpboot.bootstrap_partial_dependence(est, X, y, **kw)


def test_rng_none_resumes_the_checkpoint_seed(tmp_path):
    X, y = _data()
    kw = dict(KW, rng=None)
    first = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2,
                                                 **kw,
                                                 execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    second = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=3,
                                                  **kw,
                                                  execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    np.testing.assert_array_equal(first["x0"].ds.pd_resamples, second["x0"].ds.pd_resamples[:2])
    assert first.attrs["rng_entropy"] == second.attrs["rng_entropy"]


def test_non_checkpoint_folder_refused(tmp_path):
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "notes.txt").write_text("mine")
    X, y = _data()
    with pytest.raises(ValueError, match="not a pdpboot checkpoint"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=2,
                                             **KW,
                                             execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))


SLOW_MODEL = textwrap.dedent("""
    import time
    from sklearn.linear_model import LinearRegression

    class SlowRegression(LinearRegression):
        def fit(self, X, y):
            time.sleep(0.3)
            return super().fit(X, y)
""")

KILL_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import pdpboot
    from slow_model import SlowRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = X[:, 0] - X[:, 1] + rng.normal(size=80)
    pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], n_resamples=40,
                                         grid=pdpboot.Grid(4), rng=5,
                                         execution=pdpboot.Execution(n_jobs=1, checkpoint=sys.argv[1]))
""")


def test_killed_run_resumes_to_identical_result(tmp_path, monkeypatch):
    # the estimator's class lives in a module both processes import: the fingerprint names it by module
    (tmp_path / "slow_model.py").write_text(SLOW_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    from slow_model import SlowRegression

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
    kw = dict(n_resamples=40, grid=Grid(4), rng=5)
    resumed = pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], **kw,
                                                   execution=pdpboot.Execution(checkpoint=ck, n_jobs=1))
    plain = pdpboot.bootstrap_partial_dependence(SlowRegression(), X, y, [0, (0, 1)], **kw,
                                                 execution=pdpboot.Execution(n_jobs=1))
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
            SentinelRegression(), X, y, [1], n_resamples=30, grid=Grid(3), rng=0,
            execution=pdpboot.Execution(on_error="skip", max_failure_share=0.8, checkpoint=tmp_path / "ck"))
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
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], n_resamples=30, grid=Grid(3),
                                             rng=0, execution=pdpboot.Execution(on_error="skip"))


def test_raise_propagates_original_error():
    X, y = _sentinel_data()
    with pytest.raises(ValueError, match="sentinel row missing"):
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], n_resamples=30, grid=Grid(3),
                                             rng=0)


# --- issue 13: stable fingerprints, damaged and foreign entries, permissions ---------------------------

FINGERPRINT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.linear_model import SGDRegressor
    from pdpboot.checkpoint import stable_fingerprint

    def user_function(X):
        return np.asarray(X) * 2.0

    est = make_pipeline(FunctionTransformer(func=user_function),
                        SGDRegressor(random_state=np.random.RandomState(0)))
    print(stable_fingerprint(est))
    est.set_params(sgdregressor__random_state=np.random.RandomState(1))
    print(stable_fingerprint(est))
""")


def test_estimator_fingerprint_is_the_same_in_two_processes(tmp_path):
    script = tmp_path / "fp.py"
    script.write_text(FINGERPRINT_SCRIPT)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                           env=_child_env()).stdout.split() for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1], "RandomState(0) and RandomState(1) must differ"


def test_fingerprint_tells_callables_and_random_states_apart():
    from sklearn.preprocessing import FunctionTransformer

    from pdpboot.checkpoint import stable_fingerprint

    def double(x):
        return x * 2

    def triple(x):
        return x * 3

    fp = stable_fingerprint
    assert fp(FunctionTransformer(func=double)) == fp(FunctionTransformer(func=double))
    assert fp(FunctionTransformer(func=double)) != fp(FunctionTransformer(func=triple))
    assert fp(FunctionTransformer(func=np.log1p)) != fp(FunctionTransformer(func=np.expm1))
    state = np.random.RandomState(0)
    before = fp(LinearRegression(n_jobs=None).set_params()), fp(FunctionTransformer(kw_args={"rs": state}))
    state.rand()  # a consumed RandomState is another state
    assert fp(FunctionTransformer(kw_args={"rs": state})) != before[1]


RESUME_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.tree import DecisionTreeRegressor
    import pdpboot

    def user_function(X):
        return np.asarray(X) * 2.0

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + rng.normal(size=40)
    est = make_pipeline(FunctionTransformer(func=user_function),
                        DecisionTreeRegressor(max_depth=2, random_state=np.random.RandomState(0)))
    res = pdpboot.bootstrap_partial_dependence(est, X, y, [0], n_resamples=int(sys.argv[2]),
                                               grid=pdpboot.Grid(3), rng=1,
                                               execution=pdpboot.Execution(checkpoint=sys.argv[1]))
    print(float(res["x0"].ds.pd_resamples.sum()))
""")


def test_same_script_resumes_in_a_second_process(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(RESUME_SCRIPT)
    ck = tmp_path / "ck"
    first = subprocess.run([sys.executable, str(script), str(ck), "3"], capture_output=True, text=True,
                           env=_child_env())
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, str(script), str(ck), "4"], capture_output=True, text=True,
                            env=_child_env())
    assert second.returncode == 0, second.stderr[-2000:]
    assert len(list(ck.glob("resample_*.npz"))) == 4


def _first_run(tmp_path, **kw):
    X, y = _data()
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=4,
                                               **dict(KW, **kw),
                                               execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    return X, y, res


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "estimate"])
def test_damaged_entry_is_reported_and_recomputed(tmp_path, damage):
    X, y, first = _first_run(tmp_path)
    ck = tmp_path / "ck"
    target = ck / ("estimate.npz" if damage == "estimate" else "resample_000002.npz")
    raw = bytearray(target.read_bytes())
    if damage in ("truncate", "estimate"):
        raw = raw[: len(raw) // 2]
    elif damage == "flip":
        # flip one bit of the stored float data (uncompressed savez: the arrays sit in the middle)
        arr_start = raw.find(b"\x93NUMPY", raw.find(b"a0.npy"))
        header_len = int.from_bytes(raw[arr_start + 8:arr_start + 10], "little")
        raw[arr_start + 10 + header_len + 3] ^= 0x01
    else:
        raw = bytearray(b"not a zip file at all")
    target.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match=rf"{target.name}.*damaged.*recomputed"):
        again = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=4,
                                                     **KW, execution=pdpboot.Execution(checkpoint=ck))
    xr.testing.assert_identical(first, again)
    assert (ck / f"{target.name}.damaged").exists()


def test_damaged_failure_record_and_manifest(tmp_path):
    X, y, _ = _first_run(tmp_path)
    ck = tmp_path / "ck"
    (ck / "manifest.json").write_text('{"fingerprint": ')
    with pytest.raises(ValueError, match=r"manifest.json.*damaged.*delete"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=4, **KW,
                                             execution=pdpboot.Execution(checkpoint=ck))
    with pytest.raises(ValueError, match=r"manifest.json.*damaged"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=4, **dict(KW, rng=None),
                                             execution=pdpboot.Execution(checkpoint=ck))


def test_foreign_entry_is_refused_by_path(tmp_path):
    X, y, _ = _first_run(tmp_path / "a")
    _first_run(tmp_path / "b", rng=6)
    foreign = tmp_path / "b" / "ck" / "resample_000001.npz"
    target = tmp_path / "a" / "ck" / "resample_000001.npz"
    target.write_bytes(foreign.read_bytes())
    with pytest.raises(ValueError, match=r"resample_000001.npz.*belongs to another run"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, n_resamples=4,
                                             **KW,
                                             execution=pdpboot.Execution(checkpoint=tmp_path / "a" / "ck"))


def test_checkpoint_files_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        _first_run(tmp_path)
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "ck").iterdir()}
    assert set(modes.values()) == {0o644}, modes


def test_stored_failure_with_raise_policy_raises(tmp_path):
    """Checkpoint level: a failure stored by an on_error="skip" run is not reused under "raise"."""
    from pdpboot.checkpoint import Checkpoint

    print_ = {"data": "d", "estimator": "e", "grid": "g", "seed": {}, "settings": {}}
    skip = Checkpoint(tmp_path / "ck", print_, on_error="skip")
    skip.open({})
    skip.save_failure(3, "ValueError: boom")
    assert skip.load(3) == "ValueError: boom"
    strict = Checkpoint(tmp_path / "ck", print_, on_error="raise")
    strict.open({})
    with pytest.raises(RuntimeError, match=r"Resample 3 failed in an earlier run.*boom.*on_error='skip'"):
        strict.load(3)


def test_resume_with_raise_after_skip_raises(tmp_path):
    X, y = _sentinel_data()
    kw = dict(n_resamples=30, grid=Grid(3), rng=0)
    ck = dict(max_failure_share=0.8, checkpoint=tmp_path / "ck")
    with pytest.warns(RuntimeWarning, match="failed and were skipped"):
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], **kw,
                                             execution=pdpboot.Execution(on_error="skip", **ck))
    with pytest.raises(RuntimeError, match="failed in an earlier run"):
        pdpboot.bootstrap_partial_dependence(SentinelRegression(), X, y, [1], **kw,
                                             execution=pdpboot.Execution(on_error="raise", **ck))


def test_racing_runs_with_other_data_get_a_clear_error(tmp_path):
    from pdpboot.checkpoint import Checkpoint

    a = Checkpoint(tmp_path / "ck", {"data": "a", "estimator": "e", "grid": "g", "seed": {}, "settings": {}})
    b = Checkpoint(tmp_path / "ck", {"data": "b", "estimator": "e", "grid": "g", "seed": {}, "settings": {}})
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / ".manifest.json.abc.tmp").write_text("half")  # the other run's temporary file
    a.open({})
    with pytest.raises(ValueError, match="different arguments.*data"):
        b.open({})


# --- issue 26 A.2: the fingerprint holds every part of the run by content ----------------------------

class OffsetRegression(LinearRegression):
    """A regressor with fit parameters: a constant ``offset`` and a per-row ``noise`` added to y."""

    def fit(self, X, y, sample_weight=None, offset=0.0, noise=None):
        y = np.asarray(y) + offset + (0.0 if noise is None else np.asarray(noise))
        return super().fit(X, y, sample_weight=sample_weight)


SCALE = 2.0


def _scaled(x):
    return x * SCALE


def _fp_call(change: str):
    """The arguments of one checkpointed run: ``"none"`` the reference, otherwise one part changed."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data()
    rng = np.random.default_rng(3)
    weights = rng.uniform(0.5, 1.5, len(y))
    noise = rng.normal(size=len(y))
    groups = np.arange(len(y)) % 8
    kw = dict(features=[0], grid=Grid(4), rng=5, n_resamples=2, sample_weight=weights)
    rs = dict(fit_params={"offsetregression__offset": 1.0, "offsetregression__noise": noise}, groups=groups)
    factor = 3.0

    def make_est():
        return make_pipeline(FunctionTransformer(func=_scaled), FunctionTransformer(func=lambda x: x * factor),
                             OffsetRegression(fit_intercept=True))

    est = make_est()
    if change == "sample_weight values":
        kw["sample_weight"] = np.where(X[:, 1] > 0, 10.0, 1.0) * weights
    elif change == "fit_params value":
        rs["fit_params"] = {"offsetregression__offset": 2.0, "offsetregression__noise": noise}
    elif change == "fit_params array values":
        rs["fit_params"] = {"offsetregression__offset": 1.0, "offsetregression__noise": noise[::-1].copy()}
    elif change == "groups values":
        rs["groups"] = np.arange(len(y)) % 5
    elif change == "y values":
        y = y.copy()
        y[3] += 1e-9
    elif change == "nested estimator parameter":
        est.set_params(offsetregression__fit_intercept=False)
    elif change == "closure value":
        factor = 4.0
        est = make_est()
    elif change == "percentiles":
        kw["grid"] = Grid(4, percentiles=(0.1, 0.9))
    return est, X, y, dict(kw, resampling=pdpboot.Resampling("group", **rs))


def _fingerprint_of(change: str) -> dict:
    from pdpboot._evaluate import PDEffect
    from pdpboot._plan import make_plan, make_spec
    from pdpboot.checkpoint import plan_fingerprint
    from pdpboot.options import resolve_execution, resolve_resampling

    global SCALE
    est, X, y, kw = _fp_call(change)
    old = SCALE
    if change == "constant read by a function":
        SCALE = 5.0
    try:
        spec = make_spec(X, kw.pop("features"), kw.pop("grid"))
        resampling = resolve_resampling(kw.pop("resampling"), n_resamples=kw.pop("n_resamples"))
        plan = make_plan(est, y, PDEffect.from_options(spec), resampling=resampling,
                         execution=resolve_execution(), **kw)
        return plan_fingerprint(plan, {"entropy": "5"})
    finally:
        SCALE = old


FP_CHANGES = ["sample_weight values", "fit_params value", "fit_params array values", "groups values", "y values",
              "nested estimator parameter", "closure value", "constant read by a function", "percentiles"]


@pytest.mark.parametrize("change", FP_CHANGES)
def test_fingerprint_changes_with_every_value(change):
    reference = _fingerprint_of("none")
    assert _fingerprint_of("none") == reference  # the same call, the same fingerprint
    assert _fingerprint_of(change) != reference


@pytest.mark.parametrize("change, named", [("sample_weight values", "data: sample_weight"),
                                           ("fit_params value", "data: fit_params"),
                                           ("fit_params array values", "data: fit_params"),
                                           ("groups values", "data: groups"),
                                           ("nested estimator parameter", "estimator: steps"),
                                           ("closure value", "estimator: steps"),
                                           ("percentiles", "settings: percentiles")])
def test_checkpoint_with_other_values_refused_identical_call_resumes(tmp_path, monkeypatch, change, named):
    """Issue 26 A.2: other sample weights reused the previous run's estimate (6.93 vs a fresh 7.60)."""
    est, X, y, kw = _fp_call("none")
    first = pdpboot.bootstrap_partial_dependence(est, X, y, **kw,
                                                 execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    est2, X2, y2, kw2 = _fp_call(change)
    with pytest.raises(ValueError, match=f"different arguments \\(they differ in: .*{named}"):
        pdpboot.bootstrap_partial_dependence(est2, X2, y2, **kw2,
                                             execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))

    def no_refit(*args, **kwargs):
        raise AssertionError("a finished resample was recomputed")

    monkeypatch.setattr(loop_module, "evaluate_resample", no_refit)
    monkeypatch.setattr(OffsetRegression, "fit", no_refit)
    est3, X3, y3, kw3 = _fp_call("none")
    again = pdpboot.bootstrap_partial_dependence(est3, X3, y3, **kw3,
                                                 execution=pdpboot.Execution(checkpoint=tmp_path / "ck"))
    for tree in (first, again):  # the estimator's repr holds the lambda's memory address
        del tree.attrs["estimator"], tree.attrs["estimator_params"]
    xr.testing.assert_identical(first, again)


def test_sample_weight_change_would_have_changed_the_estimate(tmp_path):
    """The refused reuse matters: a fresh run with the other weights gives another estimate."""
    est, X, y, kw = _fp_call("none")
    est2, X2, y2, kw2 = _fp_call("sample_weight values")
    a = pdpboot.bootstrap_partial_dependence(est, X, y, **kw)["x0"].ds.pd
    b = pdpboot.bootstrap_partial_dependence(est2, X2, y2, **kw2)["x0"].ds.pd
    assert not np.allclose(a, b)


def test_every_plan_field_is_fingerprinted_or_declared_execution_only():
    """A field added to the plan (or to its resampling options) later enters the fingerprint unless it is
    declared execution-only; every execution-only name is a field of the plan or of its option objects."""
    import dataclasses

    from pdpboot._plan import BootstrapPlan
    from pdpboot.checkpoint import EXECUTION_FIELDS
    from pdpboot.options import Execution, Resampling, SchemeChoice

    def names(cls):
        return {f.name for f in dataclasses.fields(cls)}

    assert EXECUTION_FIELDS <= names(BootstrapPlan) | names(Execution) | names(Resampling)
    printed = _fingerprint_of("none")
    nested = {"effect", "resampling", "estimator", "choice"}  # choice: how resampling="auto" was resolved
    for name in (names(BootstrapPlan) - nested | names(Resampling) | names(SchemeChoice)) - EXECUTION_FIELDS:
        assert any(key.endswith(name) for key in printed), name
    assert not any(key.endswith(name) for key in printed for name in EXECUTION_FIELDS)
    assert "data: X" in printed and "grid" in printed and "seed" in printed
