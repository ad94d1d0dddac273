"""``evalkit import --format skill-creator``: a skill-creator ``benchmark.json``.

Anthropic's skill-creator writes ``benchmarks/<timestamp>/benchmark.json`` with ``metadata``
(``skill_name``, ``executor_model``, ``runs_per_configuration``...), ``runs[]`` and a
``run_summary`` of means and standard deviations. Each entry of ``runs`` is one (eval,
configuration, run) cell: ``eval_id``, ``eval_name``, ``configuration`` (``with_skill`` or
``without_skill``), ``run_number`` (1, 2, ...), ``result`` {``pass_rate``, ``passed``,
``failed``, ``total``, ``time_seconds``, ``tokens``, ``tool_calls``, ``errors``} and
``expectations[]`` {``text``, ``passed``, ``evidence``}.

How the cells become evalkit rows:

- ``eval_id`` (or ``eval_name`` where the id is missing) is the case id (``eval_name`` stays
  in the source file only);
- ``configuration`` ``without_skill`` is the condition ``none``, ``with_skill`` is
  ``preloaded`` (the executor is handed the skill's path and told to use it); any other
  configuration (``old_skill``, ``new_skill``...) keeps its name;
- ``run_number`` N is trial N - 1;
- an item ``passed`` when every expectation passed (``failed == 0`` and ``total > 0``); its
  ``score`` is ``pass_rate``, the share of expectations that passed;
- ``time_seconds`` is ``latency_s``, ``tokens`` (skill-creator records one total) is
  ``output_tokens``, ``tool_calls`` is ``n_steps``;
- each expectation is a ``scores.parquet`` row as a judged expectation is: ``component``
  ``expectation:N``, ``expectation`` its text, ``passed``, ``detail`` the grader's evidence.

``run_summary`` and ``notes`` are derived data: evalkit recomputes what it needs and ignores
them (with a warning when ``run_summary`` disagrees with the runs).

A skill-creator workspace (``iteration-N/eval-ID/CONFIGURATION/run-K/grading.json``, with
``timing.json`` beside it and ``eval_metadata.json`` in the eval's folder) is read the same
way, one item per ``grading.json`` (:func:`read_workspace_run`): its ``summary`` is the
result, ``timing.json``'s ``total_duration_seconds`` and ``total_tokens`` the latency and
tokens, ``execution_metrics.total_tool_calls`` the steps. A ``benchmark.json`` found in the
same folder as a workspace's ``grading.json`` files is derived from them and is not read
again (a sample is never counted twice). A run or grading written by ``evalkit export``
carries evalkit's own outcome under ``evalkit`` (case id, condition, trial, status, passed,
score), which is used as it is.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from evalkit.interop._import_common import (
    ParsedSource,
    SourceRow,
    as_dict,
    as_float,
    as_int,
    check_score,
    fail,
    read_json,
    source_text,
)
from evalkit.interop._import_registry import ImportRequest
from evalkit.interop._import_skill_creator_workspace import GRADING_FILE, row_where, workspace_run

SUFFIXES = ("benchmark.json", "grading.json")

#: skill-creator configuration -> evalkit condition.
CONFIGURATIONS: dict[str, str] = {"without_skill": "none", "with_skill": "preloaded"}

_FIX = "expected skill-creator's benchmark.json ({metadata, runs: [...], run_summary})"
_RESULT_KEYS = {"pass_rate", "passed", "failed", "total", "time_seconds", "tokens", "tool_calls",
                "errors"}
_RUN_KEYS = {"eval_id", "eval_name", "configuration", "run_number", "result", "expectations",
             "notes", "evalkit"}
_STATUSES = ("ok", "error", "timeout", "skipped", "ungraded")


def _load(path: Path) -> dict[str, Any]:
    data = read_json(path, _FIX, empty=f"empty file; {_FIX}")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise fail(path, "", f"no 'runs' list; {_FIX}")
    return data


def _case_id(run: dict[str, Any], row: SourceRow) -> str:
    for key in ("eval_id", "eval_name"):
        value = run.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | str) and str(value).strip():
            return str(value).strip()
    raise row.problem("needs an 'eval_id' (or an 'eval_name'), e.g. \"eval_id\": 1")


def _configuration(run: dict[str, Any], row: SourceRow) -> str:
    value = run.get("configuration", run.get("config"))
    if not isinstance(value, str) or not value.strip():
        raise row.problem(
            "needs a 'configuration' (\"with_skill\" or \"without_skill\"), as skill-creator's "
            "viewer expects"
        )
    return value.strip()


def _expectations(run: dict[str, Any], row: SourceRow) -> list[dict[str, Any]]:
    raw = run.get("expectations") or []
    if not isinstance(raw, list):
        raise row.problem("'expectations' must be a list of {text, passed, evidence}")
    scores: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            raise row.problem(
                f"expectations[{index}] is a bare string; a graded expectation is "
                '{"text": ..., "passed": true|false, "evidence": ...}'
            )
        item = as_dict(item)
        text = item.get("text")
        if not isinstance(text, str) or not text.strip() or not isinstance(
            item.get("passed"), bool
        ):
            raise row.problem(
                f"expectations[{index}] needs 'text' (a string) and 'passed' (true or false)"
            )
        evidence = item.get("evidence")
        scores.append(
            {
                "component": f"expectation:{index + 1}",
                "expectation": text,
                "value": float(item["passed"]),
                "max_value": 1.0,
                "passed": item["passed"],
                "detail": source_text(evidence) if isinstance(evidence, str) else None,
            }
        )
    return scores


def _outcome(
    result: dict[str, Any], scores: list[dict[str, Any]], row: SourceRow
) -> tuple[bool, float, int, int]:
    """``passed``, ``score``, expectations passed and total of one run."""
    passed_n = as_int(result.get("passed"), "result.passed", row)
    total = as_int(result.get("total"), "result.total", row)
    if total is None and passed_n is not None:
        failed = as_int(result.get("failed"), "result.failed", row)
        total = passed_n + (failed or 0)
    if total is None:
        passed_n, total = sum(bool(s["passed"]) for s in scores), len(scores)
    passed_n = passed_n if passed_n is not None else sum(bool(s["passed"]) for s in scores)
    if passed_n > total:
        raise row.problem(f"result.passed ({passed_n}) exceeds result.total ({total})")
    if scores and (len(scores), sum(bool(s["passed"]) for s in scores)) != (total, passed_n):
        raise row.problem(
            f"result says {passed_n} of {total} expectations passed but the run lists "
            f"{sum(bool(s['passed']) for s in scores)} of {len(scores)}; fix one of them"
        )
    rate = as_float(result.get("pass_rate"), "result.pass_rate", row)
    score = check_score(rate if rate is not None else (passed_n / total if total else 0.0), row)
    assert score is not None
    return total > 0 and passed_n == total, score, passed_n, total


def _row(
    run: Any, index: int, path: Path, model: str | None, lane: str, where: str | None = None
) -> SourceRow:
    row = SourceRow(values={}, file=str(path), where=where or f"runs[{index}]", identity=None)
    if not isinstance(run, dict):
        raise row.problem("each entry of 'runs' must be an object")
    case_id = _case_id(run, row)
    configuration = _configuration(run, row)
    run_number = as_int(run.get("run_number", 1), "run_number", row)
    if run_number is None or run_number < 1:
        raise row.problem("run_number counts from 1 (1, 2, 3...)")
    result = as_dict(run.get("result"))
    if not result and "pass_rate" in run:
        raise row.problem(
            "'pass_rate' sits at the top level of the run; skill-creator nests it under "
            "'result' ({\"result\": {\"pass_rate\": ...}})"
        )
    scores = _expectations(run, row)
    passed, score, _, _ = _outcome(result, scores, row)
    tokens = as_int(result.get("tokens"), "result.tokens", row)
    row.values = {
        "lane": lane,
        "case_id": case_id,
        "condition": CONFIGURATIONS.get(configuration, configuration),
        "provider": "skill-creator",
        "model": model,
        "trial": run_number - 1,
        "status": "ok",
        "passed": passed,
        "score": score,
        "latency_s": as_float(result.get("time_seconds"), "result.time_seconds", row),
        "output_tokens": tokens,
        "n_steps": as_int(result.get("tool_calls"), "result.tool_calls", row),
    }
    row.identity = {"eval": case_id, "configuration": configuration, "run": run_number}
    row.scores = scores
    _own_outcome(run.get("evalkit"), row)
    return row


def _own_outcome(block: Any, row: SourceRow) -> None:
    """Use the outcome evalkit recorded for an item it exported (the ``evalkit`` key)."""
    if not isinstance(block, dict):
        return
    status = block.get("status", "ok")
    if status not in _STATUSES:
        raise row.problem(f"evalkit.status must be one of {', '.join(_STATUSES)}, got {status!r}")
    for key in ("case_id", "condition"):
        if not isinstance(block.get(key), str) or not block[key]:
            raise row.problem(f"evalkit.{key} must be a non-empty string")
    if not isinstance(block.get("passed"), bool):
        raise row.problem("evalkit.passed must be true or false")
    trial = as_int(block.get("trial"), "evalkit.trial", row)
    score = block.get("score")
    row.values.update(
        case_id=block["case_id"], condition=block["condition"], status=status,
        passed=block["passed"],
        score=None if score is None else check_score(as_float(score, "evalkit.score", row), row),
        **({} if trial is None else {"trial": trial}),
    )
    row.identity = {"eval": block["case_id"], "configuration": block["condition"],
                    "run": row.values["trial"] + 1}


def as_str_or_none(value: Any) -> str | None:
    """A JSON string value, stripped; anything else is None."""
    return value.strip() or None if isinstance(value, str) else None


def _summary_warnings(data: dict[str, Any], rows: list[SourceRow]) -> list[str]:
    summary = as_dict(data.get("run_summary"))
    warnings: list[str] = []
    inverse = {v: k for k, v in CONFIGURATIONS.items()}
    by_condition: dict[str, list[float]] = {}
    for row in rows:
        by_condition.setdefault(str(row.values["condition"]), []).append(row.values["score"])
    for condition, scores in sorted(by_condition.items()):
        stated = as_dict(as_dict(summary.get(inverse.get(condition, condition))).get("pass_rate"))
        mean = stated.get("mean")
        if isinstance(mean, int | float) and abs(mean - sum(scores) / len(scores)) > 0.01:
            warnings.append(
                f"run_summary says the {inverse.get(condition, condition)} pass rate is "
                f"{mean:.3f} but its runs average {sum(scores) / len(scores):.3f}; evalkit uses "
                "the runs"
            )
    return warnings


def _suite_name(files: list[Path]) -> str:
    first = files[0]
    if first.name == GRADING_FILE and len(first.parents) > 5:
        return first.parents[4].name.removesuffix("-workspace")  # <skill>-workspace/iteration-N
    return first.parent.name


def read_skill_creator(request: ImportRequest) -> ParsedSource:
    """``--format skill-creator``: ``benchmark.json`` files and workspace ``grading.json`` files.

    Args:
        request: The files (one benchmark, or one workspace run, each; several are
            concatenated) and the lane of every row.

    Returns:
        The parsed rows, one per (eval, configuration, run), with one score row per
        expectation.

    Raises:
        InputError: A file is not a benchmark, or a run cannot be used (the message names the
            file, the run's index and the fix).
    """
    rows: list[SourceRow] = []
    warnings: list[str] = []
    names: list[str] = []
    extra: Counter[str] = Counter()
    files, lane = request.files, request.lane
    gradings = [f for f in files if f.name == GRADING_FILE]
    for path in files:
        if path.name == GRADING_FILE:
            run = workspace_run(path)
            rows.append(_row(run, 0, path, None, lane, where=row_where(path)))
            extra.update(f"result.{k}" for k in set(as_dict(run.get("result"))) - _RESULT_KEYS)
            continue
        if any(path.parent in g.parents for g in gradings):
            warnings.append(
                f"{path}: not read: it summarises the workspace's grading.json files, which "
                "were read (each run counts once)"
            )
            continue
        data = _load(path)
        metadata = as_dict(data.get("metadata"))
        model = as_str_or_none(metadata.get("executor_model"))
        if isinstance(metadata.get("skill_name"), str):
            names.append(metadata["skill_name"])
        file_rows = [_row(run, i, path, model, lane) for i, run in enumerate(data["runs"])]
        for run in data["runs"]:
            extra.update(set(run) - _RUN_KEYS)
            extra.update(f"result.{k}" for k in set(as_dict(run.get("result"))) - _RESULT_KEYS)
        warnings += [f"{path}: {w}" for w in _summary_warnings(data, file_rows)]
        rows += file_rows
    if extra:
        warnings.append(
            "fields evalkit does not use were kept in the source file only: "
            + ", ".join(sorted(extra))
        )
    unknown = sorted({r.values["condition"] for r in rows} - set(CONFIGURATIONS.values()))
    if unknown:
        warnings.append(
            f"configurations other than with_skill/without_skill kept as conditions: {unknown}"
        )
    return ParsedSource(
        rows=rows,
        suite=names[0] if names else _suite_name(files),
        tool="skill-creator",
        warnings=warnings,
        duplicate_hint="each (eval_id, configuration, run_number) may appear once",
        files=files,
    )
