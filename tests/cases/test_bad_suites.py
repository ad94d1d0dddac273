"""Malformed suites: exit code 2 and a message naming the file, the field and the problem."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import evalkit_cli, evalkit_process

Mutation = Callable[[Path], None]


def _edit(rel: str, old: str, new: str) -> Mutation:
    def apply(root: Path) -> None:
        path = root / rel
        text = path.read_text()
        assert old in text, f"fixture drifted: {old!r} not in {rel}"
        path.write_text(text.replace(old, new))

    return apply


def _write(rel: str, content: bytes | str) -> Mutation:
    def apply(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    return apply


def _remove(rel: str) -> Mutation:
    def apply(root: Path) -> None:
        target = root / rel
        if target.is_dir():
            import shutil

            shutil.rmtree(target)
        else:
            target.unlink()

    return apply


# (name, mutation, expected file suffix in message, expected fragments in message)
BAD_SUITES: list[tuple[str, Mutation, str, list[str]]] = [
    (
        "yaml-syntax",
        _edit("cases/prompt.yaml", "  - id: wait-file", "  - id: [wait-file"),
        "prompt.yaml:13",
        ["YAML syntax error", "line 13, column 13"],
    ),
    ("empty-case-file", _write("cases/empty.yaml", "  \n"), "empty.yaml", ["empty file"]),
    (
        "binary-case-file",
        _write("cases/blob.yaml", b"\x00\x01\x02binary"),
        "blob.yaml",
        ["binary file"],
    ),
    (
        "unknown-field",
        _edit(
            "cases/prompt.yaml",
            "    category: trigger\n    expected_skill: waiting\n    prompt: How",
            "    category: trigger\n    expected_skil: waiting\n    prompt: How",
        ),
        "prompt.yaml:4",
        [
            "cases[0].expected_skil (case 'wait-server')",
            "unknown field 'expected_skil'",
            "did you mean 'expected_skill'?",
        ],
    ),
    (
        "missing-prompt",
        _edit(
            "cases/prompt.yaml", "    prompt: What is the sum of the integers from 1 to 100?\n", ""
        ),
        "prompt.yaml:21",
        ["cases[2].prompt (case 'sum-numbers')", "required field is missing"],
    ),
    (
        "wrong-type",
        _edit("suite.yaml", "  trials: 2", "  trials: many"),
        "suite.yaml:11",
        ["defaults.trials", "integer", "got many"],
    ),
    (
        "invalid-regex",
        _edit("cases/prompt.yaml", "['5050']", "['50(50']"),
        "prompt.yaml:24",
        ["cases[2].expected_patterns", "invalid regular expression '50(50'"],
    ),
    (
        "duplicate-id",
        _write(
            "cases/more.yaml",
            "- id: wait-server\n  prompt: again\n",
        ),
        "prompt.yaml:2",
        ["duplicate case id 'wait-server'", "more.yaml"],
    ),
    (
        "unknown-condition",
        _edit("suite.yaml", "  trials: 2", "  trials: 2\n  conditions: [none, preloded]"),
        "suite.yaml:12",
        ["defaults.conditions[1]", "unknown condition 'preloded'", "did you mean 'preloaded'?"],
    ),
    (
        "unknown-skill",
        _edit(
            "cases/prompt.yaml",
            "expected_skill: waiting\n    prompt: A job",
            "expected_skill: wating\n    prompt: A job",
        ),
        "prompt.yaml:14",
        [
            "cases[1].expected_skill (case 'wait-file')",
            "unknown skill 'wating'",
            "did you mean 'waiting'?",
        ],
    ),
    (
        "missing-skill-file",
        _remove("skills/waiting/stale.md"),
        "suite.yaml:9",
        ["skills.waiting.variants.stale", "skill file not found"],
    ),
    (
        "missing-fixture",
        _remove("fixtures/make-report"),
        "execution.yaml:5",
        ["[0].fixture (case 'make-report')", "fixture directory not found"],
    ),
    (
        "execution-without-verifier",
        _edit("cases/execution.yaml", "  verifier:\n", "  verifier_checks:\n"),
        "execution.yaml:10",
        ["verifier_checks", "unknown field", "did you mean 'verifier'?"],
    ),
    (
        "bad-verifier-kind",
        _edit("cases/execution.yaml", "kind: file_exists", "kind: file_present"),
        "execution.yaml:11",
        ["verifier[0]", "file_present"],
    ),
    (
        "suite-not-a-mapping",
        _write("suite.yaml", "- just\n- a list\n"),
        "suite.yaml:1",
        ["expected a mapping"],
    ),
    (
        "missing-suite-yaml",
        _remove("suite.yaml"),
        "suite.yaml",
        ["missing"],
    ),
]


@pytest.mark.parametrize(
    ("mutation", "file_suffix", "fragments"),
    [case[1:] for case in BAD_SUITES],
    ids=[case[0] for case in BAD_SUITES],
)
def test_bad_suite_exits_2_naming_file_and_field(
    tiny_suite: Path,
    runs_dir: Path,
    mutation: Mutation,
    file_suffix: str,
    fragments: list[str],
) -> None:
    mutation(tiny_suite)
    for argv in (
        ["cases", "validate", str(tiny_suite)],
        ["run", str(tiny_suite), "--runs-dir", str(runs_dir), "--no-progress"],
    ):
        captured = evalkit_cli(*argv)
        assert captured.returncode == 2
        assert captured.stdout == ""
        message = captured.stderr
        assert file_suffix in message
        for fragment in fragments:
            assert fragment in message, message
        assert "Traceback" not in message
    assert not any(runs_dir.iterdir()), "a bad suite must not start a run"


def test_all_problems_reported_at_once(
    tiny_suite: Path
) -> None:
    for _, mutation, _, _ in (BAD_SUITES[1], BAD_SUITES[6], BAD_SUITES[9], BAD_SUITES[10]):
        mutation(tiny_suite)
    done = evalkit_cli("cases", "validate", str(tiny_suite))
    assert done.returncode == 2
    err = done.stderr
    assert "4 problems in 3 files" in err
    for fragment in (
        "empty file",
        "invalid regular expression",
        "unknown skill",
        "skill file not found",
    ):
        assert fragment in err


def test_nonexistent_suite_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    done = evalkit_cli("cases", "validate", str(missing))
    assert done.returncode == 2
    assert f"{missing}: suite directory does not exist" in done.stderr


@pytest.mark.parametrize(
    "argv_tail",
    [
        ["--conditions", "none,oracle"],
        ["--case", "no-such-case"],
        ["--provider", "nosuch"],
        ["--provider-opt", "latency=1"],
        ["--provider-opt", "latency_s=fast"],
        ["--skill", "waiting=/no/such/file.md"],
        ["--skill", "nosuch=README.md"],
        ["--tags", "no-such-tag"],
        ["--trials", "0"],
    ],
)
def test_bad_run_options_exit_2(
    argv_tail: list[str], runs_dir: Path
) -> None:
    from tests.conftest import TINY

    argv = ["run", str(TINY), "--runs-dir", str(runs_dir), "--no-progress", *argv_tail]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    err = done.stderr
    assert err.startswith("error: ")
    assert "Traceback" not in err
    flag = argv_tail[0]
    assert flag in err or flag == "--tags" and "no cases match" in err


def test_real_cli_binary_reports_without_traceback(tiny_suite: Path) -> None:
    (tiny_suite / "cases" / "prompt.yaml").write_text("cases: [")
    proc = evalkit_process("cases", "validate", tiny_suite, timeout=60)
    assert proc.returncode == 2
    assert "prompt.yaml" in proc.stderr and "YAML syntax error" in proc.stderr
    assert "Traceback" not in proc.stderr
