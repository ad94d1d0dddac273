"""``evalkit gate --pairwise``: gate on a stored pairwise verdict, refusing an uncalibrated judge.

The comparison is the one ``evalkit compare BASELINE CANDIDATE --pairwise`` stored under
``CANDIDATE/pairwise/``. The judge's calibration is looked up again (a calibration stored after
the comparison counts): its kappa lower bound must reach the judge's ``min_kappa``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._untrusted import read_json
from evalkit.errors import InputError
from evalkit.results import read_calibration, resolve_run_dir


@dataclass(frozen=True)
class PairwiseGateResult:
    """The decision of ``gate --pairwise`` (``to_dict()`` is its ``--json``).

    Attributes:
        decision: ``released`` or ``blocked``.
        reasons: Why it was blocked (empty when released).
        verdict: The stored pairwise verdict.
        calibration: ``status``, ``kappa_low``, ``min_kappa``, ``calibration_file``.
        comparison: The stored comparison file.
        message: One line for the terminal.
    """

    decision: str
    reasons: list[str]
    verdict: str
    calibration: dict[str, Any]
    comparison: str
    message: str

    @property
    def released(self) -> bool:
        """Whether the candidate may ship."""
        return self.decision == "released"

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return dict(self.__dict__)


def pairwise_gate(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = "runs",
    allow_uncalibrated_judge: bool = False,
) -> PairwiseGateResult:
    """Release or block a candidate on its stored pairwise verdict against ``baseline``.

    Blocks when the verdict is *regressed*, or when the pairwise judge has no stored
    calibration whose kappa lower bound reaches its ``min_kappa`` (unless
    ``allow_uncalibrated_judge``).

    Raises:
        InputError: No stored comparison of these two runs (with the command that makes one).
    """
    base_dir = resolve_run_dir(baseline, runs_dir)
    cand_dir = resolve_run_dir(candidate, runs_dir)
    path = cand_dir / "pairwise" / f"{base_dir.name}--vs--{cand_dir.name}.json"
    try:
        data = read_json(path)
    except FileNotFoundError:
        raise InputError(
            f"{path}: no stored pairwise comparison of these runs; run 'evalkit compare "
            f"{base_dir.name} {cand_dir.name} --pairwise' first"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable pairwise comparison ({exc}); run compare "
                         "--pairwise again") from None
    judge = data.get("judge") or {}
    identity = {k: judge.get(k) for k in ("provider", "model", "prompt_hash")}
    recorded = judge.get("min_kappa")
    min_kappa = float(recorded) if isinstance(recorded, int | float) else 0.6
    stored: dict[str, Any] | None = None
    where = ""
    for run_dir in (cand_dir, base_dir):
        stored = read_calibration(run_dir, identity)
        if stored is not None:
            where = str(run_dir / "calibration")
            break
    low = (stored or {}).get("kappa", {}).get("ci_low")
    calibrated = isinstance(low, int | float) and math.isfinite(low) and low >= min_kappa
    status = "calibrated" if calibrated else ("uncalibrated" if stored is None else
                                              "below_threshold")
    reasons = []
    verdict = str(data.get("verdict"))
    if verdict == "regressed":
        win = data.get("win_probability") or {}
        reasons.append(f"pairwise verdict regressed (P(candidate wins) {win.get('estimate')} "
                       f"[{win.get('ci_low')}, {win.get('ci_high')}])")
    if not calibrated and not allow_uncalibrated_judge:
        bound = "none stored" if stored is None else f"kappa lower bound {low}"
        reasons.append(
            f"pairwise judge {status} ({bound}, min_kappa {min_kappa}): calibrate it with "
            f"'evalkit judge sample {cand_dir.name} --pairwise -n 50 -o pairs.csv' and "
            f"'evalkit judge calibrate {cand_dir.name} --labels pairs.csv --pairwise' (or set "
            "allow_uncalibrated_judge)"
        )
    decision = "blocked" if reasons else "released"
    message = f"{decision}: " + ("; ".join(reasons) if reasons else
                                 f"pairwise {verdict}; judge {status}")
    return PairwiseGateResult(
        decision, reasons, verdict,
        {"status": status, "kappa_low": low, "min_kappa": min_kappa,
         "calibration_file": where},
        str(Path(path)), message,
    )
