"""No status, verdict or diagnosis word is spelled outside the model (stress/vocabulary.py).

The test walks every module of ``stress/`` with :mod:`ast` and flags a string constant equal to
a member of the model's enums only where it would carry that meaning: an operand of a
comparison (``==``, ``!=``, and the container of ``in``: a tuple/list/set of words), a
value returned, the value of a ``status``/``verdict``/``diagnosis`` key in a dict literal, of
such a keyword argument or subscript assignment, or the default of ``.get("status", ...)``.
Prose, messages and unrelated words elsewhere are not flagged.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

from stress.vocabulary import ChildStatus, Diagnosis, PhaseStatus, RunVerdict, Status, Verdict

ROOT = Path(__file__).resolve().parent.parent / "stress"
MODEL = {"vocabulary.py", "records.py"}  # where the words are defined
VOCABULARY = {
    str(m) for e in (Status, Verdict, Diagnosis, PhaseStatus, ChildStatus, RunVerdict) for m in e
}
KEYS = {"status", "verdict", "diagnosis", "expected"}


def _parse(path: Path) -> ast.Module:
    """``ast.parse`` of the file. CPython 3.11 < 3.11.8 may refuse to build an AST after a
    RecursionError was caught earlier in the same process ("AST constructor recursion depth
    mismatch", gh-106905; the fuzz tests provoke deep nesting): then parse it in a fresh one."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), str(path))
    except SystemError:
        code = (
            "import ast, pickle, sys; p = sys.argv[1]; "
            "sys.stdout.buffer.write(pickle.dumps(ast.parse(open(p, encoding='utf-8').read(), p)))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, check=True
        )
        return pickle.loads(out.stdout)  # our own child's output, not data from outside


def _strings(node: ast.AST | None) -> list[ast.Constant]:
    """``node`` if it is a vocabulary string, or the vocabulary strings of a tuple/list/set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node] if node.value in VOCABULARY else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for elt in node.elts for n in _strings(elt)]
    return []


def _flagged(tree: ast.AST) -> list[ast.Constant]:
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            # ``"error" in summary`` asks for a key or a substring: the word is not a status
            membership = any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
            for operand in ([] if membership else [node.left]) + node.comparators:
                found += _strings(operand)
        elif isinstance(node, ast.Return):
            found += _strings(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in KEYS:
                    found += _strings(value)
        elif isinstance(node, ast.Assign):  # rec["status"] = "ok"
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and target.slice.value in KEYS
                ):
                    found += _strings(node.value)
        elif isinstance(node, ast.keyword) and node.arg in KEYS:
            found += _strings(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in KEYS
        ):
            found += _strings(node.args[1])
    return found


def literals_outside_the_model(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.name in MODEL and path.parent == root:
            continue
        tree = _parse(path)
        for c in sorted(_flagged(tree), key=lambda c: (c.lineno, c.col_offset)):
            out.append(f"{path.relative_to(root.parent)}:{c.lineno}: {c.value!r}")
    return out


def test_no_status_string_literals_outside_the_model() -> None:
    assert literals_outside_the_model() == []


def test_the_detector_sees_each_kind_of_use(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(
        "def f(r):\n"
        "    if r['status'] == 'ok':\n"
        "        return 'PASS'\n"
        "    if r in ('crash', 'hang'):\n"
        "        pass\n"
        "    g(status='clean')\n"
        "    r.get('status', 'done')\n"
        "    r['verdict'] = 'HANG'\n"
        "    return {'diagnosis': 'self-race', 'message': 'ok'}\n"
    )
    (tmp_path / "fine.py").write_text(
        "def f(r):\n"
        "    print('the call was ok')\n"
        "    if 'error' in r or 'hang' not in r.message:\n"
        "        pass\n"
        "    x = {'message': 'error'}\n"
        "    return r.status == Status.OK\n"
    )
    found = literals_outside_the_model(tmp_path)
    assert [f.split(": ", 1)[1] for f in found] == [
        "'ok'",
        "'PASS'",
        "'crash'",
        "'hang'",
        "'clean'",
        "'done'",
        "'HANG'",
        "'self-race'",
    ]
    assert all(f.startswith(f"{tmp_path.name}/bad.py") for f in found)
