"""Every setting a run takes, typed and range-checked in one place.

Algorithm options (one spec per algorithm, keyed as the algorithm declares them in its
``defaults``), the run's knobs (rounds, seed, evaluation period, participation), the
network's (``rho``, ``T_min``, ``1/mu``, deadline, mode) and the bounds a machine can hold.
A bad value gets one line naming the key and the allowed range; non-finite numbers are
always refused, so no NaN or infinity reaches a result file.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from scenarios.errors import UsageError

MAX_ROUNDS = 100_000  # every round's record and plan are kept in memory and written out
MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; this keeps it a JSON/CSV int
MAX_ROUND_TIME_DEVICES = 1_000_000  # round-time: per-device plan entries and timeline arrays
MAX_ROUND_TIME_EVENTS = 100_000_000  # round-time: devices x rounds (about a minute at 5 ms per 10,000-device round)


@dataclass(frozen=True)
class Setting:
    """One typed value: ``kind`` (int, float, str, bool), an optional range (``low``/``high``,
    open when ``*_open``), the allowed words (``choices``; for a number, words it also takes,
    such as ``auto``) and whether ``None`` (the documented default) is allowed."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    none: bool = False
    pattern: str | None = None  # text: a regular expression it must match in full (with ``pattern_text``)
    pattern_text: str = ""

    def allowed(self) -> str:
        """The allowed values, in words (for the one-line error)."""
        if self.kind is bool:
            text = "true or false"
        elif self.kind is str and self.pattern:
            text = self.pattern_text
        elif self.kind is str:
            text = "one of " + ", ".join(map(str, self.choices))
        else:
            noun = "an integer" if self.kind is int else "a finite number"
            if self.low is not None and self.high is not None:
                left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
                if self.kind is int and not self.low_open and not self.high_open:
                    text = f"{noun} in {_num(self.low)}..{_num(self.high)}"
                else:
                    text = f"{noun} in {left}{_num(self.low)}, {_num(self.high)}{right}"
            elif self.low is not None:
                text = f"{noun} {'>' if self.low_open else '>='} {_num(self.low)}"
            elif self.high is not None:
                text = f"{noun} {'<' if self.high_open else '<='} {_num(self.high)}"
            else:
                text = noun
            if self.choices:
                text += " or " + " or ".join(repr(c) for c in self.choices)
        return text

    def check(self, key: str, value):
        """``value`` converted to the setting's kind; UsageError naming ``key`` if it is not allowed."""
        if value is None:
            if self.none:
                return None
            raise UsageError(f"{key} must be {self.allowed()}, got none")
        if self.kind is not str and isinstance(value, str) and value in self.choices:
            return value
        if self.kind is bool:
            if isinstance(value, bool):
                return value
        elif self.kind is str:
            if isinstance(value, str) and (value in self.choices or (self.pattern and re.fullmatch(self.pattern, value))):
                return value
        elif self.kind is int:
            if isinstance(value, int) and not isinstance(value, bool) and self._in_range(value):
                return int(value)
        elif self.kind is float:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and self._in_range(value):
                return float(value)
        raise UsageError(f"{key} must be {self.allowed()}, got {value!r}")

    def _in_range(self, value) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        if self.high is not None and (value >= self.high if self.high_open else value > self.high):
            return False
        return True


def _num(value) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


def positive_int(high: float | None = None, none: bool = False) -> Setting:
    return Setting(int, low=1, high=high, none=none)


def non_negative(none: bool = False) -> Setting:
    return Setting(float, low=0, none=none)


def positive(none: bool = False) -> Setting:
    return Setting(float, low=0, low_open=True, none=none)


# --- the run and the network ---------------------------------------------------------
RUN_SETTINGS: dict[str, Setting] = {
    "rounds": Setting(int, low=1, high=MAX_ROUNDS, none=True),
    "seed": Setting(int, low=0, high=MAX_SEED),
    "evaluate_every": Setting(int, low=1, high=MAX_ROUNDS),
    "participation": Setting(float, low=0, high=1, low_open=True, none=True),
}

SCENARIO_KNOBS: dict[str, Setting] = {  # what a scenario may let a run change (Scenario.knobs)
    "devices": Setting(int, low=1, high=100_000, none=True),
    "alpha": Setting(float, low=0, low_open=True, none=True),  # Dirichlet label-shift concentration
}

NETWORK_SETTINGS: dict[str, Setting] = {
    "mode": Setting(str, choices=("pipelined", "barrier")),
    "deadline": Setting(float, low=0, low_open=True, none=True),
    "rho": Setting(float, low=0, low_open=True, none=True),
    "t_min": Setting(float, low=0, none=True),
    "inv_mu": Setting(float, low=0, none=True),
}


def training_settings() -> dict[str, Setting]:
    """The fields of ``learning.training.LocalTraining`` a run may override."""
    from learning.engine import BACKENDS
    from learning.models import INIT_SCHEMES
    from learning.training import OPTIMIZERS

    return {
        "lr": positive(),
        "momentum": Setting(float, low=0, high=1, high_open=True),
        "batch_size": positive_int(),
        "epochs": positive_int(),
        "optimizer": Setting(str, choices=OPTIMIZERS),
        "init": Setting(str, choices=INIT_SCHEMES),
        "backend": Setting(str, choices=("auto", *BACKENDS)),
        "device": Setting(str, pattern=r"auto|cpu|cuda(:[0-9]+)?", pattern_text="auto, cpu, cuda or cuda:N"),
    }


def check_training(training: dict) -> dict:
    """Training overrides, each typed and range-checked (unknown keys refused)."""
    table = training_settings()
    if not isinstance(training, dict):
        raise UsageError(f"training must be a table of key = value, got {training!r}")
    return {key: check_setting(table, key, value, prefix="training ") for key, value in training.items()}


# --- each algorithm's options (the keys of its declared ``defaults``) -----------------
_USER_CENTRIC = {
    "streams": Setting(int, low=1, choices=("auto",), none=True),  # none: k = m
    "lam": non_negative(),
    "variance_batches": Setting(str, choices=("disjoint", "reference")),
    "variance_batch_fraction": Setting(float, low=0, high=1, low_open=True, high_open=True),
    "variance_batch_size": positive_int(none=True),
    "variance_divisor": Setting(float, low=1),  # at most the smallest local set: checked with the data
    "formation": Setting(str, choices=("similarity", "channel")),
    "silhouette_loss": non_negative(),
}

ALGORITHM_OPTIONS: dict[str, dict[str, Setting]] = {
    "fedavg": {},
    "local": {},
    "oracle": {},
    "user-centric": _USER_CENTRIC,
    "parallel-user-centric": _USER_CENTRIC,
    "fedprox": {"mu": non_negative()},
    "scaffold": {"local_epochs": positive_int(), "global_lr": positive()},
    "ditto": {"lam": non_negative(), "personal_epochs": positive_int()},
    "pfedme": {"lam": positive(), "K": positive_int(), "personal_lr": positive(), "lr": positive(),
               "beta": positive(), "R": positive_int(), "batch_size": positive_int(none=True)},
    "cfl": {"eps1": non_negative(), "eps2": non_negative()},
    "fedfomo": {"M": positive_int(), "epsilon": Setting(float, low=0, high=1), "rate_limit": positive_int()},
    "pfedlia": {"warmup_rounds": Setting(int, low=0), "influence_epochs": positive_int(),
                "influence_batch_size": positive_int(), "mode": Setting(str, choices=("centralized", "peer-to-peer")),
                "min_samples": Setting(int, low=2, none=True)},
    "self-fl": {"max_local_steps": positive_int(), "intra_variance": Setting(str, choices=("trajectory", "fisher")),
                "target": Setting(str, choices=("paper", "hierarchical"))},
    "per-fedavg": {"alpha": positive(none=True), "beta": positive(none=True), "adaptation_steps": Setting(int, low=0)},
    "fesem": {"k": positive_int(none=True)},
    "fedproto": {"lam": non_negative()},
}


def check_setting(table: dict[str, Setting], key: str, value, prefix: str = ""):
    """``value`` checked against ``table[key]``; unknown keys name the known ones."""
    if key not in table:
        raise UsageError(f"unknown {prefix}setting {key!r}; known: {', '.join(table) or 'none'}")
    return table[key].check(prefix + key, value)


def check_options(algorithm: str, options: dict) -> dict:
    """The algorithm's options, each typed and range-checked (unknown keys refused)."""
    table = ALGORITHM_OPTIONS.get(algorithm)
    if table is None:
        raise UsageError(f"algorithm {algorithm!r} has no typed options")
    checked = {}
    for key, value in options.items():
        if key not in table:
            known = ", ".join(table) or "none"
            raise UsageError(f"{algorithm} has no option {key!r}; its options: {known}")
        checked[key] = table[key].check(f"{algorithm} option {key}", value)
    return checked


# --- communication: update codecs and scheduling (issue 21; RunSpec fields of the same names) ---
COMMUNICATION_DEFAULTS = {"uplink_codec": "none", "downlink_codec": "none", "scheduler": "random"}


def check_communication(values: dict) -> dict:
    """``uplink_codec``/``downlink_codec`` (``learning.codecs`` specs, e.g. ``qsgd:bits=4``) and
    ``scheduler`` (a ``netsim.scheduling`` policy), checked: UsageError naming the setting."""
    from learning.codecs import parse_codec
    from netsim.scheduling import POLICIES

    checked = {}
    for key in ("uplink_codec", "downlink_codec"):
        try:
            checked[key] = parse_codec(values[key]).spec
        except ValueError as error:
            raise UsageError(f"{key.replace('_', '-')}: {error}") from None
    if values["scheduler"] not in POLICIES:
        raise UsageError(f"scheduler must be one of {', '.join(POLICIES)}, got {values['scheduler']!r}")
    checked["scheduler"] = values["scheduler"]
    return checked
