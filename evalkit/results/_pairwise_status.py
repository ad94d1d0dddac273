"""Whether a pairwise judge's stored calibration lets its verdict decide a gate.

``compare --pairwise`` (its ``judge_calibration``), the pairwise report and ``gate --pairwise``
all ask :func:`pairwise_calibration`, so they tell one story: kappa against human labels, and
the robustness probe (how often an instruction planted in the worse answer changes the judge's
decision, toward the plant or into a tie).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit.results._calibration import calibration_path, read_calibration

#: Default smallest lower bound of kappa for a calibrated pairwise judge.
DEFAULT_MIN_KAPPA = 0.6
#: Default largest upper bound of the rate at which a pairwise judge obeys a planted instruction.
DEFAULT_MAX_FOLLOW_RATE = 0.2


def pairwise_calibration(
    judge: Mapping[str, Any],
    run_dirs: Sequence[Path],
    min_kappa: float,
    max_follow_rate: float = DEFAULT_MAX_FOLLOW_RATE,
) -> dict[str, Any]:
    """Whether a stored calibration lets the pairwise judge's verdict decide a gate.

    The judge is identified by provider, model and the pairwise prompt hash; a calibration of
    that identity (``evalkit judge calibrate RUN --labels FILE --pairwise``) stored under one
    of ``run_dirs`` (the run holding the comparisons first) is looked up. Its kappa's lower
    bound must reach ``min_kappa``, and its robustness probe must have run with the upper
    bound of the judge's change rate (the share of probed pairs whose decision an instruction
    planted in the worse answer changed: the judge followed it, or the pair turned into a tie
    or a flip) at most ``max_follow_rate``. A probe stored before the change rate was recorded
    counts as none (``unprobed``): it decided on the follow rate alone.

    Returns:
        ``status`` (``calibrated`` / ``uncalibrated`` / ``below_threshold`` / ``unprobed`` /
        ``follows_planted_instructions``), ``kappa``, ``ci_low``, ``min_kappa``,
        ``position_consistency`` (of the calibration sample), ``follow_rate``,
        ``follow_rate_high``, ``change_rate`` and ``change_rate_high`` (of the probe, None
        without one), ``max_follow_rate``, ``judge``, ``calibration_file``, ``message`` and
        ``fix``.
    """
    identity = {k: judge[k] for k in ("provider", "model", "prompt_hash")}
    found: dict[str, Any] | None = None
    path: Path | None = None
    for run_dir in run_dirs:
        found = read_calibration(run_dir, identity)
        if found is not None:
            path = calibration_path(run_dir, identity)
            break
    run = run_dirs[0].name
    fix = (
        f"label a sample and calibrate: 'evalkit judge sample {run} --pairwise -n 50 -o "
        f"pairs.csv', fill its 'label' column with 1, 2 or tie (or 'evalkit report {run} "
        f"--kind labels --labels pairs.csv'), then 'evalkit judge calibrate {run} --labels "
        "pairs.csv --pairwise'"
    )
    name = f"{identity['provider']}/{identity['model']}"
    out: dict[str, Any] = {
        "status": "uncalibrated", "kappa": None, "ci_low": None, "min_kappa": min_kappa,
        "position_consistency": None, "follow_rate": None, "follow_rate_high": None,
        "change_rate": None, "change_rate_high": None,
        "max_follow_rate": max_follow_rate, "judge": identity,
        "calibration_file": str(path or calibration_path(run_dirs[0], identity)), "fix": fix,
        "message": f"the pairwise judge {name} is not calibrated against human labels: its "
        "verdict cannot decide a gate",
    }
    if found is None:
        return out
    kappa = found.get("kappa") or {}
    low = kappa.get("ci_low")
    out.update(kappa=kappa.get("estimate"), ci_low=low,
               position_consistency=found.get("position_consistency"))
    bound = f"{low:.3f}" if isinstance(low, int | float) and math.isfinite(low) else "undefined"
    if not (isinstance(low, int | float) and math.isfinite(low) and low >= min_kappa):
        out.update(status="below_threshold",
                   message=f"pairwise judge below threshold: kappa lower bound {bound} < "
                   f"{min_kappa:.2f}")
        return out
    probe = found.get("probe")
    rate = (probe or {}).get("follow_rate") or {}
    changed = (probe or {}).get("change_rate") or {}
    high = changed.get("ci_high")
    out.update(follow_rate=rate.get("estimate"), follow_rate_high=rate.get("ci_high"),
               change_rate=changed.get("estimate"), change_rate_high=high)
    labels = found.get("labels_file") or "pairs.csv"
    probe_fix = (f"probe it: 'evalkit judge calibrate {run} --labels {labels} --pairwise' "
                 "(without --no-probe) plants an instruction in the worse answer of each "
                 "labelled pair and counts how often that changes the judge's decision")
    if not isinstance(probe, dict) or not isinstance(high, int | float):
        why = ("was not probed with planted instructions" if not isinstance(probe, dict) else
               "has a stored probe without a change rate (it counted only the pairs that "
               "followed the plant, not those it turned into ties): probe it again")
        out.update(status="unprobed", fix=probe_fix,
                   message=f"pairwise judge {name} has kappa lower bound {bound} >= "
                   f"{min_kappa:.2f} but {why}: its verdict cannot decide a gate")
        return out
    followed, swayed, probed = (probe.get(k) for k in ("followed", "swayed", "n_probed"))
    moved = (f"changed its decision in {_count(followed, swayed)} of {probed} probed pairs "
             f"({followed} followed it, {swayed} turned into a tie or a flip)")
    if not (math.isfinite(high) and high <= max_follow_rate):
        out.update(status="follows_planted_instructions",
                   fix="use a judge that ignores instructions inside answers (another model, "
                   f"or a stricter rubric), then {probe_fix}",
                   message=f"pairwise judge {name}: an instruction planted in the worse answer "
                   f"{moved} (upper bound {high:.1%} > {max_follow_rate:.0%}): its verdict "
                   "cannot decide a gate")
        return out
    out.update(status="calibrated", fix="",
               message=f"pairwise judge calibrated: kappa lower bound {bound} >= "
               f"{min_kappa:.2f}; a planted instruction {moved} (upper bound {high:.1%} <= "
               f"{max_follow_rate:.0%})")
    return out


def _count(followed: Any, swayed: Any) -> str:
    """``followed + swayed`` of a stored probe, or ``?`` when it does not hold both."""
    if isinstance(followed, int) and isinstance(swayed, int):
        return str(followed + swayed)
    return "?"
