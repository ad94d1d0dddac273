"""Settings checked once by the library, shown by the command line with the flag's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.analysis import load_policy
from evalkit.cli._flags import FLAGS, flag_message
from evalkit.errors import ConfigError, InputError
from evalkit.optimize import OptimizeConfig
from evalkit.runner import RunConfig
from evalkit.stats import DEFAULT_THRESHOLD
from tests.conftest import TINY, evalkit_cli

ROOT = Path(__file__).resolve().parents[2]


CONCURRENCY_RULE = "--concurrency / concurrency must be an integer >= 1, but 0 was passed"


def test_concurrency_is_checked_by_run_config_and_shown_with_its_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=CONCURRENCY_RULE):
        RunConfig(concurrency=0)
    done = evalkit_cli("run", TINY, "--concurrency", "0", "--runs-dir", tmp_path)
    assert done.returncode == 2
    assert f"error: {CONCURRENCY_RULE}" in done.stderr
    optimised = evalkit_cli(
        "optimize", TINY, "--skill", "x", "--optimizer", "command:true", "--concurrency", "0",
        "--runs-dir", tmp_path,
    )
    assert optimised.returncode == 2
    assert f"error: {CONCURRENCY_RULE}" in optimised.stderr


def test_the_threshold_rule_is_the_same_for_the_gate_policy_and_the_optimiser(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_text("compare:\n  threshold: 1.5\n", encoding="utf-8")
    rule = r"--threshold / threshold must be a number in \[0, 1\]"
    with pytest.raises(InputError, match=f"threshold: .*{rule}"):
        load_policy(policy)
    assert load_policy(None).compare.threshold == DEFAULT_THRESHOLD
    with pytest.raises(ConfigError, match=r"must be a number in \[0, 1\]"):
        OptimizeConfig(skill="s", optimizer="command:true", threshold=-0.1)
    assert OptimizeConfig(skill="s", optimizer="command:true").threshold == DEFAULT_THRESHOLD
    done = evalkit_cli(
        "optimize", TINY, "--skill", "x", "--optimizer", "command:true", "--threshold", "2",
        "--runs-dir", tmp_path,
    )
    assert done.returncode == 2
    assert "error: --threshold / threshold must be a number in [0, 1]" in done.stderr


def test_flags_name_the_parameters_they_set() -> None:
    assert FLAGS["threshold"] == "--threshold"
    assert flag_message("threshold", "The value for `threshold` must be ...") == (
        "The value for --threshold must be ..."
    )


def test_optimize_config_holds_a_run_config_and_records_the_old_flat_json() -> None:
    state = json.loads((ROOT / "tests/fixtures/optimize/opt/optimize.json").read_text())
    recorded = state["config"]
    config = OptimizeConfig(**recorded)
    assert config.run.trials == 1 and config.run.backend == "threading"
    assert config.run.runs_dir == Path("tests/fixtures/optimize") and config.run.run_id == "opt"
    assert json.dumps(config.record()) == json.dumps(recorded)  # same keys, same order
    nested = OptimizeConfig(
        **{k: v for k, v in recorded.items() if k not in ("trials", "runs_dir", "run_id",
                                                          "resume", "concurrency", "backend",
                                                          "provider", "provider_options")},
        run=config.run,
    )
    assert nested == config
    assert OptimizeConfig(skill="s", optimizer="command:true").run.trials == 3
    with pytest.raises(ConfigError, match="inside `run`"):
        OptimizeConfig(skill="s", optimizer="command:true", trials=2, run=RunConfig())
