"""Write ``tests/fixtures/imports/inspect-reasons/reasons.eval`` with the real Inspect AI.

A tiny Inspect AI log whose samples each end for a different reason, for the tests
of what ``evalkit import --format inspect`` keeps of why a sample failed:

- ``right``: the answer matches the target (the scorer passes it);
- ``graded-wrong``: the answer is wrong and the scorer explains why (``explanation``);
- ``token-capped``: the solver runs out of its token budget (Inspect records ``limit``
  ``token``) and the scorer then fails the short answer;
- ``crashed``: the solver raises, so the sample has an ``error`` (``fail_on_error=False``).

No model is called: a solver writes each answer, so the log is the same on every run but for
ids, timestamps and timings. Run it with a throwaway inspect-ai (not an evalkit dependency)::

    python3.11 -m venv /tmp/inspect-venv
    /tmp/inspect-venv/bin/pip install 'inspect-ai==0.3.285'
    /tmp/inspect-venv/bin/python scripts/make_inspect_reasons_log.py
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
from inspect_ai.util import LimitExceededError

OUT = Path(__file__).resolve().parent.parent / "tests/fixtures/imports/inspect-reasons"
MODEL = "mockllm/model"
ANSWERS = {"right": "42", "graded-wrong": "41", "token-capped": "4"}


@solver
def answer_from_table():  # noqa: ANN201 - Inspect's decorator types it
    """Answer from :data:`ANSWERS`; ``token-capped`` exceeds its budget, ``crashed`` raises."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == "crashed":
            raise RuntimeError("sandbox unavailable: could not start the task container")
        state.output = ModelOutput.from_content(MODEL, ANSWERS[str(state.sample_id)])
        if state.sample_id == "token-capped":
            raise LimitExceededError("token", value=1210, limit=1000)
        return state

    return solve


@scorer(metrics=[accuracy()])
def line_count():  # noqa: ANN201 - Inspect's decorator types it
    """Compare the answer with the target and say why it differs."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if answer == target.text:
            return Score(value=CORRECT, answer=answer, explanation=f"{answer} lines, as expected")
        return Score(
            value=INCORRECT,
            answer=answer,
            explanation=f"counted {answer} lines but the file has {target.text}: the header "
            "line was skipped",
        )

    return score


@task
def reasons() -> Task:
    """Four samples, each ending for another reason."""
    samples = [
        Sample(id=name, input="How many lines does data.csv have?", target="42")
        for name in ("right", "graded-wrong", "token-capped", "crashed")
    ]
    return Task(dataset=samples, solver=answer_from_table(), scorer=line_count())


def main() -> int:
    """Run the task and copy its log to :data:`OUT`."""
    with tempfile.TemporaryDirectory() as tmp:
        (log,) = eval(
            reasons(), model=MODEL, log_dir=tmp, log_format="eval", fail_on_error=False,
            max_samples=1, display="none",
        )
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copy(log.location, OUT / "reasons.eval")
    print(OUT / "reasons.eval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
