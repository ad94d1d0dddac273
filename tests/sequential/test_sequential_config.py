"""``SequentialConfig``: the design of a sequential run, checked once, errors naming parameters.

The command line builds it from its flags and its errors name the flags; the manifest record
written from it keeps its keys; the names that moved here from ``evalkit.analysis`` still
resolve there, with a warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit._settings import CONFIDENCE, ROUND_CASES, THRESHOLD, Setting
from evalkit.cli._flags import FLAGS, settings_of_flags
from evalkit.errors import ConfigError
from evalkit.runner import RunConfig
from evalkit.sequential import (
    SequentialConfig,
    run_until_verdict,
)
from evalkit.stats import DEFAULT_THRESHOLD, FUTILITY_BETA
from tests.conftest import DEMO, evalkit_cli

BAD = [
    ({"max_items": 0}, "`max_items` must be a positive number, got 0"),
    ({"max_usd": -1.0}, "`max_usd` must be a positive number, got -1.0"),
    ({"max_rounds": -2}, "`max_rounds` must be a positive number, got -2"),
    ({"plan_cases": 0}, "`plan_cases` must be a positive number, got 0"),
    ({"plan_effect": 1.5}, "`plan_effect` must be a difference of pass rates in (0, 1)"),
    ({"futility_beta": 1.0}, "`futility_beta` must be in (0, 1), e.g. 0.2, got 1.0"),
    ({"stage_two_probability": 0.5}, "`stage_two_probability`: only with `adaptive_trials`"),
    (
        {"adaptive_trials": True, "stage_two_probability": 0.0},
        "`stage_two_probability` must be in (0, 1], got 0.0",
    ),
]


def test_the_defaults_are_the_statistics_defaults() -> None:
    config = SequentialConfig()
    assert config.threshold == DEFAULT_THRESHOLD and config.futility_beta == FUTILITY_BETA
    assert (config.round_cases, config.confidence, config.adaptive_trials) == (10, 0.95, False)
    assert config.budgets() == {}
    assert SequentialConfig(max_items=40, max_rounds=3).budgets() == {
        "max_items": 40, "max_rounds": 3
    }


@pytest.mark.parametrize(("values", "message"), BAD)
def test_a_bad_value_is_refused_naming_the_parameter(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        SequentialConfig(**values)
    assert str(raised.value).startswith(message)
    assert "--" not in str(raised.value).split(",")[0]


@pytest.mark.parametrize(("values", "message"), BAD)
def test_on_the_command_line_a_bad_value_names_the_flag(
    values: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as raised, settings_of_flags():
        SequentialConfig(**values)
    flagged = message
    for parameter, flag in FLAGS.items():
        flagged = flagged.replace(f"`{parameter}`", flag)
    assert str(raised.value).startswith(flagged) and "`" not in str(raised.value)


@pytest.mark.parametrize(
    ("values", "setting"),
    [({"confidence": 1.0}, CONFIDENCE), ({"threshold": -0.1}, THRESHOLD),
     ({"threshold": 1.5}, THRESHOLD), ({"round_cases": 0}, ROUND_CASES)],
)
def test_a_shared_setting_is_refused_with_its_one_message(
    values: dict[str, Any], setting: Setting[Any]
) -> None:
    """The shared settings name both the flag and the parameter, in Python and on the CLI."""
    (value,) = values.values()
    with pytest.raises(ConfigError) as raised:
        SequentialConfig(**values)
    assert str(raised.value) == setting.message(value)
    with pytest.raises(ConfigError) as raised, settings_of_flags():
        SequentialConfig(**values)
    assert str(raised.value) == setting.message(value)


def test_every_setting_of_the_command_line_has_its_flag() -> None:
    from evalkit.cli._run import SEQUENTIAL_OPTIONS

    assert set(SEQUENTIAL_OPTIONS) == set(SequentialConfig.model_fields)
    assert set(SEQUENTIAL_OPTIONS) <= set(FLAGS)


def test_the_command_line_names_its_flags(
    tmp_path: Path
) -> None:
    argv = ["run", str(DEMO), "--conditions", "none,preloaded", "--until-verdict",
            "--runs-dir", str(tmp_path), "--no-progress", "--round-cases", "0"]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    assert f"error: {ROUND_CASES.message(0)}" in done.stderr
    done = evalkit_cli(*argv[:-1], "3", "--max-usd", "-1")
    assert done.returncode == 2
    assert "error: --max-usd must be a positive number, got -1.0" in done.stderr
    assert not any(tmp_path.iterdir())


def test_the_record_keeps_its_keys_and_a_resumed_run_keeps_its_design(tmp_path: Path) -> None:
    config = RunConfig(runs_dir=tmp_path, run_id="seq", conditions=("none", "preloaded"),
                       trials=2, use_cache=False, progress=False)
    design = SequentialConfig(round_cases=4, max_rounds=1, threshold=0.1, confidence=0.9)
    first = run_until_verdict(DEMO, config, design)
    record = json.loads((tmp_path / "seq" / "manifest.json").read_text())["sequential"]
    assert list(record) == [
        "baseline", "candidate", "order", "round_cases", "threshold", "confidence", "method",
        "plan_cases", "plan_effect", "futility_beta", "max_items", "max_usd", "max_rounds",
        "looks", "adaptive", "stop_reason", "allocation",
    ]
    assert (record["round_cases"], record["threshold"], record["confidence"]) == (4, 0.1, 0.9)
    assert record["futility_beta"] is None and record["max_rounds"] == 1
    if first.stop_reason != "max-rounds":
        return  # settled at the first look: nothing to continue
    resumed = config.model_copy(update={"resume": True})
    again = run_until_verdict(DEMO, resumed, SequentialConfig(round_cases=9, max_rounds=2))
    assert again.record.round_cases == 4 and again.record.threshold == 0.1  # recorded design
    assert again.record.max_rounds == 2  # a budget given again replaces the recorded one


