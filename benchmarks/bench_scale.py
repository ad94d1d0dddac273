"""Scale benchmarks of the runner.

Usage:
    python benchmarks/bench_scale.py cache    [--items 10000]   # cache-hit rerun
    python benchmarks/bench_scale.py backends [--items 100000]  # loky vs 2-worker dask LocalCluster
    python benchmarks/bench_scale.py io       [--items 2000 --latency 0.1 --concurrency 64]
    python benchmarks/bench_scale.py one      [--items 100000]  # one loky run (/usr/bin/time -v)
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("what", choices=["cache", "backends", "io", "one"])
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
    else:
        bench_one(args.items or 100_000)


if __name__ == "__main__":
    main()
