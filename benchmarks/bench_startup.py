"""Start-up cost of the everyday commands, against three baselines measured in the same run.

Usage: python benchmarks/bench_startup.py [--repeat 7] [--report-repeat 2] [--keep DIR]
                                           [--before DIR] [--only WORD ...]

Each command runs as a fresh subprocess (``python -m evalkit ...``, what the console script
does), ``--repeat`` times, the commands interleaved round-robin so a busy machine weighs on
all of them alike; the table gives the median and range of the wall time and its ratio to the
three baselines of the same run, ``python -c pass`` (interpreter start),
``python -c "import pandas"`` and ``python -c "import pandas, scipy.stats"`` (the floor of
``compare``, whose statistics come from scipy and statsmodels). Setup (not timed): the bytecode
of every timed tree is written (as an installed package has it), then two demo
runs of 3 trials, the second with another seed and no cache, so ``compare`` has something to
pair.

``run`` is timed to its first milestones instead of to its end: from the launch of the
process to the ``run_started`` event (imports, suite load, plan, cache look-up, run directory
and lock) and to the first ``item_finished`` event (plus starting the workers and one
instant simulated prompt item). The run report of the demo run is rendered
``--report-repeat`` times (fresh kernel each, as ``evalkit report`` does) with papermill's
execute and nbconvert's render times from ``--json``.

``cases validate`` is timed twice: ``--no-cache`` (every reference check runs its sandboxed
commands) and with the reference-check cache warm (a previous validate of the same suite,
in the benchmark's own runs directory). A tree without the cache (``--before``) runs every
check both times.

Besides wall time, each command's CPU seconds (user + system of the process and its children,
``RUSAGE_CHILDREN``) are recorded: other jobs on a shared machine stretch wall time far more
than CPU time.

``--only WORD ...`` times only the commands whose name holds one of the words (the three
baselines always), e.g. ``--only compare --report-repeat 0`` for the ``compare`` row alone.

``--before DIR`` also times every command with another evalkit source tree first on
``PYTHONPATH`` (e.g. ``git archive main evalkit notebooks templates | tar -x -C DIR``: without
``notebooks`` and ``templates`` beside it, that tree's reports would use the installed copies),
in the same round-robin, so a change is compared under the same load.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "cases" / "demo"
#: Commands run from here, not from a source tree: ``python -m`` puts the working directory
#: first on ``sys.path``, ahead of ``PYTHONPATH``.
NEUTRAL_CWD = Path(tempfile.gettempdir())
#: Targets: seconds, or a multiple of ``python -c pass``.
TARGETS: dict[str, str] = {
    "evalkit --version": "10x `python -c pass`",
    "evalkit --help": "10x `python -c pass`",
    "evalkit cases list cases/demo": "< 1 s",
    "evalkit cases validate cases/demo (--no-cache)": "< 1 s",
    "evalkit cases validate cases/demo (cache warm)": "< 1 s",
    "evalkit compare A B (demo runs)": "< 1.5 s",
    "evalkit run: launch to run_started": "< 1.5 s",
    "evalkit run: launch to first item finished": "",
}


#: What :func:`_run_milestones` measures, in its order.
MILESTONES = ("evalkit run: launch to run_started", "evalkit run: launch to first item finished")
#: The third baseline: what ``compare`` cannot start faster than (its statistics libraries).
FLOOR = 'python -c "import pandas, scipy.stats"'


def _env(code: Path = ROOT) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code)}


#: CPU seconds (user + system, children included) of each timed command, by name.
CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], code: Path = ROOT, cpu_key: str = "") -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(argv, cwd=NEUTRAL_CWD, env=_env(code), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if cpu_key:
        CPU.setdefault(cpu_key, []).append(_children_cpu() - cpu)
    return wall


def _evalkit(*argv: str) -> list[str]:
    return [sys.executable, "-m", "evalkit", *argv]


def _run_milestones(runs: Path, run_id: str, code: Path = ROOT) -> tuple[float, float]:
    """Seconds from launching ``evalkit run`` to ``run_started`` and to the first item."""
    launched = time.time()
    subprocess.run(
        _evalkit("run", str(DEMO), "--lane", "prompt", "--trials", "1", "--no-cache",
                 "--no-progress", "--run-id", run_id, "--runs-dir", str(runs)),
        cwd=NEUTRAL_CWD, env=_env(code), check=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    events = [json.loads(line) for line in (runs / run_id / "events.jsonl").open()]
    started = next(e["ts"] for e in events if e["event"] == "run_started")
    first = min(e["ts"] for e in events if e["event"] == "item_finished")
    return started - launched, first - launched


def _compile(*trees: Path) -> None:
    """Write the bytecode of each timed tree first, as an installed package has it.

    With ``PYTHONDONTWRITEBYTECODE`` set (as some shells and CI images do), an editable or
    ``--before`` tree would otherwise be compiled from source in every timed process.
    """
    for tree in trees:
        compileall.compile_dir(tree / "evalkit", quiet=1)


def _setup(runs: Path) -> None:
    for run_id, extra in (("a", []), ("b", ["--seed", "7", "--no-cache"])):
        subprocess.run(
            _evalkit("run", str(DEMO), "--trials", "3", "--run-id", run_id, "--runs-dir",
                     str(runs), "--no-progress", "--json", *extra),
            cwd=NEUTRAL_CWD, env=_env(), check=True, stdout=subprocess.DEVNULL,
        )


def _row(
    name: str, times: list[float], baselines: tuple[float, float, float], before: list[float]
) -> str:
    base, pandas, floor = baselines
    median = statistics.median(times)
    was = ""
    if before:
        was = f"{statistics.median(before):.3f} ({statistics.median(before) / floor:.2f}x)"
    return (
        f"| {name} | {median:.3f} | {min(times):.3f}–{max(times):.3f} | {median / base:.1f}x | "
        f"{median / pandas:.2f}x | {median / floor:.2f}x | {TARGETS.get(name, '')} | {was} |"
    )


def _commands(runs: Path, code: Path, tag: str = "") -> dict[str, Callable[[], float]]:
    """The timed commands of one source tree (``tag`` names the tree in :data:`CPU`)."""
    validate = _evalkit("cases", "validate", str(DEMO))
    cached = [] if tag else ["--runs-dir", str(runs)]  # an older tree has no cache options
    argv = {
        "evalkit --version": _evalkit("--version"),
        "evalkit --help": _evalkit("--help"),
        "evalkit cases list cases/demo": _evalkit("cases", "list", str(DEMO)),
        "evalkit cases validate cases/demo (--no-cache)": [
            *validate, *cached, *(["--no-cache"] if cached else [])
        ],
        "evalkit cases validate cases/demo (cache warm)": [*validate, *cached],
        "evalkit compare A B (demo runs)": _evalkit("compare", "a", "b", "--runs-dir", str(runs)),
    }

    def timer(name: str, words: list[str]) -> Callable[[], float]:
        return lambda: _timed(words, code, tag + name)

    return {name: timer(name, words) for name, words in argv.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--report-repeat", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write the runs and reports here (kept)")
    parser.add_argument("--before", type=Path, help="an older evalkit source tree to compare")
    parser.add_argument("--only", nargs="+", metavar="WORD",
                        help="time only the commands whose name holds one of these words")
    args = parser.parse_args()

    def wanted(name: str) -> bool:
        return not args.only or any(word in name for word in args.only)

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        runs = tmp / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        _compile(ROOT, *([args.before] if args.before else []))
        _setup(runs)
        if wanted("evalkit cases validate cases/demo (cache warm)"):
            subprocess.run(  # fills the reference-check cache of the "cache warm" row
                _evalkit("cases", "validate", str(DEMO), "--runs-dir", str(runs)),
                cwd=NEUTRAL_CWD, env=_env(), check=True, stdout=subprocess.DEVNULL,
            )
        commands: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: _timed([sys.executable, "-c", "pass"], cpu_key="pass"),
            'python -c "import pandas"': lambda: _timed(
                [sys.executable, "-c", "import pandas"], cpu_key="pandas"
            ),
            FLOOR: lambda: _timed(
                [sys.executable, "-c", "import pandas, scipy.stats"], cpu_key="pandas, scipy"
            ),
            **{k: v for k, v in _commands(runs, ROOT).items() if wanted(k)},
        }
        older = _commands(runs, args.before, "before: ") if args.before else {}
        milestones = tuple(name for name in MILESTONES if wanted(name))
        times: dict[str, list[float]] = {name: [] for name in [*commands, *milestones]}
        before: dict[str, list[float]] = {name: [] for name in times}
        load_before = os.getloadavg()
        for i in range(args.repeat):
            for name, command in commands.items():
                times[name].append(command())
                if name in older:
                    before[name].append(older[name]())
            if not milestones:
                continue
            for name, value in zip(MILESTONES, _run_milestones(runs, f"fixed-{i}"), strict=True):
                if name in milestones:
                    times[name].append(value)
            if args.before:
                was = _run_milestones(runs, f"before-{i}", args.before)
                for name, value in zip(MILESTONES, was, strict=True):
                    if name in milestones:
                        before[name].append(value)
        reports = []
        for i in range(args.report_repeat):
            start = time.perf_counter()
            out = subprocess.run(
                _evalkit("report", "a", "--runs-dir", str(runs), "-o",
                         str(tmp / f"run-{i}.html"), "--json"),
                cwd=NEUTRAL_CWD, env=_env(), check=True, capture_output=True, text=True,
            )
            data = json.loads(out.stdout)
            reports.append((time.perf_counter() - start, data["execute_s"], data["render_s"]))
        load_after = os.getloadavg()

    baselines = (
        statistics.median(times["python -c pass"]),
        statistics.median(times['python -c "import pandas"']),
        statistics.median(times[FLOOR]),
    )
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; median of {args.repeat}")
    print()
    print("| command | median s | range s | vs `python -c pass` | vs `import pandas` | vs "
          "`import pandas, scipy.stats` | target | before, median s (vs that floor) |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for name, values in times.items():
        print(_row(name, values, baselines, before[name]))
    print()
    print("| run report of the demo run (--kind run) | wall s | papermill execute s | "
          "nbconvert render s |")
    print("|---|---:|---:|---:|")
    for n, (wall, execute, render) in enumerate(reports, start=1):
        print(f"| render {n} | {wall:.2f} | {execute:.2f} | {render:.2f} |")
    print()
    print("| command | CPU s, median | before: CPU s, median |")
    print("|---|---:|---:|")
    for key, values in CPU.items():
        if not key.startswith("before: "):
            older_cpu = CPU.get(f"before: {key}")
            before_cpu = f"{statistics.median(older_cpu):.2f}" if older_cpu else ""
            print(f"| {key} | {statistics.median(values):.2f} | {before_cpu} |")


if __name__ == "__main__":
    main()
