"""The option groups several ``aclnn-stress`` commands share (``run``, ``baseline record``,
``report``): the backend, the corpus, the runtime and a run's output folder, with the defaults
of :data:`stress.config.DEFAULTS`."""

from __future__ import annotations

import argparse
import os

from stress.backend_option import add_backend_option
from stress.cli import commands as c
from stress.cli import values as v
from stress.config import ALL_VARIANTS, DEFAULTS, VARIANTS

__all__ = ["backend_option", "corpus_options", "run_output_options", "runtime_options"]


class _AllowReferenceImports(argparse.Action):
    """``--allow-reference-imports``: trust declared references in this process and its phase
    children (stress.ops.references)."""

    def __init__(self, option_strings: list[str], dest: str, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=False, **kw)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from stress.ops.references import ALLOW_ENV

        os.environ[ALLOW_ENV] = "1"
        setattr(namespace, self.dest, True)


def backend_option(parser: argparse.ArgumentParser) -> None:
    add_backend_option(
        parser,
        "which CANN to load (default: $STRESS_BACKEND, else auto: a real install when an NPU is "
        "present, else the bundled simulator)",
    )


def corpus_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("corpus and baseline")
    g.add_argument(
        "--allow-reference-imports",
        action=_AllowReferenceImports,
        help='import the Python "module:function" a declaration names as its reference (off: '
        "a declaration is data and importing runs code; also allow-reference-imports = true "
        "under [tool.aclnn-stress] in pyproject.toml)",
    )
    g.add_argument(
        "--corpus",
        action="append",
        metavar="PATH",
        help="corpus TOML of the operator under test (repeatable; default corpus/mhc.toml)",
    )
    g.add_argument(
        "--control",
        default=c.DEFAULT_CONTROL,
        metavar="PATH",
        help="control corpus (aclnnAdd) for the control phase (default corpus/control.toml; "
        "'none' for no control)",
    )
    g.add_argument(
        "--baseline",
        metavar="PATH",
        help="baseline file (default baselines/<corpus stems>.<backend>.json)",
    )
    g.add_argument(
        "-I",
        dest="include",
        action="append",
        metavar="DIR",
        help="include folder for declarations' headers and their #includes (repeatable; "
        "searched before $ASCEND_HOME_PATH/include and the simulator's)",
    )
    g.add_argument(
        "--variants",
        type=v.variants,
        metavar="LIST",
        help="variants derived from every case: views graded against their contiguous twin, "
        "empties, edge sizes and one-field twins as cases of their own: a comma-separated "
        f"subset of {','.join(ALL_VARIANTS)}, all, default or none (default: "
        f"{','.join(VARIANTS)}; twins only when named)",
    )
    g.add_argument(
        "--allocator",
        choices=("fresh", "recycle", "both"),
        help="device memory per call: fresh aclrtMalloc, recycle (a caching allocator like "
        "torch_npu's: freed blocks pooled by size, reused across cases and threads, "
        "stream-ordered), or both (default: the shuffled phase, and the baseline's order check, "
        "under each; a failure only under recycle is address-dependence)",
    )


def runtime_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("runtime")
    backend_option(g)
    g.add_argument("--device", type=int, help=f"device id (default {DEFAULTS['device']})")
    g.add_argument(
        "--no-deterministic",
        dest="deterministic",
        action="store_false",
        help="leave ACL_OPT_DETERMINISTIC off (cases that are then not bit-reproducible are "
        "graded by numeric tolerance instead of digest)",
    )
    g.add_argument(
        "--repeats",
        type=int,
        help=f"K: calls per case in serial (default {DEFAULTS['repeats']})",
    )
    g.add_argument(
        "--canary",
        type=v.byte,
        help=f"byte prefilled into outputs (default {DEFAULTS['canary']:#X})".replace("0X", "0x"),
    )
    g.add_argument(
        "--call-timeout",
        type=v.positive(float),
        metavar="S",
        help=f"a call still running after S seconds is a HANG (default "
        f"{DEFAULTS['call_timeout']:g}; simulator calls take "
        "milliseconds, NPU calls less); the upper bound of the adaptive limit below",
    )
    g.add_argument(
        "--hang-floor",
        type=v.positive(float),
        metavar="S",
        help="a call of a case whose baseline records its time is suspect after "
        "max(S, --hang-factor x its p99) and a HANG once still running after a second, "
        f"load-stretched wait (default {DEFAULTS['hang_floor']:g})",
    )
    g.add_argument(
        "--hang-factor",
        type=v.positive(float),
        metavar="K",
        help=f"the multiple of a case's recorded p99 call time (default "
        f"{DEFAULTS['hang_factor']:g})",
    )
    g.add_argument(
        "--max-case-bytes",
        type=v.byte_count,
        metavar="BYTES",
        help="refuse a case whose tensors take more (checked from shapes and dtypes at corpus "
        "load, before anything is allocated; K/M/G/T suffixes; default a quarter of host memory "
        "and of the device memory the runtime reports)",
    )
    g.add_argument(
        "--no-isolate",
        action="store_true",
        help="run phases in this process instead of supervised children (faster to start; a "
        "crashing operator then ends the run)",
    )


def run_output_options(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("output")
    o.add_argument(
        "--out", metavar="DIR", help="result directory (default stress-out/<time>-s<seed>)"
    )
    o.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the stopped or killed run in DIR: its configuration, corpus and baseline "
        "come from DIR/results.jsonl; finished phases are not run again",
    )
    o.add_argument("--json", action="store_true", help="print report.json instead of tables")
    o.add_argument("--quiet", action="store_true", help="no progress output")
    o.add_argument(
        "--junit", metavar="FILE", help="also write JUnit XML (one testcase per case x phase)"
    )
    o.add_argument(
        "--shrink-budget",
        type=v.seconds_or_zero,
        default=45.0,
        metavar="S",
        help="seconds to spend shrinking a failing mixed/interleaved/isolated phase to a "
        "minimal reproducer written into the report (default 45; 0 turns it off)",
    )
    o.add_argument(
        "--record-baseline",
        action="store_true",
        help="record the baseline first when it is missing, and again when it does not "
        "match this run (other backend libraries, corpus, canary or deterministic mode)",
    )
    o.add_argument(
        "--force",
        action="store_true",
        help="compare against a baseline recorded on another backend or corpus anyway",
    )
