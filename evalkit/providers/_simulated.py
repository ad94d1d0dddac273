"""The simulated agent: seeded, skill-sensitive, and judged by the real scorers.

Each (case, condition) gets a latent pass probability from a logistic model:

    logit p = difficulty(case) + lift * coverage(skill text) - harms

``coverage`` is the share of the case's expected patterns that some line of the skill text the
agent *uses* matches, so editing a SKILL.md really changes outcomes. Under ``self-load`` the
agent decides per trial whether to load the skill (it routes well on trigger cases and rarely
over-triggers otherwise). Stale skills carry bad advice (lines matching forbidden or
anti-pattern rules) that the agent follows when it fails. About one case in eight is one where
skill text hurts. Repeated trials disagree at a realistic rate (10-20 % flips).

The agent never reports pass/fail: it writes a transcript composed from the case's reference
answer and the skill lines it used, and in execution cases it runs (part of) the case's
reference solution in the workspace, so the verifier decides.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from evalkit._registry import plugin
from evalkit.cases import (
    NO_SKILL,
    Case,
    SkillExposure,
    compile_pattern,
    find_affirmed,
    stable_hash,
)
from evalkit.errors import ProviderTimeout, ServerError
from evalkit.providers._prompting import strip_frontmatter as _strip_frontmatter
from evalkit.providers._protocol import AgentRequest, ProviderInfo
from evalkit.providers._settings import OUTCOME, RUNTIME, ProviderSettings, parse_settings
from evalkit.providers._simulated_evidence import write_evidence
from evalkit.providers._transcript import AgentResponse, Event
from evalkit.sandbox import run_command

SIMULATOR_VERSION = "2"


class SimulatedSettings(ProviderSettings):
    """Settings of the simulated agent (``--provider-opt KEY=VALUE``)."""

    model: Annotated[str, OUTCOME] = "sim-1"
    """Model name; different names give different (but stable) case difficulties."""
    latency_s: Annotated[float, RUNTIME, Field(ge=0)] = 0.0
    """Seconds each invocation sleeps (for I/O-bound benchmarks); does not change outcomes."""
    lift: Annotated[float, OUTCOME] = 4.5
    """Logit gain of a skill that covers all of a case's expected patterns."""
    route_p: Annotated[float, OUTCOME, Field(gt=0, lt=1)] = 0.7
    """Probability of loading the relevant skill under self-load (before case variation)."""
    over_trigger_p: Annotated[float, OUTCOME, Field(ge=0, lt=1)] = 0.08
    """Probability of loading an irrelevant skill under self-load."""
    spread: Annotated[float, OUTCOME, Field(ge=0)] = 4.0
    """Standard deviation of case difficulty on the logit scale (drives the flip rate)."""
    hurt_share: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.12
    """Share of cases where injected skill text hurts."""
    error_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that an attempt fails with a retryable server error (fault injection)."""
    crash_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that an item crashes with a non-retryable exception (fault injection)."""
    hang_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that an item hangs until its timeout (fault injection)."""
    description_weight: Annotated[float, OUTCOME, Field(ge=0)] = 0.0
    """Self-load routing reads the skill descriptions: the logit of loading a skill moves by
    this weight times (share of the prompt's words found in the description - 0.1). 0 (the
    default) routes on relevance alone, as if every description were apt."""


_WORD = re.compile(r"[a-z][a-z0-9-]{3,}")


def description_match(description: str, prompt: str) -> float:
    """Share of the prompt's words (4+ letters) that the description also uses.

    Examples:
        >>> description_match("Writing or fixing bash scripts", "Fix this bash script loop")
        0.5
    """
    words = set(_WORD.findall(prompt.lower()))
    if not words:
        return 0.0
    described = {w.rstrip("s") for w in _WORD.findall(description.lower())}
    return sum(1 for w in words if w.rstrip("s") in described) / len(words)


def _skill_text(skill: SkillExposure) -> str:
    """What the agent can use of a skill: its text and the text of its files."""
    files = [skill.read_resource(f) for f in skill.resource_files()]
    return "\n".join([skill.text, *(f for f in files if f)])


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


@lru_cache(maxsize=65536)
def _case_constants(
    settings: SimulatedSettings, case_id: str, negative: bool
) -> tuple[float, bool, float]:
    """Latent constants of a case, the same across trials and conditions.

    Returns difficulty on the logit scale, whether skill text hurts the case, and how readily
    the agent routes to its skill.
    """
    rng = np.random.default_rng(int(stable_hash([settings.model, case_id]), 16))
    if negative:
        difficulty = float(rng.normal(2.5, settings.spread * 0.75))
    else:
        difficulty = float(rng.normal(-0.8, settings.spread))
    hurts = bool(rng.random() < settings.hurt_share)
    route_bias = float(rng.normal(0.0, 1.0))
    return difficulty, hurts, route_bias


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class SimulatedProvider:
    """A seeded simulated agent; the embedded default provider."""

    name = "simulated"
    #: Prompt-lane items never touch the workspace, so the runner need not create one.
    needs_prompt_workspace = False

    def __init__(self, settings: SimulatedSettings) -> None:
        self.settings = settings

    @property
    def deterministic(self) -> bool:
        """The same item (same seed) always gets the same outcome.

        Every draw comes from the item's seed, except the injected retryable server errors
        (``error_rate``), which are drawn afresh per attempt so that retries can succeed.
        """
        return self.settings.error_rate == 0

    def info(self) -> ProviderInfo:
        """Identity: ``simulated``, the model name and the simulator version."""
        return ProviderInfo(self.name, self.settings.model, f"simulated-{SIMULATOR_VERSION}")

    def outcome_settings(self) -> dict[str, Any]:
        """Every setting but ``latency_s`` changes outcomes."""
        out = self.settings.outcome()
        if not out.get("description_weight"):
            out.pop("description_weight", None)  # the default keeps earlier cache keys valid
        out["simulator"] = SIMULATOR_VERSION
        return out

    # -- latent model -------------------------------------------------------------------------

    def _case_constants(self, case: Case) -> tuple[float, bool, float]:
        return _case_constants(self.settings, case.id, case.expected_skill == NO_SKILL)

    def _used_skills(
        self, request: AgentRequest, rng: np.random.Generator, route_bias: float
    ) -> tuple[list[str], list[Event]]:
        texts = [_skill_text(e) for e in request.injected]
        events: list[Event] = []
        for skill in request.discoverable:
            relevant = skill.name == request.case.expected_skill
            p_load = (
                _sigmoid(_logit(self.settings.route_p) + route_bias)
                if relevant
                else self.settings.over_trigger_p
            )
            if self.settings.description_weight:
                match = description_match(skill.description, request.case.prompt)
                shift = self.settings.description_weight * (match - 0.1)
                p_load = _sigmoid(_logit(min(max(p_load, 1e-9), 1 - 1e-9)) + shift)
            if rng.random() < p_load:
                events.append(Event("tool_call", skill.name, name="load_skill"))
                events.append(Event("tool_result", skill.text[:2000], name="load_skill"))
                texts.append(_skill_text(skill))
        return texts, events

    def _pass_probability(
        self, case: Case, skill_lines: list[str], difficulty: float, hurts: bool, used: bool
    ) -> tuple[float, list[str], list[str]]:
        patterns = case.expected_patterns
        helpful = [
            line for line in skill_lines if any(compile_pattern(p).search(line) for p in patterns)
        ]
        covered = sum(1 for p in patterns if any(compile_pattern(p).search(x) for x in helpful))
        coverage = covered / len(patterns) if patterns else (1.0 if used else 0.0)
        bad_patterns = tuple(case.forbidden_patterns) + tuple(r.pattern for r in case.anti_patterns)
        harmful = [
            line for line in skill_lines if any(find_affirmed(p, line) for p in bad_patterns)
        ]
        logit = difficulty
        if used:
            logit += self.settings.lift * coverage
            logit -= 1.5 if harmful else 0.0
            logit -= 2.0 if hurts else 0.0
            logit -= 0.4 if case.expected_skill == NO_SKILL else 0.0
        return _sigmoid(logit), helpful, harmful

    # -- invocation ---------------------------------------------------------------------------

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Simulate the agent on one work item (see the module docstring)."""
        started = time.monotonic()
        self._inject_faults(request)
        if self.settings.latency_s:
            if self.settings.latency_s > request.timeout_s:
                time.sleep(request.timeout_s)
                raise ProviderTimeout(f"simulated latency exceeded {request.timeout_s:g}s")
            time.sleep(self.settings.latency_s)
        case = request.case
        rng = np.random.default_rng(request.seed)
        difficulty, hurts, route_bias = self._case_constants(case)
        texts, events = self._used_skills(request, rng, route_bias)
        skill_lines = [line for text in texts for line in _lines(text)]
        p, helpful, harmful = self._pass_probability(
            case, skill_lines, difficulty, hurts, bool(texts)
        )
        success = bool(rng.random() < p)
        prompt_text = case.prompt + ("\n" + case.context if case.context else "")
        events.insert(0, Event("user", prompt_text))
        if case.lane == "prompt":
            events.append(Event("assistant", self._answer(case, success, helpful, harmful)))
        else:
            events += self._act(request, success, harmful, rng)
        if case.lane == "evidence":
            # its own generator: the evidence draws leave the task's outcome unchanged
            evidence_rng = np.random.default_rng([request.seed, 2])
            events += write_evidence(case, request.workspace, skill_lines, evidence_rng)
        output_chars = sum(len(e.content) for e in events if e.kind in ("assistant", "tool_call"))
        # a preloaded skill reaches the context as real preloading puts it there, without its
        # frontmatter (the description is not part of it); a loaded one is read whole
        injected = len(request.injected)
        context = [_strip_frontmatter(t) for t in texts[:injected]] + texts[injected:]
        input_tokens = (len(prompt_text) + sum(len(t) for t in context)) // 4 + 50
        output_tokens = output_chars // 4 + 10
        return AgentResponse(
            events=tuple(events),
            model=self.settings.model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=(input_tokens * 3.0 + output_tokens * 15.0) / 1e6,
            n_steps=sum(1 for e in events if e.kind in ("assistant", "tool_call")),
            extra={"latent_p": round(p, 4), "elapsed_s": round(time.monotonic() - started, 4)},
        )

    def _inject_faults(self, request: AgentRequest) -> None:
        settings = self.settings
        if not (settings.error_rate or settings.crash_rate or settings.hang_rate):
            return
        item_rng = np.random.default_rng([request.seed, 1])
        if item_rng.random() < settings.crash_rate:
            raise RuntimeError("simulated agent crashed")
        if item_rng.random() < settings.hang_rate:
            time.sleep(request.timeout_s)
            raise ProviderTimeout(f"simulated agent hung past {request.timeout_s:g}s")
        # a fresh draw per attempt, so retries can succeed
        if np.random.default_rng().random() < settings.error_rate:
            raise ServerError("simulated HTTP 503 from the model endpoint")

    def _answer(
        self,
        case: Case,
        success: bool,
        helpful: list[str],
        harmful: list[str],
    ) -> str:
        reference = _lines(case.reference or "")
        patterns = [compile_pattern(p) for p in case.expected_patterns]
        if success:
            lines = reference or [f"Plan for: {case.prompt[:120]}"]
            extra = [h for h in helpful if h not in lines][:2]
            return "\n".join(lines + extra)
        kept = [line for line in reference if not any(p.search(line) for p in patterns)]
        if not patterns:  # nothing marks the lines that matter: a failed answer misses most
            kept = reference[: (len(reference) - 1) // 2]
        lines = ["I would start by looking into this step by step."] + kept
        lines += harmful[:2]
        return "\n".join(lines)

    def _act(
        self,
        request: AgentRequest,
        success: bool,
        harmful: list[str],
        rng: np.random.Generator,
    ) -> list[Event]:
        case = request.case
        steps = list(case.solution)
        if not success and steps:
            steps = steps[: int(rng.integers(0, len(steps)))]
        events: list[Event] = []
        for command in steps:
            outcome = run_command(command, request.workspace, min(30.0, request.timeout_s))
            events.append(Event("tool_call", command, name="bash"))
            events.append(Event("tool_result", outcome.output[-1000:], name="bash"))
        summary = _lines(case.reference or "") if success else harmful[:2]
        events.append(Event("assistant", "\n".join(summary) or ("Done." if success else "Stuck.")))
        return events


@plugin("provider")
def create_simulated(settings: Mapping[str, Any]) -> SimulatedProvider:
    """Build the simulated provider from ``--provider-opt`` settings."""
    return SimulatedProvider(parse_settings(SimulatedSettings, "simulated", settings))
