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
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from stress.config import CANARY
from stress.corpus.parse import Case
from stress.errors import ConfigError
from stress.model import Status, schema

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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    arrays: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def grading(self) -> str:
        """``digest`` (bit-exact) or ``tolerance`` (numeric, for non-deterministic cases)."""
        return "digest" if self.bit_deterministic or self.status != Status.OK else "tolerance"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("arrays")
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
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(
                f"{path}: no baseline; record one with `aclnn-stress baseline record`"
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"{path}: corrupt baseline ({exc}); delete it and re-record with "
                "`aclnn-stress baseline record`"
            ) from None
        if not isinstance(doc, dict) or doc.get("schema", BASELINE_SCHEMA) != BASELINE_SCHEMA:
            # a file without a schema predates the field: version 1, read as such
            found = doc.get("schema") if isinstance(doc, dict) else None
            raise ConfigError(
                f"{path}, field 'schema': expected {BASELINE_SCHEMA!r}, found {found!r}; "
                "re-record with `aclnn-stress baseline record`"
            )
        for key in ("backend", "corpus", "deterministic", "repeats", "cases"):
            if key not in doc:
                raise ConfigError(f"{path}, field '{key}': missing; re-record the baseline")
        try:
            cases = {cid: CaseBaseline.from_json(c) for cid, c in doc["cases"].items()}
        except (TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}, field 'cases': malformed ({exc}); re-record the baseline"
            ) from None
        baseline = cls(
            backend=doc["backend"],
            corpus=doc["corpus"],
            deterministic=bool(doc["deterministic"]),
            repeats=int(doc["repeats"]),
            canary=int(doc.get("canary", CANARY)),
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
            if self.backend.get(key) != backend.get(key):
                problems.append(
                    f"backend {key} differs (baseline {self.backend.get(key)!r}, "
                    f"now {backend.get(key)!r})"
                )
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
    tag = "sim" if fingerprint.get("simulator") else fingerprint.get("kind", "cann")
    if fingerprint.get("faults"):
        tag += "-" + "+".join(fingerprint["faults"])
    return tag


def default_baseline_path(corpus_paths: Iterable[str | Path], backend_kind: str) -> Path:
    """``baselines/<corpus stems>.<backend>.json`` — one baseline per corpus set and backend."""
    stems = "+".join(sorted(Path(p).stem for p in corpus_paths))
    return Path("baselines") / f"{stems}.{backend_kind}.json"
