"""RunConfig: one field per option, frozen, checked when built from a stored config.json."""

import dataclasses
import json
import typing

import pytest

from pdpboot.workflow import InputError
from pdpboot.workflow.options import OPTIONS, RUN_FIELDS, RunConfig, defaults, field_type, merge


def test_run_config_fields_are_the_options_table():
    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert names == [o.key for o in OPTIONS] + [name for name, _ in RUN_FIELDS]


def test_run_config_field_types_are_the_options_table():
    """The literal dataclass (visible to editors and type checkers) and the table agree on every type:
    an option's field has the type its value converts to, optional exactly when its default is None."""
    hints = typing.get_type_hints(RunConfig)
    for option in OPTIONS:
        kind = field_type(option)
        expected = kind | None if option.default is None else kind
        assert hints[option.key] == expected, option.key
        assert option.default is None or isinstance(option.default, kind), option.key
    for name, kind in RUN_FIELDS:
        assert hints[name] == kind | None, name
    fields = {f.name: f for f in dataclasses.fields(RunConfig)}
    assert all(f.kw_only for f in fields.values())
    with pytest.raises(TypeError):  # an option without a value is an error, not a silent None
        RunConfig(target="y")


def test_run_config_is_frozen_and_misspelt_fields_fail():
    config = merge({"target": "y"}, {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.target = "z"
    with pytest.raises(AttributeError):
        config.n_resampels  # noqa: B018 - the point of the test
    assert config.n_resamples == defaults()["n_resamples"]


def test_run_config_round_trips_through_json():
    config = merge({"target": "y", "pairs": ["a:b"], "labels": ["a=Alpha"], "level_order": ["e=lo,mid,hi"]},
                   {"units": {"a": "°C"}})
    again = RunConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    assert again.level_order == {"e": ["lo", "mid", "hi"]} and again.units == {"a": "°C"}


@pytest.mark.parametrize("change, message", [
    ({"modle": "linear"}, "unknown option 'modle'. Did you mean 'model'"),
    ({"model": "nonsense"}, "must be one of"),
    ({"n_resamples": 1}, "at least 2"),
    ({"versions": "3.0"}, "'versions' must be a dict"),
    ({"x" * 500: 1}, "..."),
])
def test_stored_config_is_validated(change, message):
    raw = {**merge({"target": "y"}, {}).to_dict(), **change}
    with pytest.raises(InputError, match=None) as exc:
        RunConfig.from_dict(raw)
    assert message in str(exc.value)
    assert len(str(exc.value)) < 300  # long names are cut in messages


def test_effect_choices_are_the_registered_effects():
    """--effect offers exactly the registered effects (and "both"); each registered effect names its file,
    summary section, plots and sheets, and every strategy it lists exists."""
    from pdpboot.workflow.options import BY_KEY
    from pdpboot.workflow.strategy import EFFECTS, STRATEGIES

    assert set(BY_KEY["effect"].allowed) - {"both"} == set(EFFECTS)
    assert set(BY_KEY["uncertainty"].allowed) == set(STRATEGIES)
    assert len({e.file for e in EFFECTS.values()}) == len(EFFECTS)
    for effect in EFFECTS.values():
        assert set(effect.compute) <= set(STRATEGIES) and "bootstrap" in effect.compute
        assert callable(effect.summary) and callable(effect.plots) and effect.variable in effect.sheet_variables
