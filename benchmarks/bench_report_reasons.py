"""The run report of a 100,000-item run with its reasons, against another tree of the code.

Usage: python benchmarks/bench_report_reasons.py [--before DIR] [--repeat 3] [--run-dir DIR]
                                                  [--cases 2500] [--trials 5] [--kind run]

The run is synthesized by ``scripts/make_report_fixtures.py`` (results, scores and transcript
shards of 2,500 cases x 4 conditions x 2 providers x 5 trials; ``--run-dir`` reuses one made
before). Each repetition renders the report once with this tree and, with ``--before``, once
with the other tree (``python -m evalkit report RUN --kind run`` in a fresh process, the other
tree first on ``PYTHONPATH``, e.g. ``git archive HEAD | tar -x -C DIR``), interleaved so that
both see the same load. The table gives each side's median wall time and the median of the
pairwise ratios (this tree / before), with their range; the goal is at most 1.2x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import _fixtures_module  # noqa: E402  (the same loader of the synthesizer)

ROOT = Path(__file__).resolve().parent.parent
GOAL_RATIO = 1.2


def _render(tree: Path, run_dir: Path, kind: str, output: Path) -> float:
    """Seconds to render one report with the code of ``tree`` (a fresh process)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "evalkit", "report", str(run_dir), "--kind", kind,
               "-o", str(output)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"report with {tree} failed ({done.returncode}):\n{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another tree of the code to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run-dir", type=Path, help="an existing synthesized run (reused)")
    parser.add_argument("--cases", type=int, default=2500)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--kind", default="run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        run_dir = args.run_dir
        if run_dir is None or not (run_dir / "results.parquet").exists():
            target = run_dir.parent if run_dir is not None else tmp / "runs"
            name = run_dir.name if run_dir is not None else "big"
            start = time.perf_counter()
            run_dir = _fixtures_module().synthesize_large(target, name, args.cases, args.trials)
            print(f"synthesized {run_dir} in {time.perf_counter() - start:.1f} s")
        trees = [("this tree", ROOT)]
        if args.before is not None:
            trees.insert(0, ("before", args.before.resolve()))
        walls: dict[str, list[float]] = {label: [] for label, _ in trees}
        sizes: dict[str, float] = {}
        for index in range(args.repeat):
            for label, tree in trees:
                output = tmp / f"{label.replace(' ', '-')}-{index}.html"
                walls[label].append(_render(tree, run_dir, args.kind, output))
                sizes[label] = output.stat().st_size / 1024
                print(f"  {label} #{index + 1}: {walls[label][-1]:.2f} s", flush=True)
        print()
        print(f"| `--kind {args.kind}` | wall s (median) | min-max | HTML KiB |")
        print("|---|---:|---:|---:|")
        for label, _ in trees:
            print(f"| {label} | {statistics.median(walls[label]):.2f} | "
                  f"{min(walls[label]):.2f}-{max(walls[label]):.2f} | {sizes[label]:,.0f} |")
        if args.before is not None:
            ratios = [a / b for a, b in zip(walls["this tree"], walls["before"], strict=True)]
            ratio = statistics.median(ratios)
            verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
            print()
            print(f"ratio this tree / before: median {ratio:.2f}x (pairwise "
                  f"{min(ratios):.2f}-{max(ratios):.2f}x); goal <= {GOAL_RATIO}x: {verdict}")


if __name__ == "__main__":
    main()
