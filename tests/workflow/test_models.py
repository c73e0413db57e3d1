"""Any model (issue 18, items 8-10): --model-spec parsed safely, --model-file, named XGBoost/LightGBM,
model.joblib, --groups, --threads-per-job and progress lines off a terminal."""

import joblib
import numpy as np
import pytest
from sklearn.linear_model import Ridge

import pdpboot
from pdpboot.workflow import InputError
from pdpboot.workflow.model import estimator_from_spec, parse_model_spec

from .helpers import FAST, bad, only_run_folder, regression_table, run_cli


def test_model_spec_is_parsed_not_evaluated():
    assert parse_model_spec("xgboost.XGBRegressor(max_depth=4, eta=0.1)") == (
        "xgboost", "XGBRegressor", {"max_depth": 4, "eta": 0.1})
    model = estimator_from_spec("sklearn.linear_model.Ridge(alpha=2.5, fit_intercept=False)")
    assert isinstance(model, Ridge) and model.alpha == 2.5 and model.fit_intercept is False
    assert type(estimator_from_spec("sklearn.tree.DecisionTreeRegressor")).__name__ == "DecisionTreeRegressor"


@pytest.mark.parametrize("spec, message", [
    ("os.system('echo hi')", "may name classes of"),
    ("sklearn.linear_model.Ridge(alpha=__import__('os').getcwd())", "must be a literal"),
    ("sklearn.linear_model.Ridge(alpha=1+1)", "must be a literal"),
    ("sklearn.linear_model.Ridge(1.0)", "keyword arguments only"),
    ("sklearn.linear_model.Ridge(**{'alpha': 1})", "name=value"),
    ("sklearn.utils._testing.Foo()", "private"),
    ("(lambda: 1)()", "dotted class name"),
    ("sklearn.linear_model.Ridge(alpha=", "not of the form"),
    ("sklearn.linear_model.NoSuchModel()", "has no class"),
    ("sklearn.linear_model.Ridge(nonsense=1)", "was refused"),
    ("sklearn.preprocessing.StandardScaler()", "cannot predict"),
])
def test_bad_model_specs_are_refused(spec, message):
    with pytest.raises(InputError, match=None) as exc:
        estimator_from_spec(spec)
    assert message in str(exc.value)


def test_model_spec_run_writes_model_joblib_and_progress(tmp_path, capsys):
    path = tmp_path / "t.csv"
    table = regression_table()
    table["clinic"] = np.repeat(np.arange(12), 10)
    table.to_csv(path, index=False)
    code, out = run_cli(["run", path, "--target", "y", "--model-spec", "sklearn.linear_model.Ridge(alpha=0.5)",
                         "--groups", "clinic", "--threads-per-job", "1", "--out", tmp_path / "o",
                         *[a for a in FAST if a != "--quiet"]], capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "o")
    bundle = joblib.load(folder / "model.joblib")
    model = bundle["estimator"]
    assert type(model.steps[-1][1]).__name__ == "Ridge" and model.steps[-1][1].alpha == 0.5
    assert bundle["features"] == ["x1", "count", "colour"] and bundle["versions"]["scikit-learn"]
    assert bundle["target"] == "y"
    res = pdpboot.load(folder / "results.nc")
    assert res.attrs["resampling"] == "group"  # the cluster bootstrap
    assert "clinic" not in bundle["features"]
    log = (folder / "run.log").read_text()
    assert "Bootstrap: 5/5 resamples (100 %)" in log  # off a terminal: progress lines in the log ...
    assert "Bootstrap: 5/5 resamples (100 %)" in out.err  # ... and on stderr


def test_model_file_and_named_boosting(tmp_path, capsys):
    path = tmp_path / "t.csv"
    regression_table().to_csv(path, index=False)
    joblib.dump(Ridge(alpha=3.0).fit(np.ones((3, 1)), [1, 2, 3]), tmp_path / "ridge.joblib")  # fitted: refitted
    code, out = run_cli(["run", path, "--target", "y", "--model-file", tmp_path / "ridge.joblib", "--features",
                         "x1,count", "--no-workbook", "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0, out.err
    model = joblib.load(only_run_folder(tmp_path / "o") / "model.joblib")["estimator"]
    assert model.steps[-1][1].alpha == 3.0 and model.steps[-1][1].n_features_in_ >= 2
    (tmp_path / "junk.joblib").write_bytes(b"not a pickle")
    err = bad(["run", path, "--target", "y", "--model-file", tmp_path / "junk.joblib"], capsys, tmp_path / "o2")
    assert "could not be loaded" in err
    err = bad(["run", path, "--target", "y", "--model-spec", "sklearn.linear_model.LogisticRegression()"], capsys,
              tmp_path / "o2")
    assert "gives a classifier" in err
    pytest.importorskip("lightgbm")
    code, out = run_cli(["run", path, "--target", "y", "--model", "lightgbm", "--features", "x1,count",
                         "--no-workbook", "--out", tmp_path / "o3", *FAST], capsys)
    assert code == 0, out.err
    model = joblib.load(only_run_folder(tmp_path / "o3") / "model.joblib")
    assert type(model["estimator"]).__name__ == "LGBMRegressor" and "lightgbm" in model["versions"]


@pytest.mark.parametrize("how", ["--model", "--model-spec"])
def test_xgboost_classifies_a_table_with_named_classes(tmp_path, capsys, how):
    """``--model xgboost`` (or ``--model-spec xgboost.XGBClassifier()``) on a target of names ('no'/'yes'):
    XGBoost takes only the labels 0..K-1 and the run failed ("Invalid classes inferred"); the labels are now
    coded for XGBoost and reported by name, and the ICE curves are the saved model's own probabilities."""
    import pandas as pd

    pytest.importorskip("xgboost")
    from .helpers import classification_table

    path = tmp_path / "t.csv"
    table = classification_table()
    table.to_csv(path, index=False)
    model = ["--model", "xgboost"] if how == "--model" else ["--model-spec", "xgboost.XGBClassifier(max_depth=3)"]
    code, out = run_cli(["run", path, "--target", "label", *model, "--features", "x1,size", "--no-workbook",
                         "--out", tmp_path / "o", *FAST], capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "o")
    bundle = joblib.load(folder / "model.joblib")
    est = bundle["estimator"]
    assert list(est.classes_) == ["no", "yes"] and set(est.predict(table[["x1", "size"]])) <= {"no", "yes"}
    node = pdpboot.load(folder / "results.nc")["size"].ds
    assert list(node["output"].values) == ["no", "yes"]
    rows = table.loc[node["instance"].values, ["x1", "size"]]
    for k, v in enumerate(node["size"].values):
        proba = est.predict_proba(pd.DataFrame({"x1": rows["x1"], "size": v}))
        np.testing.assert_allclose(node["ice"].isel(size=k).transpose("instance", "output").values, proba,
                                   rtol=0, atol=1e-6)


def test_the_tree_engine_reads_the_labelled_xgboost_classifier():
    """The command line's XGBoost classifier keeps XGBoost's predict_proba: the tree engine reads it (exact)."""
    pytest.importorskip("xgboost")
    from pdpboot.engine import compute_pd
    from pdpboot.workflow.xgb_labels import LabelledXGBClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.array(["lo", "mid", "hi"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
    est = LabelledXGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(X, y)
    grid = np.linspace(-2, 2, 9)
    tree, _ = compute_pd(est, X, [0], [grid], response_method="predict_proba", method="tree")
    ref = []
    for v in grid:
        Z = X.copy()
        Z[:, 0] = v
        ref.append(est.predict_proba(Z).mean(axis=0))
    np.testing.assert_allclose(tree, np.array(ref).T, rtol=0, atol=1e-5)  # float32 probabilities


# ----------------------------------------------------------------------------- bring your own fitted model


def _users_pipeline(tmp_path):
    """A table with a column the model never saw, and the user's fitted Pipeline selecting columns by name."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(3)
    n = 120
    table = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(size=n),
                          "colour": rng.choice(["red", "green", "blue"], n), "unused": rng.normal(size=n)})
    table["price"] = table["x1"] + 3 * (table["colour"] == "red") + rng.normal(0, 0.5, n)
    model = Pipeline([
        ("prep", ColumnTransformer([("num", "passthrough", ["x1", "x2"]),
                                    ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour"])])),
        ("forest", RandomForestRegressor(n_estimators=10, random_state=0)),
    ]).fit(table[["x1", "x2", "colour"]], table["price"])
    data, path = tmp_path / "table.csv", tmp_path / "fitted_pipeline.joblib"
    table.to_csv(data, index=False)
    joblib.dump(model, path)
    return table, model, data, path


def test_users_fitted_pipeline_is_used_as_it_is(tmp_path, capsys):
    """Issue 26 B.10: a Pipeline whose ColumnTransformer selects columns by name is cloned whole for the
    refits and fed the DataFrame columns it was fitted on (the CLI's own encoding used to wrap it)."""
    _, _, data, path = _users_pipeline(tmp_path)
    code, out = run_cli(["run", data, "--target", "price", "--model-file", path, "--out", tmp_path / "o", *FAST],
                        capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    assert [tuple(n.attrs["features"]) for n in res.children.values()] == [("x1",), ("x2",), ("colour",)]
    assert "pd_band" in res["x1"].ds
    bundle = joblib.load(folder / "model.joblib")
    assert type(bundle["estimator"]).__name__ == "Pipeline"
    assert list(bundle["estimator"].named_steps) == ["prep", "forest"]  # the user's own steps, nothing around
    assert "used as it is" in (folder / "summary.md").read_text()


def test_one_fit_mode_uses_the_fitted_model_without_refits(tmp_path, capsys):
    table, model, data, path = _users_pipeline(tmp_path)
    code, out = run_cli(["run", data, "--target", "price", "--model-file", path, "--effect", "both",
                         "--out", tmp_path / "o", *FAST, "--n-resamples", "0"], capsys)  # the last one wins
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    node = res["x1"].ds
    assert list(node["output"].values) == ["price"]  # named after the target, as in a bootstrap run
    assert "pd_band" not in node and "pd_resamples" not in node and "ice" in node
    # the PD of the given fitted model itself (no refit), averaged over every row of the table
    X = table[["x1", "x2", "colour"]]
    for value, pd_value in zip(node["x1"].values, node["pd"].values[0]):
        assert pd_value == pytest.approx(model.predict(X.assign(x1=value)).mean(), rel=1e-12)
    assert "ale" in pdpboot.load(folder / "ale.nc")["x1"].ds
    summary = (folder / "summary.md").read_text()
    assert "no refits" in summary and "not a held-out score" in summary
    assert "[" not in summary.split("## Features ranked by the range of their PD curve")[1].split("## Files")[0]


def test_model_file_columns_and_other_features_are_refused(tmp_path, capsys):
    _, _, data, path = _users_pipeline(tmp_path)
    err = bad(["run", data, "--target", "price", "--model-file", path, "--features", "x1,unused"], capsys,
              tmp_path / "o")
    assert "fitted on the columns" in err and "'x2'" in err


def test_a_fitted_model_that_cannot_take_the_table_is_refused_before_any_prediction(tmp_path, capsys):
    """One-fit mode with a fitted --model-file: a model fitted on an array of 2 numeric columns, given a
    table of 3 features (one text), exited 1 "could not convert string to float"; a classifier of the classes
    0/1 given a yes/no target exited 1 "Mix of label input types" after predicting.  Now exit 2 in one line."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80),
                          "colour": rng.choice(["red", "blue"], 80)})
    table["y"] = table.a + table.b
    table["label"] = np.where(table.a > 0, "yes", "no")
    data = tmp_path / "t.csv"
    table.to_csv(data, index=False)
    array_model, classes = tmp_path / "array.joblib", tmp_path / "classes.joblib"
    joblib.dump(LinearRegression().fit(table[["a", "b"]].to_numpy(), table.y), array_model)
    joblib.dump(RandomForestClassifier(5, random_state=0).fit(table[["a", "b"]], (table.a > 0).astype(int)), classes)
    one_fit = ["--uncertainty", "none", "--no-workbook"]
    err = bad(["run", data, "--target", "y", "--exclude", "label", "--model-file", array_model, *one_fit], capsys,
              tmp_path / "o1")
    assert "fitted on 2 unnamed columns" in err and "with --features" in err
    err = bad(["run", data, "--target", "y", "--features", "a,colour", "--model-file", array_model, *one_fit], capsys,
              tmp_path / "o2")
    assert "'colour'" in err and "not numeric" in err
    err = bad(["run", data, "--target", "label", "--model-file", classes, *one_fit], capsys, tmp_path / "o3")
    assert "classes [0, 1]" in err and "['no', 'yes']" in err
    # the array model with its own two columns runs: its PD is its own (by hand)
    code, out = run_cli(["run", data, "--target", "y", "--features", "a,b", "--model-file", array_model, *one_fit,
                         "--grid-resolution", "4", "--ice-samples", "0", "--quiet", "--out", tmp_path / "o4"], capsys)
    assert code == 0, out.err
    node = pdpboot.load(only_run_folder(tmp_path / "o4") / "results.nc")["a"].ds
    model = joblib.load(array_model)
    for value, pd_value in zip(node["a"].values, node["pd"].values[0]):
        assert pd_value == pytest.approx(model.predict(table[["a", "b"]].assign(a=value).to_numpy()).mean(),
                                         rel=1e-12)


def test_refits_without_a_rare_class_are_named_in_the_summary(tmp_path, capsys):
    """A class of one row: some refits never see it and give it probability 0 (its band reaches 0); the run
    said nothing.  summary.md now counts those refits (by hand: resamples whose rows miss that row)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    table["label"] = np.where(table.a > 0, "high", "low")
    table.loc[0, "label"] = "rare"
    data = tmp_path / "t.csv"
    table.to_csv(data, index=False)
    code, out = run_cli(["run", data, "--target", "label", "--model", "random-forest", "--test-size", "0",
                         "--n-resamples", "20", "--n-estimators", "5", "--grid-resolution", "4", "--ice-samples", "0",
                         "--n-jobs", "1", "--quiet", "--no-workbook", "--out", tmp_path / "o"], capsys)
    assert code == 0, out.err
    folder = only_run_folder(tmp_path / "o")
    res = pdpboot.load(folder / "results.nc")
    lacking = int(res.attrs["n_missing_class_resamples"])
    if "resample_absent" in res.ds:  # by hand: the resamples whose rows miss the 'rare' row (bootstrap scheme)
        absent = np.unpackbits(res["resample_absent"].values, axis=1, count=len(table))
        assert lacking == int(absent[:, 0].sum())
    assert lacking > 0 and f"{lacking} of 20 refits drew no training row of some class" in (
        folder / "summary.md").read_text()
