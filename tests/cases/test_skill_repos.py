"""Skill repositories in the layouts found in public repositories become suites that run.

Every fixture is made here: a root skill, a plugin layout (``evals/`` at the root, the skill one
level down), a nested plugin (``plugins/P/skills/S/SKILL.md``), several skills under one root,
evals with ``assertions``, wrapped trigger sets with query ids, and a git-initialised skill
whose copy must hold only what the skill is.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

import evalkit
from evalkit.cases import import_skill_dir, load_suite
from evalkit.errors import InputError
from evalkit.runner import RunConfig, run
from tests.conftest import ROOT, evalkit_cli

SKILL_MD = """---
name: {name}
description: Writes {name} documents from a list of changes. Use it for any {name} request.
---
# {name}
Follow references/style.md. Run scripts/check.py on the result. See forms.md for forms.
"""


def _skill(path: Path, name: str) -> Path:
    (path / "references").mkdir(parents=True)
    (path / "scripts").mkdir()
    (path / "SKILL.md").write_text(SKILL_MD.format(name=name))
    (path / "references" / "style.md").write_text("Breaking changes first.\n")
    (path / "scripts" / "check.py").write_text("print('ok')\n")
    (path / "forms.md").write_text("A form.\n")
    return path


def _evals(path: Path, skill_name: str | None, evals: list[dict[str, object]]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {"evals": evals}
    if skill_name:
        data["skill_name"] = skill_name
    (path / "evals.json").write_text(json.dumps(data))
    return path / "evals.json"


EVALS = [
    {"id": 1, "prompt": "Write notes for #1.", "assertions": ["Mentions #1"]},
    {"id": 2, "prompt": "Write notes for #2.", "expected_output": "Notes naming #2.",
     "expectations": ["Names #2", "Is short"], "assertions": ["Is short", "Has a title"],
     "must_have": ["#2"], "must_not_have": ["TODO"]},
]


def test_assertions_are_expectations_and_nothing_is_dropped_silently(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "notes", "notes")
    _evals(skill / "evals", "notes", EVALS)
    done = import_skill_dir(skill, tmp_path / "suite")
    cases = {c.id: c for c in load_suite(tmp_path / "suite").cases}
    # assertions alone are graded statements (no expected_output needed)
    assert [e.text for e in cases["eval-1"].judged_expectations] == ["Mentions #1"]
    # both together merge, each statement once, in order
    assert [e.text for e in cases["eval-2"].judged_expectations] == [
        "Names #2", "Is short", "Has a title"]
    # fields evalkit does not grade are kept and named in a warning
    assert "must_have" in (cases["eval-2"].provenance or "")
    assert "must_not_have" in (cases["eval-2"].provenance or "")
    warned = [w for w in done.warnings if "evals[1]" in w]
    assert warned and "must_have" in warned[0] and "must_not_have" in warned[0]


def test_a_plugin_root_with_evals_at_the_root(tmp_path: Path) -> None:
    repo = tmp_path / "plugin"
    _skill(repo / "notes", "notes")
    _evals(repo / "evals", None, EVALS)
    proc = evalkit_cli("cases", "import", str(repo), "-o", str(tmp_path / "suite"), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["skills"] == ["notes"] and summary["eval_cases"] == 2
    assert evalkit_cli("cases", "validate", str(tmp_path / "suite")).returncode == 0


def test_a_nested_plugin_and_explicit_paths(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    skill = _skill(repo / "plugins" / "docs" / "skills" / "notes", "notes")
    _evals(repo / "evals", "notes", EVALS[:1])
    done = import_skill_dir(repo, tmp_path / "found")
    assert done.skills == ["notes"] and done.eval_cases == 1
    # --skill and --evals say it explicitly (an evals file kept anywhere)
    elsewhere = _evals(tmp_path / "elsewhere", None, EVALS)
    proc = evalkit_cli("cases", "import", str(repo), "-o", str(tmp_path / "explicit"), "--skill",
                str(skill), "--evals", str(elsewhere), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["eval_cases"] == 2
    proc = evalkit_cli("cases", "import", str(repo), "-o", str(tmp_path / "bad"), "--skill",
                str(repo / "plugins"))
    assert proc.returncode == 2 and "--skill" in proc.stderr and "no SKILL.md" in proc.stderr
    assert "Traceback" not in proc.stderr and "--prompt-col" not in proc.stderr


def test_several_skills_become_one_suite(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _skill(repo / "skills" / "notes", "notes")
    _skill(repo / "skills" / "memo", "memo")
    _evals(repo / "skills" / "memo" / "evals", "memo", EVALS[:1])
    _evals(repo / "evals", "notes", EVALS)
    (repo / "evals" / "triggers.json").write_text(json.dumps({
        "skill_name": "notes", "notes": "hand-written",
        "queries": [{"id": "q-7", "query": "Write the release notes", "should_trigger": True,
                     "difficulty": "easy"},
                    {"id": "q-8", "query": "What is the weather?", "should_trigger": False}],
    }))
    done = import_skill_dir(repo, tmp_path / "suite")
    suite = load_suite(tmp_path / "suite")
    assert set(suite.skills) == {"notes", "memo"} and done.skills == ["memo", "notes"]
    cases = {c.id: c for c in suite.cases}
    assert cases["memo-eval-1"].expected_skill == "memo"
    assert cases["notes-eval-2"].expected_skill == "notes"
    # the wrapped trigger set keeps its query ids, and its fields in provenance
    assert cases["notes-trigger-q-7"].expected_skill == "notes"
    assert cases["notes-trigger-q-8"].expected_skill == "none"
    assert '"difficulty": "easy"' in (cases["notes-trigger-q-7"].provenance or "")
    assert "hand-written" in (cases["notes-trigger-q-7"].provenance or "")
    assert any("difficulty" in w for w in done.warnings)
    # an evals file that names no skill, among several skills, is refused with the fix
    _evals(repo / "evals", None, EVALS)
    with pytest.raises(InputError, match="several skills here.*skill_name.*--skill"):
        import_skill_dir(repo, tmp_path / "suite2")
    assert not (tmp_path / "suite2").exists()


def test_the_copy_takes_only_what_the_skill_is(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "notes", "notes")
    _evals(skill / "evals", "notes", EVALS[:1])
    for junk in ("tests/test_check.py", "Dockerfile", "README.md", ".github/workflows/ci.yml",
                 "scripts/__pycache__/check.cpython-311.pyc", "scripts/test_check.py",
                 "references/draft.tmp", "build/out.txt", "package.json"):
        (skill / junk).parent.mkdir(parents=True, exist_ok=True)
        (skill / junk).write_text("junk\n")
    (skill / ".gitignore").write_text("*.tmp\n")
    git = ["git", "-C", str(skill), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], check=True)
    assert (skill / ".git").is_dir()
    import_skill_dir(skill, tmp_path / "suite")
    copy = tmp_path / "suite" / "skills" / "notes"
    copied = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert copied == ["SKILL.md", "forms.md", "references/style.md", "scripts/check.py"]
    lock = json.loads((tmp_path / "suite" / "skills.lock.json").read_text())
    files = {f["path"]: f for f in lock["skills"]["notes"]["files"]}
    assert set(files) == set(copied)
    for rel, entry in files.items():
        data = (copy / rel).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
    reasons = {e["path"]: e["reason"] for e in lock["skills"]["notes"]["left_out"]}
    assert "never part" in reasons[".git"] and "never part" in reasons["tests"]
    assert "ignored by .gitignore" in reasons["references/draft.tmp"]
    assert "not referenced" in reasons["README.md"]
    # a parent repository's .gitignore applies too
    repo = tmp_path / "repo"
    inner = _skill(repo / "skills" / "memo", "memo")
    (inner / "assets").mkdir()
    (inner / "assets" / "big.bin").write_text("x")
    (inner / "assets" / "logo.svg").write_text("<svg/>")
    (repo / ".gitignore").write_text("*.bin\n")
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    _evals(repo / "evals", "memo", EVALS[:1])
    import_skill_dir(repo, tmp_path / "suite-memo")
    assets = tmp_path / "suite-memo" / "skills" / "memo" / "assets"
    assert sorted(p.name for p in assets.iterdir()) == ["logo.svg"]


def test_trigger_cases_pass_exactly_when_routing_is_right(tmp_path: Path) -> None:
    skills = ROOT / "tests" / "fixtures" / "skills"
    import_skill_dir(skills / "release-notes", tmp_path / "suite",
                     triggers=(skills / "release-notes-triggers.json",))
    result = run(tmp_path / "suite", RunConfig(runs_dir=tmp_path / "runs", run_id="t",
                                               trials=3, progress=False, backend="threading"))
    df = evalkit.read_run(result.run_dir)
    triggers = df[df["category"].isin(["trigger", "should-not-trigger"])]
    assert len(triggers) > 0
    routed = triggers["inferred_skill"] == triggers["expected_skill"]
    assert (triggers["passed"] == routed).all()
    assert (triggers["score"] == routed.astype(float)).all()
    # routing is right under self-load often enough (it was never, with weight 0 on routing)
    self_load = triggers[(triggers["condition"] == "self-load")
                         & (triggers["category"] == "trigger")]
    assert self_load["passed"].mean() > 0
    assert triggers.loc[triggers["category"] == "should-not-trigger", "passed"].all()
    # the trigger rates per (condition, provider) stay in lift
    metrics = evalkit.lift(result.run_dir).to_dict()["metrics"]
    assert {"trigger_recall", "trigger_precision"} <= {m["metric"] for m in metrics}
