"""JUnit XML of a run: one ``<testcase>`` per case x phase, so any CI lists findings natively.

A test suite per phase run (``serial``, ``mixed [stream=per-thread]``, ...); a case that is not
``PASS`` carries a ``<failure>`` whose ``type`` is the verdict and whose text names the
baseline digest and every digest seen with its count. A phase that died (crash, hang) without
call records becomes one ``<error>`` test case named after the phase.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from stress.htmlreport.load import Run, load_run
from stress.records import CaseVerdict, PhaseVerdict
from stress.report_sections import Fingerprint
from stress.vocabulary import PhaseStatus, Verdict

__all__ = ["junit_tree", "write_junit"]


def _failure_text(run: Run, phase: PhaseVerdict, case: CaseVerdict) -> str:
    lines = [
        f"{case.verdict} in {phase.title}: {case.detail}",
        f"baseline digest: {run.baseline.get(case.id) or '(none)'}",
        "digests seen:",
    ]
    seen = sorted(case.digests.items(), key=lambda kv: -kv[1])
    lines += [f"  {d} x {n}" for d, n in seen] or ["  (no successful call)"]
    lines.append(run.verdict_line)
    return "\n".join(lines)


def _suite(run: Run, phase: PhaseVerdict) -> ET.Element:
    failures = [c for c in phase.cases if c.verdict != Verdict.PASS]
    suite = ET.Element(
        "testsuite",
        name=f"aclnn-stress.{phase.title}",
        tests=str(len(phase.cases) or 1),
        failures=str(len(failures)),
        errors="0",
        skipped="0",
        time=f"{phase.seconds:.3f}",
    )
    for case in phase.cases:
        tc = ET.SubElement(
            suite, "testcase", classname=f"aclnn-stress.{phase.title}", name=case.id, time="0"
        )
        if case.verdict != Verdict.PASS:
            failure = ET.SubElement(tc, "failure", type=case.verdict, message=case.detail)
            failure.text = _failure_text(run, phase, case)
    if phase.status != PhaseStatus.DONE and not failures:
        suite.set("errors", "1")
        tc = ET.SubElement(
            suite, "testcase", classname=f"aclnn-stress.{phase.title}", name="(phase)", time="0"
        )
        err = ET.SubElement(tc, "error", type=phase.verdict, message=phase.detail)
        err.text = f"the phase ended {phase.status}: {phase.detail}"
    return suite


def junit_tree(run: Run) -> ET.ElementTree:
    """The ``<testsuites>`` document of a run."""
    root = ET.Element("testsuites", name=f"aclnn-stress {run.dir.name}")
    props = ET.SubElement(root, "properties")
    for name, value in (
        ("diagnosis", run.diagnosis),
        ("explanation", run.explanation),
        ("seed", str(run.seed)),
        ("backend", str(Fingerprint.from_json(run.backend).kind)),
        ("faults", run.faults),
        ("status", run.status),
    ):
        ET.SubElement(props, "property", name=name, value=value)
    for phase in run.phases:
        root.append(_suite(run, phase))
    root.set("tests", str(sum(int(s.get("tests", 0)) for s in root.iter("testsuite"))))
    root.set("failures", str(sum(int(s.get("failures", 0)) for s in root.iter("testsuite"))))
    root.set("errors", str(sum(int(s.get("errors", 0)) for s in root.iter("testsuite"))))
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return tree


def write_junit(run_dir: Path, out: Path) -> Path:
    """Write the JUnit XML of ``run_dir`` to ``out``; returns ``out``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    junit_tree(load_run(Path(run_dir))).write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, out)
    return out
