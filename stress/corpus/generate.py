"""Generated corpus cases of catalogue operators: valid ones and constraint violations.

No operator is named here: what a case draws comes from the operator's declaration
(``stress/ops/declarations/*.toml``: ``[dims]``, ``[shapes]``, ``[dtypes]`` and ``[generate]``,
see :mod:`stress.ops.generation`), through the one case builder of
:mod:`stress.ops.declared_draw`. Two drivers feed it:

* :mod:`stress.corpus.strategies` drives it with hypothesis, so hypothesis explores and shrinks
  the cases (smaller shapes and dimensions, the first dtype, seed 0);
* :func:`generate_cases` drives it with ``random.Random(seed)``: the same seed gives the same
  cases on every machine and Python version (``Random.randrange`` over a seeded Mersenne Twister
  is stable), which is what ``aclnn-stress corpus generate`` writes to TOML (hypothesis's
  ``find``/``example()`` are not deterministic).

Bounds are validated eagerly: a bad one raises :class:`BoundsError` (a
:class:`~stress.errors.ConfigError`; the strategies raise hypothesis's ``InvalidArgument``) when
the strategy or generator is created, not when a case is drawn.

Invalid cases violate exactly one documented constraint of the operator (its
``[[generate.violation]]`` tables) and carry the status it must fail with
(``expect = { status = 161002 }``); :func:`violations_of` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stress import ops
from stress.corpus.bounds import (
    BoundsError,
    check_int,
    check_violations,
    declaration,
    make_bounds,
    violations_of,
)
from stress.corpus.legal import check_legal
from stress.corpus.parse import Case, Expect
from stress.errors import ConfigError
from stress.ops.declaration import DeclaredCase
from stress.ops.declared_strategies import GenerateOptions, draw_cases

__all__ = [
    "BoundsError",
    "build_case",
    "case_from_fields",
    "case_id_for",
    "check_violations",
    "declaration",
    "generate_cases",
    "make_bounds",
    "to_case",
    "violations_of",
]


# -- cases -----------------------------------------------------------------------------------
def _id_part(name: str, value: Any) -> str:
    if isinstance(value, tuple | list):
        return f"{name}{'x'.join(map(str, value)) or 'scalar'}"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return f"{name}{int(value)}"
    return f"{name}{value:g}" if isinstance(value, float) else f"{name}{value}"


def case_id_for(op: str, params: Mapping[str, Any], seed: int, expect: int | None = None) -> str:
    """A readable id made of the parameters that differ from the defaults, e.g.
    ``add-shape2x3-s1`` or ``mhc_pre_sinkhorn_backward-B2-S128-C256-s7-x161002``."""
    spec = ops.get(op)
    parts = [op]
    for p in spec.params:
        value = params.get(p.name)
        default = p.default
        if value is None or value == default:
            continue
        if isinstance(value, tuple) and isinstance(default, list | tuple):
            if tuple(default) == value:
                continue
        parts.append(_id_part(p.name, value))
    parts.append(f"s{seed}")
    if expect is not None:
        parts.append(f"x{expect}")
    return "-".join(parts).replace("+", "")


def build_case(
    op: str,
    params: Mapping[str, Any],
    *,
    seed: int = 0,
    id: str | None = None,
    expect: int | Mapping[str, Any] | Expect | None = None,
    description: str = "",
    source: str = "<generated>",
) -> Case:
    """A :class:`Case` from an op name and raw parameters, validated like a corpus entry."""
    where = f"{source}: case '{id}'" if id else source
    try:
        spec = ops.get(op)
    except KeyError:
        raise ConfigError(
            f"{where}, field 'op': unknown op {op!r}; known ops: {', '.join(ops.names())}"
        ) from None
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"{where}, field 'seed': expected an integer >= 0, got {seed!r}")
    if isinstance(expect, Mapping):
        status = expect.get("status")
        unknown = sorted(set(expect) - {"status"})
        if unknown:
            raise ConfigError(f"{where}, field 'expect.{unknown[0]}': unknown; allowed: status")
        expect = status
    if isinstance(expect, Expect):
        expect = expect.status
    if expect is not None and (
        not isinstance(expect, int) or isinstance(expect, bool) or expect == 0
    ):
        raise ConfigError(
            f"{where}, field 'expect.status': expected a non-zero status code such as 161002, "
            f"got {expect!r}"
        )
    parsed = spec.parse_params(dict(params), where)
    check_legal(op, parsed, where, negative=expect is not None)
    case_id = id or case_id_for(op, parsed, seed, expect)
    return Case(
        id=case_id,
        op=op,
        params=parsed,
        seed=seed,
        source=source,
        expect=Expect(expect) if expect is not None else None,
        description=description,
        spec=spec,
    )


_CASE_FIELDS = ("op", "id", "seed", "expect", "description")


def case_from_fields(fields: Mapping[str, Any], *, source: str = "<generated>") -> Case:
    """A :class:`Case` from the fields of a corpus ``[[case]]`` table (``op``, optional ``id``,
    ``seed``, ``expect``, ``description``; every other key is a parameter of the op)."""
    op = fields.get("op")
    if not isinstance(op, str):
        raise ConfigError(f"{source}: field 'op' is required (one of {', '.join(ops.names())})")
    return build_case(
        op,
        {k: v for k, v in fields.items() if k not in _CASE_FIELDS},
        seed=fields.get("seed", 0),
        id=fields.get("id"),
        expect=fields.get("expect"),
        description=fields.get("description", ""),
        source=source,
    )


def to_case(op: str, declared: DeclaredCase, *, id: str | None = None) -> Case:
    """The corpus :class:`Case` of a generated :class:`DeclaredCase` of catalogue op ``op``."""
    return build_case(
        op,
        declared.params(),
        seed=declared.seed or 0,
        id=id,
        expect=declared.expect,
        description=declared.description,
    )


def generate_cases(op: str, options: GenerateOptions) -> list[Case]:
    """``options.count`` cases of ``op``: the same options always give the same cases (ids
    ``<op>-s<seed>-<i>``, plus ``-<violation>`` for invalid ones). What is drawn comes from the
    op's declaration (``[dims]``, ``[shapes]``, ``[dtypes]``, ``[generate]``); BoundsError
    naming a bad option."""
    count, seed = options.count, options.seed
    check_int("count", count, 1)
    check_int("seed", seed, 0)
    decl = declaration(op)
    b = make_bounds(op, **options.bounds)
    if options.violations is not None and not options.invalid:
        raise BoundsError("violations: only for invalid cases")
    chosen = check_violations(op, options.violations) if options.invalid else ()
    drawn = draw_cases(decl, count, seed, b, chosen)
    out = []
    for i, (case, violation) in enumerate(drawn):
        cid = f"{op}-s{seed}-{i:03d}" + (f"-{violation}" if violation else "")
        out.append(to_case(op, case, id=cid))
    return out
