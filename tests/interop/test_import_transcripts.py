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


def _inspect_events(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """What a transcript must hold, from inspect-ai's own reading of the messages."""
    out = []
    for m in messages:
        if m["role"] in ("system", "user"):
            out.append((m["role"], m["text"], ""))
        elif m["role"] == "assistant":
            if m["text"]:
                out.append(("assistant", m["text"], ""))
            for function, arguments in m["tool_calls"]:
                (value,) = arguments.values()  # each tool here takes one argument
                out.append(("tool_call", value, function))
        else:
            text = "\n".join(t for t in (m["text"], m["error"] and f"error: {m['error']}") if t)
            out.append(("tool_result", text, m["function"]))
    return out


def test_an_inspect_agent_with_tools_keeps_calls_and_results_with_the_tool_names(
    tmp_path: Path,
) -> None:
    tools = FIX / "inspect-tools"
    expected = json.loads((tools / "expected.json").read_text())
    result = import_results(tools / "capitals-tools.eval", "inspect", "tools", runs_dir=tmp_path)
    rows, records = _records(result.run_dir)
    assert len(records) == len(rows) == len(expected["samples"]) == 6
    seen_error = False
    for sample in expected["samples"]:
        row = rows[(rows.case_id == sample["id"]) & (rows.trial == sample["epoch"] - 1)].iloc[0]
        events = records[row["item_key"]]["response"]["events"]
        assert [(e["kind"], e["content"], e["name"]) for e in events] == _inspect_events(
            sample["messages"])
        seen_error |= any(e["content"].startswith("error: unknown country") for e in events)
    assert seen_error, "the log's tool error is kept in its tool result"


def test_explain_on_an_inspect_agent_finds_the_skill_load_the_failing_trial_skipped(
    tmp_path: Path,
) -> None:
    tools = FIX / "inspect-tools"
    expected = json.loads((tools / "expected.json").read_text())
    # from inspect-ai's reading: cap-australia's epoch 1 answers at once (wrong), epoch 2
    # loads the skill, looks the capital up and answers right
    by_epoch = {s["epoch"]: s for s in expected["samples"] if s["id"] == "cap-australia"}
    assert [m["role"] for m in by_epoch[1]["messages"]] == ["user", "assistant"]
    assert by_epoch[2]["messages"][1]["tool_calls"][0][0] == "load_skill"
    assert (by_epoch[1]["score"]["match"], by_epoch[2]["score"]["match"]) == ("I", "C")
    import_results(tools / "capitals-tools.eval", "inspect", "tools", runs_dir=tmp_path)
    (cell,) = evalkit.explain("tools", "cap-australia", runs_dir=tmp_path).cells
    # steps 0 (the prompt) and 1 (an assistant message) share their kind; at step 2 the
    # passing trial loads the skill and the failing one has ended
    assert cell.first_divergence == 2 and "differ in kind first at step 2" in cell.divergence_note
    step = cell.divergence[cell.divergence["step"] == 2].iloc[0]
    assert (step["passing_kind"], step["failing_kind"]) == ("skill load · capitals", "(ended)")
    assert "does not call lookup" in " ".join(cell.distinguishing["sentence"])


def _atif_events(path: Path) -> list[tuple[str, str, str]]:
    """What a transcript must hold, read from the ATIF file by its specification."""
    out = []
    for step in json.loads(path.read_text())["steps"]:
        if step["source"] != "agent":
            out.append((step["source"], step["message"], ""))
            continue
        if step.get("message"):
            out.append(("assistant", step["message"], ""))
        names = {}
        for call in step.get("tool_calls") or []:
            names[call["tool_call_id"]] = call["function_name"]
            (value,) = call["arguments"].values()
            out.append(("tool_call", value, call["function_name"]))
        for result in (step.get("observation") or {}).get("results") or []:
            out.append(("tool_result", result["content"], names[result["source_call_id"]]))
    return out


def test_harbor_trials_keep_the_atif_trajectory_harbor_wrote(tmp_path: Path) -> None:
    result = import_results(FIX / "harbor", "harbor", "hb", runs_dir=tmp_path)
    rows, records = _records(result.run_dir)
    assert len(records) == len(rows) == 4
    trials = sorted((FIX / "harbor").glob("job-*/task-*/agent/trajectory.json"))
    assert len(trials) == 4
    expected = sorted(tuple(_atif_events(p)) for p in trials)
    got = sorted(tuple((e["kind"], e["content"], e["name"]) for e in r["response"]["events"])
                 for r in records.values())
    assert got == expected
    loaded = rows.set_index("item_key")["condition"]
    for key, record in records.items():
        reads = [e for e in record["response"]["events"] if e["name"] == "Read"]
        # with skills the agent reads the skill first (a skill load, as in native runs)
        assert bool(reads) == (loaded[key] == "self-load")
        if reads:
            from evalkit._skill_load import skill_loaded

            assert skill_loaded(reads[0]) == "arithmetic"
        assert record["response"]["model"] == "claude-opus-4-5"


def test_a_trial_without_a_readable_trajectory_imports_without_a_transcript(
    tmp_path: Path,
) -> None:
    jobs = tmp_path / "jobs"
    shutil.copytree(FIX / "harbor", jobs)
    for path in jobs.glob("job-no-skills/*/agent/trajectory.json"):
        path.unlink()
    broken = sorted(jobs.glob("job-with-skills/*/agent/trajectory.json"))[0]
    broken.write_text("{not json")
    result = import_results(jobs, "harbor", "hb", runs_dir=tmp_path / "runs")
    rows, records = _records(result.run_dir)
    assert len(rows) == 4 and len(records) == 1
    assert rows["transcript_path"].notna().sum() == 1
    (warning,) = [w for w in result.warnings if "without their transcript" in w]
    assert warning.startswith(f"1 item(s) imported without their transcript: first {broken}: "
                              "not valid JSON")


def test_trajectories_are_read_within_the_untrusted_input_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = tmp_path / "jobs"
    shutil.copytree(FIX / "harbor", jobs)
    # one trajectory nested deeper than any reader goes (a depth bomb in a tool's arguments)
    bomb = sorted(jobs.glob("job-no-skills/*/agent/trajectory.json"))[0]
    data = json.loads(bomb.read_text())
    data["steps"][0]["extra"] = {"deep": json.loads("[" * 500 + "]" * 500)}
    bomb.write_text(json.dumps(data))
    # and a size bound between the no-skills trial files and the with-skills trajectories
    large = sorted(jobs.glob("job-with-skills/*/agent/trajectory.json"))
    bound = min(p.stat().st_size for p in large) - 1
    assert all(p.stat().st_size <= bound for p in jobs.rglob("result.json"))
    monkeypatch.setenv("EVALKIT_MAX_INPUT_BYTES", str(bound))
    result = import_results(jobs, "harbor", "hb", runs_dir=tmp_path / "runs")
    rows, records = _records(result.run_dir)
    assert len(rows) == 4 and len(records) == 1, "only the small, shallow trajectory is kept"
    (warning,) = [w for w in result.warnings if "without their transcript" in w]
    assert warning.startswith("3 item(s) imported without their transcript: first ")
    assert "nested more than 128 levels" in warning or f"more than the {bound:,} bytes" in warning


PROMPT = "Write the answer of task-00 to /app/answer.txt.\n\nCurrent terminal state:\n$ "


def _terminus_1(trial: Path, episodes: list[tuple[str, dict[str, Any]]]) -> None:
    """Episodes as Terminus 1 logs them: prompt.txt, and response.json indented by 4."""
    for number, (prompt, answer) in enumerate(episodes):
        folder = trial / "agent-logs" / f"episode-{number}"
        folder.mkdir(parents=True)
        (folder / "prompt.txt").write_text(prompt)
        (folder / "response.json").write_text(json.dumps(answer, indent=4))


def _batch(explanation: str, *keys: str, done: bool) -> dict[str, Any]:
    return {"state_analysis": "A shell in /app.", "explanation": explanation,
            "commands": [{"keystrokes": k, "is_blocking": True, "timeout_sec": 5.0}
                         for k in keys],
            "is_task_complete": done}


def test_terminal_bench_terminus_episodes_become_a_transcript_explain_aligns(
    tmp_path: Path,
) -> None:
    runs_in = tmp_path / "tb"
    shutil.copytree(FIX / "terminal-bench-1", runs_in)
    task = runs_in / "no-skills" / "task-00"
    # attempt 1 failed (is_resolved false), attempt 3 passed (see the fixture's results.json)
    assert not json.loads((task / "task-00.1-of-3.no-skills" / "results.json").read_text())[
        "is_resolved"]
    assert json.loads((task / "task-00.3-of-3.no-skills" / "results.json").read_text())[
        "is_resolved"]
    _terminus_1(task / "task-00.1-of-3.no-skills",
                [(PROMPT, _batch("Write the answer.", "echo 41 > /app/answer.txt\n", done=True))])
    _terminus_1(task / "task-00.3-of-3.no-skills", [
        (PROMPT, _batch("Compute it first.", "python3 -c 'print(6*7)'\n", done=False)),
        ("$ python3 -c 'print(6*7)'\n42\n$ ",
         _batch("Write it.", "echo 42 > /app/answer.txt\n", done=True)),
    ])
    # Terminus 2 keeps the model's text, the JSON answer inside it
    later = runs_in / "with-skills" / "task-00" / "task-00.1-of-3.with-skills" / "agent-logs"
    (later / "episode-0").mkdir(parents=True)
    (later / "episode-0" / "prompt.txt").write_text(PROMPT)
    (later / "episode-0" / "response.txt").write_text(
        'Here is my answer:\n{"analysis": "Empty.", "plan": "Write 42.", "commands": '
        '[{"keystrokes": "echo 42 > /app/answer.txt\\n", "duration": 1}], '
        '"task_complete": true}')
    result = import_results(runs_in, "terminal-bench", "tb", runs_dir=tmp_path / "runs")
    rows, records = _records(result.run_dir)
    assert len(records) == 3
    by_trial = {(r.condition, r.trial): records.get(r.item_key) for r in rows.itertuples()
                if r.case_id == "task-00"}
    passing = by_trial[("no-skills", 2)]
    assert passing is not None
    assert [(e["kind"], e["name"], e["content"]) for e in passing["response"]["events"]] == [
        ("user", "", PROMPT),
        ("assistant", "", "A shell in /app.\nCompute it first."),
        ("tool_call", "terminal", "python3 -c 'print(6*7)'\n"),
        ("tool_result", "terminal", "$ python3 -c 'print(6*7)'\n42\n$ "),
        ("assistant", "", "A shell in /app.\nWrite it."),
        ("tool_call", "terminal", "echo 42 > /app/answer.txt\n"),
    ]
    terminus_2 = by_trial[("with-skills", 0)]
    assert terminus_2 is not None
    assert [(e["kind"], e["content"]) for e in terminus_2["response"]["events"]][1:] == [
        ("assistant", "Empty.\nWrite 42."), ("tool_call", "echo 42 > /app/answer.txt\n")]
    cells = evalkit.explain("tb", "task-00", condition="no-skills",
                            runs_dir=tmp_path / "runs").cells
    (cell,) = cells
    # the failing attempt 1 against the passing attempt 3: the same kinds up to the command,
    # then the passing one reads the terminal's output and the failing one has ended
    assert "passing run trial 2 against failing run trial 0" in cell.divergence_note
    assert cell.first_divergence == 3
    step = cell.divergence[cell.divergence["step"] == 3].iloc[0]
    assert (step["passing_kind"], step["failing_kind"]) == ("tool_result · terminal", "(ended)")


def test_promptfoo_results_keep_their_prompt_and_output(tmp_path: Path) -> None:
    path = FIX / "promptfoo" / "results.json"
    raw = json.loads(path.read_text())["results"]["results"]
    result = import_results(path, "promptfoo", "pf", runs_dir=tmp_path)
    rows, records = _records(result.run_dir)
    assert len(records) == len(rows) == len(raw) == 18
    expected = sorted(
        (r["prompt"]["raw"], r["response"]["output"]) for r in raw if r.get("response")
    )
    got = sorted(
        tuple(e["content"] for e in rec["response"]["events"]) for rec in records.values()
        if len(rec["response"]["events"]) == 2
    )
    assert got == expected
    for record in records.values():
        kinds = [e["kind"] for e in record["response"]["events"]]
        assert kinds in (["user", "assistant"], ["user"])


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


def test_a_case_id_the_redactor_would_touch_still_finds_its_transcript(tmp_path: Path) -> None:
    log = json.loads((FIX / "inspect-json" / "capitals-beta.json").read_text())
    log["samples"][0]["id"] = "key-sk-proj-AAAAbbbbCCCCdddd1234"
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(log))
    result = import_results(path, "inspect", "odd", runs_dir=tmp_path / "runs")
    rows, records = _records(result.run_dir)
    assert list(records) == list(rows["item_key"]) and "sk-proj" in rows["item_key"].iloc[0]
