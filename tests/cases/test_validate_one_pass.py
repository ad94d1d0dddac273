"""``evalkit cases validate`` reports every problem of a suite in one pass, grouped by file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from evalkit.cases import inspect_suite
from tests.conftest import TINY, evalkit_cli

_HEADER = re.compile(r"^  (\S+) \((\d+) problems?\):$")


def _grouped(err: str) -> dict[str, list[str]]:
    """The problem lines of validate's stderr under the file header they are printed under."""
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in err.splitlines():
        header = _HEADER.match(line)
        if header:
            current = groups.setdefault(header.group(1), [])
            assert int(header.group(2)) >= 1
        elif line.startswith("    - ") and current is not None:
            current.append(line.removeprefix("    - "))
    for file, lines in groups.items():
        header_count = next(
            int(m.group(2)) for m in map(_HEADER.match, err.splitlines()) if m and m[1] == file
        )
        assert header_count == len(lines), (file, lines)
    return groups


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture drifted: {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _plant_five(suite: Path) -> dict[str, Path]:
    """Five mistakes in four files: a wrong type, a typo, a missing fixture, a duplicate id,
    a reference that fails its own case."""
    _edit(suite / "suite.yaml", "  trials: 2", "  trials: many")
    prompt = suite / "cases" / "prompt.yaml"
    _edit(
        prompt,
        "    expected_skill: waiting\n    prompt: How",
        "    expected_skil: waiting\n    prompt: How",
    )
    _edit(prompt, "The sum is 100 * 101 / 2 = 5050.", "About 5000.")
    shutil.rmtree(suite / "fixtures" / "make-report")
    extra = suite / "cases" / "zz-extra.yaml"
    extra.write_text("- id: wait-file\n  prompt: Again?\n")
    return {
        "suite": suite / "suite.yaml",
        "prompt": prompt,
        "execution": suite / "cases" / "execution.yaml",
        "extra": extra,
    }


def test_five_planted_mistakes_come_out_together_grouped_by_file(
    tiny_suite: Path, runs_dir: Path
) -> None:
    files = _plant_five(tiny_suite)
    argv = ["cases", "validate", str(tiny_suite), "--runs-dir", str(runs_dir)]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    out, err = done.stdout, done.stderr
    assert out == ""
    assert err.startswith("error: suite 'tiny' is invalid (5 problems in 4 files, of which 1 ")
    groups = _grouped(err)
    assert list(groups) == [str(files[k]) for k in ("suite", "execution", "prompt", "extra")]
    (trials,) = groups[str(files["suite"])]
    assert trials.startswith(f"{files['suite']}:11: defaults.trials: ")
    assert "got many; allowed: a whole number at least 1" in trials
    (fixture,) = groups[str(files["execution"])]
    assert fixture.startswith(f"{files['execution']}:5: [0].fixture (case 'make-report'): ")
    assert "fixture directory not found" in fixture
    typo, reference = groups[str(files["prompt"])]
    assert typo.startswith(f"{files['prompt']}:4: cases[0].expected_skil (case 'wait-server'): ")
    assert reference.startswith(f"{files['prompt']}:21: case 'sum-numbers': reference check failed")
    (duplicate,) = groups[str(files["extra"])]
    assert duplicate.startswith(f"{files['extra']}:1: [0].id (case 'wait-file'): ")
    assert f"defined at {files['prompt']}:12 and again here at {files['extra']}:1" in duplicate

    done = evalkit_cli(*argv, "--json")
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert report["valid"] is False and report["suite"] == "tiny"
    assert report["cases"] is None and report["dataset_version"] is None
    assert len(report["problems"]) == 4
    assert sorted(report["problems_by_file"]) == sorted(
        str(files[k]) for k in ("suite", "execution", "prompt", "extra")
    )
    (failure,) = report["reference_failures"]
    assert failure.startswith("sum-numbers: the reference scores ")
    assert report["references_checked"] == ["sum-numbers", "wait-file"]  # the clean ones

    run = ["run", str(tiny_suite), "--runs-dir", str(runs_dir), "--no-progress"]
    done = evalkit_cli(*run)
    assert done.returncode == 2  # a run refuses the suite with the same list, before anything runs
    err = done.stderr
    assert err.startswith("error: suite is invalid (4 problems in 4 files):")
    for line in (trials, fixture, typo, duplicate):
        assert f"    - {line}\n" in err
    assert not any(runs_dir.iterdir())


def test_an_unreadable_suite_yaml_does_not_hide_case_errors(tiny_suite: Path) -> None:
    (tiny_suite / "suite.yaml").write_text("name: tiny\nskills: [\n")
    _edit(tiny_suite / "cases" / "prompt.yaml", "    prompt: How", "    promt: How")
    found = inspect_suite(tiny_suite)
    texts = [str(p) for p in found.problems]
    assert len(texts) == 3, texts  # no "unknown skill": suite.yaml's skills cannot be read
    assert "suite.yaml:3: YAML syntax error" in texts[0]
    assert "cases[0].prompt (case 'wait-server'): required field is missing" in texts[1]
    assert "cases[0].promt (case 'wait-server'): unknown field 'promt'" in texts[2]
    assert found.suite is None and found.checkable is None


def test_a_wrong_suite_field_keeps_its_skills_checked_and_scores_unchecked(
    tiny_suite: Path,
) -> None:
    _edit(tiny_suite / "suite.yaml", "pattern: '\\bsleep\\s+\\d+'", "pattern: '(sleep'")
    _edit(tiny_suite / "cases" / "prompt.yaml", "expected_skill: waiting\n    prompt: A job",
          "expected_skill: wating\n    prompt: A job")
    found = inspect_suite(tiny_suite)
    texts = [str(p) for p in found.problems]
    assert len(texts) == 2, texts
    assert "suite.yaml:14: anti_patterns[0].pattern: invalid regular expression" in texts[0]
    assert "unknown skill 'wating'; did you mean 'waiting'?" in texts[1]
    assert found.checkable is None  # a score under a broken anti-pattern would mean nothing


def test_a_case_with_a_wrong_field_still_has_its_fixture_and_skill_checked(
    tiny_suite: Path,
) -> None:
    (tiny_suite / "cases" / "extra.yaml").write_text(
        "- id: broken\n  lane: execution\n  prompt: Do it.\n  pass_threshold: high\n"
        "  expected_skill: wating\n  fixture: fixtures/nowhere\n"
        "  verifier:\n    - {kind: file_exists, path: out.txt}\n"
    )
    texts = [str(p) for p in inspect_suite(tiny_suite).problems]
    assert len(texts) == 3, texts
    assert ":4: [0].pass_threshold (case 'broken'): " in texts[0]
    assert ":5: [0].expected_skill (case 'broken'): unknown skill 'wating'" in texts[1]
    assert ":6: [0].fixture (case 'broken'): fixture directory not found" in texts[2]


def test_duplicate_ids_name_both_definitions_even_when_invalid(tiny_suite: Path) -> None:
    extra = tiny_suite / "cases" / "zz.yaml"
    extra.write_text(
        "cases:\n  - id: solo\n    prompt: One.\n  - id: solo\n    prompt: Two.\n"
        "  - id: make-report\n    lane: nope\n    prompt: Three.\n"
    )
    texts = [str(p) for p in inspect_suite(tiny_suite).problems]
    execution = tiny_suite / "cases" / "execution.yaml"
    assert len(texts) == 3, texts
    assert texts[0] == (
        f"{extra}:4: cases[1].id (case 'solo'): duplicate case id 'solo': defined at {extra}:2 "
        f"and again here at {extra}:4; ids are unique across the suite, rename one of them"
    )
    assert texts[1].startswith(f"{extra}:6: cases[2].id (case 'make-report'): duplicate case id")
    assert f"defined at {execution}:1 and again here at {extra}:6" in texts[1]
    assert texts[2].startswith(f"{extra}:7: cases[2].lane (case 'make-report'): ")


def test_counts_read_well_and_no_problem_is_told_twice(
    tiny_suite: Path
) -> None:
    extra = tiny_suite / "cases" / "extra.yaml"
    extra.write_text("- id: one\n  prompt: Hi.\n  expectations: [12]\n")
    done = evalkit_cli("cases", "validate", str(tiny_suite), "--no-references")
    assert done.returncode == 2
    err = done.stderr
    assert err.splitlines()[0] == "error: suite 'tiny' is invalid (1 problem):"
    assert f"  {extra} (1 problem):" in err
    (line,) = _grouped(err)[str(extra)]  # one value of `str | Expectation`: one message
    assert line.startswith(f"{extra}:3: [0].expectations[0] (case 'one'): expected text, but ")
    assert "YAML read 12 as a number; quote the whole value: '12'" in line

    extra.write_text(
        "- id: one\n  prompt: Hi.\n  expectations: [12, [a]]\n  tags: smoke\n"
        "- id: two\n  prompt: Hi.\n  artifacts_required: [7]\n  lane: evidence\n"
        "  verifier: [{kind: file_exists, path: a}]\n"
        "- id: three\n  prompt: Hi.\n  expectations: [{text: ok, truht: x}]\n"
    )
    done = evalkit_cli("cases", "validate", str(tiny_suite), "--no-references")
    assert done.returncode == 2
    err = done.stderr
    assert "problem(s)" not in err
    assert err.splitlines()[0] == "error: suite 'tiny' is invalid (5 problems):"
    lines = _grouped(err)[str(extra)]
    assert len(lines) == len(set(lines)) == 5, lines
    assert not any(".str" in p or ".Expectation" in p or "ArtifactRequirement" in p for p in lines)
    truht = "[2].expectations[0].truht (case 'three'): unknown field 'truht'"
    assert any(truht in p for p in lines)


def test_a_reference_that_trips_a_suite_anti_pattern_is_a_warning(
    tiny_suite: Path, runs_dir: Path
) -> None:
    fixture = tiny_suite / "fixtures" / "fix-wait"
    fixture.mkdir()
    (fixture / "run.sh").write_text("sleep 5\necho up\n")
    case_file = tiny_suite / "cases" / "fix.yaml"
    case_file.write_text(
        "- id: fix-wait\n  lane: execution\n  expected_skill: waiting\n"
        "  fixture: fixtures/fix-wait\n  prompt: Wait for ready.txt in run.sh, not a fixed time.\n"
        "  solution:\n    - \"sed -i 's/sleep 5/until test -f ready.txt; do :; done/' run.sh\"\n"
        "  verifier:\n    - {kind: command, run: \"! grep -q 'sleep 5' run.sh\"}\n"
    )
    _edit(tiny_suite / "suite.yaml", "severity: error", "severity: warning")
    argv = ["cases", "validate", str(tiny_suite), "--runs-dir", str(runs_dir)]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    out, err = done.stdout, done.stderr
    assert "suite 'tiny' is valid: 5 cases" in out
    (warning,) = err.splitlines()
    assert warning.startswith(f"warning: {case_file}:7: [0].solution[0] (case 'fix-wait'): ")
    assert "the suite anti-pattern 'blind-sleep' (/\\bsleep\\s+\\d+/) matches the solution " in (
        warning
    )
    assert "('sleep 5')" in warning and "every item of this case" in warning

    done = evalkit_cli(*argv, "--json", "--no-references")
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["valid"] is True and report["problems"] == []
    (as_json,) = report["warnings"]
    assert (as_json["case_id"], as_json["field"], as_json["line"]) == (
        "fix-wait", "[0].solution[0]", 7
    )

    _edit(tiny_suite / "suite.yaml", "severity: warning", "severity: error")
    done = evalkit_cli(*argv)
    assert done.returncode == 1  # an error rule fails the reference itself: the warning says why
    err = done.stderr
    assert "fails every item of this case that solves it this way (severity error)" in err
    assert "case 'fix-wait': reference check failed: " in err
    assert "anti_patterns (blind-sleep (error) in \"" in err  # the matched text is quoted


def test_a_file_read_for_several_fields_is_one_problem(
    tiny_suite: Path
) -> None:
    skill = tiny_suite / "skills" / "waiting" / "SKILL.md"
    skill.write_bytes(b"\x00binary")
    suite_yaml = tiny_suite / "suite.yaml"
    _edit(suite_yaml, "bootstrap.md", "SKILL.md")
    _edit(suite_yaml, "stale: skills/waiting/stale.md", "stale: skills/waiting/SKILL.md")
    done = evalkit_cli("cases", "validate", str(tiny_suite), "--no-references")
    assert done.returncode == 2
    err = done.stderr
    assert err.splitlines() == [
        "error: suite 'tiny' is invalid (1 problem):",
        f"  {skill} (1 problem):",
        f"    - {skill}: binary file (contains NUL bytes); expected text",
    ]


def test_a_suite_yaml_section_of_the_wrong_type_skips_the_reference_checks(
    tiny_suite: Path
) -> None:
    _edit(tiny_suite / "suite.yaml", "defaults:\n  trials: 2", "defaults: 2")
    _edit(tiny_suite / "cases" / "prompt.yaml", "    prompt: How", "    promt: How")
    done = evalkit_cli("cases", "validate", str(tiny_suite))
    assert done.returncode == 2
    err = done.stderr
    assert "(3 problems in 2 files):" in err  # promt: unknown, and prompt is missing
    assert "suite.yaml:10: defaults: Input should be a valid dictionary" in err
    assert "reference checks not run: suite.yaml's defaults or anti_patterns have problems" in err
    assert "reference check failed" not in err


def test_run_warns_of_a_reference_that_trips_an_anti_pattern_before_its_items_run(
    tiny_suite: Path, runs_dir: Path
) -> None:
    """The warning of ``cases validate`` is printed by ``run`` too (stderr; the JSON intact)."""
    (tiny_suite / "cases" / "fix.yaml").write_text(
        "- id: fix-wait\n  lane: prompt\n  expected_skill: waiting\n"
        "  prompt: How do I wait for ready.txt instead of a fixed time?\n"
        "  reference: run sleep 5, then read ready.txt\n"
    )
    done = evalkit_cli(
        "run", tiny_suite, "--runs-dir", runs_dir, "--trials", "1", "--no-progress", "--json",
        "--lane", "prompt",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run_id"]
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert "(case 'fix-wait')" in warning and "'blind-sleep'" in warning
    assert "every item of this case" in warning
    clean = evalkit_cli(
        "run", TINY, "--runs-dir", runs_dir,
        "--trials", "1", "--no-progress", "--json", "--lane", "prompt",
    )
    assert clean.returncode == 0 and "warning: " not in clean.stderr
