"""Untrusted JSON and YAML are read through one bounded reader (size and nesting depth).

The attack of each test is the one that crashed evalkit before: 200,000 nested brackets
(``[[[...]]]``) in a cache entry, an evals.json, a trigger set, a benchmark.json, a manifest
(resumed and reported). Python's parser raises ``RecursionError`` on them; evalkit must count
the cache entry as a miss and refuse everything else with exit 2 naming the file and the bound.

:func:`test_every_json_and_yaml_parse_goes_through_the_bounded_reader` lists the readers: a
new ``json.loads`` (or YAML load) in ``evalkit/`` fails it unless it goes through
``evalkit._untrusted`` or is listed in :data:`TRUSTED` with the reason its text is evalkit's own.
"""

from __future__ import annotations

import ast
import json
import shutil
import time
from pathlib import Path

import pytest

from evalkit._untrusted import MAX_DEPTH, InputBoundError, json_depth, load_json, load_yaml
from tests.conftest import ROOT, TINY, CliResult, evalkit_cli

DEEP = "[" * 200_000 + "]" * 200_000
RUN = ["--trials", "1", "--seed", "3", "--no-progress", "--backend", "threading"]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "release-notes"
BENCHMARK = ROOT / "tests" / "fixtures" / "imports" / "skill-creator" / "benchmark.json"

#: Parse calls outside evalkit/_untrusted.py, each with why its text is not untrusted:
#: ``(file relative to evalkit/, enclosing function, call) -> reason``. To add a reader of a
#: file or stream evalkit did not write in this process, call ``evalkit._untrusted.load_json``,
#: ``read_json``, ``load_yaml`` or ``check_yaml`` instead of adding a line here.
TRUSTED: dict[tuple[str, str, str], str] = {
    ("cases/_docs.py", "_evidence_section", "yaml.safe_load"): (
        "the documentation's own example, a constant of the module"
    ),
    ("providers/_registry.py", "_cached", "json.loads"): (
        "the canonical settings JSON its caller built with settings_json()"
    ),
    ("providers/_registry.py", "canonical_settings", "json.loads"): (
        "settings_json() output of this process"
    ),
    ("runner/_cache.py", "put", "json.loads"): "json.dumps of the entry just built",
    ("runner/_cache.py", "_verify", "model_validate_json"): (
        "the same text already passed load_json a few lines above"
    ),
    ("interop/_import_inspect.py", "_read_with_inspect_ai", "json.loads"): (
        "model_dump_json() of the log inspect_ai itself read"
    ),
    ("cases/_source.py", "parse_yaml", "_YAML_LOADER"): (
        "suite files: _loader checks each text with check_yaml before parse_yaml"
    ),
    ("cases/_loader.py", "_first_alias", "yaml.parse"): (
        "an event scan, which builds nothing, after check_yaml"
    ),
}

_PARSERS = {
    "json.load",
    "json.loads",
    "yaml.load",
    "yaml.safe_load",
    "yaml.full_load",
    "yaml.unsafe_load",
    "yaml.load_all",
    "yaml.safe_load_all",
    "yaml.parse",
    "yaml.compose",
    "pd.read_json",
    "pandas.read_json",
    "model_validate_json",
    "_YAML_LOADER",
}


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and f"{func.value.id}.{func.attr}" in _PARSERS:
            return f"{func.value.id}.{func.attr}"
        return func.attr
    return ""


def _parse_calls() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    package = ROOT / "evalkit"
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel == "_untrusted.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, function: str, rel: str = rel) -> None:
            for child in ast.iter_child_nodes(node):
                name = function
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = child.name
                if isinstance(child, ast.Call) and _call_name(child) in _PARSERS:
                    found.add((rel, function, _call_name(child)))
                visit(child, name)

        visit(tree, "<module>")
    return found


def test_every_json_and_yaml_parse_goes_through_the_bounded_reader() -> None:
    calls = _parse_calls()
    unlisted = sorted(calls - TRUSTED.keys())
    assert not unlisted, (
        "these parse untrusted text without the bounds of evalkit/_untrusted.py (use its "
        "load_json/read_json/load_yaml, or list the call in TRUSTED with the reason its "
        f"text is evalkit's own): {unlisted}"
    )
    assert not TRUSTED.keys() - calls, f"stale TRUSTED entries: {sorted(TRUSTED.keys() - calls)}"


def test_the_reader_refuses_depth_and_size_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = time.perf_counter()
    with pytest.raises(InputBoundError, match=r"x\.json: JSON nested more than 128 levels"):
        load_json(DEEP, "x.json")
    assert time.perf_counter() - started < 30  # a loose sanity bound, not a benchmark
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert json_depth(nested) == MAX_DEPTH and load_json(nested, "x") is not None
    # brackets inside strings (escaped quotes included) are text, not nesting
    assert load_json(json.dumps({"a": "[" * 500 + '\\"' + "{" * 500}), "x")["a"].startswith("[")
    with pytest.raises(InputBoundError, match=r"g\.yaml: line 1.*YAML nested more than 128"):
        load_yaml("a: " + "[" * 500 + "]" * 500, "g.yaml")
    with pytest.raises(InputBoundError, match="aliases are not allowed"):
        load_yaml("a: &x [1]\nb: *x\n", "g.yaml")
    monkeypatch.setenv("EVALKIT_MAX_INPUT_BYTES", "100")
    with pytest.raises(InputBoundError, match=r"x\.json: 101 bytes, more than the 100 bytes"):
        load_json("[" + "1," * 49 + "1]", "x.json")


def _refused(proc: CliResult, file: Path) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert str(file) in proc.stderr, proc.stderr
    assert "nested more than 128 levels" in proc.stderr, proc.stderr


def test_a_deep_cache_entry_is_a_logged_miss(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    runs = tmp_path / "runs"
    first = evalkit_cli("run", str(suite), "--runs-dir", str(runs), "--run-id", "a", *RUN)
    assert first.returncode == 0, first.stderr
    entries = sorted((runs / ".cache").glob("??/*.json"))
    assert entries
    entries[0].write_text(DEEP)
    second = evalkit_cli("run", str(suite), "--runs-dir", str(runs), "--run-id", "b", *RUN)
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr
    events = [json.loads(line) for line in (runs / "b" / "events.jsonl").read_text().splitlines()]
    rejected = [e for e in events if e["event"] == "cache_rejected"]
    assert len(rejected) == 1 and "nested more than 128" in str(rejected[0]), rejected
    assert json.loads(entries[0].read_text())["version"] == 2  # rewritten as a valid entry
    third = evalkit_cli("run", str(suite), "--runs-dir", str(runs), "--run-id", "c", *RUN)
    assert third.returncode == 0, third.stderr  # later runs are not aborted either


def test_deep_evals_json_and_triggers_are_refused_naming_the_file(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(SKILL, skill)
    evals = skill / "evals" / "evals.json"
    good = evals.read_text()
    evals.write_text(DEEP)
    _refused(evalkit_cli("cases", "import", str(skill), "-o", str(tmp_path / "s1")), evals)
    evals.write_text(good)
    triggers = tmp_path / "triggers.json"
    triggers.write_text(DEEP)
    proc = evalkit_cli(
        "cases", "import", str(skill), "-o", str(tmp_path / "s2"), "--triggers", str(triggers)
    )
    _refused(proc, triggers)


def test_a_deep_benchmark_json_import_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "benchmark.json"
    bench.write_text('{"runs": ' + DEEP + "}")
    proc = evalkit_cli(
        "import", str(bench), "--format", "skill-creator", "--run-id", "x",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    _refused(proc, bench)
    assert not (tmp_path / "runs" / "x").exists()


def test_a_deep_manifest_is_refused_by_resume_and_report(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    runs = tmp_path / "runs"
    first = evalkit_cli("run", str(suite), "--runs-dir", str(runs), "--run-id", "a", *RUN)
    assert first.returncode == 0, first.stderr
    manifest = runs / "a" / "manifest.json"
    manifest.write_text('{"version": ' + DEEP + "}")
    resumed = evalkit_cli(
        "run", str(suite), "--runs-dir", str(runs), "--run-id", "a", "--resume", *RUN
    )
    _refused(resumed, manifest)
    report = evalkit_cli("report", "a", "--runs-dir", str(runs), "-o", str(tmp_path / "r.html"))
    _refused(report, manifest)
