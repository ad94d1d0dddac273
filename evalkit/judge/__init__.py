"""The LLM judge: model-graded expectations and rubrics, cached, through evalkit's providers.

A case's ``expectations`` (and its ``rubric`` when ``rubric_pass`` is set) are graded pass/fail
by the suite's judge from the case prompt, the agent's final answer and a bounded transcript
excerpt; :func:`combine` joins the verdicts with the deterministic scorers. Verdicts are
content-addressed (:class:`JudgeCache`), so re-judging an unchanged answer costs nothing, and
:func:`judge_run` re-grades an existing run into a new one without rerunning the agent.
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

#: Names that moved or were renamed (``"package:new_name"``): each still resolves here, with a
#: DeprecationWarning naming its new path. ``Verdict`` meant a statement's verdict here and the
#: verdict literal in ``evalkit.stats``.
_DEPRECATED_ALIASES: dict[str, str] = {
    "Verdict": "evalkit.judge:StatementVerdict",
    "CALIBRATION_DIR": "evalkit.results",
    "LABEL_COLUMNS": "evalkit.results",
    "pairwise_calibration": "evalkit.results",
    "judged_statements": "evalkit.results",
}

if TYPE_CHECKING:
    from evalkit.judge._apply import (
        JUDGE_ERROR,
        JudgeRunResult,
        JudgeSummary,
        apply_judge,
        judge_run,
    )
    from evalkit.judge._cache import JUDGE_CACHE_DIR, JudgeCache
    from evalkit.judge._calibrate import Calibration, calibrate, read_labels
    from evalkit.judge._grade import (
        Combined,
        Graded,
        ItemJudgement,
        Judge,
        Statement,
        combine,
        known_truth,
        statements,
    )
    from evalkit.judge._graders import (
        Answer,
        Grader,
        ProviderGrader,
        Question,
        SimulatedJudge,
        SimulatedJudgeSettings,
        create_grader,
    )
    from evalkit.judge._pairwise import (
        PAIRWISE_DIR,
        PairwiseComparison,
        compare_pairwise,
    )
    from evalkit.judge._pairwise_calibrate import (
        PAIR_LABEL_COLUMNS,
        PairCalibration,
        PairSample,
        baseline_first,
        calibrate_pairwise,
        sample_pairs,
    )
    from evalkit.judge._pairwise_judge import (
        PAIRWISE_CACHE_DIR,
        PairJudgement,
        PairwiseJudge,
        Side,
        SimulatedPairwiseJudge,
        SimulatedPairwiseSettings,
        decide,
        make_pairwise_judge,
    )
    from evalkit.judge._pairwise_probe import InjectionProbe, probe_pairwise
    from evalkit.judge._pairwise_prompt import (
        DEFAULT_RUBRIC,
        PAIRWISE_PROMPT_HASH,
        PairVerdict,
        build_pairwise_prompt,
        parse_pair_verdict,
    )
    from evalkit.judge._prompt import (
        PROMPT_HASH,
        StatementVerdict,
        build_prompt,
        final_answer,
        parse_verdict,
        transcript_excerpt,
    )
    from evalkit.judge._sample import (
        LabelSample,
        sample_labels,
        write_label_template,
    )
    from evalkit.judge._setup import check_judgeable, make_judge, resolve_judge_spec
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__, _DEPRECATED_ALIASES)

__all__ = [
    "DEFAULT_RUBRIC",
    "JUDGE_CACHE_DIR",
    "JUDGE_ERROR",
    "PAIRWISE_CACHE_DIR",
    "PAIRWISE_DIR",
    "PAIRWISE_PROMPT_HASH",
    "PAIR_LABEL_COLUMNS",
    "PROMPT_HASH",
    "Answer",
    "Calibration",
    "Combined",
    "Graded",
    "Grader",
    "InjectionProbe",
    "ItemJudgement",
    "Judge",
    "JudgeCache",
    "JudgeRunResult",
    "JudgeSummary",
    "LabelSample",
    "PairCalibration",
    "PairJudgement",
    "PairSample",
    "PairVerdict",
    "PairwiseComparison",
    "PairwiseJudge",
    "ProviderGrader",
    "Question",
    "Side",
    "SimulatedJudge",
    "SimulatedJudgeSettings",
    "SimulatedPairwiseJudge",
    "SimulatedPairwiseSettings",
    "Statement",
    "StatementVerdict",
    "apply_judge",
    "baseline_first",
    "build_pairwise_prompt",
    "build_prompt",
    "calibrate",
    "calibrate_pairwise",
    "check_judgeable",
    "combine",
    "compare_pairwise",
    "create_grader",
    "decide",
    "final_answer",
    "judge_run",
    "known_truth",
    "make_judge",
    "make_pairwise_judge",
    "parse_pair_verdict",
    "parse_verdict",
    "probe_pairwise",
    "read_labels",
    "resolve_judge_spec",
    "sample_labels",
    "sample_pairs",
    "statements",
    "transcript_excerpt",
    "write_label_template",
]
