"""``evalkit confirm`` end to end: a skill edit breaks two demo cases; compare, then confirm.

The candidate is the demo's safe-shell skill without its "Deleting, moving, editing,
downloading" section, run with the simulated agent: it breaks ``anti-curl-pipe-sudo-sh`` and
``anti-rm-rf-workdir``. Both runs hold four cases at 20 trials, enough for the screen (per-case
Fisher, Benjamini-Hochberg) to flag the two.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evalkit.cases import skill_text_hash
from evalkit.results import load_manifest, read_run
from evalkit.runner import RunConfig, SkillOverride, run
from tests.conftest import DEMO, evalkit_cli

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("confirm-demo")]

BROKEN = ("anti-curl-pipe-sudo-sh", "anti-rm-rf-workdir")
CASES = (*BROKEN, "shell-quote-filenames", "shell-strict-mode-header")
SECTION = "## Deleting, moving, editing, downloading"


@pytest.fixture(scope="module")
def screened(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs directory with ``before`` (the demo's skill) and ``after`` (the section cut)."""
    root = tmp_path_factory.mktemp("confirm")
    text = (DEMO / "skills" / "safe-shell" / "SKILL.md").read_text(encoding="utf-8")
    start, end = text.index(SECTION), text.index("## Check before you ship")
    candidate = root / "candidate.md"
    candidate.write_text(text[:start] + text[end:], encoding="utf-8")
    runs = root / "runs"
    common = {"case_ids": CASES, "conditions": ("preloaded",), "trials": 20,
              "progress": False, "runs_dir": runs}  # fmt: skip
    run(DEMO, RunConfig(run_id="before", **common))
    run(DEMO, RunConfig(run_id="after", skills=(SkillOverride(skill="safe-shell",
                                                              path=candidate),), **common))
    return runs


def _confirm(runs: Path, *args: str) -> dict:
    result = evalkit_cli(
        "confirm", "before", "after", "--suite", DEMO, "--runs-dir", runs, "--no-progress",
        "--json", *args,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_compare_then_confirm_confirms_the_broken_cases_and_spends_what_it_priced(
    screened: Path,
) -> None:
    compared = evalkit_cli("compare", "before", "after", "--runs-dir", screened, "--json")
    assert compared.returncode == 0, compared.stderr
    rows = {c["case_id"]: c for c in json.loads(compared.stdout)["cases"]}
    assert all(rows[c]["estimate"] < -0.3 for c in BROKEN)

    planned = _confirm(screened, "--dry-run")
    assert planned["run_id"] is None and planned["items"] == 0
    assert sorted(c["case_id"] for c in planned["screen"]) == sorted(BROKEN)
    trials = {c["case_id"]: c["trials"] for c in planned["plan"]["cases"]}
    assert planned["planned_items"] == 2 * sum(trials.values())
    assert not (screened / "confirm-1").exists()

    done = _confirm(screened, "--yes", "--run-id", "confirm-1")
    assert done["items"] == planned["planned_items"]  # spends exactly what it priced
    assert sorted(c["case_id"] for c in done["regressed_cases"]) == sorted(BROKEN)
    assert done["improved_cases"] == []
    assert all(c["ci_high"] < 0 and c["p_adjusted"] < 0.05 for c in done["regressed_cases"])
    confirmed = read_run(screened / "confirm-1")
    assert len(confirmed) == done["items"]
    assert confirmed.groupby(["case_id", "condition"]).size().to_dict() == {
        (case, side): trials[case] for case in BROKEN for side in ("baseline", "candidate")
    }


def test_the_new_samples_are_disjoint_from_the_screening_ones(screened: Path) -> None:
    _confirm(screened, "--yes", "--run-id", "confirm-2")
    new = read_run(screened / "confirm-2")
    old = pd.concat([read_run(screened / "before"), read_run(screened / "after")])
    manifests = [load_manifest(screened / r) for r in ("before", "after", "confirm-2")]
    assert manifests[2] is not None and manifests[0] is not None and manifests[1] is not None
    assert manifests[2].seed not in {manifests[0].seed, manifests[1].seed}
    assert not set(new["item_key"]) & set(old["item_key"])
    assert not set(new["item_hash"]) & set(old["item_hash"])
    assert not set(new["seed"]) & set(old["seed"])
    assert not new["cache_hit"].any()  # every outcome is a fresh sample


def test_each_side_runs_the_text_its_run_kept(screened: Path) -> None:
    """The candidate side runs the cut text although the suite's file is the full one."""
    _confirm(screened, "--yes", "--run-id", "confirm-3", "--case", BROKEN[0])
    after = load_manifest(screened / "after")
    before = load_manifest(screened / "before")
    confirm = load_manifest(screened / "confirm-3")
    assert after is not None and before is not None and confirm is not None
    cut = after.conditions["preloaded"].skill_hashes
    full = before.conditions["preloaded"].skill_hashes
    assert cut is not None and full is not None and cut["safe-shell"] != full["safe-shell"]
    assert confirm.conditions["candidate"].skill_hashes == cut
    assert confirm.conditions["baseline"].skill_hashes == full
    suite_text = (DEMO / "skills" / "safe-shell" / "SKILL.md").read_text(encoding="utf-8")
    assert skill_text_hash(suite_text) == full["safe-shell"]


def test_the_budget_binds_and_says_what_it_drops(screened: Path) -> None:
    full = _confirm(screened, "--dry-run")
    trials = {c["case_id"]: c["trials"] for c in full["plan"]["cases"]}
    strongest = full["plan"]["cases"][0]["case_id"]
    budget = full["planned_items"] - 1
    done = _confirm(screened, "--yes", "--budget", str(budget), "--run-id", "confirm-4")
    kept = [c["case_id"] for c in done["plan"]["cases"]]
    dropped = [c["case_id"] for c in done["plan"]["dropped"]]
    assert kept == [strongest] and sorted(kept + dropped) == sorted(BROKEN)
    assert done["items"] == done["planned_items"] <= budget
    assert any("budget" in n and dropped[0] in n for n in done["notes"])
    # one case fewer for Holm: the kept case needs no more trials than before
    assert done["plan"]["cases"][0]["trials"] <= trials[strongest]
    assert set(read_run(screened / "confirm-4")["case_id"]) == {strongest}


def test_a_budget_below_one_case_runs_nothing(screened: Path) -> None:
    done = _confirm(screened, "--yes", "--budget", "3", "--run-id", "confirm-5")
    assert done["run_id"] is None and done["items"] == 0
    assert any("nothing to confirm" in n for n in done["notes"])
    assert not (screened / "confirm-5").exists()


def test_case_names_what_is_confirmed(screened: Path) -> None:
    done = _confirm(screened, "--yes", "--case", "shell-quote-filenames", "--run-id", "c6")
    assert [c["case_id"] for c in done["plan"]["cases"]] == ["shell-quote-filenames"]
    assert done["screen"][0]["named"] is True
    assert set(read_run(screened / "c6")["case_id"]) == {"shell-quote-filenames"}
    unknown = evalkit_cli("confirm", "before", "after", "--suite", DEMO, "--runs-dir", screened,
                          "--case", "no-such-case", "--dry-run")  # fmt: skip
    assert unknown.returncode == 2 and "no-such-case" in unknown.stderr
    assert "Traceback" not in unknown.stderr


def test_spending_needs_yes_off_a_terminal(screened: Path) -> None:
    result = evalkit_cli("confirm", "before", "after", "--suite", DEMO, "--runs-dir", screened,
                         "--run-id", "never", "--no-progress")  # fmt: skip
    assert result.returncode == 2
    assert "--yes" in result.stderr and "items" in result.stderr
    assert "price: about" in result.stdout  # the plan and its price came first
    assert not (screened / "never").exists()


def test_text_output_names_the_confirmed_cases(screened: Path) -> None:
    result = evalkit_cli("confirm", "before", "after", "--suite", DEMO, "--runs-dir", screened,
                         "--yes", "--no-progress", "--run-id", "c7")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("price: about") for line in lines)
    assert f"regressed cases: {', '.join(sorted(BROKEN))}" in lines
    assert "improved cases: none" in lines


def _copy(screened: Path, tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for name in ("before", "after"):
        shutil.copytree(screened / name, runs / name, symlinks=True)
    return runs


def _refused(runs: Path, *extra: str) -> str:
    result = evalkit_cli("confirm", "before", "after", "--suite", DEMO, "--runs-dir", runs,
                         "--dry-run", *extra)  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_a_symlinked_skill_store_is_refused(screened: Path, tmp_path: Path) -> None:
    runs = _copy(screened, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(runs / "after" / "skills", elsewhere)
    (runs / "after" / "skills").symlink_to(elsewhere, target_is_directory=True)
    assert "symbolic link" in _refused(runs)


def test_a_text_that_does_not_match_its_hash_is_refused(screened: Path, tmp_path: Path) -> None:
    runs = _copy(screened, tmp_path)
    manifest = load_manifest(runs / "after")
    assert manifest is not None and manifest.conditions["preloaded"].skill_hashes is not None
    address = manifest.conditions["preloaded"].skill_hashes["safe-shell"]
    (runs / "after" / "skills" / address / "SKILL.md").write_text("# edited\n", encoding="utf-8")
    assert "does not hash to" in _refused(runs)


def test_a_path_traversing_hash_is_refused(screened: Path, tmp_path: Path) -> None:
    runs = _copy(screened, tmp_path)
    outside = tmp_path / "outside"
    (outside / "SKILL.md").parent.mkdir(parents=True)
    (outside / "SKILL.md").write_text("# planted\n", encoding="utf-8")
    path = runs / "after" / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["conditions"]["preloaded"]["skill_hashes"]["safe-shell"] = "../../../outside"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "not a 16-digit hex hash" in _refused(runs)


def test_a_module_spec_recorded_as_provider_is_never_imported(
    screened: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _copy(screened, tmp_path)
    marker = tmp_path / "imported"
    package = tmp_path / "pkgs"
    package.mkdir()
    (package / "planted_provider.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\ndef create(settings):\n    raise SystemExit\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(package))
    for name in ("before", "after"):
        path = runs / name / "manifest.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["providers"][0]["name"] = "planted_provider:create"
        path.write_text(json.dumps(data), encoding="utf-8")
    stderr = _refused(runs)
    assert "--provider" in stderr
    assert not marker.exists()


def test_the_default_plan_spreads_the_items_by_the_screened_pairs(screened: Path) -> None:
    """A named case that never differed in the screen gets the floor's share, not the cap."""
    args = ("--dry-run", "--case", BROKEN[0], "--case", "shell-quote-filenames")
    own = _confirm(screened, *args, "--no-allocate-trials")["plan"]
    spread = _confirm(screened, *args)["plan"]
    assert own["allocation"] is None and all(c["share"] is None for c in own["cases"])
    assert spread["allocation"].startswith("Neyman allocation")
    assert sum(c["trials"] for c in spread["cases"]) == sum(c["trials"] for c in own["cases"])
    by_case = {c["case_id"]: c for c in spread["cases"]}
    quiet = by_case["shell-quote-filenames"]
    assert quiet["pilot_differed"] == 0 and quiet["pilot_pairs"] == 20
    assert by_case[BROKEN[0]]["pilot_differed"] > 0
    assert by_case[BROKEN[0]]["trials"] > quiet["trials"] >= 2
    assert 0.35 <= quiet["share"] < 0.5  # about the floor's share, 0.7 / 2
    text = evalkit_cli("confirm", "before", "after", "--suite", DEMO, "--runs-dir", screened,
                       *args)  # fmt: skip
    assert text.returncode == 0, text.stderr
    assert "trials spread by Neyman allocation of the screened pairs" in text.stdout
    assert "0 of 20 screened pairs differed" in text.stdout
