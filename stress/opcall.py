"""One operator call on one case: upload, phase 1, workspace, phase 2, synchronize, download.

Every :class:`OpCall` has its own device inputs, canary-filled outputs, scalars, workspace and
executor, as in the problem report's harness. The phases are separate methods so that the
protocol can interleave them across calls; :meth:`OpCall.run` does all of it back to back.
The calling thread must have a context bound (the constructor binds the given one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stress import acl
from stress.digest import DEFAULT_CANARY
from stress.ops.spec import AttrArg, OpSpec, Params, ScalarArg, TensorArg

__all__ = ["OpCall", "run_once"]


class OpCall:
    """A single call of ``spec`` with ``params`` on device copies of ``host_inputs``."""

    def __init__(
        self,
        context: acl.Context,
        spec: OpSpec,
        params: Params,
        host_inputs: Mapping[str, np.ndarray],
        *,
        canary: int = DEFAULT_CANARY,
    ) -> None:
        self.context = context
        self.spec = spec
        self.params = params
        self.canary = canary
        self.prepared: acl.PreparedCall | None = None
        self._owned: list[Any] = []
        self._args: list[Any] = []
        self.outputs: dict[str, acl.DeviceTensor] = {}
        context.bind()
        try:
            for arg in spec.args:
                self._args.append(self._make(arg, host_inputs))
        except BaseException:
            self.close()
            raise

    def _make(self, arg: Any, host_inputs: Mapping[str, np.ndarray]) -> Any:
        p = self.params
        if isinstance(arg, AttrArg):
            return arg.value(p)
        if isinstance(arg, ScalarArg):
            scalar = acl.Scalar(self.context, arg.value(p), arg.dtype(p))
            self._owned.append(scalar)
            return scalar
        assert isinstance(arg, TensorArg)
        if not arg.present(p):
            return None
        if arg.output:
            tensor = acl.DeviceTensor(self.context, arg.shape(p), arg.dtype(p))
            self._owned.append(tensor)
            tensor.fill_bytes(self.canary)
            self.outputs[arg.name] = tensor
        else:
            tensor = acl.DeviceTensor.from_array(self.context, np.asarray(host_inputs[arg.name]))
            self._owned.append(tensor)
        return tensor

    def phase1(self) -> acl.PreparedCall:
        """``GetWorkspaceSize`` (creates the executor) and the workspace allocation."""
        self.prepared = acl.prepare(self.context, self.spec.function, *self._args)
        return self.prepared

    def phase2(self, stream: acl.Stream | None) -> None:
        """Launch the executor on ``stream`` (asynchronous)."""
        if self.prepared is None:
            raise RuntimeError(f"{self.spec.name}: phase2 before phase1")
        self.prepared.launch(stream)

    def collect(self) -> dict[str, np.ndarray]:
        """Download every output (call after synchronizing the stream)."""
        return {name: t.download() for name, t in self.outputs.items()}

    def run(self, stream: acl.Stream, timeout_ms: int | None = None) -> dict[str, np.ndarray]:
        """All phases back to back, then synchronize and download."""
        self.phase1()
        self.phase2(stream)
        stream.synchronize(timeout_ms)
        return self.collect()

    def close(self) -> None:
        """Release executor, workspace, tensors and scalars (after the stream is synchronized)."""
        if self.prepared is not None:
            self.prepared.close()
        for obj in reversed(self._owned):
            obj.close()
        self._owned.clear()

    def __enter__(self) -> OpCall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_once(
    context: acl.Context,
    stream: acl.Stream,
    spec: OpSpec,
    params: Params,
    host_inputs: Mapping[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Run one call and return its outputs (the simplest use of :class:`OpCall`)."""
    with OpCall(context, spec, params, host_inputs) as call:
        return call.run(stream)
