"""An algorithm's options, declared once: a frozen dataclass whose fields carry their type (the
annotation), default, allowed range and one-line doc (``option``), and the setting they need to
have any effect (``requires``). The command line's checks, ``fl-cosim list``, the config record
and the run's label are all read from it.

    @dataclass(frozen=True)
    class FedProxOptions(Options):
        mu: float = option(0.1, "weight of the proximal term mu/2 ||w - w^t||^2", low=0)
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Literal, Mapping

from contract.setting import Setting, UsageError


class OptionError(UsageError, ValueError):
    """An option that is unknown, of the wrong type, out of range or without effect (one line)."""


def option(default, doc: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False, requires: Mapping[str, object] | None = None):
    """A field of an ``Options`` dataclass: its default, one-line doc, range (numbers) and
    ``requires``: the other options' values under which it has an effect (``{"formation": "channel"}``)."""
    rule = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    return dataclasses.field(default=default, metadata={"doc": doc, "rule": rule, "requires": dict(requires or {})})


def setting_from(hint, rule: Mapping) -> Setting:
    """The ``Setting`` of a field annotated ``hint`` (``float``, ``int | None``, ``Literal["a", "b"]``,
    ``int | Literal["auto"] | None``...) with the range in ``rule``."""
    parts = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    kinds = [p for p in parts if p is not type(None) and typing.get_origin(p) is not Literal]
    words = tuple(word for p in parts if typing.get_origin(p) is Literal for word in typing.get_args(p))
    if len(kinds) > 1 or (kinds and kinds[0] not in (int, float, str, bool)):
        raise TypeError(f"an option is one of int, float, str, bool (with Literal words and None), not {hint}")
    return Setting(kinds[0] if kinds else str, choices=words, none=type(None) in parts, **rule)


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every algorithm's options (no fields: an algorithm without options uses it).
    Construction checks every field (``OptionError``) and converts it to its kind."""

    def __post_init__(self):
        for name, setting in self.settings().items():
            try:
                object.__setattr__(self, name, setting.check(f"option {name}", getattr(self, name)))
            except UsageError as error:
                raise OptionError(str(error)) from None

    @classmethod
    def settings(cls) -> dict[str, Setting]:
        """Each option's ``Setting``, in declaration order."""
        return _settings(cls)

    @classmethod
    def docs(cls) -> dict[str, str]:
        return {f.name: f.metadata.get("doc", "") for f in dataclasses.fields(cls)}

    @classmethod
    def requirements(cls) -> dict[str, dict]:
        """Each option's ``requires``: the other options' values under which it has an effect."""
        return {f.name: f.metadata.get("requires", {}) for f in dataclasses.fields(cls)}

    @classmethod
    def defaults(cls) -> dict:
        return {f.name: f.default for f in dataclasses.fields(cls)}

    @classmethod
    def resolve(cls, given: Mapping, base: Mapping | None = None, owner: str = "") -> "Options":
        """The options of a run: ``base`` (e.g. a scenario's defaults) overridden by ``given``.
        An unknown key, a bad value, or a given value that differs from the base but has no
        effect under the other options (its ``requires``) is refused with one line."""
        base = dict(base or {})
        prefix = f"{owner} " if owner else ""
        known = [f.name for f in dataclasses.fields(cls)]
        for key in [*base, *given]:
            if key not in known:
                raise OptionError(f"{owner or 'this algorithm'} has no option {key!r}; its options: {', '.join(known) or 'none'}")
        try:
            options, fallback = cls(**{**base, **given}), cls(**base)
        except OptionError as error:
            raise OptionError(prefix + str(error)) from None
        requires = cls.requirements()
        for key in given:
            if getattr(options, key) == getattr(fallback, key):
                continue
            for other, wanted in requires[key].items():
                if getattr(options, other) != wanted:
                    raise OptionError(f"{prefix}option {key} has an effect only with {other}={wanted!r} "
                                      f"(this run has {other}={getattr(options, other)!r})")
        return options

    def as_dict(self) -> dict:
        """Every option with its value (the config record)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def label(cls, algorithm: str, given: Mapping) -> str:
        """The run's readable label from the options it was given (its folder's prefix):
        the algorithm's name unless a variant says more."""
        return algorithm


@functools.cache
def _settings(cls: type) -> dict[str, Setting]:
    hints = typing.get_type_hints(cls)
    return {f.name: setting_from(hints[f.name], f.metadata.get("rule", {})) for f in dataclasses.fields(cls)}
