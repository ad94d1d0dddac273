"""The result table and run directories: schema, manifest, reading and writing runs.

Besides the user-facing readers (:func:`read_run`, :func:`read_scores`, :func:`load_manifest`,
:func:`read_transcripts`), this package is the one place other packages go for run-directory
I/O: the crash-safe writers (:func:`append_line`, :class:`EventLog`, :func:`append_event`,
:func:`write_json_atomic`), the typed :class:`Manifest` and the table helpers
(:func:`read_table`, :func:`conform`, :func:`read_parquet`, :func:`write_parquet`).
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit._append import LineWriter, append_line, end_torn_line
    from evalkit.results._artifacts import (
        ARTIFACTS_DIR,
        EVIDENCE_FILE,
        artifact_dir,
        read_evidence,
    )
    from evalkit.results._calibration import (
        CALIBRATION_DIR,
        LABEL_COLUMNS,
        LABELS_FIX,
        calibration_path,
        read_calibration,
        read_labels_csv,
    )
    from evalkit.results._files import (
        EVENTS_FILE,
        EventLog,
        append_event,
        read_json_record,
        write_json_atomic,
    )
    from evalkit.results._health import (
        ERROR_STATUSES,
        dominant_error,
        errored_conditions,
        find_failure,
    )
    from evalkit.results._io import (
        conform,
        load_results,
        read_parquet,
        read_run,
        read_scores,
        read_table,
        run_label,
        write_parquet,
    )
    from evalkit.results._layout import (
        MANIFEST_FILE,
        PARTS_DIR,
        RESULTS_FILE,
        SCORES_FILE,
        TRANSCRIPTS_DIR,
        peek_manifest,
        resolve_run_dir,
        resume_command,
    )
    from evalkit.results._manifest import (
        MANIFEST_VERSION,
        AblatedComponentRecord,
        AblationRecord,
        AdaptiveCaseRecord,
        AdaptiveRecord,
        ConditionRecord,
        FailureRecord,
        ImportSource,
        JudgeRecord,
        LookRecord,
        Manifest,
        ProviderRecord,
        RunFilters,
        RunStatus,
        SequentialRecord,
        SourceFile,
        load_manifest,
        manifest_path,
        read_manifest,
        write_manifest,
    )
    from evalkit.results._pairwise_status import (
        DEFAULT_MAX_FOLLOW_RATE,
        DEFAULT_MIN_KAPPA,
        pairwise_calibration,
    )
    from evalkit.results._reasons import (
        NO_REASONS,
        describe_causes,
        failure_causes,
        item_reasons,
        primary_causes,
        reason_table,
    )
    from evalkit.results._schema import RESULT_COLUMNS, RESULT_SCHEMA, SCORE_SCHEMA, STATUSES
    from evalkit.results._statements import judged_statements
    from evalkit.results._summary import RunSummary
    from evalkit.results._transcripts import read_transcript, read_transcripts
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)

__all__ = [
    "judged_statements",
    "DEFAULT_MAX_FOLLOW_RATE",
    "DEFAULT_MIN_KAPPA",
    "pairwise_calibration",
    "ARTIFACTS_DIR",
    "EVIDENCE_FILE",
    "artifact_dir",
    "read_evidence",
    "AdaptiveCaseRecord",
    "AdaptiveRecord",
    "CALIBRATION_DIR",
    "ERROR_STATUSES",
    "EVENTS_FILE",
    "LABEL_COLUMNS",
    "LABELS_FIX",
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
    "FailureRecord",
    "ImportSource",
    "JudgeRecord",
    "LineWriter",
    "LookRecord",
    "AblatedComponentRecord",
    "AblationRecord",
    "Manifest",
    "ProviderRecord",
    "RunFilters",
    "RunStatus",
    "RunSummary",
    "SequentialRecord",
    "SourceFile",
    "append_event",
    "append_line",
    "calibration_path",
    "conform",
    "dominant_error",
    "errored_conditions",
    "find_failure",
    "end_torn_line",
    "load_manifest",
    "load_results",
    "manifest_path",
    "read_json_record",
    "read_calibration",
    "read_labels_csv",
    "peek_manifest",
    "read_manifest",
    "read_parquet",
    "read_run",
    "read_scores",
    "NO_REASONS",
    "describe_causes",
    "failure_causes",
    "item_reasons",
    "primary_causes",
    "reason_table",
    "read_table",
    "read_transcript",
    "read_transcripts",
    "resolve_run_dir",
    "resume_command",
    "run_label",
    "write_json_atomic",
    "write_manifest",
    "write_parquet",
]
