"""Suite formats are a plugin kind: a new one is added as a provider is, and the CLI offers it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import evalkit
from evalkit._options import Options
from evalkit._registry import ENTRY_POINT_GROUP, registry
from evalkit.cases import SuiteFormat, SuiteImported, import_suite, load_suite, suite_format_names
from tests.conftest import TINY, evalkit_cli
from tests.plugin_fixtures import install_entry_points


class LinesOptions(Options):
    """Options of the toy format."""

    category: str = "should-not-trigger"
    """The category of every case."""
    prefix: str = "line"
    """Case ids are PREFIX-N."""


class LinesFormat(SuiteFormat):
    """A toy format: a ``.lines`` file, one prompt per line, each a prompt-lane case."""

    name = "lines"
    summary = "one prompt per line"
    options = LinesOptions

    def detect(self, source: Path) -> bool:
        return source.suffix == ".lines"

    def write(self, source: Path, output: Path, options: Any) -> SuiteImported:
        prompts = [line for line in source.read_text().splitlines() if line.strip()]
        cases = [
            {"id": f"{options.prefix}-{n}", "category": options.category, "prompt": prompt,
             "expected_patterns": ["."]}
            for n, prompt in enumerate(prompts, start=1)
        ]
        output.write_text(yaml.safe_dump({"cases": cases}), encoding="utf-8")
        return SuiteImported(output, f"wrote {len(cases)} cases to {output}", {"cases": len(cases)})


LINES = LinesFormat()


@pytest.fixture
def clean_formats() -> Iterator[None]:
    """The suite-format registrations as they were before the test."""
    formats = registry("suite_format")
    saved = dict(formats.registered)
    formats.reload_plugins()
    yield
    formats.registered.clear()
    formats.registered.update(saved)
    formats.reload_plugins()


def _suite_with(tmp_path: Path) -> tuple[Path, Path]:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    source = tmp_path / "questions.lines"
    source.write_text("What is 2 + 2?\nName a prime number.\n", encoding="utf-8")
    return suite, source


def test_a_registered_format_imports_through_the_command_line(
    tmp_path: Path, clean_formats: None
) -> None:
    evalkit.register("suite_format", "lines", LINES)
    assert suite_format_names()[:2] == ("skill-creator", "table") and "lines" in (
        suite_format_names()
    )
    suite, source = _suite_with(tmp_path)
    out = suite / "cases" / "questions.yaml"
    done = evalkit_cli(
        "cases", "import", source, "-o", out, "--from-opt", "prefix=q", "--json"
    )  # --from left out: the format that recognises the file
    assert done.returncode == 0, done.stderr
    assert {c.id for c in load_suite(suite).cases} >= {"q-1", "q-2"}
    with pytest.raises(evalkit.errors.ConfigError, match="no_such"):
        import_suite(source, out, "lines", {"no_such": 1})


def test_an_installed_package_publishes_a_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_formats: None
) -> None:
    site = tmp_path / "site"
    install_entry_points(site, "lines-format", ENTRY_POINT_GROUP,
                         f"suite_format.lines-ep = {__name__}:LINES\n")
    monkeypatch.syspath_prepend(str(site))
    registry("suite_format").reload_plugins()
    suite, source = _suite_with(tmp_path)
    done = evalkit_cli("cases", "import", source, "-o", suite / "cases" / "q.yaml",
                       "--from", "lines-ep", "--from-opt", "category=should-not-trigger")
    assert done.returncode == 0, done.stderr
    assert "wrote 2 cases" in done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "nope"], "--from / source_format must be one of the suite_formats "
                             "skill-creator, table"),
        (["--from", "os:system"], "is not declared a suite_format plugin"),
        (["--from", "table", "--stale", "x"], "--stale is not an option of the table format"),
        (["--from", "table", "--from-opt", "colour=red"], "colour"),
        (["--from", "table", "--from-opt", "noequals"], "write KEY=VALUE"),
        (["--from", "table"], "a table needs --prompt-col"),
    ],
)
def test_a_bad_format_or_option_is_exit_2_naming_it(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    source = tmp_path / "t.csv"
    source.write_text("prompt\nhello\n", encoding="utf-8")
    done = evalkit_cli("cases", "import", source, "-o", tmp_path / "out.yaml", *argv)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.yaml").exists()


def test_the_built_in_formats_are_entries_of_the_kind() -> None:
    formats = registry("suite_format")
    for name in ("skill-creator", "table"):
        found = formats.get(name)
        assert isinstance(found, SuiteFormat) and found.name == name
        assert issubclass(found.options, Options)
