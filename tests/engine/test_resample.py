"""Every resampling scheme draws what it claims, once per job, from its job's seed."""

import numpy as np
import pytest

from pdpboot import Grid, Resampling
from pdpboot.engine.resample import (
    SCHEMES,
    Bootstrap,
    CrossFit,
    Group,
    Stratified,
    Subsample,
    fold_labels,
    multiplicities,
)


def draw_rows(name, n_rows, rng, *, strata=None, groups=None, subsample_fraction=0.632):
    options = Resampling(name, groups=groups, subsample_fraction=subsample_fraction)
    return options.scheme_for(n_rows, strata, classifier=True).draw(n_rows, rng)


def test_bootstrap_draws_n_with_replacement():
    rows = draw_rows("bootstrap", 1000, np.random.default_rng(0))
    assert rows.size == 1000 and rows.min() >= 0 and rows.max() < 1000
    assert np.unique(rows).size < 1000  # repeats happen
    assert 0.58 < np.unique(rows).size / 1000 < 0.68  # about 1 - 1/e distinct


def test_stratified_keeps_class_counts():
    y = np.array(["a"] * 13 + ["b"] * 50 + ["c"] * 7)
    for seed in range(5):
        rows = draw_rows("stratified", y.size, np.random.default_rng(seed), strata=y)
        labels, counts = np.unique(y[rows], return_counts=True)
        assert dict(zip(labels, counts)) == {"a": 13, "b": 50, "c": 7}


def test_subsample_has_no_repeats():
    rows = draw_rows("subsample", 200, np.random.default_rng(1), subsample_fraction=0.5)
    assert rows.size == 100 and np.unique(rows).size == 100


def test_group_keeps_groups_whole():
    groups = np.repeat(np.arange(20), np.arange(1, 21))  # group g has g + 1 rows
    rows = draw_rows("group", groups.size, np.random.default_rng(2), groups=groups)
    drawn_rows, drawn_counts = np.unique(rows, return_counts=True)
    for g in np.unique(groups[rows]):
        members = np.flatnonzero(groups == g)
        # every member of a drawn group appears, and equally often
        counts = drawn_counts[np.searchsorted(drawn_rows, members)]
        assert np.isin(members, drawn_rows).all() and np.unique(counts).size == 1
    # as many groups drawn (with repetition) as there are groups
    assert sum(drawn_counts[np.searchsorted(drawn_rows, np.flatnonzero(groups == g))][0]
               for g in np.unique(groups[rows])) == 20


def test_unknown_scheme():
    with pytest.raises(ValueError, match="resampling"):
        draw_rows("jackknife", 10, np.random.default_rng(0))


def test_registry_holds_every_scheme_users_may_name():
    assert SCHEMES == {"bootstrap": Bootstrap, "stratified": Stratified, "subsample": Subsample, "group": Group}


def test_a_job_draws_its_rows_from_its_seed_first_child():
    seed = np.random.default_rng(7)
    job = Bootstrap().job(3, seed, 50)
    by_hand = np.sort(seed.spawn(1)[0].integers(0, 50, size=50))
    np.testing.assert_array_equal(job.rows, by_hand)
    assert job.index == 3 and job.y is None and job.eval_rows is None


def test_subsample_rescales_deviations_by_sqrt_m_over_n_minus_m():
    scheme = Subsample(0.5)
    assert scheme.size(101) == 50 and scheme.rescale(101) == pytest.approx(np.sqrt(50 / 51))
    assert Bootstrap().rescale(101) == 1.0 and not Subsample.keeps_absent and Bootstrap.keeps_absent


def test_multiplicities():
    distinct, counts = multiplicities(np.array([4, 1, 1, 4, 4, 0]), 6)
    np.testing.assert_array_equal(distinct, [0, 1, 4])
    np.testing.assert_array_equal(counts, [1, 2, 3])


def test_a_new_scheme_is_its_class_and_one_registration_line(monkeypatch):
    """A toy scheme (every job fits the first half of the rows) runs through
    bootstrap_partial_dependence once registered, and nowhere else needs to know it."""
    from dataclasses import dataclass
    from typing import ClassVar

    from sklearn.linear_model import LinearRegression

    import pdpboot
    from pdpboot.engine.resample import Scheme

    @dataclass(frozen=True, eq=False)
    class FirstHalf(Scheme):
        name: ClassVar[str] = "first-half"

        def draw(self, n_rows, rng):
            return np.arange(n_rows // 2)

    monkeypatch.setitem(SCHEMES, FirstHalf.name, FirstHalf)  # what @register does
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = X[:, 0] + np.random.default_rng(1).normal(size=40)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["x0"], n_resamples=3, grid=Grid(3),
                                               resampling="first-half", rng=0,
                                               execution=pdpboot.Execution(progress=False))
    half = LinearRegression().fit(X[:20], y[:20])
    grid = res["x0"]["x0"].values
    by_hand = [np.mean([half.predict(np.column_stack([np.full(20, g), X[:20, 1]]))]) for g in grid]
    for b in range(3):
        np.testing.assert_allclose(res["x0"]["pd_resamples"].values[b, 0], by_hand, rtol=1e-12)
    assert res.attrs["resampling"] == "first-half"
    absent = np.unpackbits(res["resample_absent"].values, axis=1, count=len(X))
    assert not absent[:, :20].any()  # rows 0-19 drawn by every resample


def test_cross_fit_job_k_fits_outside_fold_k_and_is_evaluated_on_it():
    scheme = CrossFit.from_seed(10, 3, np.random.default_rng(0))
    assert sorted(np.bincount(scheme.folds)) == [3, 3, 4] and scheme.n_folds == 3
    held_out = []
    for k in range(3):
        job = scheme.job(k, np.random.default_rng(k), 10)
        assert np.intersect1d(job.rows, job.eval_rows).size == 0 and job.rows.size + job.eval_rows.size == 10
        assert set(scheme.folds[job.eval_rows]) == {k}
        held_out.append(job.eval_rows)
    np.testing.assert_array_equal(np.sort(np.concatenate(held_out)), np.arange(10))   # every row held out once
    assert not CrossFit.resamples and Bootstrap.resamples and "crossfit" not in SCHEMES   # internal: not offered
    with pytest.raises(ValueError, match="n_folds must be between 2"):
        fold_labels(3, 4, 0)
