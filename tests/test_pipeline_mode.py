"""The pipeline API mode (stress.engine.call.pipeline) and the `thread-plan` fault.

A pipeline call runs phase 1 on the worker and hands the executor to the phase's launch thread,
which makes the call's context current and launches it; the worker then synchronizes and
downloads. Under `thread-plan` aclnnReduceSum keeps its plan in a ring in phase 1's thread and
the launch reads the launching thread's ring (op_reduce_sum_plan.c): wrong only when phase 2
runs on another thread, so only the pipeline mode sees it (`mode-dependence`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stress.config import MODES, RunConfig
from stress.engine.run.session import Session
from stress.grading.diagnosis import diagnose
from stress.grading.mode_split import ModeTally
from stress.records import CallRecord, CaseVerdict, PhaseVerdict
from stress.report_sections import ModeSplit
from stress.sim.faults import FAULTS
from stress.vocabulary import Diagnosis, Status, Verdict
from tests._baselines import recorded_baseline
from tests._snippet import script_result

REPO = Path(__file__).resolve().parents[1]
RSUM = [str(REPO / "corpus/ops/reduce_sum.toml")]
MUL = [str(REPO / "corpus/pool/mul.toml")]
FAULT = "thread-plan"


def _run(tmp: Path, corpus, env, modes=MODES, phases=("serial",), shrink=0.0, **more) -> dict:
    """One run against its serial baseline; ``shrink``: the seconds for minimising a failing
    mix (0: none, the default: the tests read the verdicts and the journal)."""
    # the run derives no variants: neither does its baseline (recorded once per corpus and env)
    baseline = recorded_baseline(tmp, corpus, env, RunConfig(seed=0, variants=()))
    config = RunConfig(
        seed=1, phases=phases, duration=0.5, fail_fast=False, modes=modes, variants=(), **more
    )
    session = Session(
        config, corpus, [], baseline_path=baseline, out_dir=tmp / "run", env=env,
        shrink_budget=shrink,
    )  # fmt: skip
    return session.run().to_json()


def _calls(tmp: Path) -> list[dict]:
    lines = (tmp / "run" / "results.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "call"]


def test_the_fault_expects_mode_dependence_over_the_reduce_sum_corpus():
    fault = FAULTS[FAULT]
    assert fault.expected == Diagnosis.MODE_DEPENDENCE
    assert fault.targets == ("aclnnReduceSum",)
    assert fault.corpus == ("corpus/ops/reduce_sum.toml",)


MECHANISM = r"""
import json, threading
from stress import acl
from stress.corpus.parse import load_corpus
from stress.engine.call.inputs import InputCache
from stress.engine.call.opening import CallSite
from stress.engine.call.pipeline import Launcher, run_pipeline
from stress.engine.call.execute import run_call

rt = acl.runtime("sim")
dev = rt.device(0)
ctx = dev.create_context()  # an explicit context: the launch thread has none until it binds
stream = ctx.create_stream()
case = next(c for c in load_corpus(["corpus/ops/reduce_sum.toml"]) if c.id == "rsum-f32")
ins = InputCache(ctx, stream).get(case)
launcher = Launcher()
plain = run_call(ctx, stream, case, ins)
piped = run_pipeline(CallSite(ctx, stream, case, ins), launcher)
again = run_call(ctx, stream, case, ins)  # the worker's own ring still holds its plans
launcher.close()
# what the launcher's binding avoids: phase 2 on a thread with no current context
from stress.engine.call.prepared import OpCall
bare = OpCall(ctx, case.spec, case.params, ins, layout_key=case.key)
bare.phase1()
unbound = []
def launch_unbound():
    try:
        bare.phase2(stream)
        unbound.append(0)
    except acl.AclError as exc:
        unbound.append(exc.code)
t = threading.Thread(target=launch_unbound); t.start(); t.join()
bare.close()
res = {
    "launched": launcher.launched,
    "other_thread": launcher.ident not in (None, threading.get_ident()),
    "plain_ok": plain.status == "ok", "piped_ok": piped.status == "ok",
    "agree": plain.outputs["out"].tobytes() == piped.outputs["out"].tobytes(),
    "again_agrees": plain.outputs["out"].tobytes() == again.outputs["out"].tobytes(),
    "unbound": unbound,
}
print("RESULT " + json.dumps(res), flush=True)
"""


@pytest.mark.parametrize("fault", ["", FAULT])
def test_phase_2_on_the_launch_thread_reads_that_threads_plan(fault):
    res = script_result(MECHANISM, fault)
    # launched once, on another thread than the caller's, under the call's explicit context:
    # a thread without a current context cannot launch (107002, as aclnn's 361001)
    assert res["launched"] == 1 and res["other_thread"], res
    assert res["unbound"] == [361001], res
    assert res["plain_ok"] and res["piped_ok"], res
    assert res["agree"] is (not fault), res  # the fault reads the launch thread's empty ring
    assert res["again_agrees"], res  # a plain call after it: its own plan again


def test_a_failed_launch_is_the_calls_error_read_on_the_launch_thread():
    from stress.engine.call.pipeline import Launcher

    class Boom:
        class context:
            @staticmethod
            def bind() -> None:
                pass

        def phase2(self, stream) -> None:
            raise RuntimeError("launch refused")

    launcher = Launcher()
    try:
        with pytest.raises(RuntimeError, match="launch refused"):
            launcher.launch(Boom(), None, 5.0)  # type: ignore[arg-type]
        assert launcher.launched == 0
    finally:
        launcher.close()
    assert launcher._thread is None


def test_the_fault_is_found_only_in_the_pipeline_mode_and_each_call_is_journaled(tmp_path):
    env = {"ACLSIM_FAULTS": FAULT}
    plain = _run(tmp_path / "plain", RSUM, env, modes=("plain",))
    assert plain["diagnosis"] == "clean", plain["explanation"]
    calls = _calls(tmp_path / "plain")
    assert calls and all("mode" not in r for r in calls)
    report = _run(tmp_path / "all", RSUM, env)
    assert report["diagnosis"] == "mode-dependence", report["explanation"]
    assert "pipeline mode" in report["explanation"], report["explanation"]
    calls = _calls(tmp_path / "all")
    piped = [r for r in calls if r.get("mode") == "pipeline"]
    assert piped and all(r["match"] is False for r in piped), piped[:2]
    others = [r for r in calls if r.get("mode") != "pipeline" and not r.get("warmup")]
    assert others and all(r["match"] for r in others), others[:2]  # plain, repeat, event pass
    modes = report["coverage"]["modes"]
    assert modes["pipeline"] == len(piped) and modes["plain"] > 0, modes
    # every case ran in every mode serially (serial runs max(K, modes) reps)
    cases = {r["case"] for r in calls}
    assert cases and {r["case"] for r in piped} == cases


@pytest.mark.parametrize(
    ("corpus", "context"),
    [(RSUM, "shared"), (MUL, "shared"), (MUL, "per-thread")],
    ids=["reduce_sum", "mul", "mul-per-thread-contexts"],
)
def test_the_clean_simulator_is_clean_in_the_pipeline_mode_on_many_threads(
    tmp_path, corpus, context
):
    # per-thread contexts: the one launch thread binds each worker's context in turn
    report = _run(
        tmp_path, corpus, {}, modes=("plain", "pipeline"), phases=("serial", "mixed"),
        context=context, streams=("per-thread",),
    )  # fmt: skip
    assert report["diagnosis"] == "clean", report["explanation"]
    assert report["coverage"]["modes"]["pipeline"] > 0, report["coverage"]
    mixed = [r for r in _calls(tmp_path) if r["phase"] == "mixed" and r.get("mode")]
    assert {r["worker"] for r in mixed} != {0}, mixed[:2]  # several workers fed the launcher


def _rec(mode: str | None, match: bool) -> CallRecord:
    return CallRecord(phase="serial", case="c", status=Status.OK, match=match, mode=mode)


def test_mode_tally_names_the_one_mode_that_fails_while_plain_passes():
    t = ModeTally()
    for mode, match in ((None, True), ("pipeline", False), ("event", True), ("pipeline", False)):
        t.add(_rec(mode, match))
    split = t.split()
    assert split is not None and "2 of 2 calls in the pipeline mode" in split.evidence
    assert (split.mode, split.failed, split.calls, split.plain) == ("pipeline", 2, 2, 1)
    t.add(_rec("event", False))  # a second failing mode: not one mode's
    assert t.split() is None
    plain_fails = ModeTally()
    plain_fails.add(_rec(None, False))
    plain_fails.add(_rec("pipeline", False))
    assert plain_fails.split() is None
    no_plain = ModeTally()
    no_plain.add(_rec("pipeline", False))
    assert no_plain.split() is None  # nothing to compare with


def _evidence(failed: int, calls: int, plain: int, mode: str = "pipeline") -> ModeSplit | None:
    t = ModeTally()
    for i in range(calls):
        t.add(_rec(mode, i >= failed))
    for _ in range(plain):
        t.add(_rec(None, True))
    return t.split()


def _phase(name: str, split: ModeSplit | None, verdict=Verdict.MISMATCH_STABLE) -> PhaseVerdict:
    evidence = "" if split is None else split.evidence
    case = CaseVerdict("c", verdict, 10, mode_dependence=evidence, mode_split=split)
    return PhaseVerdict(name, verdict, (case,))


def test_the_diagnosis_needs_stronger_mode_evidence_on_many_threads():
    serial = [_phase("serial", _evidence(1, 1, 1))]
    assert diagnose(serial)[0] == Diagnosis.MODE_DEPENDENCE
    assert "pipeline mode" in diagnose(serial)[1] and "serially" in diagnose(serial)[1]
    # serial sampled under --budget without the case: shuffled's calls on one thread decide
    shuffled = [_phase("serial", None, Verdict.PASS), _phase("shuffled", _evidence(1, 1, 1))]
    assert diagnose(shuffled)[0] == Diagnosis.MODE_DEPENDENCE
    plain_fails = [_phase("serial", None, Verdict.PASS), _phase("shuffled", None)]
    assert diagnose(plain_fails)[0] == Diagnosis.ORDER_DEPENDENCE  # no mode evidence: as before
    strong_iso = [_phase("serial", None, Verdict.PASS), _phase("isolated", _evidence(5, 6, 7))]
    assert diagnose(strong_iso)[0] == Diagnosis.MODE_DEPENDENCE
    assert "on many threads" in diagnose(strong_iso)[1]
    # one failing call, or too few plain calls beside it: a race may have hit one mode by chance
    for weak in (_evidence(1, 2, 7), _evidence(5, 6, 3), _evidence(2, 6, 7)):
        assert weak is not None and not weak.strong
        phases = [_phase("serial", None, Verdict.PASS), _phase("isolated", weak)]
        assert diagnose(phases)[0] == Diagnosis.SELF_RACE, weak
    # the burst alone does not decide it (its calls per mode are few)
    burst = [_phase("serial", None, Verdict.PASS), _phase("burst", _evidence(5, 6, 7))]
    assert diagnose(burst)[0] == Diagnosis.CROSS_CALL_CONTAMINATION
