"""``report.origin.run_config``: the one reader of the ``cli_config`` a command-line run records."""

from __future__ import annotations

import json

from pdpboot.report.origin import describe_origin, run_config, run_identity


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
