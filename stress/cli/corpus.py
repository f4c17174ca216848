"""``aclnn-stress corpus generate``: write generated valid and invalid cases to a corpus TOML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stress.cli import values
from stress.errors import ConfigError
from stress.ops.header_options import add_header_options
from stress.subcommand import Command

if TYPE_CHECKING:
    from stress.ops.declared_strategies import GenerateOptions

__all__ = ["COMMAND"]


def _pair(option: str, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ConfigError(f"{option} {text!r}: expected NAME=VALUE")
    return name.strip(), value.strip()


def _dims(texts: list[str]) -> dict[str, tuple[int, int]]:
    out = {}
    for text in texts:
        name, value = _pair("--dim", text)
        lo, sep, hi = value.partition(":")
        try:
            out[name] = (int(lo), int(hi if sep else lo))
        except ValueError:
            raise ConfigError(
                f"--dim {text!r}: expected NAME=LOW:HIGH (ints), e.g. C=128:256"
            ) from None
    return out


def _limits(texts: list[str]) -> dict[str, int]:
    out = {}
    for text in texts:
        expr, value = _pair("--limit", text)
        try:
            out[expr] = int(value)
        except ValueError:
            raise ConfigError(
                f"--limit {text!r}: expected EXPR=MAX (an int), e.g. B*S=64"
            ) from None
    return out


def _dtypes(texts: list[str], decl: Any) -> dict[str, list[str]]:
    drawn = [v.name for v in decl.dtypes if not v.derived and v.default is None]
    out = {}
    for text in texts:
        var, sep, names = text.rpartition("=")
        if not sep:
            if len(drawn) != 1:
                raise ConfigError(f"--dtypes {text!r}: name the variable, VAR=LIST (one of "
                                  f"{', '.join(drawn) or 'none'})")  # fmt: skip
            var = drawn[0]
        out[var] = _comma_list(names)
    return out


def _options(args: argparse.Namespace, decl: Any) -> tuple[GenerateOptions, list[str]]:
    """What to generate (the same for a catalogue op and a declaration), and the bound options
    as written (for the comment)."""
    from stress.ops.declared_strategies import GenerateOptions

    bounds: dict[str, Any] = {}
    shown: list[str] = []
    if args.dim:
        bounds["dims"] = _dims(args.dim)
        shown += [f"--dim {d}" for d in args.dim]
    if args.limit:
        bounds["limits"] = _limits(args.limit)
        shown += [f"--limit '{t}'" for t in args.limit]
    if args.dtypes:
        bounds["dtypes"] = _dtypes(args.dtypes, decl)
        shown += [f"--dtypes {t}" for t in args.dtypes]
    if args.max_elements is not None:
        bounds["max_elements"] = args.max_elements
        shown.append(f"--max-elements {args.max_elements}")
    options = GenerateOptions(args.count, args.seed, args.invalid, args.violations, bounds)
    return options, shown


def _comma_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _generate_arguments(g: argparse.ArgumentParser) -> None:
    which = g.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--op", metavar="NAME", help="a built-in operator (aclnn-stress ops lists them)"
    )  # checked once parsed: the catalogue is not loaded to build the parser
    which.add_argument(
        "--declaration",
        metavar="FILE",
        help="a declared operator (TOML with [op]): writes the declaration with COUNT cases "
        "drawn from its [dims], [shapes], [dtypes] and [generate] in place of its own",
    )
    g.add_argument(
        "-I", dest="include", action="append", default=[], metavar="DIR",
        help="extra include folder for the declaration's header (repeatable)",
    )  # fmt: skip
    g.add_argument("--count", type=int, default=10, help="number of cases (default 10)")
    g.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    g.add_argument(
        "--invalid",
        action="store_true",
        help="generate constraint violations (each case expects its declared status)",
    )
    g.add_argument(
        "--violations",
        type=_comma_list,
        metavar="NAMES",
        help="with --invalid: comma-separated subset of the op's declared violations "
        "([[generate.violation]] names; add: broadcast,out-dtype; mHC: n,c-align,c-zero,"
        "c-limit,num-iters,dtype[,hc-mult])",
    )
    _add_bound_options(g)
    g.add_argument(
        "--variants",
        type=values.variants,
        default=(),
        metavar="LIST",
        help="also write the variants each generated case derives, as a run derives them "
        "(transpose,pad,offset,empty,edge,twins, all, default or none; default none): views "
        "and one-field twins beside their case, empties and edge sizes within the declaration's "
        "legal ranges; a --declaration's cases then go to a corpus that names it",
    )
    g.add_argument("--out", metavar="FILE", help="where to write (default: standard output)")
    g.add_argument("--force", action="store_true", help="overwrite an existing --out file")


def _import_msopst_arguments(m: argparse.ArgumentParser) -> None:
    m.add_argument("cases", metavar="CASES.json", help="an msOpST case-definition file")
    m.add_argument(
        "--op",
        dest="header",
        metavar="HEADER",
        required=True,
        help="the aclnn_*.h header declaring the function, e.g. aclnnop/aclnn_add.h",
    )
    m.add_argument(
        "--function",
        metavar="NAME",
        help="the aclnn function (default: the one named after the header)",
    )
    m.add_argument(
        "-o", "--out", dest="out", metavar="FILE", help="where to write (default: standard output)"
    )
    m.add_argument("--force", action="store_true", help="overwrite an existing -o file")
    add_header_options(m)


def _cmd_import_msopst(args: argparse.Namespace) -> int:
    from stress.corpus.msopst_bind import import_msopst

    out = Path(args.out) if args.out not in (None, "-") else None
    text, n, warnings = import_msopst(Path(args.cases), args.header, args.function, out,
                                      args.include, args.define)  # fmt: skip
    for line in warnings:
        print(f"aclnn-stress: warning: {line}", file=sys.stderr)
    return _write(args, text, f"{n} cases imported from {args.cases}")


def _add_bound_options(g: argparse.ArgumentParser) -> None:
    """The generic bounds: each narrows what the operator's declaration draws."""
    g.add_argument(
        "--dim", action="append", default=[], metavar="NAME=LOW:HIGH",
        help="draw dimension NAME from [LOW, HIGH] (within [dims], or up to [generate] legal; "
        "repeatable), e.g. C=128:256",
    )  # fmt: skip
    g.add_argument(
        "--limit", action="append", default=[], metavar="EXPR=MAX",
        help="keep a dimension expression at or under MAX (adds to or replaces [generate] "
        "limits; repeatable), e.g. 'B*S=64'",
    )  # fmt: skip
    g.add_argument(
        "--dtypes", action="append", default=[], metavar="[VAR=]LIST",
        help="comma-separated dtypes a dtype variable draws (VAR may be left out when the op "
        "draws one)",
    )  # fmt: skip
    g.add_argument("--max-elements", type=int, metavar="N",
                   help="most elements of any one tensor of a case (default: [generate] "
                   "max_elements)")  # fmt: skip


def _declared_text(args: argparse.Namespace) -> tuple[str, int]:
    """The declaration file with generated cases in place of its own, and their number."""
    import re

    from stress.ops.declaration import load_declaration
    from stress.ops.declared_strategies import cases_toml, generate_cases

    if args.violations is not None and not args.invalid:
        raise ConfigError("--violations: only with --invalid")
    decl = load_declaration(args.declaration, args.include)
    options, shown = _options(args, decl)
    cases = generate_cases(decl, options)
    text = Path(args.declaration).read_text(encoding="utf-8")
    head = re.split(r"(?m)^\[\[case\]\]", text, maxsplit=1)[0].rstrip()
    command = " ".join([f"aclnn-stress corpus generate --declaration {args.declaration} "
                        f"--count {args.count} --seed {args.seed}",
                        *(["--invalid"] if args.invalid else []), *shown])  # fmt: skip
    note = f"# {len(cases)} cases generated by: {command}\n"
    from stress import ops

    if Path(args.declaration).resolve().parent == ops.BUILT_IN_DECLARATIONS:
        # a built-in operator: a plain corpus of its cases (its name cannot be redeclared)
        head = f'[defaults]\nop = "{decl.name}"'
    return f"{note}{head}\n\n{cases_toml(cases)}\n", len(cases)


def _declared_with_variants(args: argparse.Namespace) -> tuple[str, int]:
    """A corpus naming the declaration: its generated cases and the variants they derive."""
    from dataclasses import replace

    from stress import ops
    from stress.corpus.parse import corpus_cases, corpus_text
    from stress.corpus.variants import all_variants
    from stress.ops.declaration import load_declaration
    from stress.ops.declared_strategies import generate_cases

    decl = load_declaration(args.declaration, args.include)
    options, shown = _options(args, decl)
    drawn = generate_cases(decl, options)
    built_in = Path(args.declaration).resolve().parent == ops.BUILT_IN_DECLARATIONS
    spec = ops.get(decl.name) if built_in else ops.register_declaration(decl)
    cases = all_variants(corpus_cases(replace(decl, cases=tuple(drawn)), spec), args.variants)
    command = " ".join([f"aclnn-stress corpus generate --declaration {args.declaration} "
                        f"--count {args.count} --seed {args.seed}", *shown,
                        f"--variants {','.join(args.variants)}"])  # fmt: skip
    comment = (
        f"{len(drawn)} cases and their variants ({len(cases)} in all)\ngenerated by: {command}"
    )
    return corpus_text(cases, comment), len(cases)


def _write(args: argparse.Namespace, text: str, what: str) -> int:
    from stress.files import atomic_write_bytes

    if args.out is None or args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    if out.exists() and not args.force:
        raise ConfigError(f"{out}: already exists; choose another --out or pass --force")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: directory {out.parent} does not exist")
    atomic_write_bytes(out, text.encode())
    print(f"wrote {what} to {out}", file=sys.stderr)
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from stress import ops
    from stress.corpus.bounds import BoundsError
    from stress.corpus.generate import generate_cases

    if args.invalid and args.variants:
        raise ConfigError("--variants: only for valid cases (a negative case derives none)")
    if args.declaration is not None and args.variants:
        text, n = _declared_with_variants(args)
        return _write(args, text, f"{n} cases of {args.declaration} and their variants")
    if args.declaration is not None:
        text, n = _declared_text(args)
        return _write(args, text, f"{n} cases of {args.declaration}")
    if args.op not in ops.names():
        raise ConfigError(f"--op must be one of {', '.join(ops.names())}, got {args.op!r}")
    options, shown = _options(args, ops.declaration_of(args.op))
    if args.violations is not None and not args.invalid:
        raise ConfigError("--violations: only with --invalid")
    try:
        cases = generate_cases(args.op, options)
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
    from stress.corpus.variants import all_variants

    if args.variants:
        cases = all_variants(cases, args.variants)
        comment += f" --variants {','.join(args.variants)}\n{len(cases)} cases with the variants"
    text = corpus_text(cases, comment)
    return _write(args, text, f"{len(cases)} cases of {args.op}")


COMMAND = Command(
    "corpus",
    help="generate corpus files (valid cases or constraint violations) or import msOpST's",
    description="Work with corpus files.",
    actions=(
        Command(
            "generate",
            help="write a TOML corpus of generated cases (deterministic for a seed)",
            description="Write COUNT generated cases of OP to a TOML corpus. Valid cases satisfy "
            "the operator's constraints; --invalid cases each violate one documented constraint "
            "([[generate.violation]]) and expect its status (161002). What is drawn comes from "
            "the operator's declaration ([dims], [shapes], [dtypes], [generate]). The same "
            "arguments always write the same file (random.Random(SEED) drives the case builder "
            "the hypothesis strategies use).",
            epilog="Exit codes: 0 written, 2 usage/configuration error.",
            arguments=_generate_arguments,
            run=_cmd_generate,
        ),
        Command(
            "import-msopst",
            help="turn an msOpST case file (msopst create's JSON) into a declared corpus",
            description="Turn msOpST's case-definition JSON into a declared corpus of the aclnn "
            "function HEADER declares: each input_desc binds to the tensor input of its name, "
            "else to the next in C order (output_desc to the outputs, attr to the attributes); "
            "the type, format, shape, data_distribute and value_range alternatives of a case are "
            "multiplied into sub-cases as msOpST does. What cannot be mapped (a format other "
            "than ND, a fuzz case, a value from a .bin file) is a warning naming the case and "
            "the field, and that case is skipped. Parameters the cases do not give take the "
            "`op new` skeleton's defaults.",
            epilog="Exit codes: 0 written, 2 usage/configuration error (not an msOpST file, "
            "header not found, no case imported).",
            arguments=_import_msopst_arguments,
            run=_cmd_import_msopst,
        ),
    ),
)
