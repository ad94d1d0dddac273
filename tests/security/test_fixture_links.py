"""Fixture symlinks are never followed out of the fixture; loops are validation errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cases import load_suite
from evalkit.errors import SuiteError
from evalkit.sandbox import FixtureLinkError, copy_fixture
from tests.conftest import evalkit_cli

FIXTURE = "fixtures/make-report"


@pytest.mark.parametrize(
    ("make_link", "reason"),
    [
        (lambda d: (d / "passwd").symlink_to("/etc/passwd"), "points outside the fixture"),
        (lambda d: (d / "up").symlink_to("../../suite.yaml"), "points outside the fixture"),
        (lambda d: (d / "loop").symlink_to("loop"), "symlink loop"),
        (
            lambda d: ((d / "a").symlink_to("b"), (d / "b").symlink_to("a")),
            "symlink loop",
        ),
    ],
    ids=["etc-passwd", "relative-escape", "self-loop", "two-link-loop"],
)
def test_bad_fixture_links_fail_validation_naming_the_file(
    tiny_suite: Path, make_link: object, reason: str
) -> None:
    fixture = tiny_suite / FIXTURE
    make_link(fixture)  # type: ignore[operator]
    result = evalkit_cli("cases", "validate", str(tiny_suite))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert str(fixture) in result.stderr and reason in result.stderr
    assert ".fixture (case 'make-report')" in result.stderr


def test_link_inside_the_fixture_is_copied_as_a_link(tiny_suite: Path, tmp_path: Path) -> None:
    fixture = tiny_suite / FIXTURE
    (fixture / "alias.txt").symlink_to("data.txt")
    load_suite(tiny_suite)  # valid
    workspace = tmp_path / "ws"
    copy_fixture(fixture, workspace)
    assert os.readlink(workspace / "alias.txt") == "data.txt"
    assert (workspace / "alias.txt").read_text() == (fixture / "data.txt").read_text()


def test_copy_refuses_a_link_out_even_without_validation(
    tiny_suite: Path, tmp_path: Path
) -> None:
    fixture = tiny_suite / FIXTURE
    (fixture / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(SuiteError):
        load_suite(tiny_suite)
    workspace = tmp_path / "ws"
    with pytest.raises(FixtureLinkError, match="passwd: symlink points outside the fixture"):
        copy_fixture(fixture, workspace)
    assert not (workspace / "passwd").exists()
