"""``evalkit run``."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._paths import safe_run_id
from evalkit._settings import CONFIDENCE, RETRIES, ROUND_CASES, SEED, THRESHOLD
from evalkit.cases import Suite, inspect_suite
from evalkit.cli._common import (
    EXIT_RUN_FAILED,
    add_common_options,
    add_execution_options,
    add_futility_options,
    add_provider_options,
    byte_size,
    eprint,
    execution_settings,
    futility_arguments,
    parse_key_values,
    printed_json,
    provider_settings,
    split_csv,
)
from evalkit.cli._flags import FLAGS, settings_of_flags
from evalkit.cli._judge import add_judge_flags
from evalkit.cli._sandbox import add_sandbox_flag, lanes_the_sandbox_allows
from evalkit.errors import ConfigError, SuiteError
from evalkit.runner import DescriptionOverride, RunConfig, SkillOverride, run
from evalkit.stats import DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from evalkit.sequential import SequentialRun


#: Options of ``--until-verdict`` (refused without it): the fields of ``SequentialConfig``.
SEQUENTIAL_OPTIONS = (
    "round_cases",
    "max_items",
    "max_usd",
    "max_rounds",
    "threshold",
    "confidence",
    "plan_cases",
    "adaptive_trials",
    "allocate_trials",
    "stage_two_probability",
    "plan_effect",
    "futility_beta",
)


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit run``."""
    p.add_argument("suite", help="suite directory (holding suite.yaml)")
    add_provider_options(p, "provider name (default: the suite's, else simulated)")
    p.add_argument("--model", help="model passed to the provider")
    add_judge_flags(p)
    p.add_argument("--conditions", help="comma-separated conditions (default: the suite's)")
    p.add_argument("--lane", action="append", help="only cases of this lane (repeatable)")
    p.add_argument("--case", action="append", help="only this case id (repeatable)")
    p.add_argument("--tags", help="comma-separated tags: only cases carrying any of them")
    p.add_argument("--split", action="append", help="only cases of this split (repeatable)")
    p.add_argument("--trials", type=int, help="trials per case and condition")
    add_execution_options(p)
    p.add_argument("--scheduler", help="dask scheduler address, e.g. tcp://10.0.0.5:8786")
    SEED.add_argument(p, default=None, help="run seed (default: the suite's)")
    p.add_argument(
        "--skill",
        action="append",
        metavar="NAME[:VARIANT]=PATH",
        help="replace a skill's text for this run (repeatable)",
    )
    p.add_argument(
        "--description",
        action="append",
        metavar="NAME=TEXT|@FILE",
        help="replace a skill's trigger description for this run (repeatable)",
    )
    p.add_argument("--no-cache", action="store_true", help="ignore cached outcomes")
    RETRIES.add_argument(p)
    p.add_argument(
        "--workspace-quota",
        type=byte_size,
        default=None,
        metavar="SIZE",
        help="disk space one item's workspace may use, e.g. 500MiB, 2GiB (default 2GiB); an item "
        "that uses more is an error row 'workspace_quota'",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="echo per-item logs to stderr and list the items reused from the cache",
    )
    add_sandbox_flag(p)
    planning = p.add_argument_group(
        "planning (--plan)",
        "run nothing: print the items the run would take and what its comparisons could "
        "show (minimum detectable effect, cases needed), warning when no verdict is reachable",
    )
    planning.add_argument(
        "--plan", action="store_true", help="plan the run and warn before anything is spent"
    )
    planning.add_argument(
        "--from-run", metavar="RUN",
        help="with --plan: variance components from this pilot run (default: a 50 %% model)",
    )
    sequential = p.add_argument_group(
        "sequential (--until-verdict)",
        "run the two --conditions (baseline,candidate) in rounds of cases drawn in a seeded "
        "order, look after each round with an anytime-valid interval, and stop when the verdict "
        "is settled (improved, regressed, or futile) or a budget is spent",
    )
    sequential.add_argument(
        "--until-verdict", action="store_true", help="run rounds until the verdict is settled"
    )
    ROUND_CASES.add_argument(sequential, default=None, metavar="N")
    sequential.add_argument("--max-items", type=int, metavar="N", help="budget of items")
    sequential.add_argument("--max-usd", type=float, metavar="USD", help="budget of agent cost")
    sequential.add_argument("--max-rounds", type=int, metavar="N", help="budget of rounds")
    THRESHOLD.add_argument(sequential, default=None)
    CONFIDENCE.add_argument(sequential, default=None, when="--until-verdict: ")
    sequential.add_argument(
        "--plan-cases",
        type=int,
        metavar="N",
        help="tune the bets for N cases (e.g. the fixed design's n from evalkit power)",
    )
    sequential.add_argument(
        "--adaptive-trials",
        action="store_true",
        help="each case runs 1 trial per condition first and its other trials only when its "
        "outcomes differ (or, with --stage-two-probability, by a seeded draw); the estimate "
        "is corrected for it (docs/statistics.md, 'Adaptive trials')",
    )
    sequential.add_argument(
        "--allocate-trials",
        action="store_true",
        help="draw --round-cases pairs of trials per round from all the selected cases, more "
        "of those whose pairs differ (Neyman allocation; the estimate weights each pair by "
        "its chance: docs/statistics.md, 'Neyman allocation of paired trials')",
    )
    sequential.add_argument(
        "--stage-two-probability",
        type=float,
        metavar="P",
        help="with --adaptive-trials: chance that a case whose first outcomes agree runs its "
        "other trials (default (K-1)/K)",
    )
    add_futility_options(sequential)
    add_common_options(p, main, runs_dir_help=None)



def _skills(values: list[str] | None) -> tuple[SkillOverride, ...]:
    out = []
    for name, path in parse_key_values(values, "--skill").items():
        skill, _, variant = name.partition(":")
        out.append(SkillOverride(skill=skill, variant=variant or "canonical", path=Path(path)))
    return tuple(out)


def _descriptions(values: list[str] | None) -> tuple[DescriptionOverride, ...]:
    out = []
    for skill, value in parse_key_values(values, "--description").items():
        if value.startswith("@"):
            path = Path(value[1:])
            try:
                value = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"--description {skill}=@{path}: cannot read: {exc}") from None
        if not value.strip():
            raise ConfigError(f"--description {skill}: the description is empty")
        out.append(DescriptionOverride(skill=skill, text=value.strip()))
    return tuple(out)


def build_config(args: argparse.Namespace) -> RunConfig:
    """Turn parsed arguments into a :class:`RunConfig`.

    Raises:
        ConfigError: Inconsistent options.
    """
    execution = execution_settings(args)
    if args.run_id is not None:
        safe_run_id(args.run_id)
    if args.trials is not None and args.trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {args.trials}")
    with settings_of_flags():
        return _run_config(args, execution)


def _run_config(args: argparse.Namespace, execution: dict[str, Any]) -> RunConfig:
    """The :class:`RunConfig` of the parsed arguments (validated by the model)."""
    return RunConfig(
        **provider_settings(args),
        model=args.model,
        judge_provider=args.judge_provider,
        judge_model=args.judge_model,
        judge_options=parse_key_values(args.judge_opt, "--judge-opt"),
        conditions=split_csv(args.conditions) or None,
        lanes=tuple(args.lane or ()),
        case_ids=tuple(args.case or ()),
        tags=split_csv(args.tags),
        splits=tuple(args.split or ()),
        trials=args.trials,
        seed=args.seed,
        skills=_skills(args.skill),
        descriptions=_descriptions(args.description),
        scheduler=args.scheduler,
        use_cache=not args.no_cache,
        retries=args.retries,
        **({} if args.workspace_quota is None else {"workspace_quota_bytes": args.workspace_quota}),
        progress=not args.no_progress,
        verbose=args.verbose,
        command_line=shlex.join(["evalkit", *sys.argv[1:]]),
        **execution,
    )


def _load_suite(path: str) -> Suite:
    """The suite, its warnings on stderr (what ``cases validate`` warns of, before items run).

    Raises:
        SuiteError: The suite has problems.
    """
    found = inspect_suite(path)
    if found.suite is None:
        raise SuiteError(list(found.problems))
    for warning in found.warnings:
        eprint(f"warning: {warning}")
    return found.suite


def main(args: argparse.Namespace) -> int:
    """Run the suite; print the summary (or the JSON object).

    Returns:
        0, or 3 when the run finished but failed (every item of the run, of a condition or
        of a provider ended in an error); a run stopped on a configuration error raises
        :class:`~evalkit.runner.RunStopped` (exit 2).
    """
    config = build_config(args)
    lanes = set(args.lane or ())
    suite = _load_suite(args.suite)  # loaded once: the runner takes the loaded suite
    cases = suite.cases
    allowed = lanes_the_sandbox_allows(args, [c.lane for c in cases], lanes)
    if allowed is not None:
        config = config.model_copy(update={"lanes": allowed})
    if args.from_run is not None and not args.plan:
        raise ConfigError("--from-run: only with --plan")
    if args.until_verdict and not args.plan:
        return _until_verdict(args, suite, config)
    given = [FLAGS[name] for name in SEQUENTIAL_OPTIONS if getattr(args, name)]
    if given and not args.until_verdict:
        raise ConfigError(f"{', '.join(given)}: only with --until-verdict")
    if args.plan:
        return _plan(args, suite, config)
    result = run(suite, config)
    if not printed_json(args, result):
        from evalkit.cli._summary import print_run_summary

        print_run_summary(result)
    if result.failure is not None:
        eprint(f"error: run '{result.run_id}' failed: {result.failure.describe()}")
        eprint("its pass rates measure nothing; fix the cause and run again")
        return EXIT_RUN_FAILED
    return 0


def _until_verdict(args: argparse.Namespace, suite: Suite, config: RunConfig) -> int:
    """``evalkit run --until-verdict``: rounds of cases until the verdict is settled."""
    from evalkit.sequential import SequentialConfig, run_until_verdict

    futility_arguments(args)
    given = {name: getattr(args, name) for name in SEQUENTIAL_OPTIONS}
    with settings_of_flags():  # errors name the flags, not the parameters
        sequential = SequentialConfig(
            **{name: value for name, value in given.items() if value is not None}
        )
    outcome = run_until_verdict(suite, config, sequential)
    if not printed_json(args, outcome):
        _print_sequential(outcome)
    failure = outcome.run.failure
    if failure is not None:
        eprint(f"error: run '{outcome.run.run_id}' failed: {failure.describe()}")
        eprint("its pass rates measure nothing; fix the cause and run again")
        return EXIT_RUN_FAILED
    return 0


def _plan(args: argparse.Namespace, suite: Suite, config: RunConfig) -> int:
    """``evalkit run --plan``: the run's items and what it could show; nothing is run."""
    from evalkit.sequential import plan_run

    plan = plan_run(
        suite,
        config,
        until_verdict=args.until_verdict,
        max_items=args.max_items,
        threshold=DEFAULT_THRESHOLD if args.threshold is None else args.threshold,
        confidence=CONFIDENCE.default if args.confidence is None else args.confidence,
        plan_effect=args.plan_effect,
        from_run=args.from_run,
        runs_dir=config.runs_dir,
    )
    if printed_json(args, plan):
        return 0
    pct = "n/a" if plan.mde is None else f"{plan.mde * 100:+.1f} pp"
    print(
        f"plan (nothing run): {plan.cases} cases x {len(plan.conditions)} conditions "
        f"({', '.join(plan.conditions)}) x {plan.trials} trials = {plan.items} items"
    )
    scope = " and ".join(plan.pair) if plan.pair else "any two conditions"
    print(
        f"comparing {scope}: {plan.compared_cases} cases at {plan.trials} trials; minimum "
        f"detectable effect {pct} ({plan.power:.0%} power, alpha {plan.alpha:g}, practical "
        f"threshold {plan.threshold * 100:g} pp); variances: {plan.variances}"
    )
    if plan.cases_at_threshold is not None:
        print(
            f"cases to tell a {plan.threshold * 100:g} pp effect from zero: "
            f"{plan.cases_at_threshold} at {plan.trials} trials"
        )
    if plan.cases_for_plan_effect is not None and plan.plan_effect is not None:
        print(f"cases for the planned {plan.plan_effect * 100:+g} pp: {plan.cases_for_plan_effect}")
    for warning in plan.warnings:
        eprint(f"warning: {warning}")
    if not plan.reachable:
        eprint("warning: this design cannot reach a verdict; change it before running")
    return 0


def _print_sequential(outcome: SequentialRun) -> None:
    """The looks, the verdict and why the run stopped."""
    comparison = outcome.comparison
    print(f"run {outcome.run.run_id}: {outcome.rounds} round(s), {outcome.items} items")
    adaptive = outcome.record.adaptive
    if adaptive is not None:
        full = sum(case.stage_two for case in adaptive.cases.values())
        print(
            f"adaptive trials: {full} of {len(adaptive.cases)} cases ran all "
            f"{adaptive.total_trials} trials, the others {adaptive.first_trials}"
        )
    unit = "cases"
    if outcome.record.allocation is not None:
        unit = "pairs"
        print(
            f"allocated trials: {outcome.record.allocation.round_pairs} pairs per round over "
            f"{len(outcome.record.order)} cases, more of those whose pairs differ"
        )
    for look in outcome.record.looks:
        low = "-" if look.ci_low is None else f"{look.ci_low * 100:+.1f}"
        high = "-" if look.ci_high is None else f"{look.ci_high * 100:+.1f}"
        estimate = "-" if look.estimate is None else f"{look.estimate * 100:+.1f}"
        print(
            f"  look {look.round}: {look.n_cases} {unit}, {estimate} pp [{low}, {high}] "
            f"-> {look.verdict}"
            + (f" ({look.reason})" if look.reason and look.reason != look.verdict else "")
        )
    print(
        f"verdict: {comparison.verdict} ({comparison.candidate_label} vs "
        f"{comparison.baseline_label}); stopped: {outcome.stop_reason}"
    )
    if comparison.verdict_note:
        print(f"note: {comparison.verdict_note}")
    if comparison.next_step is not None:
        from evalkit.analysis import NextStep

        print(NextStep(**comparison.next_step).text())
    if comparison.futility is not None:
        futility = comparison.futility
        print(
            f"futility: planned effect {futility['plan_effect'] * 100:g} pp, beta "
            f"{futility['beta']:g} (stops at wealth {futility['boundary']:g}; last wealth "
            f"{futility['wealth']:.3g})"
        )
    print(f"method: {comparison.method}")
