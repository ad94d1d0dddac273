"""Every flag of ``compare``, ``lift``, ``flips``, ``power`` and ``gate``, once, on a demo run.

The flags are read from the commands' own parsers, so a flag added without a line here (and
without a mention in docs/statistics.md's flag table) fails :func:`test_every_flag_is_run_and_
documented`. Each flag then runs once through the real command line (parser and handler) on
two small simulated runs shared by the module: exit 0 (or the exit the command documents for
what it found), never a traceback. ``compare --metric score``, which once exited 2 on every
run, runs as its own ``python -m evalkit`` process too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import DEMO, ROOT, CliResult, evalkit_cli, evalkit_process

COMMANDS = ("compare", "lift", "flips", "power", "gate")
FAST = ("--resamples", "200")
PAIRWISE = ("compare", "base", "cand", "--pairwise", *FAST)
SEQUENTIAL = ("compare", "base", "--conditions", "none,preloaded", "--sequential")
POWER = ("power", "--trials", "3", "--effect", "0.1")
SIM_POWER = (*POWER, "--sequential", "--max-cases", "30", "--round-cases", "10")
GATE = ("gate", "--baseline", "base", "--candidate", "cand")
GATE_BLOCKS = (0, 1)  # released or blocked: both are answers, 2 is bad input

#: command -> flag -> (argv without --runs-dir, exits it may end with). {policy}, {ledger}
#: and {rubric} are files of the fixture.
RUNS: dict[str, dict[str, tuple[tuple[str, ...], tuple[int, ...]]]] = {
    "compare": {
        "--conditions": (("compare", "base", "--conditions", "none,preloaded", *FAST), (0,)),
        "--metric": (("compare", "base", "cand", "--metric", "score", *FAST), (0,)),
        "--threshold": (("compare", "base", "cand", "--threshold", "0.1", *FAST), (0,)),
        "--correction": (("compare", "base", "cand", "--correction", "fdr_bh", *FAST), (0,)),
        "--case-correction": (("compare", "base", "cand", "--case-correction", "holm",
                               *FAST), (0,)),
        "--resamples": (("compare", "base", "cand", "--resamples", "300"), (0,)),
        "--seed": (("compare", "base", "cand", "--seed", "7", *FAST), (0,)),
        "--fail-on-regression": (("compare", "base", "cand", "--fail-on-regression", *FAST),
                                 (0, 1)),
        "--sequential": (SEQUENTIAL, (0,)),
        "--round-cases": ((*SEQUENTIAL, "--round-cases", "3"), (0,)),
        "--plan-cases": ((*SEQUENTIAL, "--plan-cases", "20"), (0,)),
        "--plan-effect": ((*SEQUENTIAL, "--plan-effect", "0.2"), (0,)),
        "--futility-beta": ((*SEQUENTIAL, "--plan-effect", "0.2", "--futility-beta", "0.2"),
                            (0,)),
        "--provider": (("compare", "base", "cand", "--provider", "simulated", *FAST), (0,)),
        "--pairwise": (PAIRWISE, (0,)),
        "--rubric": ((*PAIRWISE, "--rubric", "{rubric}"), (0,)),
        "--transcripts": ((*PAIRWISE, "--transcripts"), (0,)),
        "--no-cache": ((*PAIRWISE, "--no-cache"), (0,)),
        "--concurrency": ((*PAIRWISE, "--concurrency", "1"), (0,)),
        "--judge-provider": ((*PAIRWISE, "--judge-provider", "simulated"), (0,)),
        "--judge-model": ((*PAIRWISE, "--judge-model", "sim-flags"), (0,)),
        "--judge-opt": ((*PAIRWISE, "--judge-opt", "error_rate=0.1"), (0,)),
        "--suite": ((*PAIRWISE, "--suite", str(DEMO)), (0,)),
        "--runs-dir": (("compare", "base", "cand", *FAST), (0,)),
        "--json": (("compare", "base", "cand", "--json", *FAST), (0,)),
    },
    "lift": {
        "--resamples": (("lift", "base", "--resamples", "200"), (0,)),
        "--seed": (("lift", "base", "--seed", "3", *FAST), (0,)),
        "--roles": (("lift", "base", "--roles", "none=A,self-load=B,preloaded=C,stale=D", *FAST),
                    (0,)),
        "--provider": (("lift", "base", "--provider", "simulated", *FAST), (0,)),
        "--runs-dir": (("lift", "base", *FAST), (0,)),
        "--json": (("lift", "base", "--json", *FAST), (0,)),
    },
    "flips": {
        "--top": (("flips", "base", "cand", "--top", "3"), (0,)),
        "--provider": (("flips", "base", "--provider", "simulated"), (0,)),
        "--runs-dir": (("flips", "base", "cand"), (0,)),
        "--json": (("flips", "base", "cand", "--json"), (0,)),
    },
    "power": {
        "--cases": (("power", "--cases", "20", "--trials", "3"), (0,)),
        "--trials": (POWER, (0,)),
        "--effect": (("power", "--effect", "0.15"), (0,)),
        "--baseline-rate": ((*POWER, "--baseline-rate", "0.7"), (0,)),
        "--alpha": ((*POWER, "--alpha", "0.1"), (0,)),
        "--power": (("power", "--trials", "3", "--effect", "0.1", "--power", "0.9"), (0,)),
        "--threshold": ((*POWER, "--threshold", "0.1"), (0,)),
        "--equivalence": (("power", "--trials", "3", "--equivalence"), (0,)),
        "--case-effect": (("power", "--case-effect", "-0.4", "--cases", "40"), (0,)),
        "--case-correction": (("power", "--case-effect", "-0.4", "--cases", "40",
                               "--case-correction", "holm"), (0,)),
        "--from-run": (("power", "--from-run", "base", "--effect", "0.1"), (0,)),
        "--conditions": (("power", "--from-run", "base", "--conditions", "none,preloaded",
                          "--effect", "0.1"), (0,)),
        "--sequential": ((*POWER, "--sequential", "--max-cases", "30"), (0,)),
        "--max-cases": (SIM_POWER, (0,)),
        "--round-cases": (SIM_POWER, (0,)),
        "--adaptive-trials": ((*SIM_POWER, "--adaptive-trials"), (0,)),
        "--providers": ((*POWER, "--providers", "2"), (0,)),
        "--provider-correlation": ((*POWER, "--providers", "2", "--provider-correlation", "0.5"),
                                   (0,)),
        "--plan-effect": ((*SIM_POWER, "--plan-effect", "0.1"), (0,)),
        "--futility-beta": ((*SIM_POWER, "--plan-effect", "0.1", "--futility-beta", "0.2"),
                            (0,)),
        "--runs-dir": (("power", "--from-run", "base", "--effect", "0.1"), (0,)),
        "--json": ((*POWER, "--json"), (0,)),
    },
    "gate": {
        "--baseline": (GATE, GATE_BLOCKS),
        "--candidate": (GATE, GATE_BLOCKS),
        "--policy": ((*GATE, "--policy", "{policy}"), GATE_BLOCKS),
        "--tier": ((*GATE, "--policy", "{policy}", "--tier", "smoke"), GATE_BLOCKS),
        "--ledger": ((*GATE, "--ledger", "{ledger}"), GATE_BLOCKS),
        "--provider": ((*GATE, "--provider", "simulated"), GATE_BLOCKS),
        "--pairwise": ((*GATE, "--pairwise"), (1,)),  # its judge is not calibrated: blocked
        "--allow-uncalibrated-judge": ((*GATE, "--pairwise", "--allow-uncalibrated-judge"),
                                       GATE_BLOCKS),
        "--runs-dir": (GATE, GATE_BLOCKS),
        "--json": ((*GATE, "--json"), GATE_BLOCKS),
    },
}


def parser_flags(command: str) -> set[str]:
    """The long options of one subcommand, read from its parser (``--help`` left out)."""
    from evalkit.cli._main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a.choices, dict) and command in a.choices]
    child = sub.choices[command]
    child.configure()
    return {o for a in child._actions for o in a.option_strings
            if o.startswith("--") and o != "--help"}


def _documented() -> str:
    """The flag table of docs/statistics.md (its section on the analysis commands' flags)."""
    text = (ROOT / "docs" / "statistics.md").read_text()
    start = text.index("## The analysis commands' flags")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_is_run_and_documented(command: str) -> None:
    flags = parser_flags(command)
    assert set(RUNS[command]) == flags, "a flag without its run here (or a run without a flag)"
    table = _documented()
    row = next(line for line in table.splitlines() if line.startswith(f"| `{command}` |"))
    named = set(re.findall(r"`(--[a-z-]+)", row))
    assert flags <= named, f"docs/statistics.md does not name {sorted(flags - named)}"
    for flag, (argv, _) in RUNS[command].items():
        assert flag in argv or flag == "--runs-dir", f"{command} {flag}: its run omits it"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two small demo runs (prompt lane, 2 trials, two seeds) and a stored pairwise comparison."""
    root = tmp_path_factory.mktemp("flags")
    runs = root / "runs"
    for run_id, seed in (("base", "0"), ("cand", "5")):
        done = evalkit_cli("run", DEMO, "--lane", "prompt", "--trials", "2", "--seed", seed,
                           "--run-id", run_id, "--runs-dir", runs, "--no-progress")
        assert done.returncode == 0, done.stderr
    stored = evalkit_cli(*PAIRWISE, "--runs-dir", runs)
    assert stored.returncode == 0, stored.stderr
    (root / "rubric.md").write_text("Better means: names the exact command and its flags.\n")
    policy = (ROOT / "docs" / "examples" / "gate.yaml").read_text()
    (root / "gate.yaml").write_text(policy)
    return runs


def _argv(argv: tuple[str, ...], runs: Path) -> list[str]:
    files = {"{policy}": runs.parent / "gate.yaml", "{ledger}": runs.parent / "ledger.jsonl",
             "{rubric}": runs.parent / "rubric.md"}
    return [str(files.get(a, a)) for a in argv] + ["--runs-dir", str(runs)]


#: What a flag must visibly do, beyond a clean exit, where one line can say it.
CHECKS: dict[tuple[str, str], Callable[[CliResult, Path], None]] = {
    ("compare", "--json"): lambda r, _: _assert(json.loads(r.stdout)["verdict"] in {
        "improved", "regressed", "inconclusive", "equivalent"}),
    ("lift", "--json"): lambda r, _: _assert(isinstance(json.loads(r.stdout), dict)),
    ("flips", "--json"): lambda r, _: _assert(isinstance(json.loads(r.stdout), dict)),
    ("power", "--json"): lambda r, _: _assert(isinstance(json.loads(r.stdout), dict)),
    ("gate", "--json"): lambda r, _: _assert(json.loads(r.stdout)["decision"] in {
        "released", "blocked"}),
    ("gate", "--ledger"): lambda _, runs: _assert(
        len((runs.parent / "ledger.jsonl").read_text().splitlines()) >= 1),
    ("gate", "--pairwise"): lambda r, _: _assert("uncalibrated" in r.stdout + r.stderr),
}


def _assert(condition: bool) -> None:
    assert condition


@pytest.mark.parametrize(
    ("command", "flag"),
    [(c, f) for c in COMMANDS for f in RUNS[c]],
    ids=[f"{c} {f}" for c in COMMANDS for f in RUNS[c]],
)
def test_each_flag_runs_on_a_demo_run(runs: Path, command: str, flag: str) -> None:
    argv, exits = RUNS[command][flag]
    result = evalkit_cli(*_argv(argv, runs))
    assert result.returncode in exits, (result.returncode, result.stdout[-2000:],
                                        result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    assert result.stdout.strip(), "the command printed nothing"
    check = CHECKS.get((command, flag))
    if check is not None:
        check(result, runs)


@pytest.mark.slow
def test_compare_metric_score_as_its_own_process(runs: Path) -> None:
    """The command line passed ``options=`` and ``metric=`` together: exit 2 on every run."""
    done = evalkit_process("compare", "base", "cand", "--metric", "score", "--json", *FAST,
                           "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["metric"] == "score"
    passed = evalkit_cli("compare", "base", "cand", "--json", *FAST, "--runs-dir", runs)
    assert json.loads(passed.stdout)["metric"] == "passed"
    # scores are finer than pass bits: the two metrics measure different things
    assert result["delta"] != json.loads(passed.stdout)["delta"]
