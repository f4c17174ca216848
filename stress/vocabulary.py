"""The data model: every status, verdict and diagnosis word, and the one failure predicate.

Every other module names these values through the enums below, never as string literals. They
are :class:`enum.StrEnum` members, so a member *is* its string: the journal (``results.jsonl``),
``report.json`` and baselines keep exactly the words they always had, and records read back from
a file compare equal to the members.

Severity (the jcstress idea): verdicts are ordered from the worst (``CRASH``) to ``PASS``;
:func:`Verdict.combine` of several verdicts is the worst of them, so a phase's verdict is the
combination of its cases', and a case's over phase variants the combination of those.

Schema versions. Every file the framework writes carries ``"schema": "aclnn-stress/<kind>/<n>"``
(see :data:`SCHEMAS`); :func:`schema_version` reads it back, and a file without one is version 1
(files written before the field existed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "SCHEMAS",
    "SIZE_VARIANTS",
    "VERSION",
    "VIEWS",
    "VIEW_SEPARATOR",
    "ChildStatus",
    "Diagnosis",
    "PhaseStatus",
    "RunVerdict",
    "Status",
    "Verdict",
    "View",
    "is_failure",
    "schema",
    "schema_version",
    "size_kind",
    "split_view",
    "variant_id",
    "variant_kind",
]


class Status(StrEnum):
    """How one call ended (the ``status`` of a call record and of a baseline entry)."""

    OK = "ok"  # the call returned 0 and its outputs were downloaded
    ERROR = "error"  # an ACL/aclnn status other than 0 (expected for negative cases)
    CRASH = "crash"  # the process died while the call was in flight
    HANG = "hang"  # the call did not finish within its hang limit (README "Hangs")
    # device memory (207001, 207018, 200000 from aclrtMalloc or an operator) or host memory
    # (MemoryError while preparing the call) ran out: the resource, not the operator, failed
    OUT_OF_MEMORY = "out-of-memory"


class Verdict(StrEnum):
    """A case's verdict in one phase, declared from the worst to the best."""

    CRASH = "CRASH"
    HANG = "HANG"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"  # a call ran out of device or host memory
    INCOMPLETE = "INCOMPLETE"  # the phase made no call: nothing was tested
    ERROR = "ERROR"
    UNWRITTEN = "UNWRITTEN"
    MISMATCH_RANDOM = "MISMATCH_RANDOM"
    MISMATCH_STABLE = "MISMATCH_STABLE"
    PASS = "PASS"

    @property
    def severity(self) -> int:
        """Larger is worse: ``PASS`` is 0, ``CRASH`` the largest."""
        return len(_VERDICT_ORDER) - 1 - _VERDICT_ORDER.index(self)

    @property
    def failed(self) -> bool:
        return self is not Verdict.PASS

    @classmethod
    def combine(cls, verdicts: Iterable[str]) -> Verdict:
        """The most severe of ``verdicts`` (``PASS`` for none)."""
        return max((cls(v) for v in verdicts), key=lambda v: v.severity, default=cls.PASS)

    @property
    def style(self) -> str:
        """The rich style the console and tables show this verdict in."""
        return _STYLE[self]


_VERDICT_ORDER = tuple(Verdict)
_STYLE = {
    Verdict.PASS: "green",
    Verdict.MISMATCH_STABLE: "yellow",
    Verdict.MISMATCH_RANDOM: "yellow",
    Verdict.UNWRITTEN: "magenta",
    Verdict.ERROR: "red",
    Verdict.CRASH: "bold red",
    Verdict.HANG: "bold red",
    Verdict.OUT_OF_MEMORY: "bold magenta",
    Verdict.INCOMPLETE: "magenta",
}


class PhaseStatus(StrEnum):
    """How a phase (or the child process that ran it) ended."""

    DONE = "done"
    HUNG = "hung"
    CRASHED = "crashed"
    FAILED = "failed"  # the child exited non-zero: a bug or a configuration error
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"
    NO_CALLS = "no-calls"  # the phase ended without a single call (e.g. threads too slow to start)

    @property
    def verdict(self) -> Verdict:
        """The least verdict a phase that ended this way gets, whatever its calls say."""
        return {
            PhaseStatus.CRASHED: Verdict.CRASH,
            PhaseStatus.HUNG: Verdict.HANG,
            PhaseStatus.FAILED: Verdict.ERROR,
            PhaseStatus.NO_CALLS: Verdict.INCOMPLETE,
        }.get(self, Verdict.PASS)


class ChildStatus(StrEnum):
    """The ``status`` of a child's ``child-end`` record: a phase status, or an exception."""

    DONE = "done"
    HUNG = "hung"
    ERROR = "error"  # the job raised: ``detail`` is ``<ExceptionType>: <message>``


class Diagnosis(StrEnum):
    """The run's diagnosis, in the order :func:`stress.grading.diagnosis.diagnose` checks them."""

    CRASH = "crash"
    HANG = "hang"
    OUT_OF_MEMORY = "out-of-memory"  # device or host memory ran out: the resource, not a race
    RUNTIME_FAULT = "runtime-fault"
    UNWRITTEN_OUTPUT = "unwritten-output"
    SELF_RACE = "self-race"
    CROSS_CALL_CONTAMINATION = "cross-call-contamination"
    ORDER_DEPENDENCE = "order-dependence"
    # a non-contiguous view of the inputs gives another result than its contiguous twin, even
    # serially (stress.corpus.variants: view invariance)
    VIEW_DEPENDENCE = "view-dependence"
    # a serial result that changes with the prior contents of the call's workspace or outputs
    # (the prefill byte alternates between calls): a buffer read before it is written
    # (stress.grading.prefill)
    UNINITIALIZED_READ = "uninitialized-read"
    # a case fails only in device memory recycled by the caching allocator and passes at
    # fresh addresses in the same run: a cache keyed on a device address, not its content
    # (stress.grading.address)
    ADDRESS_DEPENDENCE = "address-dependence"
    # a case fails only when its repeatable executor is launched again (after rebinding its
    # buffers, or at the same addresses) while first launches and plain calls pass
    # (stress.grading.reuse; the repeat mode, stress.engine.call.repeatable)
    EXECUTOR_REUSE = "executor-reuse"
    # a case fails only in one API mode (event, pipeline) while its plain calls pass: it
    # depends on how the caller drives the API (stress.grading.mode_split)
    MODE_DEPENDENCE = "mode-dependence"
    BASELINE_MISMATCH = "baseline-mismatch"
    OPERATOR_ERROR = "operator-error"
    # Nothing failed, but the run is not complete: it was killed or interrupted, a phase never
    # ended, or a phase made no call. Not ``clean``, since what was not run cannot have passed.
    # Any finding outranks it (a killed run that found a race is diagnosed with the race).
    INCOMPLETE = "incomplete"
    CLEAN = "clean"

    @property
    def run_verdict(self) -> RunVerdict:
        if self is Diagnosis.CLEAN:
            return RunVerdict.CLEAN
        return RunVerdict.INCOMPLETE if self is Diagnosis.INCOMPLETE else RunVerdict.FINDINGS


class View(StrEnum):
    """A view variant's layout of its inputs (:mod:`stress.corpus.variants`), in the order the
    variants are derived."""

    TRANSPOSE = "transpose"  # the last two dims strided as a transpose of the storage
    PAD = "pad"  # rows padded: a row stride past the last dim
    OFFSET = "offset"  # a non-zero storage offset
    BROADCAST = "broadcast"  # an expanded input: stride 0 along its first dim past 1


#: Every view kind, in the order variants are derived.
VIEWS: tuple[str, ...] = tuple(str(v) for v in View)
#: The variants that change a case's sizes (:mod:`stress.corpus.size_variants`): cases of
#: their own, with their own baselines (``<id>@empty-<dim>``, ``<id>@edge-<dim>-<value>``).
SIZE_VARIANTS: tuple[str, ...] = ("empty", "edge")
#: Between a twin's id and the view kind in a variant's id (not allowed in a corpus id).
VIEW_SEPARATOR = "@"


def variant_id(twin: str, view: str) -> str:
    """The id of ``twin``'s ``view`` variant (the inverse of :func:`split_view`)."""
    return f"{twin}{VIEW_SEPARATOR}{view}"


def split_view(case_id: str) -> tuple[str, str]:
    """(twin id, view kind) of a case id: a view variant's id is ``<twin>@<view>``
    (:mod:`stress.corpus.variants`; ``@`` is not allowed in a corpus id); the kind is "" for a
    contiguous case."""
    twin, sep, view = case_id.rpartition(VIEW_SEPARATOR)
    return (twin, view) if sep and view in View.__members__.values() else (case_id, "")


def size_kind(case_id: str) -> str:
    """The size variant kind of a case id (``empty`` for ``<id>@empty-<dim>``, ``edge`` for
    ``<id>@edge-<dim>-<n>`` and the large ``<id>@large-<dim>-<n>``), "" for any other case."""
    tail = case_id.rpartition(VIEW_SEPARATOR)[2] if VIEW_SEPARATOR in case_id else ""
    if tail.startswith("empty-"):
        return "empty"
    return "edge" if tail.startswith(("edge-", "large-")) else ""


def variant_kind(case_id: str) -> str:
    """The variant kind of a case id: its view (:func:`split_view`), size kind or ``twins``
    (``<id>@dtype-<var>=<v>``, ``<id>@attr-<name>=<v>``: stress.corpus.twins), "" for none."""
    tail = case_id.rpartition(VIEW_SEPARATOR)[2] if VIEW_SEPARATOR in case_id else ""
    if tail.startswith(("dtype-", "attr-")) and "=" in tail:
        return "twins"
    return split_view(case_id)[1] or size_kind(case_id)


class RunVerdict(StrEnum):
    """The verdict of a whole run (``report.json`` ``verdict``; CLI exit 0, 1 or 3)."""

    CLEAN = "clean"
    FINDINGS = "findings"
    INCOMPLETE = "incomplete"  # the run did not finish and found nothing in what it ran


class Judged(Protocol):
    """What :func:`is_failure` reads of a call record (:class:`stress.records.CallRecord`)."""

    status: Any
    match: bool | None
    unwritten: Any


def is_failure(rec: Judged | Mapping[str, Any]) -> bool:
    """Whether one call record is a failure: a result that differs from the baseline, a canary
    left in an output, a crash or hang, or an error status that was not expected (a negative
    case's expected status has ``match`` true and is not a failure).

    The one predicate for live progress, grading, the interference matrix and benchmarks; a
    :class:`CallRecord` answers it as :attr:`CallRecord.failed`.
    """
    try:  # a record (the journal's lines are read typed), else its JSON
        status, match, unwritten = rec.status, rec.match, rec.unwritten  # type: ignore[union-attr]
    except AttributeError:
        status, match, unwritten = rec.get("status"), rec.get("match"), rec.get("unwritten")  # type: ignore[union-attr]
    if status == Status.OK:
        return match is False or bool(unwritten)
    return not match


# -- versions --------------------------------------------------------------------------------
VERSION = "0.1.0"  # the package's (pyproject.toml's); a journal's run header carries it
SCHEMAS = {
    "results": 1,
    "report": 1,
    "baseline": 1,
    "pytest-summary": 1,
    "pytest-runs": 1,
    "gradcheck": 1,
}


def schema(kind: str) -> str:
    """The schema id written into a file of ``kind``: ``aclnn-stress/<kind>/<version>``."""
    return f"aclnn-stress/{kind}/{SCHEMAS[kind]}"


def schema_version(doc: Mapping[str, Any], kind: str) -> int:
    """The version of a file's ``schema`` field (1 when absent: files from before it)."""
    text = doc.get("schema")
    if text is None:
        return 1
    prefix = f"aclnn-stress/{kind}/"
    number = text[len(prefix) :] if isinstance(text, str) and text.startswith(prefix) else ""
    if not number.isdigit():
        raise ValueError(f"schema {text!r} is not an aclnn-stress {kind} schema")
    return int(number)
