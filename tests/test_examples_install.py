"""The CI examples install the project, not a name from the index, and their offline steps work.

The wheel is built from this checkout and installed into a new venv (without evalkit; the
dependencies linked in from this environment, see ``fresh_venv``) by each example's own
install step (``EVALKIT_WHEEL`` set, as the examples allow); then every ``run:`` step that needs
neither the network nor root is run as written (GitHub expressions filled with their defaults)
in a scratch git repository that holds a suite, against a local bare ``origin``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, TINY

EXAMPLES = ROOT / "docs" / "examples"
WORKFLOWS = ("evalkit-gate.yml", "evalkit-weekly-trend.yml")
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")

# one worker builds the wheel and the venv once for both workflows (make test: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("examples-install")]


def _workflow(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    return data


def _job(name: str) -> dict[str, Any]:
    jobs = _workflow(name)["jobs"]
    assert len(jobs) == 1
    job: dict[str, Any] = next(iter(jobs.values()))
    return job


def _fill(text: str) -> str:
    """A GitHub expression becomes its ``|| 'default'``, or empty (secrets, event inputs)."""

    def value(match: re.Match[str]) -> str:
        default = re.search(r"\|\|\s*'([^']*)'", match.group(1))
        return default.group(1) if default else ""

    return _EXPRESSION.sub(value, text)


def _is_install(script: str) -> bool:
    return "pip install" in script


def _offline(script: str) -> bool:
    """Steps that need root or the network (apt-get) are the runner's business, not evalkit's."""
    return "apt-get" not in script


@pytest.mark.parametrize("name", WORKFLOWS)
def test_the_example_installs_this_project_pinned_never_a_bare_index_name(name: str) -> None:
    job = _job(name)
    installs = [s["run"] for s in job["steps"] if "run" in s and _is_install(s["run"])]
    pinned = "skill-evalkit @ git+$EVALKIT_REPO@$EVALKIT_COMMIT"
    assert installs == [f'pip install "${{EVALKIT_WHEEL:-{pinned}}}"']
    assert _COMMIT.match(job["env"]["EVALKIT_COMMIT"])
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    assert not re.search(r"pip install\s+['\"]?evalkit\b", code)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("skill_evalkit-*-py3-none-any.whl")
    return path


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv without evalkit, its dependencies linked in from this test's environment.

    Unpacking the ~100 dependency wheels again took most of this module's two minutes of CPU
    and tests pip, not the examples: the venv sees this environment's packages, the project's
    own distribution left out, through a ``.pth`` file (after its own site-packages), so the
    example's install step checks every requirement of the wheel and installs the wheel itself.
    """
    root = tmp_path_factory.mktemp("venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    here = Path(sysconfig.get_paths()["purelib"])
    overlay = root / "dependencies"
    overlay.mkdir()
    for entry in here.iterdir():
        name = entry.name.lower()
        if "evalkit" in name or name.endswith(".pth") or name == "__pycache__":
            continue  # the project is what the example installs
        (overlay / entry.name).symlink_to(entry)
    (site_packages,) = venv.glob("lib/python*/site-packages")
    (site_packages / "dependencies.pth").write_text(f"{overlay}\n", encoding="utf-8")
    shared = Path(sys.prefix) / "share" / "jupyter"  # kernels and nbconvert's templates
    if shared.is_dir():
        (venv / "share").mkdir(exist_ok=True)
        (venv / "share" / "jupyter").symlink_to(shared)
    return venv


def _env(venv: Path, job: dict[str, Any], **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVALKIT_SANDBOX")}
    job_env = {k: _fill(str(v)) for k, v in job.get("env", {}).items()}
    return {**base, **job_env, "PATH": f"{venv / 'bin'}{os.pathsep}{base['PATH']}",
            "VIRTUAL_ENV": str(venv), **extra}


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", _fill(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def _skills_repo(tmp_path: Path) -> Path:
    """A repository holding skills and a suite, as the examples expect, with a bare origin."""
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(seed)], check=True)
    shutil.copytree(TINY, seed / "evals" / "suite")
    shutil.copy(EXAMPLES / "gate.yaml", seed / "evals" / "gate.yaml")
    git = ["git", "-C", str(seed), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "skills"], check=True)
    subprocess.run([*git, "push", "-q", str(origin), "main"], check=True)
    work = tmp_path / "work" / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True)
    return work


def _installed(venv: Path, wheel: Path, job: dict[str, Any], cwd: Path) -> None:
    """The example's own install step, with the wheel; then the command is the project's."""
    (install,) = [s["run"] for s in job["steps"] if "run" in s and _is_install(s["run"])]
    done = _bash(install, cwd, _env(venv, job, EVALKIT_WHEEL=str(wheel)))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import evalkit; print(evalkit.__file__)"],
        cwd=cwd, capture_output=True, text=True, check=True,
    ).stdout
    assert where.startswith(str(venv)), where  # the wheel's package, not the checkout's
    shown = subprocess.run([str(venv / "bin" / "pip"), "show", "skill-evalkit"],
                           capture_output=True, text=True)
    assert shown.returncode == 0 and "Name: skill-evalkit" in shown.stdout


def test_the_gate_example_installs_and_gates(wheel: Path, fresh_venv: Path,
                                             tmp_path: Path) -> None:
    job = _job("evalkit-gate.yml")
    repo = _skills_repo(tmp_path)
    _installed(fresh_venv, wheel, job, repo)
    env = _env(fresh_venv, job)
    ran = 0
    for step in job["steps"]:
        script = step.get("run")
        if script is None or _is_install(script) or not _offline(script):
            continue
        done = _bash(script, repo, env)
        if "evalkit gate" in script:
            # 0 released, 1 blocked: a decision either way, with a ledger row; 2 is bad input.
            assert done.returncode in (0, 1), done.stdout + done.stderr
            assert (repo / "gate-ledger.jsonl").read_text().strip()
        else:
            assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        ran += 1
    assert ran == 5
    assert (repo / "runs" / "baseline" / "results.parquet").exists()
    assert (repo / "runs" / "candidate" / "results.parquet").exists()


def test_the_weekly_example_installs_runs_stores_and_renders(wheel: Path, fresh_venv: Path,
                                                            tmp_path: Path) -> None:
    job = _job("evalkit-weekly-trend.yml")
    repo = _skills_repo(tmp_path)
    _installed(fresh_venv, wheel, job, repo)
    env = _env(fresh_venv, job, GITHUB_ENV=str(tmp_path / "github.env"), GITHUB_RUN_ATTEMPT="1")
    ran = []
    for step in job["steps"]:
        script = step.get("run")
        if script is None or _is_install(script) or not _offline(script):
            continue
        run_id = (tmp_path / "github.env").read_text().strip().removeprefix("RUN_ID=") \
            if (tmp_path / "github.env").exists() else ""
        done = _bash(script, repo, {**env, "RUN_ID": run_id})
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        ran.append(step.get("name"))
    assert ran == ["Check out the runs store", "Run the suite", "Append the run to the store",
                   "Render the trend"]
    assert (repo / "reports" / "weekly-trend.html").stat().st_size > 10_000
    stored = subprocess.run(["git", "-C", str(tmp_path / "origin.git"), "ls-tree", "-r",
                             "--name-only", "evalkit-runs"], capture_output=True, text=True,
                            check=True).stdout
    assert "/results.parquet" in stored
