"""A backward operator's ``[gradcheck]`` section: which forward it differentiates, and how.

::

    [gradcheck]
    forward = "softmax"                       # the forward operator (catalogue name)
    inputs = { self = "gradInput" }           # differentiable forward input -> this op's
                                              # gradient output (checked in this order)
    outputs = { out = "gradOutput" }          # forward output in the loss -> this op's input
                                              # holding its upstream gradient (the loss weights)
    saved = { output = "out" }                # this op's input <- a forward output it consumes
    forward_inputs = { }                      # this op's input <- a forward input it takes too
    forward_params = { }                      # forward case values besides the shared ones
    rows = { self = 1 }                       # leading axes of an input whose rows touch only
                                              # the same rows of every output (cheaper FD)
    blocks = { }                              # gradient blocks of different scale (see below)
    rtol = 1e-3                               # the backward's own precision (fp32 gradients)
    case = { B = 4, H = 64 }                  # the command's default case
    seed = 7                                  # its default seed
    fd_reference = "module:function"          # float64 forward for FD (default: the forward's
                                              # reference on float64 inputs)

The loss is always ``L = sum over outputs of sum(upstream * output)``: the backward's gradient
outputs are then dL/d(input). ``blocks.NAME = { axis = 0, edges = ["N", "2*N"], outputs =
["hin", "hPost", "hRes"] }`` splits the gradient of input NAME along ``axis`` at ``edges``
(dimension expressions): an element's scale S is the RMS of its block, and it touches only the
block's output (default: the whole gradient, every output). Checks of this file alone happen
here (one line naming file, field and fix); checks against the forward when the pair is bound
(:mod:`stress.gradcheck.pair`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.errors import ConfigError
from stress.ops.dims import is_int
from stress.ops.shape_expr import DimExpr, ShapeExprError, parse_dim
from stress.ops.signature import OpSignature
from stress.ops.table_keys import reject_unknown_keys

__all__ = ["Block", "GradSpec", "parse_gradspec"]

_KEYS = {
    "forward",
    "inputs",
    "outputs",
    "saved",
    "forward_inputs",
    "forward_params",
    "rows",
    "blocks",
    "rtol",
    "case",
    "seed",
    "fd_reference",
}
_BLOCK_KEYS = {"axis", "edges", "outputs"}


@dataclass(frozen=True)
class Block:
    """How one input's gradient splits along an axis (see the module docstring)."""

    axis: int
    edges: tuple[DimExpr, ...]
    outputs: tuple[str, ...]  # the forward output each block touches (one per block)


@dataclass(frozen=True)
class GradSpec:
    """A parsed ``[gradcheck]`` section (pairs keep the TOML order)."""

    source: str
    forward: str
    inputs: tuple[tuple[str, str], ...]  # (forward input, backward gradient output)
    outputs: tuple[tuple[str, str], ...]  # (forward output, backward upstream input)
    saved: tuple[tuple[str, str], ...] = ()  # (backward input, forward output)
    forward_inputs: tuple[tuple[str, str], ...] = ()  # (backward input, forward input)
    forward_params: Mapping[str, Any] = field(default_factory=dict)
    rows: Mapping[str, int] = field(default_factory=dict)
    blocks: Mapping[str, Block] = field(default_factory=dict)
    rtol: float = 1e-3
    case: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    fd_reference: str | None = None

    def where(self, key: str) -> str:
        """``FILE [gradcheck], field 'KEY'`` for an error line."""
        return f"{self.source} [gradcheck], field '{key}'"

    @property
    def grad_of(self) -> dict[str, str]:
        return dict(self.inputs)

    @property
    def upstream_of(self) -> dict[str, str]:
        return dict(self.outputs)


def _pairs(raw: Any, at: str, fix: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise ConfigError(f"{at}: expected a table of names, e.g. {fix}")
    return tuple(raw.items())


def _names(sig: OpSignature, roles: tuple[str, ...]) -> list[str]:
    return [p.name for p in sig.params if p.role in roles and p.kind == "tensor"]


def _own(pairs, sig: OpSignature, at: str, roles: tuple[str, ...], what: str, col: int) -> None:
    """Each pair's ``col`` names one of this op's tensors with a role in ``roles``."""
    allowed = _names(sig, roles)
    for pair in pairs:
        if pair[col] not in allowed:
            raise ConfigError(
                f"{at}.{pair[0]}: {pair[col]!r} is not {what} of {sig.name}; "
                f"use one of {', '.join(allowed) or '(none)'}"
            )


def _block(raw: Any, at: str) -> Block:
    if not isinstance(raw, dict) or set(raw) - _BLOCK_KEYS or not {"edges", "outputs"} <= set(raw):
        raise ConfigError(f'{at}: expected {{ axis = 0, edges = ["N"], outputs = ["a", "b"] }}')
    axis, edges, outs = raw.get("axis", 0), raw["edges"], raw["outputs"]
    if not is_int(axis) or axis < 0:
        raise ConfigError(f"{at}.axis: expected an axis >= 0, got {axis!r}")
    if not isinstance(edges, list) or not isinstance(outs, list) or len(outs) != len(edges) + 1:
        raise ConfigError(f"{at}: expected n edges and n+1 outputs (one per block)")
    try:
        parsed = tuple(parse_dim(e) for e in edges)
    except ShapeExprError as exc:
        raise ConfigError(f"{at}.edges: {exc}") from None
    return Block(axis, parsed, tuple(str(o) for o in outs))


def _number(raw: Mapping[str, Any], key: str, at: str, default: Any, kind: type) -> Any:
    value = raw.get(key, default)
    ok = is_int(value) and value >= 0 if kind is int else isinstance(value, int | float)
    if not ok or isinstance(value, bool) or (kind is float and not value > 0):
        raise ConfigError(f"{at}: expected a number {'>= 0' if kind is int else '> 0'}")
    return kind(value)


def parse_gradspec(raw: Any, source: str, sig: OpSignature) -> GradSpec:
    """The ``[gradcheck]`` table of the backward declared by ``sig`` in file ``source``."""
    at = f"{source} [gradcheck]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{at}: expected a table with forward, inputs and outputs")
    reject_unknown_keys(raw, _KEYS, at)
    for key in ("forward", "inputs", "outputs"):
        if key not in raw:
            raise ConfigError(f"{at}, field '{key}': required (see README, [gradcheck])")
    if not isinstance(raw["forward"], str) or not raw["forward"]:
        raise ConfigError(f"{at}, field 'forward': expected the forward operator's name")
    f = lambda k: f"{at}, field '{k}'"  # noqa: E731
    spec = GradSpec(
        source=source,
        forward=raw["forward"],
        inputs=_pairs(raw["inputs"], f("inputs"), '{ x = "gradX" }'),
        outputs=_pairs(raw["outputs"], f("outputs"), '{ y = "gradY" }'),
        saved=_pairs(raw.get("saved", {}), f("saved"), '{ y = "y" }'),
        forward_inputs=_pairs(raw.get("forward_inputs", {}), f("forward_inputs"), '{ x = "x" }'),
        forward_params=_table(raw, "forward_params", at),
        rows=_rows(raw.get("rows", {}), f("rows")),
        blocks={k: _block(v, f(f"blocks.{k}")) for k, v in _table(raw, "blocks", at).items()},
        rtol=_number(raw, "rtol", f("rtol"), 1e-3, float),
        case=_table(raw, "case", at),
        seed=_number(raw, "seed", f("seed"), 0, int),
        fd_reference=_pointer(raw.get("fd_reference"), f("fd_reference")),
    )
    if not spec.inputs:
        raise ConfigError(f"{f('inputs')}: name at least one differentiable input")
    _own(spec.inputs, sig, f("inputs"), ("output", "inout"), "a tensor output", 1)
    _own(spec.outputs, sig, f("outputs"), ("input",), "a tensor input", 1)
    _own(spec.saved, sig, f("saved"), ("input",), "a tensor input", 0)
    _own(spec.forward_inputs, sig, f("forward_inputs"), ("input",), "a tensor input", 0)
    for name in [*spec.rows, *spec.blocks]:
        if name not in spec.grad_of:
            section = "rows" if name in spec.rows else "blocks"
            raise ConfigError(
                f"{f(section)}.{name}: not a differentiable input; use one of "
                f"{', '.join(spec.grad_of)}"
            )
    return spec


def _table(raw: Mapping[str, Any], key: str, at: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{at}, field '{key}': expected a table")
    return value


def _rows(raw: Any, at: str) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(is_int(v) and v >= 1 for v in raw.values()):
        raise ConfigError(f"{at}: expected {{ input = leading axes (an int >= 1) }}")
    return dict(raw)


def _pointer(value: Any, at: str) -> str | None:
    if value is not None and (not isinstance(value, str) or ":" not in value):
        raise ConfigError(f'{at}: expected "module:function"')
    return value
