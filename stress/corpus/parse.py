"""Corpus files: named cases in TOML.

A corpus file holds an optional ``[defaults]`` table merged into every case and an array of
``[[case]]`` tables::

    [defaults]
    op = "mhc_pre_sinkhorn_backward"
    dtype = "bf16"

    [[case]]
    id = "base-a"          # unique across every corpus file loaded together
    B = 2                  # any other key is a parameter of the op (see `aclnn-stress ops`)
    S = 128
    C = 256
    seed = 1               # seed of the case's inputs (default: derived from the id)

    [[case]]
    id = "n3-rejected"
    B = 1
    S = 8
    N = 3
    C = 128
    expect = { status = 161002 }   # a negative case: the call must fail with this code

A file with an ``[op]`` table is a *declaration* instead (stress/ops/declaration.py: the
operator named by header and function, its dims, dtypes, parameters and cases); its operator is
registered in the catalogue under its name, so that every command takes it like a built-in one.
A plain corpus may name declarations whose operators its cases use (their own cases are not
loaded): ``declarations = ["ops/cat.toml"]`` (relative to the corpus file); this is how the
engine's generated corpora (shrunk cases, reproducers, isolated children) refer to them.

Every error names the file, the case and the field, and says what is allowed; a case outside
the legal ranges its operator's declaration states is refused here (:mod:`stress.corpus.legal`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stress import ops
from stress.corpus.legal import check_legal
from stress.errors import ConfigError
from stress.files import load_toml
from stress.ops.declaration_types import OpDeclaration
from stress.ops.declared import to_opspec
from stress.ops.spec import OpSpec
from stress.vocabulary import VIEW_SEPARATOR, VIEWS, variant_id, variant_kind

__all__ = ["Case", "Expect", "corpus_text", "load_corpus", "load_corpus_file"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_CASE_KEYS = {"id", "op", "seed", "expect", "description", "view", "derived"}
_EXPECT_KEYS = {"status"}


@dataclass(frozen=True)
class Expect:
    """What a negative case must produce: a non-zero status at phase 1, phase 2 or sync."""

    status: int

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status}


@dataclass(frozen=True)
class Case:
    """One named operator call: op, parameters, input seed, optional expected failure."""

    id: str
    op: str
    params: Mapping[str, Any]
    seed: int
    source: str
    expect: Expect | None = None
    description: str = ""
    spec: OpSpec = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    view: str = ""  # a view variant's layout of its inputs (stress.corpus.variants); "" contiguous

    @property
    def negative(self) -> bool:
        return self.expect is not None

    @property
    def twin(self) -> str:
        """The id of the contiguous case this one is a view variant of (its own for that)."""
        return self.id.rpartition("@")[0] if self.view else self.id

    @property
    def reference(self) -> str:
        """The id whose baseline grades this case and whose inputs it shares: its twin's, but
        a ``broadcast`` view's own (its values are the expanded slice's, recorded contiguously
        under its id: stress.corpus.variants)."""
        return self.id if self.view == "broadcast" else self.twin

    @functools.cached_property
    def key(self) -> str:
        """Digest of what determines the case's result (op, parameters, seed, expectation; the
        view layout of a variant)."""
        what = {
            "op": self.op,
            "params": dict(self.params),
            "seed": self.seed,
            "expect": self.expect.to_json() if self.expect else None,
        }
        payload = json.dumps({**what, "view": self.view} if self.view else what, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "op": self.op,
            "params": dict(self.params),
            "seed": self.seed,
            "expect": self.expect.to_json() if self.expect else None,
            "source": self.source,
            "key": self.key,
            **({"view": self.view} if self.view else {}),
        }


def default_seed(case_id: str) -> int:
    return int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:4], "little")


def _parse_expect(raw: Any, where: str) -> Expect | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}, field 'expect': expected a table like {{ status = 161002 }}")
    unknown = sorted(set(raw) - _EXPECT_KEYS)
    if unknown:
        raise ConfigError(f"{where}, field 'expect.{unknown[0]}': unknown; allowed: status")
    status = raw.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or status == 0:
        raise ConfigError(
            f"{where}, field 'expect.status': expected a non-zero status code such as 161002, "
            f"got {status!r}"
        )
    return Expect(status=status)


def _parse_case(raw: Any, defaults: Mapping[str, Any], index: int, source: str) -> Case:
    at = f"{source}: case #{index + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{at}: expected a [[case]] table")
    merged = {**defaults, **raw}
    case_id = merged.get("id")
    if not isinstance(case_id, str) or not _ID.match(case_id):
        raise ConfigError(
            f"{at}, field 'id': expected a name of letters, digits, '_', '-', '.', got {case_id!r}"
        )
    where = f"{source}: case '{case_id}'"
    op_name = merged.get("op")
    if not isinstance(op_name, str):
        raise ConfigError(f"{where}, field 'op': required; one of {', '.join(ops.names())}")
    try:
        spec = ops.get(op_name)
    except KeyError:
        raise ConfigError(
            f"{where}, field 'op': unknown op {op_name!r}; known ops: {', '.join(ops.names())}"
        ) from None
    seed = merged.get("seed", default_seed(case_id))
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"{where}, field 'seed': expected an integer >= 0, got {seed!r}")
    description = merged.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{where}, field 'description': expected a string")
    params_raw = {k: v for k, v in merged.items() if k not in _CASE_KEYS}
    params = spec.parse_params(params_raw, where)
    view = _parse_view(merged.get("view", ""), where)
    derived = _parse_derived(merged.get("derived", ""), where)
    expect = _parse_expect(merged.get("expect"), where)
    check_legal(op_name, params, where, negative=expect is not None)
    case_id = variant_id(case_id, derived) if derived else case_id
    return Case(
        id=variant_id(case_id, view) if view else case_id,
        view=view,
        op=op_name,
        params=params,
        seed=seed,
        source=source,
        expect=expect,
        description=description,
        spec=spec,
    )


def _parse_derived(raw: Any, where: str) -> str:
    """A size variant's or twin's tail (``edge-B-8``, ``dtype-T=float16``): the case keeps its
    derived id (and so its baseline entry) in a written corpus (a reproducer's)."""
    if raw == "" or (isinstance(raw, str) and variant_kind(f"x{VIEW_SEPARATOR}{raw}")):
        return raw
    raise ConfigError(
        f"{where}, field 'derived': expected a size variant or twin such as 'edge-B-8' or "
        f"'dtype-T=float16', got {raw!r}"
    )


def _parse_view(raw: Any, where: str) -> str:
    if raw == "" or raw in VIEWS:
        return raw
    raise ConfigError(
        f"{where}, field 'view': expected one of {', '.join(VIEWS)} (a view variant), got {raw!r}"
    )


def _declared(data: Mapping[str, Any], source: str, include_dirs: Sequence[str | Path]):
    from stress.ops.declaration import parse_declaration

    decl = parse_declaration(data, source, include_dirs)
    cases = corpus_cases(decl, ops.register_declaration(decl))
    if not cases:
        raise ConfigError(f"{source}: no cases; add at least one [[case]] table")
    return cases


def corpus_cases(decl: OpDeclaration, spec: OpSpec | None = None) -> list[Case]:
    """The declaration's [[case]] tables as the engine's :class:`stress.corpus.Case` objects
    (a case without a seed gets the corpus's id-derived seed)."""
    spec = spec or to_opspec(decl)
    out = []
    for c in decl.cases:
        where = f"{decl.source}: case '{c.id}'"
        params = spec.parse_params(c.params(), where)
        check_legal(decl, params, where, negative=c.expect is not None)
        out.append(
            Case(
                id=c.id,
                op=spec.name,
                params=params,
                seed=default_seed(c.id) if c.seed is None else c.seed,
                source=decl.source,
                expect=None if c.expect is None else Expect(c.expect),
                description=c.description,
                spec=spec,
            )
        )
    return out


def _register(paths: Any, corpus: Path, include_dirs: Sequence[str | Path]) -> None:
    from stress.ops.declaration import load_declaration

    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"{corpus}: field 'declarations': expected a list of declaration paths")
    for p in paths:
        full = corpus.parent / p
        if not full.is_file():
            raise ConfigError(
                f"{corpus}: field 'declarations': {p} not found (relative to {corpus})"
            )
        ops.register_declaration(load_declaration(full, include_dirs))


def load_corpus_file(path: str | Path, include_dirs: Sequence[str | Path] = ()) -> list[Case]:
    """Parse and validate one corpus file (a declaration's headers are also looked for in
    ``include_dirs``)."""
    path = Path(path)
    source = str(path)
    data = load_toml(path, "corpus file", fix="check --corpus")
    if "op" in data:
        return _declared(data, source, include_dirs)
    unknown = sorted(set(data) - {"defaults", "case", "declarations"})
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level key '{unknown[0]}'; a corpus has [defaults], [[case]] "
            "and declarations = [...], or is a declaration ([op])"
        )
    _register(data.get("declarations", []), path, include_dirs)
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ConfigError(f"{source}: 'defaults' must be a table ([defaults])")
    if "id" in defaults:
        raise ConfigError(f"{source}: [defaults] field 'id': ids must be given per case")
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list) or not raw_cases:
        raise ConfigError(f"{source}: no cases; add at least one [[case]] table")
    return [_parse_case(raw, defaults, i, source) for i, raw in enumerate(raw_cases)]


def load_corpus(
    paths: Iterable[str | Path],
    include_dirs: Sequence[str | Path] = (),
    *,
    load_file: Callable[[str | Path, Sequence[str | Path]], list[Case]] | None = None,
) -> list[Case]:
    """Load several corpus files; case ids must be unique across all of them. ``load_file``:
    how one file is loaded (default :func:`load_corpus_file`)."""
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in paths:
        for case in (load_file or load_corpus_file)(path, include_dirs):
            if case.id in seen:
                raise ConfigError(
                    f"{case.source}: case '{case.id}', field 'id': duplicate (also in "
                    f"{seen[case.id]}); ids must be unique across the corpus files of a run"
                )
            seen[case.id] = case.source
            cases.append(case)
    if not cases:
        raise ConfigError("no corpus given: pass --corpus PATH (e.g. corpus/mhc.toml)")
    return cases


def corpus_text(cases: Sequence[Case], comment: str = "") -> str:
    """The TOML of ``cases`` (with each case's description): loads back to the same cases."""
    entries = []
    for case in cases:
        base, sep, tail = case.twin.rpartition(VIEW_SEPARATOR)
        entry: dict[str, Any] = {"id": base if sep else case.twin, "op": case.op}
        entry |= {"seed": case.seed, **({"derived": tail} if sep else {})}
        if case.view:
            entry["view"] = case.view
        if case.description:
            entry["description"] = case.description
        for key, value in case.params.items():
            if value is not None:  # TOML has no null: an absent parameter takes its default
                entry[key] = list(value) if isinstance(value, tuple) else value
        if case.expect is not None:
            entry["expect"] = case.expect.to_json()
        entries.append(entry)
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    sources = [ops.declaration_source(c.op) for c in cases]
    declared = sorted({str(Path(s).resolve()) for s in sources if s is not None})
    body: dict[str, Any] = {"declarations": declared} if declared else {}
    import tomli_w  # writing a corpus: not needed to read one

    return header + tomli_w.dumps({**body, "case": entries})
