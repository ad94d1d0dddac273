"""skill-creator's benchmark.json: import as a run, export a run, round trip.

The fixtures follow the schema documented in skill-creator's ``references/schemas.md``
(``benchmark.json``: ``metadata``, ``runs[]`` with ``result`` and ``expectations``,
``run_summary``); ``odd-benchmark.json`` is the same data with string ids, extra keys, a run
without its expectation list and a stale ``run_summary``. Expected values are recomputed here
from the raw files with plain ``json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.errors import InputError
from evalkit.interop import export_run, import_results
from evalkit.results import read_run, read_scores
from tests.conftest import ROOT, evalkit_cli

FIX = ROOT / "tests" / "fixtures" / "imports" / "skill-creator"
BENCH = FIX / "benchmark.json"
ODD = FIX / "odd-benchmark.json"

#: Every field skill-creator's viewer and aggregate script read, with its JSON type.
RUN_FIELDS = {"eval_id": (int, str), "eval_name": str, "configuration": str, "run_number": int,
              "result": dict, "expectations": list, "notes": list}
RESULT_FIELDS = {"pass_rate": (int, float), "passed": int, "failed": int, "total": int,
                 "time_seconds": (int, float), "tokens": int, "tool_calls": int, "errors": int}
STAT_FIELDS = ("mean", "stddev", "min", "max")


def _raw(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_import_counts_match_the_file(tmp_path: Path) -> None:
    raw = _raw(BENCH)
    result = import_results(BENCH, "skill-creator", "sc", runs_dir=tmp_path)
    results = read_run("sc", tmp_path)
    scores = read_scores("sc", tmp_path)
    assert result.items == len(raw["runs"]) == len(results)
    assert len(scores) == sum(len(r["expectations"]) for r in raw["runs"])
    assert int(scores["passed"].sum()) == sum(r["result"]["passed"] for r in raw["runs"])
    conditions = {"with_skill": "preloaded", "without_skill": "none"}
    for run in raw["runs"]:
        row = results[
            (results.case_id == str(run["eval_id"]))
            & (results.condition == conditions[run["configuration"]])
            & (results.trial == run["run_number"] - 1)
        ]
        assert len(row) == 1
        assert bool(row.passed.iloc[0]) == (run["result"]["failed"] == 0)
        assert row.score.iloc[0] == pytest.approx(run["result"]["pass_rate"])
        assert row.latency_s.iloc[0] == pytest.approx(run["result"]["time_seconds"])
        assert row.output_tokens.iloc[0] == run["result"]["tokens"]
    # the item's expectation rows carry the grader's evidence
    key = results.item_key.iloc[0]
    assert scores[scores.item_key == key]["detail"].str.startswith("run ").all()


def test_imported_benchmark_gets_a_paired_verdict(tmp_path: Path) -> None:
    import_results(BENCH, "skill-creator", "sc", runs_dir=tmp_path)
    comparison = evalkit.compare(tmp_path / "sc", conditions=("none", "preloaded"))
    raw = _raw(BENCH)
    per_case: dict[tuple[int, str], list[float]] = {}
    for run in raw["runs"]:
        passed = float(run["result"]["failed"] == 0)
        per_case.setdefault((run["eval_id"], run["configuration"]), []).append(passed)
    deltas = [
        sum(per_case[(e, "with_skill")]) / 3 - sum(per_case[(e, "without_skill")]) / 3
        for e in raw["metadata"]["evals_run"]
    ]
    assert comparison.n_cases == len(deltas)
    assert comparison.delta.estimate == pytest.approx(sum(deltas) / len(deltas))
    # four evals cannot support a verdict: evalkit says so instead of guessing
    assert comparison.verdict == "inconclusive"


def test_odd_variants_are_accepted_with_warnings(tmp_path: Path) -> None:
    raw = _raw(ODD)
    result = import_results(ODD, "skill-creator", "odd", runs_dir=tmp_path)
    results = read_run("odd", tmp_path)
    assert set(results.case_id) == {f"eval-{i}" for i in range(1, 5)}
    expectations = sum(len(r.get("expectations", [])) for r in raw["runs"])
    assert len(read_scores("odd", tmp_path)) == expectations
    joined = "\n".join(result.warnings)
    assert "grader" in joined and "result.cost_usd" in joined
    assert "run_summary says the with_skill pass rate is 0.990" in joined


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["runs"][2].pop("configuration"), "runs[2]: needs a 'configuration'"),
        (lambda d: d["runs"][1].update(run_number=0), "runs[1]: run_number counts from 1"),
        (
            lambda d: d["runs"][0].update(pass_rate=0.5, result={}),
            "runs[0]: 'pass_rate' sits at the top level",
        ),
        (
            lambda d: d["runs"][3]["result"].update(passed=0),
            "runs[3]: result says 0 of",
        ),
        (lambda d: d["runs"][4].update(expectations=["x"]), "expectations[0] is a bare string"),
        (lambda d: d.pop("runs"), "no 'runs' list"),
        (lambda d: d["runs"].append(dict(d["runs"][0])), "are the same work item"),
    ],
)
def test_unusable_runs_name_file_place_and_fix(tmp_path: Path, mutate: Any, message: str) -> None:
    data = _raw(BENCH)
    mutate(data)
    path = tmp_path / "benchmark.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=str(path)) as info:
        import_results(path, "skill-creator", "bad", runs_dir=tmp_path / "runs")
    assert message in str(info.value)
    assert not (tmp_path / "runs" / "bad").exists()


def test_cli_import_bad_file_exits_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "benchmark.json"
    path.write_text('{"runs": [{"eval_id": 1}]}')
    proc = evalkit_cli("import", str(path), "--format", "skill-creator", "--run-id", "x",
                "--runs-dir", str(tmp_path))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}: runs[0]: needs a 'configuration'" in proc.stderr


def _check_viewer_fields(bench: dict[str, Any]) -> None:
    assert set(bench) >= {"metadata", "runs", "run_summary", "notes"}
    for field in ("skill_name", "timestamp", "evals_run", "runs_per_configuration"):
        assert field in bench["metadata"]
    for run in bench["runs"]:
        for field, kind in RUN_FIELDS.items():
            assert isinstance(run[field], kind), (field, run[field])
        assert run["configuration"] in ("with_skill", "without_skill")
        for field, kind in RESULT_FIELDS.items():
            assert isinstance(run["result"][field], kind), (field, run["result"][field])
            assert not isinstance(run["result"][field], bool)
        for expectation in run["expectations"]:
            assert isinstance(expectation["text"], str)
            assert isinstance(expectation["passed"], bool)
            assert isinstance(expectation["evidence"], str)
    for configuration in ("with_skill", "without_skill"):
        for metric in ("pass_rate", "time_seconds", "tokens"):
            stats = bench["run_summary"][configuration][metric]
            assert all(isinstance(stats[k], int | float) for k in STAT_FIELDS)
    assert all(isinstance(v, str) for v in bench["run_summary"]["delta"].values())


def test_round_trip_keeps_every_count(tmp_path: Path) -> None:
    raw = _raw(BENCH)
    import_results(BENCH, "skill-creator", "sc", runs_dir=tmp_path)
    out = tmp_path / "out" / "benchmark.json"
    exported = export_run("sc", out, runs_dir=tmp_path)
    bench = _raw(out)
    _check_viewer_fields(bench)
    assert exported.runs == len(bench["runs"]) == len(raw["runs"])
    key = lambda r: (r["eval_id"], r["configuration"], r["run_number"])  # noqa: E731
    before = {key(r): r for r in raw["runs"]}
    after = {key(r): r for r in bench["runs"]}
    assert before.keys() == after.keys()
    for k, run in before.items():
        for field in ("pass_rate", "passed", "failed", "total", "tokens", "tool_calls"):
            assert after[k]["result"][field] == pytest.approx(run["result"][field]), (k, field)
        # the same graded expectations (scores.parquet keeps them sorted by text)
        graded = [(e["text"], e["passed"], e["evidence"]) for e in run["expectations"]]
        back = [(e["text"], e["passed"], e["evidence"]) for e in after[k]["expectations"]]
        assert sorted(back) == sorted(graded)
    for configuration in ("with_skill", "without_skill"):
        for metric in ("pass_rate", "tokens"):
            assert bench["run_summary"][configuration][metric] == pytest.approx(
                raw["run_summary"][configuration][metric], abs=1e-4
            )
    assert bench["evalkit"]["paired_comparison"]["n_cases"] == 4
    # and back again: the same counts
    again = import_results(out, "skill-creator", "again", runs_dir=tmp_path)
    assert again.items == len(raw["runs"])
    assert len(read_scores("again", tmp_path)) == len(read_scores("sc", tmp_path))


@pytest.mark.slow
def test_cli_exports_an_evalkit_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    proc = evalkit_cli("run", "cases/demo", "--trials", "2", "--run-id", "demo", "--runs-dir",
                       str(runs), "--conditions", "none,preloaded")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "benchmark.json"
    proc = evalkit_cli("export", "demo", "--format", "skill-creator", "-o", str(out),
                "--runs-dir", str(runs), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    bench = _raw(out)
    _check_viewer_fields(bench)
    results = read_run("demo", runs)
    assert summary["runs"] == len(bench["runs"]) == len(results)
    assert bench["metadata"]["runs_per_configuration"] == 2
    assert summary["verdict"] == bench["evalkit"]["paired_comparison"]["verdict"]
    with_skill = [r for r in bench["runs"] if r["configuration"] == "with_skill"]
    assert len(with_skill) == int((results.condition == "preloaded").sum())


def test_export_names_missing_conditions(tmp_path: Path) -> None:
    import_results(BENCH, "skill-creator", "sc", runs_dir=tmp_path)
    with pytest.raises(InputError, match=r"no items in condition\(s\) \['self-load'\]"):
        export_run("sc", tmp_path / "b.json", skill="self-load", runs_dir=tmp_path)
