"""Finite differences of the forward: on the numpy reference (float64) or on the backend."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from stress.gradcheck.elements import (
    _F8,
    _GRAD_FOR_OUTPUT,
    _OUTPUTS,
    _U64,
    _UNIT,
    Element,
)
from stress.ops import _mhc_reference as ref
from stress.ops.mhc import MHC_PRE_SINKHORN
from stress.ops.spec import Params, dtype_of

if TYPE_CHECKING:
    from stress.gradcheck.check import _Device


def _affected(el: Element, n: int) -> tuple[tuple[str, ...], tuple[int, int] | None]:
    """Outputs an element can change, and its token (x) or None (all tokens)."""
    if el.tensor == "x":
        return _OUTPUTS, (el.index[0], el.index[1])
    col = el.index[0]  # bias[j], phi[j, k]; alpha[k] acts on a whole group
    group = col if el.tensor == "alpha" else (0 if col < n else 1 if col < 2 * n else 2)
    return (_OUTPUTS[group],), None


def _diff_outputs(plus: Mapping[str, np.ndarray], minus: Mapping[str, np.ndarray]) -> dict:
    return {k: np.asarray(plus[k], _F8) - np.asarray(minus[k], _F8) for k in _OUTPUTS}


class _Evaluator:
    """L(theta + delta) - L(theta - delta) for one element, and the loss quantum q."""

    name = ""
    note = ""

    def __init__(self, params: Params, inputs: Mapping[str, np.ndarray], grads: Mapping) -> None:
        self.params = params
        self.inputs = {k: np.asarray(v) for k, v in inputs.items()}
        self.grads = {k: np.asarray(v) for k, v in grads.items()}
        self._base: dict[str, np.ndarray] | None = None

    # subclasses: forward(values) -> outputs; dtype(tensor) -> dtype the value is rounded to
    def forward(self, values: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        raise NotImplementedError

    def dtype(self, tensor: str) -> np.dtype:
        raise NotImplementedError

    def values(self) -> dict[str, np.ndarray]:
        return self.inputs

    def steps(self, el: Element, h: float) -> tuple[Any, Any, float]:
        """(theta+h, theta-h) rounded to the evaluation dtype, and the effective step."""
        dt = self.dtype(el.tensor)
        v = float(self.values()[el.tensor][el.index])
        plus, minus = np.array(v + h).astype(dt), np.array(v - h).astype(dt)
        return plus, minus, (float(plus) - float(minus)) / 2

    def delta(self, el: Element, plus: Any, minus: Any) -> float:
        base = self.values()
        outs = []
        for value in (plus, minus):
            arr = base[el.tensor].copy()
            arr[el.index] = value
            outs.append(self.forward({**base, el.tensor: arr}))
        return ref.loss(_diff_outputs(*outs), self.grads)

    def base_outputs(self) -> Mapping[str, np.ndarray]:
        if self._base is None:
            self._base = self.forward(self.values())
        return self._base

    def quantum(self, el: Element) -> float:
        raise NotImplementedError

    def _terms(self, el: Element) -> Iterator[tuple[str, np.ndarray]]:
        """(output name, weight*output) over what the element touches, in float64."""
        outputs, token = _affected(el, self.params["N"])
        base = self.base_outputs()
        for o in outputs:
            w = np.asarray(self.grads[_GRAD_FOR_OUTPUT[o]], _F8)
            v = np.asarray(base[o], _F8).reshape(w.shape)
            if token is not None:
                w, v = w[token], v[token]
            yield o, w * v


class _ReferenceFD(_Evaluator):
    """The numpy forward in float64; x elements re-evaluate their token only."""

    name = "float64 reference forward"

    def __init__(self, params, inputs, grads, *, incremental: bool = True) -> None:
        super().__init__(params, inputs, grads)
        self.incremental = incremental
        self._values = {k: np.asarray(v, _F8) for k, v in self.inputs.items()}
        self._kw = {
            "num_iters": params["num_iters"],
            "hc_eps": params["hc_eps"],
            "norm_eps": params["norm_eps"],
            "compute_dtype": _F8,
        }

    def values(self) -> dict[str, np.ndarray]:
        return self._values

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(_F8)

    def forward(self, values):
        return ref.forward(values["x"], values["phi"], values["alpha"], values["bias"], **self._kw)

    def delta(self, el: Element, plus: Any, minus: Any) -> float:
        if el.tensor != "x" or not self.incremental:
            return super().delta(el, plus, minus)
        b, s = el.index[:2]
        tok = (slice(b, b + 1), slice(s, s + 1))
        base = self.values()
        grads = {k: v[tok] for k, v in self.grads.items()}
        outs = []
        for value in (plus, minus):
            x = base["x"][tok].copy()
            x[(0, 0, *el.index[2:])] = value
            outs.append(self.forward({**base, "x": x}))
        return ref.loss(_diff_outputs(*outs), grads)

    def quantum(self, el: Element) -> float:
        return _U64 * sum(float(np.abs(t).sum()) for _, t in self._terms(el))


class _BackendFD(_Evaluator):
    """The backend's forward operator; inputs are rounded to their device dtype."""

    def __init__(self, params, inputs, grads, device: _Device) -> None:
        super().__init__(params, inputs, grads)
        self.device = device
        self.name = f"{device.kind} forward ({MHC_PRE_SINKHORN.function})"
        x_dt = dtype_of(params["dtype"])
        self.note = (
            f"x is {x_dt} on the device: x±h is rounded to {x_dt}, and the FD of x elements "
            "uses the effective step ((x+h)-(x-h))/2 actually applied (steps that round away "
            "are dropped)"
        )
        self._fwd_params = {**params, "need_backward": True, "hc_mult": None}

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(self.inputs[tensor].dtype)

    def forward(self, values):
        return self.device.run(MHC_PRE_SINKHORN, self._fwd_params, values)

    def quantum(self, el: Element) -> float:
        base = self.base_outputs()
        total = 0.0
        for o, t in self._terms(el):
            u = _UNIT.get(np.dtype(base[o].dtype), 2.0**-19)
            total += float(np.sum((t * u) ** 2))
        return math.sqrt(total)


# --------------------------------------------------------------------------------------------
# the backend
