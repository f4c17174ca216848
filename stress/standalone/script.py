"""A finished run's failing case(s) as a standalone Python script (ctypes + numpy only).

:func:`write_script` reads the run directory (``report.json``, the journal's header record, the
reproducer corpus or the run's corpora, the baseline), chooses the cases (the shrunk reproducer,
else the failing cases of the first failing phase, or the ones named), builds each case's
argument layout and seeded inputs exactly as the engine does (:mod:`stress.engine.call.layout`,
:mod:`stress.engine.call.inputs`: a backward's saved tensors come from running its forward on this
backend) and renders ``templates/reproducer.py.j2`` with Jinja2. The script embeds the input
bytes (zlib + base64), the phase-1 C argument types, and per output the baseline's sha256 and
canary-chance count; it does not import ``stress``.

Inputs of at most :data:`EMBED_LIMIT` bytes (64 KiB each) are embedded; larger ones go to a side
file next to the script, ``<script stem>.npz`` (``reproduce.npz``: one uint8 array per input,
``numpy.savez_compressed``), which the script loads and checks against each input's sha256
recorded in the script. Regenerating them in the script instead is not possible bit-exactly in
general: a backward's saved inputs come from running its forward on the device.
"""

from __future__ import annotations

import base64
import hashlib
import io
import pprint
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from stress import acl
from stress.baseline.store import Baseline
from stress.config import RunConfig
from stress.corpus.parse import Case, load_corpus
from stress.corpus.variants import run_variants
from stress.engine.call.inputs import generate_inputs
from stress.engine.call.layout import ArraySlot, ScalarSlot, TensorSlot, layout
from stress.engine.call.views import storage_bytes
from stress.errors import ConfigError
from stress.files import atomic_write_bytes
from stress.grading.canaries import second_canary
from stress.journal.lines import RunHeader
from stress.journal.results import read_results
from stress.records import Reproducer, RunReport, load_report
from stress.standalone.replay import ReplayModes, replay_modes
from stress.vocabulary import VERSION, Status, Verdict

__all__ = ["Reproduction", "choose_cases", "render_script", "write_script"]

SCRIPT_NAME = "reproduce.py"
DEFAULT_ITERATIONS = 50
EMBED_LIMIT = 64 * 1024  # an input of more raw bytes goes to the side file <stem>.npz


@dataclass(frozen=True)
class Reproduction:
    """What a generated script reproduces."""

    path: Path
    phase: str
    cases: tuple[str, ...]
    bytes_embedded: int  # of the script's encoded inputs
    side_file: Path | None = None  # the .npz holding the inputs over EMBED_LIMIT bytes
    bytes_side: int = 0  # raw input bytes in the side file
    replay: ReplayModes = field(default_factory=ReplayModes)  # modes, memory it replays

    def replaying(self) -> str:
        """What it replays besides plain calls, for a line of output ("" for nothing)."""
        what = [f"the {m} mode" for m in self.replay.modes]
        what += ["recycled memory"] if self.replay.recycle else []
        return f"replaying {', '.join(what)}" if what else ""


def _read_run(run_dir: Path) -> tuple[RunReport, RunHeader]:
    report_path, journal = run_dir / "report.json", run_dir / "results.jsonl"
    if not report_path.is_file() or not journal.is_file():
        raise ConfigError(
            f"{run_dir}: not a finished run (no report.json / results.jsonl); give the --out "
            "folder of an `aclnn-stress run`"
        )
    fix = "re-render it with `aclnn-stress report DIR`"
    header = next(read_results(journal, typed=True), None)  # the first line, checked
    if not isinstance(header, RunHeader):
        raise ConfigError(f"{journal}: line 1 is not the run header; {fix}")
    return load_report(report_path, fix=fix), header


def choose_cases(report: RunReport, wanted: Sequence[str] = ()) -> tuple[str, list[str]]:
    """(phase, case ids): ``wanted``, else the reproducer's, else the first failing phase's
    failing cases (at most two). ConfigError when the run has nothing failing to reproduce."""
    repro = report.reproducer or Reproducer()
    if wanted:
        return repro.phase or "serial", list(wanted)
    if repro.cases:
        return str(repro.phase), list(repro.cases)
    for phase in report.phases:
        failing = [c.id for c in phase.cases if c.verdict != Verdict.PASS]
        if failing:
            return phase.name, failing[:2]
    raise ConfigError(f"run {report.seed}: no failing case to reproduce; name one with --case ID")


def _load_cases(report: RunReport, header: RunHeader, run_dir: Path) -> dict:
    config = RunConfig.from_json(header.config)
    repro = report.reproducer
    paths = [repro.corpus] if repro and repro.corpus else []
    paths += [*header.corpus, *header.control]
    found = [p for p in dict.fromkeys(paths) if Path(p).is_file()]
    if not found:
        raise ConfigError(
            f"{run_dir}: the run's corpus files ({', '.join(paths)}) are not found from here; "
            "run `aclnn-stress reproduce` from the folder the run was started in"
        )
    by_id: dict[str, Case] = {}
    for path in found:  # the reproducer corpus first; the run's corpora add the rest
        for case in run_variants(load_corpus([path], config.include_dirs), config):
            by_id.setdefault(case.id, case)
    return by_id


def _b64(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def _tensor(slot: TensorSlot) -> dict[str, Any]:
    role = "inout" if slot.inout else "output" if slot.output else "input"
    strides = [int(s) for s in slot.strides][: len(slot.shape)]
    t = {"kind": "tensor", "name": slot.name, "role": role, "shape": list(slot.shape),
         "strides": strides, "acl_dtype": slot.acl_dtype, "nbytes": slot.alloc_nbytes}  # fmt: skip
    if slot.view is not None:  # a view variant's input: its storage is uploaded
        t.update(offset=slot.view.offset, storage=list(slot.view.storage))
    return t


def _views(slots: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """The view geometry of each input laid out as a view (a view variant's), by name."""
    members = [s for k, s in slots if k == "tensor"]
    members += [m for k, s in slots if k == "tensor_list" for m in s]
    return {m.name: m.view for m in members if m.view is not None}


def _scalar(slot: ScalarSlot) -> dict[str, Any]:
    raw = base64.b64encode(slot.raw).decode("ascii")
    return {"kind": "scalar", "name": slot.name, "raw": raw, "acl_dtype": slot.acl_dtype}


def _arg(kind: str, slot: Any, ctype: str) -> dict[str, Any]:
    if kind == "tensor":
        return _tensor(slot)
    if kind == "scalar":
        return _scalar(slot)
    if kind == "tensor_list":
        return {"kind": kind, "members": [_tensor(s) for s in slot]}
    if kind == "scalar_list":
        return {"kind": kind, "members": [_scalar(s) for s in slot]}
    if kind == "array":
        assert isinstance(slot, ArraySlot)
        values = [v.item() if hasattr(v, "item") else v for v in slot.values[: slot.n]]
        return {"kind": kind, "create": slot.create, "destroy": slot.destroy, "values": values}
    if kind == "null":
        return {"kind": kind}
    value = slot.decode("utf-8") if isinstance(slot, bytes) else slot
    if isinstance(value, np.generic):
        value = value.item()
    return {"kind": "attr", "value": value, "ctype": ctype}


def _expect(case: Case, baseline: Baseline) -> tuple[int, dict[str, Any]]:
    cb = baseline.cases.get(case.reference)  # a view variant's: its contiguous twin
    if cb is None:
        raise ConfigError(f"{case.reference}: not in the run's baseline; re-record it")
    expect = {}
    for name, out in cb.outputs.items():
        trusted = cb.bit_deterministic and out.unwritten == 0  # else the bytes are no reference
        expect[name] = {"digest": out.digest if trusted else None,
                        "canary_chance": out.canary_chance,
                        "itemsize": np.dtype(_dtype(out.dtype)).itemsize}  # fmt: skip
    return (0 if cb.status == Status.OK else cb.code), expect


def _dtype(name: str) -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16 if name == "bfloat16" else name


def _call(rt: acl.Runtime, case: Case, inputs: Mapping[str, np.ndarray], baseline: Baseline):
    spec = case.spec
    phase1 = rt.api.operator(spec.function, spec.signature)[0]
    ctypes_ = [t.__name__ for t in phase1.argtypes[:-2]]  # without workspaceSize, executor
    slots = layout(spec, case.params, case.key, case.view)
    status, expect = _expect(case, baseline)
    call = {"case": case.id, "function": spec.function, "argtypes": ctypes_, "status": status,
            "expect": expect, "not_repeatable": spec.not_repeatable,
            "args": [_arg(k, s, c) for (k, s), c in zip(slots, ctypes_, strict=True)]}  # fmt: skip
    views = _views(slots)
    blobs = {
        f"{case.id}/{name}": (
            storage_bytes(np.ascontiguousarray(a), views[name]) if name in views else a
        ).tobytes()
        for name, a in inputs.items()
    }
    return call, blobs


@dataclass(frozen=True)
class _Inputs:
    """The inputs split by :data:`EMBED_LIMIT`: embedded (encoded) and side-file ones."""

    embedded: dict[str, str]  # key -> base64 of zlib
    side: dict[str, bytes]  # key -> raw bytes
    digests: dict[str, str]  # side key -> sha256 of its raw bytes


def _split_inputs(raw: Mapping[str, bytes], limit: int) -> _Inputs:
    embedded = {k: _b64(b) for k, b in raw.items() if len(b) <= limit}
    side = {k: b for k, b in raw.items() if len(b) > limit}
    return _Inputs(embedded, side, {k: hashlib.sha256(b).hexdigest() for k, b in side.items()})


def _npz_bytes(side: Mapping[str, bytes]) -> bytes:
    """One uint8 array per input, named i0, i1, ... in the order of ``side``."""
    buf = io.BytesIO()
    arrays = {f"i{i}": np.frombuffer(b, np.uint8) for i, b in enumerate(side.values())}
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("stress.standalone", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # Python source, not HTML: values go through pyrepr only
    )
    env.filters["pyrepr"] = repr
    env.filters["pyformat"] = lambda value: pprint.pformat(value, width=100, sort_dicts=False)
    return env


def render_script(context: Mapping[str, Any]) -> str:
    """The script's source for the template ``context``."""
    return _environment().get_template("reproducer.py.j2").render(**context)


def _calls(
    backend: str | None, config: RunConfig, cases: Sequence[Case], baseline: Baseline
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Each case's call description and input bytes, its inputs generated on ``backend`` as the
    engine generates them (a backward's saved tensors come from running its forward)."""
    rt = acl.runtime(backend)
    rt.set_deterministic(config.deterministic)  # as the baseline was recorded
    context = rt.device(config.device).default_context
    context.bind()
    stream = context.create_stream()
    calls: list[dict[str, Any]] = []
    inputs: dict[str, bytes] = {}
    try:
        for case in cases:
            call, blobs = _call(rt, case, generate_inputs(case, context, stream), baseline)
            calls.append(call)
            inputs.update(blobs)
    finally:
        stream.close()
    return calls, inputs


def write_script(
    run_dir: str | Path,
    out: str | Path | None = None,
    case_ids: Sequence[str] = (),
    iterations: int = DEFAULT_ITERATIONS,
    backend: str | None = None,
    embed_limit: int = EMBED_LIMIT,
) -> Reproduction:
    """Write the standalone reproducer of the run in ``run_dir`` (default
    ``<run_dir>/repro/reproduce.py``); inputs over ``embed_limit`` bytes go to the side file
    ``<script stem>.npz`` next to it."""
    run_dir = Path(run_dir)
    report, header = _read_run(run_dir)
    phase, ids = choose_cases(report, case_ids)
    cases = _load_cases(report, header, run_dir)
    unknown = [i for i in ids if i not in cases]
    if unknown:
        raise ConfigError(f"--case {unknown[0]}: not a case of the run ({', '.join(cases)})")
    if not report.baseline:
        raise ConfigError(f"{run_dir / 'report.json'}, field 'baseline': none; nothing to compare")
    config = RunConfig.from_json(header.config)
    calls, inputs = _calls(backend, config, [cases[i] for i in ids], Baseline.load(report.baseline))
    path = Path(out) if out else run_dir / "repro" / SCRIPT_NAME
    split = _split_inputs(inputs, embed_limit)
    side_path = path.with_suffix(".npz") if split.side else None
    replay = replay_modes(run_dir / "results.jsonl", ids, config, str(report.diagnosis))
    source = render_script({
        "version": VERSION, "run_dir": str(run_dir.resolve()), "phase": phase,
        "case_ids": ids, "faults": header.faults or "", "filename": path.name,
        "canary": config.canary, "second_canary": second_canary(config.canary),
        "device": config.device, "deterministic": config.deterministic,
        "iterations": iterations, "threads": 2, "calls": calls, "inputs": split.embedded,
        "recycle": replay.recycle, "modes": list(replay.modes), "seen": list(replay.seen),
        "side_file": side_path.name if side_path else None,
        "side_inputs": [[k, split.digests[k]] for k in split.side],
    })  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    if side_path is not None:
        atomic_write_bytes(side_path, _npz_bytes(split.side))
    atomic_write_bytes(path, source.encode("utf-8"))
    path.chmod(0o755)
    return Reproduction(path, phase, tuple(ids), sum(len(b) for b in split.embedded.values()),
                        side_path, sum(len(b) for b in split.side.values()), replay)  # fmt: skip
