"""A synthetic suite generator for benchmarks (prompt cases only, instant simulated agent)."""

from __future__ import annotations

from pathlib import Path

SKILL = """# Waiting skill
Poll for the condition in a loop with a deadline.
Use timeout 30 around the wait so it cannot hang forever.
Check the exit status of the command you waited for.
"""

STALE = """# Waiting skill (old)
Just sleep 10 and assume it is up.
"""


def write_suite(root: Path, n_cases: int) -> Path:
    """Write a suite of ``n_cases`` prompt cases under ``root`` and return its path."""
    (root / "skills").mkdir(parents=True, exist_ok=True)
    (root / "cases").mkdir(exist_ok=True)
    (root / "skills" / "SKILL.md").write_text(SKILL)
    (root / "skills" / "stale.md").write_text(STALE)
    (root / "suite.yaml").write_text(
        "name: synthetic\n"
        "skills:\n"
        "  waiting:\n"
        "    description: Wait for conditions instead of sleeping.\n"
        "    path: skills/SKILL.md\n"
        "    variants: {stale: skills/stale.md}\n"
        "anti_patterns:\n"
        "  - {id: blind-sleep, pattern: '\\bsleep\\s+\\d+', severity: error}\n"
    )
    lines = ["cases:"]
    for i in range(n_cases):
        skill = "waiting" if i % 3 else "none"
        lines += [
            f"  - id: case-{i:05d}",
            f"    expected_skill: {skill}",
            f"    prompt: How should script {i} wait for its server?",
            "    expected_patterns: ['poll|loop', 'timeout|deadline']",
            "    forbidden_patterns: ['\\bsleep\\s+\\d+']",
            "    reference: |",
            "      Poll the health endpoint in a loop.",
            "      Wrap the loop in timeout 30 so it has a deadline.",
        ]
    (root / "cases" / "cases.yaml").write_text("\n".join(lines) + "\n")
    return root
