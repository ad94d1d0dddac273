"""Judge a run's items: in place, or into a new run sharing the agent outcomes.

:func:`apply_judge` grades a run in place at the end of ``evalkit run``; :func:`judge_run`
(``evalkit judge RUN``) copies a run's agent outcomes into a new run and grades that.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from evalkit._bidi import neutralize_controls
from evalkit._paths import safe_run_id
from evalkit._plain import plain_fields
from evalkit._settings import CONCURRENCY, RETRIES, RUNS_DIR
from evalkit.cases import Suite, load_suite
from evalkit.errors import ConfigError
from evalkit.judge._grade import Judge, combine
from evalkit.judge._setup import check_judgeable, judge_for_analysis, make_judge
from evalkit.results import (
    RESULT_SCHEMA,
    RESULTS_FILE,
    SCORE_SCHEMA,
    SCORES_FILE,
    TRANSCRIPTS_DIR,
    Manifest,
    append_event,
    load_manifest,
    read_table,
    read_transcripts,
    resolve_run_dir,
    write_manifest,
    write_parquet,
)

#: ``error_class`` of an item whose judge failed after its retries.
JUDGE_ERROR = "judge_error"
#: ``status`` of an item whose outcome rests on statements the judge could not grade.
UNGRADED = "ungraded"
#: Why an item is ungraded (its ``error_message``, and the ``detail`` of each such statement).
UNGRADED_NOTE = (
    "not graded: the offline simulated judge has no known truth for it (no 'truth' regex, no "
    "'reference'); grade it without rerunning the agent: evalkit judge RUN --judge-provider NAME"
)

_JUDGED = ("expectation:", "rubric:")
_UNWEIGHTED = ("total", "skill_trigger")


@dataclass(frozen=True)
class JudgeSummary:
    """What judging a run did and cost (the ``judge`` object of ``--json``).

    Attributes:
        provider: Judge provider.
        model: Judge model.
        prompt_hash: Hash of the judge prompt template.
        items: Items graded.
        statements: Statements graded.
        statements_passed: Statements the judge passed.
        calls: Judge calls made (retries included; 0 when everything came from the cache).
        cache_hits: Verdicts reused from the cache.
        errors: Items whose judge failed after its retries.
        input_tokens: Judge prompt tokens.
        statements_ungraded: Statements this judge could not grade (no known truth for the
            offline simulated judge): neither passed nor failed.
        items_ungraded: Items left with status ``ungraded``: their graded statements passed
            and the ungraded ones decide (``evalkit judge RUN --judge-provider NAME``).
        output_tokens: Judge completion tokens.
        cost_usd: Judge cost, apart from the agent's ``cost_usd``.
    """

    provider: str
    model: str
    prompt_hash: str
    items: int = 0
    statements: int = 0
    statements_passed: int = 0
    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    statements_ungraded: int = 0
    items_ungraded: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return asdict(self)


def _write(
    run_dir: Path, name: str, kept: pa.Table, rows: list[dict[str, Any]], schema: pa.Schema
) -> None:
    """Write ``kept`` (rows left as they were) and ``rows`` (rewritten) as one table.

    An item's rows are all in one of the two parts, so the stable sort by item key gives the
    order the whole table would have had.
    """
    table = pa.concat_tables([kept.cast(schema), pa.Table.from_pylist(rows, schema=schema)])
    if table.num_rows:
        table = table.sort_by("item_key")
    tmp = run_dir / f".{name}.tmp"
    write_parquet(table, tmp)  # with page checksums, as every run file
    os.replace(tmp, run_dir / name)


def _split(table: pa.Table, mask: pa.ChunkedArray) -> tuple[pa.Table, list[dict[str, Any]]]:
    """The rows outside ``mask`` as a table, and those in it as dicts (only they are edited)."""
    return table.filter(pc.invert(mask)), table.filter(mask).to_pylist()


def apply_judge(
    run_dir: Path, suite: Suite, judge: Judge, *, concurrency: int = CONCURRENCY.default
) -> JudgeSummary:
    """Grade the judged cases of a compacted run and rewrite its tables.

    Every ``ok`` item of a case with expectations (or a judged rubric) is graded from its
    transcript; its ``passed`` and ``score`` become the combination of the scorers' ``total``
    row and the verdicts (:func:`~evalkit.judge.combine`), its ``judge_*`` columns are set and
    ``scores.parquet`` gets one ``expectation:N`` / ``rubric:N`` row per statement. It is
    idempotent: re-applying starts again from the scorers' ``total`` rows.

    Args:
        run_dir: The run directory (compacted).
        suite: The suite (cases and their statements).
        judge: The judge.
        concurrency: Judge calls in flight (threads; the judge provider's limiter applies).

    Returns:
        What was judged and what it cost.
    """
    # Only the rows judging can change become Python objects: a 100,000-item run held as
    # dicts (results and every score row) took ~0.6 GB more than the run itself.
    cases = {case.id: case for case in suite.cases}
    judged_ids = pa.array([c.id for c in suite.cases if c.is_judged], pa.string())
    table = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA)
    touched = pc.or_(
        pc.is_in(table["case_id"], value_set=judged_ids),
        pc.fill_null(pc.equal(table["error_class"], JUDGE_ERROR), False),
    )
    kept_results, results = _split(table, touched)
    del table
    for row in results:
        if row.get("error_class") == JUDGE_ERROR or row["status"] == UNGRADED:
            row.update(status="ok", error_class=None, error_message=None)  # the agent was fine
    todo = [r for r in results if r["status"] == "ok" and r["case_id"] in cases
            and cases[r["case_id"]].is_judged]
    transcripts = read_transcripts(run_dir, [r["item_key"] for r in todo])
    todo = [r for r in todo if r["item_key"] in transcripts]
    score_table = read_table(run_dir, SCORES_FILE, SCORE_SCHEMA)
    todo_keys = pa.array([r["item_key"] for r in todo], pa.string())
    kept_scores, scores = _split(
        score_table, pc.is_in(score_table["item_key"], value_set=todo_keys)
    )
    del score_table
    by_item: dict[str, list[dict[str, Any]]] = {}
    for s in scores:
        by_item.setdefault(s["item_key"], []).append(s)

    def grade(row: dict[str, Any]) -> Any:
        events = transcripts[row["item_key"]]["response"]["events"]
        return judge.judge_item(cases[row["case_id"]], events)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        judgements = list(pool.map(grade, todo))

    totals = dict(provider=judge.grader.provider, model=judge.grader.model,
                  prompt_hash=judge.prompt_hash)
    counts = dict.fromkeys(("items", "statements", "statements_passed", "calls", "cache_hits",
                            "errors", "input_tokens", "output_tokens", "statements_ungraded",
                            "items_ungraded"), 0)
    cost = 0.0
    for row, result in zip(todo, judgements, strict=True):
        key, case = row["item_key"], cases[row["case_id"]]
        kept = [s for s in by_item.get(key, []) if not s["component"].startswith(_JUDGED)]
        usage = result.usage
        row.update(
            judge_provider=judge.grader.provider,
            judge_model=judge.grader.model,
            judge_prompt_hash=judge.prompt_hash,
            judge_calls=usage.calls,
            judge_cache_hits=usage.cache_hits,
            judge_input_tokens=usage.input_tokens,
            judge_output_tokens=usage.output_tokens,
            judge_cost_usd=usage.cost_usd,
            judge_error=result.error,
        )
        counts["items"] += 1
        counts["calls"] += usage.calls
        counts["cache_hits"] += usage.cache_hits
        counts["input_tokens"] += usage.input_tokens
        counts["output_tokens"] += usage.output_tokens
        cost += usage.cost_usd
        total = next((s for s in kept if s["component"] == "total"), None)
        if result.error is not None or total is None:
            message = result.error or "the item has no scorers' 'total' row to combine with"
            row.update(status="error", error_class=JUDGE_ERROR, error_message=message,
                       passed=False, score=0.0, judge_passed=None, judge_score=None,
                       judge_error=message)
            counts["errors"] += 1
            by_item[key] = kept
            continue
        has_scorers = any(s["component"] not in _UNWEIGHTED and (s["max_value"] or 0) > 0
                          for s in kept)
        combined = combine(case, result.graded, scored_passed=bool(total["passed"]),
                           scored_score=float(total["value"] or 0.0), has_scorers=has_scorers)
        row.update(passed=combined.passed, score=combined.score,
                   judge_passed=combined.judge_passed, judge_score=combined.judge_score)
        scorers_failed = has_scorers and not bool(total["passed"])
        if result.ungraded and not _known_failure(result.graded, scorers_failed):
            # what is graded passed, and the rest could go either way: no outcome to record
            row.update(status=UNGRADED, passed=False, score=None, judge_passed=None,
                       judge_score=None, error_message=UNGRADED_NOTE)
            counts["items_ungraded"] += 1
        counts["statements"] += len(result.graded)
        counts["statements_passed"] += sum(g.passed for g in result.graded)
        counts["statements_ungraded"] += len(result.ungraded)
        by_item[key] = kept + sorted([
            {"item_key": key, "component": g.statement.component, "value": float(g.passed),
             "max_value": 1.0, "passed": g.passed, "detail": g.evidence,
             "expectation": g.statement.text}
            for g in result.graded
        ] + [
            {"item_key": key, "component": u.component, "value": None, "max_value": 1.0,
             "passed": None, "detail": UNGRADED_NOTE, "expectation": u.text}
            for u in result.ungraded
        ], key=lambda s: _statement_order(s["component"]))
    _write(run_dir, RESULTS_FILE, kept_results, results, RESULT_SCHEMA)
    _write(run_dir, SCORES_FILE, kept_scores, [s for rows in by_item.values() for s in rows],
           SCORE_SCHEMA)
    summary = JudgeSummary(**totals, **counts, cost_usd=cost)  # type: ignore[arg-type]
    append_event(run_dir, "judged", **summary.to_dict())
    return summary


def _known_failure(graded: list[Any], scorers_failed: bool) -> bool:
    """Whether the item fails whatever its ungraded statements say.

    It does when a graded expectation failed, or when its deterministic scorers failed.
    """
    return scorers_failed or any(
        not g.passed and g.statement.component.startswith("expectation:") for g in graded
    )


def _statement_order(component: str) -> tuple[int, int]:
    kind, _, number = component.partition(":")
    return (0 if kind == "expectation" else 1, int(number) if number.isdigit() else 0)


@dataclass(frozen=True)
class JudgeRunResult:
    """A run re-graded by ``evalkit judge RUN``.

    Attributes:
        run_id: The new run.
        run_dir: Its directory.
        judged_from: The run whose agent outcomes it shares.
        items: Work items.
        pass_rate: Share of items that passed after judging (items still ungraded left out).
        judge: What judging did and cost.
    """

    run_id: str
    run_dir: Path
    judged_from: str
    items: int
    pass_rate: float
    judge: JudgeSummary

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit judge --json`` object."""
        return plain_fields(self)


def _recorded_suite(source: Path, manifest: Manifest) -> Suite:
    """The suite a run's manifest points to (for its expectations: data, not its judge)."""
    if not manifest.suite_path:
        raise ConfigError(
            f"{source}: the run records no suite_path in manifest.json, so its expectations "
            "cannot be found; pass --suite PATH (only runs made by `evalkit run` can be judged)"
        )
    suite_path = Path(manifest.suite_path)
    if not suite_path.is_dir():
        raise ConfigError(
            f"{source}/manifest.json: suite_path '{neutralize_controls(str(suite_path))}' does "
            "not exist any more; restore the suite there or pass --suite PATH (expectations "
            "are read from it)"
        )
    return load_suite(suite_path)


def judge_run(
    run: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    provider: str | None = None,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    suite: str | os.PathLike[str] | None = None,
    run_id: str | None = None,
    use_cache: bool = True,
    concurrency: int = CONCURRENCY.default,
    retries: int = RETRIES.default,
    retry_backoff_s: float = 1.0,
    command_line: str = "",
) -> JudgeRunResult:
    """Re-grade an existing run's expectations without rerunning the agent.

    The new run copies the source run's agent outcomes and transcripts, then grades them with
    the suite's judge (or the one given); unchanged questions come from the verdict cache.

    Args:
        run: Run directory or run id under ``runs_dir``.
        runs_dir: Where run ids are looked up and the new run is written.
        provider: Judge provider (default: the named ``suite``'s judge). Without ``suite``,
            the run's own suite (its manifest's ``suite_path``) gives the expectations, but
            its judge only when that is the offline ``simulated`` one; any other is refused
            with a message naming it (run data never chooses the judge).
        model: Judge model.
        options: Judge settings (over the named suite's).
        suite: The suite to read the expectations and the judge from (``--suite``), named by
            the user; default: the suite the run was made from, for its expectations.
        run_id: Id of the new run (default: ``<source>-judged-<time>``).
        use_cache: Reuse cached verdicts.
        concurrency: Judge calls in flight.
        retries: Retries of a failed or unparsable judge call.
        retry_backoff_s: Base of the backoff between retries.
        command_line: The command that asked for it (recorded in the manifest).

    Returns:
        The new run.

    Raises:
        RunNotFoundError: The run does not exist.
        ConfigError: No suite or no judge, a judge that only run data names, the new run id
            is taken, or ``concurrency`` or
            ``retries`` is out of range (the message names the flag and the parameter).
    """
    concurrency, retries = CONCURRENCY.check(concurrency), RETRIES.check(retries)
    source = resolve_run_dir(run, runs_dir)
    manifest = load_manifest(source)
    if manifest is None:
        raise ConfigError(f"{source}: the run has no manifest.json; only runs made by "
                          "`evalkit run` can be judged")
    if suite is not None:  # the user's suite: its expectations and its judge
        loaded = load_suite(suite)
        spec = judge_for_analysis(None, "", provider, model, options,
                                  suite_judge=loaded.spec.judge, named_suite=True)
    else:  # the run's suite is run data: its expectations, but not its judge
        loaded = _recorded_suite(source, manifest)
        where = (f"run '{source.name}' (the suite its manifest.json suite_path points to, "
                 f"{neutralize_controls(str(loaded.root))})")
        spec = judge_for_analysis(loaded.spec.judge, where, provider, model, options)
    judge = None if spec is None else make_judge(
        spec, runs_dir, use_cache=use_cache, retries=retries, retry_backoff_s=retry_backoff_s
    )
    check_judgeable(judge, [c for c in loaded.cases if c.is_judged])
    if judge is None:
        raise ConfigError(f"suite '{loaded.name}' has no judged cases and no judge")
    new_id = run_id or f"{source.name}-judged-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    target = Path(runs_dir) / safe_run_id(new_id)
    try:
        target.mkdir(parents=True)
    except FileExistsError:
        raise ConfigError(
            f"run '{new_id}' already exists in {runs_dir}; choose another --run-id"
        ) from None
    results = read_table(source, RESULTS_FILE, RESULT_SCHEMA)
    run_ids = pa.array([new_id] * results.num_rows, results.schema.field("run_id").type)
    results = results.set_column(results.schema.get_field_index("run_id"), "run_id", run_ids)
    _write(target, RESULTS_FILE, results, [], RESULT_SCHEMA)
    _write(target, SCORES_FILE, read_table(source, SCORES_FILE, SCORE_SCHEMA), [], SCORE_SCHEMA)
    if (source / TRANSCRIPTS_DIR).is_dir():
        shutil.copytree(source / TRANSCRIPTS_DIR, target / TRANSCRIPTS_DIR)
    append_event(target, "judge_started", judged_from=source.name)
    summary = apply_judge(target, loaded, judge, concurrency=concurrency)
    final = read_table(target, RESULTS_FILE, RESULT_SCHEMA)
    status = final.column("status").to_pylist()
    passed = sum(bool(p) for p in final.column("passed").to_pylist())
    counts = dict(manifest.counts)
    counts.update(items=final.num_rows, ok=status.count("ok"), error=status.count("error"),
                  timeout=status.count("timeout"), ungraded=status.count(UNGRADED),
                  passed=passed)
    write_manifest(target, manifest.model_copy(update={
        "run_id": new_id,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "judge": judge.record(),
        "judged_from": source.name,
        "counts": counts,
        "command_line": command_line or manifest.command_line,
    }))
    return JudgeRunResult(
        run_id=new_id,
        run_dir=target,
        judged_from=source.name,
        items=final.num_rows,
        pass_rate=passed / graded if (graded := final.num_rows - status.count(UNGRADED)) else 0.0,
        judge=summary,
    )
