"""HTML of a flip explanation (:class:`~evalkit.analysis.Explanation`).

Its rich display in Jupyter, and the "why they flip" sections of the flips and compare reports.
"""

from __future__ import annotations

import pandas as pd

from evalkit.analysis import CellExplanation, Explanation
from evalkit.report._style import styled
from evalkit.report._tables import Fragment, esc, html_table, note, num

#: Columns of the trials table: ``(column, header)``.
_TRIAL_COLUMNS = {
    "side": "run",
    "trial": "trial",
    "passed": "passed",
    "score": "score",
    "status": "status",
    "skill_loaded": "skill loaded",
    "inferred_skill": "skill",
    "tool_calls": "tool calls",
    "tools": "tools",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "latency_s": "latency s",
    "reason": "reason",
}


def _yes_no(value: object) -> str:
    if value is None or value != value:  # NaN
        return "–"
    return "yes" if bool(value) else "no"


def _count(value: object) -> str:
    if value is None or value != value:  # NaN
        return "–"
    return str(int(value))  # type: ignore[call-overload]


def _text(value: object) -> str:
    return "–" if value is None or value != value else str(value)


def _routing(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials with ``skill_loaded`` reading "preloaded" where the condition injects it."""
    if "preloaded" not in trials or not trials["preloaded"].astype(bool).any():
        return trials
    shown = trials.assign(skill_loaded=trials["skill_loaded"].astype(object))
    preloaded = shown["preloaded"].astype(bool)
    shown.loc[preloaded, "skill_loaded"] = "preloaded"
    shown.loc[preloaded, "inferred_skill"] = None
    return shown


def _loaded(value: object) -> str:
    return "preloaded" if value == "preloaded" else _yes_no(value)


def _sentences(title: str, css: str, frame: pd.DataFrame) -> Fragment:
    if not len(frame):
        return Fragment("")
    items = "".join(f"<li>{esc(s)}</li>" for s in frame["sentence"].head(5))
    return Fragment(
        f'<p class="ek-explain-head">{esc(title)}</p><ul class="{css}">{items}</ul>'
    )


def cell_html(cell: CellExplanation, *, two_runs: bool = False) -> Fragment:
    """One condition and provider of the case: trials, what separates them, the divergence.

    Args:
        cell: The cell.
        two_runs: Whether the trials come from two runs (shows their ``run`` column).

    Returns:
        The section (every text escaped).
    """
    where = " / ".join(x for x in (cell.condition, cell.provider) if x)
    head = (
        f'<h4 class="ek-explain-title">{esc(cell.case_id)} · {esc(where)}</h4>'
        f'<p class="ek-explain-summary">{esc(cell.summary)}</p>'
    )
    columns = {k: v for k, v in _TRIAL_COLUMNS.items() if two_runs or k != "side"}
    trials = html_table(
        _routing(cell.trials),
        columns=columns,
        formats={"passed": _yes_no, "skill_loaded": _loaded, "score": num,
                 "latency_s": lambda v: num(v, 2), "tool_calls": _count,
                 "input_tokens": _count, "output_tokens": _count,
                 "inferred_skill": _text, "tools": _text},
        numeric=("tool_calls", "input_tokens", "output_tokens"),
        caption="Trials",
        empty="no trial",
    )
    separates = _sentences(
        "What separates the failing trials from the passing ones", "ek-explain-features",
        cell.distinguishing,
    ) + _sentences(
        "What the score saw (restates the outcome, not a cause)", "ek-explain-score",
        cell.score_saw,
    ) + note(f"Chance: {cell.chance.sentence}")
    divergence = note(f"First divergence: {cell.divergence_note}")
    if len(cell.divergence):
        divergence = divergence + html_table(
            cell.divergence,
            columns={"step": "step", "passing_kind": "passing: kind", "passing": "passing",
                     "failing_kind": "failing: kind", "failing": "failing"},
            caption=f"The transcripts around step {cell.first_divergence}",
        )
    return Fragment(f'<section class="ek-explain">{head}') + trials + separates + divergence + (
        Fragment("</section>")
    )


def explanation_fragment(result: Explanation) -> Fragment:
    """Every cell of an explanation, notes first.

    Args:
        result: The explanation.

    Returns:
        The markup.
    """
    parts = Fragment("")
    for text in result.notes:
        parts = parts + note(text, "warn")
    for cell in result.cells:
        parts = parts + cell_html(cell, two_runs=result.baseline is not None)
    return parts


def explanation_html(result: Explanation) -> str:
    """The rich display of an :class:`~evalkit.analysis.Explanation` (self-styled HTML)."""
    return styled(explanation_fragment(result).html)
