"""The average does not speak for single cases: an edit that breaks a few cases, as a user meets it.

The demo's safe-shell skill loses its "Deleting, moving, editing, downloading" section. At 3
trials per side the average change stays inside the practical threshold and no case can be
named yet, so compare must not say the change "would not matter"; it names the cases that
moved past the threshold in the sample and offers the targeted follow-up that settles them.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import ROOT, evalkit_cli

DEMO = ROOT / "cases" / "demo"
SECTION = re.compile(r"^## Deleting, moving, editing, downloading\n.*?(?=^## )", re.M | re.S)


def _run(runs: Path, run_id: str, *extra: str) -> None:
    done = evalkit_cli("run", DEMO, "--runs-dir", runs, "--run-id", run_id, "--no-progress",
                       "--conditions", "none,preloaded", "--trials", "3", *extra)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("claims") / "runs"
    _run(runs, "before")
    skill = (DEMO / "skills" / "safe-shell" / "SKILL.md").read_text()
    edited = runs.parent / "SKILL.md"
    edited.write_text(SECTION.sub("", skill))
    assert edited.read_text() != skill
    _run(runs, "after", "--skill", f"safe-shell={edited}")
    return runs


@pytest.mark.slow
def test_a_concentrated_loss_is_never_called_one_that_would_not_matter(runs: Path) -> None:
    done = evalkit_cli("compare", "before", "after", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "would not matter" not in text
    follow = next(line for line in text.splitlines() if line.startswith("follow-up: "))
    argv = shlex.split(follow.removeprefix("follow-up: ").split("  (")[0])
    assert argv[:4] == ["evalkit", "confirm", "before", "after"]
    named = [argv[i + 1] for i, word in enumerate(argv) if word == "--case"]
    assert "anti-curl-pipe-sudo-sh" in named or "anti-rm-rf-workdir" in named, follow
    assert "--dry-run" in argv  # it prices before it spends


@pytest.mark.slow
def test_the_printed_follow_up_runs_and_spends_what_it_priced(runs: Path) -> None:
    text = evalkit_cli("compare", "before", "after", "--runs-dir", runs).stdout
    follow = next(line for line in text.splitlines() if line.startswith("follow-up: "))
    argv = shlex.split(follow.removeprefix("follow-up: ").split("  (")[0])[1:]
    argv[argv.index("SUITE")] = str(DEMO)
    dry = evalkit_cli(*argv, "--runs-dir", runs)
    assert dry.returncode == 0, dry.stderr
    priced = int(re.search(r"price: about ([\d,]+) items", dry.stdout)[1].replace(",", ""))  # type: ignore[index]
    argv.remove("--dry-run")
    done = evalkit_cli(*argv, "--yes", "--no-progress", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    spent = int(re.search(r"confirmed on ([\d,]+) new items", done.stdout)[1].replace(",", ""))  # type: ignore[index]
    assert spent == priced
