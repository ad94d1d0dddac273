"""Cost beside effect: each component's tokens, the skill's overhead, lift per 1,000 tokens."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

COST_COLUMNS = (
    "tokens",
    "measured_tokens",
    "tokens_source",
    "lift_per_1k_tokens",
    "rank_effect",
    "rank_cost",
)


def mean_input_tokens(frame: pd.DataFrame, condition: str) -> float:
    """Mean provider-reported input tokens per call of ``condition`` (NaN when none reported)."""
    if "input_tokens" not in frame.columns:
        return math.nan
    values = frame.loc[frame["condition"] == condition, "input_tokens"].dropna()
    return float(values.mean()) if len(values) else math.nan


def add_costs(
    verdicts: pd.DataFrame, estimated: dict[str, int], frame: pd.DataFrame, full: str
) -> pd.DataFrame:
    """The verdict table with the cost columns.

    ``tokens`` is the component's size: the provider-reported difference in mean input tokens
    per call between the full skill and the ablated copy when the provider reports input
    tokens (``tokens_source = "provider"``), else the estimate (characters / 4,
    ``"estimate"``). ``lift_per_1k_tokens`` is the contribution per 1,000 such tokens (NaN for
    a component of no measurable size). Ranks: 1 is the largest contribution, and the most
    tokens.

    Args:
        verdicts: Rows of :func:`~evalkit.ablation.component_verdicts` (or sequential looks).
        estimated: Component id to its estimated size.
        frame: The study's results.
        full: Condition of the full skill.
    """
    out = verdicts.copy()
    full_tokens = mean_input_tokens(frame, full)
    measured = [full_tokens - mean_input_tokens(frame, c) for c in out["condition"]]
    out["measured_tokens"] = measured
    estimate = out["component"].map(estimated).astype(float)
    use_measured = np.isfinite(out["measured_tokens"].to_numpy(dtype=float))
    out["tokens"] = np.where(use_measured, out["measured_tokens"], estimate)
    out["tokens_source"] = np.where(use_measured, "provider", "estimate")
    size = out["tokens"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["lift_per_1k_tokens"] = np.where(size > 0, out["estimate"] / size * 1000, np.nan)
    out["rank_effect"] = _rank(out["estimate"])
    out["rank_cost"] = _rank(out["tokens"])
    return out


def _rank(values: pd.Series) -> pd.Series:
    """1 for the largest value; ties share the smallest rank; NaN last."""
    return values.rank(ascending=False, method="min", na_option="bottom").astype(int)
