"""Baseline: Inspect AI's per-sample overhead with its mock model (run it with inspect-ai).

Usage (inspect-ai is not an evalkit dependency; use a throwaway venv):

    python3.11 -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install 'inspect-ai==0.3.285'
    /tmp/inspect-venv/bin/python benchmarks/bench_inspect_baseline.py --samples 200 --epochs 5

Runs ``generate()`` + ``includes()`` over N samples x epochs with ``mockllm`` (usage filled in
so no tokenizer is downloaded), ``max_connections=50``, and prints one JSON line:
``{"items", "wall_s", "ms_per_item"}``. ``bench_runner.py --inspect-python`` calls it so both
are measured in the same session.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    def outputs(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        output = ModelOutput.from_content(model="mockllm/model", content="Poll in a loop.")
        output.usage = ModelUsage(input_tokens=20, output_tokens=5, total_tokens=25)
        return output

    samples = [
        Sample(id=f"s{i}", input=f"question {i}", target="loop") for i in range(args.samples)
    ]
    task = Task(
        dataset=MemoryDataset(samples), solver=[generate()], scorer=includes(), epochs=args.epochs
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        inspect_eval(task, model=model, log_dir=tmp, max_connections=50, display="none")
        wall = time.perf_counter() - t0
    items = args.samples * args.epochs
    print(json.dumps({"items": items, "wall_s": wall, "ms_per_item": wall / items * 1e3}))


if __name__ == "__main__":
    main()
