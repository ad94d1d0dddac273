"""``evalkit gate --pairwise``: gate on a stored pairwise verdict, refusing an uncalibrated judge.

The comparison is the one ``evalkit compare BASELINE CANDIDATE --pairwise`` stored under
``CANDIDATE/pairwise/``. The judge's calibration is looked up again (a calibration stored after
the comparison counts): its kappa lower bound must reach the judge's ``min_kappa``, and its
robustness probe's change rate (how often an instruction planted in the worse answer changed
its decision, toward the plant or into a tie) must stay within ``max_follow_rate``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._settings import RUNS_DIR
from evalkit._untrusted import read_json
from evalkit.errors import InputError
from evalkit.results import (
    DEFAULT_MAX_FOLLOW_RATE,
    DEFAULT_MIN_KAPPA,
    pairwise_calibration,
    resolve_run_dir,
)


@dataclass(frozen=True)
class PairwiseGateResult:
    """The decision of ``gate --pairwise`` (``to_dict()`` is its ``--json``).

    Attributes:
        decision: ``released`` or ``blocked``.
        reasons: Why it was blocked (empty when released).
        verdict: The stored pairwise verdict.
        calibration: ``status``, ``kappa_low``, ``min_kappa``, ``follow_rate_high``,
            ``change_rate_high`` (the probe's bound that decides), ``max_follow_rate``,
            ``calibration_file``, ``message``.
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
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    allow_uncalibrated_judge: bool = False,
) -> PairwiseGateResult:
    """Release or block a candidate on its stored pairwise verdict against ``baseline``.

    Blocks when the verdict is *regressed*, or when the pairwise judge is not calibrated
    (:func:`evalkit.results.pairwise_calibration`: kappa and the robustness probe), unless
    ``allow_uncalibrated_judge``.

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
    limits = {k: float(judge[k]) if isinstance(judge.get(k), int | float) else default
              for k, default in (("min_kappa", DEFAULT_MIN_KAPPA),
                                 ("max_follow_rate", DEFAULT_MAX_FOLLOW_RATE))}
    found = pairwise_calibration(identity, [cand_dir, base_dir], limits["min_kappa"],
                                 limits["max_follow_rate"])
    status = found["status"]
    reasons = []
    verdict = str(data.get("verdict"))
    if verdict == "regressed":
        win = data.get("win_probability") or {}
        reasons.append(f"pairwise verdict regressed (P(candidate wins) {win.get('estimate')} "
                       f"[{win.get('ci_low')}, {win.get('ci_high')}])")
    if status != "calibrated" and not allow_uncalibrated_judge:
        reasons.append(f"{found['message']}; {found['fix']} (or set allow_uncalibrated_judge)")
    decision = "blocked" if reasons else "released"
    message = f"{decision}: " + ("; ".join(reasons) if reasons else
                                 f"pairwise {verdict}; judge {status}")
    calibration = {
        "status": status, "kappa_low": found["ci_low"], "min_kappa": limits["min_kappa"],
        "follow_rate_high": found["follow_rate_high"],
        "change_rate_high": found["change_rate_high"],
        "max_follow_rate": limits["max_follow_rate"],
        "calibration_file": found["calibration_file"] if status != "uncalibrated" else "",
        "message": found["message"],
    }
    return PairwiseGateResult(decision, reasons, verdict, calibration, str(Path(path)), message)
