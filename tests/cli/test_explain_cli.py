"""``evalkit explain``: its text, its JSON and its refusals, on runs with planted causes.

The runs are made by the real runner replaying recorded answers
(:mod:`tests.analysis.planted_forensics`): a candidate whose ``wait-file`` trial 1 leaves out
an expected pattern against a baseline where every trial passes, a run where only the failing
trial calls no tool, and one where a trial ends in a provider error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
from tests.analysis.planted_forensics import BAD_FILE, GOOD_FILE, plant_every_run
from tests.conftest import ROOT, evalkit_cli, evalkit_process


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plant_every_run(tmp_path_factory.mktemp("explain-cli"))


def test_between_two_runs_the_text_lines_up_both_sides(runs: Path) -> None:
    done = evalkit_cli("explain", "planted-wait-file", "--case", "wait-file",
                       "--baseline", "clean-wait-file", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "case wait-file in clean-wait-file -> planted-wait-file"
    assert lines[2] == (
        "wait-file [none / replay]: flips (baseline: 3 of 3 trials pass; "
        "candidate: 2 of 3 trials pass)"
    )
    assert any(line.startswith("    baseline trial 1: pass  score 1.00") for line in lines)
    failing = next(i for i, line in enumerate(lines) if "candidate trial 1: FAIL" in line)
    assert lines[failing + 1] == "      missing expected pattern: `timeout|deadline`"
    # the component restates the outcome: listed as what the score saw, not as a cause
    saw = lines.index("  what the score saw (restates the outcome, not a cause):")
    assert lines[saw + 1] == ("    fails exactly when expected_patterns fails: 1 of 1 failing "
                              "trial, none of the 5 passing")
    assert lines[saw - 1] == ("  what separates the failing trials from the passing ones: no "
                              "cause (the routing, status and tools are alike)")
    assert lines[saw + 2].startswith("  chance: a 1-of-6 split (1 of 6 trials fail): ")
    assert f"   > step 1 passing [assistant] {GOOD_FILE}" in lines
    assert f"   > step 1 failing [assistant] {BAD_FILE}" in lines


def test_tools_and_errors_show_in_the_trials(runs: Path) -> None:
    tooled = evalkit_cli("explain", "tooled-wait-file", "--case", "wait-file",
                         "--runs-dir", runs)
    assert tooled.returncode == 0, tooled.stderr
    assert "tool calls 1 (bash)  tokens 100/20" in tooled.stdout
    assert "fails exactly when the agent does not call bash: 1 of 1" in tooled.stdout
    assert "   > step 1 passing [tool_call · bash] test -f done.txt; echo $?" in tooled.stdout
    errored = evalkit_cli("explain", "errored-wait-file", "--case", "wait-file",
                          "--runs-dir", runs)
    assert errored.returncode == 0, errored.stderr
    assert ("trial 2: FAIL  score 0.00  status error (provider_error)  skill loaded - (-)  "
            "tool calls -  tokens -/-") in errored.stdout
    assert "fails exactly when the item ends in error: 1 of 1" in errored.stdout
    assert "first divergence: no transcript for a passing and a failing trial" in errored.stdout


def test_the_json_is_the_explanation_as_the_library_returns_it(runs: Path) -> None:
    done = evalkit_process("explain", "planted-wait-file", "--case", "wait-file",
                           "--baseline", "clean-wait-file", "--runs-dir", runs, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data == json.loads(json.dumps(evalkit.explain(
        "planted-wait-file", "wait-file", baseline="clean-wait-file", runs_dir=runs
    ).to_dict()))
    (cell,) = data["cells"]
    assert (data["run"], data["baseline"], cell["flips"]) == (
        "planted-wait-file", "clean-wait-file", True
    )
    failing = [t for t in cell["trials"] if not t["passed"]]
    assert [(t["side"], t["trial"], t["cause"]) for t in failing] == [
        ("candidate", 1, "missing expected pattern")
    ]
    assert {"tools", "error_class", "reason", "tool_calls"} <= set(failing[0])
    assert {c["side"] for c in cell["components"]} == {"baseline", "candidate"}
    assert cell["distinguishing"] == []
    assert cell["score_saw"][0]["feature"] == "expected_patterns fails"
    assert cell["chance"]["n_trials"] == 6 and cell["chance"]["flip_rate_source"] == "default"
    assert cell["first_divergence"] == 1


def test_unknown_case_run_or_condition_is_exit_2_naming_what_exists(runs: Path) -> None:
    case = evalkit_cli("explain", "planted-wait-file", "--case", "wait-sever",
                       "--runs-dir", runs)
    assert case.returncode == 2 and "Traceback" not in case.stderr
    assert "no case 'wait-sever'" in case.stderr and "'wait-file'" in case.stderr
    run = evalkit_cli("explain", "no-such-run", "--case", "wait-file", "--runs-dir", runs)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "no-such-run" in run.stderr
    baseline = evalkit_cli("explain", "planted-wait-file", "--case", "wait-file",
                           "--baseline", "gone", "--runs-dir", runs)
    assert baseline.returncode == 2 and "gone" in baseline.stderr
    condition = evalkit_cli("explain", "planted-wait-server", "--case", "wait-server",
                            "--condition", "none", "--runs-dir", runs)
    assert condition.returncode == 2
    assert "no condition 'none'" in condition.stderr and "'self-load'" in condition.stderr
    missing = evalkit_cli("explain", "planted-wait-file", "--runs-dir", runs)
    assert missing.returncode == 2 and "--case" in missing.stderr


def test_help_ends_with_examples_and_loads_no_pandas() -> None:
    code = (
        "import sys\nfrom evalkit.cli import main\n"
        "try:\n    main(['explain', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('PANDAS', 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, check=False)
    *shown, last = done.stdout.rstrip().splitlines()
    assert last == "PANDAS False", done.stderr
    assert shown[-3:] == [
        "examples:",
        "  evalkit explain before --case anti-rm-rf-workdir --condition self-load",
        "  evalkit explain after --case exec-config-port --baseline before --json",
    ]
    assert any("--baseline BASELINE" in line for line in shown)


@pytest.mark.slow
def test_preloaded_trials_say_preloaded_not_skill_loaded_no() -> None:
    runs = ROOT / "tests" / "fixtures" / "runs"
    done = evalkit_cli("explain", "after", "--case", "exec-config-port", "--condition",
                       "preloaded", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    trial_lines = [line for line in done.stdout.splitlines() if line.startswith("    trial ")]
    assert trial_lines and all("  skill preloaded  " in line for line in trial_lines)
    assert "skill loaded" not in done.stdout
    why = evalkit.explain("after", "exec-config-port", runs_dir=runs)
    by_condition = why.trials.groupby("condition")["preloaded"].all()
    assert by_condition["preloaded"] and not by_condition["none"]
    html = why._repr_html_()
    assert html is not None and ">preloaded</td>" in html
    # the display lists what the score saw apart from the causes, and the chance check
    assert "What the score saw (restates the outcome, not a cause)" in html
    assert html.count("Chance: ") == len(why.cells)
