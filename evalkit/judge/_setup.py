"""Set up a run's judge before any item runs: its spec, the judge, and the plan's check.

Light on purpose (no pyarrow, no pandas): ``evalkit run`` calls these before its first item;
grading happens at the end (:func:`evalkit.judge.apply_judge`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit._settings import RETRIES
from evalkit.cases import Case, JudgeSpec
from evalkit.errors import ConfigError
from evalkit.judge._cache import JUDGE_CACHE_DIR, JudgeCache
from evalkit.judge._grade import Judge


def resolve_judge_spec(
    suite_judge: JudgeSpec | None,
    provider: str | None = None,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> JudgeSpec | None:
    """The judge of a run: the suite's ``judge:`` with the command line's overrides.

    A ``--judge-provider`` other than the suite's drops the suite's judge settings (they
    belong to the other provider); ``--judge-opt`` values go over what remains.

    Returns:
        The judge spec, or None when neither the suite nor the command line names a judge.
    """
    if suite_judge is None and provider is None and model is None and not options:
        return None
    spec = suite_judge or JudgeSpec()
    settings = dict(spec.settings)
    if provider is not None and provider != spec.provider:
        settings = {}
    settings.update(options or {})
    return JudgeSpec(
        provider=provider or spec.provider,
        model=model if model is not None else spec.model,
        settings=settings,
        timeout_s=spec.timeout_s,
        min_kappa=spec.min_kappa,
        max_follow_rate=spec.max_follow_rate,
    )


def make_judge(
    spec: JudgeSpec,
    runs_dir: str | os.PathLike[str],
    *,
    use_cache: bool = True,
    retries: int = RETRIES.default,
    retry_backoff_s: float = 1.0,
) -> Judge:
    """A :class:`Judge` with the verdict cache of ``runs_dir`` (validates the settings).

    Raises:
        ConfigError: Unknown judge provider or invalid settings.
    """
    cache = JudgeCache(Path(runs_dir) / JUDGE_CACHE_DIR) if use_cache else None
    return Judge(spec, cache, retries=retries, retry_backoff_s=retry_backoff_s)


def check_judgeable(judge: Judge | None, cases: list[Case]) -> None:
    """Refuse a plan whose judged cases have no judge.

    A simulated judge grades only statements with a known truth (a ``truth`` regex, or the
    case's ``reference``); the others are recorded as ungraded (status ``ungraded``), to be
    graded later by ``evalkit judge RUN --judge-provider NAME``.

    Raises:
        ConfigError: The message names the case and the fix.
    """
    judged = [c for c in cases if c.is_judged]
    if judged and judge is None:
        raise ConfigError(
            f"case '{judged[0].id}' has expectations but the suite declares no judge: add "
            "`judge: {provider: simulated}` (or anthropic, openai_compat, claude_code) to "
            "suite.yaml, or pass --judge-provider NAME"
        )


def ungradable(judge: Judge | None, cases: list[Case]) -> list[str]:
    """Cases with statements this judge cannot grade offline (no known truth), by id."""
    if judge is None or not getattr(judge.grader, "needs_truth", False):
        return []
    return [
        c.id for c in cases if c.is_judged and (
            any(e.truth is None for e in c.judged_expectations) or c.rubric_pass is not None
        ) and not c.reference
    ]
