"""Per-item overhead of the runner: instant simulated items through scoring to parquet.

Usage: python benchmarks/bench_runner.py [--items 5000] [--concurrency 2]

Runs N instant simulated prompt items (no latency) end to end (plan, provider, scorers,
transcripts, parquet parts, compaction, manifest) and reports wall time per item, with the
cache disabled so every item is really executed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import write_suite  # noqa: E402

from evalkit.runner import RunConfig, run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--backend", default="loky")
    parser.add_argument(
        "--inspect-python",
        help="a python with inspect-ai: also measure Inspect AI's mockllm baseline, same session",
    )
    parser.add_argument("--inspect-items", type=int, default=1000)
    args = parser.parse_args()
    n_cases = max(1, args.items // (4 * args.trials))
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp) / "suite", n_cases)
        rows = []
        for concurrency in sorted({1, args.concurrency}):
            config = RunConfig(
                runs_dir=Path(tmp) / "runs",
                trials=args.trials,
                concurrency=concurrency,
                backend=args.backend,
                use_cache=False,
                progress=False,
            )
            t0 = time.perf_counter()
            result = run(suite, config)
            wall = time.perf_counter() - t0
            rows.append((concurrency, result.items, wall, wall / result.items * 1e3))
    print(f"{'concurrency':>11} {'items':>7} {'wall s':>8} {'ms/item':>8}")
    for concurrency, items, wall, per_item in rows:
        print(f"{concurrency:>11} {items:>7} {wall:>8.2f} {per_item:>8.3f}")
    if args.inspect_python:
        import json
        import subprocess

        script = Path(__file__).resolve().parent / "bench_inspect_baseline.py"
        epochs = 5
        out = (
            subprocess.run(
                [
                    args.inspect_python,
                    str(script),
                    "--samples",
                    str(args.inspect_items // epochs),
                    "--epochs",
                    str(epochs),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        baseline = json.loads(out)
        best = min(r[3] for r in rows)
        print(
            f"baseline Inspect AI mockllm: {baseline['items']} items, "
            f"{baseline['wall_s']:.1f} s, {baseline['ms_per_item']:.2f} ms/item; "
            f"evalkit is {baseline['ms_per_item'] / best:.0f}x lower per item"
        )


if __name__ == "__main__":
    main()
