"""The next step of an inconclusive comparison, as a value (see :mod:`._next_step`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from evalkit._command_line import left_out_line
from evalkit._percent import percent
from evalkit._settings import CONCURRENCY, POWER

#: Power every next step is planned for.
NEXT_STEP_POWER = POWER.default


@dataclass(frozen=True)
class NextStep:
    """What would settle an inconclusive verdict.

    Attributes:
        cases: Cases needed at ``trials`` trials for the observed effect (None: unreachable).
        trials: Trials per case and arm needed at the compared cases for the observed effect
            (None: no number of trials suffices, or not plannable).
        effect: The observed effect planned for.
        cases_at_threshold: Cases needed at ``current_trials`` to tell an effect of the
            practical threshold's size from zero.
        threshold: The practical threshold.
        current_cases: Matched cases of the comparison.
        current_trials: Trials per case of the compared runs (median).
        power: Power the plan is for.
        command: The command that would run it (None when it cannot be formed).
        note: What limits the plan, in words ("" when nothing does).
        goal: ``"verdict"`` (settle improved/regressed) or ``"equivalence"`` (show "no
            practical difference": the observed change is inside the threshold, so a verdict
            is not worth chasing).
        equivalence_cases: Cases at ``current_trials`` for the whole interval to lie within
            +-threshold if the observed change is the true one (None: not planned or
            unreachable). With goal ``"equivalence"``, ``trials`` is the same plan's trials
            per case at the compared cases.
        conditions: The conditions the command runs (those that carried evidence).
        suite_cases: Cases the compared runs hold (the suite as run).
        cases_to_add: Cases the suite lacks for the plan (None: it has enough).
        items: Items the command runs.
        cost_usd: Their estimated agent cost, from the runs' own cost per item.
        cost_simulated: The cost is a simulated provider's (not billed).
        wall_s: Their estimated wall time at the default concurrency.
        ratio: ``items`` over the items compared so far.
        out_of_proportion: ``ratio`` exceeds the documented bound (10x).
        advice: What to do instead when the plan is out of proportion or infeasible.
        concurrency: Items in flight ``wall_s`` assumes (the run's own).
        tied_pairs: Every case's difference was zero and the interval is the exact bound of
            the discordance rate over this many pairs (None otherwise): the plan is then in
            pairs, which narrow that bound as long as they keep tying.
        name_cases: The cases that moved past the threshold in the sample that a naming plan
            is for (strongest first; empty: no naming plan).
        name_trials: Trials per case and side over every compared case at which the case
            screen names each of ``name_cases`` with power ``name_power`` if its change is the
            one seen, moved a standard error toward zero (None: none up to 200 does, or no
            naming plan).
        name_power: The smallest exact power of those cases at ``name_trials``.
        name_level: The per-row level the naming plan is made at: the screen's correction
            across ``name_rows`` rows names a row at that p whatever the others show.
        name_rows: Case rows the screen corrects across.
        name_correction: The screen's correction (``"fdr_bh"``, ``"fdr_by"``, ``"holm"``).
        name_items: Items the naming plan runs (every compared case at ``name_trials``).
        name_beyond: Cases that moved that no number of trials up to 200 names through the
            screen (left to ``evalkit confirm``).
        left_out: Options of the run's recorded command line that ``command`` leaves out
            because they change where data goes or what is read (``--provider-opt
            base_url``, ``--skill NAME``, ``--no-sandbox``); :meth:`text` names them on a line
            of their own.
    """

    cases: int | None
    trials: int | None
    effect: float
    cases_at_threshold: int | None
    threshold: float
    current_cases: int
    current_trials: int
    power: float
    command: str | None
    note: str = ""
    goal: str = "verdict"
    equivalence_cases: int | None = None
    conditions: tuple[str, ...] = ()
    suite_cases: int | None = None
    cases_to_add: int | None = None
    items: int | None = None
    cost_usd: float | None = None
    cost_simulated: bool = False
    wall_s: float | None = None
    ratio: float | None = None
    out_of_proportion: bool = False
    advice: str = ""
    concurrency: int = CONCURRENCY.default
    tied_pairs: int | None = None
    left_out: tuple[str, ...] = ()
    name_cases: tuple[str, ...] = ()
    name_trials: int | None = None
    name_power: float | None = None
    name_level: float | None = None
    name_rows: int | None = None
    name_correction: str = ""
    name_items: int | None = None
    name_beyond: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Lists read back from JSON (``NextStep(**step.to_dict())``) become tuples."""
        for name in ("conditions", "left_out", "name_cases", "name_beyond"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        """The ``next_step`` JSON object (every field a plain value).

        Returns:
            The fields as a dict.
        """
        return asdict(self) | {"conditions": list(self.conditions),
                               "left_out": list(self.left_out),
                               "name_cases": list(self.name_cases),
                               "name_beyond": list(self.name_beyond)}

    def text(self) -> str:
        """One line for the text output and the rich displays (two when options were left out).

        The second line names what the command left out of the run's command line and why
        (:func:`evalkit._command_line.left_out_line`).
        """
        parts = []
        effect = f"{percent(self.effect):+.1f} pp"
        if self.goal == "equivalence":
            truth = ("if the pairs keep tying" if self.tied_pairs is not None else
                     f"if the true change is the observed {effect}")
            options = []
            if self.equivalence_cases is not None:
                options.append(f"{self.equivalence_cases} cases at {self.current_trials} trials")
            if self.trials is not None:
                options.append(f"{self.trials} trials at these {self.current_cases} cases")
            if options:
                parts.append(f"{' or '.join(options)} to show no practical difference (within "
                             f"±{self.threshold * 100:g} pp) {truth}")
        if self.goal == "verdict" and self.cases is not None:
            parts.append(
                f"{self.cases} cases at {self.current_trials} trials for the observed {effect}"
            )
        if self.goal == "verdict" and self.trials is not None:
            parts.append(f"{self.trials} trials at these {self.current_cases} cases")
        if self.goal == "verdict" and self.cases_at_threshold is not None:
            parts.append(
                f"{self.cases_at_threshold} cases to tell a "
                f"{self.threshold * 100:g} pp effect from zero"
            )
        naming = self.naming_text()
        if naming and not parts:
            parts.append(naming)
            naming = ""
        head = "next step: " + ("; ".join(parts) if parts else "no design settles this")
        head += (" (from the exact bound of tied pairs)" if self.tied_pairs is not None else
                 f" (power {self.power:.0%}, from these runs' variances)")
        if self.command:
            head += f"; run: {self.command}"
            if self.items is not None:
                head += f" — {self.price_text()}"
        elif self.items is not None:
            head += f"; the plan is {self.price_text()}"
        tail = [part for part in (naming, self.note, self.advice) if part]
        line = head + "".join(f". {part}" for part in tail)
        left_out = left_out_line(self.left_out) if self.command else ""
        return f"{line}\n{left_out}" if left_out else line

    def naming_text(self) -> str:
        """The naming plan in words ("" when there is none)."""
        if not self.name_cases:
            return ""
        names = ", ".join(self.name_cases)
        words = {"fdr_bh": "Benjamini-Hochberg", "fdr_by": "Benjamini-Yekutieli",
                 "holm": "Holm", "bonferroni": "Bonferroni"}.get(self.name_correction,
                                                                 self.name_correction)
        how = (f"{words} across {self.name_rows} case rows, so each is planned at p "
               f"{self.name_level or 0:.2g}")
        if self.name_trials is None:
            return (f"to name {names}: no number of trials per case up to 200 does it through "
                    f"the case screen ({how}); confirm them on fresh samples instead "
                    "(evalkit confirm reruns only them)")
        items = f", about {self.name_items:,} items" if self.name_items is not None else ""
        beyond = (f"; no number of trials up to 200 names {', '.join(self.name_beyond)} "
                  "this way" if self.name_beyond else "")
        return (f"to name {names}: {self.name_trials} trials per case over all "
                f"{self.current_cases} cases (power {self.name_power or 0:.0%} each if the "
                f"change seen, shrunk a standard error, is true; {how}{items}){beyond}; "
                "evalkit confirm reruns only these cases and costs less")

    def price_text(self) -> str:
        """The command's price in words (items, cost, wall time, ratio)."""
        from evalkit.analysis._step_price import Price

        if self.items is None:
            return ""
        return Price(self.items, self.cost_usd, self.cost_simulated, self.wall_s,
                     self.ratio or 0.0, self.concurrency).text()
