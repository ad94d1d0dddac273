"""A key planted in an imported log's messages reaches no file of the imported run.

An Inspect AI log (the real JSON log of the import fixtures, its sample's messages replaced)
carries the key in every transformation of :func:`tests.security.leak_probes.transformations`
in each place a transcript is made from: the user message, the assistant's text, a tool
call's arguments, a tool's output (past the size bound too, so the cut is made after the
redaction), an attachment the messages refer to, and the scorer's explanation. ``evalkit
import`` runs as a real subprocess with the key in its environment, as a native run has it;
every file of the new run, and the command's output, are searched for the key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, evalkit_process
from tests.security.leak_probes import OPENAI_KEY, leaks, transformations

LOG = ROOT / "tests" / "fixtures" / "imports" / "inspect-json" / "capitals-beta.json"


def _hostile_messages(forms: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    every = "\n".join(f"{name}: {form}" for name, form in forms.items())
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"the key is {every}"},
        {"role": "user", "content": "attachment://k1"},
        {"role": "assistant", "content": [{"type": "text", "text": every}],
         "tool_calls": [
             {"id": f"c{i}", "function": "bash", "arguments": {"cmd": f"curl -d {form} x"}}
             for i, form in enumerate(forms.values())
         ] + [{"id": "py", "function": "python",
               "arguments": {"code": every, "env": dict(forms)}}]},
    ]
    for i, form in enumerate(forms.values()):
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "function": "bash",
                         "content": f"echo {form}", "error": {"message": form}})
    # a huge output whose kept end holds the key: the cut must not leave half of it (the
    # compatibility forms stay in the messages above: the redactor's reading of those is
    # slow on a text of this size)
    plain = "\n".join(f for name, f in forms.items()
                      if name not in ("fullwidth", "math-bold"))
    messages.append({"role": "tool", "tool_call_id": "py", "function": "python",
                     "content": "x" * 200_000 + plain})
    return messages, {"k1": f"please use {every}"}


@pytest.mark.slow
def test_a_key_in_every_imported_message_reaches_no_file(tmp_path: Path) -> None:
    forms = transformations(OPENAI_KEY)
    log = json.loads(LOG.read_text())
    sample = log["samples"][0]
    sample["messages"], sample["attachments"] = _hostile_messages(forms)
    for score in sample["scores"].values():
        score["explanation"] = "\n".join(forms.values())
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(log))
    runs = tmp_path / "runs"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["OPENAI_API_KEY"] = OPENAI_KEY
    done = evalkit_process("import", hostile, "--format", "inspect", "--run-id", "hostile",
                           "--runs-dir", runs, "--json", env=env, inherit_env=False,
                           cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shard = runs / "hostile" / "transcripts" / "part-00001.jsonl"
    (record,) = [json.loads(line) for line in shard.read_text().splitlines()]
    events = record["response"]["events"]
    # the transcript was written, every message in it, and the key replaced everywhere
    kinds = [e["kind"] for e in events]
    assert kinds[:3] == ["system", "user", "assistant"]
    assert kinds.count("tool_call") == len(forms) + 1
    assert kinds.count("tool_result") == len(forms) + 1
    assert sum(e["content"].count("[REDACTED]") for e in events) >= 5 * len(forms)
    assert events[-1]["name"] == "python" and "characters cut" in events[-1]["content"]
    out = tmp_path / "output.txt"
    out.write_text(done.stdout + done.stderr)
    files = [p for p in runs.rglob("*") if p.is_file()] + [out]
    assert leaks(files, OPENAI_KEY) == []
