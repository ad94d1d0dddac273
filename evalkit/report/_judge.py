"""Judge views: calibration status, agreement with human labels, per-expectation pass rates.

The judge report (``evalkit report RUN --kind judge``) shows a judge's stored calibration
(``evalkit judge calibrate``): agreement, Cohen's kappa with its interval against the suite's
``judge.min_kappa``, the confusion matrix and every disagreement with its transcript. The run
and compare reports show the per-expectation pass rates and whether the judge is calibrated.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit._settings import CONFIDENCE
from evalkit.analysis import JudgeCalibration, JudgedRun, check_judge_calibration
from evalkit.report._plots import _new_figure
from evalkit.report._tables import Fragment, html_table, key_values, note, pct
from evalkit.report._transcripts import transcript_html
from evalkit.results import read_calibration, read_run, read_transcripts
from evalkit.stats import pass_rates

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Columns that identify a work item (a statement's pass rate is computed within them).
_ITEM_KEYS = ("lane", "case_id", "condition", "provider", "trial")


def expectation_pass_rates(
    statements: pd.DataFrame,
    *,
    by: Sequence[str] = ("condition",),
    confidence: float = CONFIDENCE.default,
) -> pd.DataFrame:
    """Pass rate of each judged statement (per ``by`` group), cases as clusters.

    Args:
        statements: :func:`evalkit.results.judged_statements` (several runs may be
            concatenated with a ``run`` column in ``by``).
        by: Groups besides the statement.
        confidence: Confidence level.

    Returns:
        :func:`evalkit.stats.pass_rates` rows keyed by ``expectation`` and ``by``.
    """
    if statements.empty:
        return pd.DataFrame(columns=["expectation", *by, "estimate", "ci_low", "ci_high"])
    frame = statements.assign(passed=statements["passed"].astype(bool))
    # one statement (and one run) at a time: each item holds each statement once
    outer = ["expectation", *[c for c in by if c not in _ITEM_KEYS]]
    inner = [c for c in by if c in _ITEM_KEYS]
    parts = []
    for values, group in frame.groupby(outer, sort=True):
        rates = pass_rates(group.drop(columns=outer), by=inner, confidence=confidence)
        parts.append(rates.assign(**dict(zip(outer, map(str, values), strict=True))))
    rates = pd.concat(parts, ignore_index=True)
    ordered = ["expectation", *by]
    return rates[[*ordered, *[c for c in rates.columns if c not in ordered]]]


def calibration_check(
    runs: Sequence[tuple[str, str | os.PathLike[str]]],
) -> JudgeCalibration | None:
    """Whether the judges of these runs are calibrated (``(label, run directory)`` pairs)."""
    return check_judge_calibration(
        [JudgedRun(label, read_run(path), Path(path)) for label, path in runs]
    )


def calibration_note(check: JudgeCalibration | Mapping[str, Any] | None) -> Fragment:
    """One note: calibrated (ok), or not (warning naming the fix); nothing without a judge."""
    if check is None:
        return note("No judged expectations: no verdict here rests on a judge.")
    data = check.to_dict() if isinstance(check, JudgeCalibration) else dict(check)
    if data["status"] == "calibrated":
        return note(f"Judge calibrated. {data['message']}", "ok")
    return note(
        f"Judge {data['status'].replace('_', ' ')}: verdicts that rest on judged expectations "
        f"are not yet evidence. {data['message']}",
        "warn",
    )


def stored_calibrations(run: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The calibration reports stored for the judges of a run (one per judge identity)."""
    rows = read_run(run)
    if "judge_provider" not in rows.columns:
        return []
    judged = rows.loc[rows["judge_provider"].notna(),
                      ["judge_provider", "judge_model", "judge_prompt_hash"]].drop_duplicates()
    found = []
    for provider, model, prompt_hash in judged.itertuples(index=False):
        judge = {"provider": str(provider), "model": str(model), "prompt_hash": str(prompt_hash)}
        report = read_calibration(Path(run), judge)
        if report is not None:
            found.append(report)
    return found


def calibration_facts(calibration: Mapping[str, Any], *, min_kappa: float | None) -> Fragment:
    """The calibration's headline numbers: labels, agreement, kappa with its interval."""
    kappa = calibration["kappa"]
    estimate = kappa.get("estimate")
    low, high = kappa.get("ci_low"), kappa.get("ci_high")
    level = kappa.get("confidence", CONFIDENCE.default)
    interval = (
        "undefined" if estimate is None else
        f"{estimate:.3f} [{low:.3f}, {high:.3f}] ({level:.0%} CI)"
    )
    judge = calibration["judge"]
    return key_values(
        {
            "judge": f"{judge['provider']}/{judge['model']} (prompt {judge['prompt_hash']})",
            "labelled statements": calibration["n"],
            "labels without a verdict": calibration.get("unmatched") or None,
            "raw agreement": pct(calibration["agreement"]),
            "Cohen's kappa": interval,
            "min_kappa (suite)": None if min_kappa is None else f"{min_kappa:.2f}",
            "labels file": calibration.get("labels_file"),
            "note": kappa.get("note") or None,
        }
    )


def confusion_plot(calibration: Mapping[str, Any]) -> Figure:
    """The 2 x 2 confusion matrix of judge and human labels, counts annotated."""
    c = calibration["confusion"]
    grid = [[c["pass_pass"], c["pass_fail"]], [c["fail_pass"], c["fail_fail"]]]
    top = max(1, max(max(r) for r in grid))
    fig = _new_figure(4.6, 3.6)
    ax = fig.add_subplot()
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=top)
    ax.set_xticks([0, 1], ["human pass", "human fail"])
    ax.set_yticks([0, 1], ["judge pass", "judge fail"])
    for i in range(2):
        for j in range(2):
            value = grid[i][j]
            ax.text(j, i, str(value), ha="center", va="center", fontsize=14,
                    color="white" if value > top * 0.6 else "#222222")
    ax.set_title(f"Judge vs human ({calibration['n']} statements)", loc="left", fontsize=11)
    return fig


def agreement_table(calibration: Mapping[str, Any]) -> Fragment:
    """Agreement per statement, lowest first."""
    frame = pd.DataFrame(calibration.get("per_expectation") or [],
                         columns=["expectation", "n", "agreement"])
    return html_table(
        frame.sort_values("agreement", kind="stable"),
        columns={"expectation": "statement", "n": "labelled", "agreement": "agreement"},
        formats={"agreement": pct},
        numeric=["n", "agreement"],
        table_id="judge-agreement",
        empty="no labelled statement",
    )


def disagreements_html(
    calibration: Mapping[str, Any], run: str | os.PathLike[str], *, max_items: int = 20
) -> Fragment:
    """Every disagreement (up to ``max_items``): statement, both labels, evidence, transcript."""
    found = list(calibration.get("disagreements") or [])
    if not found:
        return note("The judge agrees with every label.", "ok")
    shown = found[:max_items]
    records = read_transcripts(run, list(dict.fromkeys(d["item_key"] for d in shown)))
    parts = []
    if len(found) > len(shown):
        parts.append(note(f"showing {len(shown)} of {len(found)} disagreements"))
    for d in shown:
        judge = "pass" if d["judge"] else "fail"
        human = "pass" if d["human"] else "fail"
        parts.append(
            transcript_html(
                records.get(d["item_key"]),
                title=f"{d['case_id']} / {d['condition']} / trial {d['trial']}: "
                f"{d['expectation']}",
                facts={"judge": judge, "human": human, "judge's evidence": d["evidence"]},
            )
        )
    html = "".join(p.html for p in parts)
    return Fragment(f'<section class="ek-disagreements">{html}</section>')

