"""Dimension expressions of declared shapes: ``"B"``, ``"H/2"``, ``"2*N+1"``, ``"(A+B)%4"``.

An expression is parsed with :mod:`ast` and walked: only integer literals, dimension names,
``+ - * / // %``, unary minus and parentheses are allowed; nothing is ever ``eval``-ed. ``/``
is integer division that must be exact (``"H/2"`` with H = 7 is an error, not 3), ``//`` floors.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DimExpr", "ShapeExprError", "parse_dim"]


class ShapeExprError(ValueError):
    """A malformed expression, an unknown name or a bad division (the message says which)."""


_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def _check(node: ast.AST, text: str) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body, text)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
        _check(node.left, text)
        _check(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, text)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        pass
    elif isinstance(node, ast.Name):
        pass
    else:
        raise ShapeExprError(
            f"{text!r}: only integers, dimension names, + - * / // % and parentheses are allowed"
        )


def _names(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _eval(node: ast.AST, dims: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Expression):
        return _eval(node.body, dims, text)
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name):
        return int(dims[node.id])
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, dims, text)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.BinOp)
    a, b = _eval(node.left, dims, text), _eval(node.right, dims, text)
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    if b == 0:
        raise ShapeExprError(f"{text!r}: division by zero")
    if isinstance(node.op, ast.Div):
        if a % b:
            raise ShapeExprError(f"{text!r}: {a} / {b} is not exact (use // to floor)")
        return a // b
    if isinstance(node.op, ast.FloorDiv):
        return a // b
    return a % b


@dataclass(frozen=True)
class DimExpr:
    """One parsed dimension: a literal, a name or arithmetic over names."""

    text: str
    names: frozenset[str]
    _tree: ast.Expression

    def __call__(self, dims: Mapping[str, int]) -> int:
        """The dimension's value given every name's value (``ShapeExprError`` if one is missing)."""
        missing = sorted(self.names - set(dims))
        if missing:
            raise ShapeExprError(f"{self.text!r}: unknown dimension {missing[0]!r}")
        return _eval(self._tree, dims, self.text)


def parse_dim(item: int | str) -> DimExpr:
    """A shape entry: an ``int`` or an expression string (``ShapeExprError`` if malformed)."""
    if isinstance(item, bool) or not isinstance(item, int | str):
        raise ShapeExprError(f"{item!r}: a dimension is an integer or a name/expression string")
    return _parse(str(item))


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> DimExpr:
    """The parsed expression of ``text``: a declaration's few expressions are resolved for every
    case and size variant (tens of thousands of times at a run's start), parsed once each; the
    tree is never changed after parsing, so one :class:`DimExpr` serves every caller."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ShapeExprError(f"{text!r}: not an arithmetic expression") from None
    _check(tree, text)
    return DimExpr(text, _names(tree), tree)
