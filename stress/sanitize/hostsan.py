"""AddressSanitizer / ThreadSanitizer reports of an instrumented simulator, as findings.

The simulator's ``asan`` / ``tsan`` variants (stress/sim/variant.py) write their reports in the
sanitizers' documented text format, one report a block::

    ==1234==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x... at pc ... bp ... sp ...
    WRITE of size 4 at 0x602000000014 thread T0
        #0 0x7f... in bad_store /path/nb_debug.c:12
    ...
    WARNING: ThreadSanitizer: data race (pid=1234)
      Write of size 8 at 0x7f... by thread T3:
        #0 bwd_faults /path/op_mhc_pre_sinkhorn_backward.c:891 (libopapi.so+0x1234)
      Previous read of size 8 at 0x7f... by thread T2:
        #0 race_launch_hook ...

:func:`parse_report` turns each block into a :class:`~stress.journal.findings.Finding`
(``tool`` asan/tsan, ``kind`` the report's title, ``bytes`` the access size, one ``Access`` per
access stack naming the aclnn / acl API function in it as the call and the innermost simulator
frame as the source location).  Reports whose stacks never pass through the simulator's sources
(Python's own leaks, say) are dropped: they are not the simulator's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from stress.journal.findings import Access, Finding

HOST_TOOLS = ("asan", "tsan")

_ASAN_HEAD = re.compile(
    r"ERROR: (?:AddressSanitizer|LeakSanitizer): ([\w-]+)"
    r"(?: on (?:unknown )?(?:address )?(0x[0-9a-f]+))?"
)
_TSAN_HEAD = re.compile(r"WARNING: ThreadSanitizer: ([^(\n]+?)\s*(?:\(pid=\d+\))?$")
_SIGNAL = re.compile(r"The signal is caused by a (READ|WRITE) memory access")
_LEAK = re.compile(r"^(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object")
_ACCESS = re.compile(
    r"^\s*(?:(Previous|Atomic|Previous atomic)\s+)?(READ|WRITE|Read|Write|read|write) of size (\d+)"
    r"(?: at (0x[0-9a-f]+))?"
)
_FRAME = re.compile(r"^\s*#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+)(?: (\S+?):(\d+)(?::\d+)?)?(?:\s|$)")


#: A stack through an operator library's source with no API frame runs on a stream worker or a
#: kernel's helper thread: a kernel stack, named by its outermost operator function (these
#: generic thread entries of op_mhc_common.c excepted).
_THREAD_ENTRY = ("thread_main", "mhc_parallel")
_OPAPI = "opapi"


@dataclass(frozen=True)
class _Stack:
    access: str  # Read / Write / "" (an allocation or leak stack)
    size: int
    frames: tuple[tuple[str, str, int], ...]  # (function, file, line), innermost first


def _is_sim(path: str, sim_dirs: tuple[str, ...]) -> bool:
    return bool(path) and any(path.startswith(d) for d in sim_dirs)


def _access(stack: _Stack, sim_dirs: tuple[str, ...]) -> Access | None:
    """The call a stack belongs to, or None when no frame is the simulator's.  On the host the
    call is the outermost aclnn* / acl* API frame (phase1 for ``...GetWorkspaceSize``, phase2
    for the launch, runtime for an acl* API); on a stream worker (the frames pass through
    ``launch_task``) it is the operator's kernel function, stage kernel.  The location is the
    innermost simulator frame's file:line."""
    sim = [f for f in stack.frames if _is_sim(f[1], sim_dirs)]
    if not sim:
        return None
    api = [f[0] for f in sim if f[0].startswith("acl")]
    if api:
        op = api[-1]
        stage = "phase1" if op.endswith("GetWorkspaceSize") else "runtime"
        stage = "phase2" if op.startswith("aclnn") and stage != "phase1" else stage
    elif any(f"/{_OPAPI}/" in f[1] for f in sim):
        ops = [f[0] for f in sim if f"/{_OPAPI}/" in f[1] and f[0] not in _THREAD_ENTRY]
        op, stage = (ops[-1] if ops else sim[0][0]), "kernel"
    else:
        op, stage = sim[-1][0], ""
    _, file, line = sim[0]
    return Access(op=op, stage=stage, access=stack.access, file=Path(file).name, line=line)


def _stacks(lines: list[str]) -> list[_Stack]:
    stacks: list[_Stack] = []
    access, size, frames = "", 0, []
    for ln in lines:
        signal = _SIGNAL.search(ln)  # asan SEGV: the access is named before the one stack
        if signal:
            access = signal.group(1).capitalize()
            continue
        m = _ACCESS.match(ln) or _LEAK.match(ln)
        if m and m.re is _ACCESS:
            if frames:
                stacks.append(_Stack(access, size, tuple(frames)))
            access, size, frames = m.group(2).capitalize(), int(m.group(3)), []
            continue
        if m:  # a leak block
            if frames:
                stacks.append(_Stack(access, size, tuple(frames)))
            access, size, frames = "", int(m.group(2)), []
            continue
        f = _FRAME.match(ln)
        if f:
            frames.append((f.group(2), f.group(3) or "", int(f.group(4) or 0)))
        elif not ln.strip() or ln.lstrip().startswith(("Thread T", "Location is", "Mutex M")):
            if frames:
                stacks.append(_Stack(access, size, tuple(frames)))
            access, size, frames = "", 0, []
    if frames:
        stacks.append(_Stack(access, size, tuple(frames)))
    return stacks


def _blocks(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(tool, kind, address, body lines) per report."""
    out: list[tuple[str, str, str, list[str]]] = []
    cur: list[str] | None = None
    for ln in text.splitlines():
        a, t = _ASAN_HEAD.search(ln), _TSAN_HEAD.search(ln)
        if a or t:
            cur = []
            tool, kind, addr = (
                ("asan", a.group(1), a.group(2) or "") if a else ("tsan", t.group(1), "")
            )  # type: ignore[union-attr]
            out.append((tool, kind, addr, cur))
        elif cur is not None:
            if ln.startswith("SUMMARY: "):
                cur = None
            else:
                cur.append(ln)
    return out


def parse_report(text: str, sim_dirs: tuple[str, ...]) -> list[Finding]:
    """Findings of an ASan/LSan/TSan report text; only reports with a frame in ``sim_dirs`` (the
    simulator's source folders, as compiled into the debug info)."""
    findings: list[Finding] = []
    for tool, kind, addr, body in _blocks(text):
        stacks = _stacks(body)
        if kind == "detected":  # LeakSanitizer: detected memory leaks
            kind = "leak"
        if kind == "leak":
            for st in stacks:
                acc = _access(st, sim_dirs)
                if acc is not None:
                    findings.append(Finding(tool, "leak", st.size, calls=(acc,), source=tool))
            continue
        accesses = [a for a in (_access(s, sim_dirs) for s in stacks if s.access) if a]
        if not accesses:
            continue
        size = next((s.size for s in stacks if s.access), 0)
        calls = tuple(reversed(accesses)) if tool == "tsan" else tuple(accesses)  # earlier first
        findings.append(Finding(tool, kind, size, address=addr, calls=calls, source=tool))
    return _dedup(findings)


def _dedup(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = (f.tool, f.kind, tuple((c.op, c.stage, c.file, c.line) for c in f.calls))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def read_logs(prefix: Path, sim_dirs: tuple[str, ...]) -> list[Finding]:
    """Findings of every ``<prefix>.<pid>`` log a run's processes wrote (``log_path``)."""
    text = "".join(
        p.read_text(errors="replace") for p in sorted(prefix.parent.glob(prefix.name + ".*"))
    )
    return parse_report(text, sim_dirs)
