"""The cases a comparison names, shown the same way in the report, the rich display and the viewer.

``evalkit compare`` names a case regressed or improved from the comparison's pooled case rows
(:attr:`~evalkit.stats.PairedComparison.case_rows`: one row per case and condition, its
providers pooled, corrected across cases at ``case_correction``). Every surface shows those
same cases: :func:`named_case_table` selects them, :func:`named_cases_section` shows the
summary sentence first, then their table, or says plainly why none is named
(:func:`no_named_case_note`). Nothing here computes a statistic; the figures are the rows'.
"""

from __future__ import annotations

import pandas as pd

from evalkit.report._tables import Fragment, esc, interval_table, pp
from evalkit.stats import PairedComparison, correction_words

#: The verdicts that name a case, in the order they are listed.
NAMED_VERDICTS = ("regressed", "improved")

#: The columns of :func:`named_case_table` after the case columns.
NAMED_COLUMNS = (
    "verdict",
    "estimate",
    "ci_low",
    "ci_high",
    "confidence",
    "baseline_rate",
    "candidate_rate",
    "n_baseline",
    "n_candidate",
    "p_value",
    "p_adjusted",
    "correction",
)


def named_case_columns(comparison: PairedComparison) -> list[str]:
    """The columns that name one of the comparison's case rows (``lane``, ``case_id``, ...)."""
    rows = comparison.case_rows
    return [c for c in ("lane", "case_id", "condition") if c in rows.columns]


def named_case_table(comparison: PairedComparison) -> pd.DataFrame:
    """The cases the comparison names regressed or improved, one row per case row.

    Args:
        comparison: A comparison (:func:`evalkit.compare`).

    Returns:
        The case columns (``lane`` when cases were matched on it, ``case_id``, ``condition``
        when the rows are per condition), then ``verdict, estimate, ci_low, ci_high,
        confidence, baseline_rate, candidate_rate, n_baseline, n_candidate, p_value,
        p_adjusted, correction``: regressed cases first, then improved, the most moved first
        within each. Its case ids are ``regressed_cases`` and ``improved_cases``.
    """
    rows = comparison.case_rows
    keys = named_case_columns(comparison)
    if rows.empty or "verdict" not in rows:
        return pd.DataFrame(columns=[*keys, *NAMED_COLUMNS])
    parts = []
    for verdict in NAMED_VERDICTS:
        chosen = rows[rows["verdict"] == verdict]
        order = chosen["estimate"].abs().to_numpy().argsort(kind="stable")[::-1]
        parts.append(chosen.iloc[order])
    named = pd.concat(parts).assign(
        confidence=float(comparison.delta.confidence),
        correction=comparison.case_correction,
    )
    return named[[*keys, *NAMED_COLUMNS]].reset_index(drop=True)


def no_named_case_note(comparison: PairedComparison) -> str:
    """Why no case is named, in one sentence ("" when some case is).

    Args:
        comparison: A comparison.

    Returns:
        The comparison's own reason when its trials cannot name a case
        (:attr:`~evalkit.stats.PairedComparison.case_verdict_note`); otherwise the rule no
        case met and the case that came closest, and the cases that moved past the threshold
        in this sample without being shown beyond noise.
    """
    if comparison.regressed_cases or comparison.improved_cases:
        return ""
    if comparison.case_verdict_note:
        return comparison.case_verdict_note
    rows = comparison.case_rows
    level = correction_words(comparison.case_correction, comparison.alpha)
    rule = (
        f"no case is named regressed or improved: none changed by at least "
        f"{pp(comparison.threshold).lstrip('+')} with an adjusted p below "
        f"{comparison.alpha:g} ({level} across {len(rows)} case rows)"
    )
    if rows.empty or "p_adjusted" not in rows:
        return rule
    from evalkit.analysis import cases_past_threshold

    moved, _ = cases_past_threshold(comparison)
    if not moved:
        return f"{rule}; no case moved past the threshold in this sample"
    shown = ", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    return (
        f"{rule}; {len(moved)} case(s) moved past the threshold in this sample without being "
        f"shown beyond noise ({shown}): confirming them on fresh samples settles them "
        "(evalkit confirm)"
    )


def _named_caption(comparison: PairedComparison, table: pd.DataFrame) -> str:
    counts = [
        f"{int((table['verdict'] == verdict).sum())} {verdict}" for verdict in NAMED_VERDICTS
    ]
    return (
        f"Named cases ({', '.join(counts)}), each case's trials pooled over its providers; "
        f"named at {correction_words(comparison.case_correction, comparison.alpha)}"
    )


def named_cases_section(comparison: PairedComparison, *, compact: bool = False) -> Fragment:
    """The case summary, then the table of named cases, or why none is named.

    Args:
        comparison: A comparison.
        compact: The rich display's form, under a banner whose first line is the summary:
            no summary of its own, fewer columns, at most 10 rows.

    Returns:
        ``<section class="ek-named-cases">`` with the summary sentence
        (:attr:`~evalkit.stats.PairedComparison.case_summary`) when there is one, the case x
        condition interaction test's line, then the table (``id="named-cases"``, the case
        id first in each row) or the note saying why no case is named
        (``id="no-named-cases"``).
    """
    parts = []
    if comparison.case_summary and not compact:  # the compact form's banner says it first
        parts.append(f'<p class="ek-named-summary"><b>{esc(comparison.case_summary)}</b></p>')
    if comparison.case_interaction is not None:
        parts.append(f'<p class="ek-note">{esc(comparison.case_interaction.line())}</p>')
    table = named_case_table(comparison)
    if table.empty:
        reason = no_named_case_note(comparison)
        parts.append(f'<p class="ek-note ek-note-info" id="no-named-cases">{esc(reason)}</p>')
    else:
        keys = named_case_columns(comparison)
        extra = ["verdict", "baseline_rate", "candidate_rate", "n_baseline", "n_candidate",
                 "p_adjusted"]
        if not compact:
            extra += ["p_value", "correction"]
        shown = interval_table(
            table, keys, kind="pp", header="change", extra=extra,
            formats={"p_adjusted": _p, "p_value": _p},
            caption=_named_caption(comparison, table), table_id="named-cases",
            max_rows=10 if compact else None,
        )
        parts.append(shown.html)
    return Fragment(f'<section class="ek-named-cases">{"".join(parts)}</section>')


def _p(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return "n/a" if number != number else f"{number:.2g}"



def case_named_column(comparison: PairedComparison) -> pd.Series:
    """For each per-unit row of ``comparison.cases``, the verdict its case is named with.

    A per-unit row is one case in one condition and provider; its case is named by the pooled
    case row of the same case (and condition). Tables of per-unit rows show this beside their
    figures, so a row never seems to name a case the comparison does not.

    Args:
        comparison: A comparison.

    Returns:
        ``"regressed"``, ``"improved"`` or ``""`` per row of ``comparison.cases`` (its index).
    """
    cases = comparison.cases
    named = named_case_table(comparison)
    keys = [c for c in named_case_columns(comparison) if c in cases.columns]
    if named.empty or not keys:
        return pd.Series("", index=cases.index, dtype=object)
    lookup = {
        tuple(str(v) for v in row[:-1]): str(row[-1])
        for row in named[[*keys, "verdict"]].itertuples(index=False, name=None)
    }
    return pd.Series(
        [lookup.get(tuple(str(v) for v in row), "")
         for row in cases[keys].itertuples(index=False, name=None)],
        index=cases.index, dtype=object,
    )
