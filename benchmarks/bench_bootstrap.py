"""Paired cluster bootstrap: 1,000 cases x 5 trials x 10,000 resamples.

Run: ``.venv/bin/python benchmarks/bench_bootstrap.py``

Times evalkit's paired bootstrap of the mean per-case delta (default: cases resampled, trials
kept; and the optional two-stage scheme that also resamples trials, with trials lined up and
not) against ``scipy.stats.bootstrap`` on the same per-case deltas with the same number of
resamples. scipy's bootstrap is one-stage (it resamples the 1,000 per-case deltas), which is
the same resampling as evalkit's default; it cannot express the two-stage scheme. Each timing
is the median of several runs after one warm-up run; the data are Miller's model (case
difficulty ~ Beta(2, 2), +10 pp effect).
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.stats import CompareOptions, paired_bootstrap_delta, paired_compare
from evalkit.stats._simulate import simulate_arms

CASES, TRIALS, RESAMPLES, REPEATS = 1_000, 5, 10_000, 7
GOAL_S = 0.5


def timed(function: Callable[[], object], repeats: int = REPEATS) -> float:
    """Median wall time of ``function`` over ``repeats`` runs, after one warm-up run."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    """Run the benchmark and print a table."""
    base, cand = simulate_arms(np.random.default_rng(0), CASES, TRIALS, 0.10, 0.5, 4.0)
    deltas = cand.mean(axis=1) - base.mean(axis=1)
    unaligned_base = np.hstack([base, np.full_like(base, np.nan)])
    unaligned_cand = np.hstack([np.full_like(cand, np.nan), cand])
    ids = np.repeat([f"c{i:04d}" for i in range(CASES)], TRIALS)
    trial = np.tile(np.arange(TRIALS), CASES)
    frame_b = pd.DataFrame(
        {"case_id": ids, "condition": "x", "trial": trial, "passed": base.ravel() > 0}
    )
    frame_c = frame_b.assign(passed=cand.ravel() > 0)

    runs: list[tuple[str, Callable[[], object]]] = [
        (
            "evalkit paired_bootstrap_delta (cases; default)",
            lambda: paired_bootstrap_delta(base, cand, n_resamples=RESAMPLES, seed=0),
        ),
        (
            "evalkit two-stage, trials lined up (joint)",
            lambda: paired_bootstrap_delta(
                base, cand, n_resamples=RESAMPLES, seed=0, resample_trials=True
            ),
        ),
        (
            "evalkit two-stage, trials not lined up",
            lambda: paired_bootstrap_delta(
                unaligned_base, unaligned_cand, n_resamples=RESAMPLES, seed=0, resample_trials=True
            ),
        ),
        (
            "evalkit paired_compare (tidy frames, end to end)",
            lambda: paired_compare(frame_b, frame_c,
                                   options=CompareOptions(n_resamples=RESAMPLES, seed=0)),
        ),
        (
            "scipy.stats.bootstrap percentile (one-stage)",
            lambda: stats.bootstrap(
                (deltas,),
                np.mean,
                n_resamples=RESAMPLES,
                method="percentile",
                vectorized=True,
                rng=np.random.default_rng(0),
            ),
        ),
        (
            "scipy.stats.bootstrap BCa (one-stage)",
            lambda: stats.bootstrap(
                (deltas,),
                np.mean,
                n_resamples=RESAMPLES,
                method="BCa",
                vectorized=True,
                rng=np.random.default_rng(0),
            ),
        ),
    ]
    print(
        f"{CASES} cases x {TRIALS} trials x {RESAMPLES} resamples; python "
        f"{platform.python_version()}, numpy {np.__version__}, scipy "
        f"{sys.modules['scipy'].__version__}, {os.cpu_count()} cores; median of {REPEATS}"
    )
    results = {name: timed(run) for name, run in runs}
    baseline = results["scipy.stats.bootstrap percentile (one-stage)"]
    width = max(len(name) for name in results)
    print(f"{'what':<{width}}  {'seconds':>8}  {'scipy pct / this':>16}")
    for name, seconds in results.items():
        print(f"{name:<{width}}  {seconds:8.3f}  {baseline / seconds:15.2f}x")
    default = results["evalkit paired_bootstrap_delta (cases; default)"]
    status = "met" if default < GOAL_S else "NOT met"
    print(f"goal: default paired bootstrap < {GOAL_S} s: {status} ({default:.3f} s)")
    interval = paired_bootstrap_delta(base, cand, n_resamples=RESAMPLES, seed=0)
    reference = stats.bootstrap(
        (deltas,), np.mean, n_resamples=RESAMPLES, method="percentile", rng=np.random.default_rng(0)
    ).confidence_interval
    print(
        f"delta {interval.estimate:.4f}: evalkit [{interval.ci_low:.4f}, {interval.ci_high:.4f}] "
        f"(expanded percentile), scipy [{reference.low:.4f}, {reference.high:.4f}] (percentile)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
