"""Commands run in the sandbox cannot escape the workspace, read secrets or reach the network."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from evalkit.sandbox import Limits, run_command
from tests.security.sandbox_probes import (
    READ_ENVIRONS,
    SECRET,
    loopback_http,
    probe_network,
    processes_mentioning,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def test_writes_outside_the_workspace_do_not_land(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = f"evalkit-probe-{uuid.uuid4().hex}"
    outcome = run_command(
        f"touch {outside}/marker; echo x > /tmp/{marker}; "
        f"touch /usr/{marker}; touch inside-marker; echo done",
        workspace,
        10,
    )
    assert outcome.exit_code == 0 and outcome.sandboxed
    assert "Read-only file system" in outcome.output
    assert (workspace / "inside-marker").is_file()  # the workspace itself is writable
    assert not (outside / "marker").exists()
    assert not Path(f"/tmp/{marker}").exists()  # /tmp is private
    assert not Path(f"/usr/{marker}").exists()


def test_files_beside_the_workspace_are_invisible(workspace: Path, tmp_path: Path) -> None:
    secret_file = tmp_path / "credentials.txt"
    secret_file.write_text(SECRET)
    outcome = run_command(f"cat {secret_file}; ls /root /home 2>&1; echo end", workspace, 10)
    assert outcome.output.strip().endswith("end")
    assert SECRET not in outcome.output
    assert "No such file or directory" in outcome.output


def test_parent_and_pid1_environments_hold_no_secret(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    outcome = run_command(READ_ENVIRONS, workspace, 10)
    assert "== /proc/1/environ" in outcome.output  # it did read them
    assert f"HOME={workspace.resolve()}" in outcome.output
    assert SECRET not in outcome.output


def test_the_sandbox_sees_only_its_own_processes(workspace: Path) -> None:
    outcome = run_command("ls /proc | grep -cE '^[0-9]+$'", workspace, 10)
    assert outcome.exit_code == 0
    assert int(outcome.output.strip()) < 10  # the host has far more processes


def test_network_is_blocked_unless_allowed(workspace: Path) -> None:
    with loopback_http() as (port, paths):
        blocked = run_command(probe_network(port), workspace, 10)
        assert "BLOCKED" in blocked.output and "CONNECTED" not in blocked.output
        assert paths == []
        allowed = run_command(probe_network(port), workspace, 10, network=True)
        assert "CONNECTED" in allowed.output
        assert paths == ["/from-sandbox"]


@pytest.mark.serial  # asserts how fast the limit acts
def test_fork_bomb_is_bounded(workspace: Path) -> None:
    started = time.monotonic()
    outcome = run_command(
        "bomb() { bomb | bomb & }; bomb; sleep 600 # evalkit-fork-bomb-probe",
        workspace,
        4,
        limits=Limits(processes=64),
    )
    assert outcome.timed_out
    assert time.monotonic() - started < 15
    time.sleep(0.5)
    assert processes_mentioning("evalkit-fork-bomb-probe") == []


def test_memory_hog_is_bounded(workspace: Path) -> None:
    outcome = run_command(
        "python3 -c 'x = bytearray(3 << 30); print(\"allocated\")'",
        workspace,
        30,
        limits=Limits(memory_bytes=512 << 20),
    )
    assert outcome.exit_code != 0
    assert "MemoryError" in outcome.output and "allocated" not in outcome.output


@pytest.mark.serial  # asserts how fast the limit acts
def test_huge_output_is_cut_off(workspace: Path) -> None:
    started = time.monotonic()
    outcome = run_command("yes evalkit", workspace, 60, limits=Limits(output_bytes=1 << 20))
    assert outcome.limit == "output" and outcome.exit_code is None
    assert 1 << 20 < outcome.output_bytes < (1 << 20) + (1 << 17)
    assert len(outcome.output) < 9000
    assert time.monotonic() - started < 20


def test_huge_file_is_bounded(workspace: Path) -> None:
    outcome = run_command(
        "head -c 5000000 /dev/zero > big.bin; echo rc=$?",
        workspace,
        30,
        limits=Limits(file_bytes=1 << 20),
    )
    assert (workspace / "big.bin").stat().st_size <= 1 << 20
    assert "rc=0" not in outcome.output


def test_timeout_kills_background_processes(workspace: Path) -> None:
    outcome = run_command("sleep 313.25 & sleep 313.25; echo never", workspace, 1)
    assert outcome.timed_out and outcome.exit_code is None
    time.sleep(0.5)
    assert processes_mentioning("313.25") == []


def test_tools_of_the_demo_suite_work_inside(workspace: Path) -> None:
    outcome = run_command(
        "python3 -c 'print(6 * 7)' && git --version >/dev/null && sed --version >/dev/null "
        "&& echo ok > note.txt && cat note.txt",
        workspace,
        20,
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.split() == ["42", "ok"]
