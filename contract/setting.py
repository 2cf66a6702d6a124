"""A typed value (``Setting``): its kind, range and allowed words, checked with a one-line
error naming the key and what is allowed; non-finite numbers are always refused. And the one
way a field declares it (``option``: the annotation is the kind, the keywords the range, doc
and what readers need): the algorithms' options (``learning.options``), the run's settings
(``scenarios.definitions.settings``), the training settings, codecs, network systems and
cells are all declared with it. Standard library only, so every layer may use it."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping

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
        if self.kind in (int, float) and type(value) in (int, float) and repr(value) in self.choices:
            return repr(value)  # a word that reads as a number (speed_kmh's 38.901) is the word, however it came
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


@dataclass(frozen=True)
class Needs:
    """A ``requires`` entry that is not one value: the other setting's values under which a field
    has an effect, as a test and in words (``among``: one of several values; ``MOVING``...). A
    plain value in ``requires`` needs that value exactly (``{"streams": "auto"}``)."""

    test: typing.Callable[[object], bool]
    text: str

    def __str__(self) -> str:
        return self.text


def among(*values) -> Needs:
    """Needs one of ``values`` (``{"orchestrator": among("fedbuff", "fedasync")}``)."""
    return Needs(lambda value: value in values, " or ".join(map(str, values)))


def holds(wanted, value) -> bool:
    """Whether ``value`` meets ``wanted``: a ``Needs``'s test, else equality."""
    return wanted.test(value) if isinstance(wanted, Needs) else value == wanted


def needs_words(other: str, wanted) -> str:
    """``wanted`` of the setting named ``other`` in words: ``--orchestrator fedbuff or fedasync``,
    ``streams='auto'`` (a plain value)."""
    return f"{other} {wanted}" if isinstance(wanted, Needs) else f"{other}={wanted!r}"


def without_effect(requires: Mapping[str, Mapping], values: Mapping, given: Iterable[str]) -> tuple[str, str, object] | None:
    """The first of the settings ``given`` (set, not left at their default) that has no effect
    under the other ``values``: (it, the other setting, what that one needs to be: ``requires``,
    each setting's declared needs), or None. The one rule every declaration is held to: an
    algorithm's options (``learning.options.Options.resolve``), a run's settings
    (``scenarios.definitions.settings.check_spec``: the orchestrator's options) and a cell's radio
    parameters (``scenarios.definitions.cells.cell_parameters``, and with the run's settings:
    ``csi_delay_s`` needs a scheduler that reads the channel report). A need on a setting that
    ``values`` lacks is left to the check that has it."""
    for key in given:
        for other, wanted in requires.get(key, {}).items():
            if other in values and not holds(wanted, values[other]):  # a setting ``values`` lacks: checked where it is known
                return key, other, wanted
    return None


INT_TEXT = re.compile(r"[+-]?[0-9]+")
FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def parse_number(text: str, kind: type = float):
    """``text`` as a number of ``kind`` (int or float), written as the docs write numbers: digits
    with an optional sign, for a float a decimal point and an exponent too (``2``, ``-0.5``, ``.5``,
    ``1e7``; ``nan`` and ``inf`` read, for the range checks to name). ValueError for the looser forms
    Python's ``int``/``float`` also take: surrounding spaces (``' 2'``), ``1_000``, other scripts'
    digits. The one reading of a number typed by a user: the command line's (``type=int``/``float``,
    ``KEY=VALUE``), a system's or codec's text."""
    pattern = INT_TEXT if kind is int else FLOAT_TEXT
    if not isinstance(text, str) or not pattern.fullmatch(text):
        raise ValueError(f"not {'an integer' if kind is int else 'a number'}: {text!r}")
    return kind(text)


def parse_value(raw: str):
    """A value typed as text (``--option``/``--radio`` ``KEY=VALUE``, a system's ``NAME:KEY=VALUE``):
    ``true``/``false`` a bool, ``none`` None, a number (``parse_number``, int before float), else
    the text itself (checked where it goes)."""
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return parse_number(raw, kind)
        except ValueError:
            pass
    return raw


def _num(value) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


def positive_int(high: float | None = None, none: bool = False) -> Setting:
    return Setting(int, low=1, high=high, none=none)


def non_negative(none: bool = False) -> Setting:
    return Setting(float, low=0, none=none)


def positive(none: bool = False) -> Setting:
    return Setting(float, low=0, low_open=True, none=none)




RULE = ("low", "high", "low_open", "high_open", "pattern", "pattern_text")  # the value's range: ``Setting``'s
DECLARED = ("requires", "flag", "label", "none_word", "words", "check", "metavar", "reported",  # read by learning.options
            "section", "command", "sweep", "entries", "cli_default", "default_text", "recorded",  # read by RunSpec's readers
            "omit_default")  # read by ``recorded``


def option(default, doc, **declared):
    """A declared field of a dataclass (an algorithm's ``Options``, ``RunSpec``, ``LocalTraining``,
    a codec, a network system or cell): its type is its annotation; its default (``dataclasses.MISSING``: none, ``dict``: an
    empty table), one-line doc (text, or a function giving it: ``doc_of``), range (``low``, ``high``, ``low_open``, ``high_open`` for numbers;
    ``pattern`` a regular expression text must match in full, ``pattern_text`` in words) and
    ``requires``: the other options' values under which it has an effect (``{"formation": "channel"}``;
    a ``Needs`` for more than one value: ``{"orchestrator": among("fedbuff", "fedasync")}``), refused
    given elsewhere (``without_effect``).
    Where it has them: ``flag``, a command-line flag of its own (``--streams``); ``label``, its
    short name in the run's label (``k``: ``user-centric k=4``, folder ``user-centric_k4``);
    ``none_word``, the word that stands for None on the command line and in the label (``m``);
    ``words``, a function giving the allowed words, read when checked (a registry's names);
    ``check``, ``(key, value) -> value`` for text a parser checks (a codec spec: its canonical
    form; ValueError for a bad one); ``metavar``, its value's name in ``--help``; ``reported``,
    the evaluation extra in which the learner reports the value it resolved the option to
    (``streams="auto"``: the k Algorithm 2 chose; the run's summary shows that). ``RunSpec``'s
    fields also declare ``section``, ``command``, ``sweep``, ``entries``, ``cli_default`` and
    ``default_text`` (``scenarios.definitions.settings``); ``omit_default``: left out of the record
    at its default (``recorded``), so a parameter added after runs were recorded leaves their
    configs and folder names as they were."""
    unknown = sorted(set(declared) - set(RULE) - set(DECLARED))
    if unknown:
        raise TypeError(f"option() takes no {', '.join(unknown)}")
    rule = {key: declared.pop(key) for key in RULE if key in declared}
    metadata = {"doc": doc, "rule": rule, **declared, "requires": dict(declared.get("requires") or {})}
    if default is dict:
        return dataclasses.field(default_factory=dict, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def setting_from(hint, rule: Mapping, words: Iterable[str] = ()) -> Setting:
    """The ``Setting`` of a field annotated ``hint`` (``float``, ``int | None``, ``Literal["a", "b"]``,
    ``int | Literal["auto"] | None``, ``dict``...) with the range in ``rule`` and ``words`` allowed besides."""
    parts = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds = [p for p in parts if p is not type(None) and typing.get_origin(p) is not Literal]
    literal = tuple(word for p in parts if typing.get_origin(p) is Literal for word in typing.get_args(p))
    if len(kinds) > 1 or (kinds and kinds[0] not in (int, float, str, bool, dict)):
        raise TypeError(f"an option is one of int, float, str, bool, dict (with Literal words and None), not {hint}")
    return Setting(kinds[0] if kinds else str, choices=literal + tuple(words), none=type(None) in parts, **rule)


def field_setting(cls: type, f: dataclasses.Field) -> Setting:
    """The ``Setting`` of field ``f`` of the dataclass ``cls`` (its ``words`` read now)."""
    words = f.metadata.get("words")
    return setting_from(_hints(cls)[f.name], f.metadata.get("rule", {}), words() if words else ())


@functools.cache
def _hints(cls: type) -> dict:
    return typing.get_type_hints(cls)


def check_declared(obj, prefix: str = "") -> None:
    """ValueError naming the first declared field (``option``) of the dataclass ``obj`` whose
    ``Setting`` refuses its value: the bounds a parameter declares are the ones it is held to."""
    for f in dataclasses.fields(obj):
        if "rule" in f.metadata:
            try:
                field_setting(type(obj), f).check(prefix + f.name, getattr(obj, f.name))
            except UsageError as error:
                raise ValueError(str(error)) from None


def bounds(cls: type, name: str) -> dict:
    """The range the field ``name`` of ``cls`` declares (``option``), as ``low``, ``high``,
    ``low_open``, ``high_open`` keywords: another declaration of the same quantity (a run
    setting that overrides it) takes its bounds from here instead of repeating them."""
    setting = field_setting(cls, next(f for f in dataclasses.fields(cls) if f.name == name))
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
