"""The loop's one seeded refit (``pdpboot._loop.fit_seeded``), shared by the bootstrap and the H test."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pdpboot import Grid
from pdpboot._loop import fit_seeded


def _data(n=60):
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"], index=np.arange(100, 100 + n))
    y = X["a"] - 2 * X["b"] + rng.normal(size=n)
    return X, y.to_numpy(), rng.uniform(0.5, 2, size=n)


def test_fit_seeded_draws_the_seed_and_slices_rows_weights_and_fit_params():
    X, y, w = _data()
    rows = np.array([3, 3, 7, 0, 59, 12, 12, 12] * 5)
    model = fit_seeded(RandomForestRegressor(n_estimators=5), X, y, np.random.default_rng(5), sample_weight=w,
                       rows=rows)
    # by hand: one integer drawn for the one random_state; positions, not index labels, select the rows
    seed = int(np.random.default_rng(5).integers(0, 2**31 - 1))
    ref = RandomForestRegressor(n_estimators=5, random_state=seed).fit(X.iloc[rows], y[rows], sample_weight=w[rows])
    assert model.random_state == seed
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_fit_seeded_routes_weights_to_a_pipeline_and_keeps_a_set_seed():
    X, y, w = _data()
    pipe = make_pipeline(StandardScaler(), Ridge(alpha=3.0))
    model = fit_seeded(pipe, X, y, np.random.default_rng(0), sample_weight=w)
    ref = make_pipeline(StandardScaler(), Ridge(alpha=3.0)).fit(X, y, ridge__sample_weight=w)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-12)
    assert model is not pipe and not hasattr(pipe[-1], "coef_")  # a clone was fitted
    forest = RandomForestRegressor(n_estimators=3, random_state=11)
    kept = fit_seeded(forest, X, y, np.random.default_rng(0), fit_params={"sample_weight": w}, rows=np.arange(30),
                      only_if_unset=True)
    ref = RandomForestRegressor(n_estimators=3, random_state=11).fit(X.iloc[:30], y[:30], sample_weight=w[:30])
    assert kept.random_state == 11
    np.testing.assert_array_equal(kept.predict(X), ref.predict(X))


class _CountingRidge(Ridge):
    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def test_a_resample_drawing_only_zero_weight_rows_is_refused_before_any_fit():
    """Weights positive on 2 of 40 rows: some bootstrap resample draws neither of them.  It used to fail
    after the full-data fit with scikit-learn's "Sample weights must contain at least one non-zero number"
    (PD) or deep in the ALE; now one line naming the cause and the fix, before any fit, for every effect."""
    import pytest

    import pdpboot

    X, y, _ = _data(40)
    w = np.zeros(40)
    w[:2] = 1.0
    quiet = pdpboot.Execution(n_jobs=1, progress=False)
    for run in (pdpboot.bootstrap_partial_dependence, pdpboot.bootstrap_ale):
        _CountingRidge.fits = 0
        with pytest.raises(ValueError, match=r"draw only rows of sample_weight 0 \(positive on 2 of 40 rows\)") as info:
            run(_CountingRidge(), X, y, ["a"], n_resamples=8, sample_weight=w, rng=0, execution=quiet)
        assert "\n" not in str(info.value) and _CountingRidge.fits == 0
    # positive weights on enough rows: runs (no resample is empty), zero-weight rows allowed
    w[:30] = 1.0
    res = pdpboot.bootstrap_partial_dependence(Ridge(), X, y, ["a"], n_resamples=8, sample_weight=w, rng=0,
                                               execution=quiet)
    assert res["a"]["pd_resamples"].notnull().all()


def test_a_refit_failing_for_a_missing_class_fails_first_and_says_why():
    """One row of class 'yes' in 60: 8 of 30 bootstrap resamples draw none of it, and LogisticRegression
    cannot be fitted on one class.  The run used to raise scikit-learn's "needs samples of at least 2
    classes" after refitting every resample before the first such one; now those resamples are fitted
    first (after the full-data fit only) and the error names the class, its row count and the fixes."""
    import pytest
    from sklearn.linear_model import LogisticRegression

    import pdpboot

    fits = []

    class Counting(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            fits.append(len(set(np.asarray(y).tolist())))
            return super().fit(X, y, sample_weight=sample_weight)

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    y = np.where(np.arange(60) < 1, "yes", "no").astype(object)
    with pytest.raises(ValueError, match=r"drew no row of class 'yes' \(rows in the data: 'yes': 1\)"
                       r".*resampling='stratified'") as info:
        pdpboot.bootstrap_partial_dependence(Counting(), X, y, ["a"], n_resamples=30, rng=0, resampling="bootstrap",
                                             execution=pdpboot.Execution(n_jobs=1, progress=False))
    assert "\n" not in str(info.value)
    assert fits == [2, 1]  # the full-data fit, then the first resample lacking 'yes'
    # on_error='skip': exactly the resamples lacking 'yes' are dropped
    with pytest.warns(RuntimeWarning, match="8 of 30 resamples failed"):
        skip = pdpboot.Execution(n_jobs=1, progress=False, on_error="skip", max_failure_share=0.5)
        res = pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y, ["a"], n_resamples=30, rng=0,
                                                   resampling="bootstrap", grid=Grid(4), execution=skip)
    lacking = np.unpackbits(res["resample_absent"].values, axis=1, count=60).astype(bool)[:, 0]
    assert res.attrs["n_failed_resamples"] == lacking.sum() == 8
    assert np.isfinite(res["a"]["pd_resamples"].values[~lacking]).all()
    assert np.isnan(res["a"]["pd_resamples"].values[lacking]).all()


def test_refits_that_never_saw_a_class_are_counted():
    """One row of class 'yes' in 60: 8 of 30 bootstrap resamples draw none of it; a tree fitted on them gives
    'yes' probability 0.  The root attr n_missing_class_resamples said 0 (it counted only failed
    decision-function refits), so the report never said why P(yes)'s band reaches 0; it now counts them
    (by hand: resamples that did not draw the 'yes' row)."""
    from sklearn.tree import DecisionTreeClassifier

    import pdpboot

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    y = np.where(np.arange(60) < 1, "yes", "no").astype(object)
    res = pdpboot.bootstrap_partial_dependence(DecisionTreeClassifier(max_depth=2), X, y, ["a"], n_resamples=30,
                                               rng=0, resampling="bootstrap",
                                               execution=pdpboot.Execution(n_jobs=1, progress=False))
    lacking = np.unpackbits(res["resample_absent"].values, axis=1, count=60).astype(bool)[:, 0]
    assert lacking.sum() == 8 and int(res.attrs["n_missing_class_resamples"]) == 8
    np.testing.assert_array_equal(res["a"]["pd_resamples"].sel(output="yes").values[lacking], 0.0)
    strat = pdpboot.bootstrap_partial_dependence(DecisionTreeClassifier(max_depth=2), X, y, ["a"], n_resamples=5,
                                                 rng=0, resampling="stratified",
                                                 execution=pdpboot.Execution(n_jobs=1, progress=False))
    assert int(strat.attrs["n_missing_class_resamples"]) == 0


class _CountingOLS(Ridge):
    """Ridge on (a, b, a b) counting its fits (so the H test finds an interaction to measure)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        X = np.asarray(X, dtype=float)
        return super().fit(np.column_stack([X, X[:, 0] * X[:, 1]]), y, sample_weight=sample_weight)

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        return super().predict(np.column_stack([X, X[:, 0] * X[:, 1]]))


def _entry_points(X, y):
    """Every public function that refits on resamples, with small settings."""
    import pdpboot

    quiet = pdpboot.Execution(n_jobs=1, progress=False)
    return {
        "bootstrap_partial_dependence": lambda: pdpboot.bootstrap_partial_dependence(
            _CountingOLS(), X, y, ["a"], n_resamples=3, grid=Grid(3), rng=0, execution=quiet),
        "bootstrap_ale": lambda: pdpboot.bootstrap_ale(_CountingOLS(), X, y, ["a"], n_resamples=3, rng=0,
                                                       execution=quiet),
        "h_statistic_test": lambda: pdpboot.h_statistic_test(_CountingOLS(), X.to_numpy(), y, (0, 1), n_resamples=3,
                                                             n_max=20, rng=0, execution=quiet),
    }


def test_every_refit_of_every_entry_point_goes_through_the_one_fit_function(monkeypatch):
    """Each fit of the estimator is one call of ``_loop.fit_seeded``: a second fit path would fit uncounted."""
    import pdpboot._loop as loop

    X, y, _ = _data(40)
    calls = []
    real = loop.fit_seeded
    monkeypatch.setattr(loop, "fit_seeded", lambda *a, **k: calls.append(1) or real(*a, **k))
    for name, call in _entry_points(X, y).items():
        calls.clear()
        _CountingOLS.fits = 0
        call()
        assert _CountingOLS.fits == len(calls) == 1 + 3, name


def test_every_entry_point_spawns_its_job_seeds_by_the_one_seed_scheme(monkeypatch):
    """Root seed -> N_FIXED_SEEDS fixed children -> one child per job: job b's seed is root child N + b."""
    import pdpboot._loop as loop
    from pdpboot.engine import resample
    from pdpboot.interaction import NullReplicates

    X, y, _ = _data(40)
    keys = []
    for cls in (resample.Scheme, NullReplicates):  # every scheme's job(), inherited or its own
        real = cls.job
        monkeypatch.setattr(cls, "job", lambda self, b, seed, n, real=real: keys.append(
            (b, seed.bit_generator.seed_seq.spawn_key)) or real(self, b, seed, n))
    root = np.random.default_rng(0).bit_generator.seed_seq.spawn_key
    for name, call in _entry_points(X, y).items():
        keys.clear()
        call()
        expected = [(b, (*root, loop.N_FIXED_SEEDS + b)) for b in range(3)]
        # made for the bookkeeping of a scheme that keeps the rows it did not draw, then again as dispatched;
        # null replicates keep nothing, so their jobs are made once
        assert keys == expected * (1 if name == "h_statistic_test" else 2), name


def test_sequential_native_threads_give_the_numbers_of_a_parallel_run():
    """Native threads are the libraries' default when n_jobs is 1 and one per job when it is 2: same numbers."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    import pdpboot

    X, y, _ = _data(150)
    assert pdpboot.Execution(n_jobs=1).threads is None and pdpboot.Execution(n_jobs=2).threads == 1
    for est in (RandomForestRegressor(n_estimators=5, max_depth=4),
                HistGradientBoostingRegressor(max_iter=10, max_depth=3)):
        runs = [pdpboot.bootstrap_partial_dependence(est, X, y, ["a"], n_resamples=4, grid=Grid(4), rng=3,
                                                     execution=pdpboot.Execution(n_jobs=n, progress=False))
                for n in (1, 2)]
        np.testing.assert_array_equal(runs[0]["a"]["pd_resamples"].values, runs[1]["a"]["pd_resamples"].values)
        np.testing.assert_array_equal(runs[0]["a"]["pd"].values, runs[1]["a"]["pd"].values)


def test_a_new_effect_is_its_class_on_the_one_loop():
    """A toy effect (each model's mean prediction over its background rows) runs through the one loop and the
    one assembly with nothing else knowing it: its variable, its resamples and the header come out."""
    from dataclasses import dataclass

    from sklearn.linear_model import LinearRegression

    import pdpboot
    from pdpboot._plan import make_plan, make_spec
    from pdpboot.bootstrap import run_bootstrap
    from pdpboot.engine.response import response_function

    @dataclass(frozen=True)
    class MeanPrediction:
        spec: object
        name: str = "mean"

        def fixed_rows(self, background, seeds):
            return {}

        def evaluate(self, fitted, evaluation):
            rows = self.spec.rows(evaluation.background)
            value = response_function(fitted, evaluation.response_method)(rows).mean(axis=0)
            return {"a": {"mean": (("output",), value)}}

        settings = property(lambda self: {})

        def supports(self, response_method):
            return {}

        def node_attrs(self):
            return {}

    X, y, _ = _data(40)
    spec = make_spec(X, ["a"], pdpboot.Grid(3))
    plan = make_plan(LinearRegression(), y, MeanPrediction(spec), rng=0,
                     resampling=pdpboot.Resampling("bootstrap", n_resamples=4),
                     execution=pdpboot.Execution(progress=False))
    res = run_bootstrap(plan)
    assert res.attrs["effect"] == "mean" and res["a"]["mean_resamples"].shape == (4, 1)
    assert np.isclose(res["a"]["mean"].values[0], LinearRegression().fit(X, y).predict(X).mean())
    resamples = res["a"]["mean_resamples"].values[:, 0]
    assert np.all(np.isfinite(resamples)) and np.ptp(resamples) > 0  # every refit evaluated, on its own rows
