"""``evalkit run -v`` names the items it reused from the cache."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CliResult, evalkit_cli


def _run(suite: Path, runs_dir: Path, run_id: str, *options: str) -> CliResult:
    done = evalkit_cli("run", "--lane", "prompt", "--backend", "threading", "--no-progress",
                       suite, "--run-id", run_id, "--runs-dir", runs_dir, "-v", *options)
    assert done.returncode == 0, done.stderr
    return done


def _hits(stderr: str) -> list[str]:
    return [line.removeprefix("cache hit: ") for line in stderr.splitlines()
            if line.startswith("cache hit: ")]


def test_verbose_lists_each_reused_item(tiny_suite: Path, runs_dir: Path) -> None:
    first = _run(tiny_suite, runs_dir, "first", "--trials", "1")
    assert _hits(first.stderr) == [] and "reused" not in first.stderr
    cases = tiny_suite / "cases" / "prompt.yaml"
    cases.write_text(cases.read_text().replace("What is the sum", "What's the sum"))
    second = _run(tiny_suite, runs_dir, "second", "--trials", "1")
    hits = _hits(second.stderr)
    # 2 unchanged prompt cases x 4 conditions reused; the edited case ran again
    assert len(hits) == 8
    assert all(key.count(":") == 4 and key.startswith("prompt:") for key in hits)
    assert not any(":sum-numbers:" in key for key in hits)
    assert "cache: 8 item(s) reused" in second.stderr


def test_verbose_summarises_many_hits_per_case_and_condition(
    tiny_suite: Path, runs_dir: Path
) -> None:
    _run(tiny_suite, runs_dir, "first", "--trials", "3")
    again = _run(tiny_suite, runs_dir, "again", "--trials", "3")
    hits = _hits(again.stderr)
    assert "cache: 36 item(s) reused" in again.stderr
    # 36 items are more than the per-item limit: one line per case and condition
    assert len(hits) == 12
    assert all(line.endswith(": 3 trial(s)") for line in hits)


def test_without_verbose_nothing_is_listed(tiny_suite: Path, runs_dir: Path) -> None:
    _run(tiny_suite, runs_dir, "first", "--trials", "1")
    done = evalkit_cli("run", "--lane", "prompt", "--backend", "threading", "--no-progress",
                       tiny_suite, "--trials", "1", "--run-id", "quiet", "--runs-dir", runs_dir)
    assert done.returncode == 0, done.stderr
    assert _hits(done.stderr) == []
    assert "12 from cache" in done.stdout
