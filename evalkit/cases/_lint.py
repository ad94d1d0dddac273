"""Warnings about suites that validate but measure something other than intended."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.cases._models import AntiPatternRule, Case, SuiteFile
from evalkit.cases._patterns import find_affirmed
from evalkit.errors import Problem

#: Builds a problem located at a field of the case (see the loader's ``_Locator``).
Locate = Callable[[tuple[int | str, ...], str, str | None], Problem]


def reference_warnings(spec: SuiteFile, case: Case, at: Locate) -> list[Problem]:
    r"""Anti-patterns that the case's own reference answer or solution commands trip.

    Anti-pattern rules read every answer and tool call of an item. A rule that matches the
    reference solution (``sed -i 's/sleep 5/wait_for_port/' run.sh`` under a rule against
    ``sleep \d+``) fires on every item of the case that solves it that way: the case then
    measures the rule, not the skill.

    Args:
        spec: The suite file (its ``anti_patterns`` apply to every case).
        case: The case.
        at: Locates a field of the case.

    Returns:
        One warning per rule and reference part that it matches.
    """
    rules = [("suite", rule) for rule in spec.anti_patterns]
    rules += [("case", rule) for rule in case.anti_patterns]
    parts: list[tuple[tuple[int | str, ...], str, str]] = []
    if case.reference:
        parts.append((("reference",), "reference answer", case.reference))
    parts += [
        (("solution", i), f"solution command {i + 1}", command)
        for i, command in enumerate(case.solution)
    ]
    out = []
    for scope, rule in rules:
        for loc, what, text in parts:
            found = find_affirmed(rule.pattern, text)
            if found:
                out.append(at(loc, _message(scope, rule, what, found[0].group(0)), case.id))
    return out


def _message(scope: str, rule: AntiPatternRule, what: str, matched: str) -> str:
    effect = (
        "fails every item of this case that solves it this way (severity error)"
        if rule.severity == "error"
        else "lowers the score of every item of this case that solves it this way"
    )
    return (
        f"the {scope} anti-pattern '{rule.id}' (/{rule.pattern}/) matches the {what} "
        f"('{matched}'): the rule reads every answer and tool call, so it {effect}, and the "
        "case measures the rule instead of the skill; narrow the rule's pattern or write the "
        "reference another way"
    )
