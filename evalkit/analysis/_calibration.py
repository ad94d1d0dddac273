"""Does a verdict rest on a calibrated judge? (``judge_calibration`` of compare, gate, reports).

A verdict rests on judged expectations when a compared row carries a judge
(``judge_provider``). Each judge identity (provider, model, prompt hash) must have a stored
calibration (``evalkit judge calibrate``, under a compared run's ``calibration/``) whose lower
confidence bound of Cohen's kappa reaches the suite's ``judge.min_kappa`` (recorded in the
run's manifest; :data:`DEFAULT_MIN_KAPPA` for runs that predate it).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalkit._plain import plain_fields
from evalkit.errors import InputError
from evalkit.results import (
    DEFAULT_MIN_KAPPA as DEFAULT_MIN_KAPPA,  # where runs lack one
    MANIFEST_FILE,
    calibration_path,
    peek_manifest,
    read_calibration,
    resolve_run_dir,
)

CalibrationStatus = Literal["calibrated", "uncalibrated", "below_threshold"]
_ORDER: dict[str, int] = {"calibrated": 0, "below_threshold": 1, "uncalibrated": 2}
_IDENTITY = ("judge_provider", "judge_model", "judge_prompt_hash")


@dataclass(frozen=True, eq=False)
class JudgedRun:
    """Rows of one compared run, with its directory when it is a run on disk.

    Attributes:
        label: The run's id (or ``baseline`` / ``candidate`` for a table).
        rows: The compared rows.
        run_dir: The run directory, or None for a table.
    """

    label: str
    rows: pd.DataFrame
    run_dir: Path | None = None


@dataclass(frozen=True)
class JudgeCheck:
    """One judge behind a verdict and what its calibration says.

    Attributes:
        status: ``calibrated``, ``uncalibrated`` (no stored calibration) or
            ``below_threshold`` (kappa's lower bound under ``min_kappa``, or undefined).
        judge: ``provider``, ``model``, ``prompt_hash``.
        min_kappa: The threshold.
        kappa: Cohen's kappa of the calibration (None without one or when undefined).
        ci_low: Its lower confidence bound (None likewise).
        runs: Labels of the compared runs whose verdicts this judge graded.
        calibration_file: The report found, or where it is looked for first when uncalibrated.
        fix: The commands that produce (or improve) the calibration.
    """

    status: CalibrationStatus
    judge: dict[str, str]
    min_kappa: float
    kappa: float | None = None
    ci_low: float | None = None
    runs: tuple[str, ...] = ()
    calibration_file: str | None = None
    fix: str = ""

    @property
    def message(self) -> str:
        """One line: which judge, what state, and what to do."""
        judge = self.judge
        who = f"judge {judge['provider']}/{judge['model']} (prompt {judge['prompt_hash']})"
        runs = ", ".join(f"'{r}'" for r in self.runs)
        if self.status == "calibrated":
            return (
                f"{who} is calibrated: kappa {self.kappa:.2f}, lower bound {self.ci_low:.2f} "
                f">= min_kappa {self.min_kappa:.2f}"
            )
        if self.status == "uncalibrated":
            return (
                f"{who} of run(s) {runs} has no calibration (looked for "
                f"{self.calibration_file or 'a calibration report'}); {self.fix}"
            )
        bound = "undefined" if self.ci_low is None else f"{self.ci_low:.2f}"
        return (
            f"{who} is below threshold: kappa lower bound {bound} < min_kappa "
            f"{self.min_kappa:.2f} ({self.calibration_file}); {self.fix}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain values (one entry of ``judge_calibration.judges``)."""
        return {**plain_fields(self), "message": self.message}


@dataclass(frozen=True)
class JudgeCalibration:
    """Whether the judged part of a verdict rests on calibrated judges.

    Attributes:
        judges: One check per judge identity behind the compared rows.
    """

    judges: tuple[JudgeCheck, ...] = field(default_factory=tuple)

    @property
    def worst(self) -> JudgeCheck:
        """The check that decides the status (uncalibrated before below threshold)."""
        return max(self.judges, key=lambda c: _ORDER[c.status])

    @property
    def status(self) -> CalibrationStatus:
        """``calibrated`` only when every judge is."""
        return self.worst.status

    @property
    def calibrated(self) -> bool:
        """Whether every judge behind the verdict is calibrated."""
        return self.status == "calibrated"

    @property
    def message(self) -> str:
        """The lines of the judges that are not calibrated (or the calibrated one's line)."""
        bad = [c.message for c in self.judges if c.status != "calibrated"]
        return "; ".join(bad) if bad else "; ".join(c.message for c in self.judges)

    def to_dict(self) -> dict[str, Any]:
        """The ``judge_calibration`` object: the deciding judge's fields plus ``judges``."""
        worst = self.worst.to_dict()
        return {
            "status": self.status,
            "kappa": worst["kappa"],
            "ci_low": worst["ci_low"],
            "min_kappa": worst["min_kappa"],
            "judge": worst["judge"],
            "calibration_file": worst["calibration_file"],
            "fix": worst["fix"],
            "message": self.message,
            "judges": [c.to_dict() for c in self.judges],
        }


def _identities(rows: pd.DataFrame) -> list[dict[str, str]]:
    if not set(_IDENTITY) <= set(rows.columns):
        return []
    judged = rows.loc[rows["judge_provider"].notna(), list(_IDENTITY)].drop_duplicates()
    return [
        {"provider": str(p), "model": str(m), "prompt_hash": str(h)}
        for p, m, h in judged.itertuples(index=False)
    ]


def _min_kappa(run_dir: Path | None) -> float:
    if run_dir is None:
        return DEFAULT_MIN_KAPPA
    judge = peek_manifest(run_dir).get("judge") or {}
    value = judge.get("min_kappa") if isinstance(judge, dict) else None
    if value is None:
        return DEFAULT_MIN_KAPPA
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"{run_dir / MANIFEST_FILE}: field 'judge.min_kappa': not a number ({value!r}); "
            "fix the value or rewrite the run (evalkit run --resume rewrites the manifest)"
        )
    return float(value)


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _fix(run: JudgedRun) -> str:
    name = str(run.run_dir) if run.run_dir is not None else "RUN"
    shipped = _shipped_labels(run)
    if shipped is not None:
        return (
            f"the suite ships hand labels: 'evalkit judge calibrate {name} --labels "
            f"{shipped}' (or label a fresh sample: 'evalkit judge sample {name} -n 50 -o "
            "labels.csv')"
        )
    return (
        f"label a sample and calibrate: 'evalkit judge sample {name} -n 50 -o labels.csv', "
        f"fill its label column (or 'evalkit report {name} --kind labels'), then "
        f"'evalkit judge calibrate {name} --labels labels.csv'"
    )


def _shipped_labels(run: JudgedRun) -> str | None:
    """``SUITE/labels.csv`` when the run's suite ships hand labels, else None."""
    if run.run_dir is None:
        return None
    suite = peek_manifest(run.run_dir).get("suite_path")
    if not suite:
        return None
    labels = Path(str(suite)) / "labels.csv"
    return str(labels) if labels.is_file() else None


def check_judge_calibration(runs: Sequence[JudgedRun]) -> JudgeCalibration | None:
    """Check every judge behind the compared rows of ``runs`` against its stored calibration.

    A judge counts as calibrated by a report stored under any of the compared runs (its own
    first). The threshold is the largest ``min_kappa`` of the runs the judge graded.

    Args:
        runs: The compared runs.

    Returns:
        The checks, or None when no compared row was judged.

    Raises:
        InputError: A stored calibration report is damaged (named, with the fix).
    """
    found: dict[tuple[str, str, str], list[JudgedRun]] = {}
    for run in runs:
        for judge in _identities(run.rows):
            found.setdefault((judge["provider"], judge["model"], judge["prompt_hash"]), []).append(
                run
            )
    if not found:
        return None
    checks = []
    for (provider, model, prompt_hash), graded in found.items():
        judge = {"provider": provider, "model": model, "prompt_hash": prompt_hash}
        threshold = max(_min_kappa(r.run_dir) for r in graded)
        labels = tuple(r.label for r in graded)
        # the last run graded (the candidate) first: that is the one a fix should calibrate
        search = [*reversed(graded), *(r for r in runs if r not in graded)]
        dirs = [r.run_dir for r in search if r.run_dir is not None]
        fix = _fix(graded[-1])
        report, where = None, None
        for run_dir in dirs:
            report = read_calibration(run_dir, judge)
            if report is not None:
                where = calibration_path(run_dir, judge)
                break
        if report is None:
            expected = calibration_path(dirs[0], judge) if dirs else None
            checks.append(
                JudgeCheck(
                    "uncalibrated", judge, threshold, runs=labels,
                    calibration_file=None if expected is None else str(expected), fix=fix,
                )
            )
            continue
        kappa = report["kappa"]
        ci_low = _finite(kappa.get("ci_low"))
        status: CalibrationStatus = (
            "calibrated" if ci_low is not None and ci_low >= threshold else "below_threshold"
        )
        checks.append(
            JudgeCheck(
                status, judge, threshold, kappa=_finite(kappa.get("estimate")), ci_low=ci_low,
                runs=labels, calibration_file=str(where), fix=fix,
            )
        )
    return JudgeCalibration(tuple(checks))


def judged_run(
    data: pd.DataFrame | str | os.PathLike[str],
    rows: pd.DataFrame,
    label: str,
    runs_dir: str | os.PathLike[str],
) -> JudgedRun:
    """The compared rows of ``data`` with its run directory (found for a one-run table too)."""
    if isinstance(data, pd.DataFrame):
        ids: list[Any] = list(data["run_id"].dropna().unique()) if "run_id" in data else []
        candidate = Path(runs_dir) / str(ids[0]) if len(ids) == 1 else None
        run_dir = candidate if candidate is not None and candidate.is_dir() else None
        return JudgedRun(label, rows, run_dir)
    return JudgedRun(label, rows, resolve_run_dir(data, runs_dir))
