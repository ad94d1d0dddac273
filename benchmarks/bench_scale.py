"""Scale benchmarks of the runner.

Usage:
    python benchmarks/bench_scale.py cache    [--items 10000]   # cache-hit rerun
    python benchmarks/bench_scale.py backends [--items 100000]  # loky vs 2-worker dask LocalCluster
    python benchmarks/bench_scale.py io       [--items 2000 --latency 0.1 --concurrency 64]
    python benchmarks/bench_scale.py one      [--items 100000]  # one loky run (/usr/bin/time -v)
    python benchmarks/bench_scale.py memory   [--items 100000]  # judged prompt lane, peak RSS
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import write_suite  # noqa: E402

from evalkit.runner import RunConfig, RunResult, run  # noqa: E402

TRIALS = 5


def _suite(tmp: Path, items: int) -> Path:
    return write_suite(tmp / "suite", max(1, items // (4 * TRIALS)))


def _timed(suite: Path, **kw: object) -> tuple[RunResult, float]:
    config = RunConfig(trials=TRIALS, progress=False, **kw)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    result = run(suite, config)
    return result, time.perf_counter() - t0


def bench_cache(items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = _suite(Path(tmp), items)
        runs = Path(tmp) / "runs"
        first, cold = _timed(suite, runs_dir=runs)
        second, warm = _timed(suite, runs_dir=runs)
    print(
        f"items {first.items}: cold run {cold:.2f} s; cache-hit rerun {warm:.2f} s "
        f"({second.cache_hits} hits, {second.items - second.cache_hits} provider calls); "
        f"ratio cold/warm {cold / warm:.1f}x"
    )


def bench_backends(items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = _suite(Path(tmp), items)
        runs = Path(tmp) / "runs"
        loky, t_loky = _timed(suite, runs_dir=runs, use_cache=False, concurrency=2)
        dask, t_dask = _timed(suite, runs_dir=runs, use_cache=False, concurrency=2, backend="dask")
    for name, result, wall in (("loky", loky, t_loky), ("dask LocalCluster(2)", dask, t_dask)):
        per_item = wall / result.items * 1e3
        print(f"{name:>22}: {result.items} items in {wall:.1f} s = {per_item:.3f} ms/item")
    print(f"dask/loky wall ratio: {t_dask / t_loky:.2f}")


def bench_io(items: int, latency: float, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = _suite(Path(tmp), items)
        result, wall = _timed(
            suite,
            runs_dir=Path(tmp) / "runs",
            use_cache=False,
            concurrency=concurrency,
            backend="threading",
            provider_options={"latency_s": latency},
        )
    ideal = result.items * latency / concurrency
    print(
        f"{result.items} items x {latency} s at concurrency {concurrency} (threading): "
        f"wall {wall:.2f} s, ideal {ideal:.2f} s, efficiency {ideal / wall:.1%}"
    )


def bench_one(items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = _suite(Path(tmp), items)
        result, wall = _timed(suite, runs_dir=Path(tmp) / "runs", use_cache=False, concurrency=2)
    print(f"{result.items} items in {wall:.1f} s ({wall / result.items * 1e3:.3f} ms/item)")


def bench_memory(items: int) -> None:
    """Peak RSS of ``evalkit run cases/demo --lane prompt`` (its simulated judge included).

    ``/usr/bin/time -v`` reports the largest resident set of the run's processes. The demo's
    prompt lane is 28 cases x 4 conditions, so ``items`` is rounded up to whole trials.
    """
    root = Path(__file__).resolve().parent.parent
    trials = -(-items // (28 * 4))
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["/usr/bin/time", "-v", sys.executable, "-m", "evalkit", "run",
             str(root / "cases" / "demo"), "--lane", "prompt", "--trials", str(trials),
             "--concurrency", "2", "--no-cache", "--no-progress", "--runs-dir", tmp],
            capture_output=True, text=True, cwd=root, check=True,
        )
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    assert peak is not None and wall is not None, done.stderr[-2000:]
    mb = int(peak.group(1)) / 1024
    print(f"{28 * 4 * trials} judged prompt items: peak RSS {mb:.0f} MB, wall {wall.group(1)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("what", choices=["cache", "backends", "io", "one", "memory"])
    parser.add_argument("--items", type=int)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    if args.what == "cache":
        bench_cache(args.items or 10_000)
    elif args.what == "backends":
        bench_backends(args.items or 100_000)
    elif args.what == "io":
        bench_io(args.items or 2_000, args.latency, args.concurrency)
    elif args.what == "memory":
        bench_memory(args.items or 100_000)
    else:
        bench_one(args.items or 100_000)


if __name__ == "__main__":
    main()
