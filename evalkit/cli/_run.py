"""``evalkit run``."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from evalkit._paths import safe_run_id
from evalkit.cases import load_suite
from evalkit.cli._common import (
    EXIT_RUN_FAILED,
    add_common_options,
    add_execution_options,
    add_provider_options,
    eprint,
    execution_settings,
    parse_key_values,
    print_json,
    provider_settings,
    split_csv,
)
from evalkit.cli._judge import add_judge_flags
from evalkit.cli._sandbox import add_sandbox_flag, apply_sandbox_flag
from evalkit.errors import ConfigError
from evalkit.runner import DescriptionOverride, RunConfig, SkillOverride, run


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
    p.add_argument("--seed", type=int, help="run seed (default: the suite's)")
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
    p.add_argument("--retries", type=int, default=2, help="retries of infrastructure errors")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="echo per-item logs to stderr and list the items reused from the cache",
    )
    add_sandbox_flag(p)
    add_common_options(p, main, runs_dir=None)


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
        progress=not args.no_progress,
        verbose=args.verbose,
        command_line=shlex.join(["evalkit", *sys.argv[1:]]),
        **execution,
    )


def main(args: argparse.Namespace) -> int:
    """Run the suite; print the summary (or the JSON object).

    Returns:
        0, or 3 when the run finished but failed (every item of the run, of a condition or
        of a provider ended in an error); a run stopped on a configuration error raises
        :class:`~evalkit.runner.RunStopped` (exit 2).
    """
    config = build_config(args)
    lanes = set(args.lane or ())
    suite = load_suite(args.suite)  # loaded once: the runner takes the loaded suite
    cases = suite.cases
    runs_commands = any(c.lane != "prompt" and (not lanes or c.lane in lanes) for c in cases)
    apply_sandbox_flag(args, runs_commands=runs_commands)
    result = run(suite, config)
    if args.json:
        print_json(result.to_dict())
    else:
        from evalkit.cli._summary import print_run_summary

        print_run_summary(result)
    if result.failure is not None:
        eprint(f"error: run '{result.run_id}' failed: {result.failure.describe()}")
        eprint("its pass rates measure nothing; fix the cause and run again")
        return EXIT_RUN_FAILED
    return 0
