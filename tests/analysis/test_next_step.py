"""Every inconclusive compare says what would settle it; a settled one says nothing more."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import build_parser
from evalkit.errors import InputError
from evalkit.stats import PowerDesign, estimate_variance_components, required_cases
from tests.conftest import ROOT, evalkit_cli

DEMO = ROOT / "cases" / "demo"


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("next") / "runs"
    argv = ["run", str(DEMO), "--runs-dir", str(runs), "--run-id", "a", "--trials", "3",
            "--no-progress", "--lane", "prompt", "--json"]
    done = evalkit_cli(*argv)
    assert done.returncode == 0, done.stderr
    return runs


def _compare(runs: Path, conditions: str) -> dict[str, object]:
    done = evalkit_cli("compare", "a", "--conditions", conditions, "--runs-dir", runs, "--json",
                       "--resamples", "500")
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_inconclusive_compare_plans_the_next_step(demo_runs: Path) -> None:
    found = None
    for pair in ("none,stale", "preloaded,self-load", "stale,self-load", "none,self-load"):
        data = _compare(demo_runs, pair)
        if data["verdict"] == "inconclusive":
            found = pair, data
            break
    assert found is not None, "the demo run should hold an inconclusive pair of conditions"
    pair, data = found
    step = data["next_step"]
    assert isinstance(step, dict)
    assert {"cases", "trials", "effect", "command"} <= set(step)
    delta = data["delta"]
    assert isinstance(delta, dict) and step["effect"] == pytest.approx(delta["estimate"])
    # the plan comes from this run's variance components and the comparison's own rule
    rows = evalkit.read_run(demo_runs / "a")
    components = estimate_variance_components(rows, conditions=pair.split(","))
    plan = required_cases(step["effect"], 3,
                          design=PowerDesign.from_components(components), threshold=0.05)
    assert step["cases"] == plan.n_cases
    threshold_plan = required_cases(0.05, 3,
                                    design=PowerDesign.from_components(components), threshold=0.0)
    assert step["cases_at_threshold"] == threshold_plan.n_cases
    # never more cases than the suite holds: past that, how many to add
    suite = rows["case_id"].nunique()
    assert step["suite_cases"] == suite
    planned = step["cases"] or step["cases_at_threshold"]
    compared = rows[rows["condition"].isin(pair.split(","))]
    if planned <= suite:
        argv = shlex.split(str(step["command"]))  # a real command that would draw them
        args = build_parser().parse_args(argv[1:])
        assert args.until_verdict and args.conditions == pair
        assert args.plan_cases == planned and args.max_items == 2 * planned * 3
        assert step["items"] == 2 * planned * 3 and step["cases_to_add"] is None
    else:
        assert step["cases_to_add"] == planned - suite
        if step["command"] is not None:  # more trials over every case instead
            args = build_parser().parse_args(shlex.split(str(step["command"]))[1:])
            assert not args.until_verdict and args.trials > 3
            assert step["items"] == 2 * args.trials * suite
        else:
            assert step["items"] == 2 * planned * 3
    # priced from the compared items' own mean cost, against the items compared so far
    assert step["cost_usd"] == pytest.approx(step["items"] * compared["cost_usd"].mean())
    assert step["cost_simulated"] is True
    assert step["ratio"] == pytest.approx(step["items"] / len(compared))
    assert step["out_of_proportion"] == (step["ratio"] > 10)

    done = evalkit_cli("compare", "a", "--conditions", pair, "--runs-dir", demo_runs,
                       "--resamples", "500")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "next step:" in text and f"about {step['items']:,} items" in text
    assert "if billed (simulated provider)" in text
    if planned > suite:
        assert f"add {planned - suite} cases" in text and "--until-verdict" not in text


def test_a_settled_verdict_has_no_next_step(demo_runs: Path) -> None:
    data = _compare(demo_runs, "none,preloaded")
    assert data["verdict"] in {"improved", "regressed"}
    assert data["next_step"] is None


def test_a_peeked_manifest_is_the_validated_one(tmp_path: Path) -> None:
    from evalkit.results import load_manifest, peek_manifest

    run = ROOT / "tests" / "fixtures" / "golden" / "runs" / "demo-a"
    manifest = load_manifest(run)
    assert manifest is not None and peek_manifest(run) == manifest.to_json()
    assert peek_manifest(tmp_path) == {}
    (tmp_path / "manifest.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(InputError, match="manifest.json: not a JSON object"):
        peek_manifest(tmp_path)
