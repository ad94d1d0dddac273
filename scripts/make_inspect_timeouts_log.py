"""Write ``tests/fixtures/imports/inspect-timeouts/*.eval`` with the real Inspect AI.

Two Inspect AI logs of one task run with and without a plugin (the task argument
``plugin_url``: ``"http://localhost:9101"`` or ``False``), 12 samples x 2 epochs each, in the
shape of a real plugin A/B whose every failure is an HTTP timeout: the scorer ``agent_scorer``
asks the agent's server for its answer, and when the request times out it scores the sample
``I`` with ``metadata: {"incomplete": true}`` and an explanation starting
``INCOMPLETE: HTTP timeout``. Without the plugin 20 of 24 samples time out, with it 8.

No model and no server is called: the solver decides from the sample and epoch which request
times out, so the logs are the same on every run but for ids, timestamps and timings. Run it
with a throwaway inspect-ai (not an evalkit dependency)::

    python3.11 -m venv /tmp/inspect-venv
    /tmp/inspect-venv/bin/pip install 'inspect-ai==0.3.285'
    /tmp/inspect-venv/bin/python scripts/make_inspect_timeouts_log.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver

OUT = Path(__file__).resolve().parent.parent / "tests/fixtures/imports/inspect-timeouts"
MODEL = "mockllm/model"
PLUGIN_URL = "http://localhost:9101"
SAMPLES = 12
EPOCHS = 2
#: Samples x epochs whose request times out: the first 20 without the plugin, 8 with it.
TIMEOUTS = {False: 20, PLUGIN_URL: 8}
TIMEOUT = "INCOMPLETE: HTTP timeout after 120 s waiting for the agent's answer"


@solver
def ask_agent(plugin_url: str | bool):  # noqa: ANN201 - Inspect's decorator types it
    """Answer the target, or record that the agent's server did not answer in time."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = (int(str(state.sample_id).removeprefix("q")) - 1) * EPOCHS + state.epoch - 1
        timed_out = index < TIMEOUTS[plugin_url]
        state.metadata["http_timeout"] = timed_out
        answer = "" if timed_out else state.target.text
        state.output = ModelOutput.from_content(MODEL, answer)
        return state

    return solve


@scorer(metrics=[accuracy()])
def agent_scorer():  # noqa: ANN201 - Inspect's decorator types it
    """Score the agent's answer; an HTTP timeout is incomplete, said so in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        if state.metadata.get("http_timeout"):
            return Score(value=INCORRECT, answer="", explanation=TIMEOUT,
                         metadata={"incomplete": True})
        answer = state.output.completion.strip()
        value = CORRECT if answer == target.text else INCORRECT
        return Score(value=value, answer=answer, explanation=f"the agent answered {answer}",
                     metadata={"incomplete": False})

    return score


@task
def plugin_ab(plugin_url: str | bool = False) -> Task:
    """The same questions, asked of an agent with or without the plugin."""
    samples = [
        Sample(id=f"q{n}", input=f"Which port does service {n} listen on?", target=str(9000 + n))
        for n in range(1, SAMPLES + 1)
    ]
    return Task(dataset=samples, solver=ask_agent(plugin_url), scorer=agent_scorer(),
                epochs=EPOCHS)


def main() -> int:
    """Run the task with and without the plugin and copy the logs to :data:`OUT`."""
    OUT.mkdir(parents=True, exist_ok=True)
    for plugin_url, name in ((False, "baseline"), (PLUGIN_URL, "plugin")):
        with tempfile.TemporaryDirectory() as tmp:
            (log,) = eval(
                plugin_ab(plugin_url=plugin_url), model=MODEL, log_dir=tmp, log_format="eval",
                display="none", task_args={"plugin_url": plugin_url},
            )
            shutil.copy(log.location, OUT / f"{name}.eval")
        print(OUT / f"{name}.eval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
