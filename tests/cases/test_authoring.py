"""Writing a suite: `evalkit init`, JSON Schema for editors, and docs generated from the models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from evalkit import read_run
from evalkit.cases import SuiteFile, cases_schema, init_suite, load_suite, suite_schema
from evalkit.cases._docs import _models, render_suites_markdown
from evalkit.cases._models import CaseFile
from evalkit.scorers._verifiers import run_check, run_command
from tests.conftest import DEMO, ROOT, TINY, evalkit_cli

SCHEMA_LINE = "# yaml-language-server: $schema="


@pytest.mark.slow
def test_init_then_validate_then_run(tmp_path: Path) -> None:
    suite = tmp_path / "commit-suite"
    init = evalkit_cli("init", str(suite))
    assert init.returncode == 0, init.stderr
    assert f"wrote suite 'commit-suite' in {suite}" in init.stdout

    validate = evalkit_cli("cases", "validate", str(suite))
    assert validate.returncode == 0, validate.stderr
    assert "suite 'commit-suite' is valid: 7 cases (1 execution, 6 prompt), 1 skills" in (
        validate.stdout
    )
    assert "every reference passes its case" in validate.stdout

    runs = tmp_path / "runs"
    run = evalkit_cli(
        "run", str(suite), "--trials", "1", "--runs-dir", str(runs), "--run-id", "first",
        "--no-progress", "--json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["run_id"] == "first"
    results = read_run(runs / "first")
    assert len(results) == 7 * 4
    assert set(results["condition"]) == {"none", "self-load", "preloaded", "stale"}
    assert set(results["status"]) == {"ok"}
    assert set(results["suite"]) == {"commit-suite"}
    assert (results["case_id"] == "commit-staged-fix").sum() == 4


def test_scaffold_inventory(tmp_path: Path) -> None:
    suite = load_suite(init_suite(tmp_path / "s").root)
    (skill,) = suite.skills.values()
    assert {"canonical", "bootstrap", "stale"} <= set(skill.texts)
    assert len({skill.texts[v] for v in ("canonical", "bootstrap", "stale")}) == 3
    prompt = [c for c in suite.cases if c.lane == "prompt"]
    categories = {c.category for c in prompt}
    assert categories == {"trigger", "should-not-trigger", "anti-pattern"}
    for category in categories:
        assert sum(c.category == category for c in prompt) >= 2
    assert all(c.expected_skill == "none" for c in prompt if c.category == "should-not-trigger")
    (execution,) = [c for c in suite.cases if c.lane == "execution"]
    assert execution.fixture and execution.setup and execution.solution and execution.verifier


def test_scaffold_fixture_fails_its_verifier_until_the_solution_runs(tmp_path: Path) -> None:
    suite = load_suite(init_suite(tmp_path / "s").root)
    (case,) = [c for c in suite.cases if c.lane == "execution"]
    assert case.fixture is not None
    workspace = tmp_path / "workspace"
    shutil.copytree(suite.root / case.fixture, workspace)
    for command in case.setup:
        assert run_command(command, workspace, 30).exit_code == 0
    before = [run_check(check, workspace).passed for check in case.verifier]
    assert not all(before)
    for command in case.solution:
        assert run_command(command, workspace, 30).exit_code == 0
    after = [run_check(check, workspace) for check in case.verifier]
    assert all(result.passed for result in after), after


def test_init_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    refused = evalkit_cli("init", str(target))
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert f"{target} is not empty" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]

    forced = evalkit_cli("init", str(target), "--force", "--name", "mine", "--json")
    assert forced.returncode == 0, forced.stderr
    report = json.loads(forced.stdout)
    assert report["suite"] == "mine" and "suite.yaml" in report["files"]
    assert (target / "notes.txt").read_text() == "mine"
    assert load_suite(target).name == "mine"


def test_init_rejects_a_bad_name_and_a_file(
    tmp_path: Path
) -> None:
    done = evalkit_cli("init", str(tmp_path / "a"), "--name", "-bad name")
    assert done.returncode == 2
    assert "--name '-bad name' is not a valid suite name" in done.stderr
    file = tmp_path / "file.txt"
    file.write_text("x")
    done = evalkit_cli("init", str(file))
    assert done.returncode == 2
    assert f"{file} is a file" in done.stderr


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, data: Any) -> list[str]:
    return [error.message for error in validator.iter_errors(data)]


def test_init_points_every_yaml_file_at_the_written_schema(tmp_path: Path) -> None:
    root = init_suite(tmp_path / "s").root
    yaml_files = sorted(root.rglob("*.yaml"))
    assert len(yaml_files) == 5
    for path in yaml_files:
        first = path.read_text().splitlines()[0]
        assert first.startswith(SCHEMA_LINE), path
        schema_path = (path.parent / first.removeprefix(SCHEMA_LINE)).resolve()
        expected = "suite.schema.json" if path.name == "suite.yaml" else "cases.schema.json"
        assert schema_path == (root / "schema" / expected).resolve()
        validator = _validator(json.loads(schema_path.read_text()))
        assert _errors(validator, yaml.safe_load(path.read_text())) == [], path


@pytest.mark.parametrize("suite_dir", [DEMO, TINY], ids=["demo", "tiny"])
def test_schemas_accept_the_bundled_suites(suite_dir: Path) -> None:
    suite_validator = _validator(suite_schema())
    cases_validator = _validator(cases_schema())
    assert _errors(suite_validator, yaml.safe_load((suite_dir / "suite.yaml").read_text())) == []
    case_files = sorted((suite_dir / "cases").glob("*.yaml"))
    assert case_files
    for path in case_files:
        assert _errors(cases_validator, yaml.safe_load(path.read_text())) == [], path


def test_schemas_flag_the_mistakes_the_loader_rejects() -> None:
    suite_validator = _validator(suite_schema())
    suite = yaml.safe_load((DEMO / "suite.yaml").read_text())
    assert "'name' is a required property" in _errors(
        suite_validator, {k: v for k, v in suite.items() if k != "name"}
    )
    suite["defaults"]["trialz"] = 3
    assert any("'trialz' was unexpected" in e for e in _errors(suite_validator, suite))

    cases_validator = _validator(cases_schema())
    case = {"id": "x", "prompt": "Hi.", "lane": "exection"}
    assert _errors(cases_validator, {"cases": [case]})
    assert _errors(cases_validator, {"cases": [{"id": "x", "prompt": "Hi."}]}) == []
    assert _errors(cases_validator, [{"id": "x", "prompt": "Hi."}]) == []
    verifier = {"kind": "file_present", "path": "a"}
    assert _errors(cases_validator, {"id": "x", "prompt": "Hi.", "verifier": [verifier]})
    lanes = cases_schema()["$defs"]["Case"]["properties"]["lane"]["enum"]
    assert lanes == ["prompt", "execution", "evidence"]


def test_schema_command_writes_both_files(tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    proc = evalkit_cli("schema", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    files = json.loads(proc.stdout)["files"]
    assert files == [str(out / "suite.schema.json"), str(out / "cases.schema.json")]
    assert json.loads((out / "suite.schema.json").read_text()) == suite_schema()
    assert json.loads((out / "cases.schema.json").read_text()) == cases_schema()
    field = suite_schema()["properties"]["defaults"]
    assert field["description"] == "Run defaults."


def test_committed_docs_match_the_models() -> None:
    committed = (ROOT / "docs" / "suites.md").read_text()
    assert committed == render_suites_markdown(), (
        "docs/suites.md is out of date: run `evalkit schema --markdown > docs/suites.md`"
    )
    done = evalkit_cli("schema", "--markdown")
    assert done.returncode == 0
    assert done.stdout == committed


def test_docs_cover_every_field_of_every_model() -> None:
    docs = render_suites_markdown()
    models = _models(SuiteFile, CaseFile)
    assert len(models) >= 12
    for model in models:
        assert f"\n### {model.__name__}\n" in docs
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"
            assert f"| `{name}` |" in docs
    for example in ("### `suite.yaml`", "### `cases/trigger.yaml`", "### `cases/execution.yaml`"):
        assert example in docs
    assert "cases/trigger.yaml:7: cases[0].expected_skil (case 'commit-bugfix')" in docs
