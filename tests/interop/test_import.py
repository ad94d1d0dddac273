"""``evalkit import``: real Inspect AI and promptfoo outputs round-trip; bad input exits 2.

The fixtures under tests/fixtures/imports/ were produced by the real tools
(scripts/make_import_fixtures.py: inspect-ai 0.3.285 with mockllm, promptfoo 0.121.20 with the
echo provider). Expected values are recomputed here from the raw files with plain ``json``
(the ``.json`` logs, promptfoo's results.json) or from ``expected.json``, which the script
wrote with Inspect AI's own ``read_eval_log`` (``.eval`` members are zstd-compressed).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalkit
from evalkit.errors import ConfigError, InputError
from evalkit.interop import ImportResult, import_results
from evalkit.interop._import_common import SourceRow
from evalkit.interop._import_inspect import read_inspect, score_value
from evalkit.results import load_manifest, read_scores, resolve_run_dir
from tests.conftest import ROOT, evalkit_cli, evalkit_process

FIX = ROOT / "tests" / "fixtures" / "imports"
INSPECT_DIR = FIX / "inspect"
INSPECT_JSON = FIX / "inspect-json" / "capitals-beta.json"
PROMPTFOO = FIX / "promptfoo" / "results.json"
BAD = FIX / "malformed"
JSON_KEYS = {"run_id", "run_dir", "items", "ok", "errors", "pass_rate", "format", "source"}


def _expected_inspect() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((INSPECT_DIR / "expected.json").read_text())
    return data


def _raw_promptfoo() -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(PROMPTFOO.read_text())["results"]["results"]
    return results


def _run_json(argv: list[str]) -> dict[str, Any]:
    done = evalkit_cli(*argv)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("\n") == 1, "exactly one JSON object on stdout"
    data: dict[str, Any] = json.loads(out)
    return data


def _check_json_shape(data: dict[str, Any]) -> None:
    assert set(data) == JSON_KEYS
    assert isinstance(data["run_id"], str) and isinstance(data["run_dir"], str)
    assert isinstance(data["format"], str) and isinstance(data["source"], str)
    for key in ("items", "ok", "errors"):
        assert isinstance(data[key], int) and not isinstance(data[key], bool)
    assert isinstance(data["pass_rate"], float) and 0.0 <= data["pass_rate"] <= 1.0
    assert data["ok"] + data["errors"] <= data["items"]
    assert Path(data["run_dir"]).is_dir()


# ----------------------------------------------------------------------------- Inspect AI


def test_inspect_eval_logs_round_trip(runs_dir: Path) -> None:
    result = import_results(
        INSPECT_DIR, "inspect", "insp", runs_dir=runs_dir, condition_from="task_arg:skill"
    )
    expected = _expected_inspect()
    samples = [(log["task_args"]["skill"], s) for log in expected.values() for s in log["samples"]]
    df = evalkit.read_run("insp", runs_dir=runs_dir)

    assert result.items == len(df) == len(samples) == 6 * 3 * 2
    assert set(df["case_id"]) == {s["id"] for _, s in samples} == {
        f"cap-{c}" for c in ("france", "japan", "kenya", "peru", "canada", "australia")
    }
    assert set(df["condition"]) == {"none", "preloaded"}
    assert sorted(df["trial"].unique()) == [0, 1, 2]
    assert df["item_key"].is_unique and df["item_hash"].notna().all()
    assert set(df["provider"]) == {"mockllm/model"} and set(df["model"]) == {"mockllm/model"}
    assert set(df["suite"]) == {"capitals"} and set(df["lane"]) == {"prompt"}
    # Row by row against what inspect_ai's reader saw: includes() (the first scorer) decides.
    records = df.to_dict("records")
    by_key = {(r["condition"], r["case_id"], r["trial"]): r for r in records}
    for skill, sample in samples:
        row = by_key[(skill, sample["id"], sample["epoch"] - 1)]
        if sample["error"]:
            assert row["status"] == "error" and not row["passed"] and row["score"] == 0.0
            assert row["error_class"] == "RuntimeError"
            assert "simulated provider outage" in row["error_message"]
        else:
            assert row["status"] == "ok"
            assert row["passed"] == (sample["scores"]["includes"] == "C")
            assert row["input_tokens"] == sample["input_tokens"]
            assert row["output_tokens"] == sample["output_tokens"]
            assert row["cost_usd"] == pytest.approx(sample["total_cost"])
    passes = Counter(skill for skill, s in samples if s["scores"].get("includes") == "C")
    assert df.groupby("condition")["passed"].sum().to_dict() == dict(passes)
    assert result.errors == sum(1 for _, s in samples if s["error"]) == 1
    assert (df["latency_s"] >= 0).all() and df["started_at"].notna().all()
    # Both scorers of every scored sample land in scores.parquet.
    scores = read_scores("insp", runs_dir=runs_dir)
    assert set(scores["component"]) == {"includes", "strict"}
    assert len(scores) == 2 * sum(1 for _, s in samples if s["scores"])
    skipped = INSPECT_DIR / "expected.json"
    assert result.warnings == (f"skipped {skipped}: JSON but not an Inspect AI log",)


def test_inspect_other_scorer_maps_partial_to_half(runs_dir: Path) -> None:
    import_results(
        INSPECT_DIR,
        "inspect",
        "strict",
        runs_dir=runs_dir,
        condition_from="task_arg:skill",
        scorer="strict",
    )
    df = evalkit.read_run("strict", runs_dir=runs_dir)
    values = Counter(s["scores"].get("strict") for log in _expected_inspect().values()
                     for s in log["samples"])
    assert values["P"] > 0, "the fixture must hold partial scores"
    ok = df[df["status"] == "ok"]
    assert (ok["score"] == 0.5).sum() == values["P"]
    assert not ok.loc[ok["score"] == 0.5, "passed"].any(), "partial credit is not a pass"
    assert ok["passed"].sum() == values["C"]


def test_inspect_several_logs_compare_models(runs_dir: Path) -> None:
    """Default --condition-from model: one log per model, conditions are the models."""
    raw = json.loads(INSPECT_JSON.read_text())
    result = import_results(
        [INSPECT_DIR / "capitals-none.eval", INSPECT_JSON], "inspect", "models", runs_dir=runs_dir
    )
    df = evalkit.read_run("models", runs_dir=runs_dir)
    assert result.items == 18 + len(raw["samples"])
    assert set(df["condition"]) == {"mockllm/model", raw["eval"]["model"]}
    assert set(df["provider"]) == {"inspect"}, "the provider stays fixed when models are conditions"
    beta = df[df["condition"] == "mockllm/beta"]
    for sample in raw["samples"]:  # plain JSON log: recompute from the raw file
        row = beta[(beta["case_id"] == sample["id"]) & (beta["trial"] == sample["epoch"] - 1)]
        assert len(row) == 1
        assert bool(row["passed"].iloc[0]) == (sample["scores"]["includes"]["value"] == "C")
        usage = next(iter(sample["model_usage"].values()))
        assert row["input_tokens"].iloc[0] == usage["input_tokens"]
        assert row["latency_s"].iloc[0] == pytest.approx(sample["working_time"])
    manifest = load_manifest(resolve_run_dir("models", runs_dir)).to_json()
    assert manifest["source"]["path"] == str(FIX)
    assert len(manifest["source"]["files"]) == 2


def test_inspect_same_condition_from_two_logs_is_an_error(runs_dir: Path) -> None:
    with pytest.raises(InputError) as info:
        import_results(INSPECT_DIR, "inspect", "clash", runs_dir=runs_dir)
    message = str(info.value)
    assert "capitals-none.eval" in message and "capitals-preloaded.eval" in message
    assert "--condition-from task_arg:NAME" in message
    assert list(runs_dir.iterdir()) == [], "a failed import leaves nothing behind"


def test_inspect_condition_source_must_exist(runs_dir: Path) -> None:
    with pytest.raises(InputError, match=r"no task argument 'temperature'.*available: skill"):
        import_results(INSPECT_DIR, "inspect", "x", runs_dir=runs_dir,
                       condition_from="task_arg:temperature")
    with pytest.raises(InputError, match="no scorer 'judge'.*includes, strict"):
        import_results(INSPECT_DIR, "inspect", "x", runs_dir=runs_dir, scorer="judge")
    with pytest.raises(ConfigError, match="condition_from"):
        import_results(INSPECT_DIR, "inspect", "x", runs_dir=runs_dir, condition_from="prompt")


def test_inspect_metadata_condition(runs_dir: Path) -> None:
    import_results(INSPECT_DIR / "capitals-none.eval", "inspect", "meta", runs_dir=runs_dir,
                   condition_from="metadata:continent_hint")
    df = evalkit.read_run("meta", runs_dir=runs_dir)
    assert len(set(df["condition"])) == 6  # one value per sample in this fixture


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("C", (1.0, True)), ("correct", (1.0, True)), (True, (1.0, True)), (1, (1.0, True)),
        ("I", (0.0, False)), ("incorrect", (0.0, False)), (0, (0.0, False)), (False, (0.0, False)),
        ("P", (0.5, False)), ("N", (0.0, False)), (0.75, (0.75, False)), ("1.0", (1.0, True)),
    ],
)
def test_score_value_mapping(value: object, expected: tuple[float, bool]) -> None:
    row = SourceRow(values={}, file="log.eval", where="sample a epoch 1", identity=None)
    assert score_value(value, "s", row) == expected


@pytest.mark.parametrize("value", ["maybe", 7, -0.5, None, [1]])
def test_score_value_rejects(value: object) -> None:
    row = SourceRow(values={}, file="log.eval", where="sample a epoch 1", identity=None)
    with pytest.raises(InputError, match=r"log.eval: sample a epoch 1: .*--scorer"):
        score_value(value, "s", row)


def test_inspect_ai_reader_agrees_when_installed() -> None:
    """With inspect-ai installed, read_eval_log gives the same rows as evalkit's own reader."""
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (optional; see docs)")
    files = [INSPECT_DIR / "capitals-preloaded.eval", INSPECT_JSON]
    own = read_inspect(files, set(), "task_arg:skill", None, "prompt", use_inspect_ai=False)
    tool = read_inspect(files, set(), "task_arg:skill", None, "prompt", use_inspect_ai=True)
    def key(row: SourceRow) -> tuple[str, str, int]:
        return row.file, row.values["case_id"], row.values["trial"]

    assert [r.values for r in sorted(own.rows, key=key)] == [
        r.values for r in sorted(tool.rows, key=key)
    ]
    assert own.dataset == tool.dataset


# ------------------------------------------------------------------------------ promptfoo


def test_promptfoo_round_trip(runs_dir: Path) -> None:
    raw = _raw_promptfoo()
    result = import_results(PROMPTFOO, "promptfoo", "pf", runs_dir=runs_dir)
    df = evalkit.read_run("pf", runs_dir=runs_dir)

    assert result.items == len(df) == len(raw) == 3 * 2 * 3
    assert set(df["condition"]) == {r["prompt"]["label"] for r in raw} == {"none", "preloaded"}
    assert set(df["provider"]) == {"echo"} and set(df["suite"]) == {"capitals-echo"}
    described = {r["testCase"]["description"] for r in raw if r["testCase"].get("description")}
    assert described == {"france", "peru"}
    (other,) = set(df["case_id"]) - described
    assert other.startswith("test-"), "a test without description gets a vars-hash id"
    assert sorted(df["trial"].unique()) == [0, 1, 2]
    assert df.groupby(["case_id", "condition"]).size().eq(3).all()
    # Verdicts, errors and latency recomputed from the raw results.
    for label in ("none", "preloaded"):
        mine = df[df["condition"] == label]
        theirs = [r for r in raw if r["prompt"]["label"] == label]
        assert mine["passed"].sum() == sum(r["success"] for r in theirs)
        assert (mine["status"] == "error").sum() == sum(r["failureReason"] == 2 for r in theirs)
        assert sorted(mine["latency_s"]) == pytest.approx(
            sorted(r["latencyMs"] / 1000 for r in theirs)
        )
    errors = df[df["status"] == "error"]
    assert set(errors["case_id"]) == {"peru"} and set(errors["condition"]) == {"none"}
    assert errors["error_message"].str.contains("simulated provider outage").all()
    assert not errors["error_message"].str.contains(r"\n\s+at ", regex=True).any()
    half = df[(df["status"] == "ok") & (df["score"] == 0.5)]
    assert len(half) == sum(r["score"] == 0.5 for r in raw) == 3 and not half["passed"].any()
    assert result.errors == sum(r["failureReason"] == 2 for r in raw)
    stats = json.loads(PROMPTFOO.read_text())["results"]["stats"]
    assert df["passed"].sum() == stats["successes"] and len(errors) == stats["errors"]
    scores = read_scores("pf", runs_dir=runs_dir)
    n_parts = sum(len((r.get("gradingResult") or {}).get("componentResults") or []) for r in raw)
    assert len(scores) == n_parts and set(scores["component"]) == {"contains", "contains#2"}


def test_promptfoo_condition_from_provider_refuses_merging_prompts(runs_dir: Path) -> None:
    with pytest.raises(InputError, match="use --condition-from prompt"):
        import_results(PROMPTFOO, "promptfoo", "pp", runs_dir=runs_dir, condition_from="provider")


# ---------------------------------------------------------------------------- CSV / JSONL


def test_csv_round_trip_and_warning(runs_dir: Path) -> None:
    result = import_results(FIX / "tables" / "results.csv", "csv", "csv", runs_dir=runs_dir)
    df = evalkit.read_run("csv", runs_dir=runs_dir).sort_values(["case_id", "condition", "trial"])
    assert result.items == 12 and result.errors == 0
    assert result.warnings and "notes" in result.warnings[0]
    expected = pd.read_csv(FIX / "tables" / "results.csv", dtype=str)
    expected = expected.sort_values(["case_id", "condition", "trial"])
    words = {"true": True, "pass": True, "1": True, "false": False, "fail": False, "0": False}
    assert list(df["passed"]) == [words[p.lower()] for p in expected["passed"]]
    assert list(df["score"]) == pytest.approx([float(s) for s in expected["score"]])
    assert set(df["category"]) == {"python", "sql"} and set(df["lane"]) == {"prompt"}
    assert read_scores("csv", runs_dir=runs_dir).empty


def test_jsonl_matches_csv(runs_dir: Path) -> None:
    import_results(FIX / "tables" / "results.csv", "csv", "c", runs_dir=runs_dir)
    import_results(FIX / "tables" / "results.jsonl", "jsonl", "j", runs_dir=runs_dir)
    cols = ["case_id", "condition", "trial", "passed", "score", "latency_s", "cost_usd"]
    c = evalkit.read_run("c", runs_dir=runs_dir)[cols].reset_index(drop=True)
    j = evalkit.read_run("j", runs_dir=runs_dir)
    assert set(j["provider"]) == {"my-harness"} and set(j["model"]) == {"gpt-x"}
    pd.testing.assert_frame_equal(c, j[cols].reset_index(drop=True))


def test_missing_trial_numbered_in_file_order(runs_dir: Path) -> None:
    import_results(FIX / "tables" / "minimal.csv", "csv", "m", runs_dir=runs_dir)
    df = evalkit.read_run("m", runs_dir=runs_dir)
    trials = df.groupby(["case_id", "condition"])["trial"].apply(lambda t: sorted(t))
    assert all(t == [0, 1] for t in trials)
    assert (df["score"] == df["passed"].astype(float)).all(), "score defaults to float(passed)"


def test_imported_run_feeds_the_statistics(runs_dir: Path) -> None:
    import_results(INSPECT_DIR, "inspect", "stats", runs_dir=runs_dir,
                   condition_from="task_arg:skill")
    df = evalkit.read_run("stats", runs_dir=runs_dir)
    assert {"case_id", "condition", "trial", "passed"} <= set(df.columns)
    lifted = evalkit.lift("stats", runs_dir=runs_dir, n_resamples=200)
    oracle = lifted.metrics[lifted.metrics["metric"] == "oracle_lift"]
    rates = df.groupby(["condition", "case_id"])["passed"].mean().groupby("condition").mean()
    assert oracle["estimate"].iloc[0] == pytest.approx(rates["preloaded"] - rates["none"])
    verdict = evalkit.compare("stats", conditions=["none", "preloaded"], runs_dir=runs_dir,
                              n_resamples=200)
    assert verdict.to_dict()["n_cases"] == 6
    assert 0.0 <= evalkit.flips("stats", runs_dir=runs_dir).to_dict()["flip_rate"] <= 1.0


def test_run_directory_contents(runs_dir: Path) -> None:
    result = import_results(PROMPTFOO, "promptfoo", "files", runs_dir=runs_dir)
    run_dir = runs_dir / "files"
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "events.jsonl", "manifest.json", "results.parquet", "scores.parquet", "transcripts"
    ]
    assert [p.name for p in (run_dir / "transcripts").iterdir()] == ["part-00001.jsonl"]
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete" and manifest["run_id"] == "files"
    assert manifest["counts"]["items"] == result.items == 18
    assert list(manifest["conditions"]) == ["none", "preloaded"]
    assert manifest["providers"][0]["version"] == "promptfoo 0.121.20"
    source = manifest["source"]
    assert source["format"] == "promptfoo" and source["path"] == str(PROMPTFOO)
    import hashlib

    assert source["sha256"] == hashlib.sha256(PROMPTFOO.read_bytes()).hexdigest()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["run_started", "run_finished"]
    assert manifest["dataset_version"] == evalkit.read_run(run_dir)["dataset_version"].iloc[0]


def test_existing_run_id_is_refused(runs_dir: Path) -> None:
    import_results(PROMPTFOO, "promptfoo", "once", runs_dir=runs_dir)
    with pytest.raises(ConfigError, match="already exists"):
        import_results(PROMPTFOO, "promptfoo", "once", runs_dir=runs_dir)
    argv = ["import", str(PROMPTFOO), "--format", "promptfoo", "--run-id", "once",
            "--runs-dir", str(runs_dir)]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    assert "already exists" in done.stderr


# ------------------------------------------------------------------------------------ CLI


def test_cli_json_shape(runs_dir: Path) -> None:
    data = _run_json(["import", str(INSPECT_DIR), "--format", "inspect", "--run-id", "j1",
                      "--runs-dir", str(runs_dir), "--condition-from", "task_arg:skill", "--json"])
    _check_json_shape(data)
    assert data["format"] == "inspect" and data["source"] == str(INSPECT_DIR)
    assert data["items"] == 36 and data["errors"] == 1
    data = _run_json(["import", str(FIX / "tables" / "results.csv"), "--format", "csv",
                      "--run-id", "j2", "--runs-dir", str(runs_dir), "--json"])
    _check_json_shape(data)
    result = import_results(PROMPTFOO, "promptfoo", "j3", runs_dir=runs_dir)
    assert isinstance(result, ImportResult) and set(result.to_dict()) == JSON_KEYS


def test_cli_text_summary_and_warnings(runs_dir: Path) -> None:
    argv = ["import", str(FIX / "tables" / "results.csv"), "--format", "csv", "--run-id", "t",
            "--runs-dir", str(runs_dir)]
    done = evalkit_cli(*argv)
    assert done.returncode == 0, done.stderr
    assert "imported 12 items" in done.stdout and "warning:" not in done.stdout
    assert "warning: ignored column(s) not in the import format: notes" in done.stderr


MALFORMED = [
    (["csv", BAD / "empty.csv"], ["empty.csv", "empty file", "case_id, condition, passed"]),
    (["csv", BAD / "missing-passed.csv"], ["missing-passed.csv", "line 1",
                                           "missing required column(s) passed"]),
    (["csv", BAD / "bad-passed.csv"], ["bad-passed.csv: line 3", "'maybe'", "true/false"]),
    (["csv", BAD / "duplicate.csv"], ["duplicate.csv: line 2", "duplicate.csv: line 4",
                                      "case 'a'", "trial 0"]),
    (["csv", BAD / "bad-score.csv"], ["bad-score.csv: line 2", "[0, 1]", "1.5"]),
    (["jsonl", BAD / "not-json.jsonl"], ["not-json.jsonl: line 2", "not valid JSON"]),
    (["jsonl", BAD / "not-object.jsonl"], ["not-object.jsonl: line 1", "JSON object"]),
    (["inspect", BAD / "not-json.json"], ["not-json.json: line 1", "not valid JSON",
                                          "Inspect AI"]),
    (["inspect", BAD / "not-a-log.json"], ["not-a-log.json", "not an Inspect AI log"]),
    (["inspect", BAD / "truncated.eval"], ["truncated.eval", "not a zip archive"]),
    (["inspect", BAD / "not-inspect.eval"], ["not-inspect.eval", "header.json"]),
    (["promptfoo", BAD / "promptfoo-no-success.json"], ["results.results[0]", "'success'",
                                                        "promptfoo eval -o results.json"]),
    (["promptfoo", FIX / "tables" / "results.csv"], ["results.csv: line 1", "not valid JSON"]),
    (["csv", BAD / "does-not-exist.csv"], ["does-not-exist.csv", "no such file or directory"]),
    (["inspect", FIX / "tables"], ["tables", "holds no Inspect AI logs"]),
]


@pytest.mark.parametrize(("args", "needles"), MALFORMED, ids=lambda v: getattr(v[1], "name", ""))
def test_malformed_input_exits_2(
    args: list[object], needles: list[str], runs_dir: Path
) -> None:
    fmt, path = args
    argv = ["import", str(path), "--format", str(fmt), "--run-id", "bad",
            "--runs-dir", str(runs_dir), "--json"]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    assert done.stdout == "", "nothing on stdout when the import fails"
    assert done.stderr.startswith("error: ")
    for needle in needles:
        assert needle in done.stderr
    assert list(runs_dir.iterdir()) == [], "no run (and no temporary directory) is left behind"


def test_unknown_format_exits_2(runs_dir: Path) -> None:
    argv = ["import", str(PROMPTFOO), "--format", "xml", "--run-id", "x"]
    done = evalkit_cli(*argv, "--runs-dir", runs_dir)
    assert done.returncode == 2
    err = done.stderr
    assert "'xml' was passed" in err and "harbor" in err and "skill-creator" in err
    with pytest.raises(InputError, match=r"--format / format must be one of the importers csv"):
        import_results(PROMPTFOO, "xml", "x", runs_dir=runs_dir)


@pytest.mark.parametrize("run_id", ["../escape", "", "a/b", ".hidden"])
def test_run_id_must_be_a_plain_name(run_id: str, runs_dir: Path) -> None:
    with pytest.raises(ConfigError, match="plain name"):
        import_results(PROMPTFOO, "promptfoo", run_id, runs_dir=runs_dir)


def test_options_that_do_not_apply(runs_dir: Path) -> None:
    csv_file = FIX / "tables" / "results.csv"
    with pytest.raises(ConfigError, match="condition"):
        import_results(csv_file, "csv", "x", runs_dir=runs_dir, condition_from="model")
    with pytest.raises(ConfigError, match="--scorer"):
        import_results(PROMPTFOO, "promptfoo", "x", runs_dir=runs_dir, scorer="includes")


def test_malformed_via_real_subprocess_has_no_traceback(tmp_path: Path) -> None:
    proc = evalkit_process("import", BAD / "truncated.eval", "--format", "inspect",
                           "--run-id", "t", "--runs-dir", tmp_path, "--json", timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert "truncated.eval" in proc.stderr and "not a zip archive" in proc.stderr
