"""The CLI's commands: ``info``, ``sim``, ``ops``, ``run``, ``report`` (``baseline`` in
:mod:`stress.cli.baseline`; ``gradcheck`` and ``corpus`` live with their subpackages). Each
takes the parsed arguments and returns the exit code."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from stress import __version__
from stress.config import RunConfig
from stress.errors import ConfigError
from stress.files import output_file
from stress.records import RunReport
from stress.vocabulary import RunVerdict

EXIT_CLEAN, EXIT_FINDINGS, EXIT_CONFIG, EXIT_INCOMPLETE = 0, 1, 2, 3
_EXIT = {RunVerdict.CLEAN: EXIT_CLEAN, RunVerdict.INCOMPLETE: EXIT_INCOMPLETE}


def verdict_exit(report: RunReport) -> int:
    """The exit code of a report's verdict: 0 clean, 3 incomplete, 1 findings."""
    return _EXIT.get(report.verdict, EXIT_FINDINGS)


DEFAULT_CORPUS = ("corpus/mhc.toml",)
DEFAULT_CONTROL = "corpus/control.toml"


# -- info / sim ------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
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


def cmd_sim(args: argparse.Namespace) -> int:
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


def cmd_ops(args: argparse.Namespace) -> int:
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


def _paths(args: argparse.Namespace):
    from stress.shipped import default_paths

    return default_paths(
        args.corpus, args.control, corpus_default=DEFAULT_CORPUS, control_default=DEFAULT_CONTROL
    )


def _start_early(args: argparse.Namespace, config: RunConfig, paths: Any) -> Any:
    """``run``'s fork server started now, before the session's module is imported and its
    checks run (the server inherits the job modules and the corpus parsed with its variants:
    :mod:`stress.engine.run.early`); None for ``--no-isolate`` or a configuration the session
    will refuse (it says why in its usual order). A corpus that does not parse fails here,
    before any output."""
    from stress.corpus import preload
    from stress.corpus.variants import run_variants
    from stress.engine.run.early import start_early

    try:
        config.validate()
    except ConfigError:
        return None
    # parsed and derived as the session's load does it (kept: the session parses nothing again)
    run_variants(preload.load(paths.corpus, config.include_dirs), config)
    if paths.control and ("control" in config.phases or "burst" in config.phases):
        preload.load(paths.control, config.include_dirs)
    warm = [*paths.corpus, *paths.control]
    return start_early(not args.no_isolate, warm, config.include_dirs)


def session_from(
    args: argparse.Namespace, *, for_run: bool, config: RunConfig | None = None, paths: Any = None
):
    from stress.engine.run.session import Session

    config = config or RunConfig.from_cli(args, phases=None if for_run else ("serial",))
    paths = paths or _paths(args)
    args.corpus_note = paths.note  # the console line saying which corpus the run uses
    # the shipped corpus outside a checkout: nothing to compare with but its own first recording
    first_use = paths.shipped and not args.baseline
    return Session(
        config=config,
        corpus=list(paths.corpus),
        control=list(paths.control),
        baseline_path=Path(args.baseline) if args.baseline else None,
        out_dir=Path(args.out) if getattr(args, "out", None) else None,
        backend=args.backend,
        isolate=not args.no_isolate,
        force=getattr(args, "force", False),
        record_missing=getattr(args, "record_baseline", False) or first_use,
        shrink_budget=max(0.0, getattr(args, "shrink_budget", 0.0)),
    )


def _resumed(args: argparse.Namespace):
    """The session that continues the run in ``args.resume`` (its settings from the journal)."""
    from stress.engine.run.resume import resume_point
    from stress.engine.run.session import Session

    out = Path(args.resume)
    _check_run_dir(out)
    point = resume_point(out)
    h = point.header
    return Session(
        config=RunConfig.from_json(h.config),
        corpus=h.corpus,
        control=h.control,
        baseline_path=Path(h.baseline_path or ""),
        out_dir=out,
        backend=args.backend,
        isolate=not args.no_isolate,
        shrink_budget=max(0.0, args.shrink_budget),
        resume=point,
    )


def cmd_run(args: argparse.Namespace) -> int:
    if args.resume:
        return _run(args, _resumed(args))
    config, paths = RunConfig.from_cli(args, phases=None), _paths(args)
    # the backend is loaded and the first step set up beside this process's imports and
    # checks (the fork server and its children inherit the parsed corpus and its variants)
    early = _start_early(args, config, paths)
    try:
        session = session_from(args, for_run=True, config=config, paths=paths)
        session.load()  # bad corpus files fail here, before any output
        session.start_early(early)
        return _run(args, session)
    finally:
        if early is not None:
            early.close()


def _run(args: argparse.Namespace, session: Any) -> int:
    from stress.report.progress import ConsoleUI
    from stress.report.writers import render_console

    if args.resume:
        session.load()  # bad corpus files fail here, before any output
    junit = output_file(Path(args.junit), "--junit") if args.junit else None
    cfg = session.config
    session.ui = ConsoleUI(
        quiet=args.quiet,
        banner=f"aclnn-stress {__version__}: seed {cfg.seed} (replay with --seed {cfg.seed}), "
        f"{cfg.threads} threads, context {cfg.context}, streams {'+'.join(cfg.streams)}, "
        f"phases {','.join(cfg.phases)}"
        + (f"\n{args.corpus_note}" if getattr(args, "corpus_note", "") else ""),
    )
    try:
        report = session.run()
    except KeyboardInterrupt as exc:
        from stress.cli.interrupt import what_was_kept
        from stress.signals import exit_code

        print(what_was_kept(session, exc), file=sys.stderr)
        return exit_code(exc)
    out = session.out_dir
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        from rich.console import Console  # not before the run: its lines need no rich

        render_console(report, Console())
        print(
            f"results: {out}/results.jsonl\n"
            f"reports: {out}/report.json, {out}/report.md, {out}/report.html"
        )
    if junit is not None:
        from stress.htmlreport import write_junit

        write_junit(out, junit)
    _link_latest(out)
    if report.verdict == RunVerdict.FINDINGS:  # a standalone script of what failed
        from stress.cli.reproduce import after_run

        after_run(out, args.backend, quiet=args.json)
    return verdict_exit(report)


def _link_latest(out: Path | None) -> None:
    """``stress-out/latest`` -> the newest run directory (best effort). Only inside the default
    runs folder: next to a user's own ``--out`` a ``latest`` link would be litter (or clobber
    a file of theirs of that name)."""
    from stress.engine.run.rundir import RUNS_ROOT

    if out is None or out.parent.resolve() != RUNS_ROOT.resolve():
        return
    link = out.parent / "latest"
    try:
        if link.is_symlink():
            link.unlink()
        if not link.exists():
            link.symlink_to(out.name)
    except OSError:
        pass


def _merge(args: argparse.Namespace) -> int:
    from stress.htmlreport import merge_runs

    dirs = [Path(d) for d in args.dir]
    page = merge_runs(dirs, Path(args.out or "stress-out/merged"))
    print(f"merged {len(dirs)} runs: {page}")
    return EXIT_CLEAN


def cmd_report(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.report.writers import render_console, write_reports

    if args.merge:
        return _merge(args)
    if len(args.dir) > 1:
        raise ConfigError("report: several DIRs need --merge (or name one run directory)")
    out = Path(args.dir[0])
    _check_run_dir(out)
    report = write_reports(out, html=args.html)
    if args.junit:
        from stress.htmlreport import write_junit

        write_junit(out, output_file(Path(args.junit), "--junit"))
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        from rich.console import Console  # not before the run: its lines need no rich

        render_console(report, Console())
        html = ", report.html" if args.html else ""
        print(f"reports: {out}/report.json, {out}/report.md{html}")
        if not report.complete:
            print(f"note: the run did not finish ({report.status}); this is what it did")
    return verdict_exit(report)


def _check_run_dir(out: Path) -> None:
    """``report DIR``: DIR must be a directory this process can write its reports into."""
    import os

    if not out.exists():
        raise ConfigError(f"{out}: no such run directory; name the --out of a run")
    if not out.is_dir():
        raise ConfigError(
            f"{out}: not a directory; name a run directory (the one holding results.jsonl)"
        )
    from stress.journal.results import RESULTS_FILE

    if (out / RESULTS_FILE).is_dir():  # read_results would look inside it
        raise ConfigError(
            f"{out / RESULTS_FILE}: is a directory, not a journal; name a run directory "
            f"(the one holding the file {RESULTS_FILE})"
        )
    if not os.access(out, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{out}: the run directory is not writable, so its reports cannot be re-rendered "
            "there; copy it somewhere writable"
        )
