"""Every JSON importer, fed mutated real fixtures: exit 0 or 2, never a traceback.

Each case copies a committed fixture, replaces one to three of its values (anywhere in the
document) with values a broken harness or an attacker would write: null, integers past int64,
NaN and infinity, negatives, empty and huge strings, lists and objects where scalars belong,
out-of-range times, a NUL, a path escaping upwards. The import is the real command; the result
must be a run (exit 0, impossible figures nulled with a warning) or a clear refusal (exit 2).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, evalkit_cli

FIXTURES = ROOT / "tests" / "fixtures" / "imports"
SOURCES = {
    "harbor": FIXTURES / "harbor" / "job-no-skills",
    "promptfoo": FIXTURES / "promptfoo" / "results.json",
    "skill-creator": FIXTURES / "skill-creator" / "benchmark.json",
    "inspect": FIXTURES / "inspect-json" / "capitals-beta.json",
    "jsonl": FIXTURES / "tables" / "results.jsonl",
}
HOSTILE: list[Any] = [
    None, 10**30, -(10**30), float("nan"), float("inf"), -1, "", "x" * 5000, [], {}, True,
    "0001-01-01T00:00:00+05:00", "\u0000", "../../etc", 1.5, "2026-13-45",
]
MUTATIONS = 25  # per format (a fixed seed: the same documents every run)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path] if path else []


def _mutate(text: str, rng: random.Random) -> str:
    document = json.loads(text)
    paths = _leaves(document)
    for path in rng.sample(paths, min(len(paths), rng.randint(1, 3))):
        holder = document
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = rng.choice(HOSTILE)
    return json.dumps(document)


@pytest.mark.parametrize("fmt", sorted(SOURCES))
def test_mutated_fixtures_import_or_are_refused_never_crash(fmt: str, tmp_path: Path) -> None:
    rng = random.Random(f"{fmt}-13")
    source = SOURCES[fmt]
    outcomes = {0: 0, 2: 0}
    for number in range(MUTATIONS):
        work = tmp_path / str(number)
        if source.is_dir():
            shutil.copytree(source, work / source.name)
            target = rng.choice(sorted((work / source.name).glob("*/result.json")))
            given = work / source.name
        else:
            work.mkdir()
            target = work / source.name
            shutil.copy(source, target)
            given = target
        if target.suffix == ".jsonl":
            lines = target.read_text().splitlines()
            index = rng.randrange(len(lines))
            lines[index] = _mutate(lines[index], rng)
            target.write_text("\n".join(lines) + "\n")
        else:
            target.write_text(_mutate(target.read_text(), rng))
        done = evalkit_cli("import", given, "--format", fmt, "--run-id", "m",
                           "--runs-dir", work / "runs")  # an uncaught exception fails here
        assert done.returncode in (0, 2), (number, done.returncode, done.stderr[-500:])
        assert "Traceback" not in done.stderr, (number, done.stderr[-500:])
        outcomes[done.returncode] += 1
    assert sum(outcomes.values()) == MUTATIONS


def _inspect_tokens(document: dict[str, Any]) -> None:
    usage = document["samples"][0]["model_usage"]
    next(iter(usage.values()))["output_tokens"] = "../../etc"


def _skill_creator_steps(document: dict[str, Any]) -> None:
    document["runs"][0]["result"]["tool_calls"] = 10**30


def _promptfoo_tokens(document: dict[str, Any]) -> None:
    for result in document["results"]["results"]:
        result.setdefault("response", {})["tokenUsage"] = {"prompt": float("inf"),
                                                           "completion": 3}


@pytest.mark.parametrize(("fmt", "attack"), [
    ("inspect", _inspect_tokens), ("skill-creator", _skill_creator_steps),
    ("promptfoo", _promptfoo_tokens),
])
def test_the_crashes_mutation_found_stay_fixed(fmt: str, attack: Any, tmp_path: Path) -> None:
    """Each once raised (ValueError, pyarrow OverflowError, OverflowError): now a run, the
    impossible figure null."""
    target = tmp_path / SOURCES[fmt].name
    document = json.loads(SOURCES[fmt].read_text())
    attack(document)
    target.write_text(json.dumps(document))
    done = evalkit_cli("import", target, "--format", fmt, "--run-id", "m",
                       "--runs-dir", tmp_path / "runs")
    assert done.returncode == 0, done.stderr


def test_rows_with_and_without_a_provider_still_summarise(tmp_path: Path) -> None:
    """A JSONL where one row has no provider once crashed the import's rate summary."""
    lines = SOURCES["jsonl"].read_text().splitlines()
    first = json.loads(lines[0])
    first["provider"] = None
    lines[0] = json.dumps(first)
    target = tmp_path / "results.jsonl"
    target.write_text("\n".join(lines) + "\n")
    done = evalkit_cli("import", target, "--format", "jsonl", "--run-id", "m",
                       "--runs-dir", tmp_path / "runs")
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr
