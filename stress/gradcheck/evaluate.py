"""Finite differences of the forward: on its float64 numpy reference or on the backend.

The loss is ``L = sum over the pair's outputs of sum(upstream * output)`` in float64 (each
output reshaped to its upstream gradient's shape), so the backward's gradients are dL/d(input).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from stress.gradcheck.elements import _F8, _U64, _UNIT, Element
from stress.ops.spec import Params

if TYPE_CHECKING:
    from stress.gradcheck.device import Device
    from stress.gradcheck.pair import GradPair


def loss(outputs: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray]) -> float:
    """float64 ``sum(w * out)`` over the weighted outputs, in the weights' order."""
    total = 0.0
    for name, w in weights.items():
        w8 = np.asarray(w, _F8)
        total += np.vdot(w8, np.asarray(outputs[name], _F8).reshape(w8.shape))
    return float(total)


def _diff_outputs(plus: Mapping, minus: Mapping, names: tuple[str, ...]) -> dict:
    return {k: np.asarray(plus[k], _F8) - np.asarray(minus[k], _F8) for k in names}


class Evaluator:
    """L(theta + delta) - L(theta - delta) for one element, and the loss quantum q."""

    name = ""
    notes: tuple[tuple[str, str], ...] = ()  # (tensor, note shown when one of its elements ran)

    def __init__(
        self, pair: GradPair, params: Params, inputs: Mapping[str, np.ndarray], grads: Mapping
    ) -> None:
        self.pair = pair
        self.params = params
        self.fwd_params = pair.forward_params(params)
        self.inputs = {k: np.asarray(v) for k, v in inputs.items()}
        self.grads = {k: np.asarray(v) for k, v in grads.items()}
        self._base: Mapping[str, np.ndarray] | None = None

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
        return loss(_diff_outputs(*outs, tuple(self.grads)), self.grads)

    def base_outputs(self) -> Mapping[str, np.ndarray]:
        if self._base is None:
            self._base = self.forward(self.values())
        return self._base

    def quantum(self, el: Element) -> float:
        raise NotImplementedError

    def _terms(self, el: Element) -> Iterator[tuple[str, np.ndarray]]:
        """(output name, weight*output) over what the element touches, in float64."""
        outputs, row = self.pair.touches(el, self.params)
        base = self.base_outputs()
        for o in outputs:
            w = np.asarray(self.grads[o], _F8)
            v = np.asarray(base[o], _F8).reshape(w.shape)
            if row is not None:
                w, v = w[row], v[row]
            yield o, w * v


class ReferenceFD(Evaluator):
    """The forward in float64 (the pair's fd_reference); an element of an input with declared
    ``rows`` re-evaluates its row only."""

    name = "float64 reference forward"

    def __init__(self, pair, params, inputs, grads, *, incremental: bool = True) -> None:
        super().__init__(pair, params, inputs, grads)
        self.incremental = incremental
        self._values = {k: np.asarray(v, _F8) for k, v in self.inputs.items()}
        self._forward = pair.fd_reference()

    def values(self) -> dict[str, np.ndarray]:
        return self._values

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(_F8)

    def forward(self, values):
        return self._forward(self.fwd_params, values)

    def delta(self, el: Element, plus: Any, minus: Any) -> float:
        rows = self.pair.spec.rows.get(el.tensor)
        if not rows or not self.incremental:
            return super().delta(el, plus, minus)
        row = tuple(slice(i, i + 1) for i in el.index[:rows])
        base = self.values()
        grads = {k: v[row] for k, v in self.grads.items()}
        outs = []
        for value in (plus, minus):
            arr = base[el.tensor][row].copy()
            arr[(0,) * rows + el.index[rows:]] = value
            outs.append(self.forward({**base, el.tensor: arr}))
        return loss(_diff_outputs(*outs, tuple(grads)), grads)

    def quantum(self, el: Element) -> float:
        return _U64 * sum(float(np.abs(t).sum()) for _, t in self._terms(el))


class BackendFD(Evaluator):
    """The backend's forward operator; inputs are rounded to their device dtype."""

    def __init__(self, pair, params, inputs, grads, device: Device) -> None:
        super().__init__(pair, params, inputs, grads)
        self.device = device
        self.name = f"{device.kind} forward ({pair.forward.function})"
        notes = []
        for t in pair.tensors:
            dt = np.dtype(self.inputs[t].dtype)
            if dt != np.float32 and dt != np.float64:
                notes.append((t, (
                    f"{t} is {dt} on the device: {t}±h is rounded to {dt}, and the FD of {t} "
                    "elements uses the effective step ((x+h)-(x-h))/2 actually applied (steps "
                    "that round away are dropped)"
                )))  # fmt: skip
        self.notes = tuple(notes)

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(self.inputs[tensor].dtype)

    def forward(self, values):
        return self.device.run(self.pair.forward, self.fwd_params, values)

    def quantum(self, el: Element) -> float:
        base = self.base_outputs()
        total = 0.0
        for o, t in self._terms(el):
            u = _UNIT.get(np.dtype(base[o].dtype), 2.0**-19)
            total += float(np.sum((t * u) ** 2))
        return math.sqrt(total)
