"""The result table: schema, reading and writing runs."""

from evalkit.results._io import (
    EVENTS_FILE,
    MANIFEST_FILE,
    RESULTS_FILE,
    SCORES_FILE,
    read_manifest,
    read_run,
    read_scores,
    read_transcripts,
    resolve_run_dir,
)
from evalkit.results._schema import RESULT_COLUMNS, RESULT_SCHEMA, SCORE_SCHEMA, STATUSES

__all__ = [
    "EVENTS_FILE",
    "MANIFEST_FILE",
    "RESULTS_FILE",
    "RESULT_COLUMNS",
    "RESULT_SCHEMA",
    "SCORES_FILE",
    "SCORE_SCHEMA",
    "STATUSES",
    "read_manifest",
    "read_run",
    "read_scores",
    "read_transcripts",
    "resolve_run_dir",
]
