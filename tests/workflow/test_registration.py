"""A new effect or uncertainty strategy of the command line is its own module plus one registration line:
``--effect`` and ``--uncertainty`` offer whatever the registries hold, with nothing else to edit."""

from __future__ import annotations

import dataclasses

import pytest

from pdpboot import cli
from pdpboot.workflow import InputError, strategy
from pdpboot.workflow.options import BY_KEY, merge


def test_a_registered_effect_and_strategy_appear_in_the_parser(monkeypatch):
    toy_effect = dataclasses.replace(strategy.EFFECTS["ale"], name="toy", label="Toy", file="toy.nc")
    toy_strategy = dataclasses.replace(strategy.STRATEGIES["none"], name="toy-fit")
    assert "toy" not in BY_KEY["effect"].allowed and "toy-fit" not in BY_KEY["uncertainty"].allowed
    monkeypatch.setitem(strategy.EFFECTS, "toy", toy_effect)  # the one registration line of each
    monkeypatch.setitem(strategy.STRATEGIES, "toy-fit", toy_strategy)
    assert "toy" in BY_KEY["effect"].allowed and "toy-fit" in BY_KEY["uncertainty"].allowed
    args = cli._parser().parse_args(["run", "t.csv", "--target", "y", "--effect", "toy", "--uncertainty", "toy-fit"])
    config = cli._config(args, None)  # the command line's values, checked against the registries
    assert (config.effect, config.uncertainty) == ("toy", "toy-fit")
    assert (config.effect, config.uncertainty) == ("toy", "toy-fit")
    assert [r.name for r in strategy.requested(config)] == ["toy"]
    assert strategy.strategy_for(config) is toy_strategy


def test_an_unregistered_effect_is_refused_with_the_registered_ones():
    with pytest.raises(InputError, match=r"must be one of pd, ale, both; got 'toy'"):
        merge({"target": "y", "effect": "toy"}, {})
    with pytest.raises(InputError, match=r"must be one of bootstrap, none, debiased; got 'boostrap'.*'bootstrap'"):
        merge({"target": "y", "uncertainty": "boostrap"}, {})
    assert BY_KEY["effect"].allowed == (*strategy.EFFECTS, "both")


def test_a_strategy_brings_its_compute_defaults_and_refusals_in_its_one_entry(monkeypatch, tmp_path, capsys):
    """A strategy's own effect computations, config defaults and refusals live in its ``STRATEGIES`` entry:
    registering it is the one line; no effect report and no option code names it."""
    from pdpboot.workflow import effect_pd

    from .helpers import only_run_folder, regression_table, run_cli

    calls = []

    def toy_pd(ctx, sets, common):  # one fit's PD, recorded so the test sees it ran
        calls.append(sorted(map(str, sets)))
        return effect_pd.REPORT.compute["none"](ctx, sets, common)

    def toy_defaults(config, given):
        if "grid_resolution" not in given:
            config["grid_resolution"] = 5

    def toy_check(config):
        if config["interactions"]:
            raise InputError("--uncertainty toy-fit has no H statistics: drop --interactions.")

    toy = dataclasses.replace(strategy.STRATEGIES["none"], name="toy-fit", compute={"pd": toy_pd},
                              defaults=toy_defaults, check_config=toy_check)
    monkeypatch.setitem(strategy.STRATEGIES, "toy-fit", toy)  # the one registration line
    assert "toy-fit" not in effect_pd.REPORT.compute
    assert merge({"target": "y", "uncertainty": "toy-fit"}, {}).grid_resolution == 5
    assert merge({"target": "y", "uncertainty": "toy-fit", "grid_resolution": 7}, {}).grid_resolution == 7
    with pytest.raises(InputError, match="toy-fit has no H statistics"):
        merge({"target": "y", "uncertainty": "toy-fit", "interactions": 50}, {})
    data = tmp_path / "t.csv"
    regression_table().to_csv(data, index=False)
    code, out = run_cli(["run", data, "--target", "y", "--uncertainty", "toy-fit", "--effect", "pd",
                         "--n-estimators", "10", "--no-workbook", "--quiet", "--out", tmp_path / "out"], capsys)
    assert code == 0, out.err
    assert calls, "the strategy's own compute did not run"
    res = __import__("pdpboot").load(only_run_folder(tmp_path / "out") / "results.nc")
    assert next(iter(res.children.values()))["pd"].sizes[next(iter(res.children))] == 5  # its default applied
