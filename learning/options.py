"""Options and settings, declared once: a frozen dataclass whose fields carry their type (the
annotation), default, allowed range and one-line doc (``option``, from ``contract.setting``, the
one way every layer declares a field), the setting they need to have any effect (``requires``)
and, where they have them, their own command-line flag and their short name in the run's label.
The command line's flags and checks, ``fl-cosim list``, the config record and the run's label
are all read from it: an algorithm's options here, the run's settings
(``scenarios.definitions.settings.RunSpec``) and the training settings (``learning.training.LocalTraining``)
the same way; the network's parameters (``netsim``) are declared with the same ``option``.

    @dataclass(frozen=True)
    class FedProxOptions(Options):
        mu: float = option(0.1, "weight of the proximal term mu/2 ||w - w^t||^2", low=0)
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from contract.setting import Setting, UsageError, field_setting, needs_words, option, without_effect  # noqa: F401 (option: what the algorithms declare with)


class OptionError(UsageError, ValueError):
    """An option that is unknown, of the wrong type, out of range or without effect (one line)."""


def check_field(cls: type, f: dataclasses.Field, key: str, value):
    """``value`` of field ``f`` checked (UsageError naming ``key``) and converted: its ``Setting``,
    then its own ``check`` (a ValueError from it becomes ``KEY: why``). The words the command
    line reads as None are None here too, so a sweep file (TOML has no null) and the API take the
    same words: the field's ``none_word`` (``streams = "m"``), and ``none`` where a field that is
    not text allows None (as ``--option KEY=none``)."""
    setting = field_setting(cls, f)
    if isinstance(value, str) and (value == f.metadata.get("none_word") or (value == "none" and setting.none and setting.kind is not str)):
        value = None
    value = setting.check(key, value)
    check = f.metadata.get("check")
    if check is not None and value is not None:
        try:
            return check(key, value)
        except ValueError as error:
            raise UsageError(f"{key}: {error}") from None
    return value


def flag_of(f: dataclasses.Field) -> str | None:
    """The command-line flag of a field, if it has one."""
    return f.metadata.get("flag")


def help_text(cls: type, f: dataclasses.Field, default_text: str | None = None) -> str:
    """A field's ``--help`` line: its doc, where it needs other values, and its default."""
    needs = "".join(f"; only with {_flag_or_name(cls, key)} {value}" for key, value in f.metadata.get("requires", {}).items())
    return f"{doc_of(f)}{needs} (default {default_words(f, default_text)})".replace("%", "%%")


def doc_of(f: dataclasses.Field) -> str:
    """A field's one-line doc (a function of none: read now, for a doc that names what is registered)."""
    doc = f.metadata.get("doc", "")
    return doc() if callable(doc) else doc


def default_words(f: dataclasses.Field, default_text: str | None = None) -> str:
    """A field's default in words: ``default_text`` (``the scenario's``), its own, else its value (None: its ``none_word``)."""
    words = default_text or f.metadata.get("default_text")
    if words is None:
        default = f.default if f.default is not dataclasses.MISSING else None
        words = f.metadata.get("none_word") or "none" if default is None else str(default)
    return words


def allowed_text(setting: Setting, requires: Mapping) -> str:
    """What a value may be, in words, with the other values it needs (``fl-cosim list``, the docs)."""
    only = "".join(f"; only with {needs_words(key, value)}" for key, value in requires.items())
    return setting.allowed() + (", or none" if setting.none else "") + only


def _flag_or_name(cls: type, name: str) -> str:
    found = next((f for f in dataclasses.fields(cls) if f.name == name), None)
    return (flag_of(found) if found is not None else None) or name


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every algorithm's options (no fields: an algorithm without options uses it).
    Construction checks every field (``OptionError``) and converts it to its kind."""

    noun = "option"  # how its errors name a field: ``option mu must be ...``

    def __post_init__(self):
        for f in dataclasses.fields(self):
            try:
                object.__setattr__(self, f.name, check_field(type(self), f, f"{self.noun} {f.name}", getattr(self, f.name)))
            except UsageError as error:
                raise OptionError(str(error)) from None

    @classmethod
    def settings(cls) -> dict[str, Setting]:
        """Each option's ``Setting``, in declaration order."""
        return _settings(cls)

    @classmethod
    def docs(cls) -> dict[str, str]:
        return {f.name: doc_of(f) for f in dataclasses.fields(cls)}

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
        changed = [key for key in given if getattr(options, key) != getattr(fallback, key)]
        found = without_effect(cls.requirements(), options.as_dict(), changed)
        if found is not None:
            key, other, wanted = found
            raise OptionError(f"{prefix}option {key} has an effect only with {needs_words(other, wanted)} "
                              f"(this run has {other}={getattr(options, other)!r})")
        return options

    @classmethod
    def reports(cls) -> dict[str, str]:
        """The options whose resolved value the learner reports: option -> its evaluation extra."""
        return {f.name: f.metadata["reported"] for f in dataclasses.fields(cls) if f.metadata.get("reported")}

    def as_dict(self) -> dict:
        """Every option with its value (the config record)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def flags(cls) -> dict[str, str]:
        """The options with a command-line flag of their own: name -> flag (``streams``: ``--streams``)."""
        return {f.name: flag_of(f) for f in dataclasses.fields(cls) if flag_of(f)}

    @classmethod
    def tags(cls, given: Mapping) -> list[tuple[str, str]]:
        """(label, value in words) of each option with a ``label``, as given or by default
        (``[("k", "4")]``; None in its ``none_word``)."""
        tags = []
        for f in dataclasses.fields(cls):
            if f.metadata.get("label"):
                value = given.get(f.name, f.default)
                tags.append((f.metadata["label"], f.metadata.get("none_word") or "none" if value is None else str(value)))
        return tags

    @classmethod
    def label(cls, algorithm: str, given: Mapping) -> str:
        """The run's readable label from the options it was given: the algorithm's name, each
        labelled option (``user-centric k=4``), then what ``label_note`` adds."""
        return algorithm + "".join(f" {tag}={text}" for tag, text in cls.tags(given)) + cls.label_note(given)

    @classmethod
    def folder_label(cls, algorithm: str, given: Mapping) -> str:
        """The label as the folder's prefix has it: each labelled option joined to the name (``user-centric_k4``)."""
        return algorithm + "".join(f"_{tag}{text}" for tag, text in cls.tags(given)) + cls.label_note(given)

    @classmethod
    def label_note(cls, given: Mapping) -> str:
        """What a variant adds to its label in words (`` channel``); nothing by default."""
        return ""


def _settings(cls: type) -> dict[str, Setting]:
    return {f.name: field_setting(cls, f) for f in dataclasses.fields(cls)}
