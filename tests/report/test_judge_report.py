"""The judge report and the judged sections of the run and compare reports, on the committed
judged run (``tests/fixtures/judged``, made by ``scripts/make_judged_fixture.py``): the numbers
on the pages are the stored calibration's and the run's own, checked against statsmodels and
the score table."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from evalkit.report import expectation_pass_rates, report
from evalkit.results import judged_statements, read_scores

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "judged"


def _text(page: Path) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())


@pytest.fixture(scope="module")
def calibration() -> dict:
    (stored,) = (FIXTURE / "run" / "calibration").glob("*.json")
    return json.loads(stored.read_text())


def test_the_stored_calibration_matches_statsmodels(calibration: dict) -> None:
    c = calibration["confusion"]
    table = np.array([[c["pass_pass"], c["pass_fail"]], [c["fail_pass"], c["fail_fail"]]])
    expected = sm_cohens_kappa(table)
    assert calibration["kappa"]["estimate"] == pytest.approx(float(expected.kappa))
    assert calibration["disagreements"], "the fixture judge errs (30 %): something to show"


def test_the_judge_report_shows_the_calibration(calibration: dict, tmp_path: Path) -> None:
    result = report(FIXTURE / "run", kind="judge", output=tmp_path / "judge.html")
    page = result.html_path.read_text()
    text = _text(result.html_path)
    assert 'id="fig-judge-confusion"' in page
    kappa = calibration["kappa"]
    assert (f"{kappa['estimate']:.3f} [{kappa['ci_low']:.3f}, {kappa['ci_high']:.3f}] (95% CI)"
            in text)
    assert "Judge below threshold" in text  # its lower bound is under the default 0.6
    assert "min_kappa (suite) 0.60" in text
    assert f"labelled statements {calibration['n']}" in text
    for d in calibration["disagreements"]:
        title = f"{d['case_id']} / {d['condition']} / trial {d['trial']}: {d['expectation']}"
        assert title in text
    assert text.count("judge's evidence:") == len(calibration["disagreements"])
    assert "<script" not in page, "the judge report needs no script"


def test_per_expectation_pass_rates_are_the_score_tables(tmp_path: Path) -> None:
    statements = judged_statements(FIXTURE / "run")
    rates = expectation_pass_rates(statements)
    scores = read_scores(FIXTURE / "run")
    judged = scores[scores["component"].str.startswith("expectation:")]
    assert len(statements) == len(judged)
    means = statements.assign(passed=statements["passed"].astype(bool)).groupby(
        ["expectation", "condition"])["passed"].mean()  # one case per statement here
    for row in rates.itertuples():
        assert row.estimate == pytest.approx(means[(row.expectation, row.condition)])
        assert row.ci_low <= row.estimate <= row.ci_high


@pytest.mark.slow
def test_run_and_compare_reports_show_the_judged_expectations(tmp_path: Path) -> None:
    work = tmp_path / "runs"
    shutil.copytree(FIXTURE / "run", work / "judged")
    shutil.copytree(FIXTURE / "run", work / "uncal", ignore=shutil.ignore_patterns("calibration"))
    run_page = report("uncal", runs_dir=work, kind="run", output=tmp_path / "run.html")
    text = _text(run_page.html_path)
    assert "Judged expectations" in text
    assert "Judge uncalibrated" in text and "evalkit judge calibrate" in text
    assert 'id="expectation-pass-rates"' in run_page.html_path.read_text()
    for statement in set(judged_statements(work / "uncal")["expectation"]):
        assert statement in text
    compare_page = report("judged", runs_dir=work, kind="compare", output=tmp_path / "cmp.html",
                          parameters={"conditions": "none,cond-okapi"})
    text = _text(compare_page.html_path)
    assert "Judge below threshold" in text
    assert 'id="expectation-pass-rates"' in compare_page.html_path.read_text()
