"""A failed run looks failed: dead servers exit 3, refused keys stop the run and exit 2.

Every test runs ``evalkit run`` (the CLI entry point, in process) against a real loopback
model server on 127.0.0.1, a closed port, or a fake agent CLI that is a real executable.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalkit
from evalkit.report import metrics_table, missing_cases
from evalkit.results import load_manifest
from tests.conftest import CliResult, evalkit_cli
from tests.providers.agent_harness import CANONICAL, OPENAI_SECRET, closed_port
from tests.providers.loopback_server import (
    LoopbackModelServer,
    Recorded,
    Reply,
    Status,
    Text,
    always,
    answer,
)

ITEMS = 4 * 4 * 5  # tiny suite: 4 cases x 4 conditions x 5 trials
REFUSED = Status(401, json.dumps(
    {"error": {"message": f"Incorrect API key provided: {OPENAI_SECRET}"}}
))


@pytest.fixture
def server() -> Iterator[LoopbackModelServer]:
    srv = LoopbackModelServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    return OPENAI_SECRET


def _run(suite: Path, runs_dir: Path, run_id: str, base_url: str, *extra: str) -> CliResult:
    return evalkit_cli(
        "run", suite, "--runs-dir", runs_dir, "--run-id", run_id,
        "--provider", "openai_compat", "--provider-opt", f"base_url={base_url}",
        "--model", "loopback-1", "--no-progress", "--backend", "threading",
        "--concurrency", "2", "--retries", "0", "--no-cache", *extra,
    )


def test_a_run_against_a_dead_server_exits_3_and_is_failed(
    tiny_suite: Path, runs_dir: Path, key: str,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = _run(tiny_suite, runs_dir, "dead", url, "--json")
    out, err = done.stdout, done.stderr
    assert done.returncode == 3, err
    data = json.loads(out)
    assert data["status"] == "failed" and data["items"] == 32 and data["ok"] == 0
    assert data["failure"]["scope"] == "run" and data["failure"]["count"] == 32
    assert "error: run 'dead' failed: every item of the run ended in an error (32 items)" in err
    assert f"connection_error x32: {url}/chat/completions: cannot connect" in err
    assert "Connection refused" in err
    manifest = load_manifest(runs_dir / "dead")
    assert manifest is not None and manifest.status == "failed"
    assert manifest.failure is not None and manifest.failure.error_class == "connection_error"


def test_a_condition_with_only_errors_fails_the_run_and_lift_says_so(
    tiny_suite: Path, runs_dir: Path, key: str, server: LoopbackModelServer,
) -> None:
    def script(request: Recorded) -> Reply:
        # the server breaks on every request that carries the injected skill
        return Status(500) if CANONICAL in request.text else Text("Poll in a loop; timeout 30.")

    server.script = script
    done = _run(tiny_suite, runs_dir, "half", server.base_url + "/v1",
                "--conditions", "none,preloaded", "--lane", "prompt")
    err = done.stderr
    assert done.returncode == 3, err
    assert "every item of condition 'preloaded' ended in an error (6 items)" in err
    assert "server_error x6" in err
    manifest = load_manifest(runs_dir / "half")
    assert manifest is not None and manifest.status == "failed"
    assert manifest.failure is not None and manifest.failure.groups == ["preloaded"]

    result = evalkit.lift(runs_dir / "half", n_resamples=200)
    oracle = result.metrics[result.metrics["metric"] == "oracle_lift"].iloc[0]
    assert oracle[["estimate", "ci_low", "ci_high"]].isna().all() and oracle["n_cases"] == 0
    assert "preloaded" in oracle["note"] and "server_error" in oracle["note"]
    success = result.success.set_index("condition")
    assert success.loc["none", "estimate"] > 0 and success.loc["none", "note"] == ""
    assert success.loc[["preloaded"], "estimate"].isna().all()
    assert "has only errors" in success.loc["preloaded", "note"]
    notes = result.to_dict()["notes"]
    assert [n["condition"] for n in notes] == ["preloaded"]
    shown = evalkit_cli("lift", runs_dir / "half")
    assert shown.returncode == 0
    out = shown.stdout
    assert "condition 'preloaded' has only errors" in out and "server_error" in out
    # the report's views say it too, instead of showing a number
    assert "has only errors" in metrics_table(result.metrics).html
    assert "condition &#x27;preloaded&#x27; has only errors" in missing_cases(result).html
    # compare refuses to call a verdict on a condition that measured nothing
    refused = evalkit_cli("compare", runs_dir / "half", "--conditions", "none,preloaded")
    assert refused.returncode == 2
    err = refused.stderr
    assert "run 'half': condition 'preloaded' has only errors (6 items; server_error x6" in err
    assert "nothing to compare" in err


def test_a_healthy_run_is_complete_and_exits_0(
    tiny_suite: Path, runs_dir: Path, key: str, server: LoopbackModelServer,
) -> None:
    server.script = answer("Poll in a loop with timeout 30.")
    done = _run(tiny_suite, runs_dir, "ok", server.base_url + "/v1", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["status"], data["failure"]) == ("complete", None)


def test_a_refused_key_stops_the_run_early_exits_2_and_resumes_once_fixed(
    tiny_suite: Path, runs_dir: Path, key: str, server: LoopbackModelServer,
) -> None:
    server.script = always(REFUSED)
    url = server.base_url + "/v1"
    done = _run(tiny_suite, runs_dir, "badkey", url, "--trials", "5")
    err = done.stderr
    assert done.returncode == 2, err
    assert "stopped on refused credentials (auth) of provider 'openai_compat'" in err
    assert "HTTP 401" in err and "export a valid key in OPENAI_API_KEY" in err
    assert "--resume --run-id badkey" in err
    assert key not in err and "Traceback" not in err
    requests = len(server.model_requests())
    assert 1 <= requests <= 4, f"{requests} requests for {ITEMS} items"  # no retries either
    manifest = load_manifest(runs_dir / "badkey")
    assert manifest is not None and manifest.status == "stopped"
    assert manifest.failure is not None and manifest.failure.error_class == "auth"
    assert key not in (runs_dir / "badkey" / "manifest.json").read_text()

    server.reset(answer("Poll in a loop with timeout 30."))
    assert _run(tiny_suite, runs_dir, "badkey", url, "--trials", "5", "--resume").returncode == 0
    df = evalkit.read_run(runs_dir / "badkey")
    assert len(df) == ITEMS and df["status"].eq("ok").all()
    manifest = load_manifest(runs_dir / "badkey")
    assert manifest is not None and manifest.status == "complete"


def _fake_cli(tmp_path: Path, name: str, version: str, says: str) -> tuple[Path, Path]:
    """An executable agent CLI that answers --version and otherwise prints ``says``."""
    calls = tmp_path / f"{name}-calls.txt"
    binary = tmp_path / name
    binary.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "{version}"; exit 0; fi\n'
        f'echo call >> "{calls}"\n'
        f"cat <<'EOF'\n{says}\nEOF\n"
        "exit 1\n"
    )
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary, calls


@pytest.mark.parametrize(("provider", "key_env", "version", "says"), [
    ("claude_code", "ANTHROPIC_API_KEY", "2.1.0 (Claude Code)",
     "Invalid API key · Please run /login"),
    ("codex", "OPENAI_API_KEY", "codex-cli 0.171.0",
     '{"type": "turn.failed", "error": {"message": '
     '"unexpected status 401 Unauthorized: Incorrect API key provided"}}'),
])
def test_an_agent_cli_refusing_the_key_is_auth_not_a_crash(
    provider: str, key_env: str, version: str, says: str, tiny_suite: Path, runs_dir: Path,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(key_env, "sk-fake-0123456789abcdef-SECRET")
    binary, calls = _fake_cli(tmp_path, provider, version, says)
    done = evalkit_cli(
        "run", str(tiny_suite), "--runs-dir", str(runs_dir), "--run-id", "cli",
        "--provider", provider, "--provider-opt", f"binary={binary}", "--no-progress",
        "--backend", "threading", "--concurrency", "2", "--trials", "5", "--retries", "2",
        "--no-cache", "--lane", "prompt",
    )
    err = done.stderr
    code = done.returncode
    assert code == 2
    assert f"(auth) of provider '{provider}'" in err and f"export a valid key in {key_env}" in err
    assert "agent_crashed" not in err and "sk-fake-0123456789abcdef-SECRET" not in err
    # of 60 items, and never retried: the 4 dispatched ahead (pre_dispatch 2 * n_jobs) and one
    # more for each that ended before the run read the first refusal (a busy machine: several)
    assert len(calls.read_text().split()) <= 8
    manifest = load_manifest(runs_dir / "cli")
    assert manifest is not None and manifest.status == "stopped"


def test_a_binary_gone_at_run_time_stops_the_run_as_a_config_error(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake-0123456789abcdef-SECRET")
    binary = tmp_path / "claude"
    # answers the planner's --version, then is gone before any worker builds the provider
    binary.write_text('#!/bin/sh\nrm -f "$0"\necho "2.1.0 (Claude Code)"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    done = evalkit_cli(
        "run", str(tiny_suite), "--runs-dir", str(runs_dir), "--run-id", "gone",
        "--provider", "claude_code", "--provider-opt", f"binary={binary}", "--no-progress",
        "--backend", "threading", "--lane", "prompt", "--no-cache",
    )
    err = done.stderr
    code = done.returncode
    assert not binary.exists()
    assert code == 2
    assert "stopped on a configuration error (config) of provider 'claude_code'" in err
    assert f"no executable '{binary}'" in err and "--resume --run-id gone" in err
    manifest = load_manifest(runs_dir / "gone")
    assert manifest is not None and manifest.status == "stopped"
    assert manifest.failure is not None and manifest.failure.error_class == "config"
