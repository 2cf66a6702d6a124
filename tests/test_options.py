"""An algorithm's options are declared once (a frozen dataclass): the checks, the listing, the
config record and the label follow from it; an option without effect under the run's other
options is refused, naming the option it needs."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import Literal

import pytest

from learning.algorithms import ALGORITHMS
from learning.options import OptionError, Options, option
from scenarios.errors import UsageError
from scenarios.execution.runner import prepare, resolve
from scenarios.execution.spec import RunSpec, run_label


@dataclass(frozen=True)
class Example(Options):
    rate: float = option(0.5, "a rate", low=0, high=1, high_open=True)
    count: int | None = option(None, "a count (none: all)", low=1)
    mode: Literal["fast", "slow"] = option("fast", "how")
    k: int | Literal["auto"] | None = option(None, "k", low=2)
    detail: float = option(1.0, "only when slow", low=0, requires={"mode": "slow"})


def test_settings_follow_the_annotations():
    allowed = {name: s.allowed() + (" or none" if s.none else "") for name, s in Example.settings().items()}
    assert allowed == {"rate": "a finite number in [0, 1)", "count": "an integer in 1..10000 or none", "mode": "one of fast, slow",
                       "k": "an integer in 2..10000 or 'auto' or none", "detail": "a finite number >= 0"}
    assert Example.defaults() == {"rate": 0.5, "count": None, "mode": "fast", "k": None, "detail": 1.0}


def test_values_are_checked_and_converted_once_at_construction():
    options = Example(rate=0, k="auto")
    assert options.rate == 0.0 and isinstance(options.rate, float) and options.k == "auto"
    with pytest.raises(FrozenInstanceError):
        options.rate = 0.2
    with pytest.raises(OptionError, match=r"^option rate must be a finite number in \[0, 1\), got 1$"):
        Example(rate=1)
    with pytest.raises(ValueError, match="option mode must be one of fast, slow, got 'medium'"):
        Example(mode="medium")  # an OptionError is a ValueError for Python callers and a UsageError for the CLI
    assert issubclass(OptionError, UsageError)


def test_resolve_names_the_owner_and_refuses_unknown_keys():
    assert Example.resolve({"count": 3}, {"rate": 0.25}, owner="ex").as_dict() == {**Example.defaults(), "count": 3, "rate": 0.25}
    with pytest.raises(OptionError, match="^ex has no option 'speed'; its options: rate, count, mode, k, detail$"):
        Example.resolve({"speed": 1}, owner="ex")
    with pytest.raises(OptionError, match="^ex option count must be an integer in 1..10000, got 0$"):
        Example.resolve({"count": 0}, owner="ex")


def test_an_option_without_effect_is_refused_naming_what_it_needs():
    with pytest.raises(OptionError, match="^ex option detail has an effect only with mode='slow' .this run has mode='fast'.$"):
        Example.resolve({"detail": 2.0}, owner="ex")
    assert Example.resolve({"detail": 2.0, "mode": "slow"}).detail == 2.0
    assert Example.resolve({"detail": 1.0}).detail == 1.0  # its default: the same run


@pytest.mark.parametrize("options, needs", [
    ({"silhouette_loss": 0.2}, "formation='channel'"),
    ({"variance_divisor": 4.0}, "variance_batches='reference'"),
    ({"variance_batches": "reference", "variance_batch_fraction": 0.5}, "variance_batches='disjoint'"),
    ({"streams": 4, "lam": 0.1}, "streams='auto'"),
])
def test_user_centric_refuses_options_without_effect(options, needs):
    with pytest.raises(UsageError, match=f"user-centric option .* has an effect only with {needs}"):
        prepare(resolve(RunSpec("digits-rotation", "user-centric", rounds=1, options=options)))


def test_an_option_given_at_its_default_leaves_the_run_and_its_folder_unchanged():
    plain = prepare(resolve(RunSpec("digits-rotation", "user-centric", rounds=1, options={"streams": 2})))
    given = prepare(resolve(RunSpec("digits-rotation", "user-centric", rounds=1, options={"streams": 2, "silhouette_loss": 0.05})))
    assert given.name == plain.name and given.config == plain.config
    assert plain.config["algorithm_options"] == {**ALGORITHMS["user-centric"].Options.defaults(), "streams": 2,
                                                 "variance_batch_fraction": 0.6}  # the scenario's eq. 10 default


def test_labels_come_from_the_options_declaration():
    assert run_label(RunSpec("digits-rotation", "fedprox", options={"mu": 1.0})) == "fedprox"
    assert resolve(RunSpec("digits-rotation", "user-centric", options={"streams": "auto"})).label == "user-centric k=auto"
    assert resolve(RunSpec("digits-rotation", "parallel-user-centric")).label == "parallel-user-centric k=m"
