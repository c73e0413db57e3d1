"""The option objects: validated once, accepted by every entry point, equal to the keyword shortcuts."""

import dataclasses

import numpy as np
import pytest
import xarray as xr
from sklearn.linear_model import LinearRegression

import pdpboot
from pdpboot import Execution, Grid, Resampling


def _data(n=60):
    X = np.random.default_rng(0).normal(size=(n, 2))
    return X, X[:, 0] + X[:, 0] * X[:, 1]


def test_objects_are_frozen_and_validated_once():
    r = Resampling("subsample", n_resamples=10, subsample_fraction=0.5)
    assert r.scheme_for(101, None, classifier=False).size(101) == 50 and r.groups is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_resamples = 3
    with pytest.raises(ValueError, match="subsample_fraction"):
        Resampling("subsample", subsample_fraction=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        Resampling(n_resamples=1)
    with pytest.raises(ValueError, match="background"):
        Resampling(background="fixed")
    with pytest.raises(ValueError, match="needs groups"):
        Resampling("group")
    with pytest.raises(ValueError, match="on_error"):
        Execution(on_error="ignore")
    assert Execution().threads is None and Execution(n_jobs=2).threads == 1
    assert Execution(threads_per_job=2).threads == 2
    with pytest.raises(ValueError, match="threads_per_job"):
        Execution(threads_per_job=0)


def test_subsample_that_leaves_no_rows_is_refused_before_any_fit():
    X, y = _data(10)
    with pytest.raises(ValueError, match=r"= 0 row\(s\) per subsample; the model needs at least 2"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=3,
                                             resampling=pdpboot.Resampling("subsample", subsample_fraction=0.05),
                                             execution=pdpboot.Execution(progress=False))


def test_objects_equal_the_keyword_shortcuts():
    X, y = _data()
    common = dict(grid=Grid(3), rng=0, execution=Execution(progress=False))
    by_keywords = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0, (0, 1)], n_resamples=4,
                                                       resampling="subsample", **common)
    by_objects = pdpboot.bootstrap_partial_dependence(
        LinearRegression(), X, y, [0, (0, 1)], resampling=Resampling("subsample", n_resamples=4), **common)
    by_objects.attrs["created"] = by_keywords.attrs["created"]
    xr.testing.assert_identical(by_keywords, by_objects)
    ale = pdpboot.bootstrap_ale(LinearRegression(), X, y, [0], resampling=Resampling(n_resamples=3),
                                execution=Execution(progress=False), rng=0)
    assert ale["x0"].ds["ale_resamples"].sizes["resample"] == 3


def test_an_object_and_a_conflicting_shortcut_are_refused():
    X, y = _data()
    with pytest.raises(TypeError, match=r"n_resamples=7 contradicts resampling=Resampling\(n_resamples=5\)"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], resampling=Resampling(n_resamples=5),
                                             n_resamples=7)


def test_a_shortcut_fills_a_field_the_object_leaves_at_its_default():
    """``n_resamples=`` next to ``Resampling("subsample", subsample_fraction=0.5)`` is what users write."""
    X, y = _data()
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=3, rng=0,
                                               resampling=Resampling("subsample", subsample_fraction=0.5))
    assert res["x0"].ds.sizes["resample"] == 3 and res.attrs["resampling"] == "subsample"
    with pytest.raises(TypeError, match="must be a pdpboot.Execution"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], execution={"n_jobs": 2})


def test_failures_are_typed_and_counted():
    from pdpboot._loop import Failure

    failure = Failure.from_text("MissingClassError: the refit saw no rows: of class 2")
    assert failure.missing_class and failure.message == "the refit saw no rows: of class 2"
    assert str(failure) == "MissingClassError: the refit saw no rows: of class 2"
    assert not Failure.of(ValueError("x")).missing_class


@pytest.mark.parametrize("bad", [{"method": "fast"}, {"memory_limit": 0}, {"memory_limit": 2.5}])
def test_engine_options_are_validated_once_by_execution(bad):
    """``method``/``memory_limit`` of the one-fit functions are refused with the same error as ``Execution``'s."""
    X, y = _data()
    fitted = LinearRegression().fit(X, y)
    with pytest.raises(ValueError) as by_execution:
        Execution(**bad)
    with pytest.raises(ValueError) as by_pd:
        pdpboot.partial_dependence(fitted, X, [0], **bad)
    assert str(by_pd.value) == str(by_execution.value)
    if "memory_limit" in bad:
        with pytest.raises(ValueError) as by_ale:
            pdpboot.accumulated_local_effects(fitted, X, [0], **bad)
        assert str(by_ale.value) == str(by_execution.value)


@pytest.mark.parametrize("bad, match", [
    ({"n_jobs": 0}, "n_jobs must be a number of parallel jobs"),
    ({"n_jobs": 1.5}, "n_jobs must be a number of parallel jobs"),
    ({"n_jobs": True}, "n_jobs must be a number of parallel jobs"),
    ({"progress": "yes"}, "progress must be True, False, 'auto' or a function"),
    ({"max_failure_share": "0.1"}, "max_failure_share must be in"),
    ({"checkpoint": 3}, "checkpoint must be a path"),
])
def test_execution_is_checked_when_made_not_when_run(bad, match):
    """Each bad field is one ValueError/TypeError at construction (n_jobs=0 never reaches joblib)."""
    with pytest.raises((ValueError, TypeError), match=match):
        Execution(**bad)


def test_a_checkpoint_under_a_file_is_one_line(tmp_path):
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(ValueError, match=r"lies under .*notes.txt.*, which is a file, not a folder"):
        Execution(checkpoint=file / "ck")
    with pytest.raises(ValueError, match=r"notes.txt' is a file; give a folder"):
        Execution(checkpoint=file)
    assert Execution(checkpoint=tmp_path / "new" / "ck").checkpoint == tmp_path / "new" / "ck"


def test_resamples_that_cannot_vary_are_refused_before_any_fit():
    """A group bootstrap of one group, a stratified one where every class has one row: every resample would
    be the data (a zero-width band); refused with the fix."""
    with pytest.raises(ValueError, match="needs at least 2 groups, got 1.*use resampling='bootstrap'"):
        Resampling("group", groups=np.zeros(60))
    X, y = _data()
    with pytest.raises(ValueError, match="needs at least 2 groups"):
        pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, [0], n_resamples=3,
                                             resampling=Resampling("group", groups=["a"] * 60))
    with pytest.raises(ValueError, match="every class has one row here.*use resampling='bootstrap'"):
        Resampling("stratified").scheme_for(3, np.array(["a", "b", "c"]), classifier=True)
    assert Resampling("stratified").scheme_for(4, np.array(["a", "b", "c", "a"]), classifier=True)
    assert Resampling("group", groups=[0, 0, 1]).scheme_for(3, None, classifier=False)


@pytest.mark.parametrize("groups, match", [(5, r"1-D array\), got shape \(\)"), ([[1, 2], [3, 4]], "1-D array"),
                                           (["a", None, "b"], "1 missing label")])
def test_group_labels_are_checked_when_made(groups, match):
    with pytest.raises(ValueError, match=match):
        Resampling("group", groups=groups)
