"""Round three's smaller attacks, each done for real through the CLI.

- ``--run-id .cache``: the run would be written into the outcome cache's folder;
- a dangling symlink inside a fixture (the docs say unresolvable links are refused);
- setup under an inherited ``ulimit -f``: 12 error rows and exit 0 before, now exit 75;
- an eval id of NaN in evals.json.
"""

from __future__ import annotations

import json
import resource
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, TINY, evalkit_cli, evalkit_process

SKILL = ROOT / "tests" / "fixtures" / "skills" / "release-notes"


def test_a_run_id_naming_the_cache_is_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for run_id in (".cache", ".hidden"):
        done = evalkit_cli("run", str(TINY), "--runs-dir", str(runs), "--run-id", run_id,
                        "--trials", "1", "--no-progress")  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert f"--run-id '{run_id}' starts with '.'" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (runs / ".cache" / "manifest.json").exists() and not (runs / ".hidden").exists()


def test_a_dangling_fixture_link_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    (suite / "fixtures" / "make-report" / "dangling").symlink_to("nowhere")
    done = evalkit_cli("cases", "validate", str(suite), "--no-references")
    assert done.returncode == 2
    assert "make-report/dangling: dangling symlink (its target 'nowhere' does not exist)" in (
        done.stderr
    )


def _ulimit_f(kib: int) -> None:
    limit = kib * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # as `ulimit -f` sets both


@pytest.mark.slow
def test_setup_under_an_inherited_file_size_limit_stops_the_run(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    cases = suite / "cases" / "execution.yaml"
    setup = "  setup:\n    - head -c {} /dev/zero > seed.bin\n"
    base = cases.read_text()
    anchor = "  fixture: fixtures/make-report\n"
    args = ["run", str(suite), "--lane", "execution", "--trials", "3", "--no-progress",
            "--no-cache", "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    # within the inherited limit the sandbox keeps it (prlimit cannot raise it) and setup runs
    cases.write_text(base.replace(anchor, anchor + setup.format(200_000)))
    fits = evalkit_process(*args, "--run-id", "fits", preexec_fn=lambda: _ulimit_f(1000))
    assert fits.returncode == 0, fits.stderr
    # beyond it, setup fails for lack of room: the disk stop, not 12 error rows
    cases.write_text(base.replace(anchor, anchor + setup.format(2_000_000)))
    over = evalkit_process(*args, "--run-id", "over", preexec_fn=lambda: _ulimit_f(1000))
    assert over.returncode == 75, over.stderr
    assert "RLIMIT_FSIZE" in over.stderr and "resume with:" in over.stderr
    assert "Traceback" not in over.stderr


def test_an_eval_id_of_nan_is_refused(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(SKILL, skill)
    evals = skill / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    data["evals"][0]["id"] = float("nan")
    evals.write_text(json.dumps(data))  # writes NaN, which Python's reader accepts
    done = evalkit_cli("cases", "import", str(skill), "-o", str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{evals}: evals[0]: id nan is not an eval id" in done.stderr
    assert not (tmp_path / "out").exists()
