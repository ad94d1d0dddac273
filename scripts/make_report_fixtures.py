"""Write the small committed runs the report notebooks are tested against.

Usage::

    .venv/bin/python scripts/make_report_fixtures.py            # -> tests/fixtures/runs/
    .venv/bin/python scripts/make_report_fixtures.py --out DIR

The runs are synthesized as DataFrames and written through the result schema
(``evalkit.results._io.conform``), not produced by the simulated agent, so that every report
section has something to show at a few hundred rows:

- ``w41`` and ``w42``: two weekly runs (two providers, 2 trials, no transcripts, like an
  imported run); ``w41`` is written with an older schema (no ``cache_hit``/``skill_loaded``
  columns) so the trend query needs DuckDB's ``union_by_name``;
- ``before`` and ``after``: one provider, 7 trials, full transcripts, errors and timeouts, and
  ``scores.parquet`` (:func:`synthesize_scores`: the reasons the reports show);
  ``after`` changes the dataset version, regresses one case and improves another (strongly
  enough to survive Holm's correction).

Two case ids and several transcripts, error messages and categories are hostile strings
(``<script>window.__pwned=1</script>``, ``<img src=x onerror="window.__pwned=1">``): the
browser tests check that they render as text. The same synthesizer makes the 100,000-item run
of ``benchmarks/bench_report.py`` (:func:`synthesize_large`).
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evalkit.results import RESULT_SCHEMA, SCORE_SCHEMA, conform

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "runs"

SCRIPT_PAYLOAD = "<script>window.__pwned=1</script>"
IMG_PAYLOAD = '<img src=x onerror="window.__pwned=1">'
HOSTILE_TEXT = (
    f"Answer: {SCRIPT_PAYLOAD} {IMG_PAYLOAD} </pre></div><script>window.__pwned=1</script>"
)

CONDITIONS = ("none", "self-load", "preloaded", "stale")


@dataclass(frozen=True)
class Case:
    """A synthetic case: id, lane, category, expected skill, prompt and difficulty (logit)."""

    id: str
    lane: str
    category: str
    expected_skill: str
    prompt: str
    difficulty: float
    tags: str = ""
    split: str = "dev"


CASES = (
    Case(
        "quote-variables",
        "prompt",
        "trigger",
        "safe-shell",
        "Why does my bash loop break on file names with spaces?",
        -0.3,
        "smoke",
    ),
    Case(
        "sum-numbers",
        "prompt",
        "should-not-trigger",
        "none",
        "What is the sum of the integers from 1 to 100?",
        2.5,
        "smoke,safety",
    ),
    Case(SCRIPT_PAYLOAD, "prompt", "trigger", "safe-shell", f"Explain {SCRIPT_PAYLOAD}", -0.5),
    Case(IMG_PAYLOAD, "prompt", IMG_PAYLOAD, "flaky-test-triage", f"Fix {IMG_PAYLOAD}", 0.2),
    Case(
        "exec-config-port",
        "execution",
        "config",
        "safe-shell",
        "Change the port in config/app.json to 8081 without breaking the JSON.",
        -1.5,
        split="holdout",
    ),
    Case(
        "exec-quarantine-flaky",
        "execution",
        "flaky",
        "flaky-test-triage",
        "test_orders fails one run in five; quarantine it without deleting it.",
        -0.8,
    ),
)


@dataclass(frozen=True)
class RunSpec:
    """What to synthesize for one run.

    Attributes:
        run_id: Run id (also the directory name).
        start: When the first item started.
        dataset_version: Hash of the case content.
        providers: ``(provider, model, logit shift)`` triples.
        trials: Trials per (case, condition, provider).
        seed: Seed of the run's random generator.
        cases: The cases.
        forced: ``{(case_id, condition): pass probability}`` overriding the model.
        errors: Share of items that end in an error (half of them timeouts).
        transcripts: Write a transcripts shard (False: ``transcript_path`` is null).
        drop_columns: Columns left out of ``results.parquet`` (an older schema).
        shards: Number of transcript shards.
        suite: Suite name.
    """

    run_id: str
    start: datetime
    dataset_version: str
    providers: tuple[tuple[str, str, float], ...] = (("simulated", "sim-1", 0.0),)
    trials: int = 2
    seed: int = 0
    cases: tuple[Case, ...] = CASES
    forced: dict[tuple[str, str], float] = field(default_factory=dict)
    errors: float = 0.0
    transcripts: bool = True
    drop_columns: tuple[str, ...] = ()
    shards: int = 1
    suite: str = "mini"


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def synthesize(spec: RunSpec) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Result rows (one per work item) and transcript records of a synthetic run.

    Vectorized over items: a logistic model per (case, condition, provider), Bernoulli trials.

    Args:
        spec: The run to synthesize.

    Returns:
        The result frame (columns of the result schema) and one transcript record per row
        that has a transcript.
    """
    rng = np.random.default_rng(spec.seed)
    cases = pd.DataFrame([c.__dict__ for c in spec.cases]).rename(columns={"id": "case_id"})
    cases["case_index"] = np.arange(len(cases))
    grid = pd.MultiIndex.from_product(
        [
            range(len(cases)),
            range(len(CONDITIONS)),
            range(len(spec.providers)),
            range(spec.trials),
        ],
        names=["case_index", "cond_index", "prov_index", "trial"],
    ).to_frame(index=False)
    df = grid.merge(cases, on="case_index", how="left")
    df["condition"] = np.asarray(CONDITIONS)[df["cond_index"].to_numpy()]
    prov = np.asarray(spec.providers, dtype=object)
    df["provider"] = prov[df["prov_index"].to_numpy(), 0].astype(str)
    df["model"] = prov[df["prov_index"].to_numpy(), 1].astype(str)
    shift = prov[df["prov_index"].to_numpy(), 2].astype(float)
    n = len(df)
    skilled = (df["expected_skill"] != "none").to_numpy()
    cond = df["condition"].to_numpy()
    # Self-load: the agent loads the relevant skill ~75 % of the time, an irrelevant one ~8 %.
    draw = rng.random(n)
    loads = np.where(skilled, draw < 0.75, draw < 0.08)
    loaded = np.select([cond == "none", cond == "self-load"], [False, loads], default=True).astype(
        bool
    )
    gain = np.where(skilled, 3.5, -0.3)
    effect = np.select(
        [cond == "self-load", cond == "preloaded", cond == "stale"],
        [np.where(loads, gain, 0.0), gain, gain - 4.0],
        default=0.0,
    )
    p = _sigmoid(df["difficulty"].to_numpy() + effect + shift)
    for (case_id, condition), prob in spec.forced.items():
        p = np.where((df["case_id"] == case_id) & (df["condition"] == condition), prob, p)
    passed = rng.random(n) < p
    status = np.full(n, "ok", dtype=object)
    error_class = np.full(n, None, dtype=object)
    error_message = np.full(n, None, dtype=object)
    if spec.errors:
        failed = rng.random(n) < spec.errors
        timeout = failed & (rng.random(n) < 0.5)
        server = failed & ~timeout
        status[timeout], error_class[timeout] = "timeout", "timeout"
        error_message[timeout] = "agent exceeded its 600s budget"
        status[server] = "error"
        error_class[server] = np.where(
            rng.random(int(server.sum())) < 0.5, "server_error", "rate_limited"
        )
        error_message[server] = f"HTTP 529 overloaded {IMG_PAYLOAD}"
        passed = passed & ~failed
    expected = df["expected_skill"].to_numpy(dtype=object)
    wrong = np.where(expected == "safe-shell", "flaky-test-triage", "safe-shell")
    inferred = np.where(
        loaded,
        np.where(skilled, expected, wrong),
        "none",
    )
    inferred = np.where(cond == "none", "none", inferred)
    execution = (df["lane"] == "execution").to_numpy()
    latency = rng.lognormal(np.where(execution, 3.0, 1.2), 0.5, n)
    latency = np.where(status == "timeout", 600.0, latency)
    input_tokens = rng.integers(800, 2500, n) + np.where(loaded, 1200, 0)
    output_tokens = rng.integers(80, 900, n) * np.where(execution, 4, 1)
    cost = input_tokens * 3e-6 + output_tokens * 15e-6
    starts = spec.start + pd.to_timedelta(np.cumsum(latency) / 4.0 - latency / 4.0, unit="s")
    starts = starts.floor("us")
    finished = (starts + pd.to_timedelta(latency, unit="s")).floor("us")
    score = np.where(passed, rng.uniform(0.7, 1.0, n), rng.uniform(0.0, 0.6, n))
    keys = (
        df["lane"]
        + ":"
        + df["case_id"]
        + ":"
        + df["condition"]
        + ":"
        + df["provider"]
        + ":"
        + df["trial"].astype(str)
    )
    shard = (np.arange(n) * spec.shards // max(n, 1)) + 1
    out = pd.DataFrame(
        {
            "run_id": spec.run_id,
            "item_key": keys,
            "item_hash": [f"{h:016x}" for h in rng.integers(0, 2**63, n)],
            "suite": spec.suite,
            "dataset_version": spec.dataset_version,
            "lane": df["lane"],
            "case_id": df["case_id"],
            "category": df["category"],
            "split": df["split"],
            "tags": df["tags"],
            "expected_skill": df["expected_skill"],
            "condition": df["condition"],
            "skill_hash": np.where(cond == "none", "4f53cda18c2baa0c", "3b5d2e74b97a87e3"),
            "provider": df["provider"],
            "model": df["model"],
            "provider_version": "simulated-1",
            "trial": df["trial"].astype("int32"),
            "seed": rng.integers(0, 2**62, n),
            "status": status,
            "error_class": error_class,
            "error_message": error_message,
            "passed": passed,
            "score": score,
            "inferred_skill": inferred,
            "skill_loaded": loaded,
            "latency_s": latency,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost,
            "n_steps": np.where(execution, rng.integers(3, 9, n), 1).astype("int32"),
            "started_at": starts,
            "finished_at": finished,
            "cache_hit": False,
            "transcript_path": (
                pd.Series([f"transcripts/part-{s:05d}.jsonl" for s in shard])
                if spec.transcripts
                else None
            ),
        }
    )
    out = out.sort_values("item_key", kind="stable").reset_index(drop=True)
    records = _transcripts(out, df.set_index(keys)["prompt"]) if spec.transcripts else []
    return out, records


def _transcripts(rows: pd.DataFrame, prompts: pd.Series) -> list[dict[str, Any]]:
    """One short transcript per row (plain Python: only used for small runs and the bench)."""
    out = []
    for key, case_id, lane, condition, loaded, passed, status, skill, model, provider in zip(
        rows["item_key"],
        rows["case_id"],
        rows["lane"],
        rows["condition"],
        rows["skill_loaded"],
        rows["passed"],
        rows["status"],
        rows["inferred_skill"],
        rows["model"],
        rows["provider"],
        strict=True,
    ):
        events = [{"kind": "user", "content": str(prompts[key]), "name": ""}]
        if condition == "self-load" and loaded:
            events.append({"kind": "tool_call", "content": skill, "name": "load_skill"})
        hostile = case_id in (SCRIPT_PAYLOAD, IMG_PAYLOAD)
        if status != "ok":
            events.append(
                {"kind": "assistant", "content": "(no answer: the agent stopped)", "name": ""}
            )
        elif lane == "execution":
            command = "jq '.port = 8081' config/app.json > tmp && mv tmp config/app.json"
            if not passed:
                command = "sed -i 's/8080/8081/' config/*.json; sleep 30"
            events.append({"kind": "tool_call", "content": command, "name": "bash"})
            events.append({"kind": "tool_result", "content": "exit 0", "name": "bash"})
            events.append(
                {
                    "kind": "assistant",
                    "content": "Done." if passed else "I think it works now.",
                    "name": "",
                }
            )
        else:
            text = (
                "Loop with a deadline: timeout 30 sh -c 'until curl -sf $URL; do sleep 1; done'"
                if passed
                else "Just sleep 10 and hope."
            )
            events.append(
                {"kind": "assistant", "content": HOSTILE_TEXT if hostile else text, "name": ""}
            )
        out.append(
            {
                "item_key": key,
                "provider": provider,
                "response": {"events": events, "model": model, "n_steps": len(events) - 1},
            }
        )
    return out


def write_run(
    runs_dir: Path, spec: RunSpec, rows: pd.DataFrame, records: list[dict[str, Any]]
) -> Path:
    """Write ``results.parquet``, ``manifest.json`` and the transcript shards of one run.

    Args:
        runs_dir: Parent directory.
        spec: The run's spec.
        rows: Result rows.
        records: Transcript records (one per row with a transcript).

    Returns:
        The run directory.
    """
    run_dir = runs_dir / spec.run_id
    if run_dir.exists():
        shutil.rmtree(run_dir)
    (run_dir / "transcripts").mkdir(parents=True)
    table = conform(pa.Table.from_pandas(rows, preserve_index=False), RESULT_SCHEMA)
    if spec.drop_columns:
        table = table.drop_columns(list(spec.drop_columns))
    pq.write_table(table, run_dir / "results.parquet", compression="zstd")
    by_path: dict[str, list[str]] = {}
    for path, record in zip(rows["transcript_path"], records, strict=False):
        by_path.setdefault(str(path), []).append(
            json.dumps(record, default=str, separators=(",", ":"))
        )
    for path, lines in by_path.items():
        (run_dir / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not records:
        (run_dir / "transcripts").rmdir()
    counts = rows["status"].value_counts()
    manifest = {
        "run_id": spec.run_id,
        "created_at": spec.start.isoformat(timespec="seconds"),
        "evalkit_version": "0.1.0",
        "suite": spec.suite,
        "suite_path": f"cases/{spec.suite}",
        "dataset_version": spec.dataset_version,
        "conditions": {c: {"mode": c} for c in CONDITIONS},
        "providers": [
            {"name": name, "model": model, "version": "simulated-1", "settings": {}}
            for name, model, _ in spec.providers
        ],
        "trials": spec.trials,
        "seed": spec.seed,
        "command_line": "scripts/make_report_fixtures.py (synthetic)",
        "status": "complete",
        "counts": {
            "items": len(rows),
            "ok": int(counts.get("ok", 0)),
            "error": int(counts.get("error", 0)),
            "timeout": int(counts.get("timeout", 0)),
            "passed": int(rows["passed"].sum()),
            "cache_hits": 0,
        },
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return run_dir


#: Expected patterns of the synthetic cases (what a failing answer is told it missed).
PATTERNS = ("trap .*EXIT", "timeout|deadline", "set -euo pipefail")


def synthesize_scores(rows: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Score rows (``scores.parquet``) consistent with the result rows, vectorised.

    Every answered item gets ``expected_patterns`` (all found when it passed, one to three
    missing otherwise), ``skill_trigger`` (expected against inferred skill) and ``total``
    (its score and gate); an execution item also gets ``verifier``, which fails for about half
    of the failing execution items and then gates them. Errors and timeouts have no scores.

    Args:
        rows: Result rows (``item_key, lane, passed, status, score, expected_skill,
            inferred_skill``).
        seed: Seed of the draws.

    Returns:
        The score rows, in the columns of the score schema.
    """
    rng = np.random.default_rng(seed)
    answered = rows[rows["status"] == "ok"].reset_index(drop=True)
    n = len(answered)
    keys = answered["item_key"].to_numpy()
    passed = answered["passed"].to_numpy(dtype=bool)
    execution = (answered["lane"] == "execution").to_numpy()
    verifier_fails = ~passed & execution & (rng.random(n) < 0.5)
    # a failing item misses 1-3 patterns unless its verifier alone failed it
    missing = np.where(passed | verifier_fails, 0, rng.integers(1, 4, n))
    missing_text = np.array(
        ["missing: " + ", ".join(f"`{p}`" for p in PATTERNS[:k]) if k else "" for k in range(4)]
    )
    expected = pd.DataFrame({
        "item_key": keys, "component": "expected_patterns", "value": 3.0 - missing,
        "max_value": 3.0, "passed": missing == 0, "detail": missing_text[missing],
    })
    exp_skill = answered["expected_skill"].fillna("none").astype(str)
    inf_skill = answered["inferred_skill"].fillna("none").astype(str)
    trigger_ok = (exp_skill == inf_skill).to_numpy()
    trigger = pd.DataFrame({
        "item_key": keys, "component": "skill_trigger", "value": trigger_ok.astype(float),
        "max_value": 1.0, "passed": trigger_ok,
        "detail": ("expected " + exp_skill + ", inferred " + inf_skill).to_numpy(),
    })
    exec_keys = keys[execution]
    verifier = pd.DataFrame({
        "item_key": exec_keys, "component": "verifier",
        "value": (~verifier_fails[execution]).astype(float), "max_value": 1.0,
        "passed": ~verifier_fails[execution],
        "detail": np.where(
            verifier_fails[execution],
            "command `bash test.sh` exits 0: exit 1: FAIL: server not ready after 30 s",
            "",
        ),
    })
    total = pd.DataFrame({
        "item_key": keys, "component": "total", "value": answered["score"].to_numpy(),
        "max_value": 1.0, "passed": passed,
        "detail": np.where(verifier_fails, "gate failed: verifier", ""),
    })
    scores = pd.concat([expected, trigger, verifier, total], ignore_index=True)
    scores["expectation"] = None
    return scores.sort_values(["item_key", "component"], kind="stable").reset_index(drop=True)


def write_scores(run_dir: Path, seed: int) -> None:
    """Write ``scores.parquet`` of a run from its ``results.parquet`` (:func:`synthesize_scores`).

    Args:
        run_dir: The run directory (its result rows are read back).
        seed: Seed of the draws.
    """
    rows = pd.read_parquet(run_dir / "results.parquet")
    table = conform(
        pa.Table.from_pandas(synthesize_scores(rows, seed), preserve_index=False), SCORE_SCHEMA
    )
    pq.write_table(table, run_dir / "scores.parquet", compression="zstd")


def fixture_specs() -> list[RunSpec]:
    """The four committed runs (see the module docstring)."""
    monday = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
    two = (("simulated", "sim-1", 0.0), ("simulated-large", "sim-2", 0.8))
    return [
        RunSpec(
            "w41",
            monday,
            "5d1c0a7e9b2f4a10",
            providers=two,
            seed=41,
            transcripts=False,
            drop_columns=("cache_hit", "skill_loaded"),
        ),
        RunSpec(
            "w42",
            monday + timedelta(days=7),
            "5d1c0a7e9b2f4a10",
            providers=two,
            seed=42,
            transcripts=False,
        ),
        RunSpec(
            "before",
            monday + timedelta(days=14),
            "5d1c0a7e9b2f4a10",
            trials=7,
            seed=43,
            errors=0.02,
            forced={("quote-variables", "preloaded"): 0.995, ("sum-numbers", "none"): 0.005},
        ),
        RunSpec(
            "after",
            monday + timedelta(days=21),
            "c3e8f1d27a9b6e05",
            trials=7,
            seed=44,
            errors=0.05,
            forced={("quote-variables", "preloaded"): 0.005, ("sum-numbers", "none"): 0.995},
        ),
    ]


def synthesize_large(runs_dir: Path, run_id: str, n_cases: int = 2500, trials: int = 5) -> Path:
    """A run of ``n_cases x 4 conditions x 2 providers x trials`` items (100,000 by default).

    Args:
        runs_dir: Parent directory.
        run_id: Run id.
        n_cases: Number of cases (a fifth of them execution cases).
        trials: Trials per (case, condition, provider).

    Returns:
        The run directory.
    """
    rng = np.random.default_rng(7)
    skills = ("safe-shell", "flaky-test-triage", "none")
    cases = tuple(
        Case(
            f"case-{i:05d}",
            "execution" if i % 5 == 0 else "prompt",
            ("trigger", "anti-pattern", "should-not-trigger")[i % 3],
            skills[i % 3],
            f"Synthetic task number {i}: make the script wait for its server.",
            float(rng.normal(-0.5, 2.0)),
        )
        for i in range(n_cases)
    )
    spec = RunSpec(
        run_id,
        datetime(2026, 10, 26, 9, 0, tzinfo=UTC),
        "0badc0ffee000001",
        providers=(("simulated", "sim-1", 0.0), ("simulated-large", "sim-2", 0.8)),
        trials=trials,
        seed=1,
        cases=cases,
        errors=0.01,
        shards=100,
        suite="synthetic",
    )
    rows, records = synthesize(spec)
    run_dir = write_run(runs_dir, spec, rows, records)
    write_scores(run_dir, spec.seed)
    return run_dir


def main() -> None:
    """Write the fixture runs (replacing any previous ones) and print their sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="runs directory to write")
    parser.add_argument(
        "--scores-only", action="store_true",
        help="only (re)write scores.parquet of the runs with transcripts, from their results",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.scores_only:
        for spec in fixture_specs():
            if spec.transcripts:
                write_scores(args.out / spec.run_id, spec.seed)
                print(f"{args.out / spec.run_id}/scores.parquet")
        return
    total = 0
    for spec in fixture_specs():
        rows, records = synthesize(spec)
        run_dir = write_run(args.out, spec, rows, records)
        if spec.transcripts:
            write_scores(run_dir, spec.seed)
        size = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file())
        total += size
        print(f"{run_dir}: {len(rows)} items, {size / 1024:.1f} KiB")
    print(f"total {total / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
