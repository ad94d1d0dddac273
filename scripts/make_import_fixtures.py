"""Regenerate the fixtures of ``evalkit import`` from the real tools, fully offline.

Writes into ``tests/fixtures/imports/``:

- ``inspect/capitals-none.eval``, ``inspect/capitals-preloaded.eval``: Inspect AI logs of one
  task (6 samples x 3 epochs) run with the task argument ``skill=none`` and ``skill=preloaded``
  on the same ``mockllm/model`` (conditions come from ``--condition-from task_arg:skill``);
  one sample errors once in the ``preloaded`` log (a simulated provider outage);
- ``inspect-json/capitals-beta.json``: the same task as a plain-JSON log on another mock
  model, ``mockllm/beta`` (1 sample x 1 epoch: JSON logs are not compressed, so it is kept
  tiny); imported with ``capitals-none.eval`` the conditions are the models (the default);
- ``inspect/expected.json`` and ``inspect-json/expected.json``: what Inspect AI's own
  ``read_eval_log`` reads from each log (sample id, epoch, score values, usage, error), so the
  tests compare evalkit's stdlib parser against the tool's reader;
- ``promptfoo/results.json``: ``promptfoo eval -o results.json`` of 3 tests x 2 prompts x 3
  repeats with the offline ``echo`` provider and ``contains`` assertions (some pass, some fail,
  one half-passes, and one test's ``none`` prompt errors in a transform), plus the
  ``promptfooconfig.yaml`` that produced it (the file is promptfoo's bytes, untouched);
- ``tables/``: small CSV/JSONL examples in evalkit's own import format;
- ``malformed/``: broken variants (derived from the real outputs where they imitate a tool);
- ``versions.json``: the exact tool versions used.

Versions used for the committed fixtures: inspect-ai 0.3.285 (Python 3.11), promptfoo
0.121.20 (Node 20.20). Neither is a dependency of evalkit; install them somewhere throwaway::

    python3.11 -m venv /tmp/inspect-venv
    /tmp/inspect-venv/bin/pip install 'inspect-ai==0.3.285'
    npm install --prefix /tmp/pf 'promptfoo@0.121.20'
    /tmp/inspect-venv/bin/python scripts/make_import_fixtures.py \
        --promptfoo /tmp/pf/node_modules/.bin/promptfoo

Everything runs offline: Inspect's ``mockllm`` gets its outputs (with usage and cost filled in,
so no tokenizer is downloaded) from a deterministic function of the prompt, and promptfoo's
``echo`` provider returns the rendered prompt. Samples run one at a time, so re-running the
script gives the same rows (timestamps, ids and timings change).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "imports"

CAPITALS = [
    ("france", "Paris"),
    ("japan", "Tokyo"),
    ("kenya", "Nairobi"),
    ("peru", "Lima"),
    ("canada", "Ottawa"),
    ("australia", "Canberra"),
]
SKILL_TEXT = "Capitals skill: Canada -> Ottawa; Australia -> Canberra; Peru -> Lima."

# What each mock model answers, per sample and per call (the n-th call of a prompt is its
# n-th epoch because samples run one at a time). "right", "wrong", "verbose" (the right
# answer inside a sentence: `includes` passes, the strict scorer gives partial credit).
BEHAVIOUR: dict[str, dict[str, list[str]]] = {
    "none": {
        "france": ["right", "right", "right"],
        "japan": ["verbose", "right", "verbose"],
        "kenya": ["right", "wrong", "right"],
        "peru": ["wrong", "wrong", "right"],
        "canada": ["wrong", "wrong", "wrong"],
        "australia": ["wrong", "wrong", "wrong"],
    },
    "preloaded": {
        "france": ["right", "right", "right"],
        "japan": ["right", "verbose", "right"],
        "kenya": ["right", "right", "wrong"],
        "peru": ["right", "error", "right"],
        "canada": ["right", "right", "right"],
        "australia": ["verbose", "right", "right"],
    },
    "beta": {
        "france": ["right", "right", "right"],
        "japan": ["right", "right", "right"],
        "kenya": ["right", "right", "verbose"],
        "peru": ["right", "wrong", "right"],
        "canada": ["verbose", "right", "wrong"],
        "australia": ["wrong", "right", "wrong"],
    },
}


class InspectRun(NamedTuple):
    """One Inspect AI evaluation to log."""

    file: str
    model: str
    behaviour: str
    skill: str
    log_format: str
    epochs: int = 3
    limit: int | None = None


INSPECT_RUNS = {
    # Same model, two task arguments: 6 samples x 3 epochs each (.eval, the default format).
    "inspect": [
        InspectRun("capitals-none.eval", "model", "none", "none", "eval"),
        InspectRun("capitals-preloaded.eval", "model", "preloaded", "preloaded", "eval"),
    ],
    # A plain-JSON log of another model (kept tiny: JSON logs are not compressed).
    "inspect-json": [
        InspectRun("capitals-beta.json", "beta", "beta", "none", "json", epochs=1, limit=1),
    ],
}

WRONG = {
    "france": "Lyon",
    "japan": "Osaka",
    "kenya": "Mombasa",
    "peru": "Cusco",
    "canada": "Toronto",
    "australia": "Sydney",
}


# ---------------------------------------------------------------------------------- Inspect


def _mock_outputs(behaviour: dict[str, list[str]], model: str) -> Callable[..., Any]:
    from inspect_ai.model import ModelOutput, ModelUsage

    calls: dict[str, int] = {}

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = messages[-1].text
        country = next(c for c, _ in CAPITALS if c.title() in prompt)
        n = calls.get(country, 0)
        calls[country] = n + 1
        kind = behaviour[country][n % 3]
        capital = dict(CAPITALS)[country]
        if kind == "error":
            raise RuntimeError(f"simulated provider outage while answering '{country}'")
        text = {
            "right": capital,
            "wrong": WRONG[country],
            "verbose": f"I believe the capital of {country.title()} is {capital}.",
        }[kind]
        output = ModelOutput.from_content(model=model, content=text)
        skill_tokens = len(SKILL_TEXT.split()) if len(messages) > 1 else 0
        input_tokens = 12 + len(prompt.split()) + skill_tokens
        output_tokens = len(text.split())
        output.usage = ModelUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            total_cost=round(input_tokens * 1e-6 + output_tokens * 4e-6, 9),
        )
        return output

    return generate


def _capitals_task(skill: str) -> Any:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        PARTIAL,
        Score,
        Target,
        accuracy,
        includes,
        scorer,
    )
    from inspect_ai.solver import TaskState, generate, system_message

    @scorer(metrics=[accuracy()])
    def strict() -> Any:
        """C when the answer is exactly the capital, P when it is inside a sentence, else I."""

        async def score(state: TaskState, target: Target) -> Score:
            answer = state.output.completion.strip()
            if answer == target.text:
                value = CORRECT
            elif target.text in answer:
                value = PARTIAL
            else:
                value = INCORRECT
            return Score(value=value, answer=answer)

        return score

    @task(name="capitals")
    def capitals(skill: str = "none") -> Task:
        samples = [
            Sample(
                id=f"cap-{country}",
                input=f"What is the capital of {country.title()}? Answer with the city only.",
                target=capital,
                metadata={"category": "geography", "continent_hint": country[:2]},
            )
            for country, capital in CAPITALS
        ]
        solver = [system_message(SKILL_TEXT)] if skill == "preloaded" else []
        return Task(
            dataset=MemoryDataset(samples, name="capitals"),
            solver=[*solver, generate()],
            scorer=[includes(), strict()],
            epochs=3,
        )

    return capitals(skill=skill)


def _run_inspect(run: InspectRun, dest: Path) -> Path:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model(
        f"mockllm/{run.model}",
        custom_outputs=_mock_outputs(BEHAVIOUR[run.behaviour], f"mockllm/{run.model}"),
    )
    with tempfile.TemporaryDirectory() as tmp:
        logs = inspect_eval(
            _capitals_task(run.skill),
            model=model,
            task_args={"skill": run.skill},
            log_dir=tmp,
            log_format=run.log_format,  # type: ignore[arg-type]
            limit=run.limit,
            epochs=run.epochs,
            max_samples=1,
            max_connections=1,
            fail_on_error=False,
            retry_on_error=0,
            display="none",
        )
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(logs[0].location), dest)
    return dest


def _expected(paths: list[Path]) -> dict[str, Any]:
    """What inspect_ai's own reader sees in each log (the tests' independent reference)."""
    from inspect_ai.log import read_eval_log

    out: dict[str, Any] = {}
    for path in paths:
        log = read_eval_log(str(path))
        samples = []
        for sample in log.samples or []:
            usage = next(iter(sample.model_usage.values()), None)
            samples.append(
                {
                    "id": sample.id,
                    "epoch": sample.epoch,
                    "scores": {k: v.value for k, v in (sample.scores or {}).items()},
                    "input_tokens": usage.input_tokens if usage else None,
                    "output_tokens": usage.output_tokens if usage else None,
                    "total_cost": usage.total_cost if usage else None,
                    "error": sample.error.message if sample.error else None,
                }
            )
        out[path.name] = {
            "task": log.eval.task,
            "model": log.eval.model,
            "task_args": log.eval.task_args,
            "status": log.status,
            "samples": samples,
        }
    return out


def _compact_json(data: dict[str, Any]) -> str:
    """JSON with one sample per line (small, yet diffable)."""
    lines = ["{"]
    for i, (name, log) in enumerate(data.items()):
        samples = log.pop("samples")
        head = json.dumps(log, default=str)[:-1]
        body = ",\n".join("  " + json.dumps(s, default=str) for s in samples)
        comma = "," if i < len(data) - 1 else ""
        lines.append(f"{json.dumps(name)}: {head}, \"samples\": [\n{body}\n]}}{comma}")
    return "\n".join(lines) + "\n}\n"


def make_inspect() -> list[Path]:
    """Write the Inspect AI logs and their ``expected.json`` files."""
    made = []
    for directory, runs in INSPECT_RUNS.items():
        target = OUT / directory
        if target.exists():
            shutil.rmtree(target)
        paths = [_run_inspect(run, target / run.file) for run in runs]
        (target / "expected.json").write_text(
            _compact_json(_expected(paths)), encoding="utf-8"
        )
        made += paths
    return made


# --------------------------------------------------------------------------------- promptfoo

PROMPTFOO_CONFIG = """\
# promptfoo eval -c promptfooconfig.yaml --repeat 3 --no-cache -o results.json
# The echo provider returns the rendered prompt: `none` never names a capital, `preloaded`
# carries a skill line naming Paris and Canberra. `peru` passes under both prompts but errors
# (a transform throws, as a flaky provider would) under `none`; the third test has no
# description and half-passes under `none` (score 0.5, not a pass).
description: capitals-echo
prompts:
  - id: none
    label: none
    raw: "Q: What is the capital of {{country}}?"
  - id: preloaded
    label: preloaded
    raw: >-
      Skill (capitals): France=Paris; Australia=Canberra.
      Q: What is the capital of {{country}}?
providers:
  - echo
tests:
  - description: france
    vars: {country: France}
    assert: [{type: contains, value: Paris}]
  - description: peru
    vars: {country: Peru}
    options:
      transform: >-
        output.startsWith('Q:') ? (() => { throw new Error('simulated provider outage') })()
        : output
    assert: [{type: contains, value: Peru}]
  - vars: {country: Australia}
    assert: [{type: contains, value: Australia}, {type: contains, value: Canberra}]
"""


def make_promptfoo(binary: str) -> Path:
    """Run promptfoo with the echo provider and write ``promptfoo/results.json``."""
    directory = OUT / "promptfoo"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "promptfooconfig.yaml").write_text(PROMPTFOO_CONFIG, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copyfile(directory / "promptfooconfig.yaml", work / "promptfooconfig.yaml")
        env = dict(
            os.environ,
            PROMPTFOO_DISABLE_TELEMETRY="1",
            PROMPTFOO_DISABLE_UPDATE="1",
            PROMPTFOO_DISABLE_SHARING="1",
            PROMPTFOO_CONFIG_DIR=str(work / "config"),
        )
        cmd = [
            binary, "eval", "-c", "promptfooconfig.yaml", "--repeat", "3", "--no-cache",
            "-j", "1", "--no-table", "--no-progress-bar", "-o", "results.json",
        ]
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        # promptfoo exits 100 when some test fails: expected here.
        if not (work / "results.json").exists():
            sys.stderr.write(proc.stdout + proc.stderr)
            raise SystemExit(f"promptfoo failed (exit {proc.returncode})")
        dest = directory / "results.json"
        shutil.copyfile(work / "results.json", dest)  # promptfoo's bytes, untouched
    return dest


def promptfoo_version(binary: str) -> str:
    """The promptfoo version string (``promptfoo --version``)."""
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, env=env, timeout=60)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "unknown"


# ------------------------------------------------------------------------ tables, malformed

TABLE_ROWS = [
    # case_id, condition, passed, trial, score, latency_s, cost_usd, category
    ("sum-list", "none", "true", 0, 1.0, 0.8, 0.0012, "python"),
    ("sum-list", "none", "false", 1, 0.0, 0.9, 0.0011, "python"),
    ("sum-list", "preloaded", "pass", 0, 1.0, 0.7, 0.0013, "python"),
    ("sum-list", "preloaded", "PASS", 1, 1.0, 0.6, 0.0012, "python"),
    ("parse-date", "none", "0", 0, 0.25, 1.1, 0.0020, "python"),
    ("parse-date", "none", "fail", 1, 0.0, 1.3, 0.0021, "python"),
    ("parse-date", "preloaded", "1", 0, 1.0, 1.0, 0.0019, "python"),
    ("parse-date", "preloaded", "True", 1, 1.0, 0.9, 0.0018, "python"),
    ("sql-join", "none", "FALSE", 0, 0.5, 2.0, 0.0030, "sql"),
    ("sql-join", "none", "false", 1, 0.5, 2.2, 0.0031, "sql"),
    ("sql-join", "preloaded", "true", 0, 1.0, 1.8, 0.0029, "sql"),
    ("sql-join", "preloaded", "false", 1, 0.5, 1.9, 0.0028, "sql"),
]


def _csv(rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def make_tables() -> None:
    """Write the CSV/JSONL examples in evalkit's own import format."""
    directory = OUT / "tables"
    directory.mkdir(parents=True, exist_ok=True)
    header = ["case_id", "condition", "passed", "trial", "score", "latency_s", "cost_usd",
              "category", "notes"]
    rows: list[list[Any]] = [header]
    for case, cond, passed, trial, score, latency, cost, category in TABLE_ROWS:
        rows.append([case, cond, passed, trial, score, latency, cost, category, "free text"])
    (directory / "results.csv").write_text(_csv(rows), encoding="utf-8")
    # Minimal: only the required columns, no trial (numbered in file order).
    minimal = [["case_id", "condition", "passed"]] + [[c, k, p] for c, k, p, *_ in TABLE_ROWS]
    (directory / "minimal.csv").write_text(_csv(minimal), encoding="utf-8")
    lines = []
    for case, cond, passed, trial, score, latency, cost, category in TABLE_ROWS:
        value: Any = passed.lower() in ("true", "pass", "1")
        record = {"case_id": case, "condition": cond, "passed": value, "trial": trial,
                  "score": score, "latency_s": latency, "cost_usd": cost,
                  "category": category, "provider": "my-harness", "model": "gpt-x"}
        lines.append(json.dumps(record))
    (directory / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_malformed() -> None:
    """Write broken inputs (derived from the real outputs where they imitate a tool)."""
    directory = OUT / "malformed"
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    files = {
        "empty.csv": "",
        "missing-passed.csv": "case_id,condition,score\na,none,1.0\n",
        "bad-passed.csv": "case_id,condition,passed\na,none,true\nb,none,maybe\n",
        "duplicate.csv": "case_id,condition,passed,trial\na,none,true,0\nb,none,true,0\n"
        "a,none,false,0\n",
        "bad-score.csv": "case_id,condition,passed,score\na,none,true,1.5\n",
        "not-json.jsonl": '{"case_id": "a", "condition": "none", "passed": true}\n{oops\n',
        "not-object.jsonl": '["a", "none", true]\n',
        "not-json.json": "this is not JSON\n",
        "not-a-log.json": json.dumps({"hello": "world"}) + "\n",
    }
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    # promptfoo output whose results lost their verdicts (a truncated export).
    real = json.loads((OUT / "promptfoo" / "results.json").read_text(encoding="utf-8"))
    broken = {"evalId": real["evalId"], "results": {"version": real["results"]["version"],
                                                    "results": real["results"]["results"][:1]}}
    for result in broken["results"]["results"]:
        del result["success"]
    (directory / "promptfoo-no-success.json").write_text(
        json.dumps(broken, indent=1) + "\n", encoding="utf-8"
    )
    # An .eval archive cut short (a copy interrupted mid-way).
    real_eval = (OUT / "inspect" / "capitals-none.eval").read_bytes()
    (directory / "truncated.eval").write_bytes(real_eval[:2048])
    # A zip that is not an Inspect log.
    with zipfile.ZipFile(directory / "not-inspect.eval", "w") as archive:
        archive.writestr("readme.txt", "not an eval log")


def main() -> None:
    """Regenerate every fixture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--promptfoo", default=shutil.which("promptfoo"), help="promptfoo binary")
    parser.add_argument(
        "--only", choices=["inspect", "promptfoo", "tables"], help="regenerate one part only"
    )
    args = parser.parse_args()
    versions: dict[str, Any] = {"python": platform.python_version()}
    os.chdir(tempfile.gettempdir())  # logs record the working directory's details
    if args.only in (None, "inspect"):
        import inspect_ai

        made = make_inspect()
        versions["inspect_ai"] = inspect_ai.__version__
        print("inspect:", ", ".join(str(p.relative_to(ROOT)) for p in made))
    if args.only in (None, "promptfoo"):
        if not args.promptfoo:
            raise SystemExit("promptfoo not found: pass --promptfoo PATH (npm install promptfoo)")
        print("promptfoo:", make_promptfoo(args.promptfoo).relative_to(ROOT))
        versions["promptfoo"] = promptfoo_version(args.promptfoo)
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
        versions["node"] = node.stdout.strip()
    if args.only in (None, "tables"):
        make_tables()
        make_malformed()
        print("tables, malformed:", OUT.relative_to(ROOT))
    path = OUT / "versions.json"
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    path.write_text(json.dumps(old | versions, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"fixtures: {total / 1024:.1f} KB in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
