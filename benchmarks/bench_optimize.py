"""Serial vs --parallel N optimisation on the same budget (quality and wall time).

Usage: python benchmarks/bench_optimize.py

Two objectives, each run with the same iteration budget at N = 1 and N > 1:
- the monotone probe (deterministic; each accepted edit enables the next), optimizer latency
  0.3 s per proposal;
- the 8-topic suite with the simulated agent and a scripted optimizer (noisy evaluations).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit.optimize import OptimizeConfig, optimize  # noqa: E402
from tests.optimize.probes import write_monotone_suite, write_topic_suite  # noqa: E402

PROBES = "tests.optimize.probes"


def _run(suite: Path, runs: Path, run_id: str, **kw: object) -> tuple[dict[str, object], float]:
    config = OptimizeConfig(runs_dir=runs, run_id=run_id, n_resamples=1000, **kw)  # type: ignore[call-arg]
    t0 = time.perf_counter()
    result = optimize(suite, config)
    return result.state, time.perf_counter() - t0


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mono = write_monotone_suite(base / "mono")
        slow = "command:sleep 0.3; echo '[X]' >> SKILL.md"
        for n in (1, 6):
            state, wall = _run(
                mono,
                base / "runs",
                f"mono{n}",
                skill="probe",
                optimizer=slow,
                trials=1,
                max_iterations=6,
                stall=None,
                parallel=n,
                backend="threading",
            )
            rows.append(("monotone probe", n, state, wall))
        topics = write_topic_suite(base / "topics")
        for n in (1, 3):
            state, wall = _run(
                topics,
                base / "runs",
                f"topics{n}",
                skill="guide",
                optimizer=f"python:{PROBES}:learn_topics",
                trials=2,
                max_iterations=6,
                stall=None,
                parallel=n,
                provider_options={"spread": "1.0"},
            )
            rows.append(("8 topics, simulated", n, state, wall))
    print(f"{'objective':<22}{'N':>3}{'accepted':>10}{'val':>7}{'test delta':>12}{'wall s':>8}")
    for name, n, state, wall in rows:
        accepted = sum(h["accepted"] for h in state["history"])  # type: ignore[union-attr]
        test = state["test"]
        print(
            f"{name:<22}{n:>3}{accepted:>10}{state['champion_val_rate']:>7.3f}"
            f"{test['delta']:>+12.3f}{wall:>8.1f}"
        )  # type: ignore[index]


if __name__ == "__main__":
    main()
