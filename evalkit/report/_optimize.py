"""Views and figures of an optimisation run (``evalkit report --kind optimize``)."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalkit.optimize import OptimizeState, has_state, read_state
from evalkit.report._plots import _new_figure, _style
from evalkit.report._tables import Fragment, esc, key_values, verdict_banner

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: History columns a description run adds (validation trigger rates with their intervals).
TRIGGER_COLUMNS = (
    "trigger_precision",
    "trigger_precision_low",
    "trigger_precision_high",
    "trigger_recall",
    "trigger_recall_low",
    "trigger_recall_high",
)


@dataclass(frozen=True)
class Optimization:
    """An optimisation run as a report sees it.

    Its views are the optimize report's sections: :meth:`banner` (the sealed test's verdict),
    :meth:`facts`, :meth:`plot_trajectory`, :meth:`plot_gate`, :meth:`plot_cost` and
    :meth:`skill_diff`.

    Attributes:
        run_dir: The optimisation run directory.
        state: The run's record (``optimize.json``).
        history: One row per candidate: ``candidate, parent, champion_at_commit, accepted,
            reason, verdict, delta, ci_low, ci_high, val_rate, metric_calls, usd``; a
            description run adds ``trigger_precision, trigger_precision_low,
            trigger_precision_high, trigger_recall, trigger_recall_low, trigger_recall_high``.
        seed_text: The seed skill text.
        champion_text: The final champion's text.
    """

    run_dir: Path
    state: OptimizeState
    history: pd.DataFrame
    seed_text: str
    champion_text: str

    def banner(self) -> Fragment:
        """The verdict of the sealed test comparison (:func:`test_summary`) as a banner."""
        return verdict_banner(*test_summary(self))

    def facts(self) -> Fragment:
        """Key facts: run, suite and skill, target, spending, splits, the test verdict."""
        s = self.state
        accepted = int(self.history["accepted"].fillna(False).astype(bool).sum())
        return key_values({
            "run": s.run_id,
            "suite / skill": f"{s.suite} / {s.skill}",
            "target / objective": f"{s.target} / {objective_label(self)}",
            "optimizer": s.optimizer,
            "status": s.status,
            "candidates": s.iterations,
            "accepted": accepted,
            "champion": s.champion,
            "validation looks": s.holdout_looks,
            "work items spent": s.metric_calls,
            "money spent": f"${s.usd:.2f}",
            "split sizes (dev / holdout / test)": " / ".join(
                str(s.split_sizes.get(k, "?")) for k in ("dev", "holdout", "test")
            ),
            "splits sha256": s.splits_sha256,
            "test unsealed": "yes, once" if s.test_unsealed else "no",
            "test verdict": s.test.verdict if s.test is not None else None,
        })

    def plot_trajectory(self) -> Figure:
        """Validation pass rate per candidate (accepted filled) and the champion's level."""
        h = self.history
        fig, ax = _styled_axes(3.6)
        x = np.arange(1, len(h) + 1)
        seed_rate = _seed_rate(self)
        champion = [seed_rate]
        for _, row in h.iterrows():
            champion.append(row["val_rate"] if bool(row["accepted"]) else champion[-1])
        ax.step(
            np.arange(0, len(h) + 1),
            champion,
            where="post",
            color="#2e7d32",
            linewidth=2,
            label="champion",
        )
        rates = pd.to_numeric(h["val_rate"], errors="coerce").to_numpy(float)
        accepted = h["accepted"].fillna(False).astype(bool).to_numpy()
        ax.scatter(x[~accepted], rates[~accepted], color="#9e9e9e", label="rejected", zorder=3)
        ax.scatter(x[accepted], rates[accepted], color="#2e7d32", label="accepted", zorder=4)
        ax.set_xlabel("candidate")
        ax.set_ylabel(f"validation {objective_label(self)}")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(-0.2, max(len(h), 1) + 0.5)
        ax.legend(loc="lower right", fontsize=8, frameon=False)
        ax.set_title("Validation trajectory", fontsize=11)
        return fig

    def plot_gate(self) -> Figure:
        """Paired validation delta of every evaluated candidate vs its champion, with CIs."""
        h = self.history.dropna(subset=["delta"]).reset_index(drop=True)
        fig, ax = _styled_axes(0.9 + 0.28 * max(len(h), 1))
        if h.empty:
            ax.text(0.5, 0.5, "no candidate was evaluated", ha="center", va="center")
            ax.set_axis_off()
            return fig
        y = np.arange(len(h))[::-1]
        est = h["delta"].to_numpy(float) * 100
        low = h["ci_low"].to_numpy(float) * 100
        high = h["ci_high"].to_numpy(float) * 100
        colors = ["#2e7d32" if a else "#9e9e9e" for a in h["accepted"].astype(bool)]
        ax.hlines(y, low, high, colors=colors, linewidth=1.5)
        ax.scatter(est, y, color=colors, zorder=3)
        ax.axvline(0, color="#616161", linewidth=1)
        ax.set_yticks(y, [str(c) for c in h["candidate"]])  # drawn into a PNG: inert
        ax.set_xlabel(f"validation {objective_label(self)} delta vs champion (pp), gate interval")
        ax.set_title("Gate decisions (green: accepted)", fontsize=11)
        return fig

    def plot_cost(self) -> Figure:
        """Cumulative work items and money after each candidate."""
        h = self.history
        fig, ax = _styled_axes(3.0)
        x = np.arange(1, len(h) + 1)
        ax.plot(x, pd.to_numeric(h["metric_calls"], errors="coerce"), marker="o", color="#1565c0")
        ax.set_xlabel("candidate")
        ax.set_ylabel("work items spent", color="#1565c0")
        other = ax.twinx()
        other.plot(x, pd.to_numeric(h["usd"], errors="coerce"), marker="s", color="#c62828")
        other.set_ylabel("USD spent", color="#c62828")
        other.spines["top"].set_visible(False)
        ax.set_title("Budget spent", fontsize=11)
        return fig

    def skill_diff(self) -> Fragment:
        """Unified diff of the seed skill vs the champion, escaped, in a ``<pre>`` block."""
        lines = difflib.unified_diff(
            self.seed_text.splitlines(keepends=True),
            self.champion_text.splitlines(keepends=True),
            fromfile="seed.md",
            tofile=f"{self.state.champion}.md",
        )
        text = "".join(lines) or "(the champion is the seed: no change)"
        return Fragment(f'<pre class="ek-diff" id="skill-diff">{esc(text)}</pre>')


def is_optimization(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an optimisation run directory (it holds ``optimize.json``)."""
    return has_state(path)


def load_optimization(path: str | os.PathLike[str]) -> Optimization:
    """Read an optimisation run directory.

    Raises:
        InputError: ``path`` holds no ``optimize.json``, or one that does not validate.
    """
    run_dir = Path(path)
    state = read_state(run_dir)
    columns = [
        "candidate",
        "parent",
        "champion_at_commit",
        "accepted",
        "reason",
        "verdict",
        "delta",
        "ci_low",
        "ci_high",
        "val_rate",
        "metric_calls",
        "usd",
    ]
    history = pd.DataFrame([d.model_dump(mode="json") for d in state.history])
    if state.target == "description":
        rates = [d.trigger.model_dump() if d.trigger is not None else {} for d in state.history]
        for name in TRIGGER_COLUMNS:
            key = name.removeprefix("trigger_")
            history[name] = [r.get(key) for r in rates]
            columns.append(name)
    for column in columns:
        if column not in history.columns:
            history[column] = np.nan
    skills = run_dir / "skills"
    seed = (skills / "seed.md").read_text(encoding="utf-8") if (skills / "seed.md").exists() else ""
    champion_file = skills / f"{state.champion}.md"
    champion = champion_file.read_text(encoding="utf-8") if champion_file.exists() else seed
    return Optimization(run_dir, state, history[columns], seed, champion)


def _styled_axes(height: float) -> tuple[Figure, Axes]:
    """An 8-inch-wide figure of the given height with one styled set of axes."""
    fig = _new_figure(8.0, height)
    ax = fig.add_subplot(1, 1, 1)
    _style(ax)
    return fig, ax


def _seed_rate(opt: Optimization) -> float:
    """The seed skill's validation pass rate (the champion level before any accept)."""
    rate = opt.state.seed_val_rate
    return float("nan") if rate is None else float(rate)


def test_summary(opt: Optimization) -> tuple[str, str, list[str]]:
    """Verdict, headline and detail lines of the sealed test comparison."""
    test = opt.state.test
    if test is None:
        return "inconclusive", "the test split has not been unsealed", []
    headline = (
        f"{objective_label(opt)}: champion {_share(test.champion_rate)} vs seed "
        f"{_share(test.seed_rate)} on the sealed test split: {_points(test.delta)} pp "
        f"[{_points(test.ci_low)}, {_points(test.ci_high)}]"
    )
    details = [
        f"{test.n_cases} test cases, evaluated exactly once, after the search ended",
        f"champion {test.champion}",
    ]
    for label, rates in (("seed", test.seed_trigger), ("champion", test.champion_trigger)):
        if rates is not None:
            details.append(
                f"{label}: trigger precision {_share(rates.precision)} "
                f"[{_share(rates.precision_low)}, {_share(rates.precision_high)}], "
                f"recall {_share(rates.recall)} "
                f"[{_share(rates.recall_low)}, {_share(rates.recall_high)}]"
            )
    return test.verdict, headline, details


def objective_label(opt: Optimization) -> str:
    """What the gate compared: ``pass rate`` or ``trigger F1``."""
    return "trigger F1" if opt.state.objective == "trigger_f1" else "pass rate"


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}"
