"""The scheduled weekly-trend example: its evalkit commands parse, its runs store really works."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import build_parser
from tests.conftest import ROOT

WORKFLOW = ROOT / "docs" / "examples" / "evalkit-weekly-trend.yml"
FIXTURE_RUN = ROOT / "tests" / "fixtures" / "runs" / "w41"


def _steps() -> list[dict[str, Any]]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps: list[dict[str, Any]] = data["jobs"]["weekly"]["steps"]
    return steps


def _step(name: str) -> str:
    script: str = next(step["run"] for step in _steps() if step.get("name") == name)
    return script


def test_it_is_scheduled_and_publishes_the_trend() -> None:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = data[True] if True in data else data["on"]  # YAML 1.1 reads `on` as True
    assert triggers["schedule"][0]["cron"].split()[4] == "1"  # weekly, on Mondays
    uploads = [s for s in _steps() if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["path"].startswith("reports/")
    assert "--kind trend" in _step("Render the trend")


@pytest.mark.parametrize("name", ["Run the suite", "Render the trend"])
def test_its_evalkit_commands_parse(name: str) -> None:
    argv = shlex.split(_step(name).replace("$RUN_ID", "weekly-2026-W49-1"))
    assert argv[0] == "evalkit"
    args = build_parser().parse_args(argv[1:])
    assert args.func is not None


def _bash(script: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _week(origin: Path, work: Path, attempt: str) -> str:
    """One scheduled job's store steps in a fresh clone, with a run where the suite writes it."""
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True)
    env_file = work.parent / f"{work.name}.env"
    env = {**os.environ, "RUNS_BRANCH": "evalkit-runs", "GITHUB_ENV": str(env_file),
           "GITHUB_RUN_ATTEMPT": attempt}
    _bash(_step("Check out the runs store"), work, env)
    run_id = env_file.read_text().strip().removeprefix("RUN_ID=")
    shutil.copytree(FIXTURE_RUN, work / "runs" / run_id)
    (work / "runs" / ".cache").mkdir(exist_ok=True)
    (work / "runs" / ".cache" / "entry.json").write_text("{}")
    _bash(_step("Append the run to the store"), work, {**env, "RUN_ID": run_id})
    return run_id


def test_the_runs_store_grows_by_one_run_a_week(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed (the workflow uses it)")
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(seed)], check=True)
    (seed / "README").write_text("skills\n")
    git = ["git", "-C", str(seed), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    subprocess.run([*git, "push", "-q", str(origin), "main"], check=True)

    first = _week(origin, tmp_path / "week1", "1")  # creates the branch
    second = _week(origin, tmp_path / "week2", "2")  # appends to it
    assert first != second
    listing = subprocess.run(
        ["git", "-C", str(origin), "ls-tree", "-r", "--name-only", "evalkit-runs"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    assert f"{first}/results.parquet" in listing and f"{second}/results.parquet" in listing
    assert f"{first}/manifest.json" in listing
    assert not any(name.startswith(".cache/") for name in listing)  # the cache stays out
    assert "README" not in listing  # the store branch holds runs only


def test_every_week_draws_fresh_samples() -> None:
    """A week served from the outcome cache would copy an earlier week: drift could never show."""
    argv = shlex.split(_step("Run the suite"))
    args = build_parser().parse_args(argv[1:])
    assert "--no-cache" in argv and args.no_cache is True
    assert not any(str(s.get("uses", "")).startswith("actions/cache") for s in _steps())
    comments = WORKFLOW.read_text(encoding="utf-8")
    assert "draws fresh samples" in comments
