"""A typed value (``Setting``): its kind, range and allowed words, checked with a one-line
error naming the key and what is allowed; non-finite numbers are always refused. The
algorithms' options (``learning.options``) and the run's settings (``scenarios.definitions.settings``)
are made of it."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

MAX_COUNT = 10_000  # any count (epochs, local steps, batch size...) that declares no bound of its own
MAX_DEVICES = 100_000  # a scenario's devices (its data split into at least one sample each)
MAX_ROUNDS = 100_000  # a run's rounds: every round's record and plan are kept in memory and written out


class UsageError(Exception):
    """Bad input from the user: an unknown name, an impossible parameter, missing or corrupt data.

    The message is one line that names the problem (and, for data, the file and what to do).
    """


@dataclass(frozen=True)
class Setting:
    """One typed value: ``kind`` (int, float, str, bool, or dict: a table of key = value), an
    optional range (``low``/``high``, open when ``*_open``), the allowed words (``choices``; for a
    number, words it also takes, such as ``auto``; text without choices or a pattern is any text)
    and whether ``None`` (the documented default) is allowed."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    none: bool = False
    pattern: str | None = None  # text: a regular expression it must match in full (with ``pattern_text``)
    pattern_text: str = ""

    @property
    def top(self) -> float:
        """The largest value: ``high``, else ``MAX_COUNT`` for a count (every count is bounded)."""
        if self.high is not None:
            return self.high
        return MAX_COUNT if self.kind is int else math.inf

    def allowed(self) -> str:
        """The allowed values, in words (for the one-line error)."""
        if self.kind is bool:
            text = "true or false"
        elif self.kind is dict:
            text = "a table of key = value"
        elif self.kind is str and not self.choices and not self.pattern:
            text = "text"
        elif self.kind is str and self.pattern:
            text = self.pattern_text
        elif self.kind is str:
            text = "one of " + ", ".join(map(str, self.choices))
        else:
            noun = "an integer" if self.kind is int else "a finite number"
            high = None if math.isinf(self.top) else self.top
            if self.low is not None and high is not None:
                left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
                if self.kind is int and not self.low_open and not self.high_open:
                    text = f"{noun} in {_num(self.low)}..{_num(high)}"
                else:
                    text = f"{noun} in {left}{_num(self.low)}, {_num(high)}{right}"
            elif self.low is not None:
                text = f"{noun} {'>' if self.low_open else '>='} {_num(self.low)}"
            elif high is not None:
                text = f"{noun} {'<' if self.high_open else '<='} {_num(high)}"
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
        elif self.kind is dict:
            if isinstance(value, dict):
                return value
        elif self.kind is str:
            free = not self.choices and not self.pattern
            if isinstance(value, str) and (free or value in self.choices or (self.pattern and re.fullmatch(self.pattern, value))):
                return value
        elif self.kind is int:
            if isinstance(value, int) and not isinstance(value, bool) and self._in_range(value) and value <= self.top:
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




def parameter(default, doc: str, kind: type = float, omit_default: bool = False, **rule):
    """A dataclass field that declares its value's ``Setting`` (``kind`` and range) and a one-line
    doc: a physical parameter declared once, where it is used (a cell's ``--radio KEY=VALUE``
    checks and ``fl-cosim cell`` read it; ``scenarios.definitions.cells``). ``omit_default``: left
    out of the record at its default (``recorded``), so a parameter added after runs were
    recorded leaves their configs and folder names as they were."""
    return dataclasses.field(default=default, metadata={"doc": doc, "setting": Setting(kind, **rule), "omit_default": omit_default})


def check_declared(obj, prefix: str = "") -> None:
    """ValueError naming the first field of the dataclass ``obj`` whose declared ``Setting``
    (``parameter``) refuses its value: the bounds a parameter declares are the ones it is held to."""
    for f in dataclasses.fields(obj):
        setting = f.metadata.get("setting")
        if setting is not None:
            try:
                setting.check(prefix + f.name, getattr(obj, f.name))
            except UsageError as error:
                raise ValueError(str(error)) from None


def bounds(cls: type, name: str) -> dict:
    """The range the field ``name`` of ``cls`` declares (``parameter``), as ``low``, ``high``,
    ``low_open``, ``high_open`` keywords: another declaration of the same quantity (a run
    setting that overrides it) takes its bounds from here instead of repeating them."""
    setting = next(f for f in dataclasses.fields(cls) if f.name == name).metadata["setting"]
    return {"low": setting.low, "high": setting.high, "low_open": setting.low_open, "high_open": setting.high_open}


def recorded(obj) -> dict:
    """``dataclasses.asdict(obj)`` without the fields declared ``omit_default`` that hold their
    default (in nested dataclasses too)."""
    data = dataclasses.asdict(obj)

    def prune(item, record: dict) -> None:
        for f in dataclasses.fields(item):
            value = getattr(item, f.name)
            if f.metadata.get("omit_default") and value == f.default:
                del record[f.name]
            elif dataclasses.is_dataclass(value):
                prune(value, record[f.name])

    prune(obj, data)
    return data
