"""The simulator's opt-in faults and what the framework should say about each.

The names and one-line mechanisms live in the simulator (``k_faults`` in
``src/runtime/rt_faults.c``, read through ``aclsimKnownFaults`` / ``aclsimFaultDescription``);
this table adds what the framework is expected to conclude and which protocol phase should see
it first, so the CLI, the tests and ``benchmarks/detection.py`` share one answer. A test keeps
both lists equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stress.model import Diagnosis

__all__ = ["EXPECTED", "TARGETS", "UNKNOWN", "Fault", "catalogue"]

UNKNOWN = "?"  # what a fault the table lacks expects and is found by


@dataclass(frozen=True)
class Fault:
    """One fault: its name, the run's expected diagnosis, the phase that should catch it."""

    name: str
    expected: Diagnosis | str  # "?" for a fault this table does not know
    found_by: str
    description: str = ""
    targets: tuple[str, ...] = ()  # the aclnn functions whose calls the fault corrupts


#: name -> (expected diagnosis, the phase or tool that should catch it). ``grad-drift`` is
#: numeric: the stress protocol stays ``clean`` and ``aclnn-stress gradcheck`` says ``biased``.
EXPECTED: dict[str, tuple[Diagnosis, str]] = {
    "tiling-race": (Diagnosis.CROSS_CALL_CONTAMINATION, "interleaved, mixed"),
    "tiling-ring": (Diagnosis.CROSS_CALL_CONTAMINATION, "interleaved (PCT schedules), mixed"),
    "shared-scratch": (Diagnosis.SELF_RACE, "isolated (per-thread streams)"),
    "stale-tail": (Diagnosis.ORDER_DEPENDENCE, "shuffled"),
    "empty-skip": (Diagnosis.UNWRITTEN_OUTPUT, "serial (canary)"),
    "grad-drift": (Diagnosis.CLEAN, "aclnn-stress gradcheck -> biased"),
    "add-race": (Diagnosis.RUNTIME_FAULT, "control (per-thread streams)"),
    "crash": (Diagnosis.CRASH, "interleaved, mixed"),
    "hang": (Diagnosis.HANG, "isolated, mixed"),
    "scratch-pool": (Diagnosis.CROSS_CALL_CONTAMINATION, "mixed (per-thread streams)"),
    "softmax-grad-tail": (
        Diagnosis.CLEAN,
        "aclnn-stress gradcheck --op corpus/ops/softmax_backward.toml -> biased",
    ),
}


_BACKWARD = ("aclnnMhcPreSinkhornBackward",)

#: name -> the aclnn functions the fault targets, by their C names (the simulator's description
#: of each fault starts with them; a test keeps both in step). A corpus exercises a fault when
#: one of its cases calls one of these functions.
TARGETS: dict[str, tuple[str, ...]] = {
    "tiling-race": _BACKWARD,
    "tiling-ring": _BACKWARD,
    "shared-scratch": _BACKWARD,
    "stale-tail": _BACKWARD,
    "empty-skip": _BACKWARD,
    "grad-drift": _BACKWARD,
    "add-race": ("aclnnAdd",),
    "crash": _BACKWARD,
    "hang": _BACKWARD,
    "scratch-pool": (
        "aclnnAdd",
        "aclnnMul",
        "aclnnMatmul",
        "aclnnSoftmax",
        "aclnnRmsNorm",
        "aclnnLayerNorm",
        "aclnnReduceSum",
        "aclnnCat",
    ),
    "softmax-grad-tail": ("aclnnSoftmaxBackward",),
}


def catalogue(api: Any) -> list[Fault]:
    """The faults the loaded simulator knows, in its order, with their descriptions.

    ``api`` is a bound simulator API (``stress.acl.runtime("sim").api``). A fault the simulator
    has but this table lacks is still listed, with ``expected`` "?" so the gap is visible.
    """
    names = [n for n in (api.aclsimKnownFaults() or b"").decode().split(",") if n]
    describe = api.aclsimFaultDescription if api.has("aclsimFaultDescription") else None
    out = []
    for name in names:
        expected, found_by = EXPECTED.get(name, (UNKNOWN, UNKNOWN))
        text = (describe(name.encode()) or b"").decode() if describe else ""
        out.append(Fault(name, expected, found_by, text, TARGETS.get(name, ())))
    return out
