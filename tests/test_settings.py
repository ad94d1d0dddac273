"""The shared settings' table (``evalkit/_settings.py``): one default, one rule, one message.

A bad value of a shared setting gets the same message from the command line (exit code 2,
the flag named) and from Python (the field named): the message names both.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, get_args

import pytest

from evalkit._settings import (
    ALPHA,
    CASE_CORRECTION,
    CONCURRENCY,
    CONFIDENCE,
    CORRECTION,
    METHOD,
    N_RESAMPLES,
    N_RESAMPLES_QUICK,
    POWER,
    RETRIES,
    ROUND_CASES,
    RUNS_DIR,
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
        assert setting.flag.startswith("--") or setting is METHOD  # no command sets it
        assert setting.name.isidentifier()
        assert setting.help and setting.kind in (int, float, str, Path)
        assert setting.check(setting.default) == setting.default
        assert isinstance(setting.default, setting.kind)
        assert bool(setting.choices) == (setting.kind is str)
        assert setting.default in setting.choices or setting.kind is not str
    assert len({setting.name for setting in SETTINGS}) == len(SETTINGS) - 1  # N_RESAMPLES twice


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
        (POWER, 1.0),
        (POWER, "high"),
        (ROUND_CASES, 0),
        (ROUND_CASES, 2.5),
        (CORRECTION, "x"),
        (CORRECTION, "bh"),  # an alias of the case screen's correction only
        (CORRECTION, None),
        (CASE_CORRECTION, "Holm"),
        (METHOD, "simulation"),
        (RUNS_DIR, ""),
        (RUNS_DIR, 3),
        (RUNS_DIR, None),
    ],
)
def test_a_bad_value_names_the_flag_and_the_field(setting: object, bad: object) -> None:
    from evalkit._settings import Setting

    assert isinstance(setting, Setting)
    with pytest.raises(ConfigError) as raised:
        setting.check(bad)
    message = str(raised.value)
    assert message == setting.message(bad) and raised.value.setting == setting.name
    named = f"{setting.flag} / {setting.name}" if setting.flag else setting.name
    assert message.startswith(f"{named} must be {setting.rule}")
    assert message.endswith(f"but {bad!r} was passed")


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
    assert (ablation.n_resamples, ablation.run.concurrency) == (
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


def test_a_choice_lists_its_choices_and_takes_its_aliases() -> None:
    assert CORRECTION.message("x") == (
        "--correction / correction must be one of holm, bonferroni, fdr_bh, fdr_by, none, "
        "but 'x' was passed"
    )
    assert METHOD.message("z") == "method must be one of t, normal, but 'z' was passed"
    assert [CASE_CORRECTION.check(word) for word in ("bh", "by", "holm", "fdr_bh")] == [
        "fdr_bh", "fdr_by", "holm", "fdr_bh"
    ]
    assert CORRECTION.check("bonferroni") == "bonferroni"


def test_a_path_setting_takes_any_path_and_returns_a_path(tmp_path: Path) -> None:
    assert RUNS_DIR.default == Path("runs")
    assert RUNS_DIR.check(str(tmp_path)) == tmp_path
    assert RUNS_DIR.check(tmp_path / "x") == tmp_path / "x"
    assert RUNS_DIR.message(3) == (
        "--runs-dir / runs_dir must be a path, e.g. runs, but 3 was passed"
    )


def test_the_new_entries_check_the_configurations_that_take_them() -> None:
    from evalkit.sequential import ConfirmConfig, SequentialConfig
    from evalkit.stats import PowerDesign

    cases = [
        (lambda: CompareOptions(correction="x"), CORRECTION.message("x")),
        (lambda: CompareOptions(case_correction="Holm"), CASE_CORRECTION.message("Holm")),
        (lambda: PowerDesign(method="simulation"), METHOD.message("simulation")),
        (lambda: PowerDesign(power=1.0), POWER.message(1.0)),
        (lambda: ConfirmConfig(power=0.0), POWER.message(0.0)),
        (lambda: SequentialConfig(round_cases=0), ROUND_CASES.message(0)),
        (lambda: RunConfig(runs_dir=""), RUNS_DIR.message("")),
        (lambda: AblationConfig(skill="s", runs_dir=3), RUNS_DIR.message(3)),
    ]
    for build, message in cases:
        with pytest.raises(ConfigError) as raised:
            build()
        assert str(raised.value) == message
    assert CompareOptions(case_correction="by").case_correction == "fdr_by"
    assert RunConfig(runs_dir="elsewhere").runs_dir == Path("elsewhere")
    assert RunConfig().runs_dir == RUNS_DIR.default
    schema = CompareOptions.model_json_schema()["properties"]
    assert schema["correction"]["enum"] == list(CORRECTION.choices)
    assert schema["correction"]["default"] == "holm"


def test_one_default_of_the_round_size_everywhere() -> None:
    import inspect

    from evalkit import power
    from evalkit.analysis import sequential_compare
    from evalkit.sequential import SequentialConfig
    from evalkit.stats import sequential_compare_tables, simulate_sequential

    assert SequentialConfig().round_cases == ROUND_CASES.default == 10
    for function in (power, sequential_compare, sequential_compare_tables, simulate_sequential):
        parameter = inspect.signature(function).parameters["round_cases"]
        assert parameter.default == ROUND_CASES.default, function


def test_the_new_flags_from_the_command_line(tmp_path: Path) -> None:
    for argv, message in (
        (("compare", "a", "b", "--correction", "x"), CORRECTION.message("x")),
        (("compare", "a", "b", "--case-correction", "fdr"), CASE_CORRECTION.message("fdr")),
        (("compare", "a", "--sequential", "--round-cases", "0"), ROUND_CASES.message(0)),
        (("power", "--effect", "0.1", "--power", "1"), POWER.message(1.0)),
        (("power", "--effect", "0.1", "--sequential", "--round-cases", "0"),
         ROUND_CASES.message(0)),
        (("run", TINY, "--until-verdict", "--round-cases", "0"), ROUND_CASES.message(0)),
        (("confirm", "a", "b", "--suite", TINY, "--power", "2"), POWER.message(2.0)),
    ):
        done = evalkit_cli(*argv, "--runs-dir", tmp_path)
        assert done.returncode == 2, argv
        assert f"error: {message}" in done.stderr, (argv, done.stderr)
        assert "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())


def test_every_configuration_field_of_a_shared_setting_is_typed_with_its_entry() -> None:
    """A field named after a shared setting is ``Annotated[kind, entry]``: the entry's check,
    message and JSON Schema, never a plain ``float`` or ``str`` with the default copied."""
    import evalkit.ablation
    import evalkit.analysis
    import evalkit.optimize
    import evalkit.runner
    import evalkit.sequential
    import evalkit.stats
    from evalkit._options import Options
    from evalkit._settings import Setting

    packages = (evalkit.ablation, evalkit.analysis, evalkit.optimize, evalkit.runner,
                evalkit.sequential, evalkit.stats)
    configurations = {  # every public options class (the packages import lazily)
        value
        for package in packages
        for name in package.__all__
        if isinstance(value := getattr(package, name), type) and issubclass(value, Options)
    }
    by_name = {setting.name: setting for setting in SETTINGS}
    checked = []
    for kind in configurations:
        for field, info in kind.model_fields.items():  # type: ignore[attr-defined]
            if field in by_name:
                inner = [get_args(arm)[1:] for arm in get_args(info.annotation)]  # X | None
                metadata = [*info.metadata, *(item for arm in inner for item in arm)]
                entries = [item for item in metadata if isinstance(item, Setting)]
                assert [entry.name for entry in entries] == [field], (kind, field)
                checked.append(f"{kind.__name__}.{field}")
    assert {"CompareOptions.correction", "CompareOptions.case_correction", "PowerDesign.power",
            "PowerDesign.method", "RunConfig.runs_dir", "SequentialConfig.round_cases",
            "ConfirmConfig.power", "RunConfig.seed"} <= set(checked)
    with pytest.raises(ConfigError, match="--seed / seed must be an integer, but 'x'"):
        CompareOptions(seed="x")
    with pytest.raises(ConfigError, match=r"^--concurrency / concurrency must be an integer >= 1, "
                       r"but 2\.5 was passed$"):
        RunConfig(concurrency=2.5)
    # as a configuration file gives them: a numeric string, an integral float
    assert RunConfig(concurrency="3").concurrency == RunConfig(concurrency=3.0).concurrency == 3
    assert CompareOptions(confidence="0.9").confidence == 0.9


def _actions(parser: argparse.ArgumentParser, path: str = "evalkit") -> list[tuple[str, Any]]:
    """``(command, action)`` of every argument of every command and subcommand."""
    found: list[tuple[str, Any]] = []
    if hasattr(parser, "configure"):  # a command's arguments are added when it first parses
        parser.configure()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _actions(sub, f"{path} {name}")
        else:
            found.append((path, action))
    return found


def test_every_flag_of_a_shared_setting_is_added_from_its_entry() -> None:
    """No command adds ``--correction``, ``--runs-dir``, ``--round-cases``, ... by hand: each
    takes its check (argparse ``type``) from the entry, and its help states its default."""
    from evalkit.cli._main import build_parser

    by_flag = {setting.flag: setting for setting in SETTINGS if setting.flag}
    seen = set()
    for command, action in _actions(build_parser()):
        for flag in set(action.option_strings) & set(by_flag):
            setting = by_flag[flag]
            assert getattr(action.type, "__func__", None) is type(setting).parse, (command, flag)
            assert getattr(action.type, "__self__", None).name == setting.name, (command, flag)
            assert "default" in (action.help or ""), (command, flag)
            seen.add(flag)
    assert {"--correction", "--case-correction", "--power", "--runs-dir", "--round-cases"} <= seen
