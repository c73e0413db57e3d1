"""Issue 26, fourth hostile round: areas rounds 1-3 did not cover (not part of CI; the CLI part is slow).

    python -m benchmarks.hostile_round4 onefit       # one fitted model: odd predict outputs, feature_names_in_
    python -m benchmarks.hostile_round4 resamples    # classes / weights / constants that change inside resamples
    python -m benchmarks.hostile_round4 checkpoint   # resume after changing B, seed, grid, engine, background
    python -m benchmarks.hostile_round4 grids        # percentiles / grid_resolution extremes, every effect
    python -m benchmarks.hostile_round4 pairs        # 2-D PD / ALE / H² with a text, bool or category feature
    python -m benchmarks.hostile_round4 xarray       # results with transposed, reversed or renamed coordinates
    python -m benchmarks.hostile_round4 files        # load of older / edited files, SIGINT while saving
    python -m benchmarks.hostile_round4 cli OUTDIR [refusals|runs]  # CLI: names, --model-file, effects, reproduce

Every PD/ICE number is compared with brute force written here (``hostile_round2.brute``: set the column, the
model's own predict/predict_proba, average); results with moved coordinates are compared with the same result
unmoved, aligned by coordinate; ALE, whose bins are pdpboot's own, by what holds for any binning (a linear
model's ALE steps are slope x grid step).  A case prints ``ok``, ``refused`` (with its message: ok when it is one
clear line naming the problem), ``WRONG`` (a silently wrong number) or ``error``.
"""

from __future__ import annotations

import json
import os
import signal
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
from benchmarks.hostile_round3 import RESULTS, _steps_linear, case
from pdpboot import Grid


def _default_sigint() -> None:
    """In a child: Ctrl-C as on a terminal (a background shell job starts with SIGINT ignored, and a Python
    started that way keeps ignoring it: the SIGINT cases would test nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _quiet():
    return pdpboot.Execution(n_jobs=1, progress=False)


def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, size=n).astype(float)})
    return X, 2 * X.a - X.b + rng.normal(size=n) * 0.1, rng


# ----------------------------------------------------------------------------- one fitted model


def onefit_cases() -> None:
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.linear_model import LinearRegression

    X, y, _ = _frame()
    ref = LinearRegression().fit(X, y)

    class Wrapped(BaseEstimator, RegressorMixin):
        shape = "list"

        def fit(self, X, y):
            self.m_ = LinearRegression().fit(X, y)
            return self

        def predict(self, X):
            p = self.m_.predict(X)
            return {"list": list, "column": lambda v: v.reshape(-1, 1),
                    "series": lambda v: pd.Series(v, index=np.arange(len(v))[::-1]),
                    "frame": lambda v: pd.DataFrame({"yhat": v})}[self.shape](p)

    for shape in ("list", "column", "series", "frame"):
        def make(shape=shape):
            est = Wrapped()
            est.shape = shape
            return est
        case("onefit", f"predict returns a {shape}: partial_dependence", lambda make=make: check(
            pdpboot.partial_dependence(make().fit(X, y), X, ["a"], grid=Grid(5)), ref, X, "a"))
        case("onefit", f"predict returns a {shape}: accumulated_local_effects", lambda make=make: _steps_linear(
            pdpboot.accumulated_local_effects(make().fit(X, y), X, ["a"], grid=Grid(5))["a"], "a", ref.coef_[0]))
        case("onefit", f"predict returns a {shape}: bootstrap", lambda make=make: check(
            pdpboot.bootstrap_partial_dependence(make(), X, y, ["a"], n_resamples=3, grid=Grid(5), rng=0,
                                                 execution=_quiet()), ref, X, "a"))

    numpy_fit = LinearRegression().fit(X.to_numpy(), y)
    case("onefit", "fitted on a NumPy array, given the DataFrame", lambda: check(
        pdpboot.partial_dependence(numpy_fit, X, ["a"], grid=Grid(5)), numpy_fit, X, "a"))
    frame_fit = LinearRegression().fit(X, y)
    for name, data, expect in [("columns in another order", X[["b", "a"]], "refused"),
                               ("a column renamed", X.rename(columns={"b": "B"}), "refused"),
                               ("an extra column", X.assign(z=1.0), "refused"),
                               ("a column missing", X[["a"]], "refused")]:
        def go(data=data):
            res = pdpboot.partial_dependence(frame_fit, data, ["a"], grid=Grid(5))
            return check(res, frame_fit, X, "a")
        case("onefit", f"fitted on a DataFrame, given {name}: partial_dependence", go, expect=expect)

        def ale(data=data):
            return _steps_linear(pdpboot.accumulated_local_effects(frame_fit, data, ["a"], grid=Grid(5))["a"],
                                 "a", frame_fit.coef_[0])
        case("onefit", f"fitted on a DataFrame, given {name}: accumulated_local_effects", ale, expect=expect)

        def hstat(data=data):
            h = pdpboot.h_statistic_of_model(frame_fit, data, [("a", str(data.columns[-1]) if data.shape[1] > 1
                                                              else "a")])
            values = np.concatenate([np.ravel(v.values) for node in h.subtree for k, v in node.ds.data_vars.items()
                                     if k.startswith("h2")])
            assert np.all(np.abs(values[np.isfinite(values)]) < 1e-8), values
            return "H² of an additive model: 0"
        case("onefit", f"fitted on a DataFrame, given {name}: h_statistic_of_model", hstat, expect=expect)


# ----------------------------------------------------------------------------- inside resamples


def resample_cases() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    X, y, rng = _frame(60, seed=2)

    def weights(k):
        def go():
            w = np.zeros(len(X))
            w[:k] = 1.0
            res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a"], n_resamples=30,
                                                       sample_weight=w, grid=Grid(4), rng=0, execution=_quiet())
            est = LinearRegression().fit(X, y, sample_weight=w)
            return check(res, est, X, "a", weights=w)
        return go
    case("resamples", "weights positive on 1 of 60 rows (a resample draws none)", weights(1), expect="refused")
    case("resamples", "weights positive on 30 of 60 rows", weights(30))

    def ale_weights():
        w = np.zeros(len(X))
        w[:1] = 1.0
        return pdpboot.bootstrap_ale(LinearRegression(), X, y, ["a"], n_resamples=30, sample_weight=w, rng=0,
                                     execution=_quiet())
    case("resamples", "ALE: weights positive on 1 of 60 rows", ale_weights, expect="refused")

    for label_kind, labels in [("str", np.array(["no", "yes"], dtype=object)), ("bool", np.array([False, True])),
                               ("int", np.array([3, 7]))]:
        y2 = labels[(np.arange(len(X)) < 1).astype(int)]  # 1 row of the second class: some refits miss it
        for est in (DecisionTreeClassifier(max_depth=3, random_state=0),
                    HistGradientBoostingClassifier(max_iter=5, random_state=0)):
            def go(est=est, y2=y2, labels=labels):
                res = pdpboot.bootstrap_partial_dependence(est, X, y2, ["a"], n_resamples=20, grid=Grid(4),
                                                           rng=0, resampling="bootstrap", execution=_quiet())
                node = res["a"]
                fitted = est.fit(X, y2)
                out = check(res, fitted, X, "a", method="predict_proba")
                sums = node["pd_resamples"].sum("output").values
                assert np.allclose(sums[np.isfinite(sums)], 1.0), "class probabilities of a refit do not add to 1"
                absent = np.unpackbits(res["resample_absent"].values, axis=1, count=len(X)).astype(bool)
                missing = int(absent[:, np.asarray(y2 == labels[1])].all(axis=1).sum())
                return f"{out}; refits without the rare class: {missing} (its probability there: 0)"
            case("resamples", f"{label_kind} classes, 1 row of one class: {type(est).__name__}", go)

    def one_class_refit():
        y1 = np.where(np.arange(len(X)) < 1, "yes", "no").astype(object)  # 1 row of 'yes': refits miss it
        return pdpboot.bootstrap_partial_dependence(LogisticRegression(), X, y1, ["a"], n_resamples=30, rng=0,
                                                    resampling="bootstrap", grid=Grid(4), execution=_quiet())
    case("resamples", "LogisticRegression, 1 row of a class (refits without it cannot be fitted)", one_class_refit,
         expect="refused")

    y3 = np.array(["c0", "c1", "c2"], dtype=object)[np.digitize(X.a, [-0.3, 0.3])]
    y3[0] = "rare"
    for est in (LogisticRegression(), RandomForestClassifier(10, random_state=0),
                HistGradientBoostingClassifier(max_iter=5)):
        def go(est=est):
            res = pdpboot.bootstrap_partial_dependence(est, X, y3, ["a"], n_resamples=6, grid=Grid(4), rng=0,
                                                       execution=_quiet())
            pr = res["a"]["pd_resamples"]
            assert sorted(map(str, pr["output"].values)) == ["c0", "c1", "c2", "rare"], pr["output"].values
            sums = pr.sum("output").values
            assert np.allclose(sums, 1.0), sums
            return check(res, est.fit(X, y3), X, "a", method="predict_proba")
        case("resamples", f"multi-class with one 1-row class: {type(est).__name__}", go)

    groups = np.repeat(np.arange(12), 5)
    Xg = X.assign(c=np.repeat(rng.normal(size=12), 5))  # constant inside each group, not in the data

    def group_constant():
        res = pdpboot.bootstrap_partial_dependence(
            LinearRegression(), Xg, y + Xg.c, ["c"], n_resamples=4, grid=Grid(4), rng=0,
            resampling=pdpboot.Resampling(scheme="group", groups=groups), execution=_quiet())
        return check(res, LinearRegression().fit(Xg, y + Xg.c), Xg, "c")
    case("resamples", "feature constant inside each group, group bootstrap", group_constant)

    def subsample_constant():
        Xs = X.assign(c=np.r_[np.zeros(len(X) - 1), 1.0])  # one row differs: most subsamples see a constant
        res = pdpboot.bootstrap_partial_dependence(
            LinearRegression(), Xs, y, ["c"], n_resamples=4, grid=Grid(4), rng=0,
            resampling=pdpboot.Resampling(scheme="subsample", subsample_fraction=0.5), execution=_quiet())
        return check(res, LinearRegression().fit(Xs, y), Xs, "c")
    case("resamples", "feature constant in most subsamples (one row differs)", subsample_constant)


# ----------------------------------------------------------------------------- checkpoints


def checkpoint_cases() -> None:
    import shutil

    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.integers(0, 4, size=80).astype(float)})
    y = X.a + X.b + rng.normal(size=80) * 0.1

    def run(path, B=4, seed=0, execution=None, **kw):
        options = {"n_jobs": 1, "progress": False, "checkpoint": path, **(execution or {})}
        kw.setdefault("grid", Grid(5))
        return pdpboot.bootstrap_partial_dependence(DecisionTreeRegressor(max_depth=3, random_state=0), X, y, ["a"],
                                                    n_resamples=B, rng=seed, execution=pdpboot.Execution(**options),
                                                    **kw)

    def resumed(first, second):
        def go():
            folder = tempfile.mkdtemp()
            try:
                run(folder, **first)
                again = run(folder, **second)
                fresh = run(tempfile.mkdtemp(), **second)
                for var in ("pd", "pd_resamples"):
                    assert np.array_equal(again["a"][var].values, fresh["a"][var].values, equal_nan=True), \
                        "a resumed run differs from a fresh one"
                return f"resumed, equal to a fresh run {again['a']['pd_resamples'].shape}"
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return go

    for name, first, second, expect in [
            ("B 4 -> 6 (extends)", {"B": 4}, {"B": 6}, "ok"), ("B 6 -> 4", {"B": 6}, {"B": 4}, "ok"),
            ("seed 0 -> 1", {}, {"seed": 1}, "refused"), ("grid_resolution 5 -> 7", {}, {"grid": Grid(7)},
                                                         "refused"),
            ("n_jobs 1 -> 2", {}, {"execution": {"n_jobs": 2}}, "ok"),
            ("on_error raise -> skip", {}, {"execution": {"on_error": "skip"}}, "ok"),
            ("method auto -> brute", {}, {"execution": {"method": "brute"}}, "refused"),
            ("background resample -> original", {}, {"resampling": pdpboot.Resampling(background="original")},
             "refused"),
            ("max_background None -> 30", {}, {"resampling": pdpboot.Resampling(max_background=30)}, "refused"),
            ("statistics -> heterogeneity", {}, {"statistics": "heterogeneity"}, "refused"),
            ("response_method auto -> predict", {}, {"response_method": "predict"}, "refused")]:
        case("checkpoint", name, resumed(first, second), expect=expect)


# ----------------------------------------------------------------------------- grids


def grid_cases() -> None:
    from sklearn.tree import DecisionTreeRegressor

    X, y, _ = _frame(40, seed=3)
    est = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    for p, expect in [((0, 1), "ok"), ((0.0, 1e-12), "refused"), ((1e-9, 1 - 1e-9), "ok"), ((0.49, 0.51), "ok"),
                      ((0.999999, 1.0), "refused")]:
        case("grids", f"percentiles {p}", lambda p=p: check(
            pdpboot.partial_dependence(est, X, ["a"], grid=Grid(5, percentiles=p)), est, X, "a"), expect=expect)
    for g in (2, 3, 1000, 10**6):
        case("grids", f"grid_resolution {g}", lambda g=g: check(
            pdpboot.partial_dependence(est, X, ["a"], grid=Grid(g)), est, X, "a"))
        case("grids", f"ALE grid_resolution {g}", lambda g=g: str(
            pdpboot.accumulated_local_effects(est, X, ["a"], grid=Grid(g))["a"]["ale"].shape))
    case("grids", "grid_resolution 10**6 on a pair", lambda: str(pdpboot.partial_dependence(
        est, X, [("a", "b")], grid=Grid(10**6))["a__b"]["pd"].shape))
    big = pd.DataFrame({"a": np.arange(3000.0), "b": np.arange(3000.0) % 7})
    tree = DecisionTreeRegressor(max_depth=3).fit(big, big.a)
    case("grids", "2-D grid of 3000 x 3000 values, memory_limit 1 MB", lambda: pdpboot.partial_dependence(
        tree, big, [("a", "b")], grid=Grid(custom_values={"a": np.arange(3000.0), "b": np.arange(3000.0)}),
        method="brute", memory_limit=10**6), expect="refused")


# ----------------------------------------------------------------------------- pairs with a categorical


def pair_cases() -> None:
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"a": rng.normal(size=n), "c": rng.choice(["lo", "mid", "hi"], n),
                      "f": rng.uniform(size=n) < 0.4})
    y = X.a + (X.c == "hi") * 2 + X.f * 1.5 + X.a * (X.c == "lo")
    additive = X.a + (X.c == "hi") * 2 + X.f * 1.5

    def pipe(model=None):
        return make_pipeline(make_column_transformer((OneHotEncoder(), ["c"]), remainder="passthrough"),
                             model if model is not None else LinearRegression())

    def pair_pd(model, data, fs, **kw):
        node = pdpboot.partial_dependence(model, data, [fs], grid=Grid(4), **kw)
        node = node[list(node.children)[0]]
        a, b = fs
        err = 0.0
        for va in node["pd"][a].values:
            for vb in node["pd"][b].values:
                Xc = data.copy()
                for col, v in ((a, va), (b, vb)):
                    Xc[col] = pd.Series([v] * len(data), index=data.index).astype(data[col].dtype)
                err = max(err, abs(model.predict(Xc).mean() - float(node["pd"].sel({a: va, b: vb}).squeeze())))
        assert err < 1e-8, f"max error {err:.3g} against brute force"
        return f"max error {err:.1e}; engine {node.root.attrs.get('engine', '')[:50]}"

    fitted = pipe().fit(X, y)
    case("pairs", "PD text x numeric (Pipeline)", lambda: pair_pd(fitted, X, ("c", "a")))
    case("pairs", "PD bool x text (Pipeline)", lambda: pair_pd(fitted, X, ("f", "c")))
    Xh = X.assign(c=X.c.astype("category"))
    hgb = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype").fit(Xh, y)
    for method in ("auto", "tree", "brute"):
        case("pairs", f"PD category x numeric, HGB native categories, method={method}",
             lambda method=method: pair_pd(hgb, Xh, ("c", "a"), method=method))
    for fs, order in ((("c", "a"), {"c": ["lo", "mid", "hi"]}), (("f", "a"), {"f": [False, True]})):
        def ale_zero(fs=fs, order=order):
            res = pdpboot.accumulated_local_effects(pipe().fit(X, additive), X, [fs], grid=Grid(4, custom_values=order))
            v = float(np.nanmax(np.abs(res[list(res.children)[0]]["ale"].values)))
            assert v < 1e-8, f"2-D ALE of an additive model is {v}, not 0"
            return f"2-D ALE of an additive model: max {v:.1e}"
        case("pairs", f"2-D ALE {fs} ordered by custom_values, additive model", ale_zero)
    case("pairs", "2-D ALE of an unordered text feature", lambda: pdpboot.accumulated_local_effects(
        fitted, X, [("c", "a")], grid=Grid(4)), expect="refused")

    def boot_ale_pair():
        res = pdpboot.bootstrap_ale(pipe(), X, additive, [("c", "a")],
                                    grid=Grid(4, custom_values={"c": ["lo", "mid", "hi"]}),
                                    n_resamples=4, rng=0, execution=_quiet())
        v = float(np.nanmax(np.abs(res["c__a"]["ale_resamples"].values)))
        assert v < 1e-8, v
        return f"bootstrap 2-D ALE of an additive model: max {v:.1e}"
    case("pairs", "bootstrap 2-D ALE, text ordered by custom_values", boot_ale_pair)

    def h_pair():
        res = pdpboot.bootstrap_partial_dependence(pipe(), X, additive, [("c", "a")], n_resamples=4,
                                                   grid=Grid(4), rng=0, statistics="interactions",
                                                   execution=_quiet())
        v = float(np.nanmax(np.abs(pdpboot.h_statistic(res)["c__a"]["h2"].values)))
        assert v < 1e-8, v
        return f"H² of an additive model {v:.1e}"
    case("pairs", "bootstrap pair text x numeric: H² of an additive model", h_pair)



# ----------------------------------------------------------------------------- moved coordinates


def xarray_cases() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import xarray as xr
    from sklearn.base import clone
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    n = 40
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, size=n).astype(float),
                      "c": np.array(["u", "v", "w"])[rng.integers(0, 3, n)]})
    y = 2 * X.a - X.b + (X.c == "v") + X.a * X.b
    est = make_pipeline(make_column_transformer((OneHotEncoder(), ["c"]), remainder="passthrough"),
                        LinearRegression())
    fitted = clone(est).fit(X, y)
    res = pdpboot.bootstrap_partial_dependence(est, X, y, ["a", "c", ("a", "b"), ("c", "a")], n_resamples=20,
                                               grid=Grid(4), rng=0, statistics={"ice": 10, "interactions": True},
                                               execution=_quiet())

    def moved(tree, how):
        out = tree.copy()
        for k in list(out.children):
            ds, attrs = out[k].to_dataset(), dict(out[k].attrs)
            if how == "transposed":
                ds = ds.transpose(*reversed(list(ds.dims)))
            elif how == "grid reversed":
                ds = ds.isel({f: slice(None, None, -1) for f in attrs["features"]})
            elif how == "resample relabelled":
                ds = ds.assign_coords(resample=ds["resample"].values[::-1])
            elif how == "feature renamed" and k == "a__b":
                ds = ds.rename({"b": "B"})
            out[k] = xr.DataTree(ds)
            out[k].attrs.update(attrs)
        return out

    def same(a_tree, b_tree):
        worst = 0.0
        for k in a_tree.children:
            for v, a in a_tree[k].to_dataset().data_vars.items():
                if a.dtype.kind == "f" and "resample" not in a.dims:  # a resample's label is not its position
                    b = b_tree[k].to_dataset()[v].transpose(*a.dims).reindex_like(a)
                    worst = max(worst, float(np.nanmax(np.abs(a.values - b.values))))
        assert worst < 1e-12, f"differs from the unmoved result by {worst:.3g}"
        return f"equal (max difference {worst:.1e})"

    for how in ("transposed", "grid reversed", "resample relabelled"):
        other = moved(res, how)
        case("xarray", f"{how}: confidence_bands", lambda other=other: same(pdpboot.confidence_bands(res),
                                                                            pdpboot.confidence_bands(other)))
        case("xarray", f"{how}: h_statistic", lambda other=other: same(pdpboot.h_statistic(res),
                                                                       pdpboot.h_statistic(other)))
        case("xarray", f"{how}: ice_heterogeneity", lambda other=other: same(pdpboot.ice_heterogeneity(res),
                                                                             pdpboot.ice_heterogeneity(other)))

        def plots(other=other):
            bands = pdpboot.confidence_bands(other)
            pdpboot.plot_pd(bands, "a")
            pdpboot.plot_pd(bands, "c")
            pdpboot.plot_pd_contour(bands, ("a", "b"))
            pdpboot.plot_pd_contour(bands, ("c", "a"))
            pdpboot.plot_ice(fitted, X, "a", result=bands)
            return "drawn"
        case("xarray", f"{how}: plot_pd, plot_pd_contour, plot_ice", plots)
    renamed = moved(res, "feature renamed")
    case("xarray", "feature dim renamed: confidence_bands", lambda: pdpboot.confidence_bands(renamed),
         expect="refused")
    case("xarray", "feature dim renamed: h_statistic", lambda: pdpboot.h_statistic(renamed), expect="refused")
    case("xarray", "feature dim renamed: ice_heterogeneity", lambda: pdpboot.ice_heterogeneity(renamed),
         expect="refused")
    case("xarray", "feature dim renamed: plot_pd_contour", lambda: pdpboot.plot_pd_contour(
        pdpboot.confidence_bands(res).pipe(lambda t: moved(t, "feature renamed")), ("a", "b")), expect="refused")


# ----------------------------------------------------------------------------- saved files


def file_cases() -> None:
    from sklearn.linear_model import LinearRegression

    folder = Path(tempfile.mkdtemp())
    X, y, _ = _frame(60, seed=4)
    res = pdpboot.bootstrap_partial_dependence(LinearRegression(), X, y, ["a", ("a", "b")], n_resamples=4, rng=0,
                                               grid=Grid(4), execution=_quiet())
    path = pdpboot.save(res, folder / "r.nc")
    for recorded, expect in [("abc", "refused"), ("1.5", "refused"), ("", "refused"), ("0", "refused"),
                             ("-1", "refused"), ("1", "ok"), ("2", "ok"), ("3", "refused")]:
        def edited(recorded=recorded):
            import shutil

            import netCDF4

            target = folder / f"version_{recorded or 'empty'}.nc"
            shutil.copy(path, target)
            with netCDF4.Dataset(target, "a") as raw:
                raw.setncattr("pdpboot_schema_version", recorded)
            loaded = pdpboot.load(target)
            assert np.array_equal(loaded["a"]["pd"].values, res["a"]["pd"].values), "values changed"
            return "loaded, values equal"
        case("files", f"pdpboot_schema_version edited to {recorded!r}", edited, expect=expect)

    def version_removed():
        import shutil

        import netCDF4

        target = folder / "no_version.nc"
        shutil.copy(path, target)
        with netCDF4.Dataset(target, "a") as raw:
            raw.delncattr("pdpboot_schema_version")
            raw.setncattr("creation_library", "pdpboot")
        pdpboot.load(target)
        return "loaded"
    case("files", "pdpboot_schema_version removed (checksums bypassed)", version_removed, expect="refused")

    def sigint_while_saving():
        script = (f"import pickle, signal, os, pdpboot; res = pickle.load(open({str(folder / 'r.pkl')!r}, 'rb'));"
                  f"print('ready', flush=True); import time; time.sleep(0.5);"
                  f"[pdpboot.save(res, {str(folder / 'big')!r} + f'{{k}}.nc') for k in range(200)]")
        import pickle

        with open(folder / "r.pkl", "wb") as fh:
            pickle.dump(res, fh)
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, preexec_fn=_default_sigint)
        proc.stdout.readline()
        time.sleep(8.0)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        bad = []
        for path in sorted(folder.glob("big*.nc")):
            try:
                pdpboot.load(path)
            except (ValueError, OSError) as exc:
                bad.append((path.name, str(exc)[:80]))
        partial = [p.name for p in folder.glob("big*") if not p.name.endswith(".nc")]
        assert not bad or all("damaged" in m or "incomplete" in m or "truncated" in m for _, m in bad), bad
        return f"{len(list(folder.glob('big*.nc')))} files: every one loads verified or is refused ({bad[:1]}); " \
               f"leftover temporaries {partial[:3]}"
    case("files", "SIGINT while saving: no half-written file loads", sigint_while_saving)


# ----------------------------------------------------------------------------- CLI


def _cli_tables(out: Path) -> dict[str, Path]:
    from sklearn.datasets import load_diabetes, load_iris

    rng = np.random.default_rng(0)
    d = load_iris(as_frame=True).frame
    long = ("a very long column name " * 6).strip()
    iris = pd.DataFrame({"Sépal length (cm)": d.iloc[:, 0], "  petal width ": d.iloc[:, 3], long: d.iloc[:, 1],
                         "名前": rng.choice(["东", "西", "南"], len(d)), "flag": rng.uniform(size=len(d)) < 0.4,
                         "day": pd.date_range("2021-01-01", periods=len(d), freq="D").strftime("%Y-%m-%d"),
                         "espèce": np.array(["setosa", "versicolor", "virginica"])[d.target]})
    iris = iris.sample(frac=1.0, random_state=0)  # the day is not the species' order
    tables = {"iris_names": out / "iris_names.csv"}
    iris.to_csv(tables["iris_names"], index=False)
    dia = load_diabetes(as_frame=True, scaled=False).frame
    mixed = pd.DataFrame({"age": dia.age, "bmi": dia.bmi, "bp": dia.bp,
                          "sex": np.where(dia.sex == 1, "female", "male"),
                          "smoker": rng.uniform(size=len(dia)) < 0.3,
                          "visit": pd.date_range("2019-01-01", periods=len(dia), freq="2D").strftime("%Y-%m-%d"),
                          "region": rng.choice(["north", "south", "east", "west"], len(dia)),
                          "progression": dia.target})
    tables["diabetes_mixed"] = out / "diabetes_mixed.csv"
    mixed.to_csv(tables["diabetes_mixed"], index=False)
    return tables


def _fitted_models(out: Path, tables: dict[str, Path]) -> dict[str, Path]:
    import joblib
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    mixed = pd.read_csv(tables["diabetes_mixed"])
    models = {}
    pipe = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["sex", "region"]),
                                                 ("passthrough", ["age", "bmi", "bp"])),
                         HistGradientBoostingRegressor(max_iter=30, random_state=0))
    pipe.fit(mixed[["age", "bmi", "bp", "sex", "region"]], mixed.progression)
    models["pipeline"] = out / "pipeline.joblib"
    joblib.dump(pipe, models["pipeline"])
    numeric = mixed[["age", "bmi", "bp"]]
    models["numpy_fitted"] = out / "numpy_fitted.joblib"
    joblib.dump(LinearRegression().fit(numeric.to_numpy(), mixed.progression), models["numpy_fitted"])
    models["foreign_names"] = out / "foreign_names.joblib"
    joblib.dump(LinearRegression().fit(numeric.rename(columns={"bp": "blood_pressure"}), mixed.progression),
                models["foreign_names"])
    labels = (mixed.progression > mixed.progression.median()).astype(int)  # classes 0/1, table: text target
    models["int_classes"] = out / "int_classes.joblib"
    joblib.dump(RandomForestClassifier(20, random_state=0).fit(numeric, labels), models["int_classes"])
    mixed.assign(high=np.where(labels == 1, "yes", "no")).to_csv(out / "diabetes_text_target.csv", index=False)
    tables["diabetes_text_target"] = out / "diabetes_text_target.csv"
    models["target_as_feature"] = out / "target_as_feature.joblib"
    joblib.dump(LinearRegression().fit(mixed[["age", "bmi", "progression"]], mixed.progression),
                models["target_as_feature"])
    return models


FAST4 = ["--n-resamples", "3", "--grid-resolution", "5", "--ice-samples", "8", "--n-jobs", "1", "-q",
         "--n-estimators", "20"]

CLI_RUNS4 = [  # (name, table, arguments, model file or None, expected)
    ("unicode, spaces, a 150-character name; text, bool and date features; --effect both", "iris_names",
     ["--target", "espèce", "--effect", "both"], None, "ok"),
    ("pair of a text and a numeric feature, both effects", "iris_names",
     ["--target", "espèce", "--effect", "both", "--pairs", "名前:Sépal length (cm)"], None, "ok"),
    ("target named among --features", "diabetes_mixed", ["--target", "progression", "--features",
                                                         "age,progression,bmi"], None, "refused"),
    ("target named in --pairs", "diabetes_mixed", ["--target", "progression", "--pairs", "age:progression"], None,
     "refused"),
    ("--effect ale --uncertainty none on text/bool/date", "diabetes_mixed",
     ["--target", "progression", "--effect", "ale", "--uncertainty", "none"], None, "ok"),
    ("--effect both --uncertainty debiased (PD only)", "diabetes_mixed",
     ["--target", "progression", "--effect", "both", "--uncertainty", "debiased", "--ice-samples", "0",
      "--features", "age,bmi,bp"], None, "refused"),
    ("pair text x date, --effect both", "diabetes_mixed",
     ["--target", "progression", "--effect", "both", "--pairs", "region:visit"], None, "ok"),
    ("fitted Pipeline (ColumnTransformer by name), --uncertainty none", "diabetes_mixed",
     ["--target", "progression", "--uncertainty", "none", "--effect", "both"], "pipeline", "ok"),
    ("fitted Pipeline (ColumnTransformer by name), bootstrap", "diabetes_mixed",
     ["--target", "progression"], "pipeline", "ok"),
    ("model fitted on a NumPy array of 3 columns, table of 7 features", "diabetes_mixed",
     ["--target", "progression", "--uncertainty", "none"], "numpy_fitted", "refused"),
    ("model fitted on a NumPy array, --features naming its 3 columns", "diabetes_mixed",
     ["--target", "progression", "--uncertainty", "none", "--features", "age,bmi,bp"], "numpy_fitted", "ok"),
    ("feature_names_in_ naming a column the table lacks", "diabetes_mixed",
     ["--target", "progression", "--uncertainty", "none"], "foreign_names", "refused"),
    ("classifier with classes 0/1, table target yes/no", "diabetes_text_target",
     ["--target", "high", "--uncertainty", "none", "--exclude", "progression"], "int_classes", "refused"),
    ("model fitted with the target as a feature", "diabetes_mixed",
     ["--target", "progression", "--uncertainty", "none"], "target_as_feature", "refused"),
]


def _run_cli(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pdpboot", *args], capture_output=True, text=True, cwd=cwd, **kw)


def _outcome(proc: subprocess.CompletedProcess, out: Path) -> None:
    err = proc.stderr.strip()
    if proc.returncode == 2:
        assert "\n" not in err and "Traceback" not in err, f"exit 2 in several lines: {err[:300]}"
        assert not out.exists() or not any(out.iterdir()), "a refused run left files"
        raise ValueError(f"exit 2: {err}")
    if proc.returncode:
        raise RuntimeError(f"exit {proc.returncode}: {err.splitlines()[-1][:300] if err else ''}")


def cli_cases(out: Path, only: str | None = None) -> None:
    """Every CLI case (``only``: ``refusals``, the cases expected to exit 2, or ``runs``, the others)."""
    out.mkdir(parents=True, exist_ok=True)
    tables = _cli_tables(out)
    models = _fitted_models(out, tables)
    for k, (name, key, args, model, expect) in enumerate(CLI_RUNS4):
        if only and (expect == "refused") != (only == "refusals"):
            continue
        given = list(FAST4)
        for option in ("--ice-samples", "--n-estimators"):
            if option in args:
                i = given.index(option)
                del given[i:i + 2]
        extra = ["--model-file", str(models[model])] if model else []

        def go(key=key, args=args, given=given, extra=extra, k=k):
            start = time.time()
            proc = _run_cli(["run", str(tables[key]), *args, *given, *extra, "--out", str(out / f"run{k}")], out)
            _outcome(proc, out / f"run{k}")
            folder = sorted((out / f"run{k}").glob("pdpboot_*"))[-1]
            return f"{check_run_folder(folder)} ({time.time() - start:.0f} s)"
        case("cli", name, go, expect=expect)

    if only == "refusals":
        return

    def reproduce_after_edit():
        folder = sorted((out / "run0").glob("pdpboot_*"))[-1]
        config = folder / "repro_inputs" / "config.json"
        saved = config.read_text(encoding="utf-8")
        try:
            edited = json.loads(saved)
            edited["random_state"] = int(edited.get("random_state", 0)) + 1
            config.write_text(json.dumps(edited), encoding="utf-8")
            proc = _run_cli(["reproduce", str(folder)], out)
        finally:
            config.write_text(saved, encoding="utf-8")
        text = (proc.stdout + proc.stderr).strip()
        assert proc.returncode != 0, f"an edited config reproduced (exit 0): {text[-300:]}"
        assert "NOT reproduced" in text, text[-300:]  # a report: the verdict, then every difference
        raise ValueError(f"exit {proc.returncode}: " + next(line for line in text.splitlines()
                                                           if "NOT reproduced" in line)[:300])
    case("cli", "pdpboot reproduce after editing the recorded config", reproduce_after_edit, expect="refused")

    def sigint_run():
        proc = subprocess.Popen([sys.executable, "-m", "pdpboot", "run", str(tables["diabetes_mixed"]), "--target",
                                 "progression", "--n-resamples", "40", "--n-jobs", "1", "--out", str(out / "sigint")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=out,
                                preexec_fn=_default_sigint)
        time.sleep(25)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        folders = sorted((out / "sigint").glob("pdpboot_*"))
        loaded = []
        for folder in folders:
            for path in folder.glob("*.nc"):
                pdpboot.load(path)
                loaded.append(path.name)
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert "Traceback" not in err, f"a traceback on Ctrl-C: {last}"
        return f"exit {proc.returncode}: {last[:160]}; files left {[f.name for f in folders]}, loaded {loaded}"
    case("cli", "Ctrl-C (SIGINT) during the refits", sigint_run)


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    part = argv[0] if argv else "onefit"
    parts = {"onefit": onefit_cases, "resamples": resample_cases, "checkpoint": checkpoint_cases,
             "grids": grid_cases, "pairs": pair_cases,
             "xarray": xarray_cases, "files": file_cases}
    if part == "cli":
        cli_cases(Path(argv[1] if len(argv) > 1 else tempfile.mkdtemp()), argv[2] if len(argv) > 2 else None)
    elif part == "all":
        for fn in parts.values():
            fn()
    else:
        parts[part]()
    print_results(RESULTS)


if __name__ == "__main__":
    main(sys.argv[1:])
