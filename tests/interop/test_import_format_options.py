"""An import format declares its own options model; ``evalkit import`` offers and checks it.

A toy format ``tally`` (``case<SEP>condition<SEP>WORD`` lines) with options of its own
(``separator``, ``pass_word``, ``first_trial``) is published by a real installed distribution
and used through a real ``evalkit import`` subprocess; nothing shared (``ImportRequest``,
``import_results``' signature, the command) names its options.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import evalkit
from evalkit.errors import ConfigError
from evalkit.interop import (
    Importer,
    ImportOptions,
    ImportRequest,
    get_importer,
    import_results,
)
from evalkit.results import read_run
from tests.conftest import evalkit_cli, evalkit_process
from tests.plugin_fixtures import install_entry_points

ROOT = Path(__file__).resolve().parents[2]
PROMPTFOO = ROOT / "tests" / "fixtures" / "imports" / "promptfoo" / "results.json"
INSPECT_DIR = ROOT / "tests" / "fixtures" / "imports" / "inspect"

#: The toy format's module, as a plugin package would ship it.
TALLY_PLUGIN = '''
from pydantic import Field

from evalkit.interop import Importer, ImportOptions
from evalkit.interop._import_common import ParsedSource, SourceRow


class TallyOptions(ImportOptions):
    separator: str = ","
    """What separates the three columns of a line."""
    pass_word: str = "pass"
    """The outcome word that means passed."""
    first_trial: int = Field(default=0, ge=0)
    """The number of the first trial of each line."""


def read_tally(request):
    options = request.options_as(TallyOptions)
    rows = []
    for path in request.files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            case, condition, outcome = line.split(options.separator)
            rows.append(SourceRow(
                values={"lane": request.lane, "case_id": case, "condition": condition,
                        "trial": options.first_trial, "passed": outcome == options.pass_word},
                file=str(path), where=f"line {number}", identity=[str(path), number],
            ))
    return ParsedSource(rows=rows, suite="tally")


IMPORTER = Importer("tally", read_tally, (".tally",), "tally files", TallyOptions)
'''


@pytest.fixture
def tally_site(tmp_path: Path) -> Path:
    """A site directory holding the ``tally`` plugin, installed as a real distribution."""
    site = tmp_path / "site"
    (site / "tally_plugin").mkdir(parents=True)
    (site / "tally_plugin" / "__init__.py").write_text(TALLY_PLUGIN)
    install_entry_points(site, "tally-plugin", "evalkit.plugins",
                         "importer.tally = tally_plugin:IMPORTER\n")
    return site


def _tally_file(tmp_path: Path) -> Path:
    source = tmp_path / "scores.tally"
    source.write_text("a;none;ok\na;skill;ok\nb;none;no\nb;skill;ok\n")
    return source


@pytest.mark.slow
def test_a_plugin_formats_own_options_through_a_real_evalkit_import(
    tally_site: Path, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": f"{ROOT}:{tally_site}"}
    source, runs = _tally_file(tmp_path), tmp_path / "runs"
    done = evalkit_process(
        "import", source, "--format", "tally", "--run-id", "t", "--runs-dir", runs,
        "--format-opt", "separator=;", "--format-opt", "pass-word=ok",
        "--format-opt", "first_trial=3", "--json", env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (json.loads(done.stdout)["items"], json.loads(done.stdout)["pass_rate"]) == (4, 0.75)
    rows = read_run(runs / "t").sort_values(["case_id", "condition"])
    assert rows["passed"].tolist() == [True, True, False, True]
    assert set(rows["trial"]) == {3}, "an int option arrives as an int (validated by the model)"

    listed = evalkit_process("import", "--list-options", "tally", env=env, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert "separator (default: ,): What separates the three columns of a line." in listed.stdout
    assert "first_trial (default: 0)" in listed.stdout

    bad = evalkit_process(
        "import", source, "--format", "tally", "--run-id", "u", "--runs-dir", runs,
        "--format-opt", "first_trial=-1", env=env, timeout=300,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--format tally: option first_trial=-1: " in bad.stderr
    assert "greater than or equal to 0" in bad.stderr
    assert "evalkit import --list-options tally" in bad.stderr
    assert not (runs / "u").exists()


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch, tally_site: Path) -> Importer:
    """The ``tally`` format registered in this process with ``evalkit.register``."""
    from evalkit.interop import _import_registry

    monkeypatch.setattr(_import_registry.IMPORTERS, "registered", {})
    monkeypatch.syspath_prepend(str(tally_site))
    from tally_plugin import IMPORTER  # type: ignore[import-not-found]

    evalkit.register("importer", "tally", IMPORTER)
    assert isinstance(IMPORTER, Importer)
    return IMPORTER


def test_an_unknown_option_names_the_format_the_option_and_the_fix(
    tally: Importer, tmp_path: Path
) -> None:
    source = _tally_file(tmp_path)
    done = evalkit_cli("import", source, "--format", "tally", "--run-id", "x",
                       "--runs-dir", tmp_path / "runs", "--format-opt", "colour=red")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--format tally has no option 'colour'" in done.stderr
    assert "its options: separator, pass_word, first_trial" in done.stderr
    assert "evalkit import --list-options tally" in done.stderr
    done = evalkit_cli("import", source, "--format", "tally", "--run-id", "x",
                       "--runs-dir", tmp_path / "runs", "--format-opt", "separator")
    assert done.returncode == 2 and "--format-opt 'separator': write KEY=VALUE" in done.stderr
    done = evalkit_cli("import", source, "--format", "tally", "--run-id", "x",
                       "--runs-dir", tmp_path / "runs", "--condition-from", "model")
    assert done.returncode == 2
    assert ("--condition-from applies to inspect, promptfoo, harbor, terminal-bench imports, "
            "not --format tally") in done.stderr
    assert not (tmp_path / "runs" / "x").exists()


def test_options_in_python_as_a_mapping_or_as_the_model(tally: Importer, tmp_path: Path) -> None:
    source, runs = _tally_file(tmp_path), tmp_path / "runs"
    by_mapping = import_results(source, "tally", "m", runs_dir=runs,
                                options={"separator": ";", "pass_word": "ok"})
    model = tally.options(separator=";", pass_word="no")
    by_model = import_results(source, "tally", "o", runs_dir=runs, options=model)
    assert (by_mapping.pass_rate, by_model.pass_rate) == (0.75, 0.25)
    with pytest.raises(ConfigError, match="takes TallyOptions options, not ImportOptions"):
        import_results(source, "tally", "p", runs_dir=runs, options=ImportOptions())
    with pytest.raises(ConfigError, match="--format tally has no option 'colour'") as info:
        import_results(source, "tally", "p", runs_dir=runs, options={"colour": "x"})
    assert info.value.setting == "colour"


def test_nothing_shared_names_a_formats_option() -> None:
    """The request and the signature know no format: a new option is one field of a model."""
    request_fields = set(ImportRequest.__dataclass_fields__)
    assert request_fields == {"files", "listed", "lane", "options"}
    parameters = set(inspect.signature(import_results).parameters)
    builtin_options = {
        field for name in evalkit.plugin_names("importer")[:7]
        for field in get_importer(name).options.model_fields
    }
    # the built-in formats' options stay as flat keywords of the front door, nothing more
    assert parameters & builtin_options == {
        "condition_from", "scorer", "pass_threshold", "timeout_policy"
    }


def test_existing_flags_and_format_opt_are_one_option(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    flag = evalkit_cli("import", INSPECT_DIR, "--format", "inspect", "--run-id", "f",
                       "--runs-dir", runs, "--condition-from", "task_arg:skill",
                       "--scorer", "strict")
    opt = evalkit_cli("import", INSPECT_DIR, "--format", "inspect", "--run-id", "o",
                      "--runs-dir", runs, "--format-opt", "condition-from=task_arg:skill",
                      "--format-opt", "scorer=strict")
    default = evalkit_cli("import", INSPECT_DIR, "--format", "inspect", "--run-id", "d",
                          "--runs-dir", runs, "--condition-from", "task_arg:skill")
    assert flag.returncode == opt.returncode == default.returncode == 0, flag.stderr + opt.stderr
    columns = ["case_id", "condition", "trial", "passed", "score"]
    by_flag, by_opt, by_default = (
        read_run(runs / run)[columns].sort_values(columns).reset_index(drop=True)
        for run in ("f", "o", "d")
    )
    assert by_flag.equals(by_opt), "a flag and --format-opt set one option"
    assert not by_flag.equals(by_default), "the scorer option reached the reader"
    both = evalkit_cli("import", PROMPTFOO, "--format", "promptfoo", "--run-id", "b",
                       "--runs-dir", runs, "--condition-from", "provider",
                       "--format-opt", "condition_from=prompt")
    assert both.returncode == 2 and "given twice" in both.stderr
    bad = evalkit_cli("import", PROMPTFOO, "--format", "harbor", "--run-id", "h",
                      "--runs-dir", runs, "--pass-threshold", "1.5")
    assert bad.returncode == 2
    assert "--format harbor: option pass_threshold=1.5: " in bad.stderr
    assert "less than or equal to 1" in bad.stderr


def test_help_lists_every_builtin_formats_options() -> None:
    done = evalkit_cli("import", "--help")
    assert done.returncode == 0
    assert "harbor: condition_from, pass_threshold, timeout_policy" in done.stdout
    assert "inspect: condition_from, scorer" in done.stdout
    assert "--format-opt KEY=VALUE" in done.stdout
