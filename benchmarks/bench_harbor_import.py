"""Import time of a 10,000-trial Harbor job tree (``evalkit import --format harbor``).

The job tree is written by Harbor's own pydantic models (``scripts/make_harbor_jobs.py``, run
with a Python >= 3.12 that has ``harbor`` installed: ``--harbor-python``): 2 jobs (conditions)
x 834 tasks x 2 agents x 3 trials = 10,008 trials, each a directory with ``config.json`` and
``result.json``. Measured, median of ``--repeat`` runs after a warm-up:

- ``evalkit.import_results(..., "harbor")`` end to end (listing, reading and validating every
  trial, numbering trials, writing the run directory);
- **baseline:** reading every trial ``result.json`` with ``json.loads`` (the floor any importer
  pays for the bytes), measured in the same run;
- the CSV import of the same 10,008 rows (``--format csv``), for scale.

Usage::

    .venv/bin/python benchmarks/bench_harbor_import.py --harbor-python .harbor/bin/python
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from evalkit.interop import import_results
from evalkit.results import read_run

ROOT = Path(__file__).resolve().parents[1]


def _median_seconds(work, repeat: int) -> float:  # type: ignore[no-untyped-def]
    work()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    """Write the tree, time the imports, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--harbor-python", required=True, type=Path)
    parser.add_argument("--tasks", type=int, default=834)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-harbor-"))
    try:
        jobs = scratch / "jobs"
        start = time.perf_counter()
        subprocess.run(
            [str(args.harbor_python), str(ROOT / "scripts" / "make_harbor_jobs.py"), str(jobs),
             "--tasks", str(args.tasks), "--agents", "2", "--trials", "3"],
            check=True,
        )
        written = time.perf_counter() - start
        job_dirs = sorted(p for p in jobs.iterdir() if p.is_dir())
        files = sorted(jobs.glob("*/*/result.json"))
        counter = iter(range(10**6))

        def harbor() -> None:
            import_results(job_dirs, "harbor", f"h{next(counter)}", runs_dir=scratch / "runs")

        def floor() -> None:
            for path in files:
                json.loads(path.read_text(encoding="utf-8"))

        import_results(job_dirs, "harbor", "reference", runs_dir=scratch / "runs")
        rows = read_run(scratch / "runs" / "reference")
        csv = scratch / "rows.csv"
        rows[["case_id", "condition", "provider", "trial", "passed", "score", "input_tokens",
              "output_tokens", "cost_usd", "latency_s"]].to_csv(csv, index=False)

        def as_csv() -> None:
            import_results(csv, "csv", f"c{next(counter)}", runs_dir=scratch / "runs")

        t_harbor = _median_seconds(harbor, args.repeat)
        t_floor = _median_seconds(floor, args.repeat)
        t_csv = _median_seconds(as_csv, args.repeat)
        print(f"{len(files)} trials written by harbor in {written:.1f} s")
        print("| what | seconds | per trial | vs. baseline |")
        print("|---|---:|---:|---:|")
        for name, seconds in (
            ("`import_results(..., 'harbor')` end to end", t_harbor),
            ("**baseline:** `json.loads` of every trial result.json", t_floor),
            ("`import_results(..., 'csv')` of the same rows", t_csv),
        ):
            print(f"| {name} | {seconds:.2f} | {seconds / len(files) * 1e3:.2f} ms | "
                  f"{seconds / t_floor:.1f}x |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
