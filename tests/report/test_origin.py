"""``report.figures.run_config``: the one reader of the ``cli_config`` a command-line run records."""

from __future__ import annotations

import json

from pdpboot.report.figures import describe_origin, run_config, run_identity


def test_run_config_is_the_one_reader_of_cli_config():
    recorded = {"cli_config": json.dumps({"data": "t.csv", "created": "2026-01-01T00:00:00", "labels": {}})}
    assert run_config(recorded) == {"data": "t.csv", "created": "2026-01-01T00:00:00", "labels": {}}
    assert run_config({"created": "t"}) == {} and run_config({"cli_config": ""}) == {}
    assert describe_origin(recorded) == "pdpboot run of 't.csv' created 2026-01-01T00:00:00"
    # a damaged record is still a run's, and two different damaged records are two runs
    assert run_identity({"cli_config": "{a"}) != run_identity({"cli_config": "{b"})
    assert run_identity({"cli_config": "{a"}).startswith("run ")
    assert describe_origin({"cli_config": "{a", "created": "t0"}) == "pdpboot run of None created t0"
    # key order of the recorded JSON does not make two runs
    assert run_identity({"cli_config": '{"a": 1, "b": 2}'}) == run_identity({"cli_config": '{"b": 2, "a": 1}'})


def test_learner_family_is_decided_from_classes():
    import pytest
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from pdpboot.header import ResultHeader, learner_family

    assert learner_family(make_pipeline(StandardScaler(), make_pipeline(GradientBoostingRegressor()))) == \
        "gradient boosting"
    assert learner_family(RandomForestClassifier()) is None
    for module, name in (("xgboost", "XGBClassifier"), ("lightgbm", "LGBMRegressor"),
                         ("catboost", "CatBoostClassifier")):
        lib = pytest.importorskip(module)
        assert learner_family(getattr(lib, name)()) == "gradient boosting", name
    lookalike = type("XGBClassifier", (StandardScaler,), {})  # the name alone, from another module
    assert learner_family(lookalike()) is None
    header = ResultHeader.describe(GradientBoostingRegressor(), {}, response="predict", outputs=["y"], n_rows=3)
    assert header.to_attrs()["learner_family"] == "gradient boosting"
    assert ResultHeader.from_attrs(header.to_attrs()).learner_family == "gradient boosting"
    plain = ResultHeader.describe(StandardScaler(), {}, response="predict", outputs=["y"], n_rows=3)
    assert "learner_family" not in plain.to_attrs()
