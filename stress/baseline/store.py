"""Baselines: what each case gives when run alone, serially, on one backend.

``aclnn-stress baseline record`` runs every case K times in one thread and stores, per case, the
per-output sha256 digests, whether the K runs were bit-identical, how many output elements
equal the canary pattern by chance, and (for cases that are not bit-deterministic) the output
arrays themselves, so they can be graded by numeric tolerance instead of digest.

A baseline is only meaningful for the backend and corpus it was recorded with, so it carries
their fingerprints; comparing against another backend or a changed case is refused unless
forced. Files are written atomically (temp file + rename): a crash never leaves half a baseline.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from stress.config import CANARY
from stress.corpus.parse import Case
from stress.errors import ConfigError
from stress.files import atomic_write_bytes, load_json
from stress.report_sections import Fingerprint
from stress.vocabulary import Status, schema

__all__ = [
    "BASELINE_SCHEMA",
    "Baseline",
    "CaseBaseline",
    "OutputBaseline",
    "atomic_write_bytes",
    "backend_tag",
    "default_baseline_path",
]

BASELINE_SCHEMA = schema("baseline")


@dataclass
class OutputBaseline:
    """One output of one case."""

    digest: str
    shape: list[int]
    dtype: str
    canary_chance: int = 0  # elements equal to the canary pattern although written
    unwritten: int = 0  # elements that kept the canary whatever it was (never written)


@dataclass
class CaseBaseline:
    """The recorded behaviour of one case."""

    id: str
    key: str
    op: str
    status: str  # Status.OK or Status.ERROR
    code: int = 0
    message: str = ""
    call_digest: str = ""
    outputs: dict[str, OutputBaseline] = field(default_factory=dict)
    bit_deterministic: bool = True
    digests_seen: list[str] = field(default_factory=list)
    reference: dict[str, Any] = field(default_factory=dict)  # numpy reference agreement
    # seconds: the slowest of the recorded calls (the p99 of so few), the time the adaptive hang
    # limit scales (stress.engine.replay.hang_rule); None in files recorded before it
    call_p99_s: float | None = None
    arrays: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def grading(self) -> str:
        """``digest`` (bit-exact) or ``tolerance`` (numeric, for non-deterministic cases)."""
        return "digest" if self.bit_deterministic or self.status != Status.OK else "tolerance"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("arrays")
        if d["call_p99_s"] is None:
            del d["call_p99_s"]
        d["grading"] = self.grading
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaseBaseline:
        d = dict(d)
        d.pop("grading", None)
        d["outputs"] = {k: OutputBaseline(**v) for k, v in d.get("outputs", {}).items()}
        return cls(**d)


@dataclass
class Baseline:
    """A baseline file: fingerprints plus one :class:`CaseBaseline` per case."""

    backend: dict[str, Any]
    corpus: dict[str, Any]
    deterministic: bool
    repeats: int
    cases: dict[str, CaseBaseline]
    canary: int = CANARY
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )
    path: Path | None = field(default=None, compare=False)

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per case what the run's journal header keeps of the baseline (grading needs it)."""
        return {
            cid: {
                "digest": cb.call_digest,
                "grading": cb.grading,
                "status": cb.status,
                "code": cb.code,
            }
            for cid, cb in self.cases.items()
        }

    # -- persistence -------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``path`` (JSON) and, when some case is graded by tolerance, ``path.npz``."""
        path = Path(path)
        doc = {
            "schema": BASELINE_SCHEMA,
            "created": self.created,
            "backend": self.backend,
            "corpus": self.corpus,
            "deterministic": self.deterministic,
            "repeats": self.repeats,
            "canary": self.canary,
            "cases": {cid: cb.to_json() for cid, cb in self.cases.items()},
        }
        arrays = {
            f"{cid}/{name}": arr
            for cid, cb in self.cases.items()
            if cb.grading == "tolerance" and cb.arrays
            for name, arr in cb.arrays.items()
        }
        npz = _npz_path(path)
        if arrays:
            buf = io.BytesIO()
            np.savez(buf, **{k: _storable(v) for k, v in arrays.items()})
            atomic_write_bytes(npz, buf.getvalue())
        atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
        if not arrays:
            npz.unlink(missing_ok=True)
        self.path = path
        return path

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        """Read and validate a baseline file (errors name the file and the field)."""
        path = Path(path)
        doc = load_json(path, "baseline", fix="re-record it with `aclnn-stress baseline record`")
        if not isinstance(doc, dict) or doc.get("schema", BASELINE_SCHEMA) != BASELINE_SCHEMA:
            # a file without a schema predates the field: version 1, read as such
            found = doc.get("schema") if isinstance(doc, dict) else None
            raise ConfigError(
                f"{path}, field 'schema': expected {BASELINE_SCHEMA!r}, found {found!r}; "
                "re-record with `aclnn-stress baseline record`"
            )
        _check_schema(doc, path)
        cases = {cid: CaseBaseline.from_json(c) for cid, c in doc["cases"].items()}
        baseline = cls(
            backend=doc["backend"],
            corpus=doc["corpus"],
            deterministic=doc["deterministic"],
            repeats=doc["repeats"],
            canary=doc.get("canary", CANARY),
            cases=cases,
            created=doc.get("created", ""),
            path=path,
        )
        if any(cb.grading == "tolerance" for cb in cases.values()):
            baseline._load_arrays(path)
        return baseline

    def _load_arrays(self, path: Path) -> None:
        npz = _npz_path(path)
        try:
            with np.load(npz) as data:
                stored = {k: data[k] for k in data.files}
        except (FileNotFoundError, ValueError, OSError) as exc:
            raise ConfigError(
                f"{npz}: output arrays of the tolerance-graded cases are missing or corrupt "
                f"({exc}); re-record the baseline"
            ) from None
        for cid, cb in self.cases.items():
            if cb.grading != "tolerance":
                continue
            cb.arrays = {}
            for name, out in cb.outputs.items():
                key = f"{cid}/{name}"
                if key not in stored:
                    raise ConfigError(f"{npz}: no array '{key}'; re-record the baseline")
                cb.arrays[name] = _restore(stored[key], out.dtype)

    # -- compatibility -----------------------------------------------------------------
    def check_compatible(
        self,
        backend: Mapping[str, Any],
        cases: Iterable[Case],
        *,
        deterministic: bool,
        canary: int,
        force: bool = False,
    ) -> list[str]:
        """Refuse (ConfigError) a baseline recorded elsewhere; return warnings when forced."""
        where = str(self.path or "baseline")
        problems: list[str] = []
        for key in ("kind", "soc", "version", "libraries", "faults"):
            then, now = self.backend.get(key), backend.get(key)
            if then == now:
                continue
            if isinstance(then, Mapping) and isinstance(now, Mapping):  # name -> content hash
                changed = sorted(k for k in {*then, *now} if then.get(k) != now.get(k))
                problems.append(f"backend {key} differ: {', '.join(changed)} changed")
            else:
                problems.append(f"backend {key} differs (baseline {then!r}, now {now!r})")
        if self.deterministic != deterministic:
            problems.append(
                f"recorded with deterministic mode {'on' if self.deterministic else 'off'}, "
                f"this run has it {'on' if deterministic else 'off'}"
            )
        if self.canary != canary:
            problems.append(f"recorded with canary {self.canary:#04x}, this run uses {canary:#04x}")
        for case in cases:
            cb = self.cases.get(case.id)
            if cb is None:
                problems.append(f"case '{case.id}' is not in the baseline")
            elif cb.key != case.key:
                problems.append(f"case '{case.id}' changed since the baseline was recorded")
        if problems and not force:
            raise ConfigError(
                f"{where}: baseline does not match this run: {problems[0]}"
                + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                + "; re-record with `aclnn-stress baseline record`, or pass --force"
            )
        return problems


# -- the schema of a baseline file -------------------------------------------------------------
# field -> (accepted types, required, the check of the value or None). One table per level: the
# file, a case, an output; Baseline.load checks a document against them before building anything.
def _int_range(lo: int, hi: int):
    return lambda v: lo <= v <= hi or f"must be in {lo}..{hi}"


def _hex_digest(v: str):
    return all(c in "0123456789abcdef" for c in v) or "must be a hex digest (sha256)"


_FILE_FIELDS: dict[str, tuple[type | tuple[type, ...], bool, Any]] = {
    "schema": (str, False, None),
    "created": (str, False, None),
    "backend": (dict, True, None),
    "corpus": (dict, True, None),
    "deterministic": (bool, True, None),
    "repeats": (int, True, _int_range(1, 10_000)),
    "canary": (int, False, _int_range(0, 255)),
    "cases": (dict, True, None),
}
_CASE_FIELDS: dict[str, tuple[type | tuple[type, ...], bool, Any]] = {
    "id": (str, True, None),
    "key": (str, True, None),
    "op": (str, True, None),
    "status": (str, True, lambda v: v in (Status.OK, Status.ERROR) or "must be ok or error"),
    "code": (int, False, None),
    "message": (str, False, None),
    "call_digest": (str, False, _hex_digest),
    "outputs": (dict, False, None),
    "bit_deterministic": (bool, False, None),
    "digests_seen": (list, False, lambda v: all(isinstance(d, str) for d in v) or "strings"),
    "reference": (dict, False, None),
    "call_p99_s": ((int, float), False, lambda v: 0 <= v < 1e9 or "seconds >= 0"),
    "grading": (str, False, None),
}
_OUTPUT_FIELDS: dict[str, tuple[type | tuple[type, ...], bool, Any]] = {
    "digest": (str, True, _hex_digest),
    "shape": (list, True, lambda v: all(type(n) is int and n >= 0 for n in v) or "sizes >= 0"),
    "dtype": (str, True, None),
    "canary_chance": (int, False, _int_range(0, 2**63)),
    "unwritten": (int, False, _int_range(0, 2**63)),
}


def _check_fields(doc: Any, table: Mapping[str, Any], path: Path, where: str) -> None:
    fix = "; re-record the baseline with `aclnn-stress baseline record`"
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}, {where or 'document'}: must be a JSON object{fix}")
    unknown = sorted(set(doc) - set(table))
    if unknown:
        raise ConfigError(f"{path}, field '{where}{unknown[0]}': unknown field{fix}")
    for name, (kind, required, check) in table.items():
        field_name = f"{where}{name}"
        if name not in doc:
            if required:
                raise ConfigError(f"{path}, field '{field_name}': missing{fix}")
            continue
        value = doc[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(
                f"{path}, field '{field_name}': expected {getattr(kind, '__name__', kind)}, "
                f"found {value!r:.40}{fix}"
            )
        verdict = check(value) if check else True
        if verdict is not True:
            raise ConfigError(f"{path}, field '{field_name}': {verdict}, found {value!r:.40}{fix}")


def _check_schema(doc: Mapping[str, Any], path: Path) -> None:
    """Validate a baseline document against the tables above (one line naming the field)."""
    _check_fields(doc, _FILE_FIELDS, path, "")
    for cid, case in doc["cases"].items():
        _check_fields(case, _CASE_FIELDS, path, f"cases.{cid}.")
        for name, out in case.get("outputs", {}).items():
            _check_fields(out, _OUTPUT_FIELDS, path, f"cases.{cid}.outputs.{name}.")


def _npz_path(path: Path) -> Path:
    return path.with_name(path.name + ".npz")


def _storable(arr: np.ndarray) -> np.ndarray:
    # npz cannot hold ml_dtypes; keep the raw bits and restore the dtype by name on load
    if arr.dtype == np.dtype(ml_dtypes.bfloat16):
        return arr.view(np.uint16)
    return arr


def _restore(arr: np.ndarray, dtype_name: str) -> np.ndarray:
    target = np.dtype(ml_dtypes.bfloat16) if dtype_name == "bfloat16" else np.dtype(dtype_name)
    return arr.view(target) if arr.dtype != target else arr


def backend_tag(fingerprint: Mapping[str, Any]) -> str:
    """The backend part of a baseline file name: ``cann``, ``sim``, or ``sim-<fault>+<fault>``
    when simulator faults are on (baselines of different fault sets must not mix)."""
    return Fingerprint.from_json(fingerprint).tag


def default_baseline_path(corpus_paths: Iterable[str | Path], backend_kind: str) -> Path:
    """``baselines/<corpus stems>.<backend>.json`` — one baseline per corpus set and backend."""
    stems = "+".join(sorted(Path(p).stem for p in corpus_paths))
    return Path("baselines") / f"{stems}.{backend_kind}.json"
