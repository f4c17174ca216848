"""Sanitizer findings as records: one model for the simulator's JSONL log and msSanitizer's log.

The simulator (ACLSIM_SANITIZE_LOG=FILE) writes one JSON object a line; `read_jsonl` turns them
into `Finding`s, `Finding.to_json` writes them back in the same shape (docs/sanitizer.md).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stress.errors import ConfigError

TOOLS = ("initcheck", "racecheck", "memcheck")


@dataclass(frozen=True)
class Access:
    """One side of a finding: who touched the bytes, in which stage, from which source line."""

    op: str
    call: int = 0  # the call's serial number in its process (0: a runtime API, not a call)
    stage: str = ""  # phase1 / phase2 / kernel / runtime
    access: str = ""  # Read / Write / Read/Write / ...
    stream: int = 0  # 0: the host, else the stream's slot
    file: str = ""
    line: int = 0

    @property
    def label(self) -> str:
        name = f"{self.op}#{self.call}" if self.call else self.op
        return f"{name} ({self.stage})" if self.stage else name


@dataclass(frozen=True)
class Finding:
    """One sanitizer finding (a record of the simulator's JSONL log or of an msSanitizer log)."""

    tool: str  # initcheck / racecheck / memcheck
    kind: str  # uninitialized read / RAW / WAR / WAW / illegal read / leak / ...
    bytes: int
    alloc: int = 0  # the allocation's serial number (0: none)
    alloc_kind: str = ""  # "device", a simulator buffer's name, or an object type for leaks
    alloc_size: int = 0
    offset: int = 0
    address: str = ""
    tensor: str = ""  # the output that owns the bytes
    owner: str = ""  # "<op>#<call>" of that output's call
    calls: tuple[Access, ...] = field(default_factory=tuple)
    note: str = ""
    source: str = "aclsim"  # aclsim / mssanitizer

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(c.stage for c in self.calls)

    def summary(self) -> str:
        where = f" of {self.tensor}" if self.tensor else ""
        owner = f" ({self.owner})" if self.owner else ""
        who = " vs ".join(c.label for c in self.calls)
        return f"{self.tool}: {self.kind}, {self.bytes} bytes{where}{owner}: {who}"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["calls"] = [asdict(c) for c in self.calls]
        d["stages"] = list(self.stages)
        return d


def _owner(raw: Any) -> str:
    if isinstance(raw, dict) and raw.get("call"):
        return f"{raw.get('op', '?')}#{raw['call']}"
    return raw if isinstance(raw, str) else ""


def finding_from_json(d: dict[str, Any], where: str = "finding") -> Finding:
    """A Finding from one JSON object; ConfigError naming `where` and the field if malformed."""
    try:
        calls = tuple(
            Access(
                op=str(c.get("op", "")),
                call=int(c.get("call", 0)),
                stage=str(c.get("stage", "")),
                access=str(c.get("access", "")),
                stream=int(c.get("stream", 0)),
                file=str(c.get("file", "")),
                line=int(c.get("line", 0)),
            )
            for c in d.get("calls", [])
        )
        return Finding(
            tool=str(d["tool"]),
            kind=str(d["kind"]),
            bytes=int(d["bytes"]),
            alloc=int(d.get("alloc", 0)),
            alloc_kind=str(d.get("alloc_kind", "")),
            alloc_size=int(d.get("alloc_size", 0)),
            offset=int(d.get("offset", 0)),
            address=str(d.get("address", "")),
            tensor=str(d.get("tensor", "")),
            owner=_owner(d.get("owner")),
            calls=calls,
            note=str(d.get("note", "")),
            source=str(d.get("source", "aclsim")),
        )
    except KeyError as e:
        raise ConfigError(f"{where}: field {e.args[0]!r} is missing (tool, kind, bytes)") from e
    except (TypeError, ValueError, AttributeError) as e:
        raise ConfigError(f"{where}: malformed sanitizer record ({e})") from e


def read_jsonl(path: Path) -> list[Finding]:
    """Every finding of a JSONL log (a missing file has none)."""
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise ConfigError(f"{path}:{n}: not JSON ({e.msg}); one finding a line") from e
            out.append(finding_from_json(d, f"{path}:{n}"))
    return out
