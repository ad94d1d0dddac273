"""The result table schema: the single source of truth for ``results.parquet``."""

from __future__ import annotations

import pyarrow as pa

#: Version of the result schema; bumped only by extension (new columns).
SCHEMA_VERSION = 1

RESULT_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("item_key", pa.string(), nullable=False),
        pa.field("item_hash", pa.string(), nullable=False),
        pa.field("suite", pa.string()),
        pa.field("dataset_version", pa.string()),
        pa.field("lane", pa.string()),
        pa.field("case_id", pa.string(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("split", pa.string()),
        pa.field("tags", pa.string()),
        pa.field("expected_skill", pa.string()),
        pa.field("condition", pa.string(), nullable=False),
        pa.field("skill_hash", pa.string()),
        pa.field("provider", pa.string()),
        pa.field("model", pa.string()),
        pa.field("provider_version", pa.string()),
        pa.field("trial", pa.int32()),
        pa.field("seed", pa.int64()),
        pa.field("status", pa.string()),
        pa.field("error_class", pa.string()),
        pa.field("error_message", pa.string()),
        pa.field("passed", pa.bool_()),
        pa.field("score", pa.float64()),
        pa.field("inferred_skill", pa.string()),
        pa.field("skill_loaded", pa.bool_()),
        pa.field("latency_s", pa.float64()),
        pa.field("input_tokens", pa.int64()),
        pa.field("output_tokens", pa.int64()),
        pa.field("cost_usd", pa.float64()),
        pa.field("n_steps", pa.int32()),
        pa.field("started_at", pa.timestamp("us", tz="UTC")),
        pa.field("finished_at", pa.timestamp("us", tz="UTC")),
        pa.field("cache_hit", pa.bool_()),
        pa.field("transcript_path", pa.string()),
        pa.field("origin_run_id", pa.string()),
        pa.field("provider_deterministic", pa.bool_()),
        # the judge (null for runs and cases without judged expectations)
        pa.field("judge_provider", pa.string()),
        pa.field("judge_model", pa.string()),
        pa.field("judge_prompt_hash", pa.string()),
        pa.field("judge_passed", pa.bool_()),
        pa.field("judge_score", pa.float64()),
        pa.field("judge_calls", pa.int32()),
        pa.field("judge_cache_hits", pa.int32()),
        pa.field("judge_input_tokens", pa.int64()),
        pa.field("judge_output_tokens", pa.int64()),
        pa.field("judge_cost_usd", pa.float64()),
        pa.field("judge_error", pa.string()),
    ]
)
"""Schema of ``results.parquet``: one row per work item.

``tags`` is a sorted, comma-separated string (never a list in a cell); ``passed`` is False for
errors and timeouts (a timeout is a failure), while ``status`` keeps them apart.
``origin_run_id`` is the run that produced the outcome: the row's own run for a fresh item, the
producing run for a cache hit (null = unknown, in runs written before the column existed).
``provider_deterministic`` is True when the provider declares that the same item (same seed)
always gets the same outcome (the simulated agent, replay); null = unknown.

The ``judge_*`` columns describe the grading of a case's expectations: the judge's identity
(``judge_provider``, ``judge_model``, ``judge_prompt_hash``), its verdict (``judge_passed``,
``judge_score``: the share of judged statements passed), what it cost apart from the agent
(``judge_calls`` made, ``judge_cache_hits``, tokens, ``judge_cost_usd``) and ``judge_error``
when the judge failed after its retries (the row is then an ``error`` with ``error_class``
``judge_error``).
"""

SCORE_SCHEMA = pa.schema(
    [
        pa.field("item_key", pa.string(), nullable=False),
        pa.field("component", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("max_value", pa.float64()),
        pa.field("passed", pa.bool_()),
        pa.field("detail", pa.string()),
        pa.field("expectation", pa.string()),
    ]
)
"""Schema of ``scores.parquet``: one row per (work item, scoring component).

Judged statements are components ``expectation:N`` and ``rubric:N`` (1-based, in case order):
``expectation`` holds the statement, ``detail`` the judge's one-line evidence.
"""

RESULT_COLUMNS: tuple[str, ...] = tuple(RESULT_SCHEMA.names)
STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "skipped", "ungraded")
"""Statuses of a result row. ``ungraded``: the agent ran, but the outcome rests on judged
statements the run's judge could not grade (the offline simulated judge without a known
truth); neither passed nor failed, it is missing evidence until ``evalkit judge RUN`` grades it."""
