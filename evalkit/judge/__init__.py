"""The LLM judge: model-graded expectations and rubrics, cached, through evalkit's providers.

A case's ``expectations`` (and its ``rubric`` when ``rubric_pass`` is set) are graded pass/fail
by the suite's judge from the case prompt, the agent's final answer and a bounded transcript
excerpt; :func:`combine` joins the verdicts with the deterministic scorers. Verdicts are
content-addressed (one cache under the runs directory), so re-judging an unchanged answer
costs nothing, and :func:`judge_run` re-grades an existing run into a new one without
rerunning the agent. The statement judge and the pairwise judge are two kinds of one judge
core (setup, cache, retries, answer parser). ``__all__`` is the user surface; the names of the
``TYPE_CHECKING`` block beyond it are for sibling packages.
"""

__all__ = [
    "Calibration",
    "JudgeRunResult",
    "PairwiseComparison",
    "calibrate",
    "calibrate_pairwise",
    "compare_pairwise",
    "judge_run",
    "known_truth",
    "probe_pairwise",
    "sample_labels",
    "sample_pairs",
    "statements",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.judge._apply import (
        JUDGE_ERROR as JUDGE_ERROR,
        JudgeRunResult,
        JudgeSummary as JudgeSummary,
        apply_judge as apply_judge,
        judge_run,
    )
    from evalkit.judge._cache import (
        JUDGE_CACHE_DIR as JUDGE_CACHE_DIR,
        JudgeCache as JudgeCache,
    )
    from evalkit.judge._calibrate import (
        Calibration,
        calibrate,
        read_labels as read_labels,
    )
    from evalkit.judge._grade import (
        Combined as Combined,
        Graded as Graded,
        ItemJudgement as ItemJudgement,
        Judge as Judge,
        Statement as Statement,
        combine as combine,
        known_truth,
        statements,
    )
    from evalkit.judge._graders import (
        Answer as Answer,
        Grader as Grader,
        ProviderGrader as ProviderGrader,
        Question as Question,
        SimulatedJudge as SimulatedJudge,
        SimulatedJudgeSettings as SimulatedJudgeSettings,
        create_grader as create_grader,
    )
    from evalkit.judge._pairwise import (
        PAIRWISE_DIR as PAIRWISE_DIR,
        PairwiseComparison,
        compare_pairwise,
    )
    from evalkit.judge._pairwise_calibrate import (
        PAIR_LABEL_COLUMNS as PAIR_LABEL_COLUMNS,
        PairCalibration as PairCalibration,
        PairSample as PairSample,
        baseline_first as baseline_first,
        calibrate_pairwise,
        sample_pairs,
    )
    from evalkit.judge._pairwise_judge import (
        PAIRWISE_CACHE_DIR as PAIRWISE_CACHE_DIR,
        PairJudgement as PairJudgement,
        PairwiseJudge as PairwiseJudge,
        Side as Side,
        SimulatedPairwiseJudge as SimulatedPairwiseJudge,
        SimulatedPairwiseSettings as SimulatedPairwiseSettings,
        decide as decide,
        make_pairwise_judge as make_pairwise_judge,
    )
    from evalkit.judge._pairwise_probe import InjectionProbe as InjectionProbe, probe_pairwise
    from evalkit.judge._pairwise_prompt import (
        DEFAULT_RUBRIC as DEFAULT_RUBRIC,
        PAIRWISE_PROMPT_HASH as PAIRWISE_PROMPT_HASH,
        PairVerdict as PairVerdict,
        build_pairwise_prompt as build_pairwise_prompt,
        parse_pair_verdict as parse_pair_verdict,
    )
    from evalkit.judge._prompt import (
        PROMPT_HASH as PROMPT_HASH,
        StatementVerdict as StatementVerdict,
        build_prompt as build_prompt,
        final_answer as final_answer,
        parse_verdict as parse_verdict,
        transcript_excerpt as transcript_excerpt,
    )
    from evalkit.judge._sample import (
        LabelSample as LabelSample,
        sample_labels,
        write_label_template as write_label_template,
    )
    from evalkit.judge._setup import (
        check_judge_provider as check_judge_provider,
        check_judgeable as check_judgeable,
        judge_for_analysis as judge_for_analysis,
        make_judge as make_judge,
        resolve_judge_spec as resolve_judge_spec,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
