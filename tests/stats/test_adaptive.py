"""Adaptive trials: the corrected estimator is unbiased, the sequential design keeps its level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError
from evalkit.stats import (
    AdaptiveTrials,
    PowerDesign,
    adaptive_case_estimates,
    required_cases,
    simulate_sequential,
    stage_two_draw,
)
from evalkit.stats._adaptive import corrected_difference
from evalkit.stats._adaptive_power import AGENT_CONCENTRATION
from evalkit.stats._simulate import model_components
from tests.stats.conftest import matrix_to_frame


def _two_stage(
    rng: np.random.Generator, p: np.ndarray, q: np.ndarray, design: AdaptiveTrials, reps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``reps`` runs of fixed cases: trials, whether stage 2 ran, corrected and naive rates."""
    k, m1 = design.total_trials, design.first_trials
    base = (rng.random((reps, len(p), k)) < p[None, :, None]).astype(float)
    cand = (rng.random((reps, len(q), k)) < q[None, :, None]).astype(float)
    stage_one = np.concatenate([base[..., :m1], cand[..., :m1]], axis=-1)
    mixed = stage_one.min(axis=-1) != stage_one.max(axis=-1)
    ran = mixed | (rng.random(mixed.shape) < design.stage_two_probability)
    base_rate, cand_rate, _ = corrected_difference(
        (base[..., :m1].mean(-1), cand[..., :m1].mean(-1)),
        (base[..., m1:].mean(-1), cand[..., m1:].mean(-1)),
        ran,
        design,
    )
    naive_base = np.where(ran, base.mean(-1), base[..., :m1].mean(-1))
    naive_cand = np.where(ran, cand.mean(-1), cand[..., :m1].mean(-1))
    return cand_rate - base_rate, naive_cand - naive_base, ran, np.stack([base, cand])


@pytest.mark.parametrize("probability", [0.25, None])
def test_corrected_estimator_is_unbiased_for_the_mean_over_cases(
    probability: float | None,
) -> None:
    """Fixed cases, 4,000 runs: the corrected mean over cases hits the truth, the naive misses."""
    rng = np.random.default_rng(11)
    p = rng.uniform(0.05, 0.95, 200)
    q = np.clip(p + rng.normal(0.15, 0.1, 200), 0.0, 1.0)
    truth = float(np.mean(q - p))
    design = AdaptiveTrials(total_trials=3, first_trials=1, probability=probability)
    corrected, naive, ran, _ = _two_stage(rng, p, q, design, 4000)
    per_run, naive_run = corrected.mean(axis=1), naive.mean(axis=1)
    se = per_run.std(ddof=1) / np.sqrt(len(per_run))
    naive_se = naive_run.std(ddof=1) / np.sqrt(len(naive_run))
    print(
        f"pi={design.stage_two_probability:.2f}: truth {truth:.4f}, corrected "
        f"{per_run.mean():.4f} (se {se:.4f}), naive {naive_run.mean():.4f} (se {naive_se:.4f}), "
        f"stage 2 in {ran.mean():.2f} of cases"
    )
    assert abs(per_run.mean() - truth) < 4 * se
    assert abs(naive_run.mean() - truth) > 8 * naive_se  # the reason for the correction
    assert np.all(np.abs(corrected) <= design.bound + 1e-12)


def test_corrected_estimator_is_the_pooled_mean_at_probability_one_and_exact_when_deterministic(
) -> None:
    rng = np.random.default_rng(3)
    p, q = rng.uniform(0, 1, 50), rng.uniform(0, 1, 50)
    corrected, _, ran, arms = _two_stage(rng, p, q, AdaptiveTrials(4, 2, probability=1.0), 20)
    assert ran.all()
    np.testing.assert_allclose(corrected, arms[1].mean(-1) - arms[0].mean(-1))
    # cases that always pass or always fail: the estimate is exact, drawn or not (no variance)
    p = np.array([0.0, 1.0, 1.0, 0.0])
    q = np.array([0.0, 1.0, 0.0, 1.0])
    corrected, _, ran, _ = _two_stage(rng, p, q, AdaptiveTrials(5, 1, probability=0.2), 200)
    np.testing.assert_allclose(corrected, np.broadcast_to(q - p, corrected.shape))


def test_case_estimates_from_a_tidy_frame_match_the_hand_computation() -> None:
    design = AdaptiveTrials(total_trials=3, first_trials=1, probability=0.25, seed=4)
    ids = [f"k{i}" for i in range(200)]
    drawn = next(c for c in ids if stage_two_draw(design, c))
    skipped = next(c for c in ids if not stage_two_draw(design, c))
    rows = [
        ("mixed", "none", [0, 1, 1]),
        ("mixed", "skill", [1, 1, 1]),
        (drawn, "none", [1, 0, 1]),
        (drawn, "skill", [1, 1, 1]),
        (skipped, "none", [0]),
        (skipped, "skill", [0, 1, 1]),  # stage 2 run although not drawn: ignored
    ]
    frame = pd.DataFrame(
        [
            {"case_id": case, "condition": cond, "trial": t, "passed": bool(v)}
            for case, cond, values in rows
            for t, v in enumerate(values)
        ]
    )
    out = adaptive_case_estimates(frame, design, ("none", "skill")).set_index("case_id")
    assert out.loc["mixed", "baseline"] == pytest.approx(2 / 3)
    assert out.loc["mixed", "probability"] == 1.0
    # all equal at stage 1, drawn: 1 + (w / pi) (0.5 - 1) with w = 2/3, pi = 1/4
    assert out.loc[drawn, "baseline"] == pytest.approx(1 + (2 / 3) / 0.25 * (0.5 - 1))
    assert out.loc[drawn, "difference"] == pytest.approx(4 / 3)
    assert out.loc[drawn, "probability"] == 0.25
    assert out.loc[skipped, "difference"] == 0.0
    assert out.loc[skipped, "trials"] == 1 and not out.loc[skipped, "stage_two"]
    assert design.bound == pytest.approx(8 / 3)


def test_case_estimates_from_a_frame_agree_with_the_vectorised_estimator() -> None:
    rng = np.random.default_rng(8)
    design = AdaptiveTrials(total_trials=4, first_trials=2, probability=0.4, seed=2)
    p = rng.beta(AGENT_CONCENTRATION / 2, AGENT_CONCENTRATION / 2, 300)
    base = (rng.random((300, 4)) < p[:, None]).astype(float)
    cand = (rng.random((300, 4)) < np.clip(p + 0.2, 0, 1)[:, None]).astype(float)
    ids = [f"c{i:03d}" for i in range(300)]
    stage_one = np.concatenate([base[:, :2], cand[:, :2]], axis=1)
    mixed = stage_one.min(axis=1) != stage_one.max(axis=1)
    ran = mixed | np.array([stage_two_draw(design, c) for c in ids])
    base_rate, cand_rate, _ = corrected_difference(
        (base[:, :2].mean(1), cand[:, :2].mean(1)),
        (base[:, 2:].mean(1), cand[:, 2:].mean(1)),
        ran,
        design,
    )
    run_only = np.where(ran[:, None] | (np.arange(4) < 2)[None, :], 1.0, np.nan)
    frame = pd.concat(
        [matrix_to_frame(base * run_only, "none"), matrix_to_frame(cand * run_only, "skill")]
    )
    out = adaptive_case_estimates(frame, design, ("none", "skill"))
    assert list(out["case_id"]) == ids
    np.testing.assert_allclose(out["difference"], cand_rate - base_rate)
    assert out["stage_two"].to_numpy().tolist() == ran.tolist()
    assert 0.3 < ran.mean() < 0.8


def test_bad_designs_and_incomplete_runs_are_named() -> None:
    with pytest.raises(InputError, match="first_trials"):
        AdaptiveTrials(total_trials=2, first_trials=2)
    with pytest.raises(InputError, match="probability"):
        AdaptiveTrials(probability=0.0)
    frame = pd.DataFrame(
        {
            "case_id": ["a", "a", "a"],
            "condition": ["none", "skill", "skill"],
            "trial": [0, 0, 1],
            "passed": [False, True, True],
        }
    )
    with pytest.raises(InputError, match=r"case 'a' has stage 2 to run .* condition 'none'"):
        adaptive_case_estimates(frame, AdaptiveTrials(3, 1), ("none", "skill"))
    with pytest.raises(InputError, match=r"case 'a' has no stage-1 trial .* 'other'"):
        adaptive_case_estimates(frame, AdaptiveTrials(3, 1), ("none", "other"))


def test_the_stage_two_draw_is_fixed_by_seed_and_case_and_has_the_design_probability() -> None:
    design = AdaptiveTrials(probability=0.3, seed=5)
    ids = [f"case-{i}" for i in range(10000)]
    draws = np.array([stage_two_draw(design, c) for c in ids])
    assert draws.tolist() == [stage_two_draw(AdaptiveTrials(probability=0.3, seed=5), c)
                              for c in ids]
    assert abs(draws.mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 10000)
    other = np.array([stage_two_draw(AdaptiveTrials(probability=0.3, seed=6), c) for c in ids])
    assert (draws != other).mean() > 0.3


@pytest.mark.parametrize("probability", [None, 0.5])
def test_aa_false_verdicts_with_a_look_every_round_stay_at_most_alpha(
    probability: float | None,
) -> None:
    """A/A on the agent-like model, a look every 5 cases up to 200 (40 looks), 300 runs."""
    design = AdaptiveTrials(total_trials=3, probability=probability)
    plan = simulate_sequential(0.0, adaptive=design, concentration=AGENT_CONCENTRATION,
                               max_cases=200, round_cases=5, n_sims=300, seed=21)
    false_rate = plan.improved + plan.regressed
    print(f"A/A, pi={design.stage_two_probability:.2f}: false verdicts {false_rate:.3f}, "
          f"futile {plan.futile:.3f}, mean items {plan.expected_items:.0f}")
    assert false_rate <= 0.05
    assert plan.round_cases * 10 <= plan.max_cases


@pytest.mark.parametrize("effect", [0.10, 0.20])
def test_power_at_least_the_fixed_designs_and_fewer_items_than_without_adaptive_trials(
    effect: float,
) -> None:
    """Agent-like model, K = 3: power >= the fixed design's at its planned n; items saved."""
    fixed = required_cases(effect, 3,
                           design=PowerDesign.from_components(model_components(0.5, effect,
                                                                  AGENT_CONCENTRATION)))
    assert fixed.n_cases is not None
    settings = {"max_cases": 4 * fixed.n_cases, "round_cases": 5, "plan_cases": fixed.n_cases,
                "n_sims": 120, "seed": 2, "concentration": AGENT_CONCENTRATION}
    design = AdaptiveTrials(total_trials=3)
    adaptive = simulate_sequential(effect, adaptive=design, **settings)  # type: ignore[call-overload]
    off = simulate_sequential(effect, 3, **settings)  # type: ignore[call-overload]
    off_items = off.expected_cases * 2 * 3  # without the design every case runs 3 trials
    fixed_items = fixed.n_cases * 2 * 3
    print(
        f"+{effect:.2f}: fixed n {fixed.n_cases} ({fixed_items} items, power {fixed.power:.3f});"
        f" adaptive {adaptive.expected_items:.0f} items "
        f"({adaptive.expected_items / fixed_items:.2f} x), power {adaptive.improved:.3f}; "
        f"off {off_items:.0f} items "
        f"({off_items / fixed_items:.2f} x), power {off.improved:.3f}"
    )
    assert adaptive.improved >= fixed.power
    assert adaptive.regressed == 0.0
    assert adaptive.expected_items < off_items
    assert 0.0 < adaptive.stage_two_share < 1.0
