"""The gradient check's device: a stream on device 0 of the backend, running one call of an
operator (:class:`Device`), opened for the check's duration by :func:`device_session`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from stress.errors import ConfigError
from stress.ops.spec import Params

__all__ = ["Device", "device_session"]


class Device:
    """A stream on device 0 of the backend (the process's one CANN runtime)."""

    def __init__(self, backend: str | None, functions: Sequence[str]) -> None:
        from stress import acl

        rt = acl.runtime(backend)
        self.kind = rt.backend.kind
        missing = [f for f in functions if not rt.api.has(f)]
        if missing:
            fix = (
                "this simulator build lacks them (rebuild: aclnn-stress sim build)"
                if self.kind == "sim"
                else "use a CANN release with these operators"
            )
            raise ConfigError(
                f"the {self.kind} backend ({rt.backend.root}) does not export "
                f"{', '.join(missing)}: {fix}, or check with --backward reference "
                "(and --fd reference) meanwhile"
            )
        self.context = rt.device(0).default_context
        self.stream = self.context.create_stream()

    def run(self, spec, params: Params, inputs: Mapping[str, np.ndarray]) -> dict:
        from stress.engine.call.prepared import run_once

        self.context.bind()
        return run_once(self.context, self.stream, spec, params, inputs)

    def close(self) -> None:
        self.context.bind()
        self.stream.close()


@contextmanager
def device_session(backend: str | None, functions: Sequence[str]) -> Iterator[Device | None]:
    if not functions:
        yield None
        return
    device = Device(backend, functions)
    try:
        yield device
    finally:
        device.close()
