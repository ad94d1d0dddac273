"""Primary causes over every combination of scoring components, gated or not.

The fast :func:`~evalkit.results.primary_causes` (compare, export and the failure summaries
count with it) and the reason lines of :func:`~evalkit.results.item_reasons` must name the same
cause as the rule the module states: an error first; then the gates in the order the run
recorded them; then the other failing components in ``COMPONENT_ORDER``; then a score below
the pass threshold. Context components (``skill_trigger`` among them) never decide an item by
themselves, even when a routing case's total names them as its gate.

Scores are built for every subset of the components, each subset once without gates and once
with every failing component gated, and the causes checked against that rule written out here.
Because what the fast path does depends on the whole table it is handed (it once crashed when
no failing component was left but a gate was), every subset is also handed to it on its own.
The imported-skill run that crashed ``compare`` and ``export`` is at the end.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.results import item_reasons, primary_causes, read_scores
from evalkit.results._reasons import CONTEXT_COMPONENTS
from tests.conftest import ROOT, evalkit_cli

#: A component of every kind: each known one, a per-artifact row, one the table does not know,
#: and a context component that a routing case gates on.
COMPONENTS = (
    "verifier",
    "artifacts",
    "artifact:report.md",
    "bundle",
    "expected_patterns",
    "forbidden_patterns",
    "anti_patterns",
    "workflow",
    "expectation:0",
    "rubric:1",
    "custom_check",
    "skill_trigger",
)
#: The causes the module documents, in its order (``expectation:``/``rubric:`` stand for all).
ORDER = {
    "verifier": "verifier failed",
    "artifacts": "evidence missing or invalid",
    "bundle": "evidence bundle invalid",
    "expected_patterns": "missing expected pattern",
    "forbidden_patterns": "forbidden pattern recommended",
    "anti_patterns": "anti-pattern matched",
    "workflow": "workflow step missing or out of order",
    "expectation:": "judged expectation failed",
    "rubric:": "judged rubric item failed",
}
#: A small set of one component per kind, handed to the fast path one subset at a time.
KINDS = ("verifier", "artifact:report.md", "expectation:0", "custom_check", "skill_trigger")


def _gate_name(component: str) -> str:
    """The gate a component fails under (each artifact fails the ``artifacts`` gate)."""
    return "artifacts" if component.startswith("artifact:") else component


def _position(component: str) -> tuple[int, str]:
    """The documented position and cause of a component (unknown ones after every known one)."""
    if component.startswith("artifact:"):
        component = "artifacts"
    for index, (name, cause) in enumerate(ORDER.items()):
        if component == name or (name.endswith(":") and component.startswith(name)):
            return index, cause
    return len(ORDER), f"{component} failed"


def expected_cause(failing: tuple[str, ...], gates: tuple[str, ...]) -> str:
    """The primary cause of an ok item that fails ``failing``, its total naming ``gates``."""
    deciding = [c for c in failing if c not in CONTEXT_COMPONENTS]
    if not deciding:
        return "score below the pass threshold"
    gated = [c for c in deciding if _gate_name(c) in gates]
    if gated:  # the run's own order of its gates
        first = min(gated, key=lambda c: gates.index(_gate_name(c)))
        return _position(first)[1]
    return min((_position(c) for c in deciding), key=lambda p: p[0])[1]


def _item(key: str, failing: tuple[str, ...], gates: tuple[str, ...]) -> tuple[
    dict[str, object], list[dict[str, object]]
]:
    """One failing item's row and score rows: ``failing`` failed, its total names ``gates``."""
    row = {"item_key": key, "case_id": key, "condition": "preloaded", "passed": False,
           "status": "ok", "expected_skill": "commit-message", "inferred_skill": "none",
           "skill_loaded": False, "score": 0.2}
    scores: list[dict[str, object]] = [
        {"item_key": key, "component": c, "value": 0.0, "max_value": 1.0, "passed": False,
         "detail": f"{c} detail", "expectation": None}
        for c in failing
    ]
    scores.append({"item_key": key, "component": "total", "value": 0.2, "max_value": 1.0,
                   "passed": False, "detail": ", ".join(f"gate failed: {g}" for g in gates),
                   "expectation": None})
    return row, scores


def _subsets(components: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [s for n in range(len(components) + 1)
            for s in itertools.combinations(components, n)]


def _cases(components: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every subset, ungated and with all of its components gated (in reverse order)."""
    out = []
    for subset in _subsets(components):
        out.append((subset, ()))
        gates = tuple(dict.fromkeys(_gate_name(c) for c in reversed(subset)))
        if gates:
            out.append((subset, gates))
    return out


def test_every_subset_of_components_gated_or_not_gets_the_documented_cause() -> None:
    cases = _cases(COMPONENTS)
    assert len(cases) == 2 * 2 ** len(COMPONENTS) - 1
    rows, scores = [], []
    for index, (failing, gates) in enumerate(cases):
        row, own = _item(f"k{index}", failing, gates)
        rows.append(row)
        scores += own
    frame, table = pd.DataFrame(rows), pd.DataFrame(scores)
    fast = primary_causes(frame, table).tolist()
    lines = item_reasons(frame, table)["cause"].tolist()
    expected = [expected_cause(f, g) for f, g in cases]
    assert fast == expected
    assert lines == expected
    # the run's gate order decides over COMPONENT_ORDER: the rubric item was gated first
    both = cases.index((("verifier", "rubric:1"), ("rubric:1", "verifier")))
    assert fast[both] == "judged rubric item failed"
    assert fast[cases.index((("verifier", "rubric:1"), ()))] == "verifier failed"


@pytest.mark.parametrize(("failing", "gates"), _cases(KINDS),
                         ids=lambda v: "+".join(v) or "none")
def test_each_combination_alone_is_counted(
    failing: tuple[str, ...], gates: tuple[str, ...]
) -> None:
    row, scores = _item("k", failing, gates)
    rows = pd.DataFrame([row])
    table = pd.DataFrame(scores)
    assert primary_causes(rows, table).tolist() == [expected_cause(failing, gates)]
    assert item_reasons(rows, table)["cause"].tolist() == [expected_cause(failing, gates)]


def test_a_gated_pass_and_a_failure_with_only_a_context_gate_in_one_table() -> None:
    """The shape of the crash: the failing items' only failing component is a context gate."""
    row, scores = _item("trigger-1", ("skill_trigger",), ("skill_trigger",))
    passing = {**row, "item_key": "eval-1", "case_id": "eval-1", "passed": True, "score": 1.0}
    rows = pd.DataFrame([row, passing])
    table = pd.DataFrame([*scores, {"item_key": "eval-1", "component": "expectation:0",
                                    "value": 1.0, "max_value": 1.0, "passed": True,
                                    "detail": "", "expectation": "imperative"}])
    assert primary_causes(rows, table).tolist() == ["score below the pass threshold", "passed"]


SKILL = ROOT / "tests" / "fixtures" / "skills" / "commit-message"
TRIGGERS = ROOT / "tests" / "fixtures" / "skills" / "commit-message-triggers.json"


@pytest.mark.slow
def test_an_imported_skill_with_its_trigger_set_compares_and_exports(tmp_path: Path) -> None:
    suite, runs = tmp_path / "cm", tmp_path / "runs"
    imported = evalkit_cli("cases", "import", SKILL, "-o", suite, "--triggers", TRIGGERS)
    assert imported.returncode == 0, imported.stderr
    ran = evalkit_cli("run", suite, "--run-id", "cm", "--conditions", "none,preloaded",
                      "--runs-dir", runs, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    rows, scores = evalkit.read_run(runs / "cm"), read_scores(runs / "cm")
    # the combination that crashed: under preloaded every failure is a trigger case whose only
    # failing component is its skill_trigger gate, while judged expectations passed
    failed = rows[(rows["condition"] == "preloaded") & ~rows["passed"]]
    assert len(failed) > 0 and failed["case_id"].str.startswith("trigger-").all()
    mine = scores[scores["item_key"].isin(failed["item_key"]) & ~scores["passed"]]
    assert set(mine["component"]) == {"skill_trigger", "total"}
    assert set(mine.loc[mine["component"] == "total", "detail"]) == {"gate failed: skill_trigger"}
    judged = scores[scores["component"].str.startswith("expectation:")]
    assert len(judged) > 0 and judged["passed"].any()

    compared = evalkit_cli("compare", "cm", "--conditions", "none,preloaded", "--runs-dir", runs,
                           "--json")
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["n_cases"] == 6
    text = evalkit_cli("compare", "cm", "--conditions", "none,preloaded", "--runs-dir", runs)
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert text.stdout.startswith("verdict: ")
    for fmt, out in (("skill-creator", tmp_path / "benchmark.json"),
                     ("skill-creator-workspace", tmp_path / "workspace")):
        exported = evalkit_cli("export", "cm", "--format", fmt, "-o", out, "--runs-dir", runs)
        assert exported.returncode == 0, exported.stderr
        assert out.exists()
    benchmark = json.loads((tmp_path / "benchmark.json").read_text())
    assert len(benchmark["runs"]) == len(rows)
