"""Host inputs of each case: generated once (seeded), then reused by every call of the case.

Inputs that are outputs of another operator (the backward's saved tensors come from the
forward) are produced by running that operator on the same backend, as a real caller does.
A negative case (one expected to fail) may have parameters the generator cannot honour
(C = 0, N = 3 for the device forward...): its inputs come from the numpy path or, failing that,
zero-filled arrays of the declared shapes; the operator is expected to reject them anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

from stress import acl
from stress.corpus.parse import Case
from stress.engine.call.prepared import run_once
from stress.engine.call.views import broadcast_values
from stress.ops.spec import OpSpec, Params

__all__ = ["InputCache", "generate_inputs"]


def _zeros(case: Case) -> dict[str, np.ndarray]:
    uploaded = case.spec.uploaded(case.params)
    return {name: np.zeros(shape, dtype) for name, (shape, dtype) in uploaded.items()}


def generate_inputs(
    case: Case, context: acl.Context | None = None, stream: acl.Stream | None = None
) -> dict[str, np.ndarray]:
    """The case's host inputs; with a context and stream, dependencies run on the device."""
    spec = case.spec
    forward = None
    if spec.depends_on and context is not None and stream is not None and not case.negative:

        def forward(dep: OpSpec, params: Params, ins: Mapping[str, np.ndarray]):
            return run_once(context, stream, dep, params, ins)

    try:  # a broadcast variant's: its inputs' first slices, expanded (views.broadcast_values)
        return broadcast_values(case, spec.generate(case.params, case.seed, forward=forward))
    except (ValueError, IndexError, ZeroDivisionError, FloatingPointError):
        if not case.negative:
            raise
        return _zeros(case)


class InputCache:
    """Inputs per case id, generated on first use (thread-safe); a view variant shares its
    twin's (the same values, laid out otherwise at upload)."""

    def __init__(self, context: acl.Context | None = None, stream: acl.Stream | None = None):
        self.context = context
        self.stream = stream
        self._inputs: dict[str, dict[str, np.ndarray]] = {}
        self._failed: dict[str, BaseException] = {}
        self._lock = threading.Lock()

    def get(self, case: Case) -> dict[str, np.ndarray]:
        """The case's inputs; an out-of-memory failure (host ``MemoryError``, device
        :class:`~stress.acl.AclMemoryError`) is remembered and raised again on every later get,
        without generating again."""
        key = case.reference
        with self._lock:
            failure = self._failed.get(key)
            if failure is not None:
                raise failure
            inputs = self._inputs.get(key)
            if inputs is None:
                if self.context is not None:
                    self.context.bind()
                try:
                    inputs = generate_inputs(case, self.context, self.stream)
                except (MemoryError, acl.AclMemoryError) as exc:
                    self._failed[key] = exc
                    raise
                self._inputs[key] = inputs
            return inputs

    def ready(self, case: Case) -> bool:
        """Whether the case's inputs were made (or failed to be): :meth:`get` will not make
        them."""
        with self._lock:
            return case.twin in self._inputs or case.twin in self._failed

    def prepare(self, case: Case) -> None:
        """Generate the case's inputs now; running out of memory is left for its calls to
        report (as ``out-of-memory`` records), not raised here."""
        try:
            self.get(case)
        except (MemoryError, acl.AclMemoryError):
            pass
