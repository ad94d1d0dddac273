"""When no single case can earn a verdict of its own, and what would let one.

A case's own verdict (``regressed_cases``, ``improved_cases``) rests on Fisher's exact test of
its trials, baseline against candidate. With few trials even the most lopsided case cannot
reach the level: one trial per side is one outcome each (0/1 against 1/1 gives p = 1), and
three trials per side at best 0/3 against 3/3, p = 0.1. Saying "regressed cases: none" beside
144 losses would then read as "no case got worse"; this module says instead that no case
*could* be named, and how many trials per side would let one.
"""

from __future__ import annotations

import pandas as pd

from evalkit._settings import CONFIDENCE
from evalkit.stats._verdicts import fisher_pvalue

#: Trials per side searched for the fewest that let a case reach the level.
_SEARCH_UP_TO = 50


def smallest_case_pvalue(n_baseline: int, n_candidate: int) -> float:
    """The smallest Fisher p-value a case with these trial counts can reach (all against none).

    Examples:
        >>> round(smallest_case_pvalue(1, 1), 6), round(smallest_case_pvalue(3, 3), 6)
        (1.0, 0.1)
    """
    return min(
        fisher_pvalue(n_candidate, n_candidate, 0, n_baseline),
        fisher_pvalue(0, n_candidate, n_baseline, n_baseline),
    )


def trials_for_a_case_verdict(alpha: float) -> int:
    """The fewest trials per side with which one case can reach ``alpha`` (Fisher, all vs none).

    Examples:
        >>> trials_for_a_case_verdict(0.05)
        4
    """
    for n in range(1, _SEARCH_UP_TO + 1):
        if smallest_case_pvalue(n, n) <= alpha:
            return n
    return _SEARCH_UP_TO


def case_verdict_note(cases: pd.DataFrame, *, binary: bool, alpha: float) -> str:
    """Why no case can be named regressed or improved here ("" when some case could be).

    Args:
        cases: The per-case table of a comparison (``n_baseline``, ``n_candidate``).
        binary: The metric is pass/fail (Fisher's test per case).
        alpha: The per-case level (before the correction across cases, which only raises p).

    Returns:
        One sentence naming the trials there are, the smallest p-value a case could reach,
        and the trials per side that would let one, or "" when some case could reach alpha.
    """
    if not binary or cases.empty:
        return ""
    pooled = "p_smallest" in cases.columns
    if pooled:  # the pooled case rows know the smallest p their strata can give
        best = float(cases["p_smallest"].min())
    else:
        counts = cases[["n_baseline", "n_candidate"]].drop_duplicates()
        best = min(
            smallest_case_pvalue(int(b), int(c))
            for b, c in counts.itertuples(index=False, name=None)
        )
    if best <= alpha:
        return ""
    needed = trials_for_a_case_verdict(alpha)
    most = int(cases[["n_baseline", "n_candidate"]].min(axis=1).max())
    several = pooled and int(cases["n_strata"].max()) > 1
    per_side = "trials per side (pooled over its providers)" if several else (
        "trials per side")
    if most <= 1:
        said = "with one trial per side a case is one outcome each, so none can be judged alone"
    else:
        test = "CMH or Fisher" if several else "Fisher"
        said = (
            f"with at most {most} {per_side} the most lopsided case reaches p = "
            f"{best:.2g} ({test}), above alpha = {alpha:g}"
        )
    return (
        f"no single case can be named regressed or improved: {said}; the verdict above is "
        f"over all cases together. To judge cases one by one, run at least {needed} trials per "
        "side, more once the correction across cases is counted (8-10 is typical; evalkit run "
        "--trials N)"
    )


def case_decisions(
    cases: pd.DataFrame, *, correction: str, alpha: float, confidence: float = CONFIDENCE.default
) -> pd.Series:
    """Why each case row has its verdict, so a row never looks contradictory.

    A case's interval is its own (unadjusted), while its verdict needs its p-value after the
    correction across every case. A row whose interval excludes 0 can therefore stay
    inconclusive; this says so on the row.

    Args:
        cases: The per-case table (``p_value``, ``p_adjusted``, ``ci_low``, ``ci_high``,
            ``verdict``).
        correction: The correction across cases (``holm``, ...).
        alpha: The level after correction.
        confidence: Level of the per-case intervals.

    Returns:
        One sentence per row, e.g. ``"holm across 52 case rows: p 0.1 -> 1 (> 0.05); its own
        95 % interval excludes 0, but the verdict needs the corrected p"``.

    Examples:
        >>> rows = pd.DataFrame({"p_value": [0.1], "p_adjusted": [1.0], "ci_low": [0.2],
        ...                      "ci_high": [1.0], "verdict": ["inconclusive"]})
        >>> said = case_decisions(rows, correction="holm", alpha=0.05).iloc[0]
        >>> said[:45], said[-33:]
        ('holm across 1 case rows: p 0.1 -> 1 (> 0.05);', 'the verdict needs the corrected p')
    """
    count = len(cases)
    level = f"{round(confidence * 100)} %"
    out = []
    columns = [cases[c].tolist() for c in ("p_value", "p_adjusted", "ci_low", "ci_high")]
    for raw_p, adjusted_p, low, high, verdict in zip(*columns, cases["verdict"].tolist(),
                                                     strict=True):
        raw, adjusted = float(raw_p), float(adjusted_p)
        sign = "<=" if adjusted <= alpha else ">"
        text = (f"{correction} across {count} case rows: p {raw:.3g} -> {adjusted:.3g} "
                f"({sign} {alpha:g})")
        excludes = float(low) > 0 or float(high) < 0
        if excludes and verdict == "inconclusive":
            text += (f"; its own {level} interval excludes 0, but the verdict needs the "
                     "corrected p" if adjusted > alpha else "; below the practical threshold")
        out.append(text)
    return pd.Series(out, index=cases.index, dtype=object)
