"""Flip forensics recover planted causes from real runs (the replay provider plays them).

Two causes are planted in recorded answers of the ``tiny`` suite and run through the real
runner and scorers:

- ``wait-server`` under ``self-load``: the trials that load the skill answer with what the
  skill teaches and pass; the others answer without it and fail. Forensics must say it fails
  exactly when the skill is not loaded, and align the transcripts at the skill load.
- ``wait-file`` under ``none``: the same steps every trial, but one answer of three leaves
  out the deadline, one of its two expected patterns. Forensics must name
  ``expected_patterns`` and find the divergence in the answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import InputError
from evalkit.providers import AgentResponse, Event
from tests.conftest import TINY, evalkit_cli

SERVER_PROMPT = "How should a CI script wait for a dev server to come up?"
FILE_PROMPT = "A job writes done.txt when finished. How do I wait for it in bash?"
GOOD_SERVER = "Poll the health endpoint in a loop, wrapped in timeout 30 so it has a deadline."
BAD_SERVER = "Just start it and check the page by hand until it answers."
GOOD_FILE = "Use an until loop that checks for done.txt, under timeout 60."
BAD_FILE = "Use an until loop that checks for done.txt."


def _line(key: str, events: list[Event]) -> str:
    response = AgentResponse(events=tuple(events), model="recorded", input_tokens=100,
                             output_tokens=20)
    return json.dumps({"item_key": key, "provider": "recording", "model": "recorded",
                       "response": response.to_json()})


def _recordings(path: Path, *, plant: bool) -> Path:
    lines = []
    for trial in range(4):
        loads = trial % 2 == 0 or not plant
        events = [Event("user", SERVER_PROMPT)]
        if loads:
            events += [Event("tool_call", "waiting", name="load_skill"),
                       Event("tool_result", "Wait for conditions ...", name="load_skill")]
        events.append(Event("assistant", GOOD_SERVER if loads else BAD_SERVER))
        lines.append(_line(f"prompt:wait-server:self-load:recording:{trial}", events))
    for trial in range(3):
        answer = BAD_FILE if plant and trial == 1 else GOOD_FILE
        events = [Event("user", FILE_PROMPT), Event("assistant", answer)]
        lines.append(_line(f"prompt:wait-file:none:recording:{trial}", events))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _suite(tmp: Path) -> Path:
    """The tiny suite, where a wait-file answer must hold both of its expected patterns."""
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


def _run(tmp: Path, runs: Path, run_id: str, *, plant: bool) -> None:
    recordings = _recordings(tmp / f"{run_id}.jsonl", plant=plant)
    suite = _suite(tmp)
    for case, condition, trials in (("wait-server", "self-load", 4), ("wait-file", "none", 3)):
        done = evalkit_cli(
            "run", suite, "--provider", "replay", "--provider-opt", f"path={recordings}",
            "--conditions", condition, "--case", case, "--trials", str(trials),
            "--runs-dir", runs, "--run-id", f"{run_id}-{case}", "--no-cache",
        )
        assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("explain")
    runs = tmp / "runs"
    _run(tmp, runs, "planted", plant=True)
    _run(tmp, runs, "clean", plant=False)
    return runs


def test_a_case_that_fails_exactly_when_the_skill_is_not_loaded(runs: Path) -> None:
    result = evalkit.explain("planted-wait-server", "wait-server", runs_dir=runs)
    (cell,) = result.cells
    assert cell.flips and cell.condition == "self-load"
    trials = cell.trials.set_index("trial")
    assert trials["passed"].tolist() == [True, False, True, False]
    assert trials["skill_loaded"].tolist() == [True, False, True, False]
    assert trials.loc[1, "cause"] == "skill not loaded"
    top = cell.distinguishing.iloc[0]
    assert top["feature"] == "the skill is not loaded"
    assert top["sentence"] == (
        "fails exactly when the skill is not loaded: 2 of 2 failing trials, none of the 2 passing"
    )
    # the transcripts part at the skill load: step 0 is the prompt in both
    assert cell.first_divergence == 1
    step = cell.divergence.set_index("step").loc[1]
    assert step["passing_kind"] == "skill load · waiting"
    assert step["failing_kind"] == "assistant"
    assert "differ in kind first at step 1" in cell.divergence_note


def test_a_case_that_misses_one_expected_pattern_in_one_trial_of_three(runs: Path) -> None:
    result = evalkit.explain("planted-wait-file", "wait-file", runs_dir=runs)
    (cell,) = result.cells
    assert cell.trials["passed"].tolist() == [True, False, True]
    top = cell.distinguishing.iloc[0]
    assert top["feature"] == "expected_patterns fails"
    assert top["sentence"].startswith("fails exactly when expected_patterns fails: 1 of 1")
    assert "timeout|deadline" in cell.trials.set_index("trial").loc[1, "reason"]
    # same steps, the answers differ
    assert cell.first_divergence == 1
    assert "the answers differ first at step 1" in cell.divergence_note
    step = cell.divergence.set_index("step").loc[1]
    assert step["passing"] == GOOD_FILE and step["failing"] == BAD_FILE


def test_between_two_runs_the_candidate_failure_is_explained(runs: Path) -> None:
    result = evalkit.explain(
        "planted-wait-file", "wait-file", baseline="clean-wait-file", runs_dir=runs
    )
    (cell,) = result.cells
    assert set(cell.trials["side"]) == {"baseline", "candidate"}
    assert "baseline: 3 of 3 trials pass; candidate: 2 of 3 trials pass" in cell.summary
    assert cell.distinguishing.iloc[0]["feature"] == "expected_patterns fails"
    assert result.to_dict()["baseline"] == "clean-wait-file"


def test_a_frame_from_read_run_is_explained_with_its_scores_and_transcripts(
    runs: Path,
) -> None:
    rows = evalkit.read_run("planted-wait-server", runs)
    cell = evalkit.explain(rows, "wait-server").cells[0]
    assert cell.first_divergence == 1 and cell.distinguishing.iloc[0]["separation"] == 1.0
    bare = evalkit.explain(pd.DataFrame(rows.to_dict("list")), "wait-server")
    assert any("no scores recorded" in n for n in bare.notes)
    assert bare.cells[0].divergence.empty


def test_the_command_prints_the_explanation_and_its_json(runs: Path) -> None:
    done = evalkit_cli("explain", "planted-wait-server", "--case", "wait-server",
                       "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    assert "fails exactly when the skill is not loaded: 2 of 2 failing trials" in done.stdout
    assert "skill not loaded: expected waiting, inferred none" in done.stdout
    assert "> step 1 passing [skill load · waiting]" in done.stdout
    as_json = evalkit_cli("explain", "planted-wait-server", "--case", "wait-server",
                          "--runs-dir", runs, "--json")
    data = json.loads(as_json.stdout)
    assert data == json.loads(json.dumps(evalkit.explain(
        "planted-wait-server", "wait-server", runs_dir=runs).to_dict()))
    assert data["cells"][0]["first_divergence"] == 1


def test_an_unknown_case_or_condition_is_exit_2_naming_the_known_ones(runs: Path) -> None:
    done = evalkit_cli("explain", "planted-wait-server", "--case", "nope", "--runs-dir", runs)
    assert done.returncode == 2
    assert "no case 'nope'" in done.stderr and "'wait-server'" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(InputError, match="no condition 'stale'.*'self-load'"):
        evalkit.explain("planted-wait-server", "wait-server", condition="stale", runs_dir=runs)


def test_hostile_text_renders_as_text(runs: Path, tmp_path: Path) -> None:
    run = runs / "planted-wait-server"
    html = evalkit.explain(run, "wait-server")._repr_html_()
    assert html is not None and "fails exactly when the skill is not loaded" in html
    assert "<script" not in html
    copy = tmp_path / "hostile"
    shutil.copytree(run, copy)
    rows = evalkit.read_run(copy)
    rows["case_id"] = "<script>x</script>"
    markup = evalkit.explain(rows, "<script>x</script>")._repr_html_()
    assert markup is not None
    assert "<script>x</script>" not in markup and "&lt;script&gt;x&lt;/script&gt;" in markup
