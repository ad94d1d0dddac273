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
    ]
)
"""Schema of ``results.parquet``: one row per work item.

``tags`` is a sorted, comma-separated string (never a list in a cell); ``passed`` is False for
errors and timeouts (a timeout is a failure), while ``status`` keeps them apart.
``origin_run_id`` is the run that produced the outcome: the row's own run for a fresh item, the
producing run for a cache hit (null = unknown, in runs written before the column existed).
``provider_deterministic`` is True when the provider declares that the same item (same seed)
always gets the same outcome (the simulated agent, replay); null = unknown.
"""

SCORE_SCHEMA = pa.schema(
    [
        pa.field("item_key", pa.string(), nullable=False),
        pa.field("component", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("max_value", pa.float64()),
        pa.field("passed", pa.bool_()),
        pa.field("detail", pa.string()),
    ]
)
"""Schema of ``scores.parquet``: one row per (work item, scoring component)."""

RESULT_COLUMNS: tuple[str, ...] = tuple(RESULT_SCHEMA.names)
STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "skipped")
