"""Read an aclnn operator header (``aclnn_*.h``) into :class:`~stress.ops.signature.HeaderInfo`.

The header is preprocessed, parsed with pycparser and its typed AST (``c_ast``) walked; no
declaration is matched with a regular expression.

Preprocessing uses pcpp, a C99 preprocessor in pure Python, rather than ``cc -E``: it needs no
compiler on the machine (the reader then behaves the same on a developer's laptop, in CI and on
an Ascend host), and its include hook lets an ``#include`` that cannot be found be *skipped*
instead of being fatal, which is what a header read "on its own, from any folder" needs: real
headers include ``aclnn/aclnn_base.h`` and ``aclnn_util.h``, which are seldom next to them.
A prelude supplies what those would have: CANN's base types (``aclTensor``, ``aclScalar``, the
array and list types, ``aclDataType``, ``aclrtStream``, ``aclnnStatus``), the fixed-width
integers, ``bool``, and empty definitions of ``ACLNN_API``-style visibility macros and of
``__attribute__``. Include dirs given with ``-I`` are searched first, so a real install's
headers are used where they are found (identical typedefs may be repeated in C).

pycparser drops comments, so the ``@param [in]/[out] name`` tags are collected from the raw text
(:func:`doc_tags`) and attached by parameter name to the function whose declaration follows the
comment.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pcpp
from pycparser import c_ast, c_parser

from stress.errors import ConfigError
from stress.ops.header_find import file_digest, find_header
from stress.ops.signature import KINDS, CParam, HeaderInfo, OpSignature, role_of

__all__ = ["PRELUDE", "doc_tags", "find_header", "read_header", "read_header_text"]

_API_MACROS = (
    "ACLNN_API",
    "ACLSIM_API",
    "ACL_FUNC_VISIBILITY",
    "ACLNN_EXPORT",
    "ASCEND_API",
    "__declspec(x)",
    "__attribute__(x)",
    "__attribute(x)",
    "__inline",
    "__restrict",
    "__restrict__",
    "__extension__",
)

PRELUDE = """
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t; typedef unsigned long size_t; typedef _Bool bool;
typedef struct aclTensor aclTensor; typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray; typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray; typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList; typedef struct aclOpExecutor aclOpExecutor;
typedef int aclDataType; typedef int aclFormat; typedef int aclnnStatus; typedef int aclError;
typedef uint16_t aclFloat16; typedef void *aclrtStream; typedef void *aclrtContext;
"""

_PRELUDE_NAME = "<aclnn-stress prelude>"
_TAG = re.compile(r"@param\s*\[\s*(in\s*[,/]?\s*out|inout|in|out)\s*\]\s*([A-Za-z_]\w*)", re.I)
_WORKSPACE = ("uint64_t", 1, "workspaceSize")
_EXECUTOR = ("aclOpExecutor", 2, "executor")


class _Preprocessor(pcpp.Preprocessor):
    """pcpp that skips includes it cannot find and records errors instead of printing them."""

    def __init__(self, tried: dict[str, str | None] | None = None) -> None:
        super().__init__()
        self.errors: list[str] = []
        self.tried = tried  # every file it tried to open: its sha256, None where absent
        self._ahead: list = []  # tokens read ahead by _lookahead
        self._depth = 0  # brace depth outside linkage blocks
        self._linkage: list[int] = []  # the depth each open extern "C" { block started at
        self.line_directive = "#line"
        self.compress = 0

    def token(self):
        """Tokens with C++ linkage blocks (``extern "C" {`` ... ``}``) blanked, for headers that
        do not guard them with ``#ifdef __cplusplus``."""
        tok = self._ahead.pop(0) if self._ahead else super().token()
        if tok is None:
            return None
        if tok.type == "CPP_ID" and tok.value == "extern":
            run = self._lookahead(2)
            if run and run[0].type == "CPP_STRING" and run[0].value in ('"C"', '"C++"'):
                _blank(tok, run[0])
                if len(run) > 1 and run[1].type == "CPP_LCURLY":
                    _blank(run[1])
                    self._linkage.append(self._depth)
        elif tok.type == "CPP_LCURLY":
            self._depth += 1
        elif tok.type == "CPP_RCURLY":
            if self._linkage and self._depth == self._linkage[-1]:
                self._linkage.pop()  # closes a linkage block
                _blank(tok)
            else:
                self._depth -= 1
        return tok

    def _lookahead(self, n: int) -> list:
        """The next ``n`` non-whitespace tokens (kept for :meth:`token` to return in order)."""
        seen = [t for t in self._ahead if t.type not in self.t_WS]
        while len(seen) < n:
            tok = super().token()
            if tok is None:
                break
            self._ahead.append(tok)
            if tok.type not in self.t_WS:
                seen.append(tok)
        return seen[:n]

    def on_file_open(self, is_system_include, includepath):
        if self.tried is None:
            return super().on_file_open(is_system_include, includepath)
        try:
            opened = super().on_file_open(is_system_include, includepath)
        except OSError:
            self.tried[includepath] = None
            raise
        self.tried[includepath] = file_digest(includepath)
        return opened

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def on_error(self, file, line, msg):
        self.errors.append(f"{file}:{line}: {msg}")

    def on_comment(self, tok):
        return False


def _blank(*toks) -> None:
    for tok in toks:
        tok.type, tok.value = "CPP_WS", " "


def _preprocess(
    text: str,
    source: str,
    include_dirs: Iterable[Path],
    defines: Iterable[str],
    tried: dict[str, str | None] | None = None,
):
    pp = _Preprocessor(tried)
    for d in include_dirs:
        pp.add_path(str(d))
    for macro in _API_MACROS:
        pp.define(macro + " ")
    for define in defines:
        name, _, value = define.partition("=")
        pp.define(f"{name} {value}".strip())
    pp.parse(text, source)
    out = io.StringIO()
    pp.write(out)
    if pp.errors:
        raise ConfigError(f"{pp.errors[0]} (preprocessing; fix the directive or pass -D NAME)")
    return PRELUDE + out.getvalue()


def doc_tags(text: str) -> list[tuple[int, dict[str, str]]]:
    """(last line, {param: in|out|inout}) of every comment of ``text`` with @param tags."""
    found: list[tuple[int, dict[str, str]]] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":  # skip literals so that '//' inside a string is not a comment
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j + 1)
            i = j + 1
            continue
        if text.startswith("/*", i) or text.startswith("//", i):
            end = text.find("*/", i + 2) + 2 if text[i + 1] == "*" else text.find("\n", i)
            end = n if end < 2 or end == -1 else end
            body = text[i:end]
            tags = {m.group(2): _direction(m.group(1)) for m in _TAG.finditer(body)}
            line += body.count("\n")
            if tags:
                found.append((line, tags))
            i = end
            continue
        line += ch == "\n"
        i += 1
    return found


def _direction(raw: str) -> str:
    raw = raw.lower().replace(" ", "")
    return raw if raw in ("in", "out") else "inout"


@dataclass(frozen=True)
class _CType:
    name: str
    pointers: int
    const: bool


def _ctype(node: c_ast.Node) -> _CType | None:
    pointers = 0
    while isinstance(node, c_ast.PtrDecl):
        pointers += 1
        node = node.type
    if not isinstance(node, c_ast.TypeDecl) or not isinstance(node.type, c_ast.IdentifierType):
        return None
    names = [n for n in node.type.names if n not in ("signed",)]
    return _CType(" ".join(names), pointers, "const" in node.quals)


def _params(func: c_ast.FuncDecl) -> list[tuple[str, _CType | None, int]]:
    out = []
    for i, decl in enumerate(func.args.params if func.args else ()):
        if isinstance(decl, c_ast.EllipsisParam):
            out.append(("...", None, decl.coord.line))
            continue
        ctype = _ctype(decl.type)
        if ctype is not None and ctype.name == "void" and ctype.pointers == 0:
            continue  # f(void)
        out.append((decl.name or f"arg{i}", ctype, decl.coord.line))
    return out


def _describe(ctype: _CType | None) -> str:
    if ctype is None:
        return "an array, function or struct type"
    return ("const " if ctype.const else "") + ctype.name + " " + "*" * ctype.pointers


def _signature(name, func, tags, source, line) -> OpSignature:
    params = _params(func)
    tail = [(c.name, c.pointers, n) if c else None for n, c, _ in params[-2:]]
    if tail != [_WORKSPACE, _EXECUTOR][: len(tail)] or len(tail) < 2:
        raise ConfigError(
            f"{source}:{line}: {name}GetWorkspaceSize must end with 'uint64_t *workspaceSize, "
            "aclOpExecutor **executor' (an aclnn phase-1 function); fix the declaration"
        )
    result = []
    for pname, ctype, pline in params[:-2]:
        kind = KINDS.get((ctype.name, ctype.pointers)) if ctype else None
        if kind == "string" and not ctype.const:
            kind = None
        if kind is None:
            supported = ", ".join(sorted({t for t, _ in KINDS} - {"_Bool"}))
            raise ConfigError(
                f"{source}:{pline}: parameter '{pname}' of {name}GetWorkspaceSize has type "
                f"'{_describe(ctype).strip()}', which aclnn-stress cannot pass; supported: "
                f"{supported} (pointers for acl* types, 'const char *' for strings)"
            )
        tag = tags.get(pname)
        role, optional = role_of(pname, kind, ctype.const, tag)
        result.append(
            CParam(
                pname,
                ctype.name.replace("_Bool", "bool"),
                kind,
                ctype.const,
                role,
                optional,
                tag,
                pline,
            )
        )
    return OpSignature(name, tuple(result), source, line)


def _check_phase2(name: str, func: c_ast.FuncDecl | None, source: str, line: int) -> None:
    want = [("void", 1), ("uint64_t", 0), ("aclOpExecutor", 1), ("aclrtStream", 0)]
    got = [(c.name, c.pointers) if c else None for _, c, _ in _params(func)] if func else None
    if got != want:
        raise ConfigError(
            f"{source}:{line}: {name}GetWorkspaceSize has no matching '{name}(void *workspace, "
            f"uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)'; declare it"
        )


def _parse_error(message: str, source: str) -> str:
    found = re.match(r"^(.*?):(\d+):(\d+): (.*)$", message)
    if not found:
        return f"{source}: {message}: expected a C declaration"
    file, line, col, what = found.groups()
    if os.path.realpath(file) == os.path.realpath(source):
        file = source
    what = f"unexpected {what[len('before: ') :]!r}" if what.startswith("before: ") else what
    return (
        f"{file}:{line}:{col}: {what}, expected a C declaration "
        "(a missing ',' or ';', or an unknown macro? pass -D NAME=)"
    )


def read_header_text(
    text: str,
    source: str,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
    tried: dict[str, str | None] | None = None,
) -> HeaderInfo:
    """Every operator declared in ``text`` (the contents of the header called ``source``);
    ``tried``, if given, gets every file the preprocessor tried to open (its sha256, or None
    where it could not: :mod:`stress.ops.header_cache`)."""
    dirs = [Path(d) for d in include_dirs]
    if Path(source).parent.is_dir():
        dirs.append(Path(source).parent)
    flat = _preprocess(text, source, dirs, defines, tried)
    try:
        ast = c_parser.CParser().parse(flat, filename=_PRELUDE_NAME)
    except c_parser.ParseError as exc:
        raise ConfigError(_parse_error(str(exc), source)) from None
    funcs: dict[str, tuple[c_ast.FuncDecl, int]] = {}
    main = os.path.realpath(source)
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            if os.path.realpath(ext.coord.file) == main and ext.name not in funcs:
                funcs[ext.name] = (ext.type, ext.coord.line)
    comments = doc_tags(text)
    ops = []
    starts = sorted(line for _, line in funcs.values())
    for fname, (func, line) in funcs.items():
        if not fname.endswith("GetWorkspaceSize"):
            continue
        name = fname[: -len("GetWorkspaceSize")]
        before = max((s for s in starts if s < line), default=0)
        tags = next((t for end, t in reversed(comments) if before < end <= line), {})
        sig = _signature(name, func, tags, source, line)
        _check_phase2(name, funcs.get(name, (None, 0))[0], source, line)
        ops.append(sig)
    if not ops:
        raise ConfigError(
            f"{source}: declares no aclnn operator (no 'aclnnXxxGetWorkspaceSize(..., "
            "uint64_t *workspaceSize, aclOpExecutor **executor)'); is this an aclnn_*.h header?"
        )
    return HeaderInfo(source, tuple(ops))


def read_header(
    path: str | Path,
    include_dirs: Sequence[str | Path] = (),
    defines: Sequence[str] = (),
) -> HeaderInfo:
    """Every operator declared in the header at ``path`` (see :func:`find_header`)."""
    found = find_header(path, include_dirs)
    try:
        text = found.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{found}: cannot read header: {exc.strerror}") from None
    return read_header_text(text, str(found), include_dirs, defines)
