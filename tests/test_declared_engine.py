"""The engine binds every argument kind a header can declare, and frees all of it.

A header written here declares one parameter of each kind; building an :class:`OpCall` for it
creates every tensor, scalar, array and list (uploading inputs, canary-filling outputs) and
closing it must bring the simulator's live-object counters (aclsimLiveObjects) back to where
they were: lists are destroyed as lists (their members with them, as on CANN), never member by
member. The simulator's real operators then run from their headers with the same accounting.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stress.corpus.parse import corpus_cases
from stress.engine.call.prepared import OpCall, run_once
from stress.grading.digest import DEFAULT_CANARY
from stress.ops.declaration import load_declaration
from stress.ops.declared import to_opspec

HEADER = """\
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus aclnnEveryKindGetWorkspaceSize(const aclTensor *self,
    const aclScalar *alpha, const aclIntArray *dims, const aclFloatArray *scales,
    const aclBoolArray *mask, const aclTensorList *xs, const aclScalarList *coeffs,
    aclDataType dtype, const char *mode, int64_t k, int8_t math, uint64_t flags, double eps,
    float beta, bool keep, const aclTensor *biasOptional, aclTensor *selfRef,
    aclTensorList *outs, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnEveryKind(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
"""

DECLARATION = """\
[op]
header = "aclnn_every_kind.h"
function = "aclnnEveryKind"

[dims]
N = [1, 64]

[dtypes]
T = ["float32", "float16", "bf16"]

[params]
self = { shape = ["N", 2], dtype = "T" }
alpha = { value = 1.5, dtype = "float32" }
dims = [0, "N-1"]
scales = [0.5, 2.0]
mask = [true, false, true]
xs = [{ shape = ["N"], dtype = "T" }, { shape = [3], dtype = "int32", values = "integers" }]
coeffs = [{ value = 2.0, dtype = "float32" }, { value = 3, dtype = "int32" }]
dtype = "T"
mode = "nearest"
k = "N*2"
math = 1
flags = 7
eps = 1e-5
beta = 0.25
keep = true
selfRef = { shape = ["N"], dtype = "float32" }
outs = [{ shape = ["N"], dtype = "T" }, { shape = [2, "N"], dtype = "float32" }]
out = { shape = ["N", 2], dtype = "T" }

[[case]]
id = "every-kind"
N = 5
T = "float16"
seed = 3

[[case]]
id = "every-kind-empty"
N = 1
self = { shape = [0, 2] }
seed = 4
"""

ROOT = Path(__file__).resolve().parent.parent
OPS = ROOT / "corpus" / "ops"


def _live(rt) -> dict[str, int]:
    live = rt.live_objects()
    assert live is not None, "the simulator exports aclsimLiveObjects"
    return live


@pytest.fixture()
def every_kind(tmp_path):
    (tmp_path / "aclnn_every_kind.h").write_text(HEADER)
    (tmp_path / "every_kind.toml").write_text(DECLARATION)
    return load_declaration(tmp_path / "every_kind.toml")


def test_every_argument_kind_is_created_and_freed(rt, ctx, every_kind):
    spec = to_opspec(every_kind)
    for case in corpus_cases(every_kind, spec):
        inputs = spec.generate(case.params, case.seed)
        assert sorted(inputs) == ["self", "selfRef", "xs[0]", "xs[1]"]
        before = _live(rt)
        call = OpCall(ctx, spec, case.params, inputs)
        during = _live(rt)
        # self, selfRef, out + 2 xs members + 2 outs members; alpha + 2 coeffs;
        # 3 arrays; 2 tensor lists + 1 scalar list; biasOptional is NULL
        assert during["tensors"] - before["tensors"] == 7
        assert during["scalars"] - before["scalars"] == 3
        assert during["arrays"] - before["arrays"] == 3
        assert during["lists"] - before["lists"] == 3
        call.close()
        assert _live(rt) == before, case.id


def test_in_out_and_list_outputs_are_downloaded(rt, ctx, every_kind):
    """Without running the operator, the collected outputs are the canary (outputs) and the
    uploaded values (the in-out tensor): what grading sees."""
    spec = to_opspec(every_kind)
    case = corpus_cases(every_kind, spec)[0]
    inputs = spec.generate(case.params, case.seed)
    with OpCall(ctx, spec, case.params, inputs) as call:
        got = call.collect()
    assert sorted(got) == ["out", "outs[0]", "outs[1]", "selfRef"]
    assert got["selfRef"].tobytes() == inputs["selfRef"].tobytes()
    assert got["outs[1]"].shape == (2, 5) and got["outs[1]"].dtype == np.float32
    assert set(got["out"].tobytes()) == {DEFAULT_CANARY & 0xFF}


@pytest.mark.parametrize(
    "name", ["add", "adds", "inplace_add", "mul", "matmul", "rms_norm", "softmax", "reduce_sum",
             "cat", "layer_norm"],
)  # fmt: skip
def test_simulator_operators_run_from_their_headers_without_leaks(rt, ctx, stream, name):
    decl = load_declaration(OPS / f"{name}.toml")
    spec = to_opspec(decl)
    before = _live(rt)
    ran = 0
    for case in corpus_cases(decl, spec):
        inputs = spec.generate(case.params, case.seed)
        if case.negative:
            with pytest.raises(Exception) as err, OpCall(ctx, spec, case.params, inputs) as c:
                c.run(stream)
            assert str(case.expect.status) in str(err.value), case.id
            continue
        out = run_once(ctx, stream, spec, case.params, inputs)
        assert out and all(isinstance(a, np.ndarray) for a in out.values()), case.id
        ran += 1
    assert ran >= 1
    assert _live(rt) == before
