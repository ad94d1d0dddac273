"""The closed vocabularies of comparisons: verdicts, compared metrics, corrections."""

from __future__ import annotations

from typing import Literal, get_args

from evalkit._settings import Correction as Correction

#: Verdict of a comparison or of one case.
Verdict = Literal["improved", "regressed", "inconclusive"]
#: The value compared: the pass bit (a pass rate) or the score.
Metric = Literal["passed", "score"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
METRICS: tuple[Metric, ...] = get_args(Metric)
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)
