"""The repeat and event API modes (stress.engine.call.repeatable, .event_mode) and the
`executor-reuse` fault.

A repeatable executor is launched three times: twice at phase 1's addresses, then rebound
(aclSetInputTensorAddr / aclSetOutputTensorAddr) to fresh buffers while the old ones are
overwritten. Under the fault aclnnMul keeps `other`'s address from the first launch
(op_binary.c), so only the rebound launch reads the stale buffer: plain mode never sees it.
aclnnCat is declared not repeatable (corpus/ops/cat.toml): marking it must fail with 561000.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stress.config import MODES, RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.run.session import Session
from stress.errors import ConfigError
from stress.ops.declaration import parse_declaration
from stress.sim.faults import FAULTS
from stress.vocabulary import Diagnosis
from tests._baselines import recorded_baseline
from tests._snippet import script_result

REPO = Path(__file__).resolve().parents[1]
MUL = [str(REPO / "corpus/pool/mul.toml")]
CAT = [str(REPO / "corpus/ops/cat.toml")]
FAULT = "executor-reuse"


def _run(tmp: Path, corpus, env, modes=MODES, phases=("serial",)) -> dict:
    # the run derives no variants: neither does its baseline (recorded once per corpus and env)
    baseline = recorded_baseline(tmp, corpus, env, RunConfig(seed=0, variants=()))
    config = RunConfig(
        seed=1, phases=phases, duration=0.5, fail_fast=False, modes=modes, variants=()
    )
    session = Session(
        config, corpus, [], baseline_path=baseline, out_dir=tmp / "run", env=env,
        shrink_budget=0,  # no shrinking: nothing here reads a reproducer
    )  # fmt: skip
    return session.run().to_json()


def _calls(tmp: Path) -> list[dict]:
    lines = (tmp / "run" / "results.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "call"]


def test_the_fault_expects_executor_reuse():
    assert FAULTS[FAULT].expected == Diagnosis.EXECUTOR_REUSE
    assert FAULTS[FAULT].targets == ("aclnnMul",)


MECHANISM = r"""
import json
from stress import acl
from stress.acl.twostage import launch
from stress.corpus.parse import load_corpus
from stress.engine.call.inputs import InputCache
from stress.engine.call.prepared import OpCall
from stress.engine.call.repeatable import RepeatableCall

rt = acl.runtime("sim")
ctx = rt.device(0).default_context
ctx.bind()
stream = ctx.create_stream()
api = rt.api
mul = next(c for c in load_corpus(["corpus/pool/mul.toml"]) if c.id == "pool-mul")
cat = next(c for c in load_corpus(["corpus/ops/cat.toml"]) if c.id == "cat-f32")
res = {}

# single-use: phase 2 consumes the executor, a second launch is refused
with OpCall(ctx, mul.spec, mul.params, InputCache(ctx, stream).get(mul)) as oc:
    oc.phase1()
    executor = oc._executor[0]
    oc.phase2(stream)
    stream.synchronize()
    try:
        launch(api, mul.spec.function, None, 0, executor, stream, mul.spec.signature)
        res["second_launch"] = 0
    except acl.AclError as exc:
        res["second_launch"] = exc.code

def outputs(call, ptrs):
    return call.collect_from(ptrs)["out"].tobytes().hex()

ins = InputCache(ctx, stream).get(mul)
with RepeatableCall(ctx, mul.spec, mul.params, ins) as rc:
    rc.phase1()
    res["mark"] = rc.mark()
    first = rc.addresses()
    rc.relaunch(stream); stream.synchronize()
    a = outputs(rc, first)
    rc.refill(first); rc.relaunch(stream); stream.synchronize()
    res["again_agrees"] = outputs(rc, first) == a
    fresh = rc.fresh_set()
    rc.rebind(fresh)
    rc.poison(first)  # the left buffers: a kernel still reading them reads the poison
    rc.refill(fresh); rc.relaunch(stream); stream.synchronize()
    res["rebound_agrees"] = outputs(rc, fresh) == a
    executor = rc.executor
res["destroyed_again"] = api.raw.aclDestroyAclOpExecutor(executor)  # close destroyed it
api.recent_error_message()

with RepeatableCall(ctx, cat.spec, cat.params, InputCache(ctx, stream).get(cat)) as rc:
    rc.phase1()
    res["cat_mark"] = rc.mark()
print("RESULT " + json.dumps(res), flush=True)
"""


@pytest.mark.parametrize("fault", ["", FAULT])
def test_repeatable_executors_in_the_binding_and_the_simulator(fault):
    res = script_result(MECHANISM, fault)
    assert res["second_launch"] == 161002, res  # a single-use executor runs once
    assert res["mark"] == 0 and res["again_agrees"], res  # marked: launched again, same result
    # rebound: the kernel reads the new buffers (clean); the fault reads the poisoned old one
    assert res["rebound_agrees"] is (not fault), res
    assert res["destroyed_again"] == 161002, res  # aclDestroyAclOpExecutor freed it on close
    assert res["cat_mark"] == 561000, res  # declared not repeatable: nnopbase's ACLNN_ERR_INNER


def test_the_fault_is_found_only_in_the_repeat_mode_and_each_mode_is_journaled(tmp_path):
    env = {"ACLSIM_FAULTS": FAULT}
    plain = _run(tmp_path / "plain", MUL, env, modes=("plain",))
    assert plain["diagnosis"] == "clean", plain["explanation"]
    calls = _calls(tmp_path / "plain")
    assert calls and all("mode" not in r for r in calls)
    report = _run(tmp_path / "both", MUL, env)
    assert report["diagnosis"] == "executor-reuse", report["explanation"]
    assert "after rebinding its buffers" in report["explanation"], report["explanation"]
    calls = _calls(tmp_path / "both")
    repeat = [r for r in calls if r.get("mode") == "repeat"]
    assert {r["launch"] for r in repeat} == {0, 1, 2}, repeat[:3]
    assert all(bool(r.get("rebound")) is (r["launch"] == 2) for r in repeat)
    assert any("mode" not in r and not r.get("warmup") for r in calls)  # plain calls too
    assert any(r.get("mode") == "event" and r.get("match") for r in calls)  # and event calls
    failed = [r for r in calls if r.get("match") is False]
    assert failed and all(r.get("rebound") for r in failed), failed[:2]  # only rebound ones
    modes = report["coverage"]["modes"]
    assert modes["executors"] > 0 and modes["rebound"] == modes["executors"], modes


@pytest.mark.parametrize("corpus", [MUL, CAT], ids=["mul", "cat"])
@pytest.mark.parametrize("modes", [("repeat",), MODES], ids=["repeat", "all"])
def test_the_clean_simulator_is_clean_under_every_mode(tmp_path, corpus, modes):
    report = _run(tmp_path, corpus, {}, modes=modes, phases=("serial", "isolated"))
    assert report["diagnosis"] == "clean", report["explanation"]
    assert report["coverage"]["modes"]["launches"] > 0
    assert (report["coverage"]["modes"]["event"] > 0) is ("event" in modes)
    refused = report["coverage"]["modes"]["refused"]
    assert (refused > 0) is (corpus == CAT), report["coverage"]  # the negative check ran


def test_cat_is_declared_not_repeatable_and_mul_is_not():
    (cat,) = {c.spec.not_repeatable for c in load_corpus(CAT)}
    assert "not repeatable" in cat
    assert {c.spec.not_repeatable for c in load_corpus(MUL)} == {""}


def test_a_bad_not_repeatable_field_names_the_file_and_the_field():
    data = {"op": {"header": "aclnnop/aclnn_cat.h", "function": "aclnnCat", "not_repeatable": 1}}
    with pytest.raises(ConfigError, match=r"x\.toml \[op\], field 'not_repeatable'"):
        parse_declaration(data, "x.toml")


def test_modes_option_is_validated_and_replayed():
    with pytest.raises(ConfigError, match="--modes: unknown mode 'pipe'"):
        RunConfig(modes=("pipe",)).validate()
    config = RunConfig(modes=("repeat",)).validate()
    assert "--modes repeat" in config.to_cli_args()
    assert RunConfig.from_json(config.to_json()).modes == ("repeat",)
    assert "--modes" not in " ".join(RunConfig().to_cli_args())
