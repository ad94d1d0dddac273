"""Runs with planted causes of failure, for the flip forensics' tests (``evalkit explain``).

Responses are recorded by hand and played back by the replay provider through the real
runner and scorers, on a copy of the ``tiny`` suite where a ``wait-file`` answer must hold
both of its expected patterns. Each variant is one recording file and two runs
(``VARIANT-wait-server``: 4 trials under ``self-load``; ``VARIANT-wait-file``: 3 trials under
``none``):

- ``planted``: the ``wait-server`` trials that load the skill answer with what it teaches and
  pass, the others (trials 1 and 3) answer without it and fail; ``wait-file`` takes the same
  steps every trial, but trial 1's answer leaves out the deadline (one expected pattern).
- ``clean``: every trial loads the skill and answers well: every trial passes.
- ``tooled``: the ``wait-file`` trials that pass check for the file with ``bash`` first; trial
  1 calls no tool and leaves out the deadline.
- ``errored``: ``wait-file`` trial 2 has no recording, so it ends in a ``provider_error``.
- ``isolated``: the ``wait-server`` trials that pass check the server with ``bash`` first,
  the one that fails (trial 1) does not; routing varies on its own: trials 1 and 2 load the
  skill, trials 0 and 3 do not. The first passing trial (0) differs from the failing one in
  routing as well as the tool; trial 2 differs in the tool only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evalkit.providers import AgentResponse, Event
from tests.conftest import TINY, evalkit_cli

SERVER_PROMPT = "How should a CI script wait for a dev server to come up?"
FILE_PROMPT = "A job writes done.txt when finished. How do I wait for it in bash?"
GOOD_SERVER = "Poll the health endpoint in a loop, wrapped in timeout 30 so it has a deadline."
BAD_SERVER = "Just start it and check the page by hand until it answers."
GOOD_FILE = "Use an until loop that checks for done.txt, under timeout 60."
BAD_FILE = "Use an until loop that checks for done.txt."
VARIANTS = ("planted", "clean", "tooled", "errored", "isolated")
#: ``isolated``: (loads the skill, checks with bash) of each ``wait-server`` trial.
ISOLATED = ((False, True), (True, False), (True, True), (False, True))


def _line(key: str, events: list[Event]) -> str:
    response = AgentResponse(events=tuple(events), model="recorded", input_tokens=100,
                             output_tokens=20)
    return json.dumps({"item_key": key, "provider": "recording", "model": "recorded",
                       "response": response.to_json()})


def _isolated_lines() -> list[str]:
    lines = []
    for trial, (loads, checks) in enumerate(ISOLATED):
        events = [Event("user", SERVER_PROMPT)]
        if loads:
            events += [Event("tool_call", "waiting", name="load_skill"),
                       Event("tool_result", "Wait for conditions ...", name="load_skill")]
        if checks:
            events += [Event("tool_call", "curl -sf localhost:3000/health", name="bash"),
                       Event("tool_result", "curl: (7) Failed to connect", name="bash")]
        events.append(Event("assistant", GOOD_SERVER if checks else BAD_SERVER))
        lines.append(_line(f"prompt:wait-server:self-load:recording:{trial}", events))
    return lines


def _server_lines(variant: str) -> list[str]:
    if variant == "isolated":
        return _isolated_lines()
    lines = []
    for trial in range(4):
        loads = trial % 2 == 0 or variant != "planted"
        events = [Event("user", SERVER_PROMPT)]
        if loads:
            events += [Event("tool_call", "waiting", name="load_skill"),
                       Event("tool_result", "Wait for conditions ...", name="load_skill")]
        events.append(Event("assistant", GOOD_SERVER if loads else BAD_SERVER))
        lines.append(_line(f"prompt:wait-server:self-load:recording:{trial}", events))
    return lines


def _file_lines(variant: str) -> list[str]:
    lines = []
    for trial in range(3):
        if variant == "errored" and trial == 2:
            continue
        bad = trial == 1 and variant in ("planted", "tooled")
        events = [Event("user", FILE_PROMPT)]
        if variant == "tooled" and not bad:
            events += [Event("tool_call", "test -f done.txt; echo $?", name="bash"),
                       Event("tool_result", "1", name="bash")]
        events.append(Event("assistant", BAD_FILE if bad else GOOD_FILE))
        lines.append(_line(f"prompt:wait-file:none:recording:{trial}", events))
    return lines


def _suite(tmp: Path) -> Path:
    suite = tmp / "tiny"
    if not suite.exists():
        shutil.copytree(TINY, suite)
        cases = suite / "cases" / "prompt.yaml"
        text = cases.read_text(encoding="utf-8")
        marker = "    split: holdout\n"
        assert marker in text
        cases.write_text(text.replace(marker, marker + "    pass_threshold: 0.9\n", 1),
                         encoding="utf-8")
    return suite


def plant_runs(tmp: Path, variant: str) -> Path:
    """Run one variant's two runs (``VARIANT-wait-server``, ``VARIANT-wait-file``).

    Args:
        tmp: A scratch directory; the runs go to ``tmp/runs``.
        variant: One of :data:`VARIANTS`.

    Returns:
        The runs directory.
    """
    recordings = tmp / f"{variant}.jsonl"
    recordings.write_text("\n".join(_server_lines(variant) + _file_lines(variant)) + "\n",
                          encoding="utf-8")
    suite, runs = _suite(tmp), tmp / "runs"
    for case, condition, trials in (("wait-server", "self-load", 4), ("wait-file", "none", 3)):
        done = evalkit_cli(
            "run", suite, "--provider", "replay", "--provider-opt", f"path={recordings}",
            "--conditions", condition, "--case", case, "--trials", str(trials),
            "--runs-dir", runs, "--run-id", f"{variant}-{case}", "--no-cache",
        )
        assert done.returncode == 0, done.stderr
    return runs


def plant_every_run(tmp: Path) -> Path:
    """Every variant's runs (see :data:`VARIANTS`) in ``tmp/runs``.

    Args:
        tmp: A scratch directory.

    Returns:
        The runs directory.
    """
    for variant in VARIANTS:
        runs = plant_runs(tmp, variant)
    return runs
