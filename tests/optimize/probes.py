"""Probes for optimisation tests: a deterministic monotone provider, suites and optimizers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import evalkit
from evalkit.optimize import OptimizerContext
from evalkit.providers import AgentRequest, AgentResponse, Event, ProviderInfo

BLOCK = 10  # each [X] in the skill unlocks ten more validation cases


class MonotoneProvider:
    """Passes case ``*-NN`` iff ``NN // BLOCK`` < number of ``[X]`` in the injected skill."""

    name = "monotone"
    needs_prompt_workspace = False

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.cost = float(settings.get("cost_usd", 0.0))

    def info(self) -> ProviderInfo:
        return ProviderInfo("monotone", "monotone-1", "1")

    def outcome_settings(self) -> dict[str, Any]:
        return {"cost_usd": self.cost}

    def invoke(self, request: AgentRequest) -> AgentResponse:
        markers = sum(e.text.count("[X]") for e in request.exposure)
        index = int(request.case.id.rsplit("-", 1)[1])
        answer = "PASS" if index // BLOCK < markers else "FAIL"
        return AgentResponse(events=(Event("assistant", answer),), model="monotone-1",
                             cost_usd=self.cost)


@evalkit.plugin("provider")
def create_monotone(settings: Mapping[str, Any]) -> MonotoneProvider:
    return MonotoneProvider(settings)


def write_monotone_suite(root: Path, n_val: int = 60, n_dev: int = 60, n_test: int = 60) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "SKILL.md").write_text("# Probe skill\n")
    (root / "suite.yaml").write_text(
        "name: monotone\nskills:\n  probe: {description: probe, path: SKILL.md}\n"
        "defaults: {conditions: [preloaded], provider: "
        "'tests.optimize.probes:create_monotone'}\n"
    )
    lines = ["cases:"]
    for split, n in (("dev", n_dev), ("holdout", n_val), ("test", n_test)):
        for i in range(n):
            lines += [f"  - id: {split}-{i:02d}", "    expected_skill: probe",
                      "    prompt: probe", "    expected_patterns: ['PASS']", f"    split: {split}"]
    (root / "cases" / "cases.yaml").write_text("\n".join(lines) + "\n")
    return root


@evalkit.plugin("optimizer")
def append_marker(context: OptimizerContext) -> None:
    """Non-idempotent: one more ``[X]`` on whatever parent it is handed."""
    context.skill_path.write_text(context.skill_path.read_text() + "[X]\n")


@evalkit.plugin("optimizer")
def reword(context: OptimizerContext) -> None:
    """Noise only: a harmless comment that changes the text but no guidance."""
    context.skill_path.write_text(
        context.skill_path.read_text() + f"<!-- revision {context.candidate_id} -->\n"
    )


@evalkit.plugin("optimizer")
def crash(context: OptimizerContext) -> None:
    raise RuntimeError("optimizer fell over")


TOPICS = 8


def write_topic_suite(root: Path) -> Path:
    """Cases on 8 topics across dev/holdout/test; a topic's guidance line unlocks its cases."""
    (root / "cases").mkdir(parents=True)
    (root / "SKILL.md").write_text("# Guide\nBe precise.\n")
    (root / "suite.yaml").write_text(
        "name: topics\nskills:\n  guide: {description: topic guidance, path: SKILL.md}\n"
        "defaults: {conditions: [preloaded]}\n"
    )
    lines = ["cases:"]
    for t in range(TOPICS):
        for split, n in (("dev", 2), ("holdout", 8), ("test", 6)):
            for i in range(n):
                lines += [
                    f"  - id: t{t}-{split}-{i}",
                    "    expected_skill: guide",
                    f"    prompt: Question {i} about topic {t}",
                    f"    expected_patterns: ['topic-{t}-key']",
                    f"    reference: Apply topic-{t}-key here.",
                    f"    split: {split}",
                ]
    (root / "cases" / "cases.yaml").write_text("\n".join(lines) + "\n")
    return root


@evalkit.plugin("optimizer")
def learn_topics(context: OptimizerContext) -> None:
    """Scripted optimizer: add guidance for up to three topics seen in failing train cases."""
    text = context.skill_path.read_text()
    added = 0
    for failure in context.failures:
        for pattern in failure["expected_patterns"]:
            if pattern not in text and added < 3:
                text += f"When relevant, apply {pattern} carefully.\n"
                added += 1
    context.skill_path.write_text(text)


SHEET_WORDS = ("spreadsheet", "columns", "delimiter", "quoting", "header", "encoding",
               "pivot", "dedupe", "merge", "formulas", "cells", "rows")
KITCHEN_WORDS = ("recipe", "oven", "flour", "simmer", "garlic", "knead", "butter", "pasta",
                 "roast", "whisk", "sauce", "dough")
VAGUE = "Helps with tasks."


def _prompt(words: tuple[str, ...], i: int) -> str:
    n = len(words)
    picked = dict.fromkeys(words[(i * k + k) % n] for k in (1, 5, 7))
    return f"{words[0].capitalize()} question: " + " and ".join(picked) + "?"


def write_trigger_suite(root: Path, description: str = VAGUE) -> Path:
    """One skill (``sheets``); should-trigger prompts use spreadsheet words, the rest kitchen."""
    (root / "cases").mkdir(parents=True)
    (root / "SKILL.md").write_text("# Sheets\nQuote fields; keep the header row.\n")
    (root / "suite.yaml").write_text(
        "name: triggers\nskills:\n"
        f"  sheets: {{description: '{description}', path: SKILL.md}}\n"
        "defaults: {conditions: [none, self-load]}\n"
    )
    lines = ["cases:"]
    for split, n_pos, n_neg in (("dev", 10, 5), ("holdout", 24, 12), ("test", 24, 12)):
        for kind, words, n, skill in (("pos", SHEET_WORDS, n_pos, "sheets"),
                                      ("neg", KITCHEN_WORDS, n_neg, "none")):
            for i in range(n):
                lines += [
                    f"  - id: {kind}-{split}-{i:02d}",
                    f"    expected_skill: {skill}",
                    f"    prompt: '{_prompt(words, i + len(split))}'",
                    f"    expected_patterns: ['{words[0]}-answer']",
                    f"    reference: The {words[0]}-answer.",
                    f"    split: {split}",
                ]
    (root / "cases" / "cases.yaml").write_text("\n".join(lines) + "\n")
    return root


SEEN: list[dict[str, Any]] = []


@evalkit.plugin("optimizer")
def record_description_workspace(context: OptimizerContext) -> str:
    """Record what a description optimizer is given, then propose a vague description."""
    SEEN.append({
        "files": sorted(p.name for p in context.workspace.iterdir()),
        "edited": context.skill_path.name,
        "text": context.skill_path.read_text(),
        "instructions": (context.workspace / "INSTRUCTIONS.md").read_text(),
        "failures": list(context.failures),
        "target": context.target,
        "failure_files": sorted(p.name for p in (context.workspace / "failures").iterdir()),
    })
    return VAGUE
