"""What an exporter of ``evalkit export`` is handed: the run's items in skill-creator's terms."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ExportedRun:
    """One item of the run, in skill-creator's terms (shared by both formats).

    Attributes:
        entry: Its ``benchmark.json`` entry of ``runs``.
        row: Its result row.
        prompt: The case's prompt, from the transcript (empty when there is none).
        answer: The agent's final answer.
        transcript: The transcript as Markdown.
    """

    entry: dict[str, Any]
    row: dict[str, Any]
    prompt: str = ""
    answer: str = ""
    transcript: str = ""


@dataclass(frozen=True)
class ExportJob:
    """Everything an exporter needs: the run, its items in skill-creator's terms, the verdict.

    Attributes:
        run_dir: The run directory.
        runs: The exported items.
        metadata: ``benchmark.json``'s ``metadata``.
        evalkit: The ``evalkit`` block (run id, version, conditions, paired comparison).
        output: Where to write.
    """

    run_dir: Path
    runs: list[ExportedRun]
    metadata: dict[str, Any]
    evalkit: dict[str, Any]
    output: Path
