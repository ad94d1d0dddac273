"""A key inside an imported run never reaches the terminal: compare and explain, text and --json.

Runs brought in by ``evalkit import`` are stored as given, so a key a foreign harness wrote
into a reason or a case id is in the run. The pages black it out; the command line must too.
Here the key is planted in the imported rows' case id and reason, and the real ``evalkit``
command prints the comparison and the explanation as text and as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import evalkit_process

KEY = "sk-ant-api03-Zq7TESTKEYa1B2c3D4e5F6g7H8"
CASE = f"leak-{KEY}"


def _rows() -> list[dict[str, object]]:
    rows = []
    for condition, passes in (("none", (1, 1, 0)), ("preloaded", (0, 0, 0))):
        for case_id in (CASE, "plain-case"):
            for trial, passed in enumerate(passes):
                rows.append({"case_id": case_id, "condition": condition, "trial": trial,
                             "passed": bool(passed), "score": float(passed),
                             "reason": f"server said: invalid x-api-key {KEY}",
                             "provider": "harness", "model": "m"})
    return rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-redaction")
    source = root / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows()))
    done = evalkit_process("import", source, "--format", "jsonl", "--run-id", "ext",
                           "--runs-dir", root / "runs")
    assert done.returncode == 0, done.stderr
    return root / "runs"


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ("compare", "ext", "--conditions", "none,preloaded"),
        ("compare", "ext", "--conditions", "none,preloaded", "--json"),
        ("explain", "ext", "--case", CASE),
        ("explain", "ext", "--case", CASE, "--json"),
    ],
    ids=["compare", "compare-json", "explain", "explain-json"],
)
def test_a_key_in_an_imported_run_never_reaches_the_terminal(
    runs: Path, argv: tuple[str, ...]
) -> None:
    done = evalkit_process(*argv, "--runs-dir", runs)
    assert done.returncode in (0, 1), done.stderr
    printed = done.stdout + done.stderr
    assert done.stdout.strip(), "the command printed nothing to check"
    assert KEY not in printed and KEY[8:24] not in printed
    assert "[REDACTED]" in printed
    if "--json" in argv:
        json.loads(done.stdout)  # redacted as values: still one JSON object
