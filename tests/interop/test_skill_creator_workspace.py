"""Export round trips, and skill-creator's workspace layout written and read back.

The always-on tests are written from skill-creator's public ``references/schemas.md``
(``grading.json``, ``timing.json``, ``eval_metadata.json``, ``benchmark.json``) and from what its
scripts document: ``aggregate_benchmark.py ITERATION_DIR`` reads
``eval-*/CONFIG/run-*/grading.json`` (+ ``timing.json``), ``generate_review.py WORKSPACE
--static FILE`` finds every folder holding ``outputs/``. Where a copy of skill-creator is on this
machine, ``EVALKIT_SKILL_CREATOR=/path/to/skills/skill-creator`` makes the last test run those
two scripts on evalkit's output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.cases import import_skill_dir
from evalkit.interop import export_run, import_results
from evalkit.results import load_manifest, read_transcripts
from evalkit.runner import RunConfig, run
from tests.conftest import ROOT, evalkit_cli

SKILLS = ROOT / "tests" / "fixtures" / "skills"
SKILL_CREATOR = os.environ.get("EVALKIT_SKILL_CREATOR")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release-notes skill with its trigger set, run offline: 3 trials, three conditions."""
    root = tmp_path_factory.mktemp("sc")
    triggers = json.loads((SKILLS / "release-notes-triggers.json").read_text())
    many = root / "triggers.json"  # 12 queries, so that ids run past 9 (natural order)
    many.write_text(json.dumps([triggers[i % len(triggers)] | {"query": f"{q['query']} ({i})"}
                                for i, q in enumerate(triggers * 6)][:12]))
    import_skill_dir(SKILLS / "release-notes", root / "suite", triggers=(many,))
    result = run(root / "suite", RunConfig(runs_dir=root / "runs", run_id="r", trials=3,
                                           progress=False, backend="threading"))
    return result.run_dir


def _rates(df: pd.DataFrame) -> dict[str, float]:
    graded = df[df["status"] != "ungraded"]
    return {str(k): float(v) for k, v in graded.groupby("condition")["passed"].mean().items()}


def test_benchmark_export_writes_only_expectations_and_round_trips(
    run_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "benchmark.json"
    export_run(run_dir, out)
    bench = json.loads(out.read_text())
    df = evalkit.read_run(run_dir)
    runs = bench["runs"]
    assert len(runs) == int(df["condition"].isin(["none", "preloaded"]).sum())
    for entry in runs:
        texts = [e["text"] for e in entry["expectations"]]
        assert "nan" not in texts and "total" not in texts and all(texts)
        # the counts are those of the expectations written
        assert entry["result"]["passed"] == sum(e["passed"] for e in entry["expectations"])
        assert entry["result"]["total"] == len(entry["expectations"])
        assert isinstance(entry["eval_id"], int) and not isinstance(entry["eval_id"], bool)
    assert all(isinstance(i, int) for i in bench["metadata"]["evals_run"])
    # numeric ids in natural order: trigger-2 before trigger-10
    names = list(dict.fromkeys(r["eval_name"] for r in runs))
    triggers = [n for n in names if n.startswith("trigger-")]
    assert triggers == [f"trigger-{i}" for i in range(1, 13)]
    # export then import: the run's per-condition pass rates, exactly
    back = import_results(out, "skill-creator", "back", runs_dir=tmp_path / "runs")
    again = evalkit.read_run(back.run_dir)
    expected = {c: r for c, r in _rates(df).items() if c in ("none", "preloaded")}
    assert _rates(again) == pytest.approx(expected)
    assert set(again["case_id"]) == set(df["case_id"])
    # trigger cases now pass when routing is right, so a with/without difference shows
    assert 0 < again.loc[again["case_id"].str.startswith("trigger"), "passed"].mean() < 1


def _layout_is_schemas_md(workspace: Path) -> list[Path]:
    iteration = workspace / "iteration-1"
    gradings = sorted(iteration.glob("eval-*/*/run-*/grading.json"))
    assert gradings
    for grading_path in gradings:
        run = grading_path.parent
        assert re.fullmatch(r"run-\d+", run.name)
        assert run.parent.name in ("with_skill", "without_skill")
        grading = json.loads(grading_path.read_text())
        for e in grading["expectations"]:
            assert isinstance(e["text"], str) and isinstance(e["passed"], bool)
            assert isinstance(e["evidence"], str)
        summary = grading["summary"]
        assert summary["passed"] + summary["failed"] == summary["total"]
        assert summary["passed"] == sum(e["passed"] for e in grading["expectations"])
        timing = json.loads((run / "timing.json").read_text())
        assert {"total_tokens", "duration_ms", "total_duration_seconds"} <= set(timing)
        assert (run / "outputs" / "final_answer.md").is_file()
        assert "## Eval Prompt" in (run / "outputs" / "transcript.md").read_text()
        metadata = json.loads((run.parent.parent / "eval_metadata.json").read_text())
        assert isinstance(metadata["eval_id"], int) and metadata["prompt"]
        assert run.parent.parent.name == f"eval-{metadata['eval_id']}"
    return gradings


def test_workspace_export_has_skill_creators_layout_and_reads_back(
    run_dir: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "release-notes-workspace"
    proc = evalkit_cli("export", run_dir, "--format", "skill-creator-workspace", "-o", workspace,
                       "--json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    gradings = _layout_is_schemas_md(workspace)
    df = evalkit.read_run(run_dir)
    assert len(gradings) == json.loads(proc.stdout)["runs"] == int(
        df["condition"].isin(["none", "preloaded"]).sum())
    # the final answer is the transcript's
    sample = json.loads(gradings[0].read_text())["evalkit"]
    row = df[(df.case_id == sample["case_id"]) & (df.condition == sample["condition"])
             & (df.trial == sample["trial"])].iloc[0]
    record = read_transcripts(run_dir, [row["item_key"]])[row["item_key"]]
    answer = "\n".join(e["content"] for e in record["response"]["events"]
                       if e["kind"] == "assistant")
    assert (gradings[0].parent / "outputs" / "final_answer.md").read_text() == (
        answer or "(no answer)\n")
    # a second export into the same folder is refused (exit 2, no traceback)
    proc = evalkit_cli("export", run_dir, "--format", "skill-creator-workspace", "-o", workspace,
                       cwd=ROOT)
    assert proc.returncode == 2 and "not an empty directory" in proc.stderr
    # import reads the workspace back: grading.json and timing.json per run
    back = import_results(workspace, "skill-creator", "ws", runs_dir=tmp_path / "runs")
    again = evalkit.read_run(back.run_dir)
    assert len(again) == len(gradings)
    assert _rates(again) == pytest.approx(
        {c: r for c, r in _rates(df).items() if c in ("none", "preloaded")})
    timing = json.loads((gradings[0].parent / "timing.json").read_text())
    first = again[(again.case_id == sample["case_id"]) & (again.condition == sample["condition"])
                  & (again.trial == sample["trial"])].iloc[0]
    assert first["latency_s"] == pytest.approx(timing["total_duration_seconds"])
    assert first["output_tokens"] == timing["total_tokens"]
    # a benchmark.json beside the gradings (aggregate_benchmark.py writes one there) is derived
    # from them: it is not read a second time
    export_run(run_dir, workspace / "iteration-1" / "benchmark.json")
    twice = import_results(workspace, "skill-creator", "ws2", runs_dir=tmp_path / "runs")
    assert twice.items == len(gradings)
    assert any("each run counts once" in w for w in twice.warnings)


def test_a_plain_skill_creator_workspace_imports(tmp_path: Path) -> None:
    """A workspace as skill-creator itself writes it (no evalkit key), from schemas.md."""
    iteration = tmp_path / "pdf-workspace" / "iteration-2"
    for eval_id, config, run_number, passed in [
        (0, "with_skill", 1, [True, True]), (0, "without_skill", 1, [True, False]),
        (1, "with_skill", 1, [True]), (1, "without_skill", 1, [False]),
    ]:
        eval_dir = iteration / f"eval-{eval_id}"
        eval_dir.mkdir(parents=True, exist_ok=True)
        (eval_dir / "eval_metadata.json").write_text(json.dumps(
            {"eval_id": eval_id, "eval_name": f"case-{eval_id}", "prompt": "Fill the form",
             "assertions": []}))
        run = eval_dir / config / f"run-{run_number}"
        (run / "outputs").mkdir(parents=True)
        (run / "grading.json").write_text(json.dumps({
            "expectations": [{"text": f"check {i}", "passed": p, "evidence": "seen"}
                             for i, p in enumerate(passed)],
            "summary": {"passed": sum(passed), "failed": len(passed) - sum(passed),
                        "total": len(passed), "pass_rate": sum(passed) / len(passed)},
            "execution_metrics": {"total_tool_calls": 7},
        }))
        (run / "timing.json").write_text(json.dumps(
            {"total_tokens": 84852, "duration_ms": 23332, "total_duration_seconds": 23.3}))
    result = import_results(iteration, "skill-creator", "pdf", runs_dir=tmp_path / "runs")
    df = evalkit.read_run(result.run_dir).set_index(["case_id", "condition"])
    assert result.items == 4
    assert bool(df.loc[("0", "preloaded"), "passed"]) and not df.loc[("0", "none"), "passed"]
    assert df.loc[("0", "none"), "score"] == pytest.approx(0.5)
    assert df.loc[("1", "preloaded"), "latency_s"] == pytest.approx(23.3)
    assert df.loc[("1", "preloaded"), "n_steps"] == 7
    assert load_manifest(result.run_dir).to_json()["suite"] == "pdf"


@pytest.mark.skipif(not SKILL_CREATOR, reason="set EVALKIT_SKILL_CREATOR to a local copy of "
                    "skill-creator (skills/skill-creator) to run its own scripts on the export")
def test_skill_creators_own_scripts_read_the_export(run_dir: Path, tmp_path: Path) -> None:
    assert SKILL_CREATOR is not None
    creator = Path(SKILL_CREATOR)
    workspace = tmp_path / "release-notes-workspace"
    export_run(run_dir, workspace, format="skill-creator-workspace")
    iteration = workspace / "iteration-1"
    proc = subprocess.run(
        [sys.executable, str(creator / "scripts" / "aggregate_benchmark.py"), str(iteration),
         "--skill-name", "release-notes"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bench = json.loads((iteration / "benchmark.json").read_text())
    df = evalkit.read_run(run_dir)
    exported = df[df["condition"].isin(["none", "preloaded"])]
    assert len(bench["runs"]) == len(exported)
    ours = json.loads(export_run(run_dir, tmp_path / "ours.json").path.read_text())
    for configuration in ("with_skill", "without_skill"):
        assert bench["run_summary"][configuration]["pass_rate"]["mean"] == pytest.approx(
            ours["run_summary"][configuration]["pass_rate"]["mean"], abs=1e-4)
    page = tmp_path / "review.html"
    proc = subprocess.run(
        [sys.executable, str(creator / "eval-viewer" / "generate_review.py"), str(workspace),
         "--static", str(page), "--benchmark", str(iteration / "benchmark.json")],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    html = page.read_text()
    data = json.loads(re.search(r"const EMBEDDED_DATA = (\{.*?\});\n", html, re.S).group(1))
    assert len(data["runs"]) == len(exported)
    assert all(r["prompt"] != "(No prompt found)" for r in data["runs"])
    assert all(r["grading"] is not None and r["outputs"] for r in data["runs"])
