"""Every subcommand's --help ends with runnable examples, and each example parses."""

from __future__ import annotations

import shlex

import pytest

from evalkit.cli import build_parser
from evalkit.cli._examples import EXAMPLES
from evalkit.cli._main import COMMANDS
from tests.conftest import evalkit_cli


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_ends_with_examples_that_parse(command: str) -> None:
    done = evalkit_cli(command, "--help")
    assert done.returncode == 0
    tail = done.stdout.rstrip().split("examples:\n")[-1].splitlines()
    shown = [line.strip() for line in tail]
    assert shown == list(EXAMPLES[command]) and 1 <= len(shown) <= 2
    for example in shown:
        words = shlex.split(example)
        assert words[:2] == ["evalkit", command]
        args = build_parser().parse_args(words[1:])  # an unknown option would exit 2 here
        assert args.command == command
