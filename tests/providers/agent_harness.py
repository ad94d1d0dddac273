"""Helpers of the real-agent provider tests: binaries, suite edits, runs, process checks."""

from __future__ import annotations

import glob
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import evalkit
from evalkit.results import read_transcripts
from evalkit.runner import RunConfig, run
from tests.providers.loopback_server import Recorded, Reply, Script, Text, ToolCall

ROOT = Path(__file__).resolve().parents[2]
TOOLS_BIN = ROOT / ".tools" / "npm" / "node_modules" / ".bin"

#: Fake credentials: long and key-shaped, so a leak into a transcript is caught.
ANTHROPIC_SECRET = "sk-ant-loopback-0123456789abcdef-SECRET"
OPENAI_SECRET = "sk-loopback-openai-0123456789abcdef-SECRET"

#: Lines of the tiny suite's skill variants.
CANONICAL = "Poll for the condition in a loop with a deadline."
STALE = "Just sleep 10 and assume the server is up."
LISTING = "Wait for observable conditions instead of sleeping blindly."

#: A command that never ends by itself (Claude Code refuses a bare long ``sleep``).
HANGING_COMMAND = "timeout 313 tail -f /dev/null"

GOOD_WAIT_ANSWER = "Poll the health endpoint in a loop, wrapped in timeout 30 as a deadline."


def agent_binary(name: str, env_var: str) -> str:
    """The CLI installed by scripts/install-agent-clis.sh (or named by ``env_var``)."""
    path = os.environ.get(env_var) or str(TOOLS_BIN / name)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(
            f"the {name} CLI is not installed at {path}: run scripts/install-agent-clis.sh "
            f"(make test runs it) or set {env_var} to the binary",
            pytrace=False,
        )
    return path


def set_budget(suite: Path, case_id: str, **budgets: Any) -> None:
    """Set ``budgets`` of one case of a suite copy (prompt.yaml or execution.yaml)."""
    for path in (suite / "cases").glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        cases = data["cases"] if isinstance(data, dict) else data
        for case in cases:
            if case["id"] == case_id:
                case["budgets"] = {**case.get("budgets", {}), **budgets}
                path.write_text(yaml.safe_dump(data, sort_keys=False))
                return
    raise KeyError(case_id)


def run_items(
    suite: Path,
    runs_dir: Path,
    provider: str,
    options: dict[str, Any],
    *,
    cases: tuple[str, ...],
    conditions: tuple[str, ...] = ("none",),
    retries: int = 0,
    trials: int = 1,
    run_id: str | None = None,
) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Run some items of a suite through evalkit.runner.run; return rows and transcripts."""
    result = run(
        suite,
        RunConfig(
            provider=provider,
            provider_options=options,
            runs_dir=runs_dir,
            run_id=run_id,
            trials=trials,
            progress=False,
            backend="threading",
            concurrency=2,
            conditions=conditions,
            case_ids=cases,
            retries=retries,
            retry_backoff_s=0.01,
            use_cache=False,
        ),
    )
    rows = evalkit.read_run(result.run_dir).sort_values("item_key").reset_index(drop=True)
    records = read_transcripts(result.run_dir)
    return rows, {key: record["response"] for key, record in records.items()}


def steps(*calls: ToolCall | Callable[[Recorded], ToolCall], final: str) -> Script:
    """Ask for ``calls`` one after the other (one per model turn), then answer ``final``."""

    def script(request: Recorded) -> Reply:
        done = len(request.tool_results())
        if done < len(calls):
            call = calls[done]
            return call if isinstance(call, ToolCall) else call(request)
        return Text(final)

    return script


def installed_skill(state_dir: Path, name: str) -> str:
    """Path of the SKILL.md evalkit installed for the (single) running item."""
    found = glob.glob(str(state_dir / "*" / "config" / "skills" / name / "SKILL.md"))
    if len(found) != 1:
        raise AssertionError(f"expected one installed {name} skill, found {found}")
    return found[0]


def processes_mentioning(*needles: str) -> list[str]:
    """Live processes whose command line or environment contains any of ``needles``."""
    hits = []
    wanted = [n.encode() for n in needles]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            data = (entry / "cmdline").read_bytes() + b"\0" + (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(n in data for n in wanted):
            command = data.split(b"\0")[0].decode(errors="replace")
            hits.append(f"{entry.name}: {command}")
    return hits


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bodies(requests: list[Recorded]) -> str:
    """Every model request body as one JSON text."""
    return "\n".join(r.text for r in requests)
