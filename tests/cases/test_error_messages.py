"""Validation messages a newcomer can act on: file:line, case id, field and the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit.cases import load_suite
from evalkit.errors import SuiteError
from tests.conftest import ROOT, evalkit_cli


def _problems(suite: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_suite(suite)
    return [str(p) for p in info.value.problems]


def _add_cases(suite: Path, text: str) -> Path:
    path = suite / "cases" / "extra.yaml"
    path.write_text(text)
    return path


def test_unquoted_colon_in_setup_explained_through_the_real_cli(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite,
        "- id: commit-it\n"
        "  lane: execution\n"
        "  prompt: Commit the report.\n"
        "  setup:\n"
        "    - git init -q\n"
        '    - git commit -m "feat: x"\n'
        "  verifier:\n"
        "    - {kind: file_exists, path: report.txt}\n",
    )
    proc = evalkit_cli("cases", "validate", tiny_suite, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert f"{path}:6: [0].setup[1] (case 'commit-it'): " in proc.stderr
    assert 'YAML read git commit -m "feat: x" as a mapping' in proc.stderr
    assert "colon followed by a space" in proc.stderr
    assert "quote the whole value: 'git commit -m \"feat: x\"'" in proc.stderr


@pytest.mark.parametrize(
    "command", ['git commit -m "feat: x"', "git add -A && git commit -m 'chore: y'"]
)
def test_quoting_the_value_as_suggested_fixes_it(tiny_suite: Path, command: str) -> None:
    text = (
        "- id: commit-it\n"
        "  lane: execution\n"
        "  prompt: Commit the report.\n"
        "  setup:\n"
        f"    - {command}\n"
        "  verifier:\n"
        "    - {kind: file_exists, path: report.txt}\n"
    )
    _add_cases(tiny_suite, text)
    (problem,) = _problems(tiny_suite)
    fix = problem.rsplit("quote the whole value: ", 1)[1]
    _add_cases(tiny_suite, text.replace(command, fix))
    case = load_suite(tiny_suite).case("commit-it")
    assert case.setup == (command,)


def test_value_with_both_quote_kinds_gets_a_block_scalar_fix(tiny_suite: Path) -> None:
    _add_cases(
        tiny_suite,
        "- id: edit-it\n  prompt: Edit.\n  rubric:\n    - Runs sed 's/a: b/\"c\"/' f.txt\n",
    )
    (problem,) = _problems(tiny_suite)
    assert ":4: [0].rubric[0] (case 'edit-it'): " in problem
    assert "write it as a block scalar: '|-', then the text on the next line, indented" in problem


def test_unknown_nested_field_named_with_did_you_mean(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite,
        "- id: check-it\n"
        "  lane: execution\n"
        "  prompt: Write report.txt.\n"
        "  verifier:\n"
        "    - kind: file_matches\n"
        "      path: report.txt\n"
        "      patern: '^ok$'\n"
        "  budgets: {wall_clock: 3}\n",
    )
    problems = _problems(tiny_suite)
    assert (
        f"{path}:7: [0].verifier[0].patern (case 'check-it'): unknown field 'patern'; "
        "did you mean 'pattern'?"
    ) in "\n".join(problems)
    far = next(p for p in problems if "wall_clock" in p)
    assert f"{path}:8: [0].budgets.wall_clock (case 'check-it')" in far
    assert "allowed here: timeout_s, max_steps" in far


def test_verifier_check_without_kind_lists_the_kinds(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite,
        "- id: no-kind\n  lane: execution\n  prompt: Hi.\n  verifier:\n    - path: a.txt\n",
    )
    (problem,) = _problems(tiny_suite)
    assert problem == (
        f"{path}:5: [0].verifier[0] (case 'no-kind'): 'kind' is missing; add it, one of: "
        "command, file_exists, file_matches, json_path_equals"
    )


def test_regex_shown_as_written_at_its_own_line(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite,
        "- id: digits\n  prompt: Count.\n  expected_patterns:\n    - 'ok'\n    - '\\d+('\n",
    )
    (problem,) = _problems(tiny_suite)
    assert f"{path}:5: [0].expected_patterns[1] (case 'digits'): " in problem
    assert "invalid regular expression '\\d+('" in problem
    assert "\\\\d" not in problem


def test_invalid_id_and_out_of_range_values_explained(tiny_suite: Path) -> None:
    path = _add_cases(tiny_suite, "- id: my case\n  prompt: Hi.\n  pass_threshold: 1.5\n")
    problems = _problems(tiny_suite)
    assert problems == [
        f"{path}:1: [0].id (case 'my case'): 'my case' is not a valid id; use letters, digits "
        "and _ . - only, starting with a letter or digit",
        f"{path}:3: [0].pass_threshold (case 'my case'): Input should be less than or equal "
        "to 1, got 1.5; allowed: a number from 0 to 1",
    ]


def test_a_number_field_given_text_states_its_range(tiny_suite: Path) -> None:
    path = _add_cases(tiny_suite, "- id: words\n  prompt: Hi.\n  pass_threshold: high\n")
    problems = _problems(tiny_suite)
    assert problems == [
        f"{path}:3: [0].pass_threshold (case 'words'): Input should be a valid number, unable "
        "to parse string as a number, got high; allowed: a number from 0 to 1",
    ]


def test_yaml_scalars_that_are_not_text_explained(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite, "- id: scalars\n  lane: exection\n  prompt: yes\n  reference: 12\n"
    )
    problems = "\n".join(_problems(tiny_suite))
    assert f"{path}:2: [0].lane (case 'scalars'):" in problems
    assert "got 'exection'; did you mean 'execution'?" in problems
    assert f"{path}:3: [0].prompt (case 'scalars'): " in problems
    assert "YAML read yes as a boolean; quote the whole value: 'yes'" in problems
    assert "YAML read 12 as a number; quote the whole value: '12'" in problems


def test_string_where_a_list_belongs_explained(tiny_suite: Path) -> None:
    _add_cases(tiny_suite, "- id: tagged\n  prompt: Hi.\n  tags: smoke\n")
    (problem,) = _problems(tiny_suite)
    assert ":3: [0].tags (case 'tagged'): expected a list" in problem
    assert "tags: [smoke]" in problem


def test_every_problem_names_file_and_line(tiny_suite: Path) -> None:
    suite_yaml = tiny_suite / "suite.yaml"
    suite_yaml.write_text(
        suite_yaml.read_text().replace("  trials: 2", "  trials: 2\n  conditions: [none, stal]")
    )
    _add_cases(
        tiny_suite,
        "cases:\n"
        "  - id: a\n    prompt: Hi.\n    expected_skill: wait\n"
        "  - id: b\n    promt: Hi.\n"
        "  - id: c\n    prompt: Hi.\n    workflow_checks:\n"
        "      - {id: first, pattern: x, after: frist}\n",
    )
    problems = _problems(tiny_suite)
    assert len(problems) == 5, problems
    for problem in problems:
        assert re.match(r"^\S+\.yaml:\d+: ", problem), problem
    joined = "\n".join(problems)
    assert "suite.yaml:12: defaults.conditions[1]" in joined
    assert "extra.yaml:4: cases[0].expected_skill (case 'a')" in joined
    missing = "extra.yaml:5: cases[1].prompt (case 'b'): required field is missing; add 'prompt:'"
    assert missing in joined
    assert "extra.yaml:6: cases[1].promt (case 'b'): unknown field 'promt'" in joined
    assert "did you mean 'prompt'?" in joined
    assert "extra.yaml:10: cases[2].workflow_checks[0].after (case 'c')" in joined
    assert "unknown check 'frist'; did you mean 'first'?" in joined


def test_failing_reference_is_never_called_valid(
    tiny_suite: Path
) -> None:
    path = tiny_suite / "cases" / "prompt.yaml"
    path.write_text(path.read_text().replace("The sum is 100 * 101 / 2 = 5050.", "About 5000."))
    done = evalkit_cli("cases", "validate", str(tiny_suite))
    assert done.returncode == 1
    out, err = done.stdout, done.stderr
    assert "valid" not in out
    assert f"{path}:21: case 'sum-numbers': reference check failed: the reference scores " in err
    assert "fails: expected_patterns (missing: `5050`)" in err
    assert "suite 'tiny' is not valid: 1 reference check failed;" in err
    done = evalkit_cli("cases", "validate", str(tiny_suite), "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["valid"] is False
    (failure,) = report["reference_failures"]
    assert failure.startswith("sum-numbers: the reference scores ")
    assert failure.endswith("fails: expected_patterns (missing: `5050`)")


def test_reference_failure_shows_the_verifier_regex_as_written(
    tiny_suite: Path
) -> None:
    path = tiny_suite / "cases" / "execution.yaml"
    path.write_text(path.read_text().replace("pattern: '^3$'", "pattern: '^\\d{2}$'"))
    done = evalkit_cli("cases", "validate", str(tiny_suite))
    assert done.returncode == 1
    err = done.stderr
    assert f"{path}:1: case 'make-report': reference check failed: " in err
    assert "report.txt matches /^\\d{2}$/: no match" in err
    assert "\\\\d" not in err


def test_sound_suite_is_called_valid_after_its_reference_checks(
    tiny_suite: Path
) -> None:
    done = evalkit_cli("cases", "validate", str(tiny_suite))
    assert done.returncode == 0
    out = done.stdout
    assert "suite 'tiny' is valid" in out and "every reference passes its case" in out
    done = evalkit_cli("cases", "validate", str(tiny_suite), "--no-references")
    assert done.returncode == 0
    assert "(reference checks skipped)" in done.stdout


def test_an_enum_typo_in_a_check_kind_gets_a_did_you_mean(tiny_suite: Path) -> None:
    path = _add_cases(
        tiny_suite,
        "- id: fe\n  lane: execution\n  prompt: Make it.\n  verifier:\n"
        "    - kind: file_exist\n      path: out.txt\n",
    )
    problems = _problems(tiny_suite)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:5: [0].verifier[0] (case 'fe'): ")
    assert problems[0].endswith("did you mean 'file_exists'?")
