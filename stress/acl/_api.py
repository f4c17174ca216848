"""Lazy binding of the prototype table to the loaded libraries, with status checking.

``api.aclrtMalloc(...)`` calls the C function and raises :class:`AclError` on a non-zero status;
``api.raw.aclrtMalloc(...)`` returns the status untouched (for codes that are not errors, such as
``aclInit``'s 100002, and for tests). Create functions that return a handle raise
:class:`AclNullHandleError` on NULL. Symbols are resolved on first use, in the library where CANN
exports them, and cached.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress.acl._prototypes import OPAPI, PROTOTYPES, Prototype
from stress.acl.backend import Backend
from stress.acl.errors import AclNullHandleError, BackendError, error_for

__all__ = ["Api"]

_STATUS_TYPES = (ctypes.c_int, ctypes.c_int32)


class _Raw:
    """Unchecked view of an :class:`Api`: attribute access returns the bare ctypes function."""

    def __init__(self, api: Api) -> None:
        self._api = api

    def __getattr__(self, name: str) -> Any:
        fn = self._api.function(name)
        setattr(self, name, fn)
        return fn


def load_failure(path: str, exc: OSError, root: os.PathLike) -> str:
    """One line: which library failed to load, the loader's reason, and the fix that fits it."""
    reason = str(exc).replace(f"{path}: ", "", 1)
    if "cannot open shared object file" in reason and Path(path).name not in reason:
        fix = (
            f"a library it needs is not on the loader's path: source {root}/set_env.sh "
            "(it sets LD_LIBRARY_PATH) and retry"
        )
    else:
        fix = "it is not a loadable shared library for this machine: reinstall CANN there"
    return f"cannot load {path}: {reason}; {fix}"


class Api:
    """The C functions of one backend, bound on first use."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._lock = threading.Lock()
        self._libs: dict[str, ctypes.CDLL] = {}
        self._functions: dict[str, Any] = {}
        self._origin: dict[str, str] = {}
        self._extra: dict[str, Prototype] = {}
        self._operators: dict[str, tuple[Any, Any]] = {}
        self.raw = _Raw(self)

    # -- loading --------------------------------------------------------------------------
    def _load(self, path: os.PathLike) -> ctypes.CDLL:
        key = str(path)
        lib = self._libs.get(key)
        if lib is None:
            try:
                # RTLD_GLOBAL like CANN's own loaders: libopapi resolves nnopbase symbols globally.
                lib = ctypes.CDLL(key, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                raise BackendError(load_failure(key, exc, self.backend.root)) from None
            self._libs[key] = lib
        return lib

    def load_all(self) -> None:
        """Load the runtime and nnopbase libraries now (operator libraries stay lazy)."""
        with self._lock:
            self._load(self.backend.ascendcl)
            self._load(self.backend.nnopbase)

    def _find_symbol(self, proto: Prototype) -> tuple[Any, str] | None:
        if proto.library == OPAPI:
            candidates = self.backend.op_libraries
        elif proto.library == "nnopbase":
            candidates = (self.backend.nnopbase,)
        else:
            candidates = (self.backend.ascendcl,)
        for path in candidates:
            lib = self._load(path)
            try:
                return getattr(lib, proto.name), str(path)
            except AttributeError:
                continue
        return None

    def function(self, name: str) -> Any:
        """The bare ctypes function ``name`` with restype/argtypes set (cached)."""
        fn = self._functions.get(name)
        if fn is not None:
            return fn
        proto = self._extra.get(name) or PROTOTYPES.get(name) or self._from_header(name)
        if proto is None:
            raise AttributeError(
                f"{name} is not in the prototype table (acl/_prototypes.py) nor declared by a "
                "header of the backend (include/aclnnop/aclnn_*.h)"
            )
        with self._lock:
            fn = self._functions.get(name)
            if fn is None:
                found = self._find_symbol(proto)
                if found is None:
                    where = ", ".join(str(p) for p in self._search_paths(proto))
                    raise BackendError(
                        f"{name} is not exported by {where}: this CANN release lacks the "
                        f"operator or API; install a release that has it or use STRESS_BACKEND=sim"
                    )
                fn, self._origin[name] = found
                fn.restype = proto.restype
                fn.argtypes = list(proto.argtypes)
                self._functions[name] = fn
        return fn

    def _from_header(self, name: str) -> Prototype | None:
        """The prototype of an operator's phase 1 or 2 read from the backend's header that
        declares it (``aclnnAdd`` -> include/aclnnop/aclnn_add.h); None when none does."""
        if not name.startswith("aclnn"):
            return None
        op = name.removesuffix("GetWorkspaceSize")
        needle = f"{op}GetWorkspaceSize("
        for d in self.backend.include_dirs:
            for header in sorted(d.glob("aclnn*.h")):
                if needle not in header.read_text(errors="replace"):
                    continue
                from stress.ops.header import read_header
                from stress.ops.signature import phase1_argtypes, phase2_argtypes

                sig = read_header(header, self.backend.include_dirs).op(op)
                for fn, types in ((needle[:-1], phase1_argtypes(sig)), (op, phase2_argtypes(sig))):
                    if not self.has_prototype(fn):
                        self.add_prototype(Prototype(fn, OPAPI, ctypes.c_int32, types))
                return self._extra.get(name)
        return None

    def add_prototype(self, proto: Prototype) -> None:
        """Declare a function the built-in table lacks (a custom package's operator); it is
        then bound like the others, ``api.<name>`` included."""
        if proto.name in PROTOTYPES:
            raise ValueError(f"{proto.name} is a built-in prototype: it cannot be redeclared")
        with self._lock:
            self._extra[proto.name] = proto

    def has_prototype(self, name: str) -> bool:
        """Whether ``name`` is declared (built-in table or :meth:`add_prototype`)."""
        return name in PROTOTYPES or name in self._extra

    def operator(self, function: str, signature: Any = None) -> tuple[Any, Any]:
        """The bare (``<function>GetWorkspaceSize``, ``<function>``) ctypes functions, cached.

        With ``signature`` (an :class:`stress.ops.signature.OpSignature` read from the
        operator's header) their argtypes come from it and the symbols are looked up in the
        backend's operator libraries (domain libraries, libopapi.so, custom packages); without,
        from the prototype table."""
        fns = self._operators.get(function)
        if fns is None:
            names = (f"{function}GetWorkspaceSize", function)
            if signature is not None:
                from stress.ops.signature import phase1_argtypes, phase2_argtypes

                argtypes = (phase1_argtypes(signature), phase2_argtypes(signature))
                for name, types in zip(names, argtypes, strict=True):
                    if not self.has_prototype(name):
                        self.add_prototype(Prototype(name, OPAPI, ctypes.c_int32, types))
            fns = self._operators[function] = (self.function(names[0]), self.function(names[1]))
        return fns

    def library_of(self, name: str) -> str:
        """Path of the library that exports ``name`` (binding it first): for an operator, the
        first of the domain libraries, libopapi.so and custom packages that has it."""
        self.function(name)
        return self._origin[name]

    def _search_paths(self, proto: Prototype) -> tuple:
        if proto.library == OPAPI:
            return self.backend.op_libraries or ("(no libopapi*.so found)",)
        return (self.backend.nnopbase if proto.library == "nnopbase" else self.backend.ascendcl,)

    def has(self, name: str) -> bool:
        """Whether the backend exports ``name`` (probes optional symbols without raising)."""
        try:
            self.function(name)
        except BackendError:
            return False
        return True

    # -- checked calls --------------------------------------------------------------------
    def recent_error_message(self) -> str:
        """``aclGetRecentErrMsg()`` of the calling thread (clears it), ``""`` when none."""
        msg = self.function("aclGetRecentErrMsg")()
        return msg.decode("utf-8", "replace").strip() if msg else ""

    def check(self, status: int, api: str) -> None:
        """Raise the matching :class:`AclError` when ``status`` is not 0."""
        if status != 0:
            raise error_for(status, api, self.recent_error_message())

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or not (self.has_prototype(name) or self._from_header(name)):
            raise AttributeError(name)
        fn = self.function(name)
        proto = self._extra.get(name) or PROTOTYPES[name]
        if proto.restype in _STATUS_TYPES:

            def checked(*args: Any, _fn=fn, _name=name) -> None:
                status = _fn(*args)
                if status != 0:
                    raise error_for(status, _name, self.recent_error_message())

            wrapper = checked
        elif name.startswith("aclCreate"):

            def created(*args: Any, _fn=fn, _name=name) -> int:
                handle = _fn(*args)
                if not handle:
                    raise AclNullHandleError(_name, self.recent_error_message())
                return handle

            wrapper = created
        else:
            wrapper = fn
        wrapper.__name__ = name
        setattr(self, name, wrapper)
        return wrapper
