"""Import results produced elsewhere (CSV, JSONL, Inspect AI, promptfoo) as an evalkit run."""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from evalkit._settings import RUNS_DIR
from evalkit._version import __version__
from evalkit.cases import stable_hash
from evalkit.errors import ConfigError, InputError
from evalkit.interop._import_common import ParsedSource, SourceRow, expand_paths
from evalkit.interop._import_conditions import parse_condition_map, rename_conditions
from evalkit.interop._import_options import ImportOptions
from evalkit.interop._import_registry import (
    BUILTIN_IMPORTERS,
    ImportRequest,
    get_importer,
)
from evalkit.interop._import_transcripts import transcript_lines, write_shard
from evalkit.matrix import item_key
from evalkit.results import (
    RESULT_SCHEMA,
    RESULTS_FILE,
    SCORE_SCHEMA,
    SCORES_FILE,
    STATUSES,
    ConditionRecord,
    ImportSource,
    Manifest,
    ProviderRecord,
    RunSummary,
    append_event,
    conform,
    write_manifest,
    write_parquet,
)

#: The built-in formats ``evalkit import`` reads (others arrive through the
#: ``evalkit.importers`` entry-point group: :func:`~evalkit.interop.importer_names`).
IMPORT_FORMATS: tuple[str, ...] = tuple(BUILTIN_IMPORTERS)

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class ImportResult(RunSummary):
    """Summary of an import: the new run (one item per row imported) and where it came from.

    Attributes:
        format: The ``--format`` name (``csv``, ``jsonl``, ``inspect``, ``harbor``, ...).
        source: The path imported (a file or directory; the common directory of several).
        warnings: Things worth knowing that are not errors (ignored columns, skipped files).
        manifest: The run's manifest.

    The other attributes are those of :class:`~evalkit.results.RunSummary`.
    """

    format: str
    source: str
    warnings: tuple[str, ...] = ()
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit import --json`` object (the ``run`` keys plus format and source)."""
        return {**super().to_dict(), "format": self.format, "source": self.source}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source(format: str, given: list[Path], files: list[Path]) -> dict[str, Any]:
    hashes = [{"path": str(f), "sha256": _sha256(f)} for f in files]
    if len(given) == 1:
        path = str(given[0])
    else:
        try:
            path = os.path.commonpath([str(p) for p in given]) or "."
        except ValueError:  # absolute and relative paths mixed
            path = os.path.commonpath([str(p.resolve()) for p in given])
    if len(hashes) == 1:
        combined = hashes[0]["sha256"]
    else:
        lines = sorted(f"{h['path']}\0{h['sha256']}\n" for h in hashes)
        combined = hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()
    return {"format": format, "path": path, "sha256": combined, "files": hashes}


def _finalize(
    parsed: ParsedSource, format: str, run_id: str, suite: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Assign keys, hashes and defaults; reject two rows with one key.

    Returns:
        The result rows, the score rows, and the transcript shard's lines (the rows with a
        transcript point to the shard).
    """
    if not parsed.rows:
        raise InputError("nothing to import: the input holds no result rows")
    case_ids = sorted({str(r.values["case_id"]) for r in parsed.rows})
    dataset_version = stable_hash(parsed.dataset if parsed.dataset is not None else case_ids)
    seen: dict[str, SourceRow] = {}
    rows: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    dropped: dict[str, list[str]] = {}
    transcripts: dict[str, dict[str, Any]] = {}
    unkept: list[str] = []
    for row in parsed.rows:
        values = dict(row.values)
        provider = values.get("provider")
        key = item_key(
            values["lane"], values["case_id"], values["condition"], provider or "", values["trial"]
        )
        if key in seen:
            first = seen[key]
            raise InputError(
                f"{first.file}: {first.where} and {row.file}: {row.where} are the same work "
                f"item (case {values['case_id']!r}, condition {values['condition']!r}, provider "
                f"{provider!r}, trial {values['trial']}); {parsed.duplicate_hint}"
            )
        seen[key] = row
        _sane_figures(values, row, dropped)
        if values.get("status", "ok") not in STATUSES:
            raise row.problem(f"status must be one of {', '.join(STATUSES)}")
        passed = bool(values["passed"])
        score = values.get("score")
        values.update(
            run_id=run_id,
            item_key=key,
            item_hash=stable_hash({"format": format, "item": row.identity}),
            suite=suite or values.get("suite") or parsed.suite,
            dataset_version=dataset_version,
            status=values.get("status") or "ok",
            passed=passed,
            score=float(passed) if score is None else float(score),
            cache_hit=bool(values.get("cache_hit", False)),
        )
        rows.append(values)
        scores += [{**s, "item_key": key} for s in row.scores]
        if row.transcript is not None:
            transcripts[key] = row.transcript
        elif row.transcript_note is not None:
            unkept.append(row.transcript_note)
    rows.sort(key=lambda r: str(r["item_key"]))
    scores.sort(key=lambda s: (str(s["item_key"]), str(s["component"])))
    for field_name, where in dropped.items():
        parsed.warnings.append(
            f"{len(where)} row(s) had an impossible {field_name} (not finite, negative, or past "
            f"a 64-bit integer), stored as null: first {where[0]}"
        )
    if unkept:
        parsed.warnings.append(
            f"{len(unkept)} item(s) imported without their transcript: first {unkept[0]}"
        )
    return rows, scores, transcript_lines(rows, transcripts)


#: Figures an import stores only when they are possible: finite, non-negative, within int64.
_FIGURES = {"cost_usd": float, "latency_s": float, "input_tokens": int, "output_tokens": int,
            "n_steps": int}
_INT64_MAX = 2**63 - 1


def _sane_figures(values: dict[str, Any], row: SourceRow, dropped: dict[str, list[str]]) -> None:
    """Null the cost, latency and token figures no agent can have, noting where (a warning)."""
    for name, kind in _FIGURES.items():
        value = values.get(name)
        if value is None:
            continue
        try:
            number = float(value)
            bad = not math.isfinite(number) or number < 0 or (
                kind is int and (int(value) != number or int(value) > _INT64_MAX))
        except (TypeError, ValueError, OverflowError):
            bad = True
        if bad:
            dropped.setdefault(name, []).append(f"{row.file}: {row.where}: {value!r}")
            values[name] = None


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    status = Counter(str(r["status"]) for r in rows)
    return {
        "items": len(rows),
        "ok": status["ok"],
        "error": status["error"],
        "timeout": status["timeout"],
        "skipped": status["skipped"],
        "ungraded": status["ungraded"],
        "passed": sum(bool(r["passed"]) for r in rows),
        "cache_hits": sum(bool(r["cache_hit"]) for r in rows),
    }


def _manifest(
    rows: list[dict[str, Any]],
    parsed: ParsedSource,
    run_id: str,
    source: dict[str, Any],
    counts: dict[str, int],
    originals: dict[str, str],
) -> Manifest:
    conditions: dict[str, ConditionRecord] = {}
    providers: dict[tuple[Any, Any], ProviderRecord] = {}
    for row in sorted(rows, key=lambda r: (r["condition"], r["case_id"], r["trial"])):
        original = originals.get(row["condition"])
        tally = conditions.setdefault(row["condition"], ConditionRecord(
            items=0, passed=0, **({"source_value": original} if original is not None else {})))
        tally.items = (tally.items or 0) + 1
        tally.passed = (tally.passed or 0) + int(row["passed"])
        providers.setdefault(
            (row.get("provider"), row.get("model")),
            ProviderRecord(
                name=row.get("provider"),
                model=row.get("model"),
                version=row.get("provider_version") or parsed.tool,
            ),
        )
    suites = list(dict.fromkeys(str(r["suite"]) for r in rows))
    return Manifest(
        run_id=run_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        evalkit_version=__version__,
        suite=suites[0] if len(suites) == 1 else ",".join(suites),
        dataset_version=rows[0]["dataset_version"],
        conditions=conditions,
        providers=list(providers.values()),
        trials=1 + max(int(r["trial"]) for r in rows),
        status="complete",
        counts=counts,
        source=ImportSource.model_validate(source),
        tool=parsed.tool,
        warnings=list(parsed.warnings),
    )


def _write(
    run_dir: Path,
    rows: list[dict[str, Any]],
    scores: list[dict[str, Any]],
    manifest: Manifest,
    counts: dict[str, int],
    transcripts: list[str],
) -> dict[str, Any]:
    """Write the run into a hidden temporary directory, then rename it into place."""
    results = conform(pa.Table.from_pylist(rows, schema=RESULT_SCHEMA), RESULT_SCHEMA)
    score_table = conform(pa.Table.from_pylist(scores, schema=SCORE_SCHEMA), SCORE_SCHEMA)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.import-", dir=run_dir.parent))
    try:
        tmp.chmod(0o755)
        source = manifest.source
        append_event(
            tmp,
            "run_started",
            run_id=manifest.run_id,
            items=len(rows),
            imported_from=source.path if source else None,
            format=source.format if source else None,
        )
        write_shard(tmp, transcripts)
        write_parquet(results, tmp / RESULTS_FILE)
        write_parquet(score_table, tmp / SCORES_FILE)
        written = write_manifest(tmp, manifest)
        append_event(tmp, "run_finished", **counts)
        try:
            os.rename(tmp, run_dir)
        except OSError:
            raise ConfigError(
                f"run '{run_dir.name}' already exists in {run_dir.parent}; choose another --run-id"
            ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written


def import_results(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    format: str,
    run_id: str,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    condition_from: str | None = None,
    scorer: str | None = None,
    lane: str = "prompt",
    suite: str | None = None,
    pass_threshold: float | None = None,
    timeout_policy: str | None = None,
    condition_map: str | Mapping[str, str] | None = None,
    options: Mapping[str, Any] | ImportOptions | None = None,
) -> ImportResult:
    r"""Create a run directory from results produced by another harness.

    Writes ``runs_dir/run_id/`` with ``results.parquet`` (one row per work item, cast to the
    result schema), ``scores.parquet`` (each scorer's or assertion's value, where the source
    has them), ``manifest.json`` (with ``source: {format, path, sha256, files}``) and
    ``events.jsonl``, so every analysis (``lift``, ``compare``, ``flips``, reports) applies.
    The directory appears whole or not at all.

    Args:
        path: A file, a directory (its files with the format's suffixes, recursively), or a
            list of them (e.g. one Inspect log per model).
        format: ``csv`` or ``jsonl`` (columns ``case_id, condition, passed`` and optionally
            ``trial, provider, model, lane, score, latency_s, cost_usd, input_tokens,
            output_tokens, split, category, status, reason, error_class, error_message``;
            ``reason`` becomes the score component ``grader``), ``inspect`` (Inspect AI
            ``.eval``/``.json`` logs: one row per sample x epoch) or ``promptfoo``
            (``promptfoo eval -o results.json``: one row per result, repeats as trials) or
            ``skill-creator``
            (a ``benchmark.json``: one row per eval x configuration x run, one score row per
            expectation; ``without_skill`` becomes ``none``, ``with_skill`` ``preloaded``) or
            ``harbor`` (Harbor job or trial directories: one row per trial ``result.json``;
            see ``docs/import.md``) or ``terminal-bench`` (Terminal-Bench 1.0 run
            directories: one row per trial), or a format an installed package registers
            (:func:`~evalkit.interop.importer_names`).
        run_id: Id of the new run; an existing run is never overwritten.
        runs_dir: Where the run directory is created.
        condition_from: An option of the formats that have it (as ``options``, given flat):
            where the condition comes from: Inspect ``model`` (default), ``task_arg:NAME``
            or ``metadata:NAME``; promptfoo ``prompt`` (the prompt label, default) or
            ``provider``; Harbor ``skills`` (default), ``job`` or ``task-path:REGEX``;
            Terminal-Bench ``run`` (default) or ``agent-kwarg:NAME``. Not used for CSV/JSONL
            (their ``condition`` column).
        scorer: Inspect's option, given flat: the scorer whose value gives ``passed`` and
            ``score`` (default: the log's first scorer).
        lane: Lane of rows that do not carry one (default ``prompt``).
        suite: Suite name recorded in the rows (default: the Inspect task, the promptfoo
            description, or the file name).
        pass_threshold: Harbor's option, given flat: a verifier reward at or above it passes
            (default 1.0).
        timeout_policy: Harbor's and Terminal-Bench's option, given flat: what an agent
            timeout its tests still graded becomes: ``graded`` (its verdict stands;
            Terminal-Bench's default), ``failed`` (a timeout row; Harbor's default) or
            ``error`` (an error row).
        condition_map: Names for the conditions the source gives (``"VALUE=NAME,..."`` or
            ``{value: name}``, e.g. ``"http://localhost:9101=plugin,false=baseline"``): every
            condition of the rows must be named, and no two alike; the manifest keeps each
            one's ``source_value``.
        options: The format's own options (:attr:`Importer.options`: a mapping of its
            fields, e.g. ``{"condition_from": "task_arg:skill"}``, or the model itself); the
            four above may be given here or flat, not both.

    Returns:
        An :class:`ImportResult`; ``.to_dict()`` is the ``evalkit import --json`` object.

    Raises:
        InputError: Unknown format, missing or malformed file (the message names the file, the
            line or field, and the fix), or two rows for one work item.
        ConfigError: The run id exists or is not a plain name, or an option is not one of
            the format's or has a bad value (the message names the format and the option).

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> tmp = Path(tempfile.mkdtemp())
        >>> rows = ["case_id,condition,passed", "a,none,fail", "a,skill,pass"]
        >>> _ = (tmp / "r.csv").write_text("\n".join(rows))
        >>> result = import_results(tmp / "r.csv", "csv", "ext", runs_dir=tmp / "runs")
        >>> result.items, result.pass_rate
        (2, 0.5)
    """
    importer = get_importer(format)
    names = parse_condition_map(condition_map)
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ConfigError(
            f"run id {run_id!r} must be a plain name (letters, digits, '.', '_', '-'), "
            "e.g. --run-id inspect-baseline"
        )
    format_options = importer.parse_options(_with_flat(options, {
        "condition_from": condition_from, "scorer": scorer, "pass_threshold": pass_threshold,
        "timeout_policy": timeout_policy,
    }))
    run_dir = Path(runs_dir) / run_id
    if run_dir.exists():
        raise ConfigError(f"run '{run_id}' already exists in {runs_dir}; choose another --run-id")
    given = [Path(path)] if isinstance(path, str | os.PathLike) else [Path(p) for p in path]
    files, listed = expand_paths(given, importer.suffixes, importer.what)
    parsed = importer.read(
        ImportRequest(
            files=files,
            listed=listed,
            lane=lane,
            options=format_options,
        )
    )
    originals = rename_conditions(parsed, names)
    rows, scores, transcripts = _finalize(parsed, format, run_id, suite)
    counts = _counts(rows)
    source = _source(format, given, parsed.files or files)
    manifest = _manifest(rows, parsed, run_id, source, counts, originals)
    Path(runs_dir).mkdir(parents=True, exist_ok=True)
    written = _write(run_dir, rows, scores, manifest, counts, transcripts)
    return ImportResult.from_counts(
        run_id,
        run_dir,
        counts,
        format=format,
        source=source["path"],
        warnings=tuple(parsed.warnings),
        manifest=written,
    )


def _with_flat(
    options: Mapping[str, Any] | ImportOptions | None, flat: Mapping[str, Any]
) -> Mapping[str, Any] | ImportOptions | None:
    """The format's options with the built-in formats' options given flat (None: not given).

    Raises:
        ConfigError: One option given both ways.
    """
    given = {name: value for name, value in flat.items() if value is not None}
    if not given:
        return options
    if isinstance(options, ImportOptions):
        raise ConfigError(
            f"pass {', '.join(given)} inside `options` ({type(options).__name__}) or leave "
            "`options` out, not both",
            setting=next(iter(given)),
        )
    both = sorted(set(given) & set(options or {}))
    if both:
        raise ConfigError(
            f"--{both[0].replace('_', '-')} is given twice (as an option of the format and "
            "on its own); give it once",
            setting=both[0],
        )
    return {**(options or {}), **given}
