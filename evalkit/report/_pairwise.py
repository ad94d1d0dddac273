"""A stored pairwise comparison (``<run>/pairwise/*.json``) and its views, for ``--kind pairwise``.

The comparison is what ``evalkit compare ... --pairwise`` stored; nothing is recomputed here.
:func:`stored_pairwise` reads it as a :class:`StoredPairwise`: the stored object, whose
methods are the report's sections. Every text from a run (answers, reasons, case ids) is
escaped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalkit._settings import RUNS_DIR
from evalkit._untrusted import read_json
from evalkit.errors import InputError
from evalkit.report._plots import shorten
from evalkit.report._tables import Fragment, banner, esc, html_table, pct, stat_cards
from evalkit.results import (
    DEFAULT_MAX_FOLLOW_RATE,
    DEFAULT_MIN_KAPPA,
    pairwise_calibration,
    resolve_run_dir,
)

PAIRWISE_DIR = "pairwise"


class StoredPairwise(dict[str, Any]):
    """A stored pairwise comparison: the JSON object ``compare --pairwise`` wrote, and its views.

    Its keys are the stored fields (``verdict``, ``win_probability``, ``sign_test``,
    ``position_bias``, ``cases``, ``pairs``, ``notes``, ...; ``judge_calibration`` looked up
    again when read). Its views: :meth:`banner` (the verdict), :meth:`cards` (win
    probability, position bias and consistency, judge calls), :attr:`cases` (the per-case
    table) and :meth:`plot_forest`, :meth:`ranking` (Bradley-Terry, more than two variants)
    and :meth:`pairs` (the answers side by side).
    """

    def banner(self) -> Fragment:
        """The verdict banner: the win probability with its interval, the sign test, the judge."""
        return pairwise_banner(self)

    def cards(self) -> Fragment:
        """Cards: win probability, position bias, position consistency, judge calls."""
        usage = self.get("usage") or {}
        return stat_cards([
            ("win probability", pct(self["win_probability"]["estimate"]),
             _interval(self["win_probability"])),
            ("first-position wins", pct(self["position_bias"]["estimate"]),
             f"{_interval(self['position_bias'])}; 50 % is a fair judge"),
            ("position consistency", pct(self["position_consistency"]),
             "pairs whose two orders agree"),
            ("judge calls", str(usage.get("calls", 0)), f"{usage.get('cache_hits', 0)} from cache"),
        ])

    @property
    def cases(self) -> pd.DataFrame:
        """The per-case table (win share, its interval, the Holm-corrected exact test)."""
        return pd.DataFrame(self.get("cases") or [])

    def plot_forest(self, *, max_cases: int = 40) -> Figure:
        """Per-case win share with its Wilson interval; named cases coloured."""
        cases = self.cases
        fig = Figure(figsize=(8.0, 0.8 + 0.26 * max(1, min(len(cases), max_cases))))
        ax = fig.add_subplot()
        if cases.empty:
            ax.text(0.5, 0.5, "no case", ha="center", va="center")
            return fig
        every = len(cases)
        cases = cases.assign(distance=(cases["win_share"] - 0.5).abs())
        cases = cases.sort_values(["distance", "case_id"], ascending=[False, True]).head(
            max_cases
        )
        cases = cases.sort_values("win_share", kind="stable")
        y = np.arange(len(cases))
        colours = cases["verdict"].map(
            {"improved": "#1a7f37", "regressed": "#cf222e"}).fillna("#57606a")
        share = cases["win_share"].to_numpy(dtype=float)
        errors = np.vstack([share - cases["ci_low"].to_numpy(dtype=float),
                            cases["ci_high"].to_numpy(dtype=float) - share])
        ax.errorbar(share, y, xerr=errors, fmt="none", ecolor="#8c959f", elinewidth=1)
        ax.scatter(share, y, c=list(colours), zorder=3, s=18)
        ax.axvline(0.5, color="#24292f", linewidth=0.8, linestyle="--")
        ax.set_yticks(y, [shorten(c) for c in cases["case_id"]], fontsize=7)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"share of trials {shorten(self['candidate'])} wins (ties as half)")
        shown = f" ({len(cases)} of {every} cases)" if every > len(cases) else ""
        ax.set_title(f"Per-case win share of {shorten(self['candidate'])} over "
                     f"{shorten(self['baseline'])}{shown}", fontsize=9)
        fig.tight_layout()
        return fig

    def ranking(self) -> Fragment:
        """The Bradley-Terry ranking (more than two variants), or an empty fragment."""
        fit = self.get("bradley_terry")
        if not fit:
            return Fragment("")
        frame = pd.DataFrame(fit["strengths"])
        return html_table(
            frame,
            columns={"rank": "rank", "variant": "variant", "strength": "strength (log-odds)",
                     "ci_low": "low", "ci_high": "high",
                     "win_probability": "P(beats reference)"},
            formats={"strength": lambda v: f"{v:+.2f}",
                     "ci_low": lambda v: "" if v is None else f"{v:+.2f}",
                     "ci_high": lambda v: "" if v is None else f"{v:+.2f}",
                     "win_probability": pct},
            caption=f"Bradley-Terry strengths against {fit['reference']} "
            f"({fit['confidence']:.0%} case-clustered intervals)",
            table_id="ranking",
        )

    def pairs(self, *, max_pairs: int = 30) -> Fragment:
        """The pairs side by side with both orders' verdicts and reasons (flipped first)."""
        return _pairs_html(self, max_pairs)


def stored_pairwise(
    run: str | os.PathLike[str],
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    name: str = "",
) -> StoredPairwise:
    """The stored pairwise comparison of a run (the newest, or the one called ``name``).

    Raises:
        InputError: The run has none (with the command that makes one) or it is unreadable.
    """
    run_dir = resolve_run_dir(run, runs_dir)
    folder = run_dir / PAIRWISE_DIR
    files = sorted(folder.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.name)) if (
        folder.is_dir()) else []
    if name:
        files = [f for f in files if f.stem == name or f.name == name]
    if not files:
        raise InputError(
            f"{folder}: no stored pairwise comparison{f' named {name!r}' if name else ''}; "
            f"make one with 'evalkit compare BASELINE {run_dir.name} --pairwise' or "
            f"'evalkit compare {run_dir.name} --conditions A,B --pairwise'"
        )
    path = files[-1]
    try:
        data = read_json(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable pairwise comparison ({exc}); run the "
                         "compare --pairwise command again") from None
    if not isinstance(data, dict) or data.get("kind") != "pairwise" or "pairs" not in data:
        raise InputError(f"{path}: field 'kind' is not 'pairwise'; run compare --pairwise again")
    judge = data.get("judge")
    if isinstance(judge, dict) and all(k in judge for k in ("provider", "model", "prompt_hash")):
        # looked up again, as gate --pairwise does: a calibration stored later counts
        others = [run_dir.parent / str(name)
                  for name in (data.get("variant_runs") or {}).values()]
        limits = {k: float(judge[k]) for k in ("min_kappa", "max_follow_rate")
                  if isinstance(judge.get(k), int | float)}
        data["judge_calibration"] = pairwise_calibration(
            judge, list(dict.fromkeys([run_dir, *others])),
            limits.get("min_kappa", DEFAULT_MIN_KAPPA),
            limits.get("max_follow_rate", DEFAULT_MAX_FOLLOW_RATE),
        )
    return StoredPairwise(data)


def _interval(block: Mapping[str, Any]) -> str:
    return f"{pct(block.get('estimate'))} [{pct(block.get('ci_low'))}, {pct(block.get('ci_high'))}]"


def pairwise_banner(data: Mapping[str, Any]) -> Fragment:
    """The verdict banner: the win probability with its interval, the sign test, the judge."""
    win = data["win_probability"]
    sign = data["sign_test"]
    cal = data.get("judge_calibration") or {}
    details = [
        f"pairs: {data['wins']} won, {data['losses']} lost, {data['ties']} tied "
        f"({data['flipped']} flipped with the order, counted as ties) over {data['n_cases']} "
        "cases",
        f"exact sign test over cases: {sign['positive']} better, {sign['negative']} worse, "
        f"{sign['zero']} even, p = {sign['p_value']:.3g}; improved needs the interval above "
        f"50 % and at least {pct(0.5 + data['threshold'])}",
        f"judge {data['judge']['provider']}/{data['judge']['model']}: "
        f"{cal.get('message', 'calibration unknown')}",
    ]
    headline = (
        f"P({data['candidate']} beats {data['baseline']} on a random case) = {_interval(win)}"
    )
    verdict = str(data["verdict"])
    if cal.get("status") != "calibrated":
        status = str(cal.get("status", "unknown"))
        what = {"unprobed": "NOT PROBED JUDGE",
                "follows_planted_instructions": "JUDGE OBEYS PLANTED INSTRUCTIONS"}
        details.insert(0, f"{what.get(status, 'UNCALIBRATED JUDGE')} ({status}): this verdict "
                       "cannot decide a gate until the judge is calibrated and probed")
    return banner(verdict, f"{verdict} (pairwise)", headline, details)


def _order(pairs: pd.DataFrame) -> pd.DataFrame:
    """Flipped pairs first, then pairs of contested cases (both wins and losses), then the rest."""
    if pairs.empty:
        return pairs
    outcome = pairs["outcome"]
    by_case = pairs.assign(won=outcome == 1.0, lost=outcome == 0.0).groupby(
        ["baseline", "candidate", "case_id"])[["won", "lost"]].transform("any")
    contested = by_case["won"] & by_case["lost"]
    rank = np.where(pairs["flipped"].astype(bool), 0, np.where(contested, 1, 2))
    return pairs.assign(_rank=rank, _contested=contested).sort_values(
        ["_rank", "case_id", "trial"], kind="stable")


def _pairs_html(data: Mapping[str, Any], max_pairs: int) -> Fragment:
    """The pairs side by side with both orders' verdicts and reasons (flipped, contested first)."""
    pairs = _order(pd.DataFrame(data.get("pairs") or []))
    if pairs.empty:
        return Fragment('<p class="ek-note">no pair</p>')
    verdict_of = {"1": "Response 1", "2": "Response 2", "tie": "tie"}
    blocks = []
    for row in pairs.head(max_pairs).to_dict("records"):
        tag = "flipped with the order" if row["flipped"] else (
            "contested case" if row["_contested"] else "")
        outcome = {1.0: f"{row['candidate']} better", 0.0: f"{row['baseline']} better"}.get(
            row["outcome"], "tie")
        head = (f"{row['case_id']} · trial {row['trial']} · {outcome}"
                + (f" · {tag}" if tag else ""))
        reasons = (
            f"<li>{esc(row['baseline'])} shown first: "
            f"{esc(verdict_of.get(row['verdict_baseline_first'], '?'))}: "
            f"{esc(row['reason_baseline_first'])}</li>"
            f"<li>{esc(row['candidate'])} shown first: "
            f"{esc(verdict_of.get(row['verdict_candidate_first'], '?'))}: "
            f"{esc(row['reason_candidate_first'])}</li>"
        )
        sides = "".join(
            f'<div class="ek-excerpt"><p class="ek-excerpt-head">{esc(label)}</p>'
            f"<pre>{esc(text)}</pre></div>"
            for label, text in ((row["baseline"], row["baseline_answer"]),
                                (row["candidate"], row["candidate_answer"]))
        )
        blocks.append(
            f'<section class="ek-pair ek-pairwise{" ek-flipped" if row["flipped"] else ""}">'
            f'<p class="ek-pair-caption">{esc(head)}</p>'
            f'<details><summary>task</summary><pre>{esc(row["task"])}</pre></details>'
            f'<div class="ek-sbs">{sides}</div><ul class="ek-reasons">{reasons}</ul></section>'
        )
    more = len(pairs) - max_pairs
    tail = f'<p class="ek-note">{more} more pair(s) in the stored JSON</p>' if more > 0 else ""
    return Fragment('<div id="pairs">' + "".join(blocks) + tail + "</div>")
