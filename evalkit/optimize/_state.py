"""The record of an optimisation run (``optimize.json``): one typed model, read and written here.

The loop saves the record after every decision (atomically), so a killed run resumes from it;
reports read it back with :func:`read_state`. The JSON only grows: a key is never renamed or
removed, and a record written before ``version`` existed reads as version 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalkit.errors import InputError
from evalkit.results import read_json_record, write_json_atomic
from evalkit.stats import Verdict

STATE_FILE = "optimize.json"
#: Version of the ``optimize.json`` layout written by this evalkit.
STATE_VERSION = 1
#: The seed skill's candidate id.
SEED_ID = "seed"

#: ``running`` until the test split is evaluated, ``aborted`` after an honesty violation.
OptimizeStatus = Literal["running", "complete", "aborted"]
#: What an optimisation run changes: the skill text or its trigger description.
OptimizeTarget = Literal["text", "description"]
#: What the gate compares: the pass rate (text) or trigger F1 (description).
Objective = Literal["pass_rate", "trigger_f1"]


class _Record(BaseModel):
    # Keys a newer evalkit adds are kept on read and written back unchanged.
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class TriggerRates(_Record):
    """Trigger precision, recall and F1 of one description variant on one split.

    Estimates and 95 % case-bootstrap intervals come from :func:`evalkit.lift` over the split's
    self-load items, lanes pooled; None when undefined (no positives).
    """

    precision: float | None = None
    """Loads of the expected skill among all loads."""
    precision_low: float | None = None
    """Lower bound of its interval."""
    precision_high: float | None = None
    """Upper bound of its interval."""
    recall: float | None = None
    """Should-trigger items where the expected skill was loaded."""
    recall_low: float | None = None
    """Lower bound of its interval."""
    recall_high: float | None = None
    """Upper bound of its interval."""
    f1: float | None = None
    """Harmonic mean of precision and recall (the description mode's objective)."""
    f1_low: float | None = None
    """Lower bound of its interval."""
    f1_high: float | None = None
    """Upper bound of its interval."""
    n_cases: int = 0
    """Cases evaluated."""


class Decision(_Record):
    """The gate's decision on one candidate (an entry of ``history``)."""

    candidate: str
    """Candidate id (``cand-0001``, ...)."""
    parent: str
    """Champion the candidate was proposed from."""
    champion_at_commit: str
    """Champion it was gated against (differs from ``parent`` for a superseded sibling)."""
    accepted: bool = False
    """Whether it became the champion."""
    optimizer_usd: float = 0.0
    """What proposing it cost."""
    reason: str = ""
    """Why it was accepted or rejected."""
    verdict: Verdict | None = None
    """Gate verdict on validation (None when it was never evaluated)."""
    delta: float | None = None
    """Validation pass-rate change vs the champion."""
    ci_low: float | None = None
    """Lower bound of the gate interval."""
    ci_high: float | None = None
    """Upper bound of the gate interval."""
    val_rate: float | None = None
    """Its validation pass rate."""
    metric_calls: int = 0
    """Work items spent by the run so far."""
    usd: float = 0.0
    """Money spent by the run so far."""
    trigger: TriggerRates | None = None
    """Its validation trigger precision and recall (description mode)."""


class TestResult(_Record):
    """The single evaluation of the sealed test split: the seed vs the final champion."""

    __test__ = False  # not a pytest test class

    champion: str
    """The champion evaluated."""
    seed_rate: float | None
    """The seed's test pass rate."""
    champion_rate: float | None
    """The champion's test pass rate."""
    delta: float | None
    """Paired change, champion - seed."""
    ci_low: float | None
    """Lower bound of its interval."""
    ci_high: float | None
    """Upper bound of its interval."""
    verdict: Verdict
    """Verdict of the paired comparison."""
    n_cases: int
    """Test cases compared."""
    seed_trigger: TriggerRates | None = None
    """The seed's test trigger precision and recall (description mode)."""
    champion_trigger: TriggerRates | None = None
    """The champion's test trigger precision and recall (description mode)."""


class OptimizeState(_Record):
    """Everything an optimisation run has decided and spent (``optimize.json``)."""

    version: int = STATE_VERSION
    """Layout version of the record."""
    run_id: str
    """The optimisation run id."""
    status: OptimizeStatus = "running"
    """``running``, ``complete`` or ``aborted``."""
    created_at: str
    """ISO 8601 UTC start time."""
    suite: str
    """Suite name."""
    skill: str
    """Optimised skill."""
    target: OptimizeTarget = "text"
    """What is optimised: the skill's ``text`` or its trigger ``description``."""
    objective: Objective = "pass_rate"
    """What the gate compares: ``pass_rate`` (text) or ``trigger_f1`` (description); the
    ``*_rate``, ``delta`` and ``ci_*`` fields hold this objective."""
    optimizer: str
    """Optimizer name."""
    config: dict[str, Any]
    """The options of the run (``OptimizeConfig`` as JSON)."""
    splits_sha256: str
    """Digest of ``splits.json``."""
    split_sizes: dict[str, int]
    """Cases per split (``dev``, ``holdout``, ``test``)."""
    protected: dict[str, str] = Field(default_factory=dict)
    """Hashes of every protected file and of the gate, checked before each evaluation."""
    champion: str = SEED_ID
    """Current champion."""
    champion_val_rate: float | None = None
    """The champion's validation pass rate."""
    seed_val_rate: float | None = None
    """The seed's validation pass rate."""
    seed_trigger: TriggerRates | None = None
    """The seed's validation trigger precision and recall (description mode)."""
    iterations: int = 0
    """Candidates proposed."""
    stall: int = 0
    """Consecutive rejects."""
    metric_calls: int = 0
    """Work items spent on evaluations."""
    usd: float = 0.0
    """Money spent (evaluations and optimizer)."""
    optimizer_usd: float = 0.0
    """Money spent by the optimizer."""
    holdout_looks: int = 0
    """Evaluations of the validation split."""
    history: list[Decision] = Field(default_factory=list)
    """One decision per candidate, in commit order."""
    test_unsealed: bool = False
    """Whether the test split was unsealed (it is, exactly once)."""
    test_champion: str | None = None
    """The champion fixed when the test split was unsealed."""
    unsealed_at: str | None = None
    """When the test split was unsealed."""
    test: TestResult | None = None
    """The sealed test result, once evaluated."""
    abort_reason: str | None = None
    """Why the run was aborted."""

    @property
    def accepted(self) -> list[str]:
        """Ids of accepted candidates, in order."""
        return [d.candidate for d in self.history if d.accepted]

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to ``optimize.json``."""
        return self.model_dump(mode="json")


def write_state(run_dir: str | os.PathLike[str], state: OptimizeState) -> None:
    """Write ``optimize.json`` atomically.

    Args:
        run_dir: The optimisation run directory.
        state: The record.
    """
    write_json_atomic(Path(run_dir) / STATE_FILE, state.to_json())


def has_state(run_dir: str | os.PathLike[str]) -> bool:
    """Whether ``run_dir`` is an optimisation run (it holds ``optimize.json``)."""
    return (Path(run_dir) / STATE_FILE).is_file()


def read_state(run_dir: str | os.PathLike[str]) -> OptimizeState:
    """Read and validate an optimisation run's ``optimize.json``.

    Args:
        run_dir: The optimisation run directory.

    Returns:
        The record.

    Raises:
        InputError: No ``optimize.json``, invalid JSON, a field of the wrong type, or a record
            written by a newer evalkit (the message names the file and the field).
    """
    path = Path(run_dir) / STATE_FILE
    if not path.is_file():
        raise InputError(f"'{run_dir}' is not an optimisation run (no {STATE_FILE})")
    return read_json_record(
        path, OptimizeState, STATE_VERSION, "restore the file or start a new optimisation run"
    )
