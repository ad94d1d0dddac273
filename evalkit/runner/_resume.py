"""Preconditions of ``--resume``: the run's manifest must be there and readable."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import ConfigError, InputError
from evalkit.results import PARTS_DIR, RESULTS_FILE, Manifest, load_manifest, manifest_path


def check_resumable(run_dir: Path, run_id: str) -> Manifest | None:
    """Refuse to resume a run whose finished items cannot be matched to their options.

    A run holding finished items (parts or ``results.parquet``) records in its manifest the
    plan they came from; without a readable manifest, resuming could mix items of different
    trials, conditions or seeds. A run directory with no finished item (killed before its first
    flush) resumes as a fresh start, whatever its manifest holds (the manifest is rewritten).

    Args:
        run_dir: The run directory being resumed.
        run_id: The run id (for the message).

    Returns:
        The run's manifest; None when it is absent, or unreadable in a run without finished
        items.

    Raises:
        ConfigError: Finished items exist but the manifest is missing or unreadable.
    """
    parts = run_dir / PARTS_DIR
    has_items = (run_dir / RESULTS_FILE).exists() or (
        parts.is_dir() and any(parts.glob("results-*.parquet"))
    )
    if not has_items:
        try:
            return load_manifest(run_dir)
        except (OSError, UnicodeDecodeError, InputError):
            return None  # nothing to match: a fresh start, and the manifest is rewritten
    path = manifest_path(run_dir)
    fix = (
        f"its finished items cannot be matched to the options they were run with; start a new "
        f"run with another --run-id (or move {run_dir} away)"
    )
    if not path.is_file():
        raise ConfigError(f"--resume: run '{run_id}' has no manifest ({path} is missing); {fix}")
    try:
        manifest = load_manifest(run_dir)
    except (OSError, UnicodeDecodeError, InputError) as exc:
        raise ConfigError(
            f"--resume: the manifest {path} of run '{run_id}' cannot be read ({exc}); {fix}"
        ) from None
    if manifest is None or manifest.plan_hash is None:
        raise ConfigError(
            f"--resume: the manifest {path} of run '{run_id}' has no 'plan_hash' field; {fix}"
        )
    return manifest
