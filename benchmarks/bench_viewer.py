"""``evalkit view`` on a 100,000-item run: how long each page takes once the run is loaded.

Usage: python benchmarks/bench_viewer.py [--cases 2500] [--trials 5] [--repeat 5] [--keep DIR]

The run is synthesized like the report benchmark's (``scripts/make_report_fixtures.py``:
2,500 cases x 4 conditions x 2 providers x 5 trials = 100,000 items, with transcripts and
scores). A real :class:`evalkit.viewer.ViewServer` on 127.0.0.1 is asked over HTTP (httpx) for
the index, the run page, a comparison of two conditions (page and JSON) and a case's flip
forensics. The first request of the run page reads the run (the load); the table gives that,
then the median and the slowest of ``--repeat`` later requests of each page. The baseline is
the static report of the same run (``evalkit report``, a fresh kernel each time), measured by
``benchmarks/bench_report.py``; the goal of a viewer page is 2 s once the run is loaded.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from evalkit.viewer import ViewServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import _fixtures_module  # noqa: E402  (the same loader of the synthesizer)

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 2.0


def _timed(client: httpx.Client, path: str) -> tuple[float, int, int]:
    start = time.perf_counter()
    answer = client.get(path)
    return time.perf_counter() - start, answer.status_code, len(answer.content)


def main() -> None:
    """Build the run, serve it, time the pages, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2500)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the run here and keep it")
    args = parser.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="evalkit-bench-view-"))
    fixtures = _fixtures_module()  # the report benchmark's synthesizer of large runs
    run_dir = tmp / "runs" / "big"
    if not run_dir.is_dir():
        run_dir = fixtures.synthesize_large(tmp / "runs", "big", args.cases, args.trials)
    import evalkit

    rows = evalkit.read_run(run_dir)
    conditions = sorted(rows["condition"].unique())
    case = str(rows["case_id"].iloc[0])
    server = ViewServer(run_dir.parent).start()
    client = httpx.Client(base_url=f"http://127.0.0.1:{server.port}",
                          cookies={server.cookie_name: server.token}, timeout=600)
    pages = {
        "index (/api/runs)": "/api/runs",
        "run page": "/run/big",
        f"compare {conditions[0]} vs {conditions[-1]} (page)":
            f"/compare?run=big&a={conditions[0]}&b={conditions[-1]}",
        "compare (JSON, = compare --json)":
            f"/api/compare?run=big&a={conditions[0]}&b={conditions[-1]}",
        "why a case flips": f"/explain?run=big&case={case}",
    }
    print(f"{len(rows):,} items in {run_dir}")
    load, status, size = _timed(client, "/run/big")
    print(f"\nfirst run page (reads the run): {load:.2f} s, {size / 1e6:.1f} MB, HTTP {status}\n")
    print("| page | first ask | median | slowest | size | within 2 s |")
    print("|---|---:|---:|---:|---:|---|")
    first = {}
    for label, path in pages.items():
        first[label] = _timed(client, path)[0]  # the first ask computes (a comparison: as long
        # as evalkit compare); the viewer keeps the result until the run's files change
    for label, path in pages.items():
        times = []
        for _ in range(args.repeat):
            seconds, status, size = _timed(client, path)
            if status != 200:
                raise SystemExit(f"{path}: HTTP {status}")
            times.append(seconds)
        median = statistics.median(times)
        print(f"| {label} | {first[label]:.2f} s | {median:.2f} s | {max(times):.2f} s | "
              f"{size / 1e3:,.0f} kB | "
              f"{'yes' if max(times) <= GOAL_S else 'no'} |")
    server.stop()
    start = time.perf_counter()
    from evalkit.report import report

    report(run_dir, kind="run", output=tmp / "run.html")
    static = time.perf_counter() - start
    print(f"\nbaseline, the static run report of the same run (evalkit report, a fresh kernel): "
          f"{static:.1f} s; the viewer's run page once loaded: {load:.2f} s for the first, "
          "then the median above")


if __name__ == "__main__":
    main()
