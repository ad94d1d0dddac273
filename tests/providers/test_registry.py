"""The provider registry: lazy built-ins, one-name overrides, plugins, canonical settings."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml

import evalkit
from evalkit.errors import ConfigError
from evalkit.providers import (
    BUILTIN_PROVIDERS,
    OUTCOME,
    RUNTIME,
    ProviderSettings,
    _registry,
    cached_provider,
    canonical_settings,
    create_provider,
    provider_names,
)
from tests.conftest import evalkit_process

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "fixtures" / "plugins" / "evalkit-echo"


@pytest.fixture
def clean_registry() -> Iterator[None]:
    saved = dict(_registry.PROVIDERS.registered)
    try:
        yield
    finally:
        _registry.PROVIDERS.registered.clear()
        _registry.PROVIDERS.registered.update(saved)


def test_registering_one_name_keeps_every_other_builtin(clean_registry: None) -> None:
    before = provider_names()
    assert set(BUILTIN_PROVIDERS) <= set(before)
    seen: list[dict[str, Any]] = []

    def mine(settings: Mapping[str, Any]) -> Any:
        seen.append(dict(settings))
        return "mine"

    evalkit.register("provider", "simulated", mine)
    assert provider_names() == before  # every built-in is still there, "simulated" once
    assert create_provider("simulated", {"x": 1}) == "mine"
    assert seen == [{"x": 1}]
    other = create_provider("replay", {"path": __file__})
    assert type(other).__name__ == "ReplayProvider"  # the other built-ins are untouched
    evalkit.register("provider", "my_agent", mine)
    assert provider_names() == tuple(sorted({*before, "my_agent"}))


def test_registry_module_imports_no_provider() -> None:
    tree = ast.parse(Path(_registry.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {m for m in imported if m and m.startswith("evalkit")} == {
        "evalkit._registry", "evalkit.providers._protocol", "evalkit.providers._settings"}


def test_a_builtin_is_imported_only_when_asked_for() -> None:
    code = (
        "import sys, evalkit.providers as p; "
        "print('evalkit.providers._simulated' in sys.modules); "
        "p.provider_names(); print('evalkit.providers._simulated' in sys.modules); "
        "p.create_provider('simulated'); print('evalkit.providers._simulated' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["False", "False", "True"]


def test_unknown_and_broken_names_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="providers.*simulated.*but 'nope' was passed"):
        create_provider("nope")
    with pytest.raises(ConfigError, match="but 'no_such_module:make' was passed"):
        create_provider("no_such_module:make")  # a bare word: a mistyped name
    with pytest.raises(ConfigError, match="cannot import 'no_such.module:make'"):
        create_provider("no_such.module:make")


def test_builtin_table_points_at_real_factories() -> None:
    for name, spec in BUILTIN_PROVIDERS.items():
        assert callable(_registry.PROVIDERS.load(spec, name)), name


class _Marked(ProviderSettings):
    mapping: Annotated[dict[str, int], OUTCOME] = {}
    label: Annotated[str, RUNTIME] = ""


def test_cached_provider_accepts_mapping_values_and_reuses_instances(
    clean_registry: None,
) -> None:
    built: list[_Marked] = []

    class _Provider:
        name = "marked"

        def __init__(self, settings: _Marked) -> None:
            self.settings = settings
            built.append(settings)

    def factory(settings: Mapping[str, Any]) -> Any:
        return _Provider(_Marked.model_validate(dict(settings)))

    evalkit.register("provider", "marked", factory)
    raw = {"mapping": {"b": 2, "a": 1}, "label": "x"}
    provider = create_provider("marked", raw)
    canonical = canonical_settings(provider, raw)
    assert canonical == {"label": "x", "mapping": {"a": 1, "b": 2}}
    pairs = tuple(sorted(canonical.items()))
    first = cached_provider("marked", pairs)
    again = cached_provider("marked", tuple(reversed(pairs)))
    assert first is again and getattr(first, "settings", None) == provider.settings
    assert built[-1].mapping == {"a": 1, "b": 2}


def _install_plugin(tmp_path: Path) -> Path:
    """pip-install the echo plugin (entry point provider.echo of evalkit.plugins) into a dir."""
    source = tmp_path / "plugin-src"
    shutil.copytree(PLUGIN, source)
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(source)],
        check=True, capture_output=True, text=True,
    )
    assert (target / "evalkit_echo" / "__init__.py").is_file()
    assert list(target.glob("evalkit_echo-*.dist-info/entry_points.txt"))
    return target


@pytest.mark.slow
def test_an_installed_plugin_runs_with_mapping_settings_on_loky_workers(
    tmp_path: Path, tiny_suite: Path, runs_dir: Path,
) -> None:
    site = _install_plugin(tmp_path)
    pythonpath = {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env = {**os.environ, **pythonpath}
    names = subprocess.run(
        [sys.executable, "-c",
         "from evalkit.providers import provider_names; print(','.join(provider_names()))"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip().split(",")
    assert "echo" in names and set(BUILTIN_PROVIDERS) <= set(names)
    spec = yaml.safe_load((tiny_suite / "suite.yaml").read_text())
    # a mapping-typed setting, only expressible in suite.yaml
    answers = {"sum-numbers": "The sum is 5050.", "wait-server": "Just sleep 10."}
    spec["providers"] = {"echo": {"answers": answers, "note": "hi"}}
    (tiny_suite / "suite.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))

    def run(run_id: str) -> dict[str, Any]:
        args: list[str | Path] = [
            "run", tiny_suite, "--provider", "echo", "--backend", "loky", "--concurrency", "2",
            "--trials", "2", "--no-progress", "--runs-dir", runs_dir, "--run-id", run_id, "--json",
            "--conditions", "none", "--case", "sum-numbers", "--case", "wait-server",
        ]
        done = evalkit_process(*args, env=pythonpath, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    summary = run("echo")
    assert (summary["items"], summary["errors"]) == (4, 0)
    rows = evalkit.read_run(runs_dir / "echo")
    assert set(rows.status) == {"ok"} and set(rows.provider) == {"echo"}
    passed = rows.groupby("case_id").passed.all().to_dict()
    assert passed == {"sum-numbers": True, "wait-server": False}
    manifest = json.loads((runs_dir / "echo" / "manifest.json").read_text())
    assert manifest["providers"][0]["settings"]["answers"] == answers  # an object, not a string
    # a runtime setting changes no item hash: every outcome comes from the cache
    spec["providers"]["echo"]["note"] = "other"
    (tiny_suite / "suite.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    run("echo2")
    assert evalkit.read_run(runs_dir / "echo2").cache_hit.all()
    # an outcome setting inside the mapping changes them all
    spec["providers"]["echo"]["answers"] = {**answers, "wait-server": "Poll with a timeout."}
    (tiny_suite / "suite.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    run("echo3")
    rerun = evalkit.read_run(runs_dir / "echo3")
    assert not rerun.cache_hit.any()
    assert rerun.groupby("case_id").passed.all().to_dict() == {"sum-numbers": True,
                                                               "wait-server": True}
