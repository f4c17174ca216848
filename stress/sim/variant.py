"""Instrumented builds of the simulator: AddressSanitizer and ThreadSanitizer variants.

``ACLSIM_VARIANT=asan`` or ``tsan`` (unset, empty or ``plain``: the ordinary build) compiles the
simulator with ``-fsanitize=address`` or ``-fsanitize=thread``.  The flags are part of the build
key and the variant names the cache entry (``<cache>/<key>-asan``), so the plain build is never
touched.  An instrumented library loaded into an uninstrumented Python needs the sanitizer's
runtime preloaded; :func:`runtime_env` gives the variables (``LD_PRELOAD``, ``ASAN_OPTIONS`` /
``TSAN_OPTIONS``) and ``python -m stress.sanitize.simenv tsan`` prints them as shell exports.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass

from stress.errors import ConfigError

PLAIN = "plain"


@dataclass(frozen=True)
class Variant:
    """One build variant: its name, extra compile and link flags, and its runtime library."""

    name: str
    cflags: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()
    runtime: str = ""  # the sanitizer runtime to preload (``lib<x>.so``), "" for plain
    options_var: str = ""  # ASAN_OPTIONS / TSAN_OPTIONS

    @property
    def suffix(self) -> str:
        """The cache entry's suffix (``-asan``); empty for the plain build."""
        return "" if self.name == PLAIN else f"-{self.name}"


# -O1 -g and frame pointers: stacks with the simulator's functions and source lines (libsanitizer
# symbolises with the DWARF line tables), at the usual sanitizer build cost.
_DEBUG = ("-O1", "-g", "-fno-omit-frame-pointer")
VARIANTS = {
    PLAIN: Variant(PLAIN),
    "asan": Variant(
        "asan",
        (*_DEBUG, "-fsanitize=address"),
        ("-fsanitize=address",),
        "libasan.so",
        "ASAN_OPTIONS",
    ),
    "tsan": Variant(
        "tsan",
        (*_DEBUG, "-fsanitize=thread"),
        ("-fsanitize=thread",),
        "libtsan.so",
        "TSAN_OPTIONS",
    ),
}


def get(name: str | None = None) -> Variant:
    """The variant ``name``, or ``$ACLSIM_VARIANT``'s; ConfigError (one line) if unknown."""
    raw = os.environ.get("ACLSIM_VARIANT", "") if name is None else name
    key = raw.strip().lower() or PLAIN
    if key not in VARIANTS:
        where = "ACLSIM_VARIANT" if name is None else "variant"
        raise ConfigError(
            f"{where}: unknown simulator variant {raw!r}; use one of {', '.join(VARIANTS)}"
        )
    return VARIANTS[key]


def runtime_library(variant: Variant, cc: list[str]) -> str:
    """Absolute path of the variant's sanitizer runtime as ``cc`` links it; ConfigError when the
    compiler has none (``-print-file-name`` then echoes the bare name back)."""
    try:
        out = subprocess.run(
            [*cc, f"-print-file-name={variant.runtime}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout.strip()
    except OSError as exc:
        raise ConfigError(f"CC: cannot run {shlex.join(cc)} ({exc}); set CC") from exc
    if not os.path.isabs(out) or not os.path.exists(out):
        raise ConfigError(
            f"ACLSIM_VARIANT={variant.name}: {shlex.join(cc)} has no {variant.runtime}; "
            "install the compiler's sanitizer runtime (e.g. libasan8 / libtsan2) or unset it"
        )
    return os.path.realpath(out)


def options(variant: Variant, log_path: str = "", suppressions: str = "") -> str:
    """The ``ASAN_OPTIONS`` / ``TSAN_OPTIONS`` value for a run (``log_path``: reports go to
    ``<log_path>.<pid>`` instead of stderr)."""
    opts = []
    if variant.name == "asan":
        # The simulator's own leaks are wanted; Python's are filtered by the report parser (only
        # stacks through the simulator count).  Continue after an error so one run finds several.
        opts += ["detect_leaks=1", "halt_on_error=0", "abort_on_error=0"]
    elif variant.name == "tsan":
        opts += ["halt_on_error=0", "report_signal_unsafe=0", "history_size=4"]
    if suppressions:
        opts.append(f"suppressions={suppressions}")
    if log_path:
        opts.append(f"log_path={log_path}")
    return ":".join(opts)


def runtime_env(
    variant: Variant, cc: list[str], log_path: str = "", suppressions: str = ""
) -> dict[str, str]:
    """The environment a process needs to load the variant's libraries: ``ACLSIM_VARIANT``,
    ``LD_PRELOAD`` (the runtime first) and the sanitizer's options.  Empty for plain."""
    if variant.name == PLAIN:
        return {}
    preload = [runtime_library(variant, cc)]
    if os.environ.get("LD_PRELOAD"):
        preload.append(os.environ["LD_PRELOAD"])
    return {
        "ACLSIM_VARIANT": variant.name,
        "LD_PRELOAD": ":".join(preload),
        variant.options_var: options(variant, log_path, suppressions),
    }
