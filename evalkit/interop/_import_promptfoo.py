"""``evalkit import --format promptfoo``: the output of ``promptfoo eval -o results.json``.

The file is ``{"evalId", "results": {"version", "timestamp", "prompts", "results": [...],
"stats"}, "config", "metadata", ...}``; each entry of ``results.results`` is one (test,
prompt, provider, repeat) cell with ``testIdx``, ``promptIdx``, ``prompt``, ``provider``,
``testCase``, ``vars``, ``success``, ``score``, ``latencyMs``, ``cost``, ``response``
(``tokenUsage``, ``cached``), ``gradingResult`` (``componentResults``), ``error`` and
``failureReason`` (0 none, 1 an assertion failed, 2 an error: provider, transform, timeout).

``--repeat N`` gives each repetition its own ``testIdx`` (the repeat index itself is not
saved), so evalkit numbers trials 0, 1, ... within each (test, prompt, provider) in
``testIdx`` order.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from evalkit.cases import stable_hash
from evalkit.errors import ConfigError, InputError
from evalkit.interop._import_common import (
    ParsedSource,
    SourceRow,
    as_dict,
    check_score,
    error_class,
    fail,
    number_trials,
    read_json,
    short_error,
)
from evalkit.interop._import_options import PromptfooOptions
from evalkit.interop._import_registry import ImportRequest
from evalkit.interop._import_transcripts import promptfoo_response

SUFFIXES = (".json",)
_ASSERT, _ERROR = 1, 2
_FIX = "expected the output of `promptfoo eval -o results.json`"


def parse_condition_from(spec: str | None) -> str:
    """Parse ``--condition-from`` for promptfoo: ``prompt`` (default) or ``provider``.

    Raises:
        ConfigError: Any other value.
    """
    spec = spec or "prompt"
    if spec not in ("prompt", "provider"):
        raise ConfigError(
            "The value for `condition_from` must be one of ['prompt', 'provider'] for promptfoo "
            f"results, but {spec!r} was passed."
        )
    return spec


def _load(path: Path) -> tuple[dict[str, Any], list[Any]] | None:
    data = read_json(path, _FIX, empty=f"empty file; {_FIX}")
    if not isinstance(data, dict):
        return None
    summary = data["results"] if isinstance(data.get("results"), dict) else data
    results = summary.get("results")
    if not isinstance(results, list):
        return None
    return data, results


def _label(value: Any, *keys: str) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), str) and value[key]:
                return str(value[key])
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int past a float: no count anyone can have
        return None
    return number if math.isfinite(number) else None


def _tokens(result: dict[str, Any]) -> tuple[int | None, int | None]:
    response = as_dict(result.get("response"))
    for usage in (response.get("tokenUsage"), result.get("tokenUsage")):
        if isinstance(usage, dict) and ("prompt" in usage or "completion" in usage):
            prompt, completion = _number(usage.get("prompt")), _number(usage.get("completion"))
            return (
                int(prompt) if prompt is not None else None,
                int(completion) if completion is not None else None,
            )
    return None, None


def _components(result: dict[str, Any]) -> list[dict[str, Any]]:
    grading = result.get("gradingResult")
    parts = grading.get("componentResults") if isinstance(grading, dict) else None
    out: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        assertion = as_dict(part.get("assertion"))
        name = _label(assertion, "metric", "type") or "assertion"
        seen[name] += 1
        score = _number(part.get("score"))
        out.append(
            {
                "component": name if seen[name] == 1 else f"{name}#{seen[name]}",
                "value": score if score is not None else float(bool(part.get("pass"))),
                "max_value": 1.0,
                "passed": bool(part.get("pass")),
                "detail": str(part.get("reason"))[:500] if part.get("reason") is not None else None,
            }
        )
    return out


def _row(
    path: Path,
    index: int,
    result: Any,
    condition_from: str,
    lane: str,
    suite: str,
    version: str | None,
) -> tuple[SourceRow, tuple[int, int]]:
    where = f"results.results[{index}]"
    if not isinstance(result, dict):
        raise fail(path, where, f"each result must be an object; {_FIX}")
    row = SourceRow(values={}, file=str(path), where=where, identity=None)
    for key in ("testIdx", "promptIdx"):
        if not isinstance(result.get(key), int) or isinstance(result.get(key), bool):
            raise row.problem(f"missing or non-integer '{key}'; {_FIX}")
    if not isinstance(result.get("success"), bool):
        raise row.problem(f"missing or non-boolean 'success' (the verdict); {_FIX}")
    prompt = _label(result.get("prompt"), "label", "id") or f"prompt-{result['promptIdx']}"
    provider = _label(result.get("provider"), "label", "id")
    model = _label(result.get("provider"), "id")
    if provider is None:
        raise row.problem(f"missing 'provider' (an object with 'id'); {_FIX}")
    test = as_dict(result.get("testCase"))
    values = row.values
    values.update(
        condition=prompt if condition_from == "prompt" else provider,
        provider=provider if condition_from == "prompt" else "promptfoo",
        model=model,
        lane=lane,
        suite=suite,
        provider_version=version,
        cost_usd=_number(result.get("cost")),
        _cell=(prompt, provider),
    )
    latency_ms = _number(result.get("latencyMs"))
    values["latency_s"] = latency_ms / 1000.0 if latency_ms is not None else None
    values["input_tokens"], values["output_tokens"] = _tokens(result)
    response = as_dict(result.get("response"))
    if isinstance(response.get("cached"), bool):
        values["cache_hit"] = response["cached"]
    metadata = as_dict(test.get("metadata"))
    if isinstance(metadata.get("category"), str):
        values["category"] = metadata["category"]
    reason = result.get("failureReason")
    error = result.get("error")
    is_error = reason == _ERROR or (
        reason is None and bool(error) and not isinstance(result.get("gradingResult"), dict)
    )
    if is_error:
        message = short_error(str(error or "promptfoo reported an error"))
        values.update(
            status="error",
            error_class=error_class(message, "provider_error"),
            error_message=message,
            passed=False,
            score=0.0,
        )
    else:
        score = _number(result.get("score"))
        fix = " (evalkit needs scores in [0, 1]; check assertion weights and custom scores)"
        values.update(
            status="ok",
            passed=result["success"],
            score=check_score(score, row, fix) if score is not None else float(result["success"]),
        )
    row.scores = _components(result)
    row.transcript = promptfoo_response(result)
    description = test.get("description") or result.get("description")
    variables = result.get("vars") if isinstance(result.get("vars"), dict) else test.get("vars")
    row.identity = {
        "description": description if isinstance(description, str) else None,
        "vars": variables if isinstance(variables, dict) else {},
        "assert": test.get("assert"),
    }
    return row, (result["testIdx"], result["promptIdx"])


def _case_ids(identities: list[dict[str, Any]]) -> list[str]:
    """Stable case ids: the test's description when it names one test, else a vars hash."""
    keyed = {stable_hash(i): i for i in identities}
    by_desc = Counter(i["description"] for i in keyed.values())
    by_vars = Counter((i["description"], stable_hash(i["vars"])) for i in keyed.values())
    out = []
    for identity in identities:
        desc, vars_hash = identity["description"], stable_hash(identity["vars"])
        if desc and by_desc[desc] == 1:
            out.append(desc)
        elif by_vars[(desc, vars_hash)] == 1:
            out.append(f"{desc or 'test'}-{vars_hash[:8]}")
        else:
            out.append(f"{desc or 'test'}-{stable_hash(identity)[:8]}")
    return out


def read_promptfoo(request: ImportRequest) -> ParsedSource:
    """``--format promptfoo`` (``promptfoo eval -o results.json``): each result is one row.

    Args:
        request: The files (JSON files found by listing a directory that are not promptfoo
            output are skipped), the lane, and :class:`PromptfooOptions` (``condition_from``:
            ``prompt``, the prompt's label, or ``provider``).

    Returns:
        The rows, with case ids from test descriptions (or a hash of the test's vars) and
        trials numbered by repeat.

    Raises:
        InputError: Not promptfoo output, or a result without its verdict.
    """
    mode = parse_condition_from(request.options_as(PromptfooOptions).condition_from)
    paths, listed, lane = request.files, request.listed, request.lane
    rows: list[SourceRow] = []
    order: list[tuple[int, int, int]] = []
    suites: list[str] = []
    versions: list[str] = []
    warnings: list[str] = []
    read: list[Path] = []
    for file_index, path in enumerate(paths):
        loaded = _load(path)
        if loaded is None:
            if path in listed:
                warnings.append(f"skipped {path}: JSON but not promptfoo output")
                continue
            raise fail(path, "results.results", f"no list of results; {_FIX}")
        data, results = loaded
        read.append(path)
        if not results:
            raise fail(path, "results.results", "the list of results is empty; nothing to import")
        config = as_dict(data.get("config"))
        suite = config.get("description") if isinstance(config.get("description"), str) else None
        suites.append(suite or path.stem)
        meta = as_dict(data.get("metadata"))
        version = f"promptfoo {meta['promptfooVersion']}" if meta.get("promptfooVersion") else None
        if version:
            versions.append(version)
        for index, result in enumerate(results):
            row, (test_idx, prompt_idx) = _row(path, index, result, mode, lane, suites[-1], version)
            rows.append(row)
            order.append((file_index, test_idx, prompt_idx))
    if not rows:
        raise InputError("no promptfoo results among the files given")
    for row, case_id in zip(rows, _case_ids([r.identity for r in rows]), strict=True):
        row.values["case_id"] = case_id
    ranked = [row for _, row in sorted(zip(order, rows, strict=True), key=lambda p: p[0])]
    # Number repeats within each source cell (test, prompt, provider): two prompts mapped to
    # one condition then collide on their keys (an error) instead of passing as trials.
    number_trials(ranked, ("case_id", "_cell"))
    for row in rows:
        prompt, provider = row.values.pop("_cell")
        row.identity = {
            **row.identity,
            "prompt": prompt,
            "provider": provider,
            "model": row.values["model"],
            "trial": row.values["trial"],
        }
    dataset = sorted({r.values["case_id"]: r.identity["vars"] for r in rows}.items())
    return ParsedSource(
        rows=rows,
        suite=",".join(dict.fromkeys(suites)),
        dataset=dataset,
        tool=", ".join(dict.fromkeys(versions)) or None,
        warnings=warnings,
        duplicate_hint=(
            "several prompts map to the same condition; use --condition-from prompt"
            if mode == "provider"
            else "two results share test, prompt label and provider; give prompts distinct labels"
        ),
        files=read,
    )
