"""The run's schedule: phase order, fail-fast stop rule, budget division, first-failure timing."""

from __future__ import annotations

import pytest
from test_fault_diagnosis import AT_RECORD, EXPECTED, run_fault

from stress.config import PHASES, RunConfig
from stress.engine.run.schedule import (
    BURST_SECONDS,
    FOCUS,
    FOCUS_SECONDS,
    STEP_OVERHEAD_S,
    BurstFindings,
    Scheduler,
    Step,
    burst_findings,
    focus_steps,
    plan,
    settled,
    settled_at,
)
from stress.grading.diagnosis import BURST_ONLY
from stress.journal.lines import typed_line


def test_phases_run_in_the_order_the_diagnosis_weighs_them():
    assert PHASES[:2] == ("burst", "control")
    steps = plan(RunConfig(streams=("shared", "per-thread")))
    assert [s.phase for s in steps[:4]] == ["burst", "burst", "control", "control"]
    assert {s.variant for s in steps if s.phase == "serial"} == {""}


def test_settled_needs_the_control_unless_crash_or_hang():
    assert not settled("clean", ["burst", "control"], PHASES)
    assert settled("crash", ["burst"], PHASES) and settled("hang", ["burst"], PHASES)
    assert not settled("unwritten-output", ["burst"], PHASES)
    assert settled("unwritten-output", ["burst", "control"], PHASES)
    assert settled("self-race", ["serial", "isolated"], ("serial", "isolated"))
    assert not settled("self-race", ["isolated"], ("isolated",), phase_done=False)
    # a failure only the burst saw never stands early: the diagnostic phases must look
    burst_only = BURST_ONLY + "x in burst"
    assert not settled("cross-call-contamination", ["burst", "control"], PHASES, burst_only)


def test_budget_is_divided_across_the_concurrent_phases_left():
    cfg = RunConfig(budget_s=20.0, streams=("shared",))
    steps = plan(cfg)
    s = Scheduler(cfg, steps)
    assert s.duration(0, 0.0) == pytest.approx(min(BURST_SECONDS, 2.0))
    i = [st.phase for st in steps].index("isolated")
    rest = steps[i:]
    # isolated, interleaved (sampling pairs to fit its share) and mixed are left
    expect = (20.0 - 5.0 - STEP_OVERHEAD_S * len(rest)) / 3
    assert s.duration(i, 5.0) == pytest.approx(expect)
    # serial and shuffled: a cap (the share a timed phase would get) to sample cases within
    serial = [st.phase for st in steps].index("serial")
    # (the steps from serial on: shuffled twice, at fresh and at recycled addresses)
    assert [st.variant for st in steps if st.phase == "shuffled"] == ["", "allocator=recycle"]
    left = len(steps) - serial
    assert s.duration(serial, 5.0) == pytest.approx((15.0 - STEP_OVERHEAD_S * left) / 3)
    one = RunConfig(streams=("shared",))
    assert Scheduler(one, plan(one)).duration(serial, 5.0) is None
    assert s.duration(i, 19.0) > 0  # never zero or negative, however late
    assert s.config_for(i, 5.0).duration == pytest.approx(round(expect, 3))
    # without a budget, --duration per concurrent phase and the short burst
    short = RunConfig(duration=3.0, streams=("shared",))
    plain = Scheduler(short, plan(short))
    assert plain.duration(0, 0.0) == BURST_SECONDS and plain.duration(1, 0.0) == 3.0
    inter = [st.phase for st in plan(short)].index("interleaved")
    assert plain.duration(inter, 0.0) is None  # every pair: only --budget bounds the matrix
    left = len(steps) - inter  # interleaved and mixed
    assert s.duration(inter, 5.0) == pytest.approx((15.0 - STEP_OVERHEAD_S * left) / 2)


def test_fail_fast_run_times_first_failure_and_diagnosis(tmp_path):
    report = run_fault(
        tmp_path, "empty-skip", streams=("shared",), duration=1.0, fail_fast=True, variants=()
    )
    assert report["diagnosis"] == "unwritten-output", report["explanation"]
    names = [p["name"] for p in report["phases"]]
    assert names == ["burst", "control"], names  # settled once the control ran clean
    assert any(n.startswith("fail-fast:") and "skipped serial" in n for n in report["notes"])
    first, diag = report["timing"]["first_detection_s"], report["timing"]["diagnosis_s"]
    assert first is not None and diag is not None and 0 < first <= diag


def test_clean_run_has_null_timings(tmp_path):
    report = run_fault(
        tmp_path, "", phases=("burst", "serial"), streams=("shared",), fail_fast=True, variants=()
    )
    assert report["diagnosis"] == "clean"
    assert report["timing"] == {"first_detection_s": None, "diagnosis_s": None}
    assert [p["name"] for p in report["phases"]] == ["burst", "serial"]


def _burst_call(case: str, variant: str, failed: bool, **extra: object) -> dict:
    status = {"status": "ok", "match": not failed}
    return {"type": "call", "phase": "burst", "case": case, "variant": variant, **status, **extra}


def test_burst_findings_name_the_failing_cases_streams_and_partners():
    pt, sh = "stream=per-thread", "stream=shared"
    records = [
        {"type": "run"},
        _burst_call("a", sh, False, rep=0, round=0),  # the serial pass
        _burst_call("b", pt, True, round=4),
        _burst_call("c", pt, False, round=4),  # in flight with b when b failed
        _burst_call("d", pt, False, round=5),
        _burst_call("add-1", pt, True, round=5),  # a control case
        _burst_call("c", pt, True, round=6, warmup=True),  # warm-up calls never count
    ]
    found = burst_findings([typed_line(r) for r in records], ["a", "b", "c", "d"])
    assert found.cases == ("b",)
    assert found.variants == {pt} and found.control_variants == {pt}
    assert found.partners == ("c", "d")  # round 5 failed too (the control case)


def test_after_a_failing_burst_the_diagnostic_steps_are_short_and_focused():
    cfg = RunConfig(streams=("shared", "per-thread"))
    steps = plan(cfg)
    burst, rest = steps[:2], steps[2:]
    found = BurstFindings(("a", "b", "c"), frozenset({"stream=shared", "stream=per-thread"}))
    new = focus_steps(rest, burst, found)
    head = [(s.phase, s.variant) for s in new if s.confirm and FOCUS in s.variant]
    pt = f"stream=per-thread {FOCUS}"
    # the pairs last: when mixed fails beside a clean isolated it is cross-call contamination
    # whatever they say, so they are waited for only when isolated fails or mixed passes
    assert head == [("control", pt), ("isolated", pt), ("mixed", pt), ("interleaved", FOCUS)]
    phases = [s.phase for s in new]
    # rank order kept otherwise: control, then serial and shuffled, then the focused rest
    assert phases[:6] == ["control", "serial", "shuffled", "isolated", "mixed", "interleaved"]
    # serial on the failing cases, whole; shuffled on a sample with them first, short (its
    # deadline comes once their calls ran), ending at its first failing call
    serial = [s for s in new[:6] if s.phase == "serial"]
    assert [(s.variant, s.focus, s.confirm) for s in serial] == [(FOCUS, ("a", "b", "c"), False)]
    shuffled = [(s.focus, s.first, s.confirm, s.seconds) for s in new[:6] if s.phase == "shuffled"]
    assert shuffled == [((), ("a", "b", "c"), True, FOCUS_SECONDS)]
    confirm = [s for s in new if s.confirm and s.phase != "shuffled"]
    focused = [s for s in confirm if s.phase != "control"]
    assert focused and all(s.focus == ("a", "b", "c") for s in focused)
    assert confirm and all(s.seconds is not None and s.seconds <= 1.0 for s in confirm)
    # the fallback: every step of the plan not already run whole (the whole serial too), in
    # order, after them (the shuffled run in recycled blocks among them: the burst failed at
    # fresh addresses)
    fallback = [s for s in rest if s.phase != "shuffled" or s.variant]
    assert new[6:] == fallback and any(s.allocator == "recycle" for s in fallback)
    assert [s for s in fallback if s.phase == "serial"] == [Step("serial", "", "shared")]
    # one corpus case failed: the cross-call phases take the cases it met as well
    alone = BurstFindings(("a",), frozenset({"stream=per-thread"}), partners=("x", "y"))
    cross = [s for s in focus_steps(rest, burst, alone) if s.phase == "mixed" and s.confirm]
    assert cross[0].focus == ("a", "x", "y")
    # one failing case that met no other: its interleaved pairs with every case, still short
    lone = BurstFindings(("a",), frozenset({"stream=per-thread"}))
    pairs = [s for s in focus_steps(rest, burst, lone) if s.phase == "interleaved" and s.confirm]
    assert len(pairs) == 1 and pairs[0].focus == () and pairs[0].seconds == FOCUS_SECONDS
    # the control failed in the burst under shared streams: the control runs there too
    both = BurstFindings((), frozenset({"stream=shared"}), frozenset({"stream=shared"}))
    ctl = [s.variant for s in focus_steps(rest, burst, both) if s.confirm and s.variant]
    assert ctl == [f"stream=shared {FOCUS}"]
    assert Scheduler(cfg, [*burst, *new]).duration(2, 0.0) == FOCUS_SECONDS


def test_a_failing_view_variant_is_repeated_serially_beside_its_contiguous_twin():
    pt = "stream=per-thread"
    calls = [
        _burst_call(c, pt, failed, round=1)
        for c, failed in (("a@pad", True), ("b@transpose", False), ("c", False))
    ]
    found = burst_findings([typed_line(r) for r in calls], ["a", "a@pad", "b", "b@transpose", "c"])
    assert found.cases == ("a@pad",) and found.twins == ("a",)
    steps = plan(RunConfig(streams=("per-thread",)))
    serial = [s for s in focus_steps(steps[1:], steps[:1], found) if s.phase == "serial"]
    assert serial[0].focus == ("a@pad", "a")  # the twin seen passing, or no view-dependence
    assert serial[1] == Step("serial", "", "shared")  # the whole one: the fallback


def test_once_one_burst_failed_the_next_policys_burst_waits_in_the_fallback():
    cfg = RunConfig(streams=("shared", "per-thread"))
    steps = plan(cfg)
    assert [s.variant for s in steps[:2]] == ["stream=per-thread", "stream=shared"]
    found = BurstFindings(("a",), frozenset({"stream=per-thread"}), partners=("b", "c"))
    new = focus_steps(steps[1:], steps[:1], found)
    ctl = [s.variant for s in new if s.phase == "control" and s.confirm]
    assert ctl == [f"stream=per-thread {FOCUS}"]
    bursts = [k for k, s in enumerate(new) if s.phase == "burst"]
    last_focused = max(k for k, s in enumerate(new) if s.confirm)
    assert len(bursts) == 1 and bursts[0] > last_focused  # in the fallback


def test_a_burst_only_diagnosis_is_provisional_in_the_diagnosis_time():
    c = "cross-call-contamination"
    history = [(3.0, c, BURST_ONLY + "x in burst"), (5.0, c, BURST_ONLY + "x"), (8.0, c, "mixed")]
    assert settled_at(history) == 8.0  # confirmed by the phase that ended at 8 s
    assert settled_at(history[:2]) == 3.0  # never confirmed: it stood since the burst
    assert settled_at([(2.0, "clean", "")]) is None


def test_a_failing_burst_is_diagnosed_by_short_focused_steps(tmp_path):
    report = run_fault(tmp_path, "shared-scratch", fail_fast=True, variants=())
    assert report["diagnosis"] == "self-race", report["explanation"]
    names = [f"{p['name']} {p['variant']}".strip() for p in report["phases"]]
    # the shared-stream burst waits in the fallback: the per-thread one failed first
    assert names[1:] == [
        f"control stream=per-thread {FOCUS}",
        f"serial {FOCUS}",
        "shuffled",
        f"isolated stream=per-thread {FOCUS}",
        f"mixed stream=per-thread {FOCUS}",
        f"interleaved {FOCUS}",  # a self-race stands only once the pairs are clean
    ], names
    assert any(n.startswith("diagnosing: the burst failed") for n in report["notes"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "fault", [f for f in EXPECTED if f not in ("scratch-pool", "plan-cache", *AT_RECORD)]
)  # plan-cache needs --variants twins (tests/test_twins.py)
def test_fail_fast_with_focused_steps_diagnoses_each_fault(tmp_path, fault):
    """The default protocol as the CLI runs it (fail-fast, both stream policies): the focused
    diagnostic steps (or the full phases after them) give each fault its expected diagnosis."""
    report = run_fault(tmp_path, fault, duration=3.0, fail_fast=True, call_timeout=3.0)
    assert report["diagnosis"] == EXPECTED[fault], (report["explanation"], report["notes"])
    if report["diagnosis"] != "clean":
        assert report["timing"]["diagnosis_s"] >= report["timing"]["first_detection_s"]


def test_the_burst_opens_free_running_on_per_thread_streams_and_ends_with_the_serial_pass(
    tmp_path,
):
    from test_fault_diagnosis import CONTROL, CORPUS

    from stress.corpus import load_corpus
    from stress.journal.results import read_results

    report = run_fault(tmp_path, "", phases=("burst", "control"), duration=0.5)
    assert report["diagnosis"] == "clean"
    calls = [
        r
        for r in read_results(tmp_path / "run--1")
        if r.get("type") == "call" and r.get("phase") == "burst" and not r.get("warmup")
    ]
    assert calls[0]["variant"] == "stream=per-thread"  # the more concurrent policy first
    from stress.config import RunConfig
    from stress.corpus.variants import run_variants

    # and its view and size variants
    cases = {c.id for c in run_variants(load_corpus(CORPUS), RunConfig())}
    control = {c.id for c in load_corpus(CONTROL)}
    for variant in ("stream=per-thread", "stream=shared"):
        mine = [r for r in calls if r["variant"] == variant]
        serial = [i for i, r in enumerate(mine) if r.get("rep") == 0]
        assert serial == list(range(len(mine) - len(serial), len(mine)))  # the pass comes last
        assert {mine[i]["case"] for i in serial} == cases | control  # every case, once
        concurrent = mine[: serial[0]]
        aligned = next(i for i, r in enumerate(concurrent) if "fill" in r)  # aligned rounds
        opening = concurrent[:aligned]  # free-running before them (time-based: the view
        assert len(opening) >= 16, len(opening)  # variants' slower calls make it shorter)
        share = sum(r["case"] in control for r in opening) / len(opening)
        assert share < 0.35, share  # mostly the corpus under test; the control alongside


def test_the_budget_left_is_divided_net_of_the_overhead_the_steps_measured():
    config = RunConfig(budget_s=20.0)
    s = Scheduler(config, plan(config))
    mixed = len(s.steps) - 1
    before = s.duration(mixed, 10.0)
    assert before == pytest.approx(10.0 - STEP_OVERHEAD_S)  # the estimate, nothing measured yet
    iso = [st.phase for st in s.steps].index("isolated")
    s.observe(iso, wall_s=4.5, given_s=2.0)  # a big corpus: 2.5 s of child start and inputs
    s.observe(0, wall_s=1.0, given_s=None)  # a step given no seconds says nothing
    assert s.step_overhead == pytest.approx(2.5)
    assert s.duration(mixed, 10.0) == pytest.approx(10.0 - 2.5)
    s.observe(iso, wall_s=2.1, given_s=2.0)  # cheaper steps never push it under the floor
    s.observe(iso, wall_s=2.0, given_s=2.0)
    assert s.step_overhead == pytest.approx(max(STEP_OVERHEAD_S, 2.6 / 3))
