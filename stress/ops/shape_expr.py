"""Dimension expressions of declared shapes: ``"B"``, ``"H/2"``, ``"2*N+1"``, ``"(A+B)%4"``.

An expression is parsed with :mod:`ast` and walked: only integer literals, dimension names,
``+ - * / // %``, unary minus and parentheses are allowed; nothing is ever ``eval``-ed. ``/``
is integer division that must be exact (``"H/2"`` with H = 7 is an error, not 3), ``//`` floors.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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


Eval = Callable[[Mapping[str, int]], int]


def _compile(node: ast.AST, text: str) -> Eval:
    """``node`` (checked by :func:`_check`) as nested closures over the dimensions: evaluated
    for every tensor of every case and size variant, without walking the tree each time."""
    if isinstance(node, ast.Expression):
        return _compile(node.body, text)
    if isinstance(node, ast.Constant):
        value = int(node.value)
        return lambda dims: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda dims: int(dims[name])
    if isinstance(node, ast.UnaryOp):
        inner = _compile(node.operand, text)
        return (lambda dims: -inner(dims)) if isinstance(node.op, ast.USub) else inner
    assert isinstance(node, ast.BinOp)
    a, b = _compile(node.left, text), _compile(node.right, text)
    op = type(node.op)
    if op is ast.Add:
        return lambda dims: a(dims) + b(dims)
    if op is ast.Sub:
        return lambda dims: a(dims) - b(dims)
    if op is ast.Mult:
        return lambda dims: a(dims) * b(dims)

    def divide(dims: Mapping[str, int]) -> int:
        x, y = a(dims), b(dims)
        if y == 0:
            raise ShapeExprError(f"{text!r}: division by zero")
        if op is ast.Div:
            if x % y:
                raise ShapeExprError(f"{text!r}: {x} / {y} is not exact (use // to floor)")
            return x // y
        return x // y if op is ast.FloorDiv else x % y

    return divide


@dataclass(frozen=True)
class DimExpr:
    """One parsed dimension: a literal, a name or arithmetic over names."""

    text: str
    names: frozenset[str]
    _tree: ast.Expression
    _eval: Eval = field(compare=False, repr=False)

    def __call__(self, dims: Mapping[str, int]) -> int:
        """The dimension's value given every name's value (``ShapeExprError`` if one is missing)."""
        for name in self.names:
            if name not in dims:
                missing = sorted(self.names - set(dims))
                raise ShapeExprError(f"{self.text!r}: unknown dimension {missing[0]!r}")
        return self._eval(dims)


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
    return DimExpr(text, _names(tree), tree, _compile(tree, text))
