"""The shared settings' table (``evalkit/_settings.py``): one default, one rule, one message.

A bad value of a shared setting gets the same message from the command line (exit code 2,
the flag named) and from Python (the field named): the message names both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from evalkit._settings import (
    ALPHA,
    CONCURRENCY,
    CONFIDENCE,
    N_RESAMPLES,
    N_RESAMPLES_QUICK,
    RETRIES,
    SEED,
    SETTINGS,
    THRESHOLD,
)
from evalkit.ablation import AblationConfig
from evalkit.errors import ConfigError
from evalkit.optimize import OptimizeConfig
from evalkit.runner import RunConfig
from evalkit.stats import DEFAULT_THRESHOLD, CompareOptions, check_threshold, proportion_ci
from tests.conftest import TINY, evalkit_cli


def test_every_entry_is_complete_and_its_default_passes_its_own_rule() -> None:
    for setting in SETTINGS:
        assert setting.flag.startswith("--") and setting.name.isidentifier()
        assert setting.help and setting.kind in (int, float)
        assert setting.check(setting.default) == setting.default
        assert type(setting.default) is setting.kind


def test_the_two_resample_defaults_share_one_flag_name_and_bound() -> None:
    assert (N_RESAMPLES.default, N_RESAMPLES_QUICK.default) == (10_000, 2_000)
    assert N_RESAMPLES_QUICK == N_RESAMPLES.__class__(
        **{**vars(N_RESAMPLES), "default": N_RESAMPLES_QUICK.default}
    )
    for setting in (N_RESAMPLES, N_RESAMPLES_QUICK):
        with pytest.raises(ConfigError, match=">= 100"):
            setting.check(99)


def test_the_threshold_default_is_the_statistics_default() -> None:
    assert DEFAULT_THRESHOLD is THRESHOLD.default
    assert check_threshold(None) == THRESHOLD.default


@pytest.mark.parametrize(
    ("setting", "bad"),
    [
        (CONFIDENCE, 1.5),
        (CONFIDENCE, 0.0),
        (CONFIDENCE, float("nan")),
        (ALPHA, -0.1),
        (N_RESAMPLES, 50),
        (N_RESAMPLES, 2000.5),
        (RETRIES, -1),
        (CONCURRENCY, 0),
        (CONCURRENCY, True),
        (SEED, "x"),
        (THRESHOLD, 1.5),
    ],
)
def test_a_bad_value_names_the_flag_and_the_field(setting: object, bad: object) -> None:
    from evalkit._settings import Setting

    assert isinstance(setting, Setting)
    with pytest.raises(ConfigError) as raised:
        setting.check(bad)
    message = str(raised.value)
    assert message == setting.message(bad)
    assert message.startswith(f"{setting.flag} / {setting.name} must be {setting.rule}")


def test_a_flag_built_from_the_table_has_its_help_default_and_check() -> None:
    parser = argparse.ArgumentParser()
    CONFIDENCE.add_argument(parser, when="calibrate: ")
    N_RESAMPLES_QUICK.add_argument(parser, dest="n_resamples")
    THRESHOLD.add_argument(parser, default=None)
    assert vars(parser.parse_args([])) == {
        "confidence": 0.95, "n_resamples": 2000, "threshold": None
    }
    assert vars(parser.parse_args(["--confidence", "0.9", "--resamples", "500"]))[
        "n_resamples"
    ] == 500
    text = parser.format_help()
    assert "calibrate: confidence level of the intervals (default 0.95)" in " ".join(text.split())
    with pytest.raises(ConfigError, match="but 'many' was passed"):
        parser.parse_args(["--resamples", "many"])


def test_confidence_from_python_and_from_the_command_line(tmp_path: Path) -> None:
    message = CONFIDENCE.message(1.5)
    with pytest.raises(ConfigError) as raised:
        proportion_ci(1, 3, confidence=1.5)
    assert str(raised.value) == message and "confidence" in message
    with pytest.raises(ConfigError, match=r"confidence must be a number in \(0, 1\)"):
        CompareOptions(confidence=1.5)
    done = evalkit_cli(
        "run", TINY, "--until-verdict", "--confidence", "1.5", "--runs-dir", tmp_path
    )
    assert done.returncode == 2
    assert f"error: {message}" in done.stderr and "--confidence" in done.stderr
    assert "Traceback" not in done.stderr
    judged = evalkit_cli("judge", "calibrate", "some-run", "--confidence", "0")
    assert judged.returncode == 2
    assert f"error: {CONFIDENCE.message(0.0)}" in judged.stderr
    assert not any(tmp_path.iterdir())


def test_concurrency_from_python_and_from_the_command_line(tmp_path: Path) -> None:
    message = CONCURRENCY.message(0)
    for config in (
        lambda: RunConfig(concurrency=0),
        lambda: AblationConfig(skill="s", concurrency=0),
        lambda: OptimizeConfig(skill="s", optimizer="command:true", concurrency=0),
    ):
        with pytest.raises(ConfigError, match=message):
            config()
    for argv in (
        ("run", TINY, "--concurrency", "0"),
        ("ablate", TINY, "--skill", "x", "--concurrency", "0"),
        ("judge", "some-run", "--concurrency", "0"),
    ):
        done = evalkit_cli(*argv, "--runs-dir", tmp_path)
        assert done.returncode == 2, argv
        assert f"error: {message}" in done.stderr, argv
    done = evalkit_cli("run", TINY, "--concurrency", "two", "--runs-dir", tmp_path)
    assert done.returncode == 2
    assert "error: --concurrency / concurrency must be an integer >= 1, but 'two' was passed" in (
        done.stderr
    )
    assert not any(tmp_path.iterdir())


def test_the_configurations_take_the_table_defaults() -> None:
    run = RunConfig()
    assert (run.concurrency, run.retries) == (CONCURRENCY.default, RETRIES.default)
    ablation = AblationConfig(skill="s")
    assert (ablation.alpha, ablation.threshold, ablation.seed) == (
        ALPHA.default, THRESHOLD.default, SEED.default
    )
    assert (ablation.n_resamples, ablation.concurrency) == (
        N_RESAMPLES_QUICK.default, CONCURRENCY.default
    )
    optimize = OptimizeConfig(skill="s", optimizer="command:true")
    assert (optimize.alpha, optimize.n_resamples, optimize.threshold) == (
        ALPHA.default, N_RESAMPLES_QUICK.default, THRESHOLD.default
    )
    options = CompareOptions()
    assert (options.confidence, options.n_resamples, options.alpha, options.seed) == (
        CONFIDENCE.default, N_RESAMPLES.default, ALPHA.default, SEED.default
    )
