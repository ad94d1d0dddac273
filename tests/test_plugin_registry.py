"""evalkit's one plugin registry: kinds, one entry-point group, one call, one spec, one error."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit._registry import ENTRY_POINT_GROUP, PLUGIN_KINDS, Registry, registry
from evalkit.errors import ConfigError, InputError, UnknownPluginError
from evalkit.interop import Importer, import_results
from evalkit.optimize import OptimizerContext, Proposal, load_optimizer
from evalkit.providers import Provider, create_provider
from tests.conftest import evalkit_cli
from tests.plugin_fixtures import install_entry_points, read_pairs


def _text(found: Any, spec: str, name: str) -> str:
    if not isinstance(found, str):
        raise ConfigError(f"--thing {name}: '{spec}' is not a string")
    return found


def _things() -> Registry[str]:
    return Registry(
        kind="thing",
        option="--thing",
        field="thing",
        builtins={"sep": "os:sep", "pathsep": "os:pathsep"},
        validate=_text,
        bases=(str,),  # a string is of this kind: an instance of its base
    )


# ---- plugins of each kind, importable by spec -----------------------------------------------


@evalkit.plugin("provider")
def create_echo(settings: Mapping[str, Any]) -> Provider:
    """A provider plugin: the simulated provider under another name."""
    return create_provider("simulated", settings)


PAIRS = Importer("pairs", read_pairs, (".pairs",), "pairs files")


class _Fixed:
    def __init__(self, text: str) -> None:
        self.name = f"fixed:{text}"
        self.text = text

    def propose(self, context: OptimizerContext) -> Proposal:
        return Proposal(text=self.text)


@evalkit.plugin("optimizer")
def make_fixed(argument: str, settings: Mapping[str, Any]) -> _Fixed:
    """An optimizer plugin: proposes ``argument`` as the new skill text."""
    return _Fixed(argument)


@pytest.fixture
def clean_plugins() -> Iterator[None]:
    """Every kind's registrations and entry points as they were before the test."""
    kinds = {kind: registry(kind) for kind in PLUGIN_KINDS}
    saved = {kind: dict(found.registered) for kind, found in kinds.items()}
    for found in kinds.values():
        found.reload_plugins()
    yield
    for kind, found in kinds.items():
        found.registered.clear()
        found.registered.update(saved[kind])
        found.reload_plugins()


def _pairs_file(tmp_path: Path) -> Path:
    source = tmp_path / "r.pairs"
    source.write_text("a none fail\na skill pass\nb none pass\n")
    return source


# ---- the registry shape ----------------------------------------------------------------------


def test_precedence_order_and_lazy_builtins() -> None:
    things = _things()
    assert things.names() == ("sep", "pathsep")
    assert things.get("sep") == os.sep
    things.register("sep", "|")
    things.register("dash", "-")
    assert things.get("sep") == "|" and things.names() == ("sep", "pathsep", "dash")
    assert things.find("nope") is None


def test_one_error_for_an_unknown_name_and_for_a_bad_spec() -> None:
    things = _things()
    with pytest.raises(UnknownPluginError, match="--thing / thing must be one of the things "
                       "sep, pathsep, but 'nope' was passed"):
        things.get("nope")
    with pytest.raises(ConfigError, match="--thing x: cannot import 'no_such_module:y'"):
        things.load("no_such_module:y", "x")
    with pytest.raises(ConfigError, match="--thing x: 'os:getcwd' is a "
                       "builtin_function_or_method that is not declared a thing plugin"):
        things.load("os:getcwd", "x")
    with pytest.raises(ConfigError, match="--thing x: 'getcwd' is not a string"):
        things.register("x", os.getcwd)  # type: ignore[arg-type]


def test_every_kind_is_one_registry_under_one_group() -> None:
    kinds = {kind: registry(kind) for kind in PLUGIN_KINDS}
    assert set(kinds) == {"provider", "importer", "optimizer", "suite_format", "compare_metric"}
    assert all(isinstance(found, Registry) for found in kinds.values())
    assert {found.kind for found in kinds.values()} == set(kinds)
    assert {found.group for found in kinds.values()} == {ENTRY_POINT_GROUP}
    with pytest.raises(ConfigError, match="unknown plugin kind 'scorer'; kinds: provider"):
        registry("scorer")


@pytest.mark.parametrize(
    ("call", "flag"),
    [
        (lambda: create_provider("nope"), "--provider / provider"),
        (lambda: import_results(Path("x"), "nope", "r"), "--format / format"),
        (lambda: load_optimizer("nope"), "--optimizer / optimizer"),
        (lambda: load_optimizer("nope:arg"), "--optimizer / optimizer"),
    ],
)
def test_an_unknown_name_is_the_same_error_for_every_kind(call: Any, flag: str) -> None:
    with pytest.raises(UnknownPluginError) as caught:
        call()
    message = str(caught.value)
    assert message.startswith(f"{flag} must be one of the {caught.value.kind}s ")
    assert "but 'nope' was passed" in message
    assert "evalkit.register(" in message and "'evalkit.plugins'" in message
    assert caught.value.available == evalkit.plugin_names(caught.value.kind)
    assert isinstance(caught.value, InputError)  # the CLI exits with 2


def test_an_unknown_name_exits_2_on_the_command_line(tmp_path: Path) -> None:
    done = evalkit_cli("import", str(_pairs_file(tmp_path)), "--format", "pears",
                       "--run-id", "x", "--runs-dir", tmp_path / "runs")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--format / format must be one of the importers csv, jsonl" in done.stderr
    assert "'pears' was passed" in done.stderr


# ---- one registration call -------------------------------------------------------------------


def test_one_call_registers_every_kind(tmp_path: Path, clean_plugins: None) -> None:
    evalkit.register("provider", "echo", create_echo)
    evalkit.register("importer", "pears", PAIRS)  # registered under its own name
    evalkit.register("optimizer", "fixed", make_fixed)
    assert "echo" in evalkit.plugin_names("provider")
    assert evalkit.plugin_names("importer")[-1] == "pears"
    assert "fixed" in evalkit.plugin_names("optimizer")
    assert create_provider("echo", {"lift": 0.1}).name == "simulated"
    imported = import_results(_pairs_file(tmp_path), "pears", "p", runs_dir=tmp_path / "runs")
    assert (imported.items, imported.pass_rate) == (3, pytest.approx(2 / 3))
    proposed = load_optimizer("fixed:# new")
    assert isinstance(proposed, _Fixed) and proposed.text == "# new"


def test_registration_refuses_what_is_not_a_plugin_of_the_kind(clean_plugins: None) -> None:
    with pytest.raises(ConfigError, match="--format pears: 'str' is a str, not an"):
        evalkit.register("importer", "pears", "evalkit.interop:Importer")
    with pytest.raises(ConfigError, match="--provider echo: 'int' is not callable"):
        evalkit.register("provider", "echo", 3)
    assert "pears" not in evalkit.plugin_names("importer")
    assert "echo" not in evalkit.plugin_names("provider")


# ---- one spec syntax -------------------------------------------------------------------------


def test_package_module_attribute_names_a_plugin_of_every_kind(tmp_path: Path) -> None:
    assert create_provider(f"{__name__}:create_echo").name == "simulated"
    imported = import_results(_pairs_file(tmp_path), f"{__name__}:PAIRS", "p",
                              runs_dir=tmp_path / "runs")
    assert imported.items == 3
    proposed = load_optimizer(f"{__name__}:make_fixed:# from a spec")
    assert isinstance(proposed, _Fixed) and proposed.text == "# from a spec"


def test_a_spec_of_a_module_that_exists_but_lacks_the_attribute_says_so() -> None:
    with pytest.raises(ConfigError, match=f"--provider {__name__}:nope: cannot import"):
        create_provider(f"{__name__}:nope")
    with pytest.raises(ConfigError, match=f"--optimizer {__name__}: cannot import"):
        load_optimizer(f"{__name__}:nope:x")


# ---- one entry-point group -------------------------------------------------------------------


def test_one_entry_point_group_publishes_every_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_plugins: None
) -> None:
    site = tmp_path / "site"
    install_entry_points(site, "every-kind", ENTRY_POINT_GROUP, (
        f"provider.echo-ep = {__name__}:create_echo\n"
        f"importer.pairs-ep = {__name__}:PAIRS\n"
        f"optimizer.fixed-ep = {__name__}:make_fixed\n"
    ))
    monkeypatch.syspath_prepend(str(site))
    for kind in PLUGIN_KINDS:
        registry(kind).reload_plugins()
    assert "echo-ep" in evalkit.plugin_names("provider")
    assert "pairs-ep" in evalkit.plugin_names("importer")
    assert "fixed-ep" in evalkit.plugin_names("optimizer")
    assert create_provider("echo-ep").name == "simulated"
    imported = import_results(_pairs_file(tmp_path), "pairs-ep", "p", runs_dir=tmp_path / "r")
    assert imported.items == 3
    proposed = load_optimizer("fixed-ep:# published")
    assert isinstance(proposed, _Fixed) and proposed.text == "# published"


def test_only_the_one_group_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_plugins: None
) -> None:
    site = tmp_path / "site"
    install_entry_points(site, "old-provider", "evalkit.providers",
                         f"echo-old = {__name__}:create_echo\n")
    install_entry_points(site, "old-importer", "evalkit.importers",
                         f"pairs-old = {__name__}:PAIRS\n")
    install_entry_points(site, "old-optimizer", "evalkit.optimizers",
                         f"fixed-old = {__name__}:make_fixed\n")
    monkeypatch.syspath_prepend(str(site))
    for kind in PLUGIN_KINDS:
        registry(kind).reload_plugins()
    # Per-kind groups were never released: a package publishing in them adds nothing.
    assert "echo-old" not in evalkit.plugin_names("provider")
    assert "pairs-old" not in evalkit.plugin_names("importer")
    assert "fixed-old" not in evalkit.plugin_names("optimizer")
