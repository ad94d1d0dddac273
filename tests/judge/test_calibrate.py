"""Calibration of a judge against human labels (here: the known truth, so errors are real)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

import evalkit
from evalkit.cases import load_suite
from evalkit.errors import InputError
from evalkit.judge import calibrate, known_truth, statements
from evalkit.results import read_scores, read_transcripts
from evalkit.runner import RunConfig, run
from tests.conftest import evalkit_cli


def _run(suite: Path, runs_dir: Path, run_id: str, error_rate: float) -> Path:
    config = RunConfig(runs_dir=runs_dir, run_id=run_id, progress=False, trials=4,
                       judge_options={"error_rate": error_rate, "seed": 3})
    return run(suite, config).run_dir


def _truth_labels(suite_dir: Path, run_dir: Path, path: Path, *, by_key: bool) -> list[dict]:
    """Human labels = the known truth of every judged statement."""
    suite = load_suite(suite_dir)
    cases = {c.id: c for c in suite.cases}
    df = evalkit.read_run(run_dir)
    transcripts = read_transcripts(run_dir)
    rows = []
    for _, item in df.iterrows():
        case = cases[item["case_id"]]
        events = transcripts[item["item_key"]]["response"]["events"]
        text = "\n".join(e["content"] for e in events if e["kind"] in ("assistant", "tool_call"))
        for number, statement in enumerate(statements(case), start=1):
            truth = known_truth(statement, case, text)
            row = {"expectation": statement.text if by_key else str(number),
                   "label": "pass" if truth else "fail"}
            if by_key:
                row["item_key"] = item["item_key"]
            else:
                row |= {"case_id": item["case_id"], "condition": item["condition"],
                        "trial": str(item["trial"])}
            rows.append(row)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_a_perfect_judge_agrees_with_the_truth(
    judged_suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    run_dir = _run(judged_suite, runs_dir, "perfect", 0.0)
    labels = tmp_path / "labels.csv"
    rows = _truth_labels(judged_suite, run_dir, labels, by_key=True)
    result = calibrate("perfect", labels, runs_dir=runs_dir)
    assert result.n == len(rows) == 8 * 2 + 8 * 1
    assert result.unmatched == 0
    assert result.agreement == 1.0 and result.disagreements == []
    assert result.confusion["pass_fail"] == result.confusion["fail_pass"] == 0


def test_an_erring_judge_is_caught_and_kappa_matches_statsmodels(
    judged_suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    run_dir = _run(judged_suite, runs_dir, "erring", 0.3)
    labels = tmp_path / "labels.csv"
    _truth_labels(judged_suite, run_dir, labels, by_key=False)  # case/condition/trial, numbers
    result = calibrate("erring", labels, runs_dir=runs_dir)
    scores = read_scores(run_dir)
    judged = scores[scores["component"].str.startswith("expectation:")]
    assert result.n == len(judged)
    c = result.confusion
    assert sum(c.values()) == result.n
    wrong = c["pass_fail"] + c["fail_pass"]
    assert wrong > 0  # the judge errs at 30 %: calibration sees it
    assert result.agreement == pytest.approx(1 - wrong / result.n)
    assert len(result.disagreements) == wrong
    assert all(d["judge"] != d["human"] and d["evidence"] for d in result.disagreements)
    table = np.array([[c["pass_pass"], c["pass_fail"]], [c["fail_pass"], c["fail_fail"]]])
    expected = sm_cohens_kappa(table)
    assert result.kappa.note == ""
    assert result.kappa.estimate == pytest.approx(float(expected.kappa))
    assert result.kappa.se == pytest.approx(float(expected.std_kappa))
    assert {p["expectation"] for p in result.per_expectation} == set(judged["expectation"])
    # stored beside the run, keyed by the judge's identity
    stored = json.loads(Path(result.path).read_text())
    assert Path(result.path).parent == run_dir / "calibration"
    assert Path(result.path).name == f"simulated--sim-judge-1--{result.judge['prompt_hash']}.json"
    assert stored["confusion"] == c


def test_calibrate_cli_and_bad_labels(
    judged_suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    run_dir = _run(judged_suite, runs_dir, "cli", 0.3)
    labels = tmp_path / "labels.csv"
    _truth_labels(judged_suite, run_dir, labels, by_key=True)
    done = evalkit_cli("judge", "calibrate", "cli", "--labels", str(labels),
                       "--runs-dir", str(runs_dir))
    assert done.returncode == 0
    out = done.stdout
    assert "Cohen's kappa" in out and "confusion (judge x human)" in out
    done = evalkit_cli("judge", "calibrate", "cli", "--labels", str(labels),
                       "--runs-dir", str(runs_dir), "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert {"kappa", "agreement", "confusion", "per_expectation", "disagreements"} <= set(data)
    assert data["kappa"]["ci_low"] <= data["kappa"]["estimate"] <= data["kappa"]["ci_high"]

    bad = tmp_path / "bad.csv"
    bad.write_text("item_key,label\nx,pass\n")
    done = evalkit_cli("judge", "calibrate", "cli", "--labels", str(bad),
                       "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    assert f"{bad}: missing column(s) expectation" in done.stderr
    bad.write_text("item_key,expectation,label\nx,1,maybe\n")
    done = evalkit_cli("judge", "calibrate", "cli", "--labels", str(bad),
                       "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    assert f"{bad}:2: label: 'maybe' is not a label" in done.stderr
    bad.write_text("item_key,expectation,label\nno-such-item,1,pass\n")
    with pytest.raises(InputError, match="no label matches a verdict"):
        calibrate("cli", bad, runs_dir=runs_dir)
    done = evalkit_cli("judge", "calibrate", "cli", "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    assert "usage: evalkit judge calibrate RUN --labels" in done.stderr
