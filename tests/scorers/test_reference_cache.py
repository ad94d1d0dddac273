"""``cases validate`` reuses passed reference checks while nothing they depend on changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.cases import load_suite
from evalkit.sandbox import SANDBOX_ENV, Limits, sandbox_fingerprint
from evalkit.scorers import REFERENCE_CACHE_DIR, ReferenceCache, reference_check_key
from tests.conftest import evalkit_cli

#: The one case of the tiny suite that runs commands (a solution and a verifier).
EXECUTION_CASE = "make-report"


def _validate(suite: Path, runs: Path, *extra: str) -> tuple[int, dict[str, object]]:
    done = evalkit_cli("cases", "validate", suite, "--runs-dir", runs, "--json", *extra)
    return done.returncode, json.loads(done.stdout)


def _entries(runs: Path) -> list[Path]:
    return sorted((runs / REFERENCE_CACHE_DIR).glob("*/*.json"))


def test_a_second_validate_reuses_the_passed_check(
    tiny_suite: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    code, first = _validate(tiny_suite, runs)
    assert (code, first["valid"], first["reference_cache_hits"]) == (0, True, 0)
    [entry] = _entries(runs)
    stored = json.loads(entry.read_text())
    assert stored["case_id"] == EXECUTION_CASE and stored["passed"] is True
    suite = load_suite(tiny_suite)
    assert stored["key"] == reference_check_key(suite, suite.case(EXECUTION_CASE))
    code, second = _validate(tiny_suite, runs)
    assert (code, second["valid"], second["reference_cache_hits"]) == (0, True, 1)


def test_the_text_output_says_checks_came_from_the_cache(
    tiny_suite: Path, tmp_path: Path
) -> None:
    args = ["cases", "validate", str(tiny_suite), "--runs-dir", str(tmp_path / "runs")]
    done = evalkit_cli(*args)
    assert done.returncode == 0
    assert "cached" not in done.stdout
    done = evalkit_cli(*args)
    assert done.returncode == 0
    out = done.stdout
    assert "every reference passes its case (1 passed unchanged before: cached" in out
    assert "--no-cache" in out


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("fixtures/make-report/data.txt", None, "a\nb\nc\nd\n"),  # the fixture
        ("cases/execution.yaml", "pattern: '^3$'", "pattern: '^4$'"),  # a verifier
        ("cases/execution.yaml", "tr -d ' ' > report.txt", "tr -d ' ' > other.txt"),  # solution
    ],
)
def test_an_edit_that_breaks_the_reference_is_checked_again(
    tiny_suite: Path,
    tmp_path: Path,
    path: str,
    old: str | None,
    new: str,
) -> None:
    runs = tmp_path / "runs"
    assert _validate(tiny_suite, runs)[0] == 0
    target = tiny_suite / path
    target.write_text(new if old is None else target.read_text().replace(old, new))
    code, result = _validate(tiny_suite, runs)
    assert code == 1 and result["valid"] is False
    assert result["reference_cache_hits"] == 0
    [failure] = result["reference_failures"]
    assert isinstance(failure, str) and failure.startswith(f"{EXECUTION_CASE}: ")


def test_failed_checks_are_not_stored(
    tiny_suite: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    (tiny_suite / "fixtures/make-report/data.txt").write_text("only one line\n")
    assert _validate(tiny_suite, runs)[0] == 1
    assert _entries(runs) == []
    code, again = _validate(tiny_suite, runs)
    assert code == 1 and again["reference_cache_hits"] == 0


def test_no_cache_runs_the_check_even_when_the_cache_says_it_passed(
    tiny_suite: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    (tiny_suite / "fixtures/make-report/data.txt").write_text("only one line\n")
    suite = load_suite(tiny_suite)
    key = reference_check_key(suite, suite.case(EXECUTION_CASE))
    assert key is not None
    ReferenceCache(runs / REFERENCE_CACHE_DIR).record_pass(key, EXECUTION_CASE, 0.0)
    code, trusted = _validate(tiny_suite, runs)
    assert (code, trusted["reference_cache_hits"]) == (0, 1)  # a forged entry is believed ...
    code, fresh = _validate(tiny_suite, runs, "--no-cache")
    assert code == 1 and fresh["reference_cache_hits"] == 0  # ... until --no-cache
    assert "the reference scores" in str(fresh["reference_failures"])


def test_a_damaged_entry_is_a_miss_and_is_rewritten(
    tiny_suite: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    assert _validate(tiny_suite, runs)[0] == 0
    [entry] = _entries(runs)
    original = entry.read_text()
    for damage in ("{not json", json.dumps({**json.loads(original), "key": "0" * 16}), ""):
        entry.write_text(damage)
        code, result = _validate(tiny_suite, runs)
        assert (code, result["reference_cache_hits"]) == (0, 0)
        rewritten = json.loads(entry.read_text())
        assert rewritten["key"] == json.loads(original)["key"] and rewritten["passed"] is True


def test_checks_without_the_sandbox_are_never_cached(
    tiny_suite: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SANDBOX_ENV, "off")
    runs = tmp_path / "runs"
    for _ in range(2):
        code, result = _validate(tiny_suite, runs)
        assert (code, result["reference_cache_hits"]) == (0, 0)
    assert _entries(runs) == []
    suite = load_suite(tiny_suite)
    assert reference_check_key(suite, suite.case(EXECUTION_CASE)) is None


def test_the_key_covers_the_sandbox_the_suite_settings_and_the_whole_case(
    tiny_suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load_suite(tiny_suite)
    case = suite.case(EXECUTION_CASE)
    key = reference_check_key(suite, case)
    assert key is not None and key == reference_check_key(load_suite(tiny_suite), case)
    # The PATH commands see is part of the sandbox, so part of the key.
    monkeypatch.setenv("PATH", f"/usr/local/sbin:{os.environ['PATH']}")
    assert reference_check_key(suite, case) != key
    monkeypatch.undo()
    assert sandbox_fingerprint(Limits(memory_bytes=1 << 30)) != sandbox_fingerprint()
    edited = case.model_copy(update={"reference": "Counted with wc -l twice."})
    assert reference_check_key(suite, edited) != key
    suite_file = tiny_suite / "suite.yaml"
    stricter_text = suite_file.read_text().replace(
        "  trials: 2", "  trials: 2\n  pass_threshold: 0.9"
    )
    suite_file.write_text(stricter_text)
    stricter = load_suite(tiny_suite)
    assert stricter.spec.defaults.pass_threshold == 0.9
    assert reference_check_key(stricter, stricter.case(EXECUTION_CASE)) != key
