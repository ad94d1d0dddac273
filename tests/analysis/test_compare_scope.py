"""The compare text names the conditions that gave cases and those left out as reused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import evalkit_cli


def test_conditions_left_out_as_reused_are_named(
    tiny_suite: Path, runs_dir: Path
) -> None:
    common = ["--runs-dir", str(runs_dir), "--trials", "2", "--no-progress"]
    done = evalkit_cli("run", str(tiny_suite), "--run-id", "a", *common)
    assert done.returncode == 0
    skill = tiny_suite / "skills" / "waiting" / "SKILL.md"
    skill.write_text(skill.read_text() + "Log how long the wait took.\n")
    # the edit reruns self-load and preloaded; none and stale are served from the cache
    done = evalkit_cli("run", str(tiny_suite), "--run-id", "b", *common)
    assert done.returncode == 0

    done = evalkit_cli("compare", "a", "b", "--runs-dir", str(runs_dir), "--json",
                       "--resamples", "300")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    pooled = data["pooled"]
    assert pooled["conditions"] == ["none", "preloaded", "self-load", "stale"]
    assert pooled["contributing"] == ["preloaded", "self-load"]
    assert pooled["left_out_reused"] == ["none", "stale"]
    parts = {p["condition"]: p for p in data["by_condition"]}
    assert parts["none"]["n_cases"] == 0 and parts["none"]["reused_items"] > 0

    done = evalkit_cli("compare", "a", "b", "--runs-dir", str(runs_dir), "--resamples", "300")
    assert done.returncode == 0
    text = done.stdout
    assert "pooled over conditions preloaded, self-load," in text
    assert "left out as reused (every pair one sample, no case): none, stale" in text
    assert "pooled over conditions none" not in text
