"""evalkit optimize --target description: trigger F1 climbs, worse descriptions are rejected."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.errors import ConfigError
from evalkit.optimize import (
    OptimizeConfig,
    TamperError,
    optimize,
    read_state,
    validate_description,
)
from evalkit.optimize._description import (
    f1_gate,
    misrouted,
    trigger_counts,
    trigger_f1,
    trigger_rates,
)
from evalkit.results import load_manifest
from tests.conftest import ROOT, evalkit_cli
from tests.optimize import probes
from tests.optimize.probes import VAGUE, write_trigger_suite

ROUTING = {"description_weight": 10}
PARTIAL = "Spreadsheet and CSV work."


def _config(tmp_path: Path, optimizer: str, **kw: object) -> OptimizeConfig:
    options: dict[str, object] = {
        "skill": "sheets", "target": "description", "optimizer": optimizer, "trials": 2,
        "runs_dir": tmp_path / "runs", "backend": "threading", "stall": None,
        "provider_options": ROUTING, "n_resamples": 1000, **kw,
    }
    return OptimizeConfig(**options)  # type: ignore[arg-type]


def _command(tmp_path: Path) -> str:
    """The example optimizer of docs/optimize.md (words of the missed should-trigger prompts)."""
    return f"command:{sys.executable} {ROOT / 'scripts' / 'describe_from_misses.py'}"


def test_a_description_built_from_missed_prompts_wins_recall_on_the_sealed_test(
    tmp_path: Path,
) -> None:
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    result = optimize(suite, _config(tmp_path, _command(tmp_path), max_iterations=2, run_id="d"))
    state = read_state(result.run_dir)
    assert state.target == "description" and state.objective == "trigger_f1"
    assert result.accepted == ["cand-0001"] and result.champion == "cand-0001"
    champion = (result.run_dir / "skills" / "cand-0001.md").read_text()
    assert champion == validate_description(champion) and champion.endswith(VAGUE)
    assert "spreadsheet" in champion and "recipe" not in champion
    # the sealed test: the champion's recall beats the seed's, beyond the seed's interval
    test = state.test
    assert test is not None and test.champion == "cand-0001" and test.verdict == "improved"
    seed, champ = test.seed_trigger, test.champion_trigger
    assert seed is not None and champ is not None
    assert seed.recall is not None and champ.recall is not None and seed.recall_high is not None
    assert champ.recall > seed.recall_high
    # the objective is F1 of lift's precision and recall, for both sides
    for rates, f1 in ((seed, test.seed_rate), (champ, test.champion_rate)):
        p, r = rates.precision, rates.recall
        assert p is not None and r is not None and f1 is not None
        assert f1 == pytest.approx(2 * p * r / (p + r))
        assert rates.recall_low is not None and rates.recall_low <= r <= (rates.recall_high or 0)
    decision = state.history[0]
    assert decision.trigger is not None and decision.trigger.f1 == pytest.approx(decision.val_rate)
    assert state.seed_trigger is not None and state.seed_val_rate == pytest.approx(
        state.seed_trigger.f1
    )
    # evaluated through the description override, under self-load plus the none baseline
    evals = result.run_dir / "evals"
    shown = load_manifest(evals / "cand-0001-holdout").to_json()["conditions"]
    assert shown["self-load"]["descriptions"] == {"sheets": champion}
    seed = load_manifest(evals / "seed-holdout").to_json()["conditions"]
    assert seed["self-load"]["descriptions"] == {"sheets": VAGUE}
    assert set(evalkit.read_run(evals / "seed-test")["condition"]) == {"none", "self-load"}
    summary = result.to_dict()
    assert summary["target"] == "description" and summary["champion_trigger"]["recall"] == 1.0


def test_a_worse_description_is_rejected_and_the_optimizer_sees_the_misrouted(
    tmp_path: Path,
) -> None:
    suite = write_trigger_suite(tmp_path / "suite", PARTIAL)
    probes.SEEN.clear()
    optimizer = "python:tests.optimize.probes:record_description_workspace"
    result = optimize(suite, _config(tmp_path, optimizer, max_iterations=1, run_id="w"))
    decision = result.state.history[0]
    assert not decision.accepted and decision.verdict == "regressed"
    assert decision.ci_high is not None and decision.ci_high < 0
    assert result.champion == "seed" and result.state.test is not None
    assert result.state.test.delta == 0.0
    # the workspace: the description to edit, the skill for reference, the mis-routed cases
    (seen,) = probes.SEEN
    assert seen["files"] == ["DESCRIPTION.txt", "INSTRUCTIONS.md", "SKILL.md", "failures"]
    assert seen["edited"] == "DESCRIPTION.txt" and seen["text"] == PARTIAL + "\n"
    assert seen["target"] == "description" and "Edit `DESCRIPTION.txt`" in seen["instructions"]
    dev = evalkit.read_run(result.run_dir / "evals" / "seed-dev")
    dev = dev[dev["condition"] == "self-load"]
    loaded = (dev["inferred_skill"] == "sheets").groupby(dev["case_id"]).agg(["sum", "count"])
    should = dev.groupby("case_id")["expected_skill"].first() == "sheets"
    wrong = {
        c for c in loaded.index
        if (should[c] and loaded.loc[c, "sum"] < loaded.loc[c, "count"])
        or (not should[c] and loaded.loc[c, "sum"] > 0)
    }
    assert wrong, "the partial seed mis-routes some train cases"
    assert {f["case_id"] for f in seen["failures"]} == wrong
    assert seen["failure_files"] == sorted(f"{c}.md" for c in wrong)
    for failure in seen["failures"]:
        assert failure["kind"] == ("under-trigger" if failure["should_trigger"] else "over-trigger")
        assert failure["prompt"]


def test_invalid_descriptions_are_wasted_iterations(tmp_path: Path) -> None:
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    script = (
        'case "$EVALKIT_CANDIDATE_ID" in '
        "cand-0001) printf 'Spreadsheets.\\nAlso CSV.\\n' > DESCRIPTION.txt;; "
        "cand-0002) printf '%01100d\\n' 0 > \"$EVALKIT_DESCRIPTION_PATH\";; "
        "cand-0003) echo 'Use for <b>spreadsheets</b>' > DESCRIPTION.txt;; "
        "cand-0004) : > DESCRIPTION.txt;; "
        "cand-0005) echo \"$EVALKIT_TARGET\" > DESCRIPTION.txt;; esac"
    )
    result = optimize(suite, _config(tmp_path, f"command:{script}", max_iterations=5,
                                     run_id="bad"))
    reasons = [h.reason for h in result.state.history]
    assert reasons[:4] == [
        "failed proposal: the description must be one line (found 2 lines)",
        "failed proposal: the description has 1100 characters; at most 1024 are allowed",
        "failed proposal: the description must not contain '<' or '>'",
        "failed proposal: the description is empty",
    ]
    assert result.state.history[4].verdict is not None  # "description" was a valid proposal
    assert (result.run_dir / "skills" / "cand-0005.md").read_text() == "description"
    assert not (result.run_dir / "skills" / "cand-0001.md").exists()


def test_description_mode_needs_a_self_load_condition(tmp_path: Path) -> None:
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    with pytest.raises(ConfigError, match="needs a self-load condition"):
        optimize(suite, _config(tmp_path, "command:true", condition="preloaded"))
    assert _config(tmp_path, "command:true").condition == "self-load"
    assert OptimizeConfig(skill="s", optimizer="command:true").condition == "preloaded"


def test_cli_description_mode(tmp_path: Path) -> None:
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    base = ["optimize", str(suite), "--target", "description",
            "--runs-dir", str(tmp_path / "runs"), "--backend", "threading", "--trials", "2",
            "--provider-opt", "description_weight=10", "--max-iterations", "1"]
    proc = evalkit_cli(*base, "--skill", "sheets", "--optimizer", _command(tmp_path),
                       "--run-id", "c")
    assert proc.returncode == 0, proc.stderr
    test = read_state(tmp_path / "runs" / "c").test
    assert test is not None and test.champion_trigger is not None
    assert test.champion_trigger.recall is not None
    assert "sealed test (evaluated once): trigger F1 champion" in proc.stdout
    assert f"recall {test.champion_trigger.recall:.1%}" in proc.stdout
    two_lines = tmp_path / "seed.txt"
    two_lines.write_text("Spreadsheets.\nAnd CSV.\n")
    for extra, message in (
        (["--skill", f"sheets={two_lines}"], "must be one line"),
        (["--skill", "sheets", "--condition", "none"], "needs a self-load condition"),
    ):
        bad = evalkit_cli(*base, *extra, "--optimizer", "command:true")
        assert bad.returncode == 2, bad.stderr
        assert message in bad.stderr and "Traceback" not in bad.stderr
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir() if not p.name.startswith("."))
    assert runs == ["c"]  # a refused start leaves no run directory behind


def _routing_frame(rng: np.random.Generator, p_pos: float, p_neg: float, n_pos: int = 20,
                   n_neg: int = 10, trials: int = 2) -> pd.DataFrame:
    rows = []
    for i in range(n_pos + n_neg):
        should = i < n_pos
        p = p_pos if should else p_neg
        for trial in range(trials):
            fired = rng.random() < p
            rows.append({
                "case_id": f"c{i:02d}", "condition": "self-load", "trial": trial,
                "passed": fired == should, "expected_skill": "s" if should else "none",
                "inferred_skill": "s" if fired else None,
            })
    return pd.DataFrame(rows)


def test_trigger_f1_matches_lift_and_misrouted_lists_exactly_the_wrong_cases() -> None:
    df = _routing_frame(np.random.default_rng(3), 0.6, 0.2)
    lifted = evalkit.lift(df, n_resamples=200).metric("trigger_f1")
    assert trigger_f1(df, "s", "self-load") == pytest.approx(lifted)
    wrong = misrouted(df, "s", "self-load")
    per_case = df.assign(fired=df["inferred_skill"].notna()).groupby("case_id")["fired"]
    for failure in wrong:
        fired = per_case.get_group(failure["case_id"])
        assert (not fired.all()) if failure["should_trigger"] else fired.any()
    assert len(wrong) == sum(
        (not g.all()) if cid < "c20" else g.any() for cid, g in per_case
    )


@pytest.mark.slow
def test_f1_gate_holds_its_level_under_the_null_and_finds_a_real_gain() -> None:
    """Simulation: same routing on both sides -> 'improved' at most ~ the one-sided level."""
    rng = np.random.default_rng(11)
    reps, level = 300, 0.05
    false_improved = 0
    for rep in range(reps):
        a = _routing_frame(rng, 0.6, 0.1)
        b = _routing_frame(rng, 0.6, 0.1)
        verdict, _, _ = f1_gate(a, b, "s", "self-load", threshold=0.0, confidence=1 - 2 * level,
                                n_resamples=500, seed=rep)
        false_improved += verdict == "improved"
    assert false_improved / reps <= level + 0.03
    found = 0
    for rep in range(50):
        a = _routing_frame(rng, 0.5, 0.1)
        b = _routing_frame(rng, 0.95, 0.1)
        verdict, interval, n = f1_gate(a, b, "s", "self-load", threshold=0.05, confidence=0.9,
                                       n_resamples=500, seed=rep)
        assert n == 30 and interval.ci_low <= interval.estimate <= interval.ci_high
        found += verdict == "improved"
    assert found >= 45


@pytest.mark.slow
def test_report_shows_trigger_rates(tmp_path: Path) -> None:
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    optimize(suite, _config(tmp_path, _command(tmp_path), max_iterations=1, run_id="r"))
    out = tmp_path / "r.html"
    done = evalkit_cli("report", "r", "--kind", "optimize", "--runs-dir",
                                   str(tmp_path / "runs"), "-o", str(out))
    assert done.returncode == 0
    page = out.read_text()
    assert "trigger_recall" in page and "trigger F1" in page and "description / trigger F1" in page
    assert json.loads((tmp_path / "runs" / "r" / "optimize.json").read_text())["target"] == (
        "description"
    )


def test_other_skills_count_as_not_this_skill() -> None:
    rows = [("a", "s", "s"), ("b", "s", "other"), ("c", "other", "s"), ("d", "other", "other"),
            ("e", "none", "other"), ("f", "none", None)]
    df = pd.DataFrame(
        [{"case_id": c, "condition": "self-load", "trial": 0, "passed": True,
          "expected_skill": e, "inferred_skill": i} for c, e, i in rows]
    )
    counts = trigger_counts(df, "s", "self-load")
    assert counts.sum().to_dict() == {"tp": 1.0, "fp": 1.0, "fn": 1.0}  # a; c; b
    assert trigger_f1(df, "s", "self-load") == pytest.approx(0.5)
    rates = trigger_rates(df, "s", "self-load", n_resamples=200, seed=0)
    assert rates.precision == pytest.approx(0.5) and rates.recall == pytest.approx(0.5)
    assert [f["case_id"] for f in misrouted(df, "s", "self-load")] == ["b", "c"]


@pytest.mark.parametrize("parallel", [1, 2])
def test_tampering_aborts_a_description_run(
    tmp_path: Path, parallel: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the guard is what catches this where the edit can land: without the sandbox (in it, the
    # cases are out of the optimizer's reach: tests/security/test_optimizer_sandbox.py)
    monkeypatch.setenv("EVALKIT_SANDBOX", "off")
    suite = write_trigger_suite(tmp_path / "suite", VAGUE)
    cases = suite / "cases" / "cases.yaml"
    # a better description AND a quiet edit of the graded cases' expectations
    command = (
        f"echo 'Spreadsheet columns header rows.' > DESCRIPTION.txt && "
        f"sed -i s/none/sheets/ {cases}"
    )
    run_id = f"tamper{parallel}"
    with pytest.raises(TamperError) as info:
        optimize(suite, _config(tmp_path, f"command:{command}", max_iterations=2,
                                parallel=parallel, run_id=run_id))
    assert "suite/cases/cases.yaml" in str(info.value)
    state = read_state(tmp_path / "runs" / run_id)
    assert state.status == "aborted" and state.history == [] and state.test is None
