"""Run ids, skill names and fixture paths cannot reach outside their directories."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.runner import RunConfig, run
from tests.conftest import TINY, evalkit_cli

HOSTILE_RUN_IDS = ["..", ".", "../escaped", "a/b", "/tmp/evalkit-absolute-run", "x\x00y", "-x"]


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS)
@pytest.mark.parametrize("resume", [False, True])
def test_hostile_run_id_is_refused_and_nothing_is_written(
    tmp_path: Path, run_id: str, resume: bool
) -> None:
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    # what `--run-id .. --resume` used to compact away: a parts/ directory beside runs/
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "precious.txt").write_text("keep me")
    before = _tree(tmp_path)
    argv = ["run", str(TINY), "--runs-dir", str(runs_dir), f"--run-id={run_id}", "--no-progress"]
    done = evalkit_cli(*[*argv, "--resume"] if resume else argv)
    code = done.returncode
    err = done.stderr
    assert code == 2, err
    assert "--run-id" in err and "plain name" in err
    assert _tree(tmp_path) == before, "nothing was created or deleted"
    assert not Path("/tmp/evalkit-absolute-run").exists()


@pytest.mark.parametrize("run_id", HOSTILE_RUN_IDS)
def test_library_refuses_hostile_run_id(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ConfigError, match="run id"):
        RunConfig(runs_dir=tmp_path, run_id=run_id)


def test_plain_run_ids_still_work(tmp_path: Path) -> None:
    result = run(
        TINY, RunConfig(runs_dir=tmp_path, run_id="base.line_1-a", trials=1, progress=False)
    )
    assert result.run_dir == tmp_path / "base.line_1-a"
    assert result.items == 16


def test_optimize_refuses_hostile_run_id(
    tmp_path: Path
) -> None:
    runs_dir = tmp_path / "runs"
    done = evalkit_cli("optimize",
                  str(TINY),
                  "--skill",
                  "waiting",
                  "--optimizer",
                  "command:cat",
                  "--runs-dir",
                  str(runs_dir),
                  "--run-id",
                  "../outside")
    code = done.returncode
    err = done.stderr
    assert code == 2, err
    assert "--run-id" in err
    assert not (tmp_path / "outside").exists()


def _suite_with(tmp_path: Path, old: str, new: str, rel: str = "suite.yaml") -> Path:
    root = tmp_path / "suite"
    shutil.copytree(TINY, root)
    path = root / rel
    text = path.read_text()
    assert old in text, f"fixture drifted: {old!r} not in {rel}"
    path.write_text(text.replace(old, new))
    return root


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", "/abs"])
def test_hostile_skill_name_is_a_validation_error(
    tmp_path: Path, name: str
) -> None:
    root = _suite_with(tmp_path, "  waiting:\n", f"  '{name}':\n")
    runs_dir = tmp_path / "runs"
    done = evalkit_cli("cases", "validate", str(root))
    assert done.returncode == 2
    err = done.stderr
    assert "suite.yaml" in err and "skills" in err and "rename the skill" in err
    done = evalkit_cli("run", str(root), "--runs-dir", str(runs_dir), "--no-progress")
    assert done.returncode == 2
    assert not runs_dir.exists() or not any(runs_dir.iterdir())
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fixture", ["/etc", "../outside", "fixtures/../../outside", "link"])
def test_fixture_outside_the_suite_is_a_validation_error(
    tmp_path: Path, fixture: str
) -> None:
    root = _suite_with(
        tmp_path, "fixture: fixtures/make-report", f"fixture: {fixture}", "cases/execution.yaml"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the agent")
    os.symlink(outside, root / "link")
    done = evalkit_cli("cases", "validate", str(root))
    assert done.returncode == 2
    err = done.stderr
    assert "execution.yaml" in err and ".fixture" in err and "outside the suite" in err


def test_fixture_inside_the_suite_through_a_symlink_is_fine(tmp_path: Path) -> None:
    root = _suite_with(
        tmp_path, "fixture: fixtures/make-report", "fixture: alias", "cases/execution.yaml"
    )
    os.symlink(root / "fixtures" / "make-report", root / "alias")
    result = run(root, RunConfig(runs_dir=tmp_path / "runs", trials=1, progress=False))
    assert result.items == 16
