"""The JSON writer's pre-check never lets a key through in a large result.

``print_json`` (every ``--json``) checks all strings of a result at once, each distinct
string once, and only reads the result string by string when that check finds something. A
comparison of 100,000 items repeats the same keys and ids hundreds of thousands of times;
here one key, in each form the redactor handles, is planted once (or twice: the same string
in two places) in such a result, in a value, in a dict key inside a tuple, and beside
thousands of clean repeats, and the real writer prints it. The printed bytes are searched by
:func:`tests.security.leak_probes.leaks`, which decodes them independently of the redactor.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit._plain import json_text
from evalkit._redact import MARK, redact_value
from evalkit.cli._common import print_json
from evalkit.stats._frame import json_ready
from tests.security.leak_probes import OPENAI_KEY, leaks, transformations

#: Rows of a result: enough that every key and id repeats hundreds of times (the probe that
#: decodes the printed bytes every way is what bounds it).
ROWS = 400
ENV = "EVALKIT_PRECHECK_TEST_API_KEY"


class _Text(str):
    """A string subclass (what a ``StrEnum`` member or a library's text type is)."""


class _Notes(list[Any]):
    """A list subclass."""


#: Where a key is planted: in plain containers ...
PLACES = ["value", "twice", "tuple-key"]
#: ... and in the subclasses the walk meets less often (it tests exact types first).
SUBCLASS_PLACES = ["str-subclass", "numpy-str", "mapping-subclass", "list-subclass"]


def _result(planted: str, where: str, rows: int = ROWS) -> dict[str, Any]:
    """A comparison-shaped result with ``planted`` at one place among thousands of rows."""
    cases: list[Any] = [
        {"case_id": f"case-{i:05d}", "verdict": "no_change", "estimate": 0.0,
         "reasons": {"baseline": {"trials": 5, "failing": 1, "causes": {"verifier failed": 1},
                                  "example": "verifier failed: exit 1"}, "candidate": None}}
        for i in range(rows)
    ]
    if where == "value":
        cases[rows - 7]["reasons"]["baseline"]["example"] = f"server said: {planted}"
    elif where == "twice":
        for index in (3, rows - 3):
            cases[index]["reasons"]["baseline"]["example"] = f"server said: {planted}"
    elif where == "tuple-key":
        cases[rows // 2]["reasons"]["candidate"] = ({f"note {planted}": 1},)
    elif where == "str-subclass":  # an enum's or a library's string type
        cases[rows - 5]["reasons"]["baseline"]["example"] = _Text(f"server said: {planted}")
    elif where == "numpy-str":
        cases[rows - 5]["reasons"]["baseline"]["example"] = np.str_(f"server said: {planted}")
    elif where == "mapping-subclass":
        cases[rows - 5]["reasons"]["candidate"] = OrderedDict(example=f"said: {planted}")
    elif where == "list-subclass":
        cases[rows - 5]["notes"] = _Notes([1.5, None, f"said: {planted}"])
    return {"verdict": "no_change", "cases": cases, "n_cases": rows}


@pytest.fixture()
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key is a secret of the process, as a provider's key variable makes it."""
    monkeypatch.setenv(ENV, OPENAI_KEY)


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("name", sorted(transformations(OPENAI_KEY)))
def test_a_key_planted_once_in_a_large_result_is_not_printed(
    secret_env: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
    where: str,
) -> None:
    form = transformations(OPENAI_KEY)[name]
    print_json(_result(form, where))
    printed = capsys.readouterr().out
    path = tmp_path / "printed.json"
    path.write_text(printed, encoding="utf-8")
    assert leaks([path], OPENAI_KEY) == []
    assert MARK in printed
    shown = json.loads(printed)
    assert len(shown["cases"]) == ROWS and shown["cases"][0]["case_id"] == "case-00000"


@pytest.mark.parametrize("where", SUBCLASS_PLACES)
@pytest.mark.parametrize("name", ["literal", "base64"])
def test_a_key_inside_a_subclass_of_a_string_mapping_or_list_is_not_printed(
    secret_env: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
    where: str,
) -> None:
    print_json(_result(transformations(OPENAI_KEY)[name], where))
    path = tmp_path / "printed.json"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    assert leaks([path], OPENAI_KEY) == []
    assert MARK in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "planted",
    ["sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2", "Authorization: Bearer abcdefgh12345678",
     "\uff53\uff4b\uff0d\uff50\uff52\uff4f\uff4a\uff0d" + "\uff21\uff11\uff42\uff12" * 5],
    ids=["key-shape", "header", "fullwidth-key-shape"],
)
def test_a_key_shape_without_any_known_secret_is_not_printed(
    capsys: pytest.CaptureFixture[str], planted: str
) -> None:
    print_json(_result(planted, "value"))
    printed = json.loads(capsys.readouterr().out)
    example = printed["cases"][ROWS - 7]["reasons"]["baseline"]["example"]
    assert MARK in example
    assert "A1b2C3d4" not in example and "abcdefgh1234" not in example
    assert "\uff21\uff11\uff42\uff12" * 2 not in example


@pytest.mark.parametrize("where", PLACES + SUBCLASS_PLACES)
def test_a_key_in_a_result_of_twenty_thousand_rows_is_redacted(secret_env: None,
                                                               where: str) -> None:
    """At the size of a 100,000-item comparison, the planted key and only it is replaced."""
    redacted = redact_value(_result(OPENAI_KEY, where, rows=20_000))
    text = json.dumps(redacted)
    assert OPENAI_KEY not in text and OPENAI_KEY[8:24] not in text
    assert text.count(MARK) == (2 if where == "twice" else 1)
    replaced = {"twice": 2, "value": 1, "str-subclass": 1, "numpy-str": 1}.get(where, 0)
    assert text.count("verifier failed: exit 1") == 20_000 - replaced


def test_a_clean_large_result_is_returned_as_it_is(secret_env: None) -> None:
    clean = _result("", "none", rows=20_000)
    assert redact_value(clean) is clean, "nothing to redact: nothing copied"


def test_json_text_writes_nan_and_infinities_as_null_wherever_they_are() -> None:
    data = {"a": [1.5, (float("nan"), {"b": np.float64("inf")})], "c": -math.inf, "d": "x"}
    assert json.loads(json_text(data)) == {"a": [1.5, [None, {"b": None}]], "c": None, "d": "x"}
    assert json_text({"n": 1, "t": (1, 2)}) == '{"n": 1, "t": [1, 2]}'


def test_json_ready_converts_numpy_scalars_and_undefined_numbers() -> None:
    value = {1: [np.int64(3), np.float32(0.5), np.bool_(True), float("nan"), True, None, "s"],
             "x": (np.float64("-inf"), 2.5)}
    ready = json_ready(value)
    assert ready == {"1": [3, 0.5, True, None, True, None, "s"], "x": [None, 2.5]}
    assert [type(v) for v in ready["1"][:3]] == [int, float, bool]
