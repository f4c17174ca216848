"""The schema of a results journal's records, checked as each line is read back (and, by
:func:`parse_record`, a call or phase-end line built into its typed record in the same pass).

``results.jsonl`` is data: a report re-rendered from a damaged or hand-edited journal must end
in one line naming the line and the field, not in a traceback deep inside the grading. One table
per record type lists the fields the readers use, their accepted types and, where it matters,
their values; fields not listed are kept unchecked (newer writers may add some).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.journal.lines import typed_line
from stress.record_json import builder
from stress.records import CALL, PHASE_END, CallRecord, PhaseResult, json_fields
from stress.vocabulary import PhaseStatus, Status

__all__ = ["check_record", "parse_record"]

_NoneT = type(None)
_Table = dict[str, tuple[tuple[type, ...], Any]]


def _finite(v: Any) -> bool | str:
    return math.isfinite(v) or "must be a finite number"


def _one_of(values: tuple[str, ...]):
    return lambda v: v in values or f"must be one of {', '.join(values)}"


def _str_dict(v: Mapping[str, Any]) -> bool | str:
    return all(isinstance(k, str) for k in v) or "keys must be strings"


def _optional_str_dict(v: Mapping[str, Any] | None) -> bool | str:
    return v is None or _str_dict(v)


def _counts(v: Mapping[str, Any]) -> bool | str:
    ok = all(type(n) is int for n in v.values())
    return ok or "values must be integers"


def _cases(v: list[Any]) -> bool | str:
    ok = all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in v)
    return ok or "must be a list of tables with a string 'id'"


#: a reproducer's fields and their types (``cases``: a list of strings)
_REPRODUCER = {"phase": str, "corpus": str, "command": str, "note": str, "verified": bool,
               "trials": int, "cases": list}  # fmt: skip


def _reproducer(v: Mapping[str, Any] | None) -> bool | str:
    if v is None:
        return True
    for name, want in _REPRODUCER.items():
        value = v.get(name)
        if value is None:
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            return f"'{name}' must be a {want.__name__}"
        if want is list and not all(isinstance(c, str) for c in value):
            return f"'{name}' must be a list of strings"
    return _optional_str_dict(v)


def _config(v: Mapping[str, Any]) -> bool | str:
    streams = v.get("streams", [])
    if not isinstance(streams, list) or not all(isinstance(s, str) for s in streams):
        return "'streams' must be a list of strings"
    return True


_STATUSES = tuple(Status)
_PHASE_STATUSES = tuple(PhaseStatus)
_ANY_NUMBER = (int, float)

_COMMON: _Table = {"phase": ((str,), None), "variant": ((str,), None)}
_TABLES: dict[str, _Table] = {
    "run": {
        "backend": ((dict,), _str_dict),
        "config": ((dict,), _config),
        "cases": ((list,), _cases),
        "control_cases": ((list,), _cases),
        "corpus": ((list,), None),
        "baseline": ((dict,), _str_dict),
        "started": ((str, _NoneT), None),
    },
    "phase-start": {**_COMMON, "stream": ((str,), None), "cases": ((int,), None)},
    "phase-end": {
        **_COMMON,
        "status": ((str,), _one_of(_PHASE_STATUSES)),
        "detail": ((str,), None),
        "calls": ((int,), None),
        "seconds": (_ANY_NUMBER, _finite),
    },
    "call": {
        **_COMMON,
        "case": ((str,), None),
        "status": ((str,), _one_of(_STATUSES)),
        "match": ((bool, _NoneT), None),
        "digest": ((str,), None),
        "outputs": ((dict,), _str_dict),
        "unwritten": ((dict,), _counts),
        "kept": ((dict,), _counts),
        "canary": ((int,), None),
        "workspace": ((int,), None),
        "code": ((int, _NoneT), None),
        "api": ((str, _NoneT), None),
        "message": ((str,), None),
        "warmup": ((bool,), None),
        "aggressor": ((str, _NoneT), None),
        "round": ((int,), None),
        "worker": ((int,), None),
        "position": ((int,), None),
        "group": ((list,), None),
        "schedule": ((list,), None),
        "elapsed": (_ANY_NUMBER, _finite),
        "allocator": ((str,), _one_of(("fresh", "recycle"))),
        "tolerance_ratio": (_ANY_NUMBER, None),
    },
    "run-end": {
        "status": ((str,), _one_of(_PHASE_STATUSES)),
        "reproducer": ((dict, _NoneT), _reproducer),
        "timing": ((dict,), None),
    },
    "note": {"message": ((str,), None)},
}


#: Fields a record of the type cannot do without (its typed record needs them).
_REQUIRED = {CALL: ("phase", "case", "status"), PHASE_END: ("phase",)}

#: The record types built in the check's pass: their fields, constructor, ``status`` members
#: by value, defaults.
_TYPED: dict[str, tuple[frozenset[str], Any, dict[str, Any], dict[str, Any]]] = {
    CALL: (json_fields(CallRecord), builder(CallRecord), {s.value: s for s in Status}, {}),
    PHASE_END: (
        json_fields(PhaseResult),
        builder(PhaseResult),
        {s.value: s for s in PhaseStatus},
        {"status": PhaseStatus.DONE, "variant": ""},
    ),
}


def check_record(record: Mapping[str, Any], path: Path, line: int) -> None:
    """Refuse a record whose known fields have the wrong type or value (one line)."""
    _checked(record, path, line, None)


def parse_record(record: Mapping[str, Any], path: Path, line: int) -> Any:
    """:func:`check_record`, and the record built into its typed record: a ``call`` or
    ``phase-end`` one in the same pass over its fields (checked once: nothing parses it
    again), the run header, a phase start, note or run end by its type
    (:mod:`stress.journal.lines`); a kind this version does not know comes back as it is."""
    typed = _TYPED.get(record.get("type"))  # type: ignore[arg-type]
    if typed is None:
        _checked(record, path, line, None)
        try:
            return typed_line(record)
        except ValueError as exc:
            kind = record.get("type")
            raise ConfigError(
                f"{path}: line {line} ({kind} record): {exc}; the journal is damaged or from "
                "another tool"
            ) from None
    names, build, statuses, defaults = typed
    known, extra = _checked(record, path, line, names)
    if defaults:
        known = {**defaults, **known}
    known["status"] = statuses[known["status"]]  # its value checked above
    return build(known, extra)


#: Each table's fields as (the exact types JSON gives them, their check): the common case
#: answered by one set lookup; anything else goes through :func:`_check_field`.
_EXACT = {
    kind: {name: (frozenset(types), check) for name, (types, check) in table.items()}
    for kind, table in _TABLES.items()
}


def _check_field(kind: str, name: str, value: Any, path: Path, line: int) -> None:
    """Refuse ``value`` of field ``name`` when it is not of its types or fails its check."""
    types, check = _TABLES[kind][name]
    wrong = not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
    verdict = "" if wrong else (check(value) if check else True)
    if wrong or verdict is not True:
        what = verdict or "expected " + " or ".join(
            "null" if t is _NoneT else t.__name__ for t in types
        )
        raise ConfigError(
            f"{path}: line {line} ({kind} record), field '{name}': {what}, found "
            f"{value!r:.40}; the journal is damaged or from another tool"
        )


def _checked(
    record: Mapping[str, Any], path: Path, line: int, names: frozenset[str] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Check ``record``; with ``names``, also split it into those fields and the rest."""
    kind = record.get("type")
    if not isinstance(kind, str):
        raise ConfigError(f"{path}: line {line}, field 'type': expected a string; file damaged")
    for name in _REQUIRED.get(kind, ()):
        if name not in record:
            raise ConfigError(
                f"{path}: line {line} ({kind} record), field '{name}': missing; the journal is "
                "damaged or from another tool"
            )
    table = _EXACT.get(kind, {})
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, value in record.items():
        spec = table.get(name)
        if spec is not None:
            exact, check = spec
            if type(value) not in exact or (check is not None and check(value) is not True):
                _check_field(kind, name, value, path, line)
        if names is None:
            continue
        if name in names:
            known[name] = value
        elif name != "type":
            extra[name] = value
    return known, extra
