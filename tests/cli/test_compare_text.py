"""The compare text: bold verdicts on a terminal, the same characters anywhere else."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import evalkit_cli

FIXTURE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _compare(*extra: str, env: dict[str, str]) -> str:
    done = evalkit_cli(
        "compare", "before", "after", "--runs-dir", FIXTURE_RUNS, "--resamples", "300", *extra,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_terminal_gets_bold_verdicts_and_otherwise_the_same_text() -> None:
    plain = _compare(env={"TTY_COMPATIBLE": "0"})
    styled = _compare(env={"TTY_COMPATIBLE": "1"})
    assert "\x1b[" not in plain
    assert "\x1b[1m" in styled  # the verdicts are bold
    assert ANSI.sub("", styled) == plain
    assert re.search(r"^verdict: \w+  delta ", plain, re.MULTILINE)


def test_lines_are_never_wrapped_and_brackets_print_as_they_are(
    tiny_suite: Path, runs_dir: Path
) -> None:
    """Every pair reused: the intervals are ``[n/a, n/a]``, printed without an escape."""
    common = ["--runs-dir", str(runs_dir), "--trials", "2", "--no-progress"]
    for run_id in ("a", "b"):  # the second run is served from the cache
        assert evalkit_cli("run", tiny_suite, "--run-id", run_id, *common).returncode == 0
    for tty in ("0", "1"):
        done = evalkit_cli(
            "compare", "a", "b", "--runs-dir", runs_dir, "--resamples", "300",
            env={"TTY_COMPATIBLE": tty, "COLUMNS": "40"},
        )
        assert done.returncode == 0, done.stderr
        text = ANSI.sub("", done.stdout)
        assert "delta n/a [n/a, n/a] over 0 cases" in text
        assert "\\[" not in text
        note = next(line for line in text.splitlines() if line.startswith("note: "))
        assert len(note) > 40 and "--no-cache" in note  # whole, not wrapped at 40 columns
