"""``compare --pairwise``: blind, position-swapped pairwise judgements of two (or more) variants.

Variants are two runs (``compare BASELINE CANDIDATE --pairwise``, paired by lane, case,
condition, provider and trial) or the conditions of one run (``--conditions A,B[,C...]``,
paired by lane, case, provider and trial). Every pair of ``ok`` items is judged in both orders
(:class:`~evalkit.judge.PairwiseJudge`); the statistics are
:func:`evalkit.stats.pairwise_stats` (and :func:`evalkit.stats.bradley_terry` for more than
two variants). Pairs whose two sides are one sample (the same item hash and origin run: a
cache hit) are no evidence and are left out, with a note. The comparison is stored as
``<candidate run>/pairwise/<name>.json`` for the report, ``judge sample --pairwise`` and
``gate --pairwise``.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._bidi import neutralize_controls
from evalkit._settings import ALPHA, CONCURRENCY, N_RESAMPLES_QUICK, RETRIES, RUNS_DIR, SEED
from evalkit.cases import JudgeSpec, PairwiseSpec, load_suite
from evalkit.errors import ConfigError, InputError, SuiteError
from evalkit.judge._pairwise_judge import PairJudgement, PairwiseJudge, Side, make_pairwise_judge
from evalkit.judge._pairwise_prompt import DEFAULT_RUBRIC
from evalkit.judge._prompt import final_answer, transcript_excerpt
from evalkit.judge._setup import judge_for_analysis
from evalkit.results import (
    Manifest,
    load_manifest,
    pairwise_calibration,
    read_run,
    read_transcripts,
    resolve_run_dir,
    write_json_atomic,
)
from evalkit.stats import (
    DEFAULT_PAIRWISE_THRESHOLD,
    BradleyTerry,
    PairwiseStats,
    bradley_terry,
    pairwise_stats,
    records,
)

#: Directory of stored pairwise comparisons inside the candidate run.
PAIRWISE_DIR = "pairwise"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Variant:
    """One side of a pairwise comparison: a run, optionally one of its conditions."""

    label: str
    run_dir: Path
    condition: str | None = None


@dataclass
class PairwiseComparison:
    """The result of ``evalkit compare ... --pairwise`` (``to_dict()`` is its ``--json``).

    Attributes:
        baseline: Label of the baseline variant.
        candidate: Label of the candidate variant.
        variants: Every compared variant, in order (more than two: Bradley-Terry).
        stats: Statistics of baseline against candidate.
        comparisons: With more than two variants, the statistics of every other variant
            against the first, keyed by the variant's label.
        bradley_terry: The Bradley-Terry fit over every pair (more than two variants).
        pairs: One row per judged pair (both orders' verdicts and reasons).
        judge: The comparator's identity (provider, model, prompt hash, settings).
        rubric: What "better" meant.
        calibration: The pairwise judge's calibration status (see
            :func:`pairwise_calibration`).
        usage: Judge calls, cache hits, tokens and cost.
        skipped: Pairs left out, by reason (``unmatched``, ``not_ok``, ``reused``,
            ``judge_error``).
        notes: What limits the numbers.
        path: Where the comparison was stored.
    """

    baseline: str
    candidate: str
    variants: list[str]
    stats: PairwiseStats
    comparisons: dict[str, PairwiseStats]
    bradley_terry: BradleyTerry | None
    pairs: pd.DataFrame
    judge: dict[str, Any]
    rubric: str
    calibration: dict[str, Any]
    usage: dict[str, float]
    skipped: dict[str, int]
    notes: list[str] = field(default_factory=list)
    path: Path | None = None
    variant_runs: dict[str, str] = field(default_factory=dict)
    transcripts: bool = False

    @property
    def verdict(self) -> str:
        """The headline verdict (baseline against candidate)."""
        return self.stats.verdict

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``compare --pairwise --json``."""
        return {
            "kind": "pairwise",
            "verdict": self.stats.verdict,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "variants": list(self.variants),
            **{k: v for k, v in self.stats.to_dict().items() if k != "verdict"},
            "comparisons": {k: v.to_dict() for k, v in self.comparisons.items()},
            "bradley_terry": None if self.bradley_terry is None else self.bradley_terry.to_dict(),
            "judge": dict(self.judge),
            "rubric": self.rubric,
            "judge_calibration": dict(self.calibration),
            "usage": dict(self.usage),
            "skipped": dict(self.skipped),
            "notes": list(self.stats.notes) + list(self.notes),
            "pairs": records(self.pairs),
            "path": None if self.path is None else str(self.path),
            "variant_runs": dict(self.variant_runs),
            "transcripts": self.transcripts,
        }


@dataclass(frozen=True)
class SuiteSections:
    """A suite's ``pairwise:`` and ``judge:`` sections, and whether the user named the suite.

    Attributes:
        pairwise: The ``pairwise:`` section (rubric, comparator, transcripts), or None.
        judge: The ``judge:`` section, or None.
        named: True for a suite the user named (``--suite PATH``), whose judge is used; False
            for the suite a run's manifest points to (run data: its rubric is read, its judge
            is taken only when it is the offline one, see
            :func:`~evalkit.judge.judge_for_analysis`).
        where: Where the sections come from, for messages.
    """

    pairwise: PairwiseSpec | None = None
    judge: JudgeSpec | None = None
    named: bool = False
    where: str = ""

    @property
    def comparator(self) -> JudgeSpec | None:
        """The pairwise judge the suite declares: ``pairwise.judge``, else ``judge``."""
        if self.pairwise is not None and self.pairwise.judge is not None:
            return self.pairwise.judge
        return self.judge

    def pairwise_judge(
        self, provider: str | None, model: str | None, options: Mapping[str, Any] | None
    ) -> JudgeSpec:
        """The comparator to ask: the command line's over a named suite's, never run data's."""
        recorded = None if self.named else self.comparator
        spec = judge_for_analysis(
            recorded, self.where, provider, model, options,
            suite_judge=self.comparator if self.named else None, named_suite=self.named,
        )
        return spec or JudgeSpec()


def suite_sections(
    manifest: Manifest | None, run_dir: Path, suite: str | os.PathLike[str] | None = None
) -> SuiteSections:
    """The pairwise and judge sections of the suite the user named, else of the run's suite.

    Args:
        manifest: The run's manifest (its ``suite_path`` is run data).
        run_dir: The run, for messages.
        suite: A suite the user named (``--suite PATH``), or None.

    Raises:
        SuiteError: The named suite does not load.
    """
    if suite is not None:
        named = load_suite(suite)
        return SuiteSections(named.spec.pairwise, named.spec.judge, True, f"suite {suite}")
    suite_path = manifest.suite_path if manifest is not None else None
    if not suite_path or not Path(suite_path).is_dir():
        return SuiteSections(where=f"run '{run_dir.name}'")
    where = (f"run '{run_dir.name}' (the suite its manifest.json suite_path points to, "
             f"{neutralize_controls(suite_path)})")
    try:
        found = load_suite(suite_path)
    except SuiteError:
        return SuiteSections(where=where)
    return SuiteSections(found.spec.pairwise, found.spec.judge, False, where)


def _read_rubric(rubric: str | os.PathLike[str] | None, spec: PairwiseSpec | None) -> str:
    if rubric is None:
        return (spec.rubric if spec is not None else "").strip() or DEFAULT_RUBRIC
    path = Path(rubric)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--rubric {path}: cannot read the rubric file ({exc}); give a "
                         "UTF-8 text file saying what makes one answer better") from None
    if not text.strip():
        raise InputError(f"--rubric {path}: the rubric file is empty; say what makes one "
                         "answer better")
    return text.strip()


def _variants(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str] | None,
    conditions: Sequence[str] | None,
    runs_dir: str | os.PathLike[str],
) -> list[Variant]:
    base_dir = resolve_run_dir(baseline, runs_dir)
    if candidate is None:
        if not conditions or len(conditions) < 2:
            raise ConfigError(
                "compare --pairwise needs CANDIDATE, or --conditions A,B (or more) to compare "
                "conditions of one run"
            )
        if len(set(conditions)) != len(conditions):
            raise ConfigError(f"--conditions {','.join(conditions)}: a condition is repeated")
        return [Variant(c, base_dir, c) for c in conditions]
    cand_dir = resolve_run_dir(candidate, runs_dir)
    if cand_dir.resolve() == base_dir.resolve():
        raise ConfigError("compare --pairwise: BASELINE and CANDIDATE are the same run; "
                          "use --conditions A,B to compare conditions of one run")
    return [Variant(base_dir.name, base_dir), Variant(cand_dir.name, cand_dir)]


def _rows(variant: Variant, conditions: Sequence[str] | None, cache: dict[Path, Any]) -> Any:
    if variant.run_dir not in cache:
        cache[variant.run_dir] = read_run(variant.run_dir)
    frame = cache[variant.run_dir]
    if variant.condition is not None:
        frame = frame[frame["condition"] == variant.condition]
        if frame.empty:
            raise ConfigError(f"condition '{variant.condition}' has no items in run "
                              f"'{variant.run_dir.name}'")
    elif conditions:
        frame = frame[frame["condition"].isin(list(conditions))]
    return frame


def _side(row: Mapping[str, Any], record: Mapping[str, Any] | None) -> tuple[Side, str]:
    events = list((record or {}).get("response", {}).get("events", []))
    task = next((str(e.get("content", "")) for e in events if e.get("kind") == "user"), "")
    latent = (record or {}).get("response", {}).get("extra", {}).get("latent_p")
    score = row.get("score")
    quality: float | None = None
    if isinstance(latent, int | float) and score is not None and math.isfinite(float(score)):
        quality = (float(latent) + float(score)) / 2
    side = Side(final_answer(events), transcript_excerpt(events), quality)
    return side, task


def _matched(
    variants: Sequence[Variant],
    conditions: Sequence[str] | None,
    skipped: dict[str, int],
) -> dict[tuple[int, int], pd.DataFrame]:
    """Matched item pairs of every two variants (``i < j``), with both sides' rows."""
    cache: dict[Path, Any] = {}
    frames = [_rows(v, conditions, cache) for v in variants]
    keys = ["lane", "case_id", "provider", "trial"]
    if variants[0].condition is None:
        keys.insert(2, "condition")
    columns = [*keys, "item_key", "status", "score", "item_hash", "origin_run_id"]
    out: dict[tuple[int, int], pd.DataFrame] = {}
    for i, j in itertools.combinations(range(len(variants)), 2):
        merged = frames[i][columns].merge(
            frames[j][columns], on=keys, how="outer", suffixes=("_b", "_c"), indicator=True
        )
        skipped["unmatched"] += int((merged["_merge"] != "both").sum())
        merged = merged[merged["_merge"] == "both"].drop(columns="_merge")
        ok = (merged["status_b"] == "ok") & (merged["status_c"] == "ok")
        skipped["not_ok"] += int((~ok).sum())
        merged = merged[ok]
        reused = (merged["item_hash_b"] == merged["item_hash_c"]) & (
            merged["origin_run_id_b"].notna()
            & (merged["origin_run_id_b"] == merged["origin_run_id_c"])
        )
        skipped["reused"] += int(reused.sum())
        out[(i, j)] = merged[~reused].reset_index(drop=True)
    return out


def compare_pairwise(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str] | None = None,
    *,
    conditions: Sequence[str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    rubric: str | os.PathLike[str] | None = None,
    provider: str | None = None,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    suite: str | os.PathLike[str] | None = None,
    transcripts: bool | None = None,
    use_cache: bool = True,
    concurrency: int = CONCURRENCY.default,
    retries: int = RETRIES.default,
    threshold: float | None = None,
    alpha: float = ALPHA.default,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    seed: int = SEED.default,
    write: bool = True,
) -> PairwiseComparison:
    """Judge two (or more) variants pair by pair, blind and in both orders; give the verdict.

    Args:
        baseline: The baseline run (or the run whose ``conditions`` are compared).
        candidate: The candidate run; None with ``conditions`` of one run.
        conditions: With ``candidate``: a filter; without: the variants, baseline first.
        runs_dir: Where run ids are looked up; its ``.cache/judge-pairwise`` holds verdicts.
        rubric: A file saying what "better" means (default: suite.yaml ``pairwise.rubric``).
        provider: Comparator provider (default: the named ``suite``'s ``pairwise.judge``,
            then its ``judge``, then ``simulated``). Without ``suite``, the run's own suite
            (its manifest's ``suite_path``) gives the rubric, but its judge only when that is
            the offline ``simulated`` one: any other is refused with a message naming it.
        model: Comparator model.
        options: Comparator settings (``--judge-opt``).
        suite: The suite whose ``pairwise:`` and ``judge:`` sections to use (``--suite``),
            named by the user.
        transcripts: Show transcript excerpts too (default: suite.yaml, else no).
        use_cache: Reuse cached pairwise verdicts.
        concurrency: Pairs judged at once.
        retries: Retries of a failed or unparsable judge call.
        threshold: Practical threshold on the win probability above 0.5 (default 0.05).
        alpha: Level of the sign test and the per-case tests.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed.
        write: Store the comparison under the candidate run's ``pairwise/``.

    Returns:
        :class:`PairwiseComparison`.

    Raises:
        ConfigError: Bad variants, an unusable judge, a judge that only run data names,
            ``concurrency`` or ``retries`` out of range.
        InputError: An unreadable rubric file, no pair to judge.
    """
    concurrency = CONCURRENCY.check(concurrency)
    retries = RETRIES.check(retries)
    variants = _variants(baseline, candidate, conditions, runs_dir)
    manifest = load_manifest(variants[-1].run_dir)
    sections = suite_sections(manifest, variants[-1].run_dir, suite)
    suite_pairwise = sections.pairwise
    text = _read_rubric(rubric, suite_pairwise)
    spec = sections.pairwise_judge(provider, model, options)
    show = bool(suite_pairwise.transcripts) if transcripts is None and suite_pairwise else bool(
        transcripts
    )
    judge = make_pairwise_judge(spec, Path(runs_dir), use_cache=use_cache, retries=retries)
    skipped = {"unmatched": 0, "not_ok": 0, "reused": 0, "judge_error": 0}
    matched = _matched(variants, conditions if candidate is not None else None, skipped)
    all_rows = _judge_all(judge, variants, matched, text, show, concurrency, skipped)
    rows = all_rows[all_rows["outcome"].notna()] if not all_rows.empty else all_rows
    if rows.empty:
        raise InputError(
            "compare --pairwise: no pair of 'ok' items to judge "
            f"(skipped: {', '.join(f'{k} {v}' for k, v in skipped.items() if v) or 'none'}); "
            "the variants need the same cases and trials"
        )
    limit = DEFAULT_PAIRWISE_THRESHOLD if threshold is None else threshold
    labels = [v.label for v in variants]
    per_pair = {
        key: pairwise_stats(group, threshold=limit, alpha=alpha, n_resamples=n_resamples,
                            seed=seed)
        for key, group in rows.groupby(["baseline", "candidate"], sort=False)
    }
    head = (labels[0], labels[1])
    if head not in per_pair:
        raise InputError(f"compare --pairwise: no judged pair of {head[0]} and {head[1]}")
    comparisons = {
        label: per_pair[(labels[0], label)]
        for label in labels[2:]
        if (labels[0], label) in per_pair
    }
    fit = None
    notes: list[str] = []
    if len(variants) > 2:
        bt = rows.rename(columns={"baseline": "second", "candidate": "first"})
        fit = bradley_terry(bt, reference=labels[0])
    if skipped["reused"]:
        notes.append(f"{skipped['reused']} pair(s) left out: both sides are one sample (the "
                     "same item from one run, e.g. a cache hit), which is no evidence")
    if skipped["judge_error"]:
        notes.append(f"{skipped['judge_error']} pair(s) left out: the judge gave no valid "
                     "verdict after retries (see the pairs' error column)")
    identity = judge.record()
    run_dirs = list(dict.fromkeys([variants[-1].run_dir, variants[0].run_dir]))
    calibration = pairwise_calibration(identity, run_dirs, spec.min_kappa, spec.max_follow_rate)
    usage = {
        "calls": int(all_rows["calls"].sum()),
        "cache_hits": int(all_rows["cache_hits"].sum()),
        "input_tokens": int(all_rows["input_tokens"].sum()),
        "output_tokens": int(all_rows["output_tokens"].sum()),
        "cost_usd": float(all_rows["cost_usd"].sum()),
    }
    judged = all_rows.reset_index(drop=True)
    result = PairwiseComparison(
        baseline=labels[0], candidate=labels[1], variants=labels,
        stats=per_pair[head], comparisons=comparisons, bradley_terry=fit,
        pairs=judged, judge=identity, rubric=text, calibration=calibration,
        usage=usage, skipped=skipped, notes=notes,
        variant_runs={v.label: v.run_dir.name for v in variants}, transcripts=show,
    )
    if write:
        result.path = _store(result, variants)
    return result


def _judge_all(
    judge: PairwiseJudge,
    variants: Sequence[Variant],
    matched: Mapping[tuple[int, int], pd.DataFrame],
    rubric: str,
    transcripts: bool,
    concurrency: int,
    skipped: dict[str, int],
) -> pd.DataFrame:
    jobs: list[tuple[dict[str, Any], str, Side, Side]] = []
    for (i, j), pairs in matched.items():
        if pairs.empty:
            continue
        base_records = read_transcripts(variants[i].run_dir, pairs["item_key_b"].tolist())
        cand_records = read_transcripts(variants[j].run_dir, pairs["item_key_c"].tolist())
        for row in pairs.to_dict("records"):
            b_row = {"score": row["score_b"]}
            c_row = {"score": row["score_c"]}
            b_side, task = _side(b_row, base_records.get(row["item_key_b"]))
            c_side, _ = _side(c_row, cand_records.get(row["item_key_c"]))
            info = {
                "baseline": variants[i].label, "candidate": variants[j].label,
                "case_id": row["case_id"], "lane": row["lane"], "provider": row["provider"],
                "trial": int(row["trial"]),
                "condition": row.get("condition", variants[j].condition),
                "baseline_item": row["item_key_b"], "candidate_item": row["item_key_c"],
                "task": task, "baseline_answer": b_side.answer,
                "candidate_answer": c_side.answer,
            }
            jobs.append((info, task, b_side, c_side))

    def run(job: tuple[dict[str, Any], str, Side, Side]) -> PairJudgement:
        return judge.judge_pair(job[1], rubric, job[2], job[3], transcripts=transcripts)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        judgements = list(pool.map(run, jobs))
    out = []
    for (info, _, _, _), pair in zip(jobs, judgements, strict=True):
        if pair.error is not None:
            skipped["judge_error"] += 1
        out.append({
            **info,
            "outcome": pair.outcome,
            "winner": {1.0: "candidate", 0.0: "baseline", 0.5: "tie"}.get(
                pair.outcome if pair.outcome is not None else -1.0, "error"
            ),
            "verdict_baseline_first": pair.verdict_baseline_first,
            "verdict_candidate_first": pair.verdict_candidate_first,
            "reason_baseline_first": pair.reason_baseline_first,
            "reason_candidate_first": pair.reason_candidate_first,
            "flipped": pair.flipped, "identical": pair.identical,
            "first_wins": pair.first_wins, "decisive": pair.decisive,
            "calls": pair.usage.calls, "cache_hits": pair.usage.cache_hits,
            "input_tokens": pair.usage.input_tokens, "output_tokens": pair.usage.output_tokens,
            "cost_usd": pair.usage.cost_usd, "error": pair.error,
        })
    return pd.DataFrame(out)


def _store(result: PairwiseComparison, variants: Sequence[Variant]) -> Path:
    """Write the comparison as ``<candidate run>/pairwise/<variants>.json``."""
    name = "--vs--".join(_UNSAFE.sub("_", v) for v in result.variants) + ".json"
    path = variants[-1].run_dir / PAIRWISE_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    result.path = path
    data = result.to_dict()
    data["path"] = f"{PAIRWISE_DIR}/{name}"  # within the run: a run directory can be moved
    write_json_atomic(path, data)
    return path

