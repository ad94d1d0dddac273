"""Set up a run's judge before any item runs: its spec, the judge, and the plan's check.

Light on purpose (no pyarrow, no pandas): ``evalkit run`` calls these before its first item;
grading happens at the end (:func:`evalkit.judge.apply_judge`).

The analyses that call a judge on a stored run (``evalkit judge RUN``, ``compare --pairwise``,
``judge calibrate --pairwise``) take it through :func:`judge_for_analysis`: from the command
line, or from a suite the user names (``--suite PATH``), never from run data (a manifest, the
suite its ``suite_path`` points to, a stored comparison), except evalkit's own offline
simulated judge.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit._bidi import neutralize_controls
from evalkit._registry import registry
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


#: The one judge that run data may name and an analysis uses without being told: evalkit's own
#: offline judge (it imports no plugin, starts no program and sends nothing anywhere).
OFFLINE_JUDGE = "simulated"


def judge_for_analysis(
    recorded: JudgeSpec | None,
    where: str,
    provider: str | None = None,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    suite_judge: JudgeSpec | None = None,
    named_suite: bool = False,
) -> JudgeSpec | None:
    """The judge an analysis of a stored run asks: the user's, never one run data chose.

    A judge is code and a destination for the user's keys, so it comes from the command line
    (``--judge-provider``, ``--judge-model``, ``--judge-opt``) or from a suite the user names
    on it (``named_suite``: its ``judge:`` section, with the command line's overrides). What
    the run's own records name (``recorded``: the suite its manifest points to, a stored
    comparison's judge) is used only when it is :data:`OFFLINE_JUDGE`; any other recorded
    judge is named in an error that says how to ask for it.

    Args:
        recorded: The judge run data names (None: it names none).
        where: Where ``recorded`` was found, for the message (``run 'x' (its suite ...)``).
        provider: ``--judge-provider``.
        model: ``--judge-model``.
        options: ``--judge-opt`` settings.
        suite_judge: The ``judge:`` section of the suite the user named.
        named_suite: Whether the user named a suite (``--suite PATH``).

    Returns:
        The judge spec, or None when nobody names a judge.

    Raises:
        ConfigError: Run data names a judge other than the offline one and the command line
            names none (exit 2; the message names the recorded judge and the flags).
    """
    if named_suite:
        return resolve_judge_spec(suite_judge, provider, model, options)
    if recorded is None or recorded.provider == OFFLINE_JUDGE:
        return resolve_judge_spec(recorded, provider, model, options)
    if provider is not None:  # the user's judge; nothing of the recorded one is kept
        return resolve_judge_spec(None, provider, model, options)
    shown = shlex.quote(neutralize_controls(recorded.provider))
    model_flag = (
        f" --judge-model {shlex.quote(neutralize_controls(recorded.model))}"
        if recorded.model else ""
    )
    raise ConfigError(
        f"{where} names the judge {shown}; evalkit does not take a judge from run data "
        f"(only its offline '{OFFLINE_JUDGE}' judge), so that a shared run cannot choose what "
        f"runs or where your keys go. To use that judge, name it yourself: pass "
        f"--judge-provider {shown}{model_flag} (with its settings as --judge-opt KEY=VALUE), "
        "or --suite PATH naming the suite whose judge: section to use"
    )


def check_judge_provider(spec: JudgeSpec | None) -> None:
    """Refuse a judge whose provider is not a provider plugin, without calling anything.

    ``evalkit run`` checks the suite's judge even when no planned case is judged: a suite
    naming ``subprocess:Popen`` as its judge is refused (exit 2), not kept for later.

    Raises:
        ConfigError: No provider has that name, or the spec names something that is not a
            declared provider (the message starts with ``judge 'NAME'``).
    """
    if spec is not None and spec.provider != OFFLINE_JUDGE:
        try:
            registry("provider").get(spec.provider)
        except ConfigError as exc:
            raise ConfigError(f"judge '{spec.provider}': {exc}") from None


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
