"""Declared references: when the ``reference = "module:function"`` of a declaration is imported.

Corpora, declarations, baselines and journals are data: reading one must never run code. A
declaration's ``reference`` names a Python function, and importing its module runs that module,
so a reference is imported only when it is trusted:

* **built in**: the module is the framework's own operator knowledge (``stress.ops.*``),
  shipped and installed with the package: trusted as the package itself is (the shipped mHC
  and add operators use their references this way, from Python, never from a data file);
* **allowed by the user**: ``--allow-reference-imports`` on the command line (which the CLI
  hands to its phase children as ``ACLNN_STRESS_ALLOW_REFERENCE_IMPORTS=1``; a user may set
  that variable too), or ``allow-reference-imports = true`` under ``[tool.aclnn-stress]`` in
  the ``pyproject.toml`` of the directory the command runs in (the project's own config).

Never the data file itself: no corpus or declaration can allow its own import. Otherwise the
declaration is refused with one line naming the file, the field and the flag.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress.errors import ConfigError

__all__ = [
    "ALLOW_ENV",
    "BUILT_IN_PREFIX",
    "check_reference",
    "imports_allowed",
    "load_reference",
]

ALLOW_ENV = "ACLNN_STRESS_ALLOW_REFERENCE_IMPORTS"
BUILT_IN_PREFIX = "stress.ops."
_PYPROJECT_KEY = "allow-reference-imports"
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _pyproject_allows(directory: Path) -> bool:
    from stress.files import load_toml

    path = directory / "pyproject.toml"
    if not path.is_file():
        return False
    tool = load_toml(path, "project config").get("tool", {})
    section = tool.get("aclnn-stress", {}) if isinstance(tool, dict) else {}
    value = section.get(_PYPROJECT_KEY, False) if isinstance(section, dict) else False
    if not isinstance(value, bool):
        raise ConfigError(
            f"{path} [tool.aclnn-stress], field '{_PYPROJECT_KEY}': expected true or false"
        )
    return value


def imports_allowed() -> bool:
    """Whether the user allowed importing declared references (flag, variable or pyproject)."""
    if os.environ.get(ALLOW_ENV, "") in ("1", "true", "yes"):
        return True
    return _pyproject_allows(Path.cwd())


def check_reference(text: str, source: str, field: str = "reference") -> None:
    """Refuse ``module:function`` in ``source``'s ``field`` unless well formed and trusted (a
    one-line :class:`ConfigError` naming the field and the fix); imports nothing."""
    where = f"{source} [op], field '{field}'"
    module, _, name = text.partition(":")
    if not _DOTTED.match(module) or not _NAME.match(name):
        raise ConfigError(f'{where}: expected "module:function" (dotted names), got {text!r}')
    if not module.startswith(BUILT_IN_PREFIX) and not imports_allowed():
        raise ConfigError(
            f"{where}: importing {module!r} would run its code, and a declaration is data; "
            "pass --allow-reference-imports (or set allow-reference-imports = true under "
            "[tool.aclnn-stress] in your pyproject.toml) if you trust it, or remove the field"
        )


def load_reference(text: str, source: str, field: str = "reference") -> Callable[..., Any]:
    """The function ``module:function`` names, imported if trusted; else a one-line
    :class:`ConfigError` naming ``source``'s field and the fix."""
    check_reference(text, source, field)
    where = f"{source} [op], field '{field}'"
    module, _, name = text.partition(":")
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # an import runs arbitrary code: any failure is the user's to fix
        raise ConfigError(
            f"{where}: cannot import {module!r} ({type(exc).__name__}: {exc})"
        ) from None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise ConfigError(f"{where}: {module!r} has no function {name!r}")
    return fn
