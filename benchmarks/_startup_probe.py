"""``aclnn-stress ARGS`` in this process, stopped where the run lets its first step go; prints
one JSON line: the process's CPU seconds (user + system, this process only: the fork server
and its children are not in it) when the fork server had started, when ``Session.run`` began
and at the go, and the modules imported by then. Run by benchmarks/bench_startup_cpu.py with
``PYTHONPATH`` naming the tree under test; never imported."""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import json
import sys
import time

MARKS: dict[str, float] = {}
WRAP = {
    "stress.engine.run.early": ("start_early", "fork server started", False),
    "stress.engine.run.session": ("Session.run", "Session.run", True),
}


class Stop(BaseException):
    """Raised at the go: nothing after it is measured."""


def _wrap(owner, name: str, label: str, before: bool) -> None:
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapped(*args, **kw):
        if before:
            MARKS[label] = time.process_time()
        result = real(*args, **kw)
        if not before:
            MARKS[label] = time.process_time()
        return result

    setattr(owner, name, wrapped)


def _stop_at_go(owner) -> None:
    def drain(*args, **kw):
        MARKS["go"] = time.process_time()
        MARKS["modules"] = sorted(sys.modules)  # type: ignore[assignment]
        raise Stop

    owner.drain = drain


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, name: str) -> None:
        self.inner, self.name = inner, name

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module) -> None:
        self.inner.exec_module(module)
        if self.name == "stress.engine.run.early":
            _stop_at_go(module.Ahead)
        path, label, before = WRAP[self.name]
        owner, _, attr = path.rpartition(".")
        _wrap(getattr(module, owner) if owner else module, attr, label, before)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAP:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None:
            spec.loader = _Loader(spec.loader, name)
        return spec


def main() -> None:
    sys.meta_path.insert(0, _Finder())
    from stress.cli import main as cli

    try:
        cli(sys.argv[1:])
    except Stop:
        pass
    print(json.dumps(MARKS))


if __name__ == "__main__":
    main()
