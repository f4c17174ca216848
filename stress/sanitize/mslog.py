"""Parse msSanitizer's report log (mssanitizer --tool=memcheck|racecheck|initcheck) into Findings.

Written against the report format CANN documents (MindStudio operator tools guide, "Memory
check" / "Race check" report sections, hiascend.com atlasopdev_16_0043 / _0056 / _0060):

    ====== ERROR: illegal read of size 100
    ======    at 0x124040017f9c on GM
    ======    code in add_custom.cpp:52

    ====== WARNING: out of bounds of size 256
    ======    at 0x1240c002e000 on GM when writing data
    ======    code in add_custom.cpp:84

    ====== ERROR: Potential RAW hazard detected at GM in kernel_float on device 0:
    ======    PIPE_MTE2 Write at RAW()+0x0 in block 0 (aiv) on device 0 at pc ... (serialNo:14)
    ======    #0 .../kernel_operator_data_copy_impl.h:58:9
    ======    PIPE_V Read at RAW()+0x0 in block 0 (aiv) on device 0 at pc ... (serialNo:20)
    ======    #0 add_custom.cpp:498:9

Older releases print "PIPE_V Write at RAW()+0xf280 in add_custom.cpp:520" on one line; the
documents' own typos ("illegel", "WARNNING") are accepted.  initcheck blocks are read like
memcheck's ("ERROR: uninitialized read of size N"); leak lines ("... leak of N byte(s)") become
memcheck leaks.  The simulator's stderr blocks use the same header and "at ... on GM" lines, so
they parse too.  Lines that start no block are ignored (the tool's banner, the program's output).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from stress.journal.findings import Access, Finding

_PREFIX = re.compile(r"^\s*=+\s?")
_HEADER = re.compile(r"^(ERROR|WARNING|WARNNING):\s*(.*?)\s+of size\s+(\d+)\s*$", re.I)
_HAZARD = re.compile(
    r"^(ERROR|WARNING|WARNNING):\s*Potential\s+(RAW|WAR|WAW)\s+hazard\s+detected"
    r"(?:\s+in block \d+ \(\w+\))?\s+at\s+(\w+)(?:\s+in\s+(\S+))?",
    re.I,
)
_AT = re.compile(r"^at\s+(0x[0-9a-fA-F]+)\s+on\s+(\w+)")
_CODE = re.compile(r"^code in\s+(\S+?):(\d+)")
_EVENT = re.compile(r"^(\S+)\s+(Read|Write)\s+at\s+\S+?\+(0x[0-9a-fA-F]+)(.*)$")
_FRAME = re.compile(r"^#\d+\s+(\S+?):(\d+)(?::\d+)?\s*$")
_INLINE_SRC = re.compile(r"\bin\s+([\w./${}-]+\.\w+):(\d+)")
_LEAK = re.compile(r"leak of\s+(\d+)\s+byte", re.I)


@dataclass
class _Block:
    """A finding being read: its header line's fields, then what its continuation lines add."""

    finding: Finding
    op: str = ""  # the kernel a hazard names
    file: str = ""  # its "code in FILE:LINE"
    line: int = 0
    events: list[Access] = field(default_factory=list)

    def finish(self) -> Finding:
        """The finding with its accesses (none named: one in the kernel, at its code line)."""
        kernel = Access(op=self.op or "kernel", stage="kernel", file=self.file, line=self.line)
        return replace(self.finding, calls=tuple(self.events) or (kernel,))


def _finding(tool: str, kind: str, size: int, alloc_kind: str = "") -> Finding:
    return Finding(tool, kind, size, alloc_kind=alloc_kind, source="mssanitizer")


def _tool_of(kind: str, default: str) -> str:
    low = kind.lower()
    if "uninit" in low:
        return "initcheck"
    if low in ("raw", "war", "waw"):
        return "racecheck"
    return default if default != "racecheck" else "memcheck"


def _strip(line: str) -> str | None:
    """The text after the '======' prefix (comments after '//' dropped), or None."""
    if not _PREFIX.match(line):
        return None
    text = _PREFIX.sub("", line, count=1)
    return text.split(" // ")[0].strip()


def _event(text: str, block: _Block) -> Access | None:
    m = _EVENT.match(text)
    if not m:
        return None
    src = _INLINE_SRC.search(m.group(4))
    return Access(
        op=block.op or "kernel",
        stage=m.group(1),  # the pipe (PIPE_MTE2, PIPE_V, ...)
        access=m.group(2),
        file=src.group(1) if src else "",
        line=int(src.group(2)) if src else 0,
    )


def _continue(b: _Block, text: str) -> None:
    """Apply one continuation line of a block."""
    if m := _AT.match(text):
        b.finding = replace(b.finding, address=m.group(1), alloc_kind=m.group(2))
    elif m := _CODE.match(text):
        b.file, b.line = m.group(1), int(m.group(2))
    elif ev := _event(text, b):
        b.events.append(ev)
    elif (m := _FRAME.match(text)) and b.events and not b.events[-1].file:
        b.events[-1] = replace(b.events[-1], file=m.group(1), line=int(m.group(2)))


def parse_log(text: str, tool: str = "memcheck") -> list[Finding]:
    """Findings of an msSanitizer log (tool: the --tool it ran, for blocks that do not say)."""
    out: list[Finding] = []
    block: _Block | None = None
    for raw in text.splitlines():
        text_ = _strip(raw)
        if text_ is None:
            continue
        if m := _HAZARD.match(text_):
            if block:
                out.append(block.finish())
            kind, op = m.group(2).upper(), m.group(4) or ""
            block = _Block(_finding("racecheck", kind, 0, alloc_kind=m.group(3)), op=op)
        elif m := _HEADER.match(text_):
            if block:
                out.append(block.finish())
            kind = m.group(2).strip().lower().replace("illegel", "illegal")
            block = _Block(_finding(_tool_of(kind, tool), kind, int(m.group(3))))
        elif m := _LEAK.search(text_):
            if block:
                out.append(block.finish())
                block = None
            out.append(_finding("memcheck", "leak", int(m.group(1))))
        elif block:
            _continue(block, text_)
    if block:
        out.append(block.finish())
    return out
