"""Rendering a report of a 100,000-item run: papermill execute + nbconvert HTML, end to end.

Usage: python benchmarks/bench_report.py [--cases 2500] [--trials 5] [--kinds run,lift,...]
                                          [--repeat 3] [--keep DIR]

The run is synthesized as a DataFrame and written as a run directory (results.parquet, a
manifest and 100 transcript shards) by ``scripts/make_report_fixtures.py`` — 2,500 cases x
4 conditions x 2 providers x 5 trials = 100,000 items — instead of running 100,000 simulated
items. Each kind is rendered ``--repeat`` times with ``evalkit.report.report`` (a fresh kernel
each time, as the CLI does); the table gives the wall time (kernel start and imports
included), the papermill and nbconvert parts, and the HTML size. A kernel that only imports
evalkit is timed too, as the floor no report can go under.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import papermill
from traitlets.config import Config

from evalkit.report import report

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 10.0


def _fixtures_module():  # type: ignore[no-untyped-def]
    path = ROOT / "scripts" / "make_report_fixtures.py"
    spec = importlib.util.spec_from_file_location("_make_report_fixtures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _floor_cell() -> str:
    """The import cell of ``benchmarks/report_floor.py`` (the whole-process floor)."""
    path = ROOT / "benchmarks" / "report_floor.py"
    spec = importlib.util.spec_from_file_location("_report_floor", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.FLOOR_CELL)


def _kernel_floor(tmp: Path) -> float:
    """Seconds to start a kernel and import what every report notebook imports."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(_floor_cell())]
    source = tmp / "floor.ipynb"
    nbformat.write(nb, source)
    start = time.perf_counter()
    papermill.execute_notebook(
        str(source),
        str(tmp / "floor.out.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        config=Config({"KernelManager": {"transport": "ipc"}}),  # as evalkit.report does
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2500)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--kinds", default="run,lift,compare,flips")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the run and reports here (kept)")
    args = parser.parse_args()
    fixtures = _fixtures_module()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        run_dir = fixtures.synthesize_large(tmp / "runs", "big", args.cases, args.trials)
        made = time.perf_counter() - start
        items = args.cases * 4 * 2 * args.trials
        size = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file()) / 2**20
        print(f"synthesized {items:,} items in {made:.1f} s ({size:.1f} MiB on disk)")
        floors = [_kernel_floor(tmp) for _ in range(args.repeat)]
        print(f"kernel start + imports: median {statistics.median(floors):.2f} s")
        print()
        print(
            "| kind | items | wall s (median) | wall s (min-max) | execute s | render s "
            "| HTML KiB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        worst = 0.0
        for kind in args.kinds.split(","):
            walls, executes, renders = [], [], []
            html_kib = 0.0
            for index in range(args.repeat):
                output = tmp / "reports" / f"{kind}-{index}.html"
                begin = time.perf_counter()
                result = report(run_dir, kind=kind, output=output)
                walls.append(time.perf_counter() - begin)
                executes.append(result.execute_s)
                renders.append(result.render_s)
                html_kib = result.html_path.stat().st_size / 1024
            median = statistics.median(walls)
            worst = max(worst, median)
            print(
                f"| {kind} | {items:,} | {median:.2f} | {min(walls):.2f}-{max(walls):.2f} | "
                f"{statistics.median(executes):.2f} | {statistics.median(renders):.2f} | "
                f"{html_kib:,.0f} |"
            )
        print()
        verdict = "met" if worst < GOAL_S else "NOT met"
        print(f"goal: every report of {items:,} items in < {GOAL_S:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
