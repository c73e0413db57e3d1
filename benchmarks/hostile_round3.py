"""Issue 26, third hostile round: areas rounds 1-2 did not cover (not part of CI; the CLI part is slow).

    python -m benchmarks.hostile_round3 api          # extension dtypes through every public function
    python -m benchmarks.hostile_round3 outputs      # multi-output regressors / multiclass through every effect
    python -m benchmarks.hostile_round3 weights      # sample weights with zeros in every effect
    python -m benchmarks.hostile_round3 grids        # custom_values / percentiles edge cases
    python -m benchmarks.hostile_round3 models       # --model-spec / --model parameters checked before any fit
    python -m benchmarks.hostile_round3 report       # pdpboot report of files of one or several runs
    python -m benchmarks.hostile_round3 cli OUTDIR   # messy tables built from scikit-learn's bundled data

Every PD/ICE number is compared with brute force written here (hostile_round2.brute: set the column, the
model's own predict/predict_proba, average); ALE, whose bins are pdpboot's own, with what holds for any
binning: for a linear model each step of the ALE curve is slope x step of the grid; class probabilities'
ALE curves add up to 0 at every grid value; zero-weight rows change nothing.  H² of an additive model is 0
and its centred ICE has no spread.  A case prints ``ok``, ``refused`` (with its message: ok when it is one
clear line naming the problem), ``WRONG`` (a silently wrong number) or ``error``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pdpboot
from benchmarks.hostile_round2 import check, check_run_folder, print_results
from pdpboot import Grid

RESULTS: list[tuple[str, str, str, str]] = []


def case(area: str, name: str, fn, *, expect: str = "ok") -> None:
    """Run one case; record ok / refused / WRONG / error (``expect="refused"``: a clear refusal is right)."""
    try:
        out = str(fn())[:200]
        RESULTS.append((area, name, "ok" if expect == "ok" else "WRONG", out if expect == "ok" else
                        f"accepted, expected a refusal: {out}"))
    except AssertionError as exc:
        RESULTS.append((area, name, "WRONG", str(exc)[:200]))
    except Exception as exc:  # noqa: BLE001 - a refusal is recorded with its message
        text = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        clear = isinstance(exc, (ValueError, TypeError)) and "\n" not in str(exc).strip()
        RESULTS.append((area, name, "refused" if clear else "error", text))


def _quiet():
    return pdpboot.Execution(n_jobs=1, progress=False)


def _forest():
    return pdpboot.Execution(n_jobs=1)


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.integers(0, 5, size=n)
    c = np.array(["lo", "mid", "hi"])[rng.integers(0, 3, size=n)]
    return pd.DataFrame({"a": a, "b": b, "c": c}), rng


def _linear_pipe():
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    return make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["c"]),
                                                 remainder="passthrough"), LinearRegression())


def _steps_linear(node, feature, slope, var="ale"):
    """ALE of a linear model: every step is slope x grid step (whatever the bins)."""
    ale = node[var].transpose(feature, "output").values
    grid = node[var][feature].values.astype(float)
    steps = np.diff(ale, axis=0)
    expected = np.outer(np.diff(grid), np.atleast_1d(slope))
    err = float(np.nanmax(np.abs(steps - expected)))
    assert err < 1e-8, f"ALE step differs from slope x grid step by {err:.3g}"
    return f"{len(grid)} grid values, max error {err:.1e}"


# ----------------------------------------------------------------------------- extension dtypes


def api_cases() -> None:
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    def as_float(d):
        return d.astype("float64")

    def frame(kind):
        X, rng = _data()
        X = X[["a", "b"]].copy()
        mask = rng.uniform(size=len(X)) < 0.15
        if kind == "Float64 with NA":
            X["a"] = pd.array(np.where(mask, np.nan, X["a"]), dtype="Float64")
            X["a"] = X["a"].fillna(0.0)  # linear models take no NA: NA-free Float64
        elif kind == "Int64":
            X["b"] = pd.array(X["b"], dtype="Int64")
        elif kind == "Int8":
            X["b"] = X["b"].astype("int8")
        elif kind == "UInt16":
            X["b"] = pd.array(X["b"], dtype="UInt16")
        elif kind == "float32":
            X = X.astype("float32")
        elif kind == "double[pyarrow]":
            X["a"] = X["a"].astype("double[pyarrow]")
        elif kind == "int64[pyarrow]":
            X["b"] = X["b"].astype("int64[pyarrow]")
        y = 2.0 * X["a"].astype(float) - 3.0 * X["b"].astype(float) + rng.normal(size=len(X)) * 0.1
        return X, pd.Series(np.asarray(y, dtype=float), name="y")

    kinds = ["Float64 with NA", "Int64", "Int8", "UInt16", "float32", "double[pyarrow]", "int64[pyarrow]"]
    for kind in kinds:
        def pd_one(kind=kind):
            X, y = frame(kind)
            est = make_pipeline(FunctionTransformer(as_float), LinearRegression()).fit(X, y)
            out = [check(pdpboot.partial_dependence(est, X, [f], grid=Grid(6)), est, X, f) for f in ("a", "b")]
            return "; ".join(out)

        def boot(kind=kind):
            X, y = frame(kind)
            res = pdpboot.bootstrap_partial_dependence(
                make_pipeline(FunctionTransformer(as_float), LinearRegression()), X, y, ["a", "b"], n_resamples=3,
                grid=Grid(5), rng=0, execution=_quiet())
            est = make_pipeline(FunctionTransformer(as_float), LinearRegression()).fit(X, y)
            return check(res, est, X, "a")

        def ale(kind=kind):
            X, y = frame(kind)
            est = make_pipeline(FunctionTransformer(as_float), LinearRegression()).fit(X, y)
            res = pdpboot.accumulated_local_effects(est, X, ["a", "b"], grid=Grid(6))
            slopes = est[-1].coef_
            return _steps_linear(res["a"], "a", slopes[0]) + "; " + _steps_linear(res["b"], "b", slopes[1])

        def boot_ale(kind=kind):
            X, y = frame(kind)
            res = pdpboot.bootstrap_ale(make_pipeline(FunctionTransformer(as_float), LinearRegression()), X, y,
                                        ["a"], n_resamples=3, grid=Grid(5), rng=0, execution=_quiet())
            est = make_pipeline(FunctionTransformer(as_float), LinearRegression()).fit(X, y)
            return _steps_linear(res["a"], "a", est[-1].coef_[0])

        def hstat(kind=kind):
            X, y = frame(kind)
            est = make_pipeline(FunctionTransformer(as_float), LinearRegression()).fit(X, y)
            h = pdpboot.h_statistic_of_model(est, X, ["a", "b"])
            values = np.concatenate([np.ravel(v.values) for node in h.subtree for k, v in node.ds.data_vars.items()
                                     if k.startswith("h2")])
            assert np.all(np.abs(values[np.isfinite(values)]) < 1e-8), f"H² of an additive model {values}"
            return f"H² of an additive model: max {np.nanmax(np.abs(values)):.1e}"

        def hetero(kind=kind):
            X, y = frame(kind)
            res = pdpboot.bootstrap_partial_dependence(
                make_pipeline(FunctionTransformer(as_float), LinearRegression()), X, y, ["a"], n_resamples=3,
                grid=Grid(5), rng=0, statistics="ice", execution=_quiet())
            het = pdpboot.ice_heterogeneity(res)
            sd = float(np.nanmax(np.abs(het["a"]["cice_sd"].values)))
            assert sd < 1e-8, f"centred ICE of an additive model spreads by {sd}"
            return f"centred ICE sd {sd:.1e}"

        for name, fn in (("partial_dependence", pd_one), ("bootstrap_partial_dependence", boot),
                         ("accumulated_local_effects", ale), ("bootstrap_ale", boot_ale),
                         ("h_statistic_of_model", hstat), ("ice_heterogeneity", hetero)):
            case("api", f"{kind}: {name}", fn)

    def text_kinds(dtype):
        def go():
            X, rng = _data()
            X["c"] = X["c"].astype(dtype)
            y = X["a"] + (X["c"].astype(str) == "hi") * 2.0
            est = _linear_pipe().fit(X, y)
            return check(pdpboot.partial_dependence(est, X, ["c"]), est, X, "c")
        return go

    for dtype in ("string[python]", "string[pyarrow]", "category", "object"):
        case("api", f"text as {dtype}: partial_dependence", text_kinds(dtype))

    def ale_category():
        X, rng = _data()
        X["c"] = pd.Categorical(X["c"], categories=["lo", "mid", "hi"], ordered=True)
        y = X["a"] + X["c"].cat.codes * 2.0
        est = _linear_pipe().fit(X, y)
        res = pdpboot.accumulated_local_effects(est, X, ["c"])
        node = res["c"]
        levels = [str(v) for v in node["ale"]["c"].values]
        ale = node["ale"].isel(output=0).values
        coef = dict(zip(est[0].get_feature_names_out(), est[-1].coef_))
        expected = np.array([coef[f"onehotencoder__c_{lv}"] for lv in levels])
        err = float(np.max(np.abs(np.diff(ale) - np.diff(expected))))
        assert err < 1e-8, f"ALE steps between levels differ by {err}"
        return f"levels {levels}, max error {err:.1e}"

    case("api", "ordered category: accumulated_local_effects", ale_category)


# ----------------------------------------------------------------------------- multi-output, multiclass


def outputs_cases() -> None:
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.multioutput import MultiOutputRegressor
    from sklearn.neighbors import KNeighborsRegressor

    X, rng = _data(200, seed=5)
    X = X[["a", "b"]].astype(float)
    Y = np.column_stack([X.a * 2 + X.b, -X.a + 0.5 * X.b, X.b * 3])
    labels = np.array(["cold", "mild", "hot"])[np.digitize(X.a + rng.normal(size=len(X)) * 0.3, [-0.5, 0.5])]

    multi = [("LinearRegression 3 outputs", lambda: LinearRegression().fit(X, Y)),
             ("MultiOutputRegressor(Linear)", lambda: MultiOutputRegressor(LinearRegression()).fit(X, Y)),
             ("KNeighbors 3 outputs", lambda: KNeighborsRegressor(5).fit(X, Y)),
             ("RandomForest 3 outputs", lambda: RandomForestRegressor(10, random_state=0).fit(X, Y))]
    for name, make in multi:
        case("outputs", f"{name}: PD", lambda make=make: check(
            pdpboot.partial_dependence(make(), X, ["a"], grid=Grid(5)), make(), X, "a"))

        def ice(make=make):
            est = make()
            res = pdpboot.partial_dependence(est, X, ["a"], kind="individual", grid=Grid(4))["a"]["ice"]
            rows = res["instance"].values
            err = 0.0
            for v in res["a"].values:
                P = est.predict(X.loc[rows].assign(a=v))
                err = max(err, float(np.max(np.abs(res.sel(a=v).transpose("instance", "output").values - P))))
            assert err < 1e-8, err
            return f"ICE max error {err:.1e}"
        case("outputs", f"{name}: ICE", ice)
    for name, make in multi[:2]:
        def ale(make=make):
            est = make()
            res = pdpboot.accumulated_local_effects(est, X, ["a", "b"], grid=Grid(6))
            slopes = np.array([2.0, -1.0, 0.0]), np.array([1.0, 0.5, 3.0])
            return _steps_linear(res["a"], "a", slopes[0]) + "; " + _steps_linear(res["b"], "b", slopes[1])
        case("outputs", f"{name}: ALE steps = slopes", ale)

        def boot_ale(make=make):
            res = pdpboot.bootstrap_ale(LinearRegression(), X, pd.DataFrame(Y, columns=["u", "v", "w"]), ["a"],
                                        n_resamples=3, grid=Grid(5), rng=0, execution=_quiet())
            return _steps_linear(res["a"], "a", np.array([2.0, -1.0, 0.0])) + \
                f"; outputs {list(res['a']['ale']['output'].values)}"
        case("outputs", f"{name}: bootstrap_ale", boot_ale)

    def h_multi():
        h = pdpboot.h_statistic_of_model(LinearRegression().fit(X, Y), X, ["a", "b"])
        values = np.concatenate([np.ravel(v.values) for node in h.subtree for k, v in node.ds.data_vars.items()
                                 if k.startswith("h2")])
        assert np.all(np.abs(values[np.isfinite(values)]) < 1e-8), values
        return f"H² of additive outputs {np.nanmax(np.abs(values)):.1e}"
    case("outputs", "LinearRegression 3 outputs: H²", h_multi)

    classifiers = [("LogisticRegression 3 classes", lambda: LogisticRegression().fit(X, labels)),
                   ("RandomForest 3 classes", lambda: RandomForestClassifier(10, random_state=0).fit(X, labels))]
    for name, make in classifiers:
        case("outputs", f"{name}: PD", lambda make=make: check(
            pdpboot.partial_dependence(make(), X, ["a"], grid=Grid(5)), make(), X, "a", method="predict_proba"))

        def ale_sum(make=make):
            res = pdpboot.accumulated_local_effects(make(), X, ["a"], grid=Grid(6))["a"]["ale"]
            total = float(np.max(np.abs(res.sum("output").values)))
            assert set(map(str, res["output"].values)) == {"cold", "mild", "hot"}, res["output"].values
            assert total < 1e-8, f"class ALE curves add up to {total}, not 0"
            return f"sum over classes {total:.1e}"
        case("outputs", f"{name}: ALE of probabilities adds up to 0", ale_sum)

        def boot_ale(make=make):
            est = make()
            res = pdpboot.bootstrap_ale(clone(est), X, pd.Series(labels, name="feel"), ["a"], n_resamples=3,
                                        grid=Grid(5), rng=0, execution=_quiet())["a"]
            total = float(np.max(np.abs(res["ale"].sum("output").values)))
            assert total < 1e-8, total
            return f"bootstrap ALE sum over classes {total:.1e}"
        case("outputs", f"{name}: bootstrap_ale", boot_ale)

    def h_classes():
        h = pdpboot.h_statistic_of_model(LogisticRegression().fit(X, labels), X, ["a", "b"])
        return f"nodes {list(h.children)}"
    case("outputs", "LogisticRegression 3 classes: H²", h_classes)

    def statistics_multi():
        res = pdpboot.bootstrap_partial_dependence(
            LinearRegression(), X, pd.DataFrame(Y, columns=["u", "v", "w"]), ["a", "b", ("a", "b")], n_resamples=3,
            grid=Grid(4), rng=0, statistics={"ice": 20, "interactions": True}, execution=_quiet())
        bands = pdpboot.confidence_bands(res)
        het, h = pdpboot.ice_heterogeneity(bands), pdpboot.h_statistic(bands)
        imp = pdpboot.pd_importance(bands)
        sd = float(np.nanmax(np.abs(het["a"]["cice_sd"].values)))
        h2 = max(float(np.nanmax(np.abs(v.values))) for node in h.subtree for k, v in node.ds.data_vars.items()
                 if k in ("h2", "h2_overall"))
        assert sd < 1e-8 and h2 < 1e-8, (sd, h2)
        assert sorted(set(imp["output"])) == ["u", "v", "w"], imp
        return f"additive outputs: centred ICE sd {sd:.1e}, H² {h2:.1e}; importance per output"
    case("outputs", "3 outputs: ice_heterogeneity, h_statistic, pd_importance", statistics_multi)

    def decision_multiclass():
        est = LogisticRegression().fit(X, labels)
        res = pdpboot.partial_dependence(est, X, ["a"], response_method="decision_function", grid=Grid(5))
        return check(res, est, X, "a", method="decision_function")
    case("outputs", "LogisticRegression 3 classes: decision_function PD", decision_multiclass)


# ----------------------------------------------------------------------------- zero weights


def weights_cases() -> None:
    from sklearn.linear_model import LinearRegression
    from sklearn.tree import DecisionTreeRegressor

    X, rng = _data(200, seed=7)
    X = X[["a", "b"]].astype(float)
    y = X.a * 2 + X.b ** 2 + rng.normal(size=len(X)) * 0.1
    w = np.where(rng.uniform(size=len(X)) < 0.4, 0.0, rng.uniform(0.5, 2, size=len(X)))
    keep = w > 0
    grid = {"a": list(np.quantile(X.a, [0.1, 0.3, 0.5, 0.7, 0.9])), "b": [0.0, 1.0, 2.0, 3.0, 4.0]}

    def ale_zero():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        full = pdpboot.accumulated_local_effects(est, X, ["a"], grid=Grid(custom_values=grid),
                                                 sample_weight=w)["a"]["ale"]
        kept = pdpboot.accumulated_local_effects(est, X[keep], ["a"], grid=Grid(custom_values=grid),
                                                 sample_weight=w[keep])["a"]["ale"]
        err = float(np.nanmax(np.abs(full.values - kept.values)))
        assert err < 1e-10, f"zero-weight rows change the ALE by {err}"
        return f"max difference {err:.1e}"
    case("weights", "ALE: zero-weight rows change nothing", ale_zero)

    def pd_tree_zero():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        res = pdpboot.partial_dependence(est, X, [("a", "b")], sample_weight=w, grid=Grid(custom_values=grid))["a__b"]
        err = max(abs(np.average(est.predict(X.assign(a=ai, b=bi)), weights=w)
                      - float(res["pd"].sel(a=ai, b=bi).squeeze())) for ai in grid["a"] for bi in grid["b"])
        assert err < 1e-8, err
        return f"2-D max error {err:.1e}"
    case("weights", "2-D PD with zero weights (tree engine)", pd_tree_zero)

    def h_zero():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        full = pdpboot.h_statistic_of_model(est, X, ["a", "b"], sample_weight=w, n_max=1000)
        kept = pdpboot.h_statistic_of_model(est, X[keep], ["a", "b"], sample_weight=w[keep], n_max=1000)
        a = np.concatenate([np.ravel(v.values) for node in full.subtree for v in node.ds.data_vars.values()])
        b = np.concatenate([np.ravel(v.values) for node in kept.subtree for v in node.ds.data_vars.values()])
        assert a.shape == b.shape, (a.shape, b.shape)
        err = float(np.nanmax(np.abs(a - b)))
        assert err < 1e-10, f"zero-weight rows change H by {err}"
        return f"max difference {err:.1e}"
    case("weights", "H²: zero-weight rows change nothing", h_zero)

    def boot_zero():
        res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=4, rng=0,
                                                   sample_weight=w, grid=Grid(5), execution=_quiet())
        est = LinearRegression().fit(X, y, sample_weight=w)
        return check(res, est, X, "a", weights=w)
    case("weights", "bootstrap PD estimate with zero weights (weighted fit and average)", boot_zero)

    def boot_ale_zero():
        res = pdpboot.bootstrap_ale(LinearRegression(), X, y, ["a"], n_resamples=4, rng=0, sample_weight=w,
                                    grid=Grid(5), execution=_quiet())
        est = LinearRegression().fit(X, y, sample_weight=w)
        return _steps_linear(res["a"], "a", est.coef_[0])
    case("weights", "bootstrap ALE with zero weights", boot_ale_zero)

    def ice_zero():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        res = pdpboot.partial_dependence(est, X, ["a"], sample_weight=w, kind="both", grid=Grid(4))["a"]
        rows = res["ice"]["instance"].values
        return f"{len(rows)} ICE rows, {int(np.sum(w[X.index.get_indexer(rows)] == 0))} with weight 0"
    case("weights", "ICE rows with zero weights (kind='both')", ice_zero)

    def int_weights():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        wi = (w > 0).astype(int) * 2
        return check(pdpboot.partial_dependence(est, X, ["a"], sample_weight=pd.Series(wi, index=X.index),
                                                grid=Grid(5)), est, X, "a", weights=wi)
    case("weights", "integer weights as a Series", int_weights)

    def one_positive():
        est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
        w1 = np.zeros(len(X))
        w1[3] = 1.0
        return check(pdpboot.partial_dependence(est, X, ["a"], sample_weight=w1, grid=Grid(5)),
                     est, X, "a", weights=w1)
    case("weights", "one positive weight", one_positive)


# ----------------------------------------------------------------------------- grids


def grid_cases() -> None:
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, rng = _data(150, seed=9)
    X["flag"] = rng.uniform(size=len(X)) < 0.3
    y = X.a + X.b + (X.c == "hi") * 2 + X.flag * 1.5 + rng.normal(size=len(X)) * 0.1
    est = _linear_pipe().fit(X, y)
    hgb = HistGradientBoostingRegressor(max_iter=10).fit(X[["a", "b"]], y)
    Xn = X[["a", "b"]]

    def pdc(feature, *, model=est, data=X, **kw):
        def go():
            return check(pdpboot.partial_dependence(model, data, [feature], **kw), model, data, feature)
        return go

    cases = [
        ("custom level not in the data", pdc("c", custom_values={"c": ["lo", "zz"]}), "ok"),
        ("custom levels reorder", pdc("c", custom_values={"c": ["hi", "lo"]}), "ok"),
        ("custom_values on a bool column", pdc("flag", custom_values={"flag": [True, False]}), "ok"),
        ("bool column default grid", pdc("flag"), "ok"),
        ("custom_values numpy array", pdc("a", model=hgb, data=Xn, custom_values={"a": np.array([-1.0, 0.0, 2.0])}),
         "ok"),
        ("custom_values pandas Series", pdc("a", model=hgb, data=Xn, custom_values={"a": pd.Series([-1.0, 1.0])}),
         "ok"),
        ("custom_values tuple", pdc("a", model=hgb, data=Xn, custom_values={"a": (0.5, -0.5)}), "ok"),
        ("custom_values int on int column far outside", pdc("b", model=hgb, data=Xn, custom_values={"b": [-100, 100]}),
         "ok"),
        ("custom_values 2-D array", pdc("a", model=hgb, data=Xn, custom_values={"a": np.ones((2, 2))}), "refused"),
        ("custom_values None entry", pdc("a", model=hgb, data=Xn, custom_values={"a": None}), "refused"),
        ("custom_values bool on numeric (read as 1/0: right numbers)", pdc("a", model=hgb, data=Xn,
                                                                      custom_values={"a": [True, False]}), "ok"),
        ("custom_values dates on numeric", pdc("a", model=hgb, data=Xn,
                                                custom_values={"a": pd.to_datetime(["2020-01-01"])}), "refused"),
        ("percentiles list", pdc("a", model=hgb, data=Xn, percentiles=[0.1, 0.9]), "ok"),
        ("percentiles numpy", pdc("a", model=hgb, data=Xn, percentiles=np.array([0.2, 0.8])), "ok"),
        ("percentiles NaN", pdc("a", model=hgb, data=Xn, percentiles=(np.nan, 0.9)), "refused"),
        ("percentiles > 1 (as percent)", pdc("a", model=hgb, data=Xn, percentiles=(5, 95)), "refused"),
        ("percentiles strings", pdc("a", model=hgb, data=Xn, percentiles=("0.1", "0.9")), "refused"),
        ("percentiles on a 2-valued column", pdc("b", model=hgb, data=Xn.assign(b=(Xn.b > 2).astype(float)),
                                                 percentiles=(0.1, 0.9)), "ok"),
        ("grid_resolution larger than distinct values", pdc("b", model=hgb, data=Xn, grid_resolution=40), "ok"),
        ("grid_resolution numpy int", pdc("a", model=hgb, data=Xn, grid_resolution=np.int64(4)), "ok"),
    ]
    for name, fn, expect in cases:
        case("grids", name, fn, expect=expect)

    def ale_one_value():
        return pdpboot.accumulated_local_effects(hgb, Xn, ["a"], grid=Grid(custom_values={"a": [0.0]}))
    case("grids", "ALE custom_values one value", ale_one_value, expect="refused")

    def ale_unsorted():
        res = pdpboot.accumulated_local_effects(_linear_pipe().fit(X, X.a * 3.0), X, ["a"],
                                                grid=Grid(custom_values={"a": [1.0, -1.0, 0.0, 0.5]}))
        return _steps_linear(res["a"], "a", 3.0)
    case("grids", "ALE custom_values unsorted", ale_unsorted)

    def ale_outside():
        res = pdpboot.accumulated_local_effects(_linear_pipe().fit(X, X.a * 3.0), X, ["a"],
                                                grid=Grid(custom_values={"a": [-10.0, 0.0, 10.0]}))
        return _steps_linear(res["a"], "a", 3.0)
    case("grids", "ALE custom_values beyond the data", ale_outside)

    def pair_custom():
        node = pdpboot.partial_dependence(hgb, Xn, [("a", "b")],
                                          grid=Grid(custom_values={"a": [0.0, 1.0], "b": [1, 3]}))["a__b"]
        err = max(abs(hgb.predict(Xn.assign(a=ai, b=bi)).mean() - float(node["pd"].sel(a=ai, b=bi).squeeze()))
                  for ai in (0.0, 1.0) for bi in (1, 3))
        assert err < 1e-8, err
        return f"2-D custom grid max error {err:.1e}"
    case("grids", "2-D custom_values on both axes", pair_custom)


# ----------------------------------------------------------------------------- CLI model parameters


CLI_MODEL_SPECS = [  # (spec, expected: "refused" before any fit or "ok")
    ("sklearn.linear_model.Ridge(alpha=-1)", "refused"),
    ("sklearn.linear_model.Lasso(alpha='big')", "refused"),
    ("sklearn.ensemble.RandomForestRegressor(n_estimators=0)", "refused"),
    ("sklearn.ensemble.RandomForestRegressor(max_features=1.5)", "refused"),
    ("sklearn.ensemble.RandomForestRegressor(max_samples=0.5, bootstrap=False)", "refused"),
    ("sklearn.ensemble.HistGradientBoostingRegressor(learning_rate=0)", "refused"),
    ("sklearn.ensemble.HistGradientBoostingRegressor(loss='poison')", "refused"),
    ("sklearn.neighbors.KNeighborsRegressor(weights='nearest')", "refused"),
    ("sklearn.svm.SVR(C=-1)", "refused"),
    ("xgboost.XGBRegressor(max_depth=-1)", "refused"),
    ("xgboost.XGBRegressor(subsample=2)", "refused"),
    ("xgboost.XGBRegressor(learning_rte=0.1)", "refused"),
    ("xgboost.XGBRegressor(objective='reg:nonsense')", "refused"),
    ("lightgbm.LGBMRegressor(num_leaves=1)", "refused"),
    ("lightgbm.LGBMRegressor(num_leafs=8)", "refused"),
    ("lightgbm.LGBMRegressor(bagging_fraction=1.5)", "refused"),
    ("catboost.CatBoostRegressor(depth=30, verbose=0)", "refused"),
    ("catboost.CatBoostRegressor(learning_rate=-1, verbose=0)", "refused"),
    ("sklearn.linear_model.Ridge(alpha=2)", "ok"),
    ("lightgbm.LGBMRegressor(min_data_in_leaf=3, n_estimators=5, verbose=-1)", "ok"),
    ("xgboost.XGBRegressor(n_estimators=5, eta=0.3, reg_lambda=2)", "ok"),
    ("catboost.CatBoostRegressor(iterations=5, depth=3, verbose=0, allow_writing_files=False)", "ok"),
]


def model_cases() -> None:
    folder = Path(tempfile.mkdtemp())
    X, rng = _data(120, seed=11)
    X = X[["a", "b"]].assign(y=lambda d: d.a + d.b + rng.normal(size=len(d)))
    X.to_csv(folder / "t.csv", index=False)
    for k, (spec, expect) in enumerate(CLI_MODEL_SPECS):
        def go(spec=spec, k=k):
            start = time.time()
            proc = subprocess.run([sys.executable, "-m", "pdpboot", "run", str(folder / "t.csv"), "--target", "y",
                                   "--model-spec", spec, "--n-resamples", "2", "--grid-resolution", "4",
                                   "--ice-samples", "0", "--no-workbook", "-q", "--out", str(folder / f"o{k}")],
                                  capture_output=True, text=True, cwd=folder)
            err = proc.stderr.strip()
            if proc.returncode == 2:
                assert "\n" not in err and "Traceback" not in err, err
                assert not (folder / f"o{k}").exists(), "a refused run left files"
                raise ValueError(f"exit 2 after {time.time() - start:.1f} s: {err}")
            if proc.returncode:
                raise RuntimeError(f"exit {proc.returncode}: {err.splitlines()[-1] if err else ''}")
            return f"ran ({time.time() - start:.0f} s)"
        case("models", spec, go, expect=expect)


# ----------------------------------------------------------------------------- pdpboot report


def report_cases() -> None:
    from sklearn.linear_model import LinearRegression

    folder = Path(tempfile.mkdtemp())
    X, rng = _data(100, seed=13)
    X = X[["a", "b"]].astype(float)
    y = X.a + X.b + rng.normal(size=len(X))
    one = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=3, rng=0,
                                               execution=_quiet())
    two = pdpboot.bootstrap_ale(LinearRegression(), X, y * 2, ["b"], n_resamples=3, rng=1, execution=_quiet())

    def stamped(result, created, data, name):
        result = result.copy()
        result.attrs["cli_config"] = json.dumps({"created": created, "data": data, "data_sha256": "0" * 64})
        pdpboot.save(result, folder / name)
        return str(folder / name)

    def report(*paths):
        proc = subprocess.run([sys.executable, "-m", "pdpboot", "report", *paths, "-o", str(folder / "r.html")],
                              capture_output=True, text=True)
        return proc.returncode, proc.stderr.strip()

    def two_runs():
        code, err = report(stamped(one, "2026-01-01", "a.csv", "x.nc"), stamped(two, "2026-01-02", "b.csv", "y.nc"))
        assert code == 2 and "\n" not in err, f"exit {code}: {err}"
        raise ValueError(err)
    case("report", "files of two runs", two_runs, expect="refused")

    def run_and_python():
        pdpboot.save(two, folder / "py.nc")
        code, err = report(stamped(one, "2026-01-01", "a.csv", "x.nc"), str(folder / "py.nc"))
        assert code == 2 and "\n" not in err, f"exit {code}: {err}"
        raise ValueError(err)
    case("report", "a run's file with a Python-saved one", run_and_python, expect="refused")

    def one_run():
        code, err = report(stamped(one, "2026-01-01", "a.csv", "x.nc"), stamped(two, "2026-01-01", "a.csv", "y.nc"))
        assert code == 0, err
        return "reported"
    case("report", "two files of one run", one_run)

    def python_calls():
        pdpboot.save(one, folder / "p1.nc")
        pdpboot.save(two, folder / "p2.nc")
        code, err = report(str(folder / "p1.nc"), str(folder / "p2.nc"))
        page = (folder / "r.html").read_text(encoding="utf-8")
        assert code == 0 and "separate runs or calls" in page and "p2.nc" in page, err
        return "reported, each labelled with its file and call"
    case("report", "two Python calls", python_calls)


# ----------------------------------------------------------------------------- CLI on messy tables


def _messy_tables(out: Path) -> dict[str, Path]:
    """Tables a new user would meet, built from scikit-learn's bundled data with realistic mess."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

    rng = np.random.default_rng(0)
    tables = {}
    d = load_diabetes(as_frame=True, scaled=False).frame
    n = len(d)
    messy = pd.DataFrame({
        "patient_id": np.arange(10_001, 10_001 + n),  # numeric ID
        "age": d["age"].astype(int),
        "sex": np.where(d["sex"] == 1, rng.choice([" Male", "male", "MALE ", "Male"], n),
                        rng.choice(["Female", "female ", " FEMALE"], n)),
        "bmi": d["bmi"],
        "bp": [f"{v:.1f} mmHg" if k % 50 else f"{v:.1f}" for k, v in enumerate(d["bp"])],  # unit strings
        "s1": d["s1"],
        "charges": [f"${v * 37.5:,.2f}" for v in d["s5"] * 1000],  # currency with thousands separators
        "share": [f"{v:.0%}" for v in rng.uniform(0, 1, n)],  # percent strings
        "visit": pd.date_range("2020-01-01", periods=n, freq="3D").strftime("%d/%m/%Y"),  # dates as text
        "smoker": rng.choice(["yes", "no", "Yes", "NO"], n),
        "insured": rng.choice(["TRUE", "FALSE"], n),
        "progression": d["target"].astype(float),
    })
    messy.loc[rng.choice(n, 20, replace=False), "progression"] = np.nan  # a target with missing values
    path = out / "diabetes_messy.csv"
    text = messy.to_csv(index=False, lineterminator="\n")
    text = "\n".join(line + ",," for line in text.splitlines()) + "\n"  # trailing empty columns
    path.write_text(text, encoding="utf-8-sig")  # BOM
    tables["diabetes_bom"] = path

    w = load_wine(as_frame=True)
    wine = w.frame.rename(columns={"alcohol": "Alcoolémie", "malic_acid": "Acide malique"})
    wine["Cépage"] = np.array(["Rosé", "Blanc", "Rouge", "Crémant"])[rng.integers(0, 4, len(wine))]
    wine["note"] = np.where(rng.uniform(size=len(wine)) < 0.2, "fruité,\nlong en bouche", "sec")
    wine["target"] = np.array(["classe_1", "classe_2", "classe_3"])[w.target]
    path = out / "wine_latin1.csv"
    wine.to_csv(path, index=False, sep=";", decimal=",", encoding="latin-1")
    tables["wine_latin1"] = path

    b = load_breast_cancer(as_frame=True)
    bc = b.frame.iloc[:, [0, 1, 2, 7, 20, 27]].copy()
    bc.columns = ["radius", "texture", "perimeter", "concave points", "worst radius", "worst concave"]
    bc.insert(0, "record", np.arange(len(bc)) * 7 + 3)  # numeric, not consecutive: an ID?
    bc["diagnosis"] = np.where(b.target == 1, "benign", "malignant")
    path = out / "cancer.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame({"About": ["Breast cancer Wisconsin", "from scikit-learn"]}).to_excel(
            writer, sheet_name="README", index=False)
        bc.to_excel(writer, sheet_name="data", index=False, startrow=1)
        sheet = writer.sheets["data"]
        sheet.cell(row=1, column=2, value="Measurements")
        sheet.merge_cells(start_row=1, start_column=2, end_row=1, end_column=7)  # merged header cells
    tables["cancer_xlsx"] = path
    plain = out / "cancer_one_sheet.xlsx"
    bc.to_excel(plain, index=False)
    tables["cancer_plain_xlsx"] = plain

    pq = pd.DataFrame({
        "age": pd.array(np.where(rng.uniform(size=n) < 0.1, None, d["age"].astype(int)), dtype="Int64"),
        "bmi": pd.array(np.where(rng.uniform(size=n) < 0.1, np.nan, d["bmi"]), dtype="Float64"),
        "smoker": pd.array(np.where(rng.uniform(size=n) < 0.1, None, rng.uniform(size=n) < 0.4), dtype="boolean"),
        "region": pd.Categorical(rng.choice(["north", "south", "east"], n)),
        "grade": pd.Categorical(rng.choice(["low", "mid", "high"], n), categories=["low", "mid", "high"],
                                ordered=True),
        "city": pd.array(rng.choice(["Lyon", "Nice", None], n), dtype="string"),
        "progression": d["target"].astype(float),
    })
    path = out / "diabetes_dtypes.parquet"
    pq.to_parquet(path)
    tables["diabetes_parquet"] = path
    return tables


CLI_RUNS3 = [  # (table key, arguments)
    ("diabetes_bom", ["--target", "progression", "--effect", "both"]),
    ("diabetes_bom", ["--target", "progression", "--model", "hist-gradient-boosting", "--uncertainty", "none"]),
    ("diabetes_bom", ["--target", "smoker", "--model", "lightgbm"]),
    ("wine_latin1", ["--target", "target", "--effect", "both", "--model", "xgboost"]),
    ("cancer_xlsx", ["--target", "diagnosis"]),
    ("cancer_plain_xlsx", ["--target", "diagnosis", "--effect", "ale", "--model", "linear"]),
    ("diabetes_parquet", ["--target", "progression", "--effect", "both", "--model", "hist-gradient-boosting"]),
    ("diabetes_parquet", ["--target", "region", "--model", "random-forest", "--uncertainty", "bootstrap"]),
    ("diabetes_parquet", ["--target", "progression", "--uncertainty", "debiased", "--ice-samples", "0",
                          "--features", "age,bmi"]),
]
FAST3 = ["--n-resamples", "3", "--grid-resolution", "5", "--ice-samples", "8", "--n-jobs", "1", "-q",
         "--n-estimators", "20"]


def cli_cases(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tables = _messy_tables(out)
    for k, (key, args) in enumerate(CLI_RUNS3):
        given = list(FAST3)
        if "--ice-samples" in args:
            i = given.index("--ice-samples")
            del given[i:i + 2]

        def go(key=key, args=args, given=given, k=k):
            start = time.time()
            proc = subprocess.run([sys.executable, "-m", "pdpboot", "run", str(tables[key]), *args, *given,
                                   "--out", str(out / f"run{k}")], capture_output=True, text=True, cwd=out)
            if proc.returncode:
                last = proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else ""
                if proc.returncode == 2:
                    raise ValueError(f"exit 2: {last}")
                raise RuntimeError(f"exit {proc.returncode}: {last}")
            folder = sorted((out / f"run{k}").glob("pdpboot_*"))[-1]
            summary = (folder / "summary.md").read_text(encoding="utf-8")
            (out / f"summary{k}.md").write_text(summary, encoding="utf-8")
            return f"{check_run_folder(folder)} ({time.time() - start:.0f} s)"

        case("cli", f"{key} {' '.join(args)}", go)


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    part = argv[0] if argv else "api"
    parts = {"api": api_cases, "outputs": outputs_cases, "weights": weights_cases, "grids": grid_cases,
             "models": model_cases, "report": report_cases}
    if part == "cli":
        cli_cases(Path(argv[1] if len(argv) > 1 else tempfile.mkdtemp()))
    elif part == "all":
        for fn in parts.values():
            fn()
    else:
        parts[part]()
    print_results(RESULTS)


if __name__ == "__main__":
    main(sys.argv[1:])
