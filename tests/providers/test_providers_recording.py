"""recording wraps any provider; replay plays its fixtures back to identical results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.errors import ConfigError
from evalkit.matrix import parse_item_key
from evalkit.providers import (
    AgentResponse,
    Event,
    create_provider,
    restore_workspace,
)
from tests.providers.agent_harness import (
    ANTHROPIC_SECRET,
    GOOD_WAIT_ANSWER,
    run_items,
)
from tests.providers.loopback_server import LoopbackModelServer, answer

COLUMNS = ["key", "passed", "score", "status", "inferred_skill"]
TINY_CASES = ("wait-server", "wait-file", "sum-numbers", "make-report")
CONDITIONS = ("none", "self-load", "preloaded", "stale")


def outcomes(rows: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Sorted outcomes with the provider part of the item key dropped."""
    keyed = rows.assign(key=[parse_item_key(k)._replace(provider="") for k in rows.item_key])
    return sorted(keyed[COLUMNS].itertuples(index=False, name=None))


def test_recorded_simulated_run_replays_to_identical_results(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path,
) -> None:
    path = tmp_path / "fixtures" / "tiny.jsonl"
    options = {"inner": "simulated", "path": str(path), "inner.model": "sim-2",
               "inner_settings": json.dumps({"route_p": 0.5})}
    recorded, _ = run_items(tiny_suite, runs_dir, "recording", options, cases=TINY_CASES[:3],
                            conditions=CONDITIONS, trials=3)
    assert len(path.read_text().splitlines()) == len(recorded) == 36
    replayed, _ = run_items(tiny_suite, runs_dir, "replay", {"path": str(path)},
                            cases=TINY_CASES[:3], conditions=CONDITIONS, trials=3)
    assert outcomes(replayed) == outcomes(recorded)
    assert recorded.passed.nunique() == 2  # a real mix of outcomes, not a trivial match
    assert set(recorded.model) == {"sim-2"}
    # both declare the same outcome for the same item and seed (a rerun is the same sample)
    assert recorded.provider_deterministic.all() and replayed.provider_deterministic.all()


def test_execution_items_replay_identically_once_the_workspace_is_restored(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path,
) -> None:
    path = tmp_path / "tiny.jsonl"
    options = {"inner": "simulated", "path": str(path), "inner.spread": "0"}
    recorded, transcripts = run_items(tiny_suite, runs_dir, "recording", options,
                                      cases=("make-report",), conditions=CONDITIONS, trials=2)
    assert recorded.passed.any()
    kept = [t["extra"]["evalkit_workspace"] for t in transcripts.values()]
    assert any("report.txt" in k["files"] for k in kept)
    replayed, _ = run_items(tiny_suite, runs_dir, "replay", {"path": str(path)},
                            cases=("make-report",), conditions=CONDITIONS, trials=2)
    assert outcomes(replayed) == outcomes(recorded)


def test_recorded_claude_code_run_replays_identically(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path, loopback: LoopbackModelServer,
    claude_bin: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    loopback.script = answer(GOOD_WAIT_ANSWER)
    path = tmp_path / "claude.jsonl"
    options = {"inner": "claude_code", "path": str(path), "inner.binary": claude_bin,
               "inner.base_url": loopback.base_url, "inner.cli_retries": "0"}
    recorded, _ = run_items(tiny_suite, runs_dir, "recording", options,
                            cases=("wait-server", "sum-numbers"), conditions=("none", "preloaded"))
    assert recorded.status.tolist() == ["ok"] * 4
    assert ANTHROPIC_SECRET not in path.read_text()  # recordings are redacted too
    replayed, _ = run_items(tiny_suite, runs_dir, "replay", {"path": str(path)},
                            cases=("wait-server", "sum-numbers"), conditions=("none", "preloaded"))
    assert outcomes(replayed) == outcomes(recorded)
    assert len(loopback.model_requests()) == 4  # the replay sent nothing


def test_recording_settings_and_outcome_settings(tmp_path: Path) -> None:
    base = {"inner": "simulated", "path": str(tmp_path / "a.jsonl"), "inner.model": "sim-3"}
    provider = create_provider("recording", base)
    assert provider.info().model == "sim-3"
    assert provider.outcome_settings()["inner.model"] == "sim-3"
    moved = create_provider("recording", {**base, "path": str(tmp_path / "b.jsonl")})
    assert moved.outcome_settings() == provider.outcome_settings()  # the path changes nothing
    forwarded = create_provider("recording", {**base, "model": "sim-4"})  # --model
    assert forwarded.info().model == "sim-4"
    with pytest.raises(ConfigError, match="cannot record itself"):
        create_provider("recording", {**base, "inner": "recording"})
    with pytest.raises(ConfigError, match="option 'inner_settings'"):
        create_provider("recording", {**base, "inner_settings": "{not json"})
    with pytest.raises(ConfigError, match="unknown option 'latency'"):
        create_provider("recording", {**base, "inner.latency": "1"})


def test_restore_workspace_refuses_paths_outside_the_workspace(tmp_path: Path) -> None:
    response = AgentResponse(
        events=(Event("assistant", "x"),),
        extra={"evalkit_workspace": {"files": {"../escape.txt": {"text": "x"}}, "deleted": []}},
    )
    with pytest.raises(ValueError, match="escapes the workspace"):
        restore_workspace(response, tmp_path)
    assert not (tmp_path.parent / "escape.txt").exists()
