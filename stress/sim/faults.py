"""The simulator's opt-in faults and what the framework should say about each.

The names and one-line mechanisms live in the simulator (``k_faults`` in
``src/runtime/rt_faults.c``, read through ``aclsimKnownFaults`` / ``aclsimFaultDescription``);
this table adds what the framework is expected to conclude and which protocol phase should see
it first, so the CLI, the tests and ``benchmarks/detection.py`` share one answer. A test keeps
both lists equal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from stress.vocabulary import Diagnosis

__all__ = ["FAULTS", "UNKNOWN", "Fault", "catalogue"]

UNKNOWN = "?"  # what a fault the table lacks expects and is found by


@dataclass(frozen=True)
class Fault:
    """One fault: its name, the run's expected diagnosis, the phase that should catch it, the
    aclnn functions it targets (by their C names: the simulator's description of each fault
    starts with them; a test keeps both in step — a corpus exercises a fault when one of its
    cases calls one of these) and, from the loaded simulator, its one-line mechanism."""

    name: str
    expected: Diagnosis | str  # "?" for a fault this table does not know
    found_by: str
    description: str = ""
    targets: tuple[str, ...] = ()  # the aclnn functions whose calls the fault corrupts
    #: what ``benchmarks/detection.py`` adds to meet the fault (no benchmark edit for a new one):
    #: shipped corpus files beyond the standard corpus, flags for ``aclnn-stress run``, and for
    #: a numeric fault the ``aclnn-stress gradcheck`` arguments that should say ``biased``
    corpus: tuple[str, ...] = ()
    run_args: tuple[str, ...] = ()
    gradcheck: tuple[str, ...] | None = None
    #: the ``--variants`` the fault needs beyond the default, for ``baseline record`` and the
    #: run alike ("" = the default): a twin needs its own baseline entry
    variants: str = ""
    #: ``aclnn-stress corpus generate`` arguments drawing the fault's operator corpus, and the
    #: file of the measured corpus it stands in for (``benchmarks/detection.py --generated``)
    generate: tuple[str, ...] = ()
    generated_for: str = ""


_BACKWARD = ("aclnnMhcPreSinkhornBackward",)
_SCRATCH_POOL_OPS = (
    "aclnnAdd",
    "aclnnMul",
    "aclnnMatmul",
    "aclnnSoftmax",
    "aclnnRmsNorm",
    "aclnnLayerNorm",
    "aclnnReduceSum",
    "aclnnCat",
)


def _fault(
    name: str, expected: Diagnosis, found_by: str, targets: tuple[str, ...], **bench: Any
) -> Fault:
    return Fault(name, expected, found_by, targets=targets, **bench)


#: Every fault the framework knows, in the simulator's order (the description comes from the
#: loaded simulator, see :func:`catalogue`). ``grad-drift`` is numeric: the stress protocol
#: stays ``clean`` and ``aclnn-stress gradcheck`` says ``biased``.
FAULTS: dict[str, Fault] = {
    f.name: f
    for f in (
        _fault("tiling-race", Diagnosis.CROSS_CALL_CONTAMINATION, "interleaved, mixed", _BACKWARD),
        _fault(
            "tiling-ring",
            Diagnosis.CROSS_CALL_CONTAMINATION,
            "interleaved (PCT schedules), mixed",
            _BACKWARD,
        ),
        _fault("shared-scratch", Diagnosis.SELF_RACE, "isolated (per-thread streams)", _BACKWARD),
        _fault(
            "stale-tail",
            Diagnosis.ORDER_DEPENDENCE,
            "baseline record (reverse order), shuffled",
            _BACKWARD,
        ),
        _fault("empty-skip", Diagnosis.UNWRITTEN_OUTPUT, "serial (canary)", _BACKWARD),
        _fault(
            "grad-drift",
            Diagnosis.CLEAN,
            "aclnn-stress gradcheck -> biased",
            _BACKWARD,
            gradcheck=(),
        ),
        _fault("add-race", Diagnosis.RUNTIME_FAULT, "control (per-thread streams)", ("aclnnAdd",)),
        _fault("crash", Diagnosis.CRASH, "interleaved, mixed", _BACKWARD),
        _fault("hang", Diagnosis.HANG, "isolated, mixed", _BACKWARD),
        _fault(
            "scratch-pool",
            Diagnosis.CROSS_CALL_CONTAMINATION,
            "mixed (per-thread streams)",
            _SCRATCH_POOL_OPS,
        ),
        _fault(
            "softmax-grad-tail",
            Diagnosis.CLEAN,
            "aclnn-stress gradcheck --op corpus/ops/softmax_backward.toml -> biased",
            ("aclnnSoftmaxBackward",),
            gradcheck=("--op", "corpus/ops/softmax_backward.toml"),
        ),
        _fault(
            "weight-cache",
            # a pointer-keyed cache: the disagreement in recycled memory goes away at fresh
            # addresses after the same case, so it is the address, not the order
            Diagnosis.ADDRESS_DEPENDENCE,
            "baseline record (fresh vs recycled addresses) over corpus/ops/matmul.toml",
            ("aclnnMatmul",),
            corpus=("corpus/ops/matmul.toml",),
        ),
        _fault(
            "view-staging",
            Diagnosis.CROSS_CALL_CONTAMINATION,
            "burst, mixed (per-thread streams; view variants)",
            ("aclnnMhcPreSinkhorn", "aclnnMhcPreSinkhornBackward"),
            generate=("--op", "mhc_pre_sinkhorn_backward"),
            generated_for="corpus/mhc.toml",
        ),
        _fault(
            "dirty-accumulator",
            Diagnosis.UNINITIALIZED_READ,
            "serial (workspace prefilled with the alternating canary) over "
            "corpus/ops/layer_norm.toml",
            ("aclnnLayerNorm",),
            corpus=("corpus/ops/layer_norm.toml",),
        ),
        _fault(
            "gamma-cache",
            Diagnosis.ADDRESS_DEPENDENCE,
            "baseline record (fresh vs recycled addresses) over corpus/ops/rms_norm.toml; with "
            "a baseline recorded --allocator fresh, shuffled [allocator=recycle] (fresh: clean)",
            ("aclnnRmsNorm",),
            corpus=("corpus/ops/rms_norm.toml",),
        ),
        _fault(
            "executor-reuse",
            Diagnosis.EXECUTOR_REUSE,
            "serial (the repeat mode: a repeatable executor launched again after rebinding) over "
            "corpus/pool/mul.toml",
            ("aclnnMul",),
        ),
        _fault(
            "plan-cache",
            Diagnosis.CROSS_CALL_CONTAMINATION,
            "interleaved (a case with its twins: --variants twins) over corpus/ops/softmax.toml",
            ("aclnnSoftmax",),
            corpus=("corpus/ops/softmax.toml",),
            variants="default,twins",
            generate=("--declaration", "corpus/ops/softmax.toml"),
            generated_for="corpus/ops/softmax.toml",
        ),
        _fault(
            "split-k",
            Diagnosis.SELF_RACE,
            "burst, isolated (per-thread streams; the edge-size variants past K = 2048) over "
            "corpus/ops/matmul.toml",
            ("aclnnMatmul",),
            corpus=("corpus/ops/matmul.toml",),
            # decode-shaped GEMMs (small M and N, where a kernel splits K): the large case
            # raises one dim to 16 MiB, so its work stays near the shipped corpus's
            generate=(
                "--declaration",
                "corpus/ops/matmul.toml",
                "--dim",
                "M=1:16",
                "--dim",
                "N=1:16",
            ),
            generated_for="corpus/ops/matmul.toml",
        ),
        _fault(
            "thread-plan",
            Diagnosis.MODE_DEPENDENCE,
            "serial (the pipeline mode: phase 1 on the worker, the launch on a launch thread) "
            "over corpus/ops/reduce_sum.toml",
            ("aclnnReduceSum",),
            corpus=("corpus/ops/reduce_sum.toml",),
        ),
        _fault(
            "side-stream",
            Diagnosis.MODE_DEPENDENCE,
            "serial (the event mode: the outputs consumed on a second stream after an event) "
            "over corpus/ops/cat.toml",
            ("aclnnCat",),
            corpus=("corpus/ops/cat.toml",),
        ),
    )
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
        text = (describe(name.encode()) or b"").decode() if describe else ""
        known = FAULTS.get(name, Fault(name, UNKNOWN, UNKNOWN))
        out.append(dataclasses.replace(known, description=text))
    return out
