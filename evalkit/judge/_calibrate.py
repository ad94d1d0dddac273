"""Calibrate a judge against human labels: Cohen's kappa, agreement, confusion, disagreements.

The labels file is a CSV with a ``label`` column (``pass``/``fail``, ``true``/``false``,
``yes``/``no``, ``1``/``0``; rows left empty are not labelled yet and are skipped), an
``expectation`` column (the statement's text, its component
``expectation:N``, or its 1-based number N), and the item: ``item_key``, or ``case_id`` (or
``case``), ``condition`` and ``trial``. The report is stored beside the run under
``calibration/``, keyed by the judge's identity (provider, model, prompt hash), so calibrations
of several judges of one run live side by side.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._plain import plain_fields
from evalkit._settings import CONFIDENCE, RUNS_DIR
from evalkit.errors import InputError
from evalkit.results import (
    CALIBRATION_DIR as CALIBRATION_DIR,
    calibration_path,
    read_labels_csv,
    read_run,
    read_scores,
    resolve_run_dir,
    write_json_atomic,
)
from evalkit.stats import Kappa, cohens_kappa

_TRUE = {"pass", "passed", "true", "yes", "y", "1", "t"}
_FALSE = {"fail", "failed", "false", "no", "n", "0", "f"}


@dataclass(frozen=True)
class Calibration:
    """How well a judge agrees with human labels on one run.

    Attributes:
        run_id: The judged run.
        judge: The judge's identity (``provider``, ``model``, ``prompt_hash``).
        labels_file: The labels CSV.
        n: Labelled statements matched to a verdict.
        unmatched: Labels with no verdict in the run (shown, not counted).
        kappa: Cohen's kappa with its confidence interval.
        agreement: Raw agreement (share of identical labels).
        confusion: Counts of (judge, human): ``pass_pass``, ``pass_fail``, ``fail_pass``,
            ``fail_fail`` (judge first).
        per_expectation: Agreement per statement: ``expectation``, ``n``, ``agreement``.
        disagreements: Each disagreement with the judge's evidence.
        path: Where the report was written.
    """

    run_id: str
    judge: dict[str, str]
    labels_file: str
    n: int
    unmatched: int
    kappa: Kappa
    agreement: float
    confusion: dict[str, int]
    per_expectation: list[dict[str, Any]] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    path: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit judge calibrate --json`` object (also the stored report)."""
        return plain_fields(self)


def _label(value: Any, path: Path, line: int) -> bool:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(
        f"{path}:{line}: label: {value!r} is not a label; use pass/fail, true/false, yes/no "
        "or 1/0"
    )


def read_labels(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and check a labels CSV (see the module docstring for its columns).

    Returns:
        Columns ``line`` (the CSV line), ``expectation``, ``human`` (bool) and either
        ``item_key`` or ``case_id``, ``condition``, ``trial``.

    Raises:
        InputError: A missing file or column, or a value that is not a label; the message
            names the file, the line and the fix.
    """
    file = Path(path)
    frame = read_labels_csv(file)
    if "case" in frame.columns and "case_id" not in frame.columns:
        frame = frame.rename(columns={"case": "case_id"})
    needed = ["expectation", "label"]
    has_key = "item_key" in frame.columns
    if not has_key:
        needed += ["case_id", "condition", "trial"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputError(
            f"{file}: missing column(s) {', '.join(missing)}; a labels CSV has 'expectation', "
            "'label' and either 'item_key' or 'case_id', 'condition', 'trial'"
        )
    if frame.empty:
        raise InputError(f"{file}: no labels (the CSV has a header only)")
    frame["line"] = range(2, len(frame) + 2)
    frame = frame[frame["label"].str.strip() != ""]
    if frame.empty:
        raise InputError(
            f"{file}: every 'label' cell is empty; fill in pass or fail for the statements "
            "you checked (rows left empty are skipped)"
        )
    frame["human"] = [
        _label(v, file, i) for v, i in zip(frame["label"], frame["line"], strict=True)
    ]
    if not has_key:
        bad = frame[~frame["trial"].str.strip().str.fullmatch(r"\d+")]
        if not bad.empty:
            row = bad.iloc[0]
            raise InputError(
                f"{file}:{row['line']}: trial: {row['trial']!r} is not a trial number (0, 1, ...)"
            )
        frame["trial"] = frame["trial"].astype(int)
    return frame


def _verdicts(run_dir: Path) -> pd.DataFrame:
    scores = read_scores(run_dir)
    judged = scores[scores["component"].str.match(r"^(expectation|rubric):\d+$")]
    if judged.empty:
        raise InputError(
            f"{run_dir}: the run has no judged expectations to calibrate; judge it first "
            "(evalkit judge RUN) or run a suite whose cases carry expectations"
        )
    rows = read_run(run_dir)[
        ["item_key", "case_id", "condition", "trial", "judge_provider", "judge_model",
         "judge_prompt_hash"]
    ]
    merged = judged.merge(rows, on="item_key", how="left")
    merged["number"] = merged["component"].str.split(":").str[1]
    return merged


def _match(labels: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    keys = ["item_key"] if "item_key" in labels.columns else ["case_id", "condition", "trial"]
    candidates = labels.merge(verdicts, on=keys, how="inner", suffixes=("_label", ""))
    wanted = candidates["expectation_label"].str.strip()
    hit = (
        (wanted == candidates["expectation"].str.strip())
        | (wanted == candidates["component"])
        | ((wanted == candidates["number"]) & candidates["component"].str.startswith("expect"))
    )
    if "component_label" in candidates.columns:  # the template's own column, exact
        hit |= candidates["component_label"].str.strip() == candidates["component"]
    matched = candidates[hit].drop_duplicates("line")
    return matched, len(labels) - len(matched)


def one_judge(frame: pd.DataFrame, several: str) -> dict[str, str]:
    """The one judge (provider, model, prompt hash) of ``frame``; InputError ``several`` if not."""
    identities = frame[["judge_provider", "judge_model", "judge_prompt_hash"]].drop_duplicates()
    if len(identities) != 1:
        raise InputError(several.format(n=len(identities)))
    provider, model, prompt_hash = (str(v) for v in identities.iloc[0])
    return {"provider": provider, "model": model, "prompt_hash": prompt_hash}


def calibrate(
    run: str | os.PathLike[str],
    labels: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    confidence: float = CONFIDENCE.default,
) -> Calibration:
    """Compare a run's judge verdicts with human labels and store the report beside the run.

    Args:
        run: Run directory or run id under ``runs_dir``.
        labels: The labels CSV.
        runs_dir: Where run ids are looked up.
        confidence: Confidence level of kappa's interval.

    Returns:
        The calibration (written to ``<run>/calibration/<provider>--<model>--<hash>.json``).

    Raises:
        RunNotFoundError: The run does not exist.
        InputError: Bad labels, a run without verdicts, or no label matching a verdict.
    """
    run_dir = resolve_run_dir(run, runs_dir)
    frame = read_labels(labels)
    verdicts = _verdicts(run_dir)
    judge = one_judge(verdicts, f"{run_dir}: verdicts of {{n}} judges; calibrate one at a time")
    matched, unmatched = _match(frame, verdicts)
    if matched.empty:
        raise InputError(
            f"{labels}: no label matches a verdict of run '{run_dir.name}'; check the item "
            "columns (item_key, or case_id/condition/trial) and that 'expectation' is the "
            "statement's text or its number"
        )
    judged = matched["passed"].astype(bool).tolist()
    human = matched["human"].astype(bool).tolist()
    kappa = cohens_kappa(judged, human, confidence=confidence)
    agree = matched["passed"].astype(bool) == matched["human"].astype(bool)

    def count(j: bool, h: bool) -> int:
        return int(((matched["passed"].astype(bool) == j) & (matched["human"] == h)).sum())

    confusion = {
        "pass_pass": count(True, True),
        "pass_fail": count(True, False),
        "fail_pass": count(False, True),
        "fail_fail": count(False, False),
    }
    per = (
        matched.assign(agree=agree)
        .groupby("expectation", sort=True)["agree"]
        .agg(["size", "mean"])
        .reset_index()
    )
    per_expectation = [
        {"expectation": str(r["expectation"]), "n": int(r["size"]), "agreement": float(r["mean"])}
        for _, r in per.iterrows()
    ]
    disagreements = [
        {
            "item_key": str(r["item_key"]),
            "case_id": str(r["case_id"]),
            "condition": str(r["condition"]),
            "trial": int(r["trial"]),
            "expectation": str(r["expectation"]),
            "judge": bool(r["passed"]),
            "human": bool(r["human"]),
            "evidence": str(r["detail"] or ""),
        }
        for _, r in matched[~agree].sort_values(["item_key", "component"]).iterrows()
    ]
    target = calibration_path(run_dir, judge)
    result = Calibration(
        run_id=run_dir.name,
        judge=judge,
        labels_file=str(labels),
        n=len(matched),
        unmatched=unmatched,
        kappa=kappa,
        agreement=float(agree.mean()),
        confusion=confusion,
        per_expectation=per_expectation,
        disagreements=disagreements,
        path=str(target),
    )
    target.parent.mkdir(exist_ok=True)
    write_json_atomic(target, result.to_dict())
    return result
