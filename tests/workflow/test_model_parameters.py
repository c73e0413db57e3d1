"""Every parameter of the run's model is checked before the first fit (issue 26, third round, item 1):
exit 2 with one line naming the parameter, nothing fitted, nothing written."""

import joblib
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from .helpers import FAST, bad, regression_table, run_cli


@pytest.fixture()
def table(tmp_path):
    path = tmp_path / "t.csv"
    regression_table().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("spec, parameter", [
    ("sklearn.linear_model.Ridge(alpha=-1)", "alpha"),  # scikit-learn's declared constraint
    ("sklearn.ensemble.RandomForestRegressor(max_samples=0.5, bootstrap=False)", "bootstrap"),  # checked in fit
    ("sklearn.ensemble.HistGradientBoostingRegressor(max_iter=0)", "max_iter"),
    ("xgboost.XGBRegressor(max_depth=-1)", "max_depth"),  # XGBoost checks in C++ when fitting
    ("xgboost.XGBRegressor(learning_rte=0.1)", "learning_rte"),  # misspelt: XGBoost would ignore it
    ("lightgbm.LGBMRegressor(num_leaves=1)", "num_leaves"),
    ("lightgbm.LGBMRegressor(num_leafs=8)", "num_leafs"),  # misspelt: LightGBM only prints a warning
    ("catboost.CatBoostRegressor(depth=30, verbose=0)", "depth"),
    ("catboost.CatBoostRegressor(learning_rate=-1, verbose=0)", "learning_rate"),  # CatBoost fails writing JSON
])
def test_bad_model_parameters_exit_2_before_any_fit(table, tmp_path, capsys, spec, parameter, monkeypatch):
    import pdpboot.workflow.strategy as compute

    def no_split(*args, **kwargs):
        raise AssertionError("the run went on to split and fit")

    monkeypatch.setattr(compute, "split", no_split)
    err = bad(["run", table, "--target", "y", "--model-spec", spec, *FAST], capsys, tmp_path / "o")
    assert parameter in err.split(":", 2)[2] and ("Change" in err or "correct or remove" in err), err


def test_nested_parameter_of_a_model_file_pipeline_is_checked(table, tmp_path, capsys):
    path = tmp_path / "m.joblib"
    joblib.dump(make_pipeline(FunctionTransformer(), RandomForestRegressor(n_estimators=-3)), path)
    err = bad(["run", table, "--target", "y", "--features", "x1,count", "--model-file", path, *FAST], capsys,
              tmp_path / "o")
    assert "n_estimators" in err and "RandomForestRegressor" in err, err


@pytest.mark.parametrize("spec", ["lightgbm.LGBMRegressor(min_data_in_leaf=3, n_estimators=5, verbose=-1)",
                                  "xgboost.XGBRegressor(n_estimators=5, eta=0.3)"])
def test_valid_parameters_and_aliases_run(table, tmp_path, capsys, spec):
    code, out = run_cli(["run", table, "--target", "y", "--model-spec", spec, "--out", tmp_path / "o", *FAST],
                        capsys)
    assert code == 0, out.err


def test_native_fatal_lines_are_hidden_from_a_refusal(table, tmp_path, capfd):
    """LightGBM prints '[LightGBM] [Fatal] ...' on file descriptor 2 before raising: the refusal is one line."""
    code, out = run_cli(["run", table, "--target", "y", "--model-spec", "lightgbm.LGBMRegressor(bagging_fraction=1.5)",
                         "--out", tmp_path / "o", *FAST], capfd)
    assert code == 2
    err = out.err.strip()
    assert err.startswith("pdpboot: error: ") and "\n" not in err and "bagging_fraction" in err, err
