"""The tests can fail: an ast walk over tests/ proves two things (issue 32).

* No assertion passes on an empty collection through a bare ``all(...)`` (or ``not any(...)``):
  the collection is asserted non-empty first, in the same ``and`` chain (``assert xs and
  all(...)``) or in an earlier assert of the same function that names it (``assert len(xs) ==
  3``), or it is a non-empty literal. A filtered generator (``all(p(x) for x in xs if q(x))``)
  is never enough, since the filter may leave nothing: filter into a named list and assert it.
* No skip hides a broken simulator build in CI: ``pytest.skip`` inside an ``except`` that
  catches a build failure (bare, ``Exception``, ``BaseException``, ``OSError``,
  ``SimBuildError``) is only allowed in tests/_sim_available.py, whose ``skip_or_fail`` fails
  under ``CI=true``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests import _sim_available

TESTS = Path(__file__).resolve().parent
BROAD = {"Exception", "BaseException", "OSError", "SimBuildError", "RuntimeError"}


def _files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts)


def _vacuous(call: ast.expr) -> ast.Call | None:
    """The ``all``/``any`` call when ``call`` is one that holds on an empty iterable."""
    if isinstance(call, ast.UnaryOp) and isinstance(call.op, ast.Not):
        inner = call.operand
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
            return inner if inner.func.id == "any" and len(inner.args) == 1 else None
        return None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
        return call if call.func.id == "all" and len(call.args) == 1 else None
    return None


def _iterable(call: ast.Call) -> tuple[ast.expr, bool]:
    """The iterated collection, and whether the generator filters it."""
    arg = call.args[0]
    if isinstance(arg, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        gen = arg.generators[0]
        return gen.iter, any(g.ifs for g in arg.generators)
    return arg, False


def _literal_nonempty(node: ast.expr) -> bool:
    if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return len(getattr(node, "elts", None) or getattr(node, "keys", [])) > 0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        args = node.args
        if len(args) == 1 and isinstance(args[0], ast.Constant):
            return isinstance(args[0].value, int) and args[0].value > 0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip":
        return all(_literal_nonempty(a) for a in node.args)
    return False


def _targets(it: ast.expr) -> set[str]:
    """What a guard may name to prove ``it`` non-empty: the collection itself; a dict view's
    dict (``d.values()``: ``d``); ``range(n)``'s ``n``; any of ``zip(...)``'s arguments."""
    out = {ast.unparse(it)}
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args:
        if it.func.attr in ("values", "keys", "items"):
            out.add(ast.unparse(it.func.value))
    if (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id in ("range", "zip")
    ):
        out.update(ast.unparse(a) for a in it.args[-1:] if it.func.id == "range")
        out.update(ast.unparse(a) for a in it.args if it.func.id == "zip")
    return out


def _mentions(node: ast.AST, targets: set[str]) -> bool:
    """Whether ``node`` has a subexpression that is one of ``targets``."""
    return any(isinstance(sub, ast.expr) and ast.unparse(sub) in targets for sub in ast.walk(node))


def unguarded(source: str, name: str = "<src>") -> list[str]:
    """Every assert in ``source`` that holds on an empty collection, as ``name:line: text``."""
    tree = ast.parse(source)
    found: list[str] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            continue
        asserts = [n for n in ast.walk(func) if isinstance(n, ast.Assert)]
        for a in asserts:
            operands = a.test.values if _is_and(a.test) else [a.test]
            for i, operand in enumerate(operands):
                call = _vacuous(operand)
                if call is None:
                    continue
                it, filtered = _iterable(call)
                targets = _targets(it)
                guarded = not filtered and (
                    _literal_nonempty(it)
                    or any(_mentions(o, targets) for o in operands[:i])
                    or any(
                        b.lineno < a.lineno
                        and _vacuous(b.test) is None
                        and _mentions(b.test, targets)
                        for b in asserts
                    )
                )
                if not guarded:
                    found.append(f"{name}:{a.lineno}: {ast.unparse(operand)[:100]}")
    return sorted(set(found))


def _is_and(node: ast.expr) -> bool:
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)


def _caught(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {ast.unparse(t).rsplit(".", 1)[-1] for t in types}


def skips_hiding_builds(source: str, name: str = "<src>") -> list[str]:
    """``pytest.skip`` calls inside an ``except`` that catches a build failure."""
    found = []
    for handler in ast.walk(ast.parse(source)):
        if not isinstance(handler, ast.ExceptHandler) or not (_caught(handler) & BROAD):
            continue
        for node in ast.walk(handler):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("pytest.skip", "skip"):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_no_assertion_passes_on_an_empty_collection():
    files = _files()
    assert len(files) > 50  # the walk sees the suite
    bad = [b for p in files for b in unguarded(p.read_text(), p.name)]
    assert not bad, "assert the collection is non-empty first:\n" + "\n".join(bad)


def test_no_skip_hides_a_broken_build():
    files = [p for p in _files() if p.name != "_sim_available.py"]
    assert files
    bad = [b for p in files for b in skips_hiding_builds(p.read_text(), p.name)]
    assert not bad, "use tests._sim_available.skip_or_fail / sim_api:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "src",
    [
        "def t(xs):\n    assert all(x > 0 for x in xs)\n",
        "def t(xs):\n    assert not any(x for x in xs)\n",
        "def t(xs):\n    assert xs and all(x > 0 for x in xs if x)\n",
        "def t(xs, ys):\n    assert ys and all(x for x in xs)\n",
        "def t(xs):\n    assert all(xs)\n",
    ],
)
def test_the_walk_flags_a_vacuous_all(src):
    assert unguarded(src)


@pytest.mark.parametrize(
    "src",
    [
        "def t(xs):\n    assert xs and all(x > 0 for x in xs)\n",
        "def t(xs):\n    assert len(xs) == 3\n    assert all(x > 0 for x in xs)\n",
        "def t():\n    assert all(x > 0 for x in (1, 2))\n",
        "def t(d):\n    assert all(d[i] for i in range(4))\n",
    ],
)
def test_the_walk_accepts_a_guarded_all(src):
    assert unguarded(src) == []


def test_the_walk_flags_a_skip_in_a_broad_except():
    src = "try:\n    build()\nexcept Exception as e:\n    pytest.skip(str(e))\n"
    assert skips_hiding_builds(src)
    narrow = src.replace("except Exception", "except ConfigError")
    assert skips_hiding_builds(narrow) == []


def test_skip_or_fail_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        _sim_available.skip_or_fail("simulator unavailable: no cc")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        _sim_available.skip_or_fail("simulator unavailable: no cc")


def test_sim_api_fails_under_ci_when_the_build_breaks(monkeypatch):
    from stress import acl

    def broken(*_a, **_k):
        raise RuntimeError("cc: command not found")

    monkeypatch.setattr(acl, "runtime", broken)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cc: command not found"):
        _sim_available.sim_api("aclnnAdd")
