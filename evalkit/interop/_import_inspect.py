"""``evalkit import --format inspect``: Inspect AI eval logs (``.eval`` and ``.json``).

A ``.json`` log is one JSON object (``eval``, ``plan``, ``results``, ``stats``, ``samples``);
an ``.eval`` log is a zip archive holding ``header.json`` (or ``_journal/start.json`` while a
run is in progress) and one ``samples/<id>_epoch_<n>.json`` per sample and epoch. Inspect AI
0.3.x compresses the members with Zstandard, which the standard library reads only from
Python 3.14: evalkit decompresses them with pyarrow's zstd codec, so reading a log needs
neither inspect-ai nor another package. When inspect-ai is installed its
``read_eval_log`` reads the log instead (it also migrates logs of older versions).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from evalkit._untrusted import MAX_BYTES_ENV, load_json, max_input_bytes
from evalkit.errors import ConfigError, InputError
from evalkit.interop._import_common import (
    VERDICT_WORDS,
    ParsedSource,
    SourceRow,
    as_dict,
    error_class,
    fail,
    read_json,
    short_error,
    source_text,
)
from evalkit.interop._import_transcripts import inspect_response
from evalkit.interop._import_unfinished import incomplete_row, is_incomplete

_ZSTD = 93  # ZIP compression method 93: Zstandard
_STDLIB_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_TIME_LIMITS = ("time", "working")
#: The score component recording a limit other than time that a sample hit (tokens, messages).
LIMIT_COMPONENT = "limit"
_TARGET_LIMIT = 200
SUFFIXES = (".eval", ".json")


# ------------------------------------------------------------------------------- reading


def _zip_member(path: Path, archive: zipfile.ZipFile, name: str) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > max_input_bytes():
        raise fail(path, name, f"member of {info.file_size:,} bytes, more than the "
                   f"{max_input_bytes():,} bytes evalkit reads (set {MAX_BYTES_ENV} to raise it)")
    if info.compress_type in _STDLIB_METHODS:
        return archive.read(info)
    if info.compress_type != _ZSTD:
        raise fail(path, name, f"unsupported zip compression method {info.compress_type}")
    import pyarrow as pa

    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(header)[0] != _LOCAL_SIGNATURE:
            raise fail(path, name, "corrupt zip member header; the file may be truncated")
        name_len, extra_len = _LOCAL_HEADER.unpack(header)[-2:]
        fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
        raw = fh.read(info.compress_size)
    try:
        data: bytes = pa.decompress(
            raw, decompressed_size=info.file_size, codec="zstd", asbytes=True
        )
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise fail(path, name, f"cannot decompress (zstd): {exc}") from None
    if zlib.crc32(data) != info.CRC:
        raise fail(path, name, "CRC mismatch; the file is corrupt or truncated")
    return data


def _json_member(path: Path, archive: zipfile.ZipFile, name: str) -> Any:
    try:
        return load_json(_zip_member(path, archive, name), f"{path}:{name}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise fail(path, name, f"member is not valid JSON ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise fail(path, name, f"corrupt zip member ({exc}); the file may be truncated") from None


def _read_eval_zip(path: Path) -> dict[str, Any]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise fail(
            path,
            "",
            "not a zip archive: an Inspect AI .eval log is a zip file (truncated download? "
            "wrong --format?)",
        ) from None
    with archive:
        names = set(archive.namelist())
        if "header.json" in names:
            log = _json_member(path, archive, "header.json")
        elif "_journal/start.json" in names:
            log = _json_member(path, archive, "_journal/start.json")
            log.setdefault("status", "started")
        else:
            raise fail(
                path,
                "",
                "zip archive without header.json or _journal/start.json: not an Inspect AI log",
            )
        if not isinstance(log, dict):
            raise fail(path, "header.json", "must be a JSON object")
        sample_names = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        log["samples"] = [_json_member(path, archive, n) for n in sample_names]
    return log


def _read_json_log(path: Path) -> Any:
    return read_json(
        path, "expected an Inspect AI log", empty="empty file; expected an Inspect AI .json log"
    )


def _looks_like_log(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict)


def _read_with_inspect_ai(path: Path) -> dict[str, Any] | None:
    try:
        from inspect_ai.log import read_eval_log  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        log = read_eval_log(str(path))
        data: dict[str, Any] = json.loads(log.model_dump_json())
    except Exception as exc:  # noqa: BLE001 - any reader failure is bad input, said plainly
        raise fail(path, "", f"inspect_ai could not read the log: {exc}") from None
    return data


def load_log(path: Path, use_inspect_ai: bool = True) -> dict[str, Any] | None:
    """Load one Inspect AI log as plain data (the ``.json`` log layout).

    Args:
        path: A ``.eval`` or ``.json`` log.
        use_inspect_ai: Read with ``inspect_ai.log.read_eval_log`` when it is installed
            (after evalkit's own checks, so error messages do not depend on it).

    Returns:
        The log, or None when a ``.json`` file is valid JSON but not an Inspect log.

    Raises:
        InputError: The file is not an Inspect AI log, or is corrupt.
    """
    if path.suffix == ".json":
        data = _read_json_log(path)
        if not _looks_like_log(data):
            return None
    else:
        data = _read_eval_zip(path)
        if not _looks_like_log(data):
            raise fail(path, "header.json", "no 'eval' object: not an Inspect AI log")
    if use_inspect_ai:
        data = _read_with_inspect_ai(path) or data
    return dict(data)


# ------------------------------------------------------------------------------- mapping


def parse_condition_from(spec: str | None) -> tuple[str, str | None]:
    """Parse ``--condition-from`` for Inspect: ``model``, ``task_arg:NAME``, ``metadata:NAME``.

    The log's own field paths name the same sources: ``task_args.NAME`` (``eval.task_args``)
    and ``metadata.NAME`` (the sample's ``metadata``).

    Raises:
        ConfigError: Any other value.

    Examples:
        >>> parse_condition_from("task_args.plugin_url"), parse_condition_from("metadata:arm")
        (('task_arg', 'plugin_url'), ('metadata', 'arm'))
    """
    spec = spec or "model"
    kind, _, name = spec.partition(":")
    if spec == "model":
        return "model", None
    if kind in ("task_arg", "metadata") and name:
        return kind, name
    field, _, name = spec.partition(".")
    if field in ("task_args", "metadata") and name:
        return ("task_arg" if field == "task_args" else "metadata"), name
    raise ConfigError(
        "The value for `condition_from` must be one of ['model', 'task_arg:NAME' (or "
        "'task_args.NAME'), 'metadata:NAME' (or 'metadata.NAME')] for Inspect AI logs, but "
        f"{spec!r} was passed."
    )


def score_value(value: Any, scorer: str, row: SourceRow) -> tuple[float, bool]:
    """Map an Inspect score value to ``(score, passed)``.

    ``C``/correct/True/1 pass with score 1; ``I``/incorrect/``N``/False/0 fail with 0; ``P``
    (partial) scores 0.5 and does not pass; other numbers in [0, 1] are the score and pass
    only at 1.

    Raises:
        InputError: A value that is none of these.
    """
    hint = f" (scorer '{scorer}'; choose another with --scorer)"
    if isinstance(value, bool):
        return float(value), value
    if isinstance(value, int | float):
        number = float(value)
        if not 0.0 <= number <= 1.0:
            raise row.problem(f"score value {value!r} lies outside [0, 1]{hint}")
        return number, number >= 1.0
    if isinstance(value, str):
        word = VERDICT_WORDS.get(value.strip().lower())
        if word is not None:
            return word
        try:
            return score_value(float(value), scorer, row)
        except ValueError:
            pass
    raise row.problem(
        f"score value {value!r} is not C/I/P/N, a boolean or a number in [0, 1]{hint}"
    )


def _timestamp(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)


def _usage(sample: dict[str, Any]) -> tuple[int | None, int | None, float | None]:
    usage = sample.get("model_usage") or {}
    if not isinstance(usage, dict) or not usage:
        return None, None, None
    records = [u for u in usage.values() if isinstance(u, dict)]
    costs = [u["total_cost"] for u in records if isinstance(u.get("total_cost"), int | float)]
    return (
        _token_sum(records, "input_tokens"),
        _token_sum(records, "output_tokens"),
        float(sum(costs)) if costs else None,
    )


def _token_sum(records: list[dict[str, Any]], key: str) -> int | None:
    """The summed token count, None when a record's count is not a whole number (or absent)."""
    values = [u.get(key) for u in records if u.get(key) is not None]
    counts = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if len(counts) < len(values):
        return None  # an impossible count is no count (the import warns of null figures)
    return sum(counts)


def _condition(
    kind: str, name: str | None, spec: dict[str, Any], sample: dict[str, Any], row: SourceRow
) -> str:
    if kind == "model":
        return str(spec["model"])
    source = spec.get("task_args") if kind == "task_arg" else sample.get("metadata")
    source = source if isinstance(source, dict) else {}
    if name not in source:
        known = ", ".join(sorted(source)) or "none"
        label = "task argument" if kind == "task_arg" else "sample metadata field"
        raise row.problem(
            f"no {label} '{name}' to take the condition from (available: {known}); "
            "use --condition-from model, task_arg:NAME or metadata:NAME"
        )
    value = source[name]
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _scorer_names(log: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for scorer in log["eval"].get("scorers") or []:
        if isinstance(scorer, dict) and isinstance(scorer.get("name"), str):
            names.append(scorer["name"])
    for score in (log.get("results") or {}).get("scores") or []:
        if isinstance(score, dict) and isinstance(score.get("scorer"), str):
            names.append(score["scorer"])
    for sample in log.get("samples") or []:
        if isinstance(sample, dict) and isinstance(sample.get("scores"), dict):
            names += list(sample["scores"])
    return list(dict.fromkeys(n.rsplit("/", 1)[-1] for n in names))


def _target(sample: dict[str, Any]) -> str | None:
    """The sample's target as short text (None when absent or too long to help a reason)."""
    target = sample.get("target")
    if isinstance(target, list) and all(isinstance(t, str) for t in target):
        target = " | ".join(target)
    text = source_text(target) if isinstance(target, str) else None
    return text if text is not None and len(text) <= _TARGET_LIMIT else None


def score_detail(score: dict[str, Any], passed: bool, target: str | None) -> str | None:
    """Why a scorer gave its value: its explanation, its answer, and the target when failed.

    Args:
        score: The scorer's entry in ``sample.scores`` (``explanation``, ``answer``).
        passed: Whether the value is a pass.
        target: The sample's target (shown for a failed score only), or None.

    Returns:
        The detail (source text, cleaned, redacted and cut), or None when the scorer said
        nothing.

    Examples:
        >>> score_detail({"answer": "sydney", "explanation": "Sydney"}, False, "Canberra")
        'Sydney (target: Canberra)'
        >>> score_detail({"answer": "B", "explanation": "The grader saw B."}, True, "B")
        'The grader saw B.'
        >>> score_detail({"answer": "42", "explanation": "wrong unit"}, False, None)
        'answer 42: wrong unit'
    """
    explanation = source_text(score.get("explanation"))
    answer = source_text(score.get("answer"), _TARGET_LIMIT)
    if explanation is None:
        text = answer
    elif answer is None or answer.casefold() in explanation.casefold():
        text = explanation
    else:
        text = f"answer {answer}: {explanation}"
    if not passed and target is not None:
        text = f"{text} (target: {target})" if text else f"target: {target}"
    return text


def _unwrapped(message: str, name: str) -> str:
    """``RuntimeError("x")`` -> ``x``: Inspect keeps an error's repr; its class is a column.

    Examples:
        >>> _unwrapped('RuntimeError("outage at peru")', "RuntimeError")
        'outage at peru'
        >>> _unwrapped("TimeoutError: slow", "TimeoutError")
        'TimeoutError: slow'
    """
    match = re.fullmatch(rf"{re.escape(name)}\((['\"])(.*)\1,?\)", message.strip(), re.DOTALL)
    return match.group(2) if match else message


def _limit_row(limit: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A ``limit`` score row for a sample cut off by a limit that is not a time limit."""
    if limit is None or limit.get("type") in _TIME_LIMITS:
        return []
    kind = source_text(limit.get("type"), 40) or "a"
    size = limit.get("limit")
    amount = f" ({size:g})" if isinstance(size, int | float) and not isinstance(size, bool) else ""
    return [
        {
            "component": LIMIT_COMPONENT,
            "value": None,
            "max_value": None,
            "passed": False,
            "detail": f"the sample hit its {kind} limit{amount} before it finished",
        }
    ]


def _sample_row(
    path: Path,
    log: dict[str, Any],
    sample: Any,
    index: int,
    condition: tuple[str, str | None],
    scorer: str,
    lane: str,
) -> SourceRow:
    spec = log["eval"]
    if not isinstance(sample, dict) or "id" not in sample or "epoch" not in sample:
        raise fail(path, f"samples[{index}]", "a sample needs 'id' and 'epoch'")
    epoch = sample["epoch"]
    where = f"sample {sample['id']} epoch {epoch}"
    row = SourceRow(values={}, file=str(path), where=where, identity=None)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise row.problem(f"epoch must be an integer >= 1, got {epoch!r}")
    model = str(spec["model"])
    values = row.values
    values.update(
        case_id=str(sample["id"]),
        condition=_condition(condition[0], condition[1], spec, sample, row),
        provider="inspect" if condition[0] == "model" else model,
        model=model,
        trial=epoch - 1,
        lane=lane,
        suite=str(spec.get("task") or path.stem),
    )
    metadata = as_dict(sample.get("metadata"))
    for column in ("category", "split"):
        if isinstance(metadata.get(column), str):
            values[column] = metadata[column]
    tags = spec.get("tags")
    if isinstance(tags, list) and tags:
        values["tags"] = ",".join(sorted(str(t) for t in tags))
    values["input_tokens"], values["output_tokens"], values["cost_usd"] = _usage(sample)
    for key in ("working_time", "total_time"):
        if isinstance(sample.get(key), int | float):
            values["latency_s"] = float(sample[key])
            break
    values["started_at"] = _timestamp(sample.get("started_at"))
    values["finished_at"] = _timestamp(sample.get("completed_at"))
    if isinstance(sample.get("turn_count"), int):
        values["n_steps"] = sample["turn_count"]
    scores = as_dict(sample.get("scores"))
    target = _target(sample)
    for name, score in scores.items():
        if not isinstance(score, dict) or "value" not in score:
            raise row.problem(f"scores.{name} has no 'value'")
        if isinstance(score["value"], dict | list):
            continue  # a multi-value scorer: only selectable values enter scores.parquet
        value, passed = score_value(score["value"], name, row)
        # an incomplete score's explanation is its own row, the sample's cause (not repeated)
        incomplete = not passed and is_incomplete(score)
        row.scores.append(
            {
                "component": name.rsplit("/", 1)[-1],
                "value": value,
                "max_value": 1.0,
                "passed": passed,
                "detail": score_detail(
                    {"answer": score.get("answer")} if incomplete else score, passed, target
                ),
            }
        )
        if incomplete:
            row.scores.append(incomplete_row(name.rsplit("/", 1)[-1], score))
    error = sample.get("error")
    limit = sample.get("limit") if isinstance(sample.get("limit"), dict) else None
    row.scores += _limit_row(limit)
    if error:
        message = str(error.get("message") if isinstance(error, dict) else error)
        name = error_class(message, "inspect_error")
        values.update(
            status="error",
            error_class=name,
            error_message=short_error(_unwrapped(message, name)),
            passed=False,
            score=0.0,
        )
    elif limit is not None and limit.get("type") in _TIME_LIMITS:
        values.update(
            status="timeout",
            error_class=f"{limit.get('type')}_limit",
            error_message=f"sample exceeded its {limit.get('type')} limit ({limit.get('limit')})",
            passed=False,
            score=0.0,
        )
    else:
        chosen = scores.get(scorer)
        if chosen is None:
            chosen = next((s for k, s in scores.items() if k.rsplit("/", 1)[-1] == scorer), None)
        if chosen is None:
            known = ", ".join(scores) or "none"
            raise row.problem(
                f"no score from scorer '{scorer}' (scores here: {known}); choose one with --scorer"
            )
        if isinstance(chosen["value"], dict | list):
            raise row.problem(
                f"scorer '{scorer}' gives several values ({chosen['value']!r}); evalkit needs one "
                "value per sample: choose another scorer with --scorer"
            )
        values["score"], values["passed"] = score_value(chosen["value"], scorer, row)
        values["status"] = "ok"
    row.transcript = inspect_response(
        sample, model, (values["input_tokens"], values["output_tokens"], values["cost_usd"])
    )
    row.identity = {
        "task": spec.get("task"),
        "task_args": spec.get("task_args"),
        "model": model,
        "sample": sample["id"],
        "input": sample.get("input"),
        "target": sample.get("target"),
        "epoch": epoch,
        "scorer": scorer,
    }
    return row


def read_inspect(
    paths: list[Path],
    listed: set[Path],
    condition_from: str | None,
    scorer: str | None,
    lane: str,
    use_inspect_ai: bool = True,
) -> ParsedSource:
    """Read Inspect AI logs: each sample x epoch becomes one row.

    Args:
        paths: Log files (``.eval`` or ``.json``).
        listed: Files found by listing a directory (non-log ``.json`` files among them are
            skipped with a warning, e.g. an eval set's ``logs.json``).
        condition_from: ``model`` (default), ``task_arg:NAME`` or ``metadata:NAME``.
        scorer: The scorer whose value gives ``passed``/``score`` (default: the log's first).
        lane: The lane of every row.
        use_inspect_ai: Prefer ``inspect_ai.log.read_eval_log`` when installed.

    Returns:
        The rows; every scorer's value also goes to ``scores.parquet``.

    Raises:
        InputError: Unreadable or malformed log, unknown scorer or condition source.
    """
    condition = parse_condition_from(condition_from)
    rows: list[SourceRow] = []
    warnings: list[str] = []
    tasks: list[str] = []
    versions: list[str] = []
    dataset: dict[str, Any] = {}
    read: list[Path] = []
    for path in paths:
        log = load_log(path, use_inspect_ai)
        if log is None:
            if path in listed:
                warnings.append(f"skipped {path}: JSON but not an Inspect AI log")
                continue
            raise fail(path, "", "valid JSON but not an Inspect AI log (no 'eval' object)")
        read.append(path)
        spec = log["eval"]
        for key in ("task", "model"):
            if not isinstance(spec.get(key), str):
                raise fail(path, f"eval.{key}", "missing: not an Inspect AI log")
        samples = log.get("samples")
        if not isinstance(samples, list) or not samples:
            raise fail(
                path,
                "samples",
                "the log holds no samples (written with log_samples=False, or the run "
                "never finished one); nothing to import",
            )
        status = log.get("status")
        if status not in (None, "success"):
            warnings.append(f"{path}: log status is '{status}'; importing its logged samples")
        names = _scorer_names(log)
        chosen = scorer or (names[0] if names else "")
        if scorer and scorer not in names:
            raise fail(
                path,
                "eval.scorers",
                f"no scorer '{scorer}' in this log (scorers: {', '.join(names) or 'none'})",
            )
        tasks.append(spec["task"])
        packages = spec.get("packages") or {}
        if isinstance(packages, dict) and packages.get("inspect_ai"):
            versions.append(f"inspect_ai {packages['inspect_ai']}")
        for index, sample in enumerate(samples):
            row = _sample_row(path, log, sample, index, condition, chosen, lane)
            if versions:
                row.values["provider_version"] = versions[-1]
            rows.append(row)
            dataset[row.values["case_id"]] = [sample.get("input"), sample.get("target")]
    if not rows:
        raise InputError("no Inspect AI log among the files given")
    hint = (
        "several logs give the same condition; take it from elsewhere with --condition-from "
        "task_arg:NAME or metadata:NAME"
        if condition[0] == "model"
        else "two logs hold the same task, model and condition (a retried run?); import one"
    )
    return ParsedSource(
        rows=rows,
        suite=",".join(dict.fromkeys(tasks)),
        dataset=sorted(dataset.items()),
        tool=", ".join(dict.fromkeys(versions)) or None,
        warnings=warnings,
        duplicate_hint=hint,
        files=read,
    )
