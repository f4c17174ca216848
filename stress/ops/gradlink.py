"""A backward's link to its forward, from its ``[gradcheck]`` section: the forward's case
parameters for a backward case, and the backward inputs that come from the forward (its saved
outputs and the forward inputs it takes again).

The declared generator of a backward (one without a Python ``generate``) draws its own inputs
(the upstream gradients) from ``SeedSequence(seed, spawn_key=(1,))`` so that they are
independent of the forward's inputs (drawn from ``default_rng(seed)``), then fills the linked
inputs by running the forward on those inputs: on the backend when the engine hands it a
``forward`` callable, else through the forward's numpy reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from stress.ops.spec import OpSpec, Params

if TYPE_CHECKING:
    from stress.ops.declaration import OpDeclaration
    from stress.ops.gradspec import GradSpec

__all__ = ["UPSTREAM_SPAWN_KEY", "ForwardFn", "forward_of", "forward_params", "linked_inputs"]

#: the child seed stream of a backward's own (upstream gradient) inputs
UPSTREAM_SPAWN_KEY = 1

ForwardFn = Callable[[OpSpec, Params, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


def forward_of(link: GradSpec) -> OpSpec:
    """The forward operator a ``[gradcheck]`` section names: from the catalogue, else the
    declaration ``NAME.toml`` beside the backward's file (registered on first use);
    ConfigError naming the field otherwise."""
    from stress import ops
    from stress.errors import ConfigError
    from stress.ops.declaration import load_declaration

    try:
        return ops.get(link.forward)
    except KeyError:
        pass
    beside = Path(link.source).parent / f"{link.forward}.toml"
    if beside.is_file():
        decl = load_declaration(beside)
        if decl.name == link.forward:
            return ops.register_declaration(decl)
    raise ConfigError(
        f"{link.where('forward')}: no operator {link.forward!r} in the catalogue nor a "
        f"declaration {beside.name} of it beside this file; name the forward operator (known: "
        f"{', '.join(ops.names())})"
    )


def _case_names(spec: OpSpec) -> set[str]:
    """The case variables of an OpSpec (dims, shapes, vars, dtype variables): its parameters
    that are not C parameters."""
    c_names = set(spec.signature.names) if spec.signature is not None else set()
    return {p.name for p in spec.params} - c_names


def forward_params(backward: OpSpec, forward: OpSpec, extra: Mapping[str, Any], p: Params,
                   where: str) -> dict[str, Any]:  # fmt: skip
    """The forward's parsed parameters for backward case ``p``: the case variables both
    declare, plus the ``[gradcheck] forward_params``."""
    shared = _case_names(backward) & _case_names(forward)
    raw = {k: p[k] for k in shared if p.get(k) is not None}
    return forward.parse_params({**raw, **extra}, where)


def linked_inputs(
    decl: OpDeclaration, backward: OpSpec, p: Params, seed: int, forward: ForwardFn | None
) -> dict[str, np.ndarray]:
    """The backward inputs the forward provides, for case ``p`` (see the module docstring)."""
    from stress.ops.resolve import resolve

    link = decl.gradcheck
    assert link is not None
    fwd = forward_of(link)
    fp = forward_params(backward, fwd, link.forward_params, p, f"{link.where('forward')}")
    inputs = fwd.generate(fp, seed)
    run = forward or (lambda spec, params, ins: spec.reference(params, ins))
    outputs = run(fwd, fp, inputs) if link.saved else {}
    values = resolve(decl, p)
    out: dict[str, np.ndarray] = {}
    for name, source in (*link.saved, *link.forward_inputs):
        array = np.asarray(outputs[source] if (name, source) in link.saved else inputs[source])
        want = values[name]
        array = array.astype(want.dtype, copy=False)
        out[name] = array.reshape(want.shape) if array.size == np.prod(want.shape) else array
    return out
