"""Generated cases: valid ones and constraint violations, for hypothesis and for the CLI.

One set of *builders* (one per operator) turns a sequence of elementary choices (an integer in
a range, one of a few options) into a :class:`~stress.corpus.parse.Case`. Two drivers feed them:

* :mod:`stress.corpus.strategies` drives them with hypothesis (``draw(st.integers(lo, hi))``), so
  hypothesis explores and shrinks the cases (smaller shapes, fewer dims, seed 0);
* :func:`generate_cases` drives them with ``random.Random(seed)``: the same seed gives the same
  cases on every machine and Python version (``Random.randrange`` over a seeded Mersenne Twister
  is stable), which is what ``aclnn-stress corpus generate`` writes to TOML. Hypothesis itself
  is not used for files: its ``find``/``example()`` are not deterministic and it is only a test
  dependency.

Both share the same bounds (:class:`AddBounds`, :class:`MhcBounds`), validated eagerly: a bad
bound raises :class:`BoundsError` (a :class:`~stress.errors.ConfigError`; the strategies turn it
into hypothesis's ``InvalidArgument``) when the strategy or generator is created, not when a
case is drawn. Defaults keep cases small enough for stress work on the simulator (mHC: B*S <= 512
tokens, C <= 1024; add: <= 4096 elements).

Invalid cases violate exactly one documented constraint of the operator and carry the status it
must fail with (``expect = { status = 161002 }``); :data:`VIOLATIONS` lists them per operator.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol, TypeVar

from stress import ops
from stress.corpus.parse import Case, Expect
from stress.errors import ConfigError

__all__ = [
    "PARAM_INVALID",
    "VIOLATIONS",
    "AddBounds",
    "BoundsError",
    "Draw",
    "MhcBounds",
    "RandomDraw",
    "add_cli",
    "build_case",
    "case_from_fields",
    "case_id_for",
    "generate_cases",
    "make_bounds",
]

T = TypeVar("T")

PARAM_INVALID = 161002  # ACLNN_ERR_PARAM_INVALID: what every documented violation returns

MHC_OPS = ("mhc_pre_sinkhorn", "mhc_pre_sinkhorn_backward")
MHC_N, MHC_ITERS, MHC_C_ALIGN, MHC_C_LIMIT = 4, 20, 128, 100_000
MHC_DTYPES = ("bf16", "fp16")
ADD_DTYPES = ("float32", "fp16", "bf16", "int32")

#: Per operator: violation name -> (what it breaks, expected status).
VIOLATIONS: dict[str, dict[str, tuple[str, int]]] = {
    "add": {
        "broadcast": ("self and other shapes cannot be broadcast", PARAM_INVALID),
        "out-dtype": ("a floating result cannot be cast to an int32 out", PARAM_INVALID),
    },
    **{
        op: {
            "n": (f"N must be {MHC_N}", PARAM_INVALID),
            "c-align": (f"C must be a multiple of {MHC_C_ALIGN}", PARAM_INVALID),
            "c-zero": ("C must be > 0", PARAM_INVALID),
            "c-limit": (f"C must be < {MHC_C_LIMIT}", PARAM_INVALID),
            "num-iters": (f"num_iters must be {MHC_ITERS}", PARAM_INVALID),
            "dtype": (f"dtype must be {' or '.join(MHC_DTYPES)}", PARAM_INVALID),
            **(
                {"hc-mult": (f"hc_mult must be {MHC_N}", PARAM_INVALID)}
                if op == "mhc_pre_sinkhorn"
                else {}
            ),
        }
        for op in MHC_OPS
    },
}


class BoundsError(ConfigError):
    """A bound given to a case strategy or generator is out of range."""


# -- drawing ---------------------------------------------------------------------------------
class Draw(Protocol):
    """The elementary choices a builder makes (hypothesis- or random-backed)."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; hypothesis shrinks it towards ``lo``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; hypothesis shrinks towards the first."""
        ...


class RandomDraw:
    """Choices from a seeded :class:`random.Random` (deterministic for a seed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]


# -- bounds ----------------------------------------------------------------------------------
def _check_int(name: str, value: Any, lo: int, hi: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BoundsError(f"{name}={value!r}: expected an integer")
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise BoundsError(f"{name}={value!r}: must be {rng}")


def _check_dtypes(name: str, value: Any, allowed: Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise BoundsError(f"{name}={value!r}: expected a non-empty sequence of dtype names")
    bad = [d for d in value if d not in allowed]
    if bad:
        raise BoundsError(f"{name}: {bad[0]!r} is not one of {', '.join(allowed)}")
    return tuple(dict.fromkeys(value))


@dataclass(frozen=True)
class AddBounds:
    """Bounds of generated ``add`` cases."""

    min_dims: int = 1
    max_dims: int = 3
    max_side: int = 64
    max_elements: int = 4096
    dtypes: tuple[str, ...] = ADD_DTYPES
    broadcast: bool = True  # other_shape may be a broadcastable shape
    mixed_dtypes: bool = True  # other_dtype may differ from dtype
    allow_empty: bool = True  # a dimension may be 0 (an empty tensor)

    def __post_init__(self) -> None:
        _check_int("min_dims", self.min_dims, 0, 8)
        _check_int("max_dims", self.max_dims, 0, 8)
        if self.min_dims > self.max_dims:
            raise BoundsError(f"min_dims={self.min_dims} is greater than max_dims={self.max_dims}")
        _check_int("max_side", self.max_side, 1)
        _check_int("max_elements", self.max_elements, 1)
        object.__setattr__(self, "dtypes", _check_dtypes("dtypes", self.dtypes, ADD_DTYPES))


@dataclass(frozen=True)
class MhcBounds:
    """Bounds of generated mHC cases (B*S tokens, C channels)."""

    max_B: int = 4
    max_S: int = 256
    max_tokens: int = 512  # B * S
    max_C: int = 1024
    dtypes: tuple[str, ...] = MHC_DTYPES
    allow_empty: bool = True  # B may be 0 (the empty-batch case)

    def __post_init__(self) -> None:
        _check_int("max_B", self.max_B, 1)
        _check_int("max_S", self.max_S, 1)
        _check_int("max_tokens", self.max_tokens, 1)
        _check_int("max_C", self.max_C, MHC_C_ALIGN, MHC_C_LIMIT - 1)
        if self.max_C % MHC_C_ALIGN:
            raise BoundsError(
                f"max_C={self.max_C}: must be a multiple of {MHC_C_ALIGN} (valid cases need "
                f"C % {MHC_C_ALIGN} == 0)"
            )
        object.__setattr__(self, "dtypes", _check_dtypes("dtypes", self.dtypes, MHC_DTYPES))


Bounds = AddBounds | MhcBounds


def make_bounds(op: str, **bounds: Any) -> Bounds:
    """The validated bounds of ``op`` (:class:`BoundsError` naming the bad one)."""
    if op not in ops.names():
        raise BoundsError(f"unknown op {op!r}; known ops: {', '.join(ops.names())}")
    cls = AddBounds if op == "add" else MhcBounds
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(bounds) - known)
    if unknown:
        raise BoundsError(
            f"{unknown[0]!r} is not a bound of op {op!r} (its bounds: {', '.join(sorted(known))})"
        )
    if "dtypes" in bounds and isinstance(bounds["dtypes"], list):
        bounds["dtypes"] = tuple(bounds["dtypes"])
    return cls(**bounds)


def check_violations(op: str, violations: Sequence[str] | None) -> tuple[str, ...]:
    """The violation names to draw from (all of ``op``'s when None)."""
    known = VIOLATIONS[op]
    if violations is None:
        return tuple(known)
    if isinstance(violations, str) or not violations:
        raise BoundsError(f"violations={violations!r}: expected a non-empty sequence of names")
    bad = [v for v in violations if v not in known]
    if bad:
        raise BoundsError(
            f"violations: {bad[0]!r} is not a constraint of op {op!r} (known: {', '.join(known)})"
        )
    return tuple(dict.fromkeys(violations))


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
        if value is None or (value == default and p.name not in ("B", "S", "C")):
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


def _shape(draw: Draw, b: AddBounds, ndim: int) -> list[int]:
    shape: list[int] = []
    room = b.max_elements
    for _ in range(ndim):
        hi = max(1, min(b.max_side, room))
        d = draw.integer(1, hi)
        shape.append(d)
        room = max(1, room // d)
    if shape and b.allow_empty and draw.integer(0, 7) == 7:  # 1 in 8: an empty tensor
        shape[draw.integer(0, len(shape) - 1)] = 0
    return shape


def _seed(draw: Draw) -> int:
    return draw.integer(0, 2**31 - 1)


def _alpha(dtypes: Sequence[str], draw: Draw) -> float | int:
    if all(d == "int32" for d in dtypes):
        return draw.choice((1, 2, -3, 0))
    return draw.choice((1.0, 0.5, -2.0, 0.0, 1.5))


def add_params(draw: Draw, b: AddBounds) -> dict[str, Any]:
    """Parameters of a valid ``add`` case."""
    ndim = draw.integer(b.min_dims, b.max_dims)
    shape = _shape(draw, b, ndim)
    dtype = draw.choice(b.dtypes)
    other_dtype = None
    if b.mixed_dtypes and len(b.dtypes) > 1 and draw.integer(0, 3) == 3:
        other_dtype = draw.choice(b.dtypes)
    params: dict[str, Any] = {"shape": shape, "dtype": dtype}
    if b.broadcast and shape:
        mode = draw.integer(0, 2)  # 0: same shape, 1: a broadcast suffix, 2: [1]
        if mode == 1:
            keep = draw.integer(1, len(shape))
            params["other_shape"] = [d if draw.integer(0, 1) else 1 for d in shape[-keep:]]
        elif mode == 2:
            params["other_shape"] = [1]
    if other_dtype is not None and other_dtype != dtype:
        params["other_dtype"] = other_dtype
    params["alpha"] = _alpha([dtype, other_dtype or dtype], draw)
    return params


def mhc_params(draw: Draw, b: MhcBounds) -> dict[str, Any]:
    """Parameters of a valid mHC case (N = 4, num_iters = 20, C % 128 == 0)."""
    B = draw.integer(0 if b.allow_empty else 1, b.max_B)
    S = draw.integer(1, max(1, min(b.max_S, b.max_tokens // max(B, 1))))
    C = MHC_C_ALIGN * draw.integer(1, b.max_C // MHC_C_ALIGN)
    return {"B": B, "S": S, "C": C, "dtype": draw.choice(b.dtypes)}


def valid_case(op: str, draw: Draw, b: Bounds, *, id: str | None = None) -> Case:
    """A valid case of ``op`` (the operator must succeed and match its reference)."""
    params = add_params(draw, b) if op == "add" else mhc_params(draw, b)  # type: ignore[arg-type]
    return build_case(op, params, seed=_seed(draw), id=id)


def _invalid_add(draw: Draw, b: AddBounds, violation: str) -> dict[str, Any]:
    if violation == "broadcast":
        ndim = draw.integer(max(1, b.min_dims), max(1, b.max_dims))
        shape = _shape(draw, AddBounds(**{**_fields(b), "allow_empty": False}), ndim)
        axis = draw.integer(0, ndim - 1)
        d = max(2, shape[axis])
        shape[axis] = d
        other = list(shape)
        other[axis] = d + draw.integer(1, 3)  # both != 1 and different: not broadcastable
        return {"shape": shape, "other_shape": other, "dtype": draw.choice(b.dtypes)}
    if violation == "out-dtype":
        floats = [d for d in b.dtypes if d != "int32"] or ["float32"]
        ndim = draw.integer(max(1, b.min_dims), max(1, b.max_dims))
        shape = _shape(draw, b, ndim)
        return {"shape": shape, "dtype": draw.choice(floats), "out_dtype": "int32"}
    raise AssertionError(violation)


def _invalid_mhc(op: str, draw: Draw, b: MhcBounds, violation: str) -> dict[str, Any]:
    small = MhcBounds(max_B=min(b.max_B, 2), max_S=min(b.max_S, 16), max_C=min(b.max_C, 256))
    p = mhc_params(draw, small)
    p["B"] = max(p["B"], 1)
    if violation == "n":
        p["N"] = draw.choice((3, 2, 5, 1, 6, 8))
    elif violation == "c-align":
        p["C"] = MHC_C_ALIGN * draw.integer(0, b.max_C // MHC_C_ALIGN - 1) + draw.integer(1, 127)
    elif violation == "c-zero":
        p["C"] = 0
    elif violation == "c-limit":
        p.update(B=1, S=1, C=MHC_C_LIMIT + MHC_C_ALIGN - MHC_C_LIMIT % MHC_C_ALIGN)
    elif violation == "num-iters":
        p["num_iters"] = draw.choice([k for k in range(1, 41) if k != MHC_ITERS])
    elif violation == "dtype":
        p["dtype"] = "float32"
    elif violation == "hc-mult":
        p["hc_mult"] = draw.choice((3, 2, 5, 8))
    else:
        raise AssertionError(violation)
    return p


def _fields(b: Any) -> dict[str, Any]:
    return {f.name: getattr(b, f.name) for f in fields(b)}


def invalid_case(
    op: str,
    draw: Draw,
    b: Bounds,
    violations: Sequence[str],
    *,
    id: str | None = None,
) -> Case:
    """A case of ``op`` violating one of ``violations``; it expects the documented status."""
    violation = draw.choice(tuple(violations))
    what, status = VIOLATIONS[op][violation]
    if op == "add":
        params = _invalid_add(draw, b, violation)  # type: ignore[arg-type]
    else:
        params = _invalid_mhc(op, draw, b, violation)  # type: ignore[arg-type]
    return build_case(
        op,
        params,
        seed=_seed(draw),
        id=f"{id}-{violation}" if id else None,
        expect=status,
        description=f"violates: {what}",
    )


def generate_cases(
    op: str,
    count: int,
    seed: int,
    *,
    invalid: bool = False,
    violations: Sequence[str] | None = None,
    **bounds: Any,
) -> list[Case]:
    """``count`` cases of ``op`` from ``random.Random(seed)``: the same arguments always give
    the same cases (ids ``<op>-s<seed>-<i>``, plus ``-<violation>`` for invalid ones)."""
    _check_int("count", count, 1)
    _check_int("seed", seed, 0)
    b = make_bounds(op, **bounds)
    chosen = check_violations(op, violations) if invalid else ()
    draw = RandomDraw(seed)
    out = []
    for i in range(count):
        cid = f"{op}-s{seed}-{i:03d}"
        if invalid:
            out.append(invalid_case(op, draw, b, chosen, id=cid))
        else:
            out.append(valid_case(op, draw, b, id=cid))
    return out


# -- CLI -------------------------------------------------------------------------------------
_BOUND_OPTIONS: dict[str, tuple[str, Callable[[str], Any], str, str]] = {
    # option -> (bound, type, applies to, help)
    "--max-dims": ("max_dims", int, "add", "add: most dimensions (default 3)"),
    "--max-side": ("max_side", int, "add", "add: largest dimension (default 64)"),
    "--max-elements": ("max_elements", int, "add", "add: most elements of self (default 4096)"),
    "--max-b": ("max_B", int, "mhc", "mHC: largest batch B (default 4)"),
    "--max-s": ("max_S", int, "mhc", "mHC: longest sequence S (default 256)"),
    "--max-tokens": ("max_tokens", int, "mhc", "mHC: most tokens B*S (default 512)"),
    "--max-c": ("max_C", int, "mhc", "mHC: most channels C, a multiple of 128 (default 1024)"),
}


def _comma_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_cli(subparsers: Any) -> None:
    """Add the ``corpus`` subcommand (``corpus generate``) to ``aclnn-stress``'s subparsers."""
    p = subparsers.add_parser(
        "corpus",
        help="generate corpus files (valid cases or constraint violations)",
        description="Work with corpus files.",
    )
    sub = p.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    g = sub.add_parser(
        "generate",
        help="write a TOML corpus of generated cases (deterministic for a seed)",
        description="Write COUNT generated cases of OP to a TOML corpus. Valid cases satisfy the "
        "operator's constraints (mHC: N=4, num_iters=20, C%128==0, bf16|fp16; add: "
        "broadcastable shapes); --invalid cases each violate one constraint and expect its "
        "status (161002). The same arguments always write the same file (random.Random(SEED) "
        "drives the same case builders as the hypothesis strategies in stress.corpus.strategies).",
        epilog="Exit codes: 0 written, 2 usage/configuration error.",
    )
    g.add_argument("--op", required=True, choices=ops.names(), help="the operator")
    g.add_argument("--count", type=int, default=10, help="number of cases (default 10)")
    g.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    g.add_argument(
        "--invalid",
        action="store_true",
        help="generate constraint violations (each case expects status 161002)",
    )
    g.add_argument(
        "--violations",
        type=_comma_list,
        metavar="NAMES",
        help="with --invalid: comma-separated subset of the op's violations "
        "(add: broadcast,out-dtype; mHC: n,c-align,c-zero,c-limit,num-iters,dtype[,hc-mult])",
    )
    g.add_argument("--dtypes", type=_comma_list, metavar="LIST", help="comma-separated dtypes")
    for opt, (_, typ, _, text) in _BOUND_OPTIONS.items():
        g.add_argument(opt, type=typ, default=None, help=text)
    g.add_argument("--out", metavar="FILE", help="where to write (default: standard output)")
    g.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    g.set_defaults(func=_cmd_generate)


def _cmd_generate(args: argparse.Namespace) -> int:
    from stress.baseline.store import atomic_write_bytes

    family = "add" if args.op == "add" else "mhc"
    bounds: dict[str, Any] = {}
    shown: list[str] = []
    for opt, (name, _, applies, _) in _BOUND_OPTIONS.items():
        value = getattr(args, opt[2:].replace("-", "_"))
        if value is None:
            continue
        if applies != family:
            raise ConfigError(f"{opt}: applies to the {applies} operators, not {args.op!r}")
        bounds[name] = value
        shown.append(f"{opt} {value}")
    if args.dtypes is not None:
        bounds["dtypes"] = tuple(args.dtypes)
        shown.append(f"--dtypes {','.join(args.dtypes)}")
    if args.violations is not None and not args.invalid:
        raise ConfigError("--violations: only with --invalid")
    try:
        cases = generate_cases(
            args.op,
            args.count,
            args.seed,
            invalid=args.invalid,
            violations=args.violations,
            **bounds,
        )
    except BoundsError as exc:
        raise ConfigError(f"corpus generate: {exc}") from None
    command = " ".join(
        [
            f"aclnn-stress corpus generate --op {args.op} --count {args.count} --seed {args.seed}",
            *(["--invalid"] if args.invalid else []),
            *([f"--violations {','.join(args.violations)}"] if args.violations else []),
            *shown,
        ]
    )
    kind = "constraint violations (each expects its status)" if args.invalid else "valid cases"
    comment = f"{len(cases)} generated {kind} of {args.op}\ngenerated by: {command}"
    from stress.corpus.parse import corpus_text

    text = corpus_text(cases, comment)
    if args.out is None or args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    if out.exists() and not args.force:
        raise ConfigError(f"{out}: already exists; choose another --out or pass --force")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: directory {out.parent} does not exist")
    atomic_write_bytes(out, text.encode())
    print(f"wrote {len(cases)} cases of {args.op} to {out}", file=sys.stderr)
    return 0
