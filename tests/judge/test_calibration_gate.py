"""Calibration as a gate: sampled labels, kappa recovered from the simulated judge's truth,
and compare / gate flagging (and gate refusing) a judge without a good enough calibration.

The simulated judge is wrong with a known probability and every statement has a known truth,
so the "human" labels here are the truth and the population kappa is known exactly.
"""

from __future__ import annotations

import csv
import json
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.analysis import JudgedRun, check_judge_calibration
from evalkit.cases import load_suite
from evalkit.judge import calibrate, known_truth, sample_labels, statements
from evalkit.report import comparison_html
from evalkit.results import read_transcripts
from evalkit.runner import RunConfig, run
from tests.conftest import evalkit_cli
from tests.judge.conftest import SUITE_YAML, write_suite

ROOT = Path(__file__).resolve().parents[2]

# Judged cases whose difficulties differ (seeded by the case id), so the agent fails some of
# them and the statements' truth is a real mix of pass and fail. Each case's answers name its
# own port, so no two cases ask the judge the same question (the simulated judge gives one
# question one verdict, so repeated questions would not be independent draws of its error).
CASE = """\
  - id: wait-{i}
    expected_skill: waiting
    prompt: How should step {i} of my CI script wait for service {i}?
    expected_patterns: ['until']
    expectations:
      - text: Polls a readiness check in a loop
        truth: 'until\\b'
      - text: Bounds the wait with a deadline
        truth: 'deadline'
    reference: |
      until curl -fsS http://localhost:8{i:03d}/health; do sleep 1; done
      Give up after a deadline of 60 seconds.
"""
N_CASES = 48
MANY_CASES = "cases:\n" + "".join(CASE.format(i=i) for i in range(N_CASES))


def _suite(root: Path, *, min_kappa: float | None = None) -> Path:
    suite_yaml = SUITE_YAML
    if min_kappa is not None:
        suite_yaml = suite_yaml.replace(
            "judge:\n  provider: simulated\n",
            f"judge:\n  provider: simulated\n  min_kappa: {min_kappa}\n",
        )
    return write_suite(root, suite_yaml=suite_yaml, cases_yaml=MANY_CASES)


def _run(
    suite: Path, runs_dir: Path, run_id: str, error_rate: float, seed: int = 1, trials: int = 1
) -> Path:
    config = RunConfig(runs_dir=runs_dir, run_id=run_id, progress=False, trials=trials, seed=seed,
                       use_cache=False, judge_options={"error_rate": error_rate, "seed": 3})
    return run(suite, config).run_dir


def _truth(suite_dir: Path, run_dir: Path) -> dict[tuple[str, str], bool]:
    """The known truth of every judged statement: (item_key, statement text) -> holds."""
    cases = {c.id: c for c in load_suite(suite_dir).cases}
    df = evalkit.read_run(run_dir)
    transcripts = read_transcripts(run_dir)
    truth = {}
    for key, case_id in zip(df["item_key"], df["case_id"], strict=True):
        events = transcripts[key]["response"]["events"]
        text = "\n".join(e["content"] for e in events if e["kind"] in ("assistant", "tool_call"))
        for statement in statements(cases[case_id]):
            truth[(key, statement.text)] = bool(known_truth(statement, cases[case_id], text))
    return truth


def _label_with_truth(template: Path, truth: dict[tuple[str, str], bool]) -> int:
    """Fill the template's empty label column as a careful human would: with the truth."""
    with template.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        assert row["label"] == ""
        row["label"] = "pass" if truth[(row["item_key"], row["expectation"])] else "fail"
    with template.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def _population_kappa(prevalence: float, error_rate: float) -> float:
    """Kappa of a judge that flips each true label with probability ``error_rate``."""
    judge_pass = prevalence * (1 - error_rate) + (1 - prevalence) * error_rate
    chance = prevalence * judge_pass + (1 - prevalence) * (1 - judge_pass)
    return (1 - error_rate - chance) / (1 - chance)


def test_the_sample_is_stratified_seeded_and_hides_the_judge(
    tmp_path: Path, runs_dir: Path
) -> None:
    suite = _suite(tmp_path)
    run_dir = _run(suite, runs_dir, "sampled", 0.1)
    population = evalkit.results.read_scores(run_dir)
    population = population[population["component"].str.startswith("expectation:")]
    first = sample_labels("sampled", n=50, seed=5, output=tmp_path / "a.csv", runs_dir=runs_dir)
    sample_labels("sampled", n=50, seed=5, output=tmp_path / "b.csv", runs_dir=runs_dir)
    other = sample_labels("sampled", n=50, seed=6, runs_dir=runs_dir)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert [r["item_key"] for r in other.rows] != [r["item_key"] for r in first.rows]
    assert len(first.rows) == 50 and first.population == len(population)
    # every stratum (condition x judge outcome) is represented, in proportion
    assert {(s["condition"], s["judge_outcome"]) for s in first.strata} == {
        (c, "pass" if p else "fail")
        for c, p in zip(population.merge(evalkit.read_run(run_dir), on="item_key")["condition"],
                        population["passed"], strict=True)
    }
    for stratum in first.strata:
        share = stratum["population"] / first.population * 50
        assert stratum["sampled"] >= 1 and abs(stratum["sampled"] - share) <= 1
    with (tmp_path / "a.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert reader.fieldnames == ["item_key", "case_id", "condition", "trial", "component",
                                 "expectation", "prompt", "answer", "label"]
    assert all(r["label"] == "" and r["prompt"].startswith("How should step") and r["answer"]
               for r in rows)
    evidence = set(population["detail"])
    assert not any(r[c] in evidence for r in rows for c in ("answer", "prompt", "expectation"))
    # an unlabelled template is refused with the fix, never a traceback
    done = evalkit_cli("judge", "calibrate", "sampled", "--labels", str(tmp_path / "a.csv"),
                    "--runs-dir", str(runs_dir), cwd=tmp_path)
    assert done.returncode == 2 and "every 'label' cell is empty" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("error_rate", [0.0, 0.1, 0.3])
def test_kappa_is_recovered_within_its_interval(
    tmp_path: Path, runs_dir: Path, error_rate: float
) -> None:
    suite = _suite(tmp_path)
    run_dir = _run(suite, runs_dir, "noisy", error_rate)
    truth = _truth(suite, run_dir)
    labels = tmp_path / "labels.csv"
    sample_labels("noisy", n=len(truth), output=labels, runs_dir=runs_dir)  # every statement
    assert _label_with_truth(labels, truth) == len(truth) == N_CASES * 2 * 2
    result = calibrate("noisy", labels, runs_dir=runs_dir)
    prevalence = sum(truth.values()) / len(truth)
    assert 0.2 < prevalence < 0.9  # a real mix: kappa is informative
    expected = _population_kappa(prevalence, error_rate)
    kappa = result.kappa
    assert kappa.ci_low <= expected <= kappa.ci_high
    wrong = result.confusion["pass_fail"] + result.confusion["fail_pass"]
    if error_rate == 0:
        assert wrong == 0 and kappa.estimate == 1.0
    else:
        assert wrong > 0
        assert abs(wrong / result.n - error_rate) < 0.1


def test_gate_refuses_an_uncalibrated_judge_and_releases_a_calibrated_one(
    tmp_path: Path, runs_dir: Path
) -> None:
    suite = _suite(tmp_path)
    _run(suite, runs_dir, "base", 0.0, seed=1)
    cand_dir = _run(suite, runs_dir, "cand", 0.0, seed=2)
    gate = ["gate", "--baseline", "base", "--candidate", "cand", "--runs-dir", str(runs_dir)]

    blocked = evalkit_cli(*gate, cwd=tmp_path)
    assert blocked.returncode == 1, blocked.stderr
    assert "judge uncalibrated" in blocked.stdout
    assert "has no calibration" in blocked.stdout
    assert f"evalkit judge calibrate {cand_dir} --labels labels.csv" in blocked.stdout
    assert "allow_uncalibrated_judge: true" in blocked.stdout

    compared = evalkit_cli("compare", "base", "cand", "--runs-dir", str(runs_dir), "--json",
                        cwd=tmp_path)
    calibration = json.loads(compared.stdout)["judge_calibration"]
    assert calibration["status"] == "uncalibrated" and calibration["kappa"] is None
    assert calibration["min_kappa"] == 0.6
    assert calibration["judge"]["provider"] == "simulated"
    text = evalkit_cli("compare", "base", "cand", "--runs-dir", str(runs_dir), cwd=tmp_path)
    assert "judge uncalibrated" in text.stdout

    policy = tmp_path / "gate.yaml"
    policy.write_text("allow_uncalibrated_judge: true\n")
    allowed = evalkit_cli(*gate, "--policy", str(policy), "--json", cwd=tmp_path)
    assert allowed.returncode == 0
    assert json.loads(allowed.stdout)["judge_calibration"]["status"] == "uncalibrated"

    sampled = evalkit_cli("judge", "sample", "cand", "-n", "50", "-o", "labels.csv",
                       "--runs-dir", str(runs_dir), cwd=tmp_path)
    assert sampled.returncode == 0, sampled.stderr
    _label_with_truth(tmp_path / "labels.csv", _truth(suite, cand_dir))
    calibrated = evalkit_cli("judge", "calibrate", "cand", "--labels", "labels.csv",
                          "--runs-dir", str(runs_dir), cwd=tmp_path)
    assert calibrated.returncode == 0, calibrated.stderr
    assert "calibrated: kappa lower bound" in calibrated.stdout

    released = evalkit_cli(*gate, "--json", cwd=tmp_path)
    assert released.returncode == 0, released.stdout
    data = json.loads(released.stdout)
    assert data["decision"] == "released"
    assert data["judge_calibration"]["status"] == "calibrated"
    assert data["judge_calibration"]["ci_low"] >= 0.6
    assert data["ledger_row"]["judge_calibration"] == "calibrated"


@pytest.mark.slow
def test_a_noisy_judge_is_below_threshold_and_the_suite_sets_the_threshold(
    tmp_path: Path, runs_dir: Path
) -> None:
    strict = _suite(tmp_path / "strict", min_kappa=0.95)
    noisy = _suite(tmp_path / "noisy")
    _run(noisy, runs_dir, "base", 0.3, seed=1)
    cand_dir = _run(noisy, runs_dir, "cand", 0.3, seed=2)
    labels = tmp_path / "labels.csv"
    sample_labels("cand", n=80, output=labels, runs_dir=runs_dir)
    _label_with_truth(labels, _truth(noisy, cand_dir))
    kappa = calibrate("cand", labels, runs_dir=runs_dir).kappa
    assert kappa.ci_low < 0.6
    result = evalkit.gate("base", "cand", runs_dir=runs_dir, n_resamples=500)
    assert not result.released
    assert result.judge_calibration is not None
    assert result.judge_calibration["status"] == "below_threshold"
    assert result.judge_calibration["ci_low"] == pytest.approx(kappa.ci_low)
    assert any("below threshold" in r for r in result.reasons)

    # a perfect judge passes 0.6 but not a suite asking for 0.95 on 20 labels
    _run(strict, runs_dir, "s-base", 0.0, seed=1)
    s_cand = _run(strict, runs_dir, "s-cand", 0.0, seed=2)
    labels = tmp_path / "strict.csv"
    sample_labels("s-cand", n=20, output=labels, runs_dir=runs_dir)
    _label_with_truth(labels, _truth(strict, s_cand))
    perfect = calibrate("s-cand", labels, runs_dir=runs_dir).kappa
    assert perfect.estimate == 1.0 and perfect.ci_low < 0.95
    strict_result = evalkit.compare("s-base", "s-cand", runs_dir=runs_dir, n_resamples=500)
    assert strict_result.judge_calibration is not None
    assert strict_result.judge_calibration["status"] == "below_threshold"
    assert strict_result.judge_calibration["min_kappa"] == 0.95
    # the rich display (Jupyter) says so under the verdict
    assert "judge below threshold: this verdict rests on judged expectations" in unescape(
        comparison_html(strict_result))


def test_runs_without_judged_expectations_carry_no_calibration(
    tmp_path: Path, runs_dir: Path
) -> None:
    plain = write_suite(
        tmp_path, suite_yaml=SUITE_YAML.replace("judge:\n  provider: simulated\n", ""),
        cases_yaml=MANY_CASES.replace(
            "    expectations:\n      - text: Polls a readiness check in a loop\n"
            "        truth: 'until\\b'\n      - text: Bounds the wait with a deadline\n"
            "        truth: 'deadline'\n", ""),
    )
    _run(plain, runs_dir, "p1", 0.0, seed=1)
    _run(plain, runs_dir, "p2", 0.0, seed=2)
    assert evalkit.compare("p1", "p2", runs_dir=runs_dir, n_resamples=500).to_dict()[
        "judge_calibration"] is None
    assert evalkit.gate("p1", "p2", runs_dir=runs_dir, n_resamples=500).judge_calibration is None


def test_tables_with_one_judged_side_are_checked_without_a_run_directory() -> None:
    unjudged = pd.DataFrame({"case_id": ["x"], "judge_provider": [None], "judge_model": [None],
                             "judge_prompt_hash": [None]})
    judged = pd.DataFrame({"case_id": ["x"], "judge_provider": ["simulated"],
                           "judge_model": ["sim-judge-1"], "judge_prompt_hash": ["abc"]})
    check = check_judge_calibration([JudgedRun("same", unjudged), JudgedRun("same", judged)])
    assert check is not None and check.status == "uncalibrated"
    data = check.to_dict()
    assert data["calibration_file"] is None and data["judge"]["prompt_hash"] == "abc"
    assert "evalkit judge calibrate RUN --labels labels.csv" in data["message"]
    assert check_judge_calibration([JudgedRun("same", unjudged)]) is None
