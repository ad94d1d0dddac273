"""The closed vocabularies of comparisons: verdicts, compared metrics, corrections."""

from __future__ import annotations

from typing import Literal, get_args

#: Verdict of a comparison or of one case.
Verdict = Literal["improved", "regressed", "inconclusive"]
#: The value compared: the pass bit (a pass rate) or the score.
Metric = Literal["passed", "score"]
#: Multiplicity correction across cases (statsmodels ``multipletests`` names, or none).
Correction = Literal["holm", "bonferroni", "fdr_bh", "fdr_by", "none"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
METRICS: tuple[Metric, ...] = get_args(Metric)
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)
