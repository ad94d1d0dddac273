"""A shared run cannot run a program: run data never chooses code, a spec names only a plugin.

The attack: a run directory from someone else. Its manifest's ``suite_path`` points to a suite
shipped inside the run, whose ``judge:`` is ``subprocess:Popen`` with settings that make
``/bin/bash payload.sh`` (the payload writes a marker and dumps the environment, where a fake
``OPENAI_API_KEY`` is set), and whose ``pairwise: judge:`` names a module that writes a marker
as it is imported (``evil_plant``, importable from the working directory and ``PYTHONPATH``).
The run's stored pairwise comparison records ``subprocess:Popen`` as its judge too. Every
command a user runs on such a run is run for real, as a child process, and must leave no
marker: the ones that call a judge stop with exit 2 naming the recorded judge and the flags
that ask for it; the ones that only read import nothing the run names.

And ``evalkit run`` on a suite naming ``subprocess:Popen`` (its provider or its judge), or a
plain function nobody declared a plugin, is refused (exit 2) before anything is called, while
a declared plugin still runs.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.runner import RunConfig, run
from tests.conftest import DEMO, ROOT, CliResult, evalkit_cli, evalkit_process

FAKE_KEY = "sk-proj-FAKEKEYFORTHEATTACKTEST0123456789abcdef"
DEMO_JUDGE = """judge:
  provider: simulated
  settings: {error_rate: 0.05, seed: 7}
"""


@dataclass(frozen=True)
class Hostile:
    """A runs directory holding an honest baseline and a hostile candidate run."""

    runs: Path
    marks: Path
    plant: Path

    def markers(self) -> list[str]:
        """Every marker a payload or a planted import left (none, if the attack failed)."""
        return sorted(p.name for p in self.marks.iterdir())

    def cli(self, *args: str | Path) -> CliResult:
        """``python -m evalkit ARGS`` in the runs directory, the plant importable, a key set."""
        env = {"OPENAI_API_KEY": FAKE_KEY,
               "PYTHONPATH": os.pathsep.join([str(ROOT), str(self.plant)])}
        return evalkit_process(*args, "--runs-dir", self.runs, cwd=self.runs, env=env,
                               timeout=300)


def _write_plant(plant: Path, marks: Path) -> None:
    """``evil_plant``: importing it leaves a marker (so does calling its factory)."""
    plant.mkdir(parents=True, exist_ok=True)
    (plant / "evil_plant.py").write_text(
        "import os, pathlib\n"
        f"pathlib.Path({str(marks / 'imported')!r}).write_text(os.environ.get("
        "'OPENAI_API_KEY', ''))\n"
        "def create(settings):\n"
        f"    pathlib.Path({str(marks / 'called')!r}).touch()\n"
    )


def _hostile_suite(run_dir: Path, marks: Path) -> Path:
    """A copy of the demo suite inside the run, its judges chosen by the attacker."""
    payload = run_dir / "payload.sh"
    payload.write_text(f"#!/bin/bash\ntouch {marks / 'payload-ran'}\nenv > {marks / 'env'}\n")
    payload.chmod(0o755)
    suite = run_dir / "suite"
    shutil.copytree(DEMO, suite)
    text = (suite / "suite.yaml").read_text()
    assert DEMO_JUDGE in text, "the demo suite's judge block moved: update the test"
    hostile = (
        "judge:\n"
        "  provider: 'subprocess:Popen'\n"
        f"  settings: {{'/bin/bash': 1, '{payload}': 1}}\n"
        "pairwise:\n"
        "  judge: {provider: 'evil_plant:create'}\n"
    )
    (suite / "suite.yaml").write_text(text.replace(DEMO_JUDGE, hostile))
    return suite


def _label_everything(sheet: Path) -> None:
    with sheet.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        row["label"] = "1"
    with sheet.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    root = tmp_path_factory.mktemp("round-five")
    runs, marks, plant = root / "runs", root / "marks", root / "plant"
    marks.mkdir()
    for run_id, seed in (("base", 1), ("cand", 2)):
        run(DEMO, RunConfig(runs_dir=runs, run_id=run_id, progress=False, trials=1, seed=seed,
                            lanes=("prompt",), conditions=("none", "preloaded")))
    # an honest pairwise comparison and its blind labelling sheet, made before the tampering
    compared = evalkit_cli("compare", "base", "cand", "--pairwise", "--runs-dir", str(runs))
    assert compared.returncode == 0, compared.stderr
    sheet = root / "pairs.csv"
    sampled = evalkit_cli("judge", "sample", "cand", "--pairwise", "-n", "20", "-o", str(sheet),
                          "--runs-dir", str(runs))
    assert sampled.returncode == 0, sampled.stderr
    _label_everything(sheet)
    # the attacker's edits: the manifest points into the run, the stored record names Popen
    cand = runs / "cand"
    suite = _hostile_suite(cand, marks)
    manifest = json.loads((cand / "manifest.json").read_text())
    manifest["suite_path"] = str(suite)
    (cand / "manifest.json").write_text(json.dumps(manifest))
    for stored in (cand / "pairwise").glob("*.json"):
        data = json.loads(stored.read_text())
        data["judge"].update(provider="subprocess:Popen",
                             settings={"/bin/bash": 1, str(cand / "payload.sh"): 1})
        stored.write_text(json.dumps(data))
    _write_plant(plant, marks)
    shutil.copy(plant / "evil_plant.py", runs / "evil_plant.py")  # in the working directory
    shutil.copy(plant / "evil_plant.py", cand / "evil_plant.py")  # and in the run itself
    return Hostile(runs, marks, plant)


@pytest.fixture
def hostile(hostile_runs: Hostile) -> Hostile:
    """The hostile runs, with no marker left by an earlier test."""
    for mark in hostile_runs.marks.iterdir():
        mark.unlink()
    return hostile_runs


def _refused(done: CliResult, *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


# ---- the commands that call a judge stop, naming the recorded one -------------------------


def test_compare_pairwise_never_imports_the_judge_of_the_runs_suite(hostile: Hostile) -> None:
    done = hostile.cli("compare", "base", "cand", "--pairwise")
    _refused(done, "names the judge evil_plant:create", "--judge-provider evil_plant:create",
             "--suite PATH", "suite_path")
    assert hostile.markers() == []


def test_judge_run_never_starts_the_judge_of_the_runs_suite(hostile: Hostile) -> None:
    done = hostile.cli("judge", "cand")
    _refused(done, "names the judge subprocess:Popen", "--judge-provider subprocess:Popen",
             "--suite PATH")
    assert hostile.markers() == []
    assert not list(hostile.runs.glob("cand-judged-*")), "nothing is written"


def test_the_pairwise_probe_never_starts_the_judge_a_stored_record_names(
    hostile: Hostile,
) -> None:
    done = hostile.cli("judge", "calibrate", "cand", "--labels",
                       hostile.runs.parent / "pairs.csv", "--pairwise")
    _refused(done, "recorded in its stored comparisons", "names the judge subprocess:Popen",
             "--judge-provider subprocess:Popen")
    assert hostile.markers() == []


def test_naming_the_recorded_spec_yourself_is_still_refused_as_no_plugin(
    hostile: Hostile,
) -> None:
    done = hostile.cli("judge", "cand", "--judge-provider", "subprocess:Popen")
    _refused(done, "'subprocess:Popen' is a class that is not declared a provider plugin")
    assert hostile.markers() == []


def test_the_users_own_judge_still_judges_the_shared_run(hostile: Hostile) -> None:
    done = hostile.cli("compare", "base", "cand", "--pairwise", "--judge-provider", "simulated",
                       "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["judge"]["provider"] == "simulated"
    assert hostile.markers() == []


# ---- the commands that only read import nothing the run names ------------------------------


READ_ONLY: Sequence[tuple[str, ...]] = (
    ("compare", "base", "cand"),
    ("compare", "cand", "--conditions", "none,preloaded", "--json"),
    ("lift", "cand"),
    ("flips", "base", "cand"),
    ("flips", "cand", "--json"),
    ("explain", "cand", "--case", "shell-strict-mode-header", "--baseline", "base"),
    ("gate", "--baseline", "base", "--candidate", "cand"),
    ("gate", "--baseline", "base", "--candidate", "cand", "--pairwise"),
)


@pytest.mark.parametrize("command", READ_ONLY, ids=[" ".join(c) for c in READ_ONLY])
def test_a_read_only_command_imports_nothing_the_run_names(
    hostile: Hostile, command: tuple[str, ...]
) -> None:
    done = hostile.cli(*command)
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    assert hostile.markers() == []


@pytest.mark.slow
def test_the_report_of_a_hostile_run_imports_nothing_it_names(hostile: Hostile) -> None:
    out = hostile.runs.parent / "report.html"
    done = hostile.cli("report", "cand", "--baseline", "base", "--kind", "compare", "-o", out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.is_file()
    assert hostile.markers() == []


VIEWER_SCRIPT = """
import sys, urllib.request
from http.cookiejar import CookieJar
import evalkit
server = evalkit.view(sys.argv[1])
try:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    opener.open(server.url, timeout=60).read()
    base = f"http://127.0.0.1:{server.port}"
    for path in ("/api/runs", "/run/cand", "/compare?baseline=base&candidate=cand",
                 "/api/compare?baseline=base&candidate=cand"):
        with opener.open(base + path, timeout=120) as response:
            print(path, response.status, len(response.read()))
finally:
    server.stop()
"""


def test_the_viewer_of_a_hostile_run_imports_nothing_it_names(hostile: Hostile) -> None:
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(hostile.plant)])}
    done = subprocess.run([sys.executable, "-c", VIEWER_SCRIPT, str(hostile.runs)],
                          capture_output=True, text=True, cwd=hostile.runs, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line.split()[1] for line in done.stdout.splitlines()] == ["200"] * 4
    assert hostile.markers() == []


# ---- evalkit run: a suite's provider or judge must be a plugin of its kind --------------------


def _suite(tmp_path: Path, *, provider: str | None = None, settings: str = "",
           judge: str | None = None) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(DEMO, suite)
    text = (suite / "suite.yaml").read_text()
    if judge is not None:
        text = text.replace(DEMO_JUDGE, f"judge:\n  provider: '{judge}'\n  settings: {settings}\n")
    if provider is not None:
        text = text.replace("defaults:\n", f"providers:\n  '{provider}': {settings}\n"
                            f"defaults:\n  provider: '{provider}'\n", 1)
    (suite / "suite.yaml").write_text(text)
    return suite


def _run(suite: Path, tmp_path: Path, *extra: str, plant: Path | None = None) -> CliResult:
    path = [str(ROOT)] + ([str(plant)] if plant else [])
    env = {"OPENAI_API_KEY": FAKE_KEY, "PYTHONPATH": os.pathsep.join(path)}
    return evalkit_process("run", suite, "--runs-dir", tmp_path / "runs", "--run-id", "r",
                           "--lane", "prompt", "--conditions", "none", "--trials", "1",
                           "--no-progress", *extra, cwd=tmp_path, env=env, timeout=300)


def test_run_refuses_a_suite_whose_provider_is_subprocess_popen(tmp_path: Path) -> None:
    marker = tmp_path / "touched"
    suite = _suite(tmp_path, provider="subprocess:Popen",
                   settings=f"{{'/bin/touch': 1, '{marker}': 1}}")
    done = _run(suite, tmp_path)
    _refused(done, "--provider subprocess:Popen", "'subprocess:Popen' is a class that is not "
             "declared a provider plugin")
    assert not marker.exists()


def test_run_refuses_a_suite_whose_judge_is_subprocess_popen(tmp_path: Path) -> None:
    marker = tmp_path / "touched"
    suite = _suite(tmp_path, judge="subprocess:Popen",
                   settings=f"{{'/bin/touch': 1, '{marker}': 1}}")
    done = _run(suite, tmp_path)
    _refused(done, "judge 'subprocess:Popen'", "not declared a provider plugin")
    assert not marker.exists()


def test_run_refuses_a_judge_that_no_planned_case_needs(tmp_path: Path) -> None:
    marker = tmp_path / "touched"
    suite = _suite(tmp_path, judge="subprocess:Popen",
                   settings=f"{{'/bin/touch': 1, '{marker}': 1}}")
    done = _run(suite, tmp_path, "--case", "shell-quote-filenames")  # no expectations
    _refused(done, "judge 'subprocess:Popen'")
    assert not marker.exists()


@pytest.mark.parametrize("spec", ["os:system", "builtins:eval", "shutil:rmtree"])
def test_a_spec_of_a_plain_callable_is_refused_naming_spec_and_kind(
    tmp_path: Path, spec: str
) -> None:
    done = _run(DEMO, tmp_path, "--provider", spec)
    _refused(done, f"--provider {spec}: '{spec}' is a builtin_function_or_method"
             if spec != "shutil:rmtree" else f"--provider {spec}: '{spec}' is a function",
             "not declared a provider plugin", "@evalkit.plugin('provider')")


@pytest.mark.slow
def test_an_undeclared_factory_is_never_called_and_a_declared_one_runs(tmp_path: Path) -> None:
    plant = tmp_path / "plant"
    plant.mkdir()
    marker = tmp_path / "called"
    body = (
        "from evalkit.providers import create_provider\n"
        "def create(settings):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    return create_provider('simulated', settings)\n"
    )
    (plant / "plain_factory.py").write_text(body)
    (plant / "declared_factory.py").write_text(
        "import evalkit\n" + body.replace("def create", "@evalkit.plugin('provider')\ndef create")
    )
    refused = _run(DEMO, tmp_path, "--provider", "plain_factory:create", plant=plant)
    _refused(refused, "'plain_factory:create' is a function that is not declared a provider "
             "plugin")
    assert not marker.exists()
    ran = _run(DEMO, tmp_path, "--provider", "declared_factory:create", "--json", plant=plant)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout)["items"] > 0 and marker.exists()


@pytest.mark.parametrize(
    ("flag", "spec", "kind"),
    [("--format", "subprocess:Popen", "importer"),
     ("--optimizer", "python:os:system", "optimizer"),
     ("--optimizer", "subprocess:Popen", "optimizer")],
)
def test_every_kind_refuses_what_is_not_its_plugin(flag: str, spec: str, kind: str) -> None:
    from evalkit.interop import import_results
    from evalkit.optimize import load_optimizer

    with pytest.raises(ConfigError, match=f"not declared an? {kind} plugin"):
        if flag == "--format":
            import_results(Path("x.csv"), spec, "r")
        else:
            load_optimizer(spec)


def test_a_module_planted_in_the_working_directory_is_not_importable(tmp_path: Path) -> None:
    """``python -m evalkit`` keeps the working directory off ``sys.path``, as the script does."""
    marker = tmp_path / "imported"
    (tmp_path / "planted.py").write_text(
        "import evalkit, pathlib\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "@evalkit.plugin('provider')\n"
        "def create(settings):\n"
        "    raise SystemExit('called')\n"
    )
    done = evalkit_process("run", DEMO, "--provider", "planted:create", "--runs-dir",
                           tmp_path / "runs", "--no-progress", cwd=tmp_path)
    _refused(done, "but 'planted:create' was passed")
    assert not marker.exists()
    script = Path(sys.executable).with_name("evalkit")
    if script.is_file():  # the console script, as installed
        done = CliResult(*_completed([str(script), "run", str(DEMO), "--provider",
                                      "planted:create", "--runs-dir", str(tmp_path / "runs")],
                                     tmp_path))
        _refused(done, "but 'planted:create' was passed")
        assert not marker.exists()


def _completed(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=300,
                          check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_resume_of_a_shared_run_takes_no_provider_from_its_manifest(tmp_path: Path) -> None:
    """``run --resume`` plans from the command line and the named suite, not the old manifest."""
    first = _run(DEMO, tmp_path, "--case", "shell-quote-filenames", "--json")
    assert first.returncode == 0, first.stderr[-2000:]
    marker = tmp_path / "touched"
    manifest_file = tmp_path / "runs" / "r" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    hostile = {"/bin/touch": 1, str(marker): 1}
    manifest["providers"] = [{"name": "subprocess:Popen", "model": "m", "version": "v",
                              "settings": hostile}]
    manifest["judge"] = {"provider": "subprocess:Popen", "model": "m", "version": "v",
                         "prompt_hash": "0" * 16, "settings": hostile}
    manifest["command_line"] = (f"evalkit run suite --provider subprocess:Popen --provider-opt "
                                f"/bin/touch=1 --provider-opt {marker}=1")
    manifest_file.write_text(json.dumps(manifest))
    resumed = _run(DEMO, tmp_path, "--case", "shell-quote-filenames", "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["items"] == 1
    assert not marker.exists()
