"""Flip forensics recover planted causes from real runs (the replay provider plays them).

The causes are planted in recorded answers of the ``tiny`` suite and run through the real
runner and scorers (:mod:`tests.analysis.planted_forensics`):

- ``wait-server`` under ``self-load``: the trials that load the skill answer with what the
  skill teaches and pass; the others answer without it and fail. Forensics must say it fails
  exactly when the skill is not loaded, and align the transcripts at the skill load.
- ``wait-file`` under ``none``: the same steps every trial, but one answer of three leaves
  out the deadline, one of its two expected patterns. Forensics must name
  ``expected_patterns`` and find the divergence in the answer.
- the same ``wait-file`` where only the failing trial calls no tool, or where one trial ends
  in a provider error: forensics must name the missing tool call, or the error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import InputError
from tests.analysis.planted_forensics import BAD_FILE, GOOD_FILE, plant_every_run
from tests.conftest import evalkit_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plant_every_run(tmp_path_factory.mktemp("explain"))


@pytest.mark.slow
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
    # the trials take the same steps: no cause tells them apart, only what the score saw
    assert cell.distinguishing.empty
    top = cell.score_saw.iloc[0]
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
    # the same item keys on both sides: the baseline's trial 1 passed, the candidate's failed
    assert cell.distinguishing.empty
    top = cell.score_saw.iloc[0]
    assert top["sentence"] == (
        "fails exactly when expected_patterns fails: 1 of 1 failing trial, none of the 5 passing"
    )
    assert set(cell.components["side"]) == {"baseline", "candidate"}
    # the same work item in each run, each with its own transcript
    assert cell.divergence_note == (
        "passing baseline trial 1 against failing candidate trial 1: they take the same "
        "steps; the answers differ first at step 1"
    )
    step = cell.divergence.set_index("step").loc[1]
    assert step["passing"] == GOOD_FILE and step["failing"] == BAD_FILE
    assert result.to_dict()["baseline"] == "clean-wait-file"


def test_a_case_that_fails_exactly_when_a_tool_is_not_called(runs: Path) -> None:
    (cell,) = evalkit.explain("tooled-wait-file", "wait-file", runs_dir=runs).cells
    trials = cell.trials.set_index("trial")
    assert trials["tools"].tolist() == ["bash", "", "bash"]
    assert trials["tool_calls"].tolist() == [1, 0, 1]
    # the cause ranks first; the component that restates the outcome is listed apart
    assert cell.distinguishing["sentence"].tolist() == [
        "fails exactly when the agent does not call bash: 1 of 1 failing trial, "
        "none of the 2 passing",
    ]
    assert cell.score_saw["sentence"].tolist() == [
        "fails exactly when expected_patterns fails: 1 of 1 failing trial, none of the 2 passing",
    ]
    assert cell.first_divergence == 1
    step = cell.divergence.set_index("step").loc[1]
    assert (step["passing_kind"], step["failing_kind"]) == ("tool_call · bash", "assistant")


def test_a_trial_that_ends_in_an_error_is_told_apart_by_its_error(runs: Path) -> None:
    (cell,) = evalkit.explain("errored-wait-file", "wait-file", runs_dir=runs).cells
    failing = cell.trials.set_index("trial").loc[2]
    assert (failing["status"], failing["error_class"]) == ("error", "provider_error")
    assert failing["tool_calls"] is None and failing["input_tokens"] is None
    assert cell.distinguishing["feature"].tolist() == [
        "the item ends in error", "the item fails with provider_error",
    ]
    assert cell.divergence.empty
    assert cell.divergence_note == "no transcript for a passing and a failing trial"
    data = json.loads(json.dumps(cell.to_dict()))
    assert data["trials"][2]["tool_calls"] is None and data["trials"][0]["input_tokens"] == 100


def test_a_case_without_a_flip_says_so_and_still_shows_its_trials(runs: Path) -> None:
    (cell,) = evalkit.explain("clean-wait-server", "wait-server", runs_dir=runs).cells
    assert cell.summary == "no flip: every trial passes (run: 4 of 4 trials pass)"
    assert len(cell.trials) == 4 and not cell.flips
    assert cell.distinguishing.empty and cell.divergence.empty
    assert cell.divergence_note == "no flip: nothing to align"


def test_a_frame_from_read_run_is_explained_with_its_scores_and_transcripts(
    runs: Path,
) -> None:
    rows = evalkit.read_run("planted-wait-server", runs)
    cell = evalkit.explain(rows, "wait-server").cells[0]
    assert cell.first_divergence == 1 and cell.distinguishing.iloc[0]["separation"] == 1.0
    bare = evalkit.explain(pd.DataFrame(rows.to_dict("list")), "wait-server")
    assert bare.notes == (
        "<frame>: no run directory (a frame from evalkit.read_run records it in "
        "attrs['run_dir']): components, reasons and transcripts unavailable",
    )
    assert bare.cells[0].components.empty and bare.cells[0].trials["tool_calls"].isna().all()
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


def test_the_divergence_pair_isolates_the_top_cause(runs: Path) -> None:
    (cell,) = evalkit.explain("isolated-wait-server", "wait-server", runs_dir=runs).cells
    trials = cell.trials.set_index("trial")
    assert trials["passed"].tolist() == [True, False, True, True]
    assert trials["skill_loaded"].tolist() == [True if t in (1, 2) else False for t in range(4)]
    assert cell.distinguishing["feature"].iloc[0] == "the agent does not call bash"
    # trial 0 is the first passing trial, but it also differs in routing; trial 2 does not
    assert cell.divergence_note == (
        "passing run trial 2 against failing run trial 1 (they differ in 'the agent does not "
        "call bash' and in no other feature): they differ in kind first at step 3"
    )
    step = cell.divergence.set_index("step").loc[3]
    assert (step["passing_kind"], step["failing_kind"]) == ("tool_call · bash", "assistant")
    # both load the skill: the step before the missing call is the same skill load
    before = cell.divergence.set_index("step").loc[2]
    assert before["passing_kind"] == before["failing_kind"] == "tool_result · load_skill"
