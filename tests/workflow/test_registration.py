"""A new effect or uncertainty strategy of the command line is its own module plus one registration line:
``--effect`` and ``--uncertainty`` offer whatever the registries hold, with nothing else to edit."""

from __future__ import annotations

import dataclasses

import pytest

from pdpboot import cli
from pdpboot.workflow import InputError, registry, strategy
from pdpboot.workflow.options import BY_KEY, merge


def _choices(parser, dest: str) -> tuple:
    run = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(" run"))
    return tuple(next(a for a in run._actions if a.dest == dest).choices)


def test_a_registered_effect_and_strategy_appear_in_the_parser(monkeypatch):
    toy_effect = dataclasses.replace(registry.EFFECTS["ale"], name="toy", label="Toy", file="toy.nc")
    toy_strategy = dataclasses.replace(strategy.STRATEGIES["none"], name="toy-fit")
    before = _choices(cli._parser(), "effect"), _choices(cli._parser(), "uncertainty")
    assert "toy" not in before[0] and "toy-fit" not in before[1]
    monkeypatch.setitem(registry.EFFECTS, "toy", toy_effect)  # the one registration line of each
    monkeypatch.setitem(strategy.STRATEGIES, "toy-fit", toy_strategy)
    parser = cli._parser()
    assert "toy" in _choices(parser, "effect") and "toy-fit" in _choices(parser, "uncertainty")
    args = parser.parse_args(["run", "t.csv", "--target", "y", "--effect", "toy", "--uncertainty", "toy-fit"])
    assert (args.effect, args.uncertainty) == ("toy", "toy-fit")
    config = merge({"target": "y", "effect": "toy", "uncertainty": "toy-fit"}, {})  # config files too
    assert (config.effect, config.uncertainty) == ("toy", "toy-fit")
    assert [r.name for r in registry.requested(config)] == ["toy"]
    assert strategy.strategy_for(config) is toy_strategy


def test_an_unregistered_effect_is_refused_with_the_registered_ones():
    with pytest.raises(InputError, match=r"must be one of pd, ale, both; got 'toy'"):
        merge({"target": "y", "effect": "toy"}, {})
    assert BY_KEY["effect"].allowed == (*registry.EFFECTS, "both")
