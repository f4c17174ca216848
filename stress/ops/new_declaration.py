"""``op new``'s file side: find the header and the operator, read its doc comment, pick the
``[op] header`` reference the written file resolves, and render the skeleton
(:mod:`stress.ops.skeleton`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from stress.errors import ConfigError
from stress.ops.doc_comment import op_doc
from stress.ops.header import find_header, read_header
from stress.ops.signature import HeaderInfo, OpSignature
from stress.ops.skeleton import guess_skeleton, render_skeleton, snake_name

__all__ = ["default_function", "header_ref", "new_declaration"]


def default_function(info: HeaderInfo, function: str | None) -> OpSignature:
    """The operator ``function`` of ``info``; without one, the operator named after the header
    (``aclnn_add.h``: ``aclnnAdd``), else the first it declares."""
    names = ", ".join(op.name for op in info.ops)
    if function is not None:
        try:
            return info.op(function)
        except KeyError:
            raise ConfigError(
                f"{info.header}: --function {function!r} is not declared there; it declares {names}"
            ) from None
    stem = Path(info.header).stem.removeprefix("aclnn_")
    return next((op for op in info.ops if snake_name(op.name) == stem), info.ops[0])


def header_ref(given: str, found: Path, out: Path | None) -> str:
    """What the written file's ``[op] header`` says: the name as given when it was found in the
    include dirs (``aclnnop/aclnn_add.h``), else the path relative to the output's folder."""
    if not Path(given).is_file():
        return given
    if out is None:
        return str(found.resolve())
    return os.path.relpath(found.resolve(), out.resolve().parent)


def new_declaration(
    header: str,
    function: str | None,
    out: Path | None,
    include_dirs: Sequence[str] = (),
    defines: Sequence[str] = (),
) -> tuple[str, str]:
    """(the skeleton's text, its function) for ``function`` of ``header``; ``out`` is where it
    will be written (ConfigError if it exists)."""
    if out is not None and out.exists():
        raise ConfigError(f"{out}: exists; remove it or give another -o FILE")
    found = find_header(header, include_dirs)
    info = read_header(found, include_dirs, defines)
    sig = default_function(info, function)
    text = found.read_text(encoding="utf-8", errors="replace")
    doc = op_doc(text, sig.line, sig.names)
    from stress.ops import names as known_ops  # the built-in operators' names are taken

    sk = guess_skeleton(sig, doc, header_ref(header, found, out), frozenset(known_ops()))
    return render_skeleton(sk), sig.name
