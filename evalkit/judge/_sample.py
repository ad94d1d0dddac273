"""Draw judged statements for human labelling: a stratified, seeded sample as a CSV template.

The sample is stratified by condition and by the judge's outcome (pass/fail) with proportional
allocation (largest remainders; every stratum that has statements gets at least one), so the
labelled share of each stratum matches the run's and kappa estimated on it is not skewed. The
template carries what ``evalkit judge calibrate`` reads (``item_key``, ``case_id``,
``condition``, ``trial``, ``expectation``), what a labeller needs (the ``prompt`` and an
``answer`` excerpt) and an empty ``label`` column. The judge's verdict and evidence are left
out on purpose: a labeller who sees them agrees with them more often than the answer deserves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._plain import plain_fields
from evalkit._settings import RUNS_DIR, SEED
from evalkit._spreadsheet import write_sheet
from evalkit.errors import InputError
from evalkit.judge._prompt import final_answer
from evalkit.results import (
    LABEL_COLUMNS as LABEL_COLUMNS,
    judged_statements,
    read_transcripts,
    resolve_run_dir,
)

#: Longest answer excerpt written to the template (the tail is kept, as the judge's view).
MAX_SAMPLE_ANSWER_CHARS = 4000



@dataclass(frozen=True)
class LabelSample:
    """A drawn sample of judged statements, ready for labelling.

    Attributes:
        run_id: The sampled run.
        rows: One row per statement, with :data:`LABEL_COLUMNS` (``label`` empty).
        population: Judged statements in the run.
        strata: Per stratum: ``condition``, ``judge_outcome`` (``pass``/``fail``),
            ``population`` and ``sampled``.
        seed: The sampling seed.
        path: The CSV written, or "" when not written.
    """

    run_id: str
    rows: list[dict[str, Any]]
    population: int
    strata: list[dict[str, Any]] = field(default_factory=list)
    seed: int = SEED.default
    path: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit judge sample --json`` object (without the rows' texts)."""
        return {
            "run_id": self.run_id,
            "n": len(self.rows),
            **plain_fields(self, leave_out={"run_id", "rows"}),
        }


def _statements_to_sample(run_dir: Path) -> pd.DataFrame:
    """The run's judged statements (:func:`evalkit.results.judged_statements`).

    Raises:
        InputError: The run has none (the message says how to get some).
    """
    judged = judged_statements(run_dir)
    if judged.empty:
        raise InputError(
            f"{run_dir}: the run has no judged expectations; judge it first "
            "(evalkit judge RUN) or run a suite whose cases carry expectations"
        )
    return judged


def _allocate(sizes: dict[tuple[str, str], int], n: int) -> dict[tuple[str, str], int]:
    """Proportional allocation of ``n`` over strata (largest remainders), one per stratum."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    quota = {k: size / total * n for k, size in sizes.items()}
    counts = {k: int(q) for k, q in quota.items()}
    by_remainder = sorted(sizes, key=lambda k: quota[k] - counts[k], reverse=True)
    for k in by_remainder[: n - sum(counts.values())]:
        counts[k] += 1
    if n >= len(sizes):
        for k in sizes:
            if counts[k] == 0:
                donor = max(counts, key=lambda d: counts[d])
                counts[donor] -= 1
                counts[k] = 1
    return counts


def _prompt(events: list[dict[str, Any]]) -> str:
    return "\n".join(str(e.get("content", "")) for e in events if e.get("kind") == "user")


def sample_labels(
    run: str | os.PathLike[str],
    *,
    n: int = 50,
    seed: int = SEED.default,
    output: str | os.PathLike[str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> LabelSample:
    """Draw ``n`` judged statements of a run, stratified by condition and judge outcome.

    Args:
        run: Run directory or run id under ``runs_dir``.
        n: Statements to draw (all of them when the run has fewer).
        seed: Sampling seed (same seed, same sample).
        output: CSV file to write the template to (None: not written).
        runs_dir: Where run ids are looked up.

    Returns:
        The sample; its rows in item and statement order.

    Raises:
        RunNotFoundError: The run does not exist.
        InputError: ``n`` below 1, or a run without judged statements.
    """
    if n < 1:
        raise InputError(f"-n must be at least 1, got {n}")
    run_dir = resolve_run_dir(run, runs_dir)
    statements = _statements_to_sample(run_dir)
    statements["judge_outcome"] = np.where(statements["passed"].astype(bool), "pass", "fail")
    strata_keys = ["condition", "judge_outcome"]
    members = {
        (str(condition), str(outcome)): list(group.index)
        for (condition, outcome), group in statements.groupby(strata_keys, sort=True)
    }
    sizes = {k: len(v) for k, v in members.items()}
    counts = _allocate(sizes, n)
    rng = np.random.default_rng(seed)
    picked: list[int] = []
    for stratum, indices in members.items():
        drawn = rng.choice(np.asarray(indices), size=counts[stratum], replace=False)
        picked.extend(int(i) for i in drawn)
    chosen = statements.loc[sorted(picked)].sort_values(["item_key", "component"], kind="stable")
    transcripts = read_transcripts(run_dir, list(dict.fromkeys(chosen["item_key"])))
    rows = []
    for record in chosen.to_dict("records"):
        events = transcripts.get(record["item_key"], {}).get("response", {}).get("events", [])
        answer = final_answer(events)
        rows.append(
            {
                "item_key": record["item_key"],
                "case_id": record["case_id"],
                "condition": record["condition"],
                "trial": int(record["trial"]),
                "component": record["component"],
                "expectation": record["expectation"],
                "prompt": _prompt(events),
                "answer": answer[-MAX_SAMPLE_ANSWER_CHARS:],
                "label": "",
            }
        )
    strata = [
        {
            "condition": str(condition),
            "judge_outcome": str(outcome),
            "population": sizes[(condition, outcome)],
            "sampled": counts[(condition, outcome)],
        }
        for condition, outcome in sizes
    ]
    path = ""
    if output is not None:
        path = str(write_label_template(rows, output))
    return LabelSample(run_dir.name, rows, len(statements), strata, seed, path)


def write_label_template(rows: list[dict[str, Any]], output: str | os.PathLike[str]) -> Path:
    """Write labelling rows as a CSV with :data:`LABEL_COLUMNS` (UTF-8, quoted as needed).

    Text a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) is written
    after a ``'`` (:func:`evalkit._spreadsheet.neutralize_cell`); reading the file back with
    :func:`evalkit.results.read_labels_csv` removes it.

    Raises:
        InputError: The file cannot be written (named, with the reason).
    """
    return write_sheet(Path(output), rows, LABEL_COLUMNS, what="the labels template")
