"""Command-line interface: ``aclnn-stress``.

Exit codes: 0 clean, 1 findings, 2 usage / configuration / environment error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from stress import __version__
from stress.config import DEFAULT_DURATION, DEFAULTS, PHASES, RunConfig
from stress.errors import ConfigError
from stress.model import RunVerdict, Status

__all__ = ["build_parser", "main"]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_CONFIG = 0, 1, 2
_REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ("corpus/mhc.toml",)
DEFAULT_CONTROL = "corpus/control.toml"


def _shipped(path: str) -> str:
    """A default corpus path: relative to the working directory, else to the source tree."""
    if Path(path).exists() or not (_REPO / path).exists():
        return path
    return str(_REPO / path)


# -- info / sim ------------------------------------------------------------------------------
def _cmd_info(args: argparse.Namespace) -> int:
    from stress import acl

    info = acl.runtime(args.backend).info()
    if args.json:
        print(json.dumps(info, indent=2))
        return EXIT_CLEAN
    kind = info["backend"] + (" (simulator)" if info["simulator"] else "")
    print(f"backend       {kind}")
    print(f"root          {info['root']}")
    for name, path in info["libraries"].items():
        print(f"library       {name} -> {path}")
    print(f"soc           {info['soc'] or '(aclrtGetSocName not available)'}")
    print(f"version       {info['version'] or '(aclsysGetVersionStr not available)'}")
    print(f"devices       {info['device_count']}")
    return EXIT_CLEAN


def _cmd_sim(args: argparse.Namespace) -> int:
    from stress import sim

    if args.sim_command == "faults":
        from stress import acl
        from stress.sim.faults import catalogue

        faults = catalogue(acl.runtime("sim").api)
        if args.json:
            print(json.dumps([dataclasses.asdict(f) for f in faults], indent=2))
            return EXIT_CLEAN
        from rich.console import Console
        from rich.table import Table

        table = Table(title="simulator faults (ACLSIM_FAULTS=name[,name...])")
        for col in ("fault", "expected diagnosis", "found by"):
            table.add_column(col)
        for f in faults:
            table.add_row(f.name, f.expected, f.found_by)
        console = Console()
        console.print(table)
        for f in faults:
            console.print(f"[bold]{f.name}[/bold]: {f.description}", highlight=False)
        console.print(
            "Record the baseline with the same ACLSIM_FAULTS; conditions and how each phase "
            "sees each fault: docs/simulator.md, section Faults."
        )
        return EXIT_CLEAN
    try:
        root = sim.build(force=True) if args.sim_command == "build" else sim.root()
    except sim.SimBuildError as exc:
        raise ConfigError(str(exc)) from exc
    print(root)
    return EXIT_CLEAN


def _cmd_ops(args: argparse.Namespace) -> int:
    from stress import ops

    for name in ops.names():
        spec = ops.get(name)
        print(f"{name}  ({spec.function}) — {spec.description}")
        for p in spec.params:
            default = (
                ""
                if p.default is not None and repr(p.default) == "REQUIRED"
                else (f" = {p.default!r}")
            )
            print(f"    {p.name}{default}  {p.doc}")
    return EXIT_CLEAN


# -- run / baseline / report -----------------------------------------------------------------
def _phases(text: str) -> tuple[str, ...]:
    if text == "all":
        return PHASES
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in chosen if p not in PHASES]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown phase {bad[0] if bad else text!r}; choose from {', '.join(PHASES)} or all"
        )
    return chosen


def _byte(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte such as 0xAB") from None
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte (0..255)")
    return value


def _positive(kind: type) -> Callable[[str], float]:
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


def _session_from(args: argparse.Namespace, *, for_run: bool):
    from stress.engine.session import Session

    config = RunConfig.from_cli(args, phases=None if for_run else ("serial",))
    corpus = [_shipped(p) for p in (args.corpus or DEFAULT_CORPUS)]
    control = [] if args.control == "none" else [_shipped(args.control)]
    return Session(
        config=config,
        corpus=corpus,
        control=control,
        baseline_path=Path(args.baseline) if args.baseline else None,
        out_dir=Path(args.out) if getattr(args, "out", None) else None,
        backend=args.backend,
        isolate=not args.no_isolate,
        force=getattr(args, "force", False),
        record_missing=getattr(args, "record_baseline", False),
        shrink_budget=max(0.0, getattr(args, "shrink_budget", 0.0)),
    )


def _cmd_run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.report.document import render_console
    from stress.report.progress import ConsoleUI

    session = _session_from(args, for_run=True)
    session.load()  # bad corpus files fail here, before any output
    ui = ConsoleUI(quiet=args.quiet)
    session.ui = ui
    cfg = session.config
    ui.message(
        f"aclnn-stress {__version__}: seed {cfg.seed} (replay with --seed {cfg.seed}), "
        f"{cfg.threads} threads, context {cfg.context}, streams {'+'.join(cfg.streams)}, "
        f"phases {','.join(cfg.phases)}"
    )
    try:
        report = session.run()
    except KeyboardInterrupt:
        if session.out_dir:
            print(
                f"interrupted; partial results in {session.out_dir} "
                f"(re-render with `aclnn-stress report {session.out_dir}`)",
                file=sys.stderr,
            )
        return 130
    out = session.out_dir
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        render_console(report, Console())
        print(f"results: {out}/results.jsonl\nreports: {out}/report.json, {out}/report.md")
    _link_latest(out)
    return EXIT_CLEAN if report["verdict"] == RunVerdict.CLEAN else EXIT_FINDINGS


def _link_latest(out: Path | None) -> None:
    """``stress-out/latest`` -> the newest run directory (best effort)."""
    if out is None:
        return
    link = out.parent / "latest"
    try:
        if link.is_symlink():
            link.unlink()
        if not link.exists():
            link.symlink_to(out.name)
    except OSError:
        pass


def _cmd_baseline(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from stress.baseline.store import Baseline

    console = Console()
    if args.baseline_command == "show":
        baseline = Baseline.load(args.path)
        _print_baseline(console, baseline)
        return EXIT_CLEAN
    session = _session_from(args, for_run=False)
    session.load()
    if not args.out:
        path = session.default_baseline(session.backend_info()["fingerprint"])
    else:
        path = Path(args.out)
    table = Table(title=f"recording {path}")
    for col in ("case", "status", "grading", "reference", "unwritten"):
        table.add_column(col)

    def on_case(rec: dict) -> None:
        if rec.get("type") != "recorded":
            return
        ref = rec.get("reference") or {}
        ref_txt = _REFERENCE[ref.get("ok")]
        status = _status_text(rec["status"], rec.get("code"))
        console.print(
            f"  {rec['case']:<24} {status:<14} {rec['grading']:<10} reference {ref_txt}"
            + (f"  unwritten {rec['unwritten']}" if rec.get("unwritten") else ""),
            highlight=False,
        )

    console.print(f"recording baseline {path} ({session.config.repeats} repeats per case)")
    written = session.record_baseline(path, on_case)
    console.print(f"baseline written: {written}")
    return EXIT_CLEAN


_REFERENCE = {True: "agrees", False: "DIFFERS", None: "-"}


def _status_text(status: str, code: int | None) -> str:
    return str(Status.OK) if status == Status.OK else f"{Status.ERROR} {code}"


def _print_baseline(console, baseline) -> None:
    from rich.table import Table

    b = baseline.backend
    console.print(
        f"{baseline.path}: backend {b.get('kind')} {b.get('soc')} {b.get('version')}, "
        f"deterministic {'on' if baseline.deterministic else 'off'}, {baseline.repeats} repeats, "
        f"recorded {baseline.created}"
    )
    t = Table()
    for col in ("case", "op", "status", "grading", "digest", "reference"):
        t.add_column(col)
    for cid, cb in baseline.cases.items():
        ref = _REFERENCE[cb.reference.get("ok")]
        t.add_row(
            cid,
            cb.op,
            _status_text(cb.status, cb.code),
            cb.grading,
            cb.call_digest[:12],
            ref,
        )
    console.print(t)


def _cmd_report(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.report.document import render_console, write_reports

    out = Path(args.dir)
    report = write_reports(out)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        render_console(report, Console())
        print(f"reports: {out}/report.json, {out}/report.md")
        if not report["complete"]:
            print(f"note: the run did not finish ({report['status']}); this is what it did")
    return EXIT_CLEAN if report["verdict"] == RunVerdict.CLEAN else EXIT_FINDINGS


# -- parser ----------------------------------------------------------------------------------
def _backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=("auto", "sim", "cann"),
        default=None,
        help="which CANN to load (default: $STRESS_BACKEND, else auto: a real install when an "
        "NPU is present, else the bundled simulator)",
    )


def _corpus_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("corpus and baseline")
    g.add_argument(
        "--corpus",
        action="append",
        metavar="PATH",
        help="corpus TOML of the operator under test (repeatable; default corpus/mhc.toml)",
    )
    g.add_argument(
        "--control",
        default=DEFAULT_CONTROL,
        metavar="PATH",
        help="control corpus (aclnnAdd) for the control phase (default corpus/control.toml; "
        "'none' for no control)",
    )
    g.add_argument(
        "--baseline",
        metavar="PATH",
        help="baseline file (default baselines/<corpus stems>.<backend>.json)",
    )


def _runtime_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("runtime")
    _backend_option(g)
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
        type=_byte,
        help=f"byte prefilled into outputs (default {DEFAULTS['canary']:#X})".replace("0X", "0x"),
    )
    g.add_argument(
        "--call-timeout",
        type=_positive(float),
        metavar="S",
        help=f"a call still running after S seconds is a HANG (default "
        f"{DEFAULTS['call_timeout']:g}; simulator calls take "
        "milliseconds, NPU calls less)",
    )
    g.add_argument(
        "--no-isolate",
        action="store_true",
        help="run phases in this process instead of supervised children (faster to start; a "
        "crashing operator then ends the run)",
    )


def build_parser() -> argparse.ArgumentParser:
    from stress.corpus.generate import add_cli as add_corpus
    from stress.gradcheck.check import add_cli as add_gradcheck

    parser = argparse.ArgumentParser(
        prog="aclnn-stress",
        description="Stress-test CANN aclnn operators for cross-call contamination, unwritten "
        "outputs and wrong gradients, on a real NPU or on the bundled CANN simulator.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage/configuration/environment error.",
    )
    parser.add_argument("--version", action="version", version=f"aclnn-stress {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("info", help="show the backend: libraries, SoC, version, device count")
    _backend_option(p)
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser(
        "sim",
        help="build or locate the CANN simulator",
        description="The simulator is a C implementation of the CANN ABI laid out as a CANN root. "
        "Point third-party ctypes scripts at it with ASCEND_HOME_PATH=$(aclnn-stress sim path).",
    )
    simsub = p.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    simsub.add_parser("path", help="print the simulator root (building it first if needed)")
    simsub.add_parser("build", help="rebuild the simulator now and print its root")
    fp = simsub.add_parser(
        "faults",
        help="list the simulator's opt-in faults (ACLSIM_FAULTS) and what each should be found as",
    )
    fp.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_cmd_sim)

    p = sub.add_parser("ops", help="list the operators and their case parameters")
    p.set_defaults(func=_cmd_ops)

    p = sub.add_parser(
        "run",
        help="run the stress protocol over a corpus",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the protocol phases over the corpus and diagnose:\n"
        "  serial       each case K times in one thread (baseline check)\n"
        "  shuffled     one thread, random order (order dependence)\n"
        "  interleaved  one thread, A.phase1 B.phase1 A.phase2 B.phase2 for every pair\n"
        "  isolated     each case alone on T threads (self-race)\n"
        "  mixed        all cases on T threads, barrier-aligned (cross-call contamination)\n"
        "  control      the control corpus under the same pool (runtime fault?)\n"
        "Results stream to OUT/results.jsonl; OUT/report.json and report.md are rendered "
        "from it.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage/configuration/environment error.",
    )
    _corpus_options(p)
    g = p.add_argument_group("load")
    g.add_argument("--threads", type=int, help=f"worker threads T (default {DEFAULTS['threads']})")
    g.add_argument(
        "--phases",
        type=_phases,
        default=PHASES,
        help=f"comma-separated subset of {','.join(PHASES)} (default all)",
    )
    g.add_argument(
        "--stream",
        choices=("shared", "per-thread", "both"),
        default=None,
        help="stream policy of the concurrent phases: one stream for all workers (shared, the "
        "default, as in the report), one per worker, or both in turn",
    )
    g.add_argument(
        "--context",
        choices=("shared", "per-thread"),
        help=f"one context bound in every worker ({DEFAULTS['context']}, the default) or one "
        "per worker",
    )
    budget = g.add_mutually_exclusive_group()
    budget.add_argument(
        "--duration",
        type=_positive(float),
        metavar="S",
        help=f"seconds per concurrent phase (default {DEFAULT_DURATION:g}; isolated splits it "
        "across cases)",
    )
    budget.add_argument(
        "--iterations",
        type=_positive(int),
        metavar="N",
        help="rounds per concurrent phase (per case in isolated) instead of a duration",
    )
    g.add_argument("--seed", type=int, help="seed of every random choice (default: random)")
    o = p.add_argument_group("output")
    o.add_argument(
        "--out", metavar="DIR", help="result directory (default stress-out/<time>-s<seed>)"
    )
    o.add_argument("--json", action="store_true", help="print report.json instead of tables")
    o.add_argument("--quiet", action="store_true", help="no progress output")
    o.add_argument(
        "--shrink-budget",
        type=float,
        default=45.0,
        metavar="S",
        help="seconds to spend shrinking a failing mixed/interleaved/isolated phase to a "
        "minimal reproducer written into the report (default 45; 0 turns it off)",
    )
    o.add_argument(
        "--record-baseline",
        action="store_true",
        help="record the baseline first when it is missing",
    )
    o.add_argument(
        "--force",
        action="store_true",
        help="compare against a baseline recorded on another backend or corpus anyway",
    )
    _runtime_options(p)
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("baseline", help="record or show a baseline")
    bsub = p.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    rec = bsub.add_parser(
        "record",
        help="run every case K times serially and store digests atomically",
        description="Run each case (corpus and control) K times in one thread and store "
        "per-output sha256 digests, whether the case is bit-deterministic, and the backend and "
        "corpus fingerprints. The file is replaced atomically.",
    )
    _corpus_options(rec)
    rec.add_argument("--out", metavar="PATH", help="where to write (default: --baseline's default)")
    _runtime_options(rec)
    rec.set_defaults(
        func=_cmd_baseline,
        stream="shared",
        context="shared",
        threads=1,
        seed=0,
        duration=None,
        iterations=None,
    )
    show = bsub.add_parser("show", help="print a baseline's cases and fingerprint")
    show.add_argument("path", help="baseline JSON file")
    show.set_defaults(func=_cmd_baseline)

    p = sub.add_parser(
        "report",
        help="re-render the reports of a run from its results.jsonl",
        description="Render DIR/report.json and DIR/report.md from DIR/results.jsonl alone "
        "(works for interrupted runs) and print the verdict tables.",
    )
    p.add_argument("dir", help="the run's result directory")
    p.add_argument("--json", action="store_true", help="print report.json instead of tables")
    p.set_defaults(func=_cmd_report)

    add_gradcheck(sub)
    add_corpus(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return func(args)
    except ConfigError as exc:
        print(f"aclnn-stress: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("aclnn-stress: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
