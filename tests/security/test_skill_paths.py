"""A skill's ``path``, ``bootstrap`` and variant files must resolve inside the suite.

The attack: ``skills.X.path`` (or ``bootstrap``, or a variant) names a private key outside the
suite, by an absolute path, by ``../..`` or through a symlink inside the suite, and
``evalkit run --conditions preloaded,self-load`` would send it to the provider. Validation
must refuse it (exit 2, naming the field) and nothing under the runs directory may hold it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import TINY, evalkit_cli

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- zq7PRIVATEKEYBODY1234567890"


def _absolute(suite: Path, key: Path) -> str:
    return str(key)


def _dotdot(suite: Path, key: Path) -> str:
    return os.path.relpath(key, suite)


def _symlink(suite: Path, key: Path) -> str:
    (suite / "skills" / "waiting" / "innocent.md").symlink_to(key)
    return "skills/waiting/innocent.md"


def _linked_dir(suite: Path, key: Path) -> str:
    (suite / "skills" / "up").symlink_to(key.parent, target_is_directory=True)
    return f"skills/up/{key.name}"


PATH = ("path", "    path: skills/waiting/SKILL.md")
BOOTSTRAP = ("bootstrap", "    bootstrap: skills/waiting/bootstrap.md")
VARIANT = ("variants.stale", "      stale: skills/waiting/stale.md")


@pytest.mark.parametrize(
    ("how", "field", "line"),
    [
        (_absolute, *PATH),
        (_dotdot, *PATH),
        (_symlink, *PATH),
        (_linked_dir, *PATH),
        (_dotdot, *BOOTSTRAP),
        (_symlink, *BOOTSTRAP),
        (_absolute, *VARIANT),
        (_linked_dir, *VARIANT),
    ],
)
def test_a_skill_file_outside_the_suite_is_refused(
    tmp_path: Path, how: Callable[[Path, Path], str], field: str, line: str
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_test"
    key.write_text(SECRET)
    suite = tmp_path / "work" / "suite"
    shutil.copytree(TINY, suite)
    target = how(suite, key)
    suite_yaml = suite / "suite.yaml"
    text = suite_yaml.read_text()
    assert line in text
    key_name = line.split(":")[0]
    suite_yaml.write_text(text.replace(line, f"{key_name}: {target}"))

    validated = evalkit_cli("cases", "validate", str(suite), "--no-references")
    assert validated.returncode == 2, validated.stdout + validated.stderr
    out = validated.stdout + validated.stderr
    assert f"skills.waiting.{field}" in out and "lies outside the suite directory" in out, out
    assert "Traceback" not in out

    runs = tmp_path / "runs"
    ran = evalkit_cli(
        "run", str(suite), "--conditions", "preloaded,self-load", "--runs-dir", str(runs),
        "--trials", "1", "--no-progress", "--backend", "threading",
    )  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert f"skills.waiting.{field}" in ran.stderr
    assert SECRET not in ran.stdout + ran.stderr
    written = [p for p in runs.rglob("*") if p.is_file()] if runs.exists() else []
    assert not any(SECRET.encode() in p.read_bytes() for p in written)


def test_a_link_that_stays_inside_the_suite_is_fine(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    (suite / "skills" / "waiting" / "alias.md").symlink_to("SKILL.md")
    suite_yaml = suite / "suite.yaml"
    text = suite_yaml.read_text().replace("waiting/SKILL.md", "waiting/alias.md")
    suite_yaml.write_text(text)
    validated = evalkit_cli("cases", "validate", str(suite), "--no-references")
    assert validated.returncode == 0, validated.stdout + validated.stderr
