"""A forward/backward operator pair bound for a gradient check, from the backward's
``[gradcheck]`` section (:mod:`stress.ops.gradspec`): the names, shapes and dtypes the check
needs, and the checks of the section against the forward's declaration."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stress.errors import ConfigError
from stress.gradcheck.elements import Element
from stress.ops.gradlink import ForwardFn, forward_of, forward_params
from stress.ops.gradspec import GradSpec
from stress.ops.shape_expr import parse_dim
from stress.ops.spec import OpSpec, Params

__all__ = ["DEFAULT_OP", "FLOATING", "GradPair", "gradcheck_ops", "load_pair"]

#: the operator ``aclnn-stress gradcheck`` checks when no ``--op`` is given
DEFAULT_OP = "mhc_pre_sinkhorn_backward"
FLOATING = ("float16", "float32", "float64", "bfloat16")

Reference = Callable[[Params, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class GradPair:
    """The backward under test, its forward and the ``[gradcheck]`` section linking them."""

    backward: OpSpec
    forward: OpSpec
    spec: GradSpec
    backward_decl: Any  # OpDeclaration
    forward_decl: Any

    @property
    def name(self) -> str:
        return self.backward.name

    @property
    def tensors(self) -> tuple[str, ...]:
        """The differentiable forward inputs, in the section's order."""
        return tuple(i for i, _ in self.spec.inputs)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The forward outputs in the loss, in the section's order."""
        return tuple(o for o, _ in self.spec.outputs)

    def forward_params(self, p: Params) -> dict[str, Any]:
        return forward_params(
            self.backward, self.forward, self.spec.forward_params, p, self.spec.where("forward")
        )

    def _forward_values(self, p: Params) -> dict[str, Any]:
        from stress.ops.resolve import resolve

        return resolve(self.forward_decl, self.forward_params(p))

    def shapes(self, p: Params) -> dict[str, tuple[int, ...]]:
        values = self._forward_values(p)
        return {t: tuple(values[t].shape) for t in self.tensors}

    def input_dtypes(self, p: Params) -> dict[str, np.dtype]:
        values = self._forward_values(p)
        return {t: np.dtype(values[t].dtype) for t in self.tensors}

    def grad_dtype(self, tensor: str, p: Params) -> np.dtype:
        from stress.ops.resolve import resolve

        return np.dtype(resolve(self.backward_decl, p)[self.spec.grad_of[tensor]].dtype)

    def host(self, p: Params, seed: int, forward: ForwardFn | None) -> dict[str, np.ndarray]:
        """The backward's inputs for case ``p`` (saved tensors from ``forward``, else from the
        forward's numpy reference)."""
        return self.backward.generate(p, seed, forward=forward)

    def upstream(self, host: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Forward output -> its upstream gradient (the loss weight), from the backward's
        inputs."""
        return {o: np.asarray(host[g]) for o, g in self.spec.outputs}

    @property
    def has_fd_reference(self) -> bool:
        """Whether a float64 forward exists: ``fd_reference`` or the forward's reference."""
        return self.spec.fd_reference is not None or self.forward_decl.reference is not None

    @property
    def has_backward_reference(self) -> bool:
        return self.backward_decl.reference is not None

    def fd_reference(self) -> Reference:
        """The forward in float64: the declared ``fd_reference``, else the forward's reference
        on float64 inputs."""
        if self.spec.fd_reference is not None:
            from stress.ops.references import check_reference, load_reference

            check_reference(self.spec.fd_reference, self.spec.source, "fd_reference")
            return load_reference(self.spec.fd_reference, self.spec.source, "fd_reference")
        ref = self.forward.reference
        return lambda p, ins: ref(p, {k: np.asarray(v, np.float64) for k, v in ins.items()})

    def shape_dims(self) -> list[str]:
        """The dimensions of the differentiable inputs' declared shapes, in order (mHC: B, S,
        N, C)."""
        dims = {d.name for d in self.forward_decl.dims}
        names: list[str] = []
        for t in self.tensors:
            shape = self._declared(self.forward_decl, t, "shape")
            for item in shape if isinstance(shape, list) else []:
                names += [n for n in sorted(parse_dim(item).names, key=str(item).find) if n in dims]
        return list(dict.fromkeys(names))

    def case_order(self) -> list[str]:
        """The case's shape, then the dtype variables of the differentiable inputs (how the
        command prints a case: mHC's B, S, N, C, dtype first)."""
        dtypes = {v.name for v in self.forward_decl.dtypes}
        names = self.shape_dims()
        for t in self.tensors:
            dtype = self._declared(self.forward_decl, t, "dtype")
            names += [dtype] if dtype in dtypes else []
        return list(dict.fromkeys(names))

    def bf16_gradients(self) -> list[str]:
        """The gradient outputs that may be bf16 (their rtol is at least 2^-7: backward_rtol)."""
        out = []
        for _, grad in self.spec.inputs:
            dtype = self._declared(self.backward_decl, grad, "dtype")
            shape = self._declared(self.backward_decl, grad, "shape")
            if dtype is None and isinstance(shape, str):  # shape = "x": x's dtype too
                dtype = self._declared(self.backward_decl, shape, "dtype")
            var = next((v for v in self.backward_decl.dtypes if v.name == dtype), None)
            if any(c in ("bf16", "bfloat16") for c in (var.choices if var else (dtype,))):
                out.append(grad)
        return out

    @staticmethod
    def _declared(decl: Any, param: str, key: str) -> Any:
        raw = decl.params.get(param)
        return raw.get(key) if isinstance(raw, dict) else None

    def block(self, el: Element, p: Params) -> tuple[tuple[slice, ...], str | None]:
        """The index of the element's gradient block (the whole gradient unless the section
        declares blocks for its input), and the one output it touches (None: every output)."""
        b = self.spec.blocks.get(el.tensor)
        if b is None:
            return (slice(None),), None
        dims = {**p, **self.forward_params(p)}
        edges = [e({k: v for k, v in dims.items() if isinstance(v, int)}) for e in b.edges]
        i = el.index[b.axis]
        k = sum(i >= e for e in edges)
        lo = edges[k - 1] if k else 0
        hi = edges[k] if k < len(edges) else None
        return (slice(None),) * b.axis + (slice(lo, hi),), b.outputs[k]

    def touches(self, el: Element, p: Params) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
        """Outputs an element can change, and its row (None: every row)."""
        rows = self.spec.rows.get(el.tensor)
        _, output = self.block(el, p)
        return (self.outputs if output is None else (output,)), (el.index[:rows] if rows else None)


def gradcheck_ops() -> list[str]:
    """Names of the catalogue's operators with a ``[gradcheck]`` section."""
    from stress import ops

    return [n for n in ops.names() if getattr(ops.declaration_of(n), "gradcheck", None)]


def load_pair(name: str) -> GradPair:
    """The pair of backward operator ``name``: a catalogue name or a declaration file (which
    is registered); ConfigError naming the fix."""
    from stress import ops

    if name.endswith(".toml"):
        from stress.ops.declaration import load_declaration

        if not Path(name).is_file():
            raise ConfigError(f"--op {name}: no such declaration file")
        name = ops.register_declaration(load_declaration(name)).name
    try:
        backward = ops.get(name)
    except KeyError as exc:
        raise ConfigError(f"--op {name!r}: {exc.args[0]}") from None
    bdecl = ops.declaration_of(name)
    spec = getattr(bdecl, "gradcheck", None)
    if spec is None:
        raise ConfigError(
            f"--op {name}: {bdecl.source} has no [gradcheck] section (it is not a declared "
            f"backward); add one (README: [gradcheck]) or check one of {', '.join(gradcheck_ops())}"
        )
    forward = forward_of(spec)
    fdecl = ops.declaration_of(forward.name)
    _check_against_forward(spec, forward, fdecl)
    return GradPair(backward, forward, spec, bdecl, fdecl)


def _tensor_names(spec: OpSpec, output: bool) -> list[str]:
    return [a.name for a in (spec.outputs if output else spec.inputs)]


def _check_against_forward(spec: GradSpec, forward: OpSpec, fdecl: Any) -> None:
    ins, outs = _tensor_names(forward, False), _tensor_names(forward, True)
    checks = [
        ("inputs", [i for i, _ in spec.inputs], ins, "a tensor input"),
        ("outputs", [o for o, _ in spec.outputs], outs, "a tensor output"),
        ("saved", [s for _, s in spec.saved], outs, "a tensor output"),
        ("forward_inputs", [s for _, s in spec.forward_inputs], ins, "a tensor input"),
    ]
    for key, names, allowed, what in checks:
        for n in names:
            if n not in allowed:
                raise ConfigError(
                    f"{spec.where(key)}: {n!r} is not {what} of {forward.function} "
                    f"({fdecl.source}); use one of {', '.join(allowed)}"
                )
    for name, block in spec.blocks.items():
        for o in block.outputs:
            if o not in spec.upstream_of:
                raise ConfigError(
                    f"{spec.where(f'blocks.{name}')}: output {o!r} is not in the loss; use one "
                    f"of {', '.join(spec.upstream_of)}"
                )
    known = {p.name for p in forward.params}
    for k in spec.forward_params:
        if k not in known:
            raise ConfigError(
                f"{spec.where(f'forward_params.{k}')}: not a parameter of {forward.name}; use one "
                f"of {', '.join(sorted(known))}"
            )
    for name in (i for i, _ in spec.inputs):
        raw = fdecl.params.get(name)
        dtype = raw.get("dtype") if isinstance(raw, dict) else None
        if isinstance(dtype, str) and _fixed_dtype(dtype) not in (None, *FLOATING):
            raise ConfigError(
                f"{spec.where('inputs')}.{name}: {forward.function}'s {name} is {dtype}, which "
                "has no gradient; list only floating-point inputs"
            )


def _fixed_dtype(text: str) -> str | None:
    """The dtype a declared dtype string names when it is not a dtype variable."""
    from stress.ops.dims import DTYPE_NAMES

    dt = DTYPE_NAMES.get(text)
    return None if dt is None else str(np.dtype(dt).name)
