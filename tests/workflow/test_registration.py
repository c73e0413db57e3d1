"""A new effect or uncertainty strategy of the command line is its own module plus one registration line:
``--effect`` and ``--uncertainty`` offer whatever the registries hold, with nothing else to edit."""

from __future__ import annotations

import dataclasses

import pytest

from pdpboot import cli
from pdpboot.workflow import InputError, registry, strategy
from pdpboot.workflow.options import BY_KEY, merge


def test_a_registered_effect_and_strategy_appear_in_the_parser(monkeypatch):
    toy_effect = dataclasses.replace(registry.EFFECTS["ale"], name="toy", label="Toy", file="toy.nc")
    toy_strategy = dataclasses.replace(strategy.STRATEGIES["none"], name="toy-fit")
    assert "toy" not in BY_KEY["effect"].allowed and "toy-fit" not in BY_KEY["uncertainty"].allowed
    monkeypatch.setitem(registry.EFFECTS, "toy", toy_effect)  # the one registration line of each
    monkeypatch.setitem(strategy.STRATEGIES, "toy-fit", toy_strategy)
    assert "toy" in BY_KEY["effect"].allowed and "toy-fit" in BY_KEY["uncertainty"].allowed
    args = cli._parser().parse_args(["run", "t.csv", "--target", "y", "--effect", "toy", "--uncertainty", "toy-fit"])
    config = cli._config(args, None)  # the command line's values, checked against the registries
    assert (config.effect, config.uncertainty) == ("toy", "toy-fit")
    assert (config.effect, config.uncertainty) == ("toy", "toy-fit")
    assert [r.name for r in registry.requested(config)] == ["toy"]
    assert strategy.strategy_for(config) is toy_strategy


def test_an_unregistered_effect_is_refused_with_the_registered_ones():
    with pytest.raises(InputError, match=r"must be one of pd, ale, both; got 'toy'"):
        merge({"target": "y", "effect": "toy"}, {})
    with pytest.raises(InputError, match=r"must be one of bootstrap, ij, none, debiased; got 'boostrap'.*'bootstrap'"):
        merge({"target": "y", "uncertainty": "boostrap"}, {})
    assert BY_KEY["effect"].allowed == (*registry.EFFECTS, "both")
