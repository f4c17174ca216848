"""Dimension expressions (stress.ops.shape_expr): compiled once to closures, evaluated for every
tensor of every case and size variant; the values and the one-line errors of the tree walk."""

from __future__ import annotations

import pytest

from stress.errors import ConfigError
from stress.ops.resolve import _dim
from stress.ops.shape_expr import ShapeExprError, parse_dim


@pytest.mark.parametrize(
    ("text", "dims", "value"),
    [
        ("B", {"B": 3}, 3),
        (7, {}, 7),
        ("H/2", {"H": 8}, 4),
        ("7//2", {}, 3),
        ("(A+B)%4", {"A": 3, "B": 6}, 1),
        ("-A+2*B", {"A": 1, "B": 3}, 5),
        ("+A", {"A": 4}, 4),
        ("A*B-C", {"A": 2, "B": 5, "C": 1, "unused": 9}, 9),
    ],
)
def test_an_expression_evaluates_over_the_dimensions(text, dims, value):
    assert parse_dim(text)(dims) == value


@pytest.mark.parametrize(
    ("text", "dims", "message"),
    [
        ("H/2", {"H": 7}, "'H/2': 7 / 2 is not exact (use // to floor)"),
        ("H/0", {"H": 7}, "'H/0': division by zero"),
        ("H%Z", {"H": 7, "Z": 0}, "'H%Z': division by zero"),
        ("X*Y", {"Y": 1}, "'X*Y': unknown dimension 'X'"),
        ("W+V", {}, "'W+V': unknown dimension 'V'"),  # the first missing by name
    ],
)
def test_a_bad_expression_or_value_is_one_line(text, dims, message):
    with pytest.raises(ShapeExprError) as err:
        parse_dim(text)(dims)
    assert str(err.value) == message


def test_a_literal_dimension_is_taken_as_it_is_and_a_negative_or_bool_refused():
    assert _dim(5, {}, "at") == 5
    with pytest.raises(ConfigError, match=r"at: -1 = -1, a dimension must be >= 0"):
        _dim(-1, {}, "at")
    with pytest.raises(ConfigError, match="a dimension is an integer"):
        _dim(True, {}, "at")
