"""Secrets never reach disk: a hostile model server echoes the key; nothing written holds it.

A real HTTP server on 127.0.0.1 reads the key from each request's ``Authorization`` /
``x-api-key`` header and sends it back in every transformation of
:func:`tests.security.leak_probes.transformations`: in 400 bodies, 500 bodies, non-JSON 200
bodies, in the text of successful answers, and with all request headers reflected into an
answer. A full ``evalkit run`` (a real subprocess) of ``openai_compat`` and of ``anthropic``
(whose key sits in a variable with no secret-looking name) runs against it, then ``evalkit
report`` renders each run. A 401 stops a run (refused credentials), so the 401 bodies -- one
holding every transformation at once, one reflecting the request headers -- get a run of their
own, which stops with exit 2. Every file under the runs directory (run directories,
``items.log``, the manifests, the outcome cache), both report files and the commands' stderr
are searched for the key.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import evalkit
from evalkit.providers import AgentRequest, AgentResponse, Event, ProviderInfo
from tests.conftest import CliResult, evalkit_process
from tests.providers.agent_harness import run_items
from tests.providers.loopback_server import LoopbackModelServer, Recorded, Reply, Status, Text
from tests.security.leak_probes import ANTHROPIC_KEY, OPENAI_KEY, leaks, transformations

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("status-400", "status-500", "not-json-200", "answer")
#: Refused credentials stop a run: these scenarios get a run of their own.
AUTH_SCENARIOS = [("status-401", "all"), ("reflect-401", "headers")]
SCENARIO = re.compile(r"scenario ([\w-]+) ([\w-]+)")


def _scenarios() -> list[tuple[str, str]]:
    names = list(transformations(OPENAI_KEY))
    return [(kind, name) for kind in KINDS for name in names] + [("reflect-answer", "headers")]


def _user_text(request: Recorded) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    return json.dumps(body.get("messages") or body.get("input") or "")


def _key_of(request: Recorded) -> str:
    """The key exactly as the client sent it."""
    auth = request.headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth else request.headers.get("x-api-key", "")


def hostile(request: Recorded) -> Reply:
    """Echo the request's key in the way the case's prompt names."""
    found = SCENARIO.search(_user_text(request))
    if found is None:
        return Text("no scenario")
    kind, name = found.groups()
    if kind.startswith("reflect"):
        lines = "\n".join(f"{k}: {v}" for k, v in request.headers.items())
        payload = f"{json.dumps(request.headers)}\nrequest headers were:\n{lines}"
        if kind == "reflect-401":
            return Status(401, json.dumps({"error": {"message": payload}}))
        return Text(f"Here is what you sent me: {payload}")
    forms = transformations(_key_of(request))
    leaked = " | ".join(forms.values()) if name == "all" else forms[name]
    message = f"invalid key ({name}): {leaked} -- please check it"
    if kind == "status-401":
        return Status(401, json.dumps({"error": {"type": "authentication_error",
                                                 "message": message}}))
    if kind == "status-400":
        return Status(400, json.dumps({"error": {"type": "invalid_request_error",
                                                 "message": message}}))
    if kind == "status-500":
        return Status(500, f"<html><body>upstream failed for {leaked}</body></html>")
    if kind == "not-json-200":
        return Status(200, f"OK but not JSON: {leaked}")
    return Text(f"The answer is 5050. By the way, your key: {leaked}")


def _write_suite(root: Path, scenarios: list[tuple[str, str]]) -> Path:
    cases = [
        {"id": f"{kind}-{name}".lower(), "prompt": f"scenario {kind} {name}",
         "expected_patterns": ["5050"]}
        for kind, name in scenarios
    ]
    (root / "cases").mkdir(parents=True)
    suite = {"name": "leaks", "description": "A hostile server echoes the key.",
             "defaults": {"trials": 1, "conditions": ["none"]}}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (root / "cases" / "leaks.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    return root


@pytest.fixture
def server() -> Iterator[LoopbackModelServer]:
    loopback = LoopbackModelServer(script=hostile).start()
    try:
        yield loopback
    finally:
        loopback.stop()


def _evalkit(*args: str, env: dict[str, str], cwd: Path) -> CliResult:
    """``evalkit ARGS`` in a child whose whole environment is ``env`` (what reaches it)."""
    return evalkit_process(*args, env=env, cwd=cwd, inherit_env=False, timeout=600)


@pytest.mark.slow
def test_a_key_echoed_in_every_way_reaches_no_file(
    tmp_path: Path, server: LoopbackModelServer
) -> None:
    suite = _write_suite(tmp_path / "suite", _scenarios())
    refused = _write_suite(tmp_path / "refused", AUTH_SCENARIOS)
    runs = tmp_path / "runs"
    stderr = tmp_path / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env |= {"OPENAI_API_KEY": OPENAI_KEY, "LOOPBACK_CREDENTIAL": ANTHROPIC_KEY,
            "PYTHONPATH": os.pathsep.join([env.get("PYTHONPATH", ""), str(ROOT)])}
    flavours = {
        "openai": ["--provider", "openai_compat", "--provider-opt",
                   f"base_url={server.base_url}/v1"],
        "anthropic": ["--provider", "anthropic", "--provider-opt", f"base_url={server.base_url}",
                      "--provider-opt", "api_key_env=LOOPBACK_CREDENTIAL"],
    }
    reports = []
    for run_id, options in flavours.items():
        done = _evalkit("run", str(suite), *options, "--model", "loopback-1", "--runs-dir",
                        str(runs), "--run-id", run_id, "--backend", "threading",
                        "--concurrency", "8", "--retries", "1", "--no-progress", "--json",
                        env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        stopped = _evalkit("run", str(refused), *options, "--model", "loopback-1", "--runs-dir",
                           str(runs), "--run-id", f"{run_id}-refused", "--backend", "threading",
                           "--no-progress", env=env, cwd=tmp_path)
        assert stopped.returncode == 2, stopped.stderr
        assert "refused the credentials" in stopped.stderr and "[REDACTED]" in stopped.stderr
        with stderr.open("a") as sink:
            sink.write(done.stderr + stopped.stderr)
        report = tmp_path / "reports" / f"{run_id}.html"
        shown = _evalkit("report", run_id, "--runs-dir", str(runs), "--output", str(report),
                         env=env, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        reports += [report, report.with_suffix(".ipynb")]

    # the hostile answers really happened and really were recorded, redacted
    seen = {_key_of(r) for r in server.model_requests()}
    assert seen == {OPENAI_KEY, ANTHROPIC_KEY}
    for run_id in flavours:
        rows = pd.read_parquet(runs / run_id / "results.parquet").set_index("case_id")
        assert len(rows) == len(_scenarios())
        assert (rows.loc[rows.index.str.startswith("status-400"), "error_message"]
                .str.contains("HTTP 400").all())
        failure = json.loads((runs / f"{run_id}-refused" / "manifest.json").read_text())
        assert failure["status"] == "stopped" and "[REDACTED]" in failure["failure"]["message"]
        assert rows.loc[rows.index.str.startswith("answer"), "status"].eq("ok").all()
        assert rows.loc[rows.index.str.startswith("not-json"), "status"].eq("error").all()
        assert rows["error_message"].dropna().str.contains(r"\[REDACTED\]").sum() >= 3 * len(
            transformations(OPENAI_KEY))
        assert "retry in" in (runs / run_id / "items.log").read_text()  # 500s were retried
    assert list((runs / ".cache").rglob("*.json")), "successful outcomes were cached"
    assert all("[REDACTED]" in path.read_text() for path in reports[::2])

    files = [p for p in runs.rglob("*") if p.is_file()] + reports + [stderr]
    for key in (OPENAI_KEY, ANTHROPIC_KEY):
        assert leaks(files, key) == []


CRASHING_AGENT = """#!{python}
import base64, os, sys
if sys.argv[1:] == ["--version"]:
    print("2.1.0 (Claude Code)")
    sys.exit(0)
key = os.environ["ANTHROPIC_API_KEY"]
for leaked in (key, key[::-1], key.upper(), base64.b64encode(b"u:" + key.encode()).decode(),
               key.encode().hex(), "\\u200b".join(key), "Authorization: Bearer " + key):
    print("auth failed for", leaked, file=sys.stderr)
sys.exit(3)
"""


def test_a_key_a_crashing_agent_cli_prints_reaches_no_file(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "claude"
    agent.write_text(CRASHING_AGENT.format(python=sys.executable))
    agent.chmod(0o755)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", {"binary": str(agent)},
                        cases=("sum-numbers",))
    (message,) = rows["error_message"]
    assert "exited 3 before any output" in message and "[REDACTED]" in message
    assert message.count("auth failed for") == 7, "the stderr tail was kept, only redacted"
    assert leaks([p for p in runs_dir.rglob("*") if p.is_file()], ANTHROPIC_KEY) == []


def test_cached_outcomes_holding_a_key_are_redacted_when_reused(
    tiny_suite: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache entry written before redaction (or by hand) does not carry a key into a run."""
    from evalkit.runner import RunConfig, run
    from evalkit.runner._cache import OutcomeCache

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    config = RunConfig(runs_dir=runs_dir, run_id="first", progress=False, backend="threading",
                       case_ids=("sum-numbers",), conditions=("none",), trials=1)
    run(tiny_suite, config)
    entries = list((runs_dir / ".cache").rglob("*.json"))
    assert entries
    cache = OutcomeCache(runs_dir / ".cache")
    for entry in entries:  # plant the key in a valid entry (digest and all), as a writer could
        data = json.loads(entry.read_text())
        data["response"]["events"][-1]["content"] += f" key {OPENAI_KEY}"
        data["row"]["model"] = OPENAI_KEY.swapcase()
        cache.put(data["item_hash"], {k: data[k] for k in ("row", "scores", "response")})
    second = run(tiny_suite, config.model_copy(update={"run_id": "second"}))
    assert second.cache_hits == len(entries)
    files = [p for p in (runs_dir / "second").rglob("*") if p.is_file()]
    assert leaks(files, OPENAI_KEY) == []
    assert "[REDACTED]" in "".join(p.read_text() for p in files if p.suffix == ".jsonl")


class _LeakyProvider:
    """A plugin-style provider that returns the key base64-encoded, unredacted."""

    name = "leaky"
    needs_prompt_workspace = False

    def info(self) -> ProviderInfo:
        return ProviderInfo("leaky", "leaky-1", "1")

    def outcome_settings(self) -> dict[str, Any]:
        return {}

    def invoke(self, request: AgentRequest) -> AgentResponse:
        secret = base64.b64encode(b"user:" + os.environ["OPENAI_API_KEY"].encode()).decode()
        return AgentResponse(events=(Event("assistant", f"The sum is 5050. {secret}"),),
                             model="leaky-1", extra={"debug": {"auth": f"Basic {secret}"}})


@evalkit.plugin("provider")
def create_leaky(settings: Mapping[str, Any]) -> _LeakyProvider:
    """Factory of :class:`_LeakyProvider` (``tests.security.test_secret_leaks:create_leaky``)."""
    return _LeakyProvider()


def test_a_recording_of_a_provider_that_does_not_redact_holds_no_key(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    path = tmp_path / "recorded.jsonl"
    options = {"inner": "tests.security.test_secret_leaks:create_leaky", "path": str(path)}
    rows, transcripts = run_items(tiny_suite, runs_dir, "recording", options,
                                  cases=("sum-numbers",))
    assert rows.status.tolist() == ["ok"]
    assert "[REDACTED]" in path.read_text()
    assert leaks([path, *(p for p in runs_dir.rglob("*") if p.is_file())], OPENAI_KEY) == []
