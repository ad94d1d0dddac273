"""The evidence lane end to end: the simulated agent writes real bundles under two conditions,
the validators score them, and the run directory keeps each item's artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit import run
from evalkit.cases import Case
from evalkit.results import artifact_dir, read_evidence, read_run, read_scores
from evalkit.runner import RunConfig
from evalkit.runner._collect import collect_artifacts
from evalkit.scorers import check_evidence
from tests.conftest import evalkit_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "cases" / "demo"
EVIDENCE_CASES = ("evidence-flake-rate-proof", "evidence-quarantine-proof")


@pytest.fixture(scope="module")
def evidence_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs_dir = tmp_path_factory.mktemp("runs")
    config = RunConfig(
        runs_dir=runs_dir,
        run_id="ev",
        conditions=("none", "preloaded"),
        case_ids=EVIDENCE_CASES,
        trials=8,
        progress=False,
        use_cache=False,
        seed=11,
    )
    return run(DEMO, config).run_dir


def _metrics(run_dir: Path) -> pd.DataFrame:
    rows = read_run(run_dir)[["item_key", "condition", "status"]]
    scores = read_scores(run_dir).merge(rows, on="item_key")
    return scores


@pytest.mark.slow
def test_completeness_follows_the_skill_text(evidence_run: Path) -> None:
    scores = _metrics(evidence_run)
    assert set(scores["status"]) == {"ok"}
    completeness = scores[scores["component"] == "evidence_completeness"]
    by_condition = completeness.groupby("condition")["value"].mean()
    # the skill says what a bundle holds: preloaded bundles are far more complete
    assert by_condition["preloaded"] - by_condition["none"] > 0.5, by_condition
    report = scores[scores["component"] == "report_completeness"].groupby("condition")["value"]
    assert report.mean()["preloaded"] > report.mean()["none"]


@pytest.mark.slow
def test_no_pass_without_task_success_and_valid_bundle(evidence_run: Path) -> None:
    scores = read_scores(evidence_run)
    wide = scores.pivot_table(index="item_key", columns="component", values="passed",
                              aggfunc="first")
    passed = read_run(evidence_run).set_index("item_key")["passed"]
    must = wide["verifier"].astype(bool) & wide["artifacts"].astype(bool) & wide["bundle"].astype(
        bool
    )
    assert (passed[must.index] == must).all()
    assert passed.any() and (~passed).any()


@pytest.mark.slow
def test_every_item_keeps_its_bundle(evidence_run: Path) -> None:
    rows = read_run(evidence_run)
    scores = read_scores(evidence_run)
    for key in rows["item_key"]:
        record = read_evidence(evidence_run, key)
        assert record is not None, key
        assert record["item_key"] == key
        statuses = {r["path"]: r["status"] for r in record["requirements"]}
        mine = scores[(scores["item_key"] == key) & scores["component"].str.startswith("artifact:")]
        for _, s in mine.iterrows():
            assert s["detail"].startswith(statuses[s["component"].removeprefix("artifact:")])
        for entry in record["collected"]:
            copy = Path(record["files_dir"]) / entry["path"]
            assert copy.is_file() == entry["copied"]


@pytest.mark.slow
def test_cached_items_bring_their_bundle(evidence_run: Path, tmp_path: Path) -> None:
    runs_dir = evidence_run.parent
    config = RunConfig(
        runs_dir=runs_dir, run_id="ev-again", conditions=("none",), case_ids=EVIDENCE_CASES[:1],
        trials=2, progress=False, seed=11,
    )
    first = run(DEMO, config.model_copy(update={"run_id": "ev-first"}))
    again = run(DEMO, config)
    assert again.cache_hits == 2
    for key in read_run(again.run_dir)["item_key"]:
        assert read_evidence(again.run_dir, key) == {
            **read_evidence(first.run_dir, key),  # type: ignore[dict-item]
            "files_dir": str(artifact_dir(again.run_dir, key) / "files"),
        }


def test_collection_does_not_follow_symlinks_and_redacts(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef0123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ws = tmp_path / "ws"
    (ws / "proof").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("# Steps to reproduce\nprivate\n")
    (ws / "proof" / "notes.md").symlink_to(outside)
    (ws / "proof" / "log.txt").write_text(f"token={secret}\n7 of 50 runs\n")
    case = Case.model_validate(
        {
            "id": "c", "lane": "evidence", "prompt": "p",
            "verifier": [{"kind": "file_exists", "path": "proof"}],
            "artifacts_required": ["proof/notes.md", "proof/log.txt"],
        }
    )
    evidence = check_evidence(case, ws)
    from evalkit._redact import secret_values

    collect_artifacts(ws, evidence, tmp_path / "run", "evidence:c:none:simulated:0",
                      secret_values())
    record = read_evidence(tmp_path / "run", "evidence:c:none:simulated:0")
    assert record is not None
    files = Path(record["files_dir"])
    assert not (files / "proof" / "notes.md").exists()
    assert "symlink" in json.dumps(record["requirements"][0])
    copied = (files / "proof" / "log.txt").read_text()
    assert secret not in copied and "7 of 50 runs" in copied


def test_lift_reports_the_lane_metrics_with_intervals(evidence_run: Path) -> None:
    from evalkit import lift

    result = lift(evidence_run, n_resamples=2000)
    table = result.evidence
    assert set(table["metric"]) == {
        "evidence_completeness", "report_completeness", "taxonomy_usage"
    }
    rows = read_run(evidence_run)
    scores = read_scores(evidence_run)
    comp = scores[scores["component"] == "evidence_completeness"].merge(rows, on="item_key")
    per_case = comp.groupby(["condition", "case_id"])["value"].mean().groupby("condition").mean()
    level = table[(table["contrast"] == "level") & (table["metric"] == "evidence_completeness")]
    got = level.set_index("condition")["estimate"]
    assert got["none"] == pytest.approx(per_case["none"])
    assert got["preloaded"] == pytest.approx(per_case["preloaded"])
    oracle = table[(table["contrast"] == "oracle_lift")
                   & (table["metric"] == "evidence_completeness")].iloc[0]
    assert oracle["estimate"] == pytest.approx(per_case["preloaded"] - per_case["none"])
    assert oracle["ci_low"] <= oracle["estimate"] <= oracle["ci_high"]
    assert result.to_dict()["evidence"][0]["metric"] == "evidence_completeness"


def test_compare_on_a_lane_metric_is_honest_about_two_cases(evidence_run: Path) -> None:
    out = evalkit_cli("compare", evidence_run, "--conditions", "none,preloaded", "--metric",
                      "evidence_completeness", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["metric"] == "evidence_completeness"
    assert data["delta"]["estimate"] > 0.5 and data["n_cases"] == 2
    # two cases cannot carry a verdict, however large the difference
    assert data["verdict"] == "inconclusive"


def test_compare_on_a_lane_metric_needs_evidence_items(tmp_path: Path) -> None:
    config = RunConfig(runs_dir=tmp_path, run_id="prompt-only", conditions=("none", "preloaded"),
                       lanes=("prompt",), trials=1, progress=False, use_cache=False)
    done_run = run(DEMO, config)
    out = evalkit_cli("compare", done_run.run_dir, "--conditions", "none,preloaded", "--metric",
                      "report_completeness")
    assert out.returncode == 2
    assert "no item that measured 'report_completeness'" in out.stderr
    assert "Traceback" not in out.stderr
