"""``evalkit power --case-effect E --cases M``: trials that name a case through the case screen.

The plan accounts for the screen's correction across its ``M`` case rows; followed through
compare's own case screen (Fisher per case, Benjamini-Hochberg), it names the case at the
planned power, where the trials planned at the uncorrected level do not.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import power
from evalkit.stats import CompareOptions, fisher_power
from evalkit.stats._case_screen import case_screen
from tests.conftest import evalkit_cli

DRAWS = 300


def _named_share(trials: int, rows: int, seed: int) -> float:
    """How often the screen names c000 (0.8 -> 0.4) among ``rows`` rows, the rest unchanged."""
    rng = np.random.default_rng(seed)
    keys = pd.DataFrame({"case_id": [f"c{c:03d}" for c in range(rows)]})
    before = np.full(rows, 0.8)
    after = before.copy()
    after[0] = 0.4
    named = 0
    for _ in range(DRAWS):
        base = (rng.random((rows, trials)) < before[:, None]).astype(float)
        cand = (rng.random((rows, trials)) < after[:, None]).astype(float)
        verdicts = case_screen(keys, base, cand, CompareOptions())["verdict"]
        named += verdicts.iloc[0] == "regressed"
    return named / DRAWS


@pytest.mark.slow
def test_the_planned_trials_name_the_case_through_the_screen_and_the_uncorrected_do_not() -> None:
    plan = power(case_effect=-0.4, cases=40, baseline_rate=0.8)
    assert plan.n_trials is not None and plan.power >= 0.8 and plan.n_cases == 40
    assert _named_share(plan.n_trials, 40, seed=1) >= 0.75
    alone = power(case_effect=-0.4, cases=1, baseline_rate=0.8)  # no correction to clear
    assert alone.n_trials is not None and alone.n_trials < plan.n_trials
    assert _named_share(alone.n_trials, 40, seed=2) < 0.75  # too few for 40 rows


def test_the_plan_is_the_exact_fisher_power_at_the_corrections_level() -> None:
    bh = power(case_effect=-0.4, cases=40, baseline_rate=0.8)
    assert bh.n_trials is not None
    assert fisher_power(0.8, 0.4, bh.n_trials, 0.05 / 40) >= 0.8
    assert fisher_power(0.8, 0.4, bh.n_trials - 1, 0.05 / 40) < 0.8 or bh.n_trials == 2
    by = power(case_effect=-0.4, cases=40, baseline_rate=0.8, case_correction="by")
    assert by.n_trials is not None and by.n_trials > bh.n_trials  # BY's level is smaller
    small = power(case_effect=0.03, cases=40)  # inside the 5 pp threshold: never named
    assert small.n_trials is None and "no number of trials up to 200" in small.note


def test_the_command_line_prints_the_plan_and_refuses_a_change_with_no_room() -> None:
    done = evalkit_cli("power", "--case-effect", "-0.4", "--cases", "40", "--baseline-rate",
                       "0.8")
    assert done.returncode == 0, done.stderr
    assert "trials per case to name a case that moves -40.0 pp:" in done.stdout
    assert "Benjamini-Hochberg across 40 case rows" in done.stdout
    as_json = json.loads(evalkit_cli("power", "--case-effect", "-0.4", "--cases", "40",
                                     "--baseline-rate", "0.8", "--json").stdout)
    assert as_json["method"] == "fisher" and as_json["n_cases"] == 40
    bad = evalkit_cli("power", "--case-effect", "-0.9", "--cases", "40", "--baseline-rate",
                      "0.8")
    assert bad.returncode == 2 and "--case-effect -0.9" in bad.stderr
    assert "Traceback" not in bad.stderr
    none = evalkit_cli("power", "--case-effect", "-0.4")
    assert none.returncode == 2 and "give --cases M or --from-run RUN" in none.stderr
