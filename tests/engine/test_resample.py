"""Every resampling scheme draws what it claims, once per job, from its job's seed; seeded copies of an
estimator for a loop of refits (``UnfittedCopies``)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pdpboot import Grid, Resampling
from pdpboot.engine.resample import (
    SCHEMES,
    Bootstrap,
    CrossFit,
    Group,
    Stratified,
    Subsample,
    UnfittedCopies,
    fold_labels,
    multiplicities,
    seed_estimator,
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


def _flat(estimator) -> dict:
    """``get_params(deep=True)`` as reprs (distinct objects with the same parameters compare equal)."""
    return {k: repr(v) for k, v in estimator.get_params(deep=True).items()}


@pytest.mark.parametrize("only_if_unset", [False, True])
@pytest.mark.parametrize("make", [
    lambda: make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3, random_state=None)),
    lambda: HistGradientBoostingRegressor(max_iter=5, random_state=7),
    lambda: make_pipeline(StandardScaler(), LinearRegression()),
])
def test_copies_are_what_clone_and_seed_estimator_make(make, only_if_unset):
    estimator = make()
    copies = UnfittedCopies(estimator)
    for seed in range(3):
        ours = copies.seeded(np.random.default_rng(seed), only_if_unset=only_if_unset)
        theirs = seed_estimator(clone(estimator), np.random.default_rng(seed), only_if_unset=only_if_unset)
        assert _flat(ours) == _flat(theirs)
        assert ours is not copies.template and ours is not estimator


def test_a_copy_is_independent_of_the_template_and_of_other_copies():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    copies = UnfittedCopies(make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=3)))
    first = copies.seeded(np.random.default_rng(1)).fit(X, y)
    second = copies.seeded(np.random.default_rng(2))
    assert not hasattr(copies.template[-1], "estimators_")
    assert not hasattr(second[-1], "estimators_")
    assert first[-1].random_state != second[-1].random_state
    # the same seed gives the same fitted model as a clone seeded the same way
    again = seed_estimator(clone(copies.template), np.random.default_rng(1)).fit(X, y)
    np.testing.assert_array_equal(first.predict(X), again.predict(X))


def test_an_estimator_with_its_own_clone_is_cloned_as_clone_would():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    copies = UnfittedCopies(frozen)
    assert copies.seeded(np.random.default_rng(0)) is clone(frozen) is frozen
