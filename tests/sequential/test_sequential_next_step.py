"""A run of ``--until-verdict`` stopped by its budget says what would settle it, and the
command it prints continues the run far enough."""

from __future__ import annotations

import html
import json
import math
import shlex
from pathlib import Path

import pytest

import evalkit
from evalkit.analysis import NextStep
from evalkit.cli import build_parser
from evalkit.runner import RunConfig
from evalkit.sequential import SequentialConfig, run_until_verdict
from evalkit.stats import PowerDesign, estimate_variance_components, required_cases
from tests.conftest import DEMO, evalkit_cli

PAIR = ("stale", "preloaded")  # in the prompt lane: 18 of its 28 cases planned


def test_a_budget_stop_plans_the_cases_and_its_command_continues_the_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    line = shlex.join(["evalkit", "run", str(DEMO), "--conditions", ",".join(PAIR),
                       "--until-verdict", "--lane", "prompt", "--trials", "3",
                       "--round-cases", "5", "--no-progress", "--no-cache", "--max-items", "30",
                       "--json"])
    config = RunConfig(runs_dir=runs, run_id="seq", conditions=PAIR, lanes=("prompt",),
                       trials=3, use_cache=False, progress=False, command_line=line)
    outcome = run_until_verdict(DEMO, config, SequentialConfig(round_cases=5, max_items=30))
    out = outcome.to_dict()
    assert out["stop_reason"] == "max-items" and out["verdict"] == "inconclusive"
    step = out["next_step"]
    assert isinstance(step, dict) and {"cases", "trials", "effect", "command"} <= set(step)
    assert step["current_cases"] == 5 and step["current_trials"] == 3
    assert step["effect"] == pytest.approx(out["delta"]["estimate"])
    # planned from the run's own variance components, at the run's level (0.95)
    rows = evalkit.read_run(runs / "seq")
    components = estimate_variance_components(rows, conditions=list(PAIR))
    plan = required_cases(step["effect"], 3,
                          design=PowerDesign.from_components(
                              components, alpha=0.05,
                          ), threshold=0.05)
    assert step["cases"] == plan.n_cases
    needed = step["cases"] or step["cases_at_threshold"]
    assert needed is not None and needed <= len(outcome.record.order), step
    shown = outcome._repr_html_()  # the rich display in Jupyter
    assert shown is not None and html.escape(NextStep(**step).text()) in shown
    # the command resumes this run with the user's own options and a budget for those cases
    argv = shlex.split(step["command"])
    args = build_parser().parse_args(argv[1:])
    assert args.resume and args.run_id == "seq" and Path(args.runs_dir) == runs
    assert args.until_verdict and args.conditions == ",".join(PAIR) and args.lane == ["prompt"]
    drawn = min(math.ceil(needed / 5) * 5, len(outcome.record.order))
    assert args.max_items == 2 * 3 * drawn and not args.json
    done = evalkit_cli(*argv[1:])
    assert done.returncode == 0, done.stderr
    text = done.stdout
    record = json.loads((runs / "seq" / "manifest.json").read_text())["sequential"]
    looks = record["looks"]
    assert len(looks) > 1 and looks[0]["n_cases"] == 5  # continued, not restarted
    settled = record["stop_reason"] in {"improved", "regressed", "futile"}
    assert settled or looks[-1]["n_cases"] >= min(needed, len(record["order"])), record
    assert "verdict:" in text and ("next step:" in text) == (not settled)
