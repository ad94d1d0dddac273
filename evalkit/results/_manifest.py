"""The run manifest (``manifest.json``): one typed record, read and written here only.

Both writers of run directories (``evalkit run`` and ``evalkit import``) build a
:class:`Manifest`; every reader goes through :func:`load_manifest`. The JSON on disk is a
contract that only grows: a key is never renamed or removed, a writer omits the keys it does
not know (an imported run has no ``seed`` or ``plan_hash``; a run made by the runner has no
``source``), and a manifest written before ``version`` existed reads as version 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalkit.results._files import read_json_record, write_json_atomic
from evalkit.results._layout import MANIFEST_FILE

#: Version of the manifest layout written by this evalkit (bumped on extension).
MANIFEST_VERSION = 1

#: ``partial`` while a run is in progress (or was interrupted); ``stopped`` when a
#: configuration error (refused credentials, a provider that cannot start) ended it early, to be
#: resumed once fixed; ``failed`` when it finished but every item of the run, or every item of
#: some condition or provider, ended in an error or a timeout (see
#: :func:`evalkit.results.find_failure`); ``complete`` when it finished healthy.
RunStatus = Literal["partial", "stopped", "failed", "complete"]


class _Record(BaseModel):
    # Keys a newer evalkit adds are kept on read and written back unchanged.
    model_config = ConfigDict(extra="allow")


class ConditionRecord(_Record):
    """One skill condition of a run (runner runs) or its tallies (imported runs)."""

    mode: str | None = None
    """How the skill is exposed: ``none``, ``self-load``, ``preloaded``, ``stale``, ..."""
    variant: str | None = None
    """Skill text variant used by the condition."""
    skill_hashes: dict[str, str] | None = None
    """Stable hash of each skill's text under this condition."""
    descriptions: dict[str, str] | None = None
    """Self-load conditions: the trigger description of each skill in the agent's index."""
    bootstrap_hashes: dict[str, str] | None = None
    """Self-load conditions: the hash of each skill's bootstrap text (what the agent sees
    before it loads the skill), stored like the texts of ``skill_hashes``."""
    items: int | None = None
    """Imported runs: rows of this condition."""
    passed: int | None = None
    """Imported runs: rows of this condition that passed."""
    source_value: str | None = None
    """Imported runs renamed with ``--condition-map``: the condition's value in the source
    (e.g. ``http://localhost:9101`` for ``plugin``)."""


class ProviderRecord(_Record):
    """A provider (agent) the run used."""

    name: str | None
    """Provider name (``simulated``, ``claude-code``, ...; the source's name when imported)."""
    model: str | None
    """Model the provider reported."""
    version: str | None
    """Provider (or source tool) version."""
    settings: dict[str, Any] | None = None
    """Provider settings with secret values replaced by ``***``."""


class FailureRecord(_Record):
    """Why a run is ``failed`` or ``stopped``: where the errors were and the dominant one."""

    scope: Literal["run", "condition", "provider"]
    """``run``: every item errored; ``condition``/``provider``: every item of ``groups``."""
    groups: list[str] = Field(default_factory=list)
    """The conditions or providers whose items all errored (empty for the scope ``run``)."""
    items: int
    """Items in the failed scope."""
    error_class: str
    """The most frequent ``error_class`` among them."""
    count: int
    """Items with that error class."""
    message: str
    """The most frequent error message of that class (secrets redacted)."""

    def describe(self) -> str:
        r"""One line for people: what failed, the dominant error and its count.

        Examples:
            >>> record = FailureRecord(scope="condition", groups=["none"], items=8,
            ...                        error_class="auth", count=8, message="HTTP 401")
            >>> print(record.describe().replace("; ", "\n"))
            every item of condition 'none' ended in an error (8 items)
            dominant error: auth x8: HTTP 401
        """
        if self.scope == "run":
            where = f"every item of the run ended in an error ({self.items} items)"
        else:
            names = ", ".join(f"'{g}'" for g in self.groups)
            label = self.scope if len(self.groups) == 1 else f"{self.scope}s"
            where = f"every item of {label} {names} ended in an error ({self.items} items)"
        return f"{where}; dominant error: {self.error_class} x{self.count}: {self.message}"


class JudgeRecord(_Record):
    """The judge that graded a run's expectations."""

    provider: str
    """Judge provider (``simulated``, ``anthropic``, ...)."""
    model: str | None = None
    """Judge model."""
    version: str | None = None
    """Judge provider version."""
    prompt_hash: str
    """Hash of the judge prompt template (with the judge's system instructions)."""
    settings: dict[str, Any] | None = None
    """Judge settings with secret values replaced by ``***``."""
    min_kappa: float | None = None
    """The suite's ``judge.min_kappa`` (None in runs written before it was recorded: 0.6)."""


class LookRecord(_Record):
    """One look of a sequential run: the comparison after a round of cases."""

    round: int
    """Round number (1 = the first round)."""
    n_cases: int
    """Cases observed (both conditions present) at the look."""
    items: int
    """Items of the run at the look."""
    cost_usd: float | None = None
    """Agent cost of the run at the look (None when the provider reports none)."""
    estimate: float | None = None
    """Mean per-case difference (candidate - baseline), clipped into the interval."""
    ci_low: float | None = None
    """Lower bound of the confidence sequence."""
    ci_high: float | None = None
    """Upper bound of the confidence sequence."""
    verdict: str
    """``improved``, ``regressed`` or ``inconclusive``."""
    reason: str = ""
    """Why the run may stop here: ``improved``, ``regressed``, ``futile``, ``futile-planned``
    (the planned effect is excluded), or ``""``."""
    futility_wealth: float | None = None
    """Wealth of the planned-effect futility bettor at the look (None: no planned effect)."""


class AdaptiveCaseRecord(_Record):
    """A case of a sequential run with adaptive trials: whether it ran its stage 2, and why."""

    probability: float
    """Its stage-2 probability: 1 when its stage-1 outcomes differed, else the design's."""
    drawn: bool
    """Its draw from (seed, case id): whether it runs stage 2 when its outcomes all agree."""
    stage_two: bool
    """Whether it ran (or is to run) stage 2."""


class AdaptiveRecord(_Record):
    """The adaptive-trials design of a sequential run and each observed case's draw."""

    total_trials: int
    """Trials per condition of a case that runs stage 2."""
    first_trials: int
    """Trials per condition every case runs (stage 1)."""
    probability: float
    """Stage-2 probability of a case whose stage-1 outcomes are all equal."""
    seed: int
    """Seed of the per-case draw."""
    cases: dict[str, AdaptiveCaseRecord] = Field(default_factory=dict)
    """Each case whose stage 1 is done, by case id."""


class AllocationRecord(_Record):
    """The Neyman allocation of a sequential run (``--allocate-trials``).

    The rounds' draws follow from it and the outcomes, so no draw is recorded.
    """

    floor: float
    """Share of each draw's probability spread evenly over the cases."""
    prior_pairs: float
    """Weight, in pairs, of the pooled disagreement rate in a flipping case's estimate."""
    round_pairs: int
    """Pairs drawn per round."""
    seed: int
    """Seed of the draws."""


class SequentialRecord(_Record):
    """How a sequential run (``evalkit run --until-verdict``) drew its cases and every look."""

    baseline: str
    """Baseline condition."""
    candidate: str
    """Candidate condition."""
    order: list[str]
    """Case ids in the seeded drawing order; round ``k`` runs the first ``k * round_cases``."""
    round_cases: int
    """Cases per round."""
    threshold: float
    """Practical threshold of "improved"."""
    confidence: float
    """Level of the confidence sequence."""
    method: str
    """The interval's method."""
    plan_cases: int | None = None
    """Cases the bets are tuned for (None: untuned)."""
    plan_effect: float | None = None
    """Planned effect of the futility boundary (``--plan-effect``; None: no such boundary)."""
    futility_beta: float | None = None
    """Its ``beta``: a run stops ``futile-planned`` when the futility wealth reaches
    ``1 / beta`` (None without a planned effect)."""
    max_items: int | None = None
    """Budget of items."""
    max_usd: float | None = None
    """Budget of agent cost in USD."""
    max_rounds: int | None = None
    """Budget of rounds."""
    looks: list[LookRecord] = Field(default_factory=list)
    """Every look taken, in order."""
    adaptive: AdaptiveRecord | None = None
    """Adaptive trials (``--adaptive-trials``): the design and each case's draw; None: every
    case runs every trial."""
    stop_reason: str | None = None
    """``improved``, ``regressed``, ``futile``, ``futile-planned``, ``max-items``, ``max-usd``,
    ``max-rounds``, ``cases-exhausted`` or ``run-failed`` (a round's run failed); None while
    the run goes on."""
    allocation: AllocationRecord | None = None
    """Neyman allocation of paired trials (``--allocate-trials``): rounds draw pairs of any
    case of ``order``, and a look's ``n_cases`` counts pairs; None: rounds draw new cases."""


class RunFilters(_Record):
    """Case filters the run was planned with."""

    lanes: list[str] = Field(default_factory=list)
    cases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    splits: list[str] = Field(default_factory=list)


class SourceFile(_Record):
    """One file an imported run was read from."""

    path: str
    sha256: str


class ImportSource(_Record):
    """Where an imported run came from."""

    format: str
    """``csv``, ``jsonl``, ``inspect`` or ``promptfoo``."""
    path: str
    """The path imported (the common directory of several)."""
    sha256: str
    """Digest of the file, or of the sorted ``path\\0sha256`` lines of several files."""
    files: list[SourceFile] = Field(default_factory=list)
    """Each file read, with its digest."""


class AblatedComponentRecord(_Record):
    """One ablation of ``evalkit ablate``: the skill copy with one component removed."""

    component: str
    """Component id (``description``, ``section/<slug>``, ``file/<path>``)."""
    condition: str
    """The condition that ran the copy."""
    tree_hash: str
    """Content hash of the copy's whole directory (``SKILL.md`` and files)."""
    path: str
    """Where the copy was written (under the ablation study directory)."""
    tokens: int
    """The component's size in tokens (estimate: characters / 4)."""


class AblationRecord(_Record):
    """Runs made by ``evalkit ablate``: the skill, its full copy and each ablated copy."""

    skill: str
    """The ablated skill."""
    full_condition: str
    """The condition of the full skill (``preloaded`` or ``self-load``)."""
    full_tree_hash: str
    """Content hash of the full skill's copy."""
    components: list[AblatedComponentRecord] = Field(default_factory=list)
    """One record per ablation run as a condition."""


class Manifest(_Record):
    """What a run directory holds and how it was made (``manifest.json``)."""

    version: int = MANIFEST_VERSION
    """Manifest layout version (absent, hence 1, in manifests written before it existed)."""
    run_id: str
    """The run id (the directory name)."""
    created_at: str
    """ISO 8601 UTC time the manifest was written."""
    started_at: str | None = None
    """ISO 8601 UTC time the run first started (kept by ``--resume``; absent in older
    manifests). The trend places a run by it: cached rows carry the times of the run that
    produced them and never move a run."""
    evalkit_version: str
    """evalkit version that wrote the run."""
    suite: str
    """Suite name (names joined by commas when an import mixed several)."""
    suite_path: str | None = None
    """Suite directory the run was planned from."""
    suite_git_sha: str | None = None
    """Commit of the suite directory, when it is in a git work tree."""
    dataset_version: str | None = None
    """Hash of the suite's cases."""
    conditions: dict[str, ConditionRecord] = Field(default_factory=dict)
    """Conditions of the run by name."""
    providers: list[ProviderRecord] = Field(default_factory=list)
    """Providers of the run."""
    trials: int | None = None
    """Trials per case and condition."""
    seed: int | None = None
    """Base seed of the plan."""
    concurrency: int | None = None
    """Work items in flight."""
    backend: str | None = None
    """joblib backend of the run."""
    filters: RunFilters | None = None
    """Case filters of the run."""
    plan_hash: str | None = None
    """Hash of every work item's hash: ``--resume`` refuses a different plan."""
    command_line: str | None = None
    """The command that started the run."""
    status: RunStatus
    """``partial``, ``stopped``, ``failed`` or ``complete`` (see :data:`RunStatus`)."""
    failure: FailureRecord | None = None
    """Runs ``failed`` or ``stopped``: where the errors were and the dominant error."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Items, ok, error, timeout, passed, cache_hits, cache_rejected (cache entries that failed
    verification in the last attempt; absent in older manifests), and skipped for imports."""
    source: ImportSource | None = None
    """Imported runs: where the results came from."""
    tool: str | None = None
    """Imported runs: the harness that produced them."""
    warnings: list[str] | None = None
    """Imported runs: things worth knowing that were not errors."""
    judge: JudgeRecord | None = None
    """The judge of the run's expectations, when a case has some."""
    judged_from: str | None = None
    """Runs made by ``evalkit judge``: the run whose agent outcomes were re-graded."""
    sequential: SequentialRecord | None = None
    """Runs made by ``evalkit run --until-verdict``: drawing order, budget and every look."""
    ablation: AblationRecord | None = None
    """Runs made by ``evalkit ablate``: the ablated copies and their tree hashes."""
    skill_texts: list[str] | None = None
    """The hashes of the skill texts kept in the run's ``skills/<hash>/SKILL.md`` (every
    text of ``skill_hashes`` and ``bootstrap_hashes``); None in runs written before runs
    kept them, and in imported runs."""
    confirm: dict[str, Any] | None = None
    """Runs made by ``evalkit confirm``: the screened runs, the confirmed cases and their
    planned trials (see ``docs/confirm.md``)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to ``manifest.json``: ``version`` and every key set."""
        data = self.model_dump(mode="json", exclude_unset=True)
        data.pop("version", None)
        return {"version": self.version, **data}


def manifest_path(run_dir: str | os.PathLike[str]) -> Path:
    """Path of a run directory's manifest."""
    return Path(run_dir) / MANIFEST_FILE


def write_manifest(run_dir: str | os.PathLike[str], manifest: Manifest) -> dict[str, Any]:
    """Write a run's ``manifest.json`` atomically.

    Args:
        run_dir: The run directory.
        manifest: The record.

    Returns:
        The JSON object written.
    """
    data = manifest.to_json()
    write_json_atomic(manifest_path(run_dir), data)
    return data


def load_manifest(run_dir: str | os.PathLike[str]) -> Manifest | None:
    """Read and validate a run directory's ``manifest.json``.

    Args:
        run_dir: The run directory (a run id resolves with :func:`resolve_run_dir`).

    Returns:
        The record, or None when the directory has no manifest.

    Raises:
        InputError: The file is not JSON, a field has the wrong type, or it was written by a
            newer evalkit (the message names the file and the field).
    """
    path = manifest_path(run_dir)
    if not path.exists():
        return None
    return read_json_record(
        path,
        Manifest,
        MANIFEST_VERSION,
        "fix the value or rewrite the run (evalkit run --resume rewrites the manifest)",
    )
