"""Imported runs keep their transcripts in the native shard format, and explain aligns them.

The Inspect logs read here are real: ``inspect-starsim/`` holds a public project's own logs of
an agent without and with a plugin of skills (see its README), ``inspect/`` and
``inspect-tools/`` were written by inspect-ai itself with its ``mockllm`` model
(scripts/make_import_fixtures.py, scripts/make_inspect_tools_log.py). What each transcript
must hold is read from the logs with evalkit's plain reader, independently of the converter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalkit
from evalkit.interop import import_results
from evalkit.interop._import_inspect import load_log
from evalkit.interop._import_transcripts import EVENT_CHARS, IMPORT_SHARD, MAX_EVENTS, event
from evalkit.results import read_transcripts
from tests.conftest import ROOT, evalkit_cli

FIX = ROOT / "tests" / "fixtures" / "imports"
STARSIM = FIX / "inspect-starsim"
NO_PLUGIN = STARSIM / "sonnet-no-plugin-120s.eval"
PLUGIN = STARSIM / "sonnet-plugin-120s.eval"
TIMEOUT_ANSWER = "INCOMPLETE: HTTP timeout after 1 attempt(s) (120s each)"


def _records(run_dir: Path) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    rows = evalkit.read_run(run_dir)
    return rows, read_transcripts(run_dir, rows=rows)


def _sample(path: Path, sample_id: str, epoch: int = 1) -> dict[str, Any]:
    log = load_log(path, use_inspect_ai=False)
    assert log is not None
    found = [s for s in log["samples"] if s["id"] == sample_id and s["epoch"] == epoch]
    assert len(found) == 1
    sample: dict[str, Any] = found[0]
    return sample


# ------------------------------------------------------------------ the native format


def test_every_imported_inspect_sample_has_its_messages_as_a_native_transcript(
    tmp_path: Path,
) -> None:
    result = import_results(FIX / "inspect", "inspect", "caps", runs_dir=tmp_path,
                            condition_from="task_arg:skill")
    rows, records = _records(result.run_dir)
    assert (rows["transcript_path"] == IMPORT_SHARD).all()
    assert set(records) == set(rows["item_key"])
    # one line per item in one shard, each the native record: item_key, provider, response
    lines = (result.run_dir / IMPORT_SHARD).read_text().splitlines()
    assert len(lines) == len(rows)
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"item_key", "provider", "response"}
        assert set(record["response"]) == {"events", "model", "input_tokens", "output_tokens",
                                           "cost_usd", "n_steps", "skill_loaded", "extra"}
        assert evalkit.providers.AgentResponse.from_json(record["response"]).events
    # the preloaded log's system message (the skill text) comes first, then user, assistant
    row = rows[(rows.case_id == "cap-australia") & (rows.condition == "preloaded")
               & (rows.trial == 0)].iloc[0]
    sample = _sample(FIX / "inspect" / "capitals-preloaded.eval", "cap-australia")
    events = records[row["item_key"]]["response"]["events"]
    assert [(e["kind"], e["content"]) for e in events] == [
        (m["role"], m["content"]) for m in sample["messages"]
    ]
    assert [e["kind"] for e in events] == ["system", "user", "assistant"]
    assert records[row["item_key"]]["response"]["model"] == "mockllm/model"
    assert records[row["item_key"]]["response"]["extra"]["inspect_events"]["model"] >= 1


def test_a_log_without_messages_imports_rows_without_transcripts(tmp_path: Path) -> None:
    log = json.loads((FIX / "inspect-json" / "capitals-beta.json").read_text())
    for sample in log["samples"]:
        sample["messages"] = []
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(log))
    result = import_results(path, "inspect", "bare", runs_dir=tmp_path / "runs")
    rows, records = _records(result.run_dir)
    assert records == {} and rows["transcript_path"].isna().all()
    assert not (result.run_dir / "transcripts").exists()


# ----------------------------------------------------------------- real public A/B logs


def _starsim_runs(runs: Path) -> None:
    import_results(NO_PLUGIN, "inspect", "no-plugin", runs_dir=runs)
    import_results(PLUGIN, "inspect", "plugin", runs_dir=runs)


def test_explain_on_the_real_plugin_ab_names_the_timeout_answer_as_first_divergence(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    _starsim_runs(runs)
    # read from the logs themselves: without the plugin the request timed out, with it the
    # agent answered with code that passed; both transcripts are user, assistant
    failing = _sample(NO_PLUGIN, "starsim_t1.1")
    passing = _sample(PLUGIN, "starsim_t1.1")
    assert [m["role"] for m in failing["messages"]] == ["user", "assistant"]
    assert [m["role"] for m in passing["messages"]] == ["user", "assistant"]
    assert failing["messages"][1]["content"] == TIMEOUT_ANSWER
    assert failing["scores"]["agent_scorer"]["value"] == 0.0
    assert passing["scores"]["agent_scorer"]["value"] == 1.0

    explained = evalkit.explain("plugin", "starsim_t1.1", baseline="no-plugin", runs_dir=runs)
    assert "no transcript for this case" not in " ".join(explained.notes)
    (cell,) = explained.cells
    assert cell.first_divergence == 1
    assert "answers differ first at step 1" in cell.divergence_note
    step = cell.divergence[cell.divergence["step"] == 1].iloc[0]
    assert step["passing_kind"] == step["failing_kind"] == "assistant"
    assert step["failing"] == TIMEOUT_ANSWER
    assert step["passing"].startswith(" ".join(passing["messages"][1]["content"].split())[:60])

    # the other way round (t2.1: the plugin run timed out, the run without it passed)
    assert _sample(PLUGIN, "starsim_t2.1")["messages"][1]["content"] == TIMEOUT_ANSWER
    (other,) = evalkit.explain("plugin", "starsim_t2.1", baseline="no-plugin",
                               runs_dir=runs).cells
    assert other.first_divergence == 1
    assert other.divergence[other.divergence["step"] == 1].iloc[0]["failing"] == TIMEOUT_ANSWER


def test_the_explain_command_prints_the_real_divergence(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _starsim_runs(runs)
    done = evalkit_cli("explain", "plugin", "--case", "starsim_t1.1", "--baseline",
                       "no-plugin", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    assert "no transcript" not in done.stdout
    assert "the answers differ first at step 1" in done.stdout
    assert f"> step 1 failing [assistant] {TIMEOUT_ANSWER}" in done.stdout


@pytest.mark.slow
def test_the_report_shows_the_imported_transcripts_of_failing_items(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    import_results([NO_PLUGIN, PLUGIN], "inspect", "ab", runs_dir=runs,
                   condition_from="task_arg:agent_url")
    out = tmp_path / "ab.html"
    done = evalkit_cli("report", "ab", "--runs-dir", runs, "--output", out)
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert 'class="ek-event ek-event-assistant"' in html
    assert TIMEOUT_ANSWER in html
    assert "no transcript" not in html


# --------------------------------------------------------------- redaction and bounds


def _log_with_messages(tmp_path: Path, messages: list[dict[str, Any]],
                       attachments: dict[str, str] | None = None) -> Path:
    """The real JSON log with its one sample's messages replaced (an imported file's text)."""
    log = json.loads((FIX / "inspect-json" / "capitals-beta.json").read_text())
    log["samples"][0]["messages"] = messages
    log["samples"][0]["attachments"] = attachments or {}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    return path


def test_a_huge_message_is_cut_as_native_tool_output_is(tmp_path: Path) -> None:
    head, tail = "HEAD-OF-THE-PROMPT ", " END-OF-THE-OUTPUT"
    big = 3_000_000
    messages = [
        {"role": "user", "content": head + "u" * big},
        {"role": "assistant", "content": "calling",
         "tool_calls": [{"id": "c1", "function": "bash", "arguments": {"cmd": "cat big.log"}}]},
        {"role": "tool", "tool_call_id": "c1", "function": "bash", "content": "o" * big + tail},
        {"role": "assistant", "content": "done"},
    ]
    result = import_results(_log_with_messages(tmp_path, messages), "inspect", "big",
                            runs_dir=tmp_path / "runs")
    _, records = _records(result.run_dir)
    (record,) = records.values()
    events = record["response"]["events"]
    assert [(e["kind"], e["name"]) for e in events] == [
        ("user", ""), ("assistant", ""), ("tool_call", "bash"), ("tool_result", "bash"),
        ("assistant", "")]
    user, result_event = events[0]["content"], events[3]["content"]
    # a prompt keeps its start, a tool's output its end (as the native bash tool keeps it)
    assert user.startswith(head) and not user.endswith("u" * 10)
    assert result_event.endswith(tail) and "o" * EVENT_CHARS not in result_event
    for text in (user, result_event):
        assert len(text) < EVENT_CHARS + 40
        assert f"{big + len(head) - EVENT_CHARS:,} characters cut" in text or (
            f"{big + len(tail) - EVENT_CHARS:,} characters cut" in text)
    assert (result.run_dir / IMPORT_SHARD).stat().st_size < 4 * EVENT_CHARS


def test_a_transcript_keeps_at_most_max_events(tmp_path: Path) -> None:
    many = [{"role": "user", "content": f"message {i}"} for i in range(MAX_EVENTS + 50)]
    result = import_results(_log_with_messages(tmp_path, many), "inspect", "many",
                            runs_dir=tmp_path / "runs")
    (record,) = _records(result.run_dir)[1].values()
    events = record["response"]["events"]
    assert len(events) == MAX_EVENTS + 1
    assert events[MAX_EVENTS - 1]["content"] == f"message {MAX_EVENTS - 1}"
    assert events[-1] == {"kind": "system", "content": "[50 more events cut]", "name": ""}


def test_inspect_attachments_are_resolved(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "attachment://abc123"},
                {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "hmm"},
                                                  {"type": "text", "text": "Paris"}]}]
    result = import_results(
        _log_with_messages(tmp_path, messages, {"abc123": "the prompt kept aside"}),
        "inspect", "att", runs_dir=tmp_path / "runs")
    (record,) = _records(result.run_dir)[1].values()
    assert [(e["kind"], e["content"]) for e in record["response"]["events"]] == [
        ("user", "the prompt kept aside"), ("assistant", "Paris")]


def test_copying_an_imported_run_keeps_its_transcripts_readable(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    import_results(NO_PLUGIN, "inspect", "orig", runs_dir=runs)
    shutil.copytree(runs / "orig", tmp_path / "elsewhere")
    rows, records = _records(tmp_path / "elsewhere")
    assert len(records) == len(rows) == 23


@pytest.mark.parametrize("kind", ["tool_result", "user"])
def test_a_secret_across_the_cut_is_not_left_half(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "Zq8~hunter2-Kx4~Lm7-secretvalue"
    monkeypatch.setenv("IMPORT_PROBE_TOKEN", secret)
    # the secret straddles the last character kept (the start kept, or the end kept)
    kept, dropped = "a" * (EVENT_CHARS - 10), "b" * (EVENT_CHARS + 10)
    text = kept + secret + dropped if kind == "user" else dropped + secret + kept
    content = event(kind, text)["content"]
    assert "characters cut" in content
    assert secret[:8] not in content and secret[-8:] not in content
    assert "[REDACTED]" in content
