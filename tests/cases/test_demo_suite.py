"""The bundled demo suite: balanced, valid, and every reference passes its own case."""

from __future__ import annotations

from collections import Counter

import pytest

from evalkit.cases import load_suite
from evalkit.scorers import check_references
from tests.conftest import DEMO


def test_demo_suite_inventory() -> None:
    suite = load_suite(DEMO)
    prompt = [c for c in suite.cases if c.lane == "prompt"]
    execution = [c for c in suite.cases if c.lane == "execution"]
    assert len(prompt) >= 24 and len(execution) >= 6
    triggers = Counter(c.expected_skill for c in prompt if c.category == "trigger")
    assert len(suite.skills) == 2
    counts = sorted(triggers[name] for name in suite.skills)
    assert counts[0] >= 6 and counts[1] >= 8
    assert (
        sum(c.category == "should-not-trigger" and c.expected_skill == "none" for c in prompt) >= 6
    )
    assert sum(c.category == "anti-pattern" for c in prompt) >= 4
    assert all(c.verifier for c in execution)
    for skill in suite.skills.values():
        assert {"canonical", "bootstrap", "stale"} <= set(skill.texts)
    assert {c.split for c in suite.cases} == {"dev", "holdout", "test"}


@pytest.mark.slow
def test_every_reference_passes_and_every_fixture_starts_unsolved() -> None:
    assert check_references(load_suite(DEMO)) == []
