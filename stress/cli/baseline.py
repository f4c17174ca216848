"""The CLI's ``baseline`` command: ``baseline record`` (each case's line as it is recorded) and
``baseline show`` (a baseline file as a table)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stress.cli.commands import EXIT_CLEAN, session_from
from stress.records import RecordedCase
from stress.vocabulary import Status


def cmd_baseline(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.baseline.store import Baseline

    console = Console()
    if args.baseline_command == "show":
        baseline = Baseline.load(args.path)
        _print_baseline(console, baseline)
        return EXIT_CLEAN
    session = session_from(args, for_run=False)
    session.load()
    if args.corpus_note:
        console.print(args.corpus_note, highlight=False)
    if args.out or args.baseline:  # where `run --baseline` will look for it
        path = Path(args.out or args.baseline)
    else:
        path = session.default_baseline(session.backend_info().fingerprint)

    def on_case(rec: object) -> None:
        if not isinstance(rec, RecordedCase):
            return
        ref_txt = _REFERENCE[(rec.reference or {}).get("ok")]
        status = _status_text(rec.status, rec.code)
        console.print(
            f"  {rec.case:<24} {status:<14} {rec.grading:<10} reference {ref_txt}"
            + (f"  unwritten {dict(rec.unwritten)}" if rec.unwritten else ""),
            highlight=False,
        )

    from stress.engine.run.rundir import claim_baseline

    claim = claim_baseline(path, console.print)  # a second recorder of one path is told
    console.print(f"recording baseline {path} ({session.config.repeats} repeats per case)")
    try:
        written = session.record_baseline(path, on_case)
    except KeyboardInterrupt:
        console.print(f"interrupted: the baseline {path} was not written (saved only when done)")
        raise
    finally:
        claim.release()
    console.print(f"baseline written: {written}")
    return EXIT_CLEAN


_REFERENCE = {True: "agrees", False: "DIFFERS", None: "-"}


def _status_text(status: str, code: int | None) -> str:
    return str(Status.OK) if status == Status.OK else f"{Status.ERROR} {code}"


def _print_baseline(console, baseline) -> None:
    from rich.table import Table

    from stress.report_sections import Fingerprint

    b = Fingerprint.from_json(baseline.backend)
    console.print(
        f"{baseline.path}: backend {b.kind} {b.soc} {b.version}, "
        f"deterministic {'on' if baseline.deterministic else 'off'}, {baseline.repeats} repeats, "
        f"recorded {baseline.created}"
    )
    t = Table()
    for col in ("case", "op", "status", "grading", "digest", "reference"):
        t.add_column(col)
    for cid, cb in baseline.cases.items():
        status, ref = _status_text(cb.status, cb.code), _REFERENCE[cb.reference.get("ok")]
        t.add_row(cid, cb.op, status, cb.grading, cb.call_digest[:12], ref)
    console.print(t)
