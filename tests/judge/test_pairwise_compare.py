"""``evalkit compare ... --pairwise`` on real runs of the simulated agent, offline.

One demo run (prompt lane, conditions none / stale / preloaded, 3 trials) is made per module;
each test copies it into its own runs directory, so caches and stored comparisons never mix.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from evalkit.judge import (
    PAIR_LABEL_COLUMNS,
    PAIRWISE_PROMPT_HASH,
    baseline_first,
    compare_pairwise,
)
from evalkit.runner import RunConfig, run
from tests.conftest import DEMO, evalkit_cli


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("pairwise-runs")
    result = run(DEMO, RunConfig(runs_dir=runs, run_id="demo", progress=False, trials=3,
                                 lanes=("prompt",), conditions=("none", "stale", "preloaded")))
    return Path(result.run_dir)


@pytest.fixture
def runs(demo_run: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "runs"
    shutil.copytree(demo_run.parent, dest)  # the run and the runs directory's item cache
    return dest


def test_a_skill_that_helps_is_found_better_blind_and_in_both_orders(runs: Path) -> None:
    done = evalkit_cli("compare", "demo", "--conditions", "none,preloaded", "--pairwise",
                       "--runs-dir", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["kind"] == "pairwise" and data["verdict"] == "improved"
    assert data["baseline"] == "none" and data["candidate"] == "preloaded"
    assert data["win_probability"]["ci_low"] > 0.5
    assert data["sign_test"]["p_value"] < 0.05
    pairs = data["pairs"]
    assert len(pairs) == data["n_pairs"] == 28 * 3  # every case and trial of the prompt lane
    for pair in pairs:
        assert pair["verdict_baseline_first"] in ("1", "2", "tie")
        assert pair["verdict_candidate_first"] in ("1", "2", "tie")
        assert pair["reason_baseline_first"] and pair["reason_candidate_first"]
    flipped = [p for p in pairs if p["flipped"]]
    assert all(p["outcome"] == 0.5 for p in flipped)  # a flip with the order is a tie
    assert data["flipped"] == len(flipped)
    assert data["position_consistency"] == pytest.approx(1 - len(flipped) / len(pairs))
    # uncalibrated: flagged in the JSON and in the text
    calibration = data["judge_calibration"]
    assert calibration["status"] == "uncalibrated"
    assert calibration["judge"]["prompt_hash"] == PAIRWISE_PROMPT_HASH
    assert "judge sample" in calibration["fix"]
    stored = json.loads(Path(data["path"]).read_text())
    assert stored["verdict"] == "improved" and len(stored["pairs"]) == len(pairs)
    text = evalkit_cli("compare", "demo", "--conditions", "none,preloaded", "--pairwise",
                       "--runs-dir", str(runs))
    assert text.returncode == 0
    assert "pairwise verdict: improved" in text.stdout
    assert "judge UNCALIBRATED" in text.stdout


def test_judgements_are_cached_by_content(runs: Path) -> None:
    first = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             n_resamples=200)
    again = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             n_resamples=200)
    assert first.usage["calls"] > 0
    assert again.usage["calls"] == 0
    assert again.usage["cache_hits"] == first.usage["calls"] + first.usage["cache_hits"]
    assert again.pairs["outcome"].tolist() == first.pairs["outcome"].tolist()
    # a different rubric is a different question
    rubric = runs / "rubric.md"
    rubric.write_text("The better answer names the exact command to run.\n")
    other = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             rubric=rubric, n_resamples=200)
    assert other.usage["calls"] > 0 and other.rubric.startswith("The better answer names")


def test_a_first_position_biased_judge_is_caught_by_the_swap(runs: Path) -> None:
    fair = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                            n_resamples=500)
    biased = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                              options={"position_bias": 0.8}, n_resamples=500)
    assert biased.stats.position_bias.ci_low > 0.5
    assert biased.stats.position_consistency < fair.stats.position_consistency
    assert biased.stats.flipped > fair.stats.flipped
    assert any("favours the first-shown answer" in n for n in biased.to_dict()["notes"])


def test_more_than_two_conditions_are_ranked_by_bradley_terry(runs: Path) -> None:
    result = compare_pairwise("demo", conditions=["none", "stale", "preloaded"], runs_dir=runs,
                              n_resamples=200)
    fit = result.bradley_terry
    assert fit is not None and fit.reference == "none"
    assert fit.strengths["variant"].iloc[0] == "preloaded"
    assert set(result.comparisons) == {"preloaded"}  # every other variant against the first
    assert set(result.pairs[["baseline", "candidate"]].apply(tuple, axis=1)) == {
        ("none", "stale"), ("none", "preloaded"), ("stale", "preloaded")}
    assert "Bradley-Terry ranking" in evalkit_cli(
        "compare", "demo", "--conditions", "none,stale,preloaded", "--pairwise",
        "--runs-dir", str(runs)).stdout


def test_the_same_sample_on_both_sides_is_no_evidence(runs: Path) -> None:
    """A second run of the same plan is all cache hits: its pairs are the first run's items."""
    again = run(DEMO, RunConfig(runs_dir=runs, run_id="again", progress=False, trials=3,
                                lanes=("prompt",), conditions=("none",)))
    assert again.run_dir
    done = evalkit_cli("compare", "demo", "again", "--conditions", "none", "--pairwise",
                       "--runs-dir", str(runs))
    assert done.returncode == 2
    assert "no pair of 'ok' items to judge" in done.stderr and "reused 84" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_runs_with_different_seeds_are_paired_by_case_condition_and_trial(
    runs: Path,
) -> None:
    run(DEMO, RunConfig(runs_dir=runs, run_id="reseeded", progress=False, trials=3, seed=99,
                        lanes=("prompt",), conditions=("none",)))
    result = compare_pairwise("demo", "reseeded", conditions=["none"], runs_dir=runs,
                              n_resamples=500)
    assert result.stats.n_pairs == 84 and result.skipped["reused"] == 0
    assert set(result.pairs["condition"]) == {"none"}
    assert result.verdict != "improved" or result.stats.win_probability.estimate < 0.6
    assert result.path == runs / "reseeded" / "pairwise" / "demo--vs--reseeded.json"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--conditions", "none", "--pairwise"], "--conditions A,B"),
        (["--conditions", "none,preloaded", "--pairwise", "--rubric", "missing.md"],
         "--rubric missing.md: cannot read the rubric file"),
        (["--conditions", "none,nosuch", "--pairwise"], "condition 'nosuch' has no items"),
        (["--conditions", "none,preloaded", "--pairwise", "--judge-opt", "position_bias=2"],
         "position_bias"),
    ],
)
def test_bad_input_is_a_clear_error(runs: Path, args: list[str], message: str) -> None:
    done = evalkit_cli("compare", "demo", *args, "--runs-dir", str(runs))
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr


# -- calibration -----------------------------------------------------------------------------


def _label_from_truth(runs: Path, sheet: Path) -> None:
    """Fill the blind sheet as a careful reader would: the error-free, unbiased judge's call."""
    truth = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             model="sim-truth", n_resamples=200, write=False)
    outcome = {(r["case_id"], int(r["trial"])): r["outcome"]
               for r in truth.pairs.to_dict("records")}
    with sheet.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and set(rows[0]) == set(PAIR_LABEL_COLUMNS)
    for row in rows:
        won = outcome[(row["case_id"], int(row["trial"]))]
        if won == 0.5:
            row["label"] = "tie"
        else:
            candidate_is_1 = not baseline_first(row["pair_id"])
            row["label"] = "1" if (won == 1.0) == candidate_is_1 else "2"
    with sheet.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize(
    ("model", "options", "status"),
    [("sim-careful", {"error_rate": 0.02}, "calibrated"),
     ("sim-biased", {"position_bias": 0.7}, "below_threshold")],
)
def test_calibration_gates_the_pairwise_verdict(
    runs: Path, model: str, options: dict[str, float], status: str
) -> None:
    first = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             model=model, options=options, n_resamples=200)
    assert first.calibration["status"] == "uncalibrated"
    sheet = runs / "pairs.csv"
    sampled = evalkit_cli("judge", "sample", "demo", "--pairwise", "-n", "50", "-o", str(sheet),
                          "--runs-dir", str(runs))
    assert sampled.returncode == 0, sampled.stderr
    # blind: neither the variants nor the judge's verdicts or reasons are on the sheet
    assert sheet.read_text().splitlines()[0] == ",".join(PAIR_LABEL_COLUMNS)
    _label_from_truth(runs, sheet)
    done = evalkit_cli("judge", "calibrate", "demo", "--labels", str(sheet), "--pairwise",
                       "--runs-dir", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    calibration = json.loads(done.stdout)
    assert calibration["n"] == 50 and calibration["kind"] == "pairwise"
    assert calibration["judge"]["prompt_hash"] == PAIRWISE_PROMPT_HASH
    again = compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs,
                             model=model, options=options, n_resamples=200)
    assert again.calibration["status"] == status, calibration["kappa"]
    if status == "below_threshold":
        assert calibration["position_consistency"] < 0.8
        assert calibration["kappa"]["ci_low"] < 0.6
    else:
        assert calibration["kappa"]["ci_low"] >= 0.6


def test_labels_that_are_not_1_2_or_tie_are_refused(runs: Path) -> None:
    compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs, n_resamples=200)
    sheet = runs / "pairs.csv"
    assert evalkit_cli("judge", "sample", "demo", "--pairwise", "-n", "5", "-o", str(sheet),
                       "--runs-dir", str(runs)).returncode == 0
    with sheet.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["label"] = "maybe"
    with sheet.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = evalkit_cli("judge", "calibrate", "demo", "--labels", str(sheet), "--pairwise",
                       "--runs-dir", str(runs))
    assert done.returncode == 2 and "row 1: label 'maybe' is not 1, 2 or tie" in done.stderr


def test_gate_refuses_a_pairwise_verdict_of_an_uncalibrated_judge(runs: Path) -> None:
    run(DEMO, RunConfig(runs_dir=runs, run_id="cand", progress=False, trials=3, seed=5,
                        lanes=("prompt",), conditions=("none",)))
    assert evalkit_cli("gate", "--baseline", "demo", "--candidate", "cand", "--pairwise",
                       "--runs-dir", str(runs)).returncode == 2  # nothing compared yet
    compare_pairwise("demo", "cand", conditions=["none"], runs_dir=runs, n_resamples=200)
    blocked = evalkit_cli("gate", "--baseline", "demo", "--candidate", "cand", "--pairwise",
                          "--runs-dir", str(runs), "--json")
    assert blocked.returncode == 1
    decision = json.loads(blocked.stdout)
    assert decision["calibration"]["status"] == "uncalibrated"
    assert "judge calibrate cand" in decision["reasons"][-1]
    allowed = evalkit_cli("gate", "--baseline", "demo", "--candidate", "cand", "--pairwise",
                          "--allow-uncalibrated-judge", "--runs-dir", str(runs))
    assert allowed.returncode == (1 if decision["verdict"] == "regressed" else 0)
