"""The ``aclnn-stress`` argument parser: every command a :class:`~stress.subcommand.Command`
(:data:`COMMANDS` here, :data:`ELSEWHERE` in their modules); defaults shown in ``--help`` come
from :data:`stress.config.DEFAULTS` (the one place they are defined)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from stress import __version__
from stress.cli import baseline as cb
from stress.cli import commands as c
from stress.cli import options as o
from stress.cli import values as v
from stress.cli.errors import EXIT_CODES_HELP, OneLineParser
from stress.config import DEFAULT_DURATION, DEFAULTS, MODES, PHASES
from stress.subcommand import Command, add_command

__all__ = ["COMMANDS", "ELSEWHERE", "build_parser", "command_of"]


_SIMPLE_EXIT_CODES = "Exit codes: 0 done, 2 usage/configuration/environment error."


def _info_arguments(p: argparse.ArgumentParser) -> None:
    o.backend_option(p)
    p.add_argument("--json", action="store_true", help="print as JSON")


def _faults_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the list as JSON")


def _run_arguments(p: argparse.ArgumentParser) -> None:
    o.corpus_options(p)
    g = p.add_argument_group("load")
    g.add_argument("--threads", type=int, help=f"worker threads T (default {DEFAULTS['threads']})")
    g.add_argument(
        "--phases",
        type=v.phases,
        default=PHASES,
        help=f"comma-separated subset of {','.join(PHASES)} (default all)",
    )
    g.add_argument(
        "--modes",
        type=v.modes,
        metavar="LIST",
        help="API modes the calls are drawn from: plain (a single-use executor), repeat (a "
        "repeatable executor launched again, then rebound to other buffers), event (the "
        "outputs consumed on a second stream after an event) and pipeline (phase 1 on the "
        "worker, the launch on a launch thread): a comma-separated subset of "
        f"{','.join(MODES)}, or all (the default)",
    )
    g.add_argument(
        "--stream",
        choices=("shared", "per-thread", "both"),
        default=None,
        help="stream policy of the concurrent phases: one stream for all workers (shared, as in "
        "the report), one per worker (kernels overlap), or both in turn (the default; "
        "per-thread with --context per-thread)",
    )
    g.add_argument(
        "--context",
        choices=("shared", "per-thread"),
        help=f"one context bound in every worker ({DEFAULTS['context']}, the default) or one "
        "per worker",
    )
    _run_budget_options(g)
    g.add_argument("--seed", type=int, help="seed of every random choice (default: random)")
    o.run_output_options(p)
    o.runtime_options(p)


def _run_budget_options(g: argparse._ArgumentGroup) -> None:
    """How long the concurrent phases run, and whether the run stops at the first diagnosis."""
    budget = g.add_mutually_exclusive_group()
    budget.add_argument(
        "--duration",
        type=v.positive(float),
        metavar="S",
        help=f"seconds per concurrent phase (default {DEFAULT_DURATION:g}; isolated splits it "
        "across cases)",
    )
    budget.add_argument(
        "--iterations",
        type=v.positive(int),
        metavar="N",
        help="rounds per concurrent phase (per case in isolated) instead of a duration",
    )
    g.add_argument(
        "--budget",
        type=v.positive(float),
        metavar="S",
        help="seconds for the whole run: the scheduler gives the burst a tenth (at most 1 s per "
        "stream policy) and divides the rest across the concurrent phases (overrides --duration)",
    )
    g.add_argument(
        "--fail-fast",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stop once a diagnosis stands: the phases run in the order the diagnosis weighs "
        "them (burst, control, serial, shuffled, isolated, interleaved, mixed) and the rest are "
        "skipped after the first that settles it (default on; --no-fail-fast runs them all)",
    )


def _record_arguments(p: argparse.ArgumentParser) -> None:
    o.corpus_options(p)
    p.add_argument(
        "--out",
        metavar="PATH",
        help="where to write (default: --baseline, else baselines/<corpus stems>.<backend>.json)",
    )
    o.runtime_options(p)


def _show_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="baseline JSON file")


def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", nargs="+", help="the run's result directory (several with --merge)")
    p.add_argument("--json", action="store_true", help="print report.json instead of tables")
    p.add_argument(
        "--html",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write report.html (default on)",
    )
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML (case x phase)")
    p.add_argument(
        "--merge",
        action="store_true",
        help="merge the runs DIR... (same corpus) into one report under --out",
    )
    p.add_argument("--out", metavar="DIR", help="where --merge writes (default stress-out/merged)")


_RUN_DESCRIPTION = """\
Run the protocol phases over the corpus and diagnose:
  burst        fail-fast first: each case's first call serially against the baseline,
               then short mixed rounds with the control interleaved (T threads)
  control      the control corpus under the same pool (runtime fault?)
  serial       each case K times in one thread (baseline check)
  shuffled     one thread, random order (order dependence)
  interleaved  one thread, A.phase1 B.phase1 A.phase2 B.phase2 for every pair
  isolated     each case alone on T threads (self-race)
  mixed        all cases on T threads, barrier-aligned (cross-call contamination)
Results stream to OUT/results.jsonl; OUT/report.json, report.md and the self-contained \
report.html are rendered from it."""

#: The commands defined here, in the order ``--help`` lists them.
COMMANDS = (
    Command(
        "info",
        help="show the backend: libraries, SoC, version, device count",
        description="Load the backend a run would use and print its root, the library each "
        "CANN library resolved to, the SoC name, the version string and the device count: the "
        "first thing to try when a run says the CANN install is broken.",
        epilog=_SIMPLE_EXIT_CODES,
        arguments=_info_arguments,
        run=c.cmd_info,
    ),
    Command(
        "sim",
        help="build or locate the CANN simulator",
        description="The simulator is a C implementation of the CANN ABI laid out as a CANN "
        "root. Point third-party ctypes scripts at it with "
        "ASCEND_HOME_PATH=$(aclnn-stress sim path).",
        epilog=_SIMPLE_EXIT_CODES,
        run=c.cmd_sim,
        actions=(
            Command("path", help="print the simulator root (building it first if needed)"),
            Command("build", help="rebuild the simulator now and print its root"),
            Command(
                "faults",
                help="list the simulator's opt-in faults (ACLSIM_FAULTS) and what each should "
                "be found as",
                description="List the faults the simulator can turn on "
                "(ACLSIM_FAULTS=name[,name...]), each with its mechanism, the diagnosis a run "
                "should reach and the phase that finds it (docs/simulator.md, section Faults).",
                arguments=_faults_arguments,
            ),
        ),
    ),
    Command(
        "ops",
        help="list the operators and their case parameters",
        description="List the built-in operators (the declarations in stress/ops/declarations/) "
        "with their aclnn function and the parameters a corpus case may set. Operators from "
        "other headers: aclnn-stress op list / op inspect.",
        run=c.cmd_ops,
    ),
    Command(
        "run",
        help="run the stress protocol over a corpus",
        description=_RUN_DESCRIPTION,
        epilog=EXIT_CODES_HELP,
        arguments=_run_arguments,
        run=c.cmd_run,
        preformatted=True,
    ),
    Command(
        "baseline",
        help="record or show a baseline",
        actions=(
            Command(
                "record",
                help="run every case K times serially and store digests atomically",
                description="Run each case (corpus and control) K times in one thread and "
                "store per-output sha256 digests, whether the case is bit-deterministic, and the "
                "backend and corpus fingerprints. The file is replaced atomically.",
                arguments=_record_arguments,
                run=cb.cmd_baseline,
                defaults={
                    "stream": "shared",
                    "context": "shared",
                    "threads": 1,
                    "seed": 0,
                    "duration": None,
                    "iterations": None,
                },
            ),
            Command(
                "show",
                help="print a baseline's cases and fingerprint",
                description="Print the backend a baseline was recorded on and its settings, and "
                "per case its operator, status, grading (digest or tolerance), digest and "
                "reference check.",
                epilog=_SIMPLE_EXIT_CODES,
                arguments=_show_arguments,
                run=cb.cmd_baseline,
            ),
        ),
    ),
    Command(
        "report",
        help="re-render the reports of a run from its results.jsonl; merge runs",
        description="Render DIR/report.json, DIR/report.md and DIR/report.html from "
        "DIR/results.jsonl alone (works for interrupted and killed runs) and print the verdict "
        "tables. With --merge, several runs of one corpus (hosts, devices, repeats) become one "
        "HTML report with a column per run and each case's failure rate.",
        epilog=EXIT_CODES_HELP,
        arguments=_report_arguments,
        run=c.cmd_report,
    ),
)


#: The commands defined with their subpackages: (module, its one-line help); each module's
#: ``COMMAND`` is the command.
#: Only the command being run is imported (they pull the operator catalogue, the header reader,
#: numpy: `aclnn-stress --version` and `--help` must not); the others get a placeholder with the
#: same help line (tests/test_startup.py checks that the two agree).
ELSEWHERE = {
    "gradcheck": (
        "stress.gradcheck.cli",
        "finite-difference check of a declared backward's gradients",
    ),
    "corpus": (
        "stress.cli.corpus",
        "generate corpus files (valid cases or constraint violations) or import msOpST's",
    ),
    "op": ("stress.cli.op", "read operators from aclnn headers (inspect, new, list)"),
    "sanitize": (
        "stress.cli.sanitize",
        "re-run a finished run's reproducers under the sanitizer",
    ),
    "reproduce": (
        "stress.cli.reproduce",
        "write a standalone ctypes script reproducing a run's failure",
    ),
}


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word not an option: the top level takes no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(command: str | None = None, *, full: bool = True) -> argparse.ArgumentParser:
    """The whole parser (``full``), or one whose commands defined elsewhere (:data:`ELSEWHERE`)
    are placeholders except ``command``: what :func:`stress.cli.main` parses with."""
    from importlib import import_module

    parser = OneLineParser(
        prog="aclnn-stress",
        description="Stress-test CANN aclnn operators for cross-call contamination, unwritten "
        "outputs and wrong gradients, on a real NPU or on the bundled CANN simulator.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"aclnn-stress {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for builtin in COMMANDS:
        add_command(sub, builtin)
    for name, (module, help_line) in ELSEWHERE.items():
        if full or name == command:
            add_command(sub, import_module(module).COMMAND)
        else:
            sub.add_parser(name, help=help_line, add_help=False)
    return parser
