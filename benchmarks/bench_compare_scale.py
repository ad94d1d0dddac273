"""``evalkit compare`` of large two-provider runs, against its import floor measured alongside.

Usage: python benchmarks/bench_compare_scale.py [--cases 1000,2500,10000] [--repeat 5]
                                                 [--before DIR] [--before-timeout 1200]
                                                 [--viewer] [--keep DIR]

The runs are the report benchmark's synthesized ones (``scripts/make_report_fixtures.py``,
``synthesize_large``: N cases x 4 conditions x 2 providers x 5 trials; 2,500 cases are
100,000 items), written once (``--keep DIR`` keeps them for the next invocation). Each round
times, as fresh subprocesses under ``/usr/bin/time -v`` and one after the other, the floor
``python -c "import pandas, scipy.stats"`` and then ``python -m evalkit compare RUN
--conditions none,stale --json`` (the viewer's first comparison: the first and the last
condition) at each size, so that a busy machine weighs on the floor and on compare alike.
The table gives, per size, the median over rounds of compare's wall time divided by that
round's floor, the median wall time, and the largest peak RSS.

``--before DIR`` times another evalkit source tree too (first on ``PYTHONPATH``, e.g. ``git
worktree add --detach DIR COMMIT``) in the same rounds. A run of that tree that exceeds
``--before-timeout`` seconds is stopped, reported as ``> T s``, and not run again at that size.
The heterogeneity F statistic and p-value of the two trees' JSON are compared and their
largest relative difference printed.

``--viewer`` also times, in each round and for each tree, the first ``/api/compare`` of the
same comparison on the 2,500-case run: a fresh process starts a real
:class:`evalkit.viewer.ViewServer` on 127.0.0.1 and asks it over HTTP (the seconds of that
one request: the comparison is computed on the first ask and kept afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import _fixtures_module  # noqa: E402  (the synthesizer of large runs)

ROOT = Path(__file__).resolve().parent.parent
#: Commands run from here, not from a source tree (``python -m`` puts the working directory
#: first on ``sys.path``, ahead of ``PYTHONPATH``).
NEUTRAL_CWD = Path(tempfile.gettempdir())
CONDITIONS = ("none", "stale")
FLOOR = 'python -c "import pandas, scipy.stats"'
GOAL_RATIO = 3.0
GOAL_RSS_MB = 1024.0
VIEWER_CASES = 2500

#: Started in a fresh process: a viewer of RUNS, the seconds of its first /api/compare.
VIEWER_SNIPPET = """
import sys, time, httpx
from evalkit.viewer import ViewServer
server = ViewServer(sys.argv[1]).start()
client = httpx.Client(base_url=f"http://127.0.0.1:{server.port}",
                      cookies={server.cookie_name: server.token}, timeout=3600)
start = time.perf_counter()
answer = client.get(f"/api/compare?run=big&a={sys.argv[2]}&b={sys.argv[3]}")
seconds = time.perf_counter() - start
server.stop()
assert answer.status_code == 200, answer.status_code
print(seconds)
"""


@dataclass
class Samples:
    """Wall seconds, ratios to the round's floor, and peak RSS (MB) of one timed command."""

    walls: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    timed_out: float = 0.0

    def row(self) -> str:
        if self.timed_out and not self.walls:
            return f"> {self.timed_out:.0f} s (stopped) | > {self.timed_out:.0f} s | |"
        ratio = statistics.median(self.ratios)
        return (f"**{ratio:.2f}x** ({min(self.ratios):.2f}-{max(self.ratios):.2f}) | "
                f"{statistics.median(self.walls):.2f} s | {max(self.rss):,.0f} MB")


def _env(code: Path | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code or ROOT)}


def _time_v(argv: list[str], code: Path | None, timeout: float | None = None,
            stdout: Path | None = None) -> tuple[float, float] | None:
    """Wall seconds and peak RSS (MB) of ``argv`` under ``/usr/bin/time -v`` (None: timeout)."""
    with tempfile.NamedTemporaryFile("w+", suffix=".time") as report:
        out = stdout.open("w") if stdout else subprocess.DEVNULL
        start = time.perf_counter()
        try:
            subprocess.run(["/usr/bin/time", "-v", "-o", report.name, *argv], cwd=NEUTRAL_CWD,
                           env=_env(code), check=True, stdout=out,
                           stderr=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if stdout:
                out.close()  # type: ignore[union-attr]
        wall = time.perf_counter() - start
        text = Path(report.name).read_text()
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    assert peak is not None, text
    return wall, int(peak.group(1)) / 1024


def _floor() -> tuple[float, float]:
    timed = _time_v([sys.executable, "-c", "import pandas, scipy.stats"], None)
    assert timed is not None
    return timed


def _compare(run_dir: Path, code: Path | None, timeout: float | None,
             out: Path) -> tuple[float, float] | None:
    argv = [sys.executable, "-m", "evalkit", "compare", str(run_dir), "--conditions",
            ",".join(CONDITIONS), "--json"]
    return _time_v(argv, code, timeout, stdout=out)


def _viewer(runs_dir: Path, code: Path | None) -> float:
    done = subprocess.run(
        [sys.executable, "-c", VIEWER_SNIPPET, str(runs_dir), *CONDITIONS], cwd=NEUTRAL_CWD,
        env=_env(code), check=True, capture_output=True, text=True,
    )
    return float(done.stdout.split()[-1])


def _heterogeneity_gap(after: Path, before: Path) -> float:
    """Largest relative difference of the two trees' interaction F and p."""
    spread = [json.loads(p.read_text())["heterogeneity"]["interaction"] for p in (after, before)]
    return max(abs(spread[0][k] - spread[1][k]) / abs(spread[1][k])
               for k in ("f_statistic", "pvalue"))


def main() -> None:
    """Write the runs, time the rounds, print the Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="1000,2500,10000")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an older evalkit source tree to compare")
    parser.add_argument("--before-timeout", type=float, default=1200.0)
    parser.add_argument("--viewer", action="store_true", help="time the viewer's first compare")
    parser.add_argument("--keep", type=Path, help="write the runs here and reuse them")
    args = parser.parse_args()
    sizes = [int(n) for n in args.cases.split(",")]
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="evalkit-bench-compare-"))
    fixtures = _fixtures_module()
    runs = {}
    for n in sizes + ([VIEWER_CASES] if args.viewer else []):
        run_dir = tmp / f"runs-{n}" / "big"
        if not (run_dir / "results.parquet").is_file():
            fixtures.synthesize_large(run_dir.parent, "big", n, args.trials)
        runs[n] = run_dir
    trees: dict[str, Path | None] = {"this tree": None}
    if args.before:
        trees["before"] = args.before.resolve()
    floor = Samples()
    timed = {(tree, n): Samples() for tree in trees for n in sizes}
    viewer = {tree: Samples() for tree in trees}
    gaps: dict[int, float] = {}
    load = os.getloadavg()[0]
    for round_ in range(args.repeat):
        wall, rss = _floor()
        floor.walls.append(wall)
        floor.ratios.append(1.0)
        floor.rss.append(rss)
        for n in sizes:
            for tree, code in trees.items():
                samples = timed[(tree, n)]
                if samples.timed_out:
                    continue
                out = tmp / f"compare-{n}-{tree.replace(' ', '-')}.json"
                limit = args.before_timeout if code is not None else None
                result = _compare(runs[n], code, limit, out)
                if result is None:
                    samples.timed_out = args.before_timeout
                    continue
                samples.walls.append(result[0])
                samples.ratios.append(result[0] / wall)
                samples.rss.append(result[1])
            if args.before and timed[("before", n)].walls and n not in gaps:
                gaps[n] = _heterogeneity_gap(tmp / f"compare-{n}-this-tree.json",
                                             tmp / f"compare-{n}-before.json")
        if args.viewer:
            for tree, code in trees.items():
                seconds = _viewer(runs[VIEWER_CASES].parent, code)
                viewer[tree].walls.append(seconds)
                viewer[tree].ratios.append(seconds / wall)
                viewer[tree].rss.append(0.0)
        print(f"round {round_ + 1}/{args.repeat} done (floor {wall:.2f} s)", file=sys.stderr)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load:.1f} "
          f"at the start and {os.getloadavg()[0]:.1f} at the end; {args.repeat} rounds; "
          f"compare {CONDITIONS[1]} vs {CONDITIONS[0]} (--json)\n")
    print(f"floor `{FLOOR}`: median {statistics.median(floor.walls):.2f} s "
          f"({min(floor.walls):.2f}-{max(floor.walls):.2f}), peak RSS {max(floor.rss):.0f} MB\n")
    header = "| cases (items) | tree | vs floor, median (range) | wall, median | peak RSS |"
    print(header)
    print("|---|---|---:|---:|---:|")
    for n in sizes:
        for tree in trees:
            print(f"| {n:,} ({n * 4 * 2 * args.trials:,}) | {tree} | {timed[(tree, n)].row()} |")
    for n, gap in gaps.items():
        print(f"\n{n:,} cases: interaction F and p of the two trees agree to {gap:.1e} (relative)")
    goal = timed[("this tree", VIEWER_CASES)] if VIEWER_CASES in sizes else None
    if goal and goal.walls:
        met = statistics.median(goal.ratios) <= GOAL_RATIO and max(goal.rss) < GOAL_RSS_MB
        print(f"\ngoal at {VIEWER_CASES:,} cases (<= {GOAL_RATIO:.0f}x the floor, peak "
              f"< {GOAL_RSS_MB:.0f} MB): {'met' if met else 'not met'}")
    if args.viewer:
        print("\n| viewer, first /api/compare (2,500 cases) | seconds, median (range) | "
              "vs floor, median |")
        print("|---|---:|---:|")
        for tree, samples in viewer.items():
            print(f"| {tree} | {statistics.median(samples.walls):.2f} "
                  f"({min(samples.walls):.2f}-{max(samples.walls):.2f}) | "
                  f"{statistics.median(samples.ratios):.2f}x |")


if __name__ == "__main__":
    main()
