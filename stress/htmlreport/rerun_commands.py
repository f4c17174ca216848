"""Commands a reader of the report can paste: rerun the whole run, replay one failing pair.

Built from the run header (config, corpus, control corpus, baseline, fault set), with the
option names of ``aclnn-stress run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from stress.htmlreport.load import Run

__all__ = ["pair_command", "rerun_command"]

_ALL_PHASES = ("serial", "shuffled", "interleaved", "isolated", "mixed", "control")


def _stream(streams: Sequence[str]) -> str:
    return "both" if len(streams) > 1 else (streams[0] if streams else "shared")


def rerun_command(run: Run, phases: Sequence[str] | None = None) -> str:
    """``aclnn-stress run`` with this run's corpus, baseline, seed and load (``phases``: only
    those, without the control corpus unless ``control`` is among them)."""
    cfg = run.config
    phases = list(phases if phases is not None else cfg.get("phases") or _ALL_PHASES)
    if not run.control:  # the control phase cannot run without its corpus
        phases = [p for p in phases if p != "control"]
    parts = ["aclnn-stress run", *(f"--corpus {c}" for c in run.corpus)]
    control = run.control if "control" in phases else ()
    parts += [f"--control {c}" for c in control] or ["--control none"]
    if tuple(phases) != _ALL_PHASES:
        parts.append(f"--phases {','.join(phases)}")
    if run.baseline_path:
        parts.append(f"--baseline {run.baseline_path}")
    parts.append(f"--seed {cfg.get('seed')}")
    for key in ("threads", "context"):
        if cfg.get(key) is not None:
            parts.append(f"--{key} {cfg[key]}")
    parts.append(f"--stream {_stream(cfg.get('streams') or ['shared'])}")
    if cfg.get("duration") is not None:
        parts.append(f"--duration {cfg['duration']:g}")
    elif cfg.get("iterations") is not None:
        parts.append(f"--iterations {cfg['iterations']}")
    if cfg.get("deterministic") is False:
        parts.append("--no-deterministic")
    command = " ".join(parts)
    return f"ACLSIM_FAULTS={run.faults} {command}" if run.faults else command


def pair_command(run: Run, victim: str, aggressor: str) -> str:
    """A command that shows ``victim`` going wrong next to ``aggressor``: the run's verified
    minimal reproducer when it is this pair, else the interleaved phase replayed (single
    threaded, every pair in a fixed order, so the same cell fails again)."""
    repro = run.reproducer
    if repro and repro.command and set(repro.cases or ()) == {victim, aggressor}:
        return repro.command
    return rerun_command(run, ["interleaved"])
