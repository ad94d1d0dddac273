"""The optimizer registry: built-in command/provider, python:module:function, NAME[:ARG]."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.errors import ConfigError
from evalkit.optimize import (
    CallableOptimizer,
    CommandOptimizer,
    OptimizerContext,
    Proposal,
    ProviderOptimizer,
    _optimizer_registry,
    load_optimizer,
    optimizer_names,
)
from tests.plugin_fixtures import install_entry_points


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_optimizer_registry.OPTIMIZERS, "registered", {})
    _optimizer_registry.OPTIMIZERS.reload_plugins()
    yield
    _optimizer_registry.OPTIMIZERS.reload_plugins()


class _Fixed:
    def __init__(self, text: str, settings: Mapping[str, Any]) -> None:
        self.name = f"fixed:{text}"
        self.text = text
        self.settings = dict(settings)

    def propose(self, context: OptimizerContext) -> Proposal:
        return Proposal(text=self.text)


@evalkit.plugin("optimizer")
def make_fixed(argument: str, settings: Mapping[str, Any]) -> _Fixed:
    return _Fixed(argument, settings)


@evalkit.plugin("optimizer")
def propose_nothing(context: OptimizerContext) -> None:
    return None


def test_the_builtins_keep_their_spellings() -> None:
    assert optimizer_names()[:2] == ("command", "provider")
    command = load_optimizer("command:echo hi", {"timeout_s": "5"})
    assert isinstance(command, CommandOptimizer) and command.name == "command:echo hi"
    assert command.timeout_s == 5.0
    agent = load_optimizer("provider:claude_code", {"model": "m"})
    assert isinstance(agent, ProviderOptimizer) and agent.provider == "claude_code"
    own = load_optimizer(f"python:{__name__}:propose_nothing")
    assert isinstance(own, CallableOptimizer) and own.name == f"python:{__name__}:propose_nothing"


def test_a_registered_name_takes_an_argument_and_the_settings(clean_registry: None) -> None:
    evalkit.register("optimizer", "fixed", make_fixed)
    assert "fixed" in optimizer_names()
    with_argument = load_optimizer("fixed:# new text", {"k": "v"})
    assert isinstance(with_argument, _Fixed)
    assert (with_argument.text, with_argument.settings) == ("# new text", {"k": "v"})
    bare = load_optimizer("fixed")
    assert isinstance(bare, _Fixed) and bare.text == ""


def test_an_entry_point_optimizer_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_registry: None
) -> None:
    site = tmp_path / "site"
    install_entry_points(site, "fixed-plugin", "evalkit.plugins",
                         f"optimizer.fixed-ep = {__name__}:make_fixed\n")
    monkeypatch.syspath_prepend(str(site))
    _optimizer_registry.OPTIMIZERS.reload_plugins()
    assert "fixed-ep" in optimizer_names()
    found = load_optimizer("fixed-ep:from a plugin")
    assert isinstance(found, _Fixed) and found.text == "from a plugin"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope:x", "--optimizer / optimizer must be one of the optimizers command, provider"),
        ("python:x:y", "cannot import 'x:y'"),
        ("command:", "give the command to run, as command:CMD"),
        ("provider", "give the agent provider, as provider:NAME"),
    ],
)
def test_bad_specs_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_optimizer(spec)


def test_an_entry_that_is_not_declared_is_refused(clean_registry: None) -> None:
    with pytest.raises(ConfigError, match="--optimizer odd: 'evalkit.optimize:__all__' is a "
                       "list that is not declared an optimizer plugin"):
        _optimizer_registry.OPTIMIZERS.load("evalkit.optimize:__all__", "odd")
