"""The header reader (stress/ops/header.py) and the role rule (stress/ops/signature.py).

Fixture headers under tests/headers/ (written for this project) reproduce each trap of real
aclnn headers; the simulator's own headers are pinned too.
"""

from __future__ import annotations

import ctypes
import json
import tomllib
from pathlib import Path

import pytest

from stress.errors import ConfigError
from stress.ops.header import doc_tags, find_header, read_header, read_header_text
from stress.ops.signature import role_of

HEADERS = Path(__file__).resolve().parent / "headers"
REPO = Path(__file__).resolve().parent.parent
SIM_INCLUDE = REPO / "stress" / "sim" / "src" / "include"
DECLARATIONS = REPO / "stress" / "ops" / "declarations"

# op -> "name:role" per parameter in C order; role letters i/o/io/a, "?" = may be NULL
EXPECTED = {
    "aclnn_add.h": {
        "aclnnAdd": "self:i other:i alpha:a out:o",
        "aclnnAdds": "self:i other:a alpha:a out:o",
        "aclnnInplaceAdd": "selfRef:io other:i alpha:a",
    },
    "aclnn_rms_norm.h": {"aclnnRmsNorm": "x:i gamma:i epsilon:a yOut:o rstdOut:o"},
    "aclnn_layer_norm.h": {
        "aclnnLayerNorm": "input:i normalizedShape:a weightOptional:i? biasOptional:i? eps:a "
        "out:o meanOutOptional:o? rstdOutOptional:o?",
        "aclnnLayerNormWithImplMode": "input:i normalizedShape:a weightOptional:i? "
        "biasOptional:i? eps:a out:o meanOutOptional:o? rstdOutOptional:o? implMode:a",
    },
    "aclnn_batch_norm_backward.h": {
        "aclnnBatchNormBackward": "gradOut:i input:i weight:i runningMean:i runningVar:i "
        "saveMean:i saveInvstd:i training:a eps:a outputMask:a gradInput:o gradWeight:o gradBias:o"
    },
    "aclnn_mhc_pre_sinkhorn_backward.h": {
        "aclnnMhcPreSinkhornBackward": "gradHin:i gradHPost:i gradHRes:i x:i phi:i alpha:i "
        "bias:i hPre:i hcBeforeNorm:i invRms:i sumOut:i normOut:i hcEps:a gradX:o gradPhi:o "
        "gradAlpha:o gradBias:o"
    },
    # no @param tags: the upstream gradients are inputs by name (rule 4), before "...Out"
    "aclnn_untagged_backward.h": {
        "aclnnBatchNormBackward": "gradOut:i input:i weight:i saveMean:i saveInvstd:i "
        "training:a eps:a outputMask:a gradInput:o gradWeight:o gradBias:o",
        "aclnnGeluBackward": "gradOutput:i self:i saveOut:o gradInput:o",
        "aclnnTanhBackward": "grad_output:i gradOutOptional:i? output:i gradOut:o",
    },
    "aclnn_foreach_add_scalar_list.h": {"aclnnForeachAddScalarList": "x:i scalars:a out:o"},
    # the rule cannot see in-place writes without "Ref" or tags: declarations override these
    "aclnn_generated_inplace.h": {
        "aclnnForeachScaleListInplace": "x1:i x2:i",
        "aclnnCheckFinite": "values:i foundFlag:i",
    },
    "aclnn_attrs.h": {
        "aclnnInplaceMul": "selfRef:io other:i",
        "aclnnMatmul": "self:i mat2:i out:o cubeMathType:a",
        "aclnnCast": "self:i dtype:a out:o",
        "aclnnResize": "self:i scales:a mode:a alignCorners:a seedOffset:a cubicCoeff:a "
        "outputSizeOptional:a? out:o",
        "aclnnConv": "input:i weight:i stride:a groups:a output:o cubeMathType:a",
    },
}
_LETTER = {"input": "i", "output": "o", "inout": "io", "attr": "a"}


def _summary(op) -> str:
    return " ".join(f"{p.name}:{_LETTER[p.role]}{'?' if p.optional else ''}" for p in op.params)


@pytest.mark.parametrize("header", sorted(EXPECTED))
def test_fixture_roles(header):
    info = read_header(HEADERS / header)
    assert {op.name: _summary(op) for op in info.ops} == EXPECTED[header]


def test_types_are_c_names_without_pointer_or_const():
    types = {p.name: p.type for op in read_header(HEADERS / "aclnn_attrs.h").ops for p in op.params}
    assert types["mode"] == "char"
    assert types["cubeMathType"] == "int8_t"
    assert types["dtype"] == "aclDataType"
    assert types["scales"] == "aclFloatArray"
    assert types["seedOffset"] == "uint64_t"
    assert types["cubicCoeff"] == "float"
    bn = read_header(HEADERS / "aclnn_batch_norm_backward.h").ops[0]
    assert bn.param("outputMask").type == "aclBoolArray"
    assert bn.param("training").type == "bool"
    fe = read_header(HEADERS / "aclnn_foreach_add_scalar_list.h").ops[0]
    assert [p.type for p in fe.params] == ["aclTensorList", "aclScalarList", "aclTensorList"]


def test_json_contract():
    data = read_header(HEADERS / "aclnn_add.h").to_json()
    assert set(data) == {"header", "ops"}
    assert data["header"].endswith("aclnn_add.h")
    add = data["ops"][0]
    assert set(add) == {"name", "params"}
    assert add["params"][2] == {"name": "alpha", "type": "aclScalar", "role": "attr",
                                "optional": False}  # fmt: skip
    names = [p["name"] for op in data["ops"] for p in op["params"]]
    assert "workspaceSize" not in names and "executor" not in names
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize(
    ("name", "kind", "const", "tag", "want"),
    [
        ("out", "tensor", False, "in", ("output", False)),  # non-const wins over the tag
        ("selfRef", "tensor", False, None, ("inout", False)),
        ("selfRef", "tensor", True, "in", ("inout", False)),  # Ref wins over the tag
        ("gradX", "tensor", True, "out", ("output", False)),
        ("sumOut", "tensor", True, "in", ("input", False)),  # the tag wins over the name
        ("yOut", "tensor", True, None, ("output", False)),
        ("out", "tensor_list", True, None, ("output", False)),
        ("rstdOutOptional", "tensor", True, None, ("output", True)),
        ("weightOptional", "tensor", True, None, ("input", True)),
        ("x", "tensor", True, None, ("input", False)),
        ("alphaOut", "scalar", True, "out", ("attr", False)),  # only tensors have directions
        ("outputSizeOptional", "int_array", True, None, ("attr", True)),
    ],
)
def test_role_rule(name, kind, const, tag, want):
    assert role_of(name, kind, const, tag) == want


def test_doc_tags_collects_comments_only():
    text = (
        'const char *s = "/* @param [out] fake */";\n'
        "/**\n * @param [in] a: x\n * @param[out] b\n * @param [in, out] c\n */\n"
        "// @param [in/out] d\n"
    )
    tags = doc_tags(text)
    assert tags == [(6, {"a": "in", "b": "out", "c": "inout"}), (7, {"d": "inout"})]


def test_tags_attach_to_the_following_function_only():
    text = (
        "/** @param [out] a */\n"
        "aclnnStatus aclnnFGetWorkspaceSize(const aclTensor *a, uint64_t *workspaceSize,"
        " aclOpExecutor **executor);\n"
        "aclnnStatus aclnnF(void *w, uint64_t s, aclOpExecutor *e, aclrtStream st);\n"
        "aclnnStatus aclnnGGetWorkspaceSize(const aclTensor *a, uint64_t *workspaceSize,"
        " aclOpExecutor **executor);\n"
        "aclnnStatus aclnnG(void *w, uint64_t s, aclOpExecutor *e, aclrtStream st);\n"
    )
    info = read_header_text(text, "inline.h")
    assert info.op("aclnnF").params[0].role == "output"
    assert info.op("aclnnG").params[0].role == "input"


def test_readable_from_any_folder_without_its_includes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    info = read_header(HEADERS / "aclnn_layer_norm.h")
    assert [op.name for op in info.ops] == ["aclnnLayerNorm", "aclnnLayerNormWithImplMode"]


def test_include_dirs_and_defines(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "vendor_api.h").write_text("#define VENDOR_API\n")
    header = tmp_path / "aclnn_custom.h"
    header.write_text(
        '#include "vendor_api.h"\n'
        "VENDOR_API aclnnStatus aclnnCustomGetWorkspaceSize(const aclTensor *x, aclTensor *y,\n"
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
        "VENDOR_API aclnnStatus aclnnCustom(void *w, uint64_t s, aclOpExecutor *e,\n"
        "    aclrtStream stream);\n"
    )
    with pytest.raises(ConfigError, match=r"aclnn_custom\.h:2:\d+: .*expected a C declaration"):
        read_header(header)
    assert _summary(read_header(header, [tmp_path / "inc"]).ops[0]) == "x:i y:o"
    assert _summary(read_header(header, defines=["VENDOR_API="]).ops[0]) == "x:i y:o"


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("unknown_type.h", r"unknown_type\.h:4: parameter 'counts' .* type 'int \*'"),
        ("syntax.h", r"syntax\.h:4:\d+: unexpected 'uint64_t', expected a C declaration"),
        ("no_phase2.h", r"no_phase2\.h:2: aclnnHalfGetWorkspaceSize has no matching 'aclnnHalf"),
        ("no_ops.h", r"no_ops\.h: declares no aclnn operator"),
    ],
)
def test_bad_headers_are_one_line_errors(fixture, message):
    with pytest.raises(ConfigError, match=message) as err:
        read_header(HEADERS / "bad" / fixture)
    assert "\n" not in str(err.value)


def test_header_not_found_names_the_fix(tmp_path):
    with pytest.raises(ConfigError, match=r"aclnn_nope\.h: header not found .* -I"):
        find_header("aclnnop/aclnn_nope.h", [tmp_path])


#: Every operator the simulator's public headers declare, as the role rule reads them: the
#: traps of the real headers are reproduced there (const yOut/rstdOut, const selfRef, the
#: mHC backward's const outputs tagged [out] and saved inputs sumOut/normOut tagged [in],
#: aclnn_add.h's non-const `out` tagged [in]).
SIM_EXPECTED = {
    "aclnnAdd": "self:i other:i alpha:a out:o",
    "aclnnAdds": "self:i other:a alpha:a out:o",
    "aclnnInplaceAdd": "selfRef:io other:i alpha:a",
    "aclnnInplaceAdds": "selfRef:io other:a alpha:a",
    "aclnnCat": "tensors:i dim:a out:o",
    "aclnnLayerNorm": "input:i normalizedShape:a weightOptional:i? biasOptional:i? eps:a out:o "
    "meanOutOptional:o? rstdOutOptional:o?",
    "aclnnMatmul": "self:i mat2:i out:o cubeMathType:a",
    "aclnnMhcPreSinkhorn": "x:i phi:i alpha:i bias:i hcMult:a numIters:a hcEps:a normEps:a "
    "needBackward:a hin:o hPost:o hRes:o hPre:o hcBeforeNorm:o invRms:o sumOut:o normOut:o",
    "aclnnMhcPreSinkhornBackward": "gradHin:i gradHPost:i gradHRes:i x:i phi:i alpha:i bias:i "
    "hPre:i hcBeforeNorm:i invRms:i sumOut:i normOut:i hcEps:a gradX:o gradPhi:o gradAlpha:o "
    "gradBias:o",
    "aclnnMul": "self:i other:i out:o",
    "aclnnInplaceMul": "selfRef:io other:i",
    "aclnnReduceSum": "self:i dim:a keepDims:a dtype:a out:o",
    "aclnnRmsNorm": "x:i gamma:i epsilon:a yOut:o rstdOut:o",
    "aclnnSoftmax": "self:i dim:a out:o",
    "aclnnSoftmaxBackward": "gradOutput:i output:i dim:a out:o",
}


def _simulator_ops() -> dict[str, str]:
    read = {}
    for header in sorted((SIM_INCLUDE / "aclnnop").glob("aclnn_*.h")):
        if header.name == "aclnn_util.h":  # ACLNN_API only, no operator
            continue
        for op in read_header(header).ops:
            read[op.name] = _summary(op)
    return read


def test_simulator_headers_are_pinned():
    """The pinned operators read as pinned (none disappears); an operator added later needs no
    line here (adding one touches its C file, header and corpus only): the next test holds it
    to the declaration that stresses it."""
    read = _simulator_ops()
    assert {op: read.get(op) for op in SIM_EXPECTED} == SIM_EXPECTED


def test_every_simulator_operator_is_declared_by_a_corpus_or_built_in():
    """Each operator a simulator header declares is stressed by a declaration (a corpus/ops
    file or a built-in one), whose parameters are the header's: so tests/test_declared_corpus.py
    runs it, including an operator added without touching this file."""
    declared = set()
    for path in [*(REPO / "corpus" / "ops").glob("*.toml"), *DECLARATIONS.glob("*.toml")]:
        op = tomllib.loads(path.read_text()).get("op", {})
        declared.add(op.get("function"))
    # an in-place variant shares its declared sibling's kernel (aclnnInplaceMul: aclnnMul)
    siblings = {op for op in _simulator_ops() if op.replace("Inplace", "") in declared}
    assert set(_simulator_ops()) - declared - siblings == set()


def test_inspect_prints_json_and_text(capsys):
    from stress.ops.inspect_header import main

    assert main([str(HEADERS / "aclnn_rms_norm.h"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["role"] for p in data["ops"][0]["params"]] == [
        "input", "input", "attr", "output", "output"
    ]  # fmt: skip
    assert main([str(HEADERS / "aclnn_layer_norm.h")]) == 0
    text = capsys.readouterr().out
    assert "aclnnLayerNormWithImplMode" in text
    assert "meanOutOptional" in text and "may be NULL" in text


def test_inspect_bad_header_exits_2(capsys):
    from stress.ops.inspect_header import main

    assert main([str(HEADERS / "bad" / "unknown_type.h")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("aclnn-stress: error: ") and "unknown_type.h:4" in err
    assert "\n" not in err


_P = ctypes.c_void_p
#: The phase-1 C argument types of spec/acl-api.md §4 (what the prototype table held before the
#: mHC operators became declarations): the header read must give exactly these.
_MHC_ARGTYPES = {
    "aclnnMhcPreSinkhorn": (_P,) * 4 + (ctypes.c_int64, ctypes.c_int64, ctypes.c_double,
                                        ctypes.c_double, ctypes.c_bool) + (_P,) * 8,
    "aclnnMhcPreSinkhornBackward": (_P,) * 12 + (ctypes.c_double,) + (_P,) * 4,
}  # fmt: skip


@pytest.mark.parametrize(
    ("header", "op"),
    [
        ("aclnn_mhc_pre_sinkhorn.h", "aclnnMhcPreSinkhorn"),
        ("aclnn_mhc_pre_sinkhorn_backward.h", "aclnnMhcPreSinkhornBackward"),
    ],
)
def test_argtypes_from_the_header_match_the_documented_signature(header, op):
    from stress.ops.signature import phase1_argtypes, phase2_argtypes

    sig = read_header(SIM_INCLUDE / "aclnnop" / header).op(op)
    assert phase1_argtypes(sig)[:-2] == _MHC_ARGTYPES[op]
    assert phase1_argtypes(sig)[-2:] == (ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(_P))
    assert phase2_argtypes(sig) == (_P, ctypes.c_uint64, _P, _P)


def test_untagged_const_grad_out_is_an_input():
    """Rule 4: an untagged const incoming gradient named gradOut is an input although its name
    ends in "Out" (the real BatchNormBackward prototype has one); a tag still wins over it."""
    text = (
        "aclnnStatus aclnnBnBackGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *x,"
        " aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);\n"
        "aclnnStatus aclnnBnBack(void *w, uint64_t s, aclOpExecutor *e, aclrtStream st);\n"
    )
    assert _summary(read_header_text(text, "bn.h").ops[0]) == "gradOut:i x:i gradInput:o"
    tagged = "/** @param [out] gradOut: written */\n" + text
    assert _summary(read_header_text(tagged, "bn.h").ops[0]) == "gradOut:o x:i gradInput:o"
    assert role_of("gradOut", "tensor", True, None) == ("input", False)
    assert role_of("gradOut", "tensor", False, None) == ("output", False)  # non-const: rule 1
    assert role_of("gradHOut", "tensor", True, None) == ("output", False)  # only those names


def test_headers_are_found_in_an_install_and_its_custom_packages(tmp_path, monkeypatch):
    home = tmp_path / "cann"
    (home / "include" / "aclnnop").mkdir(parents=True)
    vendor = home / "opp" / "vendors" / "acme" / "op_api" / "include"
    vendor.mkdir(parents=True)
    (home / "include" / "aclnnop" / "aclnn_rms_norm.h").write_text(
        (HEADERS / "aclnn_rms_norm.h").read_text()
    )
    (vendor / "aclnn_acme.h").write_text((HEADERS / "aclnn_generated_inplace.h").read_text())
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    assert find_header("aclnnop/aclnn_rms_norm.h") == home / "include/aclnnop/aclnn_rms_norm.h"
    assert find_header("aclnn_acme.h") == vendor / "aclnn_acme.h"
    assert read_header("aclnn_acme.h").ops[1].name == "aclnnCheckFinite"


def test_unguarded_cxx_linkage_blocks_are_read():
    text = (
        'extern "C" {\n'
        "typedef struct { int a; } Pair;\n"
        'extern "C" aclnnStatus aclnnPairGetWorkspaceSize(const aclTensor *x, aclTensor *out,\n'
        "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
        "aclnnStatus aclnnPair(void *w, uint64_t s, aclOpExecutor *e, aclrtStream st);\n"
        "}\n"
        "struct After { int b; };\n"
    )
    info = read_header_text(text, "cxx.h")
    assert _summary(info.op("aclnnPair")) == "x:i out:o"
    assert info.op("aclnnPair").line == 3
