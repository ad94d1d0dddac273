"""A YAML "billion laughs" in a case file is refused before any object is built."""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

from tests.conftest import TINY, CliResult, evalkit_process

MEMORY_LIMIT = 1536 * 1024 * 1024  # address space for the whole CLI: imports fit, a bomb does not


def _billion_laughs() -> str:
    """Nine levels of nine aliases each: 9**9 (387 million) strings once expanded, ~1 KB."""
    lines = ['  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 9):
        name, prev = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"  {name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines)


def _limit_memory() -> None:
    # Soft limit only: the sandbox's prlimit may still set its own limits for the commands
    # it runs, while this process (the one parsing the bomb) is held to MEMORY_LIMIT.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, resource.RLIM_INFINITY))


def _cli(*args: str) -> CliResult:
    """``evalkit ARGS`` in a child held to MEMORY_LIMIT (the memory bound is what is tested)."""
    return evalkit_process(*args, timeout=120, preexec_fn=_limit_memory)


def test_billion_laughs_in_a_verifier_value_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    shutil.copytree(TINY, root)
    bomb = root / "cases" / "bomb.yaml"
    bomb.write_text(
        "- id: bomb\n"
        "  lane: execution\n"
        "  prompt: Write out.json.\n"
        "  verifier:\n"
        "    - kind: json_path_equals\n"
        "      path: out.json\n"
        "      json_path: x\n"
        "      equals:\n"
        + "\n".join("      " + line for line in _billion_laughs().splitlines())
        + "\n"
    )
    assert len(bomb.read_bytes()) < 1500
    # the limit leaves room for a normal validation
    assert _cli("cases", "validate", str(TINY)).returncode == 0

    for argv in (
        ["cases", "validate", str(root)],
        ["run", str(root), "--runs-dir", str(tmp_path / "runs"), "--no-progress"],
    ):
        proc = _cli(*argv)
        assert proc.returncode == 2, proc.stderr
        assert "bomb.yaml" in proc.stderr
        assert "YAML aliases are not allowed" in proc.stderr
        assert "bomb.yaml:10:" in proc.stderr  # the first alias, in the file's own numbering
        assert "Traceback" not in proc.stderr


def test_aliases_in_suite_yaml_are_refused_too(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    shutil.copytree(TINY, root)
    suite = root / "suite.yaml"
    suite.write_text(suite.read_text() + "providers:\n  simulated: &s {}\n  other: *s\n")
    proc = _cli("cases", "validate", str(root))
    assert proc.returncode == 2, proc.stderr
    assert "suite.yaml" in proc.stderr and "YAML aliases are not allowed" in proc.stderr
