"""Typed settings: one spec per algorithm that matches what it declares, typed values, ranges,
no non-finite numbers, one line naming the key and the allowed range."""

import math

import pytest

from learning.algorithms import ALGORITHMS
from scenarios.errors import UsageError
from scenarios.definitions.registry import SCENARIOS
from scenarios.definitions.settings import RUN_SETTINGS, Setting


def test_every_algorithm_option_is_typed_and_documented():
    for name, cls in ALGORITHMS.items():
        options = cls.Options
        assert set(options.settings()) == set(options.defaults()) == set(options.docs()), name
        assert all(options.docs().values()), name
        assert options.resolve(options.defaults(), owner=name).as_dict() == options.defaults()  # the defaults are allowed


def test_scenario_defaults_are_allowed():
    for scenario in SCENARIOS.values():
        for algorithm, options in scenario.algorithm_options.items():
            ALGORITHMS[algorithm].Options.resolve({}, options, owner=algorithm)


@pytest.mark.parametrize("setting,value,message", [
    (Setting(int, low=1), 2.7, "x must be an integer in 1..10000, got 2.7"),
    (Setting(int, low=1), True, "x must be an integer in 1..10000, got True"),
    (Setting(int, low=1, high=5), 6, "x must be an integer in 1..5, got 6"),
    (Setting(float, low=0), math.nan, "x must be a finite number >= 0, got nan"),
    (Setting(float, low=0), math.inf, "x must be a finite number >= 0, got inf"),
    (Setting(float, low=0, high=1, low_open=True), 0.0, "x must be a finite number in (0, 1], got 0.0"),
    (Setting(float, low=0, low_open=True), "fast", "x must be a finite number > 0, got 'fast'"),
    (Setting(str, choices=("a", "b")), "c", "x must be one of a, b, got 'c'"),
    (Setting(int, low=1, choices=("auto",)), "many", "x must be an integer in 1..10000 or 'auto', got 'many'"),
    (Setting(bool), 1, "x must be true or false, got 1"),
    (Setting(float), None, "x must be a finite number, got none"),
])
def test_refusals_name_the_key_and_the_range(setting, value, message):
    with pytest.raises(UsageError) as error:
        setting.check("x", value)
    assert str(error.value) == message


def test_values_are_converted_to_their_kind():
    assert Setting(float, low=0).check("x", 2) == 2.0 and isinstance(Setting(float).check("x", 2), float)
    assert Setting(int, low=1, choices=("auto",)).check("x", "auto") == "auto"
    assert Setting(int, none=True).check("x", None) is None
    assert RUN_SETTINGS["seed"].check("seed", 2**40) == 2**40


def test_unknown_option_names_the_known_ones():
    with pytest.raises(UsageError, match="fedprox has no option 'nu'; its options: mu"):
        ALGORITHMS["fedprox"].Options.resolve({"nu": 1.0}, owner="fedprox")
