"""The result table and run directories: schema, manifest, reading and writing runs.

Besides the user-facing readers (:func:`read_run`, :func:`read_scores`, :func:`read_manifest`,
:func:`read_transcripts`), this package is the one place other packages go for run-directory
I/O: the crash-safe writers (:func:`append_line`, :class:`EventLog`, :func:`append_event`,
:func:`write_json_atomic`), the typed :class:`Manifest` and the table helpers
(:func:`read_table`, :func:`conform`).
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.results._files import (
        EVENTS_FILE,
        EventLog,
        LineWriter,
        append_event,
        append_line,
        read_json_record,
        write_json_atomic,
    )
    from evalkit.results._io import (
        conform,
        load_results,
        read_run,
        read_scores,
        read_table,
        run_label,
    )
    from evalkit.results._layout import (
        PARTS_DIR,
        RESULTS_FILE,
        SCORES_FILE,
        TRANSCRIPTS_DIR,
        resolve_run_dir,
    )
    from evalkit.results._manifest import (
        MANIFEST_FILE,
        MANIFEST_VERSION,
        ConditionRecord,
        ImportSource,
        Manifest,
        ProviderRecord,
        RunFilters,
        RunStatus,
        SourceFile,
        load_manifest,
        manifest_path,
        read_manifest,
        write_manifest,
    )
    from evalkit.results._schema import RESULT_COLUMNS, RESULT_SCHEMA, SCORE_SCHEMA, STATUSES
    from evalkit.results._transcripts import read_transcript, read_transcripts
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)

__all__ = [
    "EVENTS_FILE",
    "MANIFEST_FILE",
    "MANIFEST_VERSION",
    "PARTS_DIR",
    "RESULTS_FILE",
    "RESULT_COLUMNS",
    "RESULT_SCHEMA",
    "SCORES_FILE",
    "SCORE_SCHEMA",
    "STATUSES",
    "TRANSCRIPTS_DIR",
    "ConditionRecord",
    "EventLog",
    "ImportSource",
    "LineWriter",
    "Manifest",
    "ProviderRecord",
    "RunFilters",
    "RunStatus",
    "SourceFile",
    "append_event",
    "append_line",
    "conform",
    "load_manifest",
    "load_results",
    "manifest_path",
    "read_json_record",
    "read_manifest",
    "read_run",
    "read_scores",
    "read_table",
    "read_transcript",
    "read_transcripts",
    "resolve_run_dir",
    "run_label",
    "write_json_atomic",
    "write_manifest",
]
