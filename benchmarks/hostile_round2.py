"""Issue 26, second hostile round: every case run, with its check (not part of CI; slow parts are CLI runs).

    python -m benchmarks.hostile_round2 api          # API: dtypes, multi-output, weights, custom grids
    python -m benchmarks.hostile_round2 arguments    # partial_dependence arguments: a clear refusal or the right PD
    python -m benchmarks.hostile_round2 checkpoint   # resume with changed inputs must refuse or equal a fresh run
    python -m benchmarks.hostile_round2 cli OUTDIR   # fresh real tables (statsmodels' bundled data) through the CLI

Every computed number is compared with brute force written here (set the column, call the model's own
``predict``/``predict_proba``/``decision_function``, average), never with pdpboot's own output.  A case
prints ``ok`` (right number or clear refusal), ``WRONG`` (a silently wrong number) or ``error`` (a deep or
unclear failure).  Defects found are listed in benchmarks/README.md (section "Hostile round 2").
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pdpboot
from pdpboot import Grid

RESULTS: list[tuple[str, str, str, str]] = []


def case(area: str, name: str, fn) -> None:
    """Run one case; record ok / WRONG / error with its message."""
    try:
        RESULTS.append((area, name, "ok", str(fn())[:200]))
    except AssertionError as exc:
        RESULTS.append((area, name, "WRONG", str(exc)[:200]))
    except Exception as exc:  # noqa: BLE001 - a refusal is recorded with its message (ok when it is clear)
        RESULTS.append((area, name, "refused", f"{type(exc).__name__}: {str(exc)[:200]}"))


def brute(est, X: pd.DataFrame, feature: str, values, *, weights=None, method: str = "predict") -> np.ndarray:
    """PD by hand: every row gets the grid value, the model's own response, averaged."""
    out = []
    for v in values:
        Xc = X.copy()
        plain = isinstance(X[feature].dtype, pd.DatetimeTZDtype) or X[feature].dtype.kind in "iu"  # 0.5 stays 0.5
        Xc[feature] = v if plain else pd.Series([v] * len(X), index=X.index).astype(X[feature].dtype)
        out.append(np.average(getattr(est, method)(Xc), axis=0, weights=weights))
    out = np.asarray(out)
    return out[:, None] if out.ndim == 1 else out


def check(res, est, X, feature, *, weights=None, method="predict") -> str:
    node = res[list(res.children)[0]]
    pdv = node["pd"]
    grid = pdv[feature].values
    expected = brute(est, X, feature, list(grid), weights=weights, method=method)
    got = pdv.transpose(feature, "output").values
    assert got.shape == expected.shape, f"shape {got.shape} vs {expected.shape}"
    err = float(np.max(np.abs(got - expected)))
    assert err < 1e-8, f"max error {err:.3g} against brute force"
    return f"{len(grid)} grid points, max error {err:.1e}"


# ----------------------------------------------------------------------------- API


def api_cases() -> None:
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(1)
    n = 150
    x0, x1 = rng.normal(size=n), rng.integers(0, 5, size=n)

    def base():
        return pd.DataFrame({"a": x0, "b": x1.astype(float)}), x0 + x1 + rng.normal(size=n) * 0.1

    def onehot(col):
        return make_column_transformer((OneHotEncoder(handle_unknown="ignore"), [col]), remainder="passthrough")

    def as_float(d):
        return d.astype(float)

    def int64_na():
        X, y = base()
        X["b"] = pd.array(np.where(rng.uniform(size=n) < 0.2, None, x1), dtype="Int64")
        est = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
        return check(pdpboot.partial_dependence(est, X, ["b"]), est, X, "b")

    def boolean_na():
        X, y = base()
        X["b"] = pd.array(np.where(x1 == 0, None, x1 > 2), dtype="boolean")
        est = make_pipeline(FunctionTransformer(as_float), HistGradientBoostingRegressor(max_iter=10)).fit(X, y)
        return check(pdpboot.partial_dependence(est, X, ["b"]), est, X, "b")

    def string_pyarrow():
        X, y = base()
        X["c"] = pd.array(np.array(["lo", "mid", "hi"])[x1 % 3], dtype="string[pyarrow]")
        est = make_pipeline(onehot("c"), LinearRegression()).fit(X, y + x1 % 3)
        return check(pdpboot.partial_dependence(est, X, ["c"]), est, X, "c")

    def category_unused():
        X, y = base()
        X["c"] = pd.Categorical(np.array(["lo", "mid", "hi"])[x1 % 3], categories=["zz", "hi", "lo", "mid", "nn"])
        est = make_pipeline(onehot("c"), LinearRegression()).fit(X, y + x1 % 3)
        return check(pdpboot.partial_dependence(est, X, ["c"]), est, X, "c")

    def ordered_native():
        X, y = base()
        X["c"] = pd.Categorical(np.array(["lo", "mid", "hi"])[x1 % 3], categories=["lo", "mid", "hi"], ordered=True)
        est = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype").fit(X, y + 3 * (x1 % 3))
        return check(pdpboot.partial_dependence(est, X, ["c"]), est, X, "c")

    def datetime_tz():
        X, y = base()
        X["d"] = pd.date_range("2020-01-01", periods=n, freq="D", tz="Europe/Berlin")
        est = DecisionTreeRegressor(max_depth=3).fit(X[["a", "b"]], y)
        return pdpboot.partial_dependence(est, X, ["d"])  # expected: a clear refusal naming the conversion

    def multi_output():
        X, y = base()
        est = RandomForestRegressor(10, random_state=0).fit(X, np.column_stack([y, -2 * y + x1]))
        return check(pdpboot.partial_dependence(est, X, ["a"], grid=Grid(7)), est, X, "a")

    def multiclass():
        X, y = base()
        est = RandomForestClassifier(10, random_state=0).fit(X, np.array(["c", "a", "b"])[np.digitize(y, [1, 3])])
        res = pdpboot.partial_dependence(est, X, ["a"], grid=Grid(6))
        return check(res, est, X, "a", method="predict_proba")

    def multiclass_int():
        X, y = base()
        est = HistGradientBoostingClassifier(max_iter=10).fit(X, np.array([7, 3, 5])[np.digitize(y, [1, 3])])
        return check(pdpboot.partial_dependence(est, X, ["b"]), est, X, "b", method="predict_proba")

    def decision_function():
        X, y = base()
        est = LogisticRegression().fit(X, (y > 2).astype(int))
        res = pdpboot.partial_dependence(est, X, ["a"], response_method="decision_function", grid=Grid(5))
        return check(res, est, X, "a", method="decision_function")

    def zero_weights(method):
        def run():
            X, y = base()
            w = np.where(rng.uniform(size=n) < 0.5, 0.0, rng.uniform(size=n) * 3)
            est = DecisionTreeRegressor(max_depth=4).fit(X, y)
            res = pdpboot.partial_dependence(est, X, ["a"], sample_weight=w, grid=Grid(6), method=method)
            return check(res, est, X, "a", weights=w)
        return run

    def custom(values, feature="a"):
        def run():
            X, y = base()
            est = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
            return check(pdpboot.partial_dependence(est, X, [feature], grid=Grid(custom_values={feature: values})),
                         est, X, feature)
        return run

    def pair_cat_num():
        X, y = base()
        X["c"] = np.array(["lo", "mid", "hi"])[x1 % 3]
        est = make_pipeline(onehot("c"), RandomForestRegressor(10, random_state=0)).fit(X, y + x1 % 3)
        node = pdpboot.partial_dependence(est, X, [("c", "a")], grid=Grid(4))["c__a"]
        err = max(abs(est.predict(X.assign(c=ci, a=ai)).mean() - float(node["pd"].sel(c=ci, a=ai).squeeze()))
                  for ci in node["pd"]["c"].values for ai in node["pd"]["a"].values)
        assert err < 1e-8, err
        return f"max error {err:.1e}"

    def ice_rows():
        X, y = base()
        est = RandomForestRegressor(10, random_state=0).fit(X, y)
        ice = pdpboot.partial_dependence(est, X, ["a"], kind="individual", grid=Grid(4))["a"]["ice"]
        rows = ice["instance"].values
        err = max(np.max(np.abs(est.predict(X.loc[rows].assign(a=v)) - ice.isel(output=0).sel(a=v).values))
                  for v in ice["a"].values)
        assert err < 1e-8, err
        return f"max error {err:.1e}"

    for name, fn in [("Int64 with NA (HGB)", int64_na), ("boolean with NA", boolean_na),
                     ("string[pyarrow]", string_pyarrow), ("category with unused levels", category_unused),
                     ("ordered category, HGB native", ordered_native), ("datetime with tz", datetime_tz),
                     ("multi-output RF", multi_output), ("multiclass RF", multiclass),
                     ("multiclass HGB int labels", multiclass_int), ("binary decision_function", decision_function),
                     ("weights with zeros, brute", zero_weights("brute")),
                     ("weights with zeros, tree engine", zero_weights("tree")),
                     ("custom_values unsorted", custom([3.0, -1.0, 0.5])),
                     ("custom_values with NaN", custom([1.0, np.nan, 2.0])),
                     ("custom_values duplicates", custom([1.0, 1.0, 2.0])),
                     ("custom_values text on numeric (defect, refused now)", custom(["1", "2"])),
                     ("custom_values inf (defect, refused now)", custom([1.0, np.inf])),
                     ("pair categorical x numeric", pair_cat_num), ("ICE rows by label", ice_rows)]:
        case("api", name, fn)


# ----------------------------------------------------------------------------- checkpoints


def checkpoint_cases() -> None:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(3)
    n = 80
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 4, size=n).astype(float)})
    y = X.a + X.b + rng.normal(size=n) * 0.1

    def run(path, est=None, X=X, y=y, features=("a",), grid=None, **kw):
        grid = grid or {}
        est = est if est is not None else DecisionTreeRegressor(max_depth=3, random_state=0)
        return pdpboot.bootstrap_partial_dependence(
            est, X, y, list(features), n_resamples=4, rng=0, grid=Grid(5, **grid),
            execution=pdpboot.Execution(n_jobs=1, progress=False, checkpoint=path), **kw)

    def resumed(**changes):
        def go():
            folder = tempfile.mkdtemp()
            try:
                run(folder)
                try:
                    again = run(folder, **changes)
                except ValueError as exc:
                    assert "different arguments" in str(exc), str(exc)
                    return "refused: " + str(exc).split("(they differ in: ")[1].split(")")[0][:80]
                fresh = run(tempfile.mkdtemp(), **changes)
                for var in ("pd", "pd_resamples"):
                    assert np.array_equal(again["a"][var].values, fresh["a"][var].values), "stale checkpoint reused"
                return "resumed, equal to a fresh run"
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return go

    def doubled(d):
        return d * 2.0

    X2 = X.copy()
    X2.iloc[3, 0] += 1e-9
    Xi = X.copy()
    Xi.index = Xi.index[::-1]
    for name, changes in [("X value +1e-9", {"X": X2}), ("y + 1e-12", {"y": y + 1e-12}),
                          ("column order", {"X": X[["b", "a"]]}), ("index permuted", {"X": Xi}),
                          ("estimator param", {"est": DecisionTreeRegressor(max_depth=4, random_state=0)}),
                          ("pipeline function", {"est": make_pipeline(FunctionTransformer(doubled),
                                                                      DecisionTreeRegressor(max_depth=3))}),
                          ("custom grid", {"grid": {"custom_values": {"a": [0.0, 1.0]}}}),
                          ("percentiles", {"grid": {"percentiles": (0.1, 0.9)}}),
                          ("sample weights", {"sample_weight": np.full(n, 2.0)}),
                          ("features added", {"features": ("a", "b")}), ("X float32", {"X": X.astype("float32")}),
                          ("scheme", {"resampling": "subsample"}), ("statistics", {"statistics": "ice"}),
                          ("categorical of another feature", {"grid": {"categorical_features": ["b"]}})]:
        case("checkpoint", name, resumed(**changes))


# ----------------------------------------------------------------------------- CLI on fresh tables


def check_run_folder(folder: Path) -> str:
    """Reload every result file verified; every ICE value against the saved model's own predictions."""
    import joblib

    from pdpboot.workflow.data import load_problem
    from pdpboot.workflow.repro import read_config

    for path in sorted(folder.glob("*.nc")):
        pdpboot.load(path)
    config, data = read_config(folder)
    _, problem = load_problem(config, data)
    est = joblib.load(folder / "model.joblib")["estimator"]
    if not (folder / "results.nc").exists():
        return "ALE only: files reload verified"
    worst = 0.0
    for node in pdpboot.load(folder / "results.nc").children.values():
        features = list(node.attrs["features"])
        if len(features) != 1 or "ice" not in node.ds:
            continue
        f, ice = features[0], node.ds["ice"]
        for v in ice[f].values:
            Xc = problem.X.loc[ice["instance"].values].copy()
            if problem.X[f].dtype.kind in "iu":  # a grid value 35.76 of an integer column stays 35.76
                Xc[f] = v
            else:
                Xc[f] = pd.Series([v] * len(Xc), index=Xc.index).astype(problem.X[f].dtype)
            if problem.task == "classification":
                P, labels = est.predict_proba(Xc), [str(c) for c in est.classes_]
                cols = [labels.index(str(o)) for o in ice["output"].values]
            else:
                P = est.predict(Xc).reshape(len(Xc), -1)
                cols = list(range(P.shape[1]))
            for j, o in zip(cols, ice["output"].values):
                worst = max(worst, float(np.max(np.abs(ice.sel({f: v, "output": o}).values - P[:, j]))))
    assert worst < 1e-8, f"ICE differs from the saved model by {worst:.3g}"
    return f"files reload verified; ICE vs saved model max error {worst:.1e}"


CLI_RUNS = [  # (statsmodels dataset, arguments)
    ("grunfeld", ["--target", "invest", "--effect", "both"]),
    ("grunfeld", ["--target", "firm", "--model", "hist-gradient-boosting"]),
    ("modechoice", ["--target", "mode", "--model", "hist-gradient-boosting", "--categorical", "mode"]),
    ("modechoice", ["--target", "choice", "--model", "linear"]),
    ("fair", ["--target", "affairs", "--model", "xgboost", "--effect", "both"]),
    ("fair", ["--target", "occupation", "--model", "lightgbm"]),
    ("star98", ["--target", "NABOVE", "--uncertainty", "debiased", "--ice-samples", "0"]),
    ("heart", ["--target", "censors", "--effect", "ale"]),
    ("spector", ["--target", "GRADE", "--model", "gradient-boosting", "--effect", "both"]),
    ("fertility", ["--target", "2010", "--effect", "both"]),
    ("committee", ["--target", "BILLS104", "--uncertainty", "none"]),
    ("engel", ["--target", "foodexp", "--effect", "both", "--simultaneous"]),
    ("cpunish", ["--target", "EXECUTIONS", "--test-size", "0"]),
]
FAST = ["--n-resamples", "3", "--grid-resolution", "5", "--ice-samples", "8", "--n-jobs", "1", "-q"]


def cli_cases(out: Path) -> None:
    import statsmodels.api as sm

    out.mkdir(parents=True, exist_ok=True)
    for k, (name, args) in enumerate(CLI_RUNS):
        table = out / f"{name}.csv"
        getattr(sm.datasets, name).load_pandas().data.to_csv(table, index=False)
        given = [a for a in FAST if a not in args or a.startswith("--n")]
        if "--ice-samples" in args:
            given = [a for i, a in enumerate(FAST) if not (a == "--ice-samples" or FAST[i - 1] == "--ice-samples")]

        def go(table=table, args=args, given=given, k=k):
            start = time.time()
            proc = subprocess.run([sys.executable, "-m", "pdpboot", "run", str(table), *args, *given,
                                   "--out", str(out / f"run{k}")], capture_output=True, text=True)
            if proc.returncode:
                raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1][:200]}")
            folder = sorted((out / f"run{k}").glob("pdpboot_*"))[-1]
            return f"{check_run_folder(folder)} ({time.time() - start:.0f} s)"

        case("cli", f"{name} {' '.join(args)}", go)


# ----------------------------------------------------------------------------- argument checks (no fit needed)

# partial_dependence keyword arguments (grid_resolution etc.: those of its Grid)
ARGUMENTS = {  # -> expected: "refused" or "ok" (and then checked)
    "percentiles reversed": ({"percentiles": (0.95, 0.05)}, "refused"),
    "percentiles negative": ({"percentiles": (-0.1, 0.5)}, "refused"),
    "percentiles equal": ({"percentiles": (0.5, 0.5)}, "refused"),
    "percentiles three values": ({"percentiles": (0.1, 0.5, 0.9)}, "refused"),
    "percentiles (0, 1)": ({"percentiles": (0, 1)}, "ok"),
    "custom_values empty": ({"custom_values": {"a": []}}, "refused"),
    "custom_values other column": ({"custom_values": {"zzz": [1.0]}}, "refused"),
    "custom_values scalar": ({"custom_values": {"a": 1.0}}, "refused"),
    "custom_values one value": ({"custom_values": {"a": [1.0]}}, "ok"),
    "custom_values float on int column": ({"features": ["b"], "custom_values": {"b": [0.5, 1.5]}}, "ok"),
    "grid_resolution 1": ({"grid_resolution": 1}, "refused"),
    "grid_resolution 2.5": ({"grid_resolution": 2.5}, "refused"),
    "grid_resolution True": ({"grid_resolution": True}, "refused"),
    "features by position": ({"features": [0]}, "ok"),
    "features np.str_": ({"features": [np.str_("a")]}, "ok"),
    "features bare string": ({"features": "a"}, "ok"),
    "features triple": ({"features": [("a", "b", "c")]}, "refused"),
    "features same pair": ({"features": [("a", "a")]}, "refused"),
    "categorical_features mask": ({"features": ["b"], "categorical_features": [False, True, False]}, "ok"),
    "categorical_features position": ({"features": ["b"], "categorical_features": [1]}, "ok"),
    "categorical_features short mask": ({"features": ["b"], "categorical_features": [False, True]}, "refused"),
    "kind misspelt": ({"kind": "avg"}, "refused"),
    "predict_proba of a regressor": ({"response_method": "predict_proba"}, "refused"),
    "negative weights": ({"sample_weight": -np.ones(100)}, "refused"),
    "all-zero weights": ({"sample_weight": np.zeros(100)}, "refused"),
    "weights one short": ({"sample_weight": np.ones(99)}, "refused"),
    "NaN weight": ({"sample_weight": np.r_[np.ones(99), np.nan]}, "refused"),
    "max_ice_instances 0": ({"kind": "individual", "max_ice_instances": 0}, "refused"),
    "method tree on a linear model": ({"method": "tree"}, "refused"),
}


def argument_cases() -> None:
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=100), "b": rng.integers(0, 4, size=100), "c": rng.uniform(size=100)})
    est = LinearRegression().fit(X, X.a * 2 + X.b + X.c)

    def one(kw, expected):
        def go():
            kw2 = dict(kw)
            features = kw2.pop("features", ["a"])
            grid = {k: kw2.pop(k) for k in ("grid_resolution", "percentiles", "custom_values", "categorical_features")
                    if k in kw2}
            if "grid_resolution" in grid:
                grid["resolution"] = grid.pop("grid_resolution")
            try:
                res = pdpboot.partial_dependence(est, X, features, grid=Grid(**grid), **kw2)
            except (ValueError, TypeError) as exc:
                assert expected == "refused", f"refused: {exc}"
                assert "\n" not in str(exc).strip() and len(str(exc)) < 600, "not one clear line"
                return f"refused: {str(exc)[:120]}"
            assert expected == "ok", "accepted, expected a refusal"
            node = res[list(res.children)[0]]
            f = node.attrs["features"][0]
            if f in ("a", "b") and "pd" in node:
                return check(res, est, X, f, weights=kw2.get("sample_weight"))
            return "accepted"
        return go

    for name, (kw, expected) in ARGUMENTS.items():
        case("arguments", name, one(kw, expected))


def print_results(results: list[tuple[str, str, str, str]]) -> None:
    """One line per case (area | name | verdict | detail), then the count of each verdict."""
    for row in results:
        print(" | ".join(row))
    counts = pd.Series([r[2] for r in results]).value_counts().to_dict()
    print(f"{len(results)} cases: {counts}")


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    part = argv[0] if argv else "api"
    if part == "api":
        api_cases()
    elif part == "checkpoint":
        checkpoint_cases()
    elif part == "arguments":
        argument_cases()
    elif part == "cli":
        cli_cases(Path(argv[1] if len(argv) > 1 else tempfile.mkdtemp()))
    print_results(RESULTS)


if __name__ == "__main__":
    main(sys.argv[1:])
