"""``evalkit run --until-verdict`` on the demo suite with the simulated agent.

The CLI runs in this process (tests/conftest.py: evalkit_cli), except where the process itself is
the subject: the run killed with SIGKILL is a real child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.stats import (
    CompareOptions,
    compare_tables as compare,
    sequential_compare_tables as sequential_compare,
)
from tests.conftest import evalkit_cli, until_verdict_args, until_verdict_argv

ROOT = Path(__file__).resolve().parents[2]
SETTLED = {"improved", "regressed", "futile"}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _sequential(run_dir: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text())["sequential"]
    return record


@pytest.mark.slow
def test_until_verdict_stops_early_and_records_every_look(tmp_path: Path) -> None:
    done = evalkit_cli(*until_verdict_args(tmp_path, "seq", "--json"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["stop_reason"] in SETTLED
    assert {"verdict", "delta", "n_cases", "looks", "stopped_at", "method"} <= set(out)
    assert out["next_step"] is None  # settled: nothing more to run
    record = _sequential(tmp_path / "seq")
    looks = record["looks"]
    assert [look["round"] for look in looks] == list(range(1, out["rounds"] + 1))
    assert [look["n_cases"] for look in looks] == [5 * k for k in range(1, out["rounds"] + 1)]
    assert looks[-1]["reason"] == out["stop_reason"] and record["stop_reason"] == out["stop_reason"]
    assert all(look["reason"] == "" for look in looks[:-1])
    rows = evalkit.read_run(tmp_path / "seq")
    assert set(rows["condition"]) == {"none", "preloaded"}
    n_cases = rows["case_id"].nunique()
    assert n_cases == out["stopped_at"] == 5 * out["rounds"]
    assert len(rows) == out["items"] == n_cases * 2 * 3
    assert n_cases < len(record["order"])  # stopped before the suite was spent
    assert set(rows["case_id"]) == set(record["order"][:n_cases])  # drawn in the seeded order
    # the verdict is the one the library computes from the run on disk
    again = sequential_compare(
        rows,
        conditions=("none", "preloaded"),
        order=record["order"],
        look_at=[5 * k for k in range(1, out["rounds"] + 1)],
    )
    assert again.verdict == out["verdict"]
    assert again.delta.ci_low == out["delta"]["ci_low"]
    events = [
        json.loads(line) for line in (tmp_path / "seq" / "events.jsonl").read_text().splitlines()
    ]
    assert sum(e["event"] == "sequential_look" for e in events) == out["rounds"]
    # evalkit compare --sequential reads the run with its own design: the same looks
    shown = evalkit_cli("compare", tmp_path / "seq", "--sequential", "--json")
    assert shown.returncode == 0, shown.stderr
    read_back = json.loads(shown.stdout)
    assert [(x["n_cases"], x["ci_low"], x["ci_high"]) for x in read_back["looks"]] == [
        (x["n_cases"], x["ci_low"], x["ci_high"]) for x in looks
    ]
    assert read_back["verdict"] == out["verdict"]
    # the fixed-design compare agrees on the direction over the same cases
    fixed = compare(rows, conditions=("none", "preloaded"),
        options=CompareOptions(n_resamples=1000))
    if out["verdict"] == "improved":
        assert fixed.delta.estimate > 0


@pytest.mark.parametrize(
    ("extra", "reason", "rounds", "code"),
    [
        (("--max-rounds", "1"), "max-rounds", 1, 0),
        # round 1 costs $0.101 with the simulated agent: a second would pass $0.15
        (("--max-usd", "0.15"), "max-usd", 1, 0),
        # 5 cases x 2 conditions x 3 trials = 30 items a round: a third would pass 60
        (("--max-items", "60"), "max-items", 2, 0),
        (("--provider-opt", "error_rate=1.0", "--retries", "0"), "run-failed", 1, 3),
    ],
)
def test_until_verdict_budgets_stop_unsettled(
    tmp_path: Path, extra: tuple[str, ...], reason: str, rounds: int, code: int
) -> None:
    done = evalkit_cli(*until_verdict_args(tmp_path, "cap", "--json", *extra))
    assert done.returncode == code, done.stderr
    out = json.loads(done.stdout)
    assert out["stop_reason"] == reason and out["rounds"] == rounds
    assert out["stopped_at"] is None and out["verdict"] == "inconclusive"
    assert out["items"] == rounds * 30
    record = _sequential(tmp_path / "cap")
    assert len(record["looks"]) == rounds and record["stop_reason"] == reason
    if reason == "max-usd":
        assert out["cost_usd"] <= 0.15
    if code == 3:
        assert "failed" in done.stderr and "Traceback" not in done.stderr
        assert out["next_step"] is None  # it measured nothing to plan from
    else:  # a spent budget says what would settle it (tests/sequential/test_sequential_next_step)
        assert out["next_step"]["current_cases"] == 5 * rounds


def test_a_run_stopped_by_its_budget_continues_with_a_larger_one(tmp_path: Path) -> None:
    first = evalkit_cli(*until_verdict_args(tmp_path, "more", "--json", "--max-rounds", "1"))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["stop_reason"] == "max-rounds"
    more = evalkit_cli(
        *until_verdict_args(tmp_path, "more", "--json", "--max-rounds", "2", "--resume")
    )
    assert more.returncode == 0, more.stderr
    out = json.loads(more.stdout)
    assert out["rounds"] == 2 and out["items"] == 60
    record = _sequential(tmp_path / "more")
    assert record["max_rounds"] == 2
    assert [look["n_cases"] for look in record["looks"]] == [5, 10]


def test_until_verdict_needs_two_conditions(tmp_path: Path) -> None:
    args = until_verdict_args(tmp_path, "bad")
    args[args.index("none,preloaded")] = "none"
    done = evalkit_cli(*args)
    assert done.returncode == 2
    assert "--conditions BASELINE,CANDIDATE" in done.stderr
    assert "Traceback" not in done.stderr


def test_budgets_without_until_verdict_are_refused(tmp_path: Path) -> None:
    args = [a for a in until_verdict_args(tmp_path, "plain") if a != "--until-verdict"]
    done = evalkit_cli(*args, "--max-items", "10")
    assert done.returncode == 2
    assert "--round-cases, --max-items: only with --until-verdict" in done.stderr
    assert not (tmp_path / "plain").exists()


@pytest.mark.slow
@pytest.mark.parametrize("design", [(), ("--adaptive-trials",)], ids=["every-trial", "adaptive"])
def test_until_verdict_resumes_after_sigkill(tmp_path: Path, design: tuple[str, ...]) -> None:
    """SIGKILL after the first look; --resume continues with the same order and looks."""
    slow = ("--provider-opt", "latency_s=0.05", "--concurrency", "2", *design)
    process = subprocess.Popen(
        until_verdict_argv(tmp_path, "kill", *slow),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=_env(),
    )
    manifest = tmp_path / "kill" / "manifest.json"
    deadline = time.monotonic() + 300
    first_look = None
    while time.monotonic() < deadline and process.poll() is None:
        try:
            record = json.loads(manifest.read_text()).get("sequential")
        except (OSError, ValueError):
            record = None
        if record and record["looks"]:
            first_look = record["looks"][0]
            break
        time.sleep(0.05)
    assert first_look is not None, "the first look never reached the manifest"
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert _sequential(tmp_path / "kill")["stop_reason"] is None

    resumed = evalkit_cli(*until_verdict_args(tmp_path, "kill", *slow, "--json", "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    record = _sequential(tmp_path / "kill")
    assert record["looks"][0] == first_look
    assert [look["round"] for look in record["looks"]] == list(range(1, out["rounds"] + 1))
    assert record["stop_reason"] == out["stop_reason"] in SETTLED
    rows = evalkit.read_run(tmp_path / "kill")
    assert rows["item_key"].is_unique
    assert len(rows) == out["items"]
    if not design:
        assert len(rows) == 5 * out["rounds"] * 2 * 3
    else:  # each case ran 1 or 3 trials per condition, as its recorded draw says
        cases = record["adaptive"]["cases"]
        assert len(cases) == 5 * out["rounds"]
        assert len(rows) == sum(2 * (3 if c["stage_two"] else 1) for c in cases.values())

    # an uninterrupted run with the same seed reaches the same looks
    fresh = evalkit_cli(*until_verdict_args(tmp_path / "other", "kill", *design, "--json"))
    assert fresh.returncode == 0, fresh.stderr
    uninterrupted = _sequential(tmp_path / "other" / "kill")
    assert uninterrupted["looks"] == record["looks"]
    assert uninterrupted.get("adaptive") == record.get("adaptive")


def test_a_finished_run_resumed_runs_nothing_again(tmp_path: Path) -> None:
    """--resume of a settled run continues from its last round (earlier plans lack its cases)."""
    first = evalkit_cli(*until_verdict_args(tmp_path, "done", "--json"))
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["rounds"] > 1
    again = evalkit_cli(*until_verdict_args(tmp_path, "done", "--json", "--resume"))
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert resumed["looks"] == out["looks"] and resumed["verdict"] == out["verdict"]
    assert resumed["run"]["items"] == out["items"]
    assert len(evalkit.read_run(tmp_path / "done")) == out["items"]


def test_plan_effect_is_recorded_and_stops_the_run_futile(tmp_path: Path) -> None:
    """A planned effect of 90 pp is soon excluded on the demo suite: the run stops there."""
    done = evalkit_cli(
        *until_verdict_args(
            tmp_path, "planned", "--plan-effect", "0.9", "--futility-beta", "0.2", "--json"
        )
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["stop_reason"] == "futile-planned" and out["verdict"] == "inconclusive"
    assert out["futility"]["plan_effect"] == 0.9 and out["futility"]["beta"] == 0.2
    record = _sequential(tmp_path / "planned")
    assert record["plan_effect"] == 0.9 and record["futility_beta"] == 0.2
    assert record["stop_reason"] == "futile-planned"
    wealth = [look["futility_wealth"] for look in record["looks"]]
    assert wealth[-1] >= 1 / 0.2 > max(wealth[:-1], default=0.0)
    assert [look["reason"] for look in record["looks"]] == [""] * (len(wealth) - 1) + [
        "futile-planned"
    ]
    assert out["futility"]["wealth"] == wealth[-1]
    assert out["stopped_at"] < len(record["order"])
    # compare --sequential reads the run with its recorded boundary: the same looks
    shown = evalkit_cli("compare", tmp_path / "planned", "--sequential", "--json")
    assert shown.returncode == 0, shown.stderr
    read_back = json.loads(shown.stdout)
    assert [(x["n_cases"], x["reason"], x["futility_wealth"]) for x in read_back["looks"]] == [
        (x["n_cases"], x["reason"], x["futility_wealth"]) for x in record["looks"]
    ]
    # the boundary cannot change when the run is resumed
    changed = evalkit_cli(
        *until_verdict_args(tmp_path, "planned", "--plan-effect", "0.5", "--resume")
    )
    assert changed.returncode == 2
    assert "was planned with --plan-effect 0.9" in changed.stderr
    assert "Traceback" not in changed.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--plan-effect", "1.5"), "--plan-effect must be a difference of pass rates in (0, 1)"),
        (("--plan-effect", "0.1", "--futility-beta", "1"), "--futility-beta must be in (0, 1)"),
        (("--futility-beta", "0.1"), "--futility-beta: only with --plan-effect"),
    ],
)
def test_bad_futility_settings_are_refused(
    tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    done = evalkit_cli(*until_verdict_args(tmp_path, "bad", *extra))
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow
def test_the_text_of_a_settled_look_does_not_repeat_its_verdict(tmp_path: Path) -> None:
    done = evalkit_cli(*until_verdict_args(tmp_path, "said"))
    assert done.returncode == 0, done.stderr
    looks = [line for line in done.stdout.splitlines() if line.startswith("  look ")]
    assert looks, done.stdout
    last = looks[-1]
    verdict = last.rsplit("-> ", 1)[1].split(" ")[0]
    assert f"{verdict} ({verdict})" not in last
