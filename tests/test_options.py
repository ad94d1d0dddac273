"""One kind of configuration: every options object is an ``Options``, one error for a bad value."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from evalkit._options import Options
from evalkit.ablation import AblationConfig
from evalkit.analysis import GatePolicy
from evalkit.errors import ConfigError, EvalkitError
from evalkit.optimize import OptimizeConfig
from evalkit.runner import RunConfig
from evalkit.sequential import ConfirmConfig, SequentialConfig
from evalkit.stats import CompareOptions, PowerDesign
from tests.conftest import TINY, evalkit_cli

#: Each configuration with a minimal valid call and a bad value of one of its fields.
CONFIGURATIONS: list[tuple[type[BaseModel], dict[str, Any], str, Any]] = [
    (RunConfig, {}, "concurrency", 0),
    (SequentialConfig, {}, "round_cases", 0),
    (GatePolicy, {}, "threshold", 1.5),
    (CompareOptions, {}, "confidence", 1.5),
    (PowerDesign, {}, "power", 2.0),
    (AblationConfig, {"skill": "s"}, "concurrency", 0),
    (OptimizeConfig, {"skill": "s", "optimizer": "command:true"}, "threshold", -0.1),
    (ConfirmConfig, {}, "power", 2.0),
]


@pytest.mark.parametrize(("kind", "valid", "field", "bad"), CONFIGURATIONS)
def test_a_bad_value_is_one_config_error_naming_its_field(
    kind: type[BaseModel], valid: dict[str, Any], field: str, bad: Any
) -> None:
    assert issubclass(kind, Options)
    kind(**valid)  # the valid call builds
    with pytest.raises(ConfigError) as raised:
        kind(**valid, **{field: bad})
    assert isinstance(raised.value, EvalkitError)  # `except EvalkitError` catches every one
    assert raised.value.setting == field and field in str(raised.value)
    with pytest.raises(ConfigError, match="no_such_field"):
        kind(**valid, no_such_field=1)


def test_every_configuration_of_the_api_is_covered() -> None:
    """No public configuration model is left on pydantic's own error."""
    import evalkit.ablation
    import evalkit.analysis
    import evalkit.optimize
    import evalkit.runner
    import evalkit.sequential
    import evalkit.stats

    found = {
        value
        for package in (evalkit.ablation, evalkit.analysis, evalkit.optimize, evalkit.runner,
                        evalkit.sequential, evalkit.stats)
        for name in package.__all__
        if isinstance(value := getattr(package, name), type)
        and issubclass(value, BaseModel)
        and (name.endswith(("Config", "Options", "Policy")) or name == "PowerDesign")
    }
    assert found == {kind for kind, *_ in CONFIGURATIONS}


def test_the_command_line_names_the_flag(tmp_path: Any) -> None:
    done = evalkit_cli(
        "ablate", TINY, "--skill", "x", "--concurrency", "0", "--runs-dir", tmp_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error: --concurrency / concurrency must be an integer >= 1" in done.stderr
