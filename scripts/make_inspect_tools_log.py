"""Regenerate ``tests/fixtures/imports/inspect-tools/`` from the real inspect-ai, offline.

Writes an Inspect AI log of an agent with tools: the task ``capitals-tools`` (3 samples x 2
epochs) offers two tools, ``load_skill`` (returns a skill's text) and ``lookup`` (a table of
capitals; an unknown country is a tool error), and the ``mockllm`` model decides from the
conversation so far, deterministically per sample and call:

- ``load``: call ``load_skill`` (``name="capitals"``), then ``lookup``, then answer right;
- ``skip``: answer at once, wrongly (no tool called);
- ``stumble``: load the skill, look up a misspelt country (the tool errors), then answer right.

Inspect runs the tools itself (no sandbox: both are plain Python functions), so the log's
messages hold real tool calls and tool results. ``expected.json`` is what inspect-ai's own
``read_eval_log`` reads from the log: each sample's messages as (role, text, tool calls,
function, error), the tests' independent reference. Use the inspect-ai of
``scripts/make_import_fixtures.py``::

    /tmp/inspect-venv/bin/python scripts/make_inspect_tools_log.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "imports" / "inspect-tools"

CAPITALS = {"france": "Paris", "peru": "Lima", "australia": "Canberra"}
WRONG = {"france": "Lyon", "peru": "Cusco", "australia": "Sydney"}
SKILL_TEXT = "Capitals skill: look the country up with the lookup tool before answering."
#: What the model does for each sample, per epoch.
PLAN = {
    "france": ["load", "load"],
    "peru": ["stumble", "skip"],
    "australia": ["skip", "load"],
}


def _mock_outputs() -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    epochs: dict[str, int] = {}

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        prompt = next(m for m in messages if m.role == "user").text
        country = next(c for c in CAPITALS if c.title() in prompt)
        calls = [m for m in messages if m.role == "tool"]
        if not calls:  # a new sample (or epoch) starts
            epochs[country] = epochs.get(country, 0) + 1
        plan = PLAN[country][(epochs[country] - 1) % 2]
        model = "mockllm/model"
        if plan == "skip":
            output = ModelOutput.from_content(model=model, content=WRONG[country])
        elif len(calls) == 0:
            output = ModelOutput.for_tool_call(model, "load_skill", {"name": "capitals"},
                                               tool_call_id=f"load-{country}")
        elif len(calls) == 1:
            asked = country.title() + ("x" if plan == "stumble" else "")
            output = ModelOutput.for_tool_call(model, "lookup", {"country": asked},
                                               tool_call_id=f"lookup-{country}")
        else:
            output = ModelOutput.from_content(model=model, content=CAPITALS[country])
        output.usage = ModelUsage(input_tokens=20 + 5 * len(messages), output_tokens=4,
                                  total_tokens=24 + 5 * len(messages))
        return output

    return generate


def _task() -> Any:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import ToolError, tool

    @tool
    def load_skill() -> Any:
        async def execute(name: str) -> str:
            """Load a skill by name.

            Args:
                name: The skill's name.
            """
            return SKILL_TEXT if name == "capitals" else f"no skill {name!r}"

        return execute

    @tool
    def lookup() -> Any:
        async def execute(country: str) -> str:
            """The capital of a country.

            Args:
                country: The country's name.
            """
            found = CAPITALS.get(country.lower())
            if found is None:
                raise ToolError(f"unknown country {country!r}")
            return found

        return execute

    @task(name="capitals-tools")
    def capitals_tools() -> Task:
        samples = [
            Sample(id=f"cap-{c}", input=f"What is the capital of {c.title()}? City only.",
                   target=capital)
            for c, capital in CAPITALS.items()
        ]
        return Task(
            dataset=MemoryDataset(samples, name="capitals-tools"),
            solver=[use_tools([load_skill(), lookup()]), generate()],
            scorer=match(),
            epochs=2,
        )

    return capitals_tools()


def _expected(path: Path) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path), resolve_attachments=True)
    samples = []
    for sample in log.samples or []:
        messages = []
        for m in sample.messages:
            messages.append({
                "role": m.role,
                "text": m.text,
                "tool_calls": [[c.function, c.arguments] for c in getattr(m, "tool_calls", None)
                               or []],
                "function": getattr(m, "function", None),
                "error": m.error.message if getattr(m, "error", None) else None,
            })
        samples.append({"id": sample.id, "epoch": sample.epoch,
                        "score": {k: v.value for k, v in (sample.scores or {}).items()},
                        "messages": messages})
    return {"task": log.eval.task, "model": log.eval.model, "samples": samples}


def main() -> None:
    """Run the task once with the mock model and write the log and its expected.json."""
    import inspect_ai
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model("mockllm/model", custom_outputs=_mock_outputs())
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        (log,) = inspect_eval(_task(), model=model, log_dir=tmp, max_samples=1,
                              max_connections=1, display="none")
        dest = OUT / "capitals-tools.eval"
        shutil.copyfile(Path(log.location), dest)
    expected = _expected(dest) | {"inspect_ai": inspect_ai.__version__}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote {dest} ({dest.stat().st_size:,} bytes) and expected.json")


if __name__ == "__main__":
    main()
