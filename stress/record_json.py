"""The JSON of a typed record: its fields read from and written to a JSON object.

Every record type (:mod:`stress.records`, :mod:`stress.journal.lines`) is a frozen dataclass
whose field names are its JSON keys, with an ``extra`` mapping for the keys it does not know.
:func:`parse` builds one from a JSON object (a ``ValueError`` naming the field when a value is
not one), :func:`emit` writes it back: the fields that are set, in declaration order, then
``extra``, so a newer or older writer's keys survive a round trip.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

__all__ = ["JsonRecord", "builder", "emit", "json_fields", "member", "names", "parse", "split"]

E = TypeVar("E", bound=StrEnum)
R = TypeVar("R")


@functools.cache
def names(cls: type) -> tuple[str, ...]:
    """The JSON fields of a record type, in declaration order (``extra`` is not one)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")


@functools.cache
def json_fields(cls: type) -> frozenset[str]:
    """The JSON fields of a record type (``extra`` is not one), for membership tests."""
    return frozenset(names(cls))


def builder(cls: type[R]) -> Callable[[dict[str, Any], dict[str, Any]], R]:
    """A constructor of ``cls`` from fields already checked (the journal reader's, which has
    checked every value's type): ``build(known, extra)`` fills a new object's ``__dict__`` in
    one update. A frozen dataclass's ``__init__`` sets each of its fields through
    ``object.__setattr__``; for a call record's 30-odd fields that was half the cost of
    reading a journal line. Missing required fields are a ``TypeError``, as for the
    ``__init__``."""
    if getattr(cls, "__post_init__", None) or not hasattr(cls, "__dict__"):
        raise TypeError(f"{cls.__name__}: builder() needs a dataclass without __post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    missing_value = dataclasses.MISSING
    defaults = {f.name: f.default for f in fields if f.default is not missing_value}
    factories = [
        (f.name, f.default_factory)
        for f in fields
        if f.default_factory is not missing_value and f.name != "extra"
    ]
    required = [
        f.name for f in fields if f.default is missing_value and f.default_factory is missing_value
    ]
    new = object.__new__

    def build(known: dict[str, Any], extra: dict[str, Any]) -> R:
        for name in required:
            if name not in known:
                raise TypeError(f"{cls.__name__} without {name!r}")
        obj = new(cls)
        fields_of = obj.__dict__
        fields_of.update(defaults)
        for name, factory in factories:
            fields_of[name] = factory()  # type: ignore[misc]
        fields_of.update(known)
        fields_of["extra"] = extra
        return obj

    return build


def split(cls: type, data: Mapping[str, Any], kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data``'s known fields and the rest (``type`` dropped after checking it)."""
    if data.get("type", kind) != kind:
        raise ValueError(f"not a {kind} record: type {data.get('type')!r}")
    fields = json_fields(cls)
    known = {k: v for k, v in data.items() if k in fields}
    extra = {k: v for k, v in data.items() if k not in fields and k != "type"}
    return known, extra


def member(enum: type[E], value: Any, name: str) -> E:
    """``enum(value)``; a ``ValueError`` naming the field and the words it may be."""
    try:
        return enum(value)
    except ValueError:
        words = ", ".join(enum)
        raise ValueError(f"{name} {value!r} is not one of {words}") from None


def parse(
    cls: type[R],
    data: Mapping[str, Any],
    kind: str,
    enums: Mapping[str, type[StrEnum]],
    defaults: Mapping[str, Any] | None = None,
) -> R:
    """``cls`` from a JSON object: its fields (``enums`` fields as members, missing ones from
    ``defaults``), the other keys in ``extra``; a ``ValueError`` names what is wrong."""
    known, extra = split(cls, data, kind)
    known = {**(defaults or {}), **known}
    try:
        for name, enum in enums.items():
            known[name] = member(enum, known[name], name)
        return cls(**known, extra=extra)
    except KeyError as exc:
        raise ValueError(f"{kind} record without {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad {kind} record: {exc}") from None


def emit(obj: Any, kind: str | None, always: tuple[str, ...] = ()) -> dict[str, Any]:
    """``obj``'s JSON object: ``type`` (unless ``kind`` is None), the fields that are not None
    (and the ``always`` ones), then ``extra``."""
    out: dict[str, Any] = {} if kind is None else {"type": kind}
    for name in names(type(obj)):
        value = getattr(obj, name)
        if value is not None or name in always:
            out[name] = value
    out.update(obj.extra)
    return out


class JsonRecord:
    """``to_json``/``from_json`` of a record type (a frozen dataclass with an ``extra`` field)
    whose JSON is :func:`emit`'s and :func:`parse`'s: ``KIND`` is its ``type`` (and its name in
    errors), written unless ``TYPED`` is false; ``ENUMS`` its enum fields; ``ALWAYS`` the
    fields written even when None."""

    KIND: ClassVar[str]
    TYPED: ClassVar[bool] = True
    ENUMS: ClassVar[Mapping[str, type[StrEnum]]] = {}
    ALWAYS: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        return emit(self, self.KIND if self.TYPED else None, self.ALWAYS)

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        return parse(cls, data, cls.KIND, cls.ENUMS)  # type: ignore[attr-defined]
