"""The pairwise comparator as a real CLI agent: ``claude -p`` against the loopback model server.

The scripted model prefers the response that polls in a loop (the reference answer of the
judged suite's cases) and says tie otherwise; the test checks what the judge was shown (blind
labels, the rubric, never the condition or the skill) and that its verdicts decide the pairs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit.judge import compare_pairwise
from evalkit.runner import RunConfig, run
from tests.judge.conftest import SKILL_MARKER
from tests.providers.agent_harness import ANTHROPIC_SECRET, agent_binary
from tests.providers.loopback_server import LoopbackModelServer, Recorded, Reply, Text

_RESPONSE = re.compile(  # JSON-escaped: the fenced tags' quotes arrive as \"
    r'<response_(\d) id=\\"([0-9a-f]+)\\">\\n(.*?)\\n</response_\1 id=\\"\2\\">', re.S
)
RUBRIC = "The better response polls the real condition in a loop rather than guessing."


def prefer_the_loop(request: Recorded) -> Reply:
    answers = {number: body for number, _, body in _RESPONSE.findall(request.text)}
    loops = [k for k in ("1", "2") if "until" in answers.get(k, "")]
    better = loops[0] if len(loops) == 1 else "tie"
    return Text(json.dumps({"better": better, "reason": f"loop in {better}"}), 200, 20)


def test_claude_code_compares_pairs_through_the_real_cli(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    binary = agent_binary("claude", "EVALKIT_CLAUDE_BIN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    run(judged_suite, RunConfig(runs_dir=runs_dir, run_id="base", progress=False, trials=3,
                                concurrency=2))
    rubric = tmp_path / "rubric.md"
    rubric.write_text(RUBRIC + "\n")
    loopback.reset(prefer_the_loop)
    options = {"binary": binary, "base_url": loopback.base_url, "cli_retries": 0,
               "state_dir": str(tmp_path / "state")}
    result = compare_pairwise("base", conditions=["none", "cond-okapi"], runs_dir=runs_dir,
                              provider="claude_code", model="judge-1", options=options,
                              rubric=rubric, retries=1, n_resamples=200)
    assert result.judge["provider"] == "claude_code"
    assert result.skipped["judge_error"] == 0
    asked = loopback.model_requests()
    assert asked, "the CLI called the model"
    for request in asked:
        assert "<response_1 id=" in request.text and "<response_2 id=" in request.text
        assert RUBRIC in request.text
        assert "cond-okapi" not in request.text and SKILL_MARKER not in request.text
    judged = result.pairs[~result.pairs["identical"]]
    for pair in judged.to_dict("records"):
        loop_b = "until" in pair["baseline_answer"]
        loop_c = "until" in pair["candidate_answer"]
        expected = 0.5 if loop_b == loop_c else (1.0 if loop_c else 0.0)
        assert pair["outcome"] == expected
        assert pair["reason_baseline_first"].startswith("loop in")
