"""The gradcheck file's one record: what the writer writes, the HTML reader reads back."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from stress.errors import ConfigError
from stress.gradcheck.classify import Classification
from stress.gradcheck.elements import Element
from stress.gradcheck.result import ElementResult, GradcheckResult
from stress.gradcheck_file import GradcheckElement, GradcheckFile
from stress.htmlreport.load import load_gradcheck

NAN = math.nan


def _result() -> GradcheckResult:
    unconverged = Classification(
        "unconverged", NAN, 1e-7, NAN, 1e-6, NAN, NAN, False, NAN, "no two steps agree"
    )
    agrees = Classification("agrees", 0.5, 1e-7, 1e-8, 1e-6, 2e-6, 1e-7, True, 1e-3, "converged")
    return GradcheckResult(
        params={"B": np.int64(2), "dtype": "fp32"},
        seed=np.int64(7),
        eps=(1e-2, 1e-3),
        fd="float64 reference forward",
        backward="test double",
        backend=None,
        rows=[
            ElementResult(
                Element("x", (np.int64(0), 1)),
                np.float32(0.5),
                1.0,
                (1e-2, NAN),
                (0.5, NAN),
                1e-9,
                (1e-7, math.inf),
                agrees,
            ),
            ElementResult(Element("bias", (3,)), 0.0, 0.0, (), (), 0.0, (), unconverged),
        ],
        notes=["a note"],
        elapsed_s=1.25,
    )


def test_the_writer_writes_json_values_and_null_where_a_number_is_not_finite():
    text = json.dumps(_result().to_json(), allow_nan=False)  # raises on NaN or a numpy value
    doc = json.loads(text)
    assert list(doc)[:3] == ["command", "op", "params"] and doc["command"] == "gradcheck"
    assert doc["seed"] == 7 and doc["params"] == {"B": 2, "dtype": "fp32"}
    x, bias = doc["elements"]
    assert x["steps"] == [1e-2, None] and x["noise_per_step"] == [1e-7, None]
    assert x["index"] == [0, 1] and x["sign_flip"] is True
    assert bias["estimate"] is None and bias["best_step"] is None and bias["rel_diff"] is None
    assert doc["summary"] == {
        "agrees": 1,
        "biased": 0,
        "unconverged": 1,
        "sign_flips": 1,
        "noise_limited": 1,
        "verdict": "unconverged",
        "exit_code": 0,
    }


def test_the_reader_reads_back_what_the_writer_wrote():
    record = _result().record()
    doc = json.loads(json.dumps(record.to_json()))
    back = GradcheckFile.from_json(doc)
    assert back == record
    assert back.to_json() == doc


def test_a_partial_file_reads_with_unknowns():
    g = GradcheckFile.from_json({"command": "gradcheck", "elements": [{"steps": [1e-3, None]}]})
    assert (g.op, g.fd, g.verdict, g.seed, g.params) == ("", "", "?", None, {})
    (e,) = g.elements
    assert e == GradcheckElement.from_json({"steps": [1e-3, None]})
    assert (e.backward, e.steps, e.estimate, e.verdict, e.reason) == (
        0.0,
        (1e-3, None),
        None,
        "?",
        "",
    )


def test_a_value_of_the_wrong_kind_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "gradcheck.json"
    path.write_text(json.dumps({"command": "gradcheck", "elements": [{"scale": "big"}]}))
    with pytest.raises(ConfigError, match=r"gradcheck\.json: not a gradcheck JSON file"):
        load_gradcheck(path)
