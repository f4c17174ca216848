"""``aclnn-stress corpus generate``: write generated valid and invalid cases to a corpus TOML."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress import ops
from stress.corpus.bounds import BoundsError
from stress.corpus.generate import generate_cases
from stress.errors import ConfigError

__all__ = ["add_cli"]


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
