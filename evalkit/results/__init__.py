"""The result table and run directories: schema, manifest, reading and writing runs.

Its ``__all__`` is what users read runs with (:func:`read_run`, :func:`read_scores`,
:func:`load_manifest` and its :class:`Manifest`, :func:`read_transcripts`, each item's reasons
and failure causes). The names of the
``TYPE_CHECKING`` block beyond ``__all__`` are the run-directory I/O other packages share
(the crash-safe writers :func:`append_line`, :class:`EventLog`, :func:`append_event`,
:func:`write_json_atomic`; the table helpers :func:`read_table`, :func:`conform`,
:func:`write_parquet`): the package's internal surface, not part of the API.
"""

__all__ = [
    "judged_statements",
    "read_evidence",
    "RESULT_SCHEMA",
    "SCORE_SCHEMA",
    "Manifest",
    "load_manifest",
    "read_run",
    "read_scores",
    "cause_changes",
    "describe_causes",
    "describe_changes",
    "failure_causes",
    "item_reasons",
    "reason_table",
    "read_transcript",
    "read_transcripts",
    "resolve_run_dir",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit._append import (
        LineWriter as LineWriter,
        append_line as append_line,
        end_torn_line as end_torn_line,
    )
    from evalkit.results._artifacts import (
        ARTIFACTS_DIR as ARTIFACTS_DIR,
        EVIDENCE_FILE as EVIDENCE_FILE,
        artifact_dir as artifact_dir,
        read_evidence,
    )
    from evalkit.results._calibration import (
        CALIBRATION_DIR as CALIBRATION_DIR,
        LABEL_COLUMNS as LABEL_COLUMNS,
        LABELS_FIX as LABELS_FIX,
        calibration_path as calibration_path,
        read_calibration as read_calibration,
        read_labels_csv as read_labels_csv,
    )
    from evalkit.results._files import (
        EVENTS_FILE as EVENTS_FILE,
        EventLog as EventLog,
        append_event as append_event,
        read_json_record as read_json_record,
        write_json_atomic as write_json_atomic,
    )
    from evalkit.results._finish import (
        ANSWERED_WRONG as ANSWERED_WRONG,
        DID_NOT_FINISH as DID_NOT_FINISH,
        cause_changes,
        cause_outcome as cause_outcome,
        describe_changes,
    )
    from evalkit.results._health import (
        ERROR_STATUSES as ERROR_STATUSES,
        dominant_error as dominant_error,
        errored_conditions as errored_conditions,
        find_failure as find_failure,
    )
    from evalkit.results._io import (
        conform as conform,
        load_results as load_results,
        read_parquet as read_parquet,
        read_run,
        read_scores,
        read_table as read_table,
        run_label as run_label,
        write_parquet as write_parquet,
    )
    from evalkit.results._layout import (
        MANIFEST_FILE as MANIFEST_FILE,
        PARTS_DIR as PARTS_DIR,
        RESULTS_FILE as RESULTS_FILE,
        SCORES_FILE as SCORES_FILE,
        SKILLS_DIR as SKILLS_DIR,
        TRANSCRIPTS_DIR as TRANSCRIPTS_DIR,
        peek_manifest as peek_manifest,
        recorded_resume_command as recorded_resume_command,
        resolve_run_dir,
        resume_command as resume_command,
    )
    from evalkit.results._manifest import (
        MANIFEST_VERSION as MANIFEST_VERSION,
        AblatedComponentRecord as AblatedComponentRecord,
        AblationRecord as AblationRecord,
        AdaptiveCaseRecord as AdaptiveCaseRecord,
        AdaptiveRecord as AdaptiveRecord,
        AllocationRecord as AllocationRecord,
        ConditionRecord as ConditionRecord,
        FailureRecord as FailureRecord,
        ImportSource as ImportSource,
        JudgeRecord as JudgeRecord,
        LookRecord as LookRecord,
        Manifest,
        ProviderRecord as ProviderRecord,
        RunFilters as RunFilters,
        RunStatus as RunStatus,
        SequentialRecord as SequentialRecord,
        SourceFile as SourceFile,
        load_manifest,
        manifest_path as manifest_path,
        write_manifest as write_manifest,
    )
    from evalkit.results._pairwise_status import (
        DEFAULT_MAX_FOLLOW_RATE as DEFAULT_MAX_FOLLOW_RATE,
        DEFAULT_MIN_KAPPA as DEFAULT_MIN_KAPPA,
        pairwise_calibration as pairwise_calibration,
    )
    from evalkit.results._reasons import (
        NO_REASONS as NO_REASONS,
        describe_causes,
        failure_causes,
        item_reasons,
        primary_causes as primary_causes,
        reason_table,
    )
    from evalkit.results._schema import (
        RESULT_COLUMNS as RESULT_COLUMNS,
        RESULT_SCHEMA,
        SCORE_SCHEMA,
        STATUSES as STATUSES,
    )
    from evalkit.results._statements import judged_statements
    from evalkit.results._summary import RunSummary as RunSummary
    from evalkit.results._transcripts import read_transcript, read_transcripts
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
