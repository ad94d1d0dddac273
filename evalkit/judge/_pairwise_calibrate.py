"""Calibrating a pairwise judge: a blind labelling sheet, then kappa over better/worse/tie.

``judge sample RUN --pairwise`` draws judged pairs from the comparisons stored under
``RUN/pairwise/``, stratified by the judge's outcome for the candidate (win / loss / tie) with
proportional allocation, seeded. The sheet is **blind twice**: the judge's verdicts are left
out (a labeller who sees them is anchored by them), and the two answers are shown as
``response_1`` / ``response_2`` in an order fixed by the pair id (even hash: baseline first),
without naming the variants. The labeller writes ``1``, ``2`` or ``tie`` in ``label``.

``judge calibrate RUN --labels FILE --pairwise`` maps each label back to the candidate
(better / worse / tie) and compares it with the judge's outcome for the pair (a flipped pair is
the judge's tie) by Cohen's kappa (:func:`evalkit.stats.cohens_kappa`, whose lower bound is what
``min_kappa`` is compared with), and reports the judge's position consistency on the labelled
pairs. The report is stored under the judge's pairwise identity (provider, model, pairwise
prompt hash) in ``RUN/calibration/``, where ``compare --pairwise`` and ``gate --pairwise`` look.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._plain import plain_fields
from evalkit._settings import CONFIDENCE, RUNS_DIR, SEED
from evalkit._spreadsheet import write_sheet
from evalkit._untrusted import read_json
from evalkit.cases import stable_hash
from evalkit.errors import InputError
from evalkit.judge._calibrate import one_judge
from evalkit.judge._sample import _allocate
from evalkit.results import calibration_path, read_labels_csv, resolve_run_dir, write_json_atomic
from evalkit.stats import Kappa, cohens_kappa

#: Columns of the pairwise labelling sheet.
PAIR_LABEL_COLUMNS = ("pair_id", "case_id", "trial", "task", "response_1", "response_2",
                      "label")
#: Longest answer written to the sheet (the tail is kept).
MAX_SHEET_ANSWER_CHARS = 4000
_OUTCOME = {1.0: "better", 0.0: "worse", 0.5: "tie"}


def pair_id(comparison: str, baseline_item: str, candidate_item: str) -> str:
    """The opaque id of a judged pair on a labelling sheet."""
    return str(stable_hash([comparison, baseline_item, candidate_item]))[:16]


def baseline_first(pid: str) -> bool:
    """Whether the sheet shows the baseline's answer as Response 1 (even hash)."""
    return int(pid, 16) % 2 == 0


def stored_pairs(run_dir: Path) -> pd.DataFrame:
    """Every judged, non-identical pair of the run's stored comparisons, with its ``pair_id``."""
    folder = run_dir / "pairwise"
    frames = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = read_json(path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a readable pairwise comparison ({exc}); run "
                             "compare --pairwise again") from None
        pairs = pd.DataFrame(data.get("pairs") or [])
        if pairs.empty:
            continue
        pairs["comparison"] = path.stem
        pairs["judge_provider"] = data["judge"]["provider"]
        pairs["judge_model"] = data["judge"]["model"]
        pairs["judge_prompt_hash"] = data["judge"]["prompt_hash"]
        frames.append(pairs)
    if not frames:
        raise InputError(
            f"{folder}: no stored pairwise comparison to sample; run 'evalkit compare BASELINE "
            f"{run_dir.name} --pairwise' (or --conditions A,B --pairwise) first"
        )
    frame = pd.concat(frames, ignore_index=True)
    frame = frame[frame["outcome"].notna() & ~frame["identical"].astype(bool)]
    frame["pair_id"] = [
        pair_id(c, b, k) for c, b, k in
        zip(frame["comparison"], frame["baseline_item"], frame["candidate_item"], strict=True)
    ]
    return frame.drop_duplicates("pair_id").reset_index(drop=True)


@dataclass(frozen=True)
class PairSample:
    """A blind sample of judged pairs for labelling (``judge sample --pairwise``)."""

    run_id: str
    n: int
    population: int
    strata: list[dict[str, Any]]
    seed: int
    path: str

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return plain_fields(self)


def sample_pairs(
    run: str | os.PathLike[str],
    *,
    n: int = 50,
    seed: int = SEED.default,
    output: str | os.PathLike[str],
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> PairSample:
    """Write a blind pairwise labelling sheet (see the module docstring).

    Raises:
        InputError: No stored comparison, ``n < 1``, or an unwritable output.
    """
    if n < 1:
        raise InputError(f"-n must be at least 1, got {n}")
    run_dir = resolve_run_dir(run, runs_dir)
    pairs = stored_pairs(run_dir)
    pairs["stratum"] = pairs["outcome"].map(_OUTCOME)
    sizes = {(str(s), ""): int(c) for s, c in pairs["stratum"].value_counts().items()}
    counts = _allocate(sizes, n)
    rng = np.random.default_rng(seed)
    chosen = []
    strata = []
    for (stratum, _), k in sorted(counts.items()):
        members = pairs.index[pairs["stratum"] == stratum].to_numpy()
        picked = rng.choice(members, size=k, replace=False) if k < len(members) else members
        chosen += list(picked)
        strata.append({"judge_outcome": stratum, "population": sizes[(stratum, "")],
                       "sampled": int(k)})
    rows = []
    for row in pairs.loc[sorted(chosen)].to_dict("records"):
        answers = (str(row["baseline_answer"]), str(row["candidate_answer"]))
        if not baseline_first(row["pair_id"]):
            answers = answers[::-1]
        rows.append({"pair_id": row["pair_id"], "case_id": row["case_id"],
                     "trial": row["trial"], "task": row["task"],
                     "response_1": answers[0][-MAX_SHEET_ANSWER_CHARS:],
                     "response_2": answers[1][-MAX_SHEET_ANSWER_CHARS:], "label": ""})
    target = write_sheet(Path(output), rows, PAIR_LABEL_COLUMNS, what="the labelling sheet")
    return PairSample(run_dir.name, len(rows), len(pairs), strata, seed, str(target))


@dataclass
class PairCalibration:
    """A pairwise judge against human labels (``judge calibrate --pairwise``)."""

    run_id: str
    judge: dict[str, str]
    labels_file: str
    n: int
    unmatched: int
    kappa: Kappa
    agreement: float
    position_consistency: float
    confusion: dict[str, int]
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    path: str = ""
    kind: str = "pairwise"

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON object (``kappa`` as :meth:`Kappa.to_dict`)."""
        return plain_fields(self)


def _human(value: str, path: Path, line: int) -> str | None:
    text = value.strip().lower().removeprefix("response").strip()
    if text == "":
        return None
    if text in ("1", "2", "tie"):
        return text
    raise InputError(f"--labels {path}: row {line}: label {value!r} is not 1, 2 or tie "
                     "(which response is better, or a tie; empty = not labelled yet)")


def judge_identity(run_dir: Path, stored: pd.DataFrame) -> dict[str, str]:
    """The one pairwise judge (provider, model, prompt hash) of the stored comparisons.

    Raises:
        InputError: Comparisons of more than one judge are stored.
    """
    return one_judge(stored, f"{run_dir}: pairs of {{n}} pairwise judges are stored; "
                     "calibrate one at a time (remove the other comparisons)")


def labelled_pairs(
    run_dir: Path, labels: str | os.PathLike[str], stored: pd.DataFrame
) -> tuple[list[tuple[str, dict[Any, Any], str]], int]:
    """The labelled rows of a blind sheet matched to stored judged pairs.

    Returns:
        ``(pair_id, pair row, the labeller's verdict for the candidate)`` per labelled row
        that matches a pair (``better`` / ``worse`` / ``tie``), and the count of labelled rows
        that match none.

    Raises:
        InputError: Missing columns, a label other than 1, 2 or tie, or no match at all.
    """
    path = Path(labels)
    frame = read_labels_csv(path)
    missing = [c for c in ("pair_id", "label") if c not in frame.columns]
    if missing:
        raise InputError(f"--labels {path}: column(s) {missing} missing; label the sheet of "
                         f"'evalkit judge sample {run_dir.name} --pairwise -n 50 -o FILE'")
    pairs: dict[str, dict[Any, Any]] = {str(r["pair_id"]): r for r in stored.to_dict("records")}
    matched = []
    unmatched = 0
    for line, row in enumerate(frame.to_dict("records"), start=1):
        said = _human(str(row["label"]), path, line)
        if said is None:
            continue
        pid = str(row["pair_id"]).strip()
        if pid not in pairs:
            unmatched += 1
            continue
        if said == "tie":
            verdict = "tie"
        else:
            candidate_is_1 = not baseline_first(pid)
            verdict = "better" if (said == "1") == candidate_is_1 else "worse"
        matched.append((pid, pairs[pid], verdict))
    if not matched:
        raise InputError(f"--labels {path}: no labelled row matches a judged pair of run "
                         f"'{run_dir.name}' (check the pair_id column and the label values)")
    return matched, unmatched


def calibrate_pairwise(
    run: str | os.PathLike[str],
    labels: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    confidence: float = CONFIDENCE.default,
) -> PairCalibration:
    """Kappa of the pairwise judge against human labels; stored under the judge's identity.

    Raises:
        InputError: Bad labels, no stored comparison, or no label matching a judged pair.
    """
    run_dir = resolve_run_dir(run, runs_dir)
    path = Path(labels)
    stored = stored_pairs(run_dir)
    judge = judge_identity(run_dir, stored)
    matched, unmatched = labelled_pairs(run_dir, path, stored)
    judged, human, flipped, disagreements = [], [], [], []
    for pid, pair, verdict in matched:
        mine = _OUTCOME[float(pair["outcome"])]
        judged.append(mine)
        human.append(verdict)
        flipped.append(bool(pair["flipped"]))
        if mine != verdict:
            disagreements.append({
                "pair_id": pid, "case_id": str(pair["case_id"]), "trial": int(pair["trial"]),
                "judge": mine, "human": verdict, "flipped": bool(pair["flipped"]),
                "reason_baseline_first": str(pair["reason_baseline_first"]),
                "reason_candidate_first": str(pair["reason_candidate_first"]),
            })
    kappa = cohens_kappa(judged, human, confidence=confidence)
    labels_set = ("better", "worse", "tie")
    confusion = {f"{j}_{h}": sum(1 for a, b in zip(judged, human, strict=True)
                                  if a == j and b == h)
                 for j in labels_set for h in labels_set}
    target = calibration_path(run_dir, judge)
    result = PairCalibration(
        run_id=run_dir.name, judge=judge, labels_file=str(path), n=len(judged),
        unmatched=unmatched, kappa=kappa,
        agreement=float(np.mean([a == b for a, b in zip(judged, human, strict=True)])),
        position_consistency=float(1 - np.mean(flipped)), confusion=confusion,
        disagreements=disagreements, path=str(target),
    )
    target.parent.mkdir(exist_ok=True)
    write_json_atomic(target, result.to_dict())
    return result
