"""``evalkit cases import SKILL_DIR``: a skill-creator skill directory becomes a suite that runs.

The fixture follows skill-creator's documented layout (``SKILL.md`` with frontmatter,
``scripts/``, ``references/``, ``evals/evals.json`` with ``files`` and ``expectations``) with
the variants met in the wild: a string id, ``expected`` instead of ``expected_output``, an
extra key, an eval without expectations.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

import evalkit
from evalkit.cases import SkillExposure, import_skill_dir, load_suite
from evalkit.errors import InputError
from evalkit.providers._prompting import Toolbox, ToolUse, install_skills
from evalkit.providers._protocol import AgentRequest
from evalkit.results import read_scores
from evalkit.runner import RunConfig, run
from tests.conftest import ROOT, evalkit_cli

SKILLS = ROOT / "tests" / "fixtures" / "skills"
SKILL = SKILLS / "release-notes"
TRIGGERS = SKILLS / "release-notes-triggers.json"


def _raw_evals() -> list[dict[str, object]]:
    evals: list[dict[str, object]] = json.loads((SKILL / "evals" / "evals.json").read_text())[
        "evals"
    ]
    return evals


def test_import_validate_run_export_reimport(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    proc = evalkit_cli("cases", "import", str(SKILL), "-o", str(suite_dir), "--triggers",
                       str(TRIGGERS), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    raw = _raw_evals()
    triggers = json.loads(TRIGGERS.read_text())
    assert summary["eval_cases"] == len(raw)
    assert summary["trigger_cases"] == len(triggers)
    assert summary["conditions"] == ["none", "self-load", "preloaded"]
    proc = evalkit_cli("cases", "validate", str(suite_dir))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    suite = load_suite(suite_dir)
    cases = {c.id: c for c in suite.cases}
    assert cases["eval-1"].expectations == tuple(raw[0]["expectations"])  # type: ignore[arg-type]
    # `expected` (not `expected_output`) and no expectations: the reference, judged as a rubric
    assert cases["eval-csv-only"].reference == raw[1]["expected"]
    assert cases["eval-csv-only"].rubric == (raw[1]["expected"],)
    assert "owner" in (cases["eval-csv-only"].provenance or "")
    # files: an execution case whose fixture holds them at the same relative path
    assert cases["eval-3"].lane == "execution"
    fixture = suite_dir / str(cases["eval-3"].fixture)
    assert (fixture / "evals" / "files" / "changes.txt").read_bytes() == (
        SKILL / "evals" / "files" / "changes.txt"
    ).read_bytes()
    should = {c.prompt: c.expected_skill for c in suite.cases if c.id.startswith("trigger-")}
    assert should == {
        t["query"]: ("release-notes" if t["should_trigger"] else "none") for t in triggers
    }
    # the skill is the whole directory, evals left out
    resources = suite.skills["release-notes"].resources
    assert resources is not None
    assert (resources / "scripts" / "check_notes.py").is_file()
    assert not (resources / "evals").exists()

    runs = tmp_path / "runs"
    result = run(suite_dir, RunConfig(runs_dir=runs, run_id="imported", trials=2,
                                      progress=False, backend="threading"))
    assert result.items == len(suite.cases) * 3 * 2
    scores = read_scores(result.run_dir)
    judged = scores[scores["component"].str.startswith("expectation")]
    assert len(judged) > 0

    out = tmp_path / "benchmark.json"
    proc = evalkit_cli("export", str(result.run_dir), "--format", "skill-creator", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    bench = json.loads(out.read_text())
    per_config = len(suite.cases) * 2
    assert len(bench["runs"]) == 2 * per_config
    again = evalkit.import_results(out, "skill-creator", "again", runs_dir=runs)
    assert again.items == len(bench["runs"])


def test_stale_from_a_git_revision_and_a_bootstrap(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(SKILL, repo)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], check=True)
    old = (repo / "SKILL.md").read_text()
    (repo / "SKILL.md").write_text(old.replace("Breaking changes", "Breaking changes (always)"))
    boot = tmp_path / "boot.md"
    boot.write_text("release-notes: read SKILL.md before writing any release notes.\n")
    done = import_skill_dir(repo, tmp_path / "suite", stale="HEAD", bootstrap=boot)
    assert done.conditions == ["none", "self-load", "preloaded", "stale"]
    suite = load_suite(tmp_path / "suite")
    texts = suite.skills["release-notes"].texts
    assert texts["stale"] == old
    assert "(always)" in texts["canonical"]
    assert texts["bootstrap"] == boot.read_text()
    with pytest.raises(InputError, match="neither a file nor a git revision"):
        import_skill_dir(repo, tmp_path / "suite2", stale="no-such-rev")
    assert not (tmp_path / "suite2").exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["evals"][0].pop("prompt"), "evals[0]: needs a 'prompt'"),
        (lambda d: d["evals"][2].update(files=["evals/files/missing.pdf"]), "does not exist"),
        (lambda d: d["evals"][2].update(files=["../../etc/passwd"]), "escapes its root (..)"),
        (lambda d: d["evals"][2].update(files=["evals/files/a\x00b"]),
         "contains the control character U+0000"),
        (lambda d: d["evals"][2].update(files=["/etc/passwd"]), "is an absolute path"),
        (lambda d: d["evals"][1].pop("expected"), "nothing to grade"),
        (lambda d: d["evals"].append(dict(d["evals"][0])), "repeats"),
    ],
)
def test_unusable_evals_are_named_and_leave_nothing(
    tmp_path: Path, mutate: object, message: str
) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(SKILL, skill)
    data = json.loads((skill / "evals" / "evals.json").read_text())
    mutate(data)  # type: ignore[operator]
    (skill / "evals" / "evals.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=re.escape(message)) as info:
        import_skill_dir(skill, tmp_path / "suite")
    assert str(skill / "evals" / "evals.json") in str(info.value)
    assert not (tmp_path / "suite").exists()


def test_a_link_out_of_the_skill_is_refused(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(SKILL, skill)
    (skill / "references" / "secrets.md").symlink_to("/etc/passwd")
    proc = evalkit_cli("cases", "import", str(skill), "-o", str(tmp_path / "suite"))
    assert proc.returncode == 2
    assert "symlink pointing outside the skill directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "suite").exists()


def _exposure(suite_dir: Path) -> SkillExposure:
    suite = load_suite(suite_dir)
    case = next(c for c in suite.cases if c.id == "eval-1")
    return suite.exposure(case, "self-load")[0]


def test_agents_get_the_whole_directory(tmp_path: Path) -> None:
    import_skill_dir(SKILL, tmp_path / "suite")
    skill = _exposure(tmp_path / "suite")
    # CLI agents: the directory is installed with the condition's SKILL.md
    installed = install_skills([skill], tmp_path / "agent-skills")
    root = installed[0].parent
    assert (root / "scripts" / "check_notes.py").read_text() == (
        SKILL / "scripts" / "check_notes.py"
    ).read_text()
    assert (root / "references" / "style.md").is_file()
    # API agents: load_skill reads a file of the skill, and only those
    suite = load_suite(tmp_path / "suite")
    case = next(c for c in suite.cases if c.id == "eval-1")
    request = AgentRequest(
        item_key="k", case=case, condition="self-load", seed=0, workspace=tmp_path,
        timeout_s=30, exposure=suite.exposure(case, "self-load"),
    )
    box = Toolbox(request, deadline=time.monotonic() + 30)
    _, result = box.run(ToolUse("1", "load_skill", {"name": "release-notes/references/style.md"}))
    assert "Section order" in result.content
    _, result = box.run(ToolUse("2", "load_skill", {"name": "release-notes/../../../etc/passwd"}))
    assert result.content.startswith("error:")


def test_editing_a_resource_reruns_only_that_skills_items(tmp_path: Path) -> None:
    import_skill_dir(SKILL, tmp_path / "suite")
    suite_dir = tmp_path / "suite"
    config = {"runs_dir": tmp_path / "runs", "trials": 1, "progress": False,
              "backend": "threading", "conditions": ("none", "self-load")}
    run(suite_dir, RunConfig(run_id="a", **config))  # type: ignore[arg-type]
    style = suite_dir / "skills" / "release-notes" / "references" / "style.md"
    style.write_text(style.read_text() + "- Keep each line under 100 characters.\n")
    second = run(suite_dir, RunConfig(run_id="b", **config))  # type: ignore[arg-type]
    df = evalkit.read_run(second.run_dir)
    assert df.loc[df.condition == "none", "cache_hit"].all()
    assert not df.loc[df.condition == "self-load", "cache_hit"].any()
    suite = yaml.safe_load((suite_dir / "suite.yaml").read_text())
    assert suite["skills"]["release-notes"]["resources"] == "skills/release-notes"
